"""Pipeline schedules since 2021, in closed form: bubble, activation memory, transfers, overlap.

One :class:`~lgacc.formulas.Derivation` per schedule and quantity, in the paper's symbols
``n_l, n_mu, d_l`` plus ``v`` (virtual stages, or chunks, per device: ``interleaved`` and
``breadth-first``) and the times of the three passes of one layer for one micro-batch:
``t_F`` (forward), ``t_B`` (input gradients, recomputation included) and ``t_W`` (weight
gradients).  The paper's cost model with recomputation is ``t_F : t_B : t_W = 1 : 2 : 1``
(:data:`PAPER_PASS_TIMES`); the zero-bubble paper's "equal passes" is ``1 : 1 : 1``.

The GPipe and modular bubbles are the paper's, taken from :mod:`.bubble`.  Each formula
here is checked against the event simulator (:mod:`lgacc.schedule`) over a grid in
``tests/test_schedule_zoo.py``.  Validity: ``n_mu >= n_l``; ``interleaved`` with ``v > 1``
needs ``n_mu`` a multiple of ``n_l``; the ZB-H1 bubble needs ``t_W <= t_F``.

>>> schedule_terms("1f1b")["bubble_overhead"]
(n_l - 1)/n_mu
"""

from __future__ import annotations

from functools import cache

import sympy

from ..symbols import d_l, n_l, n_mu
from . import Derivation
from .bubble import bubble

__all__ = ["SCHEDULES", "QUANTITIES", "PAPER_PASS_TIMES", "EQUAL_PASS_TIMES", "v", "t_F", "t_B", "t_W",
           "schedule_derivations", "schedule_terms"]

#: Virtual stages (model chunks) per device.
v = sympy.Symbol("v", positive=True, integer=True)
t_F, t_B, t_W = sympy.symbols("t_F t_B t_W", positive=True)
tau = sympy.Symbol("tau", positive=True)

SCHEDULES = ("gpipe", "1f1b", "interleaved", "breadth-first", "zero-bubble", "modular")
QUANTITIES = ("bubble_overhead", "peak_activation_microbatches", "pipeline_transfers_per_step", "data_overlap_fraction")
PAPER_PASS_TIMES = {t_F: 1, t_B: 2, t_W: 1}
EQUAL_PASS_TIMES = {t_F: 1, t_B: 1, t_W: 1}

SOURCES = {
    "gpipe": "Huang et al. 2019 (GPipe); the paper's standard pipeline, sec:distributed",
    "1f1b": "Narayanan et al. 2021 (PipeDream-Flush, 1F1B)",
    "interleaved": "Narayanan et al. 2021 (interleaved 1F1B, Megatron-LM)",
    "breadth-first": "Lamy-Poirier 2022 (Breadth-First Pipeline Parallelism)",
    "zero-bubble": "Qi et al. 2024 (Zero Bubble Pipeline Parallelism, ZB-H1)",
    "modular": "the paper's modular pipeline, sec:modular_pipeline",
}

_layers = d_l / n_l  # layers per device
_chunk = d_l / (n_l * v)  # layers per chunk (looped placement)
_pass = t_F + t_B + t_W  # one layer, one micro-batch, forward and backward
_backward_share = (t_B + t_W) / _pass
_weight_share = t_W / _pass


def _ramp_bubble(ramp_per_device: sympy.Expr) -> sympy.Expr:
    """Bubble = ramp over work, the work of a device being ``n_mu (d_l/n_l)`` layer passes."""
    return sympy.simplify(ramp_per_device / (n_mu * _layers * _pass))


def _bubble(name: str) -> tuple[sympy.Expr, sympy.Expr, str]:
    """(derived, published, approximation)."""
    if name == "gpipe":
        exact = bubble(False)
        return exact, (n_l - 1) / n_mu, "none (n_mu >= n_l)"
    if name == "1f1b":
        # Same ramp as GPipe: the first micro-batch crosses n_l - 1 stages before the last
        # device starts, and the last backward crosses them back; only the order differs.
        exact = _ramp_bubble((n_l - 1) * _layers * _pass)
        return exact, (n_l - 1) / n_mu, "none (n_mu >= n_l)"
    if name in ("interleaved", "breadth-first"):
        # The ramp crosses n_l - 1 chunks of d_l/(n_l v) layers instead of stages of d_l/n_l.
        exact = _ramp_bubble((n_l - 1) * _chunk * _pass)
        return exact, (n_l - 1) / (v * n_mu), "none (n_mu >= n_l; interleaved: n_l divides n_mu)"
    if name == "zero-bubble":
        # ZB-H1: deferred weight-gradient passes fill t_W of every t_F + t_B + t_W of the ramp.
        exact = _ramp_bubble((n_l - 1) * _layers * (t_F + t_B - t_W))
        return exact, (n_l - 1) * (t_F + t_B - t_W) / (n_mu * _pass), "none (n_mu >= n_l, t_W <= t_F)"
    exact = bubble(True)
    return exact, (n_l - 1) / n_mu * n_l / d_l, "none (n_mu >= n_l)"


def _memory(name: str) -> sympy.Expr:
    """Most micro-batches whose activations a device holds, in micro-batches through all its layers."""
    if name in ("gpipe", "breadth-first", "modular"):
        return n_mu  # every forward before the first backward
    if name in ("1f1b", "zero-bubble"):
        # n_l - 1 - k warm-up forwards and one more; ZB-H1 defers k weight passes, same count.
        return sympy.Min(n_l, n_mu)
    # Interleaved: 2 (n_l - 1) + (v - 1) n_l warm-up chunks and one more, each 1/v of the device.
    return sympy.Piecewise((sympy.Min(n_l, n_mu), sympy.Eq(v, 1)),
                           (sympy.Min((v + 1) * n_l - 1, n_mu * v) / v, True))


def _transfers(name: str) -> sympy.Expr:
    """Pipeline transfers per step (one instance): activations forward and their gradients
    backward across every boundary between consecutive layers on different devices."""
    boundaries = {"interleaved": n_l * v - 1, "breadth-first": n_l * v - 1, "modular": d_l - 1}.get(name, n_l - 1)
    # A single device (n_l = 1) sends nothing, whatever its chunks.
    return sympy.Piecewise((0, sympy.Eq(n_l, 1)), (2 * boundaries * n_mu, True))


def _overlap(name: str) -> sympy.Expr:
    """Compute run after a device's first layer has complete gradients, over all its compute.

    The first layer completed is the device's deepest; what follows it is the backward of
    the device's other layers for the last micro-batch(es) (GPipe, 1F1B: ``d_l/n_l - 1``
    layers of one micro-batch; ZB-H1: only their weight passes), of the last round of
    ``n_l`` micro-batches on the other chunks (interleaved), of all micro-batches on the
    other chunks (breadth-first) or of all micro-batches on the other layers (modular).
    """
    work = n_mu * _layers
    if name in ("gpipe", "1f1b"):
        window = (_layers - 1) * _backward_share
    elif name == "zero-bubble":
        window = (_layers - 1) * _weight_share
    elif name == "interleaved":
        window = ((_chunk - 1) + (v - 1) * n_l * _chunk) * _backward_share
    elif name == "breadth-first":
        window = ((_chunk - 1) + (v - 1) * n_mu * _chunk) * _backward_share
    else:
        window = (_layers - 1) * n_mu * _backward_share
    return sympy.simplify(window / work)


@cache
def schedule_derivations(name: str) -> tuple[Derivation, ...]:
    """The four derivations of one schedule, keyed ``"<quantity>_<schedule>"``."""
    if name not in SCHEDULES:
        raise KeyError(f"no schedule {name!r}; known: {', '.join(SCHEDULES)}")
    exact, paper, approximation = _bubble(name)
    source = SOURCES[name]
    records = [Derivation(f"bubble_overhead_{name}", f"{source} (bubble)", f"Pipeline bubble, {name}",
                          exact, paper, exact, approximation)]
    for quantity, expr, title in (
        ("peak_activation_microbatches", _memory(name), "Peak activation memory (micro-batches)"),
        ("pipeline_transfers_per_step", _transfers(name), "Pipeline transfers per step"),
        ("data_overlap_fraction", _overlap(name), "Share of compute hiding the gradient reduction"),
    ):
        records.append(Derivation(f"{quantity}_{name}", f"{source} ({quantity})", f"{title}, {name}",
                                  expr, expr, expr, "none (n_mu >= n_l)"))
    return tuple(records)


def schedule_terms(name: str, pass_times: dict | None = None) -> dict[str, sympy.Expr]:
    """The four quantities of schedule ``name`` as sympy expressions in ``n_l, n_mu, d_l``
    (and ``v`` for ``interleaved`` / ``breadth-first``), pass times substituted
    (default :data:`PAPER_PASS_TIMES`; the paper's model with recomputation).

    For the evaluator: ``sympy.lambdify((n_l, n_mu, d_l, v), terms[q])``.
    ``standard`` is accepted for ``gpipe``.
    """
    name = {"standard": "gpipe"}.get(name, name)
    times = PAPER_PASS_TIMES if pass_times is None else pass_times
    return {q: sympy.simplify(d.exact.subs(times)) for q, d in zip(QUANTITIES, schedule_derivations(name))}
