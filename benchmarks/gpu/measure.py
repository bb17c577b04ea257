"""Measure, on one GPU with PyTorch, what the calibrated model assumes (issue #35 item 7); not a test, never run by CI.

    python3 benchmarks/gpu/measure.py OUT_DIR [--quick]

writes into OUT_DIR:

* ``gemm.csv``: matrix-multiply time by shape ``(M, N, K)`` and precision (bf16, fp16, tf32, fp8 through
  ``torch._scaled_mm`` where the GPU has it): the efficiency over peak, against the spec's
  ``gemm_max_efficiency`` and the model's fixed time per kernel (``kernel_latency_s``);
* ``attention.csv``: causal fused attention (``scaled_dot_product_attention``, the flash back end) forward and
  forward + backward by sequence length and head size: the model's ``attention_efficiency``;
* ``bandwidth.csv``: device-to-device copy and elementwise add by size: the model's ``hbm_efficiency``;
* ``launch.csv``: the time per kernel of a stream of tiny kernels (the GPU's floor) and of the host launching them;
* ``training.csv``: a GPT-like transformer's training step on one GPU (mixed precision, AdamW): peak memory
  allocated and reserved, the static part (weights, gradients, optimizer states) and the step time, with and
  without full activation recomputation;
* ``environment.json``: the GPU, driver, PyTorch and CUDA versions, and the clocks as found.

Timing: CUDA events around a loop of back-to-back launches after a warm-up, the median of several loops;
inputs are random (never zeros), several input sets rotated where a tensor fits in L2. The card's settings
are left as found. ``--quick`` runs a few shapes of each kind (a CPU dry run of the script's logic uses it).

Environment overrides, for a later lease that measures one part again at other points: ``LGACC_PARTS`` (the parts
to run, comma-separated, of ``launches``, ``bandwidth``, ``gemm``, ``attention``, ``training``; all by default),
``LGACC_ATTENTION_HEAD_DIMS`` (64,128 by default) and ``LGACC_ATTENTION_SEQS`` (1024 to 16384 by default).
"""

from __future__ import annotations

import csv
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
QUICK = "--quick" in sys.argv
L2_BYTES = 64 * 1024 ** 2


def _env_ints(name: str, default: tuple[int, ...]) -> tuple[int, ...]:
    """Comma-separated integers from the environment variable ``name``, else ``default``."""
    return tuple(int(v) for v in os.environ.get(name, "").split(",") if v.strip()) or default


def output_folder(usage: str) -> Path | None:
    """The one positional argument, a folder, made if missing; ``None`` after printing ``usage`` where the
    command line does not hold exactly one (the caller exits 2)."""
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        print(usage)
        return None
    out = Path(args[0])
    out.mkdir(parents=True, exist_ok=True)
    return out


def sync() -> None:
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def time_loop(fn, min_seconds: float = 0.02, loops: int = 5, max_reps: int = 2000) -> float:
    """Median seconds per call of ``fn`` over ``loops`` loops of back-to-back calls (CUDA events)."""
    for _ in range(3):
        fn()
    sync()
    start = time.perf_counter()
    fn()
    sync()
    once = max(time.perf_counter() - start, 1e-6)
    reps = int(min(max_reps, max(3, min_seconds / once)))
    if QUICK:
        reps, loops = 2, 2
    times = []
    for _ in range(loops):
        if DEVICE == "cuda":
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            begin.record()
            for _ in range(reps):
                fn()
            end.record()
            end.synchronize()
            times.append(begin.elapsed_time(end) / 1e3 / reps)
        else:
            t0 = time.perf_counter()
            for _ in range(reps):
                fn()
            times.append((time.perf_counter() - t0) / reps)
    return statistics.median(times)


def median_step_seconds(step, repeats: int) -> float:
    """Median wall seconds of ``step`` between two synchronisations, over ``repeats`` calls (a training step:
    host and device together, which CUDA events alone would not show)."""
    times = []
    for _ in range(repeats):
        sync()
        t0 = time.perf_counter()
        step()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def writer(out: Path, name: str, fields: list[str]):
    handle = open(out / name, "w", newline="")
    w = csv.DictWriter(handle, fieldnames=fields)
    w.writeheader()
    return handle, w


def environment(out: Path) -> dict:
    env = {"torch": torch.__version__, "cuda": torch.version.cuda, "device": DEVICE,
           "python": sys.version.split()[0], "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if DEVICE == "cuda":
        p = torch.cuda.get_device_properties(0)
        env.update(gpu=p.name, multiprocessors=p.multi_processor_count, memory_bytes=p.total_memory,
                   cudnn=torch.backends.cudnn.version())
        try:
            env["nvidia_smi"] = subprocess.run(
                ["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,"
                 "memory.total", "--format=csv"], capture_output=True, text=True, timeout=30).stdout.strip()
        except Exception as error:  # noqa: BLE001 - recorded, not fatal
            env["nvidia_smi"] = f"unavailable: {error}"
    (out / "environment.json").write_text(json.dumps(env, indent=1))
    return env


# --- matrix multiplies -------------------------------------------------------------------------------------------

def gemm_shapes() -> list[tuple[str, int, int, int]]:
    """Square GEMMs, then a transformer layer's four linear layers (tokens x hidden), whole and split 8 ways."""
    shapes = [("square", n, n, n) for n in (256, 512, 1024, 2048, 4096, 8192, 16384)]
    for d in (1024, 2048, 4096, 8192, 12288):
        for tokens in (2048, 8192, 16384):
            for tp in (1, 8):
                for name, n, k in (("qkv", 3 * d // tp, d), ("proj", d, d // tp), ("fc1", 4 * d // tp, d),
                                   ("fc2", d, 4 * d // tp)):
                    shapes.append((f"{name}_tp{tp}_d{d}", tokens, n, k))
    if QUICK:
        shapes = shapes[:3] + shapes[7:9]
    return shapes


def measure_gemms(out: Path, budget_s: float) -> None:
    fields = ["label", "precision", "M", "N", "K", "flops", "seconds", "tflops"]
    handle, w = writer(out, "gemm.csv", fields)
    precisions = ["bf16", "fp16", "tf32", "fp8"] if DEVICE == "cuda" else ["fp32"]
    deadline = time.perf_counter() + budget_s
    torch.backends.cuda.matmul.allow_tf32 = True
    for precision in precisions:
        for label, m, n, k in gemm_shapes():
            if precision != "bf16" and not label.startswith(("square", "fc1_tp1")):
                continue  # the other precisions on the squares and one layer kind
            if time.perf_counter() > deadline:
                print("gemm: time budget spent", flush=True)
                handle.close()
                return
            try:
                fn = _gemm(precision, m, n, k)
                if fn is None:
                    continue
                seconds = time_loop(fn)
            except Exception as error:  # noqa: BLE001 - a shape or precision the GPU refuses is recorded
                print(f"gemm {precision} {m}x{n}x{k}: {type(error).__name__}: {str(error)[:120]}", flush=True)
                continue
            flops = 2.0 * m * n * k
            w.writerow({"label": label, "precision": precision, "M": m, "N": n, "K": k, "flops": flops,
                        "seconds": f"{seconds:.6e}", "tflops": f"{flops / seconds / 1e12:.2f}"})
            handle.flush()
    handle.close()


def _gemm(precision: str, m: int, n: int, k: int):
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "tf32": torch.float32, "fp32": torch.float32,
             "fp8": torch.bfloat16}[precision]
    sets = max(1, min(4, math.ceil(2 * L2_BYTES / max(1, 2 * (m * k + k * n)))))  # rotate inputs past the L2
    a = [torch.randn(m, k, device=DEVICE, dtype=dtype) for _ in range(sets)]
    b = [torch.randn(n, k, device=DEVICE, dtype=dtype) for _ in range(sets)]
    i = [0]
    if precision == "fp8":
        if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
            return None
        a8 = [x.to(torch.float8_e4m3fn) for x in a]
        b8 = [x.to(torch.float8_e4m3fn) for x in b]  # (n, k) row-major: its transpose is column-major, as required
        one = torch.ones((), device=DEVICE, dtype=torch.float32)

        def fn():
            j = i[0] = (i[0] + 1) % sets
            return torch._scaled_mm(a8[j], b8[j].t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        return fn

    def fn():
        j = i[0] = (i[0] + 1) % sets
        return a[j] @ b[j].t()  # the (M, K) x (K, N) product of a linear layer's forward, weights stored (N, K)
    return fn


# --- attention ---------------------------------------------------------------------------------------------------

def measure_attention(out: Path, budget_s: float) -> None:
    fields = ["backend", "batch", "heads", "seq", "head_dim", "pass", "flops", "seconds", "tflops"]
    handle, w = writer(out, "attention.csv", fields)
    deadline = time.perf_counter() + budget_s
    head_dims = _env_ints("LGACC_ATTENTION_HEAD_DIMS", (64, 128))
    seqs = _env_ints("LGACC_ATTENTION_SEQS", (1024, 2048, 4096, 8192, 16384))
    cases = [(s, hd) for hd in head_dims for s in seqs]
    if QUICK:
        cases = [(128, 64)]
    import contextlib
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        backends = ([("flash", lambda: sdpa_kernel([SDPBackend.FLASH_ATTENTION])),
                     ("cudnn", lambda: sdpa_kernel([SDPBackend.CUDNN_ATTENTION]))] if DEVICE == "cuda"
                    else [("math", lambda: sdpa_kernel([SDPBackend.MATH]))])  # a context manager serves once
    except Exception:  # noqa: BLE001
        backends = [("default", contextlib.nullcontext)]
    dtype = torch.bfloat16 if DEVICE == "cuda" else torch.float32
    for (backend_name, backend), (seq, head_dim) in ((b, case) for b in backends for case in cases):
        with backend():
            if time.perf_counter() > deadline:
                print("attention: time budget spent", flush=True)
                break
            heads = 2048 // head_dim  # a 2048-wide layer's heads
            batch = max(1, 16384 // seq)  # 16 k tokens
            try:
                q, k, v = (torch.randn(batch, heads, seq, head_dim, device=DEVICE, dtype=dtype, requires_grad=True)
                           for _ in range(3))
                grad = torch.randn(batch, heads, seq, head_dim, device=DEVICE, dtype=dtype)

                def forward():
                    return F.scaled_dot_product_attention(q, k, v, is_causal=True)

                def forward_backward():
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                    o.backward(grad)
                    q.grad = k.grad = v.grad = None

                with torch.no_grad():
                    t_fwd = time_loop(forward)
                t_all = time_loop(forward_backward)
            except Exception as error:  # noqa: BLE001
                print(f"attention {seq} {head_dim}: {type(error).__name__}: {str(error)[:120]}", flush=True)
                continue
            # causal: half of the 4 b h s^2 d flops of the scores and the weighted values; backward 2.5 times that
            flops_fwd = 4.0 * batch * heads * seq * seq * head_dim / 2
            for name, flops, seconds in (("forward", flops_fwd, t_fwd), ("forward+backward", 3.5 * flops_fwd, t_all)):
                w.writerow({"backend": backend_name, "batch": batch, "heads": heads, "seq": seq, "head_dim": head_dim,
                            "pass": name, "flops": flops, "seconds": f"{seconds:.6e}",
                            "tflops": f"{flops / seconds / 1e12:.2f}"})
            handle.flush()
            del q, k, v, grad
    handle.close()


# --- memory bandwidth and launches ---------------------------------------------------------------------------------

def measure_bandwidth(out: Path) -> None:
    fields = ["operation", "bytes_per_tensor", "bytes_moved", "seconds", "gb_per_s"]
    handle, w = writer(out, "bandwidth.csv", fields)
    sizes = [2 ** p for p in range(20, 32, 1)] if not QUICK else [2 ** 20]
    for size in sizes:
        n = size // 2
        x = torch.randn(n, device=DEVICE, dtype=torch.bfloat16)
        y = torch.randn(n, device=DEVICE, dtype=torch.bfloat16)
        z = torch.empty_like(x)
        for operation, moved, fn in (("copy", 2 * size, lambda: z.copy_(x)),
                                     ("add", 3 * size, lambda: torch.add(x, y, out=z))):
            seconds = time_loop(fn)
            w.writerow({"operation": operation, "bytes_per_tensor": size, "bytes_moved": moved,
                        "seconds": f"{seconds:.6e}", "gb_per_s": f"{moved / seconds / 1e9:.1f}"})
        handle.flush()
        del x, y, z
    handle.close()


def measure_launches(out: Path) -> None:
    fields = ["what", "kernels", "seconds_per_kernel"]
    handle, w = writer(out, "launch.csv", fields)
    x = torch.randn(1024, device=DEVICE)
    n = 20 if QUICK else 2000
    w.writerow({"what": "device time per tiny kernel (back to back, CUDA events)", "kernels": n,
                "seconds_per_kernel": f"{time_loop(lambda: x.add_(1.0), max_reps=n):.3e}"})
    sync()
    t0 = time.perf_counter()
    for _ in range(n):
        x.add_(1.0)
    host = (time.perf_counter() - t0) / n
    sync()
    w.writerow({"what": "host time to launch a tiny kernel (torch eager, no wait)", "kernels": n,
                "seconds_per_kernel": f"{host:.3e}"})
    if DEVICE == "cuda":
        try:
            g = torch.cuda.CUDAGraph()
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                x.add_(1.0)
            torch.cuda.current_stream().wait_stream(s)
            with torch.cuda.graph(g):
                for _ in range(100):
                    x.add_(1.0)
            seconds = time_loop(g.replay) / 100
            w.writerow({"what": "device time per tiny kernel in a CUDA graph", "kernels": 100,
                        "seconds_per_kernel": f"{seconds:.3e}"})
        except Exception as error:  # noqa: BLE001
            print(f"graph: {type(error).__name__}: {error}", flush=True)
    handle.close()


# --- a training step's memory and time ------------------------------------------------------------------------------

class Block(nn.Module):
    """A GPT block: pre-norm, fused QKV, causal flash attention, a 4x GELU MLP; no dropout, biases on."""

    def __init__(self, d: int, heads: int):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, s, d)
        x = x + self.proj(a)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, d: int, layers: int, heads: int, vocab: int, seq: int, recompute: bool):
        super().__init__()
        self.recompute = recompute
        self.embed, self.position = nn.Embedding(vocab, d), nn.Embedding(seq, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens) + self.position(torch.arange(tokens.shape[1], device=tokens.device))
        for block in self.blocks:
            if self.recompute:
                x = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
            else:
                x = block(x)
        return self.head(self.ln(x))


def training_configs() -> list[dict]:
    configs = []
    for d, layers, heads in ((1024, 8, 16), (2048, 8, 16), (4096, 4, 32)):
        for seq, b_mu in ((1024, 4), (2048, 2), (2048, 8), (4096, 1)):
            for recompute in (False, True):
                configs.append(dict(d=d, layers=layers, heads=heads, seq=seq, b_mu=b_mu, recompute=recompute,
                                    vocab=50304))
    if QUICK:
        configs = [dict(d=64, layers=2, heads=4, seq=32, b_mu=2, recompute=r, vocab=256) for r in (False, True)]
    return configs


def measure_training(out: Path, budget_s: float) -> None:
    fields = ["d_m", "d_l", "d_a", "d_s", "b_mu", "vocab", "recompute", "parameters", "static_allocated_bytes",
              "peak_allocated_bytes", "peak_reserved_bytes", "above_static_bytes", "step_seconds", "model_tflops",
              "recipe"]
    handle, w = writer(out, "training.csv", fields)
    deadline = time.perf_counter() + budget_s
    recipe = ("fp32 weights, gradients and AdamW states (fused), bf16 autocast forward and backward, "
              "flash attention, cross-entropy on fp32 logits, no dropout, no tied embeddings")
    for config in training_configs():
        if time.perf_counter() > deadline:
            print("training: time budget spent", flush=True)
            break
        try:
            row = _train(config)
        except torch.cuda.OutOfMemoryError if DEVICE == "cuda" else MemoryError as error:
            print(f"training {config}: out of memory: {str(error)[:100]}", flush=True)
            row = None
        except Exception as error:  # noqa: BLE001
            print(f"training {config}: {type(error).__name__}: {str(error)[:160]}", flush=True)
            row = None
        finally:
            if DEVICE == "cuda":
                torch.cuda.empty_cache()
        if row:
            w.writerow({**row, "recipe": recipe})
            handle.flush()
    handle.close()


def _train(c: dict) -> dict:
    torch.manual_seed(0)
    if DEVICE == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    with torch.device(DEVICE):  # initialised on the GPU: seconds, not a minute, for a billion weights
        model = GPT(c["d"], c["layers"], c["heads"], c["vocab"], c["seq"], c["recompute"])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=DEVICE == "cuda")
    parameters = sum(p.numel() for p in model.parameters())
    tokens = torch.randint(0, c["vocab"], (c["b_mu"], c["seq"]), device=DEVICE)
    target = torch.randint(0, c["vocab"], (c["b_mu"], c["seq"]), device=DEVICE)
    autocast = torch.autocast(DEVICE, dtype=torch.bfloat16 if DEVICE == "cuda" else torch.bfloat16)

    def step():
        with autocast:
            logits = model(tokens)
        loss = F.cross_entropy(logits.float().view(-1, c["vocab"]), target.view(-1))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    step()  # optimizer states exist from here on
    step()
    sync()
    static = torch.cuda.memory_allocated() if DEVICE == "cuda" else 0  # weights and AdamW states (gradients freed)
    if DEVICE == "cuda":
        torch.cuda.reset_peak_memory_stats()
    seconds = median_step_seconds(step, 2 if QUICK else 5)
    peak = torch.cuda.max_memory_allocated() if DEVICE == "cuda" else 0
    reserved = torch.cuda.max_memory_reserved() if DEVICE == "cuda" else 0
    # model flops (Narayanan et al. 2021, no recomputation counted): 72 b s L d^2 (1 + s / (6 d) + V / (12 d L))
    b, s, L, d, V = c["b_mu"], c["seq"], c["layers"], c["d"], c["vocab"]
    flops = 72 * b * s * L * d ** 2 * (1 + s / (6 * d) + V / (12 * d * L))
    del model, optimizer, tokens, target
    return {"d_m": c["d"], "d_l": c["layers"], "d_a": c["heads"], "d_s": c["seq"], "b_mu": c["b_mu"],
            "vocab": c["vocab"], "recompute": "full" if c["recompute"] else "none", "parameters": parameters,
            "static_allocated_bytes": static, "peak_allocated_bytes": peak, "peak_reserved_bytes": reserved,
            "above_static_bytes": peak - static, "step_seconds": f"{seconds:.5f}",
            "model_tflops": f"{flops / seconds / 1e12:.1f}"}


def main() -> int:
    out = output_folder(__doc__.splitlines()[2])
    if out is None:
        return 2
    env = environment(out)
    print(json.dumps({k: v for k, v in env.items() if k != "nvidia_smi"}), flush=True)
    t0 = time.perf_counter()
    wanted = {v for v in os.environ.get("LGACC_PARTS", "").split(",") if v}
    for name, run in (("launches", lambda: measure_launches(out)),
                      ("bandwidth", lambda: measure_bandwidth(out)),
                      ("gemm", lambda: measure_gemms(out, 110)),
                      ("attention", lambda: measure_attention(out, 35)),
                      ("training", lambda: measure_training(out, 110))):
        if wanted and name not in wanted:
            continue
        start = time.perf_counter()
        try:
            run()
        except Exception as error:  # noqa: BLE001 - one part failing keeps the others
            print(f"{name} failed: {type(error).__name__}: {error}", flush=True)
        print(f"{name}: {time.perf_counter() - start:.1f} s", flush=True)
    print(f"total {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
