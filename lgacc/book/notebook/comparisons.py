"""The paper beside the reproduction: every differing cell marked, one sentence saying how many
agree, the comparison downloadable; the scorecard with its statuses coloured.
"""

from __future__ import annotations

import html
from typing import Any

import pandas as pd

from lgacc.paper.artifacts import Artifact, agreement

from .display import show_html, show_markdown
from .downloads import download_link, show_csv_download
from .formats import is_missing
from .tables import show_table, table_html

__all__ = ["AGREE_MARK", "DIFFER_MARK", "row_notes", "agreement_columns", "summarize_agreement", "comparison_sentence",
           "styled_comparison", "compact_comparison", "show_comparison", "linked_scorecard"]


AGREE_MARK = "✓"
DIFFER_MARK = "✗"


def agreement_columns(frame: pd.DataFrame) -> list[str]:
    return [column for column in frame.columns if str(column).endswith("agrees")]


def summarize_agreement(comparison: pd.DataFrame) -> tuple[int, int]:
    """(cells that agree, cells compared) over every ``... agrees`` column."""
    return agreement(comparison)


def comparison_sentence(comparison: pd.DataFrame) -> str:
    """One line: how many computed cells agree, and how many printed cells are inputs echoed back
    (shown, not counted; :mod:`lgacc.paper.cells`)."""
    from lgacc.paper.cells import tally

    counted = tally(comparison)
    agree, total = counted.agree, counted.graded
    if agree == total:
        text = f"{DIFFER_MARK if total == 0 else AGREE_MARK} All {total} compared cells agree with the paper to its printed precision."
    else:
        text = (
            f"{DIFFER_MARK} {total - agree} of {total} compared cells differ from the paper "
            f"(marked {DIFFER_MARK}); {agree} agree to its printed precision."
        )
    if counted.echoed:
        text += (f" The {counted.echoed} cells marked *input* are inputs the table shows again, not results, "
                 "and are not counted" + (f" ({counted.echoed - counted.echoed_agree} of them are this spec's own "
                                          "values, not the paper's)." if counted.echoed_agree < counted.echoed else "."))
    return text


def styled_comparison(comparison: pd.DataFrame):
    """The comparison with ✓/✗ marks and differing cells highlighted."""
    shown = comparison.copy()
    flags = agreement_columns(shown)
    for column in flags:
        shown[column] = shown[column].map(lambda ok: "" if ok is None or ok != ok else AGREE_MARK if ok else DIFFER_MARK)

    def highlight(value: Any) -> str:
        return "background-color: #f8d7da; color: #842029" if value == DIFFER_MARK else ""

    return shown.style.map(highlight, subset=flags).hide(axis="index")


_PAPER, _REPRODUCED, _AGREES, _ECHOED = " (paper)", " (reproduced)", " agrees", " echoed_input"


def compact_comparison(comparison: pd.DataFrame) -> pd.DataFrame:
    """One column per quantity instead of three (paper, reproduced, agrees), as HTML cells.

    A cell shows the reproduced value; where it differs from the paper it is marked
    ✗, highlighted, and the printed value is shown beneath it.  Any other printed value
    that reads differently (not graded, or agreeing within a stated rule) is shown
    beneath too, unmarked.  An input echoed back (flagged ``echoed_input``, not graded)
    is never marked: a quantity whose every cell is one is headed "(input)", a single
    such cell says "input" beneath it.
    The wide three-column form stays available as a CSV download.
    """
    columns = [str(c) for c in comparison.columns]
    quantities = [c[: -len(_REPRODUCED)] for c in columns if c.endswith(_REPRODUCED)]
    keys = [c for c in columns if not c.endswith((_PAPER, _REPRODUCED, _AGREES, _ECHOED))]

    def echoed(row: pd.Series, quantity: str) -> bool:
        flag = row.get(quantity + _ECHOED)
        return flag is not None and not is_missing(flag) and bool(flag)

    all_echoed = {q for q in quantities if q + _ECHOED in columns
                  and all(echoed(row, q) for _, row in comparison.iterrows() if not is_missing(row.get(q + _AGREES)))}

    def cell(row: pd.Series, quantity: str) -> str:
        value = row.get(quantity + _REPRODUCED)
        printed = row.get(quantity + _PAPER)
        verdict = row.get(quantity + _AGREES)
        shown = html.escape("—" if is_missing(value) else str(value))
        paper = None if printed is None or is_missing(printed) else html.escape(str(printed))
        if echoed(row, quantity):
            note = "" if quantity in all_echoed else '<br><span class="lgacc-printed">input, not graded</span>'
            differs = paper is not None and paper != shown
            return shown + (f'<br><span class="lgacc-printed">paper: {paper}</span>' if differs else "") + note
        if verdict is not None and not is_missing(verdict) and not bool(verdict):
            return (f'<span class="lgacc-differs">{DIFFER_MARK} {shown}</span>'
                    f'<br><span class="lgacc-printed">paper: {paper if paper is not None else "—"}</span>')
        if paper is not None and paper != shown:  # ungraded, or agreeing by a rule other than equality
            return f'{shown}<br><span class="lgacc-printed">paper: {paper}</span>'
        return shown

    def heading(quantity: str) -> str:
        return f"{quantity} (input)" if quantity in all_echoed else quantity

    rows = []
    for _, row in comparison.iterrows():
        # a row's name may wrap (the numbers beside it do not)
        record = {key: f'<span class="lgacc-key">{html.escape(str(row[key]))}</span>' for key in keys}
        record.update({heading(quantity): cell(row, quantity) for quantity in quantities})
        rows.append(record)
    return pd.DataFrame(rows, columns=keys + [heading(q) for q in quantities])


def row_notes(comparison: pd.DataFrame) -> tuple[list[str], list[str]]:
    """The columns that name a row (those before the first graded quantity) and the notes about a row
    (every other column that is not part of a graded quantity: ``n_gpu verdict``, ``n_gpu explanation``,
    ``configuration (reproduced)``), which :func:`show_comparison` shows in a table of their own."""
    columns = [str(c) for c in comparison.columns]
    graded = [c[: -len(_AGREES)] for c in columns if c.endswith(_AGREES)]
    parts = {q + suffix for q in graded for suffix in (_PAPER, _REPRODUCED, _AGREES, _ECHOED)}
    first = min((i for i, c in enumerate(columns) if c in parts), default=len(columns))
    flags = [c for c in columns[:first] if pd.api.types.is_bool_dtype(comparison[c])]  # a flag names no row
    names = [c for c in columns[:first] if c not in flags]
    notes = flags + [c for c in columns[first:] if c not in parts]
    return names, notes


def show_comparison(artifact: Artifact, reproduced: Any) -> pd.DataFrame:
    """Display the reproduction with every difference from the paper marked, then one line
    saying whether they agree, then downloads of the reproduced table and of the full
    paper-beside-reproduction comparison (CSV)."""
    comparison = artifact.compare(reproduced)
    leading, notes = row_notes(comparison)
    shown = compact_comparison(comparison.drop(columns=notes))
    # a long heading may break after an underscore ("non_offloadable"), not push the table wider
    shown.columns = [c.replace("_", "_<wbr>") if len(c) > 8 else c for c in map(str, shown.columns)]
    show_html(table_html(shown, escape=False, classes="lgacc-comparison"))
    show_markdown(comparison_sentence(comparison))
    if notes:  # text about each row (a verdict's reason, the configuration) in a table of its own: the
        # comparison stays as narrow as its printed columns
        show_table(comparison[leading + notes], titles={n: n[: -len(_REPRODUCED)] for n in notes if n.endswith(_REPRODUCED)})
    if isinstance(reproduced, pd.DataFrame):
        show_csv_download(reproduced, artifact.label)
        show_html(download_link(comparison.to_csv(index=False).encode(),
                             artifact.label.replace(":", "_") + "_comparison.csv", "text/csv",
                             "Download the paper beside the reproduction, cell by cell (CSV)"))
    return comparison


def linked_scorecard(frame: pd.DataFrame):
    """The scorecard with each label linked to its page and the status coloured."""
    shown = frame.copy()
    shown["label"] = [
        f'<a href="{page}.html">{label}</a>' if page else label for label, page in zip(shown["label"], shown["page"])
    ]
    shown = shown.drop(columns=["page"])
    colours = {
        "agrees to printed precision": "background-color: #d1e7dd",
        "reproduced (no printed values to compare)": "background-color: #cfe2ff",
        "agrees with the paper's formulas": "background-color: #d1e7dd",
        "differs": "background-color: #f8d7da",
        "fails to build": "background-color: #f8d7da",
        "not reproduced yet": "background-color: #fff3cd",
    }
    return shown.style.map(lambda status: colours.get(status, ""), subset=["status"]).hide(axis="index")
