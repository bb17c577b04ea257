"""The compiled programs on disk: JSON data under a key of the sources they are compiled from, verified on read.

Compiling the derivations (sympy) takes seconds; the programs are plain data (:mod:`.program`), so they
are kept as a JSON file in the cache directory (:func:`lgacc.cache.codegen.cache_dir`), named by a
SHA-256 of the source files that define them (:func:`lgacc.cache.codegen.source_key`): change one of
those files and the name changes.  The file also holds a SHA-256 of its own payload; a file that does
not parse, does not match its digest or does not have the programs' shape is rebuilt, never used.
Nothing read back is code.  If the directory cannot be written, the programs live in memory only.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterable

from lgacc.cache.codegen import cache_dir, source_key

from .program import OPERATIONS, Program

__all__ = ["load_or_build"]


def _encode(programs: dict[str, Program]) -> str:
    return json.dumps({name: [list(map(list, nodes)), [list(o) for o in outputs]]
                       for name, (nodes, outputs) in programs.items()}, sort_keys=True)


def _decode(payload: str) -> dict[str, Program]:
    data = json.loads(payload)
    out: dict[str, Program] = {}
    for name, (nodes, outputs) in data.items():
        nodes_t = tuple(tuple(node) for node in nodes)
        for node in nodes_t:
            if not node or node[0] not in OPERATIONS:
                raise ValueError(f"unknown operation in {name}")
        out[name] = (nodes_t, tuple((str(n), int(i)) for n, i in outputs))
    return out


def _read(path: Path) -> dict[str, Program] | None:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        payload = record["payload"]
        if hashlib.sha256(payload.encode()).hexdigest() != record["sha256"]:
            return None
        return _decode(payload)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write(path: Path, payload: str) -> None:
    record = json.dumps({"sha256": hashlib.sha256(payload.encode()).hexdigest(), "payload": payload})
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(record)
        os.replace(tmp, path)
        for stale in path.parent.glob(f"{path.name.rsplit('-', 1)[0]}-*.json"):
            if stale != path:
                stale.unlink(missing_ok=True)
    except OSError:
        pass  # a read-only cache: the programs stay in memory


def load_or_build(name: str, sources: Iterable[Path], build: Callable[[], dict[str, Program]]) -> dict[str, Any]:
    """The programs of ``name`` from the cache if their key matches and the file verifies, else ``build()``."""
    path = cache_dir() / f"{name}-{source_key(name, list(sources))}.json"
    found = _read(path)
    if found is not None:
        return found
    built = build()
    payload = _encode(built)
    _write(path, payload)
    return _decode(payload)
