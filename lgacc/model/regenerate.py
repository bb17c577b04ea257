"""Print the committed numeric code again: ``python -m lgacc.model.regenerate [--check]``.

Every generated module of ``lgacc/model/generated/`` (:class:`lgacc.cache.codegen.Generated`) is
printed from its derivations with sympy and written in place; ``--check`` writes nothing and exits 1
when a committed module differs from what its derivations print (a stale derivation).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

from lgacc.cache.codegen import Generated

from .calibrated.expected import _SOURCES as _PROGRAM_SOURCES, _build as _build_programs
from .calibrated.store import committed_path, committed_text
from .calibrated.sparse import GENERATED as CALIBRATED_SPARSE
from .evaluator.mapping import GENERATED as EVALUATOR
from .transformer import GENERATED as MODELS, SPARSE_GENERATED as SPARSE_MODELS

__all__ = ["GENERATED", "PROGRAMS", "files", "stale", "main"]

#: Every committed generated module.
GENERATED: tuple[Generated, ...] = (MODELS, SPARSE_MODELS, CALIBRATED_SPARSE, *EVALUATOR.values())
#: The calibrated model's compiled programs (data), committed beside them.
PROGRAMS = "calibrated-programs"


def files() -> list[tuple[Path, Callable[[], str]]]:
    """Every committed generated file with the function printing its text."""
    return [*((g.path(), g.text) for g in GENERATED),
            (committed_path(PROGRAMS), lambda: committed_text(PROGRAMS, _PROGRAM_SOURCES, _build_programs))]


def stale() -> list[str]:
    """The committed files whose text differs from a fresh printing."""
    return [path.name for path, text in files() if not path.is_file() or path.read_text(encoding="utf-8") != text()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lgacc.model.regenerate", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a module is stale")
    args = parser.parse_args(argv)
    if args.check:
        found = stale()
        for module in found:
            print(f"stale: {module} (run python -m lgacc.model.regenerate)", file=sys.stderr)
        return 1 if found else 0
    for path, printed in files():
        text = printed()
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":  # a closed pipe or Ctrl-C: one line or none, never a traceback
    from lgacc.errors import run_quietly

    sys.exit(run_quietly("python -m lgacc.model.regenerate", "lgacc.model.regenerate"))
