"""``lgacc codesign`` and :mod:`lgacc.studies.codesign` (issue 37): the sweep file's rules, the designs (brute
force), the split at constant totals, the rows against the search itself, the chunk store, and the runs:
serial against two local Dask workers, against a scheduler started here on 127.0.0.1, and a sweep interrupted
with SIGINT that resumes without computing its finished chunks again."""

from __future__ import annotations

import itertools
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from lgacc.cli import main
from lgacc.errors import UserInputError
from lgacc.model.hardware import GIB, load_hardware
from lgacc.model.transformer import named_model
from lgacc.search import fastest
from lgacc.studies.codesign import (ChunkStore, chunk_size, chunks, design_at, design_count, evaluate_chunk,
                                    evaluate_design, hardware_of, load_sweep, sweep_from_mapping, sweep_rows)
from lgacc.studies.codesign.implications import pareto_front
from lgacc.studies.codesign.sweep import expand_values

ROOT = Path(__file__).resolve().parents[1]

SMALL = """\
name: {name}
base: a100-80gb
models: [llama-3-70b]
chunk_size: 1
vary:
  - gpus_per_node: [8, 16]
  - split: [1, 2]
"""


def _sweep_file(tmp_path: Path, text: str = SMALL) -> Path:
    path = tmp_path / "sweep.yaml"
    path.write_text(text.format(name=f"test-{uuid.uuid4().hex}"))  # its own chunk store
    return path


@pytest.fixture
def sweep_file(tmp_path):
    path = _sweep_file(tmp_path)
    yield path
    sweep = load_sweep(path)
    shutil.rmtree(ChunkStore(sweep, chunk_size(sweep)).folder, ignore_errors=True)


def _lgacc(*argv: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lgacc", *argv], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, **kwargs)


# --- the sweep file -------------------------------------------------------------------------------------


BAD = {
    "unknown key": "base: a100-80gb\nmodels: [X160]\nspeed: 3\n",
    "missing base": "models: [X160]\n",
    "unknown model": "base: a100-80gb\nmodels: [X7.5]\n",
    "unknown spec": "base: a100-40gb\nmodels: [X160]\n",
    "flop/s in Tflop/s": "base: a100-80gb\nmodels: [X160]\nvary: {peak_flop_per_s: [312]}\n",
    "negative memory": "base: a100-80gb\nmodels: [X160]\nvary: {memory_gib: [-1]}\n",
    "fractional split": "base: a100-80gb\nmodels: [X160]\nvary: {split: [1.5]}\n",
    "bad split_links": "base: a100-80gb\nmodels: [X160]\nvary: {split: [2], split_links: [shared]}\n",
    "unknown vary key": "base: a100-80gb\nmodels: [X160]\nvary: {pcie_gb_per_s: [1]}\n",
    "one field twice": "base: a100-80gb\nmodels: [X160]\nvary: {memory_gib: [1], memory_gb: [1]}\n",
    "bad range": "base: a100-80gb\nmodels: [X160]\nvary: {memory_gib: {from: 1, to: 2}}\n",
    "too many designs": "base: a100-80gb\nmodels: [X160]\nvary: {memory_gib: {from: 1, to: 2, steps: 100000},"
                        " split: {from: 1, to: 1000, steps: 100000}}\n",
    "cheapest without target": "base: a100-80gb\nmodels: [X160]\nobjective: cheapest\n",
    "empty list": "base: a100-80gb\nmodels: [X160]\nvary: {split: []}\n",
    "not a mapping": "- base\n",
    "an alias": "base: &a a100-80gb\nmodels: [*a]\n",
}


@pytest.mark.parametrize("text", BAD.values(), ids=BAD.keys())
def test_a_bad_sweep_file_is_one_line_and_exit_2(tmp_path, capsys, text):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(UserInputError):
        load_sweep(path)
    assert main(["codesign", "--sweep", str(path), "--workers", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("lgacc codesign: error: "), err


def test_bad_arguments_are_one_line_and_exit_2(sweep_file, capsys):
    for argv in (["--format", "parquet"], ["--workers", "0"], ["--scheduler", "not an address"],
                 ["--scheduler", "tcp://127.0.0.1:70000"], ["--out", str(sweep_file.parent)]):
        assert main(["codesign", "--sweep", str(sweep_file), *argv]) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and ": error: " in err[0], (argv, err)


def test_ranges_expand_to_hand_computed_values():
    assert expand_values("f", "memory_gib", {"from": 10, "to": 1000, "steps": 3, "scale": "log"}) == \
        pytest.approx((10.0, 100.0, 1000.0))
    assert expand_values("f", "split", {"from": 1, "to": 4, "steps": 4}) == (1, 2, 3, 4)
    assert expand_values("f", "gpus_per_node", [8, 8, 72]) == (8, 72)  # each value once
    assert expand_values("f", "nvlink_bandwidth_gb_per_s", 300) == (300.0,)


# --- designs --------------------------------------------------------------------------------------------


def test_designs_are_each_grids_product_in_order():
    sweep = sweep_from_mapping({"base": "a100-80gb", "models": ["X8"], "vary": [
        {"split": [1, 2, 4], "memory_gib": [10, 20], "split_links": ["divided", "kept"]},
        {"gpus_per_node": [8, 72]}]})
    brute = [(0, dict(zip(("split", "memory_gib", "split_links"), v)))
             for v in itertools.product([1, 2, 4], [10.0, 20.0], ["divided", "kept"])]
    brute += [(1, {"gpus_per_node": g}) for g in (8, 72)]
    assert design_count(sweep) == len(brute) == 14
    for index, (grid, values) in enumerate(brute):
        design = design_at(sweep, index)
        assert (design.index, design.grid, dict(design.values)) == (index, grid, values)
    assert [c for c in chunks(sweep)][-1][1] == 14


def test_a_split_keeps_the_totals_and_the_thresholds():
    base = load_hardware("a100-80gb")
    sweep = sweep_from_mapping({"base": "a100-80gb", "models": ["X8"],
                                "vary": {"split": [4], "split_links": ["divided", "kept"]}})
    divided, kept = (hardware_of(base, design_at(sweep, i)) for i in (0, 1))
    for hw in (divided, kept):
        assert hw.peak_flop_per_s * 4 == pytest.approx(base.peak_flop_per_s)
        assert hw.memory_bytes * 4 == pytest.approx(base.memory_bytes)
        assert hw.gpu_memory_bandwidth_bytes_per_s * 4 == pytest.approx(base.gpu_memory_bandwidth_bytes_per_s)
        assert hw.gpus_per_node == 4 * base.gpus_per_node  # the NVLink domain holds the same silicon
    assert divided.thresholds() == pytest.approx(base.thresholds())
    assert kept.nvlink_bandwidth_bytes_per_s == base.nvlink_bandwidth_bytes_per_s
    assert kept.threshold("nvlink") == pytest.approx(base.threshold("nvlink") / 4)


@pytest.mark.parametrize("key, field, si", [
    ("peak_tflop_per_s", "peak_flop_per_s", 100e12), ("peak_flop_per_s", "peak_flop_per_s", 100.0),
    ("memory_gib", "memory_bytes", 100 * 2**30), ("memory_gb", "memory_bytes", 100e9),
    ("gpu_memory_bandwidth_gb_per_s", "gpu_memory_bandwidth_bytes_per_s", 100e9),
    ("nvlink_bandwidth_gib_per_s", "nvlink_bandwidth_bytes_per_s", 100 * 2**30),
    ("infiniband_bandwidth_gb_per_s", "infiniband_bandwidth_bytes_per_s", 100e9),
    ("ethernet_bandwidth_gib_per_s", "ethernet_bandwidth_bytes_per_s", 100 * 2**30),
    ("gpus_per_node", "gpus_per_node", 100)])
def test_each_key_sets_its_field_in_si(key, field, si):
    base = load_hardware("a100-80gb")
    if key == "peak_flop_per_s":  # 100 flop/s is below a spec's plausible range: the sweep file refuses it
        with pytest.raises(UserInputError):
            sweep_from_mapping({"base": "a100-80gb", "models": ["X8"], "vary": {key: [100]}})
        return
    design = design_at(sweep_from_mapping({"base": "a100-80gb", "models": ["X8"], "vary": {key: [100]}}), 0)
    hw = hardware_of(base, design)
    assert getattr(hw, field) == pytest.approx(si)
    untouched = [f for f in ("peak_flop_per_s", "memory_bytes", "nvlink_bandwidth_bytes_per_s") if f != field]
    assert all(getattr(hw, f) == getattr(base, f) for f in untouched)


def test_a_row_is_the_searchs_own_answer(sweep_file):
    sweep = load_sweep(sweep_file)
    row = evaluate_design(sweep, design_at(sweep, 0), sweep.models[0])
    direct = fastest(named_model("llama-3-70b"), load_hardware("a100-80gb").replace(gpus_per_node=8), "improved",
                     "3d")
    assert row["gpus_per_node"] == 8
    assert row["ideal_time_days"] == direct.evaluation.time_days
    assert (row["ideal_n_gpu"], row["ideal_n_a"]) == (direct.evaluation.n_gpu, direct.config.n_a)
    for model in ("ideal", "calibrated"):
        assert row[f"{model}_gpu_hours"] == pytest.approx(row[f"{model}_time_days"] * 24 * row[f"{model}_n_gpu"])


def test_an_infeasible_design_says_why():
    sweep = sweep_from_mapping({"base": "a100-80gb", "models": ["X160"], "vary": {"memory_gib": [0.001]}})
    (row,) = evaluate_chunk(sweep, 0, 1)
    assert row["ideal_feasible"] is False and row["ideal_time_days"] is None and row["ideal_reason"]
    assert row["memory_gib"] == pytest.approx(0.001)


def test_pareto_front_against_brute_force():
    import random

    rng = random.Random(37)
    for _ in range(50):
        points = [(rng.choice([1, 2, 3, 4]), rng.choice([1, 2, 3, 4, math.inf])) for _ in range(rng.randint(1, 9))]
        times, costs = zip(*points)
        dominated = {i for i, (t, c) in enumerate(points) for j, (u, d) in enumerate(points)
                     if (u <= t and d <= c and (u, d) != (t, c))}
        front = pareto_front(times, costs)
        expected = {(t, c) for i, (t, c) in enumerate(points) if i not in dominated and math.isfinite(c)}
        assert {points[i] for i in front} == expected


def test_streamed_json_is_the_lists_json():
    from lgacc.commands._output import dumps
    from lgacc.commands.codesign import json_lines

    for rows in ([], [{"a": 1, "b": [1, 2], "c": None}], [{"a": 1.5, "d": {"x": "é"}}, {"a": math.nan}]):
        assert "".join(json_lines(rows)) == dumps(rows)


# --- the chunk store ------------------------------------------------------------------------------------


def test_the_store_is_keyed_by_content_and_recomputes_a_bad_entry(sweep_file, tmp_path):
    sweep = load_sweep(sweep_file)
    store = ChunkStore(sweep, 1, root=tmp_path / "cache")
    rows = store.write(0, 1, evaluate_chunk(sweep, 0, 1))
    assert store.read(0, 1) == rows
    path = next(store.folder.glob("chunk-*.json"))
    path.write_text(path.read_text().replace('"Llama', '"Llamb'))  # a byte changed
    assert store.read(0, 1) is None
    other = sweep_from_mapping({"base": "a100-80gb", "models": ["llama-3-70b"], "chunk_size": 1,
                                "vary": [{"gpus_per_node": [8, 16]}, {"split": [1, 3]}]}, "<other>")
    assert ChunkStore(other, 1, root=tmp_path / "cache").folder != store.folder


# --- runs -----------------------------------------------------------------------------------------------


def test_two_local_workers_give_the_serial_json(sweep_file, tmp_path):
    serial = _lgacc("codesign", "--sweep", str(sweep_file), "--format", "json", "--workers", "1")
    assert serial.returncode == 0, serial.stderr
    sweep = load_sweep(sweep_file)
    shutil.rmtree(ChunkStore(sweep, chunk_size(sweep)).folder)  # computed again, on Dask
    out = tmp_path / "two.json"
    dask = _lgacc("codesign", "--sweep", str(sweep_file), "--format", "json", "--workers", "2", "--out", str(out))
    assert dask.returncode == 0, dask.stderr
    assert out.read_text() == serial.stdout
    rows = json.loads(serial.stdout)
    assert len(rows) == 4 and all(r["ideal_feasible"] for r in rows)
    parquet = tmp_path / "rows.parquet"
    assert _lgacc("codesign", "--sweep", str(sweep_file), "--format", "parquet", "--out", str(parquet)).returncode == 0
    import pandas as pd

    frame = pd.read_parquet(parquet)
    assert frame["ideal_time_days"].tolist() == [r["ideal_time_days"] for r in rows]


def test_a_scheduler_on_loopback_gives_the_serial_json(sweep_file):
    from distributed import LocalCluster

    serial = [r for r in sweep_rows(load_sweep(sweep_file))]  # computes serially, in this process
    sweep = load_sweep(sweep_file)
    shutil.rmtree(ChunkStore(sweep, chunk_size(sweep)).folder)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tcp://127.0.0.1:")
        done = _lgacc("codesign", "--sweep", str(sweep_file), "--format", "json", "--scheduler", address)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == serial


def test_an_unreachable_scheduler_is_one_line(sweep_file):
    done = _lgacc("codesign", "--sweep", str(sweep_file), "--scheduler", "tcp://127.0.0.1:9")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr


INTERRUPTED = """\
name: {name}
base: a100-80gb
models: [X160, llama-3-70b]
chunk_size: 1
vary:
  - split: [1, 2, 4, 8]
    split_links: [divided, kept]
  - gpus_per_node: [8, 16, 72, 576]
    memory_gib: [5, 20, 80]
    peak_tflop_per_s: [156, 312, 624, 1248, 2496]
"""


def _interrupt_after_the_first_chunk(path, folder):
    """Start the sweep, send SIGINT once its first chunk is kept; ``(returncode, stderr)``."""
    process = subprocess.Popen([sys.executable, "-m", "lgacc", "codesign", "--sweep", str(path), "--workers", "1",
                                "--format", "json"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    deadline = time.monotonic() + 90
    while not list(folder.glob("chunk-*.json")) and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.01)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    return process.returncode, err


def test_an_interrupted_sweep_resumes_without_computing_its_finished_chunks(tmp_path):
    path = _sweep_file(tmp_path, INTERRUPTED)
    sweep = load_sweep(path)
    folder = ChunkStore(sweep, chunk_size(sweep)).folder
    total = len(list(chunks(sweep)))
    try:
        for _ in range(3):  # a fast machine may finish the sweep before the signal lands: start it afresh
            returncode, err = _interrupt_after_the_first_chunk(path, folder)
            if returncode != 0:
                break
            shutil.rmtree(folder, ignore_errors=True)
        assert returncode == 130, err
        assert err.strip().splitlines() == ["lgacc codesign: interrupted"]
        finished = {p.name: p.stat().st_mtime_ns for p in folder.glob("chunk-*.json")}
        assert 1 <= len(finished) < total
        done = _lgacc("codesign", "--sweep", str(path), "--workers", "1", "--format", "json")
        assert done.returncode == 0, done.stderr
        assert {p.name: p.stat().st_mtime_ns for p in folder.glob("chunk-*.json") if p.name in finished} == finished
        assert len(list(folder.glob("chunk-*.json"))) == total
        rows = json.loads(done.stdout)
        assert [r["design"] for r in rows] == [d for d in range(total) for _ in sweep.models]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_ctrl_c_on_a_local_cluster_is_one_line(sweep_file):
    """A terminal's Ctrl-C reaches the whole process group, the Dask workers included (here while the cluster
    starts, the likeliest moment on a busy machine): exit 130 and one line, no worker's traceback."""
    process = subprocess.Popen([sys.executable, "-m", "lgacc", "codesign", "--sweep", str(sweep_file), "--workers",
                                "2", "--format", "json"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    time.sleep(3)
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=60)
    if process.returncode == 0:  # finished before the interrupt: nothing to check
        pytest.skip("the sweep finished before Ctrl-C")
    assert process.returncode == 130, err
    assert err.strip().splitlines() == ["lgacc codesign: interrupted"]
