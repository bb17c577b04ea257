"""The optimizer step's bytes (lgacc.model.calibrated.kernels, counted from Megatron-LM core_r0.14.0's optimizer)."""

from __future__ import annotations

import pytest

from lgacc.model.calibrated import Recipe, expected
from lgacc.model.calibrated.parameters import fitted_calibration
from lgacc.model.config import TrainingConfig
from lgacc.model.transformer import Transformer

TINY = Transformer(name="tiny", d_s=256, d_m=256, d_l=24, d_a=4, d_h=64, d_v=1024)


def _optimizer_s(recipe: Recipe, n_b: int = 1) -> float:
    config = TrainingConfig(method="baseline", n_b=n_b, n_l=1, n_a=1, n_mu=1, b_mu=1)
    return expected(TINY, "h100-sxm", config, recipe=recipe, calibration=fitted_calibration()).step_parts_s["optimizer"]


def test_master_weights_add_the_norm_the_copy_and_the_zeroing_to_adams_bytes():
    # bytes per parameter, by hand: Adam reads master, m, v (3 x 4) and the gradient (4), writes the three (3 x 4) and
    # the bf16 copy (2): 30.  Megatron-LM's fp32 master weights add the norm's read of the main gradient (4), the
    # copy's read of the master weight (4) and the buffer's zeroing (4): 42.  PyTorch AMP (zero_grad(set_to_none=True))
    # adds nothing: 30; AMP with zeroed gradients adds the zeroing: 34
    megatron = _optimizer_s(Recipe(mixed_precision="megatron"))
    amp = _optimizer_s(Recipe(mixed_precision="amp"))
    zeroed = _optimizer_s(Recipe(mixed_precision="amp-zeroed"))
    assert megatron / amp == pytest.approx(42 / 30, rel=1e-12)
    assert zeroed / amp == pytest.approx(34 / 30, rel=1e-12)


def test_the_distributed_optimizer_shards_the_update_not_the_buffers_zeroing():
    # 4 replicas, optimizer state sharded (ZeRO 1, Megatron-LM's distributed optimizer): each device updates a quarter
    # (38 / 4 bytes per parameter) but zeroes its whole gradient buffer (4); gradients sharded too (ZeRO 2): 42 / 4
    whole = _optimizer_s(Recipe(zero_stage=0), n_b=4)
    stage_1 = _optimizer_s(Recipe(zero_stage=1), n_b=4)
    stage_2 = _optimizer_s(Recipe(zero_stage=2), n_b=4)
    assert stage_1 / whole == pytest.approx((38 / 4 + 4) / 42, rel=1e-12)
    assert stage_2 / whole == pytest.approx((42 / 4) / 42, rel=1e-12)
