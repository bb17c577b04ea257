"""The compiled programs on disk: JSON data under a key of the sources they are compiled from, verified on read.

Compiling the derivations (sympy) takes seconds; the programs are plain data (:mod:`.program`).  They ship
with the package (``lgacc/model/generated/<name>.json``, written by ``python -m lgacc.model.regenerate``,
checked current by ``tests/test_codegen.py``) under a SHA-256 of the source files that define them
(:func:`lgacc.cache.codegen.source_key`).  When a source changed since, they are compiled again and kept
in the cache directory as a sealed entry (:mod:`lgacc.cache.sealed`: a regular file, an HMAC under the
user's secret); an entry that does not verify or does not have the programs' shape is rebuilt, never
used.  Nothing read back is code.  If the directory cannot be written, the programs live in memory only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterable

from lgacc.cache.codegen import cache_dir, source_key
from lgacc.cache.sealed import read_sealed, write_sealed

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


def committed_path(name: str) -> Path:
    """The programs committed with the package (``python -m lgacc.model.regenerate`` writes them)."""
    return Path(__file__).resolve().parent.parent / "generated" / f"{name}.json"


def committed_text(name: str, sources: Iterable[Path], build: Callable[[], dict[str, Program]]) -> str:
    """The committed file's text: the sources' key and the programs (imports sympy)."""
    return json.dumps({"key": source_key(name, list(sources)), "payload": _encode(build())}, indent=0) + "\n"


def _committed(name: str, key: str) -> dict[str, Program] | None:
    try:
        record = json.loads(committed_path(name).read_text(encoding="utf-8"))
        return _decode(record["payload"]) if record["key"] == key else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _read(path: Path, name: str, key: str) -> dict[str, Program] | None:
    payload = read_sealed(path, name, key)  # a regular file, its HMAC under the user's secret checked
    try:
        return None if payload is None else _decode(payload)
    except (ValueError, KeyError, TypeError):
        return None


def _write(path: Path, name: str, key: str, payload: str) -> None:
    if write_sealed(path, name, key, payload):
        for stale in path.parent.glob(f"{name}-*.json"):
            if stale != path:
                stale.unlink(missing_ok=True)


def load_or_build(name: str, sources: Iterable[Path], build: Callable[[], dict[str, Program]]) -> dict[str, Any]:
    """The programs of ``name``: committed with the package when their key matches, else from the cache if
    the entry verifies, else ``build()`` (kept in the cache, sealed)."""
    key = source_key(name, list(sources))
    found = _committed(name, key)
    if found is not None:
        return found
    path = cache_dir() / f"{name}-{key}.json"
    found = _read(path, name, key)
    if found is not None:
        return found
    built = build()
    payload = _encode(built)
    _write(path, name, key, payload)
    return _decode(payload)
