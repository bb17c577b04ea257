"""``lgacc validate``: both resource models against published training runs (``data/validation/``)."""

from __future__ import annotations

import argparse
import math
import sys

from lgacc.model.calibrated import fitted_calibration
from lgacc.model.calibrated.links import REFERENCE_TABLE, link_fits
from lgacc.studies.validation import (
    DATA_DIR,
    DP_NETWORKS,
    by_publication,
    calibration_summary,
    frame_for,
    leave_one_publication_out,
    load_runs,
    summary,
    tool_errors,
)
from lgacc.studies.validation.recipe_effects import bracket_predictions, recipe_effects, recipe_effects_by_value
from lgacc.studies.validation.runs import fp8_runs_left_out

from . import SUMMARIES
from ._output import dumps

#: Keys of each run in the JSON output (the first 21 as before the calibrated model; add, never rename).
RUN_KEYS = ("id", "publication", "citation", "model", "hardware", "n_gpu", "n_b", "n_l", "n_a", "n_mu", "b_mu", "b",
            "d_s", "recomputation", "measured_step_s", "predicted_paper_s", "predicted_physical_s", "ratio_paper",
            "ratio_physical", "implied_kernel_efficiency", "upper_bound",
            "method", "schedule", "n_v", "zero_stage", "sequence_parallel", "flash_attention", "uses", "assumed",
            "bracket", "predicted_physical_low_s", "predicted_physical_high_s", "upper_bound_every_reading",
            *(f"{key}_{network}" for network in DP_NETWORKS[1:]
              for key in ("upper_bound",)),
            *(f"predicted_physical_{network}_s" for network in DP_NETWORKS[1:]),
            "expected_step_s", "expected_low_s", "expected_high_s", "expected_ratio", "expected_lopo_s", "lopo_ratio",
            "expected_pipeline_s", "expected_bubble_s", "expected_data_parallel_s", "expected_optimizer_s",
            "expected_fixed_s", "measured_memory_gib", "expected_memory_gib", "expected_memory_compared_gib",
            "memory_ratio",
            "memory_statistic", "measured_memory_reserved_gib",
            "peer_simumax_step_s", "peer_simumax_memory_gib", "peer_calculon_step_s",
            "expected_memory_reserved_gib", "expected_memory_device_gib", "memory_pool_ratio", "memory_nccl_gib",
            "memory_context_gib", "memory_step_excess_gib", "memory_step_segments_gib")
#: Which model each run key comes from (every key says it).
#: The extension's configuration keys of each run (issue #36), with the value a run file that does not give them
#: has: no expert or context parallelism, bf16 (every shipped run today).
SPARSE_RUN_DEFAULTS = {"n_e": 1, "n_c": 1, "precision": "bf16"}
#: Further keys of each run (issue #36): whether its model has experts, whether it needs the sparse extension
#: (experts, context parallelism or FP8: reported apart, in the calibrated block's ``moe`` and ``fp8``), and the
#: calibrated model's expert GEMM, all-to-all and dispatch permutation time (present when some run needs the
#: extension).
EXTENSION_RUN_KEYS = ("moe", "extended", "expected_expert_gemm_s", "expected_all_to_all_s", "expected_all_to_all_share",
                      "expected_dispatch_s")

KEY_MODELS = {
    **{key: "measured" for key in ("measured_step_s", "measured_memory_gib", "memory_statistic",
                                   "measured_memory_reserved_gib")},
    **{key: "peer (its own prediction)" for key in ("peer_simumax_step_s", "peer_simumax_memory_gib",
                                                    "peer_calculon_step_s")},
    **{key: "ideal" for key in RUN_KEYS if key.startswith(("predicted_", "ratio_", "upper_bound", "implied_"))},
    **{key: "calibrated" for key in (*RUN_KEYS, *EXTENSION_RUN_KEYS)
       if key.startswith(("expected_", "lopo_", "memory_ratio"))},
    # what the calibrated comparison adds to the allocated prediction for a reserved or device reading
    **{key: "calibrated" for key in ("memory_pool_ratio", "memory_nccl_gib", "memory_context_gib",
                                     "memory_step_excess_gib", "memory_step_segments_gib")},
}


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "validate",
        help=SUMMARIES["validate"],
        description=(
            "For each published run of data/validation/*.yaml (baseline, partitioned and improved methods): the "
            "measured step time; the ideal model's prediction under the paper's and the physical overlap conventions "
            "(measured / predicted >= 1: the ideal model is an upper bound on speed), at the run's reading and at both "
            "ends of what its source does not state; the calibrated model's expected step time and memory, fitted on "
            "all runs and leave one publication out. Runs with experts, context parallelism or FP8 (n_e, n_c, "
            "precision in their files) are evaluated with the sparse extension, never fitted on, and reported apart "
            "(JSON: calibrated.moe, calibrated.fp8)."
        ),
    )
    parser.add_argument("--hardware", default=None,
                        help="shipped spec name or YAML path replacing each run's own (default: the runs' own specs)")
    parser.add_argument("--runs", default=str(DATA_DIR), help="folder of run files (default: the shipped data/validation)")
    parser.add_argument("--format", choices=("table", "json"), default="table", help="output format (default: table)")
    parser.set_defaults(handler=run)


def _fixed_parameters() -> dict:
    """The constants no longer fitted (issue #35), with where each comes from."""
    calibration = fitted_calibration()
    return {"T_0": calibration.T_0, "eta": calibration.eta, "nvlink_latency_s": calibration.nvlink_latency_s,
            "host_layer_s": calibration.host_layer_s, "host_recompute_s": calibration.host_recompute_s,
            "host_megatron_layer_s": calibration.host_megatron_layer_s,
            "host_megatron_recompute_s": calibration.host_megatron_recompute_s,
            "host_step_s": calibration.host_step_s, "host_step_layer_s": calibration.host_step_layer_s,
            "host_micro_batch_s": calibration.host_micro_batch_s,
            "host_megatron_step_s": calibration.host_megatron_step_s,
            "host_megatron_step_layer_s": calibration.host_megatron_step_layer_s,
            "host_megatron_micro_batch_s": calibration.host_megatron_micro_batch_s,
            "host_te_layer_s": calibration.host_te_layer_s,
            "norm_forward_efficiency": calibration.norm_forward_efficiency,
            "norm_backward_efficiency": calibration.norm_backward_efficiency,
            "source": f"eta and nvlink_latency_s: alpha-beta fit to {link_fits()[REFERENCE_TABLE].source} "
                      "(python -m lgacc.model.calibrated.links; a GPU whose NVLink runs at another table's link "
                      "bandwidth, H100 and H200 SXM, reads that table's eta_nvl and alpha_nvl for its NVLink "
                      "collectives; the B200 on an 8-GPU node reads the fits SimuMax measured on its node, "
                      "data/calibrated/nccl_collective_fits.yaml, with a latency per rank delta_nvl); T_0: no fixed "
                      "time per step; host_step_s, host_step_layer_s, host_micro_batch_s and host_layer_s: an eager "
                      "framework's host time once a step, once a layer and step, once a micro-batch and once a layer "
                      "and micro-batch, fitted (none negative) to plain PyTorch steps measured on an H100 where the "
                      "host sets the pace, and host_recompute_s what a recomputed forward adds (python -m "
                      "lgacc.model.calibrated.host); host_megatron_step_s, host_megatron_step_layer_s and "
                      "host_megatron_micro_batch_s: the same terms of Megatron-Core's own step, host_megatron_layer_s "
                      "what its layer costs beyond plain PyTorch's and host_megatron_recompute_s its recomputed "
                      "forward, for a recipe with host_framework=megatron, measured on an H100 "
                      "(benchmarks/gpu/measure_megatron_host.py, the same command); host_te_layer_s: what Transformer "
                      "Engine's layer with Megatron-LM's default fusions costs the host beyond Megatron-Core's own, "
                      "for a recipe with host_framework=megatron_te, both measured on one H200 lease "
                      "(benchmarks/gpu/run_te_host.sh); norm_forward_efficiency and "
                      "norm_backward_efficiency: the layer norm's median share of the HBM bandwidth forward and "
                      "backward, measured on an H100 (benchmarks/gpu/measure_memory_bound.py; python -m "
                      "lgacc.model.calibrated.memory_bound), the other memory-bound kernels at hbm_efficiency"}


def _measured_tables() -> list[dict]:
    """The measured tables the calibrated model reads in place of fitted constants: operation, GPUs, source file
    and the command that prints what the model takes of it."""
    from lgacc.model.calibrated.attention import ATTENTION_FILE, attention_tables
    from lgacc.model.calibrated.gemm_table import GEMM_FILE, gemm_tables

    root = GEMM_FILE.parents[2]
    out = [{"operation": "matrix multiply (a layer's four products by width, tensor-parallel split and tokens, bf16)",
            "gpus": list(t["gpus"]), "file": str((GEMM_FILE.parent / t["source"]).relative_to(root)),
            "files": [str((GEMM_FILE.parent / f).relative_to(root)) for f in t["sources"]],
            "command": "python -m lgacc.model.calibrated.gemm_table"} for t in gemm_tables()]
    out += [{"operation": f"matrix multiply in FP8 over bf16 (the same products in both precisions: the median "
                          f"speed-up {t['fp8']['speedup']:.3f} over {t['fp8']['shapes']} compute-bound shapes, the "
                          "rate of an FP8 run's linear maps over bf16's)",
             "gpus": list(t["gpus"]), "file": str((GEMM_FILE.parent / t["fp8"]["source"]).relative_to(root)),
             "command": "python -m lgacc.model.calibrated.gemm_table"} for t in gemm_tables() if t["fp8"] is not None]
    from lgacc.model.calibrated.gemm_table import shape_tables

    out += [{"operation": "matrix multiply by shape (a layer's four products, forward and both gradients, and a "
                          "mixture of experts' grouped GEMMs, bf16; the GPU's kernels measured by another project, "
                          "not the runs' step times)",
             "gpus": list(t["gpus"]), "file": str((GEMM_FILE.parent / t["source"]).relative_to(root)),
             "origin": dict(t["origin"]), "command": "python -m lgacc.model.calibrated.gemm_table"}
            for t in shape_tables()]
    out += [{"operation": "fused attention (causal, by kernel, head size and sequence length)", "gpus": list(t["gpus"]),
             "file": str((ATTENTION_FILE.parent / t["source"]).relative_to(root)),
             "command": "python -m lgacc.model.calibrated.attention"} for t in attention_tables()]
    from lgacc.model.calibrated.attention import derived_kernels

    out += [{"operation": f"fused attention, kernel {kernel} ({spec['from']}'s forward and backward speeds over "
                          f"{spec['forward_speedup']:g} and {spec['backward_speedup']:g}: the speed-ups its authors "
                          "state; where no table holds the GPU, the calibration's attention efficiency slowed alike)",
             "gpus": ["all"], "file": str(ATTENTION_FILE.relative_to(root)),
             "command": "python -m lgacc.model.calibrated.attention"} for kernel, spec in derived_kernels().items()]
    from lgacc.model.calibrated.memory_bound import MEMORY_BOUND_FILE

    out.append({"operation": "memory-bound kernels (the layer norm's share of the HBM bandwidth, forward and backward, "
                             "by kernel and pass)", "gpus": ["all (shares of each GPU's own bandwidth)"],
                "file": str(MEMORY_BOUND_FILE.relative_to(root)),
                "command": "python -m lgacc.model.calibrated.memory_bound"})
    from lgacc.model.calibrated.host import TRAINING_FILE

    out.append({"operation": "host time to issue a layer's work in an eager framework (the stage's floor)",
                "gpus": ["all (the host, not the GPU; measured beside an H100)"],
                "file": str(TRAINING_FILE.relative_to(root)), "command": "python -m lgacc.model.calibrated.host"})
    from lgacc.model.calibrated.links import FITS_FILE, measured_fits

    out += [{"operation": "NVLink collectives (all-gather and reduce-scatter: bus bandwidth, latency by group size; "
                          "measured on the GPU's node by another project, not the runs' step times)",
             "gpus": [f"{fit.name.split('-')[0]} ({fit.gpus_per_node}-GPU node)"],
             "file": str(FITS_FILE.relative_to(root)), "origin": fit.source,
             "command": "python -m lgacc.model.calibrated.links"} for fit in measured_fits().values()]
    return out


def _clean(value):
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _print_extensions(headline: dict) -> None:
    """One line each for the runs with experts and the FP8 runs, when there are any (issue #36)."""
    for name, label in (("moe", "runs with experts"), ("fp8", "FP8 runs")):
        block = headline.get(name) or {}
        if not block.get("time_runs"):
            continue
        error = (f"leave one publication out: mean {100 * block['lopo_mean_error']:.1f} %, worst "
                 f"{100 * block['lopo_max_error']:.1f} %" if math.isfinite(block["lopo_mean_error"])
                 else "no held-out error (no dense bf16 run of another publication to fit on)")
        print(f"calibrated model, {block['time_runs']} {label} of {block['publications']} sources (apart, fitted on "
              f"dense bf16 runs): {error}")


def run(args: argparse.Namespace) -> int:
    runs = load_runs(args.runs, hardware=args.hardware)
    frame = frame_for(args.runs, hardware=args.hardware)
    onefactor = calibration_summary(frame)
    lopo = leave_one_publication_out(frame)
    headline = summary(frame, runs)
    publications = by_publication(frame)
    left_out = fp8_runs_left_out(args.runs, args.hardware)
    if left_out:
        headline["fp8_left_out"] = {"runs": list(left_out), "why": f"--hardware {args.hardware} has no dense FP8 peak "
                                                                    "(peak_fp8_flop_per_s)"}
        if args.format != "json":
            print(f"lgacc validate: {len(left_out)} FP8 runs left out: --hardware {args.hardware} has no dense FP8 "
                  "peak (peak_fp8_flop_per_s)", file=sys.stderr)
    if args.format == "json":
        columns = [key for key in (*RUN_KEYS, *SPARSE_RUN_DEFAULTS, *EXTENSION_RUN_KEYS) if key in frame.columns]
        records = [{**SPARSE_RUN_DEFAULTS, **{key: _clean(value) for key, value in row.items()}}
                   for row in frame[columns].to_dict("records")]
        brackets = bracket_predictions(runs)  # every run at each end of its brackets, read once for both tables
        print(dumps({
            "runs": records,
            "key_models": KEY_MODELS,
            "calibration": {**onefactor, "by_publication": lopo.to_dict(orient="records"),
                            "model": "ideal, with one fitted kernel efficiency"},
            "calibrated": {**headline, "parameters": fitted_calibration().fitted(),
                           "fixed_parameters": _fixed_parameters(), "measured_tables": _measured_tables(),
                           "side_by_side": tool_errors(frame).to_dict(orient="records"),
                           "recipe_effects": recipe_effects(runs, table=brackets).to_dict(orient="records"),
                           "recipe_effects_by_value": recipe_effects_by_value(runs, table=brackets).to_dict(
                               orient="records"),
                           "by_publication": publications.to_dict(orient="records"), "model": "calibrated"},
        }))
        return 0
    shown = frame[["id", "method", "schedule", "n_gpu", "measured_step_s", "predicted_physical_s", "ratio_physical",
                   "expected_step_s", "expected_lopo_s"]]
    print(shown.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    print()
    if not headline["time_runs"]:
        print("no dense bf16 run compared on time: the calibrated model's parameters cannot be tested here")
        _print_extensions(headline)
        return 0
    print(publications[["publication", "runs", "methods", "lopo_mean_error", "lopo_max_error", "fitted_mean_error"]]
          .to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    bound = headline["ideal_upper_bound"]
    if math.isfinite(headline["lopo_mean_error"]):
        held = (f"leave one publication out: mean {100 * headline['lopo_mean_error']:.1f} %, worst "
                f"{100 * headline['lopo_max_error']:.1f} %")
    else:
        held = "no leave-one-publication-out error: the runs come from one publication"
    memory = (f"memory {100 * headline['memory_mean_error']:.1f} % over {headline['memory_runs']} measured runs of "
              f"{headline['memory_publications']} sources (predicting allocated memory: a lower bound on reserved and "
              "device memory)" if headline["memory_runs"] else "no measured memory")
    print(f"\ncalibrated model, {held} ({headline['time_runs']} runs of {headline['time_publications']} sources); fitted on "
          f"all: {100 * headline['fitted_mean_error']:.1f} %; within publication "
          f"{100 * headline['within_publication_error']:.1f} % (Calculon: 3.65 %); {memory}")
    print("ideal model an upper bound on speed: "
          + ", ".join(f"{bound[n]} of {bound['of']} runs ({n})" for n in ("per-gpu", *DP_NETWORKS[1:])))
    held_out = (f"{100 * onefactor['lopo_mean_abs_error']:.1f} %" if math.isfinite(onefactor["lopo_mean_abs_error"])
                else "none (the runs come from one publication)")
    print(f"ideal model with one kernel efficiency {onefactor['kernel_efficiency']:.3f}: leave one publication out {held_out}")
    _print_extensions(headline)
    return 0
