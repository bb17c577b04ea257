"""Scaling sweeps over the X_[x] family (sec:scaling_analysis, sec:additional_considerations).

Every row is the fastest configuration the search (:func:`lgacc.search.fastest`,
"3d" parallelism, the paper's "Optimal configuration" rules) finds for one model
X_[x], one method (baseline, partitioned, improved) and one *scenario*:

``limited`` (``fig:scaling_limited``)
    the hardware as given: NVLink tensor parallelism up to the node size (16 on
    the reference HGX node); beyond a node the evaluator sends tensor-parallel
    traffic over InfiniBand, which the search only keeps where it pays.
``unlimited`` (``fig:scaling_unlimited``)
    no node-size limit: tensor parallelism over NVLink at any degree.
``ethernet`` (``fig:scaling_Ethernet``)
    25 Gb/s Ethernet per GPU instead of InfiniBand (sec:slow_network).  This
    scenario's sweep adds the paper's dotted line, :data:`NOT_PARTITIONED`: the
    improved method (layered gradient accumulation, modular pipeline) without
    the state partition ("For the smallest models, the partition can be avoided
    to further reduce the training time at a minimal memory cost"), searched
    with ``fastest(..., partitioned=False)``.

Two derived sweeps:

:func:`constant_time_sweep` (``fig:scaling_constant_time``, "There is no memory wall")
    the memory-to-compute ratio needed to train in one month when data and
    pipeline parallelism are used as much as the critical batch allows and only
    tensor parallelism scales further (assumed free of overhead: "faster devices
    or faster network connections").  With ``n_b, n_l`` fixed, every memory term
    of the resource model divides by ``n_a`` as does the compute per GPU, so the
    ratio is the memory of one tensor-parallel *instance* over the compute it
    needs to finish in a month.  The dotted line is our reading of "a faster
    training scheme which is already possible on A100s": the ``limited``
    improved configuration, for the models it trains within a month, at its
    actual memory per A100 over the A100's peak.
:func:`offload_sweep` (``fig:scaling_offload``, sec:fast_checkpoints)
    for each method's fastest configuration, the arithmetic intensity (and the
    per-GPU bandwidth ``c_gpu / nu``) of offloading the training state and the
    activation checkpoints, to compare with the CPU-GPU, NVMe, hard-drive and
    Ethernet thresholds of ``table:hardware_bandwidth``.

Choice of models.  The X family has ``d_a = x/2`` heads and ``d_l = x`` layers,
and tensor (pipeline) parallelism needs a divisor of ``d_a`` (``d_l``).  An ``x``
with a prime ``x/2`` (X298 has 149 heads) cannot use tensor parallelism at all
and shows as a spurious spike.  The sweep therefore rounds each log-spaced target
to a multiple of ``min(32, 2^floor(log2(x/2)))``, so that from X64 on every model
has a head count divisible by 16, as X160 in the paper.

Limits (the prose claims) are found on this grid, then refined on every such
``x`` in the bracketing interval: a feasibility limit is reported between the
largest feasible model and the next one (geometric mean), a time limit by
log-log interpolation of the training time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from .units import DAYS_PER_YEAR
from .assumptions import DEFAULT_ASSUMPTIONS, Assumptions
from .evaluate import evaluate_many
from .hardware import GIB, Hardware, load_hardware
from .models import x_model
from .search import fastest
from .resultcache import cached

__all__ = [
    "METHODS",
    "NOT_PARTITIONED",
    "VARIANTS",
    "scenario_methods",
    "SCENARIOS",
    "ONE_MONTH_DAYS",
    "ONE_YEAR_DAYS",
    "nice_x",
    "sweep_xs",
    "scenario_hardware",
    "fastest_row",
    "scaling_sweep",
    "unpartitioned_helps",
    "constant_time_sweep",
    "offload_sweep",
    "Limit",
    "feasibility_limit",
    "offload_limit",
    "time_limit",
]

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


def _refine(x_low: int, x_high: int) -> tuple[int, ...]:
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


_COLUMNS = (
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


def fastest_row(x: int, hardware: Hardware, method: str, scenario: str = "", parallelism: str = "3d",
                allow_offload: bool = True, assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> dict:
    """One sweep row: the fastest configuration of X_[x] for ``method`` on ``hardware`` (cached).

    ``method`` is a series name of :data:`VARIANTS`: a method, or :data:`NOT_PARTITIONED`
    (the improved method searched with ``partitioned=False``); the row keeps the name.
    """
    model = x_model(x)
    base, partitioned = _variant(method)
    result = _fastest_cached(int(x), hardware, base, parallelism, allow_offload, partitioned, assumptions)
    row = dict.fromkeys(_COLUMNS, math.nan)
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


def _progress(iterable, total: int, progress: bool, desc: str):
    if not progress:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc)


def scaling_sweep(
    hardware: Hardware | str = "a100-80gb",
    scenario: str = "limited",
    methods: Sequence[str] | None = None,
    xs: Iterable[int] | None = None,
    *,
    progress: bool = False,
) -> pd.DataFrame:
    """Fastest configuration per (model, method) in a scenario (``fig:scaling_limited``,
    ``fig:scaling_unlimited``, ``fig:scaling_Ethernet``).

    ``methods`` are series names of :data:`VARIANTS`; by default the scenario's
    (:func:`scenario_methods`: the Ethernet sweep adds :data:`NOT_PARTITIONED`,
    the dotted line of ``fig:scaling_Ethernet``).

    One row per (x, method); infeasible models keep a row with ``feasible=False``
    and the search's reason, so that a method's curve stops where no
    configuration is feasible.  Memory in the paper's GB (GiB) per GPU.
    """
    spec = scenario_hardware(hardware, scenario)
    xs = tuple(sweep_xs() if xs is None else xs)
    methods = scenario_methods(scenario) if methods is None else tuple(methods)
    pairs = [(x, m) for m in methods for x in xs]

    def compute() -> pd.DataFrame:
        rows = [fastest_row(x, spec, m, scenario) for x, m in _progress(pairs, len(pairs), progress, f"{scenario} sweep")]
        return pd.DataFrame(rows, columns=list(_COLUMNS))
    # kept on disk: a figure's page, today's-hardware chapter and the tests redraw the same sweeps
    return cached("sweep", (spec, scenario, pairs), compute)


def unpartitioned_helps(frame: pd.DataFrame, margin: float = 1e-3) -> pd.DataFrame:
    """The :data:`NOT_PARTITIONED` rows of a sweep where avoiding the partition is faster than the
    improved method with it, by more than ``margin`` (relative): where the paper's dotted line of
    ``fig:scaling_Ethernet`` applies ("For the smallest models, the partition can be avoided to further
    reduce the training time").  Which models these are is the sweep's result, not an input."""
    plain = frame[(frame.method == NOT_PARTITIONED) & frame.feasible.astype(bool)]
    part = frame[(frame.method == "improved") & frame.feasible.astype(bool)].set_index("x").time_days
    faster = [x in part.index and t < part[x] * (1 - margin) for x, t in zip(plain.x, plain.time_days)]
    return plain[faster]


def constant_time_sweep(
    hardware: Hardware | str = "a100-80gb",
    methods: Sequence[str] = METHODS,
    xs: Iterable[int] | None = None,
    *,
    target_days: float = ONE_MONTH_DAYS,
    progress: bool = False,
) -> pd.DataFrame:
    """Memory-to-compute ratio needed to train in ``target_days`` (``fig:scaling_constant_time``).

    Per model and method: the fastest data (+ pipeline) configuration without
    tensor parallelism and without a memory limit (so that data and pipeline
    parallelism are as large as the critical batch allows), then the tensor
    parallelism ``n_a = time / target`` that would bring it to ``target_days``
    at no overhead.  ``ratio_s`` = memory per GPU / compute per GPU needed, in
    bytes per flop/s (seconds); ``gpu_ratio_s`` is the hardware's own ratio.
    Rows ``method="improved (A100 now)"`` are the dotted line: the ``limited``
    scenario's improved configuration where it trains within the target, at its
    memory per GPU over the GPU's peak.
    """
    spec = load_hardware(hardware)
    roomy = spec.replace(memory_bytes=1e30)
    xs = tuple(sweep_xs() if xs is None else xs)
    peak = spec.peak_flop_per_s
    rows = []
    pairs = [(x, m) for m in methods for x in xs]
    for x, method in _progress(pairs, len(pairs), progress, "constant-time sweep"):
        parallelism = "Data" if method == "partitioned" else "Data + pipe"
        r = fastest_row(x, roomy, method, "constant_time", parallelism, allow_offload=False)
        row = {"method": method, "x": x, "model": r["model"], "p": r["p"], "feasible": r["feasible"],
               "time_days_without_tensor": r["time_days"], "n_b": r["n_b"], "n_l": r["n_l"]}
        if r["feasible"]:
            n_a = r["time_days"] / target_days
            row["n_a_needed"] = n_a
            row["memory_gib_per_instance"] = r["memory_gib"]
            row["ratio_s"] = r["memory_gib"] * GIB / (n_a * peak)
        rows.append(row)
    for x in xs:
        r = fastest_row(x, spec, "improved", "limited")
        if r["feasible"] and r["time_days"] <= target_days:
            rows.append({"method": "improved (A100 now)", "x": x, "model": r["model"], "p": r["p"], "feasible": True,
                         "time_days_without_tensor": math.nan, "n_b": r["n_b"], "n_l": r["n_l"],
                         "n_a_needed": r["n_a"], "memory_gib_per_instance": r["memory_gib"] * r["n_a"],
                         "ratio_s": r["memory_gib"] * GIB / peak})
    frame = pd.DataFrame(rows)
    frame["gpu_ratio_s"] = spec.memory_bytes / peak
    return frame


def offload_sweep(
    hardware: Hardware | str = "a100-80gb",
    methods: Sequence[str] = METHODS,
    xs: Iterable[int] | None = None,
    *,
    progress: bool = False,
) -> pd.DataFrame:
    """Arithmetic intensity and bandwidth of offloading the state and the checkpoints (``fig:scaling_offload``).

    For each method's fastest configuration (``limited`` scenario), the same
    configuration is re-evaluated with offload on: ``nu_state`` and
    ``nu_checkpoint`` in flop/byte, and the bandwidth per GPU ``c_gpu / nu`` in
    bytes/s.  Offloading is free of overhead where ``nu`` is above a link's
    threshold (columns ``threshold_<link>``).
    """
    spec = load_hardware(hardware)
    xs = tuple(sweep_xs() if xs is None else xs)
    rows = []
    pairs = [(x, m) for m in methods for x in xs]
    for x, method in _progress(pairs, len(pairs), progress, "offload sweep"):
        r = fastest_row(x, spec, method, "limited")
        if not r["feasible"]:
            continue
        e = evaluate_many(x_model(x), spec, method, n_b=int(r["n_b"]), n_l=int(r["n_l"]), n_a=int(r["n_a"]),
                          n_mu=int(r["n_mu"]), b_mu=int(r["b_mu"]), offload=True)
        nu_state = float(e["nu_state_offload"])
        nu_checkpoint = float(e["nu_checkpoint_offload"])
        rows.append({"method": method, "x": x, "model": r["model"], "p": r["p"], "time_days": r["time_days"],
                     "nu_state": nu_state, "nu_checkpoint": nu_checkpoint,
                     "bandwidth_state_bytes_per_s": spec.peak_flop_per_s / nu_state,
                     "bandwidth_checkpoint_bytes_per_s": spec.peak_flop_per_s / nu_checkpoint})
    frame = pd.DataFrame(rows)
    for link in ("cpu_gpu", "nvme", "ethernet", "hdd"):
        frame[f"threshold_{link}"] = spec.threshold(link)
    return frame


# --- limits (the prose claims) ------------------------------------------------------------------


@dataclass(frozen=True)
class Limit:
    """A limit on the model size found on the sweep grid and refined between grid points.

    ``p`` is the reported limit; ``p_low``/``p_high`` the bracketing models (the
    last that satisfies the condition and the first that does not);
    ``memory_gib`` the total memory per GPU at the limit (interpolated for time
    limits, at ``p_low`` otherwise).
    """

    p: float
    p_low: float
    p_high: float
    x_low: int
    x_high: int
    memory_gib: float
    how: str


def _rows(hardware: Hardware, scenario: str, method: str, xs: Iterable[int],
          assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> list[dict]:
    return [fastest_row(x, hardware, method, scenario, assumptions=assumptions) for x in xs]


def _bisect(hardware: Hardware, scenario: str, method: str, condition, xs: Sequence[int],
            assumptions: Assumptions, hint: int | None = None) -> tuple[dict, dict] | None:
    """The last grid row satisfying ``condition`` and the next, exact when the condition holds up to
    some model and fails beyond (feasibility and training time grow with the model size).

    Gallops from the grid value nearest ``hint`` (default: the middle) until the pair is bracketed,
    then bisects, so that a switch moving a limit by a few grid points searches a few models near it
    and never the largest ones.
    """
    row = lambda i: fastest_row(xs[i], hardware, method, scenario, assumptions=assumptions)  # noqa: E731
    if not xs:
        return None
    last = len(xs) - 1
    start = last // 2 if hint is None else min(range(len(xs)), key=lambda i: abs(xs[i] - hint))
    step = 1
    if condition(row(start)):
        good, bad = start, None
        while bad is None:
            probe = min(good + step, last)
            if condition(row(probe)):
                if probe == last:
                    return None  # holds on the whole grid
                good, step = probe, 2 * step
            else:
                bad = probe
    else:
        bad, good = start, None
        while good is None:
            probe = max(bad - step, 0)
            if condition(row(probe)):
                good = probe
            elif probe == 0:
                return None  # holds nowhere on the grid
            else:
                bad, step = probe, 2 * step
    while bad - good > 1:
        middle = (good + bad) // 2
        good, bad = (middle, bad) if condition(row(middle)) else (good, middle)
    return row(good), row(bad)


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
    for row in _rows(hardware, scenario, method, _refine(low["x"], high["x"]), assumptions):
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
    if high["feasible"]:
        t = (math.log(days) - math.log(low["time_days"])) / (math.log(high["time_days"]) - math.log(low["time_days"]))
        p = math.exp(math.log(low["p"]) + t * (math.log(high["p"]) - math.log(low["p"])))
        memory = math.exp(math.log(low["memory_gib"]) + t * (math.log(high["memory_gib"]) - math.log(low["memory_gib"])))
        how = (f"{low['model']} trains in {low['time_days']:.3g} d with {low['memory_gib']:.3g} GB, {high['model']} in "
               f"{high['time_days']:.3g} d with {high['memory_gib']:.3g} GB; log-log interpolation at {days:.4g} d")
    else:
        p = math.sqrt(low["p"] * high["p"])
        memory = low["memory_gib"]
        how = (f"{low['model']} trains in {low['time_days']:.3g} d, {high['model']} is infeasible; "
               f"limit = their geometric mean")
    return Limit(p, low["p"], high["p"], low["x"], high["x"], memory, how)
