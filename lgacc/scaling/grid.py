"""The grid of the scaling analysis: the X_[x] models swept, the scenarios, and one row per model.

:func:`sweep_xs` gives log-spaced models, each rounded (:func:`nice_x`) so that from X64 on
the head count ``d_a = x/2`` is divisible by 16, as X160 in the paper (an ``x`` with a prime
head count, such as X298, cannot use tensor parallelism at all and would show as a spike).
:func:`scenario_hardware` turns a spec into a scenario's (``limited``: as given; ``unlimited``:
no node-size limit; ``ethernet``: Ethernet instead of InfiniBand), and :func:`fastest_row`
is one row of a sweep: the search's fastest configuration of one model for one method,
cached in the process (sweeps and limits ask for the same rows).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from lgacc.model.assumptions import DEFAULT_ASSUMPTIONS, Assumptions
from lgacc.model.hardware import GIB, Hardware, load_hardware
from lgacc.model.transformer import x_model
from lgacc.search import fastest
from lgacc.units import DAYS_PER_YEAR

__all__ = ["METHODS", "NOT_PARTITIONED", "VARIANTS", "SCENARIOS", "ONE_YEAR_DAYS", "ONE_MONTH_DAYS", "UNLIMITED_NODE",
           "DEFAULT_X_MIN", "DEFAULT_X_MAX", "DEFAULT_POINTS", "COLUMNS", "SCALING_ASSUMPTIONS", "nice_x", "sweep_xs",
           "pow2_xs", "limit_xs", "refine", "scenario_methods", "scenario_hardware", "fastest_row", "clear_row_cache",
           "progress_bar"]

METHODS = ("baseline", "partitioned", "improved")
#: The improved method without the state partition: the dotted line of ``fig:scaling_Ethernet``.
NOT_PARTITIONED = "improved, not partitioned"
#: Every series name of a sweep's ``method`` column: ``(method, partitioned)``, ``None`` the method's default.
VARIANTS: dict[str, tuple[str, bool | None]] = {
    **{m: (m, None) for m in METHODS},
    NOT_PARTITIONED: ("improved", False),
}
SCENARIOS = ("limited", "unlimited", "ethernet")
#: The paper's "one month" and "one year" training-time thresholds, in days.
ONE_YEAR_DAYS = DAYS_PER_YEAR  # lgacc.units: one calendar for every module
ONE_MONTH_DAYS = ONE_YEAR_DAYS / 12
#: A node size no tensor-parallel degree of the swept models reaches ("no node-size limit").
UNLIMITED_NODE = 2**40
#: Default sweep: log-spaced targets from X2 (488 parameters) to ~X2000 (~4e17 parameters).
DEFAULT_X_MIN, DEFAULT_X_MAX, DEFAULT_POINTS = 2, 2000, 32

#: The paper's reading of its scaling analysis (sec:scaling_analysis, the scaling figures and the limits read
#: from them), where it differs from the tables' defaults: memory is an output of the fastest configuration,
#: not a rule ("80 GB is enough to train models up to 280 trillion parameters", "a quadrillion parameter model
#: would need decades"); tensor parallelism takes any degree the 25 % overhead cap allows, over InfiniBand above
#: the node size ("at extreme scales ... tensor parallelism over InfiniBand with n_a > 16"; "tensor parallelism
#: only requires a ring topology, which is easy to scale to an arbitrary size"), neither capped by nor dividing
#: the head count; and the limits are read on the models x = 2^k (the paper's apparent grid).  Each is a switch
#: of :class:`Assumptions`; the claims try the other value of each.
SCALING_ASSUMPTIONS = DEFAULT_ASSUMPTIONS.replace(memory_limit="output", heads_cap=False, divisible_heads=False,
                                                  scaling_grid="pow2")


def _step(x: float) -> int:
    """Grid step near ``x``: a power of two up to 32, and at least 2 (x even)."""
    return int(min(32, max(2, 2 ** math.floor(math.log2(max(x, 2) / 2)))))


def nice_x(target: float) -> int:
    """The grid value nearest ``target``: a multiple of ``min(32, 2^floor(log2(x/2)))``, even."""
    step = _step(target)
    return max(2, int(step * round(target / step)))


def sweep_xs(x_min: int = DEFAULT_X_MIN, x_max: int = DEFAULT_X_MAX, points: int = DEFAULT_POINTS) -> tuple[int, ...]:
    """Log-spaced, deduplicated grid values of ``x`` (see the module docstring)."""
    return tuple(sorted({nice_x(t) for t in np.geomspace(x_min, x_max, points)}))


def pow2_xs(x_min: int = DEFAULT_X_MIN, x_max: int = DEFAULT_X_MAX) -> tuple[int, ...]:
    """``x = 2^k`` from ``x_min`` to the first power of two at or above ``x_max`` (X2048 for the default range,
    1.4e17 parameters: past the paper's 100 quadrillion)."""
    top = 1 << max(1, math.ceil(math.log2(max(x_max, 2))))
    return tuple(2**k for k in range(1, top.bit_length()) if x_min <= 2**k)


def limit_xs(assumptions: Assumptions = SCALING_ASSUMPTIONS) -> tuple[int, ...]:
    """The models a limit is read between, by the assumption ``scaling_grid``: :func:`pow2_xs` or :func:`sweep_xs`
    (refined around the limit, :func:`refine`)."""
    return pow2_xs() if assumptions.scaling_grid == "pow2" else sweep_xs()


def refine(x_low: int, x_high: int) -> tuple[int, ...]:
    """Every grid value strictly between two grid values."""
    step = _step(x_low)
    start = (x_low // step + 1) * step
    return tuple(x for x in range(start, x_high, step) if x % 2 == 0 and x > x_low)


def scenario_methods(scenario: str) -> tuple[str, ...]:
    """The series a scenario's figure draws: :data:`METHODS`, and for ``ethernet`` also :data:`NOT_PARTITIONED`."""
    return METHODS + (NOT_PARTITIONED,) if scenario == "ethernet" else METHODS


def _variant(name: str) -> tuple[str, bool | None]:
    """``(method, partitioned)`` of a series name of :data:`VARIANTS` (any other name: the method, its default)."""
    return VARIANTS.get(name, (name, None))


def scenario_hardware(hardware: Hardware | str, scenario: str) -> Hardware:
    """The hardware of a scenario: as given, no node-size limit, or Ethernet instead of InfiniBand."""
    hardware = load_hardware(hardware)
    if scenario == "limited":
        return hardware
    if scenario == "unlimited":
        return hardware.replace(gpus_per_node=UNLIMITED_NODE)
    if scenario == "ethernet":
        return hardware.replace(infiniband_bandwidth_bytes_per_s=hardware.ethernet_bandwidth_bytes_per_s)
    raise ValueError(f"unknown scenario {scenario!r}; expected one of {', '.join(SCENARIOS)}")


COLUMNS = (
    "scenario", "method", "x", "model", "p", "feasible", "time_days", "n_gpu", "efficiency",
    "n_b", "n_l", "n_a", "n_mu", "b_mu", "offload",
    "memory_gib", "offloadable_gib", "non_offloadable_gib", "state_gib", "checkpoint_gib", "buffers_gib", "activations_gib",
    "reason",
)


@lru_cache(maxsize=8192)
def _fastest_cached(x: int, hardware: Hardware, method: str, parallelism: str, allow_offload: bool,
                    partitioned: bool | None = None, assumptions: Assumptions = DEFAULT_ASSUMPTIONS):
    return fastest(x_model(x), hardware, method, parallelism, allow_offload=allow_offload, explain=False,
                   partitioned=partitioned, assumptions=assumptions)


def clear_row_cache() -> None:
    """Forget the rows computed in this process (a benchmark times a cold sweep)."""
    _fastest_cached.cache_clear()


def fastest_row(x: int, hardware: Hardware, method: str, scenario: str = "", parallelism: str = "3d",
                allow_offload: bool = True, assumptions: Assumptions = SCALING_ASSUMPTIONS) -> dict:
    """One sweep row: the fastest configuration of X_[x] for ``method`` on ``hardware`` (cached), under the
    scaling analysis' reading by default (:data:`SCALING_ASSUMPTIONS`).

    ``method`` is a series name of :data:`VARIANTS`: a method, or :data:`NOT_PARTITIONED`
    (the improved method searched with ``partitioned=False``); the row keeps the name.
    """
    model = x_model(x)
    base, partitioned = _variant(method)
    # the grid is read by the limits only: one search for either grid
    searched = assumptions.replace(scaling_grid=DEFAULT_ASSUMPTIONS.scaling_grid)
    result = _fastest_cached(int(x), hardware, base, parallelism, allow_offload, partitioned, searched)
    row = dict.fromkeys(COLUMNS, math.nan)
    row.update(scenario=scenario, method=method, x=int(x), model=model.name, p=float(model.p))
    e = result.evaluation
    if e is None:
        row.update(feasible=False, offload=False, reason="; ".join(result.binding))
        return row
    c = result.config
    gib = e.memory.in_gib()
    row.update(
        feasible=True, time_days=e.time_days, n_gpu=e.n_gpu, efficiency=e.efficiency,
        n_b=c.n_b, n_l=c.n_l, n_a=c.n_a, n_mu=c.n_mu, b_mu=c.b_mu, offload=bool(c.offload),
        memory_gib=e.memory.total / GIB, offloadable_gib=gib["offloadable"], non_offloadable_gib=gib["non_offloadable"],
        state_gib=gib["state"], checkpoint_gib=gib["checkpoint"], buffers_gib=gib["buffers"],
        activations_gib=gib["activations"], reason="",
    )
    return row


def progress_bar(iterable, total: int, progress: bool, desc: str):
    if not progress:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc)

