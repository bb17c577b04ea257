"""The paper's "Hardware implications" (section "Conclusions and future work") graded from a co-design sweep.

Four statements, each read from the grids of the sweep that move the one property it is about
(``data/sweeps/hardware-implications.yaml``), for each model of the sweep and under each model of the time
(``ideal``: the paper's; ``calibrated``: ours, which alone sees the HBM bandwidth).  Each rule is a named
threshold, stated where the verdict is shown, so that a verdict can fail:

``bandwidth``
    "this focus on size [...] splits the limited memory bandwidth between large numbers of computational
    cores, causing memory bottlenecks": at the largest peak flop/s of the sweep and the base HBM bandwidth,
    the time is at least :data:`BOTTLENECK` longer than with the sweep's largest HBM bandwidth (the
    bottleneck costs that much), and more than at the base peak (more cores share it).  The paper's model
    has no HBM term, so only the calibrated model can grade it.
``interconnect``
    "the key to a faster training is in large scale tensor parallelism, which needs many GPUs to be
    connected through a high bandwidth [...] interconnect": the largest NVLink domain trains at least
    :data:`KEY_SPEEDUP` times faster than 8 GPUs, with more than 8-way tensor parallelism, and the largest
    NVLink bandwidth at least :data:`KEY_SPEEDUP` times faster than the smallest.
``size``
    "The size of the GPUs is not particularly important, and in fact, (a lot of) smaller devices may be
    preferable": one GPU cut into ``k`` at constant totals (``split_links: divided``) trains, for some
    ``k > 1``, within :data:`NOT_IMPORTANT` of the uncut GPU's time.  The other reading (each small GPU
    keeps the big one's links) is shown beside it, not graded.
``memory``
    "The GPUs only need a small amount of fast memory, as long as there is a larger amount of external
    storage": with offloading allowed, in the first NVLink domain of the memory grid (the paper's node),
    :data:`SMALL_MEMORY_GIB` per GPU trains within :data:`NOT_IMPORTANT` of the time with the largest
    memory of the sweep.  The paper's model only: the calibrated model does not price offloading.

A model with no feasible design in a statement's grid is not graded there (mark ``–``, and why).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import pandas as pd

from .designs import DESIGN_COLUMNS
from .evaluate import RESULT_KEYS

__all__ = ["BOTTLENECK", "KEY_SPEEDUP", "NOT_IMPORTANT", "SMALL_MEMORY_GIB", "MODELS", "STATEMENTS", "HOLDS", "FAILS",
           "UNGRADED", "Grade", "rows_frame", "grid", "grade_all", "grades_frame", "pareto_front", "pareto_frame",
           "series", "timing_markdown", "summary_markdown"]

#: A memory-bandwidth bottleneck costs at least this share of the time.
BOTTLENECK = 0.10
#: "The key to a faster training": at least this speed-up.
KEY_SPEEDUP = 1.5
#: "Not particularly important": within this share of the time.
NOT_IMPORTANT = 0.10
#: "A small amount of fast memory": an eighth of the paper's 80 GB GPU.
SMALL_MEMORY_GIB = 10.0
MODELS = ("ideal", "calibrated")
HOLDS, FAILS, UNGRADED = "✓", "✗", "–"
#: The statements: key -> (the paper's words, what is measured).
STATEMENTS = {
    "bandwidth": ("large GPUs split the limited memory bandwidth between many cores, causing memory bottlenecks",
                  "time at the largest peak flop/s with the base HBM bandwidth vs with the bandwidth grown with it"),
    "interconnect": ("faster training needs large scale tensor parallelism over a high bandwidth interconnect",
                     "time against NVLink domain size (8 to 576 GPUs) and NVLink bandwidth"),
    "size": ("the size of the GPUs is not particularly important; smaller devices may be preferable",
             "time with one GPU cut into k at constant totals"),
    "memory": ("GPUs only need a small amount of fast memory, given external storage",
               f"time with {SMALL_MEMORY_GIB:g} GiB per GPU (offloading allowed) vs the largest memory"),
}


@dataclass(frozen=True)
class Grade:
    """One statement for one training model under one time model: the mark and the numbers behind it."""

    statement: str
    model: str
    time_model: str
    mark: str
    measure: str


def rows_frame(rows: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """The sweep's rows as a frame, with ``varied``: the keys its grid varies (``gpus_per_node memory_gib``)."""
    frame = pd.DataFrame(list(rows))
    expected = [column for column, _, _ in DESIGN_COLUMNS] + [f"{m}_{k}" for m in MODELS for k in RESULT_KEYS]
    for column in expected:  # a sweep that moves nothing still has every column (NaN)
        if column not in frame:
            frame[column] = math.nan
    frame["varied"] = [" ".join(part.split("=", 1)[0] for part in label.split()) for label in frame["label"]]
    return frame


def grid(frame: pd.DataFrame, varied: str, model: str, **where: Any) -> pd.DataFrame:
    """The rows of the grid varying exactly ``varied`` (space-separated keys) for ``model``, filtered by
    ``where`` (column = value)."""
    out = frame[(frame["varied"] == varied) & (frame["model"] == model)]
    for column, value in where.items():
        out = out[out[column] == value]
    return out


def _time(rows: pd.DataFrame, time_model: str) -> pd.Series:
    return rows[f"{time_model}_time_days"].astype(float)


def _infeasible(times: pd.Series) -> str:
    """Why a grid is not graded: nothing in it is feasible, or some design is not."""
    if times.empty:
        return "no such grid in the sweep"
    return "no design of this grid is feasible" if times.isna().all() else "infeasible at some design of the grid"


def _days(value: float) -> str:
    return "infeasible" if value is None or not math.isfinite(value) else f"{value:.3g} d"


def _bandwidth(frame, model, time_model) -> tuple[str, str]:
    rows = grid(frame, "peak_tflop_per_s gpu_memory_bandwidth_gib_per_s", model)
    if rows.empty or _time(rows, time_model).isna().any():
        return UNGRADED, _infeasible(_time(rows, time_model))
    peaks = sorted(rows["peak_tflop_per_s"].unique())
    hbm = sorted(rows["hbm_gb_per_s"].unique())

    def cost(peak: float) -> float:
        """The time lost to the base HBM bandwidth against the largest one, at ``peak``."""
        at = rows[rows["peak_tflop_per_s"] == peak]
        base, grown = at[at["hbm_gb_per_s"] == hbm[0]], at[at["hbm_gb_per_s"] == hbm[-1]]
        return float(_time(base, time_model).iloc[0] / _time(grown, time_model).iloc[0] - 1)

    low, high = cost(peaks[0]), cost(peaks[-1])
    if time_model == "ideal" and low == 0 and high == 0:
        return UNGRADED, ("the paper's model has no HBM-bandwidth term: the same time at every bandwidth "
                          f"({_days(_time(rows, time_model).min())} at {peaks[-1]:g} Tflop/s)")
    holds = high >= BOTTLENECK and high > low
    measure = (f"at {peaks[-1]:g} Tflop/s, {hbm[0]:.4g} GB/s of HBM costs {high:.1%} of the time against "
               f"{hbm[-1]:.4g} GB/s ({low:.1%} at {peaks[0]:g} Tflop/s); a bottleneck is ≥ {BOTTLENECK:.0%}")
    return (HOLDS if holds else FAILS), measure


def _interconnect(frame, model, time_model) -> tuple[str, str]:
    domain = grid(frame, "gpus_per_node", model).sort_values("gpus_per_node")
    links = grid(frame, "gpus_per_node nvlink_bandwidth_gib_per_s", model).sort_values("nvlink_gb_per_s")
    t_domain, t_links = _time(domain, time_model), _time(links, time_model)
    if domain.empty or t_domain.isna().any() or links.empty or t_links.isna().any():
        return UNGRADED, _infeasible(pd.concat([t_domain, t_links]))
    small, best = t_domain.iloc[0], t_domain.min()
    fastest = domain.loc[t_domain.idxmin()]
    tensor = fastest[f"{time_model}_n_a"]
    domain_speedup, link_speedup = small / best, t_links.iloc[0] / t_links.iloc[-1]
    holds = domain_speedup >= KEY_SPEEDUP and tensor > 8 and link_speedup >= KEY_SPEEDUP
    measure = (f"{int(domain['gpus_per_node'].iloc[0])} GPUs per NVLink domain: {_days(small)}; "
               f"{int(fastest['gpus_per_node'])}: {_days(best)} ({domain_speedup:.2g}×, n_a = {int(tensor)}); "
               f"NVLink ×{links['nvlink_gb_per_s'].iloc[-1] / links['nvlink_gb_per_s'].iloc[0]:g}: "
               f"{link_speedup:.2g}× faster; key is ≥ {KEY_SPEEDUP:g}×")
    return (HOLDS if holds else FAILS), measure


def _size(frame, model, time_model) -> tuple[str, str]:
    rows = grid(frame, "split split_links", model, split_links="divided").sort_values("split")
    times = _time(rows, time_model)
    if rows.empty or math.isnan(times.iloc[0]):
        return UNGRADED, "the uncut GPU is infeasible"
    ratios = (times / times.iloc[0]).iloc[1:]
    if ratios.isna().all():
        return UNGRADED, "every cut GPU is infeasible"
    best = rows.loc[ratios.idxmin()]
    ratio = float(ratios.min())
    kept = grid(frame, "split split_links", model, split_links="kept").sort_values("split")
    kept_ratio = (_time(kept, time_model) / times.iloc[0]).iloc[1:].min()
    measure = (f"uncut {_days(times.iloc[0])}; best cut k = {int(best['split'])}: {_days(times[best.name])} "
               f"({ratio:.2f}×); links kept per GPU: {kept_ratio:.2f}×; not important is ≤ {1 + NOT_IMPORTANT:g}×")
    return (HOLDS if ratio <= 1 + NOT_IMPORTANT else FAILS), measure


def _memory_needed(rows: pd.DataFrame, time_model: str) -> tuple[float, float, bool] | None:
    """``(memory needed, reference time, offloads there)`` along one memory series: the least memory whose time
    is within :data:`NOT_IMPORTANT` of the time with the largest memory; ``None`` if none is feasible."""
    rows = rows.sort_values("memory_gib")
    times = _time(rows, time_model)
    if times.isna().all():
        return None
    reference = float(times.dropna().iloc[-1])
    enough = rows[(times <= reference * (1 + NOT_IMPORTANT)).to_numpy()]
    first = enough.loc[enough["memory_gib"].idxmin()]
    return float(first["memory_gib"]), reference, bool(first[f"{time_model}_offload"])


def _memory(frame, model, time_model) -> tuple[str, str]:
    rows = grid(frame, "gpus_per_node memory_gib", model)
    if rows.empty:
        return UNGRADED, "no memory grid in the sweep"
    parts, verdict = [], None
    for domain in sorted(rows["gpus_per_node"].unique()):
        found = _memory_needed(rows[rows["gpus_per_node"] == domain], time_model)
        if found is None:
            parts.append(f"{int(domain)}-GPU domain: infeasible at every memory")
            continue
        needed, reference, offload = found
        verdict = verdict if verdict is not None else needed <= SMALL_MEMORY_GIB  # graded on the first domain
        parts.append(f"{int(domain)}-GPU domain: {needed:g} GiB ({'with' if offload else 'no'} offload, "
                     f"{_days(reference)})")
    if verdict is None:
        return UNGRADED, "infeasible at every memory"
    return (HOLDS if verdict else FAILS), "; ".join(parts) + f"; small is ≤ {SMALL_MEMORY_GIB:g} GiB"


_GRADERS = {"bandwidth": _bandwidth, "interconnect": _interconnect, "size": _size, "memory": _memory}


def grade_all(frame: pd.DataFrame, models: Sequence[str] | None = None) -> list[Grade]:
    """Every statement, for every training model of the sweep, under both time models."""
    models = list(dict.fromkeys(frame["model"])) if models is None else list(models)
    out = []
    for statement, grader in _GRADERS.items():
        for model in models:
            for time_model in MODELS:
                mark, measure = grader(frame, model, time_model)
                out.append(Grade(statement, model, time_model, mark, measure))
    return out


def grades_frame(grades: Sequence[Grade]) -> pd.DataFrame:
    return pd.DataFrame([{"statement": g.statement, "model": g.model, "time model": g.time_model, "verdict": g.mark,
                          "numbers": g.measure} for g in grades])


def pareto_front(times: Sequence[float], costs: Sequence[float]) -> list[int]:
    """Indices of the points no other point beats on both time and cost (ties: the first kept), by time."""
    points = sorted((t, c, i) for i, (t, c) in enumerate(zip(times, costs)) if math.isfinite(t) and math.isfinite(c))
    front, best_cost = [], math.inf
    for t, c, i in points:
        if c < best_cost:
            front.append(i)
            best_cost = c
    return front


def pareto_frame(frame: pd.DataFrame, model: str, time_model: str = "ideal") -> pd.DataFrame:
    """The designs on the time / GPU-hours Pareto front of ``model`` (each design once), fastest first."""
    rows = frame[frame["model"] == model].drop_duplicates("label").reset_index(drop=True)
    times = rows[f"{time_model}_time_days"].astype(float).fillna(math.inf).tolist()
    costs = rows[f"{time_model}_gpu_hours"].astype(float).fillna(math.inf).tolist()
    return rows.iloc[pareto_front(times, costs)]


def series(frame: pd.DataFrame, varied: str, model: str, x: str, time_model: str = "ideal", **where) -> pd.DataFrame:
    """``x`` and the time of ``model`` along one grid, sorted by ``x`` (what a figure draws)."""
    rows = grid(frame, varied, model, **where).sort_values(x)
    return pd.DataFrame({x: rows[x].to_numpy(), "time_days": _time(rows, time_model).to_numpy()})


def timing_markdown(designs: int, models: int, seconds: float | None, workers: int = 2) -> str:
    """How long the sweep took on one core and how that grows: linearly in designs × models, each pair one
    independent search under each model, divided among the workers."""
    pairs = designs * models
    if seconds is None or pairs == 0:
        return f"The sweep has {designs} designs × {models} models = {pairs} searches under each model."
    per_pair = seconds / pairs

    def span(s: float) -> str:
        return f"{s:.3g} s" if s < 120 else f"{s / 60:.3g} min" if s < 7200 else f"{s / 3600:.3g} h"

    return (f"The sweep has {designs} designs × {models} models = {pairs} searches under each model; they took "
            f"{span(seconds)} of one core on the machine that computed them ({per_pair * 1e3:.3g} ms per design "
            "and model, both models' searches). "
            f"The time grows linearly with designs × models and divides among workers: 10,000 designs of "
            f"{models} models would take about {span(per_pair * 1e4 * models)} on one core and "
            f"{span(per_pair * 1e4 * models / workers)} on {workers}; a million, "
            f"{span(per_pair * 1e6 * models / 64)} on 64 cores of a Dask cluster.")


def summary_markdown(grades: Sequence[Grade]) -> str:
    """One sentence per statement: for which models and time models it holds, fails or is not graded."""
    lines = []
    for number, (statement, (words, _)) in enumerate(STATEMENTS.items(), 1):
        found = [g for g in grades if g.statement == statement]
        parts = []
        for mark, verb in ((HOLDS, "holds"), (FAILS, "does not hold"), (UNGRADED, "is not graded")):
            which = [f"{g.model} ({g.time_model})" for g in found if g.mark == mark]
            if which:
                parts.append(f"{mark} {verb} for {', '.join(which)}")
        lines.append(f"{number}. *{words}*: " + "; ".join(parts) + ".")
    return "\n".join(lines)
