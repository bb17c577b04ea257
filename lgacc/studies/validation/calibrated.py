"""The calibrated model on the published runs: predictions, the fit of its two parameters, and their errors.

Every run is evaluated under its reading (:class:`lgacc.studies.validation.runs.Run`: method,
schedule, chunks, micro-batch, recipe) with :func:`lgacc.model.calibrated.expected.inputs`; the
runs are stacked into arrays, so one pass of the program evaluates all of them and the fit's
objective costs a millisecond.

**Fit** (:func:`fit`): ``kappa`` and ``xi``, the two fitted parameters (no constant per-step time: ``T_0`` stays 0; the
bus efficiency ``eta`` and the NVLink latency from a published NCCL benchmark,
:func:`lgacc.model.calibrated.parameters.link_priors`), minimises the weighted mean absolute log error
of the step time over the runs used for time (the measure the errors are reported in, and robust to
the runs no reading explains well), each publication weighing the same whatever its number of runs,
with a weak pull towards the prior (``lambda = 0.02`` on ``ln kappa``); Nelder-Mead on ``(ln kappa, xi)``,
``xi`` clipped to [0, 1].  Memory is not fitted.

**Runs with experts, context parallelism or FP8** (:attr:`.runs.Run.extended`) are predicted by
:func:`lgacc.model.calibrated.sparse.expected_sparse` (one call each, the same calibration) and are never
fitted on: the fit reads the dense bf16 runs only (:func:`fit_runs`), so the extended runs are always out of
sample and adding them changes no dense run's number.

**Errors**: *leave one publication out* (each publication predicted with the parameters fitted on
the others, :func:`leave_one_publication_out`) and *within publication* (fitted on all runs,
Calculon's way of reporting its 3.65 %).
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

from lgacc.model.assumptions import DEFAULT_ASSUMPTIONS, critical_batch
from lgacc.model.calibrated import FITTED, PRIORS, Calibration
from lgacc.model.calibrated.parameters import link_priors
from lgacc.model.calibrated.expected import evaluate_inputs, inputs
from lgacc.model.calibrated.sparse import expected_sparse
from lgacc.model.hardware.links import GIB

from .measured import measured_step_time
from .runs import Run

__all__ = ["run_inputs", "stacked_inputs", "predict", "objective", "nelder_mead", "fit", "leave_one_publication_out",
           "RIDGE", "time_runs", "fit_runs", "predict_extended"]

#: Weight of the pull towards the priors, on the log parameters.
RIDGE = 0.02


def run_inputs(run: Run, calibration: Calibration | None = None) -> dict[str, float]:
    """The calibrated model's inputs for one run (scalars); the fixed constants of ``calibration`` (default: the
    priors with the published link constants, :func:`link_priors`), the fitted ones replaced at prediction."""
    calibration = link_priors() if calibration is None else calibration
    values = inputs(run.model, run.hardware, run.method, n_b=run.n_b, n_l=run.n_l, n_a=run.n_a, n_mu=run.n_mu,
                    b_mu=run.b_mu, partitioned=run.recipe.zero_stage == 3, recipe=run.recipe, schedule=run.schedule,
                    n_v=run.n_v, calibration=calibration)
    return {key: float(np.asarray(value)) for key, value in values.items()}


def stacked_inputs(runs: Sequence[Run], calibration: Calibration | None = None) -> dict[str, np.ndarray]:
    """The inputs of every dense bf16 run of ``runs`` (the extended ones skipped), one array per input, in order."""
    rows = [run_inputs(run, calibration) for run in runs if not run.extended]
    if not rows:
        return {}
    return {key: np.array([row[key] for row in rows]) for key in rows[0]}


#: The parts of an extended run's prediction (the dense program's parts of its active surrogate, plus these).
EXTENDED_PARTS = ("expert_gemm_s", "all_to_all_s", "dispatch_s", "step_time_imbalanced_s")


def predict_extended(run: Run, calibration: Calibration) -> dict[str, float]:
    """One extended run (experts, context parallelism or FP8) under the calibrated model:
    :func:`expected_sparse` with the run's configuration, recipe, schedule and chunks."""
    result = expected_sparse(run.model, run.hardware, run.config(), recipe=run.recipe, schedule=run.schedule,
                             n_v=run.n_v, calibration=calibration)
    dense = getattr(result, "dense", result)
    out = {"step_time_s": float(result.step_time_s), "memory_bytes": float(result.memory_bytes),
           **{f"{part}_s": float(value) for part, value in dense.step_parts_s.items()}}
    out["expert_gemm_s"] = float(getattr(result, "expert_gemm_s", 0.0))
    out["all_to_all_s"] = float(getattr(result, "all_to_all_s", 0.0))
    out["dispatch_s"] = float(getattr(result, "dispatch_s", 0.0))
    out["step_time_imbalanced_s"] = float(getattr(result, "step_time_imbalanced_s", result.step_time_s))
    return out


def _with(values: dict[str, np.ndarray], calibration: Calibration) -> dict[str, np.ndarray]:
    out = dict(values)
    out.update({"kappa": calibration.kappa, "eta": calibration.eta, "xi": calibration.xi, "T_0": calibration.T_0})
    return out


def _predict_dense(runs: Sequence[Run], calibration: Calibration, values: dict[str, np.ndarray] | None,
                   compact: bool) -> dict[str, np.ndarray]:
    values = stacked_inputs(runs) if values is None else values
    b_c = np.array([critical_batch(run.model, DEFAULT_ASSUMPTIONS) for run in runs])
    out = evaluate_inputs(_with(values, calibration), critical_batch_size=b_c, compact=compact)
    out["memory_gib"] = out["memory_bytes"] / GIB
    return out


def predict(runs: Sequence[Run], calibration: Calibration, values: dict[str, np.ndarray] | None = None,
            compact: bool = False) -> dict[str, np.ndarray]:
    """Expected step time (s), memory (GiB) and, unless ``compact``, every part, for each run; ``values`` are
    the stacked inputs of its dense bf16 runs (:func:`stacked_inputs`).  The dense bf16 runs go through the
    stacked program as before issue #36; the extended ones through :func:`predict_extended` (their parts that
    the stacked program has and the sparse one lacks are NaN; ``expert_gemm_s``, ``all_to_all_s`` and
    ``dispatch_s`` are 0 for a dense run)."""
    dense = [i for i, run in enumerate(runs) if not run.extended]
    if len(dense) == len(runs):
        return _predict_dense(runs, calibration, values, compact)
    extended = [i for i, run in enumerate(runs) if run.extended]
    rows = [predict_extended(runs[i], calibration) for i in extended]
    out: dict[str, np.ndarray] = {}
    if dense:
        part = _predict_dense([runs[i] for i in dense], calibration, values, compact)
        keys = [key for key, value in part.items() if np.ndim(value) == 1 and len(value) == len(dense)]
    else:
        part, keys = {}, ["step_time_s", "memory_bytes", "memory_gib", *(() if compact else rows[0])]
    for key in dict.fromkeys([*keys, *(() if compact else EXTENDED_PARTS)]):
        column = np.full(len(runs), np.nan)
        if key in part:
            column[dense] = part[key]
        elif key in ("expert_gemm_s", "all_to_all_s", "dispatch_s"):
            column[dense] = 0.0
        elif key == "step_time_imbalanced_s" and "step_time_s" in part:
            column[dense] = part["step_time_s"]
        source = "memory_bytes" if key == "memory_gib" else key
        column[extended] = [row.get(source, np.nan) / (GIB if key == "memory_gib" else 1) for row in rows]
        out[key] = column
    return out


def time_runs(runs: Sequence[Run]) -> list[Run]:
    """The runs compared on their step time."""
    return [run for run in runs if "time" in run.uses]


def fit_runs(runs: Sequence[Run]) -> list[Run]:
    """The runs the calibration is fitted on: the dense bf16 runs compared on their step time (the extended
    runs, with experts, context parallelism or FP8, are only predicted)."""
    return [run for run in time_runs(runs) if not run.extended]


#: The largest ``kappa`` a :class:`Calibration` accepts (its own rule, ``(0, 1.5]``); the fit stays inside it.
KAPPA_MAX = 1.5


def _calibration(x: Sequence[float], base: Calibration | None = None) -> Calibration:
    return (link_priors() if base is None else base).replace(kappa=math.exp(x[0]), xi=min(1.0, max(0.0, x[1])))


def objective(runs: Sequence[Run], values: dict[str, np.ndarray] | None = None,
              base: Calibration | None = None) -> Callable[[Sequence[float]], float]:
    """The fit's loss as a function of ``(ln kappa, xi)`` over ``runs`` (dense bf16 runs: :func:`fit_runs`), the
    other constants ``base``'s (the priors with the measured tables' constants, :func:`.link_priors`, unless given)."""
    if any(run.extended for run in runs):
        raise ValueError("the calibration is fitted on dense bf16 runs only (fit_runs)")
    values = stacked_inputs(runs) if values is None else values
    measured = np.array([measured_step_time(run) for run in runs])
    publications = [run.publication for run in runs]
    weights = np.array([1 / publications.count(p) for p in publications])
    weights = weights / weights.sum()
    prior = np.array([math.log(PRIORS.kappa)])

    def loss(x: Sequence[float]) -> float:
        if not 0 < math.exp(x[0]) <= KAPPA_MAX:  # outside Calibration's range: the simplex must turn back, not fail
            return math.inf
        step = predict(runs, _calibration(x, base), values, compact=True)["step_time_s"]
        residual = np.log(step / measured)
        return float(np.sum(weights * np.abs(residual)) + RIDGE * np.sum((np.asarray(x[:1]) - prior) ** 2))

    return loss


def nelder_mead(function: Callable[[np.ndarray], float], start: Sequence[float], *, scale: float = 0.1,
                iterations: int = 400, tolerance: float = 1e-10) -> np.ndarray:
    """The minimum of ``function`` near ``start`` by the Nelder-Mead simplex (reflection 1, expansion 2,
    contraction and shrink 1/2), stopped when the simplex's values agree to ``tolerance``."""
    n = len(start)
    points = [np.array(start, float)] + [np.array(start, float) + scale * np.eye(n)[i] for i in range(n)]
    values = [function(p) for p in points]
    for _ in range(iterations):
        order = np.argsort(values)
        points, values = [points[i] for i in order], [values[i] for i in order]
        if values[-1] - values[0] < tolerance:
            break
        centroid = np.mean(points[:-1], axis=0)
        reflected = centroid + (centroid - points[-1])
        f_reflected = function(reflected)
        if f_reflected < values[0]:
            expanded = centroid + 2 * (centroid - points[-1])
            f_expanded = function(expanded)
            points[-1], values[-1] = (expanded, f_expanded) if f_expanded < f_reflected else (reflected, f_reflected)
        elif f_reflected < values[-2]:
            points[-1], values[-1] = reflected, f_reflected
        else:
            contracted = centroid + 0.5 * (points[-1] - centroid)
            f_contracted = function(contracted)
            if f_contracted < values[-1]:
                points[-1], values[-1] = contracted, f_contracted
            else:
                points = [points[0] + 0.5 * (p - points[0]) for p in points]
                values = [function(p) for p in points]
    return points[int(np.argmin(values))]


def fit(runs: Sequence[Run], values: dict[str, np.ndarray] | None = None,
        base: Calibration | None = None) -> Calibration:
    """The calibration fitted on ``runs`` (their step times only), from the priors; its fixed constants ``base``'s
    where given (a what-if: :mod:`.what_if`)."""
    start = [math.log(PRIORS.kappa), 0.0]
    best = nelder_mead(objective(runs, values, base), start)
    fitted = _calibration(best, base)
    return fitted.replace(**{name: round(getattr(fitted, name), 4) for name in FITTED})


def leave_one_publication_out(runs: Sequence[Run], base: Calibration | None = None
                              ) -> dict[str, tuple[Calibration, np.ndarray]]:
    """For each publication of the time runs: the calibration fitted on the dense bf16 runs of the others
    (:func:`fit_runs`; its fixed constants ``base``'s where given), and the predicted step times of its own time runs
    with it, extended ones included (in the order of ``runs`` filtered to that publication)."""
    timed = time_runs(runs)
    dense = fit_runs(runs)
    values = stacked_inputs(dense)
    publications = list(dict.fromkeys(run.publication for run in timed))
    out = {}
    for publication in publications:
        keep = np.array([run.publication != publication for run in dense], dtype=bool)
        if not keep.any():
            continue
        train = [run for run, k in zip(dense, keep) if k]
        calibration = fit(train, {key: value[keep] for key, value in values.items()}, base)
        held = [run for run in timed if run.publication == publication]
        step = predict(held, calibration, {key: value[~keep] for key, value in values.items()}, compact=True)
        out[publication] = (calibration, step["step_time_s"])
    return out
