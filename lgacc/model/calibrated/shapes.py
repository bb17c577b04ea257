"""What one GPU holds and computes: tokens, head widths and parameters per device.

Tensor parallelism (Megatron-LM) splits the query, key/value and feed-forward-input weights by
columns and the output projection and feed-forward output by rows, so every matrix product keeps
the ``T = b_mu d_s`` tokens of a micro-batch and loses a factor ``n_a`` on the split dimension.
Key/value heads are replicated when there are fewer of them than tensor-parallel ranks
(``h_kv = ceil(d_kv / n_a) d_h``).  Sequence parallelism changes no matrix product: it splits the
tokens of the kernels between them (norms, dropout, residual: ``T_r = T / n_a``).

The four linear GEMMs of a layer, ``(M, N, K)``, per device and micro-batch::

    query, key, value      (T, h_q + 2 h_kv, d_m)
    output projection      (T, d_m, h_q)
    feed-forward input     (T, (1 + gated) d_I / n_a, d_m)
    feed-forward output    (T, d_m, d_I / n_a)

Summed, their flops are the package's ``2 x`` layer weights per token over ``n_a``
(:func:`lgacc.model.formulas.model.general_layer_weights`): the calibrated and the ideal model count
the same work.
"""

from __future__ import annotations

import sympy

from ..formulas.model import d_kv, d_v, general_layer_parameters, general_layer_weights
from ..symbols import b_mu, d_a, d_h, d_I, d_l, d_m, d_s, n_a, n_l
from .collectives import present
from .symbols import gated, sp, tied

__all__ = ["tokens", "replicated_tokens", "query_width", "kv_width", "linear_gemms", "layers_per_device",
           "layer_weights", "layer_vectors", "device_parameters", "vocabulary_parameters", "single_stage"]


def tokens() -> sympy.Expr:
    """``T = b_mu d_s``: tokens of one micro-batch on one data-parallel replica."""
    return b_mu * d_s


def replicated_tokens() -> sympy.Expr:
    """Tokens of the kernels outside the tensor-parallel region: ``T``, or ``T / n_a`` with sequence parallelism."""
    return tokens() * (1 - sp + sp / n_a)


def query_width() -> sympy.Expr:
    """``h_q = d_a d_h / n_a``."""
    return d_a * d_h / n_a


def kv_width() -> sympy.Expr:
    """``h_kv = ceil(d_kv / n_a) d_h``: key/value heads are replicated beyond ``n_a = d_kv``."""
    return sympy.ceiling(d_kv / n_a) * d_h


def linear_gemms() -> tuple[tuple[str, sympy.Expr, sympy.Expr, sympy.Expr], ...]:
    """``(name, M, N, K)`` of the four linear GEMMs of one layer, per device and micro-batch."""
    T = tokens()
    return (
        ("query, key, value", T, query_width() + 2 * kv_width(), d_m),
        ("output projection", T, d_m, query_width()),
        ("feed-forward input", T, (1 + gated) * d_I / n_a, d_m),
        ("feed-forward output", T, d_m, d_I / n_a),
    )


def layers_per_device() -> sympy.Expr:
    """``L = d_l / n_l`` (a fractional stage is allowed: Llama 3's 126 layers on 16 stages)."""
    return d_l / n_l


def _gated(expression) -> sympy.Expr:
    """``expression(gated)`` with the indicator: the ungated form, or the gated one."""
    return (1 - gated) * expression(False) + gated * expression(True)


def layer_weights() -> sympy.Expr:
    """Matrix weights of one layer (the package's count, gated or not)."""
    return _gated(general_layer_weights)


def layer_vectors() -> sympy.Expr:
    """Biases and normalisation gains of one layer (replicated over tensor parallelism, a small term)."""
    return _gated(general_layer_parameters) - layer_weights()


def single_stage() -> sympy.Expr:
    """1 without a pipeline (``n_l = 1``), else 0."""
    return 1 - present(n_l)


def vocabulary_parameters() -> sympy.Expr:
    """The vocabulary matrices on the most loaded device: the embedding on the first stage, the head on the last;
    both on a single stage with an untied head (split by ``n_a``)."""
    return d_v * d_m / n_a * (1 + single_stage() * (1 - tied))


def device_parameters() -> sympy.Expr:
    """Parameters on the most loaded device: its layers (weights split by ``n_a``) and one vocabulary matrix
    (:func:`vocabulary_parameters`)."""
    return layers_per_device() * (layer_weights() / n_a + layer_vectors()) + vocabulary_parameters()
