"""A transformer layer's matrix multiplies on one GPU, in all three orientations, by width, split and tokens (issue #35
item 1: "matrix multiplies by shape and precision"); not a test, never run by CI.

    python3 benchmarks/gpu/measure_gemm_table.py OUT_DIR [--quick]

writes ``OUT_DIR/gemm_layers.csv``: for each hidden width ``d`` (768 to 16384), tensor-parallel split ``tp`` (1, 2,
4, 8), tokens per micro-batch ``M`` (2048, 8192, 32768) and linear layer (``qkv``: d -> 3d/tp, ``proj``: d/tp -> d,
``fc1``: d -> 4d/tp, ``fc2``: 4d/tp -> d), the bf16 time of the three products of the layer: the forward
``(M, K) x (K, N)``, the input gradient ``(M, N) x (N, K)`` and the weight gradient ``(K, M) x (M, N)``, as PyTorch's
``Linear`` runs them (weights stored ``(N, K)``). The calibrated model gives the three the same time; this says how
far that holds. The cases run in a shuffled order (a fixed seed), so a time budget that cuts the sweep short leaves
an even sample. Timing as ``measure.py``: CUDA events around loops of back-to-back calls after a warm-up, the median
of three loops of at least 5 ms, inputs rotated past the L2, random data.
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import measure  # noqa: E402  (the timing loop and the environment record)

# LGACC_WIDTHS (comma-separated) measures other widths: a later lease's widths between the grid's
WIDTHS = tuple(int(v) for v in os.environ.get("LGACC_WIDTHS", "").split(",") if v.strip()) or (
    768, 1024, 2048, 2560, 4096, 5120, 8192, 12288, 16384)
SPLITS = (1, 2, 4, 8)
TOKENS = (2048, 8192, 32768)
LAYERS = {"qkv": (3, 1), "proj": (1, 1), "fc1": (4, 1), "fc2": (1, 4)}  # (N, K) in units of d, split on the tp side


def cases(quick: bool) -> list[tuple[int, int, int, str]]:
    out = [(d, tp, m, name) for d in WIDTHS for tp in SPLITS for m in TOKENS for name in LAYERS]
    random.Random(35).shuffle(out)
    return out[:4] if quick else out


def shape(d: int, tp: int, name: str) -> tuple[int, int]:
    n_units, k_units = LAYERS[name]
    n, k = n_units * d, k_units * d
    if name in ("qkv", "fc1"):
        n //= tp  # column-parallel: the output split
    else:
        k //= tp  # row-parallel: the input split
    return n, k


def products(m: int, n: int, k: int):
    """The forward, input-gradient and weight-gradient products of a Linear(k -> n) over m tokens."""
    sets = max(1, min(3, -(-2 * measure.L2_BYTES // max(1, 2 * (m * k + n * k + m * n)))))
    x = [torch.randn(m, k, device=measure.DEVICE, dtype=torch.bfloat16) for _ in range(sets)]
    w = [torch.randn(n, k, device=measure.DEVICE, dtype=torch.bfloat16) for _ in range(sets)]
    g = [torch.randn(m, n, device=measure.DEVICE, dtype=torch.bfloat16) for _ in range(sets)]
    i = [0]

    def pick():
        i[0] = (i[0] + 1) % sets
        return i[0]

    return {"forward": lambda: x[pick()] @ w[i[0]].t(),          # (m, k) x (k, n)
            "input_gradient": lambda: g[pick()] @ w[i[0]],       # (m, n) x (n, k)
            "weight_gradient": lambda: g[pick()].t() @ x[i[0]]}  # (n, m) x (m, k)


def main() -> int:
    out = measure.output_folder(__doc__.splitlines()[3])
    if out is None:
        return 2
    budget = float(next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--budget=")), "210"))
    deadline = time.perf_counter() + budget
    handle, writer = measure.writer(out, "gemm_layers.csv", ["d", "tp", "M", "layer", "product", "N", "K", "flops",
                                                            "seconds", "tflops"])
    done = 0
    for d, tp, m, name in cases(quick):
        if time.perf_counter() > deadline:
            print(f"budget spent after {done} cases", flush=True)
            break
        n, k = shape(d, tp, name)
        try:
            for product, fn in products(m, n, k).items():
                seconds = measure.time_loop(fn, min_seconds=0.005, loops=3)
                flops = 2.0 * m * n * k
                writer.writerow({"d": d, "tp": tp, "M": m, "layer": name, "product": product, "N": n, "K": k,
                                 "flops": flops, "seconds": f"{seconds:.6e}", "tflops": f"{flops / seconds / 1e12:.2f}"})
        except Exception as error:  # noqa: BLE001 - recorded, the sweep goes on
            print(f"{d} {tp} {m} {name}: {type(error).__name__}: {str(error)[:120]}", flush=True)
        handle.flush()
        torch.cuda.empty_cache()
        done += 1
    handle.close()
    print(f"{done} of {len(cases(quick))} cases", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
