"""Project hygiene: notebooks without outputs, one book page per notebook, one dependency list.

Independent facts checked: the committed files themselves (notebooks, book/_toc.yml,
pyproject.toml against environment.yml); nothing here is computed by lgacc.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_committed_without_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code":
            assert not cell.outputs, f"{path.name} cell {index} has outputs: strip them before committing"
            assert cell.execution_count is None, f"{path.name} cell {index} has an execution count"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_reader_sees_no_code_unless_asked(path):
    """A page is a narrative over library calls: every code cell but the papermill parameters is folded
    (``hide-input``) or removed, so a reader sees the sentences, tables and figures it prints (issue #27)."""
    notebook = nbformat.read(path, as_version=4)
    for index, cell in enumerate(notebook.cells):
        tags = cell.get("metadata", {}).get("tags", [])
        if cell.cell_type == "code" and "parameters" not in tags:
            assert any(t in ("hide-input", "remove-input", "remove-cell") for t in tags), \
                f"{path.name} cell {index} shows its code to the reader: tag it hide-input"


#: Pages that show the same thing on every build: the hardware does not enter them (glossary,
#: derivations, unit-duration timelines, hardware-free tables, measured runs on their own hardware)
#: or they grade the paper on its own hardware (``lgacc.paper.PAPER_HARDWARE``).  They must not take
#: the build's hardware: the runner reuses their executed copy for every spec (lgacc.book.notebookcache).
HARDWARE_FREE = {"against_measured_runs", "claims", "derivations", "evaluation_check", "fig_gradient_accumulation",
                 "fig_gradient_accumulation_partitioned", "fig_pipeline_comparison", "glossary", "mixed_buffering", "readings",
                 "sensitivity", "x_model", "sparse_models", "hardware_implications", "measured_gpu"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_takes_hardware_as_a_papermill_parameter_unless_it_cannot_depend_on_it(path):
    notebook = nbformat.read(path, as_version=4)
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    parameters = [cell for cell in code_cells if "parameters" in cell.metadata.get("tags", [])]
    assert len(parameters) <= 1, f"{path.name} has more than one cell tagged 'parameters'"
    if parameters:
        assert parameters[0] is code_cells[0], f"{path.name}: the parameters cell must be the first code cell"
    declares = bool(parameters) and re.search(r"^hardware\s*=", parameters[0].source, re.M)
    if path.stem in HARDWARE_FREE:
        assert not declares, f"{path.name} is listed as hardware-free but declares 'hardware = ...'"
        body = "\n".join(cell.source for cell in code_cells if cell not in parameters)
        python = "\n".join(line for line in body.splitlines() if not line.lstrip().startswith("%"))  # no magics
        names = {node.id for node in ast.walk(ast.parse(python)) if isinstance(node, ast.Name)}
        assert "hardware" not in names, f"{path.name} reads a variable 'hardware' it is not given"
    else:
        assert declares, f"{path.name}: no 'hardware = ...' parameter (or list it in HARDWARE_FREE)"


def _toc_files(entries) -> list[str]:
    files = []
    for entry in entries or []:
        if "file" in entry:
            files.append(entry["file"])
        for key in ("chapters", "sections", "parts"):
            files.extend(_toc_files(entry.get(key)))
    return files


def test_every_notebook_is_a_page_of_the_book_and_every_page_exists():
    toc = yaml.safe_load((ROOT / "book" / "_toc.yml").read_text())
    files = _toc_files(toc.get("parts")) + _toc_files(toc.get("chapters"))
    generated = {f.split("/", 1)[1] for f in files if f.startswith("generated/")}
    assert generated == {path.stem for path in NOTEBOOKS}
    for page in files:
        if not page.startswith("generated/"):
            assert (ROOT / "book" / f"{page}.md").is_file() or (ROOT / "book" / f"{page}.ipynb").is_file(), page


def _requirement_names(requirements: list[str]) -> dict[str, str]:
    parsed = {}
    for requirement in requirements:
        match = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*(.*)$", requirement)
        parsed[match[1].lower()] = match[2].replace(" ", "")
    return parsed


def test_environment_yml_mirrors_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = project["dependencies"] + [r for extra in project["optional-dependencies"].values() for r in extra]
    environment = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict) and "pip" in d)
    listed = [r for r in pip_section if not r.startswith("-e")]
    assert _requirement_names(listed) == _requirement_names(wanted)
    python = next(d for d in environment["dependencies"] if isinstance(d, str) and d.startswith("python="))
    assert project["requires-python"] == ">=" + python.split("=", 1)[1]


def test_one_calendar():
    """Issue #15: a year is 365.25 days in lgacc.units and typed nowhere else (it was 365 in one
    module and 365.25 in another); checked on the code's number tokens, not its prose."""
    import io
    import tokenize
    from pathlib import Path

    package = Path(__file__).resolve().parents[1] / "lgacc"
    typed = []
    for path in package.rglob("*.py"):
        if path.name == "units.py":
            continue
        tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
        typed += [f"{path.name}:{t.start[0]}" for t in tokens
                  if t.type == tokenize.NUMBER and t.string.replace("_", "") in ("365", "365.0", "365.25", "30.4375")]
    assert not typed, typed
    from lgacc.units import DAYS_PER_MONTH, DAYS_PER_YEAR

    assert DAYS_PER_YEAR == 365.25 and DAYS_PER_MONTH * 12 == DAYS_PER_YEAR
