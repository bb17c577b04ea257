"""The ideal model extended to experts, context parallelism and FP8 (issue #36): at experts = 0, n_e = n_c = 1
and bf16 it is the paper's evaluation exactly; away from there each term moves the way its count says."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from lgacc.errors import UserInputError
from lgacc.model.assumptions import Assumptions
from lgacc.model.config import TrainingConfig
from lgacc.model.evaluator import evaluate, evaluate_many
from lgacc.model.evaluator.context import prepare
from lgacc.model.evaluator.evaluate import _efficiency_and_time
from lgacc.model.evaluator.memory import memory_terms
from lgacc.model.evaluator.overheads import (bubble_overhead, data_overhead, layered_accumulation,
                                             offload_overheads, pipeline_overhead, tensor_overhead)
from lgacc.model.evaluator.rules import feasibility
from lgacc.model.assumptions import critical_batch
from lgacc.model.hardware import load_hardware
from lgacc.model.transformer import load_model


def paper_arrays(model, hardware, method, *, assumptions, schedule, n_v, form, **counts):
    """The paper's evaluation, step by step on the model's own context (the evaluator before the extension)."""
    ctx = prepare(model, hardware, method, partitioned=None, overlap_pipeline=None, max_overhead=0.25, steps=100_000,
                  form=form, assumptions=assumptions, schedule=schedule, n_v=n_v, **counts)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        layered = layered_accumulation(ctx)
        memory = memory_terms(ctx)
        tensor, pipeline = tensor_overhead(ctx), pipeline_overhead(ctx, layered)
        data = data_overhead(ctx, layered)
        offloads = offload_overheads(ctx, layered, data, pipeline, tensor)
        overheads = {"bubble": bubble_overhead(ctx, layered), "tensor": tensor.overhead, "pipeline": pipeline.overhead,
                     "data": data.overhead, "state_offload": offloads.state, "checkpoint_offload": offloads.checkpoint,
                     "pcie": offloads.pcie}
        b_c = critical_batch(ctx.model, ctx.assumptions)
        efficiency, time_days, step_time_s = _efficiency_and_time(ctx, overheads, b_c, 100_000)
    ok = feasibility(ctx, memory, overheads, b_c, 0.25)
    return {"n_gpu": ctx.n_gpu, "efficiency": efficiency, "time_days": time_days, "step_time_s": step_time_s,
            "state": memory.state, "checkpoint": memory.checkpoint, "buffers": memory.buffers,
            "activations": memory.activations, **overheads, **ok, "nu_data": data.nu, "nu_pipeline": pipeline.nu,
            "nu_tensor": tensor.nu, "critical_batch": np.full(ctx.shape, b_c)}


GRID = dict(n_b=np.array([1, 2, 8, 64])[:, None, None, None, None], n_l=np.array([1, 2, 4, 8])[None, :, None, None, None],
            n_a=np.array([1, 2, 8, 16])[None, None, :, None, None], n_mu=np.array([1, 4, 32])[None, None, None, :, None],
            b_mu=np.array([1, 2])[None, None, None, None, :])


@pytest.mark.parametrize("model, hardware, method, schedule, assumptions, form", [
    ("X160", "a100-80gb", "improved", None, Assumptions(), "paper"),
    ("X64", "a100-80gb", "baseline", None, Assumptions(), "exact"),
    ("X32", "h100-sxm", "partitioned", "1f1b", Assumptions(convention="physical"), "paper"),
    ("GPT-3", "a100-80gb", "baseline", None, Assumptions(dp_network="ring", pipeline_placement="intra-node"), "paper"),
    ("llama-3-70b", "h100-sxm", "improved", "interleaved", Assumptions(), "exact"),
    ("llama-3-8b", "b200", "partitioned", None, Assumptions(convention="physical"), "exact"),
])
@pytest.mark.parametrize("offload", [False, True])
def test_the_extension_reduces_exactly_to_the_papers_evaluation(model, hardware, method, schedule, assumptions, form,
                                                                offload):
    n_v = 2 if schedule == "interleaved" else 1
    counts = dict(GRID, offload=offload)
    reference = paper_arrays(model, hardware, method, assumptions=assumptions, schedule=schedule, n_v=n_v, form=form,
                             **counts)
    extended = evaluate_many(model, hardware, method, assumptions=assumptions, schedule=schedule, n_v=n_v, form=form,
                             n_e=1, n_c=1, precision="bf16", **counts)
    for key, value in reference.items():
        assert np.array_equal(extended[key], np.broadcast_to(value, extended[key].shape), equal_nan=True), key
    assert not extended["expert"].any() and not extended["context"].any()


def done_when(**changes):
    values = dict(method="baseline", n_b=128, n_l=16, n_a=1, n_e=64, n_mu=120, b_mu=1, precision="fp8")
    values.update(changes)
    return evaluate("deepseek-v3", "h100-sxm", TrainingConfig(**values))


def test_the_expert_all_to_all_by_hand():
    model = load_model("deepseek-v3")
    e = done_when()
    # bytes per token: 58 MoE layers x 2 (sent, received) x 6 passes' dispatch and combine x k d_m x 2 bytes x 63/64
    bytes_per_token = 58 * 2 * 6 * 8 * 7168 * 2 * 63 / 64
    nu = 8 * model.p_active / bytes_per_token
    threshold = 1979e12 / 100e9  # FP8 peak over InfiniBand: the group of 64 spans 8 nodes
    assert e.sparse_overheads["expert"] == pytest.approx(threshold / nu, rel=1e-12)
    assert e.expert_share == pytest.approx(e.sparse_overheads["expert"] / (1 + e.sparse_overheads["expert"]))
    assert e.n_gpu == 128 * 16 and e.summary()["n_e"] == 64 and e.summary()["precision"] == "fp8"
    # within a node the same group meets NVLink: 9 times less (900 / 100 GB/s)
    inside = done_when(n_e=8, n_b=8)
    assert inside.sparse_overheads["expert"] == pytest.approx(e.sparse_overheads["expert"] * (100 / 900) * (7 / 8) / (63 / 64))


def test_fp8_doubles_every_network_ratio_and_halves_the_compute_time():
    bf16, fp8 = done_when(precision="bf16"), done_when()
    assert fp8.sparse_overheads["expert"] == pytest.approx(bf16.sparse_overheads["expert"] * 1979 / 989)
    assert fp8.memory.total == bf16.memory.total
    with pytest.raises(UserInputError, match="FP8"):
        evaluate("X32", "a100-80gb", TrainingConfig("baseline", n_b=2, precision="fp8"))


def test_experts_are_held_over_n_e_and_partitioned_over_every_gpu():
    model = load_model("deepseek-v3")
    e = done_when()
    assert e.memory.state == pytest.approx(12 * model.p_held(64) / 16)
    partitioned = done_when(method="partitioned")
    assert partitioned.memory.state == pytest.approx(12 * model.p / (128 * 16))


def test_context_parallelism_multiplies_the_gpus_and_divides_the_activations():
    base = evaluate("llama-3-70b", "h100-sxm", TrainingConfig("baseline", n_b=1, n_l=1, n_a=8, n_mu=4))
    cp = evaluate("llama-3-70b", "h100-sxm", TrainingConfig("baseline", n_b=1, n_l=1, n_a=8, n_mu=4, n_c=2))
    assert cp.n_gpu == 2 * base.n_gpu
    assert cp.memory.checkpoint == pytest.approx(base.memory.checkpoint / 2)
    assert cp.memory.state == base.memory.state
    # the keys and values of 8 heads of 128 (2 x 8 x 128 values a token, 2 bytes) against 8 p_l flops: far
    # above InfiniBand's threshold, so no overhead, and without data parallelism the step halves
    assert cp.sparse_overheads["context"] == 0 and cp.step_time_s == pytest.approx(base.step_time_s / 2)
    # with data parallelism the gradient reduction meets half the flops per GPU: its ratio doubles
    dp, dp_cp = (evaluate("llama-3-70b", "h100-sxm", TrainingConfig("baseline", n_b=4, n_a=8, n_mu=4, n_c=c))
                 for c in (1, 2))
    assert 1 + dp_cp.overheads["data"] == pytest.approx(2 * (1 + dp.overheads["data"]))


def test_folding_rules_are_flagged():
    e = done_when(n_e=48)
    assert not e.feasible and any("n_e=48 must divide" in r for r in e.reasons)
    with pytest.raises(UserInputError, match="dense"):
        evaluate("X32", "a100-80gb", TrainingConfig("baseline", n_b=2, n_e=2))
    with pytest.raises(UserInputError, match="precision"):
        TrainingConfig("baseline", n_b=2, precision="fp4")


DONE_WHEN = ["evaluate", "--model", "deepseek-v3", "--hardware", "h100-sxm", "--method", "baseline", "--n-b", "128",
             "--n-l", "16", "--n-a", "1", "--n-e", "64", "--n-mu", "120", "--b-mu", "1", "--precision", "fp8",
             "--format", "json"]


def test_the_done_when_command(capsys):
    import json

    from lgacc.cli import main

    assert main(DONE_WHEN) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["n_e"], data["n_c"], data["precision"], data["n_gpu"]) == (64, 1, "fp8", 2048)
    assert 0 < data["all_to_all_share"] < 1 and 0 < data["expected_all_to_all_share"] < 1
    assert data["key_models"]["all_to_all_share"].startswith("ideal")
    assert data["key_models"]["expected_all_to_all_share"].startswith("calibrated")
    ends = data["expected_imbalance"]
    assert ends["step_time_s_balanced"] == data["expected_step_time_s"] < ends["step_time_s_capacity-2"]


def test_calibrated_all_to_all_by_alpha_beta_by_hand():
    from lgacc.model.calibrated.parameters import fitted_calibration
    from lgacc.model.calibrated.sparse import expected_sparse

    config = TrainingConfig("baseline", n_b=128, n_l=16, n_e=64, n_mu=120, precision="fp8")
    e = expected_sparse("deepseek-v3", "h100-sxm", config)
    cal = fitted_calibration()
    one_way = 4096 * 8 * 7168 * 2 * 63 / 64  # a micro-batch's tokens, k copies of d_m bf16 values, off the GPU
    collective = cal.infiniband_latency_s + one_way / (cal.eta * 50e9)  # 100 GB/s both directions: 50 each way
    per_layer = 2 * 3 * collective  # dispatch and combine; forward, backward, full recomputation
    assert e.all_to_all_s == pytest.approx((120 + 16 - 1) * 58 / 16 * per_layer, rel=1e-9)
    # a dense bf16 model without context parallelism is the calibrated model untouched
    from lgacc.model.calibrated import expected
    dense = TrainingConfig("baseline", n_b=8, n_l=4, n_mu=8)
    assert expected_sparse("X32", "h100-sxm", dense).step_time_s == expected("X32", "h100-sxm", dense).step_time_s


def test_the_search_over_degrees_is_the_best_of_the_papers_searches():
    from lgacc.search import fastest
    from lgacc.search.sparse import expert_degrees, search_degrees

    model = load_model("mixtral-8x7b")
    assert expert_degrees(model) == (1, 2, 4, 8)
    found = search_degrees(model, "h100-sxm", "baseline", "3d", n_cs=(1, 2))
    each = [fastest(model, "h100-sxm", "baseline", "3d", n_e=n_e, n_c=n_c) for n_e in (1, 2, 4, 8) for n_c in (1, 2)]
    best = min((r.evaluation.time_days, r.evaluation.n_gpu) for r in each if r.feasible)
    assert (found.evaluation.time_days, found.evaluation.n_gpu) == best
    assert found.config.n_e in (1, 2, 4, 8) and found.evaluation.n_gpu == found.config.n_gpu


def test_optimize_takes_the_degrees(capsys):
    import json

    from lgacc.cli import main

    argv = ["optimize", "--model", "mixtral-8x7b", "--hardware", "h100-sxm", "--method", "improved",
            "--parallelism", "3d", "--format", "json"]
    assert main([*argv, "--n-e", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["n_e"], out["n_c"], out["precision"]) == (2, 1, "bf16") and out["n_b"] % 2 == 0
    assert 0 < out["sparse_overheads"]["expert"] <= 0.25
    # in FP8 every group of 8 experts' all-to-all passes the cap: no configuration, one line, exit 2
    assert main([*argv, "--n-e", "8", "--precision", "fp8"]) == 2
    assert "expert overhead" in capsys.readouterr().err


def test_validate_reports_the_degrees_and_precision_of_each_run(capsys):
    import json

    from lgacc.cli import main

    assert main(["validate", "--format", "json"]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert runs and all({"n_e", "n_c", "precision"} <= set(run) for run in runs)
    # dense bf16 runs, and the MoE and FP8 runs of issue #36 item 5, each with its own degrees and precision
    degrees = {(run["n_e"], run["n_c"], run["precision"]) for run in runs}
    assert (1, 1, "bf16") in degrees and {precision for _, _, precision in degrees} == {"bf16", "fp8"}
    assert any(n_e > 1 for n_e, _, _ in degrees) and any(n_c > 1 for _, n_c, _ in degrees)


def test_overlapped_all_to_alls_cost_only_what_outlasts_the_computation():
    """Under the recipe's ep_overlap (DualPipe, Megatron-Core's --overlap-moe-expert-parallel-comm) the step pays
    max(0, A - C): A the all-to-alls, C the stages' computation; off, it pays A (Megatron-Core's default)."""
    from lgacc.model.calibrated.recipe import Recipe
    from lgacc.model.calibrated.sparse import IMBALANCE, expected_sparse

    for config in (TrainingConfig("baseline", n_b=128, n_l=16, n_e=64, n_mu=120, precision="fp8"),  # across nodes
                   TrainingConfig("baseline", n_b=8, n_l=1, n_e=8, n_mu=4)):  # inside one node: A much below C
        plain = expected_sparse("deepseek-v3", "h100-sxm", config)
        hidden = expected_sparse("deepseek-v3", "h100-sxm", config, recipe=Recipe(ep_overlap=True))
        total = plain.all_to_all_s
        compute = (plain.dense.step_parts_s["pipeline"] + plain.expert_gemm_s + plain.attention_core_s
                   + plain.dispatch_s)
        assert total > 0 and plain.all_to_all_hidden_s == 0
        assert hidden.all_to_all_s == pytest.approx(max(0.0, total - compute), rel=1e-12)
        assert hidden.all_to_all_hidden_s == pytest.approx(min(total, compute), rel=1e-12)
        assert plain.step_time_s - hidden.step_time_s == pytest.approx(min(total, compute), rel=1e-12)
        # off, the busiest rank's (1 + iota) tokens add iota times the all-to-alls, the experts' GEMMs and the
        # permutations, as before
        iota = IMBALANCE["capacity-2"]
        assert plain.step_time_imbalanced_s - plain.step_time_s > iota * total
        assert hidden.step_time_imbalanced_s <= plain.step_time_imbalanced_s
    # the second configuration's all-to-alls ride NVLink and hide entirely; the first's outlast its computation
    assert hidden.all_to_all_s == 0.0
    summary = hidden.summary()["expected_step_breakdown_s"]
    assert summary["all_to_all"] == 0.0 and summary["all_to_all_hidden"] == hidden.all_to_all_hidden_s > 0


def test_ep_overlap_is_a_recipe_switch_of_the_command_line(capsys):
    from lgacc.cli import main

    argv = ["evaluate", "--model", "deepseek-v3", "--method", "baseline", "--n-b", "128", "--n-l", "16", "--n-e", "64",
            "--n-mu", "120", "--precision", "fp8", "--hardware", "h100-sxm", "--format", "json"]
    import json

    assert main(argv) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(argv + ["--recipe", "ep_overlap=true"]) == 0
    hidden = json.loads(capsys.readouterr().out)
    assert plain["expected_recipe"]["ep_overlap"] is False and hidden["expected_recipe"]["ep_overlap"] is True
    assert hidden["expected_step_time_s"] < plain["expected_step_time_s"]
    assert hidden["step_time_s"] == plain["step_time_s"]  # the ideal model does not read the recipe's overlap
