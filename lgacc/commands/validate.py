"""``lgacc validate``: the resource model against published training runs (``data/validation/``)."""

from __future__ import annotations

import argparse
import math

from lgacc.studies.validation import (
    DATA_DIR,
    calibration_summary,
    comparison,
    leave_one_publication_out,
    load_runs,
)

from ._output import dumps

#: Keys of each run in the JSON output.
RUN_KEYS = ("id", "publication", "citation", "model", "hardware", "n_gpu", "n_b", "n_l", "n_a", "n_mu", "b_mu", "b",
            "d_s", "recomputation", "measured_step_s", "predicted_paper_s", "predicted_physical_s", "ratio_paper",
            "ratio_physical", "implied_kernel_efficiency", "upper_bound")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="compare predicted and measured step times of published training runs",
        description=(
            "For each published run of data/validation/*.yaml: the measured step time, the step time the "
            "model predicts under the paper's and the physical overlap conventions, their ratio "
            "(measured / predicted >= 1: the model is an upper bound on speed), the implied kernel "
            "efficiency, and the leave-one-publication-out error of a fitted kernel efficiency."
        ),
    )
    parser.add_argument("--hardware", default=None,
                        help="shipped spec name or YAML path replacing each run's own (default: the runs' own specs)")
    parser.add_argument("--runs", default=str(DATA_DIR), help="folder of run files (default: the shipped data/validation)")
    parser.add_argument("--format", choices=("table", "json"), default="table", help="output format (default: table)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    frame = comparison(load_runs(args.runs, hardware=args.hardware))
    summary = calibration_summary(frame)
    lopo = leave_one_publication_out(frame)
    if args.format == "json":
        print(dumps({
            "runs": frame[list(RUN_KEYS)].to_dict(orient="records"),
            "calibration": {**summary, "by_publication": lopo.to_dict(orient="records")},
        }))
        return 0
    shown = frame[["id", "n_gpu", "n_b", "n_l", "n_a", "n_mu", "measured_step_s", "predicted_paper_s",
                   "predicted_physical_s", "ratio_physical", "implied_kernel_efficiency"]]
    print(shown.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    print()
    print(lopo.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    lopo_error = summary["lopo_mean_abs_error"]
    held_out = (f"leave-one-publication-out mean absolute error: {100 * lopo_error:.1f} %" if math.isfinite(lopo_error)
                else "no leave-one-publication-out error: the runs come from one publication")
    print(f"\nkernel efficiency fitted on all {summary['runs']} runs: {summary['kernel_efficiency']:.3f}; {held_out}")
    return 0
