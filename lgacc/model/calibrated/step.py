"""The step time, composed physically: times that do not overlap add, overlapped ones take the maximum.

Per layer and micro-batch on one device (``tau`` of :mod:`.gemm`, bytes of :mod:`.kernels`,
collectives of :mod:`.collectives`)::

    t_F = sum of the 4 linear GEMMs + attention + forward kernels  + 2 tensor-parallel all-reduces
    t_B = 2 x the linear GEMMs      + attention backward + k_B x kernels + 2 all-reduces
          (the kernels streaming at e_hbm, the norms at their measured shares e_nF, e_nB; the rotary
          embedding's bytes once more, not k_B times: its backward runs its forward's kernels; eager norms
          and an eager gated activation kernel by kernel, forward and backward, recipe norm_kernel and
          activation_kernel)
    t_R = t_F (full recomputation; half of it when every other layer is recomputed),
          less the last linear GEMM, its all-reduce and the residual add under PyTorch's non-reentrant
          checkpoint (``r_stop``: it stops once the backward's tensors are saved again)
        | the attention core again (selective, no FlashAttention)
        | half the linear GEMMs and the forward kernels (torchtitan's per-operation policy) | 0

(with sequence parallelism each all-reduce is a reduce-scatter and an all-gather: the same bytes,
twice the latency; with ``ov_tp`` the collectives hide behind the layer's products, ``max``).  With
the training state partitioned (ZeRO-3) each layer gathers its weights before the forward and the
backward pass and reduce-scatters its gradients after it, behind the layer's compute: once per
micro-batch (standard accumulation) or once per step (the improved method's layered accumulation)::

    t_F' = max(t_F, k t_AG)      t_BR' = max(t_B + t_R, k (t_AG + t_RS))      k = z_3 (1 or 1 / n_mu)

That overlap holds between layers, not at a pass's ends: each micro-batch also waits for the root unit's (the
vocabulary's) and the first layer's gathers before its forward, for the last layer's gather again where no head's
backward hides it, and for the last reduce-scatters after its backward (:func:`_zero3_edges`).
The backward also streams the gradients' copies (:func:`_zero3_gradient_copies`): ``4 W`` bytes on the compute
stream (``t_B`` grows by them), and the cast to the reduction's precision and the pre-division, which the
reduce-scatter waits for on its own stream (``t_RS`` grows by them).

A device's stage passes one micro-batch in ``L (t_F' + t_BR') + 2 chunks t_p2p`` (``L = d_l / n_l``
layers; DeepSpeed's pipeline sends the backward's gradient whole, :func:`_stage_transfers`); the first stage adds
the embedding, the last the head and the cross-entropy (Llama 3's layout: :func:`_vocabulary_chunks`).  The
pipeline runs ``n_mu`` micro-batches through the slowest stage plus a ramp of ``R`` stage passes
(the schedule's bubble, from :mod:`lgacc.model.formulas.schedules`)::

    T_pipe = n_mu tau_slowest + R tau_stage

The data-parallel reduction of the gradients (not partitioned: an all-reduce; optimizer
partitioned: a reduce-scatter) hides behind a window ``W`` of the pipeline's backward passes when it
is overlapped (``c_window`` layer passes, from the schedule's closed form); the partitioned
optimizer's all-gather of the updated weights hides behind the next step's first forward pass
(``W_F = L t_F'``)::

    T_step = T_pipe + exposed(W, t_grad) + exposed(W_F, t_gather) + t_opt + t_host + T_0

where ``exposed`` is what of a collective outlasts its window, bucket by bucket (below).

**The host's floor.**  An eager framework's CPU issues every operation of the step, and the GPU runs ahead of it
only while its queue is full: the step is never shorter than the host's time to issue it, measured on our H100 in
four terms (:mod:`.host`; 0 with CUDA graphs): ``t_hs`` once a step, ``t_hl`` once a layer and step (the
optimizer's and the gradients' work per tensor), ``t_hm`` once a micro-batch (the head, the loss, the schedule's
own work), ``t_h`` once a layer and micro-batch (forward and backward) and ``t_hR`` more for a recomputed forward.
The device's ``n_mu + R`` stage passes of ``L`` layers wait on it for::

    t_host = max(0, t_hs + L t_hl + (n_mu + R) (t_hm + L (t_h + r_full t_hR)) - T_pipe - (1 - s_h) (exposed + t_opt))

The floor bounds the layers' passes only: the reduction left exposed after the last backward pass and the
optimizer's step follow it, because the step waits for the device twice after its layers.  Megatron-LM
(``core_r0.14.0``) reads the gradients' norm on the host before it clips them
(``megatron/core/optimizer/clip_grads.py``, ``get_grad_norm_fp32``: ``total_norm.item()``, with the default
``--clip-grad 1.0``): the host waits there until the device has run the reduction, issued after the last layer.
Its step timer synchronizes the device at every logged step (``megatron/core/timers.py``, ``Timer.start`` and
``stop``: ``torch.cuda.synchronize()``; ``interval-time`` at each ``--log-interval``): the optimizer's kernels,
issued after the norm, end before the next step's host starts issuing.  Neither can hide under the host's
issuing, so they add to the floor instead of filling it; when the device is the slower one (no floor) nothing
changes.  The recipe's ``host_sync`` (``s_h``, on by default) says so; off, a host that never waits runs ahead
into the next step and both fill the floor.

Every overlap pays the share ``xi`` (fitted) of the shorter side on top of the ``max``
(:func:`overlapped`): a collective running beside a GEMM slows it.

**Buckets.**  Frameworks reduce the gradients in buckets, each launched when the backward pass has
produced it, and gather the updated weights in the same buckets: Megatron-LM's default bucket is
``max(40 000 000, 1 000 000 n_b)`` parameters (``megatron/core/distributed/distributed_data_parallel_config.py``,
``DistributedDataParallelConfig.bucket_size``: "MCore uses a default value of max(40000000, 1000000 * dp_size)
parameters"), one bucket when the reduction does not overlap.  With ``k`` buckets produced evenly over the window
``W`` and reduced one after the other, the last bucket can only start when the window ends, so the reduction is
exposed for (:func:`bucketed_exposure`)::

    t_g / k + (1 - 1/k) (max(W, t_g) + xi min(W, t_g) - W)

(``xi = 0``: exactly the later of ``W + t_g / k`` and ``W / k + t_g``, less ``W``); the gather's first bucket
likewise waits before the next step's first forward pass.  Other frameworks' buckets (PyTorch DDP's 25 MB,
DeepSpeed's 5e8 elements) are not told apart: the runs' data-parallel reductions are Megatron-LM's or sharded.

Every term is a sum, a non-negative multiple, a ``max`` or a ``min`` of functions that do not grow
with the peak flop/s ``c`` (flops over ``c``, bytes over a bandwidth, latencies), and ``W`` is a
sub-sum of ``T_pipe``: so ``T_step`` never grows when only ``c`` grows (tested on random
configurations).  Nothing divides a communication time by a compute time.
"""

from __future__ import annotations

from functools import cache

import sympy

from ..formulas.model import d_v
from ..formulas.schedules import SCHEDULES, chunks_per_device, layered_window, schedule_derivations, t_B, t_F, t_W, v
from ..symbols import b_mu, d_a, d_h, d_l, d_m, d_s, n_a, n_b, n_l, n_mu
from .collectives import data_parallel_time, point_to_point_time, present, ring_time, tensor_link
from .gemm import flash_times, gemm_time, table_gemm_time
from .kernels import (
    attention_core_bytes,
    cross_entropy_bytes,
    embedding_bytes,
    layer_backward_kernels,
    layer_forward_kernels,
    layer_streaming_times,
    residual_add_bytes,
    gradient_zeroing_bytes_per_parameter,
    master_weights_bytes_per_parameter,
    optimizer_bytes_per_parameter,
    streaming_time,
)
from .shapes import (device_parameters, layer_weights, layers_per_device, linear_gemms, single_stage, tokens,
                     vocabulary_parameters)
from .symbols import (
    R_ramp,
    T_0,
    c_window,
    chunks,
    ds_pipe,
    e_fc1,
    e_fc2,
    e_proj,
    e_qkv,
    fa,
    gamma_G,
    improved,
    lw,
    maximum,
    minimum,
    ov_dp,
    ov_tp,
    r_full,
    r_op,
    r_stop,
    r_sel,
    s_h,
    sp,
    t_h,
    t_hR,
    t_hl,
    t_hm,
    t_hs,
    t_k,
    vc,
    xi,
    z_1,
    z_2,
    z_3,
    zb,
)

__all__ = ["schedule_numbers", "layer_times", "step_terms", "gradient_buckets", "bucketed_exposure",
           "BUCKET_PARAMETERS", "BUCKET_PARAMETERS_PER_RANK"]


def schedule_numbers(name: str) -> dict[str, sympy.Expr]:
    """The five numbers the composition reads of a pipeline schedule, in ``n_l, n_mu, d_l, v``, from the
    package's closed forms (:mod:`lgacc.model.formulas.schedules`): the ramp ``R`` in stage passes, the
    chunks per device, the micro-batches in flight on the first stage, the window in layer passes,
    ``zb`` and ``lw`` (layer-wise accumulation possible)."""
    bubble, memory, _, overlap = (d.exact for d in schedule_derivations(name))
    passes = t_F + t_B + t_W
    zero_bubble = name == "zero-bubble"
    ramp_unit = (t_F + t_B - t_W) if zero_bubble else passes
    window_unit = t_W if zero_bubble else (t_B + t_W)
    layers = d_l / n_l
    # layer-wise accumulation where the schedule's reduction window persists as n_mu grows (the package's
    # layered_window): modular always, breadth-first with more than one chunk (v - 1 > 0), no other
    layer_wise = layered_window(name)
    persists = sympy.Integer(0) if layer_wise == 0 else (sympy.Integer(1) if name == "modular" else minimum(1, v - 1))
    return {
        "R_ramp": sympy.simplify(bubble * n_mu * passes / ramp_unit),
        "chunks": chunks_per_device(name),
        # without a pipeline (n_l = 1) every framework accumulates micro-batch after micro-batch: one in flight,
        # whatever the schedule's closed form says (GPipe's n_mu is a pipeline's)
        "m_flight": 1 + present(n_l) * (memory - 1),
        "c_window": sympy.simplify(overlap * n_mu * layers * passes / window_unit),
        "zb": sympy.Integer(int(zero_bubble)),
        "lw": persists,
    }


def overlapped(compute, collective) -> sympy.Expr:
    """Compute and a collective that overlap it: the longer of the two, plus the share ``xi`` of the shorter that
    still delays the other (the collective's kernels take SMs and memory bandwidth from the compute)."""
    return maximum(compute, collective) + xi * minimum(compute, collective)


#: Megatron-LM's default gradient bucket: ``max(BUCKET_PARAMETERS, BUCKET_PARAMETERS_PER_RANK n_b)`` parameters
#: (``DistributedDataParallelConfig.bucket_size``, megatron/core/distributed/distributed_data_parallel_config.py).
BUCKET_PARAMETERS = 40_000_000
BUCKET_PARAMETERS_PER_RANK = 1_000_000


def gradient_buckets(parameters) -> sympy.Expr:
    """``k``: Megatron-LM's default number of buckets of a device's ``parameters`` (at least one)."""
    size = maximum(BUCKET_PARAMETERS, BUCKET_PARAMETERS_PER_RANK * n_b)
    return maximum(1, sympy.ceiling(parameters / size))


def bucketed_exposure(window, collective, buckets) -> sympy.Expr:
    """Seconds a collective of ``buckets`` equal buckets, produced evenly over ``window`` and run one after the
    other, adds after the window: its last bucket, plus what of the others outlasts the window
    (``t / k + (1 - 1/k) (overlapped(W, t) - W)``; one bucket: the whole collective, exposed)."""
    return collective / buckets + (1 - 1 / buckets) * (overlapped(window, collective) - window)


@cache
def _tensor_collective() -> sympy.Expr:
    """One all-reduce of an activation over the tensor-parallel group (or its reduce-scatter + all-gather)."""
    bandwidth, alpha = tensor_link()
    size = 2 * tokens() * d_m
    return ring_time(size, n_a, 2, bandwidth, alpha) + sp * present(n_a) * alpha


@cache
def layer_times() -> dict[str, sympy.Expr]:
    """Seconds of one layer for one micro-batch on one device: ``forward``, ``backward``, ``recompute``,
    ``weight`` (the weight-gradient GEMMs, inside ``backward``) and the parts they are made of."""
    efficiencies = (e_qkv, e_proj, e_fc1, e_fc2)  # the measured table's, in linear_gemms' order (:mod:`.gemm_table`)
    products = [table_gemm_time(M, N, K, e) for (_, M, N, K), e in zip(linear_gemms(), efficiencies, strict=True)]
    linear = sum(products)
    heads = b_mu * d_a / n_a
    score = gemm_time(d_s, d_s, d_h, heads)
    flash_forward, flash_backward = flash_times(4 * heads * d_s**2 * d_h)
    attention_forward = fa * flash_forward + (1 - fa) * 2 * score
    attention_backward = fa * flash_backward + (1 - fa) * 4 * score
    launches = layer_forward_kernels() * t_k  # the fixed time of each memory-bound kernel (:mod:`.kernels`)
    launches_backward = layer_backward_kernels() * t_k
    streamed, streamed_backward = layer_streaming_times()
    kernels = streamed + launches
    tensor = 2 * _tensor_collective()
    forward_compute = linear + attention_forward
    backward_compute = 2 * linear + attention_backward
    forward = ov_tp * overlapped(forward_compute, tensor) + (1 - ov_tp) * (forward_compute + tensor) + kernels
    backward = (ov_tp * overlapped(backward_compute, tensor) + (1 - ov_tp) * (backward_compute + tensor)
                + streamed_backward + launches_backward)
    selective = (1 - fa) * (2 * score + streaming_time(attention_core_bytes()))
    # PyTorch's non-reentrant checkpoint stops a recomputation once the backward's last saved tensor is packed again:
    # the input of the layer's last product (fc2), packed before that product runs, so the product, the collective
    # after it and the residual add are not run again (torch.utils.checkpoint, _StopRecomputationError, torch >= 2.1)
    not_rerun = products[-1] + (1 - ov_tp) * tensor / 2 + streaming_time(residual_add_bytes()) + t_k
    return {
        "forward": forward,
        "backward": backward,
        "recompute": r_full * (forward - r_stop * not_rerun) + r_sel * selective + r_op * (linear / 2 + kernels),
        "weight": linear,
        "matmul": forward_compute + backward_compute,
        "memory_bound": streamed + streamed_backward + launches + launches_backward,
        "launch": launches + launches_backward,
        "tensor_parallel": 2 * tensor,
        "ramp_backward": attention_backward + streamed_backward + launches_backward + (1 - ov_tp) * tensor,
    }


def _zero3_share() -> sympy.Expr:
    """``k``: a partitioned state's (ZeRO-3) per-layer collectives per micro-batch: 1 with standard accumulation,
    ``1 / n_mu`` with the improved method's layered accumulation (once per step), 0 without ZeRO-3."""
    layered = improved * lw
    return z_3 * (layered / n_mu + 1 - layered)


@cache
def _zero3_per_layer() -> tuple[sympy.Expr, sympy.Expr]:
    """(gather, reduce-scatter) of one layer's partitioned weights and gradients over data parallelism,
    scaled to one micro-batch: every micro-batch (standard accumulation) or once per step (layered)."""
    weights, k = layer_weights() / n_a, _zero3_share()
    return k * data_parallel_time(2 * weights, 1), k * data_parallel_time(gamma_G * weights, 1)


@cache
def _zero3_gradient_copies() -> tuple[sympy.Expr, sympy.Expr]:
    """(on the compute stream, before the reduce-scatter) seconds of the memory-bound copies a partitioned state's
    gradients take per layer, scaled to one micro-batch as :func:`_zero3_per_layer`.

    * On the compute stream, ``4 W`` bytes (``W`` the layer's weights on the device): PyTorch's FSDP (FSDP1) keeps
      a layer's weights as slices of one flat parameter (``FlatParamHandle``'s views of ``flat_param.split``), so
      the backward assembles the flat half-precision gradient by concatenation, 2 bytes read and 2 written per
      weight; FSDP2 copies the gathered weights out of the all-gather buffer, the same bytes.
    * Before the reduce-scatter, on its own stream, the gradient cast to the reduction's precision when that is
      not half (``_post_backward_hook``: ``flat_param.grad.to(handle._reduce_dtype)``, 2 bytes read and
      ``gamma_G`` written) and the division by the pre-divide factor (``_reduce_grad``: ``_div_if_needed(
      padded_unsharded_grad, state._gradient_predivide_factor)``, a factor above 1 from two ranks on;
      ``gamma_G`` read and written): ``((gamma_G - 2) / 2 (2 + gamma_G) + 2 gamma_G) W`` bytes, which the
      reduce-scatter waits for (``torch/distributed/fsdp/_runtime_utils.py``, PyTorch 2.0-2.1, what Composer
      ran in 2023; Composer's ``mixed_precision: DEFAULT`` reduces in fp32, ``composer/trainer/
      mosaic_fsdp_utils.py`` at 12d31ceb).
    """
    k, weights = _zero3_share(), layer_weights() / n_a
    cast = (gamma_G - 2) / 2 * (2 + gamma_G)
    return k * streaming_time(4 * weights), k * streaming_time((cast + 2 * gamma_G) * weights)


def _zero3_edges() -> sympy.Expr:
    """Seconds per micro-batch of a partitioned state's (ZeRO-3, FSDP) collectives that no compute hides: the
    per-layer overlap of :func:`_zero3_per_layer` holds between layers, not at a pass's two ends.

    * Forward start: the root unit's gather (the vocabulary matrices: MPT wraps each block, the embedding stays in
      the root) and the first layer's, before any compute needs them.
    * Backward start: the last layer's gather again (FSDP frees every unit but the root after its forward: PyTorch
      ``torch/distributed/fsdp/_runtime_utils.py``, ``_post_forward_reshard``, "Do not free the root's parameters
      in the post-forward for FULL_SHARD"), hidden behind the head's backward where the model has a vocabulary.
    * Backward end: the first layer's and the root's reduce-scatters, after the last gradient is computed.

    Once per micro-batch (standard accumulation: Composer runs no ``no_sync`` for FSDP,
    ``composer/trainer/trainer.py`` at 12d31ceb, ``ddp_sync_context`` only for ``DistributedDataParallel``)
    or once per step (layered), as :func:`_zero3_per_layer`::

        k (t_AG(root) + t_AG + [no vocabulary] t_AG + t_RS + t_RS(root))
    """
    k, weights, vocabulary = _zero3_share(), layer_weights() / n_a, vocabulary_parameters()
    gather, scatter = data_parallel_time(2 * weights, 1), data_parallel_time(gamma_G * weights, 1)
    root = data_parallel_time(2 * vocabulary, 1) + data_parallel_time(gamma_G * vocabulary, 1)
    # a vocabulary's head runs its backward first, behind which the last layer's gather hides (its two GEMMs of
    # T d_v d_m against one layer's weights over the network); comparing the two would make the exposure grow with
    # the GPU's speed, so the rule is by presence: exposed only without a vocabulary
    return k * (root + gather + (1 - minimum(1, d_v)) * gather + scatter)


def _head_time() -> sympy.Expr:
    """The last stage's head (forward GEMM, two backward GEMMs) and cross-entropy, one micro-batch."""
    T = tokens()
    # the head reads the feed-forward input's measured efficiency: same tokens and inner width, a wide output
    return minimum(1, d_v) * (3 * table_gemm_time(T, d_v / n_a, d_m, e_fc1) + streaming_time(cross_entropy_bytes()))


def _stage_transfers() -> sympy.Expr:
    """A stage pass's pipeline transfers, ``chunks`` each way: the stage output forward and its gradient backward,
    each split over the ``n_a`` tensor-parallel ranks (Megatron-LM's scatter-gather), a send and a receive at once
    (one batched exchange, full duplex).  DeepSpeed's PipelineEngine (``ds_pipe``; v0.5, ``runtime/pipe/engine.py``)
    splits the output (``is_pipe_partitioned``) but sends the gradient whole from every tensor-parallel rank
    (``is_grad_partitioned = False``), ``n_a`` times the bytes; and its TrainSchedule (``runtime/pipe/schedule.py``)
    issues each transfer as its own blocking instruction (a forward step's SendGrad then RecvActivation, a backward
    step's RecvGrad then SendActivation; ``p2p.send`` and ``p2p.recv`` wait), so a stage's sends and receives
    follow one another, twice the exchanges (simulated with blocking rendezvous: four transfers a micro-batch on
    every stage's timeline)::

        (1 + ds_pipe) chunks (t_p2p(2 T d_m / n_a) + t_p2p(2 T d_m (1 + ds_pipe (n_a - 1)) / n_a))"""
    split = 2 * tokens() * d_m / n_a
    gradient = split * (1 + ds_pipe * (n_a - 1))
    return (1 + ds_pipe) * chunks * present(n_l) * (point_to_point_time(split) + point_to_point_time(gradient))


def _vocabulary_chunks(slowest, stage, zero_bubble_stage, forward, backward, times, embedding, head, transfers):
    """``(slowest, stage, zero_bubble_stage)`` with the recipe's ``vocabulary_chunks`` (``vc``): with a pipeline, the
    embedding and the head each take one layer's place (Dubey et al. 2024, section 3.3.2: "we reduce one Transformer
    layer each from the first and the last stages"), so ``L_v = (d_l + 2) / n_l`` slots a stage: a full stage passes
    ``L_v`` layers, the last ``L_v - 1`` and the head, the first ``L_v - 1`` and the embedding::

        tau_slowest = max(L_v (t_F' + t_BR'), (L_v - 1) (t_F' + t_BR') + max(t_emb, t_head)) + 2 chunks t_p2p

    and the ramp passes full stages.  Off (``vc = 0``, or no pipeline) the three are returned as given."""
    slots = vc * present(n_l)
    extra = 2 * slots / n_l  # a full stage's layers beyond d_l / n_l
    full = (layers_per_device() + extra) * (forward + backward)
    vocabulary = maximum(full, full - (forward + backward) + maximum(embedding, head)) + transfers
    return ((1 - slots) * slowest + slots * vocabulary,
            stage + extra * (forward + backward),
            zero_bubble_stage + extra * (forward + times["ramp_backward"] + times["recompute"]))


@cache
def step_terms() -> dict[str, sympy.Expr]:
    """``step`` (seconds of one training step) and its additive parts: ``pipeline`` (the micro-batches
    through the slowest stage), ``bubble`` (the ramp), ``data_parallel`` (the reduction not hidden),
    ``optimizer``, ``host`` (what the device waits on an eager host), ``fixed``; and the per-layer times of
    :func:`layer_times`."""
    times = layer_times()
    gather, scatter = _zero3_per_layer()
    copies, before_scatter = _zero3_gradient_copies()
    forward = overlapped(times["forward"], gather)
    backward = overlapped(times["backward"] + times["recompute"] + copies, gather + before_scatter + scatter)
    L = layers_per_device()
    transfers = _stage_transfers()
    stage = L * (forward + backward) + transfers
    embedding, head = streaming_time(embedding_bytes()), _head_time()
    slowest = stage + maximum(embedding, head) + single_stage() * minimum(embedding, head)
    zero_bubble_stage = L * (forward + times["ramp_backward"] + times["recompute"]) + transfers
    # Llama 3's stages (vc): the layers, the embedding and the head share d_l + 2 slots evenly, so a full stage holds
    # (d_l + 2) / n_l layers and the last one layer fewer beside the head: the slowest is a full stage or the last,
    # and the ramp passes full stages (_vocabulary_chunks)
    slowest, stage, zero_bubble_stage = _vocabulary_chunks(slowest, stage, zero_bubble_stage, forward, backward,
                                                           times, embedding, head, transfers)
    ramp = R_ramp * (zb * zero_bubble_stage + (1 - zb) * stage)
    # a partitioned state's gathers and reduce-scatters at each pass's ends, per micro-batch (_zero3_edges)
    pipeline = n_mu * (slowest + _zero3_edges())
    parameters = device_parameters()
    # the gradients: all-reduced (not partitioned) or reduce-scattered (optimizer partitioned), behind the
    # backward window; the partitioned optimizer's updated weights: all-gathered behind the next step's
    # first forward pass (Megatron-LM's --overlap-grad-reduce and --overlap-param-gather)
    not_sharded = 1 - z_3
    gradients = not_sharded * ((1 - z_1) * data_parallel_time(gamma_G * parameters, 2)
                               + z_1 * data_parallel_time(gamma_G * parameters, 1))
    gathered = not_sharded * z_1 * data_parallel_time(2 * parameters, 1)
    window_passes = minimum(c_window, n_mu * L)
    window = ov_dp * not_sharded * window_passes * (zb * (1 - ov_tp) * times["weight"] + (1 - zb) * backward)
    forward_window = ov_dp * not_sharded * L * forward
    # bucketed (Megatron-LM's default buckets; one bucket without overlap): the last reduced bucket and the first
    # gathered one cannot hide
    buckets = ov_dp * gradient_buckets(parameters) + 1 - ov_dp
    exposed = bucketed_exposure(window, gradients, buckets) + bucketed_exposure(forward_window, gathered, buckets)
    # Adam's update (and with fp32 master weights the norm and the copy) over the device's share of the state; the
    # gradients' zeroing over the device's gradients (whole unless partitioned)
    updated_bytes = optimizer_bytes_per_parameter() + master_weights_bytes_per_parameter()
    updated = updated_bytes * parameters / (1 + z_1 * (n_b - 1))
    zeroed = gradient_zeroing_bytes_per_parameter() * parameters / (1 + z_2 * (n_b - 1))
    optimizer = streaming_time(updated + zeroed)
    device = pipeline + ramp + exposed + optimizer
    # an eager framework's host issues the step no faster than measured (lgacc.model.calibrated.host: once a step,
    # once a layer and step, once a micro-batch, once a layer and micro-batch): the GPU runs ahead of it only while
    # its queue is full.  The exposed
    # reduction and the optimizer come after the host has waited for the device (the gradient norm's .item(), the
    # step timer's synchronize): they add to the floor, they do not fill it
    host = t_hs + L * t_hl + (n_mu + R_ramp) * (t_hm + L * (t_h + r_full * t_hR))
    host_wait = maximum(0, host - (pipeline + ramp + (1 - s_h) * (exposed + optimizer)))
    return {
        "step": device + host_wait + T_0,
        "pipeline": pipeline,
        "bubble": ramp,
        "data_parallel": exposed,
        "optimizer": optimizer,
        "host": host_wait,
        "fixed": T_0,
        "layer_forward": forward,
        "layer_backward": backward,
        "layer_matmul": times["matmul"],
        "layer_memory_bound": times["memory_bound"],
        "layer_launch": times["launch"],
        "layer_tensor_parallel": times["tensor_parallel"],
        "stage_transfers": transfers,
        "step_host": host,
    }


def schedule_names() -> tuple[str, ...]:
    """The schedules the composition knows: the package's (:data:`lgacc.model.formulas.schedules.SCHEDULES`)."""
    return SCHEDULES
