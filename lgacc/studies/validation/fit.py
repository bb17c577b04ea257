"""The calibrated model's fitted parameters, kept as data with the command that writes them.

``python -m lgacc.studies.validation.fit --write`` fits ``kappa`` and ``xi`` (the bus efficiency ``eta`` and the
NVLink latency come from a published NCCL benchmark, :mod:`lgacc.model.calibrated.links`)
(:func:`lgacc.studies.validation.calibrated.fit`) on the step times of the runs of
``data/validation`` and writes ``data/calibrated/fitted.yaml``; without ``--write`` it prints the fit
and whether the file holds it.  The model reads the file (:func:`lgacc.model.calibrated.fitted_calibration`);
``tests/test_calibration_fit.py`` checks that the file is the fit of the shipped runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lgacc.cache.results import cached
from lgacc.model.calibrated import FITTED, Calibration
from lgacc.model.calibrated.parameters import FITTED_FILE, fitted_calibration

from .calibrated import fit, fit_runs
from .runs import DATA_DIR, load_runs

__all__ = ["COMMAND", "fit_shipped_runs", "fitted_file_text", "main"]

COMMAND = "python -m lgacc.studies.validation.fit --write"


def fit_shipped_runs(data_dir: Path | str = DATA_DIR) -> tuple[Calibration, int, int]:
    """(calibration, runs, publications) of the fit on the step times of the dense bf16 runs of ``data_dir``
    (:func:`.calibrated.fit_runs`: runs with experts, context parallelism or FP8 are predicted, never fitted)."""
    runs = fit_runs(load_runs(data_dir))

    def compute():
        return fit(runs), len(runs), len({run.publication for run in runs})

    return cached("calibration-fit", runs, compute)  # keyed by the runs read, not the folder's name


def fitted_file_text(calibration: Calibration, runs: int, publications: int) -> str:
    values = "\n".join(f"  {name}: {getattr(calibration, name)!r}" for name in FITTED)
    return (
        "# The calibrated model's fitted parameters (lgacc.model.calibrated.parameters), fitted on the step times\n"
        f"# of the {runs} runs of {publications} publications in data/validation only (never on the paper's numbers).\n"
        f"# Written by: {COMMAND}\n"
        "# kappa: real layers' matrix-multiply efficiency over the isolated kernel's (the measured layer-GEMM table\n"
        "# where one covers the GPU, data/calibrated/gemm_tables.yaml; else the GPU's best, gemm_max_efficiency);\n"
        "# xi: share of an overlapped collective's time that still slows the compute it overlaps.\n"
        "# Not fitted: eta and the NVLink latency (alpha-beta fit to a published NCCL benchmark, python -m\n"
        "# lgacc.model.calibrated.links); no fixed time per step (T_0 = 0).\n"
        f"runs: {runs}\npublications: {publications}\nparameters:\n{values}\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lgacc.studies.validation.fit", description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {FITTED_FILE.relative_to(FITTED_FILE.parents[2])}")
    args = parser.parse_args(argv)
    calibration, runs, publications = fit_shipped_runs()
    print(f"fitted on {runs} runs of {publications} publications: "
          + ", ".join(f"{name} = {getattr(calibration, name):g}" for name in FITTED))
    if args.write:
        FITTED_FILE.parent.mkdir(parents=True, exist_ok=True)
        FITTED_FILE.write_text(fitted_file_text(calibration, runs, publications), encoding="utf-8")
        print(f"written to {FITTED_FILE}")
        return 0
    current = fitted_calibration.__wrapped__(FITTED_FILE)
    same = all(getattr(current, n) == getattr(calibration, n) for n in FITTED)
    print("the shipped file holds this fit" if same else f"the shipped file differs: run {COMMAND}")
    return 0 if same else 1


if __name__ == "__main__":  # a closed pipe or Ctrl-C: one line or none, never a traceback
    from lgacc.errors import run_quietly

    sys.exit(run_quietly("python -m lgacc.studies.validation.fit", "lgacc.studies.validation.fit"))
