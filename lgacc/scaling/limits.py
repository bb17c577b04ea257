"""The limits on the model size the paper states in prose, found on the sweep grid.

The largest model that fits the GPU's memory, that needs no offload, or that trains within a given
time: each limit is found on the grid of :func:`lgacc.scaling.grid.sweep_xs`, then refined on every
model of the bracketing interval: a feasibility (or offload) limit is reported between the largest
model that satisfies the condition and the next one (geometric mean), a time limit by log-log
interpolation of the training time.  With ``monotone=True`` (a switched reading) the bracket is
found by bisection instead of the whole grid.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from lgacc.model.assumptions import DEFAULT_ASSUMPTIONS, Assumptions
from lgacc.model.hardware import Hardware

from .grid import fastest_row, refine, scenario_hardware, sweep_xs

__all__ = ["Limit", "bisect_last", "time_limit_between", "feasibility_limit", "offload_limit", "time_limit"]


@dataclass(frozen=True)
class Limit:
    """A limit on the model size found on the sweep grid and refined between grid points.

    ``p`` is the reported limit; ``p_low``/``p_high`` the bracketing models (the
    last that satisfies the condition and the first that does not);
    ``memory_gib`` the total memory per GPU at the limit (interpolated for time
    limits, at ``p_low`` otherwise); ``how`` the sentence that says so.  A time
    limit also names its ``days`` and its ``bound``: ``"time"`` when the first
    model above the limit is feasible but too slow, ``"memory"`` when it has no
    feasible configuration (other limits: ``""`` and ``nan``).
    """

    p: float
    p_low: float
    p_high: float
    x_low: int
    x_high: int
    memory_gib: float
    how: str = ""
    bound: str = ""
    days: float = math.nan


def bisect_last(condition: Callable[[int], bool], ladder: Sequence[int], hint: int = 0) -> int | None:
    """The last index of ``ladder`` where ``condition`` holds, assuming it holds up to some index then fails.

    Gallops from the index ``hint`` (the answer under another setting, usually close), then
    bisects: a few searches instead of the whole ladder.  ``None`` when it fails at
    the first value; ``len(ladder) - 1`` when it holds at the last.
    """
    n = len(ladder)
    hint = min(max(hint, 0), n - 1)
    if condition(ladder[hint]):
        low, step = hint, 1
        high = hint + step
        while high < n and condition(ladder[high]):
            low, step = high, step * 2
            high = low + step
        high = min(high, n)
    else:
        high, step = hint, 1
        low = hint - step
        while low >= 0 and not condition(ladder[low]):
            high, step = low, step * 2
            low = high - step
        if low < 0:
            if not condition(ladder[0]):
                return None
            low = 0
    while high - low > 1:
        middle = (low + high) // 2
        if condition(ladder[middle]):
            low = middle
        else:
            high = middle
    return low


def time_limit_between(days: float, low: tuple[float, float, float], high: tuple[float, float, float],
                       high_feasible: bool) -> tuple[float, float, str]:
    """``(p, memory_gib, bound)`` of the limit at ``days`` between two models, each ``(time_days, p, memory_gib)``.

    ``low`` trains within ``days``; the next model, ``high``, is slower or infeasible.  Slower
    (``high_feasible``): ``p`` and the memory log-log interpolated in the training time,
    ``bound="time"``; infeasible: the geometric mean of the two sizes and the memory of ``low``,
    ``bound="memory"``.
    """
    (t_low, p_low, m_low), (t_high, p_high, m_high) = low, high
    if high_feasible:
        t = (math.log(days) - math.log(t_low)) / (math.log(t_high) - math.log(t_low))
        p = math.exp(math.log(p_low) + t * (math.log(p_high) - math.log(p_low)))
        memory = math.exp(math.log(m_low) + t * (math.log(m_high) - math.log(m_low)))
        return p, memory, "time"
    return math.sqrt(p_low * p_high), m_low, "memory"


def _rows(hardware: Hardware, scenario: str, method: str, xs: Iterable[int],
          assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> list[dict]:
    return [fastest_row(x, hardware, method, scenario, assumptions=assumptions) for x in xs]


def _bisect(hardware: Hardware, scenario: str, method: str, condition, xs: Sequence[int],
            assumptions: Assumptions, hint: int | None = None) -> tuple[dict, dict] | None:
    """The last grid row satisfying ``condition`` and the next, exact when the condition holds up to
    some model and fails beyond (feasibility and training time grow with the model size).

    :func:`bisect_last` from the grid value nearest ``hint`` (default: the middle), so that a
    switch moving a limit by a few grid points searches a few models near it and never the
    largest ones.  ``None`` when the condition holds nowhere on the grid or on the whole grid.
    """
    if not xs:
        return None
    last = len(xs) - 1
    start = last // 2 if hint is None else min(range(len(xs)), key=lambda i: abs(xs[i] - hint))
    row = lambda x: fastest_row(x, hardware, method, scenario, assumptions=assumptions)  # noqa: E731
    good = bisect_last(lambda x: condition(row(x)), xs, start)
    if good is None or good == last:
        return None
    return row(xs[good]), row(xs[good + 1])


def _bracket(hardware: Hardware, scenario: str, method: str, condition, xs: Sequence[int],
             assumptions: Assumptions = DEFAULT_ASSUMPTIONS, monotone: bool = False,
             hint: int | None = None) -> tuple[dict, dict] | None:
    """The last grid row satisfying ``condition`` followed by one that does not, refined between them.

    ``monotone=True`` finds the grid pair by galloping from ``hint`` and bisecting (a few searches
    instead of the whole grid), for switch studies whose large infeasible models are slow to search;
    the default visits every grid row.
    """
    if monotone:
        found = _bisect(hardware, scenario, method, condition, tuple(xs), assumptions, hint)
        if found is None:
            return None
        low, high = found
    else:
        rows = _rows(hardware, scenario, method, xs, assumptions)
        last = None
        for i, row in enumerate(rows):
            if condition(row):
                last = i
        if last is None or last == len(rows) - 1:
            return None
        low, high = rows[last], rows[last + 1]
    for row in _rows(hardware, scenario, method, refine(low["x"], high["x"]), assumptions):
        if condition(row):
            low = row
        else:
            high = row
            break
    return low, high


def feasibility_limit(hardware: Hardware | str = "a100-80gb", scenario: str = "limited", method: str = "improved",
                      xs: Sequence[int] | None = None, assumptions: Assumptions = DEFAULT_ASSUMPTIONS, monotone: bool = False,
                  hint: int | None = None) -> Limit | None:
    """The largest model with a feasible configuration (memory, with offload when needed)."""
    spec = scenario_hardware(hardware, scenario)
    found = _bracket(spec, scenario, method, lambda r: bool(r["feasible"]), tuple(xs or sweep_xs()), assumptions, monotone, hint)
    if found is None:
        return None
    low, high = found
    p = math.sqrt(low["p"] * high["p"])
    how = (f"{low['model']} ({low['p']:.3g} parameters) is the largest feasible model and {high['model']} "
           f"({high['p']:.3g}) is not ({high['reason'][:240]}); limit = their geometric mean")
    return Limit(p, low["p"], high["p"], low["x"], high["x"], low["memory_gib"], how)


def offload_limit(hardware: Hardware | str = "a100-80gb", scenario: str = "limited", method: str = "improved",
                  xs: Sequence[int] | None = None, assumptions: Assumptions = DEFAULT_ASSUMPTIONS, monotone: bool = False,
                  hint: int | None = None) -> Limit | None:
    """The model size above which the fastest configuration offloads."""
    spec = scenario_hardware(hardware, scenario)
    found = _bracket(spec, scenario, method, lambda r: bool(r["feasible"]) and not r["offload"], tuple(xs or sweep_xs()), assumptions, monotone, hint)
    if found is None:
        return None
    low, high = found
    p = math.sqrt(low["p"] * high["p"])
    state = "offloads" if high["feasible"] else "is infeasible"
    how = (f"{low['model']} ({low['p']:.3g}) fits without offload, {high['model']} ({high['p']:.3g}) {state}; "
           f"limit = their geometric mean")
    return Limit(p, low["p"], high["p"], low["x"], high["x"], low["memory_gib"], how)


def time_limit(days: float, hardware: Hardware | str = "a100-80gb", scenario: str = "limited", method: str = "improved",
               xs: Sequence[int] | None = None, assumptions: Assumptions = DEFAULT_ASSUMPTIONS, monotone: bool = False,
                  hint: int | None = None) -> Limit | None:
    """The largest model the fastest configuration trains within ``days``, log-log interpolated."""
    spec = scenario_hardware(hardware, scenario)
    found = _bracket(spec, scenario, method, lambda r: bool(r["feasible"]) and r["time_days"] <= days,
                     tuple(xs or sweep_xs()), assumptions, monotone, hint)
    if found is None:
        return None
    low, high = found
    p, memory, bound = time_limit_between(days, (low["time_days"], low["p"], low["memory_gib"]),
                                          (high["time_days"], high["p"], high["memory_gib"]), bool(high["feasible"]))
    if bound == "time":
        how = (f"{low['model']} trains in {low['time_days']:.3g} d with {low['memory_gib']:.3g} GB, {high['model']} in "
               f"{high['time_days']:.3g} d with {high['memory_gib']:.3g} GB; log-log interpolation at {days:.4g} d")
    else:
        how = (f"{low['model']} trains in {low['time_days']:.3g} d, {high['model']} is infeasible; "
               f"limit = their geometric mean")
    return Limit(p, low["p"], high["p"], low["x"], high["x"], memory, how, bound, days)
