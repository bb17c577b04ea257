"""The host's floor of an eager framework (lgacc.model.calibrated.host and its use in the step)."""

from __future__ import annotations

import pytest

from lgacc.model.calibrated import Recipe, expected
from lgacc.model.calibrated.host import host_bound_spread, host_step_fit, host_terms, host_times
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
    times, terms = host_times(), host_terms("pytorch")
    # 4,096 tokens as 4 x 1024, 2 x 2048, 1 x 4096 on 8 layers of width 1024: 22.3-23.7 ms whatever the attention
    assert host_bound_spread() < 1.1
    assert 1e-3 < times["host_layer_s"] < 5e-3
    priors = link_priors()
    assert priors.host_layer_s == terms["layer_s"] and priors.host_step_s == terms["step_s"]
    assert priors.host_step_layer_s == terms["step_layer_s"] and priors.host_micro_batch_s == terms["micro_batch_s"]
    assert fitted_calibration().host_recompute_s == times["host_recompute_s"]
    # the terms, fitted at width 64, against the other script's whole steps at width 1,024 (8 layers, one
    # micro-batch): within 5 %
    one_step = terms["step_s"] + 8 * terms["step_layer_s"] + terms["micro_batch_s"] + 8 * terms["layer_s"]
    assert one_step / 8 == pytest.approx(times["host_layer_s"], rel=0.05)


def test_the_host_terms_are_the_steps_least_squares_fit_none_negative():
    import numpy as np

    # exact steps of 2 ms a step, 0.1 ms a layer and step, 1 ms a micro-batch, 3 ms a layer and micro-batch
    layers, micro = np.meshgrid([1, 2, 4, 8], [1, 2, 4])
    layers, micro = layers.ravel(), micro.ravel()
    exact = 0.002 + 0.0001 * layers + micro * (0.001 + 0.003 * layers)
    terms, mean, worst = host_step_fit(layers, micro, exact)
    assert terms == pytest.approx((0.002, 0.0001, 0.001, 0.003), abs=1e-12) and worst < 1e-9
    # a negative time a step in the steps: no term of the fit is negative, and it is the constrained least squares
    # (Karush-Kuhn-Tucker: the residual's gradient is 0 along every positive term, not negative along a zero one)
    shifted = exact - 0.004
    terms, _, _ = host_step_fit(layers, micro, shifted)
    design = np.column_stack([np.ones_like(layers), layers, micro, micro * layers]).astype(float)
    gradient = design.T @ (design @ np.asarray(terms) - shifted)
    assert min(terms) >= 0 and terms[0] == 0
    for term, slope in zip(terms, gradient):
        assert (abs(slope) < 1e-12) if term > 0 else (slope > -1e-12)
    # kernel counts may fit a negative once-a-step count exactly: unconstrained there
    counts, _, worst = host_step_fit(layers, micro, 90 * micro * layers + 7 * micro - 3, non_negative=False)
    assert counts == pytest.approx((-3, 0, 7, 90), abs=1e-9) and worst < 1e-12


def floor(calibration, layers: int, micro_batches: int, ramp: int = 0, recompute: bool = False,
          megatron: bool = False) -> float:
    """The host floor of a stage by hand: once a step, once a layer and step, once a stage pass (micro-batch or ramp),
    once a layer and stage pass (lgacc.model.calibrated.host)."""
    c = calibration
    if megatron:
        step, step_layer, micro = c.host_megatron_step_s, c.host_megatron_step_layer_s, c.host_megatron_micro_batch_s
        layer, again = c.host_layer_s + c.host_megatron_layer_s, c.host_megatron_recompute_s
    else:
        step, step_layer, micro = c.host_step_s, c.host_step_layer_s, c.host_micro_batch_s
        layer, again = c.host_layer_s, c.host_recompute_s
    return step + layers * step_layer + (micro_batches + ramp) * (micro + layers * (layer + recompute * again))


TINY = Transformer(name="tiny", d_s=256, d_m=256, d_l=24, d_a=4, d_h=64, d_v=1024)


def test_a_stage_of_tiny_layers_runs_at_the_hosts_pace_unless_captured_in_cuda_graphs():
    config = TrainingConfig(method="baseline", n_b=1, n_l=1, n_a=1, n_mu=4, b_mu=1)
    calibration = fitted_calibration()
    eager = expected(TINY, "h100-sxm", config, recipe=Recipe(recompute="none"), calibration=calibration)
    graphs = expected(TINY, "h100-sxm", config, recipe=Recipe(recompute="none", cuda_graphs=True),
                      calibration=calibration)
    floor_s = floor(calibration, TINY.d_l, config.n_mu)
    assert graphs.step_time_s < floor_s  # the device alone is faster than the host
    # the measured host time is a whole step's over its layers: the layers' passes wait on it; the optimizer's step,
    # issued after the host has waited for the device (the gradient norm's .item()), follows the floor
    optimizer = graphs.step_parts_s["optimizer"]
    assert optimizer > 0 and graphs.step_parts_s["data_parallel"] == 0
    assert eager.step_time_s == pytest.approx(floor_s + optimizer, rel=1e-12)
    layers = graphs.step_parts_s["pipeline"] + graphs.step_parts_s["bubble"]
    assert eager.step_parts_s["host"] == pytest.approx(floor_s - layers, rel=1e-9)
    assert graphs.step_parts_s["host"] == 0
    full = expected(TINY, "h100-sxm", config, recipe=Recipe(recompute="full"), calibration=calibration)
    by_hand = floor(calibration, TINY.d_l, config.n_mu, recompute=True) + optimizer
    assert full.step_time_s == pytest.approx(by_hand, rel=1e-12)


def test_a_pipeline_waits_on_the_host_for_its_ramp_too():
    # 1F1B on 4 stages: each device issues its micro-batches and the ramp's 3 stage passes, 6 layers each
    config = TrainingConfig(method="baseline", n_b=1, n_l=4, n_a=1, n_mu=8, b_mu=1)
    calibration = fitted_calibration()
    eager = expected(TINY, "h100-sxm", config, recipe=Recipe(recompute="none"), schedule="1f1b",
                     calibration=calibration)
    by_hand = floor(calibration, 6, 8, ramp=3) + eager.step_parts_s["optimizer"]
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
    floor_s = floor(calibration, TINY.d_l, config.n_mu)
    reduction, optimizer = graphs.step_parts_s["data_parallel"], graphs.step_parts_s["optimizer"]
    assert reduction > 0 and optimizer > 0
    assert graphs.step_parts_s["pipeline"] + graphs.step_parts_s["bubble"] < floor_s
    assert eager.step_time_s == pytest.approx(floor_s + reduction + optimizer, rel=1e-12)
    assert eager.step_parts_s["data_parallel"] == reduction


def test_a_host_that_never_waits_hides_the_reduction_and_the_optimizer_under_its_floor():
    # host_sync off: the host runs ahead into the next step, the device's reduction and optimizer fill the floor
    config = TrainingConfig(method="baseline", n_b=4, n_l=1, n_a=1, n_mu=4, b_mu=1)
    calibration = fitted_calibration()
    ahead = expected(TINY, "h100-sxm", config, recipe=Recipe(recompute="none", dp_overlap=False, host_sync=False),
                     calibration=calibration)
    waits = expected(TINY, "h100-sxm", config, recipe=Recipe(recompute="none", dp_overlap=False),
                     calibration=calibration)
    floor_s = floor(calibration, TINY.d_l, config.n_mu)
    parts = waits.step_parts_s
    assert parts["data_parallel"] + parts["optimizer"] < floor_s - parts["pipeline"]  # still under the floor
    assert ahead.step_time_s == pytest.approx(floor_s, rel=1e-12)
    assert waits.step_time_s == pytest.approx(floor_s + parts["data_parallel"] + parts["optimizer"], rel=1e-12)


def test_host_sync_reads_from_the_command_line():
    assert Recipe.from_strings(["host_sync=no"]) == Recipe(host_sync=False)
    assert Recipe().host_sync is True


# --- Megatron-Core's host (recipe host_framework, measured by benchmarks/gpu/measure_megatron_host.py) ---------------

def _host_rows(layers_per_micro_batch_s: float, per_micro_batch_s: float, per_step_s: float) -> list[tuple]:
    """Steps of an exact host model over 1-4 micro-batches and 2-8 layers (what a host-bound measurement holds)."""
    return [(d_l, n_mu, per_step_s + n_mu * (per_micro_batch_s + d_l * layers_per_micro_batch_s))
            for d_l in (2, 4, 8) for n_mu in (1, 2, 4)]


def test_megatron_extra_host_time_is_the_difference_of_the_two_fitted_slopes_by_hand(tmp_path):
    from lgacc.model.calibrated.host import megatron_host_extra_s

    eager, core = tmp_path / "host.csv", tmp_path / "megatron_host.csv"
    eager.write_text("d_m,d_l,n_mu,step_seconds\n" + "".join(
        f"64,{d_l},{n_mu},{t!r}\n" for d_l, n_mu, t in _host_rows(0.002, 0.003, 0.004))
        + "1024,8,1,9.0\n", encoding="utf-8")  # another width: not read
    core.write_text("spec,layers,micro_batches,width,step_seconds\n" + "".join(
        f"local,{d_l},{n_mu},64,{t!r}\n" for d_l, n_mu, t in _host_rows(0.0035, 0.001, 0.010))
        + "local_moe,8,4,64,9.0\n", encoding="utf-8")  # the experts' rows: not read
    assert megatron_host_extra_s.__wrapped__(eager, (core,)) == pytest.approx(0.0015, rel=1e-9)
    # two leases of the same steps, pooled: the same design twice, so the fit is their average (4.0 - 2.0 ms)
    other = tmp_path / "megatron_host_variants.csv"
    other.write_text("spec,layers,micro_batches,width,step_seconds\n" + "".join(
        f"local,{d_l},{n_mu},64,{t!r}\n" for d_l, n_mu, t in _host_rows(0.0045, 0.002, 0.007))
        + "local_recompute_full,8,4,64,9.0\n", encoding="utf-8")  # another spec: not read
    assert megatron_host_extra_s.__wrapped__(eager, (core, other)) == pytest.approx(0.002, rel=1e-9)


def test_megatron_extra_host_time_refuses_a_table_that_cannot_fit_four_terms(tmp_path):
    from lgacc.errors import UserInputError
    from lgacc.model.calibrated.host import megatron_host_extra_s

    eager, core = tmp_path / "host.csv", tmp_path / "megatron_host.csv"
    eager.write_text("d_m,d_l,n_mu,step_seconds\n64,2,1,0.01\n64,2,2,0.02\n", encoding="utf-8")
    core.write_text("spec,layers,micro_batches,width,step_seconds\nlocal,2,1,64,0.01\n", encoding="utf-8")
    with pytest.raises(UserInputError, match="at least 5 rows"):
        megatron_host_extra_s.__wrapped__(eager, (core,))


def test_the_shipped_megatron_measurement_costs_more_per_layer_and_the_calibration_carries_it():
    import csv

    from lgacc.model.calibrated.host import MEGATRON_HOST_FILES, PYTORCH_HOST_FILE, megatron_host_extra_s

    extra = megatron_host_extra_s()
    assert 0.5e-3 < extra < 2e-3  # about 3 against 2.2 ms per layer and micro-batch
    assert link_priors().host_megatron_layer_s == extra == fitted_calibration().host_megatron_layer_s
    # independent of the fit: the step's growth from 1 to 4 micro-batches, at 8 layers less at 2, over 3 micro-batches
    # of 6 layers, is a layer's host time per micro-batch (what a step and a micro-batch pay once drops out); the
    # Megatron-Core leases that measured those four corners, averaged
    def layer_slope(path, keep, layers_key, micro_key):
        with open(path, newline="", encoding="utf-8") as handle:
            rows = {(int(r[layers_key]), int(r[micro_key])): float(r["step_seconds"])
                    for r in csv.DictReader(handle) if keep(r)}
        if not {(8, 4), (8, 1), (2, 4), (2, 1)} <= set(rows):
            return None
        return ((rows[8, 4] - rows[8, 1]) - (rows[2, 4] - rows[2, 1])) / (3 * 6)

    leases = [layer_slope(path, lambda r: r["spec"] == "local", "layers", "micro_batches") for path in MEGATRON_HOST_FILES]
    leases = [slope for slope in leases if slope is not None]
    assert len(leases) == 3
    eager = layer_slope(PYTORCH_HOST_FILE, lambda r: r["d_m"] == "64", "d_l", "n_mu")
    assert sum(leases) / len(leases) - eager == pytest.approx(extra, rel=0.25)


def test_a_megatron_host_adds_its_measured_layer_cost_to_the_floor():
    config = TrainingConfig(method="baseline", n_b=1, n_l=1, n_a=1, n_mu=4, b_mu=1)
    calibration = fitted_calibration()
    megatron = floor(calibration, TINY.d_l, config.n_mu, megatron=True)
    assert megatron > floor(calibration, TINY.d_l, config.n_mu)  # Megatron-Core issues more than plain PyTorch

    def step(**recipe):
        recipe = {"host_framework": "megatron", "dp_overlap": False, **recipe}
        return expected(TINY, "h100-sxm", config, recipe=Recipe(**recipe), calibration=calibration)

    none = step(recompute="none")
    optimizer = none.step_parts_s["optimizer"]
    assert none.step_time_s == pytest.approx(megatron + optimizer, rel=1e-12)
    # its recomputed forward, measured, in place of plain PyTorch's
    full = step(recompute="full")
    assert full.step_time_s == pytest.approx(
        floor(calibration, TINY.d_l, config.n_mu, recompute=True, megatron=True) + optimizer, rel=1e-12)
    # the attention core recomputed and the reduction's hooks, measured beside it on one lease, are not carried
    for recipe in ({"recompute": "selective"}, {"recompute": "none", "dp_overlap": True}):
        assert step(**recipe).step_time_s == pytest.approx(megatron + optimizer, rel=1e-12)
    # CUDA graphs: no host floor, whichever framework's modules
    graphs = step(recompute="none", cuda_graphs=True)
    assert graphs.step_parts_s["host"] == 0 and graphs.step_time_s < none.step_time_s


def test_the_megatron_variants_are_each_measured_beside_the_same_leases_plain_layer(tmp_path):
    from lgacc.model.calibrated.host import megatron_host_variants

    table = tmp_path / "megatron_host_variants.csv"
    rows = [("local", 0.0030), ("local_recompute_full", 0.0065), ("local_recompute_selective", 0.0045),
            ("local_overlap_grad_reduce", 0.0028)]  # faster than plain: no cost, never a negative one
    table.write_text("spec,layers,micro_batches,width,step_seconds\n" + "".join(
        f"{spec},{d_l},{n_mu},64,{t!r}\n" for spec, slope in rows for d_l, n_mu, t in _host_rows(slope, 0.002, 0.004)),
        encoding="utf-8")
    variants = megatron_host_variants.__wrapped__((table,))
    assert variants == pytest.approx({"recompute_full": 0.0035, "recompute_selective": 0.0015,
                                      "overlap_grad_reduce": 0.0}, abs=1e-12)
    plain = tmp_path / "megatron_host.csv"
    plain.write_text("spec,layers,micro_batches,width,step_seconds\nlocal,2,1,64,0.01\n", encoding="utf-8")
    from lgacc.errors import UserInputError

    with pytest.raises(UserInputError, match="no local_recompute_full, local_recompute_selective"):
        megatron_host_variants.__wrapped__((plain,))
    shipped = megatron_host_variants()
    assert shipped["recompute_full"] > shipped["recompute_selective"] > 0


def test_host_framework_reads_from_the_command_line_and_refuses_others():
    from lgacc.errors import UserInputError

    assert Recipe().host_framework == "pytorch"
    assert Recipe.from_strings(["host_framework=Megatron"]) == Recipe(host_framework="megatron")
    with pytest.raises(UserInputError, match="host_framework='jax' must be one of pytorch, megatron"):
        Recipe.from_strings(["host_framework=jax"])
