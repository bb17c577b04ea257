"""``lgacc simulate``: its JSON keys, its numbers, and exit code 2 on every bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from lgacc.cli import main
from lgacc.schedule import MAX_OPERATIONS


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(["simulate", *argv])
    except SystemExit as exit_:  # argparse's own errors
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "schedule,n_l,n_mu,d_l,bubble",
    [("standard", 4, 8, 16, 3 / 8), ("modular", 4, 8, 16, 3 / 8 * 4 / 16), ("modular", 3, 3, 9, 2 / 3 * 3 / 9)],
)
def test_json_reports_the_measured_bubble(capsys, schedule, n_l, n_mu, d_l, bubble):
    code, out, err = run_cli(
        capsys, "--schedule", schedule, "--n-l", str(n_l), "--n-mu", str(n_mu), "--d-l", str(d_l), "--format", "json"
    )
    assert (code, err) == (0, "")
    values = json.loads(out)
    assert {"bubble_overhead", "step_time", "busy_fraction_per_device"} <= set(values)
    assert values["bubble_overhead"] == pytest.approx(bubble, rel=1e-15)
    assert values["analytic_bubble_overhead"] == pytest.approx(bubble, rel=1e-15)
    assert len(values["busy_fraction_per_device"]) == n_l
    assert values["busy_fraction_per_device"][0] == pytest.approx(1 / (1 + bubble), rel=1e-15)
    # Unit forward, backward 1 + 2: the bubble-free step is 4 per layer and micro-batch.
    assert values["step_time"] == pytest.approx(4 * n_mu * d_l / n_l * (1 + bubble), rel=1e-15)


def test_table_format(capsys):
    code, out, _ = run_cli(capsys, "--schedule", "standard", "--n-l", "2", "--n-mu", "2", "--d-l", "2")
    assert code == 0
    assert "bubble_overhead" in out and "busy_fraction_per_device" in out


def test_analytic_bubble_withheld_where_the_formula_does_not_apply(capsys):
    code, out, _ = run_cli(capsys, "--schedule", "modular", "--n-l", "4", "--n-mu", "2", "--d-l", "8", "--format", "json")
    values = json.loads(out)
    assert code == 0 and values["analytic_bubble_overhead"] is None
    assert values["bubble_overhead"] > (4 - 1) / 2 * 4 / 8  # stalls beyond (n_l-1)/n_mu * n_l/d_l


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--n-l", "3", "--n-mu", "4", "--d-l", "8"], "n_l = 3 must divide d_l = 8"),
        (["--n-l", "2", "--n-mu", "0", "--d-l", "8"], "n_mu (micro-batches) must be >= 1, got 0"),
        (["--n-l", "2", "--n-mu", "-3", "--d-l", "8"], "got -3"),
        (["--n-l", "0", "--n-mu", "4", "--d-l", "8"], "n_l (pipeline-parallel devices) must be >= 1, got 0"),
        (["--n-l", "2", "--n-mu", "4", "--d-l", "0"], "d_l (layers) must be >= 1, got 0"),
        (["--n-l", "8", "--n-mu", "100000", "--d-l", "64"], f"limit of {MAX_OPERATIONS:,}"),
        (["--n-l", "2", "--n-mu", "4", "--d-l", "4", "--forward", "0"], "duration forward must be > 0"),
        (["--n-l", "2", "--n-mu", "4", "--d-l", "4", "--send", "-1"], "duration send must be >= 0"),
        (["--n-l", "2", "--n-mu", "4", "--d-l", "4", "--state", "partitioned"], "n_b >= 2"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, argv, message):
    code, out, err = run_cli(capsys, "--schedule", "modular", *argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and message in err


@pytest.mark.parametrize("argv", [["--n-l", "two"], ["--n-l", "2", "--send", "nan"], ["--schedule", "pipedream"]])
def test_unparseable_input_exits_2(capsys, argv):
    base = {"--schedule": "modular", "--n-l": "2", "--n-mu": "2", "--d-l": "4"}
    base.update(dict(zip(argv[::2], argv[1::2])))
    code, _, err = run_cli(capsys, *[part for pair in base.items() for part in pair])
    assert code == 2 and "error:" in err


def test_console_script_exit_code():
    # The real process: the exit status a shell sees.
    done = subprocess.run(
        [sys.executable, "-m", "lgacc", "simulate", "--schedule", "standard", "--n-l", "3", "--n-mu", "2", "--d-l", "4"],
        capture_output=True, text=True,
    )
    assert done.returncode == 2
    assert "n_l = 3 must divide d_l = 4" in done.stderr


@pytest.mark.parametrize("label", ["fig:gradient_accumulation", "fig:gradient_accumulation_partitioned", "fig:pipeline_comparison"])
def test_reproduce_writes_each_figure_as_svg(tmp_path, capsys, label):
    out = tmp_path / "figure.svg"
    assert main(["reproduce", label, "--out", str(out)]) == 0
    assert out.read_text().lstrip().startswith("<?xml") and "<svg" in out.read_text()


@pytest.mark.parametrize("schedule", ["gpipe", "standard", "1f1b", "interleaved", "breadth-first", "zero-bubble", "modular"])
def test_every_schedule_reports_the_new_keys(capsys, schedule):
    code, out, err = run_cli(capsys, "--schedule", schedule, "--n-l", "4", "--n-mu", "8", "--d-l", "16", "--format", "json")
    assert (code, err) == (0, "")
    values = json.loads(out)
    for key in ("bubble_overhead", "peak_activation_microbatches", "pipeline_bytes_per_step", "data_overlap_fraction"):
        assert isinstance(values[key], float), key
    assert values["bubble_overhead"] == values["analytic_bubble_overhead"]


def test_interleaved_bubble_and_memory(capsys):
    code, out, _ = run_cli(capsys, "--schedule", "interleaved", "--n-v", "2", "--n-l", "4", "--n-mu", "8", "--d-l", "16",
                           "--transfer-bytes", "10", "--format", "json")
    values = json.loads(out)
    # Narayanan et al.: (n_l - 1)/(v n_mu) = 3/16; n_l (1 + (n_l - 1)/(n_l v)) = 5.5; 2 (n_l v - 1) n_mu = 112 sends.
    assert (values["bubble_overhead"], values["peak_activation_microbatches"], values["pipeline_bytes_per_step"]) == (
        3 / 16, 5.5, 1120.0)


@pytest.mark.parametrize("flag", ["--forward", "--backward", "--send"])
def test_huge_durations_are_rejected_in_one_line(capsys, flag):
    code, out, err = run_cli(capsys, "--schedule", "gpipe", "--n-l", "2", "--n-mu", "4", "--d-l", "4", flag, "1e300")
    assert code == 2 and out == ""
    assert "1e300" in err.splitlines()[-1] and "limit" in err.splitlines()[-1]
