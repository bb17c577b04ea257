"""How the overheads combine: the paper's product, a physical sum, and the calibrated model, on faster GPUs.

The ideal model's efficiency is the product of ``1 / (1 + o)`` over the named overheads
(:func:`lgacc.model.evaluator.evaluate`): the paper's rule, which reproduces its printed tables.  With
several large overheads the product charges one overhead again in proportion to another (the cross
terms ``o_1 o_2``), and because each communication overhead grows with the peak flop/s (``o = nu_net /
nu_op``, ``nu_net = c / beta``), a faster GPU can give a slower step (issue #26).  The physical rule
adds the times instead: ``1 / (1 + sum o)``, which with the ``physical`` overlap convention is
``compute + not-overlapped transfers + the part of each overlapped transfer its operation does not
hide``, non-increasing in ``c``.  :func:`faster_gpu_rows` shows the three side by side on one
configuration as the peak grows; :func:`table_rows` what the sum would change in
``table:parallel_methods_comparison``'s efficiencies (the reproduction keeps the product).
"""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from lgacc.model.assumptions import Assumptions
from lgacc.model.calibrated import Recipe, expected
from lgacc.model.config import TrainingConfig
from lgacc.model.evaluator import evaluate
from lgacc.model.hardware import Hardware, load_hardware
from lgacc.model.transformer import TRILLION_X, x_model
from lgacc.paper.reproductions.parallel_methods_comparison import ROWS
from lgacc.search import Parallelism, fastest

__all__ = ["EXAMPLE", "additive_efficiency", "faster_gpu_rows", "table_rows"]

#: Issue #26's example: X160, improved, the paper's trillion-parameter configuration.
EXAMPLE = TrainingConfig(method="improved", n_b=483, n_l=5, n_a=16, n_mu=5, b_mu=1)


def additive_efficiency(overheads: dict[str, float]) -> float:
    """``1 / (1 + sum of the overheads)``: the physical composition of the same overheads."""
    return 1.0 / (1.0 + sum(overheads.values()))


def faster_gpu_rows(peaks: Sequence[float] = (312e12, 1e15, 3e15, 1e16), hardware: Hardware | str = "a100-80gb",
                    config: TrainingConfig = EXAMPLE) -> pd.DataFrame:
    """Step time of ``config`` on X160 as the peak flop/s grows (the links unchanged): the ideal model's product
    (paper and physical conventions), the physical sum, and the calibrated model."""
    model = x_model(TRILLION_X)
    base = load_hardware(hardware)
    rows = []
    for peak in peaks:
        hw = base.replace(peak_flop_per_s=float(peak))
        row = {"peak_flop_per_s": float(peak)}
        for convention in ("paper", "physical"):
            ideal = evaluate(model, hw, config, assumptions=Assumptions(convention=convention))
            work_s = ideal.step_time_s * ideal.efficiency  # the step at perfect efficiency
            row[f"product_{convention}_s"] = ideal.step_time_s
            row[f"sum_{convention}_s"] = work_s / additive_efficiency(ideal.overheads)
        row["calibrated_s"] = expected(model, hw, config, recipe=Recipe(sequence_parallel=True)).step_time_s
        rows.append(row)
    return pd.DataFrame(rows)


def table_rows(hardware: Hardware | str = "a100-80gb") -> pd.DataFrame:
    """``table:parallel_methods_comparison``'s searched configurations: the efficiency as printed (the product)
    and what the physical sum of the same overheads gives."""
    model = x_model(TRILLION_X)
    rows = []
    for parallelism, method in ROWS:
        found = fastest(model, hardware, method.lower(), Parallelism(parallelism), explain=False)
        if not found.feasible:
            continue
        e = found.evaluation
        rows.append({"parallelism": parallelism, "method": method, "product": e.efficiency,
                     "sum": additive_efficiency(e.overheads)})
    return pd.DataFrame(rows)
