"""The computation of the sensitivity study: the headline results at every point of the grid.

One job: turn a :class:`~lgacc.studies.sensitivity.grid.Setting` into a :class:`Headline`
with the search (:func:`lgacc.search.fastest`, "3d" parallelism), never with a
formula retyped here, and every point of :func:`~lgacc.studies.sensitivity.grid.dimensions`
into a :class:`SensitivityRow` (:func:`sensitivity_rows`, kept on disk by
:mod:`lgacc.cache.results`).  The searches of one run are memoised; the size limits
are found by bisection over the X family (:func:`time_limit`), with the one rule of
:mod:`lgacc.scaling.limits` (its :class:`Limit`, :func:`bisect_last` and
:func:`time_limit_between`) on this module's ladder and memoised searches.

May import: :mod:`lgacc.studies.sensitivity.grid`, :mod:`lgacc.search`, :mod:`lgacc.scaling`
(the sweep's grid and calendar, the rule for a limit), :mod:`lgacc.model.hardware`, :mod:`lgacc.errors`,
:mod:`lgacc.cache.results`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any, Iterable, Mapping

from lgacc.cache.results import cached
from lgacc.errors import UserInputError
from lgacc.model.hardware import DEFAULT_HARDWARE, GIB, Hardware, load_hardware
from lgacc.model.transformer import TRILLION_X  # the example of sec:trillion_parameter
from lgacc.scaling import ONE_MONTH_DAYS, ONE_YEAR_DAYS, nice_x, pow2_xs, sweep_xs
from lgacc.scaling.limits import Limit, bisect_last, time_limit_between
from lgacc.search import fastest

from .grid import Setting, dimensions

__all__ = [
    "TRILLION_X",
    "PARALLELISM",
    "Limit",
    "Headline",
    "RESULT_KEYS",
    "SensitivityRow",
    "limit_ladder",
    "time_limit",
    "headline",
    "gpu_resident_bytes",
    "sensitivity_rows",
]

#: The search's parallelism for every headline result: the paper's fastest configurations are "3d".
PARALLELISM = "3d"


# --- results -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Headline:
    """The paper's headline results under one :class:`Setting` (``nan``, or ``None`` for a count, where infeasible)."""

    baseline_time_days: float
    baseline_n_gpu: int | None
    improved_time_days: float
    improved_n_gpu: int | None
    speedup: float
    min_memory_gib: float
    min_memory_share: float
    one_month_limit_p: float
    one_month_bound: str
    one_year_limit_p: float
    one_year_bound: str
    ethernet_slowdown: float


RESULT_KEYS = tuple(f.name for f in fields(Headline))


@dataclass(frozen=True)
class SensitivityRow:
    """One value of one assumption and the headline results there (the command's JSON object)."""

    assumption: str
    value: Any
    label: str
    is_paper_default: bool
    headline: Headline

    def as_dict(self) -> dict[str, Any]:
        out = {"assumption": self.assumption, "value": self.value, "label": self.label,
               "is_paper_default": self.is_paper_default}
        out.update(asdict(self.headline))
        return out


class _Searches:
    """Memo of the searches of one run, keyed by everything a search depends on."""

    def __init__(self) -> None:
        self.results: dict[tuple, Any] = {}

    def fastest(self, setting: Setting, x: int, method: str, hardware: Hardware | None = None,
                memory_rule: bool = False):
        """The search under ``setting``; ``memory_rule``: with memory a rule (the trillion-parameter example's
        configurations must fit, as in its tables), else as the setting reads it (the scaling limits)."""
        spec = setting.hardware if hardware is None else hardware
        assumptions = setting.assumptions.replace(memory_limit="constraint") if memory_rule else setting.assumptions
        key = (x, method, spec, assumptions, setting.max_overhead, setting.depth_factor)
        if key not in self.results:
            self.results[key] = fastest(setting.model(x), spec, method, PARALLELISM, max_overhead=setting.max_overhead,
                                        explain=False, assumptions=assumptions)
        return self.results[key]

    def row(self, setting: Setting, x: int) -> tuple[bool, float, float, float]:
        """``(feasible, time_days, p, memory_gib)`` of the improved method's fastest configuration of model ``x``."""
        result = self.fastest(setting, x, "improved")
        p = float(setting.model(x).p)
        if result.evaluation is None:
            return False, math.nan, p, math.nan
        e = result.evaluation
        return True, e.time_days, p, e.memory.total / GIB


def limit_ladder(grid: str = "fine") -> tuple[int, ...]:
    """The models a limit is searched on, by the assumption ``scaling_grid``: ``x = 2^k`` (``pow2``), or the
    scaling sweep's grid and every grid value between its points (``fine``).

    A value ``x`` is on the fine grid when :func:`lgacc.scaling.nice_x` keeps it, so that
    ladder is the refinement :func:`lgacc.scaling.time_limit` visits between two
    grid points, over the whole range.
    """
    if grid == "pow2":
        return pow2_xs()
    xs = sweep_xs()
    return tuple(x for x in range(xs[0], xs[-1] + 1, 2) if nice_x(x) == x)


def time_limit(days: float, setting: Setting, searches: _Searches | None = None, hint: int = 0) -> tuple[Limit | None, int]:
    """The largest model the improved method trains within ``days`` under ``setting``, and its ladder index.

    A :class:`~lgacc.scaling.limits.Limit` with its ``days`` and ``bound`` (``how`` empty).
    ``None`` when even the smallest model takes longer or the largest ladder model is
    still within ``days``.
    """
    searches = _Searches() if searches is None else searches
    ladder = limit_ladder(setting.assumptions.scaling_grid)

    def within(x: int) -> bool:
        feasible, time_days, _, _ = searches.row(setting, x)
        return feasible and time_days <= days

    index = bisect_last(within, ladder, hint)
    if index is None or index == len(ladder) - 1:
        return None, hint
    x_low, x_high = ladder[index], ladder[index + 1]
    _, t_low, p_low, m_low = searches.row(setting, x_low)
    feasible, t_high, p_high, m_high = searches.row(setting, x_high)
    p, memory, bound = time_limit_between(days, (t_low, p_low, m_low), (t_high, p_high, m_high), feasible)
    return Limit(p, p_low, p_high, x_low, x_high, memory, bound=bound, days=days), index


def headline(setting: Setting, searches: _Searches | None = None, hints: Mapping[float, int] | None = None) -> tuple[Headline, dict[float, int]]:
    """The headline results under ``setting`` (and the ladder indices of its limits, hints for the next)."""
    searches = _Searches() if searches is None else searches
    hints = dict(hints or {})
    # X160's configurations fit the GPU, as in the tables (and the claims computed from them)
    base = searches.fastest(setting, TRILLION_X, "baseline", memory_rule=True)
    impr = searches.fastest(setting, TRILLION_X, "improved", memory_rule=True)
    eth = searches.fastest(setting, TRILLION_X, "improved", setting.ethernet_hardware(), memory_rule=True)
    nan = math.nan
    b_time = base.evaluation.time_days if base.feasible else nan
    i_time = impr.evaluation.time_days if impr.feasible else nan
    memory = gpu_resident_bytes(impr.evaluation) if impr.feasible else nan
    e_time = eth.evaluation.time_days if eth.feasible else nan
    limits = {}
    for days in (ONE_MONTH_DAYS, ONE_YEAR_DAYS):
        limits[days], hints[days] = time_limit(days, setting, searches, hints.get(days, 0))
    month, year = limits[ONE_MONTH_DAYS], limits[ONE_YEAR_DAYS]
    return Headline(
        baseline_time_days=b_time,
        baseline_n_gpu=int(base.evaluation.n_gpu) if base.feasible else None,
        improved_time_days=i_time,
        improved_n_gpu=int(impr.evaluation.n_gpu) if impr.feasible else None,
        speedup=(b_time / i_time) if impr.feasible and base.feasible else (math.inf if impr.feasible else nan),
        min_memory_gib=memory / GIB,
        min_memory_share=memory / setting.gpu_memory_bytes(),
        one_month_limit_p=month.p if month else nan,
        one_month_bound=month.bound if month else "",
        one_year_limit_p=year.p if year else nan,
        one_year_bound=year.bound if year else "",
        ethernet_slowdown=e_time / i_time - 1,
    ), hints


def gpu_resident_bytes(evaluation) -> float:
    """The memory that stays on the GPU: everything, or without the state and checkpoints when they are offloaded.

    The paper's 4.72 GB is the whole memory of a configuration that does not offload;
    on a small GPU the search offloads, and the share of the GPU's memory that matters
    is then the non-offloadable part the ``memory`` rule checks.
    """
    memory = evaluation.memory
    return memory.non_offloadable if evaluation.config.offload else memory.total


def sensitivity_rows(
    hardware: Hardware | str = DEFAULT_HARDWARE,
    names: Iterable[str] | None = None,
    *,
    progress: bool = False,
) -> list[SensitivityRow]:
    """Every value of every assumption (or of ``names``), each moved alone, with its headline results.

    Kept on disk (:mod:`lgacc.cache.results`): the command, the book's chapter and the tests ask for
    the same grid of a spec."""
    spec = load_hardware(hardware)
    key = None if names is None else tuple(names)
    return cached("sensitivity", (spec, key), lambda: _sensitivity_rows(spec, key, progress))


def _sensitivity_rows(spec: Hardware, names: tuple[str, ...] | None, progress: bool) -> list[SensitivityRow]:
    base = Setting(spec)
    chosen = dimensions(spec)
    if names is not None:
        wanted = list(names)
        known = {d.name for d in chosen}
        unknown = [n for n in wanted if n not in known]
        if unknown:
            raise UserInputError(f"unknown assumption {unknown[0]!r}; expected one of {', '.join(sorted(known))}")
        chosen = tuple(d for d in chosen if d.name in wanted)
    searches = _Searches()
    _, hints = headline(base, searches)
    pairs = [(d, v) for d in chosen for v in d.values]
    if progress:
        from tqdm.auto import tqdm

        pairs = tqdm(pairs, desc="sensitivity", unit="setting")
    rows = []
    for dimension, value in pairs:
        result, _ = headline(dimension.setting(base, value), searches, hints)
        rows.append(SensitivityRow(dimension.name, value, dimension.label(value), value == dimension.default, result))
    return rows

