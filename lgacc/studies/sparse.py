"""The paper's outlook on sparse models, computed (issue #36): the "Sparse models" chapter's tables and sentences.

The paper (sec:conclusion, "Sparse models"): *"we expect sparsity to increase the network and memory usage due to
the reduced arithmetic intensity, which should not be problematic unless pushed to the extreme."*  This module
computes each part of the sentence with the ideal model extended to experts (:mod:`lgacc.model.evaluator.sparse`):

* the X family made sparse (:func:`sparse_x`): each layer's feed-forward network becomes ``E`` experts of width
  ``4 d_m / k``, ``k`` of them per token, so that the active parameters (and the flops) stay X_x's; the
  *sparsity* is ``s = E / k``;
* the expert GEMM's arithmetic intensity at the tokens an expert receives (:func:`intensity_table`), against the
  GPU's ridge point (peak over memory bandwidth);
* the memory: the state relative to the dense model's, with the experts replicated (``n_e = 1``) or spread over
  ``n_e = s`` GPUs, the spread at which a GPU holds as many expert weights as the dense model's feed-forward
  network (:func:`intensity_table`);
* the network: the expert all-to-all's overhead (eq:overhead_condition, not overlapped) at ``n_e = s`` on the link
  the group spans: NVLink while ``s`` GPUs fit a node, then InfiniBand or Ethernet (three scenarios,
  :data:`SCENARIOS`); the sparsity at which it passes the 25 % cap (:func:`failing_sparsity`);
* DeepSeek-V3 as trained (``n_e = 64`` over 8 nodes) and inside one node (``n_e = 8``), bf16 and FP8
  (:func:`today_table`); and the sentence graded (:func:`grade`).
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import pandas as pd

from lgacc.model.config import TrainingConfig
from lgacc.model.evaluator import DEFAULT_MAX_OVERHEAD, evaluate
from lgacc.model.hardware import Hardware, load_hardware
from lgacc.model.transformer import Transformer, load_model, x_model
from lgacc.paper import PAPER_HARDWARE

__all__ = ["SCENARIOS", "SPARSITIES", "sparse_x", "expert_gemm_intensity", "intensity_table", "all_to_all_overhead",
           "failing_sparsity", "cap_table", "today_table", "grade", "PAPER_SENTENCE"]

PAPER_SENTENCE = ("we expect sparsity to increase the network and memory usage due to the reduced arithmetic "
                  "intensity, which should not be problematic unless pushed to the extreme")
#: Where the expert group goes once it outgrows a node: ``nvlink`` (a node as large as the group, an NVL72-like
#: domain), ``infiniband`` (the paper's inter-node network), ``ethernet`` (the paper's fig:scaling_Ethernet).
SCENARIOS = ("nvlink", "infiniband", "ethernet")
#: The sparsities ``s = E / k`` the chapter scans.
SPARSITIES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def sparse_x(x: int, experts: int, k: int) -> Transformer:
    """X_x with each feed-forward network split into ``experts`` experts of width ``4 d_m / k``, top-``k``."""
    base = x_model(x)
    if (4 * base.d_m) % k:
        raise ValueError(f"k={k} must divide 4 d_m = {4 * base.d_m}")
    return Transformer(name=f"X{x} E={experts} k={k}", d_l=base.d_l, d_m=base.d_m, d_a=base.d_a, d_h=base.d_h,
                       d_s=base.d_s, n_I=4, experts=experts, experts_per_token=k, d_e=4 * base.d_m // k,
                       source="X family made sparse (lgacc.studies.sparse)")


@cache
def _intensity_function():
    import sympy

    from lgacc.model.formulas import sparse

    args = (sparse.t, sparse.k, sparse.E, sparse.d_m, sparse.d_e)
    return sympy.lambdify(args, sparse.expert_gemm_intensity(), "math")


def expert_gemm_intensity(tokens: float, k: int, experts: int, d_m: int, d_e: int) -> float:
    """:func:`lgacc.model.formulas.sparse.expert_gemm_intensity` at ``t = tokens`` (flop per byte, bf16)."""
    return float(_intensity_function()(tokens, k, experts, d_m, d_e))


def intensity_table(x: int = 160, k: int = 2, hardware: Hardware | str = PAPER_HARDWARE,
                    sparsities=SPARSITIES) -> pd.DataFrame:
    """Per sparsity ``s``: parameters, the tokens one expert multiplies in a micro-batch of one sample
    (``d_s k / E``), its GEMM intensity against the GPU's ridge point, the state relative to the dense model's
    at ``n_e = 1`` and ``n_e = s``, and the gradient reduction's intensity relative to the dense model's."""
    hw = load_hardware(hardware)
    ridge = hw.peak_flop_per_s / hw.gpu_memory_bandwidth_bytes_per_s
    dense = x_model(x)
    rows = []
    for s in sparsities:
        model = sparse_x(x, s * k, k)
        tokens = dense.d_s * k / model.experts
        intensity = expert_gemm_intensity(dense.d_s, k, model.experts, model.d_m, model.d_e)
        rows.append({
            "sparsity s = E/k": s, "experts E": model.experts,
            "parameters (T)": model.p / 1e12, "active (T)": model.p_active / 1e12,
            "tokens per expert": tokens, "expert GEMM intensity (flop/B)": intensity,
            "memory-bound": intensity < ridge,
            "state vs dense, n_e = 1": model.p_held(1) / dense.p,
            "state vs dense, n_e = s": model.p_held(s) / dense.p,
            "gradient intensity vs dense, n_e = 1": (model.p_active / model.p_held(1)) / 1.0,
        })
    frame = pd.DataFrame(rows)
    frame.attrs["ridge"] = ridge
    frame.attrs["hardware"] = hw.name
    return frame


def _scenario_hardware(hw: Hardware, scenario: str) -> Hardware:
    if scenario == "nvlink":
        return hw.replace(gpus_per_node=2**20)
    if scenario == "ethernet":
        return hw.replace(infiniband_bandwidth_bytes_per_s=hw.ethernet_bandwidth_bytes_per_s)
    return hw


def all_to_all_overhead(model: Transformer, hardware: Hardware | str, n_e: int, scenario: str = "infiniband",
                        precision: str = "bf16") -> float:
    """The expert all-to-all's overhead (the ideal model's ``expert``) of ``model`` over ``n_e`` GPUs, the
    expert group laid out as ``scenario`` says, ``n_b = n_e`` data-parallel ranks, no other parallelism."""
    hw = _scenario_hardware(load_hardware(hardware), scenario)
    config = TrainingConfig("baseline", n_b=n_e, n_e=n_e, precision=precision)
    return evaluate(model, hw, config).sparse_overheads["expert"]


def failing_sparsity(x: int, k: int, hardware: Hardware | str = PAPER_HARDWARE, scenario: str = "infiniband",
                     sparsities=SPARSITIES, cap: float = DEFAULT_MAX_OVERHEAD) -> int | None:
    """The smallest sparsity ``s`` of :data:`SPARSITIES` whose all-to-all at ``n_e = s`` exceeds ``cap``
    (``None``: none up to the largest)."""
    for s in sparsities:
        if s > 1 and all_to_all_overhead(sparse_x(x, s * k, k), hardware, s, scenario) > cap:
            return s
    return None


def cap_table(xs=(32, 64, 160), ks=(1, 2, 8), hardware: Hardware | str = PAPER_HARDWARE) -> pd.DataFrame:
    """Per X model, top-k and scenario: the all-to-all overhead at the largest sparsity scanned and the sparsity
    at which the 25 % cap fails (``None``: never within the scan)."""
    rows = []
    for x in xs:
        for k in ks:
            if (4 * x * x) % k:
                continue
            row = {"model": f"X{x}", "k": k}
            for scenario in SCENARIOS:
                row[f"fails at s ({scenario})"] = failing_sparsity(x, k, hardware, scenario)
                row[f"overhead at s = {SPARSITIES[-1]} ({scenario})"] = all_to_all_overhead(
                    sparse_x(x, SPARSITIES[-1] * k, k), hardware, SPARSITIES[-1], scenario)
            rows.append(row)
    frame = pd.DataFrame(rows)
    hw = load_hardware(hardware)
    frame.attrs.update(node=hw.gpus_per_node, hardware=hw.name)
    return frame


def today_table(hardware: Hardware | str = "h100-sxm") -> pd.DataFrame:
    """DeepSeek-V3 (``E = 256``, ``k = 8``, ``s = 32``) and Mixtral 8x22B (``s = 4``): the all-to-all overhead as
    trained (DeepSeek: ``n_e = 64`` over 8 nodes) and inside a node, bf16 and FP8, on each scenario's network."""
    rows = []
    for name, degrees in (("deepseek-v3", (8, 64)), ("mixtral-8x22b", (8,))):
        model = load_model(name)
        for n_e in degrees:
            for precision in ("bf16", "fp8"):
                row = {"model": model.name, "s = E/k": model.experts / model.experts_per_token, "n_e": n_e,
                       "precision": precision}
                for scenario in SCENARIOS:
                    row[f"overhead ({scenario})"] = all_to_all_overhead(model, hardware, n_e, scenario, precision)
                rows.append(row)
    return pd.DataFrame(rows)


def deepseek_failing_sparsity(hardware: Hardware | str = "h100-sxm", scenario: str = "infiniband",
                              precision: str = "bf16") -> int | None:
    """DeepSeek-V3 with ``E = 8 s`` experts (``k = 8``) over ``n_e = s`` GPUs: the smallest sparsity ``s`` whose
    all-to-all passes the cap."""
    model = load_model("deepseek-v3")
    for s in SPARSITIES[1:]:
        variant = replace(model, experts=8 * s, n_I=None)
        if all_to_all_overhead(variant, hardware, s, scenario, precision) > DEFAULT_MAX_OVERHEAD:
            return s
    return None


def grade(intensity: pd.DataFrame, caps: pd.DataFrame, today: pd.DataFrame) -> str:
    """The paper's sentence, part by part, with the computed numbers (Markdown)."""
    s32 = intensity.set_index("sparsity s = E/k").loc[32]
    first_bound = intensity.loc[intensity["memory-bound"], "sparsity s = E/k"]
    bound_text = (f"from s = {int(first_bound.iloc[0])} on the expert GEMMs fall below the ridge point "
                  f"({intensity.attrs['ridge']:.0f} flop/B on {intensity.attrs['hardware']}): memory-bound"
                  if len(first_bound) else "the expert GEMMs stay above the ridge point over the whole scan")
    x160 = caps[(caps["model"] == "X160")].set_index("k")

    def fails(k, scenario):
        value = x160.loc[k, f"fails at s ({scenario})"] if k in x160.index else None
        return f"at no sparsity up to {SPARSITIES[-1]}" if value is None or pd.isna(value) else f"at s = {int(value)}"

    ds = today[(today["model"] == "DeepSeek-V3") & (today["n_e"] == 64)].set_index("precision")
    ds_ib_bf16, ds_ib_fp8 = ds.loc["bf16", "overhead (infiniband)"], ds.loc["fp8", "overhead (infiniband)"]
    ds8 = today[(today["model"] == "DeepSeek-V3") & (today["n_e"] == 8)].set_index("precision")
    mix = today[(today["model"] == "Mixtral-8x22B")].set_index("precision")
    past = ds_ib_bf16 > DEFAULT_MAX_OVERHEAD
    lines = [
        f"> *{PAPER_SENTENCE}* (sec:conclusion, \"Sparse models\")",
        "",
        f"- **\"increase the memory usage\"** ✓: at fixed active parameters the training state grows with the experts: "
        f"at s = 32 (X160, k = 2) a GPU holding every expert holds {s32['state vs dense, n_e = 1']:.1f} times the "
        f"dense model's state; spread over $n_e = s$ GPUs, {s32['state vs dense, n_e = s']:.2f} times.",
        f"- **\"increase the network usage\"** ✓: a new transfer, the expert all-to-all, and the gradient reduction "
        f"moves {1 / s32['gradient intensity vs dense, n_e = 1']:.1f} times the dense model's bytes for the same "
        f"flops at s = 32 with the experts replicated.",
        f"- **\"due to the reduced arithmetic intensity\"** ✓ for the experts' GEMMs: an expert multiplies "
        f"$d_s k / E$ tokens of a sample; {bound_text}.  The all-to-all's own intensity, though, does not fall with E: "
        "its bytes grow with k (the experts a token visits), not with the number of experts.",
        f"- **\"not problematic unless pushed to the extreme\"**: with the experts spread so that no GPU holds more "
        f"than the dense model ($n_e = s$), the all-to-all of X160 stays on NVLink up to s = {caps.attrs['node']} (a "
        f"node of {caps.attrs['hardware']}); for k = 2 it fails the cap {fails(2, 'infiniband')} on InfiniBand, "
        f"{fails(2, 'ethernet')} on Ethernet and {fails(2, 'nvlink')} in an NVLink domain as large as the group; "
        f"for k = 8, {fails(8, 'infiniband')} on InfiniBand. Narrower models fail sooner (the table above): "
        "\"the extreme\" is where the expert group leaves the NVLink domain, for a network slower than the model's "
        "width allows (an overhead of about $k\\,\\nu_\\text{net} / (4 d_m)$).",
        f"- **Today's models**: Mixtral 8x22B (s = 4) inside a node: {mix.loc['bf16', 'overhead (nvlink)']:.0%} "
        f"(bf16): within the cap. DeepSeek-V3 (s = 32, k = 8) inside an H100 node ($n_e = 8$): "
        f"{ds8.loc['bf16', 'overhead (nvlink)']:.0%} in bf16, {ds8.loc['fp8', 'overhead (nvlink)']:.0%} in FP8; as "
        f"trained over 8 nodes ($n_e = 64$) on InfiniBand: "
        f"{ds_ib_bf16:.0%} in bf16 and {ds_ib_fp8:.0%} in FP8 of the compute, "
        + ("**past the extreme** under the paper's rules (the all-to-all not overlapped). DeepSeek-V3 trains because "
           "it overlaps the all-to-all with computation (DualPipe) and sends each token to at most 4 nodes, which "
           "the paper's rules do not credit." if past else "within the cap."),
    ]
    return "\n".join(lines)
