"""The record every derivation returns (:class:`Derivation`), the paper's stated approximations, and
:func:`leading_order`, the operation that turns the paper's "approximately" into something sympy checks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import sympy

__all__ = ["Derivation", "leading_order", "PAPER_APPROXIMATIONS"]


def leading_order(expr: sympy.Expr, *large: sympy.Symbol) -> sympy.Expr:
    """The leading term of ``expr`` when each symbol of ``large`` grows without bound, in turn.

    For a ratio of polynomials this keeps the highest power of the symbol in the
    numerator and in the denominator: ``(n_b - 1) / n_b -> 1``,
    ``12 d_m**2 + 13 d_m -> 12 d_m**2``.  It is how the paper's "approximately"
    becomes an operation that sympy can check.
    """
    out = sympy.together(sympy.expand(expr))
    for sym in large:
        numerator, denominator = sympy.fraction(sympy.together(out))
        numerator, denominator = sympy.expand(numerator), sympy.expand(denominator)
        num_lead = sympy.Poly(numerator, sym).LT() if numerator.has(sym) else None
        den_lead = sympy.Poly(denominator, sym).LT() if denominator.has(sym) else None
        num = numerator if num_lead is None else num_lead[1] * sym ** num_lead[0][0]
        den = denominator if den_lead is None else den_lead[1] * sym ** den_lead[0][0]
        out = sympy.simplify(num / den)
    return sympy.simplify(out)


@dataclass(frozen=True)
class Derivation:
    """A formula derived from operation counts, beside the paper's printed form.

    ``exact`` is what the counts give; ``paper`` the printed form written in the
    same symbols (where the paper prints ``p`` or ``p_l`` it is substituted with
    the paper's own approximation ``p_l ≈ (4 + 2 n_I) d_m^2`` only when the
    printed form is stated in ``d_m``; the memory forms are parsed from the
    paper's LaTeX by :mod:`.printed`, with ``n_gpu = n_b n_l n_a``); ``limit`` is
    ``exact`` under the stated ``approximation``.  ``details`` holds
    intermediate counts worth showing.
    """

    key: str
    label: str
    title: str
    exact: sympy.Expr
    paper: sympy.Expr
    limit: sympy.Expr
    approximation: str
    details: Mapping[str, sympy.Expr] = field(default_factory=dict)

    def difference(self) -> sympy.Expr:
        """``simplify(limit - paper)``: zero when the derivation reproduces the paper."""
        return sympy.simplify(self.limit - self.paper)

    def holds(self) -> bool:
        """Whether the exact form equals the printed one under the stated approximation."""
        return self.difference() == 0

    def relative_error(self, values: Mapping[sympy.Symbol, float]) -> float:
        """Size of the approximation at ``values``: ``paper / exact - 1`` evaluated numerically."""
        exact = sympy.N(self.exact.subs(values))
        paper = sympy.N(self.paper.subs(values))
        if not (exact.is_number and paper.is_number):
            return float("nan")  # a symbol not given a value (e.g. x, K_c, tau)
        if exact == 0:
            return float("nan") if paper != 0 else 0.0
        if exact == sympy.zoo or exact == sympy.oo:
            return float("nan")
        return float(paper / exact - 1)

    def latex(self) -> dict[str, str]:
        """LaTeX of the exact, limit and paper forms."""
        return {
            "exact": sympy.latex(self.exact),
            "limit": sympy.latex(self.limit),
            "paper": sympy.latex(self.paper),
        }


#: The approximations the paper states, in words, keyed by a short name.
PAPER_APPROXIMATIONS = {
    "large_n_b": "(n_b - 1)/n_b -> 1 (many data-parallel instances)",
    "large_n_a": "(n_a - 1)/n_a kept: printed forms keep n_a - 1",
    "large_d_m": "lower-order terms in d_m dropped: the 13 d_m biases and layer norms of p_l, "
    "and the attention matmuls (4 d_s d_m flops per token, d_s << d_m)",
}
