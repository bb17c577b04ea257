"""The package map in ``lgacc/__init__.py`` (issues #15, #24): the folders are the layers, the map lists
every module, each module imports only from its own layer or the layers below, no import circle
joins two files, and no function is longer than a reader can hold.

The tests read the map's table and every module's imports with ``ast`` (imports inside functions
and under ``TYPE_CHECKING`` included), so that a new module, an import against the layers or a new
circle fails here rather than going unnoticed.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import lgacc

PACKAGE = Path(lgacc.__file__).resolve().parent

#: The layers, bottom to top, as the map's bold rows name them.
LAYERS = ("foundations", "model/", "schedule/", "search/", "scaling/", "paper/", "studies/", "book/", "command line")
#: The top-level packages that are not a layer of their own.
FOUNDATION_PACKAGES = ("cache",)
COMMAND_LINE = ("cli", "commands")
#: At most this many modules directly in ``lgacc/`` (besides ``__init__`` and ``__main__``).
MAX_TOP_LEVEL_MODULES = 8
MAX_FUNCTION_LINES = 120


def map_rows() -> list[tuple[str, str]]:
    """The map's rows, top to bottom: ``(first column, job text with its continuation lines)``."""
    lines = lgacc.__doc__.splitlines()
    rules = [i for i, line in enumerate(lines) if re.fullmatch(r"=+( +=+)+", line)]
    assert len(rules) == 3, "the package map is one simple table: a rule above, below the header and at the end"
    assert len({lines[i] for i in rules}) == 1, "the table's three rules differ"
    gaps = [m.start() for m in re.finditer(r" +", lines[rules[0]])]
    for line in lines[rules[0]: rules[2]]:
        # reStructuredText's simple table: no text crosses the blank gap between two columns
        assert all(line[g: g + 2].strip() == "" for g in gaps), f"text crosses a column boundary: {line!r}"
    width = gaps[0]
    rows: list[tuple[str, str]] = []
    for line in lines[rules[1] + 1: rules[2]]:
        first, job = line[:width].strip(), line[width:].strip()
        if first:
            rows.append((first, job))
        else:  # a continuation line of the row above
            rows[-1] = (rows[-1][0], rows[-1][1] + " " + job)
    return rows


def map_layers() -> list[tuple[str, list[tuple[str, str]]]]:
    """``[(layer, [(entry, job), ...]), ...]``: the bold rows and the module rows under each."""
    layers: list[tuple[str, list[tuple[str, str]]]] = []
    for first, job in map_rows():
        bold = re.fullmatch(r"\*\*(.+)\*\*", first)
        if bold:
            layers.append((bold.group(1), [(bold.group(1), job)] if bold.group(1).endswith("/") else []))
        else:
            entry = re.fullmatch(r"``([^`]+)``", first)
            assert entry, f"a map row names one module in double backquotes: {first!r}"
            assert layers, "the first row of the map is a layer"
            layers[-1][1].append((entry.group(1), job))
    return layers


def layer_of(path: Path) -> str:
    """The layer a file of the package belongs to, by where it lies."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    top = parts[0]
    if top in COMMAND_LINE:
        return "command line"
    if len(parts) == 1 or top in FOUNDATION_PACKAGES:
        return "foundations"
    return top + "/"


def package_files() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p.name != "__main__.py" and "__pycache__" not in p.parts)


def test_the_layers_are_the_maps_bold_rows_in_order():
    assert [name for name, _ in map_layers()] == list(LAYERS)


def test_at_most_eight_modules_directly_in_the_package():
    modules = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__"))
    assert len(modules) <= MAX_TOP_LEVEL_MODULES, modules
    packages = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
    assert set(packages) <= {name.rstrip("/") for name in LAYERS} | set(FOUNDATION_PACKAGES) | set(COMMAND_LINE), packages


def _listed() -> dict[str, str]:
    """Every entry of the map (``model/transformer``, ``model/formulas/``, ``scaling/``) with its job text."""
    return {entry: job for _, rows in map_layers() for entry, job in rows}


def _named_in(job: str) -> set[str]:
    return set(re.findall(r"``([A-Za-z_][A-Za-z0-9_]*)``", job))


def test_the_map_lists_every_module():
    """Each module of the package is a row of the map, or named in the row of the package holding it
    (a package of one module per table, figure or subcommand says so instead)."""
    listed = _listed()
    missing = []
    for path in package_files():
        relative = path.relative_to(PACKAGE)
        if relative.name == "__init__.py":
            relative = relative.parent
            if relative == Path("."):
                continue
            key = f"{relative.as_posix()}/"
        else:
            key = relative.with_suffix("").as_posix()
        if key in listed:
            continue
        holder = f"{relative.parent.as_posix()}/"
        job = listed.get(holder)
        if job is not None and ("one module per" in job or relative.stem in _named_in(job)
                                or relative.stem.startswith("_")):
            continue
        missing.append(key)
    assert not missing, f"modules missing from the package map in lgacc/__init__.py: {missing}"


def test_every_entry_of_the_map_exists():
    for entry in _listed():
        name = entry.rstrip("/")
        assert (PACKAGE / f"{name}.py").is_file() or (PACKAGE / name / "__init__.py").is_file(), entry
    for entry, job in _listed().items():
        if entry.endswith("/"):
            for name in _named_in(job):
                if name in ("eq", "data"):
                    continue
                folder = PACKAGE / entry.rstrip("/")
                assert (folder / f"{name}.py").is_file() or (folder / name / "__init__.py").is_file() \
                    or name in {"ARTIFACT"}, f"{entry} names {name}, which is not one of its modules"


def _module_file(name: str) -> Path | None:
    """The file of the module ``lgacc.a.b`` (a package's ``__init__.py``), or None if there is none."""
    parts = name.split(".")[1:]
    base = PACKAGE.joinpath(*parts) if parts else PACKAGE
    if base.with_suffix(".py").is_file() and parts:
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


def imported_files(path: Path) -> set[Path]:
    """The package's files that ``path`` imports, at any depth of the file (functions, ``TYPE_CHECKING``):
    ``from .x import y`` is ``x``'s file, or ``x/y.py`` when ``y`` is a module of the package ``x``."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    package = parts[:-1]
    out: set[Path] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[: len(package) - node.level + 1])
                target = base + (node.module.split(".") if node.module else [])
            else:
                target = node.module.split(".") if node.module else []
            if target[:1] != ["lgacc"]:
                continue
            module = ".".join(target)
            for alias in node.names:
                submodule = _module_file(f"{module}.{alias.name}")
                if submodule is not None:
                    out.add(submodule)
                else:
                    found = _module_file(module)
                    assert found is not None, f"{path}: imports {module}, which is not a module of the package"
                    out.add(found)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("lgacc."):
                    found = _module_file(alias.name)
                    assert found is not None, f"{path}: imports {alias.name}, which is not a module of the package"
                    out.add(found)
    out.discard(path)
    return out


def test_a_module_imports_only_from_its_layer_or_below():
    rank = {name: i for i, name in enumerate(LAYERS)}
    upward = []
    for path in package_files():
        if path == PACKAGE / "__init__.py":
            continue
        own = rank[layer_of(path)]
        for target in sorted(imported_files(path)):
            if target == PACKAGE / "__init__.py":
                continue  # the version string
            if rank[layer_of(target)] > own:
                upward.append(f"{path.relative_to(PACKAGE)} ({layer_of(path)}) imports "
                              f"{target.relative_to(PACKAGE)} ({layer_of(target)})")
    assert not upward, upward


def _cycles(graph: dict[Path, set[Path]]) -> list[list[Path]]:
    """Strongly connected components of more than one file (Tarjan's algorithm, iterative)."""
    index: dict[Path, int] = {}
    low: dict[Path, int] = {}
    stack: list[Path] = []
    on_stack: set[Path] = set()
    found: list[list[Path]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def test_no_import_circle_between_files():
    graph = {path: imported_files(path) for path in package_files()}
    cycles = [sorted(str(p.relative_to(PACKAGE)) for p in component) for component in _cycles(graph)]
    assert not cycles, f"files that import each other, directly or around a circle: {cycles}"


def test_the_circle_finder_finds_a_circle():
    """The check above can fail: a circle of three and a pair are found, a chain is not."""
    a, b, c, d, e = (Path(name) for name in "abcde")
    assert sorted(map(sorted, _cycles({a: {b}, b: {c}, c: {a}, d: {e}, e: set()}))) == [[a, b, c]]
    assert _cycles({a: {b}, b: {a}}) and not _cycles({a: {b}, b: {c}, c: set()})


def test_no_function_is_longer_than_120_lines():
    long = []
    for path in package_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name} ({lines} lines)")
    assert not long, long
