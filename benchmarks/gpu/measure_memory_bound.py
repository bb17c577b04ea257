"""A transformer layer's memory-bound kernels on one GPU, by kind, tokens and width (issue #35 item 1: "memory-bound
operations by bytes"); not a test, never run by CI.

    python3 benchmarks/gpu/measure_memory_bound.py OUT_DIR [--quick]

Why: the calibrated model streams a layer's memory-bound kernels (norms, the activation, dropout and the residual
adds, :mod:`lgacc.model.calibrated.kernels`) at ``hbm_efficiency`` (0.9) times the HBM bandwidth, the share a large
copy reaches (``bandwidth.csv``: 0.89 on our H100).  Kernels that read and write a layer's activations once each may
reach less: a normalization reduces over the width, its backward reduces the weights' gradients over the tokens,
dropout draws random numbers.  This times them as PyTorch runs them eagerly, in bf16.

What: for tokens ``T`` (16,384 and 65,536) and widths ``d`` (1,024 to 8,192), each kernel's forward and, where it has
one, its backward, on ``(T, d)`` bf16 tensors, each pass its one ATen kernel called directly (large enough that
the device, not the host, sets the pace):

* ``layer_norm``: ``F.layer_norm`` with a weight and a bias (forward reads ``x`` and writes ``y``; backward reads
  ``dy`` and ``x`` and writes ``dx``, the weights' gradients reduced over the tokens);
* ``gelu``: ``F.gelu`` with the tanh approximation on a ``(T, 4 d)`` tensor (forward reads and writes it; backward
  reads ``dy`` and ``x`` and writes ``dx``);
* ``dropout``: ``F.dropout`` at p = 0.1 (forward reads ``x``, writes ``y`` and a 1-byte mask; backward reads ``dy``
  and the mask and writes ``dx``);
* ``add``: the residual add (reads two, writes one; no backward kernel of its own).

Writes ``memory_bound.csv``: kernel, pass, tokens, width, the bytes the pass must move at least (each tensor read or
written once; the counts above, 2 bytes a value, 1 a mask byte), seconds (CUDA events, median of five loops after a
warm-up, as ``measure.py``) and the share of the spec's HBM bandwidth (``--hbm-bytes-per-s``, default the H100 SXM's
3.35e12) those bytes reach.  ``environment.json`` as ``measure.py``'s.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import measure  # noqa: E402  (the timing loop and the environment record)

TOKENS = (16384, 65536)
WIDTHS = (1024, 2048, 4096, 8192)


def cases(quick: bool) -> list[tuple[int, int]]:
    if quick:
        return [(256, 128)]
    return [(t, d) for t in TOKENS for d in WIDTHS if t * 4 * d * 2 <= 4 * 2 ** 30]  # the GELU input under 4 GiB


def passes(tokens: int, width: int):
    """``{(kernel, pass): (bytes moved at least, callable)}`` on fresh tensors: each pass one ATen kernel called
    directly (the backward kernels autograd would call, without its engine: the host's time per call stays far
    under the device's at these sizes, so the CUDA events time the device)."""
    dtype, device = (torch.bfloat16, "cuda") if measure.DEVICE == "cuda" else (torch.float32, "cpu")
    size = 2  # bytes a bf16 value (the count is the model's; a CPU dry run uses fp32, and its numbers mean nothing)
    aten = torch.ops.aten
    x = torch.randn(tokens, width, device=device, dtype=dtype)
    other, grad = torch.randn_like(x), torch.randn_like(x)
    weight, bias = torch.ones(width, device=device, dtype=dtype), torch.zeros(width, device=device, dtype=dtype)
    wide = torch.randn(tokens, 4 * width, device=device, dtype=dtype)
    grad_wide = torch.randn_like(wide)
    n, n4 = tokens * width, tokens * 4 * width
    _, mean, rstd = aten.native_layer_norm(x, [width], weight, bias, 1e-5)
    _, mask = aten.native_dropout(x, 0.1, True)
    return {
        ("layer_norm", "forward"): (2 * n * size, lambda: aten.native_layer_norm(x, [width], weight, bias, 1e-5)),
        ("layer_norm", "backward"): (3 * n * size, lambda: aten.native_layer_norm_backward(
            grad, x, [width], mean, rstd, weight, bias, [True, True, True])),
        ("gelu", "forward"): (2 * n4 * size, lambda: aten.gelu(wide, approximate="tanh")),
        ("gelu", "backward"): (3 * n4 * size, lambda: aten.gelu_backward(grad_wide, wide, approximate="tanh")),
        ("dropout", "forward"): (2 * n * size + n, lambda: aten.native_dropout(x, 0.1, True)),
        ("dropout", "backward"): (2 * n * size + n, lambda: aten.native_dropout_backward(grad, mask, 1 / 0.9)),
        ("add", "forward"): (3 * n * size, lambda: torch.add(x, other)),
    }


def main() -> int:
    out = measure.output_folder(__doc__.splitlines()[3])
    if out is None:
        return 2
    hbm = float(next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--hbm-bytes-per-s=")), "3.35e12"))
    measure.environment(out)
    handle, writer = measure.writer(out, "memory_bound.csv", ["kernel", "pass", "tokens", "width", "bytes",
                                                              "seconds", "hbm_share"])
    for tokens, width in cases(measure.QUICK):
        try:
            for (kernel, name), (moved, fn) in passes(tokens, width).items():
                seconds = measure.time_loop(fn)
                writer.writerow({"kernel": kernel, "pass": name, "tokens": tokens, "width": width, "bytes": int(moved),
                                 "seconds": f"{seconds:.6e}", "hbm_share": f"{moved / seconds / hbm:.3f}"})
        except Exception as error:  # noqa: BLE001 - recorded, the sweep goes on
            print(f"{tokens} x {width}: {type(error).__name__}: {str(error)[:120]}", flush=True)
        handle.flush()
        if measure.DEVICE == "cuda":
            torch.cuda.empty_cache()
        print(f"{tokens} x {width} done", flush=True)
    handle.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
