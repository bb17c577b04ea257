"""The host's floor of an eager framework (lgacc.model.calibrated.host and its use in the step)."""

from __future__ import annotations

import pytest

from lgacc.model.calibrated import Recipe, expected
from lgacc.model.calibrated.host import host_bound_spread, host_times
from lgacc.model.calibrated.parameters import fitted_calibration, link_priors
from lgacc.model.config import TrainingConfig
from lgacc.model.transformer import Transformer


def test_the_host_time_is_read_from_the_measured_steps_by_hand(tmp_path):
    table = tmp_path / "training.csv"
    table.write_text(
        "d_m,d_l,d_a,d_s,b_mu,recompute,step_seconds\n"
        "512,4,8,1024,2,none,0.0100\n"     # narrowest width, fewest tokens: host-bound rows
        "512,4,8,2048,1,none,0.0120\n"
        "512,4,8,1024,2,full,0.0180\n"
        "512,4,8,2048,4,none,0.0900\n"     # narrowest width, more tokens: not read
        "1024,2,8,1024,2,none,0.0010\n",   # wider: not read
        encoding="utf-8")
    times = host_times.__wrapped__(table)
    assert times["host_layer_s"] == pytest.approx(0.0100 / 4)
    assert times["host_recompute_s"] == pytest.approx((0.0180 - 0.0100) / 4)
    assert host_bound_spread(table) == pytest.approx(1.2)


def test_the_shipped_measurement_is_host_bound_and_the_model_reads_it():
    times = host_times()
    # 4,096 tokens as 4 x 1024, 2 x 2048, 1 x 4096 on 8 layers of width 1024: 22.3-23.7 ms whatever the attention
    assert host_bound_spread() < 1.1
    assert 1e-3 < times["host_layer_s"] < 5e-3
    assert link_priors().host_layer_s == times["host_layer_s"]
    assert fitted_calibration().host_recompute_s == times["host_recompute_s"]


TINY = Transformer(name="tiny", d_s=256, d_m=256, d_l=24, d_a=4, d_h=64, d_v=1024)


def test_a_stage_of_tiny_layers_runs_at_the_hosts_pace_unless_captured_in_cuda_graphs():
    config = TrainingConfig(method="baseline", n_b=1, n_l=1, n_a=1, n_mu=4, b_mu=1)
    calibration = fitted_calibration()
    eager = expected(TINY, "h100-sxm", config, recipe=Recipe(recompute="none"), calibration=calibration)
    graphs = expected(TINY, "h100-sxm", config, recipe=Recipe(recompute="none", cuda_graphs=True),
                      calibration=calibration)
    floor = config.n_mu * TINY.d_l * calibration.host_layer_s
    assert graphs.step_time_s < floor  # the device alone is faster than the host
    # the measured host time is a whole step's over its layers: the layers' passes wait on it; the optimizer's step,
    # issued after the host has waited for the device (the gradient norm's .item()), follows the floor
    optimizer = graphs.step_parts_s["optimizer"]
    assert optimizer > 0 and graphs.step_parts_s["data_parallel"] == 0
    assert eager.step_time_s == pytest.approx(floor + optimizer, rel=1e-12)
    layers = graphs.step_parts_s["pipeline"] + graphs.step_parts_s["bubble"]
    assert eager.step_parts_s["host"] == pytest.approx(floor - layers, rel=1e-9)
    assert graphs.step_parts_s["host"] == 0
    full = expected(TINY, "h100-sxm", config, recipe=Recipe(recompute="full"), calibration=calibration)
    by_hand = config.n_mu * TINY.d_l * (calibration.host_layer_s + calibration.host_recompute_s) + optimizer
    assert full.step_time_s == pytest.approx(by_hand, rel=1e-12)


def test_a_pipeline_waits_on_the_host_for_its_ramp_too():
    # 1F1B on 4 stages: each device issues its micro-batches and the ramp's 3 stage passes, 6 layers each
    config = TrainingConfig(method="baseline", n_b=1, n_l=4, n_a=1, n_mu=8, b_mu=1)
    calibration = fitted_calibration()
    eager = expected(TINY, "h100-sxm", config, recipe=Recipe(recompute="none"), schedule="1f1b",
                     calibration=calibration)
    by_hand = (8 + 3) * 6 * calibration.host_layer_s + eager.step_parts_s["optimizer"]
    assert eager.step_parts_s["data_parallel"] == 0
    assert eager.step_time_s == pytest.approx(by_hand, rel=1e-12)


def test_a_large_layer_never_meets_the_floor():
    config = TrainingConfig(method="baseline", n_b=1, n_l=1, n_a=1, n_mu=2, b_mu=2)
    big = Transformer(name="big", d_s=4096, d_m=8192, d_l=4, d_a=64, d_h=128, d_v=32000)
    eager = expected(big, "h100-sxm", config, recipe=Recipe(recompute="none"))
    graphs = expected(big, "h100-sxm", config, recipe=Recipe(recompute="none", cuda_graphs=True))
    assert eager.step_time_s == graphs.step_time_s


def test_cuda_graphs_reads_from_the_command_line():
    assert Recipe.from_strings(["cuda_graphs=yes"]) == Recipe(cuda_graphs=True)


def test_the_reduction_exposed_after_the_last_backward_pass_follows_the_floor():
    # 4 data-parallel replicas, reduction after the backward pass (Megatron-LM without --overlap-grad-reduce): the host
    # issues it after the last layer and waits for it at the gradient norm, so it adds to the floor
    config = TrainingConfig(method="baseline", n_b=4, n_l=1, n_a=1, n_mu=4, b_mu=1)
    calibration = fitted_calibration()
    recipe = Recipe(recompute="none", dp_overlap=False)
    eager = expected(TINY, "h100-sxm", config, recipe=recipe, calibration=calibration)
    graphs = expected(TINY, "h100-sxm", config, recipe=Recipe(recompute="none", dp_overlap=False, cuda_graphs=True),
                      calibration=calibration)
    floor = config.n_mu * TINY.d_l * calibration.host_layer_s
    reduction, optimizer = graphs.step_parts_s["data_parallel"], graphs.step_parts_s["optimizer"]
    assert reduction > 0 and optimizer > 0
    assert graphs.step_parts_s["pipeline"] + graphs.step_parts_s["bubble"] < floor
    assert eager.step_time_s == pytest.approx(floor + reduction + optimizer, rel=1e-12)
    assert eager.step_parts_s["data_parallel"] == reduction


def test_a_host_that_never_waits_hides_the_reduction_and_the_optimizer_under_its_floor():
    # host_sync off: the host runs ahead into the next step, the device's reduction and optimizer fill the floor
    config = TrainingConfig(method="baseline", n_b=4, n_l=1, n_a=1, n_mu=4, b_mu=1)
    calibration = fitted_calibration()
    ahead = expected(TINY, "h100-sxm", config, recipe=Recipe(recompute="none", dp_overlap=False, host_sync=False),
                     calibration=calibration)
    waits = expected(TINY, "h100-sxm", config, recipe=Recipe(recompute="none", dp_overlap=False),
                     calibration=calibration)
    floor = config.n_mu * TINY.d_l * calibration.host_layer_s
    parts = waits.step_parts_s
    assert parts["data_parallel"] + parts["optimizer"] < floor - parts["pipeline"]  # still under the floor
    assert ahead.step_time_s == pytest.approx(floor, rel=1e-12)
    assert waits.step_time_s == pytest.approx(floor + parts["data_parallel"] + parts["optimizer"], rel=1e-12)


def test_host_sync_reads_from_the_command_line():
    assert Recipe.from_strings(["host_sync=no"]) == Recipe(host_sync=False)
    assert Recipe().host_sync is True
