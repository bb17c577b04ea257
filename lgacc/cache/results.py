"""Results that take tens of seconds, computed once per package version and inputs, kept on disk.

The claims of the paper (:mod:`lgacc.paper.claims`) run about two hundred searches
under the paper's rules and under each assumption switch.  Two pages of the book
(the scorecard and the claims) and the test suite need the same results for the
same hardware, in different processes; :func:`cached` computes them in the first
and reads them in the others.

* **Key**: a SHA-256 of the result's name, the ``repr`` of its inputs (frozen
  dataclasses: every value counts) and every file the result can depend on
  (the package's Python sources and ``data/``).  Change a formula, a rule, a
  printed value or a spec, and the key changes: nothing stale is ever read.
* **Location**: the generated-code cache directory (:func:`lgacc.cache.codegen.cache_dir`,
  ``$LGACC_CACHE_DIR`` or ``~/.cache/lgacc``), subdirectory ``results``.  If it
  cannot be written, the result is computed and returned, not kept.
* **Concurrency**: a lock file per key; a second process asking for a result being
  computed waits for it instead of computing it again.  Writes are atomic.
* ``LGACC_RESULT_CACHE=0`` turns the cache off (always compute).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Callable, TypeVar

from lgacc.paths import DATA, PACKAGE

from .codegen import cache_dir

__all__ = ["cached", "inputs_digest"]

T = TypeVar("T")
_FORMAT = "1"  # bump when the pickled layout changes


@lru_cache(maxsize=1)
def inputs_digest() -> str:
    """SHA-256 over every Python source of the package and every file of ``data/`` (paths and bytes)."""
    digest = hashlib.sha256(_FORMAT.encode())
    files = sorted(PACKAGE.rglob("*.py"))
    if DATA.is_dir():
        files += sorted(p for p in DATA.rglob("*") if p.is_file())
    for path in files:
        digest.update(str(path.relative_to(PACKAGE.parent)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _key(name: str, inputs: object) -> str:
    return hashlib.sha256(f"{name}\0{inputs!r}\0{inputs_digest()}".encode()).hexdigest()[:32]


def cached(name: str, inputs: object, compute: Callable[[], T]) -> T:
    """``compute()``, or its value from an earlier call with the same ``name``, ``inputs`` and sources."""
    if os.environ.get("LGACC_RESULT_CACHE", "1") == "0":
        return compute()
    directory = cache_dir() / "results"
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return compute()
    path = directory / f"{name}-{_key(name, inputs)}.pickle"
    try:
        lock = open(path.with_suffix(".lock"), "a")
    except OSError:
        return compute()
    with lock:
        _lock(lock)  # released when the file closes
        value = _read(path)
        if value is not None:
            return value[0]
        value = compute()
        _write(path, value)
        return value


def _lock(handle) -> None:
    try:
        import fcntl

        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
    except (ImportError, OSError):  # no advisory locks here: at worst both processes compute
        pass


def _read(path: Path) -> tuple | None:
    try:
        with open(path, "rb") as handle:
            return (pickle.load(handle),)
    except FileNotFoundError:
        return None
    except Exception:  # truncated or from another layout: compute again
        return None


def _write(path: Path, value: object) -> None:
    try:
        with tempfile.NamedTemporaryFile("wb", dir=path.parent, delete=False, suffix=".tmp") as handle:
            pickle.dump(value, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(handle.name, path)
    except OSError:
        pass
