"""Linear interpolation in logarithms on a measured grid, clamped to its range: how the calibrated model reads its
measured tables (a layer's GEMMs by width, split and tokens, :mod:`.gemm_table`; fused attention by head size and
sequence length, :mod:`.attention`) between the points the GPU was measured at."""

from __future__ import annotations

import numpy as np

__all__ = ["log_weights"]


def log_weights(axis: tuple[int, ...], x) -> tuple[np.ndarray, np.ndarray]:
    """``(i, w)``: ``x`` lies at ``(1 - w)`` of grid point ``i`` and ``w`` of ``i + 1`` of the increasing ``axis``,
    linear in logs, clamped to the axis's ends (an axis of one point: ``i = 0``, ``w = 0``)."""
    logs = np.log(np.asarray(axis, dtype=float))
    lx = np.clip(np.log(np.asarray(x, dtype=float)), logs[0], logs[-1])
    if len(logs) == 1:
        return np.zeros(np.shape(lx), dtype=int), np.zeros(np.shape(lx))
    i = np.clip(np.searchsorted(logs, lx, side="right") - 1, 0, len(logs) - 2)
    return i, (lx - logs[i]) / (logs[i + 1] - logs[i])
