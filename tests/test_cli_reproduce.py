"""``lgacc reproduce``: the interface other tools rely on."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from lgacc.cli import main


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lgacc", *args], capture_output=True, text=True)


def test_help_lists_reproduce():
    result = run_cli("--help")
    assert result.returncode == 0
    assert "reproduce" in result.stdout


def test_hardware_table_as_json(capsys):
    assert main(["reproduce", "table:hardware_bandwidth", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 8
    for row in rows:
        assert {"name", "bandwidth_gb_s", "threshold_flops_per_byte"} <= set(row)
    nvlink = next(row for row in rows if row["name"] == "NVLINK")
    assert nvlink["threshold_flops_per_byte"] == pytest.approx(312e12 / (600 * 2**30))


def test_hardware_table_as_csv_and_table(capsys):
    assert main(["reproduce", "table:hardware_bandwidth", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("key,name,bandwidth_gb_s,threshold_flops_per_byte")
    assert len(lines) == 9
    assert main(["reproduce", "table:hardware_bandwidth", "--compare"]) == 0
    assert "agrees" in capsys.readouterr().out


def test_hardware_option_takes_a_path(tmp_path, a100_spec, capsys):
    a100_spec["infiniband_bandwidth_gib_per_s"] = 100
    path = tmp_path / "fast-ib.yaml"
    path.write_text(yaml.safe_dump(a100_spec))
    assert main(["reproduce", "table:hardware_bandwidth", "--hardware", str(path), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    infiniband = next(row for row in rows if row["name"].startswith("InfiniBand"))
    assert infiniband["name"] == "InfiniBand (400 Gb/s)"
    assert infiniband["bandwidth_gb_s"] == 100


def test_bad_hardware_is_one_line_and_exit_2(tmp_path, a100_spec):
    a100_spec["nvlink_bandwidth_gib_per_s"] = -600
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(a100_spec))
    result = run_cli("reproduce", "table:hardware_bandwidth", "--hardware", str(path))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "nvlink_bandwidth_gib_per_s" in result.stderr and str(path) in result.stderr


def test_unknown_label_exit_2():
    result = run_cli("reproduce", "table:nope")
    assert result.returncode == 2
    assert "table:hardware_bandwidth" in result.stderr


def test_every_label_is_found_in_its_own_module():
    """The lazy lookup (one module per label) finds every artifact the full walk finds."""
    from lgacc.paper import artifacts

    for label, artifact in artifacts.registry().items():
        assert artifacts._artifact_of_module(label) is artifact, label


def test_a_table_does_not_import_the_figures_or_the_simulator(tmp_path):
    """Issue #15: `lgacc reproduce table:...` imports that table's module only (no matplotlib; no sympy once
    the generated code is cached)."""
    import os

    env = {**os.environ, "LGACC_CACHE_DIR": str(tmp_path)}
    code = (
        "import sys\n"
        "from lgacc.paper.artifacts import get_artifact\n"
        "get_artifact('table:parallel_methods_comparison')\n"
        "print(sorted(m for m in ('matplotlib', 'sympy', 'lgacc.schedule', 'lgacc.scaling') if m in sys.modules))\n"
    )
    subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)  # warms the cache
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.strip() == "[]"
