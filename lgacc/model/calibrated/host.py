"""The host's floor: an eager framework cannot run a layer faster than its CPU issues the layer's work.

Without CUDA graphs every operation of a training step is issued from Python, one after the other: the
autograd engine records it, the module's hooks and autocast's casts run, and the kernel is launched.  The GPU
runs ahead of the host only while its queue is full; layers whose kernels are shorter than the host's time to
issue them run at the host's pace.  A step therefore takes at least ``(n_mu + R) L (t_h + r_full t_hR)`` seconds
(:mod:`.step`: the device's micro-batches and ramp, ``L`` layers each): ``t_h`` the host's seconds per layer and
micro-batch (forward and backward), ``t_hR`` what a recomputed forward adds.

**Measured, not fitted.**  Both come from the training steps measured on our own H100 with eager PyTorch
(``data/calibrated/measured/h100-sxm-2026-11-26/training.csv``, ``benchmarks/gpu/measure.py``): at the narrowest
width of the table (``d_m`` 1024, 8 layers) the step time stays the same whether the 4,096 tokens of a
micro-batch come as 4 x 1024, 2 x 2048 or 1 x 4096 (the attention's flops grow four-fold over those rows, the
time does not: the step waits on the host, :func:`host_bound_spread`).  The fastest of those steps, divided by
the layers, is ``t_h`` (without recomputation) and ``t_h + t_hR`` (full recomputation).  The step's own host
work (the head, the loss, the optimizer's few fused kernels) is counted into the layers, which is why the floor
is not added beside the head; the device's exposed reduction and optimizer step, which a framework that waits for
the device after its layers cannot hide under the host's issuing, follow it (:mod:`.step`); a framework with heavier modules
(Transformer Engine's, Megatron-LM's hooks) issues more per layer and waits longer (megatron-tutorials' runs of
one micro-batch: 4.6-5.1 ms per layer), a faster CPU less.

The launch of one tiny kernel measured on the same machine (``launch.csv``: 8.08 us from the host, 7.74 us per
kernel on the device back to back, 0.99 us in a CUDA graph) is far below this: the layer's ~25 kernels that the
model counts (its GEMMs, attention and memory-bound kernels, :mod:`.kernels`) would take 0.2 ms to launch,
against the 2.8 ms per layer the eager step measures; what a no-grad launch does not pay (the autograd graph,
its backward engine, hooks and casts) is most of the host's time.

With CUDA graphs (the recipe's ``cuda_graphs``) the host replays one graph per step and the floor is 0.
"""

from __future__ import annotations

import csv
import sys
from functools import cache
from pathlib import Path

from lgacc.errors import UserInputError
from lgacc.paths import DATA

__all__ = ["TRAINING_FILE", "host_times", "host_bound_spread", "main"]

TRAINING_FILE = DATA / "calibrated" / "measured" / "h100-sxm-2026-11-26" / "training.csv"


def _narrowest_rows(path: Path) -> list[dict[str, str]]:
    """The rows of the narrowest width with its fewest tokens per micro-batch (the steps least loaded on the GPU)."""
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as error:
        raise UserInputError(f"measured training steps {str(path)!r} cannot be read: {error.strerror}") from None
    if not rows:
        raise UserInputError(f"measured training steps {str(path)!r} hold no row")
    width = min(int(row["d_m"]) for row in rows)
    narrow = [row for row in rows if int(row["d_m"]) == width]
    tokens = min(int(row["b_mu"]) * int(row["d_s"]) for row in narrow)
    return [row for row in narrow if int(row["b_mu"]) * int(row["d_s"]) == tokens]


@cache
def host_times(path: Path = TRAINING_FILE) -> dict[str, float]:
    """``{"host_layer_s": t_h, "host_recompute_s": t_hR}``: seconds per layer and micro-batch the host needs
    to issue a layer's forward and backward passes, and what a recomputed forward adds (the fastest measured
    step at the narrowest width, over its layers; see the module's docstring)."""
    rows = _narrowest_rows(Path(path))
    per_layer = {}
    for mode in ("none", "full"):
        times = [float(row["step_seconds"]) / int(row["d_l"]) for row in rows if row["recompute"] == mode]
        if not times:
            raise UserInputError(f"measured training steps {str(path)!r}: no row with recompute={mode}")
        per_layer[mode] = min(times)
    return {"host_layer_s": per_layer["none"], "host_recompute_s": max(0.0, per_layer["full"] - per_layer["none"])}


def host_bound_spread(path: Path = TRAINING_FILE) -> float:
    """Largest over smallest step time of the narrowest width's rows without recomputation (same tokens per
    micro-batch, attention flops up to four-fold apart): near 1 when the step waits on the host."""
    times = [float(row["step_seconds"]) for row in _narrowest_rows(Path(path)) if row["recompute"] == "none"]
    return max(times) / min(times)


def main(argv: list[str] | None = None) -> int:
    """``python -m lgacc.model.calibrated.host``: print the host floor read from the measured steps."""
    times = host_times()
    print(f"{TRAINING_FILE.relative_to(DATA.parent)}: host {times['host_layer_s'] * 1e3:.2f} ms per layer and "
          f"micro-batch, recomputed forward +{times['host_recompute_s'] * 1e3:.2f} ms "
          f"(narrowest width's steps within {100 * (host_bound_spread() - 1):.0f} % of each other)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
