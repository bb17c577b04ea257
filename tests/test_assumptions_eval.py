"""Assumption switches and the physical overlap convention, against hand-computed values.

Independent facts checked: overheads and efficiencies of a 1.7 B GPT by hand from the
paper's intensities (3 b d_s / (4 n_b n_mu) = 1536, 82944 and 13824 flop/B) and the A100's
thresholds; the physical fractions (3/64, 1/4, 2/3); the GB/GiB ratio 0.93132; the step time
from 8 b d_s p flops; monotonicity in n_mu; each switch moving a value by the ratio it names.
"""

import math

import numpy as np
import pytest

from lgacc.errors import UserInputError
from lgacc.model.assumptions import GIB_TO_GB, Assumptions, apply_to_hardware
from lgacc.model.config import Method, TrainingConfig
from lgacc.model.evaluator import evaluate, evaluate_many
from lgacc.model.formulas.overlap import PHYSICAL_KINDS, physical_identity, physical_passes
from lgacc.model.hardware import load_hardware
from lgacc.model.transformer import Transformer

HW = load_hardware("a100-80gb")
# a 1.7 B GPT as in Megatron-LM's scaling runs
GPT_1_7B = Transformer("GPT-1.7B", d_l=24, d_m=2304, d_a=24, d_h=96, d_s=2048)


def test_defaults_and_validation():
    a = Assumptions()
    assert (a.divisible_layers, a.divisible_heads, a.heads_cap, a.gb, a.convention) == (True, True, True, "GiB", "paper")
    for bad in (dict(gb="MB"), dict(convention="exact"), dict(overlap_efficiency=0.0), dict(overlap_efficiency=1.5),
                dict(critical_batch_scale=-1.0), dict(divisible_layers="yes"), dict(overlap_efficiency=float("nan"))):
        with pytest.raises(UserInputError, match=next(iter(bad))):
            Assumptions(**bad)
    with pytest.raises(UserInputError, match="unknown assumption"):
        a.replace(nope=1)


def test_from_strings_parses_each_type():
    a = Assumptions.from_strings(["divisible_layers=false", "gb=GB", "overlap-efficiency=0.5", "convention=physical"])
    assert a == Assumptions(divisible_layers=False, gb="GB", overlap_efficiency=0.5, convention="physical")
    with pytest.raises(UserInputError, match="KEY=VALUE"):
        Assumptions.from_strings(["gb"])
    with pytest.raises(UserInputError, match="must be a number"):
        Assumptions.from_strings(["overlap_efficiency=fast"])
    assert [row["name"] for row in a.describe()][:3] == ["divisible_layers", "divisible_heads", "heads_cap"]


def test_gb_rescales_memory_and_bandwidth():
    scaled = apply_to_hardware(HW, Assumptions(gb="GB"))
    assert scaled.memory_bytes == pytest.approx(80e9)  # the spec's 80 GiB read as 80 GB
    assert scaled.infiniband_bandwidth_bytes_per_s == pytest.approx(50e9)  # the spec's 50 GiB/s read as 50 GB/s
    assert HW.infiniband_bandwidth_bytes_per_s == 50 * 2**30
    assert GIB_TO_GB == pytest.approx(0.9313225746)
    assert apply_to_hardware(HW) is HW


def test_physical_fractions_by_hand():
    # the baseline reduction overlaps the last micro-batch's backward pass: 6 / 8 of a micro-batch's step
    (name, fraction, relative), = physical_passes("data_base")
    assert name == "backward" and relative == 1
    from lgacc.model.symbols import n_mu
    assert float(fraction.subs(n_mu, 16)) == pytest.approx(3 / 64)
    # partitioned: forward gathers (1/4 of the step) bind; the backward's intensity is 3/2 higher
    assert [(n, float(f), float(k)) for n, f, k in physical_passes("data_improved_partition")] == [
        ("forward", 0.25, 1.0), ("backward", 0.75, pytest.approx(2 / 3))]
    for kind in PHYSICAL_KINDS:
        assert sum(float(f.subs(n_mu, 1)) for _, f, _ in physical_passes(kind)) <= 1 + 1e-12


def test_physical_identity_at_sample_times():
    expr = physical_identity()
    for T, C, S in ((1.0, 2.0, 5.0), (3.0, 2.0, 5.0), (7.5, 0.5, 9.0)):
        values = {"T": T, "C": C, "S": S}
        assert float(expr.subs({sym: values[sym.name] for sym in expr.free_symbols})) == pytest.approx(0, abs=1e-12)


def _baseline_gpt(convention, n_mu=16):
    return evaluate(GPT_1_7B, HW, TrainingConfig(Method.BASELINE, n_b=32, n_mu=n_mu, b_mu=1),
                    assumptions=Assumptions(convention=convention))


def test_physical_data_overhead_by_hand():
    nu_ib = HW.threshold("infiniband")
    nu_b = 3 * 2048 * 1 / 4  # eq:data_intensity_base: 3 b d_s / (4 n_b n_mu) with b = n_b n_mu b_mu, b_mu = 1
    paper = _baseline_gpt("paper")
    physical = _baseline_gpt("physical")
    assert paper.overheads["data"] == pytest.approx(nu_ib / nu_b - 1)
    assert physical.overheads["data"] == pytest.approx((nu_ib / nu_b - 1) * 3 / (4 * 16))
    assert paper.efficiency == pytest.approx(1 / (nu_ib / nu_b), rel=1e-9)
    assert round(paper.efficiency, 2) == 0.26  # the value under the paper convention
    assert physical.efficiency > 0.85


def test_physical_reduction_shrinks_with_micro_batches():
    values = [_baseline_gpt("physical", n_mu).overheads["data"] for n_mu in (1, 2, 4, 8, 16)]
    assert all(a > b for a, b in zip(values, values[1:]))
    paper = [_baseline_gpt("paper", n_mu).overheads["data"] for n_mu in (1, 16)]
    assert paper[0] == pytest.approx(paper[1])  # the paper's convention ignores the micro-batch count


def test_non_overlapped_transfers_same_in_both_conventions():
    config = TrainingConfig(Method.BASELINE, n_b=8, n_l=4, n_a=8, n_mu=8, b_mu=1)
    a = evaluate(GPT_1_7B, HW, config)
    b = evaluate(GPT_1_7B, HW, config, assumptions=Assumptions(convention="physical"))
    assert a.overheads["tensor"] == b.overheads["tensor"] > 0
    assert a.overheads["data"] == b.overheads["data"] > 0  # eq:data_intensity_base_pipe, not overlapped


def test_step_time_by_hand():
    e = _baseline_gpt("paper")
    p = GPT_1_7B.p
    flops = 8 * e.b * GPT_1_7B.d_s * p  # the printed 8 b d_s p
    assert e.step_time_s == pytest.approx(flops / (32 * HW.peak_flop_per_s * e.efficiency), rel=1e-12)


def test_kernel_efficiency_divides_time_not_efficiency():
    slow = HW.replace(kernel_efficiency=0.5)  # the optional spec key (lgacc.model.hardware)
    config = TrainingConfig(Method.BASELINE, n_b=32, n_mu=16)
    base, half = evaluate(GPT_1_7B, HW, config), evaluate(GPT_1_7B, slow, config)
    assert half.efficiency == base.efficiency
    assert half.step_time_s == pytest.approx(2 * base.step_time_s)
    assert half.time_days == pytest.approx(2 * base.time_days)


def test_overlap_efficiency_scales_overlapped_bandwidth():
    nu_ib = HW.threshold("infiniband")
    nu_b = 3 * 2048 / 4
    e = evaluate(GPT_1_7B, HW, TrainingConfig(Method.BASELINE, n_b=32, n_mu=16),
                 assumptions=Assumptions(overlap_efficiency=0.5))
    assert e.overheads["data"] == pytest.approx(2 * nu_ib / nu_b - 1)


def test_critical_batch_scale():
    e = evaluate(GPT_1_7B, HW, TrainingConfig(Method.BASELINE, n_b=32, n_mu=16),
                 assumptions=Assumptions(critical_batch_scale=2.0))
    assert e.critical_batch == pytest.approx(2 * GPT_1_7B.critical_batch)


def test_pipeline_placement_intra_node():
    config = TrainingConfig(Method.IMPROVED, n_b=4, n_l=4, n_a=2, n_mu=4, b_mu=1)
    inter = evaluate(GPT_1_7B, HW, config)
    intra = evaluate(GPT_1_7B, HW, config, assumptions=Assumptions(pipeline_placement="intra-node"))
    ratio = HW.threshold("nvlink") / HW.threshold("infiniband")
    assert ratio == pytest.approx(50 / 600)  # the bandwidths' ratio: 50 GiB/s InfiniBand, 600 GiB/s NVLink
    # eq:pipeline_intensity_impr (2 + n_I) d_m = 13824 flop/B, not overlapped with n_mu = n_l = 4
    assert inter.overheads["pipeline"] == pytest.approx((312e12 / (50 * 2**30)) / 13824)
    assert intra.overheads["pipeline"] == pytest.approx(inter.overheads["pipeline"] * ratio)


def test_tensor_placement_inter_node():
    config = TrainingConfig(Method.IMPROVED, n_b=4, n_a=8, n_mu=4)
    node = evaluate(GPT_1_7B, HW, config)
    ib = evaluate(GPT_1_7B, HW, config, assumptions=Assumptions(tensor_placement="inter-node"))
    assert ib.overheads["tensor"] == pytest.approx(node.overheads["tensor"] * HW.threshold("infiniband") / HW.threshold("nvlink"))


def test_pipeline_overlap_never_and_always():
    config = TrainingConfig(Method.BASELINE, n_b=2, n_l=4, n_mu=5, b_mu=1)
    never = evaluate(GPT_1_7B, HW, config, assumptions=Assumptions(pipeline_overlap="never"))
    always = evaluate(GPT_1_7B, HW, config, assumptions=Assumptions(pipeline_overlap="always"))
    # eq:pipeline_intensity_base (2 + n_I) d_m d_l / n_l = 6 * 2304 * 24 / 4 = 82944 flop/B, by hand,
    # against InfiniBand's 312e12 / (50 * 2**30) = 5811.5 flop/B
    assert never.intensities["pipeline"] == pytest.approx(82944)
    ratio = (312e12 / (50 * 2**30)) / 82944
    assert never.overheads["pipeline"] == pytest.approx(ratio)
    assert always.overheads["pipeline"] == pytest.approx(max(0.0, ratio - 1))


def test_layer_divisibility_is_a_reason_not_silence():
    config = TrainingConfig(Method.IMPROVED, n_b=4, n_l=5, n_mu=5)  # 5 does not divide 24
    e = evaluate(GPT_1_7B, HW, config)
    assert not e.feasible and any("divisible_layers" in r for r in e.reasons)
    relaxed = evaluate(GPT_1_7B, HW, config, assumptions=Assumptions(divisible_layers=False))
    assert not any("divisible_layers" in r for r in relaxed.reasons)


def test_heads_cap_lifted_allows_more_devices_than_heads():
    config = TrainingConfig(Method.IMPROVED, n_b=1, n_a=48, n_mu=1)
    with pytest.raises(UserInputError, match="n_a=48 exceeds"):
        evaluate(GPT_1_7B, HW, config)
    e = evaluate(GPT_1_7B, HW, config, assumptions=Assumptions(heads_cap=False))
    assert not any("heads" in r for r in e.reasons)


def test_api_misuse_is_a_user_error():
    config = TrainingConfig(Method.IMPROVED, n_b=4, n_mu=4)
    for kwargs in (dict(max_overhead=True), dict(max_overhead="0.2"), dict(steps=1.5), dict(assumptions={"gb": "GB"}),
                   dict(form="nope")):
        with pytest.raises(UserInputError):
            evaluate(GPT_1_7B, HW, config, **kwargs)
    with pytest.raises(UserInputError):
        evaluate(3, HW, config)


def test_numpy_integers_count_like_ints():
    a = TrainingConfig(Method.IMPROVED, n_b=np.int64(4), n_mu=np.int32(4))
    assert a == TrainingConfig(Method.IMPROVED, n_b=4, n_mu=4) and type(a.n_b) is int


def test_int64_overflow_is_rejected():
    with pytest.raises(UserInputError, match="beyond the supported range"):
        evaluate_many(GPT_1_7B, HW, Method.IMPROVED, n_b=4611686018427387904, n_mu=4)
    with pytest.raises(UserInputError, match="2\\*\\*63"):
        evaluate_many(GPT_1_7B, HW, Method.IMPROVED, n_b=2**63)
