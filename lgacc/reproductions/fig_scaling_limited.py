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


def memory_time_figure(frame: pd.DataFrame, hardware: Hardware, caption: str, dotted: pd.DataFrame | None = None,
                       dotted_label: str = "") -> Figure:
    """Two log-log panels: memory per GPU (total solid, non-offloadable dashed) and training time."""
    figure = Figure(figsize=(11, 4.4), layout="constrained")
    memory_ax, time_ax = figure.subplots(1, 2, sharex=True)
    for method in METHODS:
        rows = frame[(frame.method == method) & frame.feasible.astype(bool)]
        if rows.empty:
            continue
        color = COLORS[method]
        memory_ax.plot(rows.p, rows.memory_gib, "-", color=color, label=f"{method}: total")
        memory_ax.plot(rows.p, rows.non_offloadable_gib, "--", color=color, label=f"{method}: non-offloadable")
        time_ax.plot(rows.p, rows.time_days, "-", color=color, label=method)
    if dotted is not None and not dotted.empty:
        rows = dotted[dotted.feasible.astype(bool)]
        memory_ax.plot(rows.p, rows.memory_gib, ":", color=COLORS["improved"], lw=2, label=dotted_label)
        time_ax.plot(rows.p, rows.time_days, ":", color=COLORS["improved"], lw=2, label=dotted_label)
    memory_ax.axhline(hardware.memory_bytes / GIB, color="grey", lw=1)
    memory_ax.annotate(f"GPU memory ({hardware.memory_bytes / GIB:g} GB)", (0.98, hardware.memory_bytes / GIB), ha="right",
                       xycoords=("axes fraction", "data"), va="bottom", fontsize=8, color="grey")
    for days, name in ((ONE_MONTH_DAYS, "one month"), (ONE_YEAR_DAYS, "one year")):
        time_ax.axhline(days, color="grey", lw=1, ls="-.")
        time_ax.annotate(name, (0.02, days), xycoords=("axes fraction", "data"), va="bottom", fontsize=8, color="grey")
    for ax in (memory_ax, time_ax):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("Model size p (parameters)")
        ax.grid(True, which="major", alpha=0.3)
    memory_ax.set_ylabel("Memory per GPU (GB)")
    time_ax.set_ylabel("Training time (days)")
    memory_ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(0.0, 0.95))
    time_ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(0.0, 0.85))
    figure.suptitle(caption, fontsize=10)
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
