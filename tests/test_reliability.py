"""One test per numbered finding of the reliability issue (#14): each failed before its fix.

The contract: any input gets a result, or exit code 2 and exactly one line on stderr
naming the value and the rule; never a traceback, a hang or a silently wrong number.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml

from lgacc import yamlfile
from lgacc.cli import main
from lgacc.errors import UserInputError, positive_int
from lgacc.model.hardware import DATA_DIR, GIB, HardwareSpecError, HardwareSpecWarning, load_hardware

ROOT = Path(__file__).resolve().parent.parent

SMALL_MEMORY = str(ROOT / "tests" / "fixtures" / "hardware" / "small-memory-gpu.yaml")
SLOW_NETWORK = str(ROOT / "tests" / "fixtures" / "hardware" / "slow-network-cluster.yaml")
A100_TEXT = (DATA_DIR / "a100-80gb.yaml").read_text()


def run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code, err, *fragments):
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def spec_error(path) -> str:
    with pytest.raises(HardwareSpecError) as info:
        load_hardware(path)
    message = str(info.value)
    assert "\n" not in message
    return message


# 1. The default hardware does not depend on the working folder.


@pytest.mark.parametrize("kind", ["file", "folder"])
def test_1_a_local_file_or_folder_never_replaces_a_shipped_name(tmp_path, monkeypatch, capsys, kind):
    impostor = tmp_path / "a100-80gb"
    if kind == "file":
        impostor.write_text(A100_TEXT.replace("memory_gib: 80", "memory_gib: 8"))
    else:
        impostor.mkdir()
    monkeypatch.chdir(tmp_path)
    assert load_hardware().memory_bytes == 80 * GIB
    assert load_hardware("a100-80gb").memory_bytes == 80 * GIB
    code, out, err = run(capsys, ["reproduce", "table:hardware_bandwidth", "--format", "json"])
    assert code == 0, err
    assert json.loads(out)[0]["bandwidth_gb_s"] == 2039


def test_1_paths_are_paths_names_are_names(tmp_path, monkeypatch):
    (tmp_path / "mine.yaml").write_text(A100_TEXT.replace("name: a100-80gb", "name: mine"))
    monkeypatch.chdir(tmp_path)
    assert load_hardware("mine.yaml").name == "mine"
    assert load_hardware("./mine.yaml").name == "mine"
    assert "no such hardware" in spec_error("mine")  # a name: only shipped files
    assert "no such file" in spec_error("a100-80gb.yaml")  # a path: not the shipped file


# 2. The book's commands on hardware where X160 cannot be trained.


def test_2_scorecard_on_a_small_memory_gpu(capsys):
    code, out, err = run(capsys, ["scorecard", "--hardware", SMALL_MEMORY, "--format", "json"])
    assert code == 0, err
    json.loads(out)


def test_2_claims_on_a_small_memory_gpu(capsys):
    code, out, err = run(capsys, ["reproduce", "claims", "--hardware", SMALL_MEMORY, "--format", "json"])
    assert code == 0, err
    json.loads(out)


def test_2_the_fixtures_load_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_hardware(SMALL_MEMORY).memory_bytes == 4 * GIB
        assert load_hardware(SLOW_NETWORK).gpus_per_node == 4


# 3. Spec files.


def _with(key_line: str, replacement: str) -> str:
    assert key_line in A100_TEXT
    return A100_TEXT.replace(key_line, replacement)


BAD_SPECS = {
    "non-utf8": (A100_TEXT.encode().replace(b"NVIDIA", b"NVIDIA \xff\xfe"), "not UTF-8"),
    "deep nesting": (("notes: " + "[" * 20000 + "]" * 20000 + "\n" + A100_TEXT).encode(), "nesting deeper"),
    "alias bomb": (
        (A100_TEXT + 'notes: &a ["x","x","x","x","x","x","x","x","x"]\n'
         + "".join(f"n{i}: &a{i} [*{'a' if i == 0 else f'a{i - 1}'}]\n" for i in range(30))).encode(),
        "not allowed",
    ),
    "duplicate key": ((A100_TEXT + "memory_gib: 40\n").encode(), "duplicate key 'memory_gib'"),
    "sexagesimal": (_with("gpus_per_node: 16", "gpus_per_node: 1:20").encode(), "'1:20'"),
    "1e300 GiB": (_with("memory_gib: 80", "memory_gib: 1.0e+300").encode(), "above the largest accepted value"),
    "subnormal peak": (_with("peak_flop_per_s: 312.0e+12", "peak_flop_per_s: 5.0e-324").encode(), "below the smallest"),
    "peak in Tflop/s": (_with("peak_flop_per_s: 312.0e+12", "peak_flop_per_s: 312").encode(), "312.0e+12"),
    "over 1 MB": ((A100_TEXT + "#" * 1_000_001 + "\n").encode(), "larger than 1,000,000 bytes"),
    "efficiency above 1": ((A100_TEXT + "kernel_efficiency: 1.5\n").encode(), "kernel_efficiency"),
    "efficiency 0": ((A100_TEXT + "kernel_efficiency: 0\n").encode(), "kernel_efficiency"),
}


@pytest.mark.parametrize("case", list(BAD_SPECS))
def test_3_bad_spec_files_get_one_line(tmp_path, capsys, case):
    data, fragment = BAD_SPECS[case]
    path = tmp_path / "spec.yaml"
    path.write_bytes(data)
    assert fragment in spec_error(path)
    code, _, err = run(capsys, ["reproduce", "table:hardware_bandwidth", "--hardware", str(path)])
    assert_one_line_error(code, err, str(path))


def test_3_unreadable_file_and_folder(tmp_path, monkeypatch):
    folder = tmp_path / "folder.yaml"
    folder.mkdir()
    assert "is a folder" in spec_error(folder)
    path = tmp_path / "locked.yaml"
    path.write_text(A100_TEXT)

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(yamlfile, "open", denied, raising=False)  # tests may run as root
    assert "permission denied" in spec_error(path)


def test_3_yaml_12_scalars():
    data = yamlfile.parse_yaml_mapping("a: 1:20\nb: 010\nc: yes\nd: 312e12\ne: 2021-01-01\nf: 0x10\n", "t")
    assert data == {"a": "1:20", "b": 10, "c": "yes", "d": 312e12, "e": "2021-01-01", "f": 16}


def test_3_implausible_but_possible_values_warn(tmp_path):
    path = tmp_path / "slow.yaml"
    path.write_text(_with("peak_flop_per_s: 312.0e+12", "peak_flop_per_s: 5.0e+11"))
    with pytest.warns(HardwareSpecWarning, match="below the usual"):
        assert load_hardware(path).peak_flop_per_s == 5e11


def test_3_kernel_efficiency_is_optional_and_loaded(tmp_path):
    assert load_hardware("a100-80gb").kernel_efficiency == 1.0
    path = tmp_path / "eff.yaml"
    path.write_text(A100_TEXT + "kernel_efficiency: 0.6\n")
    assert load_hardware(path).kernel_efficiency == 0.6
    with pytest.raises(HardwareSpecError):
        load_hardware("a100-80gb").replace(kernel_efficiency=2.0)


def test_3_the_alias_bomb_does_not_hang(tmp_path):
    import time

    bomb = "a: &a [" + ",".join(["x"] * 9) + "]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(9)
    )
    start = time.perf_counter()
    with pytest.raises(UserInputError, match="not allowed"):
        yamlfile.parse_yaml_mapping(bomb, "bomb")
    assert time.perf_counter() - start < 60  # a hang detector; the rejection itself is immediate


@pytest.mark.skipif(yamlfile._FastLoader is None, reason="PyYAML built without libyaml")
def test_3_libyaml_reader_reads_every_data_file_as_the_python_reader_does():
    """The fast reader (libyaml's parser, the package's constructors) and the pure-Python one give the same mapping
    for every YAML file the package ships (models, hardware, runs, tables)."""
    from lgacc.paths import DATA

    files = sorted(DATA.rglob("*.yaml"))
    assert len(files) > 50
    for path in files:
        text = path.read_text(encoding="utf-8")
        slow = yaml.load(text, Loader=yamlfile._StrictLoader)  # noqa: S506 - a SafeLoader
        assert yamlfile.parse_yaml_mapping(text, str(path)) == slow, path


RULES = {
    "alias": ("a: *x\n", "alias *x is not allowed"),
    "anchor and alias": ("a: &x 1\nb: *x\n", "anchor &x is not allowed"),
    "unused anchor": ("a: &x 1\n", "anchor &x is not allowed"),
    "duplicate key": ("a:\n  b: 1\n  b: 2\n", "duplicate key 'b' (first given on line 2)"),
    # the top mapping is level 1, each list one more, the number one more: 31 lists put the number at 33
    "33 levels": ("a: " + "[" * 31 + "1" + "]" * 31 + "\n", "nesting deeper than 32 levels"),
    "33 empty levels": ("a: " + "[" * 32 + "]" * 32 + "\n", "nesting deeper than 32 levels"),
}


@pytest.mark.parametrize("case", list(RULES))
def test_3_both_readers_refuse_by_the_same_rule(case, monkeypatch):
    text, fragment = RULES[case]
    with pytest.raises(UserInputError, match=re.escape(fragment)):
        yamlfile.parse_yaml_mapping(text, "t")
    monkeypatch.setattr(yamlfile, "_FastLoader", None)  # PyYAML without libyaml: the pure-Python reader
    with pytest.raises(UserInputError, match=re.escape(fragment)):
        yamlfile.parse_yaml_mapping(text, "t")


def test_3_thirty_two_levels_are_read_by_both_readers(monkeypatch):
    text = "a: " + "[" * 30 + "1" + "]" * 30 + "\n"  # the mapping, 30 lists and the number: 32 levels
    fast = yamlfile.parse_yaml_mapping(text, "t")
    monkeypatch.setattr(yamlfile, "_FastLoader", None)
    slow = yamlfile.parse_yaml_mapping(text, "t")
    inner = fast["a"]
    for _ in range(29):
        inner = inner[0]
    assert fast == slow and inner == [1]


# 4. Integers.


def test_4_counts_beyond_int64_are_rejected_by_the_cli(capsys):
    code, _, err = run(capsys, ["evaluate", "--model", "X160", "--method", "improved", "--n-b", "8",
                                "--n-mu", "9223372036854775808"])
    assert_one_line_error(code, err, "--n-mu", "9223372036854775808", "2**63 - 1")


def test_4_a_gpu_budget_beyond_int64_is_no_overflow(capsys):
    code, out, err = run(capsys, ["optimize", "--model", "X160", "--method", "improved", "--parallelism", "3d",
                                  "--max-gpus", "9223372036854775808", "--format", "json"])
    assert code == 0 and "Traceback" not in err, err
    json.loads(out)


def test_4_tiny_target_days_is_rejected(capsys):
    code, _, err = run(capsys, ["optimize", "--model", "X160", "--method", "improved", "--parallelism", "3d",
                                "--target-days", "1e-320"])
    assert_one_line_error(code, err, "target")


def test_4_a_batch_beyond_int64_is_not_wrapped(capsys):
    code, out, err = run(capsys, ["evaluate", "--model", "X160", "--method", "improved", "--n-b", "4611686018427387904",
                                  "--n-mu", "4", "--format", "json"])
    if code == 0:
        result = json.loads(out)
        assert result["b"] == 4611686018427387904 * 4 and not result["feasible"]
    else:
        assert_one_line_error(code, err)


def test_4_huge_simulate_durations(capsys):
    code, out, err = run(capsys, ["simulate", "--schedule", "modular", "--n-l", "2", "--n-mu", "2", "--d-l", "4",
                                  "--forward", "1e308", "--format", "json"])
    if code == 0:
        json.loads(out)
    else:
        assert_one_line_error(code, err, "--forward")


# 5. Output paths.


@pytest.mark.parametrize(
    "out, fragment",
    [("p.txt", "must end in"), ("pfile", "must end in"), ("{missing}/sub/f.svg", None), ("{file}/f.svg", "cannot write")],
)
def test_5_out_paths(tmp_path, capsys, out, fragment):
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    out = out.format(missing=tmp_path / "new", file=blocker)
    code, stdout, err = run(capsys, ["reproduce", "fig:pipeline_comparison", "--out", out])
    if fragment is None:  # a missing folder is created, and the file printed is the file written
        assert code == 0, err
        assert stdout.strip() == out and os.path.getsize(out) > 0
    else:
        assert_one_line_error(code, err, "--out", fragment)


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["reproduce", "table:hardware_bandwidth", "--out", "t.svg"], "--out applies to figures"),
        (["reproduce", "fig:pipeline_comparison", "--out", "f.svg", "--compare"], "--compare applies to tables"),
    ],
)
def test_5_options_that_do_not_apply_are_errors(tmp_path, monkeypatch, capsys, argv, fragment):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, argv)
    assert_one_line_error(code, err, fragment)
    assert not list(tmp_path.iterdir())


# 6. Messages.


@pytest.mark.parametrize(
    "argv, fragments",
    [
        (["evaluate"], ["lgacc evaluate: error:", "required"]),
        (["evaluate", "--model", "X160", "--method", "improved", "--n-b", "x"], ["--n-b", "'x'"]),
        (["reproduce"], ["lgacc reproduce: error:", "label"]),
        (["nonsense"], ["lgacc: error:", "nonsense"]),
        ([], ["lgacc: error:", "command"]),
        (["simulate", "--schedule", "diagonal"], ["--schedule", "diagonal"]),
    ],
)
def test_6_usage_errors_are_one_line(capsys, argv, fragments):
    code, _, err = run(capsys, argv)
    assert_one_line_error(code, err, *fragments)
    assert "usage:" not in err


def test_6_max_overhead_message(capsys):
    code, out, err = run(capsys, ["optimize", "--model", "X160", "--method", "improved", "--parallelism", "3d",
                                  "--max-overhead", "10", "--format", "json"])
    assert "maximum 0.25" not in out + err
    if code != 0:
        assert_one_line_error(code, err, "max")


def test_6_evaluate_agrees_with_optimize_on_n_l_not_dividing_d_l(capsys):
    """evaluate judges any configuration: n_l=3 for d_l=160 is infeasible under the same named
    assumption (divisible_layers) by which optimize never proposes it, and only under it."""
    argv = ["evaluate", "--model", "X160", "--method", "improved", "--n-b", "8", "--n-l", "3", "--n-mu", "3",
            "--format", "json"]
    code, out, err = run(capsys, argv)
    assert code == 0, err
    result = json.loads(out)
    assert not result["feasible"]
    assert any("n_l=3 does not divide d_l=160" in reason and "divisible_layers" in reason for reason in result["reasons"])
    code, out, err = run(capsys, argv + ["--assume", "divisible_layers=false"])
    assert code == 0, err
    assert not any("n_l=3" in reason for reason in json.loads(out)["reasons"])
    code, out, err = run(capsys, ["optimize", "--model", "X160", "--method", "improved", "--parallelism", "3d",
                                  "--format", "json"])
    assert code == 0, err
    assert 160 % json.loads(out)["n_l"] == 0
    code, _, err = run(capsys, ["simulate", "--schedule", "modular", "--n-l", "3", "--n-mu", "3", "--d-l", "16"])
    assert_one_line_error(code, err, "n_l = 3", "d_l = 16")


def test_6_warnings_are_one_line(tmp_path, capsys):
    path = tmp_path / "slow.yaml"
    path.write_text(_with("peak_flop_per_s: 312.0e+12", "peak_flop_per_s: 5.0e+11"))
    code, _, err = run(capsys, ["reproduce", "table:hardware_bandwidth", "--hardware", str(path), "--format", "json"])
    assert code == 0
    assert err.count("\n") == 1 and err.startswith("lgacc reproduce: warning:") and "peak_flop_per_s" in err


# 7. Python API.


@pytest.mark.parametrize("value, expected", [(np.int64(4), 4), (np.float64(4.0), 4), (4.0, 4), (np.uint8(3), 3)])
def test_7_numpy_integers_are_counts(value, expected):
    assert positive_int("t", "n", value) == expected
    assert type(positive_int("t", "n", value)) is int


@pytest.mark.parametrize("value", [True, np.bool_(True), 4.5, float("nan"), float("inf"), "4", None, 0, -1, 2**63])
def test_7_non_counts_are_rejected(value):
    with pytest.raises(UserInputError):
        positive_int("t", "n", value)


@pytest.mark.parametrize("value", [123, None, 4.5, ["a100-80gb"], b"a100-80gb", "", "a100-80gb\x00", "x" * 5000 + ".yaml"])
def test_7_load_hardware_misuse_is_a_user_error(value):
    with pytest.raises(UserInputError):
        load_hardware(value)


def test_7_pipeline_modular_must_be_a_bool():
    from lgacc.schedule import pipeline

    with pytest.raises(UserInputError):
        pipeline(2, 2, 4, modular="yes")


def test_7_evaluate_max_overhead_must_not_be_a_bool():
    from lgacc.model.config import TrainingConfig
    from lgacc.model.evaluator import evaluate
    from lgacc.model.transformer import x_model

    with pytest.raises(UserInputError):
        evaluate(x_model(160), "a100-80gb", TrainingConfig("improved", n_b=8), max_overhead=True)


def test_7_transformer_name_must_be_a_string():
    from lgacc.model.transformer import Transformer

    with pytest.raises(UserInputError):
        Transformer(name=None, d_l=2, d_m=4, d_a=2, d_h=2, d_s=8)


def test_yaml_loader_is_reusable_for_other_specs(tmp_path):
    path = tmp_path / "model.yaml"
    path.write_text(yaml.safe_dump({"name": "m", "d_l": 4}))
    assert yamlfile.load_yaml_mapping(path, "model spec") == {"name": "m", "d_l": 4}
    path.write_text("- a\n- b\n")
    with pytest.raises(UserInputError, match=r"model spec .*: must be a mapping"):
        yamlfile.load_yaml_mapping(path, "model spec")


def test_the_input_checks_page_states_the_fuzz_budget_and_the_ranges():
    """book/input_checks.md states the cases tried per test and in all; they are the suite's settings."""
    from fuzzing import EXAMPLES

    from lgacc.model.hardware import RANGES

    page = (ROOT / "book" / "input_checks.md").read_text()
    total = sum(EXAMPLES.values())
    assert f"**{total:,}**" in page and f"all {total:,} cases" in page
    rows = [line.split("|") for line in page.splitlines() if line.startswith("| ") and line.count("|") == 5]
    stated = [int(cells[2].strip()) for cells in rows if cells[2].strip().isdigit()]
    assert sum(stated) == total
    assert stated[0] == EXAMPLES["spec_mutations"] + EXAMPLES["spec_text_noise"]
    for cells in rows:  # each stated split adds up to its cases
        if cells[2].strip().isdigit():
            assert int(cells[3]) + int(cells[4]) == int(cells[2]), cells
    assert RANGES["peak_flop_per_s"].low == 1e9 and "| peak (flop/s) | 10<sup>9</sup> | 10<sup>12</sup>" in page
    assert "file: input_checks" in (ROOT / "book" / "_toc.yml").read_text()


# Model and run files read through the same safe reader as the hardware specs.

MODEL_TEXT = "d_l: 2\nd_m: 8\nd_a: 2\nd_h: 4\nd_s: 16\n"
BAD_MODELS = {
    "duplicate key": (MODEL_TEXT + "d_l: 4\n", "duplicate key 'd_l'"),
    "sexagesimal": (MODEL_TEXT.replace("d_l: 2", "d_l: 1:20"), "d_l='1:20'"),
    "alias": ("n: &n 2\nd_l: *n\n" + MODEL_TEXT.split("\n", 1)[1], "not allowed"),
    "yes is not true": (MODEL_TEXT + "gated: yes\n", "gated='yes'"),
    "published count": (MODEL_TEXT + "parameters_published: many\n", "parameters_published='many'"),
    "vocabulary beyond int64": (MODEL_TEXT + f"d_v: {2**70}\n", "d_v="),
    "not UTF-8": (MODEL_TEXT + "source: caf\xe9\n", "not UTF-8"),
    "a list": ("- 1\n", "must be a mapping"),
}


@pytest.mark.parametrize("case", list(BAD_MODELS))
def test_model_files_use_the_safe_reader(tmp_path, capsys, case):
    text, fragment = BAD_MODELS[case]
    path = tmp_path / "model.yaml"
    path.write_bytes(text.encode("latin-1"))
    code, _, err = run(capsys, ["evaluate", "--model", str(path), "--method", "improved", "--n-b", "8"])
    assert_one_line_error(code, err, "model file", fragment)


def test_model_file_counts_accept_numpy_and_zero_vocabulary():
    from lgacc.model.transformer import Transformer

    model = Transformer(name="m", d_l=2, d_m=8, d_a=2, d_h=4, d_s=16, d_v=np.int64(0))
    assert model.d_v == 0 and type(model.d_v) is int
    assert Transformer(name="m", d_l=2, d_m=8, d_a=2, d_h=4, d_s=16, d_v=np.int64(50)).d_v == 50


VALIDATION_DIR = ROOT / "data" / "validation"
SMITH = (VALIDATION_DIR / "smith2022.yaml").read_text()
BAD_RUNS = {
    "cluster not a mapping": (SMITH.replace("cluster:\n", "cluster: 5\nold_cluster:\n"), "cluster=5"),
    "runs not a list": (SMITH.replace("runs:\n", "runs: {a: 1}\nold_runs:\n"), "runs must be a non-empty list"),
    "reported text": (SMITH.replace("iteration_time_s: 60.1", "iteration_time_s: fast"), "iteration_time_s='fast'"),
    "reported zero": (SMITH.replace("iteration_time_s: 60.1", "iteration_time_s: 0"), "iteration_time_s=0"),
    "throughput overflow": (SMITH.replace("iteration_time_s: 60.1, ", "").replace("tflops_per_gpu: 126", "tflops_per_gpu: 1.0e+308"),
                            "measured step time = 0.0 s"),
    "count beyond int64": (SMITH.replace("n_gpu: 2240", f"n_gpu: {2**64}"), "2**63 - 1"),
    "model not a name": (SMITH.replace("model: mt-nlg-530b", "model: [1]", 1), "model=[1]"),
    "duplicate key": (SMITH.replace("\nhardware: ", "\nhardware: h100-sxm\nhardware: ", 1), "duplicate key 'hardware'"),
}


@pytest.mark.parametrize("case", list(BAD_RUNS))
def test_run_files_get_one_line(tmp_path, capsys, case):
    text, fragment = BAD_RUNS[case]
    (tmp_path / "runs.yaml").write_text(text)
    code, _, err = run(capsys, ["validate", "--runs", str(tmp_path), "--format", "json"])
    assert_one_line_error(code, err, fragment)


@pytest.mark.parametrize("folder, fragment", [("absent", "no such folder"), ("file.yaml", "is a file"), ("empty", "no run file"),
                                              ("", "must be a path")])
def test_runs_folder_errors(tmp_path, capsys, folder, fragment):
    (tmp_path / "file.yaml").write_text(SMITH)
    (tmp_path / "empty").mkdir()
    runs = str(tmp_path / folder) if folder else ""
    code, _, err = run(capsys, ["validate", "--runs", runs])
    assert_one_line_error(code, err, fragment)


def test_one_publication_has_a_fit_but_no_held_out_error(tmp_path, capsys):
    (tmp_path / "smith2022.yaml").write_text(SMITH)
    code, out, err = run(capsys, ["validate", "--runs", str(tmp_path), "--format", "json"])
    assert code == 0, err
    calibration = json.loads(out)["calibration"]
    assert calibration["lopo_mean_abs_error"] is None and 0 < calibration["kernel_efficiency"] < 1
    code, out, err = run(capsys, ["validate", "--runs", str(tmp_path)])
    assert code == 0 and "the runs come from one publication" in out, err


def test_claims_as_a_table_are_a_table_not_a_python_list(capsys):
    code, out, err = run(capsys, ["reproduce", "claims"])
    assert code == 0, err
    assert not out.lstrip().startswith("[{") and "x160_total_flops" in out
    header = out.splitlines()[1].split()  # line 0 names the columns left to csv and json
    assert header[:4] == ["id", "paper", "reproduced", "agrees"] and "verdict" in header
    code, out, err = run(capsys, ["reproduce", "claims", "--format", "csv"])
    assert code == 0 and out.startswith("id,paper,reproduced,unit,agrees,printed,tolerance,how,where"), err


def test_compare_applies_to_claims_as_the_help_says(capsys):
    code, out, err = run(capsys, ["reproduce", "claims", "--compare", "--format", "json"])
    assert code == 0, err
    assert {"paper", "reproduced", "agrees"} <= set(json.loads(out)[0])


def test_sensitivity_on_a_small_memory_gpu(capsys):
    """Where the baseline cannot train X160 the rows say so (null), and the command still answers."""
    code, out, err = run(capsys, ["sensitivity", "--hardware", SMALL_MEMORY, "--assumption", "gb", "--format", "json"])
    assert code == 0, err
    rows = json.loads(out)
    assert {row["value"] for row in rows} == {"GiB", "GB"}
    assert all(row["baseline_time_days"] is None and row["improved_time_days"] > 0 for row in rows)
