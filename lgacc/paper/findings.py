"""The book's front-page findings, computed from the scorecard and the prose claims.

Nothing here is typed in: every count and number comes from
:func:`lgacc.paper.scorecard.scorecard` and :func:`lgacc.paper.claims.claims_records`, on the
hardware the paper's numbers are for (:data:`lgacc.paper.PAPER_HARDWARE`) whatever
hardware the book is built for: a printed number can only be reproduced, or not, on
the hardware it was computed for.  The findings change when the package does.
The scorecard's ``verdict`` column (reproduced / explained / paper inconsistent / differs /
not reproduced, as the claims registry and the scorecard give them) is used when present;
otherwise its ``status`` is mapped onto the same groups.  A verdict this module does not know
is counted under its own name, after the known ones: the classes are never merged.
"""

from __future__ import annotations

import re

import pandas as pd

#: Verdict groups in the order a reader wants them (the claims' verdicts, :data:`lgacc.paper.claims.VERDICTS`).
VERDICTS = ("reproduced", "explained", "paper inconsistent", "differs", "not reproduced", "built")
#: The verdicts a page may show as confirmed (:data:`lgacc.paper.claims.CONFIRMING`, kept equal by a test:
#: this module is pure formatting and imports nothing from the claims).
CONFIRMING = ("reproduced", "explained")
#: One mark per verdict, defined here once and used on every page (the front page's legend, the claims and
#: reading-matrix pages, the scorecard); a figure with no printed values is ``built``, counted apart.
MARKS = {"reproduced": "✓", "explained": "≈", "differs": "✗", "paper inconsistent": "⚠", "not reproduced": "–",
         "built": "▫"}
#: What each mark means (the legend).
MARK_MEANINGS = {
    "reproduced": "agrees with the printed number under the paper reading",
    "explained": "agrees once a documented fact outside the analysis is applied to every claim, breaking none",
    "differs": "does not agree under the paper reading; the readings that would reproduce it are named",
    "paper inconsistent": "no choice where the paper is silent reaches the printed number, and a computation shows it",
    "not reproduced": "nothing computed",
    "built": "a figure with no printed values: it builds, nothing to grade",
}


def verdict_mark(verdict: str) -> str:
    """The mark of a verdict (:data:`MARKS`); an unknown verdict keeps its name."""
    return MARKS.get(verdict, verdict)


def marks_legend() -> str:
    """The legend, one line: ``✓ reproduced (agrees ...) · ≈ explained (...) · ...``."""
    return " · ".join(f"{MARKS[v]} *{v}*: {MARK_MEANINGS[v]}" for v in MARKS)


def verdict_of(row: pd.Series) -> str:
    """One of :data:`VERDICTS` for a scorecard row (its own ``verdict`` when it has one)."""
    verdict = row.get("verdict") if hasattr(row, "get") else None
    if isinstance(verdict, str) and verdict:
        return verdict
    status = str(row.get("status", ""))
    if status.startswith("agrees") or status.startswith("reproduced"):
        return "reproduced"
    if status.startswith("not reproduced") or status.startswith("fails"):
        return "not reproduced"
    return "differs"


def with_verdicts(card: pd.DataFrame) -> pd.DataFrame:
    """The scorecard with a ``verdict`` column (computed from ``status`` if missing)."""
    card = card.copy()
    card["verdict"] = [verdict_of(row) for _, row in card.iterrows()]
    return card


def verdict_counts(card: pd.DataFrame) -> dict[str, int]:
    """Items per verdict: every class of :data:`VERDICTS` (zero if absent), then any other class found."""
    counts = with_verdicts(card)["verdict"].value_counts()
    known = {verdict: int(counts.get(verdict, 0)) for verdict in VERDICTS}
    return known | {str(v): int(n) for v, n in counts.items() if v not in known}


NUMBER_WORDS = ((1e18, "quintillion"), (1e15, "quadrillion"), (1e12, "trillion"), (1e9, "billion"), (1e6, "million"))


def readable_value(value: float, unit: str) -> str:
    """``1.22e14 parameters`` -> ``122 trillion parameters``; ``0.428 fraction`` -> ``42.8 %``; ``1.976 ratio`` -> ``1.98×``; ``2417.5 samples``
    -> ``2,417 samples``; ``6.23e24 flop`` -> ``6.23 × 10²⁴ flop`` (never e-notation)."""
    if unit == "fraction":  # 42.8 %, 3,390 % (three digits, never e-notation)
        percent = float(f"{100 * value:.3g}")
        return f"{percent:,.0f} %" if abs(percent) >= 1000 else f"{percent:.3g} %"
    if unit == "ratio" or unit.startswith("ratio ("):  # 1.98×, 0.971× (time without partition / ...)
        return f"{value:.3g}×{unit[len('ratio'):]}"
    if unit == "parameters":
        for scale, word in NUMBER_WORDS:
            if abs(value) >= scale:
                return f"{value / scale:.3g} {word} parameters"
    if abs(value) >= 1e3 and abs(value) < 1e9:  # counts as people write them: 2,417 samples
        return f"{value:,.0f} {unit}"
    if value and (abs(value) >= 1e9 or abs(value) < 1e-3):  # 6.23 × 10²⁴ flop, not 6.23e+24
        mantissa, exponent = f"{value:.2e}".split("e")
        return f"{float(mantissa):.3g} × 10{str(int(exponent)).translate(_SUPERSCRIPTS)} {unit}"
    return f"{value:.3g} {unit}"


_E_NOTATION = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?e[+-]?\d+)( parameters)?(?![\w.])")


def numbers_in_words(text: str) -> str:
    """A sentence's e-notation as the page writes numbers (:func:`readable_value`): ``"X160 (1.65e+11
    parameters)"`` -> ``"X160 (165 billion parameters)"``, ``"at 1e+10"`` -> ``"at 1 × 10¹⁰"``; the rest untouched."""
    def replace(match: re.Match) -> str:
        value = float(match.group(1))
        return readable_value(value, "parameters") if match.group(2) else readable_value(value, "").strip()
    return _E_NOTATION.sub(replace, text)


def claim_verdict(record: dict) -> str:
    """A claim record's verdict (:mod:`lgacc.paper.claims`); a record without one: reproduced when it agrees."""
    verdict = record.get("verdict")
    if isinstance(verdict, str) and verdict:
        return verdict
    return "reproduced" if record.get("agrees") else "differs"


_SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
#: A power of ten as the paper prints it in LaTeX ("6.24\\times 10^{24}").
_PRINTED_POWER = re.compile(r"(\d[\d.]*)\s*\\times\s*10\^\{?(-?\d+)\}?")


def printed_plain(text: str) -> str:
    """The paper's printed text with its LaTeX powers of ten in plain characters, for places no math is typeset
    (a table cell, a summary): ``6.24\\times 10^{24} flop`` -> ``6.24 × 10²⁴ flop``."""
    return _PRINTED_POWER.sub(lambda m: f"{m.group(1)} × 10{m.group(2).translate(_SUPERSCRIPTS)}", text)


def findings_markdown(card: pd.DataFrame, records: list[dict], hardware_name: str, built_for: str | None = None) -> str:
    """The front page's findings in detail, under its first screen (:mod:`lgacc.book.frontpage`): the
    verdicts counted, the tables and figures that differ with how many of their cells agree, and where
    the claims are, for the scorecard and claims graded on ``hardware_name``.

    ``built_for`` names the hardware the book is built for; when it is another, a sentence says
    why the grading stays on ``hardware_name`` and where the build's own numbers are."""
    counts = verdict_counts(card)
    built_count = counts.pop("built", 0)  # figures with no printed values: built, counted apart
    total = sum(counts.values())
    card = with_verdicts(card)
    artifacts = card[card["kind"].isin(["table", "figure"])]
    built = artifacts[artifacts["verdict"] == "built"]
    tables = artifacts[artifacts["verdict"] != "built"]
    differing_artifacts = tables[~tables["verdict"].isin(["reproduced"])]
    claims = pd.Series([str(r.get("verdict", "")) for r in records], dtype=object).value_counts()
    shown = [(verdict, n) for verdict, n in counts.items() if n]
    lines = [
        f"On **{hardware_name}**, the paper's {total} graded items (tables, figures and numbers stated in prose) are "
        + ", ".join(f"{n} {verdict_mark(verdict)} *{verdict}*" for verdict, n in shown)
        + (f"; {built_count} figures print no values (*built*, counted apart)" if built_count else "") + ". "
        "The {doc}`scorecard </generated/scorecard>` lists each with the size of the difference.",
        "",
    ]
    if built_for and built_for != hardware_name:
        lines += [
            f"This book is built for **{built_for}**. The paper's numbers are for {hardware_name}, so they are "
            f"graded there; the tables and figures show {built_for}'s numbers beside the printed ones, and "
            f"{{doc}}`today's hardware </generated/todays_hardware>` grades the paper's conclusions on it.",
            "",
        ]
    if len(tables):
        agreeing = len(tables) - len(differing_artifacts)
        lines += [f"**Tables and figures.** {agreeing} of {len(tables)} graded tables and figures reproduce"
                  + (f" ({len(built)} more figures print no values: *built*, counted apart)" if len(built) else "")
                  + (":" if len(differing_artifacts) else ".")]
        for _, row in differing_artifacts.iterrows():
            agreed = re.sub(r"^(\d+) of (\d+) agree$", r"\1 of \2 printed cells agree", str(row["reproduced"]))
            lines.append(f"- {verdict_mark(row['verdict'])} {{doc}}`{row['label']} </generated/{row['page']}>`: {agreed} (*{row['verdict']}*).")
        lines.append("")
    if len(claims):
        lines += [f"**Numbers stated in prose.** {len(records)} claims: "
                  + ", ".join(f"{int(claims[v])} *{v}*" for v in dict.fromkeys([*VERDICTS, *claims.index]) if claims.get(v, 0))
                  + ". The {doc}`claims page </generated/claims>` gives each with its computation and, where it "
                  "differs, the readings tried.", ""]
    return "\n".join(lines)


def placeholder_markdown(reason: str) -> str:
    return f"The findings are not available for this build: {reason}\n"
