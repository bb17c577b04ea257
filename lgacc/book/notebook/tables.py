"""Tables for people: no index, formatted cells that keep a number with its unit, scrolling when
wider than the page; a wide table cut into narrower ones; a configuration as a one-row table.
"""

from __future__ import annotations

import html
import re
from typing import Any, Sequence

import pandas as pd

from .display import show_html
from .formats import COLUMN_TITLES, format_int, readable_frame
from .typeset import link_equations, printed_math

__all__ = ["DENSE_COLUMNS", "SWEEP_COLUMNS", "table_html", "show_table", "show_sweep_table", "show_wide_table", "config_table",
           "SYMBOL_LATEX"]

#: From this many columns a table is set dense (smaller type, tighter cells; ``book/_static/lgacc.css``),
#: so that a sweep's or a search's columns fit the text column.
DENSE_COLUMNS = 7


def table_html(frame: pd.DataFrame, escape: bool = True, classes: str = "", notes: str | None = None,
               stack: bool = False) -> str:
    """A table without index, in a container that scrolls sideways if it is wider than the page;
    equation labels in its cells become numbered links, printed powers of ten are typeset.

    ``notes`` names a column shown as a line under each row, across the whole table, instead of as a
    column: a row's key columns stay side by side on one screen and its long text reads underneath.
    A long heading may break after an underscore (``parameter_<wbr>buffers``).  ``stack``: on a phone each
    row reads as a block, one line per cell headed by its column (``book/_static/lgacc.css``)."""
    noted = frame[notes].tolist() if notes is not None else None
    shown = frame.drop(columns=[notes]) if notes is not None else frame
    shown = shown.rename(columns={c: _breakable(str(c)) for c in shown.columns})
    dense = " lgacc-dense" if shown.shape[1] >= DENSE_COLUMNS else ""
    with_notes = " lgacc-notes" if noted is not None else ""
    stacked = " lgacc-stack" if stack else ""
    body = shown.to_html(index=False, escape=escape, border=0, na_rep="—",
                         classes=f"dataframe lgacc-table{dense}{with_notes}{stacked} {classes}".strip())
    body = body.replace("_&lt;wbr&gt;", "_<wbr>")  # headings are escaped with the cells; the break stays markup
    body = _IDENTIFIER_CELL.sub(lambda m: f"<td>{_breakable(m.group(1))}</td>", body)
    if noted is not None:
        body = _notes_under_rows(body, noted, shown.shape[1], escape)
    if stack:
        body = _labelled_cells(body, [re.sub(r"<[^>]+>", "", str(c)) for c in shown.columns])
    body = printed_math(link_equations(body), r"\(", r"\)")
    return f'<div class="lgacc-scroll mathjax_process" style="overflow-x: auto; max-width: 100%">{body}</div>'


#: A cell holding one long identifier (a claim's id such as ``unlimited_node_memory_limit``): it may break
#: after its underscores, or it alone sets its column's width.
_IDENTIFIER_CELL = re.compile(r"<td>([A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+)</td>")


def _breakable(heading: str) -> str:
    """A long heading that may break after each underscore (one without spaces: words already break between them,
    and ``n_b × n_l × n_a`` must not become ``n_`` over ``b``)."""
    return heading.replace("_", "_<wbr>") if len(heading) > 8 and "<" not in heading and " " not in heading else heading


def _notes_under_rows(body: str, notes: Sequence[Any], columns: int, escape: bool) -> str:
    """Each body row of ``body`` followed by a row holding its note across ``columns`` cells."""
    head, sep, rest = body.partition("<tbody>")
    rows = rest.split("</tr>")
    out = []
    for index, row in enumerate(rows[:-1]):
        out.append(row.replace("<tr>", '<tr class="lgacc-row">', 1) + "</tr>")
        note = notes[index] if index < len(notes) else ""
        if note is not None and str(note).strip() and str(note) != "nan":
            text = html.escape(str(note)) if escape else str(note)
            out.append(f'\n    <tr class="lgacc-note"><td colspan="{columns}">{text}</td></tr>')
    return head + sep + "".join(out) + rows[-1]


def _labelled_cells(body: str, headings: Sequence[str]) -> str:
    """Each body cell with its column's heading as ``data-label`` (a stacked row shows it before the value)."""
    head, sep, rest = body.partition("<tbody>")
    rows = rest.split("</tr>")
    for index, row in enumerate(rows):
        cells = row.split("<td>")
        rows[index] = cells[0] + "".join(f'<td data-label="{html.escape(headings[n] if n < len(headings) else "")}">{cell}'
                                         for n, cell in enumerate(cells[1:]))
    return head + sep + "</tr>".join(rows)


#: A cell that is one quantity: a number and its unit ("8.61 d", "9.44 GiB", "2.25 Pflop/s", "1.26 T").
_QUANTITY = re.compile(r"(-?[\d.,]+(?:e[+-]?\d+)?) ([^\s\d<>&]+)")


def show_table(frame: pd.DataFrame, formats: dict[str, Any] | None = None, titles: dict[str, str] | None = None,
               escape: bool = True, notes: str | None = None, stack: bool = False) -> None:
    """Display ``frame`` formatted for people: no index, integers, d/h/min, sizes, scrolling if wide.

    The table's text wraps to fit the column, but a cell holding one quantity never breaks between
    its number and its unit ("8.61 d" on one line, not "8.61" above "d").  ``notes``: a column shown
    under each row instead of beside it; ``stack``: rows as blocks on a phone (:func:`table_html`)."""
    shown = readable_frame(frame, formats, titles)
    for position in range(shown.shape[1]):
        shown.isetitem(position, shown.iloc[:, position].map(
            lambda text: _QUANTITY.sub("\\1\u00a0\\2", text) if isinstance(text, str) and _QUANTITY.fullmatch(text) else text))
    if notes is not None:  # the notes column under its readable title
        notes = {**COLUMN_TITLES, **(titles or {})}.get(notes, notes)
    show_html(table_html(shown, escape=escape, notes=notes, stack=stack))


def show_wide_table(frame: pd.DataFrame, key: str, max_columns: int = 6, formats: dict[str, Any] | None = None,
                    titles: dict[str, str] | None = None) -> None:
    """A wide table as several narrower ones, each repeating the ``key`` column."""
    others = [c for c in frame.columns if c != key]
    for start in range(0, len(others), max_columns):
        show_table(frame[[key, *others[start:start + max_columns]]], formats, titles)


#: A scaling sweep's columns as :func:`show_sweep_table` shows them (every column stays in the CSV download).
SWEEP_COLUMNS = ("model", "method", "p", "time_days", "n_gpu", "efficiency", "degrees", "offload", "memory_gib",
                 "non_offloadable_gib")


def show_sweep_table(frame: pd.DataFrame) -> None:
    """A scaling sweep's feasible rows with the columns a reader checks the figure with: the three parallel degrees
    share one column (``n_b × n_l × n_a``), so that the table fits the text column on any spec."""
    rows = frame[frame["feasible"].astype(bool)].copy()
    rows["degrees"] = [f"{format_int(b)} × {format_int(l)} × {format_int(a)}"
                       for b, l, a in zip(rows["n_b"], rows["n_l"], rows["n_a"])]
    show_table(rows[list(SWEEP_COLUMNS)], titles={"degrees": "n_b × n_l × n_a", "memory_gib": "memory",
                                                  "non_offloadable_gib": "non-offloadable"})


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
