"""One-line verdicts for measured-vs-analytic tables (the ``agrees`` column)."""

from __future__ import annotations

import pandas as pd

AGREE_MARK = "✓"
DIFFER_MARK = "✗"


def agreement_sentence(comparison: pd.DataFrame) -> str:
    """Whether every measured value equals its closed form; rows whose formula does not
    apply (``agrees`` is None) are counted apart, not as agreements."""
    applicable = comparison["agrees"].dropna()
    agree = int(applicable.astype(bool).sum())
    total = len(applicable)
    skipped = len(comparison) - total
    note = f" ({skipped} value(s) outside the formula's assumptions not compared)" if skipped else ""
    if total and agree == total:
        return f"{AGREE_MARK} All {total} measured values equal the paper's closed forms exactly{note}."
    return f"{DIFFER_MARK} {total - agree} of {total} measured values differ from the paper's closed forms{note}."
