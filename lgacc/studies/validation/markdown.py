"""A frame of text cells (the chapter's tables, :func:`.peers.side_by_side_tables`,
:func:`.recipe_effects.recipe_effects_table`) as a Markdown table: the same cells for a reader of text."""

from __future__ import annotations

from typing import Sequence

import pandas as pd

__all__ = ["markdown_table"]


def markdown_table(frame: pd.DataFrame, *, left: int = 1, code: Sequence[str] = ()) -> list[str]:
    """The lines of ``frame`` as a Markdown table: its first ``left`` columns aligned left, the others (numbers)
    right; the cells of the ``code`` columns in backticks; non-breaking spaces (kept on one line on a page) plain."""
    header = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "---|" * left + "---:|" * (frame.shape[1] - left)
    rows = ["| " + " | ".join(f"`{cell}`" if column in code else str(cell) for column, cell in row.items()) + " |"
            for _, row in frame.iterrows()]
    return [line.replace("\u00a0", " ") for line in (header, rule, *rows)]
