"""The chapter's figures, one statement each, drawn for a phone: 4.8 × 3.3 in with 10 pt text (legible at a
390 px screen's text column), log axes where the values span decades, each line labelled by its legend."""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from .implications import grid, pareto_frame, series

__all__ = ["size_figure", "domain_figure", "memory_figure", "pareto_figure", "FIGSIZE"]

FIGSIZE = (4.8, 3.3)
_STYLE = {"font.size": 10, "axes.titlesize": 10, "axes.labelsize": 10, "legend.fontsize": 9, "xtick.labelsize": 9,
          "ytick.labelsize": 9}
_TIME_MODEL_LINE = {"ideal": "-", "calibrated": "--"}
_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")


def _figure():
    import matplotlib.pyplot as plt

    with plt.rc_context(_STYLE):
        figure, axis = plt.subplots(figsize=FIGSIZE, layout="constrained")
    return figure, axis


def _short(value: float) -> str:
    """A tick label: 500, 2k, 5M, 1G."""
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:g}{suffix}"
    return f"{value:g}"


def _log_axes(axis) -> None:
    """Log axes labelled 1, 2, 5 per decade in plain numbers, at the tick size (matplotlib labels the minor
    ticks of a short log axis at 0.7 of it: 6 px, unreadable on a phone)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_xscale("log")
    axis.set_yscale("log")
    for side in (axis.xaxis, axis.yaxis):
        side.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        side.set_major_formatter(FuncFormatter(lambda value, _: _short(value)))
        side.set_minor_formatter(NullFormatter())


def _finish(axis, xlabel: str, title: str, xs: Sequence[float] | None = None) -> None:
    _log_axes(axis)
    if xs is not None:
        axis.set_xticks(list(xs), [f"{x:g}" for x in xs])
        axis.minorticks_off()
    axis.set_xlabel(xlabel, fontsize=10)
    axis.set_ylabel("time to train (days)", fontsize=10)
    axis.set_title(title, fontsize=10)
    axis.tick_params(labelsize=9)
    axis.grid(True, which="major", alpha=0.3)
    axis.legend(fontsize=9, frameon=False)


def _lines(axis, frame, varied: str, models: Sequence[str], x: str, time_models=("ideal", "calibrated"), **where):
    for color, model in zip(_COLORS, models):
        for time_model in time_models:
            data = series(frame, varied, model, x, time_model, **where).dropna()
            if not data.empty:
                axis.plot(data[x], data["time_days"], _TIME_MODEL_LINE[time_model], marker="o", markersize=4,
                          color=color, label=f"{model}, {time_model}")


def size_figure(frame: pd.DataFrame, models: Sequence[str]):
    """Time against ``k``, one GPU cut into ``k`` at constant totals: links divided (solid), kept (dotted)."""
    figure, axis = _figure()
    for color, model in zip(_COLORS, models):
        for links, line in (("divided", "-"), ("kept", ":")):
            data = series(frame, "split split_links", model, "split", "ideal", split_links=links).dropna()
            if not data.empty:
                axis.plot(data["split"], data["time_days"], line, marker="o", markersize=4, color=color,
                          label=f"{model}, links {links}")
    ks = sorted(grid(frame, "split split_links", models[0])["split"].unique())
    _finish(axis, "k: GPUs cut from one (same silicon)", "GPU size at constant totals (ideal model)", ks)
    return figure


def domain_figure(frame: pd.DataFrame, models: Sequence[str]):
    """Time against the NVLink domain's size, both time models."""
    figure, axis = _figure()
    _lines(axis, frame, "gpus_per_node", models, "gpus_per_node")
    sizes = sorted(grid(frame, "gpus_per_node", models[0])["gpus_per_node"].unique())
    _finish(axis, "GPUs per NVLink domain", "NVLink domain size", sizes)
    return figure


def memory_figure(frame: pd.DataFrame, models: Sequence[str], domain: int):
    """Time against memory per GPU (offloading allowed) in a ``domain``-GPU NVLink domain, both time models."""
    figure, axis = _figure()
    _lines(axis, frame, "gpus_per_node memory_gib", models, "memory_gib", gpus_per_node=domain)
    memories = sorted(grid(frame, "gpus_per_node memory_gib", models[0])["memory_gib"].unique())
    _finish(axis, "memory per GPU (GiB)", f"Memory per GPU, offloading allowed ({domain}-GPU domain)", memories)
    return figure


def pareto_figure(frame: pd.DataFrame, models: Sequence[str], time_model: str = "ideal"):
    """Every design's time and GPU-hours (dots) and the Pareto front (line), per model."""
    figure, axis = _figure()
    for color, model in zip(_COLORS, models):
        rows = frame[frame["model"] == model].dropna(subset=[f"{time_model}_time_days"])
        if rows.empty:
            continue
        axis.plot(rows[f"{time_model}_time_days"], rows[f"{time_model}_gpu_hours"], "o", markersize=3, alpha=0.35,
                  color=color)
        front = pareto_frame(frame, model, time_model)
        axis.plot(front[f"{time_model}_time_days"], front[f"{time_model}_gpu_hours"], "-o", markersize=4,
                  color=color, label=f"{model} front")
    _log_axes(axis)
    axis.set_xlabel("time to train (days)", fontsize=10)
    axis.set_ylabel("GPU-hours", fontsize=10)
    axis.set_title(f"Time against GPU-hours ({time_model} model)", fontsize=10)
    axis.tick_params(labelsize=9)
    axis.grid(True, which="major", alpha=0.3)
    axis.legend(fontsize=9, frameon=False)
    return figure
