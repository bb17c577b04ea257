"""The sweeps behind the scaling figures: one row per (model, method) of a scenario, and two derived sweeps.

:func:`scaling_sweep` (``fig:scaling_limited``, ``fig:scaling_unlimited``, ``fig:scaling_Ethernet``): the
fastest configuration of every model of the grid for every method; the Ethernet sweep adds
:data:`NOT_PARTITIONED`, the improved method without the state partition (the paper's dotted line,
"For the smallest models, the partition can be avoided to further reduce the training time at a
minimal memory cost"), and :func:`unpartitioned_helps` says where it is faster.

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

The sweeps are kept on disk (:mod:`lgacc.cache.results`): a figure's page, the today's-hardware
chapter and the tests redraw the same ones.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

import pandas as pd

from lgacc.cache.results import cached
from lgacc.model.assumptions import Assumptions
from lgacc.model.evaluator import evaluate_many
from lgacc.model.hardware import GIB, Hardware, load_hardware
from lgacc.model.transformer import x_model

from .grid import (
    COLUMNS,
    METHODS,
    NOT_PARTITIONED,
    ONE_MONTH_DAYS,
    SCALING_ASSUMPTIONS,
    fastest_row,
    progress_bar,
    scenario_hardware,
    scenario_methods,
    sweep_xs,
)

__all__ = ["scaling_sweep", "unpartitioned_helps", "constant_time_sweep", "offload_sweep"]


def scaling_sweep(
    hardware: Hardware | str = "a100-80gb",
    scenario: str = "limited",
    methods: Sequence[str] | None = None,
    xs: Iterable[int] | None = None,
    *,
    progress: bool = False,
    assumptions: Assumptions = SCALING_ASSUMPTIONS,
) -> pd.DataFrame:
    """Fastest configuration per (model, method) in a scenario (``fig:scaling_limited``,
    ``fig:scaling_unlimited``, ``fig:scaling_Ethernet``), under the scaling analysis' reading by default
    (:data:`SCALING_ASSUMPTIONS`: memory an output, so every curve spans the whole grid and its memory
    shows where it exceeds the GPU's).

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
        rows = [fastest_row(x, spec, m, scenario, assumptions=assumptions)
                for x, m in progress_bar(pairs, len(pairs), progress, f"{scenario} sweep")]
        return pd.DataFrame(rows, columns=list(COLUMNS))
    # kept on disk: a figure's page, today's-hardware chapter and the tests redraw the same sweeps
    searched = assumptions.replace(scaling_grid=SCALING_ASSUMPTIONS.scaling_grid)  # the grid does not move a row
    return cached("sweep", (spec, scenario, pairs, searched), compute)


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
    for x, method in progress_bar(pairs, len(pairs), progress, "constant-time sweep"):
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
    for x, method in progress_bar(pairs, len(pairs), progress, "offload sweep"):
        r = fastest_row(x, spec, method, "limited")
        if not r["feasible"]:
            continue
        e = evaluate_many(x_model(x), spec, method, n_b=int(r["n_b"]), n_l=int(r["n_l"]), n_a=int(r["n_a"]),
                          n_mu=int(r["n_mu"]), b_mu=int(r["b_mu"]), offload=True, assumptions=SCALING_ASSUMPTIONS)
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
