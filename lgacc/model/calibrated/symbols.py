"""The calibrated model's inputs as sympy symbols, in the order of its generated functions' arguments.

The paper's notation (``d_s, d_m, ..., n_b, n_l, n_a, n_mu, b_mu``, :mod:`lgacc.model.symbols`) and the
package's extensions (``d_kv``, ``d_v``, and ``v``, the chunks per device of a looped schedule) are
reused as they are; what the paper's notation lacks is defined here, each with its meaning:

* the GPU and its links **per direction** (the specs store links as input + output, so the
  model reads half of each: a collective sends and receives at once);
* the kernel constants of one GPU (the best matrix-multiply efficiency, the measured efficiency of the layer's
  four GEMMs where a table covers the GPU, the fused-attention efficiency, a fixed time per kernel, the share of
  the HBM bandwidth streaming kernels reach, the latency of a collective on each link);
* the two fitted global parameters (``kappa``, ``xi``), the bus efficiency ``eta`` (from a published NCCL
  benchmark) and the fixed time per step ``T_0`` (0 unless set);
* the framework's choices, as numbers (indicators are 0 or 1): recomputation, sequence parallelism,
  FlashAttention, dropout, ZeRO stage (three indicators ``z_1 >= z_2 >= z_3``), gradient bytes,
  overlaps, the improved method;
* the pipeline schedule, as the four numbers the composition needs (:mod:`.step`).

Indicators enter the expressions as factors and as ``Piecewise``-free products, so that the same
expression prints to NumPy and to JavaScript.
"""

from __future__ import annotations

import sympy

from ..formulas.model import d_kv, d_v
from ..formulas.schedules import v
from ..symbols import b_mu, d_a, d_h, d_I, d_l, d_m, d_s, n_a, n_b, n_l, n_mu

__all__ = ["TABLE", "INPUTS", "NAMES", "symbol", "maximum", "minimum", "v"]


def _positive(name: str) -> sympy.Symbol:
    return sympy.Symbol(name, positive=True)


def _indicator(name: str) -> sympy.Symbol:
    return sympy.Symbol(name, nonnegative=True)


# --- model (besides the paper's) ---
gated = _indicator("gated")
tied = _indicator("tied")
d_R = _indicator("d_R")
# --- hardware ---
c = _positive("c_gpu")
beta_hbm = _positive("beta_hbm")
beta_nvl = _positive("beta_nvl")
beta_ib = _positive("beta_ib")
G = _positive("G")
# --- one GPU's kernel constants ---
e_max = _positive("e_max")
e_att = _positive("e_att")
g_tab = _indicator("g_tab")
e_qkv = _positive("e_qkv")
e_proj = _positive("e_proj")
e_fc1 = _positive("e_fc1")
e_fc2 = _positive("e_fc2")
t_k = _indicator("t_k")
e_hbm = _positive("e_hbm")
e_nF = _positive("e_nF")
e_nB = _positive("e_nB")
alpha_nvl = _indicator("alpha_nvl")
delta_nvl = _indicator("delta_nvl")
alpha_ib = _indicator("alpha_ib")
k_B = _positive("k_B")
t_h = _indicator("t_h")
t_hR = _indicator("t_hR")
t_hs = _indicator("t_hs")
t_hl = _indicator("t_hl")
t_hm = _indicator("t_hm")
# --- fitted ---
kappa = _positive("kappa")
eta = _positive("eta")
eta_nvl = _positive("eta_nvl")
xi = _indicator("xi")
T_0 = _indicator("T_0")
# --- the framework's choices ---
r_full = _indicator("r_full")
r_sel = _indicator("r_sel")
r_op = _indicator("r_op")
r_stop = _indicator("r_stop")
sp = _indicator("sp")
fa = _indicator("fa")
drop = _indicator("drop")
z_1 = _indicator("z_1")
z_2 = _indicator("z_2")
z_3 = _indicator("z_3")
gamma_G = _positive("gamma_G")
gamma_M = _positive("gamma_M")
amp = _indicator("amp")
keep_G = _indicator("keep_G")
g_L = _positive("g_L")
g_X = _positive("g_X")
g_R = _indicator("g_R")
n_R = _indicator("n_R")
e_N = _indicator("e_N")
e_A = _indicator("e_A")
ddp_copy = _indicator("ddp_copy")
ds_opt = _indicator("ds_opt")
ds_pipe = _indicator("ds_pipe")
fsdp_pp = _indicator("fsdp_pp")
ov_dp = _indicator("ov_dp")
ov_tp = _indicator("ov_tp")
s_h = _indicator("s_h")
vc = _indicator("vc")
pg = _indicator("pg")
improved = _indicator("improved")
# --- memory constants ---
phi = _indicator("phi")
M_0 = _indicator("M_0")
# --- the pipeline schedule, as numbers (lgacc.model.calibrated.step.schedule_numbers) ---
R_ramp = _indicator("R_ramp")
chunks = _positive("chunks")
m_flight = _positive("m_flight")
c_window = _indicator("c_window")
zb = _indicator("zb")
lw = _indicator("lw")

#: Every input, in the argument order of the generated functions: (name, symbol, meaning, unit).
TABLE: tuple[tuple[str, sympy.Symbol, str, str], ...] = (
    ("d_s", d_s, "sequence length", "tokens"),
    ("d_m", d_m, "layer width", "values"),
    ("d_l", d_l, "layers", "layers"),
    ("d_a", d_a, "attention (query) heads", "heads"),
    ("d_h", d_h, "head size", "values"),
    ("d_kv", d_kv, "key/value heads", "heads"),
    ("d_I", d_I, "feed-forward width", "values"),
    ("d_v", d_v, "vocabulary (0: no embedding or head)", "tokens"),
    ("gated", gated, "gated feed-forward (two input matrices), 0 or 1", "indicator"),
    ("tied", tied, "embedding and head share one matrix, 0 or 1", "indicator"),
    ("d_R", d_R, "values a token's rotary position embedding rotates in one layer (queries' and keys' heads; 0: no "
     "rotary positions)", "values"),
    ("n_b", n_b, "data-parallel degree", "GPUs"),
    ("n_l", n_l, "pipeline-parallel degree", "GPUs"),
    ("n_a", n_a, "tensor-parallel degree", "GPUs"),
    ("n_mu", n_mu, "micro-batches per batch", "micro-batches"),
    ("b_mu", b_mu, "micro-batch size", "samples"),
    ("v", v, "chunks per device of a looped schedule", "chunks"),
    ("c", c, "peak dense half-precision flop/s", "flop/s"),
    ("beta_hbm", beta_hbm, "GPU memory (HBM) bandwidth", "bytes/s"),
    ("beta_nvl", beta_nvl, "NVLink bandwidth, one direction", "bytes/s"),
    ("beta_ib", beta_ib, "InfiniBand bandwidth per GPU, one direction", "bytes/s"),
    ("G", G, "GPUs per node (NVLink domain)", "GPUs"),
    ("e_max", e_max, "best matrix-multiply efficiency of the GPU (maximum achievable matmul flop/s over peak)", "1"),
    ("e_att", e_att, "fused attention kernel efficiency (FlashAttention)", "1"),
    ("g_tab", g_tab, "the GPU has a measured layer-GEMM table (lgacc.model.calibrated.gemm_table), 0 or 1", "indicator"),
    ("e_qkv", e_qkv, "measured efficiency of the query/key/value GEMM at the run's shape (1 without a table)", "1"),
    ("e_proj", e_proj, "measured efficiency of the output-projection GEMM at the run's shape (1 without a table)", "1"),
    ("e_fc1", e_fc1, "measured efficiency of the feed-forward input GEMM at the run's shape (1 without a table)", "1"),
    ("e_fc2", e_fc2, "measured efficiency of the feed-forward output GEMM at the run's shape (1 without a table)", "1"),
    ("t_k", t_k, "fixed time per kernel (launch, pipeline fill, last wave)", "s"),
    ("e_hbm", e_hbm, "share of the HBM bandwidth streaming kernels reach", "1"),
    ("e_nF", e_nF, "share of the HBM bandwidth the layer norm's forward reaches (measured on an H100)", "1"),
    ("e_nB", e_nB, "share of the HBM bandwidth the layer norm's backward reaches (measured on an H100)", "1"),
    ("alpha_nvl", alpha_nvl, "latency of a collective over NVLink", "s"),
    ("delta_nvl", delta_nvl, "latency an NVLink collective adds per rank beyond the first (a ring's step; measured "
     "where a fit by group size is published, else 0)", "s"),
    ("alpha_ib", alpha_ib, "latency of a collective over InfiniBand", "s"),
    ("k_B", k_B, "backward bytes of the memory-bound kernels over forward bytes", "1"),
    ("t_h", t_h, "host seconds to issue one layer's forward and backward passes for one micro-batch (eager "
     "framework, measured; 0 with CUDA graphs)", "s"),
    ("t_hR", t_hR, "host seconds a recomputed forward pass adds per layer and micro-batch (measured; 0 with CUDA "
     "graphs)", "s"),
    ("t_hs", t_hs, "host seconds once a step (eager framework, measured; 0 with CUDA graphs)", "s"),
    ("t_hl", t_hl, "host seconds once a layer and step (the optimizer's and the gradients' per-tensor work; measured; "
     "0 with CUDA graphs)", "s"),
    ("t_hm", t_hm, "host seconds once a micro-batch (the head, the loss and the schedule's own work; measured; 0 with "
     "CUDA graphs)", "s"),
    ("kappa", kappa, "fitted: real layers' matrix-multiply efficiency over the isolated kernel's (the measured "
     "table's, else e_max)", "1"),
    ("eta", eta, "achieved bus bandwidth over link bandwidth (alpha-beta fit to a published NCCL benchmark)", "1"),
    ("eta_nvl", eta_nvl, "achieved bus bandwidth over NVLink bandwidth (the published NCCL table of the GPU's NVLink "
     "generation where there is one, else eta)", "1"),
    ("xi", xi, "fitted: share of an overlapped collective's time that still delays the compute it overlaps "
     "(the collective's kernels take SMs and memory bandwidth)", "1"),
    ("T_0", T_0, "fixed time per step (not fitted: 0 unless set by hand)", "s"),
    ("r_full", r_full, "share of the layers recomputed in full: 1 (full), 1/2 (every other layer), 0", "share"),
    ("r_sel", r_sel, "selective recomputation (attention core), 0 or 1", "indicator"),
    ("r_op", r_op, "per-operation recomputation (torchtitan's 'op' policy: every other matrix product and the "
     "element-wise operations), 0 or 1", "indicator"),
    ("r_stop", r_stop, "a recomputed layer stops before its last matrix product (PyTorch's non-reentrant "
     "checkpoint, torch >= 2.1, stops once every tensor the backward needs is saved again), 0 or 1", "indicator"),
    ("sp", sp, "sequence parallelism, 0 or 1", "indicator"),
    ("fa", fa, "FlashAttention (no quadratic activations), 0 or 1", "indicator"),
    ("drop", drop, "dropout, 0 or 1", "indicator"),
    ("z_1", z_1, "optimizer state sharded over data parallelism (ZeRO >= 1), 0 or 1", "indicator"),
    ("z_2", z_2, "gradients sharded (ZeRO >= 2), 0 or 1", "indicator"),
    ("z_3", z_3, "weights sharded (ZeRO-3, the paper's partition), 0 or 1", "indicator"),
    ("gamma_G", gamma_G, "bytes of a reduced gradient (4: fp32 reduction, 2: half precision)", "bytes"),
    ("gamma_M", gamma_M, "bytes of a stored main gradient", "bytes"),
    ("amp", amp, "PyTorch automatic mixed precision's state (fp32 weights, gradients only from the backward on), 0 or 1",
     "indicator"),
    ("keep_G", keep_G, "PyTorch AMP's gradients stay allocated between steps (zero_grad() zeroes them, PyTorch "
     "before 2.0), 0 or 1", "indicator"),
    ("g_L", g_L, "bytes per logit at the loss (its tensors alive at the loss's backward)", "bytes"),
    ("g_X", g_X, "bytes per logit the loss's kernels move, forward and backward (the recipe's loss_kernel, else the "
     "implementation g_L names)", "bytes"),
    ("g_R", g_R, "bytes per rotated value the rotary embedding's kernels move in one pass, forward or backward (the "
     "implementation the recipe's rope_kernel names)", "bytes"),
    ("n_R", n_R, "kernels the rotary embedding launches per rotated tensor (queries, keys) and pass", "kernels"),
    ("e_N", e_N, "the norms run eagerly, as PyTorch operations (torchtitan's RMSNorm), 0 or 1", "indicator"),
    ("e_A", e_A, "a gated activation runs eagerly, the SiLU and the product apart (torchtitan's), 0 or 1", "indicator"),
    ("ddp_copy", ddp_copy, "PyTorch DDP's buckets hold a second copy of the gradients (gradient_as_bucket_view "
     "off), 0 or 1", "indicator"),
    ("ds_opt", ds_opt, "DeepSpeed's fp16 optimizer (FP16_Optimizer without ZeRO, DeepSpeedZeroOptimizer with ZeRO-1/2): "
     "its gradient reduction's flat bucket and its step's flat gradient copies, 0 or 1", "indicator"),
    ("ds_pipe", ds_pipe, "DeepSpeed's PipelineEngine: each in-flight micro-batch's stage output kept (split by n_a), "
     "restored in full with the full received gradient at its backward, 0 or 1", "indicator"),
    ("fsdp_pp", fsdp_pp, "FSDP2 under a pipeline keeps the stage's weights gathered and accumulates its gradients "
     "unsharded, in the reduction's precision, until the last micro-batch (torchtitan), 0 or 1", "indicator"),
    ("ov_dp", ov_dp, "data-parallel reduction overlapped with the backward pass, 0 or 1", "indicator"),
    ("pg", pg, "data-parallel collectives through each GPU's own network card (the paper's per-GPU count), 0 or 1",
     "indicator"),
    ("ov_tp", ov_tp, "tensor-parallel collectives overlapped with the layer's matrix products, 0 or 1", "indicator"),
    ("s_h", s_h, "the host waits for the device after the layers' passes (the exposed reduction and the optimizer "
     "step follow the host's floor), 0 or 1", "indicator"),
    ("vc", vc, "the embedding and the head each take one layer's place in the pipeline (Llama 3's stages: the first and "
     "last hold one layer fewer), 0 or 1", "indicator"),
    ("improved", improved, "the paper's improved method (layered gradient accumulation where the schedule allows), 0 or 1",
     "indicator"),
    ("phi", phi, "allocator fragmentation, a share of the activations", "1"),
    ("M_0", M_0, "framework memory outside the counted tensors", "bytes"),
    ("R_ramp", R_ramp, "pipeline ramp in stage passes of one micro-batch (the bubble)", "passes"),
    ("chunks", chunks, "contiguous chunks per device (pipeline transfers per micro-batch, each way)", "chunks"),
    ("m_flight", m_flight, "micro-batches whose activations the first stage holds at its peak", "micro-batches"),
    ("c_window", c_window, "backward passes of one layer that hide the gradient reduction", "layer passes"),
    ("zb", zb, "zero-bubble schedule (its ramp and window count weight passes), 0 or 1", "indicator"),
    ("lw", lw, "the schedule runs each layer over all micro-batches before the next (modular; breadth-first, v > 1)",
     "indicator"),
)
INPUTS: tuple[sympy.Symbol, ...] = tuple(row[1] for row in TABLE)
NAMES: tuple[str, ...] = tuple(row[0] for row in TABLE)
_BY_NAME = {row[0]: row[1] for row in TABLE}


def symbol(name: str) -> sympy.Symbol:
    """The input symbol called ``name`` (``"kappa"``, ``"n_b"``, ...)."""
    return _BY_NAME[name]


def maximum(*args) -> sympy.Expr:
    """``max`` left unevaluated: comparing large arguments costs sympy seconds and simplifies nothing here."""
    return sympy.Max(*args, evaluate=False)


def minimum(*args) -> sympy.Expr:
    """``min`` left unevaluated (see :func:`maximum`)."""
    return sympy.Min(*args, evaluate=False)
