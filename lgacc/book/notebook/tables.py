"""Tables for people: no index, formatted cells that keep a number with its unit, scrolling when
wider than the page; a wide table cut into narrower ones; a configuration as a one-row table.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

import pandas as pd

from .display import show_html
from .formats import format_int, readable_frame
from .typeset import link_equations, printed_math

__all__ = ["DENSE_COLUMNS", "table_html", "show_table", "show_wide_table", "config_table", "SYMBOL_LATEX"]

#: From this many columns a table is set dense (smaller type, tighter cells; ``book/_static/lgacc.css``),
#: so that a sweep's or a search's columns fit the text column.
DENSE_COLUMNS = 7


def table_html(frame: pd.DataFrame, escape: bool = True, classes: str = "") -> str:
    """A table without index, in a container that scrolls sideways if it is wider than the page;
    equation labels in its cells become numbered links, printed powers of ten are typeset."""
    dense = " lgacc-dense" if frame.shape[1] >= DENSE_COLUMNS else ""
    body = frame.to_html(index=False, escape=escape, border=0, classes=f"dataframe lgacc-table{dense} {classes}".strip(),
                         na_rep="—")
    body = printed_math(link_equations(body), r"\(", r"\)")
    return f'<div class="lgacc-scroll mathjax_process" style="overflow-x: auto; max-width: 100%">{body}</div>'


#: A cell that is one quantity: a number and its unit ("8.61 d", "9.44 GiB", "2.25 Pflop/s", "1.26 T").
_QUANTITY = re.compile(r"(-?[\d.,]+(?:e[+-]?\d+)?) ([^\s\d<>&]+)")


def show_table(frame: pd.DataFrame, formats: dict[str, Any] | None = None, titles: dict[str, str] | None = None,
               escape: bool = True) -> None:
    """Display ``frame`` formatted for people: no index, integers, d/h/min, sizes, scrolling if wide.

    The table's text wraps to fit the column, but a cell holding one quantity never breaks between
    its number and its unit ("8.61 d" on one line, not "8.61" above "d")."""
    shown = readable_frame(frame, formats, titles)
    for position in range(shown.shape[1]):
        shown.isetitem(position, shown.iloc[:, position].map(
            lambda text: _QUANTITY.sub("\\1\u00a0\\2", text) if isinstance(text, str) and _QUANTITY.fullmatch(text) else text))
    show_html(table_html(shown, escape=escape))


def show_wide_table(frame: pd.DataFrame, key: str, max_columns: int = 6, formats: dict[str, Any] | None = None,
                    titles: dict[str, str] | None = None) -> None:
    """A wide table as several narrower ones, each repeating the ``key`` column."""
    others = [c for c in frame.columns if c != key]
    for start in range(0, len(others), max_columns):
        show_table(frame[[key, *others[start:start + max_columns]]], formats, titles)


def config_table(config: Any, fields: Sequence[str] = ("n_b", "n_l", "n_a", "n_mu", "b_mu", "offload")) -> str:
    """A configuration as a small Markdown table (one row), instead of a parenthetical."""
    values = [getattr(config, name) if not isinstance(config, dict) else config[name] for name in fields]
    header = "| " + " | ".join(f"${SYMBOL_LATEX.get(name, name)}$" for name in fields) + " |"
    rule = "|" + "---|" * len(fields)
    cells = "| " + " | ".join(
        ("yes" if v else "no") if isinstance(v, bool) else format_int(v) if isinstance(v, (int, float)) else str(v)
        for v in values
    ) + " |"
    return "\n".join([header, rule, cells])


SYMBOL_LATEX = {
    "n_b": "n_b", "n_l": "n_l", "n_a": "n_a", "n_mu": r"n_\mu", "b_mu": r"b_\mu", "b": "b",
    "n_gpu": r"n_\text{gpu}", "offload": r"\text{offload}", "d_l": "d_l", "d_m": "d_m",
}
