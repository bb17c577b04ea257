"""FP8 recipes multiply the linear maps in FP8 and keep the fused attention core in bf16
(lgacc.model.calibrated.sparse): the calibrated model times the attention at the bf16 peak, not at the FP8 peak
the products reach."""

from __future__ import annotations

from dataclasses import replace

import pytest

from lgacc.model.calibrated.expected import inputs
from lgacc.model.calibrated.parameters import fitted_calibration
from lgacc.model.calibrated.recipe import DEFAULT_RECIPE
from lgacc.model.calibrated.sparse import expected_sparse
from lgacc.model.config import TrainingConfig
from lgacc.model.hardware import load_hardware
from lgacc.model.transformer import Transformer

FLASH = replace(DEFAULT_RECIPE, flash_attention=True, recompute="none")


def _model(sequence: int) -> Transformer:
    return Transformer(name="Llama-3-8B shape", d_l=32, d_m=4096, d_a=32, d_h=128, d_s=sequence, d_I=14336,
                       gated=True, d_kv=8, d_v=128256)


@pytest.mark.parametrize("gpu", ["h100-sxm", "b200"])
def test_the_attention_rate_is_the_bf16_one_under_fp8(gpu):
    """kappa e_att c, the program's attention rate, is the same whether the products run at the bf16 or the FP8
    peak when the attention's peak is given as the bf16 one."""
    bf16 = load_hardware(gpu)
    fp8 = bf16.at_precision("fp8")
    assert fp8.peak_flop_per_s == pytest.approx(2 * bf16.peak_flop_per_s, rel=0.01)
    common = dict(n_b=1, recipe=FLASH, calibration=fitted_calibration())
    plain = inputs(_model(8192), bf16, "baseline", **common)
    kept = inputs(_model(8192), fp8, "baseline", attention_peak_flop_per_s=bf16.peak_flop_per_s, **common)
    faster = inputs(_model(8192), fp8, "baseline", **common)
    assert kept["e_att"] * kept["c"] == pytest.approx(plain["e_att"] * plain["c"], rel=1e-12)
    assert faster["e_att"] * faster["c"] == pytest.approx(2 * plain["e_att"] * plain["c"], rel=0.01)


def test_an_fp8_step_gains_less_where_attention_weighs_more():
    """Only the products speed up: at the same 32,768 tokens a micro-batch on one GPU, the FP8 step over the bf16
    step grows with the sequence (the attention's share), and stays above one half (every product at twice the
    rate, the attention at the same)."""
    hw = load_hardware("h100-sxm")

    def ratio(sequence):
        b_mu = 32768 // sequence
        fp8 = expected_sparse(_model(sequence), hw, TrainingConfig("baseline", n_b=1, b_mu=b_mu, precision="fp8"),
                              recipe=FLASH)
        bf16 = expected_sparse(_model(sequence), hw, TrainingConfig("baseline", n_b=1, b_mu=b_mu), recipe=FLASH)
        return fp8.step_time_s / bf16.step_time_s

    short, long = ratio(2048), ratio(32768)
    assert 0.5 < short < long < 1.0


def test_fp8_speedup_measured_on_the_h100_is_below_the_vendor_peaks_two():
    """The median of t_bf16 / t_fp8 over the 19 compute-bound shapes of the H100's gemm.csv measured in both
    precisions (computed by hand from the file: 1.7394), read for the H100 chip's names only."""
    from lgacc.model.calibrated.gemm_table import fp8_speedup

    for gpu in ("h100-sxm", "h200"):
        assert fp8_speedup(gpu) == pytest.approx(1.7394, abs=1e-4)
        assert 1.0 < fp8_speedup(gpu) < 2.0
    assert fp8_speedup("a100-80gb") is None
    assert fp8_speedup("b200") is None


def test_fp8_products_run_at_the_measured_multiple_of_bf16_where_measured():
    from lgacc.model.calibrated.sparse import _at_precision

    h100, b200 = load_hardware("h100-sxm"), load_hardware("b200")
    assert _at_precision(h100, "fp8").peak_flop_per_s == pytest.approx(h100.peak_flop_per_s * 1.7394, rel=1e-4)
    assert _at_precision(b200, "fp8").peak_flop_per_s == b200.peak_fp8_flop_per_s
    assert _at_precision(h100, "bf16") is h100


def test_fp8_products_file_without_a_compute_bound_pair_is_one_clear_error(tmp_path):
    from lgacc.errors import UserInputError
    from lgacc.model.calibrated.gemm_table import _read_fp8_speedup

    path = tmp_path / "gemm.csv"
    path.write_text("label,precision,M,N,K,flops,seconds,tflops\n"
                    "square,bf16,256,256,256,33554432.0,2.5e-05,1.34\n"
                    "square,fp8,256,256,256,33554432.0,2.4e-05,1.40\n")
    with pytest.raises(UserInputError, match="no compute-bound shape"):
        _read_fp8_speedup(path, 989e12)
    path.write_text("label,precision,M\nsquare,bf16,x\n")
    with pytest.raises(UserInputError, match="cannot read the FP8 products"):
        _read_fp8_speedup(path, 989e12)
