"""The pipeline bubble: standard ``(n_l - 1) / n_mu`` and modular ``(n_l - 1) / n_mu x n_l / d_l``.

sec:distributed and sec:modular_pipeline.  Timing model: a device processes
one layer for one micro-batch (forward and backward) in time ``tau``; it holds
``d_l / n_l`` layers, so its useful work per batch is ``n_mu (d_l / n_l) tau``.

* standard pipeline: the last device receives its first micro-batch after the
  first ``n_l - 1`` devices have each processed it through all their layers,
  ``(n_l - 1) (d_l / n_l) tau`` (and symmetrically, the first device idles at the end
  of the backward pass);
* modular pipeline: layers are dealt round-robin, so the first micro-batch reaches
  the last device after one layer on each previous device, ``(n_l - 1) tau``.

Provided ``n_mu >= n_l`` (no device starves in between), the batch time is the
work plus that ramp, and the bubble is the ramp over the work.
"""

from __future__ import annotations

from functools import cache

import sympy

from ..symbols import d_l, n_l, n_mu
from .derivation import Derivation

__all__ = ["bubble", "DERIVATIONS"]

tau = sympy.Symbol("tau", positive=True)


def batch_time(modular: bool) -> sympy.Expr:
    """Time of one batch on a device, ramp included."""
    work = n_mu * (d_l / n_l) * tau
    ramp = (n_l - 1) * (tau if modular else (d_l / n_l) * tau)
    return work + ramp


def bubble(modular: bool) -> sympy.Expr:
    """Relative overhead of the bubble: batch time over useful work, minus one."""
    work = n_mu * (d_l / n_l) * tau
    return sympy.simplify(batch_time(modular) / work - 1)


@cache
def _standard() -> Derivation:
    exact = bubble(False)
    return Derivation(
        key="bubble_standard",
        label="sec:distributed (pipeline bubble)",
        title="Pipeline bubble, standard pipeline",
        exact=exact,
        paper=(n_l - 1) / n_mu,
        limit=exact,
        approximation="none (n_mu >= n_l)",
        details={"batch time": batch_time(False)},
    )


@cache
def _modular() -> Derivation:
    exact = bubble(True)
    return Derivation(
        key="bubble_modular",
        label="sec:modular_pipeline (modular bubble)",
        title="Pipeline bubble, modular pipeline",
        exact=exact,
        paper=(n_l - 1) / n_mu * n_l / d_l,
        limit=exact,
        approximation="none (n_mu >= n_l)",
        details={"batch time": batch_time(True), "ratio to standard": sympy.simplify(exact / bubble(False))},
    )


DERIVATIONS = (_standard, _modular)
