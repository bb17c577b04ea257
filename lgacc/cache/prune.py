"""Keep the cache directory bounded: what has not been used for a month goes, then the oldest until it fits.

Every entry's key covers the package's sources (:func:`lgacc.cache.results.inputs_digest`), so each
change of the package orphans the entries of the one before: without pruning, a working copy that
changes often fills the disk.  :func:`prune` removes, under the cache directory, only what the package
writes there (the folders ``results/``, ``notebooks/`` and ``codesign/``, and at the top level the files
named ``<kind>-<hex key>.<suffix>``; anything else a user keeps in that directory is never touched):

* the **code files of older layouts** (``*.py`` at its top level: formats 1 and 2 kept generated numpy
  code there; nothing reads them now, and the cache holds data only);
* every file not **used** for :data:`MAX_AGE_S` (an entry's modification time is renewed when it is served
  and the mark is a day old, :func:`touch`), lock files and leftover temporary files included;
* then the least recently used files until the whole is at most :data:`MAX_BYTES`.

Nothing is followed: a symlink, a FIFO or a device under the directory is removed as the name it is
(``unlink``), never through it.  :func:`maybe_prune` runs it at most once a day (a stamp file), after a
write; every error is ignored (a read-only or vanished cache prunes nothing).
"""

from __future__ import annotations

import os
import re
import stat
import time
from pathlib import Path

__all__ = ["prune", "maybe_prune", "touch", "MAX_AGE_S", "MAX_BYTES"]

#: An entry not served or written for this long is removed (seconds: 30 days).
MAX_AGE_S = 30 * 86400
#: The cache directory's largest total size after pruning (bytes: 2 GiB).
MAX_BYTES = 2 * 1024 ** 3
_INTERVAL_S = 86400
_STAMP = ".pruned"
#: The folders the package fills (every file in them is its own) and the shape of its top-level entries.
_OWN_FOLDERS = ("results", "notebooks", "codesign")
_OWN_TOP_LEVEL = re.compile(r"[a-z][a-z_-]*-[0-9a-f]{16,64}\.(?:py|json|lock|kept)(?:[^/]*\.tmp)?")


def touch(path: Path, now: float | None = None) -> None:
    """Mark an entry as used now (its modification time), where the cache can be written: only when its mark is a
    day old or more, so that reading stays a read (and a file's time still tells when it was written that day)."""
    now = time.time() if now is None else now
    try:
        if now - os.lstat(path).st_mtime >= _INTERVAL_S:
            os.utime(path, (now, now), follow_symlinks=False)
    except (OSError, NotImplementedError):
        pass


def _files(root: Path) -> list[tuple[Path, os.stat_result]]:
    """Every non-directory the package owns under ``root`` with its ``lstat``, without following a link."""
    found = []

    def add(path: Path) -> None:
        try:
            found.append((path, os.lstat(path)))
        except OSError:
            pass

    for entry in os.scandir(root):
        if _OWN_TOP_LEVEL.fullmatch(entry.name) and not entry.is_dir(follow_symlinks=False):
            add(Path(entry.path))
    for own in _OWN_FOLDERS:
        top = root / own
        if top.is_symlink():
            add(top)
            continue
        for folder, directories, names in os.walk(top, followlinks=False):
            for name in names + [d for d in directories if os.path.islink(os.path.join(folder, d))]:
                add(Path(folder, name))
    return found


def _remove(path: Path) -> bool:
    try:
        path.unlink()
        return True
    except OSError:
        return False


def prune(root: Path, now: float | None = None, max_age_s: float = MAX_AGE_S,
          max_bytes: int = MAX_BYTES) -> list[Path]:
    """Remove old-layout code, files unused for ``max_age_s`` and then the least recently used until the
    rest is at most ``max_bytes``; returns the paths removed.  Empty sub-folders go too."""
    root = Path(root)
    if not root.is_dir() or root.is_symlink():
        return []
    now = time.time() if now is None else now
    removed, kept = [], []
    for path, info in _files(root):
        if path.name == _STAMP and path.parent == root:
            continue
        legacy_code = path.parent == root and path.suffix == ".py"
        if legacy_code or now - info.st_mtime > max_age_s:
            if _remove(path):
                removed.append(path)
        else:
            kept.append((info.st_mtime, info.st_size if stat.S_ISREG(info.st_mode) else 0, path))
    total = sum(size for _, size, _ in kept)
    for _, size, path in sorted(kept, key=lambda entry: (entry[0], str(entry[2]))):
        if total <= max_bytes:
            break
        if _remove(path):
            removed.append(path)
            total -= size
    for own in _OWN_FOLDERS:
        for folder, directories, _ in os.walk(root / own, topdown=False, followlinks=False):
            for name in directories:
                try:
                    os.rmdir(os.path.join(folder, name))  # only when empty
                except OSError:
                    pass
    return removed


def maybe_prune(root: Path, now: float | None = None) -> list[Path]:
    """:func:`prune` when the last one is a day old or more (or never ran); the stamp is renewed first, so
    concurrent processes rarely prune together (and harmlessly when they do)."""
    root = Path(root)
    stamp = root / _STAMP
    now = time.time() if now is None else now
    try:
        last = os.lstat(stamp).st_mtime
    except OSError:
        last = None
    if last is not None and now - last < _INTERVAL_S:
        return []
    try:
        stamp.unlink(missing_ok=True)  # a link or FIFO in the stamp's place is replaced, never written through
        stamp.touch()
        os.utime(stamp, (now, now))
    except OSError:
        return []
    return prune(root, now)
