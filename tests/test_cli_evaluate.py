"""The `lgacc evaluate` command line and the two reproduced tables."""

import json

import pytest

from lgacc.cli import main

HEADLINE = ["evaluate", "--model", "X160", "--method", "improved", "--n-b", "483", "--n-l", "5", "--n-a", "16",
            "--n-mu", "5", "--b-mu", "1", "--format", "json"]


def run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_json_output_has_the_contract_keys(capsys):
    code, out, err = run(capsys, HEADLINE)
    assert code == 0, err
    data = json.loads(out)
    ideal = {"b", "n_gpu", "efficiency", "time_days", "step_time_s", "memory_gib", "overheads", "feasible", "reasons",
             "schedule", "n_v", "n_e", "n_c", "precision", "sparse_overheads", "all_to_all_share", "recompute",
             "tokens", "global_batch", "sequence_length", "run_steps", "gpu_hours", "cost"}  # issue #33: the user's run
    # issue #12 added the schedule keys; issue #36 the expert, context and precision keys, #35 the recomputation counted
    calibrated = {"expected_step_time_s", "expected_time_days", "expected_memory_gib", "expected_step_breakdown_s",
                  "expected_memory_fits", "expected_recipe", "expected_calibration",  # issue #26: added, none renamed
                  "expected_gpu_hours", "expected_cost"}
    assert set(data) == ideal | calibrated | {"key_models"}
    assert set(data["key_models"]) == set(data) - {"key_models"}  # every key says which model it comes from
    assert all("calibrated" in data["key_models"][key] for key in calibrated)
    assert all("ideal" in data["key_models"][key] for key in ("efficiency", "time_days", "step_time_s", "memory_gib"))
    assert set(data["memory_gib"]) == {"state", "checkpoint", "buffers", "activations", "offloadable", "non_offloadable"}
    assert data["b"] == 2415 and data["n_gpu"] == 38640 and data["feasible"] is True
    assert round(data["efficiency"], 2) == 0.88
    assert "bubble" in data["overheads"]


def test_table_output_and_named_model(capsys):
    code, out, _ = run(capsys, ["evaluate", "--model", "GPT-3", "--method", "baseline", "--n-b", "8", "--n-l", "8",
                                "--n-a", "8", "--n-mu", "16", "--b-mu", "1", "--offload"])
    assert code == 0
    assert "efficiency" in out and "memory_gib.state" in out


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"--model": "X3"}, "must be even"),
        ({"--model": "GPT-9"}, "unknown model"),
        ({"--method": "fastest"}, "unknown method"),
        ({"--n-l": "200"}, "n_l=200 exceeds"),
        ({"--n-mu": "0"}, "n_mu=0"),
        ({"--n-b": "-3"}, "n_b=-3"),
        ({"--hardware": "tpu-v9"}, "no such hardware"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(capsys, changes, message):
    argv = list(HEADLINE)
    for flag, value in changes.items():
        if flag in argv:
            argv[argv.index(flag) + 1] = value
        else:
            argv += [flag, value]
    code, out, err = run(capsys, argv)
    assert code == 2
    assert message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_reproduce_x_model_json(capsys):
    code, out, _ = run(capsys, ["reproduce", "table:x_model", "--format", "json"])
    assert code == 0
    rows = json.loads(out)
    assert {"model", "p", "b_c", "b", "d_s", "d_a", "d_h", "d_m", "d_l"} <= set(rows[0])
    x160 = next(r for r in rows if r["model"] == "X160")
    assert x160["p"] == 12 * 160**5 + 13 * 160**3
    bert = next(r for r in rows if r["model"] == "BERT")
    assert bert["b"] == 256


def test_reproduce_mixed_buffering_compare(capsys):
    code, out, _ = run(capsys, ["reproduce", "table:mixed_buffering", "--compare", "--format", "json"])
    assert code == 0
    rows = json.loads(out)
    assert len(rows) == 6
    assert all(value for row in rows for key, value in row.items() if key.endswith("agrees"))


def test_convention_and_assume_flags(capsys):
    base = ["evaluate", "--model", "X160", "--method", "baseline", "--n-b", "64", "--n-mu", "8", "--format", "json"]
    code, out, err = run(capsys, base)
    paper = json.loads(out)["overheads"]["data"]
    code, out, err = run(capsys, base + ["--convention", "physical"])
    assert code == 0, err
    physical = json.loads(out)["overheads"]["data"]
    assert physical == pytest.approx(paper * 3 / (4 * 8))  # the last micro-batch's backward pass: 3 / (4 n_mu) of the step
    code, out, err = run(capsys, base + ["--assume", "nonsense=1"])
    assert code == 2 and "unknown assumption 'nonsense'" in err


def test_overflowing_batch_is_one_clear_line(capsys):
    code, out, err = run(capsys, ["evaluate", "--model", "X160", "--method", "improved", "--n-b", "4611686018427387904",
                                  "--n-mu", "4"])
    assert code == 2 and "beyond the supported range" in err and err.count("\n") == 1


def test_calibrated_keys_and_recipe_flags(capsys):
    _, out, _ = run(capsys, HEADLINE)
    full = json.loads(out)
    memory = full["expected_memory_gib"]
    parts = ("weights", "gradients", "optimizer", "buffers", "activations", "framework")
    assert memory["total"] == pytest.approx(sum(memory[k] for k in parts), rel=1e-12)
    assert full["expected_step_time_s"] == pytest.approx(sum(full["expected_step_breakdown_s"].values()), rel=1e-12)
    # the same tokens as the ideal time: steps x b_c at the configuration's expected throughput
    assert full["expected_time_days"] / full["expected_step_time_s"] == pytest.approx(
        full["time_days"] / full["step_time_s"], rel=1e-9)
    assert full["expected_recipe"]["recompute"] == "full" and full["expected_recipe"]["zero_stage"] == 3
    _, out, _ = run(capsys, HEADLINE + ["--recompute", "none", "--sequence-parallel"])
    lean = json.loads(out)
    assert lean["expected_recipe"]["recompute"] == "none" and lean["expected_recipe"]["sequence_parallel"] is True
    assert lean["expected_step_time_s"] < full["expected_step_time_s"]  # no recomputed forward pass
    assert lean["efficiency"] == full["efficiency"]  # the ideal model does not read the recipe


@pytest.mark.parametrize("flags, message", [(["--recompute", "half"], "invalid choice"),
                                             (["--recipe", "zero_stage=5"], "zero_stage=5"),
                                             (["--recipe", "colour=red"], "--recipe 'colour=red'")])
def test_bad_recipe_is_one_line(capsys, flags, message):
    code, _, err = run(capsys, HEADLINE + flags)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_a_token_budget_sets_the_time_as_tokens_over_global_batch_times_sequence_steps(capsys):
    """Issue #33: by default the paper's run (100 k steps at the critical batch b_c of X160, d_s = 2560 tokens a
    sequence); with --tokens T the time is T / (b d_s) steps of the configuration's step time, under both models."""
    _, out, _ = run(capsys, HEADLINE)
    paper = json.loads(out)
    from lgacc.model.transformer import named_model

    b_c = named_model("X160").critical_batch
    assert paper["sequence_length"] == 2560 and paper["global_batch"] == 2415 and paper["cost"] is None
    assert paper["tokens"] == pytest.approx(1e5 * b_c * 2560, rel=1e-12)
    assert paper["run_steps"] == pytest.approx(1e5 * b_c / 2415, rel=1e-12)
    code, out, err = run(capsys, HEADLINE + ["--tokens", "1e12", "--global-batch", "1024", "--gpu-hour-price", "2.5"])
    assert code == 0, err
    mine = json.loads(out)
    steps = 1e12 / (2415 * 2560)  # of the configuration
    assert mine["time_days"] == pytest.approx(steps * mine["step_time_s"] / 86400, rel=1e-12)
    assert mine["expected_time_days"] == pytest.approx(steps * mine["expected_step_time_s"] / 86400, rel=1e-12)
    assert mine["run_steps"] == pytest.approx(1e12 / (1024 * 2560), rel=1e-12)  # the run's optimizer steps
    assert mine["gpu_hours"] == pytest.approx(mine["time_days"] * 24 * 38640, rel=1e-12)
    assert mine["expected_gpu_hours"] == pytest.approx(mine["expected_time_days"] * 24 * 38640, rel=1e-12)
    assert mine["cost"] == pytest.approx(2.5 * mine["gpu_hours"]) and mine["expected_cost"] == pytest.approx(2.5 * mine["expected_gpu_hours"])
    assert mine["step_time_s"] == paper["step_time_s"]  # the configuration's own step does not move


@pytest.mark.parametrize("flags, message", [
    (["--tokens", "-5"], "argument --tokens: expected a number > 0, got '-5'"),
    (["--tokens", "0"], "argument --tokens: expected a number > 0, got '0'"),
    (["--global-batch", "0"], "argument --global-batch: global_batch=0 must be a positive integer (>= 1)"),
    (["--tokens", "1e12", "--steps", "5"], "--tokens 1e+12 and --steps 5 both set the run's length: give one"),
])
def test_a_bad_run_is_one_line(capsys, flags, message):
    code, out, err = run(capsys, HEADLINE + flags)
    assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("x", ["-10", "0", "2.5"])
def test_every_bad_x_gets_the_x_familys_one_line(capsys, x):
    """Issue #33: X-10 read as an unknown model name (and listed 25 models) where X0 got the family's rule."""
    code, _, err = run(capsys, ["evaluate", "--model", f"X{x}", "--method", "improved", "--n-b", "1"])
    assert code == 2 and f"X family: x={x} must be a positive integer (>= 1)" in err and len(err.strip().splitlines()) == 1
