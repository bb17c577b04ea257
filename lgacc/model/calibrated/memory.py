"""Memory per GPU as frameworks hold it: half-precision weights and gradients beside the fp32 master
state, ZeRO stages, recomputation modes, sequence parallelism, attention without quadratic tensors.

**Training state**, bytes per parameter of the most loaded device (``P_dev``, :mod:`.shapes`: its
layers and one vocabulary matrix), divided over the ``n_b`` data-parallel ranks by the ZeRO stage:

============================  ==========  ===============  ================  ==============================
state                         weights     gradients        optimizer         Megatron-LM, bf16, fp32 grads
============================  ==========  ===============  ================  ==============================
replicated (DDP)              2           ``gamma_M``      12                18
ZeRO-1 (distributed opt.)     2           ``gamma_M``      12 / n_b          6 + 12 / n_b
ZeRO-2                        2           gamma_M / n_b    12 / n_b          2 + 16 / n_b
ZeRO-3 (the paper's           2 / n_b     gamma_M / n_b    12 / n_b          18 / n_b
partition)
============================  ==========  ===============  ================  ==============================

(12 = fp32 master weights and Adam's two moments; ``gamma_M = 4`` for Megatron-LM's fp32
``main_grad``, 2 for DeepSpeed's fp16 optimizers.)  PyTorch's automatic mixed precision (recipe
``mixed_precision: amp``, ``amp = 1``) keeps fp32 weights (4) and Adam's moments (8) and no half-precision
copy between steps; its gradients (``gamma_M``) exist from the backward pass until
``zero_grad(set_to_none=True)`` frees them, so they are not alive at the loss, and at the first layer's backward
all but the input embedding's are (``amp-zeroed``, ``keep_G = 1``: zeroed, not freed, kept between steps as
before PyTorch 2.0).  Autocast saves a half-precision copy of each matrix weight for the backward (of the
layers not recomputed, and of the head), and its residual stream is fp32 (the two norms' inputs 4 bytes a
value).  The peak is the larger of the loss's and the first layer's backward.  PyTorch DDP without
``gradient_as_bucket_view`` keeps a second copy of the gradients in its buckets (``ddp_copy``, ``gamma_G``
bytes each, counted with the buffers).  The paper's 12 bytes per parameter leave out the half-precision weights and
gradients: 2/3 of the 18 that Megatron-LM's estimator counts.  ZeRO-3 adds the gathered weights of
two units (the current and the prefetched layer, or the vocabulary matrix if larger) and one
gradient bucket: ``(2 x 2 + gamma_G) max(p_layer, d_v d_m) / n_a``; under a pipeline, torchtitan's FSDP2 (recipe
``fsdp_pipeline_unsharded``, ``fsdp_pp``) keeps the stage's weights gathered instead (``reshard_after_forward``
False) and ``torch.distributed.pipelining`` runs every backward without gradient sync, so the stage's gradients
accumulate unsharded, in the reduction's precision, until the last micro-batch: ``(2 + gamma_G) P_dev``.

**Activations** per layer, micro-batch and token (Korthikanti et al. 2022, Table 2, generalised to
grouped-query attention, gated feed-forward, no dropout and FlashAttention; ``t = n_a``)::

    outside the tensor-parallel region (/ n_a with sequence parallelism):  (8 + 2 drop) d_m
    inside it (/ n_a):           4 h_q + 4 h_kv + (4 + 2 gated) d_I / n_a        (24 d_m / t for GPT)
    attention core (/ n_a):      (2 + 3 drop) d_s d_a (no FlashAttention) | 4 d_a (FlashAttention's log-sum-exp)

which is Korthikanti's ``s b h (10 + 24 / t + 5 a s / (h t))``.  Full recomputation keeps only the
layer's input (``2 d_m``, split by sequence parallelism) and needs one layer's activations at a
time (every other layer: half of each); selective recomputation drops the attention core (nothing to
drop with FlashAttention); torchtitan's per-operation policy keeps the layer's input, the attention
and every other matrix product's output (half the tensor-parallel region).
The first stage holds ``m_flight`` micro-batches through its ``L`` layers (the schedule's closed
form); a single stage also holds the logits (``g_L`` bytes per logit of its vocabulary share: 10 for
half-precision logits, an fp32 softmax and its gradient; 14 for PyTorch's cross entropy on fp32 logits, 12 with
the logits freed before the backward, 16 with fp32 logits kept through it; 6 on half ones) from the loss to the head's backward, before any layer's
backward recomputes or works on its activations: the peak takes the larger of the two, not their sum.  A share ``phi`` of the activations is lost to the
allocator's fragmentation, and ``M_0`` bytes are the framework's own (workspaces, communication
buffers).

**DeepSpeed's fp16 optimizer** (recipe ``deepspeed_optimizer``, ``ds_opt``; :func:`deepspeed_phases`): after the last
backward, with the activations freed, its reduction flattens a bucket of up to 5e8 gradients beside all of them, and
its step flattens the gradients to fp32 (ZeRO-1/2: the partition's half gradients, a flat copy and its fp32 cast,
``(gamma_M + gamma_M + 4) / n_b`` bytes a parameter, the other gradients freed; without ZeRO: ``gamma_M + 4 + 4``).
What these two phases exceed the backward's peak by is counted with the buffers.
"""

from __future__ import annotations

from functools import cache

import sympy

from ..formulas.model import d_v
from ..symbols import d_a, d_I, d_m, d_s, n_a, n_b
from .shapes import (
    device_parameters,
    kv_width,
    layer_weights,
    layers_per_device,
    query_width,
    single_stage,
    tokens,
)
from .symbols import (
    M_0,
    amp,
    ddp_copy,
    drop,
    ds_opt,
    ds_pipe,
    fa,
    fsdp_pp,
    gamma_G,
    g_L,
    gamma_M,
    gated,
    keep_G,
    m_flight,
    maximum,
    minimum,
    phi,
    r_full,
    r_op,
    r_sel,
    sp,
    z_1,
    z_2,
    tied,
    z_3,
)

__all__ = ["activation_bytes_per_token", "memory_terms", "deepspeed_phases", "DEEPSPEED_REDUCE_BUCKET"]

#: DeepSpeed's ``reduce_bucket_size`` default, in gradients (elements, not bytes): 500,000,000
#: (``deepspeed/runtime/zero/constants.py`` ZERO_OPTIMIZATION_REDUCE_BUCKET_SIZE_DEFAULT, and the engine's
#: MEMORY_OPT_ALLREDUCE_SIZE for the reduction without ZeRO, v0.5.10).
DEEPSPEED_REDUCE_BUCKET = 500_000_000


def _sharded(indicator) -> sympy.Expr:
    """The divisor of a state sharded over data parallelism when ``indicator`` is 1: ``1 + indicator (n_b - 1)``."""
    return 1 + indicator * (n_b - 1)


def activation_bytes_per_token() -> dict[str, sympy.Expr]:
    """Bytes per token of one layer's activations on one device: ``replicated``, ``split`` (tensor-parallel
    region) and ``core`` (attention), as Korthikanti et al. (2022) count them; under PyTorch's autocast
    (``amp``) the residual stream is fp32, so the two norms' inputs take 4 bytes a value, not 2."""
    replicated = (8 + 2 * drop + 4 * amp) * d_m * (1 - sp + sp / n_a)
    split = 4 * query_width() + 4 * kv_width() + (4 + 2 * gated) * d_I / n_a
    core = (1 - fa) * (2 + 3 * drop) * d_s * d_a / n_a + fa * 4 * d_a / n_a
    return {"replicated": replicated, "split": split, "core": core}


def deepspeed_phases(weights: sympy.Expr, all_gradients: sympy.Expr, optimizer: sympy.Expr) -> dict[str, sympy.Expr]:
    """What DeepSpeed's fp16 optimizer holds after the backward, when no activation is alive (DeepSpeed v0.5.10, the
    version of early 2022), bytes: ``reduce`` and ``step``.

    * ``reduce``: the data-parallel reduction at the gradient-accumulation boundary.  With ZeRO-1 the engine turns
      ``contiguous_gradients`` and ``overlap_comm`` off (``engine.py`` ``_configure_zero_optimizer``), so
      ``stage_1_and_2.py`` ``reduce_ipg_grads`` goes through ``buffered_reduce_fallback``: ``allreduce_bucket``
      flattens each bucket of up to ``reduce_bucket_size`` gradients (:data:`DEEPSPEED_REDUCE_BUCKET`) into one new
      tensor of the reduced precision (``gamma_G`` bytes) beside every gradient; without ZeRO the engine's
      ``buffered_allreduce_fallback`` does the same with ``MEMORY_OPT_ALLREDUCE_SIZE``, the same 5e8.
    * ``step``: ZeRO-1/2 (``stage_1_and_2.py`` ``step``): the gradients outside this rank's partition are freed
      (``independent_gradient_partition_epilogue``'s ``zero_grad``, ``free_grad_in_param_list``); the partition's
      (``averaged_gradients``, ``gamma_M / n_b`` bytes a parameter) are flattened (a copy, ``gamma_M / n_b``) and
      cast to fp32 (``single_grad_partition``, ``4 / n_b``) beside the master weights and Adam's moments.  Without
      ZeRO (``fused_optimizer.py`` ``FP16_Optimizer.step``): each gradient is cast to fp32 (``p.grad.to``, 4 bytes)
      and the list concatenated (``_flatten_dense_tensors``, 4 more) while every half-precision gradient is alive.

    ZeRO-3 is another optimizer (``stage3.py``): none of this applies (the caller multiplies by ``1 - z_3``)."""
    parameters = device_parameters()
    reduce = weights + all_gradients + optimizer + gamma_G * minimum(DEEPSPEED_REDUCE_BUCKET, parameters)
    kept = gamma_M * parameters / _sharded(z_1)
    copies = z_1 * (gamma_M + 4) * parameters / n_b + (1 - z_1) * (4 + 4) * parameters
    return {"reduce": reduce, "step": weights + optimizer + kept + copies}


@cache
def memory_terms() -> dict[str, sympy.Expr]:
    """Bytes per GPU on the most loaded device: ``weights``, ``gradients``, ``optimizer``, ``buffers``,
    ``activations`` (kept and working, with fragmentation), ``framework`` and their ``total``."""
    parameters = device_parameters()
    weights = (2 + 2 * amp) * parameters / _sharded(z_3)
    all_gradients = gamma_M * parameters / _sharded(z_2)
    optimizer = (12 - 4 * amp) * parameters / _sharded(z_1)
    unit = maximum(layer_weights(), d_v * d_m) / n_a
    # FSDP2 under a pipeline (fsdp_pp, torchtitan): the stage's weights stay gathered through the step and its
    # gradients accumulate unsharded in the reduction's precision until the last micro-batch, in place of the two
    # gathered units and the bucket
    gathered = fsdp_pp * (1 - single_stage())
    buffers = (z_3 * (1 - gathered) * (2 * 2 + gamma_G) * unit + z_3 * gathered * (2 + gamma_G) * parameters
               + ddp_copy * gamma_G * parameters)
    per_token = activation_bytes_per_token()
    full_layer = per_token["replicated"] + per_token["split"] + per_token["core"]
    checkpoint = (2 + 2 * amp) * d_m * (1 - sp + sp / n_a)
    per_op = checkpoint + per_token["split"] / 2 + per_token["core"]  # torchtitan's 'op' policy keeps half the products
    stored = 1 - r_full - r_op
    kept = r_full * checkpoint + r_op * per_op + stored * (full_layer - r_sel * (1 - fa) * per_token["core"])
    working = (r_full * full_layer + r_op * (per_token["replicated"] + per_token["split"] / 2)
               + stored * r_sel * (1 - fa) * per_token["core"])
    logits = single_stage() * g_L * d_v / n_a
    # DeepSpeed's PipelineEngine (ds_pipe): each in-flight micro-batch's stage output, split over the tensor-parallel
    # ranks, until its backward, which restores it in full beside the full received gradient
    pipe = ds_pipe * (1 - single_stage())
    held = m_flight * (layers_per_device() * kept + pipe * 2 * d_m / n_a)
    working = working + pipe * 2 * d_m * (2 - 1 / n_a)
    # the logits live from the loss to the head's backward, the recomputed layer's activations after it (each layer's
    # backward): the two peaks do not meet, the larger counts
    at_loss = (1 + phi) * tokens() * (held + logits)
    in_backward = (1 + phi) * tokens() * (held + working)
    # PyTorch AMP: autocast's half-precision copies of the matrix weights are saved for the backward (none of the
    # recomputed layers'), the head's too.  Gradients freed by zero_grad(set_to_none=True) (amp) do not exist at the
    # loss; zeroed ones (amp-zeroed, PyTorch before 2.0) stay allocated between steps, as Megatron-LM's main_grad.
    # At the first layer's backward every gradient exists but the input embedding's (made last, after the layers'
    # activations are freed), beside that one layer's kept and working activations and its half-precision weights.
    freed = amp * (1 - keep_G)
    half_copies = 2 * ((1 - r_full) * layers_per_device() * layer_weights() + single_stage() * d_v * d_m) / n_a
    embedding = (1 - tied * single_stage()) * d_v * d_m / n_a
    amp_gradients = gamma_M * (parameters - embedding) / _sharded(z_2)
    amp_backward = (1 - keep_G) * amp_gradients + (1 + phi) * tokens() * (kept + working) + 2 * layer_weights() / n_a
    loss_side = at_loss + amp * half_copies
    backward_side = (1 - amp) * in_backward + amp * amp_backward
    peak = maximum(loss_side, backward_side)
    # the share of the peak that is freed gradients: all of them at a backward peak that exceeds the loss's by more
    # than them, the excess otherwise (0 at a loss-time peak)
    freed_share = freed * (peak - maximum(loss_side, backward_side - amp_gradients))
    gradients = (1 - freed) * all_gradients + freed_share
    activations = peak - freed_share
    # DeepSpeed's fp16 optimizer (ds_opt): its reduction's bucket and its step's flat copies come after the last
    # backward, when the activations are freed: they raise the peak only by what they exceed it
    phases = deepspeed_phases(weights, all_gradients, optimizer)
    counted = weights + gradients + optimizer + buffers + activations
    buffers = buffers + ds_opt * (1 - z_3) * maximum(0, phases["reduce"] - counted, phases["step"] - counted)
    total = weights + gradients + optimizer + buffers + activations + M_0
    return {
        "weights": weights,
        "gradients": gradients,
        "optimizer": optimizer,
        "buffers": buffers,
        "activations": activations,
        "framework": M_0,
        "total": total,
    }
