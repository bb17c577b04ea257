"""The package map in ``lgacc/__init__.py`` (issue #15): it lists every module, and the layering it states holds.

The map says "a module imports only modules above it in this list".  These tests
read the map's table and every module's imports (``ast``, function-level imports
included) and check both, so that a new module or a new import against the order
fails here rather than going unnoticed.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import lgacc

PACKAGE = Path(lgacc.__file__).resolve().parent

#: Imports against the map's order, each with the reason it is tolerated for now.
KNOWN_UPWARD_IMPORTS = {
    # today's chart reuses the figure style (fonts, markers, width) of fig:scaling_limited
    ("today", "reproductions"),
}


def map_rows() -> list[list[str]]:
    """The map's rows, top to bottom, each the names in its first column (``formulas/overlap`` kept whole)."""
    lines = lgacc.__doc__.splitlines()
    rules = [i for i, line in enumerate(lines) if re.fullmatch(r"=+( +=+)+", line)]
    assert len(rules) == 3, "the package map is one simple table: a rule above, below the header and at the end"
    assert len({lines[i] for i in rules}) == 1, "the table's three rules differ"
    gaps = [m.start() for m in re.finditer(r" +", lines[rules[0]])]
    for line in lines[rules[0] : rules[2]]:
        # reStructuredText's simple table: no text crosses the blank gap between two columns
        assert all(line[g : g + 2].strip() == "" for g in gaps), f"text crosses a column boundary: {line!r}"
    width = gaps[0]
    rows: list[list[str]] = []
    for line in lines[rules[1] + 1 : rules[2]]:
        first = line[:width].strip()
        if not first:
            continue  # a continuation line of the row above
        rows.append(re.findall(r"``([^`]+)``", first))
    return rows


def top_level_modules() -> set[str]:
    """Every module and package directly under ``lgacc/``: ``evaluate``, ``search/``."""
    names = {p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__")}
    names |= {p.name + "/" for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    return names


def test_the_map_lists_every_module_once():
    listed = [name for row in map_rows() for name in row if "/" not in name.rstrip("/")]
    assert len(listed) == len(set(listed)), sorted(n for n in listed if listed.count(n) > 1)
    missing = sorted(top_level_modules() - set(listed))
    assert not missing, f"modules missing from the package map in lgacc/__init__.py: {missing}"
    stale = sorted(set(listed) - top_level_modules())
    assert not stale, f"the package map lists modules that do not exist: {stale}"


def test_every_sub_entry_of_the_map_is_a_module():
    for name in (n for row in map_rows() for n in row if "/" in n.rstrip("/")):
        assert (PACKAGE / f"{name}.py").is_file() or (PACKAGE / name / "__init__.py").is_file(), name


def _row_of() -> dict[str, int]:
    return {name.rstrip("/"): i for i, row in enumerate(map_rows()) for name in row if "/" not in name.rstrip("/")}


def _imported_modules(path: Path) -> set[str]:
    """The top-level ``lgacc`` modules a file imports, relative or absolute, at any depth."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    package = parts[:-1] if path.name != "__init__.py" else parts[:-1]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = list(base) + (node.module.split(".") if node.module else [])
            else:
                target = node.module.split(".") if node.module else []
            if target[:1] != ["lgacc"]:
                continue
            if len(target) == 1:  # from . import name: the names are modules
                out |= {alias.name for alias in node.names}
            else:
                out.add(target[1])
        elif isinstance(node, ast.Import):
            out |= {alias.name.split(".")[1] for alias in node.names if alias.name.startswith("lgacc.")}
    return out


def test_a_module_imports_only_modules_above_it_in_the_map():
    row = _row_of()
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] in ("__init__.py", "__main__.py"):
            continue
        owner = relative.parts[0].removesuffix(".py")
        for imported in sorted(_imported_modules(path)):
            if imported in row and row[imported] > row[owner] and (owner, imported) not in KNOWN_UPWARD_IMPORTS:
                upward.append(f"{relative} imports {imported}")
    assert not upward, upward


def test_the_known_upward_imports_still_exist():
    """An exception that no longer happens is removed from the list."""
    for owner, imported in KNOWN_UPWARD_IMPORTS:
        files = [PACKAGE / f"{owner}.py"] if (PACKAGE / f"{owner}.py").is_file() else list((PACKAGE / owner).rglob("*.py"))
        assert any(imported in _imported_modules(f) for f in files), (owner, imported)
