"""The result cache (issue #34): keyed by the content of everything a result depends on, verified with a
per-user secret, read only from regular files, and holding no code.  Each case of the issue, replayed."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from lgacc.cache import results, sealed
from lgacc.cli import main
from lgacc.paths import DATA

VALIDATION = DATA / "validation"


@pytest.fixture
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("LGACC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("LGACC_SECRET_FILE", str(tmp_path / "config" / "secret"))
    monkeypatch.delenv("LGACC_RESULT_CACHE", raising=False)
    return tmp_path / "cache"


def _runs_folder(tmp_path: Path, hardware: Path | None = None) -> Path:
    """Two publications' run files with the models they name; the hardware file at ``hardware`` if given."""
    folder = tmp_path / "runs1"
    folder.mkdir()
    shutil.copytree(VALIDATION / "models", folder / "models")
    shutil.copytree(VALIDATION / "hardware", folder / "hardware")
    for name in ("smith2022.yaml", "korthikanti2022.yaml"):
        text = (VALIDATION / name).read_text()
        if hardware is not None:
            text = text.replace("hardware: hardware/a100-sxm-80gb.yaml", f"hardware: {hardware}")
        (folder / name).write_text(text)
    return folder


def _validate(capsys, monkeypatch, *argv: str, cached: bool = True) -> tuple[int, dict | str]:
    if not cached:
        monkeypatch.setenv("LGACC_RESULT_CACHE", "0")
    try:
        rc = main(["validate", *argv, "--format", "json"])
    finally:
        monkeypatch.delenv("LGACC_RESULT_CACHE", raising=False)
    out = capsys.readouterr()
    return rc, (json.loads(out.out) if rc == 0 else out.err)


def _numbers(answer: dict) -> tuple:
    calibrated = answer["calibrated"]
    return (calibrated["within_publication_error"], calibrated["fitted_mean_error"],
            tuple(run["predicted_physical_s"] for run in answer["runs"]),
            tuple(run["expected_step_s"] for run in answer["runs"]))


def test_a_changed_run_file_changes_every_cached_answer_as_an_uncached_run(cache, tmp_path, capsys, monkeypatch):
    """Issue case 1: validation-within was keyed by the run ids only."""
    folder = _runs_folder(tmp_path)
    rc, before = _validate(capsys, monkeypatch, "--runs", str(folder))
    assert rc == 0
    path = folder / "smith2022.yaml"
    path.write_text(path.read_text().replace("iteration_time_s: 60.1", "iteration_time_s: 90.1"))
    rc, cached = _validate(capsys, monkeypatch, "--runs", str(folder))
    rc_fresh, fresh = _validate(capsys, monkeypatch, "--runs", str(folder), cached=False)
    assert rc == rc_fresh == 0
    assert _numbers(cached) == _numbers(fresh)
    assert cached["calibrated"]["within_publication_error"] != before["calibrated"]["within_publication_error"]


def test_a_hardware_file_outside_the_folder_keys_the_answer_by_its_content(cache, tmp_path, capsys, monkeypatch):
    """Issue case 1: a hardware file a run names outside --runs, its bandwidths halved, then broken."""
    outside = tmp_path / "elsewhere" / "a100.yaml"
    outside.parent.mkdir()
    original = (VALIDATION / "hardware" / "a100-sxm-80gb.yaml").read_text()
    outside.write_text(original)
    folder = _runs_folder(tmp_path, hardware=outside)
    rc, before = _validate(capsys, monkeypatch, "--runs", str(folder))
    assert rc == 0
    outside.write_text(original.replace("nvlink_bandwidth_gb_per_s: 600", "nvlink_bandwidth_gb_per_s: 300")
                       .replace("infiniband_bandwidth_gb_per_s: 50", "infiniband_bandwidth_gb_per_s: 25"))
    rc, cached = _validate(capsys, monkeypatch, "--runs", str(folder))
    _, fresh = _validate(capsys, monkeypatch, "--runs", str(folder), cached=False)
    assert rc == 0 and _numbers(cached) == _numbers(fresh) and _numbers(cached) != _numbers(before)
    outside.write_text(original.replace("nvlink_bandwidth_gb_per_s: 600", "nvlink_bandwidth_gb_per_s: -1"))
    rc, cached = _validate(capsys, monkeypatch, "--runs", str(folder))
    rc_fresh, fresh = _validate(capsys, monkeypatch, "--runs", str(folder), cached=False)
    assert rc == rc_fresh == 2 and cached == fresh


def test_validate_hardware_file_is_keyed_by_its_content(cache, tmp_path, capsys, monkeypatch):
    hardware = tmp_path / "gpu.yaml"
    original = (VALIDATION / "hardware" / "a100-sxm-80gb.yaml").read_text()
    hardware.write_text(original)
    folder = _runs_folder(tmp_path)
    before = _validate(capsys, monkeypatch, "--runs", str(folder), "--hardware", str(hardware))
    hardware.write_text(original.replace("nvlink_bandwidth_gb_per_s: 600", "nvlink_bandwidth_gb_per_s: 150"))
    cached = _validate(capsys, monkeypatch, "--runs", str(folder), "--hardware", str(hardware))
    fresh = _validate(capsys, monkeypatch, "--runs", str(folder), "--hardware", str(hardware), cached=False)
    assert cached == fresh != before  # the answer, or the one line of exit 2, of the file's new content


def test_the_key_holds_the_inputs_values_the_sources_and_the_version(cache, monkeypatch):
    calls = []

    def compute():
        calls.append(1)
        return len(calls)

    assert results.cached("demo", ("a", 1.0), compute) == 1
    assert results.cached("demo", ("a", 1.0), compute) == 1
    assert results.cached("demo", ("a", 1.0 + 2**-52), compute) == 2  # every bit of a value counts
    monkeypatch.setattr(results, "inputs_digest", lambda: "another package version or source")
    assert results.cached("demo", ("a", 1.0), compute) == 3
    with pytest.raises(TypeError, match="not its path"):
        results.cached("demo", Path("runs1"), compute)


# --- verified with a per-user secret -------------------------------------------------------------------


def test_the_secret_is_created_0600_outside_the_cache(cache, tmp_path):
    results.cached("demo", "inputs", lambda: 1)
    secret = tmp_path / "config" / "secret"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert not secret.is_relative_to(cache)


def test_an_entry_sealed_under_another_secret_or_an_unkeyed_digest_is_recomputed_and_rewritten(cache, tmp_path, monkeypatch):
    """Issue case 2: an edited entry with a recomputed header is never served."""
    import hashlib

    results.cached("claim", "inputs", lambda: {"days": 101.73})
    (entry,) = (cache / "results").glob("claim-*.json")
    header, _, body = entry.read_text().partition("\n")
    forged = body.replace("101.73", "118.67")
    entry.write_text(header.split(" hmac=")[0] + f" hmac={hashlib.sha256(forged.encode()).hexdigest()}\n{forged}")
    assert results.cached("claim", "inputs", lambda: {"days": 101.73}) == {"days": 101.73}
    assert "118.67" not in entry.read_text()
    monkeypatch.setenv("LGACC_SECRET_FILE", str(tmp_path / "another-user" / "secret"))
    results.cached("claim", "inputs", lambda: {"days": 118.67})  # another user's cache, copied here
    monkeypatch.setenv("LGACC_SECRET_FILE", str(tmp_path / "config" / "secret"))
    assert results.cached("claim", "inputs", lambda: {"days": 101.73}) == {"days": 101.73}


# --- only regular files --------------------------------------------------------------------------------


def _entry_path(cache: Path, name: str, inputs) -> Path:
    return cache / "results" / f"{name}-{results._key(name, inputs)}.json"


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "oversized", "directory-lock"])
def test_an_entry_that_is_not_a_small_regular_file_is_skipped_and_replaced(cache, kind, monkeypatch):
    """Issue case 3: a FIFO hung the command, a symlink to /dev/zero grew it to 14.9 GB."""
    path = _entry_path(cache, "demo", "inputs")
    path.parent.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(path)
        os.mkfifo(path.with_suffix(".lock"))
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "oversized":
        monkeypatch.setattr(sealed, "MAX_ENTRY_BYTES", 1000)
        with open(path, "wb") as handle:
            handle.truncate(10**6)
    else:
        path.with_suffix(".lock").mkdir()
    assert results.cached("demo", "inputs", lambda: [1.5]) == [1.5]
    if kind != "directory-lock":
        assert stat.S_ISREG(os.lstat(path).st_mode) and path.stat().st_size < 1000  # replaced
    assert results.cached("demo", "inputs", lambda: [2.5]) == [1.5]


def test_the_command_line_reads_no_cache_entry_while_building_its_parser(cache, tmp_path):
    """A FIFO in place of every kind of entry: `lgacc --help` and `lgacc evaluate` answer, never hang."""
    cache.mkdir()
    (cache / "results").mkdir()
    for name in ("models-0.py", "evaluate-paper-0.py", "calibrated-programs-0.json", "results/claim-0.json"):
        os.mkfifo(cache / name)
    env = {**os.environ, "LGACC_CACHE_DIR": str(cache), "LGACC_SECRET_FILE": str(tmp_path / "config" / "secret")}
    for argv in (["--help"], ["evaluate", "--model", "X40", "--method", "improved", "--n-b", "4"]):
        done = subprocess.run([sys.executable, "-m", "lgacc", *argv], capture_output=True, text=True, env=env,
                              timeout=120)
        assert done.returncode == 0, done.stderr[-500:]
    assert not [p for p in cache.rglob("*") if p.suffix == ".py" and p.is_file()]


def test_building_the_parser_reads_nothing_from_the_cache():
    """In a fresh process, so that every module the parser imports is imported (and runs) under the watch."""
    code = ("import sys\n"
            "import lgacc.cache.sealed as sealed\n"
            "def refuse(*args, **kwargs):\n"
            "    sys.exit('cache read while building the parser: %r' % (args,))\n"
            "sealed.read_regular = refuse\n"
            "from lgacc.cli import build_parser\n"
            "for command in (None, 'evaluate', 'optimize', 'validate', 'simulate', 'reproduce'):\n"
            "    build_parser(command)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-500:]


def test_a_secret_others_can_read_is_not_used(cache, tmp_path):
    secret = tmp_path / "config" / "secret"
    secret.parent.mkdir(parents=True)
    secret.write_text("0" * 64 + "\n")
    secret.chmod(0o644)
    sealed._secret_at.cache_clear()
    try:
        assert sealed.secret() != b"0" * 64  # a secret for this process only
        secret.chmod(0o600)
        sealed._secret_at.cache_clear()
        assert sealed.secret() == b"0" * 64
    finally:
        sealed._secret_at.cache_clear()


def test_a_spec_file_keys_a_search_result_by_its_content(cache, tmp_path, monkeypatch):
    """Another cached kind (today's per-GPU searches): the spec file is edited in place, same path."""
    import pandas as pd

    from lgacc.studies.today import fastest_by_method

    spec = tmp_path / "gpu.yaml"
    original = (DATA / "hardware" / "a100-80gb.yaml").read_text()
    spec.write_text(original)
    before = fastest_by_method("X32", str(spec))
    lines = [line for line in original.splitlines() if line.startswith("infiniband_bandwidth_gib_per_s:")]
    assert len(lines) == 1
    value = float(lines[0].split(":")[1].split("#")[0])
    spec.write_text(original.replace(lines[0], f"infiniband_bandwidth_gib_per_s: {value / 8:g}"))
    cached = fastest_by_method("X32", str(spec))
    monkeypatch.setenv("LGACC_RESULT_CACHE", "0")
    fresh = fastest_by_method("X32", str(spec))
    pd.testing.assert_frame_equal(cached, fresh)
    assert not cached.equals(before)


# `lgacc reproduce`'s printed answer (issue 15's half-second): the text a table, the claims or the reading matrix
# printed, kept in the result cache and keyed like every other entry.

def _reproduce(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(["reproduce", *argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize("argv", [("table:x_model",), ("table:x_model", "--format", "csv"),
                                  ("table:hardware_bandwidth", "--compare", "--format", "json"),
                                  ("table:parallel_methods_memory", "--compare")])
def test_a_repeated_reproduce_prints_what_an_uncached_one_prints(cache, capsys, monkeypatch, argv):
    first = _reproduce(capsys, *argv)
    entries = list((cache / "results").glob("reproduce-output-*.json"))
    assert len(entries) == 1
    again = _reproduce(capsys, *argv)
    monkeypatch.setenv("LGACC_RESULT_CACHE", "0")
    fresh = _reproduce(capsys, *argv)
    assert first == again == fresh
    assert first[0] == 0 and first[1].strip()


def test_everything_a_reproduction_prints_is_kept_in_order(cache, capsys, monkeypatch):
    """The reading matrix prints its legend before its table, a claims table a note on the columns left out: the
    entry holds every line the command printed (the reading matrix itself is too slow to compute here)."""
    from lgacc.commands import reproduce

    def prints_two_lines(args, hardware=None):
        print("0: paper; 1: other reading")
        print("claim verdict 0 1")
        return 0

    monkeypatch.setattr(reproduce, "_reproduce", prints_two_lines)
    first = _reproduce(capsys, "readings")
    again = _reproduce(capsys, "readings")
    assert first == again == (0, "0: paper; 1: other reading\nclaim verdict 0 1\n", "")
    assert len(list((cache / "results").glob("reproduce-output-*.json"))) == 1


def test_a_hardware_file_keys_reproduce_by_its_content(cache, tmp_path, capsys, monkeypatch):
    """The spec edited in place (same path): the cached answer changes as an uncached one does."""
    spec = tmp_path / "gpu.yaml"
    original = (DATA / "hardware" / "a100-80gb.yaml").read_text()
    spec.write_text(original)
    before = _reproduce(capsys, "table:hardware_bandwidth", "--hardware", str(spec), "--format", "json")
    lines = [line for line in original.splitlines() if line.startswith("infiniband_bandwidth_gib_per_s:")]
    assert len(lines) == 1
    value = float(lines[0].split(":")[1].split("#")[0])
    spec.write_text(original.replace(lines[0], f"infiniband_bandwidth_gib_per_s: {value / 8:g}"))
    after = _reproduce(capsys, "table:hardware_bandwidth", "--hardware", str(spec), "--format", "json")
    monkeypatch.setenv("LGACC_RESULT_CACHE", "0")
    fresh = _reproduce(capsys, "table:hardware_bandwidth", "--hardware", str(spec), "--format", "json")
    assert after == fresh and after[1] != before[1]
    assert len(list((cache / "results").glob("reproduce-output-*.json"))) == 2


def test_a_tampered_reproduce_entry_is_recomputed_not_served(cache, capsys):
    fresh = _reproduce(capsys, "table:x_model", "--format", "csv")
    (entry,) = (cache / "results").glob("reproduce-output-*.json")
    text = entry.read_text()
    assert "T-NLG" in text
    entry.write_text(text.replace("T-NLG", "T-XXX"))  # the digest no longer checks out
    assert _reproduce(capsys, "table:x_model", "--format", "csv") == fresh
    assert "T-NLG" in entry.read_text()  # rewritten


def test_errors_and_figures_are_not_kept(cache, tmp_path, capsys):
    """An unknown label or a misused option is answered in one line every time; a figure is drawn every time."""
    for argv in (("table:nope",), ("fig:scaling_limited",), ("table:x_model", "--out", str(tmp_path / "a.svg"))):
        for _ in range(2):
            rc, out, err = _reproduce(capsys, *argv)
            assert (rc, out) == (2, "") and len(err.strip().splitlines()) == 1
    rc, out, _ = _reproduce(capsys, "fig:scaling_limited", "--out", str(tmp_path / "a.svg"))
    assert rc == 0 and (tmp_path / "a.svg").stat().st_size > 0
    assert not list(cache.rglob("reproduce-output-*.json"))


def test_a_repeated_reproduce_imports_neither_pandas_nor_the_reproduction(cache, tmp_path):
    """In fresh processes: the second answers from the cache, and what it imports shows it."""
    env = {**os.environ, "LGACC_CACHE_DIR": str(cache), "LGACC_SECRET_FILE": str(tmp_path / "config" / "secret")}
    code = ("import sys\n"
            "from lgacc.cli import main\n"
            "rc = main(['reproduce', 'table:parallel_methods_comparison'])\n"
            "print(rc, 'pandas' in sys.modules, 'lgacc.paper.reproductions' in sys.modules, file=sys.stderr)\n")
    answers = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
               for _ in range(2)]
    assert [a.stderr.split()[-3:] for a in answers] == [["0", "True", "True"], ["0", "False", "False"]]
    assert answers[0].stdout == answers[1].stdout
