"""The cache directory stays bounded (lgacc.cache.prune): old-layout code and month-old entries go, then the
least recently used beyond the size bound; nothing is followed through a link; a served entry counts as used."""

from __future__ import annotations

import os
import time

from lgacc.cache.prune import maybe_prune, prune
from lgacc.cache.sealed import read_sealed, write_sealed

DAY = 86400.0


def _file(path, size=10, age_days=0.0, now=None):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    t = (now or time.time()) - age_days * DAY
    os.utime(path, (t, t))
    return path


def test_month_old_entries_and_old_layout_code_go_and_recent_ones_stay(tmp_path):
    now = time.time()
    fresh = _file(tmp_path / "results" / "a-1.json", age_days=29, now=now)
    old = _file(tmp_path / "results" / "a-2.json", age_days=31, now=now)
    lock = _file(tmp_path / "results" / "a-2.lock", age_days=40, now=now)
    code = _file(tmp_path / "models-4ae47d292b7f5d2339f467bc.py", age_days=0, now=now)  # format 2 kept code here
    nested_py = _file(tmp_path / "notebooks" / "x.py", age_days=0, now=now)  # only the top level's .py are code
    removed = prune(tmp_path, now=now)
    assert sorted(removed) == sorted([old, lock, code])
    assert fresh.exists() and nested_py.exists()


def test_what_the_package_did_not_write_is_never_touched(tmp_path):
    """LGACC_CACHE_DIR may name a folder that holds other things: only the package's own entries are pruned."""
    now = time.time()
    mine = [_file(tmp_path / "notes.py", age_days=400, now=now), _file(tmp_path / "data.json", age_days=400, now=now),
            _file(tmp_path / "project" / "results" / "r.json", age_days=400, now=now),
            _file(tmp_path / "models-notahexkey.py", age_days=400, now=now)]
    ours = _file(tmp_path / "results" / "claims-0123456789abcdef0123456789abcdef.json", age_days=400, now=now)
    assert prune(tmp_path, now=now, max_bytes=0) == [ours]
    assert all(path.exists() for path in mine)


def test_beyond_the_size_bound_the_least_recently_used_go_first(tmp_path):
    now = time.time()
    files = [_file(tmp_path / "results" / f"e-{i}.json", size=100, age_days=10 - i, now=now) for i in range(10)]
    removed = prune(tmp_path, now=now, max_bytes=350)
    assert sorted(removed) == sorted(files[:7])  # 10 x 100 bytes down to 3 x 100 <= 350, oldest first
    assert all(f.exists() for f in files[7:])


def test_links_are_removed_as_names_never_followed(tmp_path):
    now = time.time()
    outside = _file(tmp_path / "outside" / "precious.txt", age_days=100, now=now)
    cache = tmp_path / "cache"
    cache.mkdir()
    link = cache / "claims-0123456789abcdef.json"
    link.symlink_to(outside)
    os.utime(link, (now - 100 * DAY, now - 100 * DAY), follow_symlinks=False)
    folder_link = cache / "results"
    folder_link.symlink_to(outside.parent, target_is_directory=True)
    os.utime(folder_link, (now - 100 * DAY, now - 100 * DAY), follow_symlinks=False)
    prune(cache, now=now, max_bytes=0)
    assert outside.exists() and outside.read_bytes() == b"x" * 10
    assert not link.is_symlink() and not folder_link.is_symlink()


def test_empty_folders_go_and_a_missing_cache_prunes_nothing(tmp_path):
    _file(tmp_path / "codesign" / "k" / "chunk-0-1.json", age_days=90)
    prune(tmp_path)
    assert not (tmp_path / "codesign" / "k").exists()
    assert prune(tmp_path / "nowhere") == []


def test_a_served_entry_is_marked_used_and_survives_the_month(tmp_path, monkeypatch):
    monkeypatch.setenv("LGACC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("LGACC_SECRET_FILE", str(tmp_path.parent / "secret-prune-test"))
    entry = tmp_path / "results" / "r-k.json"
    assert write_sealed(entry, "r", "k", "42")
    month_ago = time.time() - 40 * DAY
    os.utime(entry, (month_ago, month_ago))
    assert read_sealed(entry, "r", "k") == "42"  # served: used now
    assert prune(tmp_path) == [] and entry.exists()


def test_pruning_runs_at_most_once_a_day(tmp_path):
    now = time.time()
    old = _file(tmp_path / "results" / "a.json", age_days=45, now=now)
    assert maybe_prune(tmp_path, now=now) == [old]
    again = _file(tmp_path / "results" / "b.json", age_days=45, now=now)
    assert maybe_prune(tmp_path, now=now + 3600) == []  # the stamp is an hour old
    assert again.exists()
    assert maybe_prune(tmp_path, now=now + 1.5 * DAY) == [again]


def test_a_write_into_the_cache_prunes_it_once_a_day(tmp_path, monkeypatch):
    monkeypatch.setenv("LGACC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("LGACC_SECRET_FILE", str(tmp_path.parent / "secret-prune-test2"))
    legacy = _file(tmp_path / "evaluate-paper-96d7bcbade95dfe3c960d0d9.py")
    assert write_sealed(tmp_path / "results" / "n-k.json", "n", "k", "1")
    assert not legacy.exists() and (tmp_path / "results" / "n-k.json").exists()


def test_a_read_renews_the_mark_only_once_a_day(tmp_path):
    """Reading an entry written an hour ago leaves its time alone (the codesign resume test tells a recomputed chunk
    by its time); one written two days ago is marked used."""
    from lgacc.cache.prune import touch

    now = time.time()
    recent, old = _file(tmp_path / "a.json", age_days=1 / 24, now=now), _file(tmp_path / "b.json", age_days=2, now=now)
    before = recent.stat().st_mtime_ns
    touch(recent, now)
    touch(old, now)
    assert recent.stat().st_mtime_ns == before
    assert abs(old.stat().st_mtime - now) < 1
