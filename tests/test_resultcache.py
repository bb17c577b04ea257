"""The on-disk result cache: computed once per inputs and sources, never stale, never in the way."""

from __future__ import annotations

import multiprocessing
import os

import pytest

from lgacc.cache import results as resultcache


@pytest.fixture
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("LGACC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("LGACC_RESULT_CACHE", raising=False)
    return tmp_path / "cache" / "results"


class Counter:
    def __init__(self):
        self.calls = 0

    def __call__(self, value):
        def compute():
            self.calls += 1
            return value
        return compute


def test_second_call_reads_the_first_result(cache):
    count = Counter()
    assert resultcache.cached("demo", ("X160", 1), count({"t": 9.5})) == {"t": 9.5}
    assert resultcache.cached("demo", ("X160", 1), count({"t": -1.0})) == {"t": 9.5}  # not computed again
    assert count.calls == 1
    assert len(list(cache.glob("demo-*.json"))) == 1


def test_other_inputs_or_names_are_computed(cache):
    count = Counter()
    resultcache.cached("demo", ("X160", 1), count(1))
    assert resultcache.cached("demo", ("X160", 2), count(2)) == 2
    assert resultcache.cached("other", ("X160", 1), count(3)) == 3
    assert count.calls == 3


def test_a_changed_source_changes_the_key(cache, monkeypatch):
    count = Counter()
    resultcache.cached("demo", "inputs", count(1))
    monkeypatch.setattr(resultcache, "inputs_digest", lambda: "a formula was edited")
    assert resultcache.cached("demo", "inputs", count(2)) == 2
    assert count.calls == 2


def test_the_digest_follows_every_source_and_data_file(monkeypatch, tmp_path):
    package, data = tmp_path / "lgacc", tmp_path / "data"
    (data / "paper").mkdir(parents=True)
    package.mkdir()
    (package / "formula.py").write_text("x = 1\n")
    (data / "paper" / "claims.yaml").write_text("paper: 5e13\n")
    monkeypatch.setattr(resultcache, "PACKAGE", package)
    monkeypatch.setattr(resultcache, "DATA", data)

    def digest():
        resultcache.inputs_digest.cache_clear()
        return resultcache.inputs_digest()

    seen = {digest()}
    (data / "paper" / "claims.yaml").write_text("paper: 4e13\n")  # a printed value corrected
    seen.add(digest())
    (package / "formula.py").write_text("x = 2\n")  # a formula edited
    seen.add(digest())
    (package / "formula.py").rename(package / "renamed.py")  # same bytes, another module
    seen.add(digest())
    resultcache.inputs_digest.cache_clear()
    assert len(seen) == 4


def test_switched_off_always_computes(cache, monkeypatch):
    monkeypatch.setenv("LGACC_RESULT_CACHE", "0")
    count = Counter()
    resultcache.cached("demo", "inputs", count(1))
    assert resultcache.cached("demo", "inputs", count(2)) == 2
    assert count.calls == 2
    assert not cache.exists()


def test_unwritable_directory_computes_and_returns(monkeypatch, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("LGACC_CACHE_DIR", str(blocker / "sub"))
    count = Counter()
    assert resultcache.cached("demo", "inputs", count(7)) == 7
    assert resultcache.cached("demo", "inputs", count(8)) == 8
    assert count.calls == 2


def test_a_truncated_file_is_recomputed(cache):
    count = Counter()
    resultcache.cached("demo", "inputs", count(1))
    (path,) = cache.glob("demo-*.json")
    path.write_bytes(path.read_bytes()[:3])
    assert resultcache.cached("demo", "inputs", count(2)) == 2
    assert resultcache.cached("demo", "inputs", count(3)) == 2


def _slow_compute(marker: str) -> int:
    with open(marker, "a") as handle:
        handle.write("computed\n")
    import time

    time.sleep(0.5)
    return 42


def _ask(directory: str, marker: str, out) -> None:
    os.environ["LGACC_CACHE_DIR"] = directory
    out.put(resultcache.cached("shared", "inputs", lambda: _slow_compute(marker)))


def test_concurrent_processes_compute_once(tmp_path):
    marker = tmp_path / "marker"
    context = multiprocessing.get_context("fork")
    out = context.Queue()
    workers = [context.Process(target=_ask, args=(str(tmp_path / "cache"), str(marker), out)) for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    assert sorted(out.get(timeout=5) for _ in workers) == [42, 42, 42]
    assert marker.read_text().count("computed") == 1  # the others waited on the lock and read the result
