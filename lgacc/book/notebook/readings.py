"""The reading matrix for people (:func:`lgacc.paper.claims.reading_matrix`): a compact table of marks that fits a
phone, a legend of its columns, and the values folded away in a details block."""

from __future__ import annotations

import html
from typing import Any

from lgacc.paper.findings import printed_plain, readable_value, verdict_mark
from lgacc.paper.claims.words import name_in_words

__all__ = ["matrix_legend_html", "matrix_marks_html", "matrix_values_html", "readings_summary_markdown"]

AGREES, MISSES = "●", "·"


def _short(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    return readable_value(value, unit.split(" (")[0]).replace(" parameters", "")  # the unit's detail is in the summary


def matrix_legend_html(matrix: dict[str, Any]) -> str:
    """The columns, numbered: ``0`` the paper reading, then each switch moved alone and the combinations."""
    items = "".join(f"<li value='{i}'><code>{html.escape(c['name'])}</code> <small>({c['kind']})</small></li>"
                    for i, c in enumerate(matrix["columns"]))
    return f"<ol start='0' class='lgacc-readings-legend'>{items}</ol>"


def matrix_marks_html(matrix: dict[str, Any]) -> str:
    """One row per claim (its verdict's mark and id), one narrow column per reading (● agrees, · does not), and a
    last row counting the claims each reading reproduces; the paper reading's column is column 0."""
    n = len(matrix["columns"])
    head = "<th>claim</th>" + "".join(f"<th>{i}</th>" for i in range(n))
    rows = []
    for r in matrix["rows"]:
        cells = "".join(f"<td>{AGREES if c['agrees'] else MISSES}</td>" for c in r["cells"])
        rows.append(f"<tr><td>{verdict_mark(r['verdict'])}&nbsp;{html.escape(r['id']).replace('_', '_<wbr>')}</td>{cells}</tr>")
    summary = "".join(f"<td><b>{s['agree']}</b></td>" for s in matrix["summary"])
    rows.append(f"<tr><td><b>claims reproduced</b></td>{summary}</tr>")
    broken = "".join(f"<td>{len(s['breaks'])}</td>" for s in matrix["summary"])
    rows.append(f"<tr><td>reproduced claims it breaks</td>{broken}</tr>")
    return ("<div style='overflow-x:auto'><table class='lgacc-readings' style='font-size:85%'>"
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>")


def matrix_values_html(matrix: dict[str, Any]) -> str:
    """The values, folded: one details block per claim listing each reading's value and whether it agrees."""
    blocks = []
    for r in matrix["rows"]:
        items = "".join(
            f"<li>{i}: {html.escape(_short(c['value'], r['unit']))} {'✓' if c['agrees'] else '✗'}</li>"
            for i, c in enumerate(r["cells"]))
        blocks.append(f"<details><summary>{verdict_mark(r['verdict'])} {html.escape(r['id'])} — printed "
                      f"<i>{html.escape(printed_plain(r['printed']))}</i> ({html.escape(r['rule'])}; {html.escape(r['unit'])})</summary>"
                      f"<ul>{items}</ul></details>")
    return "".join(blocks)


def readings_summary_markdown(matrix: dict[str, Any]) -> str:
    """The matrix in sentences: how many claims each reading reproduces, and which reproduced claims it breaks."""
    lines = []
    for i, s in enumerate(matrix["summary"]):
        broken = ", ".join(f"`{b}`" for b in s["breaks"]) or "none"
        lines.append(f"- **{i}** {name_in_words(s['reading'])}: {s['agree']} of {s['of']} claims agree; breaks {broken}.")
    return "\n".join(lines)
