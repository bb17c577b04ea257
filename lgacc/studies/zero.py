"""The paper's verdict on ZeRO, re-graded under each reading of the data-parallel network.

The introduction says: "We also find that the ZeRO family of methods [is] counter-productive for the
training time, largely because of frequent data transfers in micro-batched approaches --- including
pipeline parallelism --- which prevent efficient 3d parallelism" (:data:`QUOTE`).  The paper's
partitioned approach is ZeRO stage 3 with standard gradient accumulation; its improved method
partitions the same state but accumulates layer by layer.  Both verdicts rest on the data-parallel
transfers, which the paper charges to each GPU's own InfiniBand link (``dp_network="per-gpu"``);
``dp_network="ring"`` moves them as ring and hierarchical collectives do
(:mod:`lgacc.model.formulas.ring`).

One job: compare the three methods' shortest training times under several *columns*, each a way of
finding the fastest configuration (:class:`Column`):

* :func:`trillion_rows` -- the rows of ``table:parallel_methods_comparison`` (X160), per column;
* :func:`scaling_rows` -- the fastest configuration of each method along the X family of the scaling
  figures (``limited``: ``fig:scaling_limited``; ``unlimited``; ``ethernet``: ``fig:scaling_Ethernet``);
* :func:`trillion_margins`, :func:`sweep_margins` -- the partitioned method's time over the baseline's
  (above 1: the partition costs time, "counter-productive") and over the improved method's (the improved
  margin), for the table's rows and for each model of each sweep;
* :func:`verdicts` -- per column and scenario, the verdict on the sentence: ``holds`` (the partitioned
  method is slower than the baseline at X160 and at most swept models of a billion parameters and
  more), ``reverses`` (at neither), ``weakens`` (at one of the two).  The paper's own figure is the
  ``limited`` scenario.

The hook for more columns.  A column is a name, the model its numbers come from (``ideal`` or
``calibrated``), a key naming every input it depends on (its results are kept on disk under it), and
``fastest(model, hardware, method, parallelism)`` returning an :class:`Outcome` or ``None``.  The two
ideal columns are :func:`ideal_columns`; another, such as the calibrated model's, is added by passing
it to :func:`study` (``study(hardware, extra=(column,))``): every table and verdict gets its column.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

import pandas as pd

from lgacc.cache.results import cached
from lgacc.model.assumptions import Assumptions
from lgacc.model.hardware import Hardware, load_hardware
from lgacc.model.transformer import TRILLION_X, Transformer, x_model
from lgacc.paper.reproductions.parallel_methods_comparison import ROWS
from lgacc.scaling import SCALING_ASSUMPTIONS, scaling_sweep, scenario_hardware, sweep_xs
from lgacc.search import Parallelism, fastest

if TYPE_CHECKING:
    from lgacc.model.calibrated import Calibration, Recipe

__all__ = ["QUOTE", "WHERE", "METHODS", "SCENARIOS", "TOLERANCE", "LARGE_MODEL_PARAMETERS", "TRILLION_PAIRS", "Outcome",
           "Column", "ideal_column", "ideal_columns", "calibrated_column", "trillion_rows", "scaling_rows", "trillion_margins",
           "sweep_margins", "verdicts", "verdict_sentence", "Study", "study"]

#: The sentence re-graded, and where it is (the introduction of the paper; "is" is missing in the source).
QUOTE = ("We also find that the ZeRO family of methods counter-productive for the training time, largely because "
         "of frequent data transfers in micro-batched approaches --- including pipeline parallelism --- which "
         "prevent efficient 3d parallelism.")
WHERE = "Introduction, fourth paragraph"
METHODS = ("baseline", "partitioned", "improved")
#: The scaling figures' scenarios (:func:`lgacc.scaling.scenario_hardware`), the verdict read on the first.
SCENARIOS = ("limited", "unlimited", "ethernet")
#: Two times within this relative difference are the same time ("counter-productive" needs more).
TOLERANCE = 0.01
#: The sweeps are graded over models of a billion parameters and more: the paper's "large language models",
#: where 3d parallelism matters (below, a few GPUs train a model in minutes and the methods tie or differ by a
#: micro-batch).  A stated reading: the paper gives no size.
LARGE_MODEL_PARAMETERS = 1e9
#: The rows of table:parallel_methods_comparison compared: each partitioned row with the improved row that adds
#: the (modular) pipeline to it.
TRILLION_PAIRS = (("Data", "Data + pipe"), ("Data + tensor", "3d"))


@dataclass(frozen=True)
class Outcome:
    """The fastest configuration a column finds for one method: its time and how it is parallel."""

    time_days: float
    n_gpu: int
    efficiency: float
    n_b: int
    n_l: int
    n_a: int
    n_mu: int
    b_mu: int
    offload: bool


@dataclass(frozen=True)
class Column:
    """One way of finding the fastest configuration: ``fastest(model, hardware, method, parallelism)`` gives an
    :class:`Outcome`, or ``None`` when nothing is feasible.  ``model`` says which model the numbers come from
    (``"ideal"``, ``"calibrated"``); ``key`` names every input the column depends on (the disk cache's key:
    two columns with one key must give the same answers)."""

    name: str
    model: str
    key: str
    fastest: Callable[[Transformer, Hardware, str, str], Outcome | None]
    #: optional: the whole sweep of a scenario at once, ``sweep(hardware, scenario, xs)`` -> the rows of
    #: :func:`lgacc.scaling.scaling_sweep` (the ideal columns share the figures' sweeps on disk)
    sweep: Callable[[Hardware, str, tuple[int, ...]], pd.DataFrame] | None = None


def _ideal_fastest(assumptions: Assumptions) -> Callable[[Transformer, Hardware, str, str], Outcome | None]:
    def run(model: Transformer, hardware: Hardware, method: str, parallelism: str) -> Outcome | None:
        result = fastest(model, hardware, method, Parallelism(parallelism), explain=False, assumptions=assumptions)
        e, c = result.evaluation, result.config
        if e is None:
            return None
        return Outcome(e.time_days, e.n_gpu, e.efficiency, c.n_b, c.n_l, c.n_a, c.n_mu, c.b_mu, bool(c.offload))

    return run


def ideal_column(dp_network: str) -> Column:
    """The ideal model (the paper's rules, the search of :func:`lgacc.search.fastest`) under ``dp_network``."""
    # X160's rows as its tables select them (memory a rule); the sweeps as the scaling figures read them
    # (lgacc.scaling.SCALING_ASSUMPTIONS: memory an output)
    assumptions = Assumptions(dp_network=dp_network)
    scaling = SCALING_ASSUMPTIONS.replace(dp_network=dp_network)

    def sweep(hardware: Hardware, scenario: str, xs: tuple[int, ...]) -> pd.DataFrame:
        return scaling_sweep(hardware, scenario, xs=xs, assumptions=scaling)

    return Column(dp_network, "ideal", f"ideal:{assumptions!r}:{scaling!r}", _ideal_fastest(assumptions), sweep)


def ideal_columns() -> tuple[Column, ...]:
    """The paper's reading (``per-gpu``) and the ring (``ring``), both in the ideal model."""
    return ideal_column("per-gpu"), ideal_column("ring")


def calibrated_column(recipe: Recipe | None = None, calibration: Calibration | None = None) -> Column:
    """The calibrated model (issue #26, data-parallel traffic always as a ring): the paper's candidates ranked by
    expected training time (:func:`lgacc.search.calibrated.fastest_expected`), with the trillion-parameter page's
    recipe (:data:`lgacc.studies.calibrated_headline.HEADLINE_RECIPE`) and the fitted calibration.  Offloading is
    not priced by this model: a method that needs it has no configuration here.  ``efficiency`` is the ideal
    training time at peak over the expected one (the share of the peak the calibrated model expects)."""
    from lgacc.model.calibrated import fitted_calibration
    from lgacc.search.calibrated import fastest_expected
    from lgacc.studies.calibrated_headline import HEADLINE_RECIPE

    recipe = HEADLINE_RECIPE if recipe is None else recipe
    calibration = fitted_calibration() if calibration is None else calibration

    def run(model: Transformer, hardware: Hardware, method: str, parallelism: str) -> Outcome | None:
        found = fastest_expected(model, hardware, method, Parallelism(parallelism), recipe=recipe,
                                 calibration=calibration)
        if not found.feasible:
            return None
        c, ideal = found.search.config, found.search.evaluation
        days = found.expected.time_days
        return Outcome(days, c.n_gpu, ideal.time_days * ideal.efficiency / days if days > 0 else math.nan,
                       c.n_b, c.n_l, c.n_a, c.n_mu, c.b_mu, False)

    return Column("calibrated", "calibrated", f"calibrated:{recipe!r}:{calibration!r}", run)


def _outcome_row(outcome: Outcome | None) -> dict:
    if outcome is None:
        return {"feasible": False, "time_days": math.nan, "n_gpu": math.nan, "efficiency": math.nan,
                "n_b": math.nan, "n_l": math.nan, "n_a": math.nan, "n_mu": math.nan, "b_mu": math.nan, "offload": False}
    return {"feasible": True, **outcome.__dict__}


def trillion_rows(column: Column, hardware: Hardware | str = "a100-80gb", x: int = TRILLION_X) -> pd.DataFrame:
    """The rows of ``table:parallel_methods_comparison`` (X160) as ``column`` finds them: one per (parallelism,
    method), its time and configuration."""
    spec = load_hardware(hardware)

    def compute() -> pd.DataFrame:
        model = x_model(x)
        return pd.DataFrame([{"column": column.name, "parallelism": parallelism, "method": method.lower(),
                              **_outcome_row(column.fastest(model, spec, method.lower(), parallelism))}
                             for parallelism, method in ROWS])
    return cached("zero-trillion", (column.key, spec, x), compute)


def scaling_rows(column: Column, hardware: Hardware | str = "a100-80gb", scenario: str = "limited",
                 xs: Sequence[int] | None = None) -> pd.DataFrame:
    """The fastest 3d configuration of each method at each model of the scaling figures (``scenario``), as
    ``column`` finds it."""
    xs = tuple(sweep_xs() if xs is None else xs)
    if column.sweep is not None:  # the figures' own sweep (every series of the scenario), read for the methods
        frame = column.sweep(load_hardware(hardware), scenario, xs)
        frame = frame[frame.method.isin(METHODS)]
        rows = [{"column": column.name, "scenario": scenario, "x": int(r.x), "p": float(r.p), "method": r.method,
                 **_outcome_row(None if not r.feasible else Outcome(
                     float(r.time_days), int(r.n_gpu), float(r.efficiency), int(r.n_b), int(r.n_l), int(r.n_a),
                     int(r.n_mu), int(r.b_mu), bool(r.offload)))}
                for r in frame.itertuples()]
        return pd.DataFrame(rows)
    spec = scenario_hardware(load_hardware(hardware), scenario)

    def compute() -> pd.DataFrame:
        rows = []
        for x in xs:
            model = x_model(x)
            for method in METHODS:
                rows.append({"column": column.name, "scenario": scenario, "x": x, "p": float(model.p),
                             "method": method, **_outcome_row(column.fastest(model, spec, method, "3d"))})
        return pd.DataFrame(rows)
    return cached("zero-sweep", (column.key, spec, scenario, xs), compute)


def _ratio(numerator: float, denominator: float) -> float:
    if not (math.isfinite(numerator) and math.isfinite(denominator)) or denominator <= 0:
        return math.nan
    return numerator / denominator


def trillion_margins(table: pd.DataFrame) -> pd.DataFrame:
    """The improved-against-partitioned margins of ``table:parallel_methods_comparison``: each partitioned row's
    time over the improved row that adds the pipeline to it (:data:`TRILLION_PAIRS`), and over the baseline at the
    same parallelism; one row per (column, pair)."""
    rows = []
    for name, frame in table.groupby("column", sort=False):
        times = frame.set_index(["parallelism", "method"]).time_days
        for partitioned_row, improved_row in TRILLION_PAIRS:
            part = float(times.get((partitioned_row, "partitioned"), math.nan))
            rows.append({
                "column": name, "partitioned row": partitioned_row, "improved row": improved_row,
                "partitioned days": part, "improved days": float(times.get((improved_row, "improved"), math.nan)),
                "baseline days (same parallelism)": float(times.get((partitioned_row, "baseline"), math.nan)),
            })
    out = pd.DataFrame(rows)
    out["partitioned / improved"] = [_ratio(a, b) for a, b in zip(out["partitioned days"], out["improved days"])]
    out["partitioned / baseline"] = [_ratio(a, b) for a, b in
                                     zip(out["partitioned days"], out["baseline days (same parallelism)"])]
    return out


def sweep_margins(sweeps: pd.DataFrame) -> pd.DataFrame:
    """Per (column, scenario, model): the partitioned method's shortest time over the baseline's and over the
    improved method's (NaN where one of them has no feasible configuration)."""
    feasible = sweeps[sweeps.feasible.astype(bool)]
    times = feasible.pivot_table(index=["column", "scenario", "x", "p"], columns="method", values="time_days",
                                 sort=False).reindex(columns=list(METHODS))
    out = times.reset_index()
    out.columns.name = None
    out["partitioned / baseline"] = out.partitioned / out.baseline
    out["partitioned / improved"] = out.partitioned / out.improved
    return out


def verdicts(margins: pd.DataFrame, x: int = TRILLION_X) -> pd.DataFrame:
    """Per (column, scenario): the verdict on :data:`QUOTE` from :func:`sweep_margins` -- ``holds`` where the
    partitioned method is slower than the baseline (by more than :data:`TOLERANCE`) both at X160 and at half or
    more of the models of :data:`LARGE_MODEL_PARAMETERS` and above, ``reverses`` where at neither, ``weakens``
    where at one only; with the improved method's median margin over the same models."""
    rows = []
    for (name, scenario), frame in margins.groupby(["column", "scenario"], sort=False):
        large = frame[(frame.p >= LARGE_MODEL_PARAMETERS)].dropna(subset=["partitioned / baseline"])
        at_x = frame[frame.x == x]["partitioned / baseline"]
        at_x = float(at_x.iloc[0]) if len(at_x) else math.nan
        slower = float((large["partitioned / baseline"] > 1 + TOLERANCE).mean()) if len(large) else math.nan
        faster = float((large["partitioned / baseline"] < 1 - TOLERANCE).mean()) if len(large) else math.nan
        slower_x, slower_sweep = at_x > 1 + TOLERANCE, slower >= 0.5
        verdict = "holds" if slower_x and slower_sweep else "reverses" if not (slower_x or slower_sweep) else "weakens"
        if not (math.isfinite(at_x) and len(large)):
            verdict = "not graded"
        rows.append({
            "column": name, "scenario": scenario,
            "X160 partitioned / baseline": at_x,
            "X160 partitioned / improved": float(frame[frame.x == x]["partitioned / improved"].iloc[0])
            if (frame.x == x).any() else math.nan,
            "models compared": len(large),
            "partitioned slower": slower, "partitioned faster": faster,
            "median partitioned / baseline": float(large["partitioned / baseline"].median()) if len(large) else math.nan,
            "median partitioned / improved": float(large["partitioned / improved"].median()) if len(large) else math.nan,
            "verdict": verdict,
        })
    return pd.DataFrame(rows)


def verdict_sentence(row: pd.Series) -> str:
    """One sentence for a row of :func:`verdicts`."""
    return (f"{row.column} ({row.scenario}): the partitioned method takes {row['X160 partitioned / baseline']:.2f}× "
            f"the baseline's time at X160 and is slower at {row['partitioned slower']:.0%} of the "
            f"{row['models compared']} models of a billion parameters and more (faster at "
            f"{row['partitioned faster']:.0%}): the verdict {row.verdict}.")


@dataclass(frozen=True)
class Study:
    """The whole study: its columns, their X160 rows and sweeps, the margins and the verdicts."""

    columns: tuple[Column, ...]
    trillion: pd.DataFrame
    trillion_margins: pd.DataFrame
    sweeps: pd.DataFrame
    sweep_margins: pd.DataFrame
    verdicts: pd.DataFrame

    def verdict(self, column: str, scenario: str = "limited") -> str:
        """The verdict of one column on the paper's own figure (``limited``) or another scenario."""
        row = self.verdicts[(self.verdicts.column == column) & (self.verdicts.scenario == scenario)]
        if not len(row):
            raise KeyError(f"no verdict for column {column!r} in scenario {scenario!r}")
        return str(row.verdict.iloc[0])


def study(hardware: Hardware | str = "a100-80gb", columns: Sequence[Column] | None = None,
          extra: Sequence[Column] = (), scenarios: Sequence[str] = SCENARIOS,
          xs: Sequence[int] | None = None) -> Study:
    """Every table of the study for ``columns`` (default: :func:`ideal_columns`) and the ``extra`` ones: the hook
    that adds a column (the calibrated model's, for one) to every table and verdict.  ``xs``: the sweeps'
    models (default: the scaling figures', :func:`lgacc.scaling.sweep_xs`)."""
    chosen = (*(ideal_columns() if columns is None else columns), *extra)
    names = [c.name for c in chosen]
    if len(set(names)) != len(names):
        raise ValueError(f"column names must differ: {names}")
    trillion = pd.concat([trillion_rows(c, hardware) for c in chosen], ignore_index=True)
    sweeps = pd.concat([scaling_rows(c, hardware, s, xs) for c in chosen for s in scenarios], ignore_index=True)
    per_model = sweep_margins(sweeps)
    return Study(tuple(chosen), trillion, trillion_margins(trillion), sweeps, per_model, verdicts(per_model))


# --- presentation: what the sensitivity chapter shows ----------------------------------------------


def trillion_view(result: Study) -> pd.DataFrame:
    """table:parallel_methods_comparison's rows side by side, one time column per column of the study (days),
    with the configuration each column finds where the columns differ."""
    frame = result.trillion
    times = frame.pivot_table(index=["parallelism", "method"], columns="column", values="time_days", sort=False)
    out = times.reindex(columns=[c.name for c in result.columns]).reset_index()
    out.columns.name = None
    for column in result.columns:
        rows = frame[frame.column == column.name].set_index(["parallelism", "method"])
        out[f"{column.name}: n_b × n_l × n_a, b_mu"] = [
            "—" if not rows.loc[(p, m)].feasible else
            f"{int(rows.loc[(p, m)].n_b)} × {int(rows.loc[(p, m)].n_l)} × {int(rows.loc[(p, m)].n_a)}, "
            f"{int(rows.loc[(p, m)].b_mu)}" for p, m in zip(out.parallelism, out.method)]
    return out


def margins_figure(result: Study, scenario: str = "limited"):
    """Two panels along the X family of ``scenario``: the partitioned method's shortest time over the baseline's
    (above 1: the partition costs time) and over the improved method's, one line per column of the study."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    plain = FuncFormatter(lambda value, _: f"{value:g}")
    frame = result.sweep_margins[result.sweep_margins.scenario == scenario]
    figure, axes = plt.subplots(1, 2, figsize=(7.2, 3.3), sharex=True)
    styles = ("-", "--", ":", "-.")
    for axis, key, title in ((axes[0], "partitioned / baseline", "partitioned / baseline"),
                             (axes[1], "partitioned / improved", "partitioned / improved")):
        for index, column in enumerate(result.columns):
            rows = frame[frame.column == column.name].dropna(subset=[key])
            axis.plot(rows.p, rows[key], styles[index % len(styles)], marker="o", markersize=3,
                      label=f"{column.name} ({column.model})")
        axis.axhline(1.0, color="black", linewidth=0.8)
        axis.axvline(LARGE_MODEL_PARAMETERS, color="grey", linewidth=0.6, linestyle=":")
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.yaxis.set_major_formatter(plain)
        axis.yaxis.set_minor_formatter(plain)
        axis.set_xlabel("parameters", fontsize=10)
        axis.set_title(f"time, {title}", fontsize=10)
        axis.tick_params(labelsize=9)
    axes[0].legend(fontsize=9, frameon=False)
    figure.tight_layout()
    return figure
