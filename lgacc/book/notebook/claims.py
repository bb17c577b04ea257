"""The paper's prose claims as sentences, the same wherever a claim appears (claims page, figure
pages), or one sentence saying why they cannot be computed on this hardware.
"""

from __future__ import annotations

from typing import Any, Sequence

from .comparisons import AGREE_MARK, DIFFER_MARK
from .display import show_markdown, try_show
from .typeset import printed_math

__all__ = ["claim_markdown", "show_claims", "claims_or_explain"]


def claim_markdown(record: dict) -> str:
    """One claim as a sentence, the same wherever the claim appears (claims page, figure pages).

    ``record`` is a row of :func:`lgacc.paper.claims.claims_records`.
    """
    from lgacc.paper.findings import CONFIRMING, claim_verdict, readable_value

    verdict = claim_verdict(record)
    mark = AGREE_MARK if verdict in CONFIRMING else DIFFER_MARK
    printed = printed_math(str(record["printed"]))
    value = "not computed" if record.get("reproduced") is None else readable_value(record["reproduced"], record["unit"])
    how = str(record.get("how") or "").strip()
    text = (f"- {mark} *{verdict}* — **{record['where']}** — the paper: *{printed}*; the package: **{value}** "
            f"({record['tolerance']}).{' ' + how if how else ''}")
    if verdict != "reproduced" and record.get("explanation"):
        text += f" **Verdict:** {record['explanation']}."
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
