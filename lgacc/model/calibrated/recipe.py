"""What the framework does, beside the paper's method: the recipe of a real training run.

:class:`Recipe` holds every choice the calibrated model needs that the paper's configuration does
not name: recomputation (``full``, the paper's; ``selective``, Korthikanti et al.'s attention
core; ``none``), sequence parallelism, FlashAttention-style attention (on by default: it keeps no
``d_s x d_s`` tensor), dropout, the ZeRO stage (``None``: the method's, the baseline 0 and the
partitioned state 3), the bytes of a reduced and of a stored gradient (4: Megatron-LM's and
PyTorch FSDP's fp32 reduction with bf16 weights), and whether the data- and tensor-parallel
collectives overlap compute, and what the state holds (``mixed_precision``, ``logit_bytes``,
``ddp_bucket_copy``).  On the command line each field is ``--recipe KEY=VALUE``
(:meth:`Recipe.from_strings`); ``--recompute`` and ``--sequence-parallel`` are its own flags.

The field names are an interface: add fields, do not rename them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Iterable

from lgacc.errors import UserInputError

__all__ = ["Recipe", "RECOMPUTE", "FIELDS", "DEFAULT_RECIPE", "ATTENTION_KERNELS", "MIXED_PRECISION", "LOGIT_BYTES",
           "LOGIT_PASSES", "LOGIT_TRAFFIC", "LOSS_KERNELS", "LOSS_TRAFFIC", "LOGIT_IMPLEMENTATION", "loss_traffic", "ROPE_PASSES", "ROPE_KERNELS", "rope_traffic",
           "NORM_KERNELS", "ACTIVATION_KERNELS", "EAGER_NORM_PASSES", "EAGER_ACTIVATION_PASSES", "eager_traffic",
           "HOST_FRAMEWORKS", "MOE_DISPATCHERS",
           "zero_stage"]

RECOMPUTE = ("full", "selective", "none", "op", "alternate")
#: the experts' token dispatchers (lgacc.model.calibrated.dispatch.DISPATCHERS says what each runs)
MOE_DISPATCHERS = ("alltoall", "deepep", "hybridep")
ZERO_STAGES = (0, 1, 2, 3)
GRADIENT_BYTES = (2, 4)

#: field -> what it means (for the command line's help and the book)
FIELDS: dict[str, str] = {
    "recompute": "activation recomputation: full (the paper's), selective (the attention core), none, op (torchtitan's "
                 "per-operation policy: every other matrix product and the element-wise operations) or alternate "
                 "(every other layer in full)",
    "recompute_early_stop": "a recomputed layer stops before its last matrix product, as PyTorch's non-reentrant "
                            "checkpoint does (torch.utils.checkpoint with use_reentrant=False, torch 2.1 and later: it "
                            "stops once every tensor the backward needs is saved again, and the input of the feed-forward's "
                            "second product is saved before that product runs; LLM Foundry's and torchtitan's activation "
                            "checkpointing); off: the whole forward again (Megatron-LM's and DeepSpeed's checkpoint "
                            "functions, PyTorch's reentrant one; the default)",
    "sequence_parallel": "sequence parallelism: the kernels outside the tensor-parallel region split the tokens",
    "flash_attention": "fused attention that keeps no d_s x d_s tensor (FlashAttention)",
    "dropout": "dropout layers (their masks are stored and their kernels run)",
    "zero_stage": "ZeRO stage 0-3 of the data-parallel state (unset: the method's, 0 or 3)",
    "grad_reduce_bytes": "bytes of a gradient in the data-parallel reduction (2 or 4)",
    "main_grad_bytes": "bytes of a stored gradient (2 or 4)",
    "dp_overlap": "the data-parallel reduction overlaps the backward pass",
    "tp_overlap": "the tensor-parallel collectives overlap the layer's matrix products",
    "attention_kernel": "fused attention kernel: cudnn (cuDNN's flash attention, Transformer Engine's choice on Hopper "
                        "and later; the default), fa2 (FlashAttention-2) or triton (FlashAttention in Triton, the "
                        "kernels of FlashAttention-1's generation such as LLM Foundry's attn_impl triton: FlashAttention-2's "
                        "speeds over 1.4 forward and 2 backward, Dao 2023); their speeds measured by GPU, head size and "
                        "sequence length set the attention's efficiency (data/calibrated/attention_kernels.yaml)",
    "mixed_precision": "how the training state is kept: megatron (half-precision weights beside fp32 master weights, "
                       "Adam's moments and a main gradient that lives through the step: 2 + main_grad_bytes + 12 "
                       "bytes per parameter; the default) or amp (PyTorch automatic mixed precision: fp32 weights and "
                       "Adam's moments, 4 + 8 bytes, no half-precision copy kept between steps; the gradients exist "
                       "from the backward pass until zero_grad(set_to_none=True); autocast keeps a half-precision copy "
                       "of each matrix weight for the backward and the residual stream stays fp32) or amp-zeroed (the same, "
                       "with the gradients zeroed, not freed, so kept between steps: zero_grad() before PyTorch 2.0)",
    "logit_bytes": "bytes per logit alive at the loss's backward: 10 (half-precision logits, an fp32 softmax and "
                   "its gradient: Megatron-LM's vocab-parallel cross entropy; the default), 14 (PyTorch's "
                   "cross_entropy on fp32 logits: the half logits, log_softmax's fp32 output, the incoming and the "
                   "outgoing fp32 gradient), 12 (the same with the logits freed before the backward, torchtitan's "
                   "del pred since 2024-06: log_softmax's fp32 output and the two fp32 gradients), 16 (the model "
                   "returns fp32 logits kept through the backward, torchtitan before it: those, log_softmax's fp32 "
                   "output and the two fp32 gradients) or 6 (the loss in half "
                   "precision, DeepSpeed fp16 without autocast: the half logits' copy, log_softmax's output and its "
                   "gradient, 2 bytes each); the implementation it names also sets the bytes per logit the loss's "
                   "kernels move in the step time (52 for 10, 48 for 12, 14 and 16, 20 for 6, "
                   "lgacc.model.calibrated.kernels.cross_entropy_bytes)",
    "ddp_bucket_copy": "PyTorch DistributedDataParallel's buckets keep a second copy of the gradients "
                       "(gradient_as_bucket_view=False, DDP's default; grad_reduce_bytes each)",
    "dp_network": "data-parallel collectives: ring (hierarchical: NVLink and all the node's cards, as NCCL's rings "
                  "move them; the default) or per-gpu (every GPU's volume through its own card, the paper's count)",
    "cuda_graphs": "the step runs as captured CUDA graphs (the host replays a graph; no floor from the host's time "
                   "to issue each layer's work); off: an eager framework, whose step is never shorter than its host "
                   "takes to issue it (the time measured on an H100, lgacc.model.calibrated.host), as every framework runs "
                   "by default (Megatron-LM's --enable-cuda-graph, PyTorch's CUDA graphs are opt-in)",
    "host_sync": "the host waits for the device after the layers' passes (Megatron-LM reads the gradients' norm on "
                 "the host, clip_grads.get_grad_norm_fp32's .item(), and its step timer synchronizes at each logged "
                 "step): the exposed gradient reduction and the optimizer step add to the host's floor; off: the host "
                 "runs ahead into the next step and they hide under its issuing (lgacc.model.calibrated.step)",
    "deepspeed_optimizer": "DeepSpeed's fp16 optimizer (v0.5: runtime/fp16/fused_optimizer.py without ZeRO, "
                           "runtime/zero/stage_1_and_2.py with ZeRO-1/2): the reduction after the backward flattens "
                           "a bucket of up to reduce_bucket_size = 5e8 gradients beside all of them, and the step "
                           "flattens the gradients to fp32 (ZeRO-1/2: this rank's partition, a half-precision flat "
                           "copy and its fp32 cast, (main_grad_bytes + 4) / n_b bytes a parameter beside the "
                           "partition's gradients; without ZeRO: an fp32 copy of each gradient and their flat "
                           "concatenation, 8 bytes a parameter beside all the gradients); the peak is the larger of "
                           "the backward's and these two (off: every other framework)",
    "deepspeed_pipeline": "DeepSpeed's PipelineEngine (v0.5: runtime/pipe/engine.py), with a pipeline: each in-flight "
                          "micro-batch's stage output stays in pipe_buffers until its backward, split over the tensor-"
                          "parallel ranks (2 d_m / n_a bytes a token), and its backward restores it in full beside the "
                          "full received gradient (2 d_m (2 - 1 / n_a) a token); its own process groups (the slice "
                          "group beside the tensor-parallel one, the model-parallel group, the tied embedding's first "
                          "and last stages) each hold NCCL buffers on a device reading (off: every other framework)",
    "ep_overlap": "the experts' all-to-alls (dispatch and combine) overlap the computation of another micro-batch's "
                  "chunk, as DeepSeek-V3's DualPipe (its report, section 3.2.1: \"both all-to-all and PP communication can "
                  "be fully hidden\") and Megatron-Core's --overlap-moe-expert-parallel-comm schedule them: the step "
                  "pays only what the all-to-alls take beyond its stages' computation; off: they stall the layer "
                  "(Megatron-Core's default)",
    "fsdp_pipeline_unsharded": "with a pipeline and ZeRO-3, the stage's weights stay gathered through the step and its "
                               "gradients accumulate unsharded, in the reduction's precision (grad_reduce_bytes), until "
                               "the last micro-batch: torchtitan's FSDP2 under pipeline parallelism (apply_fsdp sets "
                               "reshard_after_forward False, and torch.distributed.pipelining runs each backward with "
                               "set_requires_gradient_sync(False)); off: two gathered layers and a gradient bucket at a "
                               "time (the default)",
    "moe_dispatcher": "how a mixture of experts' tokens reach their experts, for the permutations that reorder them "
                      "(lgacc.model.calibrated.dispatch): alltoall (Megatron-Core's MoEAlltoAllTokenDispatcher, its "
                      "default: every copy permuted and sent, and sorted by expert where a GPU holds more than one; "
                      "the default), deepep (its MoEFlexTokenDispatcher over DeepEP: a token sent once to each GPU "
                      "holding one of its experts, across nodes once to each node, and permuted there) or hybridep (the same over HybridEP, the "
                      "permutations fused into the communication kernels); a dense model permutes nothing",
    "host_framework": "whose modules the host issues, where the step is eager: pytorch (plain torch.nn layers under "
                      "autocast; the default) or megatron (Megatron-Core's GPTModel, its DistributedDataParallel wrapper "
                      "and forward-backward schedule, with its own modules: Megatron-LM's --transformer-impl local and "
                      "its layers before Transformer Engine), whose layer and recomputed forward "
                      "were measured on an H100 to cost the host more than plain PyTorch's, or megatron_te (the same "
                      "with Transformer Engine's modules and Megatron-LM's default fusions: --transformer-impl "
                      "transformer_engine, Megatron-LM's default since 2023, NeMo, Megatron-Bridge), whose layer was "
                      "measured beside Megatron-Core's own on one H200 to cost the host more again "
                      "(python -m lgacc.model.calibrated.host prints each)",
    "vocabulary_chunks": "with a pipeline, the embedding and the head each take one layer's place (Llama 3, Dubey et al. "
                         "2024, section 3.3.2: \"we reduce one Transformer layer each from the first and the last "
                         "stages\", whose first and last chunks hold only the embedding and only the output projection "
                         "and loss): the pipeline's d_l + 2 slots are spread evenly, so the first and last stages hold "
                         "one layer fewer and a schedule with chunks may have n_l n_v <= d_l + 2; off: the layers are "
                         "spread evenly and the head and the embedding come on top of the last and first stages' share "
                         "(Megatron-LM's and DeepSpeed's split, the default)",
    "rope_kernel": "how a model with rotary positions rotates its queries and keys: fused (one kernel a tensor and pass "
                   "that reads and writes each half-precision value once, Transformer Engine's fused RoPE, Megatron-LM's "
                   "apply_rope_fusion, on by default; the default) or complex (in fp32 complex arithmetic, "
                   "torchtitan's eager apply_rotary_emb: a cast to fp32, the complex product, the cast back); the "
                   "bytes and kernels of each, lgacc.model.calibrated.recipe.ROPE_PASSES; a model without rotary "
                   "positions rotates nothing",
    "norm_kernel": "how the layer's two norms run: fused (one kernel each way per norm, at the share of the HBM "
                   "bandwidth measured on an H100 for PyTorch's layer norm: Transformer Engine's, Apex's, Triton's and "
                   "torch.compile's fused norms; the default) or eager (torchtitan's RMSNorm module in PyTorch "
                   "operations, norm_type rmsnorm without torch.compile: a cast to fp32, the square, the mean, the "
                   "product, the cast back and the weight, and autograd's kernels for each in the backward; "
                   "lgacc.model.calibrated.recipe.EAGER_NORM_PASSES)",
    "loss_kernel": "the cross entropy's kernels, where they are not the ones logit_bytes names (unset, the default): "
                   "megatron (Megatron-LM's vocab-parallel loss on an fp32 copy, 52 bytes a logit), pytorch "
                   "(cross_entropy on fp32 logits, 48), half (Megatron-LM's in half precision, 20), xentropy "
                   "(FlashAttention's fused CUDA cross entropy on half logits, LLM Foundry's fused_crossentropy: two "
                   "reads forward, a read and a write backward, 8), te (Transformer Engine's Triton cross entropy "
                   "on half logits, Megatron-LM's --cross-entropy-loss-fusion --cross-entropy-fusion-impl te: a read, "
                   "then a read and a write of the gradient in place forward, a read and a write backward, 10) or "
                   "pytorch-half (cross_entropy on the half logits without a cast, NeMo AutoModel's "
                   "MaskedCrossEntropy with fp32_upcast false: 18); "
                   "lgacc.model.calibrated.recipe.LOGIT_PASSES; the "
                   "memory alive at the loss stays logit_bytes'",
    "activation_kernel": "how a gated feed-forward's activation runs: fused (one kernel reads both halves and writes the "
                         "product, Megatron-LM's bias_swiglu_fusion and Transformer Engine's; the default) or eager "
                         "(torchtitan's F.silu(w1(x)) * w3(x): the SiLU and the product as two kernels, and autograd's "
                         "three in the backward; lgacc.model.calibrated.recipe.EAGER_ACTIVATION_PASSES); an ungated "
                         "activation is one kernel either way",
}
DP_NETWORKS = ("ring", "per-gpu")
MIXED_PRECISION = ("megatron", "amp", "amp-zeroed")
LOGIT_BYTES = (6, 10, 12, 14, 16)
#: the loss's kernels, forward then backward, with the bytes each moves per logit, for each implementation, read from
#: the code (lgacc.model.calibrated.kernels.cross_entropy_bytes says where): each kernel's tensors read or written once
LOGIT_PASSES: dict[str, tuple[tuple[str, int], ...]] = {
    # the Megatron-LM loss below in half precision, without the casts
    "half": (("the maximum", 2), ("the subtraction in place", 2 + 2), ("exp in place", 2 + 2), ("the sum", 2),
             ("the division into the softmax kept", 2 + 2), ("backward: the gradient scaled in place", 2 + 2)),
    # Megatron-LM's vocab-parallel cross entropy on an fp32 copy of the half-precision logits (core_r0.14.0, unfused)
    "megatron": (("the cast to fp32", 2 + 4), ("the maximum", 4), ("the subtraction in place", 4 + 4),
                 ("exp in place", 4 + 4), ("the sum", 4), ("the division into the softmax kept", 4 + 4),
                 ("backward: the gradient scaled in place", 4 + 4), ("backward: the cast back", 4 + 2)),
    # PyTorch's cross_entropy on fp32 logits: log_softmax and nll_loss
    "pytorch": (("the cast to fp32", 2 + 4), ("log_softmax: three reads of the row and its write", 4 + 4 + 4 + 4),
                ("backward: nll_loss's zero gradient and its scatter", 4),
                ("backward: log_softmax's two reads of the gradient, one of its output, the write", 4 + 4 + 4 + 4),
                ("backward: the cast back", 4 + 2)),
    # FlashAttention's fused CUDA cross entropy on half-precision logits (csrc/xentropy/xentropy_kernel.cu,
    # Dao-AILab/flash-attention, Apex's kernel: cunn_SoftMaxXEntropyForward reads the row for its maximum and sum,
    # then for its sum of exponentials; cunn_SoftMaxXEntropyBackward reads it and writes the gradient), LLM
    # Foundry's MPT loss_fn fused_crossentropy
    "xentropy": (("the maximum and the sum", 2), ("the sum of exponentials", 2), ("backward: read and write", 2 + 2)),
    # Transformer Engine's Triton cross entropy on half-precision logits (transformer_engine/common/triton/
    # cross_entropy.py at v2.11): online_softmax_kernel reads the row for its maximum and sum; cross_entropy_kernel
    # reads it again and writes the gradient in place; the backward's element_mul_kernel reads that gradient and
    # writes it scaled in place (skipped only when the incoming gradient is the scalar 1, which Megatron-LM's
    # per-token loss never passes).  Megatron-LM calls it under --cross-entropy-loss-fusion
    # --cross-entropy-fusion-impl te (megatron/core/models/common/language_module/language_module.py,
    # compute_language_model_loss), on the head's half-precision logits
    "te": (("online softmax: the maximum and the sum", 2), ("the loss and the gradient in place", 2 + 2),
           ("backward: the gradient scaled in place", 2 + 2)),
    # PyTorch's cross_entropy on the half-precision logits themselves, no cast (NeMo AutoModel's MaskedCrossEntropy
    # with fp32_upcast false, nemo_automodel/components/loss/masked_ce.py): "pytorch" above without its two casts,
    # every tensor in 2 bytes
    "pytorch-half": (("log_softmax: three reads of the row and its write", 2 + 2 + 2 + 2),
                     ("backward: nll_loss's zero gradient and its scatter", 2),
                     ("backward: log_softmax's two reads of the gradient, one of its output, the write", 2 + 2 + 2 + 2)),
}
LOSS_KERNELS = tuple(LOGIT_PASSES)
#: the loss each reading of ``logit_bytes`` names, where the recipe's ``loss_kernel`` is unset
LOGIT_IMPLEMENTATION = {6: "half", 10: "megatron", 12: "pytorch", 14: "pytorch", 16: "pytorch"}
#: bytes per logit the loss's kernels move, forward and backward: :data:`LOGIT_PASSES` summed
LOSS_TRAFFIC = {kernel: sum(size for _, size in kernels) for kernel, kernels in LOGIT_PASSES.items()}
#: the same, by the reading of ``logit_bytes`` that names the implementation
LOGIT_TRAFFIC = {reading: LOSS_TRAFFIC[kernel] for reading, kernel in LOGIT_IMPLEMENTATION.items()}


def loss_traffic(recipe: "Recipe") -> int:
    """Bytes per logit the recipe's loss moves: its ``loss_kernel``'s, else the one its ``logit_bytes`` names."""
    kernel = recipe.loss_kernel if recipe.loss_kernel is not None else LOGIT_IMPLEMENTATION[recipe.logit_bytes]
    return LOSS_TRAFFIC[kernel]


ATTENTION_KERNELS = ("cudnn", "fa2", "triton")
#: the kernels a rotary position embedding runs on one rotated tensor (the queries or the keys) in one pass, with the
#: bytes each moves per rotated value, for each reading of ``rope_kernel``; the backward runs the same kernels in
#: reverse (each reads the incoming gradient and writes the outgoing one, the sizes of the forward's input and
#: output), so one table serves both passes.  Read from the code:
#:
#: * fused: Transformer Engine's fused RoPE (``fused_apply_rotary_pos_emb``), which Megatron-LM calls under
#:   ``apply_rope_fusion`` (on unless ``--no-rope-fusion``, megatron/training/arguments.py, core_r0.8.0 to
#:   core_r0.14.0): the half-precision tensor read and the rotated one written (the frequencies, one row a position
#:   shared by every head and sample, are not counted);
#: * complex: torchtitan's ``apply_rotary_emb`` (torchtitan/models/llama/model.py at 157a12c56 and 9dec370, eager
#:   without ``torch.compile``): ``xq.float()`` (read 2, write 4), the product with ``freqs_cis`` in complex fp32
#:   (``view_as_complex`` and ``view_as_real`` are views: read 4, write 4), ``type_as(xq)`` (read 4, write 2).
ROPE_PASSES: dict[str, tuple[tuple[str, int], ...]] = {
    "fused": (("the fused rotation", 2 + 2),),
    "complex": (("the cast to fp32", 2 + 4), ("the complex product", 4 + 4), ("the cast back", 4 + 2)),
}
ROPE_KERNELS = tuple(ROPE_PASSES)
NORM_KERNELS = ("fused", "eager")
ACTIVATION_KERNELS = ("fused", "eager")
#: torchtitan's eager RMSNorm (torchtitan/models/norms.py, RMSNorm, at 157a12c56 and 9dec370:
#: ``y = x.float(); (y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + eps)).type_as(x) * weight``) as PyTorch runs it
#: without torch.compile: (forward kernels, backward kernels), each with the bytes it moves per normalized value
#: (half-precision input; the per-row values, one a token, and the weight, one a column, are not counted).  The
#: backward is autograd's: ``MulBackward0`` of the weight (the input's gradient, then the weight's as a product and its
#: sum over the tokens), ``ToCopyBackward0``, ``MulBackward0`` of ``x * rsqrt`` (the direct gradient, then the
#: gradient of the per-row factor as a product and its sum over the row), ``RsqrtBackward0`` on the rows, ``MeanBackward1``
#: (the row's gradient expanded and divided), ``PowBackward0`` (``grad * (2 * x.pow(1))``, torch/csrc/autograd/
#: FunctionsManual.cpp ``pow_backward``: a copy, a scaling, a product), the two gradients of the fp32 copy summed, and
#: the cast back.
EAGER_NORM_PASSES: tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]] = (
    (("x.float()", 2 + 4), ("pow(2)", 4 + 4), ("mean over the row", 4), ("+ eps", 0), ("rsqrt", 0),
     ("x * rsqrt", 4 + 4), ("type_as", 4 + 2), ("* weight", 2 + 2)),
    (("grad * weight", 2 + 2), ("grad * output", 2 + 2 + 2), ("its sum over the tokens", 2), ("cast to fp32", 2 + 4),
     ("grad * rsqrt", 4 + 4), ("grad * x", 4 + 4 + 4), ("its sum over the row", 4), ("rsqrt's backward", 0),
     ("mean's backward: expand and divide", 4), ("pow's backward: x.pow(1)", 4 + 4), ("times 2", 4 + 4),
     ("times grad", 4 + 4 + 4), ("the fp32 copy's two gradients summed", 4 + 4 + 4), ("cast back", 4 + 2)),
)
#: torchtitan's gated feed-forward activation (torchtitan/models/llama/model.py, FeedForward.forward, at 157a12c56 and
#: 9dec370: ``self.w2(F.silu(self.w1(x)) * self.w3(x))``) without torch.compile: (forward kernels, backward kernels),
#: each with the bytes it moves per feed-forward value (``d_I``, half precision).  The fused kernel it replaces reads
#: both halves and writes the product (6 forward, ``k_B`` times that backward).
EAGER_ACTIVATION_PASSES: tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]] = (
    (("silu", 2 + 2), ("silu(a) * b", 2 + 2 + 2)),
    (("grad * b", 2 + 2 + 2), ("grad * silu(a)", 2 + 2 + 2), ("silu's backward", 2 + 2 + 2)),
)


def eager_traffic(passes) -> tuple[int, int, int, int]:
    """(forward bytes, backward bytes, forward kernels, backward kernels) of an eager table
    (:data:`EAGER_NORM_PASSES`, :data:`EAGER_ACTIVATION_PASSES`)."""
    forward, backward = passes
    return sum(size for _, size in forward), sum(size for _, size in backward), len(forward), len(backward)


def rope_traffic(kernel: str) -> tuple[int, int]:
    """(bytes per rotated value, kernels per rotated tensor) of one pass of the rotary embedding ``kernel``
    (:data:`ROPE_PASSES`)."""
    passes = ROPE_PASSES[kernel]
    return sum(size for _, size in passes), len(passes)
#: whose modules an eager host issues (lgacc.model.calibrated.host: each measured on an H100; megatron_te's layer
#: beside Megatron-Core's own on an H200)
HOST_FRAMEWORKS = ("pytorch", "megatron", "megatron_te")


@dataclass(frozen=True)
class Recipe:
    """A real run's choices (see :data:`FIELDS`); the defaults are a current Megatron-LM-style run with the
    paper's full recomputation."""

    recompute: str = "full"
    sequence_parallel: bool = False
    flash_attention: bool = True
    dropout: bool = False
    zero_stage: int | None = None
    grad_reduce_bytes: int = 4
    main_grad_bytes: int = 4
    dp_overlap: bool = True
    tp_overlap: bool = False
    dp_network: str = "ring"
    attention_kernel: str = "cudnn"
    mixed_precision: str = "megatron"
    logit_bytes: int = 10
    ddp_bucket_copy: bool = False
    deepspeed_optimizer: bool = False
    deepspeed_pipeline: bool = False
    cuda_graphs: bool = False
    host_sync: bool = True
    vocabulary_chunks: bool = False
    ep_overlap: bool = False
    fsdp_pipeline_unsharded: bool = False
    moe_dispatcher: str = "alltoall"
    host_framework: str = "pytorch"
    recompute_early_stop: bool = False
    rope_kernel: str = "fused"
    norm_kernel: str = "fused"
    activation_kernel: str = "fused"
    loss_kernel: str | None = None

    def __post_init__(self) -> None:
        if self.recompute not in RECOMPUTE:
            raise UserInputError(f"recipe recompute={self.recompute!r} must be one of {', '.join(RECOMPUTE)}")
        for name in ("sequence_parallel", "flash_attention", "dropout", "dp_overlap", "tp_overlap", "ddp_bucket_copy",
                     "cuda_graphs", "host_sync", "deepspeed_optimizer",
                     "deepspeed_pipeline", "vocabulary_chunks", "ep_overlap", "recompute_early_stop",
                     "fsdp_pipeline_unsharded"):
            if not isinstance(getattr(self, name), bool):
                raise UserInputError(f"recipe {name}={getattr(self, name)!r} must be true or false")
        if self.zero_stage is not None and (isinstance(self.zero_stage, bool) or self.zero_stage not in ZERO_STAGES):
            raise UserInputError(f"recipe zero_stage={self.zero_stage!r} must be one of 0, 1, 2, 3 (or unset)")
        if self.attention_kernel not in ATTENTION_KERNELS:
            raise UserInputError(f"recipe attention_kernel={self.attention_kernel!r} must be one of "
                                 f"{', '.join(ATTENTION_KERNELS)}")
        if self.mixed_precision not in MIXED_PRECISION:
            raise UserInputError(f"recipe mixed_precision={self.mixed_precision!r} must be one of "
                                 f"{', '.join(MIXED_PRECISION)}")
        if isinstance(self.logit_bytes, bool) or self.logit_bytes not in LOGIT_BYTES:
            raise UserInputError(f"recipe logit_bytes={self.logit_bytes!r} must be one of "
                                 f"{', '.join(map(str, LOGIT_BYTES))}")
        if self.host_framework not in HOST_FRAMEWORKS:
            raise UserInputError(f"recipe host_framework={self.host_framework!r} must be one of "
                                 f"{', '.join(HOST_FRAMEWORKS)}")
        if self.moe_dispatcher not in MOE_DISPATCHERS:
            raise UserInputError(f"recipe moe_dispatcher={self.moe_dispatcher!r} must be one of "
                                 f"{', '.join(MOE_DISPATCHERS)}")
        if self.rope_kernel not in ROPE_KERNELS:
            raise UserInputError(f"recipe rope_kernel={self.rope_kernel!r} must be one of {', '.join(ROPE_KERNELS)}")
        for name, allowed in (("norm_kernel", NORM_KERNELS), ("activation_kernel", ACTIVATION_KERNELS)):
            if getattr(self, name) not in allowed:
                raise UserInputError(f"recipe {name}={getattr(self, name)!r} must be one of {', '.join(allowed)}")
        if self.loss_kernel is not None and self.loss_kernel not in LOSS_KERNELS:
            raise UserInputError(f"recipe loss_kernel={self.loss_kernel!r} must be one of {', '.join(LOSS_KERNELS)} "
                                 "(or unset)")
        if self.dp_network not in DP_NETWORKS:
            raise UserInputError(f"recipe dp_network={self.dp_network!r} must be one of {', '.join(DP_NETWORKS)}")
        for name in ("grad_reduce_bytes", "main_grad_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or value not in GRADIENT_BYTES:
                raise UserInputError(f"recipe {name}={value!r} must be 2 or 4")

    def replace(self, **changes: Any) -> "Recipe":
        """A copy with ``changes`` (validated); an unknown field is a :class:`UserInputError`."""
        unknown = [k for k in changes if k not in FIELDS]
        if unknown:
            raise UserInputError(f"unknown recipe field {unknown[0]!r}; expected one of {', '.join(FIELDS)}")
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_strings(cls, items: Iterable[str], base: "Recipe | None" = None) -> "Recipe":
        """Parse ``["key=value", ...]`` (the command line's ``--recipe``) onto ``base``."""
        base = cls() if base is None else base
        changes: dict[str, Any] = {}
        for item in items:
            key, sep, text = str(item).partition("=")
            key, text = key.strip().replace("-", "_"), text.strip()
            if not sep or key not in FIELDS:
                raise UserInputError(f"--recipe {item!r} must be KEY=VALUE with KEY one of {', '.join(FIELDS)}")
            changes[key] = _parse(key, text)
        return base.replace(**changes)

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in FIELDS}


def _parse(key: str, text: str) -> Any:
    lowered = text.lower()
    if key in ("recompute", "dp_network", "attention_kernel", "mixed_precision", "host_framework", "rope_kernel",
               "norm_kernel", "activation_kernel", "moe_dispatcher"):
        return lowered
    if key in ("zero_stage", "loss_kernel"):
        if lowered in ("", "none", "unset", "default"):
            return None
    if key == "loss_kernel":
        return lowered
    if key in ("zero_stage", "grad_reduce_bytes", "main_grad_bytes", "logit_bytes"):
        try:
            return int(text)
        except ValueError:
            raise UserInputError(f"recipe {key}={text!r} must be a whole number") from None
    if lowered in ("true", "yes", "1", "on"):
        return True
    if lowered in ("false", "no", "0", "off"):
        return False
    raise UserInputError(f"recipe {key}={text!r} must be true or false")


def zero_stage(recipe: Recipe, partitioned: bool) -> int:
    """The ZeRO stage of a run: the recipe's, else 3 for a partitioned state (the paper's) and 0 otherwise."""
    if recipe.zero_stage is not None:
        return recipe.zero_stage
    return 3 if partitioned else 0


DEFAULT_RECIPE = Recipe()
