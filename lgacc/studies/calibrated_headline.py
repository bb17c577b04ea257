"""The trillion-parameter headline re-graded under the calibrated model.

The paper's ``table:parallel_methods_comparison`` trains X160 under each (parallelism, method) with
the configuration its rules select, at peak flop/s.  Here each row is also timed by the calibrated
model, twice: the same configuration (what the paper's choice would really cost), and the
configuration the calibrated search selects (:func:`lgacc.search.calibrated.fastest_expected`: the
paper's candidates ranked by expected time).  The recipe is the paper's full recomputation with
what current frameworks add at this scale: sequence parallelism (without it a partitioned X160 holds
its checkpoints on every tensor-parallel rank and does not fit), FlashAttention, no dropout.

:func:`headline_ratios` answers the question of issue #26: does the improved method still roughly
halve the training time?  The ratio improved / baseline with full 3D parallelism, and improved /
partitioned (data + tensor, the partitioned method's best), under each model.
"""

from __future__ import annotations

import math

import pandas as pd

from lgacc.cache.results import cached
from lgacc.model.calibrated import Recipe, expected
from lgacc.model.hardware import Hardware, load_hardware
from lgacc.model.transformer import TRILLION_X, x_model
from lgacc.paper.reproductions.parallel_methods_comparison import ROWS
from lgacc.search import Parallelism, fastest
from lgacc.search.calibrated import fastest_expected

__all__ = ["HEADLINE_RECIPE", "HEADLINE_CLAIM", "COLUMNS", "headline_rows", "headline_ratios", "halves_under_rule",
           "headline_markdown"]

#: The columns of :func:`headline_rows`, present whether or not a row has a feasible configuration.
COLUMNS = ("parallelism", "method", "ideal_n_gpu", "ideal_days", "same_config_days", "same_config_memory_gib",
           "same_config_fits", "calibrated_n_gpu", "calibrated_n_b", "calibrated_n_l", "calibrated_n_a",
           "calibrated_n_mu", "calibrated_b_mu", "calibrated_days", "calibrated_memory_gib")

#: The paper's full recomputation, with sequence parallelism and FlashAttention (see the module's docstring).
HEADLINE_RECIPE = Recipe(recompute="full", sequence_parallel=True, flash_attention=True, dropout=False)


def _rows(hardware: Hardware, recipe: Recipe) -> pd.DataFrame:
    model = x_model(TRILLION_X)
    rows = []
    for parallelism, method in ROWS:
        row = {"parallelism": parallelism, "method": method}
        ideal = fastest(model, hardware, method.lower(), Parallelism(parallelism), explain=False)
        if ideal.feasible:
            c = ideal.config
            same = expected(model, hardware, c.__class__(c.method, n_b=c.n_b, n_l=c.n_l, n_a=c.n_a, n_mu=c.n_mu,
                                                          b_mu=c.b_mu, partitioned=c.partitioned), recipe=recipe)
            row.update(ideal_n_gpu=ideal.evaluation.n_gpu, ideal_days=ideal.evaluation.time_days,
                       same_config_days=same.time_days, same_config_memory_gib=same.memory_bytes / 2**30,
                       same_config_fits=same.fits)
        found = fastest_expected(model, hardware, method.lower(), Parallelism(parallelism), recipe=recipe)
        if found.feasible:
            c = found.search.config
            row.update(calibrated_n_gpu=c.n_gpu, calibrated_n_b=c.n_b, calibrated_n_l=c.n_l, calibrated_n_a=c.n_a,
                       calibrated_n_mu=c.n_mu, calibrated_b_mu=c.b_mu, calibrated_days=found.expected.time_days,
                       calibrated_memory_gib=found.expected.memory_bytes / 2**30)
        rows.append(row)
    return pd.DataFrame(rows).reindex(columns=list(COLUMNS))


def headline_rows(hardware: Hardware | str = "a100-80gb", recipe: Recipe = HEADLINE_RECIPE) -> pd.DataFrame:
    """One row per (parallelism, method) of ``table:parallel_methods_comparison``: the ideal search's time, the
    calibrated time of the same configuration, and the calibrated search's configuration and time."""
    hardware = load_hardware(hardware)
    return cached("calibrated-headline", (hardware, recipe), lambda: _rows(hardware, recipe))


def headline_ratios(frame: pd.DataFrame) -> dict[str, float]:
    """Improved over baseline (3D) and over partitioned (data + tensor), under each model (NaN where a row is
    infeasible)."""
    def days(parallelism: str, method: str, column: str) -> float:
        row = frame[(frame["parallelism"] == parallelism) & (frame["method"] == method)]
        value = row[column].iloc[0] if len(row) and column in row else math.nan
        return float(value) if value == value else math.nan

    out = {}
    for column, name in (("ideal_days", "ideal"), ("same_config_days", "calibrated_same_config"),
                         ("calibrated_days", "calibrated_search")):
        improved = days("3d", "Improved", column)
        out[f"{name}_improved_over_baseline"] = improved / days("3d", "Baseline", column)
        out[f"{name}_improved_over_partitioned"] = improved / days("Data + tensor", "Partitioned", column)
    return out


#: The registry's claim the headline question is: the abstract's "cut the shortest training time by half".
HEADLINE_CLAIM = "improved_halves_min_time"


def halves_under_rule(ratio: float) -> bool | None:
    """Whether a time ratio improved / baseline "cuts the time by half" under the very rule the claims page grades
    the paper's number by (:data:`HEADLINE_CLAIM`'s rule in ``data/paper/claims.yaml``, applied to the speed-up
    1 / ratio): one verdict rule for both models.  None where the ratio is not a number (an infeasible row)."""
    from lgacc.paper.claims.grading import printed_claims

    if not ratio == ratio or ratio <= 0:
        return None
    claim = next(c for c in printed_claims() if c.id == HEADLINE_CLAIM)
    return bool(claim.agrees(1.0 / ratio))


def _share(value: float) -> str:
    return "—" if value != value else f"{value:.2g}"


def headline_markdown(frame: pd.DataFrame) -> str:
    """The trillion-parameter page's paragraph on the headline under the calibrated model: the improved method's
    time over the baseline's (3D) and over the partitioned approach's (data + tensor) under each model, the verdict
    by :func:`halves_under_rule` on the calibrated search's ratio, and how much the calibrated model slows the
    configurations the paper's rules chose (``frame``: :func:`headline_rows`)."""
    ratios = headline_ratios(frame)
    ratio = ratios["calibrated_search_improved_over_baseline"]
    if ratio != ratio:
        verdict = ("On this hardware no 3D configuration of one of the two methods fits the GPU's memory as the calibrated "
                   "model counts it, so the headline cannot be re-graded here.")
    else:
        holds = "holds" if halves_under_rule(ratio) else "does not hold"
        verdict = (f"Under the calibrated model, the paper's headline that the improved method cuts the training time by "
                   f"half {holds} by the claims page's rule for it (the speed-up rounds to 2 at one significant digit): "
                   f"{_share(ratio)} of the baseline's time, against {_share(ratios['ideal_improved_over_baseline'])} "
                   "under the paper's model.")
    slowdowns = [f"{row.same_config_days / row.ideal_days:.2f}× ({row.parallelism}, {row.method.lower()})"
                 for row in frame.itertuples()
                 if (row.parallelism == "3d" or row.method == "Partitioned") and row.same_config_days == row.same_config_days]
    if slowdowns:
        verdict += " The calibrated model slows the paper's configurations by " + ", ".join(slowdowns) + "."
    return ("**Improved over baseline (3D parallelism):** "
            f"{_share(ratios['ideal_improved_over_baseline'])} of the time under the paper's model, "
            f"{_share(ratios['calibrated_same_config_improved_over_baseline'])} under the calibrated model for the same "
            f"configurations, {_share(ratio)} for the configurations the calibrated search picks. "
            "**Improved over partitioned (data + tensor):** "
            f"{_share(ratios['ideal_improved_over_partitioned'])}, "
            f"{_share(ratios['calibrated_same_config_improved_over_partitioned'])} and "
            f"{_share(ratios['calibrated_search_improved_over_partitioned'])}. " + verdict)
