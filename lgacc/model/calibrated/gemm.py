"""Matrix-multiply time on one GPU, from the GEMM's shape: a saturating efficiency curve.

A GEMM ``(M, N, K) x batch`` computes ``batch`` products of an ``M x K`` by a ``K x N`` matrix:
``F = 2 M N K batch`` flops, and reads and writes at least ``B = 2 (M K + K N + M N) batch`` bytes
(half precision).  Its time is the roofline of the two plus a fixed time per kernel::

    tau = max(F / (kappa e_max c), B / (e_hbm beta_hbm)) + t_k

For a compute-bound GEMM this is a saturating efficiency curve in flops per GEMM,
``F / (c tau) = kappa e_max F / (F + F_half)`` with ``F_half = kappa e_max c t_k``
(:func:`saturating_efficiency`, derived): small GEMMs pay the fixed time (launch, pipeline fill,
the last partial wave), and a faster GPU needs larger GEMMs to saturate.  ``e_max`` is the GPU's
best measured matrix-multiply efficiency (maximum achievable matmul flop/s over peak: 0.859 on
A100 SXM, 0.801 on H100 SXM; Bekman, *ml-engineering*, after Anthony et al. 2024), ``kappa``
the fitted share of it that real training layers reach.

**Measured tables.**  Where a measured table covers the GPU (``g_tab = 1``, :mod:`.gemm_table`: the H100 chip's
layer GEMMs by width, tensor-parallel split and tokens; the B200's GEMMs by shape, SimuMax's), a layer's GEMM runs at ``kappa`` times its measured
efficiency ``e`` at the run's shape, which already holds what the curve models (the partial wave, small shapes,
memory traffic)::

    tau = F / (kappa e c)

(:func:`table_gemm_time`); ``kappa`` is then the share of the isolated kernel's speed that training reaches.

All three GEMMs of a linear layer (forward, input gradient ``(M, K, N)``, weight gradient
``(K, N, M)``) have the same flops and the same bytes, hence the same time: the backward pass of
the linear layers is exactly twice the forward (:func:`linear_backward_is_twice_forward`).

Fused attention (FlashAttention, Dao 2023) keeps no ``d_s x d_s`` tensor: a causal mask skips half
of the blocks, so the forward kernel executes half of the scores and attention-over-values flops,
and the backward 2.5 times that (it recomputes the scores: five products against two), at the
kernel's own efficiency ``kappa e_att`` (``e_att``: the recipe's kernel as measured on the GPU at the run's
sequence length, :mod:`.attention`).
"""

from __future__ import annotations

import sympy

from .symbols import beta_hbm, c, e_att, e_hbm, e_max, g_tab, kappa, maximum, t_k

__all__ = ["gemm_flops", "gemm_bytes", "gemm_time", "table_gemm_time", "saturating_efficiency", "half_saturation_flops",
           "linear_backward_is_twice_forward", "flash_times"]


def gemm_flops(M, N, K, batch=1) -> sympy.Expr:
    """``2 M N K batch``."""
    return 2 * M * N * K * batch


def gemm_bytes(M, N, K, batch=1) -> sympy.Expr:
    """Half-precision bytes of the two inputs and the output: ``2 (M K + K N + M N) batch``."""
    return 2 * (M * K + K * N + M * N) * batch


def gemm_time(M, N, K, batch=1) -> sympy.Expr:
    """Seconds of one GEMM: the slower of compute and memory traffic, plus the fixed time per kernel."""
    return maximum(gemm_flops(M, N, K, batch) / (kappa * e_max * c),
                     gemm_bytes(M, N, K, batch) / (e_hbm * beta_hbm)) + t_k


def table_gemm_time(M, N, K, efficiency) -> sympy.Expr:
    """Seconds of a layer's GEMM: at ``kappa`` times its measured ``efficiency`` where the GPU has a table
    (``g_tab = 1``), else :func:`gemm_time`'s curve."""
    return g_tab * gemm_flops(M, N, K) / (kappa * efficiency * c) + (1 - g_tab) * gemm_time(M, N, K)


def half_saturation_flops() -> sympy.Expr:
    """``F_half = kappa e_max c t_k``: the GEMM size at which half of the best efficiency is reached."""
    return kappa * e_max * c * t_k


def saturating_efficiency() -> tuple[sympy.Symbol, sympy.Expr]:
    """``(F, eff(F))``: the achieved share of peak of a compute-bound GEMM of ``F`` flops, derived from
    :func:`gemm_time` (``eff = F / (c tau)``, ``tau = F / (kappa e_max c) + t_k``)."""
    F = sympy.Symbol("F", positive=True)
    tau = F / (kappa * e_max * c) + t_k
    return F, sympy.simplify(F / (c * tau))


def linear_backward_is_twice_forward(M, N, K) -> bool:
    """Whether the input- and weight-gradient GEMMs of ``(M, N, K)`` each take the forward's time."""
    forward = gemm_time(M, N, K)
    return sympy.simplify(gemm_time(M, K, N) - forward) == 0 and sympy.simplify(gemm_time(K, N, M) - forward) == 0


def flash_times(flops_full: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr]:
    """(forward, backward) seconds of the fused causal attention kernel whose unmasked scores and
    attention-over-values products are ``flops_full`` flops: half executed forward, 2.5 times that backward."""
    executed = flops_full / 2
    rate = kappa * e_att * c
    return executed / rate + t_k, sympy.Rational(5, 2) * executed / rate + t_k
