"""The calibrated model for mixtures of experts, context parallelism and FP8 (issue #36), beside the dense one.

A dense model without context parallelism in bf16 is :func:`lgacc.model.calibrated.expected.expected`'s, untouched.
Otherwise the expected step is composed of:

1. **the active model, dense**: the calibrated program on a dense transformer with the same attention, layers and
   sequence, whose feed-forward width ``d_I'`` makes its layer weights the active weights a token meets
   (``(2 or 3) d_m d_I' = p_active / d_l - attention``); under context parallelism its sequence is the shard
   ``d_s / n_c``; under FP8 the matrix products run at the bf16 rate times the FP8 speed-up measured on the GPU
   (:func:`.gemm_table.fp8_speedup`: the H100's, 1.74), or at the spec's dense FP8 peak where none is measured (the
   matmul efficiency ``e_max`` then stays the bf16 one), and the fused attention core at the bf16 peak (FP8
   recipes keep it in bf16: Transformer Engine's ``fp8_dpa`` is off by default, torchao's float8 converts linear
   layers only); its heads are ``d_m / d_a`` wide, so where the model's attention
   core is wider (multi-head latent attention's ``d_hn + d_hr`` scores and ``d_hv`` values, a decoupled model's
   ``d_h``) every layer adds the difference (:func:`attention_core_addition`), stretched by the ramp as in 5;
2. **grouped-GEMM efficiency at the per-expert token count**: a GPU's ``E / n_e`` experts each multiply
   ``t_e = n_e t k / E`` tokens (``t = b_mu d_s / n_c`` tokens a micro-batch, perfect balance) instead of one
   ``t x k d_e`` product: the difference of :func:`lgacc.model.calibrated.gemm.gemm_time` (the saturating roofline
   with its fixed time per kernel) between the two, for the input, gate and output products, forward and
   backward (three times the forward, :func:`linear_backward_is_twice_forward`), and the recomputation.  Where the
   GPU's GEMM table by shape holds grouped GEMMs (:mod:`.gemm_table`: the B200's, SimuMax's ``group_matmul``), the
   experts' products are timed at ``kappa`` times their measured efficiency instead, each stage (forward, input
   gradient, weight gradient) at its own, ``F / (kappa e c)``, and the dense products they replace at the rate the
   dense program spent on them (its feed-forward maps' measured efficiencies);
3. **dispatch and combine by alpha-beta**: two all-to-alls of ``t k d_m`` bf16 values (under the recipe's
   ``moe_dispatcher`` deepep or hybridep ``t r d_m``, a token once to each of the ``r`` GPUs it meets:
   :func:`.dispatch.dispatch_rows`; across nodes DeepEP's ``t q d_m``, once to each of the ``q`` nodes it meets, a
   share ``(N - 1)/N`` of the ``N`` nodes' leaving the node: :func:`.dispatch.rows_between_nodes`), a share
   ``(n_e - 1)/n_e``
   leaving the GPU, per MoE layer and pass (forward, backward, recomputation): ``alpha + S / (eta beta)`` (over
   NVLink ``eta_nvl`` and ``alpha_nvl`` of the GPU's NVLink generation, :func:`.links.nvlink_constants`; a GPU
   whose node has a measured all-to-all fit, the B200's, reads its share and its latency for ``n_e`` ranks,
   :func:`.links.all_to_all_constants`)
   (:mod:`.collectives`' point-to-point form, full duplex) on NVLink when ``n_e n_a`` fits a node, else InfiniBand;
   not overlapped (Megatron-Core's default), or, under the recipe's ``ep_overlap`` (DeepSeek-V3's DualPipe,
   Megatron-Core's ``--overlap-moe-expert-parallel-comm``: one micro-batch's all-to-alls run while another's chunk
   computes), hidden up to the stages' computation: the step pays ``max(0, A - C)``, ``A`` the step's all-to-alls
   and ``C`` its stages' compute (the dense program's pipeline time, the experts' and the attention's additions), an
   upper bound on what the overlap hides (the schedule's first and last chunks have no partner); around them, the
   **permutations** that order the tokens by expert and back (:mod:`.dispatch`: the dispatcher's rows read and
   written at the share of the HBM bandwidth Transformer Engine's fused permutation was measured to reach), stage
   computation like the experts' products (in ``C``);
4. **router and load imbalance** (an assumption with both ends, :data:`IMBALANCE`): the busiest expert-parallel rank
   receives ``(1 + iota)`` times the mean tokens and every rank waits for it: the experts' GEMMs, the permutations
   and the all-to-all grow by ``1 + iota``.  ``iota = 0`` (perfect balance: DeepSeek-V3's auxiliary-loss-free balancing
   as its limit) and ``iota = 1`` (the busiest rank at twice the mean: a capacity factor of 2, the largest that
   GShard and Switch Transformer configurations use) are both reported; the expected step is at ``iota = 0``;
5. **the per-micro-batch additions** (2-4) run on every stage for every micro-batch and stretch the pipeline's
   ramp like any stage time: ``(n_mu + n_l - 1) (moe_layers / n_l)`` times a layer's addition;
6. **memory**: the weights, gradients and optimizer state of the dense program scale by the parameters a GPU
   holds over the active ones (:meth:`Transformer.p_held`, the embedding included in both), the routed experts'
   sharded parts (the ZeRO stage's) split over the ``n_b n_c / n_e`` ranks that hold the same experts (the
   expert-data-parallel group) instead of the ``n_b n_c`` the rest is split over, and counted on the stage that
   holds the most expert layers (the peak over ranks: some stage holds ``ceil(moe_layers / n_l)`` of them, where
   the time reads the average ``moe_layers / n_l``, item 5: the runs' uneven splits are not read, and reading the
   fullest stage for the time too put the held-out MoE error from 18.8 to 19.9 %); the dispatched
   tokens' activations are taken as the active model's (not added); under context parallelism the sharded state
   (the ZeRO stage's weights, gradients, optimizer) is split over the ``n_b n_c`` data- and context-parallel ranks
   together, as Megatron-Core's distributed optimizer and torchtitan's FSDP2 split it.

Under context parallelism the surrogate's attention is the shard's own, ``(d_s / n_c)^2`` pairs, where ring attention
(Megatron-Core's context parallelism, torchtitan's ``context_parallel``) has each shard's queries meet the keys of
the whole sequence: with the causal mask balanced over the ranks (both frameworks' default load balancing) a rank
computes ``d_s^2 / (2 n_c)`` unmasked pairs, ``n_c`` times the shard's own; every layer adds the difference
(:func:`attention_core_addition`), at the kernel's efficiency for the shard's length (each ring step is one
attention call of a shard's queries against one shard's keys).

Not modelled (named): the key-value exchange's time (overlapped with the ring's steps; at the sequence lengths that
need context parallelism each step's attention outlasts its exchange).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

import numpy as np

from lgacc.cache import codegen as _codegen
from lgacc.model.hardware.links import GIB
from lgacc.paths import PACKAGE

from ..assumptions import DEFAULT_ASSUMPTIONS, Assumptions, apply_to_hardware, critical_batch
from ..config import TrainingConfig
from ..hardware import Hardware, load_hardware
from ..transformer import Transformer
from ..evaluator.inputs import as_model
from .dispatch import dispatch_rows, dispatch_seconds, rows_between_nodes
from .expected import SECONDS_PER_DAY, Expected, _calibration_inputs, _hardware_inputs, _link_inputs, expected
from .parameters import Calibration, fitted_calibration
from .recipe import DEFAULT_RECIPE, Recipe, zero_stage

__all__ = ["IMBALANCE", "SparseExpected", "active_surrogate", "attention_core_addition", "attention_core_widths",
           "expected_sparse"]

#: Router and load imbalance ``iota`` (the busiest expert-parallel rank's tokens over the mean, less 1): both ends.
IMBALANCE = {"balanced": 0.0, "capacity-2": 1.0}

_SOURCES = (PACKAGE / "model" / "calibrated" / "gemm.py", PACKAGE / "model" / "calibrated" / "symbols.py",
            PACKAGE / "model" / "calibrated" / "sparse.py")
_GEMM_ARGUMENTS = ("M", "N", "K", "kappa", "e_max", "c", "e_hbm", "beta_hbm", "t_k")


def _build():
    import sympy

    from . import symbols
    from .gemm import gemm_time

    M, N, K = sympy.symbols("M N K", positive=True)
    args = (M, N, K, *(getattr(symbols, name) for name in _GEMM_ARGUMENTS[3:]))
    def pairwise(*terms):  # max(a, b) as a Piecewise: the generated module imports numpy only
        first, *rest = terms
        for term in rest:
            first = sympy.Piecewise((first, first >= term), (term, True))
        return first

    return {"gemm_time": (args, gemm_time(M, N, K).replace(sympy.Max, pairwise))}, {}


#: The committed numeric code of :func:`_build` (``lgacc/model/generated/calibrated_sparse.py``).
GENERATED = _codegen.Generated("calibrated_sparse", "lgacc.model.generated.calibrated_sparse", _SOURCES, _build)


@cache
def _gemm_time():
    """:func:`lgacc.model.calibrated.gemm.gemm_time` as generated numpy code (committed)."""
    return GENERATED.namespace()["FUNCTIONS"]["gemm_time"]


def active_surrogate(model: Transformer, n_c: int = 1) -> Transformer:
    """A dense transformer with ``model``'s layers, heads and sequence shard ``d_s / n_c`` whose layer weights
    are the active weights of ``model`` (the feed-forward width ``d_I'`` absorbs the difference).  With rotary
    positions the surrogate rotates its own heads' queries and keys (``(d_a + d_kv) d_m / d_a`` values a token), not
    latent attention's narrower rotary parts: the rotation's bytes are a latent model's upper end."""
    d_h = model.d_m // model.d_a
    attention = 2 * model.d_m**2 + 2 * model.d_kv * d_h * model.d_m
    inputs = 3 if model.gated else 2
    per_layer = model.p_active_leading / model.d_l
    d_I = max(1, round((per_layer - attention) / (inputs * model.d_m)))
    d_s = max(1, model.d_s // n_c)
    return Transformer(name=f"{model.name} (active)", d_l=model.d_l, d_m=model.d_m, d_a=model.d_a, d_h=d_h,
                       d_s=d_s, d_I=d_I, gated=model.gated, d_kv=model.d_kv, d_v=model.d_v,
                       tied_embeddings=model.tied_embeddings, rotary=model.rotary)


@dataclass(frozen=True)
class SparseExpected:
    """The calibrated expectation of a sparse (or context-parallel, or FP8) configuration."""

    dense: Expected
    step_time_s: float
    time_days: float
    memory_bytes: float
    expert_gemm_s: float
    all_to_all_s: float
    step_time_imbalanced_s: float
    fits: bool
    memory_parts_bytes: dict
    #: every layer's attention core beyond the surrogate's (:func:`attention_core_addition`), in ``step_time_s``
    attention_core_s: float = 0.0
    #: the all-to-alls' time hidden under the stages' computation (the recipe's ``ep_overlap``; ``all_to_all_s`` is
    #: what the step pays beyond it)
    all_to_all_hidden_s: float = 0.0
    #: the dispatch permutations around the all-to-alls (:mod:`.dispatch`), in ``step_time_s``
    dispatch_s: float = 0.0

    def summary(self) -> dict:
        out = self.dense.summary()
        parts = dict(out["expected_step_breakdown_s"])
        parts.update(expert_gemm=self.expert_gemm_s, all_to_all=self.all_to_all_s, attention_core=self.attention_core_s,
                     all_to_all_hidden=self.all_to_all_hidden_s, dispatch=self.dispatch_s)
        memory = {"total": self.memory_bytes / GIB, **{k: v / GIB for k, v in self.memory_parts_bytes.items()}}
        out.update({
            "expected_step_time_s": self.step_time_s,
            "expected_time_days": self.time_days,
            "expected_memory_gib": memory,
            "expected_step_breakdown_s": parts,
            "expected_memory_fits": self.fits,
            "expected_all_to_all_share": self.all_to_all_s / self.step_time_s if self.step_time_s else 0.0,
            "expected_imbalance": {"assumption": "the busiest expert-parallel rank gets (1 + iota) times the mean "
                                                 "tokens; the step is given at both ends",
                                   **{f"step_time_s_{name}": (self.step_time_s if iota == 0 else
                                                              self.step_time_imbalanced_s)
                                      for name, iota in IMBALANCE.items()}},
        })
        return out


def _measured_expert_gemms(model: Transformer, surrogate: Transformer, hw: Hardware, config: TrainingConfig,
                           kappa: float, c: float, recompute: float) -> tuple[float, float] | None:
    """(the experts' grouped GEMMs, the dense products of the surrogate they replace) in seconds of one MoE layer
    and micro-batch, forward, backward and recomputation, from the GPU's measured grouped table
    (:func:`.gemm_table.grouped_efficiency`); ``None`` where no grouped table covers the GPU."""
    from .gemm_table import grouped_efficiency, model_layer_efficiencies, shape_table_for

    table = shape_table_for(hw.name)
    dense_rates = model_layer_efficiencies(hw.name, surrogate, config.n_a, config.b_mu * surrogate.d_s)
    if table is None or table["grouped"] is None or dense_rates is None:
        return None
    tokens = config.b_mu * model.d_s / config.n_c
    k, E, n_e = model.experts_per_token, model.experts, config.n_e
    ng, per_expert, width = E / n_e, n_e * tokens * k / E, model.d_e / config.n_a
    inputs = 2 if model.gated else 1
    grouped = dense = 0.0
    for name, N, K in (("fc1", inputs * width, model.d_m), ("fc2", model.d_m, width)):
        flops = 2 * ng * per_expert * N * K  # = 2 tokens k N K, the dense products' flops
        e = {stage: grouped_efficiency(table, stage, ng, per_expert, N, K)
             for stage in ("fwd", "bwd_grad_act", "bwd_grad_w")}
        grouped += flops / (kappa * c) * ((1 + recompute) / e["fwd"] + 1 / e["bwd_grad_act"]
                                                            + 1 / e["bwd_grad_w"])
        dense += (3 + recompute) * flops / (kappa * float(dense_rates[name]) * c)
    return grouped, dense


def attention_core_widths(model: Transformer) -> tuple[float, float]:
    """``(d_qk, d_v)``: the head dimensions of ``model``'s attention core, queries and keys, then values: multi-head
    latent attention ``(d_hn + d_hr, d_hv)`` (the rotary part joins the scores, not the values), else ``(d_h, d_h)``."""
    if model.latent_attention:
        return float(model.qk_nope_head_dim + model.qk_rope_head_dim), float(model.v_head_dim)
    return float(model.d_h), float(model.d_h)


def attention_core_addition(model: Transformer, surrogate: Transformer, hw: Hardware, config: TrainingConfig,
                            calibration: Calibration, recipe: Recipe, recompute: float,
                            attention_peak_flop_per_s: float | None = None) -> float:
    """Seconds one layer's attention core adds per micro-batch (forward, backward, recomputation) beyond the
    surrogate's, whose heads are ``d_m / d_a`` wide (:func:`active_surrogate` keeps ``d_a d_h = d_m``): latent
    attention's scores are ``d_hn + d_hr`` wide and its values ``d_hv`` (DeepSeek-V2/V3: 192 and 128 where the
    surrogate has 40 or 56), a decoupled model's heads ``d_h``.  The unmasked core of one micro-batch on one
    device, ``2 b_mu d_s^2 (d_a / n_a) (d_qk + d_v)`` flops (``attention_flops_per_token`` of
    :mod:`lgacc.model.formulas.sparse` times the tokens), against the surrogate's ``4 b_mu d_s^2 (d_a / n_a) d_h``:
    fused (FlashAttention), half executed forward and 2.5 times that backward (:func:`.gemm.flash_times`) at
    ``kappa e_att c``, each core at its own ``e_att`` (the GPU's attention table by shape where it has one:
    SimuMax's B200 entries with ``qk_head_dim`` 192 and ``v_head_dim`` 128); unfused, the score and value products
    at ``kappa e_max c``, backward twice the forward, recomputed forward under full and selective recomputation.
    Under context parallelism (``n_c > 1``) the surrogate's sequence is the shard, ``d_s' = d_s / n_c``, and ring
    attention's core is ``n_c`` times the shard's own (the module's docstring): ``2 n_c b_mu d_s'^2 (d_a / n_a)
    (d_qk + d_v)``, timed at the efficiency for ``d_s'``.  The core runs at ``attention_peak_flop_per_s`` where
    given (FP8 recipes keep attention in bf16), else at ``hw``'s peak.  Zero for a model whose heads are the
    surrogate's without context parallelism."""
    from .expected import fused_attention_efficiency

    d_qk, d_v = attention_core_widths(model)
    d_h = float(surrogate.d_h)
    if d_qk == d_h and d_v == d_h and config.n_c == 1:
        return 0.0
    h = _hardware_inputs(hw)
    peak = h["c"] if attention_peak_flop_per_s is None else float(attention_peak_flop_per_s)
    kappa = _calibration_inputs(calibration)["kappa"]
    d_s, heads = float(surrogate.d_s), config.b_mu * model.d_a / config.n_a
    # ring attention: the shard's queries meet every shard's keys, n_c times the shard's own unmasked pairs
    real = config.n_c * 2 * heads * d_s**2 * (d_qk + d_v)
    replaced = 4 * heads * d_s**2 * d_h
    if recipe.flash_attention:
        passes = (1 + recompute) * 0.5 + 2.5 * 0.5  # executed half: forward (and its recomputation), backward

        def rate(qk, v):
            return kappa * float(fused_attention_efficiency(hw, recipe, calibration, d_s, model.d_a, qk, model.d_kv,
                                                            config.n_a, v)) * peak

        return passes * (real / rate(d_qk, d_v) - replaced / rate(d_h, d_h))
    again = recompute + float(recipe.recompute == "selective")  # unfused, selective recomputation redoes the core
    return (3 + again) * (real - replaced) / (kappa * h["e_max"] * peak)


def _per_layer_additions(model: Transformer, hw: Hardware, config: TrainingConfig, calibration: Calibration,
                         recompute: float, surrogate: Transformer | None = None,
                         dispatcher: str = "alltoall") -> tuple[float, float, float]:
    """(expert GEMM time added, the experts' whole GEMM time, all-to-all time) of one MoE layer and micro-batch,
    forward, backward and recomputation; each all-to-all carries the rows ``dispatcher`` sends
    (:func:`.dispatch.dispatch_rows`: every copy, or over DeepEP and HybridEP a token once per GPU it meets)."""
    if not model.is_sparse:
        return 0.0, 0.0, 0.0
    h = _hardware_inputs(hw)
    cal = _calibration_inputs(calibration)
    surrogate = active_surrogate(model, config.n_c) if surrogate is None else surrogate
    measured = _measured_expert_gemms(model, surrogate, hw, config, cal["kappa"], h["c"], recompute)
    if measured is not None:
        expert, whole = measured[0] - measured[1], measured[0]
    else:
        gemm = _gemm_time()
        fixed = (cal["kappa"], h["e_max"], h["c"], cal["e_hbm"], h["beta_hbm"], cal["t_k"])
        tokens = config.b_mu * model.d_s / config.n_c
        k, E, n_e = model.experts_per_token, model.experts, config.n_e
        per_expert = n_e * tokens * k / E
        width = model.d_e / config.n_a  # expert tensor parallelism = n_a (Megatron-Core's default)
        inputs = 2 if model.gated else 1
        grouped = (E / n_e) * (inputs * gemm(per_expert, width, model.d_m, *fixed)
                               + gemm(per_expert, model.d_m, width, *fixed))
        dense = inputs * gemm(tokens, k * width, model.d_m, *fixed) + gemm(tokens, model.d_m, k * width, *fixed)
        passes = 3 + recompute  # forward, backward (twice the forward), the recomputed forward
        expert, whole = passes * float(grouped - dense), passes * float(grouped)
    n_e = config.n_e
    if n_e == 1:
        return expert, whole, 0.0
    inside = n_e * config.n_a <= hw.gpus_per_node
    from .links import all_to_all_constants  # here, as in .expected: python -m lgacc.model.calibrated.links

    measured_a2a = all_to_all_constants(h["beta_nvl"], hw.gpus_per_node, n_e) if inside else None
    if measured_a2a is not None:  # an all-to-all measured on the GPU's node (.links): its own share and latency
        bandwidth, alpha = measured_a2a[0] * h["beta_nvl"], measured_a2a[1]
    elif inside:  # NVLink: the collectives' constants of the GPU's node or NVLink generation (.links)
        link = _link_inputs(hw, calibration)
        bandwidth, alpha = link["eta_nvl"] * h["beta_nvl"], link["alpha_nvl"] + (n_e - 1) * link["delta_nvl"]
    else:
        bandwidth, alpha = cal["eta"] * h["beta_ib"], cal["alpha_ib"]
    size = dispatch_rows(model, config, dispatcher).sent * model.d_m * 2 * (n_e - 1) / n_e
    between = None if inside else rows_between_nodes(model, config, dispatcher, hw.gpus_per_node)
    if between is not None:  # DeepEP across nodes: a token crosses the network once per node it meets
        rows, nodes = between
        size = rows * model.d_m * 2 * (nodes - 1) / nodes
    one = alpha + size / bandwidth
    return expert, whole, (2 + recompute) * 2 * one


def _at_precision(hw: Hardware, precision: str) -> Hardware:
    """``hw`` with the peak its matrix products reach in ``precision``: under FP8 the bf16 peak times the speed-up
    measured on the GPU (:func:`.gemm_table.fp8_speedup`, 1.74 on the H100) where one is, else the spec's FP8
    peak (:meth:`Hardware.at_precision`)."""
    from .gemm_table import fp8_speedup

    speedup = fp8_speedup(hw.name) if precision == "fp8" else None
    if speedup is None:
        return hw.at_precision(precision)
    return hw.replace(peak_flop_per_s=hw.peak_flop_per_s * speedup)


def expected_sparse(
    model: Transformer | str,
    hardware: Hardware | str,
    config: TrainingConfig,
    *,
    recipe: Recipe = DEFAULT_RECIPE,
    schedule: str | None = None,
    n_v: int = 1,
    calibration: Calibration | None = None,
    steps: int = 100_000,
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
) -> Expected | SparseExpected:
    """The calibrated expectation of one configuration: :func:`expected` for a dense bf16 model without context
    parallelism, else the composition of the module's docstring."""
    model = as_model(model)
    if not model.is_sparse and config.n_c == 1 and config.precision == "bf16":
        return expected(model, hardware, config, recipe=recipe, schedule=schedule, n_v=n_v, calibration=calibration,
                        steps=steps, assumptions=assumptions)
    calibration = fitted_calibration() if calibration is None else calibration
    bf16 = apply_to_hardware(load_hardware(hardware), assumptions)
    hw = _at_precision(bf16, config.precision)
    # FP8 recipes multiply the linear maps in FP8 and keep the attention core in bf16 (at the bf16 peak)
    attention_peak = None if config.precision == "bf16" else bf16.peak_flop_per_s
    surrogate = active_surrogate(model, config.n_c)
    dense_config = replace(config, n_e=1, n_c=1, precision="bf16")
    # the hardware is already read under ``gb``
    dense = expected(surrogate, hw, dense_config, recipe=recipe, schedule=schedule, n_v=n_v, calibration=calibration,
                     steps=steps, assumptions=assumptions.replace(gb="GiB"), attention_peak_flop_per_s=attention_peak)
    recompute = {"full": 1.0, "alternate": 0.5}.get(recipe.recompute, 0.0)
    expert_s, whole_s, a2a_s = _per_layer_additions(model, hw, config, calibration, recompute, surrogate,
                                                    recipe.moe_dispatcher)
    repeats = (config.n_mu + config.n_l - 1) * model.moe_layers / config.n_l
    # the permutations around the all-to-alls (module docstring, 3): memory-bound work on the stage, like the experts'
    permute_s = repeats * dispatch_seconds(model, config, _hardware_inputs(hw)["beta_hbm"], recipe.moe_dispatcher,
                                           recompute)
    # every layer's attention core beyond the surrogate's, stretched by the ramp like the experts' additions
    core_s = (config.n_mu + config.n_l - 1) * model.d_l / config.n_l * attention_core_addition(
        model, surrogate, hw, config, calibration, recipe, recompute, attention_peak)
    a2a_total = repeats * a2a_s
    compute = dense.step_parts_s.get("pipeline", 0.0) + repeats * expert_s + core_s + permute_s

    def paid(all_to_all: float, window: float) -> float:
        """What the step pays of its all-to-alls: all of them, or under ep_overlap what outlasts ``window``, the
        stages' computation (the module's docstring, 3)."""
        return max(0.0, all_to_all - window) if recipe.ep_overlap else all_to_all

    base = dense.step_time_s + repeats * expert_s + core_s + permute_s
    exposed = paid(a2a_total, compute)
    step = base + exposed
    # the busiest rank's (1 + iota) tokens grow its experts' GEMMs, its permutations and its all-to-alls
    extra = IMBALANCE["capacity-2"] * (repeats * whole_s + permute_s)
    imbalanced = base + extra + paid((1 + IMBALANCE["capacity-2"]) * a2a_total, compute + extra)
    held = float(model.p_held(config.n_e)) + model.p_embedding
    # the routed experts' parameters a GPU holds, on average over the stages (p_held counts them divided by n_e, the
    # rest whole: the difference between one and two expert-parallel ranks is half of them)
    routed = 2 * (float(model.p_held(1)) - float(model.p_held(2))) / config.n_e if model.is_sparse else 0.0
    # the peak is the fullest stage's: some stage holds ceil(moe_layers / n_l) expert layers
    fullest = -(-model.moe_layers // config.n_l) * config.n_l / model.moe_layers if model.moe_layers else 1.0
    active = float(surrogate.p) + surrogate.p_embedding
    stage = zero_stage(recipe, config.is_partitioned)
    sharded = {"weights": stage >= 3, "gradients": stage >= 2, "optimizer": stage >= 1}
    # a sharded part of the experts' state is split over the ranks that hold the same experts, the n_b n_c / n_e of
    # the expert-data-parallel group (Megatron-Core's distributed optimizer and DDP shard expert parameters over
    # expert_data_parallel_group, torchtitan's and AutoModel's FSDP2 over the mesh without the expert dimension):
    # n_e times the share of the rest, which the dense program split over n_b
    scale = {part: (held - routed + fullest * routed * (config.n_e if is_sharded else 1)) / active
             for part, is_sharded in sharded.items()}
    parts = {k: v * scale.get(k, 1.0) for k, v in dense.memory_parts_bytes.items()}
    memory = dense.memory_bytes + sum(parts[p] - dense.memory_parts_bytes[p] for p in sharded)
    if config.n_c > 1:
        # the sharded state is split over the data- and context-parallel ranks together: Megatron-Core's distributed
        # optimizer shards over its data-parallel group with context parallelism, torchtitan's FSDP2 over the
        # dp_shard x cp mesh; the dense program, evaluated at n_c = 1, split it over n_b only
        for part, is_sharded in sharded.items():
            if is_sharded:
                parts[part] /= config.n_c
        memory = sum(parts.values())
    # the ideal model's token count (steps at the critical batch of the model itself, not of the shard)
    time_days = steps * (critical_batch(model, assumptions) / config.b) * step / SECONDS_PER_DAY
    return SparseExpected(dense=dense, step_time_s=step, time_days=time_days, memory_bytes=memory,
                          expert_gemm_s=repeats * expert_s, all_to_all_s=exposed,
                          all_to_all_hidden_s=a2a_total - exposed,
                          step_time_imbalanced_s=imbalanced, fits=memory <= hw.memory_bytes, memory_parts_bytes=parts,
                          attention_core_s=core_s, dispatch_s=permute_s)
