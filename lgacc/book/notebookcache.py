"""Executed notebooks kept on disk, so that a page is executed again only when something it reads changed.

A page of the book that does not declare the ``hardware`` parameter (the glossary,
the derivations, the schedule figures drawn in unit durations, the tables the
hardware does not enter, and the pages graded on the paper's own hardware) shows
the same thing whatever spec the book is built for.  :mod:`lgacc.book.run` executes such
a notebook once and reuses the executed copy for every later build, so that a
book for a new spec executes only the pages that spec can change.  A page that declares
``hardware`` is kept too, keyed also by the content of the spec file it is given, so that
building the book again for the same spec executes none of them (issue #34: fast feedback).
A run that writes files beside its page (the scorecard's ``findings_path``: the front page's findings
and the assumptions page's lists) keeps them with it: each is sealed like the page, and the page is
restored only with every one of them.

* **Key**: a SHA-256 of the notebook's bytes and folder (its working directory), its parameters, the kernel's name,
  every Python source of the package and every file of ``data/``
  (:func:`lgacc.cache.results.inputs_digest`), the bytes of the hardware spec file when the
  notebook is given one, and the versions of Python and of
  the packages that shape an executed notebook's outputs.  Edit the notebook, a
  formula, a printed value, the spec, or upgrade pandas, and the page is executed again.
* **Only successes are kept**: a notebook that fails is executed again next time.
* **Verified**: the kept copy carries an HMAC of its text under the user's secret (:mod:`lgacc.cache.sealed`); one
  whose digest or key does not check out, or that is not a notebook's JSON (cut short, edited), is
  executed again and replaced, never copied into the book.
* **Location**: the generated-code cache directory (``$LGACC_CACHE_DIR`` or
  ``~/.cache/lgacc``), subdirectory ``notebooks``.  If it cannot be written, the
  notebook is executed and not kept.
* ``LGACC_RESULT_CACHE=0`` turns it off, with the other on-disk results.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Sequence

from lgacc.cache.codegen import cache_dir
from lgacc.cache.results import inputs_digest
from lgacc.cache.sealed import read_sealed, write_sealed

__all__ = ["HARDWARE_PARAMETER", "cache_path", "is_hardware_free", "keep", "restore"]

#: The parameter through which the runner gives a notebook the build's hardware; a notebook whose
#: parameters cell does not declare it cannot read the hardware, so its executed copy can be reused.
HARDWARE_PARAMETER = "hardware"
#: The kind of the sealed entries (:mod:`lgacc.cache.sealed`).
KIND = "notebook"
#: Packages whose version can change what an executed notebook shows (tables, figures, math).
OUTPUT_PACKAGES = ("ipykernel", "ipython", "matplotlib", "nbformat", "numpy", "pandas", "papermill", "sympy")


def is_hardware_free(parameters: dict) -> bool:
    """Whether a notebook run with ``parameters`` (what the runner passes) cannot see the hardware."""
    return HARDWARE_PARAMETER not in parameters


def _versions() -> str:
    found = []
    for name in OUTPUT_PACKAGES:
        try:
            found.append(f"{name}={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"{name}=absent")
    return f"python={sys.version}; " + "; ".join(found)


def _spec_bytes(hardware: str) -> bytes | None:
    """The bytes of the spec file the ``hardware`` parameter names (a shipped name or a path); ``None`` if unreadable."""
    from lgacc.model.hardware import hardware_path

    try:
        return hardware_path(hardware).read_bytes()
    except Exception:  # a spec that cannot be read is not keyed: the page is executed (and reports it)
        return None


def cache_path(notebook: Path, parameters: dict, kernel: str) -> Path | None:
    """Where the executed copy of ``notebook`` run with ``parameters`` on ``kernel`` is kept,
    or ``None`` when it must not be kept (its spec cannot be read, or the cache is off)."""
    if os.environ.get("LGACC_RESULT_CACHE", "1") == "0":
        return None
    # the folder it runs in (the runner's working directory for it) is an input too
    parts = [notebook.read_bytes(), str(notebook.resolve().parent).encode(),
             json.dumps(parameters, sort_keys=True).encode(), kernel.encode(),
             inputs_digest().encode(), _versions().encode()]
    if not is_hardware_free(parameters):
        spec = _spec_bytes(str(parameters[HARDWARE_PARAMETER]))
        if spec is None:
            return None
        parts.append(spec)
    digest = hashlib.sha256()
    for part in parts:
        digest.update(hashlib.sha256(part).digest())
    return cache_dir() / "notebooks" / f"{notebook.stem}-{digest.hexdigest()[:32]}.kept"


def _key(kept: Path) -> str:
    return kept.stem.rpartition("-")[2]


def _side_entry(kept: Path, name: str) -> tuple[Path, str]:
    """Where the file ``name`` written beside the page is kept, and its key."""
    return kept.with_name(f"{kept.stem}.{name}.side"), f"{_key(kept)}/{name}"


def _write_atomically(path: Path, text: str) -> None:
    handle, scratch = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
        out.write(text)
    os.replace(scratch, path)


def restore(kept: Path | None, output: Path, side: Sequence[str] = ()) -> bool:
    """Write the kept executed notebook to ``output`` and the files ``side`` it wrote beside it; ``False`` when
    there is none, or when it or one of those files does not check out (its digest, its key, or JSON of a
    notebook with cells): then it is executed again."""
    if kept is None:
        return False
    text = read_sealed(kept, KIND, _key(kept))
    if text is None:
        return False
    beside = {}
    for name in side:
        path, key = _side_entry(kept, name)
        beside[name] = read_sealed(path, KIND, key)
    if any(content is None for content in beside.values()):
        return False
    try:
        notebook = json.loads(text)
    except ValueError:
        return False
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list) or "nbformat" not in notebook:
        return False
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        for name, content in beside.items():
            _write_atomically(output.parent / name, content)
        _write_atomically(output, text)
    except OSError:
        return False
    return True


def keep(output: Path, kept: Path | None, side: Sequence[str] = ()) -> None:
    """Keep the executed notebook ``output`` at ``kept``, and the files ``side`` it wrote beside it, each sealed
    with its digest (atomically); silently skipped if impossible (the page alone is never kept for a run that
    wrote files beside it)."""
    if kept is None:
        return
    try:
        text = output.read_bytes().decode("utf-8")
        beside = {name: (output.parent / name).read_bytes().decode("utf-8") for name in side}
    except (OSError, UnicodeDecodeError):
        return
    for name, content in beside.items():
        path, key = _side_entry(kept, name)
        if not write_sealed(path, KIND, key, content):
            return
    write_sealed(kept, KIND, _key(kept), text)
