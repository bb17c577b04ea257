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

**Megatron-Core issues more per layer, measured.**  The recipe's ``host_framework`` says whose modules the host
runs: ``pytorch`` (plain ``torch.nn`` layers under autocast, what the floor above was measured with; the default) or
``megatron`` (Megatron-Core's ``GPTModel`` in its ``DistributedDataParallel`` wrapper and its forward-backward
schedule, the code of Megatron-LM, NeMo and Megatron-Bridge).  Both were measured on the same kind of H100 at width
64, where every kernel's GPU work is a few microseconds and the step is the host's
(``data/calibrated/measured/h100-sxm-2026-11-27``: ``host.csv`` by ``benchmarks/gpu/measure_host.py``,
``megatron_host*.csv`` by ``benchmarks/gpu/measure_megatron_host.py``).  The same least-squares form,
``t = a + b d_l + n_mu (c + d_l t_layer)``, fitted to each, gives a layer's forward and backward per micro-batch,
``t_layer``: about 2.2 ms for plain PyTorch; about 3 ms for Megatron-Core, its steps of every lease pooled (fitted
lease by lease they part by a millisecond: the lent machines differ by more than one lease's steps scatter).
Megatron-Core's layer costs the host :func:`megatron_host_extra_s` more (their difference), which a ``megatron`` recipe adds
to ``t_h``; its ``t_hR`` is what Megatron-Core's recomputed forward added beside its plain layer on one lease
(:func:`megatron_host_variants`; the selective recomputation and the overlapped reduction measured there are
not carried, :func:`lgacc.model.calibrated.expected.megatron_host_inputs`).
The difference of the layers' slopes, not a ratio of whole steps: ``t_h`` also holds the step's and the
micro-batch's own host work spread over the layers, which the leases scatter most and a deep model barely feels.
Measured with Megatron-Core's ``local`` layer spec: the image had no
Transformer Engine, whose modules (Megatron-LM's default) fuse the norm into the next product and may issue less.
"""

from __future__ import annotations

import csv
import sys
from functools import cache
from pathlib import Path

from lgacc.errors import UserInputError
from lgacc.paths import DATA

from .recipe import HOST_FRAMEWORKS  # noqa: F401 - the recipe's host_framework values, named here with their data

__all__ = ["TRAINING_FILE", "PYTORCH_HOST_FILE", "MEGATRON_HOST_FILES", "HOST_FRAMEWORKS", "host_times",
           "host_bound_spread", "host_step_fit", "megatron_layer_rows", "megatron_host_extra_s", "megatron_host_variants",
           "MEGATRON_VARIANTS", "main"]

TRAINING_FILE = DATA / "calibrated" / "measured" / "h100-sxm-2026-11-26" / "training.csv"
#: eager PyTorch steps and Megatron-Core steps at width 64 on the same kind of H100 (the recipe's host_framework)
PYTORCH_HOST_FILE = DATA / "calibrated" / "measured" / "h100-sxm-2026-11-27" / "host.csv"
#: Megatron-Core's steps, four leases of the same day (a full run, the experts' quick run, the variants' run, the
#: forward passes' run)
MEGATRON_HOST_FILES = tuple(DATA / "calibrated" / "measured" / "h100-sxm-2026-11-27" / f"megatron_host{suffix}.csv"
                            for suffix in ("", "_e128", "_variants", "_forward"))
#: the width of the host-bound rows (every kernel's GPU work a few microseconds)
HOST_WIDTH = 64


def _narrowest_rows(path: Path) -> list[dict[str, str]]:
    """The rows of the narrowest width with its fewest tokens per micro-batch (the steps least loaded on the GPU)."""
    rows = _rows(path, "measured training steps")
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


def host_step_fit(layers, micro_batches, seconds) -> tuple[tuple[float, float, float, float], float, float]:
    """Least squares of ``t = a + b d_l + n_mu (c + d_l t_layer)`` over host-bound steps: ``(a, b, c, t_layer)``
    (once a step, once a layer and step, once a micro-batch, once a layer and micro-batch) and the rows' mean and
    largest relative distance from the fit."""
    import numpy as np

    layers, n_mu, seconds = (np.asarray(x, dtype=float) for x in (layers, micro_batches, seconds))
    design = np.column_stack([np.ones_like(layers), layers, n_mu, n_mu * layers])
    if len(seconds) < 5 or np.linalg.matrix_rank(design) < 4:
        raise UserInputError("host-bound steps: at least 5 rows over 2 layer counts and 2 micro-batch counts needed "
                             "for the 4 terms of the fit")
    terms, *_ = np.linalg.lstsq(design, seconds, rcond=None)
    residual = np.abs(design @ terms / seconds - 1)
    return tuple(map(float, terms)), float(residual.mean()), float(residual.max())


def _rows(path: Path, what: str = "measured host steps") -> list[dict[str, str]]:
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            return list(csv.DictReader(handle))
    except OSError as error:
        raise UserInputError(f"{what} {str(path)!r} cannot be read: {error.strerror}") from None


def _layer_s(rows: list[dict[str, str]], layers: str = "layers", micro_batches: str = "micro_batches") -> float:
    """A layer's host seconds per micro-batch, fitted (:func:`host_step_fit`) to ``rows`` (their columns named)."""
    (*_, t_layer), _, _ = host_step_fit([r[layers] for r in rows], [r[micro_batches] for r in rows],
                                        [r["step_seconds"] for r in rows])
    return t_layer


def megatron_layer_rows(megatron: tuple[Path, ...] = MEGATRON_HOST_FILES) -> list[dict[str, str]]:
    """The dense ``local`` spec's steps of width 64 in every table of ``megatron``, pooled: the leases' machines
    differ by more than one lease's steps scatter."""
    return [r for path in megatron for r in _rows(Path(path)) if r["spec"] == "local" and int(r["width"]) == HOST_WIDTH]


@cache
def megatron_host_extra_s(pytorch: Path = PYTORCH_HOST_FILE, megatron: tuple[Path, ...] = MEGATRON_HOST_FILES) -> float:
    """What Megatron-Core's layer costs the host beyond plain PyTorch's, seconds per layer and micro-batch, both fitted
    (:func:`host_step_fit`) to the steps of width 64 measured on the same kind of GPU (the dense ``local`` spec's
    rows of every table of ``megatron``, pooled: :func:`megatron_layer_rows`)."""
    eager_layer = _layer_s([r for r in _rows(Path(pytorch)) if int(r["d_m"]) == HOST_WIDTH], "d_l", "n_mu")
    core_layer = _layer_s(megatron_layer_rows(tuple(megatron)))
    if eager_layer <= 0 or core_layer < eager_layer:
        raise UserInputError(f"measured host steps {str(pytorch)!r}, {str(megatron)!r}: a layer's host time fits "
                             f"to {eager_layer!r} and {core_layer!r} s, not 0 < PyTorch's <= Megatron-Core's")
    return core_layer - eager_layer


#: the Megatron-Core variants measured beside its plain layer on one lease (benchmarks/gpu/measure_megatron_host.py's
#: spec names): a recomputed forward (full), the attention core recomputed (selective), the reduction overlapped
MEGATRON_VARIANTS = {"recompute_full": "local_recompute_full", "recompute_selective": "local_recompute_selective",
                     "overlap_grad_reduce": "local_overlap_grad_reduce"}


@cache
def megatron_host_variants(megatron: tuple[Path, ...] = MEGATRON_HOST_FILES) -> dict[str, float]:
    """What each variant of :data:`MEGATRON_VARIANTS` costs the host per layer and micro-batch beyond Megatron-Core's
    plain layer (seconds, non-negative), each fitted (:func:`host_step_fit`) against the plain layer of the same
    table: one lease's machine, so the leases' spread drops out of the difference."""
    out: dict[str, float] = {}
    for path in megatron:
        rows = [r for r in _rows(Path(path)) if int(r["width"]) == HOST_WIDTH]
        specs = {r["spec"] for r in rows}
        wanted = {name: spec for name, spec in MEGATRON_VARIANTS.items() if spec in specs and name not in out}
        if "local" not in specs or not wanted:
            continue
        plain = _layer_s([r for r in rows if r["spec"] == "local"])
        for name, spec in wanted.items():
            out[name] = max(0.0, _layer_s([r for r in rows if r["spec"] == spec]) - plain)
    missing = [name for name in MEGATRON_VARIANTS if name not in out]
    if missing:
        raise UserInputError(f"measured Megatron-Core steps {', '.join(str(p) for p in megatron)}: no "
                             f"{', '.join(MEGATRON_VARIANTS[m] for m in missing)} rows beside a local spec's")
    return out


def host_bound_spread(path: Path = TRAINING_FILE) -> float:
    """Largest over smallest step time of the narrowest width's rows without recomputation (same tokens per
    micro-batch, attention flops up to four-fold apart): near 1 when the step waits on the host."""
    times = [float(row["step_seconds"]) for row in _narrowest_rows(Path(path)) if row["recompute"] == "none"]
    return max(times) / min(times)


def main(argv: list[str] | None = None) -> int:
    """``python -m lgacc.model.calibrated.host``: print the host floor read from the measured steps."""
    times = host_times()
    extra = megatron_host_extra_s()
    print(f"{TRAINING_FILE.relative_to(DATA.parent)}: host {times['host_layer_s'] * 1e3:.2f} ms per layer and "
          f"micro-batch, recomputed forward +{times['host_recompute_s'] * 1e3:.2f} ms "
          f"(narrowest width's steps within {100 * (host_bound_spread() - 1):.0f} % of each other)")
    print(f"{', '.join(str(p.relative_to(DATA.parent)) for p in MEGATRON_HOST_FILES)} over "
          f"{PYTORCH_HOST_FILE.relative_to(DATA.parent)}: "
          f"Megatron-Core's layer costs the host {extra * 1e3:.2f} ms more than plain PyTorch's (host_framework="
          f"megatron: {(times['host_layer_s'] + extra) * 1e3:.2f} ms per layer and micro-batch)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
