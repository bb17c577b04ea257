"""Finished chunks of a sweep, kept on disk so that an interrupted sweep resumes without computing them again.

A chunk is kept as JSON: its rows and the seconds one worker took to compute them (plain values: numbers,
strings, booleans, null; reading it runs no code), sealed with the SHA-256 of its text
(:mod:`lgacc.cache.sealed`), under the cache directory (``$LGACC_CACHE_DIR``,
:func:`lgacc.cache.codegen.cache_dir`) in a folder named by the sweep's key:

* the sweep as read (:class:`~.sweep.Sweep`: every value of the base spec, of each model and of each grid,
  the objective and the chunk size; not the file's path), and
* the package's Python sources and ``data/`` (:func:`lgacc.cache.results.inputs_digest`).

Change the sweep file, a spec, a model file or a line of the package, and the key changes: nothing stale is
read.  An entry that does not check out (a byte changed, a file cut short, rows of another chunk) is computed
again and replaced.  Where the cache cannot be written, the chunks are kept in memory for the run only.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from pathlib import Path
from typing import Any

from lgacc.cache.codegen import cache_dir
from lgacc.cache.results import inputs_digest
from lgacc.cache.sealed import read_sealed, write_sealed

from .sweep import Sweep

__all__ = ["ChunkStore", "sweep_key", "plain_rows"]

_KIND = "codesign-chunk"
_FORMAT = "2"  # 2: {"rows": [...], "seconds": s}


def sweep_key(sweep: Sweep, chunk_size: int) -> str:
    """SHA-256 of the sweep's values (its path aside), the chunk size and the package's sources and data."""
    base = dataclasses.replace(sweep.base, path="")
    content = repr(dataclasses.replace(sweep, origin="", base=base))
    return hashlib.sha256(f"{_FORMAT}\0{content}\0{chunk_size}\0{inputs_digest()}".encode()).hexdigest()[:32]


def _plain(value: Any) -> Any:
    if hasattr(value, "item") and not isinstance(value, (list, dict, str)):  # numpy scalars
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def plain_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows as they read back from JSON (plain numbers, no NaN): what every run returns, so that a serial
    run, a Dask run and a resumed run give the same bytes."""
    return json.loads(json.dumps([{str(k): _plain(v) for k, v in row.items()} for row in rows]))


class ChunkStore:
    """The finished chunks of one sweep (see the module's docstring)."""

    def __init__(self, sweep: Sweep, chunk_size: int, root: Path | None = None):
        self.key = sweep_key(sweep, chunk_size)
        self.folder = (cache_dir() if root is None else root) / "codesign" / self.key
        self._memory: dict[tuple[int, int], list[dict[str, Any]]] = {}
        self._seconds: dict[tuple[int, int], float | None] = {}

    def _path(self, start: int, stop: int) -> Path:
        return self.folder / f"chunk-{start:09d}-{stop:09d}.json"

    def read(self, start: int, stop: int) -> list[dict[str, Any]] | None:
        """The rows of chunk ``[start, stop)``, or ``None`` if it is not kept (or does not check out)."""
        if (start, stop) in self._memory:
            return self._memory[(start, stop)]
        text = read_sealed(self._path(start, stop), _KIND, f"{self.key}:{start}:{stop}")
        if text is None:
            return None
        try:
            data = json.loads(text)
        except ValueError:
            return None
        rows = data.get("rows") if isinstance(data, dict) else None
        if not isinstance(rows, list) or not all(isinstance(r, dict) and start <= r.get("design", -1) < stop
                                                 for r in rows):
            return None
        return rows

    def has(self, start: int, stop: int) -> bool:
        return self.read(start, stop) is not None

    def seconds(self, start: int, stop: int) -> float | None:
        """The seconds chunk ``[start, stop)`` took to compute (``None``: not kept, or not measured)."""
        if (start, stop) in self._memory:
            return self._seconds.get((start, stop))
        text = read_sealed(self._path(start, stop), _KIND, f"{self.key}:{start}:{stop}")
        try:
            value = json.loads(text).get("seconds") if text is not None else None
        except (ValueError, AttributeError):
            return None
        return float(value) if isinstance(value, (int, float)) and math.isfinite(value) and value >= 0 else None

    def write(self, start: int, stop: int, rows: list[dict[str, Any]], seconds: float | None = None
              ) -> list[dict[str, Any]]:
        """Keep the chunk's rows and compute time (on disk, else in memory); returns the rows as plain values."""
        rows = plain_rows(rows)
        text = json.dumps({"rows": rows, "seconds": seconds})
        kept = False
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            kept = write_sealed(self._path(start, stop), _KIND, f"{self.key}:{start}:{stop}", text)
        except OSError:
            kept = False
        if not kept:
            self._memory[(start, stop)] = rows
            self._seconds[(start, stop)] = seconds
        return rows
