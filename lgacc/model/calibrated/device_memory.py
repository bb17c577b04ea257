"""What a GPU's memory holds beyond the tensors the calibrated model counts (its peak *allocated* memory), for
comparing the model with a measurement of another statistic (issue #35): PyTorch's statistics are ordered
allocated <= reserved (the caching allocator's pool) <= device (NVML's used memory, as nvidia-smi reads it).

* **The pool's free blocks** (reserved beyond allocated): not derived here; the validation study measures it on the
  runs whose source publishes both statistics (:func:`pool_ratio`, the mean measured reserved/allocated ratio,
  taken without the run's own publication).
* **NCCL's buffers** (device beyond reserved: NCCL allocates them with the CUDA driver, outside PyTorch's pool):
  per communicator with at least two ranks, each channel of its ring holds one connection's buffers on each GPU,
  one buffer per protocol, of NCCL's default sizes (``src/init.cc``: ``DEFAULT_BUFFSIZE`` 4 MiB for the Simple
  protocol, the ``NCCL_BUFFSIZE`` default of NCCL's documentation, docs.nvidia.com/deeplearning/nccl/user-guide/
  docs/env.html#nccl-buffsize; ``DEFAULT_LL_BUFFSIZE`` = 8 lines x 512 threads x 8 steps x 16 bytes = 512 KiB;
  ``DEFAULT_LL128_BUFFSIZE`` = 120 elements x 640 threads x 8 steps x 8 bytes = 4,915,200 bytes), 9,633,792 bytes,
  which NCCL's cuMem allocations round up to the 2 MiB granularity: 10,485,760 bytes, the size NCCL's allocation
  log shows per channel and peer on 8 H100s (NVIDIA/nccl#1685).  Channels: 32 per communicator, the count that
  log shows on NVLink (and NCCL's ``MAXCHANNELS``); no tree connections are counted, so the term is a lower
  reading of NCCL's own (NVIDIA/nccl#964 measured 544 MB per 2-GPU and 688 MB per larger communicator on A100s).
* **The CUDA context**: :data:`lgacc.studies.validation.tables.CUDA_CONTEXT_BYTES` (pytorch/pytorch#86509 for CUDA 11.7, this package's H100 measurement for CUDA 13).

Which communicators a run creates: one per parallel dimension of more than one rank (tensor ``n_a``, pipeline
``n_l``, data ``n_b``, context ``n_c``, expert ``n_e``), and the world group when it is none of them (the
framework's own reductions: the loss, the gradient norm); PyTorch creates a group's NCCL communicator at its
first collective, so a group of one rank holds none.
"""

from __future__ import annotations

import math

__all__ = ["NCCL_CHANNELS", "NCCL_CONNECTION_BYTES", "NCCL_PROTOCOL_BYTES", "nccl_buffer_bytes",
           "nccl_communicators", "deepspeed_pipeline_groups", "deepspeed_step_segment_bytes"]

MIB = 2**20
#: NCCL's default buffer per connection and protocol (src/init.cc), bytes.
NCCL_PROTOCOL_BYTES = {
    "simple": 1 << 22,  # DEFAULT_BUFFSIZE, NCCL_BUFFSIZE's documented default 4194304
    "ll": 8 * 512 * 8 * 16,  # NCCL_LL_LINES_PER_THREAD x NCCL_LL_MAX_NTHREADS x NCCL_STEPS x sizeof(ncclLLFifoLine)
    "ll128": 120 * 640 * 8 * 8,  # NCCL_LL128_ELEMS_PER_THREAD x NCCL_LL128_MAX_NTHREADS x NCCL_STEPS x 8
}
#: cuMem's allocation granularity, to which NCCL rounds each connection's buffers.
CUMEM_GRANULARITY = 2 * MIB
#: One connection's buffers as allocated: the three protocols', rounded up to the granularity (10 MiB).
NCCL_CONNECTION_BYTES = math.ceil(sum(NCCL_PROTOCOL_BYTES.values()) / CUMEM_GRANULARITY) * CUMEM_GRANULARITY
#: Channels per communicator (NCCL's log on 8 H100s over NVLink, NVIDIA/nccl#1685; NCCL's MAXCHANNELS).
NCCL_CHANNELS = 32


def deepspeed_pipeline_groups(n_a: int, n_l: int) -> int:
    """The process groups DeepSpeed's PipelineEngine (v0.5.10) adds on the first stage beside the framework's own
    (Megatron-LM's tensor-parallel group, the data-parallel, pipeline and world groups), each a communicator of its
    own once used: the grid's *slice* group (``runtime/pipe/topology.py``, the tensor-parallel ranks again), used by
    ``PartitionedTensor`` to restore a stage output or gradient when there is a pipeline and tensor parallelism
    (``engine.py`` ``is_pipe_partitioned``); the grid's *model-parallel* group (tensor x pipeline ranks), used at start
    (``engine.py``, the parameter count's all-reduce) and by ZeRO's overflow and norm reductions whenever it holds more
    than one rank; and the tied embedding's group of the first and last stages (``pipe/module.py``
    ``_index_tied_modules``, its gradient all-reduced every step) with a pipeline.  The stages' point-to-point sends
    use the world group (``pipe/p2p.py``, ``dist.send`` since PyTorch 1.8), counted already."""
    return int(n_a > 1 and n_l > 1) + int(n_a * n_l > 1) + int(n_l > 1)


def nccl_communicators(n_a: int, n_l: int, n_b: int, n_c: int = 1, n_e: int = 1,
                       deepspeed_pipeline: bool = False) -> int:
    """The NCCL communicators one GPU holds: one per parallel dimension of more than one rank, and the world group
    when the run has more than one GPU and it is not one of those; with DeepSpeed's PipelineEngine, its own groups
    (:func:`deepspeed_pipeline_groups`)."""
    groups = sum(1 for n in (n_a, n_l, n_b, n_c, n_e) if n > 1)
    engine = deepspeed_pipeline_groups(n_a, n_l) if deepspeed_pipeline else 0
    return groups + (1 if groups > 1 else 0) + engine


def nccl_buffer_bytes(n_a: int, n_l: int, n_b: int, n_c: int = 1, n_e: int = 1,
                      deepspeed_pipeline: bool = False) -> int:
    """NCCL's buffers on one GPU, bytes: its communicators x channels x one connection's buffers."""
    return (nccl_communicators(n_a, n_l, n_b, n_c, n_e, deepspeed_pipeline=deepspeed_pipeline) * NCCL_CHANNELS
            * NCCL_CONNECTION_BYTES)


def deepspeed_step_segment_bytes(parameters: float, n_b: int, zero_stage: int, main_grad_bytes: int = 2) -> float:
    """The pool segments DeepSpeed's fp16 optimizer's step holds beside the backward's (bytes): its flattened
    gradients, each one contiguous tensor (:func:`lgacc.model.calibrated.memory.deepspeed_phases`).  PyTorch's
    caching allocator (``c10/cuda/CUDACachingAllocator.cpp``) serves a request from the smallest cached block that
    fits, splits blocks but never merges blocks of different segments, and otherwise allocates a new segment: no
    block the backward freed (a gradient, an activation) holds a whole partition, so the flat tensors take segments of
    their own, which stay in the pool, and in the next backward the activations and gradients find their own freed
    blocks first.  ZeRO-1/2: the partition's half-precision flat copy and its fp32 cast, ``(main_grad_bytes + 4) /
    n_b`` bytes a parameter; without ZeRO: the fp32 concatenation, 4 bytes a parameter (its per-gradient fp32 copies
    are gradient-sized, left to the pool ratio); ZeRO-3: none (another optimizer)."""
    if zero_stage >= 3:
        return 0.0
    if zero_stage >= 1:
        return (main_grad_bytes + 4) * parameters / n_b
    return 4.0 * parameters
