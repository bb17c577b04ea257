"""``lgacc evaluate``: one training configuration evaluated with the derived resource model."""

from __future__ import annotations

import argparse
import warnings

from lgacc.model.assumptions import critical_batch
from lgacc.model.calibrated.sparse import expected_sparse
from lgacc.model.config import PRECISIONS, Method, TrainingConfig
from lgacc.model.evaluator import DEFAULT_MAX_OVERHEAD, DEFAULT_STEPS, FORMS, evaluate
from lgacc.model.evaluator.mapping import CHUNKED_SCHEDULES, SCHEDULE_ALIASES, SCHEDULES
from lgacc.model.hardware import DEFAULT_HARDWARE, load_hardware
from lgacc.model.transformer import named_model

from . import SUMMARIES
from ._args import count, positive_float
from ._assumptions import add_assumption_arguments, assumptions_from_args
from ._output import dumps
from ._recipe import add_recipe_arguments, recipe_from_args
from ._run import EXPECTED_RUN_KEYS, RUN_KEYS, add_run_arguments, check_run_arguments, run_keys

#: The ideal model's JSON keys, as before the calibrated model (add, never rename).
IDEAL_KEYS = ("b", "n_gpu", "efficiency", "time_days", "step_time_s", "memory_gib", "overheads", "feasible", "reasons",
              "schedule", "n_v", "n_e", "n_c", "precision", "sparse_overheads", "all_to_all_share", "recompute", *RUN_KEYS)
#: The calibrated model's keys (each starts with ``expected_``).
CALIBRATED_KEYS = ("expected_step_time_s", "expected_time_days", "expected_memory_gib", "expected_step_breakdown_s",
                   "expected_memory_fits", "expected_recipe", "expected_calibration", *EXPECTED_RUN_KEYS)


def key_models() -> dict[str, str]:
    """Which model each key of ``--format json`` comes from."""
    configuration = ("b", "n_gpu", "schedule", "n_v", "n_e", "n_c", "precision", "recompute", *RUN_KEYS)
    return {**{key: "ideal (the paper's model)" for key in IDEAL_KEYS if key not in configuration},
            **{key: "configuration" for key in configuration},
            **{key: "calibrated (fitted on measured runs)" for key in (*CALIBRATED_KEYS, *SPARSE_CALIBRATED_KEYS)}}


#: The calibrated model's keys for a sparse, context-parallel or FP8 configuration (:mod:`lgacc.model.calibrated.sparse`).
SPARSE_CALIBRATED_KEYS = ("expected_all_to_all_share", "expected_imbalance")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "evaluate",
        help=SUMMARIES["evaluate"],
        description=(
            "Evaluate one distributed training configuration with the paper's resource model: "
            "efficiency (with each overhead named), training time (100 k steps at the critical batch), "
            "memory per GPU in the paper's GB (GiB), and every violated constraint -- an ideal bound (kernels at "
            "peak). Beside it, the calibrated model's expected step time, training time and memory "
            "(expected_*: kernels, collectives and framework memory as measured runs pay them)."
        ),
    )
    parser.add_argument("--model", required=True, help="X<x> with an even x (e.g. X160) or BERT, Megatron-LM, T-NLG, GPT-3")
    parser.add_argument("--method", required=True, help=f"one of {', '.join(m.value for m in Method)}")
    parser.add_argument("--n-b", type=count("n_b"), required=True, help="data-parallel degree n_b")
    parser.add_argument("--n-l", type=count("n_l"), default=1, help="pipeline-parallel degree n_l (default 1)")
    parser.add_argument("--n-a", type=count("n_a"), default=1, help="tensor-parallel degree n_a (default 1)")
    parser.add_argument("--n-mu", type=count("n_mu"), default=1, help="micro-batches per batch n_mu (default 1)")
    parser.add_argument("--b-mu", type=count("b_mu"), default=1, help="micro-batch size b_mu (default 1)")
    parser.add_argument("--offload", action="store_true", help="offload the training state and checkpoints to CPU")
    partition = parser.add_mutually_exclusive_group()
    partition.add_argument("--partitioned", dest="partitioned", action="store_true", default=None,
                           help="partition the training state (default: the method's)")
    partition.add_argument("--no-partitioned", dest="partitioned", action="store_false",
                           help="do not partition the training state")
    add_schedule_arguments(parser)
    add_sparse_arguments(parser)
    parser.add_argument("--hardware", default=DEFAULT_HARDWARE, help=f"shipped spec name or YAML path (default: {DEFAULT_HARDWARE})")
    parser.add_argument("--max-overhead", type=positive_float, default=DEFAULT_MAX_OVERHEAD,
                        help=f"largest overhead allowed per transfer (default {DEFAULT_MAX_OVERHEAD})")
    parser.add_argument("--steps", type=count("steps"), default=None,
                        help=f"training steps at the critical batch (default {DEFAULT_STEPS}; or --tokens)")
    add_run_arguments(parser)
    parser.add_argument("--form", choices=FORMS, default="paper", help="evaluate the paper's printed forms or the exact counts")
    parser.add_argument("--format", choices=("table", "json"), default="table", help="output format (default: table)")
    add_assumption_arguments(parser)
    add_recipe_arguments(parser)
    parser.set_defaults(handler=run)


def add_schedule_arguments(parser: argparse.ArgumentParser) -> None:
    """``--schedule NAME`` and ``--n-v V``: the pipeline schedule whose closed forms the resource model uses."""
    aliases = ", ".join(f"{alias} = {name}" for alias, name in SCHEDULE_ALIASES.items())
    parser.add_argument("--schedule", default=None, metavar="NAME",
                        help=f"pipeline schedule: {', '.join(SCHEDULES)} ({aliases}); default: the method's own "
                             "(baseline and partitioned: gpipe, the paper's standard pipeline; improved: modular)")
    parser.add_argument("--n-v", type=count("n_v"), default=1, metavar="V",
                        help=f"chunks (virtual stages) per device for {' and '.join(CHUNKED_SCHEDULES)} (default 1)")


def add_sparse_arguments(parser: argparse.ArgumentParser) -> None:
    """``--n-e``, ``--n-c`` and ``--precision`` (issue #36): expert and context parallelism, FP8."""
    parser.add_argument("--n-e", type=count("n_e"), default=1,
                        help="expert-parallel degree n_e (default 1); folded into n_b n_c as Megatron-Core folds it")
    parser.add_argument("--n-c", type=count("n_c"), default=1,
                        help="context-parallel degree n_c (default 1); n_gpu = n_b n_l n_a n_c")
    parser.add_argument("--precision", choices=PRECISIONS, default="bf16",
                        help="compute precision (default bf16; fp8: the spec's dense FP8 peak)")


def _text_table(rows: list[tuple], columns: tuple[str, str] = ("quantity", "value")) -> str:
    """Two right-aligned columns, as pandas' ``to_string(index=False)`` prints them (without importing pandas,
    a tenth of a second of a warm call)."""
    cells = [tuple(columns), *((str(a), str(b)) for a, b in rows)]
    widths = [max(len(row[i]) for row in cells) for i in range(2)]
    return "\n".join(f"{a:>{widths[0]}} {b:>{widths[1]}}" for a, b in cells)


def _g(value) -> str:
    """A number of the table: four significant digits; never "inf" or "nan" (issue #34)."""
    value = float(value)
    if value != value:
        return "undefined"
    return f"{value:.4g}" if abs(value) != float("inf") else "unbounded (larger than a float holds)"


def _table(summary: dict) -> str:
    rows = [("model", summary["model"]), ("method", summary["method"]), ("schedule", summary["schedule"]),
            ("n_v", summary["n_v"]), ("b", summary["b"]), ("n_gpu", summary["n_gpu"]),
            ("efficiency", _g(summary['efficiency'])), ("time_days", _g(summary["time_days"])),
            ("step_time_s", _g(summary['step_time_s'])), ("n_e", summary["n_e"]), ("n_c", summary["n_c"]),
            ("precision", summary["precision"]), ("recompute", summary["recompute"]),
            ("tokens", _g(summary['tokens'])), ("global_batch", summary["global_batch"]),
            ("run_steps", _g(summary['run_steps'])), ("gpu_hours", _g(summary["gpu_hours"]))]
    if summary["cost"] is not None:
        rows.append(("cost", _g(summary["cost"])))
    rows += [(f"memory_gib.{k}", _g(v)) for k, v in summary["memory_gib"].items()]
    rows += [(f"overheads.{k}", _g(v)) for k, v in summary["overheads"].items()]
    rows += [(f"overheads.{k}", _g(v)) for k, v in summary["sparse_overheads"].items()]
    rows.append(("all_to_all_share", _g(summary['all_to_all_share'])))
    rows.append(("feasible", summary["feasible"]))
    rows += [("reason", reason) for reason in summary["reasons"]]
    if "expected_step_time_s" in summary:
        rows += [("expected_step_time_s (calibrated)", _g(summary['expected_step_time_s'])),
                 ("expected_time_days (calibrated)", _g(summary['expected_time_days'])),
                 ("expected_gpu_hours (calibrated)", _g(summary["expected_gpu_hours"]))]
        if summary["expected_cost"] is not None:
            rows.append(("expected_cost (calibrated)", _g(summary["expected_cost"])))
        rows += [(f"expected_memory_gib.{k} (calibrated)", _g(v)) for k, v in summary["expected_memory_gib"].items()]
    return _text_table(rows)


def warn_unused_vocabulary(model) -> None:
    """Say that a model's vocabulary is not counted by the ideal model: it is the paper's, whose transformer has
    no embedding or language-model head (``d_v = 0``), in the printed forms and the exact counts alike.  The
    calibrated model, which is ours, counts both."""
    if model.d_v:
        warnings.warn(f"model {model.name}: d_v={model.d_v} (the vocabulary) is ignored by the ideal model: like "
                      "the paper's, it counts the layers only (no embedding memory, no language-model head flops), "
                      "with --form paper and --form exact alike; the calibrated model (expected_* keys) counts them")


def run(args: argparse.Namespace) -> int:
    check_run_arguments(args)
    steps = DEFAULT_STEPS if args.steps is None else args.steps
    model = named_model(args.model)
    config = TrainingConfig(
        method=args.method,
        n_b=args.n_b,
        n_l=args.n_l,
        n_a=args.n_a,
        n_mu=args.n_mu,
        b_mu=args.b_mu,
        offload=args.offload,
        partitioned=args.partitioned,
        n_e=args.n_e,
        n_c=args.n_c,
        precision=args.precision,
    )
    assumptions = assumptions_from_args(args)
    hardware = load_hardware(args.hardware)  # read once, for the ideal and the calibrated model
    result = evaluate(model, hardware, config, max_overhead=args.max_overhead, steps=steps, form=args.form,
                      assumptions=assumptions, schedule=args.schedule, n_v=args.n_v, recompute=args.recompute)
    warn_unused_vocabulary(model)  # beside a result only: an error stays one line
    calibrated = expected_sparse(model, hardware, config, recipe=recipe_from_args(args), schedule=args.schedule,
                                 n_v=args.n_v, steps=steps, assumptions=assumptions)
    summary = {**result.summary(), **calibrated.summary()}
    summary.update(run_keys(summary, d_s=model.d_s, critical_batch=critical_batch(model, assumptions), steps=steps,
                            tokens=args.tokens, global_batch=args.global_batch, price=args.gpu_hour_price))
    if args.format == "json":
        out = {key: summary[key] for key in (*IDEAL_KEYS, *CALIBRATED_KEYS, *SPARSE_CALIBRATED_KEYS) if key in summary}
        out["key_models"] = {key: source for key, source in key_models().items() if key in out}
        print(dumps(out))
    else:
        print(_table(summary))
    return 0
