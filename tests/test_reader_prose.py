"""Reader prose names what a thing is, never its module path (issue #33, item 7).

The book's markdown (``book/*.md`` and the notebooks' markdown cells) is read by people who read the paper, not
the package: ``lgacc.paper.claims.verdict_of`` means nothing to them. Code (fenced blocks, folded code cells) may
name modules; prose may name a command a reader types (``lgacc reproduce claims``), and the few command lines
that run a module (``python -m lgacc.book.run``) are allowed by name below.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: A dotted module path: ``lgacc.<package>.<anything>``.
MODULE_PATH = re.compile(r"lgacc\.[a-z_]+\.")

#: Command lines a reader types, which run a module by its path.
ALLOWED = ("python -m lgacc.book.run", "python -m lgacc.model.regenerate", "python -m lgacc.studies.validation.fit",
           # the commands that print the calibrated model's measured tables (issue #35: each table with its command)
           "python -m lgacc.model.calibrated.gemm_table", "python -m lgacc.model.calibrated.attention")

_FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1[ \t]*$", re.S | re.M)


def prose(text: str) -> str:
    """``text`` without its fenced code blocks and the allowed command lines."""
    text = _FENCE.sub("", text)
    for command in ALLOWED:
        text = text.replace(command, "")
    return text


def _pages() -> list[tuple[str, str]]:
    pages = [(str(p.relative_to(ROOT)), p.read_text()) for p in sorted((ROOT / "book").glob("*.md"))]
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        text = "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        pages.append((str(path.relative_to(ROOT)), text))
    return pages


def test_the_scan_finds_a_module_path_and_spares_code_and_commands():
    text = ("The verdict comes from `lgacc.paper.claims.verdict_of`.\n\n```python\nimport lgacc.paper.claims\n```\n"
            "Run `python -m lgacc.book.run` or `lgacc reproduce claims`.\n")
    assert MODULE_PATH.findall(prose(text)) == ["lgacc.paper."]
    assert not MODULE_PATH.findall(prose(text.split("\n\n", 1)[1]))


@pytest.mark.parametrize("name,text", _pages(), ids=[name for name, _ in _pages()])
def test_no_module_path_in_reader_prose(name, text):
    lines = [line.strip() for line in prose(text).splitlines() if MODULE_PATH.search(line)]
    assert not lines, f"{name}: module paths in reader prose: {lines}"


def test_a_bound_sentence_reads_its_parameter_counts_in_words():
    """The scaling bounds write e-notation (they know no page units); the claims' explanations read it in words."""
    from lgacc.paper.claims.limits import in_words

    text = "the floor reaches 80 GB at 2.05e+14 parameters (between X442 and X444; 2.42e+14 read log-log)"
    assert in_words(text) == ("the floor reaches 80 GB at 205 trillion parameters (between X442 and X444; "
                              "242 trillion parameters read log-log)")
    assert in_words("X160 at 25 % overhead") == "X160 at 25 % overhead"


def test_a_claims_sentence_shows_no_e_notation():
    """The claims page's sentence reads the record's "how" and explanation in the page's numbers."""
    from lgacc.book.notebook.claims import claim_markdown
    from lgacc.paper.findings import numbers_in_words

    assert numbers_in_words("X160 (1.65e+11 parameters) is the largest; at 1e+10") == (
        "X160 (165 billion parameters) is the largest; at 1 × 10¹⁰")
    assert numbers_in_words("X1e5, eq:a1e2 and 2.5 d") == "X1e5, eq:a1e2 and 2.5 d"  # names are not numbers
    record = {"verdict": "differs", "printed": "25 T", "reproduced": 2.3e13, "unit": "parameters",
              "where": "sec:scaling", "tolerance": "at the printed digits",
              "how": "X640 (2.1e+13 parameters) and X660 (2.3e+13)", "explanation": "the floor is 2.42e+14 parameters"}
    text = claim_markdown(record)
    assert not re.search(r"\de[+-]?\d", text), text
    assert "21 trillion parameters" in text and "242 trillion parameters" in text
