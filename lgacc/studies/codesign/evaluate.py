"""One design under both models, and one chunk of designs: pure functions of the sweep (what a Dask worker
runs; nothing here reads or writes a file).

For each design and model, the row holds the design's effective hardware and, per model, the search's
best configuration, its time, GPU count and GPU-hours, every key prefixed by the model it comes from:

* ``ideal_*``: the paper's search (:func:`lgacc.search.fastest` / :func:`lgacc.search.cheapest`);
* ``calibrated_*``: for ``fastest``, the candidates ranked by the calibrated model's expected time
  (:func:`lgacc.search.calibrated.fastest_expected`); for ``cheapest``, which the calibrated model has no
  search for, the ideal search's configuration evaluated by the calibrated model (``calibrated_ranked_by``
  says which).

An infeasible design has ``*_feasible: false``, its numbers ``None`` and ``*_reason``: the rule that
removed the last candidates.
"""

from __future__ import annotations

import time
from typing import Any

from lgacc.errors import UserInputError
from lgacc.model.calibrated import expected
from lgacc.model.transformer import Transformer
from lgacc.search import cheapest, fastest
from lgacc.search.calibrated import fastest_expected

from .designs import Design, design_columns, designs, hardware_of
from .sweep import Sweep

__all__ = ["RESULT_KEYS", "evaluate_design", "evaluate_chunk", "timed_chunk"]

HOURS_PER_DAY = 24.0
#: The keys of each model's result, after its prefix (``ideal_`` or ``calibrated_``).
RESULT_KEYS = ("feasible", "time_days", "n_gpu", "gpu_hours", "n_b", "n_l", "n_a", "n_mu", "b_mu", "offload",
               "reason")
RANKED_FASTEST = "expected time (calibrated search)"
RANKED_CHEAPEST = "the ideal search's configuration, evaluated by the calibrated model"


def _columns(prefix: str, config, time_days: float | None, n_gpu: int | None, reason: str) -> dict[str, Any]:
    feasible = config is not None and time_days is not None
    out = {"feasible": feasible, "time_days": time_days if feasible else None, "n_gpu": n_gpu if feasible else None,
           "gpu_hours": time_days * n_gpu * HOURS_PER_DAY if feasible else None}
    for key in ("n_b", "n_l", "n_a", "n_mu", "b_mu", "offload"):
        out[key] = getattr(config, key) if feasible else None
    out["reason"] = "" if feasible else reason
    return {f"{prefix}_{k}": v for k, v in out.items()}


def _ideal(sweep: Sweep, model: Transformer, hardware):
    if sweep.objective == "cheapest":
        return cheapest(model, hardware, sweep.method, sweep.parallelism, sweep.target_days, max_gpus=sweep.max_gpus,
                        allow_offload=sweep.allow_offload, explain=False)
    return fastest(model, hardware, sweep.method, sweep.parallelism, max_gpus=sweep.max_gpus,
                   allow_offload=sweep.allow_offload, explain=False)


def _calibrated(sweep: Sweep, model: Transformer, hardware, ideal) -> dict[str, Any]:
    if sweep.objective == "cheapest":
        ranked = RANKED_CHEAPEST
        if not ideal.feasible:
            return _columns("calibrated", None, None, None, "; ".join(ideal.binding)) | {"calibrated_ranked_by": ranked}
        found = expected(model, hardware, ideal.config)
        if not found.fits:
            return _columns("calibrated", None, None, None, "memory: the ideal search's configuration does not fit "
                            "the GPU's memory as the calibrated model counts it") | {"calibrated_ranked_by": ranked}
        return _columns("calibrated", ideal.config, found.time_days, ideal.evaluation.n_gpu, "") | {
            "calibrated_ranked_by": ranked}
    found = fastest_expected(model, hardware, sweep.method, sweep.parallelism, max_gpus=sweep.max_gpus)
    config = found.search.config if found.feasible else None
    time_days = found.expected.time_days if found.feasible else None
    n_gpu = found.search.evaluation.n_gpu if found.feasible else None
    return _columns("calibrated", config, time_days, n_gpu, "; ".join(found.search.binding)) | {
        "calibrated_ranked_by": RANKED_FASTEST}


def evaluate_design(sweep: Sweep, design: Design, model: Transformer) -> dict[str, Any]:
    """The row of ``design`` and ``model`` (see the module's docstring)."""
    values = dict(design.values)
    row: dict[str, Any] = {"design": design.index, "grid": design.grid, "label": design.label, "model": model.name,
                           "split": int(values.get("split", 1)), "split_links": values.get("split_links", "divided")}
    try:
        hardware = hardware_of(sweep.base, design)
    except UserInputError as error:  # a split that takes a value out of the accepted range
        reason = f"invalid design: {error}"
        return row | _columns("ideal", None, None, None, reason) | _columns("calibrated", None, None, None, reason) | {
            "calibrated_ranked_by": ""}
    row.update(design_columns(hardware))
    try:
        ideal = _ideal(sweep, model, hardware)
    except UserInputError as error:  # beyond the search's budgets: one line, as the command line says it
        reason = str(error)
        return row | _columns("ideal", None, None, None, reason) | _columns("calibrated", None, None, None, reason) | {
            "calibrated_ranked_by": ""}
    n_gpu = ideal.evaluation.n_gpu if ideal.feasible else None
    time_days = ideal.evaluation.time_days if ideal.feasible else None
    row.update(_columns("ideal", ideal.config, time_days, n_gpu, "; ".join(ideal.binding)))
    try:
        row.update(_calibrated(sweep, model, hardware, ideal))
    except UserInputError as error:
        row.update(_columns("calibrated", None, None, None, str(error)) | {"calibrated_ranked_by": ""})
    return row


def evaluate_chunk(sweep: Sweep, start: int, stop: int) -> list[dict[str, Any]]:
    """The rows of designs ``start`` to ``stop`` (exclusive), each design with every model of the sweep, in
    order: design by design, then the sweep's model order."""
    return [evaluate_design(sweep, design, model) for design in designs(sweep, start, stop) for model in sweep.models]


def timed_chunk(sweep: Sweep, start: int, stop: int) -> tuple[list[dict[str, Any]], float]:
    """:func:`evaluate_chunk` and the seconds it took (kept beside the rows: how long a sweep takes to compute,
    whether its chunks were computed now or read back)."""
    began = time.perf_counter()
    rows = evaluate_chunk(sweep, start, stop)
    return rows, time.perf_counter() - began
