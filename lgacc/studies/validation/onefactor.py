"""The ideal model with one kernel-efficiency factor: the calibration the measured-runs page had before the
calibrated model, kept beside it as its baseline.

The implied kernel efficiency of a run is the ideal (physical) prediction over the measured time; one
factor ``k`` (a spec's ``kernel_efficiency``) makes the prediction ``t_pred / k``.  It is fitted as the
geometric mean of the implied efficiencies (least squares in log) and tested leave one publication out.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from lgacc.errors import UserInputError

__all__ = ["fit_kernel_efficiency", "leave_one_publication_out", "calibration_summary"]


def fit_kernel_efficiency(implied: np.ndarray | pd.Series) -> float:
    """The one factor k with ``measured ≈ predicted / k``: least squares in log, the geometric mean."""
    values = np.asarray(implied, dtype=float)
    if values.size == 0 or not np.all(values > 0):
        raise UserInputError("kernel efficiency: needs at least one run with a positive implied efficiency")
    return float(math.exp(np.mean(np.log(values))))


def _dense(frame: pd.DataFrame) -> pd.DataFrame:
    """The dense bf16 rows compared on time (the runs with experts, context parallelism or FP8 are reported apart,
    issue #36; a run compared on memory only, ``use: [memory]``, has a time that is not a step to predict)."""
    if "extended" in frame.columns:
        frame = frame[~frame["extended"].astype(bool)]
    return frame[frame["uses"].str.contains("time")] if "uses" in frame.columns else frame


def leave_one_publication_out(frame: pd.DataFrame) -> pd.DataFrame:
    """For each publication: k fitted on the others, and the error of ``predicted_physical / k`` on its runs
    (dense bf16 runs).

    Columns: ``publication, runs, k, mean_abs_error, max_abs_error`` (relative to the measured time).
    """
    frame = _dense(frame)
    rows = []
    for publication, held_out in frame.groupby("publication", sort=False):
        others = frame[frame["publication"] != publication]
        if others.empty:  # a folder of one publication: nothing to fit on, no held-out error (NaN, JSON null)
            rows.append({"publication": publication, "runs": len(held_out), "k": math.nan,
                         "mean_abs_error": math.nan, "max_abs_error": math.nan})
            continue
        k = fit_kernel_efficiency(others["implied_kernel_efficiency"])
        errors = np.abs(held_out["predicted_physical_s"] / k / held_out["measured_step_s"] - 1)
        rows.append({"publication": publication, "runs": len(held_out), "k": k,
                     "mean_abs_error": float(errors.mean()), "max_abs_error": float(errors.max())})
    return pd.DataFrame(rows)


def calibration_summary(frame: pd.DataFrame) -> dict[str, float]:
    """k on all dense bf16 runs, and the leave-one-publication-out mean absolute error over every such run."""
    frame = _dense(frame)
    if frame.empty:  # only runs with experts, context parallelism or FP8: nothing this calibration is fitted on
        return {"kernel_efficiency": math.nan, "lopo_mean_abs_error": math.nan, "runs": 0, "publications": 0}
    lopo = leave_one_publication_out(frame)
    total = float((lopo["mean_abs_error"] * lopo["runs"]).sum(min_count=1) / lopo["runs"].sum())  # NaN: one publication
    return {"kernel_efficiency": fit_kernel_efficiency(frame["implied_kernel_efficiency"]),
            "lopo_mean_abs_error": total, "runs": int(len(frame)), "publications": int(lopo.shape[0])}
