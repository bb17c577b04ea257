"""Parameter counts from the operations of a transformer layer, and the critical batch size.

A layer (sec:methodology, "Model") is a multi-head attention module followed by
a two-layer feed-forward network, each with a layer norm.  Counting the
parameters of each operation:

=====================  ======================  ==============
operation              weights                 biases / gains
=====================  ======================  ==============
query, key, value      3 d_m^2                 3 d_m
attention output       d_m^2                   d_m
feed-forward in        n_I d_m^2               n_I d_m
feed-forward out       n_I d_m^2               d_m
two layer norms        --                      2 x 2 d_m
=====================  ======================  ==============

so ``p_l = (4 + 2 n_I) d_m^2 + (9 + n_I) d_m``, which for ``n_I = 4`` is the
``12 d_m^2 + 13 d_m`` behind table:x_model's ``p = 12 x^5 + 13 x^3``
(``d_m = x^2``, ``d_l = x``): the ``13 x^3`` counts the nine bias vectors of
width ``d_m`` (three for Q, K, V, one for the attention output, four for the
``n_I d_m`` feed-forward bias, one for the feed-forward output) and the gain
and bias of the two layer norms (four more).

Models beyond the paper's (``general_layer_operations``) add three choices, each
reducing to the table above at its default: a feed-forward width ``d_I`` (the
paper's ``n_I d_m``), a gated feed-forward network (SwiGLU-style: two input
matrices of ``d_m x d_I`` instead of one) and grouped-query attention (``d_kv``
key/value heads of size ``d_h``, the paper's ``d_kv = d_a``).  The vocabulary
(``d_v`` tokens) adds an embedding of ``d_v d_m`` weights, and a second one when
the language-model head is not tied to it; the paper counts neither.
"""

from __future__ import annotations

from functools import cache

import sympy

from ..symbols import K_c, d_h, d_I, d_l, d_m, d_s, n_I, p
from .derivation import Derivation, leading_order

__all__ = [
    "LAYER_OPERATIONS",
    "general_layer_operations",
    "general_layer_weights",
    "general_layer_parameters",
    "embedding_parameters",
    "layer_parameters",
    "parameter_count",
    "parameter_count_leading",
    "x_family",
    "critical_batch",
    "critical_batch_family",
    "DERIVATIONS",
]

x = sympy.Symbol("x", positive=True)
#: Key/value heads (grouped-query attention) and vocabulary size: not in the paper's
#: notation, which has ``d_kv = d_a`` and leaves the vocabulary out.
d_kv = sympy.Symbol("d_kv", positive=True)
d_v = sympy.Symbol("d_v", nonnegative=True)

#: (operation, weight count, bias/gain count) of one layer, per the table above.
LAYER_OPERATIONS: tuple[tuple[str, sympy.Expr, sympy.Expr], ...] = (
    ("query, key, value projections", 3 * d_m**2, 3 * d_m),
    ("attention output projection", d_m**2, d_m),
    ("feed-forward input (d_m -> n_I d_m)", n_I * d_m**2, n_I * d_m),
    ("feed-forward output (n_I d_m -> d_m)", n_I * d_m**2, d_m),
    ("layer norm before attention (gain, bias)", sympy.Integer(0), 2 * d_m),
    ("layer norm before feed-forward (gain, bias)", sympy.Integer(0), 2 * d_m),
)


def general_layer_operations(gated: bool = False) -> tuple[tuple[str, sympy.Expr, sympy.Expr], ...]:
    """(operation, weights, biases/gains) of one layer with ``d_I``, ``d_kv`` and an optional gate.

    At ``d_kv d_h = d_m``, ``d_I = n_I d_m`` and ``gated=False`` the sums equal
    those of :data:`LAYER_OPERATIONS` (checked by the tests).
    """
    inputs = 2 if gated else 1
    return (
        ("query projection", d_m**2, d_m),
        ("key and value projections (d_kv heads)", 2 * d_kv * d_h * d_m, 2 * d_kv * d_h),
        ("attention output projection", d_m**2, d_m),
        ("feed-forward input" + (" and gate" if gated else "") + " (d_m -> d_I)", inputs * d_m * d_I, inputs * d_I),
        ("feed-forward output (d_I -> d_m)", d_I * d_m, d_m),
        ("layer norm before attention (gain, bias)", sympy.Integer(0), 2 * d_m),
        ("layer norm before feed-forward (gain, bias)", sympy.Integer(0), 2 * d_m),
    )


def general_layer_weights(gated: bool = False) -> sympy.Expr:
    """Matrix weights of one layer: ``2 d_m^2 + 2 d_kv d_h d_m + (2 or 3) d_m d_I``."""
    return sympy.expand(sum(w for _, w, _ in general_layer_operations(gated)))


def general_layer_parameters(gated: bool = False) -> sympy.Expr:
    """Exact parameters of one layer, weights plus biases and layer-norm gains."""
    return sympy.expand(sum(w + v for _, w, v in general_layer_operations(gated)))


def embedding_parameters(tied: bool = True) -> sympy.Expr:
    """Token embedding ``d_v d_m``, twice when the language-model head has its own matrix."""
    return (1 if tied else 2) * d_v * d_m


def layer_weights() -> sympy.Expr:
    """Matrix-multiplication weights of one layer: (4 + 2 n_I) d_m^2."""
    return sympy.expand(sum(w for _, w, _ in LAYER_OPERATIONS))


def layer_vectors() -> sympy.Expr:
    """Biases and layer-norm gains of one layer: (9 + n_I) d_m (13 d_m at n_I = 4)."""
    return sympy.expand(sum(v for _, _, v in LAYER_OPERATIONS))


def layer_parameters() -> sympy.Expr:
    """Exact ``p_l`` from the operations: ``(4 + 2 n_I) d_m^2 + (9 + n_I) d_m``."""
    return sympy.expand(layer_weights() + layer_vectors())


def parameter_count() -> sympy.Expr:
    """Exact ``p = d_l p_l`` (table:x_model, embedding and head excluded)."""
    return sympy.expand(d_l * layer_parameters())


def parameter_count_leading() -> sympy.Expr:
    """The paper's ``p ≈ (4 + 2 n_I) d_m^2 d_l`` (sec:methodology), Kaplan et al.'s non-embedding N."""
    return sympy.expand(d_l * layer_weights())


def x_family() -> dict[sympy.Symbol, sympy.Expr]:
    """The X_[x] family (appendix sec:transformer_scaling): d_a = x/2, d_h = 2x, d_l = x, d_s = 16x, d_m = x^2."""
    from ..symbols import d_a, d_h

    return {d_a: x / 2, d_h: 2 * x, d_l: x, d_s: 16 * x, d_m: x**2, n_I: sympy.Integer(4)}


def critical_batch() -> sympy.Expr:
    """eq:critical_batch: ``b_c = K_c p^(1/3) / d_s`` (critical batch in tokens ∝ p^(1/3), Kaplan et al.)."""
    return K_c * p ** sympy.Rational(1, 3) / d_s


def critical_batch_constant(tokens: sympy.Expr, p_reference: sympy.Expr) -> sympy.Expr:
    """``K_c`` from one calibration: a model of ``p_reference`` parameters trained at ``tokens`` per batch."""
    return tokens / p_reference ** sympy.Rational(1, 3)


@cache
def _parameter_derivation() -> Derivation:
    """table:x_model's ``p = 12 x^5 + 13 x^3`` from the per-operation count, on the X family."""
    exact = sympy.expand(parameter_count().subs(x_family()))
    paper = 12 * x**5 + 13 * x**3
    return Derivation(
        key="parameter_count",
        label="table:x_model",
        title="Parameter count of the X family",
        exact=exact,
        paper=paper,
        limit=exact,
        approximation="none: the per-operation count is exact",
        details={"p_l": layer_parameters(), "weights": layer_weights(), "biases and layer norms": layer_vectors()},
    )


@cache
def _critical_batch_family() -> Derivation:
    """eq:critical_batch on the X family: ``b_c ≈ 82.0 x^(2/3)`` with ``K_c`` kept symbolic.

    Exact: ``K_c (12 x^5 + 13 x^3)^(1/3) / (16 x)``.  Leading order in x
    (``13 x^3`` dropped): ``K_c 12^(1/3) x^(2/3) / 16``, which is ``82.0 x^(2/3)`` at
    the calibrated ``K_c`` (see :func:`lgacc.model.transformer.critical_batch_constant`).
    """
    p_x = parameter_count().subs(x_family())
    exact = K_c * p_x ** sympy.Rational(1, 3) / (16 * x)
    limit = K_c * leading_order(p_x, x) ** sympy.Rational(1, 3) / (16 * x)
    paper = K_c * sympy.cbrt(12) / 16 * x ** sympy.Rational(2, 3)
    return Derivation(
        key="critical_batch_family",
        label="eq:critical_batch",
        title="Critical batch size of the X family",
        exact=exact,
        paper=paper,
        limit=sympy.simplify(limit),
        approximation="p ≈ 12 x^5 (the 13 x^3 biases dropped, as in Kaplan et al.'s parameter count)",
        details={"b_c": critical_batch()},
    )


def critical_batch_family() -> Derivation:
    return _critical_batch_family()


DERIVATIONS = (_parameter_derivation, _critical_batch_family)
