"""Measure, on one GPU, the host's time per layer and micro-batch of a Megatron-Core training step, with and without
Transformer Engine (issue #35); not a test, never run by CI.

    python3 benchmarks/gpu/measure_megatron_host.py OUT_DIR [--quick]

Why: the calibrated model's host floor (:mod:`lgacc.model.calibrated.host`) is the host time of an *eager PyTorch*
layer measured on our H100 (``measure_host.py``: 2.8 ms per layer and micro-batch).  Three publications' Megatron-LM
runs that wait on the host read 4.6-5.9 ms; a framework with heavier modules issues more work per layer.  This
script measures that framework's own host time on the same kind of machine instead of fitting it.

What: a Megatron-Core ``GPTModel`` of width 64, 4 heads and 64 tokens (the GPU's work is microseconds per kernel, so
the step's wall time is the host's), wrapped in Megatron-Core's ``DistributedDataParallel`` (its gradient buffers and
hooks, fp32 gradient accumulation as ``--accumulate-allreduce-grads-in-fp32``), run by Megatron-Core's own
forward-backward schedule (``get_forward_backward_func``, no pipeline) over 1, 2 and 4 micro-batches and 2, 4 and 8
layers, for each layer spec the installation has:

* ``local``: Megatron-Core's modules on plain PyTorch (``get_gpt_layer_local_spec``);
* ``transformer_engine``: Transformer Engine's modules (``get_gpt_layer_with_transformer_engine_spec``), the spec of
  ``--transformer-impl transformer_engine`` (Megatron-LM's default), where ``transformer_engine.pytorch`` imports;
  ``transformer_engine_fused`` the same with the fusions Megatron-LM switches on by default
  (:data:`MEGATRON_LM_FUSIONS`), ``transformer_engine_moe`` with experts (grouped GEMM).

The image has no Transformer Engine: ``pack_te.sh`` prepares one here and ``run_te_host.sh`` runs this script with it
on the lent machine, beside the ``local`` spec on the same lease.

Writes ``megatron_host.csv`` (spec, layers, micro-batches, median step seconds, CUDA kernels launched per step when
the profiler is available) and ``environment.json`` (``measure.py``'s, plus the Megatron-Core and Transformer Engine
versions).  The host time per layer and micro-batch is the slope of the step time over the micro-batches at a fixed
number of layers, divided by the layers (the optimizer's once-a-step work drops out); the reader fits it, not this
script.

Megatron-Core is not in PyTorch's image and the device machine reaches no index.  Its pure-Python ``megatron``
folder travels with the working tree (the compiled helper in the wheel serves only the datasets, unused here)::

    # here: 2.6 MB, ignored by git
    pip download megatron-core==0.16.1 --no-deps -d /tmp/w && mkdir -p benchmarks/gpu/vendor
    python -m zipfile -e /tmp/w/megatron_core-0.16.1-*.whl benchmarks/gpu/vendor
    # on the device (run's carry: ["benchmarks/gpu/vendor"])
    PYTHONPATH=benchmarks/gpu/vendor python3 benchmarks/gpu/measure_megatron_host.py $OUT

Without Transformer Engine only the ``local`` rows are written (its core wheel is 185 MB, over what travels:
``pack_te.sh`` makes it 23 MB).  On a machine without a GPU the script runs on the CPU
(gloo, Megatron-Core's CUDA-only calls stubbed), which checks it end to end (about 10 s here) but measures nothing of use.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402

from measure import DEVICE, QUICK, environment, median_step_seconds, writer  # noqa: E402

def _ints(name: str, default: tuple[int, ...]) -> tuple[int, ...]:
    text = os.environ.get(name, "")
    return tuple(int(v) for v in text.split(",") if v) or default


# LGACC_WIDTHS, LGACC_TOKENS, LGACC_LAYERS, LGACC_MICRO_BATCHES, LGACC_REPEATS set others: wider layers, whose GPU
# work is no longer negligible, check how the host's time and the device's compose into a step (head size 64)
WIDTHS, TOKENS, VOCAB = _ints("LGACC_WIDTHS", (64,)), _ints("LGACC_TOKENS", (64,))[0], _ints("LGACC_VOCAB", (256,))[0]
# a published run's own shape (LGACC_HEADS, LGACC_MICRO_BATCH_SIZE sequences a micro-batch, LGACC_DROPOUT): the
# defaults are the host-bound layer's (64 per head above width 64, else 4 heads; one sequence; no dropout)
HEADS = _ints("LGACC_HEADS", (0,))[0]
MICRO_BATCH_SIZE = _ints("LGACC_MICRO_BATCH_SIZE", (1,))[0]
DROPOUT = float(os.environ.get("LGACC_DROPOUT", 0.0))
LAYERS = _ints("LGACC_LAYERS", (2, 4) if QUICK else (2, 4, 8))
MICRO_BATCHES = _ints("LGACC_MICRO_BATCHES", (1, 2) if QUICK else (1, 2, 4))
REPEATS = _ints("LGACC_REPEATS", (5 if QUICK else 30,))[0]
# the MoE rows: every MLP a router over EXPERTS experts, TOPK of them per token, no expert parallelism (one GPU),
# Megatron-Core's default token dispatcher; what the fine-grained MoE runs (Qwen3-30B-A3B: 128 experts, top 8) pay
# per layer beyond their flops is the router, the permutation and one small product per expert
# (LGACC_EXPERTS and LGACC_TOPK set others: 128 and 8 are Qwen3-30B-A3B's)
BF16 = DEVICE == "cuda" or bool(os.environ.get("LGACC_BF16_ON_CPU"))  # the latter: a CPU check of the bf16 path
DDP_KEY = "ddp"  # a spec's entry for the DistributedDataParallelConfig, not the TransformerConfig
FORWARD_ONLY_KEY = "forward_only"  # a spec's entry for the schedule: forward passes only
# (LGACC_SPECS=name,name measures those specs only)
EXPERTS, TOPK = int(os.environ.get("LGACC_EXPERTS", 8)), int(os.environ.get("LGACC_TOPK", 2))
#: the fusions Megatron-LM's arguments switch on unless told not to (--no-bias-gelu-fusion, --no-bias-dropout-fusion,
#: --no-masked-softmax-fusion, --no-persist-layer-norm); not its gradient_accumulation_fusion, which the GPT
#: model's output layer (Megatron-Core's own ColumnParallelLinear) runs only with Apex's fused_weight_gradient_mlp_cuda,
#: absent from the image (refused at the first step, 2026-11-28)
MEGATRON_LM_FUSIONS = {"bias_activation_fusion": True,
                       "bias_dropout_fusion": True, "masked_softmax_fusion": True, "persist_layer_norm": True}
MOE = {"num_moe_experts": EXPERTS, "moe_router_topk": TOPK, "moe_aux_loss_coeff": 0.0, "add_bias_linear": False}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def initialise() -> None:
    """One rank, tensor and pipeline degree 1: the single-GPU process Megatron-Core expects."""
    from megatron.core import parallel_state

    if DEVICE != "cuda":  # smoke test only: Megatron-Core places its buffers on torch.cuda.current_device()
        torch.cuda.current_device = lambda: "cpu"
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(free_port()))
    torch.distributed.init_process_group("nccl" if DEVICE == "cuda" else "gloo", rank=0, world_size=1)
    if DEVICE == "cuda":
        torch.cuda.set_device(0)
    parallel_state.initialize_model_parallel(1, 1)
    if DEVICE == "cuda":
        from megatron.core.tensor_parallel import model_parallel_cuda_manual_seed

        model_parallel_cuda_manual_seed(0)
    else:  # smoke test only: no CUDA generator to fork (dropout is off)
        import contextlib

        from megatron.core.tensor_parallel import get_cuda_rng_tracker

        from megatron.core.tensor_parallel import random as tp_random

        tracker = get_cuda_rng_tracker()
        tracker.fork = lambda *args, **kwargs: contextlib.nullcontext()
        tracker.get_states, tracker.set_states = dict, lambda states: None
        # recomputation saves and restores the CUDA generator's state: the CPU's here
        tp_random._get_cuda_rng_state = lambda *args, **kwargs: torch.get_rng_state()
        tp_random._set_cuda_rng_state = lambda state, *args, **kwargs: torch.set_rng_state(state)


def specs() -> dict:
    """The layer specs this installation can build: ``local`` always, ``transformer_engine`` where TE imports."""
    from megatron.core.models.gpt import gpt_layer_specs as layer_specs

    from megatron.core.transformer.moe import moe_utils

    # Megatron-Core 0.16.1 leaves te_general_gemm undefined when TE does not import, and its router reads it
    moe_utils.__dict__.setdefault("te_general_gemm", None)
    local, moe = layer_specs.get_gpt_layer_local_spec, {"num_experts": EXPERTS}
    out = {"local": (local, {}), "local_moe": (lambda: local(**moe), MOE),
           # the same layer recomputed (Megatron-LM's --recompute-granularity full --recompute-method uniform
           # --recompute-num-layers 1; selective: the attention core only), and reduced as the runs reduce it
           # (--overlap-grad-reduce with the distributed optimizer's buffer layout: hooks per bucket)
           "local_recompute_full": (local, {"recompute_granularity": "full", "recompute_method": "uniform",
                                            "recompute_num_layers": 1}),
           "local_recompute_selective": (local, {"recompute_granularity": "selective"}),
           "local_overlap_grad_reduce": (local, {DDP_KEY: {"overlap_grad_reduce": True,
                                                           "use_distributed_optimizer": True}}),
           # the forward passes alone (the schedule's forward_only, autograd still recording): what of a layer's
           # host time its forward takes, which Megatron-LM's pipeline waits for at each point-to-point exchange
           "local_forward_only": (local, {FORWARD_ONLY_KEY: True})}
    try:
        import transformer_engine.pytorch  # noqa: F401 - the modules the TE spec builds, not only the package
    except Exception as error:  # noqa: BLE001 - recorded: TE absent or broken on this image
        print(f"transformer_engine not usable here ({type(error).__name__}: {error}); local spec only", flush=True)
    else:
        te = layer_specs.get_gpt_layer_with_transformer_engine_spec
        out["transformer_engine"] = (te, {})
        out["transformer_engine_moe"] = (lambda: te(**moe, moe_grouped_gemm=True), {**MOE, "moe_grouped_gemm": True})
        # the same layer with the fusions Megatron-LM switches on by default (its arguments.py: each a --no-... flag),
        # TE's weight-gradient accumulation into the fp32 main_grad among them
        out["transformer_engine_fused"] = (te, MEGATRON_LM_FUSIONS)
    wanted = [name for name in os.environ.get("LGACC_SPECS", "").split(",") if name]
    return {name: spec for name, spec in out.items() if not wanted or name in wanted}


def build(make_spec, extra: dict, layers: int, width: int):
    """A bf16 GPTModel in Megatron-Core's DDP wrapper with fp32 gradient buffers, and its optimizer; ``extra`` adds
    to the TransformerConfig, its ``DDP_KEY`` entry to the DistributedDataParallelConfig."""
    extra = dict(extra)
    extra.pop(FORWARD_ONLY_KEY, None)
    ddp_extra = {"overlap_grad_reduce": False, "use_distributed_optimizer": False, **extra.pop(DDP_KEY, {})}
    from megatron.core.distributed import DistributedDataParallel, DistributedDataParallelConfig
    from megatron.core.models.gpt import GPTModel
    from megatron.core.transformer.transformer_config import TransformerConfig

    # every fusion off unless the spec's extras switch it on (MEGATRON_LM_FUSIONS: Megatron-LM's own defaults)
    settings = dict(
        num_layers=layers, hidden_size=width,
        num_attention_heads=HEADS or (max(1, width // 64) if width > 64 else 4),
        ffn_hidden_size=4 * width,
        hidden_dropout=DROPOUT, attention_dropout=DROPOUT, bf16=BF16, params_dtype=torch.bfloat16 if BF16 else torch.float32,
        pipeline_dtype=torch.bfloat16 if BF16 else torch.float32,
        use_cpu_initialization=DEVICE != "cuda", gradient_accumulation_fusion=False,
        bias_activation_fusion=False, bias_dropout_fusion=False, masked_softmax_fusion=False,
        apply_rope_fusion=False, persist_layer_norm=False)
    config = TransformerConfig(**{**settings, **extra})
    model = GPTModel(config=config, transformer_layer_spec=make_spec(), vocab_size=VOCAB,
                     max_sequence_length=TOKENS, position_embedding_type="learned_absolute")
    if DEVICE == "cuda" or os.environ.get("LGACC_BF16_ON_CPU"):
        # as Megatron-LM's get_model: Float16Module casts every parameter (norms included) and the inputs to bf16
        from megatron.core.transformer.module import Float16Module

        model = Float16Module(config, model)
    if DEVICE == "cuda":
        model = model.cuda()
        ddp = DistributedDataParallelConfig(grad_reduce_in_fp32=True, **ddp_extra)
        model = DistributedDataParallel(config=config, ddp_config=ddp, module=model)
    # on the CPU (a smoke test) the module runs bare: Megatron-Core's gradient buffers allocate on the GPU
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=DEVICE == "cuda")
    return config, model, optimizer


def make_step(config, model, optimizer, micro_batches: int, forward_only: bool = False):
    from megatron.core.pipeline_parallel import get_forward_backward_func

    forward_backward = get_forward_backward_func()
    device = torch.device(DEVICE)
    tokens = torch.randint(0, VOCAB, (MICRO_BATCH_SIZE, TOKENS), device=device)
    positions = torch.arange(TOKENS, device=device).unsqueeze(0).expand(MICRO_BATCH_SIZE, -1)
    mask = torch.ones(1, 1, TOKENS, TOKENS, dtype=torch.bool, device=device).tril().logical_not()
    labels = torch.randint(0, VOCAB, (MICRO_BATCH_SIZE, TOKENS), device=device)

    def batches():
        while True:
            yield tokens

    def forward_step(data, model_chunk):
        next(data)
        loss = model_chunk(tokens, positions, mask, labels=labels)

        def loss_func(output):
            value = output.float().mean()
            return value, {"loss": value.detach()}

        return loss, loss_func

    wrapped = hasattr(model, "zero_grad_buffer")

    def step():
        if wrapped:
            model.zero_grad_buffer()
        optimizer.zero_grad(set_to_none=False)
        if DEVICE == "cuda":
            forward_backward(forward_step_func=forward_step, data_iterator=batches(), model=model,
                             num_microbatches=micro_batches, seq_length=TOKENS, micro_batch_size=MICRO_BATCH_SIZE,
                             forward_only=forward_only)
        else:  # Megatron-Core's schedule allocates on the GPU: the same passes, by hand (smoke test)
            data = batches()
            for _ in range(micro_batches):
                output, loss_func = forward_step(data, model)
                if not forward_only:
                    (loss_func(output)[0] / micro_batches).backward()
        if wrapped:
            model.finish_grad_sync()
        for p in model.parameters():  # Megatron's optimizer reads main_grad; AdamW reads .grad
            if getattr(p, "main_grad", None) is not None:
                p.grad = p.main_grad.to(p.dtype)
        optimizer.step()

    return step


def busy_seconds(intervals: list[tuple[float, float]]) -> float:
    """The length of the union of ``(start, end)`` intervals (microseconds in, seconds out): the device's busy time
    whatever its streams overlap."""
    total, reach = 0.0, float("-inf")
    for start, end in sorted(intervals):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total * 1e-6


def kernels_per_step(step) -> tuple[int | str, str]:
    """The CUDA kernels one step launches and the seconds the device is busy with them (one profiled step; empty
    where the profiler is unavailable)."""
    if DEVICE != "cuda":
        return "", ""
    try:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            step()
            torch.cuda.synchronize()
        kernels = [e for e in prof.events() if e.device_type.name == "CUDA"]
    except Exception:  # noqa: BLE001 - recorded as unavailable
        return "", ""
    try:
        busy = f"{busy_seconds([(e.time_range.start, e.time_range.end) for e in kernels]):.6f}"
    except Exception as error:  # noqa: BLE001 - the count is kept without the busy time
        print(f"device busy time unavailable: {type(error).__name__}: {error}", flush=True)
        busy = ""
    return len(kernels), busy


def main() -> int:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    initialise()
    env = environment(out)
    import megatron.core

    env["megatron_core"] = getattr(megatron.core, "__version__", "unknown")
    try:
        import transformer_engine

        env["transformer_engine"] = getattr(transformer_engine, "__version__", "unknown")
    except Exception as error:  # noqa: BLE001
        env["transformer_engine"] = f"unavailable: {type(error).__name__}"
    (out / "environment.json").write_text(json.dumps(env, indent=1))
    handle, rows = writer(out, "megatron_host.csv", ["spec", "layers", "micro_batches", "tokens", "width", "experts",
                                                    "topk", "step_seconds", "kernels",
                                                    "device_busy_seconds", "heads", "micro_batch_size", "vocab",
                                                    "dropout"])
    started = time.perf_counter()
    for name, (make_spec, extra) in specs().items():
        for width in WIDTHS:
            for layers in LAYERS:
                try:
                    config, model, optimizer = build(make_spec, extra, layers, width)
                    for micro_batches in MICRO_BATCHES:
                        step = make_step(config, model, optimizer, micro_batches, bool(extra.get(FORWARD_ONLY_KEY)))
                        for _ in range(3):  # warm-up: allocator, cuBLAS handles, TE's first-call work
                            step()
                        seconds = median_step_seconds(step, REPEATS)
                        kernels, busy = kernels_per_step(step)
                        rows.writerow({"spec": name, "layers": layers, "micro_batches": micro_batches,
                                       "tokens": TOKENS, "width": width,
                                       "experts": EXPERTS if "num_moe_experts" in extra else "",
                                       "topk": TOPK if "num_moe_experts" in extra else "",
                                       "step_seconds": f"{seconds:.6f}", "kernels": kernels,
                                       "device_busy_seconds": busy, "heads": config.num_attention_heads,
                                       "micro_batch_size": MICRO_BATCH_SIZE, "vocab": VOCAB, "dropout": DROPOUT})
                        handle.flush()
                        print(f"{name:20s} width {width} layers {layers} micro-batches {micro_batches}: "
                              f"{seconds * 1e3:8.2f} ms ({time.perf_counter() - started:.0f} s)", flush=True)
                    del model, optimizer
                    if DEVICE == "cuda":
                        torch.cuda.empty_cache()
                except Exception as error:  # noqa: BLE001 - one spec failing must not lose the other's rows
                    print(f"{name} width {width} layers {layers}: failed: {type(error).__name__}: {error}",
                          flush=True)
                    break
    handle.close()
    torch.distributed.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
