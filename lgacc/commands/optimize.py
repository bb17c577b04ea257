"""``lgacc optimize``: the fastest (or, with ``--target-days``, the cheapest) configuration under the paper's rules."""

from __future__ import annotations

import argparse
import dataclasses

from lgacc.errors import UserInputError
from lgacc.model.config import PRECISIONS, Method
from lgacc.model.assumptions import critical_batch
from lgacc.model.evaluator import DEFAULT_MAX_OVERHEAD, DEFAULT_STEPS
from lgacc.model.evaluator.recomputation import with_recompute, work_ratio
from lgacc.model.hardware import DEFAULT_HARDWARE
from lgacc.model.transformer import named_model
from lgacc.search import Parallelism, cheapest, fastest, parse_parallelism
from lgacc.search.calibrated import fastest_expected
from lgacc.search.sparse import auto_context_degrees, search_degrees

from . import SUMMARIES
from ._args import count, positive_float
from ._assumptions import add_assumption_arguments, assumptions_from_args
from ._output import dumps
from ._recipe import add_recipe_arguments, recipe_from_args
from ._run import RUN_KEYS, add_run_arguments, run_keys
from .evaluate import CALIBRATED_KEYS, add_schedule_arguments, key_models, warn_unused_vocabulary

#: ``lgacc evaluate``'s JSON keys, then the configuration's.
KEYS = ("b", "n_gpu", "efficiency", "time_days", "step_time_s", "memory_gib", "overheads", "feasible", "reasons",
        "n_b", "n_l", "n_a", "n_mu", "b_mu", "offload", "schedule", "n_v", "n_e", "n_c", "precision",
        "sparse_overheads", "all_to_all_share", "recompute", *RUN_KEYS)


def _counting_recompute(result, recompute: str):
    """The search's result with its ideal times counting ``recompute`` (the search ranks by the paper's work, full
    recomputation: the same ratio for every configuration of the model, so the same choice)."""
    if result.evaluation is None:
        return result
    return dataclasses.replace(result, evaluation=with_recompute(result.evaluation, recompute))


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "optimize",
        help=SUMMARIES["optimize"],
        description=(
            "Search the training configuration the paper's rules select (sec:methodology, 'Optimal configuration'): "
            "the fastest, or with --target-days the one with the fewest GPUs that trains within that time."
        ),
    )
    parser.add_argument("--model", required=True, help="X<x> with an even x (e.g. X160) or BERT, Megatron-LM, T-NLG, GPT-3")
    parser.add_argument("--method", required=True, help=f"one of {', '.join(m.value for m in Method)}")
    parser.add_argument("--parallelism", required=True,
                        help="allowed parallelism: " + ", ".join(f"'{p.value}'" for p in Parallelism) + " (e.g. data+pipe, 3d)")
    parser.add_argument("--hardware", default=DEFAULT_HARDWARE, help=f"shipped spec name or YAML path (default: {DEFAULT_HARDWARE})")
    parser.add_argument("--max-gpus", type=count("max_gpus", int64=False), default=None, help="largest GPU count allowed")
    parser.add_argument("--target-days", type=positive_float, default=None, help="find the fewest GPUs training within this many days")
    parser.add_argument("--no-offload", dest="allow_offload", action="store_false", help="never offload to CPU memory")
    parser.add_argument("--no-partition", dest="partitioned", action="store_const", const=False, default=None,
                        help="do not partition the training state (default: the method's own; improved without the "
                             "partition is the dotted line of fig:scaling_Ethernet)")
    add_schedule_arguments(parser)
    parser.add_argument("--n-e", default=None, type=_degree("n_e"),
                        help="expert-parallel degree n_e (default: every power of two dividing the experts; 1 for a "
                             "dense model)")
    parser.add_argument("--n-c", default="1", type=_degree("n_c"),
                        help="context-parallel degree n_c (default 1; 'auto': the powers of two up to a node's GPUs "
                             "that divide d_s)")
    parser.add_argument("--precision", choices=PRECISIONS, default="bf16",
                        help="compute precision (default bf16; fp8: the spec's dense FP8 peak)")
    parser.add_argument("--max-overhead", type=positive_float, default=DEFAULT_MAX_OVERHEAD,
                        help=f"largest overhead allowed per transfer (default {DEFAULT_MAX_OVERHEAD})")
    parser.add_argument("--format", choices=("table", "json"), default="table", help="output format (default: table)")
    parser.add_argument("--calibrated", action="store_true",
                        help="rank the paper's candidates by the calibrated model's expected training time (memory as the "
                             "calibrated model counts it, no offload) and print its expected_* keys too")
    add_run_arguments(parser)
    add_assumption_arguments(parser)
    add_recipe_arguments(parser)
    parser.set_defaults(handler=run)


def _degree(name: str):
    """A positive integer, or ``auto`` (explore)."""
    whole = count(name)

    def parse(text: str):
        return "auto" if text.strip().lower() == "auto" else whole(text)

    parse.__name__ = "positive integer or auto"
    return parse


def _table(summary: dict) -> str:
    import pandas as pd  # only for the text table

    rows = [(key, summary[key]) for key in ("model", "method", "schedule", "n_v", "parallelism", "n_b", "n_l", "n_a",
                                            "n_e", "n_c", "precision", "n_mu", "b_mu", "offload", "b", "n_gpu")]
    rows += [("efficiency", f"{summary['efficiency']:.4g}"), ("time_days", f"{summary['time_days']:.4g}")]
    rows += [(f"memory_gib.{k}", f"{v:.4g}") for k, v in summary["memory_gib"].items()]
    rows += [(f"overheads.{k}", f"{v:.4g}") for k, v in summary["overheads"].items()]
    rows += [("binding", text) for text in summary.get("binding", [])]
    if "expected_step_time_s" in summary:
        rows += [("expected_step_time_s (calibrated)", f"{summary['expected_step_time_s']:.4g}"),
                 ("expected_time_days (calibrated)", f"{summary['expected_time_days']:.4g}"),
                 ("expected_gpu_hours (calibrated)", f"{summary['expected_gpu_hours']:.4g}"),
                 *([("expected_cost (calibrated)", f"{summary['expected_cost']:.4g}")] if summary.get("expected_cost") is not None else []),
                 ("expected_memory_gib.total (calibrated)", f"{summary['expected_memory_gib']['total']:.4g}")]
    return pd.DataFrame(rows, columns=["quantity", "value"]).to_string(index=False)


def _with_run(summary: dict, model, assumptions, args: argparse.Namespace) -> dict:
    """``summary`` with the run's keys (:mod:`._run`): the paper's 100 k steps at the critical batch, or ``--tokens``."""
    return {**summary, **run_keys(summary, d_s=model.d_s, critical_batch=critical_batch(model, assumptions),
                                  steps=DEFAULT_STEPS, tokens=args.tokens, global_batch=args.global_batch,
                                  price=args.gpu_hour_price)}


def run(args: argparse.Namespace) -> int:
    if args.max_gpus is not None and args.max_gpus < 1:
        raise UserInputError(f"--max-gpus {args.max_gpus} must be a positive integer")
    model = named_model(args.model)
    parallelism = parse_parallelism(args.parallelism)
    options = dict(max_gpus=args.max_gpus, allow_offload=args.allow_offload, max_overhead=args.max_overhead,
                   partitioned=args.partitioned, assumptions=assumptions_from_args(args), schedule=args.schedule,
                   n_v=args.n_v)
    n_es = None if args.n_e in (None, "auto") else (args.n_e,)
    n_cs = auto_context_degrees(model, args.hardware) if args.n_c == "auto" else (args.n_c,)
    if args.calibrated:
        if (n_es is not None and n_es != (1,)) or n_cs != (1,) or args.precision != "bf16" or model.is_sparse:
            raise UserInputError("--calibrated ranks dense bf16 searches only; experts, --n-c and --precision fp8 "
                                 "are searched by the ideal model (lgacc evaluate gives their calibrated expectation)")
        if args.target_days is not None:
            raise UserInputError("--calibrated ranks by expected time: it does not combine with --target-days")
        found = fastest_expected(model, args.hardware, args.method, parallelism, recipe=recipe_from_args(args),
                                 max_gpus=args.max_gpus, partitioned=args.partitioned,
                                 assumptions=options["assumptions"], schedule=args.schedule, n_v=args.n_v)
        if not found.feasible:
            raise UserInputError("no feasible configuration: " + "; ".join(found.search.binding))
        found = dataclasses.replace(found, search=_counting_recompute(found.search, args.recompute))
        summary = _with_run(found.summary(), model, options["assumptions"], args)
        if args.format == "json":
            out = {key: summary[key] for key in (*KEYS, *CALIBRATED_KEYS) if key in summary}
            out["key_models"] = {**key_models(), "ranked_by": "calibrated"}
            print(dumps(out))
        else:
            print(_table(summary))
        return 0
    options.update(precision=args.precision)
    if args.target_days is None:
        result = search_degrees(model, args.hardware, args.method, parallelism, n_es=n_es, n_cs=n_cs, **options)
    else:
        # --target-days bounds the run's time: the search's paper run (full recomputation, 100 k steps at the
        # critical batch) is ratio x scale as long as the run asked for, so its target is divided by both
        ratio = work_ratio(model, args.recompute)
        scale = 1.0 if args.tokens is None else \
            args.tokens / (DEFAULT_STEPS * critical_batch(model, options["assumptions"]) * model.d_s)
        result = search_degrees(model, args.hardware, args.method, parallelism, objective="cheapest",
                                target_days=args.target_days / (ratio * scale), n_es=n_es, n_cs=n_cs, **options)
        result = dataclasses.replace(result, target_days=args.target_days)
    if not result.feasible:
        raise UserInputError("no feasible configuration: " + "; ".join(result.binding))
    result = _counting_recompute(result, args.recompute)
    warn_unused_vocabulary(model)  # beside a result only: an error stays one line
    summary = _with_run(result.summary(), model, options["assumptions"], args)
    if args.format == "json":
        print(dumps({key: summary[key] for key in KEYS}))
    else:
        print(_table(summary))
    return 0
