"""One ideal (issue #35): the ideal step time counts the recomputation the flags say, and the paper's own
assumption, full recomputation (``8 b d_s p``: four passes of ``2 p`` flops per token), stays the default."""

import json

import pytest

from lgacc.cli import main
from lgacc.model.config import TrainingConfig
from lgacc.model.evaluator import evaluate
from lgacc.model.evaluator.recomputation import PAPER_RECOMPUTE, work_ratio
from lgacc.model.hardware import load_hardware
from lgacc.model.transformer import named_model

CONFIG = TrainingConfig(method="baseline", n_b=8, n_l=8, n_a=8, n_mu=16, b_mu=1)


def test_the_paper_counts_full_recomputation_and_the_default_is_its_number():
    model, hw = named_model("GPT-3"), load_hardware("a100-80gb")
    default = evaluate(model, hw, CONFIG)
    assert PAPER_RECOMPUTE == "full" and default.recompute == "full"
    # hand count of the paper's computation per batch: 8 b d_s p with p = d_l (12 d_m^2 + 13 d_m) (n_I = 4: the
    # weights 4 d_m^2 + 8 d_m^2, the biases 3 d_m + d_m + 4 d_m + d_m and two norms 4 d_m)
    p = model.d_l * (12 * model.d_m**2 + 13 * model.d_m)
    flops = 8 * default.b * model.d_s * p
    rate = default.n_gpu * hw.peak_flop_per_s * getattr(hw, "kernel_efficiency", 1.0) * default.efficiency
    assert default.step_time_s == pytest.approx(flops / rate, rel=1e-12)


@pytest.mark.parametrize("mode, ratio", [("full", 1.0), ("selective", 0.75), ("none", 0.75), ("op", 0.875),
                                         ("alternate", 0.875)])
def test_paper_form_scales_the_work_by_the_passes(mode, ratio):
    model, hw = named_model("GPT-3"), load_hardware("a100-80gb")
    full, other = evaluate(model, hw, CONFIG), evaluate(model, hw, CONFIG, recompute=mode)
    assert other.step_time_s == pytest.approx(ratio * full.step_time_s, rel=1e-12)
    assert other.time_days == pytest.approx(ratio * full.time_days, rel=1e-12)
    assert other.efficiency == full.efficiency  # the overheads are ratios: the work alone changes
    assert other.memory == full.memory


def test_exact_form_adds_the_attention_core_for_selective():
    model = named_model("GPT-3")
    d_m, d_s = model.d_m, model.d_s
    # per layer and token: forward 24 d_m^2 + 4 d_s d_m (n_I = 4), attention core 4 d_s d_m (d_a d_h = d_m)
    hand = (3 * (24 * d_m**2 + 4 * d_s * d_m) + 4 * d_s * d_m) / (4 * (24 * d_m**2 + 4 * d_s * d_m))
    assert work_ratio(model, "selective", "exact") == pytest.approx(hand, rel=1e-12)
    assert work_ratio(model, "none", "exact") == pytest.approx(0.75, rel=1e-12)
    assert work_ratio(model, "selective", "paper") == 0.75


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_evaluate_command_full_and_selective_differ(capsys):
    argv = ["evaluate", "--model", "GPT-3", "--method", "baseline", "--n-b", "8", "--n-l", "8", "--n-a", "8",
            "--n-mu", "16", "--format", "json"]
    default = _json(capsys, argv)
    full = _json(capsys, argv + ["--recompute", "full"])
    selective = _json(capsys, argv + ["--recompute", "selective"])
    assert default["step_time_s"] == full["step_time_s"] and full["recompute"] == "full"
    assert selective["recompute"] == "selective"
    assert selective["step_time_s"] == pytest.approx(0.75 * full["step_time_s"], rel=1e-12)
    assert selective["efficiency"] == full["efficiency"]
    assert selective["expected_step_time_s"] < full["expected_step_time_s"]  # the calibrated model agrees in sign


def test_optimize_reports_the_recomputation_asked_for(capsys):
    argv = ["optimize", "--model", "GPT-3", "--method", "baseline", "--parallelism", "3d", "--max-gpus", "1024",
            "--format", "json"]
    full = _json(capsys, argv)
    selective = _json(capsys, argv + ["--recompute", "selective"])
    assert selective["n_gpu"] == full["n_gpu"]  # the same choice: the ratio is the same for every configuration
    assert selective["step_time_s"] == pytest.approx(0.75 * full["step_time_s"], rel=1e-12)
    assert (full["recompute"], selective["recompute"]) == ("full", "selective")


def test_optimize_target_counts_the_recomputation(capsys):
    argv = ["optimize", "--model", "GPT-3", "--method", "baseline", "--parallelism", "3d", "--target-days", "100",
            "--format", "json"]
    full = _json(capsys, argv)
    selective = _json(capsys, argv + ["--recompute", "selective"])
    assert full["time_days"] <= 100 and selective["time_days"] <= 100
    assert selective["n_gpu"] <= full["n_gpu"]  # less work per step: the target is met with no more GPUs


def test_unknown_mode_is_one_clear_error():
    from lgacc.errors import UserInputError
    with pytest.raises(UserInputError, match="recompute='half'"):
        work_ratio(named_model("GPT-3"), "half")
