"""Computation: flops of each matrix multiplication of a layer, per pass, per batch and per device.

Appendix sec:resource_usage, "Computation" (no equation label): the forward
pass costs two flops per token and parameter, ``2 b d_s p``; the backward pass
three times that (gradients of the inputs, of the weights, and the activation
recomputation), for ``8 b d_s p`` per batch and ``8 b d_s p / n_gpu`` per device.

The count below is per operation: each weight matrix costs one multiply-add
(2 flops) per token and weight; the two attention matrix products
(``Q K^T`` and ``P V``) cost ``2 d_s d_m`` each per token.  The paper neglects
the latter ("much smaller in general"); the derivation shows they are the only
difference besides the ``13 d_m`` vectors, i.e. a relative ``d_s / (6 d_m)``
(1.7 % at X_160).

For models beyond the paper's (:func:`general_forward_flops_per_token`) the
weights are those of :func:`lgacc.model.formulas.model.general_layer_operations`, and
with a vocabulary the language-model head adds ``2 d_v d_m`` per token
(:func:`output_flops_per_token`); the input embedding is a look-up, no flops.
The attention products are counted in full (``Q K^T`` over all ``d_s`` keys),
as the paper's exact form and Megatron-LM's formula count them.
"""

from __future__ import annotations

from functools import cache

import sympy

from ..symbols import b, d_l, d_m, d_s, n_a, n_b, n_gpu, n_l, p
from .derivation import Derivation, leading_order
from .model import LAYER_OPERATIONS, d_v, general_layer_weights, parameter_count_leading

__all__ = [
    "forward_operations",
    "forward_flops_per_token",
    "PASS_FACTORS",
    "layer_flops_per_token",
    "batch_flops",
    "general_forward_flops_per_token",
    "output_flops_per_token",
    "DERIVATIONS",
]


def forward_operations() -> tuple[tuple[str, sympy.Expr], ...]:
    """Forward flops per token of each matrix multiplication of one layer."""
    weight_ops = tuple((name, 2 * weights) for name, weights, _ in LAYER_OPERATIONS if weights != 0)
    attention_ops = (
        ("attention scores Q K^T (d_a heads x d_s keys x d_h)", 2 * d_s * d_m),
        ("attention output P V (d_a heads x d_s values x d_h)", 2 * d_s * d_m),
    )
    return weight_ops + attention_ops


def forward_flops_per_token() -> sympy.Expr:
    """Forward flops per token of one layer: ``2 (4 + 2 n_I) d_m^2 + 4 d_s d_m``."""
    return sympy.expand(sum(f for _, f in forward_operations()))


def general_forward_flops_per_token(gated: bool = False) -> sympy.Expr:
    """Forward flops per token of one layer of a general model: ``2 weights + 4 d_s d_m``."""
    attention = sum(f for name, f in forward_operations() if name.startswith(("attention scores", "attention output P V")))
    return sympy.expand(2 * general_layer_weights(gated) + attention)


def output_flops_per_token() -> sympy.Expr:
    """Forward flops per token of the language-model head, ``2 d_v d_m`` (zero when ``d_v = 0``)."""
    return 2 * d_v * d_m


#: Cost of each pass relative to the forward pass of the matrix products: the backward
#: pass computes the gradients of the inputs and of the weights (one product each per
#: forward product), and the activation checkpointing recomputes the forward pass.
PASS_FACTORS = {"forward": 1, "recompute": 1, "backward": 2}


def layer_flops_per_token(passes: tuple[str, ...] = ("forward", "recompute", "backward")) -> sympy.Expr:
    """Flops per token of one layer over the given passes (default: a whole training step)."""
    return sympy.expand(sum(PASS_FACTORS[name] for name in passes) * forward_flops_per_token())


def batch_flops(passes: tuple[str, ...] = ("forward", "recompute", "backward")) -> sympy.Expr:
    """Flops of a batch of ``b`` samples over the given passes, all layers."""
    return sympy.expand(b * d_s * d_l * layer_flops_per_token(passes))


@cache
def _compute_per_batch() -> Derivation:
    exact = batch_flops()
    paper_printed = 8 * b * d_s * p
    paper = paper_printed.subs(p, parameter_count_leading())
    return Derivation(
        key="compute_per_batch",
        label="sec:resource_usage (Computation)",
        title="Computation per batch, 8 b d_s p",
        exact=exact,
        paper=sympy.expand(paper),
        limit=leading_order(exact, d_m),
        approximation="attention matmuls dropped (leading order in d_m: d_s << d_m), p ≈ (4 + 2 n_I) d_m^2 d_l",
        details={
            "forward per token and layer": forward_flops_per_token(),
            "forward per batch": batch_flops(("forward",)),
            "printed": paper_printed,
        },
    )


@cache
def _compute_per_device() -> Derivation:
    exact = batch_flops() / (n_b * n_l * n_a)
    printed = 8 * b * d_s * p / n_gpu
    paper = printed.subs({p: parameter_count_leading(), n_gpu: n_b * n_l * n_a})
    return Derivation(
        key="compute_per_device",
        label="sec:resource_usage (Computation)",
        title="Computation per device, 8 b d_s p / n_gpu",
        exact=sympy.simplify(exact),
        paper=sympy.simplify(paper),
        limit=leading_order(exact, d_m),
        approximation="as per batch; the work splits evenly over n_gpu = n_b n_l n_a devices",
        details={"printed": printed},
    )


DERIVATIONS = (_compute_per_batch, _compute_per_device)
