"""Results that take tens of seconds, computed once per package version and inputs, kept on disk.

The claims of the paper (:mod:`lgacc.paper.claims`) run about two hundred searches
under the paper's rules and under each assumption switch.  Two pages of the book
(the scorecard and the claims) and the test suite need the same results for the
same hardware, in different processes; :func:`cached` computes them in the first
and reads them in the others.

* **Key**: a SHA-256 of the result's name, the ``repr`` of its inputs, the package's version and
  every file the result can depend on (the package's Python sources and ``data/``).  Inputs are
  *values*, never paths: a model, a spec or a run read from a file is passed as the frozen dataclass
  read (every number in it counts), so a file named by a run or a flag, wherever it lives, keys the
  entry by its content; a path among the inputs is refused (:class:`TypeError`).  Change a formula,
  a rule, a printed value, a spec or a run file, and the key changes: nothing stale is ever read.
* **Location**: the generated-code cache directory (:func:`lgacc.cache.codegen.cache_dir`,
  ``$LGACC_CACHE_DIR`` or ``~/.cache/lgacc``), subdirectory ``results``.  If it
  cannot be written, the result is computed and returned, not kept.
* **Data, verified**: a result is kept as JSON of the schema of :mod:`.jsondata` (plain values,
  numpy, pandas and the package's dataclasses: reading it runs no code), sealed with an HMAC of its
  text under a per-user secret kept outside the cache (:mod:`.sealed`).  An entry whose digest, key
  or schema does not check out (a byte changed, a file cut short, one copied from another user's
  cache) or that is not a regular file (a symlink, a FIFO, a device, an oversized file) is never
  served: it is computed again and replaced.  A read-only cache that holds the entry is read.
* **Concurrency**: a lock file per key; a second process asking for a result being
  computed waits for it instead of computing it again.  Writes are atomic.
* ``LGACC_RESULT_CACHE=0`` turns the cache off (always compute).
"""

from __future__ import annotations

import hashlib
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Callable, TypeVar

from lgacc.paths import DATA, PACKAGE

from . import jsondata
from .codegen import cache_dir
from .sealed import open_regular, read_sealed, write_sealed

__all__ = ["cached", "inputs_digest"]

T = TypeVar("T")
_FORMAT = "3"  # bump when the stored layout changes (3: HMAC-sealed JSON of jsondata, keyed by values)
_PATH_REPR = re.compile(r"\b(Posix|Windows|Pure\w*)?Path\(")


@lru_cache(maxsize=1)
def inputs_digest() -> str:
    """SHA-256 over every Python source of the package and every file of ``data/`` (paths and bytes)."""
    from lgacc import __version__

    digest = hashlib.sha256(f"{_FORMAT}:{__version__}".encode())
    files = sorted(PACKAGE.rglob("*.py"))
    if DATA.is_dir():
        files += sorted(p for p in DATA.rglob("*") if p.is_file())
    for path in files:
        digest.update(str(path.relative_to(PACKAGE.parent)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _key(name: str, inputs: object) -> str:
    text = repr(inputs)
    if _PATH_REPR.search(text):
        raise TypeError(f"cached({name!r}): pass what a file holds, not its path (a path keys no content)")
    return hashlib.sha256(f"{name}\0{text}\0{inputs_digest()}".encode()).hexdigest()[:32]


def cached(name: str, inputs: object, compute: Callable[[], T]) -> T:
    """``compute()``, or its value from an earlier call with the same ``name``, ``inputs`` and sources.

    The value is kept as the data-only JSON of :mod:`.jsondata`, sealed with its digest
    (:mod:`.sealed`); an entry that does not check out, or does not read back as the schema's data,
    is computed again and replaced.  A value outside the schema is computed and returned, not kept."""
    if os.environ.get("LGACC_RESULT_CACHE", "1") == "0":
        return compute()
    directory = cache_dir() / "results"
    key = _key(name, inputs)
    path = directory / f"{name}-{key}.json"
    found = _read(path, name, key)  # a filled cache is read even where it cannot be written
    if found is not None:
        return found[0]
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return compute()
    fd = open_regular(path.with_suffix(".lock"), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    if fd is None:  # a link, a FIFO or a device where the lock should be: compute without it
        value = compute()
        _write(path, name, key, value)
        return value
    with os.fdopen(fd, "a") as lock:
        _lock(lock)  # released when the file closes
        found = _read(path, name, key)  # computed by another process while this one waited
        if found is not None:
            return found[0]
        value = compute()
        _write(path, name, key, value)
        return value


def _lock(handle) -> None:
    try:
        import fcntl

        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
    except (ImportError, OSError):  # no advisory locks here: at worst both processes compute
        pass


def _read(path: Path, name: str, key: str) -> tuple | None:
    """``(value,)`` from a verified entry, ``None`` when there is none or it does not check out."""
    text = read_sealed(path, name, key)
    if text is None:
        return None
    try:
        return (jsondata.loads(text),)
    except (ValueError, RecursionError):  # sealed but not the schema's data (an older layout): compute again
        return None


def _write(path: Path, name: str, key: str, value: object) -> None:
    try:
        text = jsondata.dumps(value)
    except (jsondata.Unstorable, ValueError, RecursionError):
        return  # outside the schema: returned, not kept
    write_sealed(path, name, key, text)
