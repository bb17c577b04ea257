"""How much each unstated choice of a run's recipe moves the calibrated prediction.

Every field a source leaves unstated is read one way (the file's assumption, else the default of
:data:`.runs.DEFAULTS`, with its reason) and bracketed by the other plausible values (``Run.bracket``).
:func:`recipe_effects` evaluates every run at each end of each of its brackets, one field changed at a
time, and reports per field the runs it is open for and the relative change of the expected step time
(mean of the absolute change, the largest, and the signed mean): what a planner gains by knowing the
field, and which unstated choices the errors of the measured-runs chapter may hide.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from lgacc.model.calibrated import Calibration, fitted_calibration

from . import calibrated as cal
from .markdown import markdown_table
from .runs import Run

__all__ = ["bracket_predictions", "recipe_effects", "recipe_effects_by_value", "recipe_effects_markdown",
           "recipe_effects_table"]


def bracket_predictions(runs: Sequence[Run], calibration: Calibration | None = None) -> pd.DataFrame:
    """One row per (dense bf16 time run, bracketed field, other value): ``id``, ``field``, ``value``, ``central_s``
    (the run as read), ``other_s`` (the field read the other way) and ``change`` (``other_s / central_s - 1``)."""
    calibration = fitted_calibration() if calibration is None else calibration
    timed = cal.fit_runs(runs)  # the runs with experts, context parallelism or FP8 are reported apart
    pairs = [(run, name, value, other) for run in timed for name, value in run.bracket
             if (other := run.with_reading(name, value)) is not None]
    columns = ["id", "field", "value", "central_s", "other_s", "change"]
    if not pairs:
        return pd.DataFrame(columns=columns)
    central = dict(zip((run.id for run in timed), cal.predict(timed, calibration, compact=True)["step_time_s"]))
    others = cal.predict([other for *_, other in pairs], calibration, compact=True)["step_time_s"]
    rows = [{"id": run.id, "field": name, "value": _spelled(value), "central_s": float(central[run.id]),
             "other_s": float(step)} for (run, name, value, _), step in zip(pairs, others)]
    frame = pd.DataFrame(rows, columns=columns[:-1])
    frame["change"] = frame["other_s"] / frame["central_s"] - 1
    return frame


def _spelled(value) -> str:
    """A bracket's value as a run file spells it: a schedule with its chunks ``interleaved:2``."""
    return ":".join(map(str, value)) if isinstance(value, tuple) else str(value)


def _effects(table: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """``table`` (:func:`bracket_predictions`) grouped by ``keys``: runs open, mean and largest absolute change,
    signed mean; largest effect first."""
    rows = []
    for key, group in table.groupby(keys, sort=False):
        change = group["change"].to_numpy(dtype=float)
        rows.append({**dict(zip(keys, key if isinstance(key, tuple) else (key,))),
                     "runs": int(group["id"].nunique()), "mean_abs_change": float(np.abs(change).mean()),
                     "max_abs_change": float(np.abs(change).max()), "mean_change": float(change.mean())})
    out = pd.DataFrame(rows, columns=[*keys, "runs", "mean_abs_change", "max_abs_change", "mean_change"])
    return out.sort_values("mean_abs_change", ascending=False, ignore_index=True, kind="stable")


def recipe_effects(runs: Sequence[Run], calibration: Calibration | None = None, *,
                   table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per bracketed field: ``runs`` (open for how many time runs), ``mean_abs_change``, ``max_abs_change`` and
    ``mean_change`` of the expected step time when the field is read the other way, largest effect first
    (``table``: :func:`bracket_predictions`' of the same runs, when already computed)."""
    table = bracket_predictions(runs, calibration) if table is None else table
    return _effects(table, ["field"])


def recipe_effects_by_value(runs: Sequence[Run], calibration: Calibration | None = None, *,
                            table: pd.DataFrame | None = None) -> pd.DataFrame:
    """As :func:`recipe_effects`, one row per bracketed field and other value (``field``, ``value``): a field
    bracketed both ways (``host_framework``: plain PyTorch's lighter host, Transformer Engine's heavier one) shows
    each end apart instead of one mean over moves in opposite directions."""
    table = bracket_predictions(runs, calibration) if table is None else table
    return _effects(table, ["field", "value"])


def recipe_effects_markdown(effects: pd.DataFrame) -> str:
    """A Markdown table of :func:`recipe_effects`, or of :func:`recipe_effects_by_value` (one row per value): the
    cells of :func:`recipe_effects_table`, which the chapter shows (stacked on a phone)."""
    table = recipe_effects_table(effects)
    words = [c for c in ("unstated choice", "read instead as") if c in table.columns]
    return "\n".join(markdown_table(table, left=len(words), code=words))


def recipe_effects_table(effects: pd.DataFrame) -> pd.DataFrame:
    """The chapter's table of :func:`recipe_effects_by_value` (or :func:`recipe_effects`) as text cells under
    readers' headings, for :func:`lgacc.book.notebook.show_table` (which stacks its rows on a phone)."""
    columns = {"field": "unstated choice", "value": "read instead as", "runs": "open for (runs)"}
    shown = pd.DataFrame({title: effects[name].astype(str) for name, title in columns.items() if name in effects})
    shown["mean change"] = [f"{v:.1%}" for v in effects["mean_abs_change"]]
    shown["largest change"] = [f"{v:.1%}" for v in effects["max_abs_change"]]
    shown["signed mean"] = [f"{v:+.1%}" for v in effects["mean_change"]]
    return shown
