"""The pipeline schedules in the resource model and the search (issue #12, item 3).

Independent facts: hand-computed values from the paper's formulas, the schedules' published
bubbles, identities between schedules (interleaved with one chunk is 1F1B, the paper's methods
are GPipe and the modular pipeline), one-line errors, and a brute force over a small grid.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from lgacc.cli import main
from lgacc.errors import UserInputError
from lgacc.model.config import TrainingConfig
from lgacc.model.evaluator import evaluate, evaluate_many
from lgacc.model.hardware import load_hardware
from lgacc.model.transformer import named_model, x_model
from lgacc.search import SearchRequest, fastest
from lgacc.search.reference import enumerate_all

A100 = load_hardware("a100-80gb")
GIB = 2**30
X160 = named_model("X160")
SCHEDULES = ("gpipe", "1f1b", "interleaved", "breadth-first", "zero-bubble", "modular")
#: Chunks per device used where a schedule takes them.
CHUNKS = {"interleaved": 2, "breadth-first": 2}


def run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# --- the schedule's closed forms in the evaluator -----------------------------------------------


@pytest.mark.parametrize("schedule, n_v, expected", [
    # (n_l - 1) / n_mu for GPipe and 1F1B; / v for the looped schedules; ZB-H1 with the paper's pass
    # times t_F : t_B : t_W = 1 : 2 : 1 keeps (t_F + t_B - t_W) / (t_F + t_B + t_W) = 1/2 of it;
    # modular (n_l - 1) / n_mu x n_l / d_l.  n_l = 8, n_mu = 12, d_l = 160.
    ("gpipe", 1, 7 / 12),
    ("standard", 1, 7 / 12),
    ("1f1b", 1, 7 / 12),
    ("interleaved", 4, 7 / 48),
    ("breadth-first", 4, 7 / 48),
    ("zero-bubble", 1, 7 / 24),
    ("modular", 1, 7 / 12 * 8 / 160),
])
def test_bubble_is_the_schedules_published_form(schedule, n_v, expected):
    config = TrainingConfig("baseline", n_b=2, n_l=8, n_mu=12)
    e = evaluate(X160, A100, config, schedule=schedule, n_v=n_v)
    assert e.overheads["bubble"] == pytest.approx(expected, rel=1e-12)
    assert e.schedule == ("gpipe" if schedule == "standard" else schedule) and e.n_v == n_v


def test_checkpoint_memory_holds_the_peak_micro_batches():
    """The paper's checkpoints, 2 b d_s d_m d_l / n_gpu bytes, are n_mu micro-batches through a device's
    layers; 1F1B holds n_l of them, interleaved with v chunks (v + 1) n_l - 1 chunks, i.e. / v devices' worth."""
    n_b, n_l, n_mu = 2, 8, 32
    config = TrainingConfig("baseline", n_b=n_b, n_l=n_l, n_mu=n_mu)
    paper = 2 * (n_b * n_mu) * X160.d_s * X160.d_m * X160.d_l / (n_b * n_l)
    held = {"gpipe": n_mu, "1f1b": n_l, "zero-bubble": n_l, "modular": n_mu, "breadth-first": n_mu,
            "interleaved": ((2 + 1) * n_l - 1) / 2}
    for schedule, micro_batches in held.items():
        e = evaluate(X160, A100, config, schedule=schedule, n_v=CHUNKS.get(schedule, 1))
        assert e.memory.checkpoint == pytest.approx(paper * micro_batches / n_mu, rel=1e-12), schedule
    assert evaluate(X160, A100, config).memory.checkpoint == pytest.approx(paper, rel=1e-12)


def test_pipeline_intensity_divides_by_the_chunks_per_device():
    """eq:pipeline_intensity_base, (2 + n_I) d_m d_l / n_l, over the chunks a device holds: v looped, d_l / n_l
    modular (eq:pipeline_intensity_impr, (2 + n_I) d_m)."""
    config = TrainingConfig("baseline", n_b=2, n_l=8, n_mu=12)
    base = (2 + X160.n_I) * X160.d_m * X160.d_l / 8
    for schedule, chunks in (("gpipe", 1), ("1f1b", 1), ("zero-bubble", 1), ("interleaved", 4),
                             ("breadth-first", 4), ("modular", X160.d_l / 8)):
        e = evaluate(X160, A100, config, schedule=schedule, n_v=chunks if schedule in CHUNKS else 1)
        assert e.intensities["pipeline"] == pytest.approx(base / chunks, rel=1e-12), schedule


def test_data_overlap_follows_the_schedules_reduction_window():
    """Replicated state, n_b > 1, n_l > 1.  A schedule that reduces behind the last micro-batches only falls under
    the paper's rule for the standard pipeline, eq:data_intensity_base_pipe (b d_s / n_b, not overlapped), unless its
    own window (the compute after a device's first complete layer gradients) hides the reduction for less: GPipe and
    1F1B the backward of the last micro-batch on the device's other layers, ZB-H1 only their weight passes,
    interleaved the last round of n_l micro-batches on the other chunks.  One that reduces behind every micro-batch
    falls under eq:data_intensity_improved (3 b d_s / (4 n_b), overlapped), breadth-first with its window: all
    chunks but the first of every micro-batch, plus the last micro-batch's first chunk, over the modular pipeline's
    d_l / n_l - 1 layers of every micro-batch."""
    n_b, n_l, n_mu, v = 64, 8, 8, 4
    config = TrainingConfig("baseline", n_b=n_b, n_l=n_l, n_mu=n_mu)
    b = n_b * n_mu
    nu_ib = A100.peak_flop_per_s / A100.infiniband_bandwidth_bytes_per_s
    pipe = b * X160.d_s / n_b
    r = nu_ib / pipe
    layers = X160.d_l // n_l  # 20 layers per device
    backward, weight = 3 / 4, 1 / 4  # shares of a layer pass: (t_B + t_W) and t_W of t_F + t_B + t_W = 1 + 2 + 1
    windows = {
        "gpipe": (layers - 1) * backward / (n_mu * layers),
        "1f1b": (layers - 1) * backward / (n_mu * layers),
        "zero-bubble": (layers - 1) * weight / (n_mu * layers),
        "interleaved": ((layers // 2 - 1) + (2 - 1) * n_l * layers // 2) * backward / (n_mu * layers),  # v = 2
    }
    for schedule, window in windows.items():
        e = evaluate(X160, A100, config, schedule=schedule, n_v=CHUNKS.get(schedule, 1))
        assert e.intensities["data"] == pytest.approx(pipe, rel=1e-12), schedule
        expected = min(r, max(0.0, r / window - 1))
        assert e.overheads["data"] == pytest.approx(expected, rel=1e-12, abs=1e-15), schedule
    # here the last micro-batch is too short to hide it, the last round of interleaved is long enough
    assert evaluate(X160, A100, config, schedule="1f1b").overheads["data"] == pytest.approx(r, rel=1e-12)
    assert evaluate(X160, A100, config, schedule="interleaved", n_v=2).overheads["data"] == 0.0
    # one layer per device: nothing to hide behind, the paper's rule
    one = TrainingConfig("baseline", n_b=n_b, n_l=X160.d_l, n_mu=X160.d_l)
    for schedule in ("gpipe", "1f1b", "zero-bubble", "interleaved"):
        e = evaluate(X160, A100, one, schedule=schedule)
        assert e.overheads["data"] == pytest.approx(nu_ib * n_b / (n_b * X160.d_l * X160.d_s), rel=1e-12), schedule
    improved = 3 * b * X160.d_s / (4 * n_b)
    assert evaluate(X160, A100, config, schedule="modular").intensities["data"] == pytest.approx(improved, rel=1e-12)
    window = ((layers // v - 1) + (v - 1) * n_mu * layers // v) / (n_mu * (layers - 1))
    e = evaluate(X160, A100, config, schedule="breadth-first", n_v=v)
    assert e.intensities["data"] == pytest.approx(improved * window, rel=1e-12)
    assert e.overheads["data"] == pytest.approx(max(0.0, nu_ib / (improved * window) - 1), rel=1e-12, abs=1e-15)


def test_interleaved_with_one_chunk_is_1f1b():
    rng = np.random.default_rng(12)
    grid = dict(n_b=rng.integers(1, 40, 200), n_l=rng.choice([1, 2, 4, 5, 8, 10, 16, 32, 160], 200),
                n_a=rng.choice([1, 2, 4, 8, 16, 32], 200), b_mu=rng.integers(1, 4, 200), offload=rng.random(200) < 0.3)
    grid["n_mu"] = grid["n_l"] * rng.integers(1, 4, 200) + rng.integers(0, 3, 200)
    for method in ("baseline", "partitioned", "improved"):
        one = evaluate_many(X160, A100, method, **grid, schedule="interleaved", n_v=1)
        ref = evaluate_many(X160, A100, method, **grid, schedule="1f1b")
        for key in ref:
            np.testing.assert_array_equal(one[key], ref[key], err_msg=f"{method} {key}")


def test_the_papers_methods_are_gpipe_and_the_modular_pipeline():
    """No schedule is the method's own: baseline and partitioned run the standard pipeline (gpipe), improved the
    modular one (sec:methodology); naming it changes nothing, in either form, except that a named GPipe may hide
    the baseline's reduction behind the last micro-batch where that costs less than the paper's not-overlapped
    rule: never without a pipeline or with one layer per device (the paper's baseline rows)."""
    rng = np.random.default_rng(5)
    grid = dict(n_b=rng.integers(1, 500, 300), n_l=rng.choice([1, 2, 4, 5, 8, 10, 16, 32, 80, 160], 300),
                n_a=rng.choice([1, 4, 16], 300), b_mu=rng.integers(1, 6, 300), offload=rng.random(300) < 0.3)
    grid["n_mu"] = grid["n_l"] + rng.integers(0, 200, 300)
    papers_rule = (grid["n_l"] == 1) | (grid["n_l"] == X160.d_l)
    for method, schedule in (("baseline", "gpipe"), ("partitioned", "standard"), ("improved", "modular")):
        for form in ("paper", "exact"):
            default = evaluate_many(X160, A100, method, **grid, form=form)
            named = evaluate_many(X160, A100, method, **grid, form=form, schedule=schedule)
            same = papers_rule if method == "baseline" else np.ones(300, bool)
            for key in default:
                np.testing.assert_allclose(named[key][same], default[key][same], rtol=1e-13,
                                           err_msg=f"{method} {form} {key}")
            assert np.all(named["data"] <= default["data"]) and np.all(named["bubble"] == default["bubble"])
    assert not papers_rule.all()


def test_default_evaluation_is_the_papers_formulas_by_hand():
    """Without a schedule, two printed configurations of table:parallel_methods_comparison, term by term from
    the paper's equations (GiB thresholds: peak / bandwidth)."""
    nu_ib = A100.peak_flop_per_s / A100.infiniband_bandwidth_bytes_per_s
    nu_nv = A100.peak_flop_per_s / A100.nvlink_bandwidth_bytes_per_s
    d_s, d_m, d_l, n_I = X160.d_s, X160.d_m, X160.d_l, X160.n_I
    nu_a = (4 + 2 * n_I) * d_m / (3 * (16 - 1))  # eq:tensor_intensity
    # 3d baseline: n_b = 14, n_l = 160, n_a = 16, n_mu = 172, b_mu = 1
    e = evaluate(X160, A100, TrainingConfig("baseline", n_b=14, n_l=160, n_a=16, n_mu=172))
    b = 14 * 172
    bubble = 159 / 172
    data = nu_ib / (b * d_s / 14)  # eq:data_intensity_base_pipe, not overlapped
    pipeline = 0.0  # 172 >= 160 (1 + nu_ib / nu_l): overlapped with zero cost
    assert 172 >= 160 * (1 + nu_ib / ((2 + n_I) * d_m * d_l / 160))
    assert e.overheads["bubble"] == pytest.approx(bubble, rel=1e-12)
    assert e.overheads["tensor"] == pytest.approx(nu_nv / nu_a, rel=1e-12)
    assert e.overheads["data"] == pytest.approx(data, rel=1e-12)
    assert e.overheads["pipeline"] == pipeline
    assert e.efficiency == pytest.approx(1 / ((1 + bubble) * (1 + nu_nv / nu_a) * (1 + data)), rel=1e-12)
    assert e.memory.checkpoint == pytest.approx(2 * b * d_s * d_m * d_l / 35840, rel=1e-12)
    assert e.memory.state == pytest.approx(12 * X160.p / (160 * 16), rel=1e-12)  # not partitioned
    assert e.schedule == "gpipe" and e.n_v == 1
    # 3d improved: n_b = 483, n_l = 5, n_a = 16, n_mu = 5, b_mu = 1
    e = evaluate(X160, A100, TrainingConfig("improved", n_b=483, n_l=5, n_a=16, n_mu=5))
    b = 483 * 5
    bubble = 4 / 5 * 5 / 160
    pipeline = nu_ib / ((2 + n_I) * d_m)  # n_mu = n_l: not overlapped, eq:pipeline_intensity_impr
    assert b * d_s / (2 * 483) >= nu_ib  # eq:data_intensity_improved_partition: no bottleneck
    assert e.overheads["bubble"] == pytest.approx(bubble, rel=1e-12)
    assert e.overheads["pipeline"] == pytest.approx(pipeline, rel=1e-12)
    assert e.overheads["data"] == 0.0
    assert e.efficiency == pytest.approx(1 / ((1 + bubble) * (1 + nu_nv / nu_a) * (1 + pipeline)), rel=1e-12)
    assert e.memory.state == pytest.approx(12 * X160.p / 38640, rel=1e-12)  # partitioned
    assert e.schedule == "modular"
    # Data + tensor, partitioned: n_b = 483, n_a = 16, n_mu = 1, b_mu = 5; no pipeline, no bubble
    e = evaluate(X160, A100, TrainingConfig("partitioned", n_b=483, n_a=16, n_mu=1, b_mu=5))
    assert 5 * d_s / 2 >= nu_ib  # eq:data_intensity_base_partition, b d_s / (2 n_b n_mu): no bottleneck
    assert e.overheads["bubble"] == 0.0 and e.overheads["pipeline"] == 0.0 and e.overheads["data"] == 0.0
    assert e.efficiency == pytest.approx(1 / (1 + nu_nv / nu_a), rel=1e-12)
    assert e.memory.checkpoint == pytest.approx(2 * 2415 * d_s * d_m * d_l / 7728, rel=1e-12)
    assert e.schedule == "gpipe"


def test_a_single_device_pipeline_ignores_the_schedule():
    config = TrainingConfig("improved", n_b=100, n_l=1, n_a=4, n_mu=3, b_mu=2)
    default = evaluate(X160, A100, config).summary()
    for schedule in SCHEDULES:
        named = evaluate(X160, A100, config, schedule=schedule, n_v=CHUNKS.get(schedule, 1)).summary()
        assert {k: v for k, v in named.items() if k not in ("schedule", "n_v")} == \
               {k: v for k, v in default.items() if k not in ("schedule", "n_v")}, schedule


def test_schedule_rules_make_a_configuration_infeasible_with_a_reason():
    # chunks of whole layers: n_l n_v = 3 x 2 does not divide 160
    e = evaluate(X160, A100, TrainingConfig("baseline", n_b=2, n_l=5, n_mu=10), schedule="interleaved", n_v=3)
    assert not e.feasible and any("n_l n_v = 5 x 3" in r for r in e.reasons)
    # interleaved runs rounds of n_l micro-batches
    e = evaluate(X160, A100, TrainingConfig("baseline", n_b=2, n_l=8, n_mu=12), schedule="interleaved", n_v=2)
    assert not e.feasible and any("not a multiple of n_l=8" in r for r in e.reasons)
    e = evaluate(X160, A100, TrainingConfig("baseline", n_b=2, n_l=8, n_mu=12), schedule="breadth-first", n_v=2)
    assert not any("multiple" in r or "n_l n_v" in r for r in e.reasons)


@pytest.mark.parametrize("kwargs, words", [
    (dict(schedule="pipedream"), "unknown schedule 'pipedream'"),
    (dict(schedule="interleaved", n_v=0), "n_v must be positive"),
    (dict(schedule="1f1b", n_v=2), "n_v=2: schedule 1f1b has one chunk per device"),
    (dict(n_v=2), "n_v=2: no schedule is given"),
    (dict(schedule="interleaved", n_v=40), "n_l n_v = 8 x 40 = 320 exceeds"),
])
def test_bad_schedule_input_is_one_clear_error(kwargs, words):
    with pytest.raises(UserInputError, match=words.replace("(", r"\(")):
        evaluate(X160, A100, TrainingConfig("baseline", n_b=2, n_l=8, n_mu=16), **kwargs)


# --- the command line ----------------------------------------------------------------------------

HEADLINE = ["evaluate", "--model", "X160", "--method", "improved", "--n-b", "483", "--n-l", "5", "--n-a", "16",
            "--n-mu", "5", "--b-mu", "1", "--format", "json"]


def test_cli_default_output_is_unchanged_and_names_the_schedule(capsys):
    code, out, err = run(capsys, HEADLINE)
    assert code == 0, err
    default = json.loads(out)
    assert default["schedule"] == "modular" and default["n_v"] == 1
    code, out, err = run(capsys, HEADLINE + ["--schedule", "modular"])
    assert code == 0 and json.loads(out) == default
    code, out, err = run(capsys, HEADLINE + ["--schedule", "1f1b"])
    one = json.loads(out)
    assert code == 0 and one["schedule"] == "1f1b"
    assert one["overheads"]["bubble"] == pytest.approx(4 / 5, rel=1e-12)  # (n_l - 1) / n_mu


@pytest.mark.parametrize("extra, words", [
    (["--schedule", "interleaved", "--n-v", "0"], "n_v"),
    (["--schedule", "interleaved", "--n-v", "-3"], "n_v"),
    (["--schedule", "gpipe", "--n-v", "2"], "n_v=2"),
    (["--schedule", "nope"], "unknown schedule"),
    (["--schedule", "breadth-first", "--n-v", "320"], "exceeds"),
])
@pytest.mark.parametrize("command", ["evaluate", "optimize"])
def test_cli_bad_schedule_is_one_line_exit_2(capsys, extra, words, command):
    if command == "evaluate":
        argv = HEADLINE + extra
    else:
        argv = ["optimize", "--model", "X160", "--method", "improved", "--parallelism", "3d", "--format", "json", *extra]
    code, out, err = run(capsys, argv)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in err, err


def test_cli_optimize_rejects_chunks_that_no_pipeline_can_hold(capsys):
    code, out, err = run(capsys, ["optimize", "--model", "X160", "--method", "baseline", "--parallelism", "3d",
                                  "--schedule", "breadth-first", "--n-v", "64"])
    assert code == 2 and len(err.strip().splitlines()) == 1 and "n_v=64 does not divide" in err


def test_cli_optimize_takes_the_schedule(capsys):
    code, out, err = run(capsys, ["optimize", "--model", "X160", "--method", "baseline", "--parallelism", "3d",
                                  "--schedule", "interleaved", "--n-v", "2", "--format", "json"])
    assert code == 0, err
    data = json.loads(out)
    assert data["schedule"] == "interleaved" and data["n_v"] == 2
    assert X160.d_l % (data["n_l"] * 2) == 0 and data["n_mu"] % data["n_l"] == 0
    assert data["overheads"]["bubble"] == pytest.approx((data["n_l"] - 1) / (2 * data["n_mu"]), rel=1e-12)


# --- the search ------------------------------------------------------------------------------------


def test_search_request_defaults_to_the_methods_pipeline():
    request = SearchRequest.create("X160", A100, "improved", "3d")
    assert request.schedule is None and request.n_v == 1
    assert SearchRequest.create("X160", A100, "improved", "3d", schedule="Standard").schedule == "gpipe"


def test_naming_the_methods_schedule_leaves_the_papers_rows_unchanged():
    for method, schedule in (("baseline", "gpipe"), ("improved", "modular")):
        default = fastest(X160, A100, method, "3d", explain=False)
        named = fastest(X160, A100, method, "3d", schedule=schedule, explain=False)
        assert named.config == default.config, method
        assert named.evaluation.time_days == default.evaluation.time_days


def _brute_force_best(request, core):
    """``(-n_l or 0, time)`` of the preferred configuration over every integer configuration within bounds, under
    the search's own masks: the least time, after the most pipeline stages for the baseline with a pipeline."""
    highest_pipeline = request.baseline_like and request.parallelism.pipe
    best = None
    for c in enumerate_all(request.model, max_gpus=request.max_gpus, allow_offload=request.allow_offload):
        r = request.evaluate(c)
        valid = np.all(list(core._masks(request, c, r, just_below=True).values()), axis=0)
        for n_l, t in zip(np.asarray(c["n_l"])[valid], np.asarray(r["time_days"])[valid]):
            key = (-int(n_l) if highest_pipeline else 0, float(t))
            best = key if best is None or key < best else best
    return best


def test_search_per_schedule_is_feasible_and_nothing_is_faster():
    """Random small models and perturbed hardware (as tests/test_search.py): for every schedule the search's
    answer is feasible, obeys the schedule's rules, and no configuration of the whole grid is faster."""
    import lgacc.search.core as core

    rng = random.Random(1212)
    found_any = 0
    for case in range(24):
        x = rng.choice([4, 6, 8])
        scale = lambda: 30 * 2 ** rng.uniform(-3, 3)  # noqa: E731
        hardware = A100.replace(
            memory_bytes=A100.memory_bytes * 2 ** rng.uniform(-16, -6),
            infiniband_bandwidth_bytes_per_s=A100.infiniband_bandwidth_bytes_per_s * scale(),
            nvlink_bandwidth_bytes_per_s=A100.nvlink_bandwidth_bytes_per_s * scale(),
            cpu_gpu_bandwidth_bytes_per_s=A100.cpu_gpu_bandwidth_bytes_per_s * scale(),
            pcie_bandwidth_bytes_per_s=A100.pcie_bandwidth_bytes_per_s * scale(),
            gpus_per_node=rng.choice([1, 4, 16]),
        )
        model = x_model(x)
        schedule = SCHEDULES[case % len(SCHEDULES)]
        n_v = rng.choice([1, 2]) if schedule in CHUNKS else 1
        method = rng.choice(["baseline", "improved"])
        parallelism = rng.choice(["data+pipe", "3d", "pipe+tensor"])
        label = f"case {case}: {model.name} {method} {parallelism} {schedule} v={n_v}"
        found = fastest(model, hardware, method, parallelism, schedule=schedule, n_v=n_v, explain=False)
        request = SearchRequest.create(model, hardware, method, parallelism, schedule=schedule, n_v=n_v)
        best = _brute_force_best(request, core)
        assert found.feasible == (best is not None), label
        if best is None:
            continue
        found_any += 1
        c = found.config
        assert found.evaluation.feasible and found.evaluation.schedule == schedule, label
        assert model.d_l % (c.n_l * n_v) == 0 or c.n_l == 1, label
        if schedule == "interleaved" and n_v > 1 and c.n_l > 1:
            assert c.n_mu % c.n_l == 0, label
        if best[0]:
            assert c.n_l == -best[0], label
        assert found.evaluation.time_days <= best[1] * (1 + 1e-9), f"{label}: {found.evaluation.time_days} > {best}"
    assert found_any >= 12


# --- the closed forms the evaluator reads ----------------------------------------------------------


def test_schedule_terms_reduce_to_the_papers_equations():
    """Chunks per device from the transfer counts; the modular pipeline's intensity is eq:pipeline_intensity_impr
    (exact and printed); GPipe's reduction window is 1/n_mu of the modular one's, which turns
    eq:data_intensity_improved into eq:data_intensity_base."""
    import sympy

    from lgacc.model.formulas import derivation
    from lgacc.model.formulas import schedules as s
    from lgacc.model.symbols import d_l, n_l, n_mu

    assert s.chunks_per_device("gpipe") == 1 and s.chunks_per_device("zero-bubble") == 1
    assert sympy.simplify(s.chunks_per_device("interleaved") - s.v) == 0
    assert sympy.simplify(s.chunks_per_device("modular") - d_l / n_l) == 0
    modular, impr = s.schedule_pipeline_intensity("modular"), derivation("pipeline_intensity_impr")
    assert sympy.simplify(modular.exact - impr.exact) == 0 and sympy.simplify(modular.paper - impr.paper) == 0
    assert sympy.simplify(s.data_window_ratio("gpipe") - 1 / n_mu) == 0
    base, improved = derivation("data_intensity_base"), derivation("data_intensity_improved")
    assert sympy.simplify(improved.paper * s.data_window_ratio("gpipe") - base.paper) == 0
    assert [name for name in s.SCHEDULES if s.layered_window(name) != 0] == ["breadth-first", "modular"]
    assert s.layered_window("breadth-first").subs(s.v, 1) == 0


def test_fastest_schedule_keeps_the_fastest_chunk_count():
    from lgacc.search.core import fastest_schedule

    model = x_model(8)  # d_l = 8: chunk counts 1, 2, 4, 8
    for method in ("baseline", "improved"):
        chosen = fastest_schedule(model, A100, method, "data+pipe", "breadth-first", explain=False)
        times = {v: fastest(model, A100, method, "data+pipe", schedule="breadth-first", n_v=v, explain=False)
                 for v in (1, 2, 4, 8)}
        times = {v: r.evaluation.time_days for v, r in times.items() if r.feasible}
        assert chosen.evaluation.time_days == min(times.values()), method
        assert chosen.evaluation.n_v == min(v for v, t in times.items() if t == min(times.values()))


def test_the_evaluator_knows_the_same_schedules_as_the_simulator_and_the_formulas():
    from lgacc.model.evaluator.mapping import SCHEDULES as mapped
    from lgacc.model.evaluator.mapping import evaluation_map
    from lgacc.model.formulas.schedules import SCHEDULES as derived
    from lgacc.schedule.builders import SCHEDULES as simulated

    assert tuple(mapped) == tuple(derived) == SCHEDULES and set(simulated) == set(SCHEDULES)
    json.dumps(evaluation_map())  # plain data for the calculator
