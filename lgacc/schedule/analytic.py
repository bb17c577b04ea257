"""The paper's closed forms for what :mod:`lgacc.schedule.measure` measures.

Kept beside the simulator so that tests and pages compare a measurement with the
formula it should equal.  All functions return exact :class:`fractions.Fraction`
values for integer durations.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache
from numbers import Real

import sympy

from lgacc.model.formulas.bubble import bubble

from .operations import Durations


def exact_value(expr: sympy.Expr, **values) -> Fraction:
    """A sympy expression at integer (or Fraction) ``values``, as an exact Fraction.

    Keywords are the paper's names of the symbols: ``n_l``, ``n_mu``, ``d_l`` and ``v``.
    """
    from lgacc.model.formulas.schedules import v
    from lgacc.model.symbols import d_l, n_l, n_mu

    symbols = {"n_l": n_l, "n_mu": n_mu, "d_l": d_l, "v": v}
    result = expr.subs({symbols[k]: sympy.Rational(Fraction(x)) for k, x in values.items()})
    if not result.is_Rational:  # already exact at rational values in the usual case; nsimplify is slow
        result = sympy.nsimplify(result)
    if not result.is_Rational:
        raise ValueError(f"{expr} is not a number at {values}: {result}")
    return Fraction(int(result.p), int(result.q))


def pipeline_bubble(n_l: int, n_mu: int, d_l: int, *, modular: bool) -> Fraction:
    """Bubble overhead from :func:`lgacc.model.formulas.bubble.bubble` (the one source):
    ``(n_l-1)/n_mu`` for a standard pipeline (sec:distributed), divided by ``d_l/n_l``
    for a modular one (sec:modular_pipeline; needs ``n_mu >= n_l``)."""
    return exact_value(_bubble(bool(modular)), n_l=n_l, n_mu=n_mu, d_l=d_l)


@cache
def _bubble(modular: bool) -> sympy.Expr:
    """:func:`bubble`, derived once per pipeline kind (it simplifies with sympy; the simulator's tests read it at
    hundreds of sizes)."""
    return bubble(modular)


def schedule_quantity(name: str, quantity: str, n_l: int, n_mu: int, d_l: int, *, n_v: int = 1,
                      durations: Durations = Durations()) -> Fraction:
    """A quantity of :data:`lgacc.model.formulas.schedules.QUANTITIES` for schedule ``name`` from its
    derivation in :mod:`lgacc.model.formulas.schedules`, at these sizes and pass durations."""
    from lgacc.model.formulas import schedules as formulas

    keyed = {d.key: d for d in formulas.schedule_derivations(name)}
    expr = keyed[f"{quantity}_{name}"].exact
    w = durations.split_backward
    passes = {formulas.t_F: durations.forward, formulas.t_B: durations.backward_pass - w, formulas.t_W: w}
    expr = expr.subs({symbol: sympy.Rational(Fraction(value)) for symbol, value in passes.items()})
    return exact_value(expr, n_l=n_l, n_mu=n_mu, d_l=d_l, v=n_v)


def pipeline_step_time(n_l: int, n_mu: int, d_l: int, *, modular: bool, durations: Durations = Durations()) -> Real:
    """Step time with free transfers: ``(1 + bubble)`` times the compute of one device."""
    per_layer = durations.forward + durations.backward_pass
    compute = Fraction(n_mu * d_l, n_l) * per_layer
    return compute * (1 + pipeline_bubble(n_l, n_mu, d_l, modular=modular))


def accumulation_restores(d_l: int, n_mu: int, *, layered: bool, state: str) -> int:
    """Parameter restores per step: each layer twice (forward and backward) per pass over
    its micro-batches: per micro-batch in standard accumulation, once in layered."""
    if state == "replicated":
        return 0
    return 2 * d_l * (1 if layered else n_mu)


def accumulation_reductions(d_l: int, n_mu: int, *, layered: bool, state: str) -> int:
    """Gradient reductions per step: a replicated state reduces each layer once after its
    last micro-batch; a partitioned one reduces per micro-batch, unless layered."""
    if state == "replicated" or layered:
        return d_l
    return d_l * n_mu


def partitioned_network_ratio(n_mu: int, *, layered: bool) -> Fraction:
    """Network volume with a partitioned state over that with a replicated one:
    ``3/2 n_mu`` for standard accumulation (appendix "Data parallel"), 3/2 for layered."""
    return Fraction(3, 2) * (1 if layered else n_mu)


def reduction_window(d_l: int, n_mu: int, *, layered: bool, durations: Durations = Durations()) -> Real:
    """Compute time available to hide a replicated state's gradient reduction on one device:
    the backward of the last micro-batch in standard accumulation, the whole backward pass
    in layered accumulation, less the layer whose gradients come first (boundary effect)."""
    return (d_l - 1) * (n_mu if layered else 1) * durations.backward_pass
