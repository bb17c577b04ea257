"""The paper's trillion-parameter comparison on today's GPUs.

For each hardware spec, the fastest configuration of each method (baseline,
partitioned, improved) with 3d parallelism for a model (X_160 by default), and
the paper's conclusions re-tested on that hardware.  Nothing here is specific
to one GPU: the specs in ``data/hardware/`` supply every number.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import pandas as pd

from .config import Method
from .hardware import GIB, Hardware, load_hardware
from .models import Transformer, named_model
from .search import fastest

TODAYS_HARDWARE = ("a100-80gb", "h100-sxm", "h200-sxm", "b200", "gb200-nvl72")
METHODS = (Method.BASELINE, Method.PARTITIONED, Method.IMPROVED)

#: Thresholds of the conclusions' verdicts (stated, so a reader can change them).
SPEEDUP_FOR_HALVING = 1.5  # "cut the shortest training time by half", read generously
MEMORY_FRACTION_FOR_NO_WALL = 0.25  # the improved footprint stays a small share of the GPU
ABOUT_A_WEEK_DAYS = 14.0  # "train the model in a week", within a factor two


def fastest_by_method(model: Transformer | str, hardware: Hardware | str) -> pd.DataFrame:
    """One row per method: the fastest 3d configuration on ``hardware`` and what it costs."""
    model = named_model(model) if isinstance(model, str) else model
    spec = load_hardware(hardware)
    rows = []
    for method in METHODS:
        result = fastest(model, spec, method, "3d", explain=False)
        evaluation = result.evaluation
        row = {"hardware": spec.name, "method": method.value, "feasible": evaluation is not None}
        if evaluation is not None:
            config = result.config
            row.update(
                n_gpu=evaluation.n_gpu,
                n_b=config.n_b,
                n_l=config.n_l,
                n_a=config.n_a,
                n_mu=config.n_mu,
                b_mu=config.b_mu,
                offload=config.offload,
                efficiency=evaluation.efficiency,
                time_days=evaluation.time_days,
                memory_gib=evaluation.memory.total / GIB,
                memory_fraction=evaluation.memory.total / spec.memory_bytes,
            )
        rows.append(row)
    return pd.DataFrame(rows)


def compare_hardware(model: Transformer | str = "X160", hardware: Iterable[str] = TODAYS_HARDWARE) -> pd.DataFrame:
    """:func:`fastest_by_method` for every spec, stacked."""
    return pd.concat([fastest_by_method(model, name) for name in hardware], ignore_index=True)


@dataclass(frozen=True)
class Conclusion:
    hardware: str
    claim: str
    measure: str
    holds: bool


def conclusions(comparison: pd.DataFrame) -> pd.DataFrame:
    """The paper's headline conclusions, re-tested on each spec of ``comparison``."""
    out: list[Conclusion] = []
    for name, rows in comparison.groupby("hardware", sort=False):
        by_method = rows.set_index("method")
        feasible = by_method[by_method["feasible"]]
        if Method.IMPROVED.value not in feasible.index:
            out.append(Conclusion(name, "the improved method trains the model", "no feasible configuration", False))
            continue
        improved = feasible.loc[Method.IMPROVED.value]
        others = feasible.drop(index=Method.IMPROVED.value)
        best_other = others["time_days"].min() if len(others) else float("inf")
        speedup = best_other / improved["time_days"]
        out.append(Conclusion(name, "layered accumulation + modular pipeline is the fastest method",
                              f"{improved['time_days']:.3g} d against {best_other:.3g} d", bool(speedup > 1)))
        out.append(Conclusion(name, f"it cuts the shortest training time by about half (speed-up ≥ {SPEEDUP_FOR_HALVING:g})",
                              f"speed-up {speedup:.2f}×", bool(speedup >= SPEEDUP_FOR_HALVING)))
        out.append(Conclusion(name, f"there is no memory wall (improved footprint ≤ {MEMORY_FRACTION_FOR_NO_WALL:.0%} of the GPU)",
                              f"{improved['memory_gib']:.3g} GiB = {improved['memory_fraction']:.1%} of the GPU",
                              bool(improved["memory_fraction"] <= MEMORY_FRACTION_FOR_NO_WALL)))
        out.append(Conclusion(name, f"a trillion-parameter model trains in about a week (≤ {ABOUT_A_WEEK_DAYS:g} d)",
                              f"{improved['time_days']:.3g} d on {int(improved['n_gpu'])} GPUs",
                              bool(improved["time_days"] <= ABOUT_A_WEEK_DAYS)))
    return pd.DataFrame([c.__dict__ for c in out])
