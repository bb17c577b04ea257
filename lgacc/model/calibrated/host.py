"""The host's floor: an eager framework cannot run a step faster than its CPU issues the step's work.

Without CUDA graphs every operation of a training step is issued from Python, one after the other: the
autograd engine records it, the module's hooks and autocast's casts run, and the kernel is launched.  The GPU
runs ahead of the host only while its queue is full; layers whose kernels are shorter than the host's time to
issue them run at the host's pace.  A stage of ``L`` layers therefore takes at least::

    t_hs + L t_hl + (n_mu + R) (t_hm + L (t_h + r_full t_hR))

seconds (:mod:`.step`: the device's micro-batches and ramp): ``t_hs`` once a step, ``t_hl`` once a layer and step
(the optimizer's and the gradients' work per tensor), ``t_hm`` once a micro-batch (the head, the loss, the
schedule's own work), ``t_h`` once a layer and micro-batch (forward and backward) and ``t_hR`` what a recomputed
forward adds.

**Measured, not fitted.**  The four terms are a least-squares fit, none negative (:func:`host_step_fit`), to
training steps measured on our H100 at width 64 and 64 tokens, where every kernel's GPU work is a few
microseconds and the step is the host's, over 1 to 32 layers and 1 to 8 micro-batches
(``data/calibrated/measured/h100-sxm-2026-11-27/host.csv``, ``benchmarks/gpu/measure_host.py``):
:func:`host_terms`.  Plain PyTorch's: about 2 ms a step, 0.15 ms a layer and step, 2.1 ms a micro-batch and 2.2 ms a
layer and micro-batch.  ``t_hR`` is what full recomputation added to the eager steps of
``data/calibrated/measured/h100-sxm-2026-11-26/training.csv`` (``benchmarks/gpu/measure.py``), per layer, at their
narrowest width (``d_m`` 1024, 8 layers), where the step time stays the same whether the 4,096 tokens of a
micro-batch come as 4 x 1024, 2 x 2048 or 1 x 4096 (the attention's flops grow four-fold over those rows, the time
does not: the step waits on the host, :func:`host_bound_spread`).  Those whole steps also check the terms: their
fastest, over its 8 layers (:func:`host_times`, 2.8 ms), is within 2 % of what the terms give for one micro-batch of 8 layers.  A
framework with heavier modules (Transformer Engine's) issues more per layer and waits longer (megatron-tutorials'
runs of one micro-batch: 4.6-5.1 ms per layer), a faster CPU less.

The launch of one tiny kernel measured on the same machine (``launch.csv``: 8.08 us from the host, 7.74 us per
kernel on the device back to back, 0.99 us in a CUDA graph) is far below this: the layer's ~25 kernels that the
model counts (its GEMMs, attention and memory-bound kernels, :mod:`.kernels`) would take 0.2 ms to launch,
against the 2.2 ms per layer the eager steps measure; what a no-grad launch does not pay (the autograd graph,
its backward engine, hooks and casts) is most of the host's time.

With CUDA graphs (the recipe's ``cuda_graphs``) the host replays one graph per step and the floor is 0.

**Megatron-Core issues more, measured.**  The recipe's ``host_framework`` says whose modules the host runs:
``pytorch`` (plain ``torch.nn`` layers under autocast, the terms above; the default) or ``megatron`` (Megatron-Core's
``GPTModel`` in its ``DistributedDataParallel`` wrapper and its forward-backward schedule, the code of Megatron-LM,
NeMo and Megatron-Bridge).  Both were measured on the same kind of H100 at width 64
(``data/calibrated/measured/h100-sxm-2026-11-27``: ``host.csv`` by ``benchmarks/gpu/measure_host.py``,
``megatron_host*.csv`` by ``benchmarks/gpu/measure_megatron_host.py``), and the same four terms fitted to each: for
Megatron-Core its steps of every lease pooled (fitted lease by lease they part by about a millisecond a layer: the
lent machines differ by more than one lease's steps scatter).  A ``megatron`` recipe reads Megatron-Core's own terms
once a step, once a layer and step and once a micro-batch, and adds :func:`megatron_host_extra_s` (the difference of
the two layers' slopes) to ``t_h``; its ``t_hR`` is what Megatron-Core's recomputed forward added beside its plain
layer on one lease (:func:`megatron_host_variants`; the selective recomputation and the overlapped reduction
measured there are not carried, :func:`lgacc.model.calibrated.expected.megatron_host_inputs`).
Measured with Megatron-Core's ``local`` layer spec: the image had no Transformer Engine.

**Transformer Engine's modules issue more again, measured.**  Megatron-LM's default layer (``--transformer-impl
transformer_engine``, NeMo and Megatron-Bridge too) is built of Transformer Engine's modules, whose Python wrappers
(quantizer bookkeeping, workspace and stream checks per call) cost the host more than Megatron-Core's own.  On one
H200 lease (``data/calibrated/measured/h200-sxm-2026-11-28``; TE 2.9.0, packed for the image by
``benchmarks/gpu/pack_te.sh`` and run by ``benchmarks/gpu/run_te_host.sh``) the same script measured Megatron-Core's
``local`` layer beside TE's, plain and with Megatron-LM's default fusions (bias-GELU, bias-dropout-add: its
``--no-...-fusion`` flags), twice.  A ``megatron_te`` recipe adds :func:`te_host_extra_s` (the fused TE layer's
slope less the local layer's, fitted to the same table: one machine, so the lease's CPU drops out of the difference)
to Megatron-Core's terms.  Not measured: TE's recomputed forward (Megatron-Core's own is read), the gradient-
accumulation fusion (it needs Apex, absent from the image) and TE releases after 2.9, whose host work TE has since
cut (TransformerEngine#2126, January 2026).
"""

from __future__ import annotations

import csv
import sys
from functools import cache
from pathlib import Path

from lgacc.errors import UserInputError
from lgacc.paths import DATA

from .recipe import HOST_FRAMEWORKS  # noqa: F401 - the recipe's host_framework values, named here with their data

__all__ = ["TRAINING_FILE", "PYTORCH_HOST_FILE", "MEGATRON_HOST_FILES", "HOST_FRAMEWORKS", "HOST_TERMS", "host_terms",
           "host_times",
           "host_bound_spread", "host_step_fit", "megatron_layer_rows", "megatron_host_extra_s", "megatron_host_variants",
           "MEGATRON_VARIANTS", "TE_HOST_FILES", "TE_SPEC", "te_host_extra_s", "main"]

TRAINING_FILE = DATA / "calibrated" / "measured" / "h100-sxm-2026-11-26" / "training.csv"
#: eager PyTorch steps and Megatron-Core steps at width 64 on the same kind of H100 (the recipe's host_framework)
PYTORCH_HOST_FILE = DATA / "calibrated" / "measured" / "h100-sxm-2026-11-27" / "host.csv"
#: Megatron-Core's steps, four leases of the same day (a full run, the experts' quick run, the variants' run, the
#: forward passes' run)
MEGATRON_HOST_FILES = tuple(DATA / "calibrated" / "measured" / "h100-sxm-2026-11-27" / f"megatron_host{suffix}.csv"
                            for suffix in ("", "_e128", "_variants", "_forward"))
#: Megatron-Core's local layer beside Transformer Engine's, two runs on one H200 lease
TE_HOST_FILES = tuple(DATA / "calibrated" / "measured" / "h200-sxm-2026-11-28" / f"megatron_host_te{suffix}.csv"
                      for suffix in ("", "_fused"))
#: the TE layer a megatron_te recipe reads: Megatron-LM's default fusions on (the script's spec name)
TE_SPEC = "transformer_engine_fused"
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


def host_step_fit(layers, micro_batches, seconds, non_negative: bool = True
                  ) -> tuple[tuple[float, float, float, float], float, float]:
    """Least squares of ``t = a + b d_l + n_mu (c + d_l t_layer)`` over host-bound steps, each term a time and so
    none negative: ``(a, b, c, t_layer)`` (once a step, once a layer and step, once a micro-batch, once a layer and
    micro-batch) and the rows' mean and largest relative distance from the fit.  The least squares over the terms'
    non-negative values, found exactly by trying every subset of the four terms (the unconstrained fit where it
    is non-negative); ``non_negative=False``: the unconstrained fit (a count of kernels, exact with any sign)."""
    from itertools import combinations

    import numpy as np

    layers, n_mu, seconds = (np.asarray(x, dtype=float) for x in (layers, micro_batches, seconds))
    design = np.column_stack([np.ones_like(layers), layers, n_mu, n_mu * layers])
    if len(seconds) < 5 or np.linalg.matrix_rank(design) < 4:
        raise UserInputError("host-bound steps: at least 5 rows over 2 layer counts and 2 micro-batch counts needed "
                             "for the 4 terms of the fit")
    best, terms = np.inf, np.zeros(4)
    for size in (range(1, 5) if non_negative else (4,)):
        for columns in combinations(range(4), size):
            coefficients, *_ = np.linalg.lstsq(design[:, columns], seconds, rcond=None)
            if non_negative and (coefficients < 0).any():
                continue
            trial = np.zeros(4)
            trial[list(columns)] = coefficients
            error = float(((design @ trial - seconds) ** 2).sum())
            if error < best:  # a tie keeps the fewer terms, tried first
                best, terms = error, trial
    residual = np.abs(design @ terms / seconds - 1)
    return tuple(map(float, terms)), float(residual.mean()), float(residual.max())


#: the four terms of a framework's host time (:func:`host_step_fit`), as the calibration names them
HOST_TERMS = ("step_s", "step_layer_s", "micro_batch_s", "layer_s")


def _terms(rows: list[dict[str, str]], layers: str, micro_batches: str) -> dict[str, float]:
    terms, _, _ = host_step_fit([r[layers] for r in rows], [r[micro_batches] for r in rows],
                                [r["step_seconds"] for r in rows])
    return dict(zip(HOST_TERMS, terms))


@cache
def host_terms(framework: str, pytorch: Path = PYTORCH_HOST_FILE,
               megatron: tuple[Path, ...] = MEGATRON_HOST_FILES) -> dict[str, float]:
    """A framework's host time in four measured terms (:data:`HOST_TERMS`: once a step, once a layer and step, once
    a micro-batch, once a layer and micro-batch), fitted to its steps of width 64 (:func:`host_step_fit`):
    ``pytorch`` plain eager layers (``host.csv``), ``megatron`` Megatron-Core's, every lease pooled
    (:func:`megatron_layer_rows`)."""
    if framework == "pytorch":
        return _terms([r for r in _rows(Path(pytorch)) if int(r["d_m"]) == HOST_WIDTH], "d_l", "n_mu")
    if framework == "megatron":
        return _terms(megatron_layer_rows(tuple(megatron)), "layers", "micro_batches")
    raise UserInputError(f"host framework {framework!r} must be one of {', '.join(HOST_FRAMEWORKS)}")


def _rows(path: Path, what: str = "measured host steps") -> list[dict[str, str]]:
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            return list(csv.DictReader(handle))
    except OSError as error:
        raise UserInputError(f"{what} {str(path)!r} cannot be read: {error.strerror}") from None


def _layer_s(rows: list[dict[str, str]], layers: str = "layers", micro_batches: str = "micro_batches") -> float:
    """A layer's host seconds per micro-batch, fitted (:func:`host_step_fit`) to ``rows`` (their columns named)."""
    return _terms(rows, layers, micro_batches)["layer_s"]


def _slope_over_local(rows: list[dict[str, str]], spec: str) -> float:
    """What ``spec``'s layer costs the host per layer and micro-batch beyond the ``local`` layer of the same table
    (one lease's machine), both slopes fitted (:func:`_layer_s`); negative where it fits cheaper."""
    return _layer_s([r for r in rows if r["spec"] == spec]) - _layer_s([r for r in rows if r["spec"] == "local"])


def megatron_layer_rows(megatron: tuple[Path, ...] = MEGATRON_HOST_FILES) -> list[dict[str, str]]:
    """The dense ``local`` spec's steps of width 64 in every table of ``megatron``, pooled: the leases' machines
    differ by more than one lease's steps scatter."""
    return [r for path in megatron for r in _rows(Path(path)) if r["spec"] == "local" and int(r["width"]) == HOST_WIDTH]


@cache
def megatron_host_extra_s(pytorch: Path = PYTORCH_HOST_FILE, megatron: tuple[Path, ...] = MEGATRON_HOST_FILES) -> float:
    """What Megatron-Core's layer costs the host beyond plain PyTorch's, seconds per layer and micro-batch, both fitted
    (:func:`host_step_fit`) to the steps of width 64 measured on the same kind of GPU (the dense ``local`` spec's
    rows of every table of ``megatron``, pooled: :func:`megatron_layer_rows`)."""
    eager_layer = host_terms("pytorch", Path(pytorch), tuple(megatron))["layer_s"]
    core_layer = host_terms("megatron", Path(pytorch), tuple(megatron))["layer_s"]
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
        for name, spec in wanted.items():
            out[name] = max(0.0, _slope_over_local(rows, spec))
    missing = [name for name in MEGATRON_VARIANTS if name not in out]
    if missing:
        raise UserInputError(f"measured Megatron-Core steps {', '.join(str(p) for p in megatron)}: no "
                             f"{', '.join(MEGATRON_VARIANTS[m] for m in missing)} rows beside a local spec's")
    return out


@cache
def te_host_extra_s(spec: str = TE_SPEC, paths: tuple[Path, ...] = TE_HOST_FILES) -> float:
    """What Transformer Engine's layer ``spec`` costs the host beyond Megatron-Core's ``local`` layer, seconds per
    layer and micro-batch: in each table of ``paths`` holding both, the difference of their slopes fitted
    (:func:`host_step_fit`) to its steps of width 64 (one lease's machine, so its CPU's speed drops out), averaged
    over those tables."""
    differences = []
    for path in paths:
        rows = [r for r in _rows(Path(path)) if int(r["width"]) == HOST_WIDTH]
        if {r["spec"] for r in rows} >= {spec, "local"}:
            differences.append(_slope_over_local(rows, spec))
    where = f"measured Megatron-Core steps {', '.join(str(p) for p in paths)}"
    if not differences:
        raise UserInputError(f"{where}: no {spec} rows beside a local spec's")
    if min(differences) < 0:
        raise UserInputError(f"{where}: the {spec} layer fits cheaper than the local one ({min(differences)!r} s)")
    return sum(differences) / len(differences)


def host_bound_spread(path: Path = TRAINING_FILE) -> float:
    """Largest over smallest step time of the narrowest width's rows without recomputation (same tokens per
    micro-batch, attention flops up to four-fold apart): near 1 when the step waits on the host."""
    times = [float(row["step_seconds"]) for row in _narrowest_rows(Path(path)) if row["recompute"] == "none"]
    return max(times) / min(times)


def main(argv: list[str] | None = None) -> int:
    """``python -m lgacc.model.calibrated.host``: print the host floor read from the measured steps."""
    times = host_times()
    extra = megatron_host_extra_s()
    for framework, source in (("pytorch", PYTORCH_HOST_FILE.relative_to(DATA.parent)),
                              ("megatron", ", ".join(str(p.relative_to(DATA.parent)) for p in MEGATRON_HOST_FILES))):
        terms = host_terms(framework)
        print(f"host_framework={framework}: {terms['step_s'] * 1e3:.2f} ms a step + {terms['step_layer_s'] * 1e3:.2f} ms "
              f"a layer and step + {terms['micro_batch_s'] * 1e3:.2f} ms a micro-batch + {terms['layer_s'] * 1e3:.2f} ms "
              f"a layer and micro-batch  [{source}]")
    print(f"Megatron-Core's layer costs the host {extra * 1e3:.2f} ms more per micro-batch than plain PyTorch's; its "
          f"recomputed forward {megatron_host_variants()['recompute_full'] * 1e3:.2f} ms")
    print(f"Transformer Engine's layer (host_framework=megatron_te, Megatron-LM's default fusions) costs it "
          f"{te_host_extra_s() * 1e3:.2f} ms more than Megatron-Core's own ({te_host_extra_s('transformer_engine') * 1e3:.2f} "
          f"ms without the fusions)  [{', '.join(str(p.relative_to(DATA.parent)) for p in TE_HOST_FILES)}]")
    print(f"{TRAINING_FILE.relative_to(DATA.parent)}: a whole eager step at width 1,024 over its layers "
          f"{times['host_layer_s'] * 1e3:.2f} ms per layer and micro-batch, recomputed forward "
          f"+{times['host_recompute_s'] * 1e3:.2f} ms (narrowest width's steps within "
          f"{100 * (host_bound_spread() - 1):.0f} % of each other)")
    return 0


if __name__ == "__main__":  # a closed pipe or Ctrl-C: one line or none, never a traceback
    from lgacc.errors import run_quietly

    sys.exit(run_quietly("python -m lgacc.model.calibrated.host", "lgacc.model.calibrated.host"))
