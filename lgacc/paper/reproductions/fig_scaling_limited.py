"""``fig:scaling_limited``: memory per GPU and training time along the X family, node size 16.

Also holds the drawing shared by ``fig:scaling_unlimited`` and ``fig:scaling_Ethernet``
(:func:`memory_time_figure`).  Data: :func:`lgacc.scaling.scaling_sweep`.

The horizontal axis spans the model sizes the paper's figure covers (read from the
sentences that describe it, ``data/paper/fig_scaling_limited.yaml``) and every model
swept, whichever reaches further.  The curves are the scaling analysis' reading
(:data:`lgacc.scaling.SCALING_ASSUMPTIONS`): memory is an output of the fastest configuration,
so every curve spans the whole sweep, and the memory panel shades what lies above the GPU's
memory; in both panels a hollow marker is a model whose non-offloadable memory exceeds the
GPU's (it does not fit even with everything else offloaded).  Under ``memory_limit="constraint"``
a curve stops where the search finds no feasible configuration; the models beyond are then
shaded and labelled with the rule that removed the last candidates (:func:`curve_ends`).
"""

from __future__ import annotations

import math
import textwrap

import pandas as pd
from matplotlib.figure import Figure

from lgacc.model.hardware import GIB, Hardware
from lgacc.scaling import METHODS, ONE_MONTH_DAYS, ONE_YEAR_DAYS, scaling_sweep

from ..artifacts import Artifact
from ..printed import load_paper

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
TIME_TICKS = ((1 / 86400, "1 s"), (1 / 1440, "1 min"), (10 / 1440, "10 min"), (1 / 24, "1 h"), (1.0, "1 d"), (7.0, "1 wk"), (ONE_MONTH_DAYS, "1 mo"), (ONE_YEAR_DAYS, "1 y"),
              (10 * ONE_YEAR_DAYS, "10 y"), (100 * ONE_YEAR_DAYS, "100 y"))
SHORTEST_TIME_SHOWN_DAYS = 1 / 24  # the axis starts at an hour unless a point lies below it


def set_time_axis(ax, times) -> None:
    """Log time axis from one hour up (lower if a time is shorter: no point is cut off), ticks
    labelled min / h / d / wk / mo / y."""
    shown = [float(t) for t in times if math.isfinite(t) and t > 0]  # an overflowed time has no place on the axis
    top = max(shown + [ONE_YEAR_DAYS]) * 2
    bottom = min(shown + [SHORTEST_TIME_SHOWN_DAYS]) / 1.5
    ax.set_ylim(bottom, top)
    ticks = [(v, name) for v, name in TIME_TICKS if bottom <= v <= top]
    ax.set_yticks([v for v, _ in ticks], [name for _, name in ticks])
    ax.minorticks_off()


#: What a shaded region says: the search's answer for the models in it.
NO_FEASIBLE = "no feasible configuration beyond here under the paper's rules"
#: The memory panel's band above the GPU's memory (memory is an output of the scaling curves).
OVER_GPU_COLOR = "#f6dede"


def paper_model_range(label: str) -> tuple[float, float]:
    """The model sizes (parameters) the paper's figure ``label`` spans, from its transcription in
    ``data/paper/`` (the axis only: nothing is computed from it)."""
    bounds = load_paper(label)["model_size_range"]
    return float(bounds["low"]["parameters"]), float(bounds["high"]["parameters"])


def curve_ends(frame: pd.DataFrame, methods=METHODS) -> pd.DataFrame:
    """Where each method's curve stops before the last model swept: ``method, p`` (the last feasible
    model) and ``rule``, the search's rule that removes every configuration of the next model."""
    rows = []
    for method in methods:
        series = frame[frame.method == method].sort_values("p")
        feasible = series.feasible.astype(bool)
        if not feasible.any():
            continue
        last = series[feasible].p.max()
        beyond = series[(~feasible) & (series.p > last)]
        if beyond.empty:
            continue
        rule = str(beyond.reason.iloc[0]).split(":", 1)[0].strip() or "no configuration"
        rows.append({"method": method, "p": float(last), "rule": rule})
    return pd.DataFrame(rows, columns=["method", "p", "rule"])


def node_markdown(spec) -> str:
    """The sentence on where tensor parallelism runs, for the build's spec: its node size and links."""
    names = dict(spec.link_names)
    node, nvlink, fabric = spec.gpus_per_node, names.get("nvlink", "NVLink"), names.get("infiniband", "InfiniBand")
    if node == 1:
        return (f"On {spec.name} a node holds one GPU (`gpus_per_node: 1`): tensor parallelism always crosses "
                f"{fabric}, which the search keeps only where it pays. The paper's nodes hold 16 GPUs.")
    paper = "as in the paper" if node == 16 else "the paper's hold 16"
    return (f"On {spec.name} a node holds {node} GPUs ({paper}): tensor parallelism runs over {nvlink} up to "
            f"{node} GPUs and over {fabric} beyond, which the search keeps only where it pays.")


def ends_markdown(frame: pd.DataFrame, label: str) -> str:
    """One sentence per place the curves stop (the model, the rule beyond it), and how far the paper's
    figure reaches, for the figure's page."""
    from ..findings import readable_value

    ends = curve_ends(frame)
    paper = load_paper(label)["model_size_range"]["high"]
    reach = f"The paper's figure reaches at least {readable_value(float(paper['parameters']), 'parameters')} (*{paper['printed']}*)"
    if ends.empty:
        return f"Every curve reaches the last model swept. {reach}."
    lines = []
    for (p, rule), group in ends.groupby(["p", "rule"], sort=True):
        model = frame[(frame.p == p)].model.iloc[0]
        which = "every method" if len(group) == len(METHODS) else ", ".join(group.method)
        lines.append(f"For {which}, the last model with a feasible configuration is {model} "
                     f"({readable_value(p, 'parameters')}); for the next model swept, the rule *{rule}* removes "
                     "every candidate, so the curves stop there.")
    return " ".join(lines) + f" {reach}; the shaded band is the gap, left as the search finds it."


def _free_heights(time_ax, count: int) -> list[float]:
    """``count`` heights (axes fraction) for the shaded regions' labels in the time panel's upper part,
    away from the one-month and one-year lines and their labels (they move with the axis' range)."""
    low, high = (math.log10(v) for v in time_ax.get_ylim())
    lines = [(math.log10(days) - low) / (high - low) for days in (ONE_MONTH_DAYS, ONE_YEAR_DAYS)]
    slots = [0.93 - 0.035 * i for i in range(20)]
    # a label is three text lines (about 0.13 of the panel), centred on its height; a line's own label
    # sits just above it
    free = [h for h in slots if all(h > f + 0.12 or h < f - 0.08 for f in lines)]
    chosen: list[float] = []
    for h in free:  # keep two labels 0.14 apart
        if all(abs(h - c) >= 0.14 for c in chosen):
            chosen.append(h)
    chosen += [0.93 - 0.14 * i for i in range(len(chosen), count)]  # no room left: the old places
    return chosen[:count]


def _mark_ends(axes, ends: pd.DataFrame, p_high: float) -> list:
    """Shade the models beyond each place curves stop, and say why in the time panel's empty upper
    left, with an arrow to the place (once per place)."""
    from matplotlib.patches import Patch

    time_ax = axes[-1]
    places = list(ends.groupby(["p", "rule"], sort=True))
    heights = _free_heights(time_ax, len(places))
    for index, ((p, rule), group) in enumerate(places):
        for ax in axes:
            ax.axvspan(p, p_high, color="0.9", zorder=0, lw=0)
            ax.axvline(p, color="dimgrey", ls=":", lw=1.2, zorder=1)
        which = "all three methods" if len(group) == len(METHODS) else ", ".join(group.method)
        height = heights[index]
        time_ax.annotate(textwrap.fill(NO_FEASIBLE, 38) + f"\n({rule}; {which})", xy=(p, height),
                         xycoords=("data", "axes fraction"), xytext=(0.03, height), textcoords="axes fraction",
                         ha="left", va="center", fontsize=FONT_PT - 1, color="dimgrey",
                         arrowprops=dict(arrowstyle="->", color="dimgrey", lw=1))
    return [Patch(color="0.9", label="no feasible configuration")] if places else []


def memory_time_figure(frame: pd.DataFrame, hardware: Hardware, caption: str, dotted: pd.DataFrame | None = None,
                       dotted_label: str = "", paper_range: tuple[float, float] | None = None,
                       mark_ends: bool = False) -> Figure:
    """Two log-log panels, stacked: memory per GPU (total solid, non-offloadable dashed) and training time.

    ``paper_range`` (parameters) widens the horizontal axis to the paper's; ``mark_ends`` shades the models
    beyond the place a curve stops and labels it (:func:`curve_ends`)."""
    from matplotlib.lines import Line2D

    figure = Figure(figsize=(WIDTH_IN, 8.2), layout="constrained")
    memory_ax, time_ax = figure.subplots(2, 1, sharex=True)
    for ax in (memory_ax, time_ax):  # log axes before any limit is set
        ax.set_xscale("log")
        ax.set_yscale("log")
    memory_gib = hardware.memory_bytes / GIB
    times = []
    over_any = False
    for method in METHODS:
        rows = frame[(frame.method == method) & frame.feasible.astype(bool)]
        if rows.empty:
            continue
        color = COLORS[method]
        memory_ax.plot(rows.p, rows.memory_gib, "-", color=color, **MARKER)
        memory_ax.plot(rows.p, rows.non_offloadable_gib, "--", color=color, **MARKER)
        time_ax.plot(rows.p, rows.time_days, "-", color=color, **MARKER)
        over = rows[rows.non_offloadable_gib > memory_gib]  # not even offloading fits these on the GPU
        if not over.empty:
            over_any = True
            for ax, column in ((memory_ax, "non_offloadable_gib"), (time_ax, "time_days")):
                ax.plot(over.p, over[column], "o", color=color, markersize=5, markerfacecolor="white", zorder=3)
        times += list(rows.time_days)
    handles = [Line2D([], [], color=COLORS[m], **MARKER, label=m) for m in METHODS]
    if dotted is not None and not dotted.empty:
        rows = dotted[dotted.feasible.astype(bool)]
        memory_ax.plot(rows.p, rows.memory_gib, ":", color=COLORS["improved"], lw=2)
        time_ax.plot(rows.p, rows.time_days, ":", color=COLORS["improved"], lw=2)
        handles.append(Line2D([], [], color=COLORS["improved"], ls=":", lw=2, label=dotted_label))
    handles += [Line2D([], [], color="black", ls="-", label="memory: total"),
                Line2D([], [], color="black", ls="--", label="memory: non-offloadable")]
    memory_ax.axhline(memory_gib, color="grey", lw=1)
    memory_ax.annotate(f"GPU memory ({memory_gib:g} GiB)", (0.02, memory_gib), ha="left",
                       xycoords=("axes fraction", "data"), va="bottom", fontsize=FONT_PT - 1, color="dimgrey")
    if over_any or (frame.memory_gib > memory_gib).any():
        from matplotlib.patches import Patch

        top = max(float(frame.memory_gib.max()), memory_gib) * 3
        memory_ax.axhspan(memory_gib, top, color=OVER_GPU_COLOR, zorder=0, lw=0)
        memory_ax.set_ylim(top=top)
        handles += [Patch(color=OVER_GPU_COLOR, label="memory above the GPU's"),
                    Line2D([], [], color="black", ls="", marker="o", markersize=5, markerfacecolor="white",
                           label="does not fit even offloaded")]
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
    if paper_range is not None or mark_ends:
        swept = frame.p.astype(float)
        low = min([swept.min()] + ([paper_range[0]] if paper_range else []))
        high = max([swept.max()] + ([paper_range[1]] if paper_range else []))
        time_ax.set_xlim(low / 1.5, high * 1.5)
        if mark_ends:
            handles += _mark_ends((memory_ax, time_ax), curve_ends(frame), high * 1.5)
    figure.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=FONT_PT - 1, frameon=False)
    figure.suptitle(caption, fontsize=FONT_PT, wrap=True)
    return figure


def caption(hardware: Hardware) -> str:
    """The paper's caption with this hardware's node size (16 on the paper's nodes, :data:`CAPTION`)."""
    return CAPTION.replace("node size of 16", f"node size of {hardware.gpus_per_node}")


def build(hardware: Hardware, progress: bool = False) -> Figure:
    return memory_time_figure(scaling_sweep(hardware, "limited", progress=progress), hardware, caption(hardware),
                              paper_range=paper_model_range(LABEL), mark_ends=True)


ARTIFACT = Artifact(
    label=LABEL,
    title="Memory and training time along the X family, node size 16",
    kind="figure",
    build=build,
    page="fig_scaling_limited",
    description=CAPTION + " Fastest 3d configuration per method from the search, memory as an output: the band above "
                          "the GPU's memory is shaded, and hollow markers are models that do not fit even offloaded.",
)
