"""Pipeline schedules since 2021, in closed form: bubble, activation memory, transfers, overlap.

One :class:`~lgacc.model.formulas.Derivation` per schedule and quantity, in the paper's symbols
``n_l, n_mu, d_l`` plus ``v`` (virtual stages, or chunks, per device: ``interleaved`` and
``breadth-first``) and the times of the three passes of one layer for one micro-batch:
``t_F`` (forward), ``t_B`` (input gradients, recomputation included) and ``t_W`` (weight
gradients).  The paper's cost model with recomputation is ``t_F : t_B : t_W = 1 : 2 : 1``
(:data:`PAPER_PASS_TIMES`); the zero-bubble paper's "equal passes" is ``1 : 1 : 1``.

The GPipe and modular bubbles are the paper's, taken from :mod:`.bubble`.  Each formula
here is checked against the event simulator (:mod:`lgacc.schedule`) over a grid in
``tests/test_schedule_zoo.py``.  Validity: ``n_mu >= n_l``; ``interleaved`` with ``v > 1``
needs ``n_mu`` a multiple of ``n_l``; the ZB-H1 bubble needs ``t_W <= t_F``.

>>> schedule_terms("1f1b")["bubble_overhead"] == (n_l - 1) / n_mu
True
"""

from __future__ import annotations

from functools import cache

import sympy

from ..symbols import d_l, n_l, n_mu
from .bubble import bubble
from .derivation import Derivation
from .network import pipeline_base

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


# --- the schedule terms of the resource model (lgacc.model.evaluator) ------------------------------------
#
# The evaluator reads four things from a schedule, each derived here from the closed forms above
# (pass times PAPER_PASS_TIMES), so that the paper's two pipelines come out as its own formulas:
#
# * the bubble: ``bubble_overhead`` (the GPipe and modular ones are the paper's);
# * the checkpoint memory: the paper's ``2 b d_s d_m d_l / n_gpu`` is ``n_mu`` micro-batches through
#   all of a device's layers, so a schedule holding ``peak_activation_microbatches`` of them scales it
#   by :func:`checkpoint_share`;
# * the pipeline intensity: eq:pipeline_intensity_base divided by the contiguous chunks per device
#   (:func:`chunks_per_device`), which gives eq:pipeline_intensity_impr for the modular pipeline;
# * the data-parallel overlap: the reduction's window relative to the modular pipeline's
#   (:func:`data_window_ratio`).  Where that window vanishes as ``n_mu`` grows (it is one
#   micro-batch's backward, or one round of ``n_l``: GPipe, 1F1B, ZB-H1, interleaved, breadth-first
#   at ``v = 1``) the schedule accumulates as the paper's standard pipeline; where it does not (modular,
#   breadth-first with ``v > 1``) as layered gradient accumulation, with the paper's layered intensity
#   times the ratio (:func:`layered_window`).  The former may still hide the reduction behind their
#   own window, ``data_overlap_fraction`` itself (boundary layer included: none at ``d_l = n_l``),
#   when that costs less than the paper's not-overlapped rule.

L = sympy.Symbol("L", positive=True)  # layers per device, d_l / n_l


def _paper_times(expr: sympy.Expr) -> sympy.Expr:
    return sympy.simplify(expr.subs(PAPER_PASS_TIMES))


def checkpoint_share(name: str) -> sympy.Expr:
    """Checkpoint memory of schedule ``name`` over the paper's (which holds all ``n_mu`` micro-batches)."""
    return sympy.simplify(_memory(name) / n_mu)


def chunks_per_device(name: str) -> sympy.Expr:
    """Contiguous chunks per device: pipeline transfers per step over the standard pipeline's,
    to leading order in ``n_l`` at fixed layers per device (the paper counts a receive and a send
    per chunk on every device, eq:pipeline_intensity_base): 1, ``v`` (looped) or ``d_l / n_l`` (modular)."""
    ratio = _transfers(name).args[1][0] / _transfers("gpipe").args[1][0]
    limit = sympy.limit(ratio.subs(d_l, L * n_l), n_l, sympy.oo)
    return sympy.simplify(limit.subs(L, d_l / n_l))


def schedule_pipeline_intensity(name: str) -> Derivation:
    """eq:pipeline_intensity_base over :func:`chunks_per_device` (exact and printed forms)."""
    base = pipeline_base()
    chunks = chunks_per_device(name)
    return Derivation(f"pipeline_intensity_{name}", f"eq:pipeline_intensity_base over the chunks per device ({name})",
                      f"Pipeline transfers, {name}", sympy.simplify(base.exact / chunks),
                      sympy.simplify(base.paper / chunks), sympy.simplify(base.limit / chunks), base.approximation,
                      {"chunks per device": chunks})


def data_window_ratio(name: str) -> sympy.Expr:
    """The schedule's gradient-reduction window (``data_overlap_fraction``) over the modular pipeline's.

    For GPipe it is ``1 / n_mu``: eq:data_intensity_improved times it is eq:data_intensity_base."""
    return sympy.simplify(_paper_times(_overlap(name)) / _paper_times(_overlap("modular")))


def layered_window(name: str) -> sympy.Expr:
    """:func:`data_window_ratio` as ``n_mu`` grows: positive iff the schedule hides the reduction
    behind every micro-batch (layered gradient accumulation), zero if only behind the last ones."""
    return sympy.simplify(sympy.limit(data_window_ratio(name), n_mu, sympy.oo))


def evaluator_terms(name: str) -> dict[str, tuple[sympy.Expr, sympy.Expr]]:
    """What :mod:`lgacc.model.evaluator` reads of schedule ``name``: ``{term: (exact, paper)}`` for
    ``bubble``, ``checkpoint_share``, ``pipeline_intensity``, ``data_window``, ``layered_window`` and
    ``data_overlap`` (``data_overlap_fraction`` at the paper's pass times)."""
    name = {"standard": "gpipe"}.get(name, name)
    bubble_derivation = schedule_derivations(name)[0]
    pipe = schedule_pipeline_intensity(name)
    share, window, layered = checkpoint_share(name), data_window_ratio(name), layered_window(name)
    return {
        "bubble": (_paper_times(bubble_derivation.exact), _paper_times(bubble_derivation.paper)),
        "checkpoint_share": (share, share),
        "pipeline_intensity": (pipe.exact, pipe.paper),
        "data_window": (window, window),
        "layered_window": (layered, layered),
        "data_overlap": (_paper_times(_overlap(name)), _paper_times(_overlap(name))),
    }
