"""The presentation of the sensitivity study: the rows as tables and charts for the book and the command.

One job: show.  :func:`rows_frame` and :func:`compact_frame` are the rows as
DataFrames (full precision; one readable line per value), :func:`swings`,
:func:`unmoved` and :func:`rank` order the assumptions by how far they move a
result, :func:`tornado_figure` draws them.  Nothing here searches or judges.

May import: :mod:`lgacc.studies.sensitivity.grid` (the assumptions' titles),
:mod:`lgacc.studies.sensitivity.compute` (the rows); pandas and matplotlib, inside the
functions that draw.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from .compute import SensitivityRow
from .grid import dimensions

__all__ = [
    "TORNADO_RESULTS",
    "COMPACT_COLUMNS",
    "rows_frame",
    "swings",
    "tornado_figure",
    "unmoved",
    "rank",
    "compact_frame",
    "UNBOUNDED_WORDS",
]

# --- views for the book and the command ----------------------------------------------------------

#: Results drawn in the tornado chart, with their titles and whether a log scale suits them.
TORNADO_RESULTS: tuple[tuple[str, str, bool], ...] = (
    ("speedup", "Speed-up of the improved method over the baseline (X160)", False),
    ("improved_time_days", "X160 time, improved method (days)", True),
    ("baseline_time_days", "X160 time, baseline (days)", True),
    ("min_memory_gib", "Improved method's memory per GPU, X160 (GB)", True),
    ("one_month_limit_p", "Largest model trained in one month (parameters)", True),
    ("one_year_limit_p", "Largest model trained in one year (parameters)", True),
)


def rows_frame(rows: Sequence[SensitivityRow]):
    """The rows as a DataFrame (the command's JSON objects)."""
    import pandas as pd

    return pd.DataFrame([row.as_dict() for row in rows])


def swings(rows: Sequence[SensitivityRow], result: str) -> list[dict[str, Any]]:
    """Per assumption, the lowest and highest value of ``result`` over its range and where they occur.

    Sorted by the size of the swing (ratio of highest to lowest), largest first; a
    range with an infeasible value has an infinite swing.
    """
    groups: dict[str, list[SensitivityRow]] = {}
    for row in rows:
        groups.setdefault(row.assumption, []).append(row)
    out = []
    for name, group in groups.items():
        values = [getattr(r.headline, result) for r in group]
        finite = [(v, r) for v, r in zip(values, group) if v is not None and math.isfinite(v)]
        default = next(getattr(r.headline, result) for r in group if r.is_paper_default)
        if not finite:
            continue
        (low, low_row), (high, high_row) = min(finite, key=lambda t: t[0]), max(finite, key=lambda t: t[0])
        missing = len(finite) < len(group)
        swing = math.inf if missing else (high / low if low > 0 else (1.0 if high == low else math.inf))
        out.append({"assumption": name, "default": default, "low": low, "low_label": low_row.label,
                    "high": high, "high_label": high_row.label, "swing": swing, "infeasible": missing})
    return sorted(out, key=lambda s: -s["swing"] if math.isfinite(s["swing"]) else -math.inf)


def tornado_figure(rows: Sequence[SensitivityRow], results: Sequence[tuple[str, str, bool]] = TORNADO_RESULTS):
    """One tornado panel per result: each assumption's range of the result around the paper's value.

    Only the assumptions that move the result are drawn (:func:`unmoved` lists the others).
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    titles = {d.name: d.title for d in dimensions()}
    columns = 1  # one panel a line: the book's text column is narrow
    lines = math.ceil(len(results) / columns)
    figure, axes = plt.subplots(lines, columns, figsize=(8.5, 2.7 * lines), squeeze=False)
    for ax, (key, title, log) in zip(axes.flat, results):
        found = [s for s in swings(rows, key) if s["swing"] > 1 + _UNMOVED]
        found.reverse()
        default = next(getattr(r.headline, key) for r in rows if r.is_paper_default)
        default = math.nan if default is None else default
        if not found:
            ax.text(0.5, 0.5, "no assumption moves it" if math.isfinite(default) else "infeasible at the paper's values",
                    transform=ax.transAxes, ha="center", va="center", fontsize=9)
        for i, s in enumerate(found):
            low, high = s["low"], s["high"]
            ax.barh(i, high - low, left=low, color="#c44e52" if s["infeasible"] else "#4c72b0", height=0.6)
            ax.annotate(s["low_label"], (low, i), xytext=(-4, 0), textcoords="offset points", ha="right",
                        va="center", fontsize=8)
            ax.annotate(s["high_label"], (high, i), xytext=(4, 0), textcoords="offset points", ha="left",
                        va="center", fontsize=8)
        if math.isfinite(default):
            ax.axvline(default, color="black", linewidth=1)
        ax.set_yticks(range(len(found)))
        ax.set_yticklabels([titles.get(s["assumption"], s["assumption"]) for s in found], fontsize=8)
        ax.set_ylim(-0.6, max(len(found), 1) - 0.4)
        ends = [v for v in [default] + [s["low"] for s in found] + [s["high"] for s in found] if math.isfinite(v)]
        if not ends:
            ax.set_title(title, fontsize=10)
            continue
        lo, hi = min(ends), max(ends)
        if log and lo > 0:
            ax.set_xscale("log")
            span = max(hi / lo, 1.0001)
            ax.set_xlim(lo / span ** 0.5, hi * span ** 0.45)
            ax.xaxis.set_minor_formatter(NullFormatter())
        else:
            span = max(hi - lo, 1e-9)
            ax.set_xlim(lo - 0.5 * span, hi + 0.4 * span)
        ax.tick_params(axis="x", labelsize=10)  # a log axis's exponents are set at 70 %: 7 pt, legible at text width
        ax.set_title(title, fontsize=10)
    for ax in axes.flat[len(results):]:
        ax.axis("off")
    figure.tight_layout()
    return figure


#: A relative change below this is no change (floating-point noise of identical searches).
_UNMOVED = 1e-9


def unmoved(rows: Sequence[SensitivityRow], result: str) -> list[str]:
    """The assumptions whose whole range leaves ``result`` unchanged."""
    return [s["assumption"] for s in swings(rows, result) if s["swing"] <= 1 + _UNMOVED]


def rank(rows: Sequence[SensitivityRow], result: str, assumption: str) -> int | None:
    """Where ``assumption`` ranks (1 = moves ``result`` most) among the assumptions, ``None`` if never feasible."""
    order = [s["assumption"] for s in swings(rows, result)]
    return order.index(assumption) + 1 if assumption in order else None


#: Columns of the compact view: result key -> (header, format).
COMPACT_COLUMNS: dict[str, tuple[str, str]] = {
    "baseline_time_days": ("baseline d", "{:.3g}"),
    "baseline_n_gpu": ("baseline GPUs", "{:.0f}"),
    "improved_time_days": ("improved d", "{:.3g}"),
    "improved_n_gpu": ("improved GPUs", "{:.0f}"),
    "speedup": ("speed-up", "{:.2f}"),
    "min_memory_gib": ("memory GB", "{:.3g}"),
    "one_month_limit_p": ("1-month T", "{:.3g}"),
    "one_year_limit_p": ("1-year T", "{:.3g}"),
    "ethernet_slowdown": ("Ethernet slowdown", "{:.0%}"),
}


#: What an infinite result means, in words: the speed-up is infinite only where the baseline has no
#: feasible configuration and the improved method has one.
UNBOUNDED_WORDS = {"speedup": "baseline infeasible"}


def compact_frame(rows: Sequence[SensitivityRow]):
    """The rows as text for reading: one line per value, the paper's value starred, limits in T parameters."""
    import pandas as pd

    out = []
    for row in rows:
        line = {"assumption": row.assumption, "value": row.label + (" *" if row.is_paper_default else "")}
        for key, (header, fmt) in COMPACT_COLUMNS.items():
            value = getattr(row.headline, key)
            if key.endswith("_p") and value is not None:
                value = value / 1e12
            if value is None or value != value:
                line[header] = "—"
            elif math.isinf(value):  # words, never "inf"
                line[header] = UNBOUNDED_WORDS.get(key, "unbounded")
            else:
                line[header] = fmt.format(value)
        out.append(line)
    return pd.DataFrame(out)
