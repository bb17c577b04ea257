"""Where the package's files are: the package itself, the repository root beside it, and ``data/``.

One definition, so that moving a module never changes which folder it reads.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["PACKAGE", "ROOT", "DATA"]

#: The ``lgacc`` package folder.
PACKAGE = Path(__file__).resolve().parent
#: The repository root (the folder holding ``lgacc/``, ``data/``, ``notebooks/`` and ``book/``).
ROOT = PACKAGE.parent
#: The data the package reads: hardware and model specs, the paper's printed values, measured runs.
DATA = ROOT / "data"
