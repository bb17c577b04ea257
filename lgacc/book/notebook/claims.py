"""The paper's prose claims as sentences, the same wherever a claim appears (claims page, figure
pages), or one sentence saying why they cannot be computed on this hardware.
"""

from __future__ import annotations

import html
from typing import Any, Sequence

import pandas as pd

from lgacc.paper.findings import verdict_mark

from .comparisons import AGREE_MARK, DIFFER_MARK
from .display import show_markdown, try_show
from .typeset import printed_math

__all__ = ["claim_markdown", "show_claims", "claims_or_explain", "claims_table", "switches_table"]


def claim_markdown(record: dict) -> str:
    """One claim as a sentence, the same wherever the claim appears (claims page, figure pages).

    ``record`` is a row of :func:`lgacc.paper.claims.claims_records`.
    """
    from lgacc.paper.findings import CONFIRMING, claim_verdict, numbers_in_words, readable_value

    verdict = claim_verdict(record)
    mark = verdict_mark(verdict)
    printed = printed_math(str(record["printed"]))
    value = "not computed" if record.get("reproduced") is None else readable_value(record["reproduced"], record["unit"])
    how = numbers_in_words(str(record.get("how") or "").strip())  # the page's numbers, never e-notation
    text = (f"- {mark} *{verdict}* — **{record['where']}** — the paper: *{printed}*; the package: **{value}** "
            f"({record['tolerance']}).{' ' + how if how else ''}")
    if verdict != "reproduced" and record.get("explanation"):
        text += f" **Verdict:** {numbers_in_words(str(record['explanation']))}."
    return text


def show_claims(records: Sequence[dict], ids: Sequence[str] | None = None) -> None:
    """The claims with ``ids`` (default: all), one sentence each."""
    if not records:  # not computable on this hardware: claims_or_explain has said why
        return
    chosen = [r for r in records if ids is None or r["id"] in ids]
    if not chosen:
        show_markdown("No claim of the paper is read off this page.")
        return
    show_markdown("\n".join(claim_markdown(r) for r in chosen))


def claims_or_explain(hardware: Any, ids: Sequence[str] | None = None) -> list[dict]:
    """The claims' records for ``hardware`` (all, or those with ``ids``); if they cannot be computed on
    it (e.g. the model does not fit its memory), one sentence saying so and an empty list, never a traceback."""
    from lgacc.paper.claims import claims_records

    records = try_show("The paper's prose claims", claims_records, hardware, ids)
    return records if records is not None else []


def _breakable_id(claim_id: str) -> str:
    """A claim id that may break after its underscores (``ethernet_unpartitioned_only_smallest``)."""
    return html.escape(claim_id).replace("_", "_<wbr>")


def _value(value: Any, unit: str) -> str:
    from lgacc.paper.findings import readable_value

    return "—" if value is None or value != value else html.escape(readable_value(value, unit))


def claims_table(records: Sequence[dict]) -> pd.DataFrame:
    """One row per claim, four columns that fit a page: the claim's id, the paper's words, the package's
    value in the claim's unit (never e-notation), and the verdict with its mark.  HTML cells: show them
    with ``show_table(..., escape=False)``."""
    from lgacc.paper.findings import CONFIRMING, claim_verdict

    def verdict_cell(record: dict) -> str:  # the mark follows the verdict: an explained claim is confirmed
        verdict = claim_verdict(record)
        return f"{verdict_mark(verdict)}\u00a0{html.escape(verdict)}"

    return pd.DataFrame([{
        "claim": _breakable_id(r["id"]),
        "the paper": html.escape(str(r["printed"])),
        "the package": _value(r.get("reproduced"), r["unit"]),
        "verdict": verdict_cell(r),
    } for r in records], columns=["claim", "the paper", "the package", "verdict"])


def switches_table(records: Sequence[dict]) -> pd.DataFrame:
    """Each switch tried on a differing claim: the claim, the switch, the value under the defaults and
    under the switch (in the claim's unit; "no change" where the switch does not move it) and whether it
    then agrees.  From :func:`lgacc.paper.claims.switch_effects`; HTML cells, as :func:`claims_table`."""
    from lgacc.paper.claims import switch_effects
    from lgacc.paper.claims.words import name_in_words

    units = {r["id"]: r["unit"] for r in records}
    return pd.DataFrame([{
        "claim": _breakable_id(e["claim"]),
        "switch": html.escape(name_in_words(str(e["switch"]))),  # its meaning, not its code name
        "default": _value(e["default"], units[e["claim"]]),
        "with the switch": _value(e["switched"], units[e["claim"]]) if e["moves"] else "no change",
        "agrees": AGREE_MARK if e["agrees"] else DIFFER_MARK,
    } for e in switch_effects(records) if e["moves"] or e["agrees"]], columns=["claim", "switch", "default", "with the switch", "agrees"])
