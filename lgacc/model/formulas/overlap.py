"""What an overlapped transfer costs: the paper's convention and the physical one.

eq:overlap_condition: a transfer overlapped with computation is free when
``nu_op >= nu_net``; otherwise the paper charges ``max(0, nu_net / nu_op - 1)``,
the excess *relative to the overlapped operation* (``paper_overlapped_overhead``).

The *physical* convention charges the time the GPU actually waits, relative to
the whole step.  With ``T`` the transfer time, ``C`` the compute it overlaps and
``S`` the step's compute, the wait is ``max(0, T - C)`` and

    max(0, T - C) / S = (C / S) max(0, T / C - 1) = (C / S) max(0, nu_net / nu_op - 1),

since ``T / C = (bytes / beta) / (flops / c_gpu) = nu_net / nu_op``
(:func:`physical_identity` checks it with sympy).  A transfer split over passes
(forward and backward of a partitioned step, for instance) sums this over the
passes; each pass's intensity is the binding one times a constant ``k_p <= 1``.

For each overlapped transfer of the evaluator, :func:`physical_passes` derives
``(fraction C_p / S, relative nu_binding / nu_p)`` per pass from the flop and
byte counts of :mod:`.network`:

* ``data_base`` (eq:data_intensity_base): the reduction overlaps the backward pass
  of the *last* micro-batch only, ``C / S = 3 / (4 n_mu)``;
* ``data_base_partition`` (eq:data_intensity_base_partition),
  ``data_improved`` (eq:data_intensity_improved),
  ``data_improved_partition`` (eq:data_intensity_improved_partition);
* ``pipeline`` (eq:pipeline_intensity_base, eq:pipeline_intensity_impr): forward
  transfers of activations, backward transfers of their gradients (same bytes,
  three times the flops);
* ``state_offload`` (eq:state_offload_intensity), ``checkpoint_offload``
  (eq:checkpoint_offload_intensity).

Transfers the paper does not overlap (tensor all-reduces, the baseline's reduction
with a pipeline, eq:data_intensity_base_pipe) cost ``nu_net / nu_op`` in both
conventions: there ``C = 0`` and the charge is ``T / S``.  The shared PCIe link
is kept in the paper's form in both conventions (it mixes transfers of
different passes).
"""

from __future__ import annotations

from functools import cache

import sympy

from ..symbols import b, d_l, n_b, nu_net, nu_op
from . import network
from .model import layer_parameters

__all__ = ["PHYSICAL_KINDS", "paper_overlapped_overhead", "physical_overlapped_overhead", "physical_passes",
           "physical_overhead", "physical_identity", "not_overlapped_overhead"]

_T, _C, _S = sympy.symbols("T C S", positive=True)  # transfer, overlapped compute, step compute (seconds)


def paper_overlapped_overhead(ratio):
    """eq:overlap_condition: an overlapped transfer costs ``max(0, nu_net / nu_op - 1)`` (``ratio = nu_net / nu_op``)."""
    return sympy.Max(0, ratio - 1) if isinstance(ratio, sympy.Basic) else _np_max(ratio - 1)


def not_overlapped_overhead(ratio):
    """eq:overhead_condition: a transfer that is not overlapped costs ``nu_net / nu_op``."""
    return ratio


def physical_overlapped_overhead(fraction, ratio):
    """``(C / S) max(0, T / C - 1)``: the wait of one overlapped pass relative to the step."""
    return fraction * paper_overlapped_overhead(ratio)


def _np_max(x):
    import numpy as np

    return np.maximum(0.0, x)


def physical_identity() -> sympy.Expr:
    """``max(0, T - C) / S - (C / S) max(0, T / C - 1)``: zero for positive times (checked in the tests)."""
    return sympy.simplify(sympy.Max(0, _T - _C) / _S - (_C / _S) * sympy.Max(0, _T / _C - 1))


def _passes_from(transfers: dict[str, tuple[sympy.Expr, sympy.Expr, sympy.Expr]], step: sympy.Expr):
    intensities = {name: flops / size for name, (flops, size, _) in transfers.items()}
    binding = min(intensities.values(), key=lambda v: float(sympy.simplify(v / next(iter(intensities.values())))))
    return tuple(
        (name, sympy.simplify(flops * repeats / step), sympy.simplify(binding / intensities[name]))
        for name, (flops, size, repeats) in transfers.items()
    )


def _pipeline_transfers(modular: bool):
    # flops and bytes of eq:pipeline_intensity_* for the forward pass; the backward pass sends the
    # gradients of the same activations (same bytes) against three times the flops.
    forward = network.forward_flops(b / n_b, d_l * layer_parameters())
    size = forward / network.pipeline_intensity(modular)
    one = sympy.Integer(1)
    return {"forward": (forward, size, one), "backward": (3 * forward, size, one)}, 4 * forward


#: The overlapped transfers that have a physical form.
PHYSICAL_KINDS = ("data_base", "data_base_partition", "data_improved", "data_improved_partition",
                  "pipeline_base", "pipeline_improved", "state_offload", "checkpoint_offload")


@cache
def physical_passes(kind: str) -> tuple[tuple[str, sympy.Expr, sympy.Expr], ...]:
    """``((pass, C_p / S, nu_binding / nu_p), ...)`` of an overlapped transfer, derived from the counts."""
    if kind.startswith("data_"):
        method = "standard" if "base" in kind else "layered"
        transfers = network.data_transfers(method, "partition" in kind)
        return _passes_from(transfers, network.data_step_flops())
    if kind.startswith("pipeline_"):
        transfers, step = _pipeline_transfers(kind == "pipeline_improved")
        return _passes_from(transfers, step)
    if kind in ("state_offload", "checkpoint_offload"):
        if kind == "state_offload":
            passes = network.state_offload_intensity(True, True)
        else:
            passes = network.checkpoint_offload_intensity()
        # bytes per pass are equal (one direction); flops: forward F, backward 3F
        forward_flops = sympy.Symbol("F", positive=True)
        size = forward_flops / passes["forward"]
        transfers = {name: (size * value, size, sympy.Integer(1)) for name, value in passes.items()}
        return _passes_from(transfers, 4 * forward_flops)
    raise KeyError(f"no physical form for {kind!r}; expected one of {', '.join(PHYSICAL_KINDS)}")


def physical_overhead(kind: str) -> sympy.Expr:
    """The physical overhead of ``kind`` in ``nu_net / nu_op`` (``nu_op`` the binding intensity):
    ``sum_p (C_p / S) max(0, (nu_net / nu_op) k_p - 1)``."""
    ratio = nu_net / nu_op
    return sum(fraction * sympy.Max(0, ratio * relative - 1) for _, fraction, relative in physical_passes(kind))
