"""The `lgacc validate` command line."""

import json

from lgacc.cli import main


def test_json_reports_each_run_with_both_conventions(capsys):
    assert main(["validate", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["runs"]) >= 12
    for run in data["runs"]:
        assert run["measured_step_s"] > 0
        assert run["ratio_physical"] == run["measured_step_s"] / run["predicted_physical_s"]
        assert run["ratio_paper"] == run["measured_step_s"] / run["predicted_paper_s"]
    assert 0 < data["calibration"]["kernel_efficiency"] <= 1
    assert data["calibration"]["publications"] >= 4


def test_table_output(capsys):
    assert main(["validate"]) == 0
    assert "leave-one-publication-out" in capsys.readouterr().out


def test_bad_hardware_is_one_line(capsys):
    assert main(["validate", "--hardware", "tpu-v9"]) == 2
    err = capsys.readouterr().err
    assert "no such hardware" in err and len(err.strip().splitlines()) == 1


def test_model_path_on_evaluate(capsys, tmp_path):
    spec = tmp_path / "tiny.yaml"
    spec.write_text("d_l: 4\nd_m: 64\nd_a: 4\nd_h: 16\nd_s: 128\n")
    assert main(["evaluate", "--model", str(spec), "--method", "baseline", "--n-b", "2", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_gpu"] == 2
