"""The "Sparse models" chapter's numbers (lgacc.studies.sparse) against hand-derived limits."""

from __future__ import annotations

import pytest

from lgacc.model.hardware import load_hardware
from lgacc.studies import sparse


def test_sparse_x_keeps_the_active_parameters_of_x():
    from lgacc.model.transformer import x_model

    dense = x_model(32)
    for experts, k in ((2, 1), (64, 8)):
        model = sparse.sparse_x(32, experts, k)
        # attention and the k experts of width 4 d_m / k: the dense layer's weights, plus the router's d_m E
        assert model.p_active_leading == dense.p_leading + dense.d_l * dense.d_m * experts


def test_the_all_to_all_tends_to_k_nu_net_over_4_d_m():
    """At large sparsity: 8 x 12 d_m^2 flops a token and layer over 2 x 6 x k d_m x 2 bytes = 4 d_m / k flop/B;
    the attention products add 4 d_s d_m flops (a few per cent), so the computed overhead is a little smaller."""
    hw = load_hardware("a100-80gb")
    threshold = hw.peak_flop_per_s / hw.infiniband_bandwidth_bytes_per_s
    d_m, k = 160**2, 8
    computed = sparse.all_to_all_overhead(sparse.sparse_x(160, 1024 * k, k), hw, 1024)
    limit = k * threshold / (4 * d_m) * 1023 / 1024
    assert computed < limit and computed == pytest.approx(limit, rel=0.05)


def test_the_cap_fails_where_the_group_leaves_the_node():
    """X32, k = 1: inside the 16-GPU node the NVLink overhead is about nu_NVL / (4 d_m) = 0.12 (< 25 %); one step
    further (s = 32) the group is on InfiniBand, about nu_IB / (4 d_m) = 1.4."""
    hw = load_hardware("a100-80gb")
    assert hw.gpus_per_node == 16
    assert hw.threshold("nvlink") / (4 * 32**2) < 0.25 < hw.threshold("infiniband") / (4 * 32**2)
    assert sparse.failing_sparsity(32, 1, hw, "infiniband") == 32
    assert sparse.failing_sparsity(32, 1, hw, "nvlink") is None


def test_the_grade_says_today_is_past_the_extreme_on_infiniband():
    today = sparse.today_table("h100-sxm")
    deepseek = today[(today["model"] == "DeepSeek-V3") & (today["n_e"] == 64) & (today["precision"] == "bf16")]
    assert float(deepseek["overhead (infiniband)"].iloc[0]) > 0.25
    text = sparse.grade(sparse.intensity_table(x=160, k=2, sparsities=(1, 8, 32, 64)), sparse.cap_table(xs=(160,)),
                        today)
    assert "past the extreme" in text and "✓" in text
