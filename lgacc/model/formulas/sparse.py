"""Sparse (mixture-of-experts) layers: parameters, active flops, held state and the intensities the paper's
rules read, derived from per-operation counts like :mod:`.model` and :mod:`.compute`.

The paper leaves sparse models to future work (sec:conclusion, "Sparse models").  This module extends three of
its counts, each reducing to the dense form it extends when there are no experts:

* the parameter count of table:x_model (:func:`sparse_layer_operations` extends
  :func:`lgacc.model.formulas.model.general_layer_operations`): a layer's feed-forward network is replaced,
  after ``dense_layers`` leading dense layers, by a router (``d_m E`` weights), ``E`` routed experts and
  ``n_sh`` shared experts, each a feed-forward network of width ``d_e``; attention may have a query width
  ``d_a d_h`` other than ``d_m`` (Qwen3, GPT-OSS) or be DeepSeek's multi-head latent attention (low-rank query
  ``r_q`` and key-value ``r_kv`` projections, ``d_hn`` + ``d_hr`` query/key and ``d_hv`` value head widths);
* the computation of sec:resource_usage ("Computation", ``8 b d_s p``): a token meets only ``k`` routed
  experts, so the flops count the *active* parameters ``p_act`` (:func:`active_layer_weights`), while the
  training state (sec:resource_usage, "Memory": ``12 p``) holds every expert, divided over ``n_e`` expert-parallel
  ranks (:func:`held_layer_weights`), and the gradient reduction (eq:data_intensity_base and its variants, whose
  ``nu_b`` is flops over gradient bytes) moves the held gradients for the active flops
  (:func:`data_intensity_scale`);
* the arithmetic intensities of sec:resource_usage ("Network"): one expert's GEMM sees
  ``t_e = t k / E`` tokens out of ``t`` (:func:`expert_gemm_intensity`, the roofline intensity of a
  ``t_e x d_m x d_e`` product), and the expert all-to-all (dispatch and combine, on the forward pass, its
  recomputation and the backward pass) is a network transfer whose intensity (:func:`expert_intensity`, in the
  spirit of eq:tensor_intensity) is compared with the link its group spans.

At ``E = 0`` (no experts), ``d_a d_h = d_m`` and standard attention every count here equals the dense one
(:func:`dense_reduction` and the tests check it symbolically).
"""

from __future__ import annotations

import sympy

from ..symbols import d_a, d_h, d_I, d_l, d_m, d_s
from .model import d_kv, general_layer_operations

__all__ = [
    "E", "k", "d_e", "n_sh", "d_dense", "r_q", "r_kv", "d_hn", "d_hr", "d_hv", "n_e", "t", "s_a",
    "attention_operations", "mlp_operations", "moe_operations", "sparse_layer_operations",
    "layer_weights", "layer_vectors", "active_layer_weights", "held_layer_weights",
    "model_weights", "active_weights", "held_weights", "data_intensity_scale", "attention_flops_per_token",
    "expert_tokens", "expert_gemm_intensity", "expert_bytes_per_token", "expert_intensity",
    "key_value_width", "context_bytes_per_token", "context_intensity",
    "dense_reduction", "SPARSE_SYMBOLS",
]

#: Routed experts per MoE layer, experts per token (top-k), a routed expert's width, shared experts, leading
#: dense layers.
E = sympy.Symbol("E", nonnegative=True)
k = sympy.Symbol("k", nonnegative=True)
d_e = sympy.Symbol("d_e", positive=True)
n_sh = sympy.Symbol("n_sh", nonnegative=True)
d_dense = sympy.Symbol("d_dense", nonnegative=True)
#: Multi-head latent attention: query and key-value ranks, the query/key head width without and with rotary
#: position, the value head width.
r_q, r_kv, d_hn, d_hr, d_hv = sympy.symbols("r_q r_kv d_hn d_hr d_hv", positive=True)
#: Expert- and context-parallel degrees; tokens of one micro-batch on one GPU; bytes per value of the all-to-all.
n_e = sympy.Symbol("n_e", positive=True)
n_c = sympy.Symbol("n_c", positive=True)
t = sympy.Symbol("t", positive=True)
s_a = sympy.Symbol("s_a", positive=True)
SPARSE_SYMBOLS = {s.name: s for s in (E, k, d_e, n_sh, d_dense, r_q, r_kv, d_hn, d_hr, d_hv, n_e, n_c, t, s_a)}


def attention_operations(latent: bool = False, biases: bool = True) -> tuple[tuple[str, sympy.Expr, sympy.Expr], ...]:
    """(operation, weights, biases/gains) of the attention module.

    Standard: query ``d_m x d_a d_h``, key and value ``d_m x d_kv d_h`` each, output ``d_a d_h x d_m``
    (``d_a d_h = d_m`` gives :func:`general_layer_operations`' attention).  Latent (DeepSeek-V2/V3): query
    ``d_m x r_q`` then ``r_q x d_a (d_hn + d_hr)``, key-value ``d_m x (r_kv + d_hr)`` then
    ``r_kv x d_a (d_hn + d_hv)``, output ``d_a d_hv x d_m``, and the gains of the two latent norms.
    """
    on = 1 if biases else 0
    if not latent:
        return (
            ("query projection", d_m * d_a * d_h, on * d_a * d_h),
            ("key and value projections (d_kv heads)", 2 * d_kv * d_h * d_m, on * 2 * d_kv * d_h),
            ("attention output projection", d_a * d_h * d_m, on * d_m),
        )
    return (
        ("query down-projection (d_m -> r_q)", d_m * r_q, sympy.Integer(0)),
        ("query latent norm", sympy.Integer(0), r_q),
        ("query up-projection (r_q -> d_a (d_hn + d_hr))", r_q * d_a * (d_hn + d_hr), sympy.Integer(0)),
        ("key-value down-projection (d_m -> r_kv + d_hr)", d_m * (r_kv + d_hr), sympy.Integer(0)),
        ("key-value latent norm", sympy.Integer(0), r_kv),
        ("key-value up-projection (r_kv -> d_a (d_hn + d_hv))", r_kv * d_a * (d_hn + d_hv), sympy.Integer(0)),
        ("attention output projection", d_a * d_hv * d_m, sympy.Integer(0)),
    )


def mlp_operations(width: sympy.Expr, gated: bool, biases: bool = True) -> tuple[tuple[str, sympy.Expr, sympy.Expr], ...]:
    """A feed-forward network of width ``width``: (1 or 2) ``d_m x width`` inputs and a ``width x d_m`` output."""
    inputs, on = (2 if gated else 1), (1 if biases else 0)
    return (
        ("feed-forward input" + (" and gate" if gated else ""), inputs * d_m * width, on * inputs * width),
        ("feed-forward output", width * d_m, on * d_m),
    )


def _norms(layer_norm: bool) -> tuple[tuple[str, sympy.Expr, sympy.Expr], ...]:
    per = 2 if layer_norm else 1  # gain and bias (the paper's layer norm), or a gain (RMSNorm)
    return (
        ("norm before attention", sympy.Integer(0), per * d_m),
        ("norm before feed-forward", sympy.Integer(0), per * d_m),
    )


def moe_operations(gated: bool, biases: bool = True, experts=E, shared=n_sh) -> tuple[tuple[str, sympy.Expr, sympy.Expr], ...]:
    """An MoE feed-forward block with ``experts`` routed and ``shared`` shared experts of width ``d_e``, and its router."""
    on = 1 if biases else 0
    one = mlp_operations(d_e, gated, biases)
    weights = sum(w for _, w, _ in one)
    vectors = sum(v for _, _, v in one)
    return (
        ("router (d_m -> E)", d_m * E, on * E),
        ("routed experts", experts * weights, experts * vectors),
        ("shared experts", shared * weights, shared * vectors),
    )


def sparse_layer_operations(moe: bool, gated: bool = False, latent: bool = False, biases: bool = True,
                            layer_norm: bool = True) -> tuple[tuple[str, sympy.Expr, sympy.Expr], ...]:
    """(operation, weights, biases/gains) of one layer: attention, then a dense feed-forward network of width
    ``d_I`` (``moe=False``, the leading ``dense_layers``) or an MoE block."""
    mlp = moe_operations(gated, biases) if moe else mlp_operations(d_I, gated, biases)
    return (*attention_operations(latent, biases), *mlp, *_norms(layer_norm))


def _sum(ops, column: int) -> sympy.Expr:
    return sympy.expand(sum(op[column] for op in ops))


def layer_weights(moe: bool, **options) -> sympy.Expr:
    """Matrix weights of one layer (every expert)."""
    return _sum(sparse_layer_operations(moe, **options), 1)


def layer_vectors(moe: bool, **options) -> sympy.Expr:
    """Biases and norm gains of one layer (every expert)."""
    return _sum(sparse_layer_operations(moe, **options), 2)


def active_layer_weights(moe: bool, gated: bool = False, latent: bool = False, biases: bool = True,
                         layer_norm: bool = True) -> sympy.Expr:
    """Weights one token meets in one layer: attention, the router, ``k`` routed and the shared experts."""
    ops = (*attention_operations(latent, biases),
           *(moe_operations(gated, biases, experts=k) if moe else mlp_operations(d_I, gated, biases)))
    return _sum(ops, 1)


def held_layer_weights(moe: bool, gated: bool = False, latent: bool = False, biases: bool = True,
                       layer_norm: bool = True) -> sympy.Expr:
    """Weights one expert-parallel rank holds of one layer: all but the routed experts, and ``E / n_e`` of those."""
    ops = (*attention_operations(latent, biases),
           *(moe_operations(gated, biases, experts=E / n_e) if moe else mlp_operations(d_I, gated, biases)))
    return _sum(ops, 1)


def _over_layers(per_layer) -> sympy.Expr:
    """``d_dense`` dense layers and ``d_l - d_dense`` MoE layers."""
    return sympy.expand(d_dense * per_layer(False) + (d_l - d_dense) * per_layer(True))


def model_weights(**options) -> sympy.Expr:
    """Matrix weights of all layers (the sparse extension of ``p ≈ (4 + 2 n_I) d_m^2 d_l``)."""
    return _over_layers(lambda moe: layer_weights(moe, **options))


def active_weights(**options) -> sympy.Expr:
    """Weights of all layers that one token meets: ``p_act``, what the flops count."""
    return _over_layers(lambda moe: active_layer_weights(moe, **options))


def held_weights(**options) -> sympy.Expr:
    """Weights of all layers one expert-parallel rank holds (before pipeline and tensor parallelism)."""
    return _over_layers(lambda moe: held_layer_weights(moe, **options))


def data_intensity_scale(**options) -> sympy.Expr:
    """The factor on eq:data_intensity_base (and _pipe, _partition, _improved): their ``nu_b`` divides the flops
    of ``p`` weights by the bytes of ``p`` gradients; a mixture of experts computes with the active weights and
    reduces the held ones: ``active_weights / held_weights`` (1 for a dense model)."""
    return sympy.simplify(active_weights(**options) / held_weights(**options))


def attention_flops_per_token(latent: bool = False) -> sympy.Expr:
    """Forward flops per token and layer of the two attention products over ``d_s`` keys: ``4 d_s d_a d_h``
    (``4 d_s d_m`` of :mod:`.compute` at ``d_a d_h = d_m``); latent: ``2 d_s d_a (d_hn + d_hr) + 2 d_s d_a d_hv``."""
    if latent:
        return sympy.expand(2 * d_s * d_a * (d_hn + d_hr) + 2 * d_s * d_a * d_hv)
    return 4 * d_s * d_a * d_h


def expert_tokens() -> sympy.Expr:
    """Tokens one routed expert receives out of ``t`` (perfect balance): ``t_e = t k / E``."""
    return t * k / E


def expert_gemm_intensity(width=d_e, bytes_per_value=2) -> sympy.Expr:
    """Roofline arithmetic intensity of one expert's ``t_e x d_m`` by ``d_m x d_e`` product: flops
    ``2 t_e d_m d_e`` over the bytes read and written ``s (t_e d_m + d_m d_e + t_e d_e)``.  It falls with the
    number of experts at fixed top-k (``t_e = t k / E``), which is the paper's "reduced arithmetic intensity"."""
    te = expert_tokens()
    return sympy.simplify(2 * te * d_m * width / (bytes_per_value * (te * d_m + d_m * width + te * width)))


def expert_bytes_per_token() -> sympy.Expr:
    """Bytes one GPU sends per token and MoE layer in a training step's all-to-alls: a token's ``d_m``-wide
    activation goes to each of its ``k`` experts (dispatch) and comes back (combine), on the forward pass, its
    recomputation (sec:methodology's activation checkpointing) and the backward pass (the gradients, the
    other way), a share ``(n_e - 1) / n_e`` of the experts being on other GPUs: ``6 k d_m s_a (n_e - 1) / n_e``.
    Counted as sent plus received, like the paper's bandwidths (both directions summed): twice that."""
    return sympy.expand(2 * 6 * k * d_m * s_a * (n_e - 1) / n_e)


def expert_intensity(**options) -> sympy.Expr:
    """The expert all-to-all's arithmetic intensity: the flops of an MoE layer per token over a training
    step, ``8 (active layer weights)`` (sec:resource_usage's 8 flops per token and weight), over
    :func:`expert_bytes_per_token`.  It is compared with the link the expert group spans; like the tensor
    all-reduce (eq:tensor_intensity) the dispatch sits between two products of the same layer and is not
    overlapped (eq:overhead_condition)."""
    return sympy.simplify(8 * active_layer_weights(True, **options) / expert_bytes_per_token())


def key_value_width(latent: bool = False) -> sympy.Expr:
    """Values of one token's keys and values in one layer: ``2 d_kv d_h``; latent attention exchanges them
    after the up-projection, ``d_a (d_hn + d_hr) + d_a d_hv``."""
    return sympy.expand(d_a * (d_hn + d_hr + d_hv)) if latent else 2 * d_kv * d_h


def context_bytes_per_token(latent: bool = False) -> sympy.Expr:
    """Bytes one of ``n_c`` context-parallel GPUs exchanges per token of its shard and layer (ring attention,
    as Megatron-Core's context parallelism): it receives the keys and values of the ``n_c - 1`` other shards on
    the forward pass and on its recomputation, and on the backward pass those again and their gradients (four
    passes' worth), sent and received counted (the paper's both-directions bandwidths):
    ``2 x 4 (n_c - 1) (2 d_kv d_h) s_a``."""
    return sympy.expand(8 * (n_c - 1) * key_value_width(latent) * s_a)


def context_intensity(p_layer: sympy.Expr, latent: bool = False) -> sympy.Expr:
    """Flops per token and layer of a training step, ``8 p_layer``, over :func:`context_bytes_per_token`:
    ``p_layer / ((n_c - 1) w_kv s_a)``.  The exchange is overlapped with the layer's attention (ring attention),
    so eq:overlap_condition applies."""
    return sympy.simplify(8 * p_layer / context_bytes_per_token(latent))


def dense_reduction() -> dict[str, sympy.Expr]:
    """Each sparse count minus the dense count it extends, at ``E = k = n_sh = 0`` (no experts),
    ``d_dense = d_l``, ``d_a d_h = d_m`` and standard attention: every value is zero."""
    dense = {d_h: d_m / d_a}
    out = {}
    for gated in (False, True):
        old_w = sum(w for _, w, _ in general_layer_operations(gated))
        old_v = sum(v for _, _, v in general_layer_operations(gated))
        out[f"layer weights (gated={gated})"] = sympy.simplify((layer_weights(False, gated=gated) - old_w).subs(dense))
        out[f"layer vectors (gated={gated})"] = sympy.simplify((layer_vectors(False, gated=gated) - old_v).subs(dense))
        for name, fn in (("model", model_weights), ("active", active_weights), ("held", held_weights)):
            expr = fn(gated=gated).subs({d_dense: d_l, **dense})
            out[f"{name} weights (gated={gated})"] = sympy.simplify(expr - d_l * old_w.subs(dense))
    out["attention flops"] = sympy.simplify((attention_flops_per_token() - 4 * d_s * d_m).subs(dense))
    return out
