"""Term by term beside SimuMax: where lgacc's calibrated step and SimuMax's own part, on the same B200 runs.

The side-by-side table gives each tool's total; this gives the terms the totals are made of, for four rows of
SimuMax's B200 release table (Llama 3 70B cut to 12 layers, 8 micro-batches of one sequence of 4,096 tokens, at TP 8,
TP 1 with 2 pipeline stages, TP 2 and TP 4).  SimuMax's terms are data: its own breakdown of the same rows, computed
by running SimuMax (``benchmarks/peers/simumax_terms.py``, kept in ``data/validation/peers/simumax_b200_terms.yaml``
with the commit and the settings).  lgacc's are the calibrated model's parts (:func:`.calibrated.predict`) with the
calibration fitted without SimuMax's publication, the side-by-side's held-out column.  Both are milliseconds per
step on the slowest pipeline stage:

* ``layer_compute``: the layers' matrix products and attention kernels (forward, both backward products);
* ``layer_memory_bound``: the layers' norms, activations and other streaming kernels;
* ``layer_tensor_parallel``: the layers' tensor-parallel collectives (sequence parallel: all-gathers and
  reduce-scatters);
* ``vocabulary``: the rest of the stage's passes: the embedding, the head, the loss, their collectives and the
  transfers between pipeline stages;
* ``ramp``: the pipeline's ramp (its bubble);
* ``data_parallel``: the gradients' reduction and the weights' gather left exposed;
* ``optimizer``: the optimizer's step;
* ``host``: what the host's floor and the fixed time add (SimuMax charges none).

lgacc's layer terms are ``n_mu`` micro-batches of the stage's ``d_l / n_l`` layers times its per-layer parts, and its
``vocabulary`` term is its stage passes less those: so each tool's terms sum to its own step time (tested).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from lgacc.errors import UserInputError
from lgacc.paths import DATA
from lgacc.yamlfile import load_yaml_mapping

from .calibrated import fit, fit_runs, predict
from .runs import Run

__all__ = ["SIMUMAX_TERMS", "TERMS", "TERM_NAMES", "TOLERANCE_MS", "load_peer_terms", "release_tool_steps",
           "lgacc_terms", "held_out_calibration", "term_comparison", "term_table"]

SIMUMAX_TERMS = DATA / "validation" / "peers" / "simumax_b200_terms.yaml"
#: the terms, in the page's order, with the names the page shows
TERM_NAMES = {
    "layer_compute": "layers: matrix products and attention",
    "layer_memory_bound": "layers: memory-bound kernels",
    "layer_tensor_parallel": "layers: tensor-parallel collectives",
    "vocabulary": "embedding, head, loss and stage transfers",
    "ramp": "pipeline ramp (bubble)",
    "data_parallel": "data-parallel collectives",
    "optimizer": "optimizer step",
    "host": "host floor and fixed time",
}
TERMS = tuple(TERM_NAMES)
#: how far a peer's terms may sum from its step (the file's four decimals of a millisecond)
TOLERANCE_MS = 1e-3


def _rows(path: Path) -> list[Mapping]:
    """The rows of a peer's breakdown file, each a mapping (read once per call, checked by its readers)."""
    rows = load_yaml_mapping(Path(path), "peer term breakdown").get("rows")
    if not isinstance(rows, list) or not rows or not all(isinstance(row, Mapping) for row in rows):
        raise UserInputError(f"peer term breakdown {str(path)!r} must list its rows, each a mapping, under 'rows'")
    return rows


def _where(path: Path, number: int) -> str:
    return f"peer term breakdown {str(path)!r}, row {number}"


def load_peer_terms(path: Path = SIMUMAX_TERMS) -> dict[str, dict[str, float]]:
    """``{run id: {term: seconds}}`` of a peer's breakdown file, checked: every term present, none negative or not a
    number, and the terms summing to the row's ``step_ms``."""
    out: dict[str, dict[str, float]] = {}
    for number, row in enumerate(_rows(path), start=1):
        where = _where(path, number)
        terms = row.get("terms_ms")
        if not isinstance(terms, Mapping) or set(terms) != set(TERMS):
            raise UserInputError(f"{where}: terms_ms must name exactly {', '.join(TERMS)}")
        values = {name: _milliseconds(where, name, terms[name]) for name in TERMS}
        step = _milliseconds(where, "step_ms", row.get("step_ms"))
        if abs(sum(values.values()) - step) > TOLERANCE_MS:
            raise UserInputError(f"{where}: its terms sum to {sum(values.values()):.4f} ms, not its step_ms {step}")
        out[str(row.get("run"))] = {name: value / 1e3 for name, value in values.items()}
    return out


def release_tool_steps(path: Path = SIMUMAX_TERMS) -> dict[str, tuple[float, float]]:
    """``{run id: (step, step without the fused cross entropy)}`` in seconds: the peer's step as its table prints it,
    and what its release tool gives with the setting it ships (``step_ms_release_tool_unfused``)."""
    return {str(row.get("run")): tuple(_milliseconds(_where(path, number), name, row.get(name)) / 1e3
                                       for name in ("step_ms", "step_ms_release_tool_unfused"))
            for number, row in enumerate(_rows(path), start=1)}


def _milliseconds(where: str, name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise UserInputError(f"{where}: {name}={value!r} must be a number of milliseconds, 0 or more")
    return float(value)


def lgacc_terms(runs: Sequence[Run], calibration) -> dict[str, dict[str, float]]:
    """``{run id: {term: seconds}}`` of the calibrated model for ``runs`` under ``calibration`` (see the module)."""
    parts = predict(list(runs), calibration)
    out = {}
    for i, run in enumerate(runs):
        layers = run.n_mu * run.model.d_l / run.n_l  # micro-batches times the slowest stage's layers
        terms = {"layer_compute": layers * parts["layer_matmul"][i],
                 "layer_memory_bound": layers * parts["layer_memory_bound"][i],
                 "layer_tensor_parallel": layers * parts["layer_tensor_parallel"][i]}
        terms["vocabulary"] = parts["pipeline_s"][i] - sum(terms.values())
        terms.update(ramp=parts["bubble_s"][i], data_parallel=parts["data_parallel_s"][i],
                     optimizer=parts["optimizer_s"][i], host=parts["host_s"][i] + parts["fixed_s"][i])
        out[run.id] = {name: float(terms[name]) for name in TERMS}
    return out


def held_out_calibration(runs: Sequence[Run], chosen: Sequence[Run]):
    """The calibration fitted on the dense bf16 time runs of every publication but those of ``chosen``."""
    publications = {run.publication for run in chosen}
    return fit([run for run in fit_runs(runs) if run.publication not in publications])


def term_comparison(runs: Sequence[Run], peer: Mapping[str, Mapping[str, float]] | None = None) -> pd.DataFrame:
    """One row per (run, term) of the peer's file: ``run``, ``term``, ``peer_s`` (SimuMax's), ``lgacc_s`` (fitted
    without the runs' publication), and per run a ``total`` row and the ``measured`` step (``peer_s`` and ``lgacc_s``
    both the measured time)."""
    peer = load_peer_terms() if peer is None else peer
    by_id = {run.id: run for run in runs}
    missing = [run_id for run_id in peer if run_id not in by_id]
    if missing:
        raise UserInputError(f"peer term breakdown names runs the validation does not have: {', '.join(missing)}")
    chosen = [by_id[run_id] for run_id in peer]
    ours = lgacc_terms(chosen, held_out_calibration(runs, chosen))
    rows = []
    for run in chosen:
        for term in TERMS:
            rows.append({"run": run.id, "term": term, "peer_s": peer[run.id][term], "lgacc_s": ours[run.id][term]})
        rows.append({"run": run.id, "term": "total", "peer_s": sum(peer[run.id].values()),
                     "lgacc_s": sum(ours[run.id].values())})
        measured = float(run.reported["iteration_time_s"])
        rows.append({"run": run.id, "term": "measured", "peer_s": measured, "lgacc_s": measured})
    return pd.DataFrame(rows)


def _label(run: Run) -> str:
    """``TP 1, PP 2`` for a run: its tensor- and pipeline-parallel split (the page's column heading)."""
    return f"TP {run.n_a}" + (f", PP {run.n_l}" if run.n_l > 1 else "")


def term_table(comparison: pd.DataFrame, runs: Sequence[Run]) -> pd.DataFrame:
    """The page's table: one row per term (then the total and the measured step), one column per run, each cell
    ``SimuMax / lgacc`` in milliseconds per step, unbroken (one number where both are the same measurement)."""
    by_id = {run.id: run for run in runs}
    names = {**TERM_NAMES, "total": "step (sum of the terms)", "measured": "measured step"}
    columns = {}
    for run_id, rows in comparison.groupby("run", sort=False):
        cells = {}
        for row in rows.itertuples():
            cells[names[row.term]] = (f"{row.peer_s * 1e3:.1f}" if row.term == "measured"  # one line per cell:
                                      else f"{row.peer_s * 1e3:.1f}\u00a0/\u00a0{row.lgacc_s * 1e3:.1f}")
        columns[_label(by_id[run_id])] = cells
    table = pd.DataFrame(columns)
    table.index.name = "ms per step: SimuMax / lgacc"
    return table.reset_index()
