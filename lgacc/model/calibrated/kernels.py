"""Memory-bound kernels: bytes moved at the HBM bandwidth, no flops.

Normalisation, bias-dropout-add, the activation function, softmax and dropout, the embedding,
the cross-entropy and the optimizer step do a few flops per byte, far below the ridge point of a
GPU (``c / beta_hbm`` = 153 flop/B on A100, 295 on H100): each takes its bytes over
``e_hbm beta_hbm``, the norms over ``e_nF beta_hbm`` forward and ``e_nB beta_hbm`` backward (their shares
measured on an H100, :mod:`.memory_bound`: :func:`layer_streaming_times`).  Bytes per micro-batch and layer on
one device, half-precision values (2 B), 1-byte dropout masks, Megatron-LM's fused kernels, forward pass:

=====================================================  ===============  =============================
kernel                                                 tokens           bytes per token
=====================================================  ===============  =============================
2 norms (read x, write y)                              ``T_r``          ``2 x 4 d_m``
2 bias-dropout-add (read branch and residual, write;   ``T_r``          ``2 x (6 + drop) d_m``
mask)
activation (GeLU: read, write; SwiGLU: read 2, write)  ``T``            ``(4 + 2 gated) d_I / n_a``
softmax and attention dropout (no FlashAttention)      ``T``            ``(4 + 5 drop) d_s d_a / n_a``
rotary embedding of the queries and keys               ``T``            ``g_R d_R / n_a``
=====================================================  ===============  =============================

The rotary embedding (a model with rotary positions, ``d_R`` values a token: :attr:`.Transformer.rotary_width`)
moves ``g_R`` bytes per value in ``n_R`` kernels per tensor, by the implementation the recipe's ``rope_kernel`` names
(:data:`.recipe.ROPE_PASSES`: 4 bytes in one kernel fused, 20 in three in torchtitan's complex fp32), and its
backward runs the same kernels again: the same bytes, not ``k_B`` times them (:func:`rope_bytes`).

Each of these kernels also pays the fixed time per kernel ``t_k`` that every GEMM pays
(:mod:`.gemm`: launch, pipeline fill, the last partial wave; 3 us): a layer's forward pass launches
``5 + 2 (1 - fa) + 2 n_R`` of them (:func:`layer_forward_kernels`: the table's rows, softmax and dropout only
without FlashAttention, the rotary embedding's only with rotary positions), and its backward pass as many.  A launch-bound layer is thus counted: tiny kernels cost
their count times ``t_k``, not their bytes.

The backward pass moves ``k_B`` times the forward bytes (each kernel reads the output gradient and
the saved input and writes the input gradient: three tensors against two; ``k_B = 1.5``).  The
optimizer step (Adam) reads the fp32 master weights, both moments and the gradient and writes the
three and the half-precision copy: ``(26 + gamma_G)`` bytes per parameter it updates.  With fp32 master weights
beside the half-precision ones (Megatron-LM's, recipe ``mixed_precision`` megatron) the step reads the gradients
once more for their norm and the master weights once more to copy them (:func:`master_weights_bytes_per_parameter`,
8 bytes), and the gradients are zeroed before the next backward pass (:func:`gradient_zeroing_bytes_per_parameter`,
``gamma_M`` bytes).
"""

from __future__ import annotations

import sympy

from ..formulas.model import d_v
from ..symbols import d_a, d_I, d_m, d_s, n_a
from .shapes import replicated_tokens, tokens
from .recipe import EAGER_ACTIVATION_PASSES, EAGER_NORM_PASSES, eager_traffic
from .symbols import (amp, beta_hbm, d_R, drop, e_A, e_hbm, e_N, e_nB, e_nF, fa, g_R, g_X, gamma_G, gamma_M, gated, k_B,
                      keep_G, minimum, n_R)

__all__ = ["streaming_time", "layer_forward_kernels", "layer_backward_kernels", "rope_bytes", "activation_bytes",
           "residual_add_bytes", "norm_values", "norm_bytes", "layer_streaming_times", "attention_core_bytes", "layer_forward_bytes", "embedding_bytes", "cross_entropy_bytes",
           "optimizer_bytes_per_parameter", "master_weights_bytes_per_parameter",
           "gradient_zeroing_bytes_per_parameter"]


def streaming_time(size_bytes) -> sympy.Expr:
    """Seconds to stream ``size_bytes`` through HBM at ``e_hbm beta_hbm``."""
    return size_bytes / (e_hbm * beta_hbm)


#: an eager norm's and an eager gated activation's (forward bytes, backward bytes, forward kernels, backward
#: kernels) per value, summed from the kernels :mod:`.recipe` lists: constants of the derivation, not inputs
EAGER_NORM = eager_traffic(EAGER_NORM_PASSES)
EAGER_ACTIVATION = eager_traffic(EAGER_ACTIVATION_PASSES)


def layer_forward_kernels() -> sympy.Expr:
    """Memory-bound kernels one layer's forward pass launches: 2 norms (8 each when eager), 2 bias-dropout-adds,
    the activation (2 when a gated one runs eagerly), the softmax and attention dropout without FlashAttention, and
    the rotary embedding's ``n_R`` on each of the queries and the keys where the model has rotary positions (the
    rows of the module's table)."""
    return (2 * (1 + e_N * (EAGER_NORM[2] - 1)) + 2 + 1 + e_A * gated * (EAGER_ACTIVATION[2] - 1) + 2 * (1 - fa)
            + 2 * n_R * minimum(1, d_R))


def layer_backward_kernels() -> sympy.Expr:
    """Memory-bound kernels one layer's backward pass launches: as many as its forward's, but an eager norm's or
    eager activation's backward launches autograd's own (14 and 3)."""
    return (layer_forward_kernels() + 2 * e_N * (EAGER_NORM[3] - EAGER_NORM[2])
            + e_A * gated * (EAGER_ACTIVATION[3] - EAGER_ACTIVATION[2]))


def rope_bytes() -> sympy.Expr:
    """One pass (forward, or the backward's same kernels) of the rotary embedding: ``g_R`` bytes per rotated value,
    ``d_R / n_a`` values a token on the device (its heads), per micro-batch."""
    return g_R * d_R / n_a * tokens()


def attention_core_bytes() -> sympy.Expr:
    """Softmax (read, write scores) and attention dropout (read, write, mask) without FlashAttention."""
    return (1 - fa) * (4 + 5 * drop) * d_s * d_a / n_a * tokens()


def norm_values() -> sympy.Expr:
    """The values the layer's two norms normalize, per device and micro-batch."""
    return 2 * d_m * replicated_tokens()


def norm_bytes() -> sympy.Expr:
    """The layer's two norms' forward bytes (read x, write y, half precision), per device and micro-batch."""
    return 4 * norm_values()


def residual_add_bytes() -> sympy.Expr:
    """The layer's last bias-dropout-add (one of the table's two): read the branch and the residual, write the sum,
    and the dropout mask."""
    return (6 + drop) * d_m * replicated_tokens()


def activation_bytes() -> sympy.Expr:
    """The fused activation's forward bytes (GeLU: read, write; SwiGLU: read both halves, write), per device and
    micro-batch."""
    return (4 + 2 * gated) * d_I / n_a * tokens()


def layer_forward_bytes() -> sympy.Expr:
    """Bytes of the fused memory-bound kernels of one layer's forward pass, per device and micro-batch."""
    replicated = norm_bytes() + 2 * residual_add_bytes()
    return replicated + activation_bytes() + attention_core_bytes()


def layer_streaming_times() -> tuple[sympy.Expr, sympy.Expr]:
    """Seconds the layer's memory-bound kernels stream (their fixed times per kernel apart): (forward, backward).
    The norms at their measured shares (``e_nF``, ``e_nB``), the rest at ``e_hbm``; the backward moves ``k_B`` times
    each kernel's forward bytes, and the rotary embedding's own bytes again (:func:`rope_bytes`).

    Eager norms (``e_N``) move 36 and 92 bytes per normalized value instead, and an eager gated activation (``e_A``)
    10 and 18 per feed-forward value, all at ``e_hbm``, their backward counted kernel by kernel, not ``k_B`` times
    the forward (:data:`.recipe.EAGER_NORM_PASSES`, :data:`.recipe.EAGER_ACTIVATION_PASSES`)."""
    norms, activation = norm_bytes(), activation_bytes()
    others = layer_forward_bytes() - norms - activation
    values = d_I / n_a * tokens()
    eager_activation = e_A * gated
    rotation = streaming_time(rope_bytes())
    forward = (streaming_time(others) + rotation
               + (1 - e_N) * norms / (e_nF * beta_hbm) + e_N * streaming_time(EAGER_NORM[0] * norm_values())
               + (1 - eager_activation) * streaming_time(activation)
               + eager_activation * streaming_time(EAGER_ACTIVATION[0] * values))
    backward = (k_B * streaming_time(others) + rotation
                + (1 - e_N) * k_B * norms / (e_nB * beta_hbm) + e_N * streaming_time(EAGER_NORM[1] * norm_values())
                + (1 - eager_activation) * k_B * streaming_time(activation)
                + eager_activation * streaming_time(EAGER_ACTIVATION[1] * values))
    return forward, backward


def embedding_bytes() -> sympy.Expr:
    """Embedding look-up forward (write) and backward (read gradient, scatter-add), first stage."""
    return (2 + 4) * d_m * replicated_tokens() * minimum(1, d_v)


def cross_entropy_bytes() -> sympy.Expr:
    """The loss's kernels, forward and backward: ``g_X`` bytes per logit of the device's vocabulary share, by the
    implementation the recipe's ``loss_kernel`` names, else the one its ``logit_bytes`` names
    (:data:`.recipe.LOGIT_PASSES` lists each kernel's bytes and :data:`.recipe.LOSS_TRAFFIC` sums them), each
    kernel's tensors read or written once:

    * Megatron-LM's vocab-parallel cross entropy on an fp32 copy of the half-precision logits (``logit_bytes`` 10;
      ``megatron/core/tensor_parallel/cross_entropy.py``, core_r0.14.0, unfused, the default): the cast, the
      maximum, the subtraction, ``exp`` and the division in place, the sum; backward, the gradient scaled in place
      and cast back for the head's products: **52**;
    * PyTorch's ``cross_entropy`` on fp32 logits (``logit_bytes`` 12, 14 or 16: ``log_softmax`` and ``nll_loss``): the cast;
      ``log_softmax``'s kernel for a row longer than it keeps on chip reads the row for its maximum, for its sum of
      exponentials and for its output, and writes it; ``nll_loss``'s backward writes a zero gradient and scatters
      into it; ``log_softmax``'s backward reads the incoming gradient for its sum, then it and the output, and
      writes; the cast back: **48**;
    * the same Megatron-LM loss in half precision, without the casts (``logit_bytes`` 6): **20**;
    * FlashAttention's fused CUDA cross entropy on half-precision logits (``loss_kernel`` xentropy; Apex's kernel in
      ``csrc/xentropy/xentropy_kernel.cu``, which LLM Foundry's MPT calls as ``loss_fn: fused_crossentropy``): the
      forward kernel reads the row twice (its maximum and sum, then its sum of exponentials), the backward reads it
      and writes the gradient: **8**;
    * Transformer Engine's Triton cross entropy on half-precision logits (``loss_kernel`` te; its
      ``transformer_engine/common/triton/cross_entropy.py`` at v2.11, which Megatron-LM calls under
      ``--cross-entropy-loss-fusion --cross-entropy-fusion-impl te``): the forward reads the row for its maximum and
      sum, then reads it again and writes the gradient in place; the backward reads that gradient and writes it
      scaled: **10**;
    * PyTorch's ``cross_entropy`` on the half-precision logits themselves (``loss_kernel`` pytorch-half; NeMo
      AutoModel's ``MaskedCrossEntropy`` with ``fp32_upcast: false``): PyTorch's kernels above without the casts,
      every tensor in 2 bytes: **18**."""
    return g_X * tokens() * d_v / n_a


def optimizer_bytes_per_parameter() -> sympy.Expr:
    """Adam: read master, both moments and the gradient, write the three and the half-precision copy."""
    return 4 + 4 + 4 + gamma_G + 4 + 4 + 4 + 2


def master_weights_bytes_per_parameter() -> sympy.Expr:
    """What a step with fp32 master weights moves beyond Adam's update (:func:`optimizer_bytes_per_parameter`), per
    parameter it updates, as Megatron-LM runs it (``core_r0.14.0``; 0 under PyTorch AMP, ``amp``): the gradients'
    norm reads the fp32 main gradients (``megatron/core/optimizer/clip_grads.py``, ``get_grad_norm_fp32``:
    ``multi_tensor_l2norm``, 4 bytes) and the updated master weights are read again to be copied into the
    half-precision weights (``optimizer.py``, ``_copy_main_params_to_model_params``: ``multi_tensor_scale``, 4 bytes;
    its 2-byte write is in Adam's count).  Scaling the gradients when their norm exceeds ``--clip-grad`` (8 bytes
    more) depends on the run's gradients and is not counted."""
    return (1 - amp) * (4 + 4)


def gradient_zeroing_bytes_per_parameter() -> sympy.Expr:
    """Bytes per gradient the device writes zeroing its gradients before a step's backward passes: Megatron-LM's
    contiguous gradient buffer (``megatron/core/distributed/param_and_grad_buffer.py``, ``reset``:
    ``grad_data.zero_()``, ``gamma_M`` bytes, the whole buffer even with the distributed optimizer) and PyTorch AMP's
    gradients where ``zero_grad`` keeps them (``keep_G``); none where ``zero_grad`` frees them (PyTorch's default,
    ``set_to_none``)."""
    return (1 - amp + keep_G) * gamma_M
