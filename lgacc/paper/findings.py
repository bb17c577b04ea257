"""The book's front-page findings, computed from the scorecard and the prose claims.

Nothing here is typed in: every count and number comes from
:func:`lgacc.paper.scorecard.scorecard` and :func:`lgacc.paper.claims.claims_records`, on the
hardware the paper's numbers are for (:data:`lgacc.paper.PAPER_HARDWARE`) whatever
hardware the book is built for: a printed number can only be reproduced, or not, on
the hardware it was computed for.  The findings change when the package does.
The scorecard's ``verdict`` column (reproduced / explained / paper inconsistent /
differs / not reproduced) is used when present; otherwise its ``status`` is mapped
onto the same groups.  A claim's verdict is the one :mod:`lgacc.paper.claims` gives
(the claims page, the scorecard and the other pages read the same record): the front
page confirms a number exactly when that verdict does (:func:`lgacc.paper.claims.confirms`).
"""

from __future__ import annotations

import re
from typing import Iterable

import pandas as pd

#: Verdict groups in the order a reader wants them (the claims' verdicts, :data:`lgacc.paper.claims.VERDICTS`).
VERDICTS = ("reproduced", "explained", "paper inconsistent", "differs", "not reproduced")
#: The verdicts a page may show as confirmed (:data:`lgacc.paper.claims.CONFIRMING`, kept equal by a test:
#: this module is pure formatting and imports nothing from the claims).
CONFIRMING = ("reproduced", "explained")


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
    counts = with_verdicts(card)["verdict"].value_counts()
    return {verdict: int(counts.get(verdict, 0)) for verdict in VERDICTS}


def _ratio_text(paper: float, reproduced: float) -> str:
    if not paper or not reproduced or paper != paper or reproduced != reproduced:
        return ""
    ratio = reproduced / paper
    if 0.9 <= ratio <= 1.1:  # close: a signed percentage says more than "×1" or "÷1"
        return f"{100 * (ratio - 1):+.2g} %".replace("-", "−")
    return f"×{ratio:.2g}" if ratio >= 1 else f"÷{1 / ratio:.2g}"


NUMBER_WORDS = ((1e18, "quintillion"), (1e15, "quadrillion"), (1e12, "trillion"), (1e9, "billion"), (1e6, "million"))


def readable_value(value: float, unit: str) -> str:
    """``1.22e14 parameters`` -> ``122 trillion parameters``; ``0.428 fraction`` -> ``42.8 %``."""
    if unit == "fraction":
        return f"{100 * value:.3g} %"
    if unit == "parameters":
        for scale, word in NUMBER_WORDS:
            if abs(value) >= scale:
                return f"{value / scale:.3g} {word} parameters"
    if abs(value) >= 1e3 and abs(value) < 1e9:  # counts as people write them: 2,417 samples
        return f"{value:,.0f} {unit}"
    return f"{value:.3g} {unit}"


def claim_verdict(record: dict) -> str:
    """A claim record's verdict (:mod:`lgacc.paper.claims`); a record without one: reproduced when it agrees."""
    verdict = record.get("verdict")
    if isinstance(verdict, str) and verdict:
        return verdict
    return "reproduced" if record.get("agrees") else "differs"


def claim_lines(records: Iterable[dict], agree: bool) -> list[str]:
    """One Markdown bullet per claim the verdict confirms (or not): the paper's words, the number, the size of
    the gap, and for an explained claim the reading that reproduces it."""
    lines = []
    for r in records:
        verdict = claim_verdict(r)
        if (verdict in CONFIRMING) != agree or r.get("reproduced") is None:
            continue
        size = _ratio_text(r.get("paper"), r.get("reproduced"))
        gap = "" if bool(r.get("agrees")) or not size else f" ({size})"
        printed = re.sub(r"(\d[\d.]*\s*\\times\s*10\^\{?\d+\}?)", r"$\1$", r["printed"])
        line = f"- {r['where']}: the paper says *{printed}*; the package computes **{readable_value(r['reproduced'], r['unit'])}**{gap}"
        alternative = r.get("alternative") or {}
        if verdict == "explained" and alternative.get("assumption"):
            line += f"; *explained*: with {alternative['assumption']} it computes {alternative['reproduced']:.3g}"
        elif verdict not in CONFIRMING:
            line += f" (*{verdict}*)"
        lines.append(line + ".")
    return lines


def findings_markdown(card: pd.DataFrame, records: list[dict], hardware_name: str, built_for: str | None = None) -> str:
    """The front page's findings section, for the scorecard and claims graded on ``hardware_name``.

    ``built_for`` names the hardware the book is built for; when it is another, a sentence says
    why the grading stays on ``hardware_name`` and where the build's own numbers are."""
    counts = verdict_counts(card)
    total = sum(counts.values())
    card = with_verdicts(card)
    tables = card[card["kind"].isin(["table", "figure"])]
    differing_artifacts = tables[tables["verdict"] == "differs"]
    confirmed = claim_lines(records, agree=True)
    contradicted = claim_lines(records, agree=False)
    lines = [
        f"On **{hardware_name}**, of the paper's {total} graded items (tables, figures and numbers stated in prose), "
        f"{counts['reproduced']} are reproduced, {counts['explained']} differ for a reason the book explains by a "
        f"computation, {counts['paper inconsistent']} contradict the paper's own rules (no reading of them reaches "
        f"the printed number), {counts['differs']} differ, and {counts['not reproduced']} are not reproduced. "
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
        lines += [f"**Tables and figures.** {agreeing} of {len(tables)} tables and figures reproduce."]
        for _, row in differing_artifacts.iterrows():
            agreed = re.sub(r"^(\d+) of (\d+) agree$", r"\1 of \2 printed cells agree", str(row["reproduced"]))
            lines.append(f"- {{doc}}`{row['label']} </generated/{row['page']}>`: {agreed}.")
        lines.append("")
    lines += [f"**Conclusions the reproduction confirms** ({len(confirmed)} claims, reproduced or explained by a "
              "computed reading):", "", *confirmed, ""]
    lines += [f"**Numbers it does not confirm** ({len(contradicted)} claims, each with its computation on the "
              "{doc}`claims page </generated/claims>`):", "", *(contradicted or ["- none"]), ""]
    return "\n".join(lines)


def placeholder_markdown(reason: str) -> str:
    return f"The findings are not available for this build: {reason}\n"
