"""Every number the paper's prose prints, found in its LaTeX source, and whether it is graded or excused.

The prose is the document body outside equations and display math, tables, figures, citations, labels,
references and comments (:func:`prose_paragraphs`).  A *number* is a numeral (``4.5``, ``33\\%``, ``7400``) or a
number word (``two``, ``twice``, ``half``, ``dozens``, ``several``: :data:`NUMBER_WORDS`) outside inline math; a
year (1900-2099) is a date, not a number.  A number is *graded* when it falls inside the printed text of a claim of
``data/paper/claims.yaml`` (its ``printed``, or the quote of its ``where`` after the section name), and *excused*
when it falls inside a passage of ``data/paper/excused_numbers.yaml``, each with its reason.  The test
(``tests/test_prose_numbers.py``) fails on any number neither graded nor excused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from .printed import PAPER_DIR

__all__ = ["NUMBER_WORDS", "ProseNumber", "prose_paragraphs", "prose_numbers", "excuses", "ungraded_numbers"]

#: The paper's source, beside the repository (``../shared/paper``, as ``data/paper/claims.yaml`` names it).
TEX = PAPER_DIR.parent.parent.parent / "shared" / "paper" / "layered-gradient-accumulation.tex"
#: Words that state a number (counted as printed numbers).
NUMBER_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
                "twenty", "hundred", "hundreds", "thousand", "thousands", "twice", "half", "dozen", "dozens",
                "several", "quarter")
_ENVIRONMENTS = ("equation", "equation*", "align", "align*", "table", "table*", "figure", "figure*", "tabular", "abstract_x")
_NUMBER = re.compile(r"(?<![\w\\.])(\d+(?:\.\d+)?)(?![\w])|\b(" + "|".join(NUMBER_WORDS) + r")\b", re.IGNORECASE)


@dataclass(frozen=True)
class ProseNumber:
    paragraph: int
    text: str
    start: int
    context: str


def _tex(path: Path | None = None) -> str:
    path = path or TEX
    return path.read_text()


def prose_paragraphs(path: Path | None = None) -> list[str]:
    """The body's paragraphs with everything that is not prose blanked out (replaced by spaces, so that a
    passage quoted from the source still matches)."""
    text = _tex(path)
    body = text[text.index(r"\begin{document}"):text.index(r"\end{document}")]
    body = re.sub(r"(?<!\\)%.*", "", body)
    for env in _ENVIRONMENTS:
        e = re.escape(env)
        body = re.sub(r"\\begin\{" + e + r"\}.*?\\end\{" + e + r"\}", " ", body, flags=re.DOTALL)
    body = re.sub(r"\$\$.*?\$\$|\\\[.*?\\\]", " ", body, flags=re.DOTALL)
    body = re.sub(r"(?<!\\)\$.*?(?<!\\)\$", " ", body, flags=re.DOTALL)  # inline math: symbols, not printed numbers
    body = re.sub(r"\\(cite|label|ref|eqref|includegraphics|url|href|section|subsection|subsubsection|paragraph|"
                  r"counterwithin|usepackage|title|author|thanks)\*?(\[[^\]]*\])?\{[^}]*\}", " ", body)
    body = re.sub(r"X_?\{?\[?x?\]?\}?", " ", body)  # model names X_[x]
    return [re.sub(r"\s+", " ", p).strip() for p in re.split(r"\n\s*\n", body) if p.strip()]


def _is_date(token: str) -> bool:
    return token.isdigit() and len(token) == 4 and 1900 <= int(token) <= 2099


def prose_numbers(path: Path | None = None) -> list[ProseNumber]:
    found = []
    for i, paragraph in enumerate(prose_paragraphs(path)):
        for m in _NUMBER.finditer(paragraph):
            token = m.group(0)
            if _is_date(token):
                continue
            found.append(ProseNumber(i, token, m.start(), paragraph[max(0, m.start() - 60):m.end() + 60]))
    return found


def _normal(text: str) -> str:
    text = text.replace("\\%", "%").replace("\\times", "×")
    return re.sub(r"\s+", " ", text).strip().lower()


def excuses() -> list[dict]:
    """The excused passages: ``{"text", "reason"}`` each (``data/paper/excused_numbers.yaml``)."""
    return yaml.safe_load((PAPER_DIR / "excused_numbers.yaml").read_text())["excused"]


def _graded_passages() -> list[str]:
    from .claims import printed_claims

    passages = []
    for claim in printed_claims():
        passages.append(claim.printed)
        quote = claim.where.split(": ", 1)[-1].split(" (")[0]
        passages += [part for part in quote.split(" ... ") if len(part) > 8]
    return passages


def _covered(paragraph: str, passages: list[str]) -> list[tuple[int, int]]:
    text = _normal(paragraph)
    spans = []
    for passage in passages:
        needle = _normal(passage)
        if not needle:
            continue
        for m in re.finditer(re.escape(needle), text):
            spans.append((m.start(), m.end()))
    return spans


def ungraded_numbers(path: Path | None = None) -> list[ProseNumber]:
    """The prose numbers neither graded by a claim nor excused."""
    paragraphs = prose_paragraphs(path)
    graded = _graded_passages()
    excused = [e["text"] for e in excuses()]
    out = []
    for number in prose_numbers(path):
        paragraph = paragraphs[number.paragraph]
        # positions in the normalised text: normalise the prefix the same way
        position = len(_normal(paragraph[:number.start] + "x")) - 1
        spans = _covered(paragraph, graded) + _covered(paragraph, excused)
        if not any(a <= position < b for a, b in spans):
            out.append(number)
    return out
