"""Scaling sweeps over the X_[x] family (sec:scaling_analysis, sec:additional_considerations).

One job: the data of the scaling figures; the size limits these sweeps set are
:mod:`lgacc.scaling.limits`.

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

Limits (the prose claims, :mod:`lgacc.scaling.limits`) are found on this grid, then
refined on every such ``x`` in the bracketing interval (:func:`grid_between`).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ..units import DAYS_PER_MONTH, DAYS_PER_YEAR
from ..assumptions import DEFAULT_ASSUMPTIONS, Assumptions
from ..evaluate import evaluate_many
from ..hardware import GIB, Hardware, load_hardware
from ..models import x_model
from ..search import fastest
from ..resultcache import cached

__all__ = [
    "METHODS",
    "NOT_PARTITIONED",
    "VARIANTS",
    "scenario_methods",
    "SCENARIOS",
    "ONE_MONTH_DAYS",
    "ONE_YEAR_DAYS",
    "TRILLION_X",
    "nice_x",
    "sweep_xs",
    "scenario_hardware",
    "fastest_row",
    "scaling_sweep",
    "unpartitioned_helps",
    "constant_time_sweep",
    "offload_sweep",
    "grid_between",
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
ONE_MONTH_DAYS = DAYS_PER_MONTH  # a twelfth of the year
#: The trillion-parameter example of sec:trillion_parameter: X_160, the claims' and the sensitivity study's model.
TRILLION_X = 160
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


def grid_between(x_low: int, x_high: int) -> tuple[int, ...]:
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
