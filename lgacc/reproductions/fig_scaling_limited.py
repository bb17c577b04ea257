"""``fig:scaling_limited``: memory per GPU and training time along the X family, node size 16.

Also holds the drawing shared by ``fig:scaling_unlimited`` and ``fig:scaling_Ethernet``
(:func:`memory_time_figure`).  Data: :func:`lgacc.scaling.scaling_sweep`.
"""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from ..artifacts import Artifact
from ..hardware import GIB, Hardware
from ..scaling import METHODS, ONE_MONTH_DAYS, ONE_YEAR_DAYS, scaling_sweep

LABEL = "fig:scaling_limited"
CAPTION = ("Approximate minimal memory usage and training time for selected training methods, "
           "with a maximum node size of 16.")
COLORS = {"baseline": "tab:blue", "partitioned": "tab:orange", "improved": "tab:green"}


#: Drawing for the book's text column (about 6.5 in): panels stacked, text at 10 pt,
#: legends outside the data.
WIDTH_IN = 6.5
FONT_PT = 10
MARKER = dict(marker="o", markersize=3)
#: Time ticks in the units a reader thinks in (the curves are computed in days).
TIME_TICKS = ((1 / 24, "1 h"), (1.0, "1 d"), (7.0, "1 wk"), (ONE_MONTH_DAYS, "1 mo"), (ONE_YEAR_DAYS, "1 y"),
              (10 * ONE_YEAR_DAYS, "10 y"), (100 * ONE_YEAR_DAYS, "100 y"))
SHORTEST_TIME_SHOWN_DAYS = 1 / 24  # below an hour the time panel says nothing about the paper's question


def set_time_axis(ax, times) -> None:
    """Log time axis from one hour up, ticks labelled h / d / wk / mo / y."""
    top = max([float(t) for t in times if t == t] + [ONE_YEAR_DAYS]) * 2
    ax.set_ylim(SHORTEST_TIME_SHOWN_DAYS / 1.5, top)
    ticks = [(v, name) for v, name in TIME_TICKS if v <= top]
    ax.set_yticks([v for v, _ in ticks], [name for _, name in ticks])
    ax.minorticks_off()


def memory_time_figure(frame: pd.DataFrame, hardware: Hardware, caption: str, dotted: pd.DataFrame | None = None,
                       dotted_label: str = "") -> Figure:
    """Two log-log panels, stacked: memory per GPU (total solid, non-offloadable dashed) and training time."""
    from matplotlib.lines import Line2D

    figure = Figure(figsize=(WIDTH_IN, 8.2), layout="constrained")
    memory_ax, time_ax = figure.subplots(2, 1, sharex=True)
    times = []
    for method in METHODS:
        rows = frame[(frame.method == method) & frame.feasible.astype(bool)]
        if rows.empty:
            continue
        color = COLORS[method]
        memory_ax.plot(rows.p, rows.memory_gib, "-", color=color, **MARKER)
        memory_ax.plot(rows.p, rows.non_offloadable_gib, "--", color=color, **MARKER)
        time_ax.plot(rows.p, rows.time_days, "-", color=color, **MARKER)
        times += list(rows.time_days)
    handles = [Line2D([], [], color=COLORS[m], **MARKER, label=m) for m in METHODS]
    if dotted is not None and not dotted.empty:
        rows = dotted[dotted.feasible.astype(bool)]
        memory_ax.plot(rows.p, rows.memory_gib, ":", color=COLORS["improved"], lw=2)
        time_ax.plot(rows.p, rows.time_days, ":", color=COLORS["improved"], lw=2)
        handles.append(Line2D([], [], color=COLORS["improved"], ls=":", lw=2, label=dotted_label))
    handles += [Line2D([], [], color="black", ls="-", label="memory: total"),
                Line2D([], [], color="black", ls="--", label="memory: non-offloadable")]
    memory_gib = hardware.memory_bytes / GIB
    memory_ax.axhline(memory_gib, color="grey", lw=1)
    memory_ax.annotate(f"GPU memory ({memory_gib:g} GiB)", (0.02, memory_gib), ha="left",
                       xycoords=("axes fraction", "data"), va="bottom", fontsize=FONT_PT - 1, color="dimgrey")
    for days, name in ((ONE_MONTH_DAYS, "one month"), (ONE_YEAR_DAYS, "one year")):
        time_ax.axhline(days, color="grey", lw=1, ls="-.")
        time_ax.annotate(name, (0.02, days), xycoords=("axes fraction", "data"), ha="left", va="bottom",
                         fontsize=FONT_PT - 1, color="dimgrey")
    for ax in (memory_ax, time_ax):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.grid(True, which="major", alpha=0.3)
        ax.tick_params(labelsize=FONT_PT)
    for ax in (memory_ax, time_ax):
        ax.set_xlabel("Model size p (parameters)", fontsize=FONT_PT)
    memory_ax.set_ylabel("Memory per GPU (GiB)", fontsize=FONT_PT)
    time_ax.set_ylabel("Training time (h, d, wk, mo, y)", fontsize=FONT_PT)
    set_time_axis(time_ax, times)
    figure.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=FONT_PT - 1, frameon=False)
    figure.suptitle(caption, fontsize=FONT_PT, wrap=True)
    return figure


def build(hardware: Hardware, progress: bool = False) -> Figure:
    return memory_time_figure(scaling_sweep(hardware, "limited", progress=progress), hardware, CAPTION)


ARTIFACT = Artifact(
    label=LABEL,
    title="Memory and training time along the X family, node size 16",
    kind="figure",
    build=build,
    page="fig_scaling_limited",
    description=CAPTION + " Fastest 3d configuration per method from the search; curves stop where no configuration is feasible.",
)
