"""A layer's matrix multiplies timed inside a training step against the same products timed alone (issue #35: what
``kappa``, the calibrated model's GEMM parameter, stands for); not a test, never run by CI.

    python3 benchmarks/gpu/measure_gemm_in_step.py OUT_DIR [--quick]

The calibrated model times a layer's GEMMs at ``kappa`` times the efficiency of a table of isolated products
(``data/calibrated/gemm_tables.yaml``), and ``kappa`` is fitted (0.85) to the runs' step times: "real layers'
matrix-multiply efficiency over the isolated kernel's" is its meaning, not yet a measurement.  This script measures
that ratio directly and tells its two candidate causes apart:

* ``gemm_in_step.csv``, per configuration (width ``d``, layers, heads, sequence ``s``, micro-batch ``b``): the seconds
  the device spends in matrix-multiply kernels during one profiled training step (``measure.py``'s GPT under bf16
  autocast with fused AdamW; a kernel is a GEMM when cuBLAS or CUTLASS named it, attention kernels excluded), the
  same products timed alone as the layer-GEMM table times them (``measure_gemm_table.products``: loops of at least
  5 ms, inputs rotated past the L2), their ratio ``isolated_over_in_step`` (the in-step efficiency over the isolated
  one, ``kappa``'s meaning), and the SM clock sampled while steps run and while the isolated products run;
* ``gemm_sustained.csv``: one product per configuration (the feed-forward's first forward product) timed in a short
  loop and in a sustained loop of ``LGACC_SUSTAIN_S`` seconds (default 2), with the SM clock and power sampled
  during each, so that a clock that drops under sustained load shows apart from what a step's neighbours cost;
* ``gemm_in_step_kernels.csv``: each profiled step's ten longest GEMM kernels by name (the classification's audit);
* ``environment.json`` (``measure.py``'s).

Settings: ``LGACC_WIDTHS`` (default 2048,4096,8192), ``LGACC_TOKENS`` (tokens per micro-batch, default 8192, split as
``s`` = 2048 and ``b`` = tokens / 2048), ``LGACC_LAYERS`` (default: 4, fewer where a width's weights would pass
about 1.2 billion: one layer at 8192), ``LGACC_SUSTAIN_S``.  ``--quick``: one tiny
configuration (and, without a GPU, the CPU's operators, to check the script's logic only).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
import measure  # noqa: E402  (the model, the timing loop and the environment record)
import measure_gemm_table  # noqa: E402  (the isolated products, as the layer-GEMM table times them)

QUICK = measure.QUICK
CUDA = measure.DEVICE == "cuda"
#: Name fragments of matrix-multiply kernels (cuBLAS's sm90_xmma / nvjet / *gemm*, CUTLASS's) and of the attention
#: kernels that share some of them (FlashAttention's, cuDNN's fused attention), which are not counted.
GEMM_NAMES = ("gemm", "xmma", "nvjet", "cutlass", "cublas")
ATTENTION_NAMES = ("flash", "fmha", "sdpa", "attention", "attn")
#: Without a GPU (``--quick`` only): the CPU operators that are matrix multiplies.
CPU_GEMM_OPS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::matmul")


def is_gemm(name: str) -> bool:
    lowered = name.lower()
    if not CUDA:
        return name in CPU_GEMM_OPS
    return any(part in lowered for part in GEMM_NAMES) and not any(part in lowered for part in ATTENTION_NAMES)


def configurations() -> list[dict]:
    if QUICK:
        return [dict(d=256, layers=2, heads=4, seq=256, b_mu=2, vocab=1024)]
    widths = measure._env_ints("LGACC_WIDTHS", (2048, 4096, 8192))
    tokens = measure._env_ints("LGACC_TOKENS", (8192,))[0]
    seq = min(2048, tokens)

    def layers(d: int) -> int:  # at most about 1.2 B layer weights, so fp32 AdamW fits an 80 GB H100 beside the head
        return measure._env_ints("LGACC_LAYERS", (max(1, min(4, int(1.2e9 // (12 * d * d)))),))[0]

    return [dict(d=d, layers=layers(d), heads=d // 128, seq=seq, b_mu=max(1, tokens // seq), vocab=50304)
            for d in widths]


def step_products(c: dict) -> list[tuple[str, int, int, int, int]]:
    """``(linear, count, m, n, k)``: every Linear of one step's model with its (m tokens, n out, k in) and how many
    there are (the layers' four, the head's one); each runs the three products of ``measure_gemm_table.products``."""
    m, d = c["b_mu"] * c["seq"], c["d"]
    return [("qkv", c["layers"], m, 3 * d, d), ("proj", c["layers"], m, d, d), ("fc1", c["layers"], m, 4 * d, d),
            ("fc2", c["layers"], m, d, 4 * d), ("head", 1, m, c["vocab"], d)]


class ClockSampler:
    """The SM clock (MHz) and power (W) every ``period`` seconds from ``nvidia-smi`` while a ``with`` block runs
    (empty without a GPU or without ``nvidia-smi``)."""

    def __init__(self, period: float = 0.25):
        self.period, self.samples, self._stop = period, [], threading.Event()

    def _read(self) -> tuple[float, float] | None:
        try:
            text = subprocess.run(["nvidia-smi", "--id=0", "--query-gpu=clocks.sm,power.draw",
                                   "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=5).stdout
            clock, power = (float(v) for v in text.strip().split(",")[:2])
            return clock, power
        except Exception:  # noqa: BLE001 - no sample rather than no measurement
            return None

    def _run(self) -> None:
        while not self._stop.is_set():
            sample = self._read()
            if sample:
                self.samples.append(sample)
            self._stop.wait(self.period)

    def __enter__(self):
        if CUDA:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if CUDA:
            self._thread.join(timeout=10)

    def median(self, index: int) -> str:
        return f"{statistics.median(s[index] for s in self.samples):.0f}" if self.samples else ""


def train_step(c: dict):
    """``measure.py``'s GPT at configuration ``c`` and its training step (bf16 autocast, fused AdamW)."""
    torch.manual_seed(0)
    with torch.device(measure.DEVICE):
        model = measure.GPT(c["d"], c["layers"], c["heads"], c["vocab"], c["seq"], False)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=CUDA)
    tokens = torch.randint(0, c["vocab"], (c["b_mu"], c["seq"]), device=measure.DEVICE)
    target = torch.randint(0, c["vocab"], (c["b_mu"], c["seq"]), device=measure.DEVICE)

    def step():
        with torch.autocast(measure.DEVICE, dtype=torch.bfloat16):
            logits = model(tokens)
        F.cross_entropy(logits.float().view(-1, c["vocab"]), target.view(-1)).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return step


def profiled_gemms(step) -> tuple[float, float, dict[str, float]]:
    """One profiled step: the seconds of its GEMM kernels (summed), of all its kernels (summed), and the GEMM
    seconds by kernel name."""
    from torch.profiler import ProfilerActivity, profile

    activity = ProfilerActivity.CUDA if CUDA else ProfilerActivity.CPU
    with profile(activities=[activity]) as prof:
        step()
        measure.sync()
    kind = "CUDA" if CUDA else "CPU"
    events = [e for e in prof.events() if e.device_type.name == kind]
    if not CUDA:  # the CPU's top-level operators only: a matrix multiply's own children are not counted again
        events = [e for e in events if e.cpu_parent is None or e.cpu_parent.name not in CPU_GEMM_OPS]
    gemm, total, by_name = 0.0, 0.0, {}
    for event in events:
        seconds = (event.time_range.end - event.time_range.start) * 1e-6
        total += seconds
        if is_gemm(event.name):
            gemm += seconds
            by_name[event.name] = by_name.get(event.name, 0.0) + seconds
    return gemm, total, by_name


def isolated_seconds(c: dict) -> float:
    """The step's products timed alone, each as the layer-GEMM table times it, summed over the step."""
    total = 0.0
    for _, count, m, n, k in step_products(c):
        for fn in measure_gemm_table.products(m, n, k).values():
            total += count * measure.time_loop(fn, min_seconds=0.005, loops=3)
        if CUDA:
            torch.cuda.empty_cache()
    return total


def sustained(c: dict, seconds: float) -> dict:
    """The feed-forward's first forward product in a short loop and in a sustained one, with the clock during each."""
    _, _, m, n, k = step_products(c)[2]
    fn = measure_gemm_table.products(m, n, k)["forward"]
    with ClockSampler() as short_clock:
        short = measure.time_loop(fn, min_seconds=0.005, loops=3)
    with ClockSampler() as long_clock:
        long = measure.time_loop(fn, min_seconds=seconds, loops=1, max_reps=10 ** 6)
    flops = 2.0 * m * n * k
    return {"M": m, "N": n, "K": k, "short_seconds": f"{short:.6e}", "short_tflops": f"{flops / short / 1e12:.1f}",
            "short_sm_clock_mhz": short_clock.median(0), "sustained_seconds": f"{long:.6e}",
            "sustained_tflops": f"{flops / long / 1e12:.1f}", "sustained_sm_clock_mhz": long_clock.median(0),
            "sustained_power_w": long_clock.median(1), "sustain_s": seconds}


def main() -> int:
    out = measure.output_folder(__doc__.splitlines()[3])
    if out is None:
        return 2
    if not CUDA and not QUICK:
        print("measure_gemm_in_step.py: no GPU here; --quick runs the logic on the CPU", file=sys.stderr)
        return 2
    measure.environment(out)
    sustain_s = 0.05 if QUICK else float(os.environ.get("LGACC_SUSTAIN_S", "2"))
    key = ["d_m", "d_l", "d_a", "d_s", "b_mu", "vocab"]
    handle, rows = measure.writer(out, "gemm_in_step.csv", key + [
        "step_seconds", "kernel_seconds", "gemm_in_step_seconds", "gemm_isolated_seconds", "isolated_over_in_step",
        "gemm_share_of_kernels", "step_sm_clock_mhz", "step_power_w", "isolated_sm_clock_mhz"])
    kernels_handle, kernels = measure.writer(out, "gemm_in_step_kernels.csv", key + ["kernel", "seconds"])
    sustained_handle, sustained_rows = measure.writer(out, "gemm_sustained.csv", key + [
        "M", "N", "K", "short_seconds", "short_tflops", "short_sm_clock_mhz", "sustained_seconds", "sustained_tflops",
        "sustained_sm_clock_mhz", "sustained_power_w", "sustain_s"])
    for c in configurations():
        ids = {"d_m": c["d"], "d_l": c["layers"], "d_a": c["heads"], "d_s": c["seq"], "b_mu": c["b_mu"],
               "vocab": c["vocab"]}
        try:
            step = train_step(c)
            for _ in range(3):  # warm-up: kernels chosen, optimizer states made
                step()
            with ClockSampler() as step_clock:
                step_seconds = measure.median_step_seconds(step, 2 if QUICK else 10)
            gemm, total, by_name = profiled_gemms(step)
            del step
            if CUDA:
                torch.cuda.empty_cache()
            with ClockSampler() as isolated_clock:
                isolated = isolated_seconds(c)
            rows.writerow({**ids, "step_seconds": f"{step_seconds:.6f}", "kernel_seconds": f"{total:.6f}",
                           "gemm_in_step_seconds": f"{gemm:.6f}", "gemm_isolated_seconds": f"{isolated:.6f}",
                           "isolated_over_in_step": f"{isolated / gemm:.4f}" if gemm else "",
                           "gemm_share_of_kernels": f"{gemm / total:.4f}" if total else "",
                           "step_sm_clock_mhz": step_clock.median(0), "step_power_w": step_clock.median(1),
                           "isolated_sm_clock_mhz": isolated_clock.median(0)})
            for name, seconds in sorted(by_name.items(), key=lambda item: -item[1])[:10]:
                kernels.writerow({**ids, "kernel": name, "seconds": f"{seconds:.6f}"})
            sustained_rows.writerow({**ids, **sustained(c, sustain_s)})
            print(f"d={c['d']}: GEMMs {gemm * 1e3:.2f} ms in a step, {isolated * 1e3:.2f} ms alone "
                  f"(ratio {isolated / gemm if gemm else float('nan'):.3f})", flush=True)
        except Exception as error:  # noqa: BLE001 - recorded, the next configuration goes on
            print(f"{ids}: {type(error).__name__}: {str(error)[:160]}", flush=True)
        for h in (handle, kernels_handle, sustained_handle):
            h.flush()
    for h in (handle, kernels_handle, sustained_handle):
        h.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
