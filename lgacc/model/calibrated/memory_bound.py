"""Memory-bound kernels' share of the HBM bandwidth, measured on an H100, by kernel class and pass.

``benchmarks/gpu/measure_memory_bound.py`` timed a layer's memory-bound kernels one at a time on a lent H100, each
PyTorch's own (``torch.nn.functional.layer_norm``, ``gelu``, ``dropout``, the residual add), bf16, at 16,384 and
65,536 tokens and widths 1,024 to 8,192 (``data/calibrated/measured/h100-sxm-2026-11-27/memory_bound.csv``).  A
kernel's share is the bytes each of its tensors must be read or written once over the time measured, over the
GPU's bandwidth; :func:`kernel_shares` gives each kernel's and pass's median over the sizes.

The calibrated model reads the **layer norm's** two medians (``norm_forward_efficiency`` ``e_nF``,
``norm_backward_efficiency`` ``e_nB``, :mod:`.kernels`): a norm reduces over the width before it writes, and its
backward also reduces its weights' gradients over the tokens, so it streams well below the bandwidth (about 0.6
forward and 0.36 backward).  The element-wise kernels stream at the calibration's ``hbm_efficiency`` (0.9, Calculon's
and SimuMax's), which the table confirms: GELU 0.90 forward and 0.91 backward, the residual add 0.90, dropout's
backward 0.89.  Dropout's forward, which draws its random numbers, reaches 0.74 and is not read: only runs with
dropout pay it, on one small kernel of the layer.

The shares are read by every GPU (a share of its own bandwidth, as the H200 and the H800 read the H100's GEMM
grid): no other GPU was measured.  They are PyTorch's kernels; Megatron-LM's fused norm (Apex's, Transformer
Engine's) was not measured, and is read at the same shares.

``python -m lgacc.model.calibrated.memory_bound`` prints the medians.
"""

from __future__ import annotations

import csv
import sys
from functools import cache
from pathlib import Path


from lgacc.errors import UserInputError
from lgacc.paths import DATA

__all__ = ["MEMORY_BOUND_FILE", "MEASURED_ON", "READ_KERNEL", "share_samples", "kernel_shares", "norm_shares", "main"]

#: The measured table and the GPU it was measured on (its bandwidth turns bytes per second into shares).
MEMORY_BOUND_FILE = DATA / "calibrated" / "measured" / "h100-sxm-2026-11-27" / "memory_bound.csv"
MEASURED_ON = "h100-sxm"
#: The one kernel whose measured shares the calibrated model reads (the others stream at ``hbm_efficiency``).
READ_KERNEL = "layer_norm"

_COLUMNS = ("kernel", "pass", "tokens", "width", "bytes", "seconds")


def kernel_shares(path: Path | None = None, hardware: str = MEASURED_ON) -> dict[tuple[str, str], float]:
    """``{(kernel, pass): median share of the HBM bandwidth}`` over the sizes of ``path`` (the package's table, read
    once, by default; another file is read each time)."""
    samples = _package_samples() if path is None else share_samples(Path(path), hardware)
    return {key: _median(values) for key, values in samples.items()}


def _median(values: list[float]) -> float:
    """The median as numpy's (the mean of the two middle values of an even count), without ``np.median``, whose
    first call imports ``numpy.ma`` (20 ms of every ``lgacc evaluate``)."""
    ordered = sorted(float(v) for v in values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


@cache
def _package_samples() -> dict[tuple[str, str], list[float]]:
    return share_samples(MEMORY_BOUND_FILE, MEASURED_ON)


def share_samples(path: Path = MEMORY_BOUND_FILE, hardware: str = MEASURED_ON) -> dict[tuple[str, str], list[float]]:
    """``{(kernel, pass): [share of the HBM bandwidth at each size measured]}``, in the file's order."""
    from lgacc.model.hardware import load_hardware  # here: the hardware package imports this one's parent

    bandwidth = load_hardware(hardware).gpu_memory_bandwidth_bytes_per_s
    try:
        with open(path, newline="") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as error:
        raise UserInputError(f"memory-bound table {str(path)!r} cannot be read: {error.strerror}") from None
    if not rows or not set(_COLUMNS) <= set(rows[0]):
        raise UserInputError(f"memory-bound table {str(path)!r} must have the columns {', '.join(_COLUMNS)}")
    shares: dict[tuple[str, str], list[float]] = {}
    for number, row in enumerate(rows, start=2):
        try:
            size, seconds = float(row["bytes"]), float(row["seconds"])
        except ValueError:
            raise UserInputError(f"memory-bound table {str(path)!r} line {number}: bytes and seconds must be "
                                 f"numbers") from None
        if not (size > 0 and seconds > 0):
            raise UserInputError(f"memory-bound table {str(path)!r} line {number}: bytes and seconds must be > 0")
        shares.setdefault((row["kernel"], row["pass"]), []).append(size / seconds / bandwidth)
    return shares


def norm_shares(path: Path | None = None) -> tuple[float, float]:
    """(forward, backward): the layer norm's median shares of the bandwidth, the calibrated model's ``e_nF``, ``e_nB``."""
    shares = kernel_shares(path)
    missing = [name for name in ("forward", "backward") if (READ_KERNEL, name) not in shares]
    if missing:
        raise UserInputError(f"memory-bound table {str(path or MEMORY_BOUND_FILE)!r} has no {READ_KERNEL} "
                             f"{missing[0]} rows")
    return shares[READ_KERNEL, "forward"], shares[READ_KERNEL, "backward"]


def main() -> int:
    print(f"{MEMORY_BOUND_FILE.relative_to(DATA.parent)} (measured on {MEASURED_ON}): median share of the HBM "
          f"bandwidth by kernel and pass")
    for (kernel, name), share in kernel_shares().items():
        print(f"  {kernel:10s} {name:8s} {share:.3f}")
    forward, backward = norm_shares()
    print(f"read by the calibrated model: norm_forward_efficiency e_nF = {forward:.3f}, "
          f"norm_backward_efficiency e_nB = {backward:.3f}; the other kernels at hbm_efficiency")
    return 0


if __name__ == "__main__":  # a closed pipe or Ctrl-C: one line or none, never a traceback
    from lgacc.errors import run_quietly

    sys.exit(run_quietly("python -m lgacc.model.calibrated.memory_bound", "lgacc.model.calibrated.memory_bound"))
