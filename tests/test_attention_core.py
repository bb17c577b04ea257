"""The attention core of a sparse model's surrogate: latent attention's heads are 192 (scores) and 128 (values)
wide, not the surrogate's d_m / d_a, and the difference is added to every layer (lgacc.model.calibrated.sparse)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from lgacc.model.calibrated.parameters import fitted_calibration
from lgacc.model.calibrated.recipe import DEFAULT_RECIPE
from lgacc.model.calibrated.sparse import (active_surrogate, attention_core_addition, attention_core_widths,
                                           expected_sparse)
from lgacc.model.config import TrainingConfig
from lgacc.model.hardware import load_hardware
from lgacc.model.transformer import Transformer, load_model
from lgacc.paths import DATA

V2 = DATA / "validation" / "models" / "simumax-deepseek-v2-l4.yaml"
B200 = DATA / "validation" / "hardware" / "b200-simumax.yaml"
SIMUMAX = DATA / "calibrated" / "simumax-b200-4dcaae5" / "b200_bf16_ceperm.json"
CUDNN = replace(DEFAULT_RECIPE, attention_kernel="cudnn", flash_attention=True, recompute="none")


def _v2_config(**changes):
    return TrainingConfig("baseline", **{"n_b": 8, "n_e": 8, "n_mu": 4, **changes})


def test_latent_widths_are_the_rotary_and_plain_query_dimensions_then_the_value_dimension():
    assert attention_core_widths(load_model(V2)) == (128.0 + 64.0, 128.0)
    dense = load_model("llama-3-70b")
    assert attention_core_widths(dense) == (float(dense.d_h), float(dense.d_h))


def test_the_surrogate_of_deepseek_v2_has_heads_of_d_m_over_d_a():
    surrogate = active_surrogate(load_model(V2))
    assert (surrogate.d_a, surrogate.d_h) == (128, 5120 // 128) == (128, 40)


def test_latent_core_addition_by_hand_on_simumax_b200_table():
    """2 s^2 h (192 + 128) flops against the surrogate's 4 s^2 h 40, both read SimuMax's MLA entry (the nearest to
    the surrogate's 40-wide heads as well: log distance 2.73 against 4.41 for 16 key/value heads at 128), executed
    half forward and 2.5 times that backward at kappa e c: each pass takes the unmasked flops at SimuMax's own
    efficiency, as SimuMax times it."""
    model, hw, calibration = load_model(V2), load_hardware(B200), fitted_calibration().replace(kappa=0.8)
    table = json.loads(SIMUMAX.read_text())["accelerator"]["op"]
    key = ("batch=1, seq_len=4096, head_num=128, kv_head_num=128, qk_head_dim=192, v_head_dim=128, "
           "qkv_contiguous=False")
    # SimuMax's efficiencies count the unmasked flops; the model counts the executed half: half the table's
    e = 0.5 * 3.5 / (1 / table["sdp_fwd"]["accurate_efficient_factor"][key]
                     + 2.5 / table["sdp_bwd"]["accurate_efficient_factor"][key])
    s, h = 4096.0, 128.0
    extra_flops = 2 * h * s**2 * 320 - 4 * h * s**2 * 40  # = 480 h s^2
    expected = (0.5 + 2.5 * 0.5) * extra_flops / (0.8 * e * 2250e12)
    got = attention_core_addition(model, active_surrogate(model), hw, _v2_config(), calibration, CUDNN, 0.0)
    assert got == pytest.approx(expected, rel=1e-12)
    assert 1e-3 < got < 1e-2  # a few milliseconds per layer and micro-batch on a 4096-token sequence


def test_full_recomputation_repeats_the_forward_share():
    model, hw, cal = load_model(V2), load_hardware(B200), fitted_calibration()
    surrogate = active_surrogate(model)
    none = attention_core_addition(model, surrogate, hw, _v2_config(), cal, CUDNN, 0.0)
    full = attention_core_addition(model, surrogate, hw, _v2_config(), cal, CUDNN, 1.0)
    assert full / none == pytest.approx((1 + 1 + 2.5) / (1 + 2.5))


def test_tensor_parallelism_divides_the_heads():
    model, hw, cal = load_model(V2), load_hardware(B200), fitted_calibration()
    surrogate = active_surrogate(model)
    one = attention_core_addition(model, surrogate, hw, _v2_config(), cal, CUDNN, 0.0)
    # at the same table entry (SimuMax holds 64 heads with 192/128: its own efficiency), the flops halve
    two = attention_core_addition(model, surrogate, hw, _v2_config(n_a=2, n_b=4, n_e=4), cal, CUDNN, 0.0)
    assert 0 < two < one


def test_no_addition_where_the_heads_are_the_surrogates():
    hw, cal = load_hardware(B200), fitted_calibration()
    dense = load_model("llama-3-70b")  # d_a d_h = d_m: the surrogate's heads
    assert attention_core_addition(dense, dense, hw, _v2_config(n_e=1), cal, CUDNN, 0.0) == 0.0


def test_the_step_holds_the_addition_over_every_layer_and_the_ramp():
    model, hw = load_model(V2), load_hardware(B200)
    config = _v2_config()
    result = expected_sparse(model, hw, config, recipe=CUDNN)
    per_layer = attention_core_addition(model, active_surrogate(model), hw, config, fitted_calibration(), CUDNN, 0.0)
    assert result.attention_core_s == pytest.approx((4 + 1 - 1) * 4 * per_layer)
    assert result.summary()["expected_step_breakdown_s"]["attention_core"] == result.attention_core_s
    parts = (result.dense.step_time_s + result.expert_gemm_s + result.all_to_all_s + result.attention_core_s
             + result.dispatch_s)
    assert result.dispatch_s > 0 and result.step_time_s == pytest.approx(parts)


def test_unfused_core_at_the_gemm_rate_by_hand():
    """Without FlashAttention: the extra 480 h s^2 flops forward, twice backward, once more when recomputed
    selectively, at kappa e_max c (the B200 spec's gemm_max_efficiency)."""
    model, hw = load_model(V2), load_hardware(B200)
    calibration = fitted_calibration().replace(kappa=0.8)
    extra = 480 * 128.0 * 4096.0**2
    rate = 0.8 * hw.gemm_max_efficiency * 2250e12
    unfused = replace(CUDNN, flash_attention=False)
    surrogate = active_surrogate(model)
    got = attention_core_addition(model, surrogate, hw, _v2_config(), calibration, unfused, 0.0)
    assert got == pytest.approx(3 * extra / rate, rel=1e-12)
    selective = replace(unfused, recompute="selective")
    got = attention_core_addition(model, surrogate, hw, _v2_config(), calibration, selective, 0.0)
    assert got == pytest.approx(4 * extra / rate, rel=1e-12)


def _llama_8b_at(sequence: int) -> Transformer:
    """Llama 3 8B's shape (32 layers, 32 heads of 128, 8 key-value heads) at a sequence of ``sequence`` tokens."""
    return Transformer(name="Llama-3-8B shape", d_l=32, d_m=4096, d_a=32, d_h=128, d_s=sequence, d_I=14336,
                       gated=True, d_kv=8, d_v=128256)


def test_ring_attention_core_by_hand_without_flash_attention():
    """Context parallelism over n_c ranks: a rank's d_s / n_c queries meet all d_s keys (ring attention), so its
    unfused core computes 4 h (d_s / n_c) d_s d_h flops forward where the surrogate (the shard alone) computes
    4 h (d_s / n_c)^2 d_h; the difference, forward and twice backward, at kappa e_max c."""
    hw, calibration = load_hardware(B200), fitted_calibration().replace(kappa=0.8)
    model, n_c = _llama_8b_at(32768), 4
    config = TrainingConfig("baseline", n_b=2, n_c=n_c)
    surrogate = active_surrogate(model, n_c)
    assert surrogate.d_s == 32768 // 4
    h, d_h, s = 32.0, 128.0, 32768.0
    extra = 4 * h * d_h * (s / n_c * s - (s / n_c) ** 2)
    rate = 0.8 * hw.gemm_max_efficiency * 2250e12
    unfused = replace(CUDNN, flash_attention=False)
    got = attention_core_addition(model, surrogate, hw, config, calibration, unfused, 0.0)
    assert got == pytest.approx(3 * extra / rate, rel=1e-12)


def test_ring_attention_addition_grows_with_the_other_shards_at_a_fixed_shard_length():
    """With flash attention the shard's kernel runs at the efficiency of its own length: at a fixed shard of 8192
    tokens the addition is n_c - 1 shards' worth (3 at n_c = 4 against 1 at n_c = 2), and none without context
    parallelism."""
    hw, cal = load_hardware(B200), fitted_calibration()

    def addition(n_c):
        model = _llama_8b_at(8192 * n_c)
        config = TrainingConfig("baseline", n_b=2, n_c=n_c)
        return attention_core_addition(model, active_surrogate(model, n_c), hw, config, cal, CUDNN, 0.0)

    assert addition(1) == 0.0
    assert addition(2) > 0
    assert addition(4) / addition(2) == pytest.approx(3.0, rel=1e-12)


def test_context_parallel_step_holds_the_ring_attention():
    """The expected step of a context-parallel dense run counts the ring's attention (it did not: the shard's
    own core only), over every layer."""
    hw = load_hardware(B200)
    model = _llama_8b_at(65536)
    config = TrainingConfig("baseline", n_b=2, n_c=4)
    result = expected_sparse(model, hw, config, recipe=CUDNN)
    per_layer = attention_core_addition(model, active_surrogate(model, 4), hw, config, fitted_calibration(), CUDNN,
                                        0.0)
    assert per_layer > 0
    assert result.attention_core_s == pytest.approx(model.d_l * per_layer)
    assert result.step_time_s == pytest.approx(result.dense.step_time_s + result.attention_core_s)
