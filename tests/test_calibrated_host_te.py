"""Transformer Engine's host cost, measured on one H200 lease (host_framework=megatron_te, issue #35)."""

from __future__ import annotations

import csv

import pytest

from lgacc.errors import UserInputError
from lgacc.model.calibrated import Recipe, expected
from lgacc.model.calibrated.host import TE_HOST_FILES, TE_SPEC, te_host_extra_s
from lgacc.model.calibrated.parameters import fitted_calibration, link_priors
from lgacc.model.calibrated.recipe import HOST_FRAMEWORKS
from lgacc.model.config import TrainingConfig
from lgacc.model.transformer import Transformer

TINY = Transformer(name="tiny", d_s=256, d_m=256, d_l=24, d_a=4, d_h=64, d_v=1024)


def _corner_slope(path, spec: str) -> float | None:
    """A layer's host time per micro-batch from the table's four corners, independent of the fit: the step's growth
    from 1 to 4 micro-batches at 8 layers less at 2, over 3 micro-batches of 6 layers (what a step and a micro-batch
    pay once drops out)."""
    with open(path, newline="", encoding="utf-8") as handle:
        rows = {(int(r["layers"]), int(r["micro_batches"])): float(r["step_seconds"])
                for r in csv.DictReader(handle) if r["spec"] == spec and r["width"] == "64"}
    if not {(8, 4), (8, 1), (2, 4), (2, 1)} <= set(rows):
        return None
    return ((rows[8, 4] - rows[8, 1]) - (rows[2, 4] - rows[2, 1])) / (3 * 6)


def test_transformer_engines_layer_costs_the_host_more_than_megatron_cores_own_as_its_corners_read():
    extra = te_host_extra_s()
    assert 1e-3 < extra < 3e-3  # about 5.2 against 3.5 ms per layer and micro-batch on the same lease
    differences = [_corner_slope(path, TE_SPEC) - _corner_slope(path, "local")
                   for path in TE_HOST_FILES if _corner_slope(path, TE_SPEC) is not None]
    assert len(differences) == 1  # the fused spec ran on the second run only
    assert extra == pytest.approx(differences[0], rel=0.1)
    # without the fusions: measured on both runs, cheaper than with them, still dearer than the local layer
    plain = te_host_extra_s("transformer_engine")
    corners = [_corner_slope(path, "transformer_engine") - _corner_slope(path, "local") for path in TE_HOST_FILES]
    assert 0 < plain < extra
    assert plain == pytest.approx(sum(corners) / len(corners), rel=0.25)


def test_the_calibration_carries_the_te_measurement():
    assert link_priors().host_te_layer_s == te_host_extra_s() == fitted_calibration().host_te_layer_s


def test_a_table_without_the_spec_or_with_a_cheaper_one_is_refused_in_one_line(tmp_path):
    table = tmp_path / "megatron_host_te.csv"
    lines = ["spec,layers,micro_batches,width,step_seconds"]
    for spec, per_layer in (("local", 4e-3), ("transformer_engine", 3e-3)):
        lines += [f"{spec},{layers},{mb},64,{0.002 + mb * (0.003 + layers * per_layer)}"
                  for layers in (2, 4, 8) for mb in (1, 2, 4)]
    table.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(UserInputError, match="no transformer_engine_fused rows"):
        te_host_extra_s.__wrapped__(TE_SPEC, (table,))
    with pytest.raises(UserInputError, match="cheaper than the local one"):
        te_host_extra_s.__wrapped__("transformer_engine", (table,))


def test_a_megatron_te_host_adds_exactly_its_measured_layer_cost_where_the_host_paces_the_step():
    """Tiny layers on one GPU wait on the host: the step grows by the TE extra for every layer of every micro-batch;
    a device-bound step (Llama-sized layers) does not move."""
    assert "megatron_te" in HOST_FRAMEWORKS
    calibration = fitted_calibration()
    config = TrainingConfig(method="baseline", n_b=1, n_l=1, n_a=1, n_mu=4, b_mu=1)

    def step(model, framework, cfg=config):
        recipe = Recipe(host_framework=framework, recompute="none", dp_overlap=False)
        return expected(model, "h100-sxm", cfg, recipe=recipe, calibration=calibration).step_time_s

    grown = step(TINY, "megatron_te") - step(TINY, "megatron")
    assert grown == pytest.approx(config.n_mu * TINY.d_l * calibration.host_te_layer_s, rel=1e-9)
    wide = Transformer(name="wide", d_s=4096, d_m=8192, d_l=4, d_a=64, d_h=128, d_v=1024)
    big = TrainingConfig(method="baseline", n_b=1, n_l=1, n_a=1, n_mu=2, b_mu=4)
    assert step(wide, "megatron_te", big) == pytest.approx(step(wide, "megatron", big), rel=1e-12)


def test_cuda_graphs_lift_the_te_floor_too():
    calibration = fitted_calibration()
    config = TrainingConfig(method="baseline", n_b=1, n_l=1, n_a=1, n_mu=4, b_mu=1)
    steps = {framework: expected(TINY, "h100-sxm", config, calibration=calibration,
                                 recipe=Recipe(host_framework=framework, recompute="none", cuda_graphs=True)).step_time_s
             for framework in ("pytorch", "megatron", "megatron_te")}
    assert steps["megatron_te"] == steps["megatron"] == steps["pytorch"]


def test_an_unknown_host_framework_is_one_clear_line():
    with pytest.raises(UserInputError, match="host_framework='te' must be one of pytorch, megatron, megatron_te"):
        Recipe(host_framework="te")


def test_the_tutorials_host_bound_run_at_its_shape_waited_on_the_lent_host_and_megatron_te_reads_it():
    """GPT-2 XL, one sequence, one GPU (megatron-tutorials R1): on the lent H200 its device was busy a fifth of the
    step, the step took longer than the tutorial's published one, and the reading built from the lent machine's host
    (megatron_te) predicts the lent machine's step within 10 %, the tutorial's own reading (megatron) does not."""
    from lgacc.studies.gpu_measured import TE_SHAPES_FILE, tutorial_shapes_against_calibrated

    with open(TE_SHAPES_FILE, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert {(r["spec"], r["layers"], r["width"], r["micro_batch_size"]) for r in rows} == {
        (spec, layers, width, mbs) for spec in ("local", TE_SPEC)
        for layers, width, mbs in (("48", "1600", "1"), ("40", "1536", "8"))}
    shapes = tutorial_shapes_against_calibrated().set_index("id")
    xl = shapes.loc["mtut-dp-r1-gpt2xl-dp1-gbs1"]
    assert xl.busy_s < 0.25 * xl.measured_s  # host-bound
    assert xl.published_s == 0.22 and xl.measured_s > 1.2 * xl.published_s
    assert abs(xl.megatron_te_s / xl.measured_s - 1) < 0.10 < abs(xl.megatron_s / xl.measured_s - 1)
    assert (shapes["megatron_te_s"] > shapes["megatron_s"]).all()


def test_two_releases_on_one_lease_and_the_tutorial_shape_repeats_across_leases():
    """GPT-2 XL's host-bound step repeats within 2 % across two leases with TE 2.9.0, and TE 2.11.0 takes less of the
    host for it on the same lease; the width-64 fits of the same local layer, back to back, part by more."""
    from lgacc.studies.gpu_measured import te_versions, tutorial_shapes_against_calibrated

    versions = te_versions().set_index("release")
    assert list(versions.index) == ["2.9.0", "2.11.0"]
    first = tutorial_shapes_against_calibrated().set_index("id").loc["mtut-dp-r1-gpt2xl-dp1-gbs1", "measured_s"]
    assert versions.loc["2.9.0", "shape_s"] == pytest.approx(first, rel=0.02)
    assert versions.loc["2.11.0", "shape_s"] < 0.95 * versions.loc["2.9.0", "shape_s"]
    assert (versions["shape_busy_s"] < 0.25 * versions["shape_s"]).all()  # both wait on the host
    assert abs(versions["local_s"].iloc[0] - versions["local_s"].iloc[1]) > 0.5e-3  # the width-64 fits' scatter
