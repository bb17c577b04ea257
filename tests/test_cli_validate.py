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
    # issue #29: each run names its method and schedule; issue #26: the calibrated model beside the ideal one
    assert {run["method"] for run in data["runs"]} >= {"baseline", "partitioned"}
    assert all(run["schedule"] and run["n_v"] >= 1 for run in data["runs"])
    calibrated = data["calibrated"]
    assert calibrated["runs"] >= 30 and calibrated["publications"] >= 7
    # issue #35: at most two fitted parameters, each physical; the constant per-step time is no longer fitted
    assert set(calibrated["parameters"]) == {"kappa", "xi"}
    fixed = calibrated["fixed_parameters"]
    assert fixed["T_0"] == 0.0 and 0.5 < fixed["eta"] < 1 and fixed["nvlink_latency_s"] > 0
    assert "ND_A100_v4_results.md" in fixed["source"]
    # Megatron-Core's host, measured: a layer costs more than plain PyTorch's, its recomputed forward is its own
    assert 0 < fixed["host_megatron_layer_s"] < fixed["host_layer_s"] and fixed["host_megatron_recompute_s"] > 0
    assert "measure_megatron_host.py" in fixed["source"]
    # the host's time in four measured terms for each framework, none negative; Megatron-Core's step costs more
    for prefix in ("host_", "host_megatron_"):
        assert all(fixed[f"{prefix}{term}"] >= 0 for term in ("step_s", "step_layer_s", "micro_batch_s"))
    assert fixed["host_megatron_micro_batch_s"] > fixed["host_micro_batch_s"]
    assert "once a layer and step" in fixed["source"]
    # the measured tables read in place of fitted constants, each with its file and the command that prints it
    gemm = [t for t in calibrated["measured_tables"] if t["operation"].startswith("matrix multiply")]
    assert gemm and "h100" in gemm[0]["gpus"] and gemm[0]["file"].endswith("gemm_layers.csv")
    assert gemm[0]["files"][0] == gemm[0]["file"] and gemm[0]["files"][1].endswith("gemm_layers_widths.csv")
    attention = [t for t in calibrated["measured_tables"] if t["operation"].startswith("fused attention (causal")]
    assert attention and attention[0]["file"].endswith("h100-sxm-2026-11-27/attention.csv")
    assert gemm[0]["command"] == "python -m lgacc.model.calibrated.gemm_table"
    for run in data["runs"]:
        assert run["expected_step_s"] > 0
        if run["expected_lopo_s"] is not None:
            assert run["lopo_ratio"] == run["expected_lopo_s"] / run["measured_step_s"]
    assert data["key_models"]["expected_step_s"] == "calibrated" and data["key_models"]["predicted_paper_s"] == "ideal"
    # issue #29: the three methods are listed; one without runs says what is missing; looped runs are counted
    methods = calibrated["methods"]
    assert list(methods)[:3] == ["baseline", "partitioned", "improved"]
    dense = [run for run in data["runs"] if not run["extended"]]  # the summary's keys: dense bf16 runs (issue #36)
    assert calibrated["all_runs"] == len(data["runs"]) and calibrated["runs"] == len(dense)
    for name, counts in methods.items():
        assert counts["runs"] == sum(run["method"] == name for run in dense)
        assert counts["looped_runs"] == sum(run["method"] == name and run["n_v"] > 1 for run in dense)
        assert (counts["runs"] == 0) == ("missing" in counts), name
    assert methods["partitioned"]["runs"] >= 5
    assert "Breadth-First" in methods.get("improved", {}).get("missing", "Breadth-First") or methods["improved"]["runs"]


def test_table_output(capsys):
    assert main(["validate"]) == 0
    out = capsys.readouterr().out
    assert "leave one publication out" in out and "upper bound" in out


def test_bad_hardware_is_one_line(capsys):
    assert main(["validate", "--hardware", "tpu-v9"]) == 2
    err = capsys.readouterr().err
    assert "no such hardware" in err and len(err.strip().splitlines()) == 1


def test_model_path_on_evaluate(capsys, tmp_path):
    spec = tmp_path / "tiny.yaml"
    spec.write_text("d_l: 4\nd_m: 64\nd_a: 4\nd_h: 16\nd_s: 128\n")
    assert main(["evaluate", "--model", str(spec), "--method", "baseline", "--n-b", "2", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_gpu"] == 2
