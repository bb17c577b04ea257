"""The limits on the model size the paper states in prose, read along the scaling curves.

Three limits, each with the training time and the memory at it:

* *memory* (:func:`feasibility_limit`, "80 GB is enough to train models up to ..."): where the
  non-offloadable memory of the fastest configuration crosses the GPU's memory;
* *offload* (:func:`offload_limit`, "offloading being required above ..."): where its total memory does;
* *time* (:func:`time_limit`, "a threshold of one month ... one year"): where its training time crosses
  the threshold.

Under the scaling analysis' reading (``memory_limit="output"``, :data:`~lgacc.scaling.grid.SCALING_ASSUMPTIONS`)
every model has a fastest configuration and its memory, so each limit is read *along the curve*: the first
pair of neighbouring models on the grid where the curve passes the level, then log-log interpolation between
them (a straight line on the paper's log-log axes).  The grid is the assumption ``scaling_grid``: the models
``x = 2^k`` (``pow2``, the paper's apparent grid), or the sweep's log-spaced models refined to every grid model
between the pair (``fine``).  The memory curves are not monotone in ``x`` (the tensor degree jumps where the cap
lets it cross the node), hence the *first* crossing.

With ``memory_limit="constraint"`` (memory a rule, as in the tables) a model past the memory limit has no
configuration at all: the memory and offload limits are then the geometric mean of the last model that fits
(without offload) and the next one, and a time limit that meets an infeasible model likewise
(``bound="memory"``).  With ``monotone=True`` (a switched reading) the time limit's bracket is found by
bisection instead of the whole grid.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from lgacc.model.assumptions import Assumptions, apply_to_hardware
from lgacc.model.hardware import GIB, Hardware

from .grid import SCALING_ASSUMPTIONS, fastest_row, limit_xs, refine, scenario_hardware

__all__ = ["Limit", "bisect_last", "time_limit_between", "interpolate_rows", "feasibility_limit", "offload_limit",
           "time_limit", "along_curve"]


@dataclass(frozen=True)
class Limit:
    """A limit on the model size found on the grid and read between two neighbouring models.

    ``p`` is the reported limit; ``p_low``/``p_high`` the bracketing models (the
    last that satisfies the condition and the first that does not);
    ``memory_gib`` the total memory per GPU at the limit (interpolated along the curve, or at ``p_low``
    where the next model is infeasible); ``time_days`` the training time at the limit (likewise);
    ``how`` the sentence that says so; ``grid`` the grid it was read on.  A time
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
    time_days: float = math.nan
    grid: str = ""


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


#: The quantities a limit reports at its size, interpolated with it.
_ALONG = ("p", "time_days", "memory_gib", "non_offloadable_gib")


def interpolate_rows(low: dict, high: dict, key: str, level: float) -> dict[str, float]:
    """The sweep rows' quantities where ``key`` reaches ``level`` between two neighbouring models, log-log
    (``low[key] <= level < high[key]``): a straight line between the two points on log-log axes."""
    t = (math.log(level) - math.log(low[key])) / (math.log(high[key]) - math.log(low[key]))
    return {name: math.exp(math.log(low[name]) + t * (math.log(high[name]) - math.log(low[name]))) for name in _ALONG}


def _rows(hardware: Hardware, scenario: str, method: str, xs: Iterable[int],
          assumptions: Assumptions = SCALING_ASSUMPTIONS) -> list[dict]:
    return [fastest_row(x, hardware, method, scenario, assumptions=assumptions) for x in xs]


def _first_crossing(rows: Sequence[dict], below: Callable[[dict], bool]) -> int | None:
    """The first index ``i`` with ``below(rows[i])`` and not ``below(rows[i + 1])``."""
    for i in range(len(rows) - 1):
        if below(rows[i]) and not below(rows[i + 1]):
            return i
    return None


def _crossing_pair(hardware: Hardware, scenario: str, method: str, below: Callable[[dict], bool], xs: Sequence[int],
                   assumptions: Assumptions, refined: bool) -> tuple[dict, dict] | None:
    """The first neighbouring pair where the curve leaves ``below``; on the fine grid, refined to every grid model
    between the pair's models."""
    rows = _rows(hardware, scenario, method, xs, assumptions)
    i = _first_crossing(rows, below)
    if i is None:
        return None
    low, high = rows[i], rows[i + 1]
    if refined:
        between = [low, *_rows(hardware, scenario, method, refine(low["x"], high["x"]), assumptions), high]
        j = _first_crossing(between, below)
        low, high = between[j], between[j + 1]
    return low, high


def _gpu_gib(spec: Hardware, assumptions: Assumptions) -> float:
    """The GPU's memory in GiB as the assumptions read the spec (``gb``)."""
    return apply_to_hardware(spec, assumptions).memory_bytes / GIB


def _xs(xs: Sequence[int] | None, assumptions: Assumptions) -> tuple[int, ...]:
    return tuple(xs) if xs else limit_xs(assumptions)


def _grid_name(xs: Sequence[int] | None, assumptions: Assumptions) -> str:
    return "given models" if xs else assumptions.scaling_grid


def _memory_crossing(spec: Hardware, scenario: str, method: str, key: str, xs: Sequence[int] | None,
                     assumptions: Assumptions, what: str) -> Limit | None:
    """Where the memory ``key`` of the fastest configuration crosses the GPU's memory, along the curve."""
    level = _gpu_gib(spec, assumptions)
    below = lambda r: bool(r["feasible"]) and r[key] <= level  # noqa: E731
    found = _crossing_pair(spec, scenario, method, below, _xs(xs, assumptions), assumptions,
                           refined=not xs and assumptions.scaling_grid == "fine")
    if found is None:
        return None
    low, high = found
    at = interpolate_rows(low, high, key, level)
    how = (f"{what} of the fastest configuration: {low[key]:.3g} GB at {low['model']} ({low['p']:.3g} parameters), "
           f"{high[key]:.3g} GB at {high['model']} ({high['p']:.3g}); it reaches the GPU's {level:.3g} GB at "
           f"{at['p']:.3g} parameters (log-log between the two), training in {at['time_days']:.4g} d")
    return Limit(at["p"], low["p"], high["p"], low["x"], high["x"], at["memory_gib"], how,
                 time_days=at["time_days"], grid=_grid_name(xs, assumptions))


def _last_fitting(spec: Hardware, scenario: str, method: str, condition, xs: Sequence[int] | None,
                  assumptions: Assumptions) -> tuple[dict, dict] | None:
    """Memory as a rule: the last grid model satisfying ``condition`` and the next one, refined between them."""
    rows = _rows(spec, scenario, method, _xs(xs, assumptions), assumptions)
    last = max((i for i, row in enumerate(rows) if condition(row)), default=None)
    if last is None or last == len(rows) - 1:
        return None
    low, high = rows[last], rows[last + 1]
    if not xs and assumptions.scaling_grid == "fine":
        for row in _rows(spec, scenario, method, refine(low["x"], high["x"]), assumptions):
            if condition(row):
                low = row
            else:
                high = row
                break
    return low, high


def feasibility_limit(hardware: Hardware | str = "a100-80gb", scenario: str = "limited", method: str = "improved",
                      xs: Sequence[int] | None = None, assumptions: Assumptions = SCALING_ASSUMPTIONS,
                      monotone: bool = False, hint: int | None = None) -> Limit | None:
    """The largest model the GPU's memory holds: where the non-offloadable memory (what stays on the GPU with
    everything else offloaded) crosses it along the curve; with memory a rule, the largest model with a
    feasible configuration (``monotone`` and ``hint`` are accepted for symmetry with :func:`time_limit`)."""
    spec = scenario_hardware(hardware, scenario)
    if assumptions.memory_limit == "output":
        return _memory_crossing(spec, scenario, method, "non_offloadable_gib", xs, assumptions,
                                "the non-offloadable memory")
    found = _last_fitting(spec, scenario, method, lambda r: bool(r["feasible"]), xs, assumptions)
    if found is None:
        return None
    low, high = found
    p = math.sqrt(low["p"] * high["p"])
    how = (f"{low['model']} ({low['p']:.3g} parameters) is the largest feasible model and {high['model']} "
           f"({high['p']:.3g}) is not ({high['reason'][:240]}); limit = their geometric mean")
    return Limit(p, low["p"], high["p"], low["x"], high["x"], low["memory_gib"], how, time_days=low["time_days"],
                 grid=_grid_name(xs, assumptions))


def offload_limit(hardware: Hardware | str = "a100-80gb", scenario: str = "limited", method: str = "improved",
                  xs: Sequence[int] | None = None, assumptions: Assumptions = SCALING_ASSUMPTIONS,
                  monotone: bool = False, hint: int | None = None) -> Limit | None:
    """The model size above which the fastest configuration needs offloading: where its total memory crosses the
    GPU's along the curve; with memory a rule, where the search starts to offload."""
    spec = scenario_hardware(hardware, scenario)
    if assumptions.memory_limit == "output":
        return _memory_crossing(spec, scenario, method, "memory_gib", xs, assumptions, "the total memory")
    found = _last_fitting(spec, scenario, method, lambda r: bool(r["feasible"]) and not r["offload"], xs, assumptions)
    if found is None:
        return None
    low, high = found
    p = math.sqrt(low["p"] * high["p"])
    state = "offloads" if high["feasible"] else "is infeasible"
    how = (f"{low['model']} ({low['p']:.3g}) fits without offload, {high['model']} ({high['p']:.3g}) {state}; "
           f"limit = their geometric mean")
    return Limit(p, low["p"], high["p"], low["x"], high["x"], low["memory_gib"], how, time_days=low["time_days"],
                 grid=_grid_name(xs, assumptions))


def _bisect(hardware: Hardware, scenario: str, method: str, condition, xs: Sequence[int],
            assumptions: Assumptions, hint: int | None = None) -> tuple[dict, dict] | None:
    """The last grid row satisfying ``condition`` and the next, exact when the condition holds up to
    some model and fails beyond (training time grows with the model size).

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


def _time_bracket(spec: Hardware, scenario: str, method: str, condition, xs: Sequence[int], assumptions: Assumptions,
                  monotone: bool, hint: int | None, refined: bool) -> tuple[dict, dict] | None:
    """The last grid row within the time followed by one that is not, refined between them on the fine grid."""
    if monotone:
        found = _bisect(spec, scenario, method, condition, tuple(xs), assumptions, hint)
        if found is None:
            return None
        low, high = found
    else:
        rows = _rows(spec, scenario, method, xs, assumptions)
        last = max((i for i, row in enumerate(rows) if condition(row)), default=None)
        if last is None or last == len(rows) - 1:
            return None
        low, high = rows[last], rows[last + 1]
    if refined:
        for row in _rows(spec, scenario, method, refine(low["x"], high["x"]), assumptions):
            if condition(row):
                low = row
            else:
                high = row
                break
    return low, high


def time_limit(days: float, hardware: Hardware | str = "a100-80gb", scenario: str = "limited", method: str = "improved",
               xs: Sequence[int] | None = None, assumptions: Assumptions = SCALING_ASSUMPTIONS, monotone: bool = False,
               hint: int | None = None) -> Limit | None:
    """The largest model the fastest configuration trains within ``days``, log-log interpolated along the time
    curve between the last model within it and the next (the geometric mean when the next is infeasible)."""
    spec = scenario_hardware(hardware, scenario)
    grid = _xs(xs, assumptions)
    found = _time_bracket(spec, scenario, method, lambda r: bool(r["feasible"]) and r["time_days"] <= days, grid,
                          assumptions, monotone, hint, refined=not xs and assumptions.scaling_grid == "fine")
    if found is None:
        return None
    low, high = found
    p, memory, bound = time_limit_between(days, (low["time_days"], low["p"], low["memory_gib"]),
                                          (high["time_days"], high["p"], high["memory_gib"]), bool(high["feasible"]))
    if bound == "time":
        how = (f"{low['model']} trains in {low['time_days']:.3g} d with {low['memory_gib']:.3g} GB, {high['model']} in "
               f"{high['time_days']:.3g} d with {high['memory_gib']:.3g} GB; log-log interpolation at {days:.4g} d")
        time_days = days
    else:
        how = (f"{low['model']} trains in {low['time_days']:.3g} d, {high['model']} is infeasible; "
               f"limit = their geometric mean")
        time_days = low["time_days"]
    return Limit(p, low["p"], high["p"], low["x"], high["x"], memory, how, bound, days, time_days,
                 _grid_name(xs, assumptions))


def along_curve(p: float, hardware: Hardware | str = "a100-80gb", scenario: str = "limited", method: str = "improved",
                assumptions: Assumptions = SCALING_ASSUMPTIONS) -> tuple[dict[str, float], dict, dict] | None:
    """The curve's quantities (``p, time_days, memory_gib, non_offloadable_gib``) at ``p`` parameters, log-log between
    the two neighbouring models of the grid (refined around ``p`` on the fine grid), with those two rows; ``None``
    outside the grid or where a neighbour has no feasible configuration."""
    spec = scenario_hardware(hardware, scenario)
    below = lambda r: r["p"] <= p  # noqa: E731
    found = _crossing_pair(spec, scenario, method, below, limit_xs(assumptions), assumptions,
                           refined=assumptions.scaling_grid == "fine")
    if found is None:
        return None
    low, high = found
    if not (low["feasible"] and high["feasible"]):
        return None
    return interpolate_rows(low, high, "p", p), low, high
