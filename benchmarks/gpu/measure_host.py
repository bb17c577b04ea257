"""Measure, on one GPU with PyTorch, the host's share of an eager training step and the device memory a
reading of NVML holds beyond PyTorch's pool (issue #35); not a test, never run by CI.

    python3 benchmarks/gpu/measure_host.py OUT_DIR [--quick]

writes into OUT_DIR:

* ``host.csv``: training steps of GPT-like models (``measure.py``'s block: pre-norm, fused QKV, flash attention,
  GELU MLP; fp32 weights, bf16 autocast, fused AdamW) run eagerly, by width, layers and micro-batches (gradient
  accumulation): the step's wall time between two synchronisations and the CUDA kernels it launches (profiler).
  At width 64 and 64 tokens the GPU's work is a few microseconds per kernel, so the step time is the host's:
  the slope over layers and micro-batches is the host time per layer per micro-batch (forward and backward),
  the intercept the time per step outside the layers (embedding, loss, optimizer);
* ``device_memory.csv``: the device memory in use (``total - free`` from ``cudaMemGetInfo``, as NVML reads it)
  against PyTorch's ``memory_reserved`` and ``memory_allocated`` at stages of a process's life (CUDA initialised,
  the first cuBLAS product, the first flash attention, training steps of three widths, a one-rank NCCL
  communicator and an all-reduce): what a ``nvidia-smi``/``gpustat`` reading holds beyond the caching
  allocator's pool;
* ``environment.json`` as ``measure.py`` writes it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from measure import DEVICE, GPT, QUICK, environment, median_step_seconds, output_folder, sync, writer  # noqa: E402

MIB = 1024 ** 2
FIRST = "before this process touches CUDA (nvidia-smi only: other processes)"


def device_used() -> int:
    """Bytes in use on the device (every process), as NVML's used memory reads it."""
    if DEVICE != "cuda":
        return 0
    free, total = torch.cuda.mem_get_info()
    return total - free


def smi_used_mib() -> str:
    """The device's used memory as nvidia-smi reads it (MiB, every process), or '' where unavailable."""
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                              capture_output=True, text=True, timeout=20).stdout.strip().splitlines()[0]
    except Exception:  # noqa: BLE001 - recorded as unavailable
        return ""


def process_used_mib() -> str:
    """This process's used memory as nvidia-smi lists it (MiB), or '' where the query is unavailable."""
    try:
        text = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                              capture_output=True, text=True, timeout=20).stdout
    except Exception:  # noqa: BLE001 - recorded as unavailable
        return ""
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 2 and parts[0] == str(os.getpid()):
            return parts[1]
    return ""


def _model(d: int, layers: int, seq: int, vocab: int):
    heads = max(1, d // 64)
    with torch.device(DEVICE):
        model = GPT(d, layers, heads, vocab, seq, recompute=False)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=DEVICE == "cuda")
    return model, optimizer


def _step_fn(model, optimizer, tokens, target, vocab: int, n_mu: int):
    autocast = torch.autocast(DEVICE, dtype=torch.bfloat16)

    def step():
        for _ in range(n_mu):
            with autocast:
                logits = model(tokens)
            loss = F.cross_entropy(logits.float().view(-1, vocab), target.view(-1)) / n_mu
            loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return step


def _kernels(step) -> int:
    """CUDA kernels one step launches (the profiler's device events), -1 where the profiler is unavailable."""
    if DEVICE != "cuda":
        return -1
    try:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            step()
            sync()
        return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
    except Exception as error:  # noqa: BLE001 - recorded, not fatal
        print(f"profiler: {type(error).__name__}: {error}", flush=True)
        return -1


def measure_host(out: Path, budget_s: float) -> None:
    fields = ["d_m", "d_l", "d_s", "b_mu", "n_mu", "vocab", "step_seconds", "kernels_per_step"]
    handle, w = writer(out, "host.csv", fields)
    deadline = time.perf_counter() + budget_s
    cases = [(64, layers, 64, 1, n_mu) for layers in (1, 2, 4, 8, 16, 32) for n_mu in (1, 2, 4, 8)]
    cases += [(d, 8, 1024, 1, 4) for d in (256, 512, 1024, 2048)]  # where the GPU's work takes over
    if QUICK:
        cases = [(32, layers, 16, 1, n_mu) for layers in (1, 2) for n_mu in (1, 2)]
    vocab = 256 if QUICK else 1024
    for d, layers, seq, b_mu, n_mu in cases:
        if time.perf_counter() > deadline:
            print("host: time budget spent", flush=True)
            break
        torch.manual_seed(0)
        model, optimizer = _model(d, layers, seq, vocab)
        tokens = torch.randint(0, vocab, (b_mu, seq), device=DEVICE)
        target = torch.randint(0, vocab, (b_mu, seq), device=DEVICE)
        step = _step_fn(model, optimizer, tokens, target, vocab, n_mu)
        for _ in range(3):
            step()
        seconds = median_step_seconds(step, 3 if QUICK else 15)
        w.writerow({"d_m": d, "d_l": layers, "d_s": seq, "b_mu": b_mu, "n_mu": n_mu, "vocab": vocab,
                    "step_seconds": f"{seconds:.4e}", "kernels_per_step": _kernels(step)})
        handle.flush()
        del model, optimizer, tokens, target, step
        if DEVICE == "cuda":
            torch.cuda.empty_cache()
    handle.close()


def measure_device_memory(out: Path) -> None:
    fields = ["stage", "device_used_bytes", "nvidia_smi_used_mib", "process_used_mib", "reserved_bytes", "allocated_bytes",
              "peak_reserved_bytes", "peak_allocated_bytes"]
    handle, w = writer(out, "device_memory.csv", fields)

    def row(stage: str) -> None:
        cuda = DEVICE == "cuda" and stage != FIRST  # the first row must not create the CUDA context
        if cuda:
            sync()
        smi = smi_used_mib() if DEVICE == "cuda" else ""
        w.writerow({"stage": stage, "device_used_bytes": device_used() if stage != FIRST else "",
                    "nvidia_smi_used_mib": smi,
                    "process_used_mib": process_used_mib() if DEVICE == "cuda" else "",
                    "reserved_bytes": torch.cuda.memory_reserved() if cuda else 0,
                    "allocated_bytes": torch.cuda.memory_allocated() if cuda else 0,
                    "peak_reserved_bytes": torch.cuda.max_memory_reserved() if cuda else 0,
                    "peak_allocated_bytes": torch.cuda.max_memory_allocated() if cuda else 0})
        handle.flush()

    row(FIRST)
    if DEVICE == "cuda":
        torch.cuda.init()
    x = torch.ones(1, device=DEVICE)
    row("CUDA initialised, one tensor")
    a = torch.randn(4096, 4096, device=DEVICE, dtype=torch.bfloat16)
    (a @ a).sum().item()
    row("after the first bf16 cuBLAS product (4096^3)")
    q = torch.randn(2, 16, 2048, 128, device=DEVICE, dtype=torch.bfloat16, requires_grad=True)
    F.scaled_dot_product_attention(q, q, q, is_causal=True).sum().backward()
    row("after the first flash attention forward and backward")
    del a, q, x
    widths = ((256, 2, 256),) if QUICK else ((1024, 8, 2048), (2048, 8, 2048), (4096, 4, 2048))
    for d, layers, seq in widths:
        if DEVICE == "cuda":
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
        vocab = 50304 if not QUICK else 256
        model, optimizer = _model(d, layers, seq, vocab)
        tokens = torch.randint(0, vocab, (2, seq), device=DEVICE)
        step = _step_fn(model, optimizer, tokens, tokens, vocab, 1)
        for _ in range(3):
            step()
        row(f"after 3 training steps, d_m {d}, {layers} layers, 2 x {seq} tokens")
        del model, optimizer, tokens, step
    if DEVICE == "cuda":
        torch.cuda.empty_cache()
        try:
            import torch.distributed as dist
            dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29511", rank=0, world_size=1)
            row("one-rank NCCL process group created")
            t = torch.ones(64 * MIB // 4, device=DEVICE)
            dist.all_reduce(t)
            row("after a 64 MiB all-reduce on the one-rank communicator")
            dist.destroy_process_group()
        except Exception as error:  # noqa: BLE001 - recorded, not fatal
            print(f"nccl: {type(error).__name__}: {error}", flush=True)
    handle.close()


def main() -> int:
    out = output_folder(__doc__.splitlines()[3])
    if out is None:
        return 2
    t0 = time.perf_counter()
    for name, run in (("device memory", lambda: measure_device_memory(out)),
                      ("host", lambda: measure_host(out, 100))):
        start = time.perf_counter()
        try:
            run()
        except Exception as error:  # noqa: BLE001 - one part failing keeps the other
            print(f"{name} failed: {type(error).__name__}: {error}", flush=True)
        print(f"{name}: {time.perf_counter() - start:.1f} s", flush=True)
    environment(out)  # last: reading the device's properties creates the CUDA context the first rows measure
    print(f"total {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
