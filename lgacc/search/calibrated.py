"""The fastest configuration under the calibrated model: the paper's candidates, ranked by expected step time.

The candidates and rules are the paper's search's (:mod:`lgacc.search.core`: parallelism, just below
the critical batch, ``n_mu >= n_l``, the GPU budget, the overhead cap and the bottleneck-free
micro-batch, which keep it from buying a little speed with many GPUs), without offload, which the
calibrated model does not price; a candidate must fit the GPU's memory **as the calibrated model
counts it**.  They are ranked by expected training time (the same token count, ``steps`` at the
critical batch), then the paper's ties (fewer GPUs, the smaller micro-batch, more tensor
parallelism); the paper's "highest pipeline parallelism first" is a speed rule the ranking replaces.

Large candidate sets are visited by decreasing GPU count, in chunks, and a chunk is skipped once its
largest GPU count cannot beat the best time found even at the bound of 3 passes of the matrix
products at peak flop/s (no step of the calibrated model is faster).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lgacc.model.calibrated import DEFAULT_RECIPE, Calibration, Expected, Recipe, expected, fitted_calibration
from lgacc.model.calibrated.expected import evaluate_inputs, inputs
from lgacc.model.calibrated.gemm_table import best_efficiency
from lgacc.model.assumptions import DEFAULT_ASSUMPTIONS, Assumptions, apply_to_hardware, critical_batch
from lgacc.model.config import Method
from lgacc.model.evaluator import evaluate_many
from lgacc.model.hardware import Hardware
from lgacc.model.transformer import Transformer

from .candidates import candidates, take
from .core import CHUNK, SINGLE_PASS, _masks, _result, _schedule_candidates
from .parallelism import Parallelism
from .request import SearchRequest
from .result import SearchResult
from .rules import all_valid, request_masks

__all__ = ["CalibratedSearchResult", "fastest_expected"]

#: The paper's rules a calibrated candidate obeys; its memory rule is the calibrated model's instead.
RULES = ("structure", "critical batch", "micro-batches", "GPU budget", "overhead cap", "bottleneck", "offload")


@dataclass(frozen=True)
class CalibratedSearchResult:
    """The configuration the calibrated search chose (``search``: its ideal evaluation too) and its
    calibrated evaluation (``expected``)."""

    search: SearchResult
    expected: Expected | None

    @property
    def feasible(self) -> bool:
        return self.search.feasible and self.expected is not None

    def summary(self) -> dict[str, Any]:
        out = self.search.summary()
        if self.expected is not None:
            out.update(self.expected.summary())
            out["ranked_by"] = "expected_time_days (calibrated)"
        return out


def _evaluate(request: SearchRequest, c, recipe: Recipe, calibration: Calibration) -> dict[str, np.ndarray]:
    values = inputs(request.model, request.hardware, request.method, n_b=c["n_b"], n_l=c["n_l"], n_a=c["n_a"],
                    n_mu=c["n_mu"], b_mu=c["b_mu"], partitioned=request.partitioned, recipe=recipe,
                    schedule=request.schedule, n_v=request.n_v, calibration=calibration,
                    assumptions=request.assumptions)
    out = evaluate_inputs(values, critical_batch_size=critical_batch(request.model, request.assumptions), compact=True)
    out["n_gpu"] = np.asarray(c["n_b"]) * np.asarray(c["n_l"]) * np.asarray(c["n_a"])
    return out


def _valid(request: SearchRequest, c, ideal) -> np.ndarray:
    """The paper's rules (:data:`RULES`; the schedule's own where one is given), its memory rule aside."""
    masks = _masks(request, c, ideal, just_below=True)
    return all_valid({name: masks[name] for name in RULES})


def _select(c, r, valid: np.ndarray) -> int | None:
    """The valid candidate with the least expected time, then fewer GPUs, the smaller micro-batch, more tensor
    parallelism (the paper's ties; its "highest pipeline parallelism first" is a speed rule, replaced here)."""
    index = np.flatnonzero(valid)
    if index.size == 0:
        return None
    keys = [-np.asarray(c["n_a"])[index], np.asarray(c["b_mu"])[index], np.asarray(r["n_gpu"])[index],
            np.asarray(r["time_days"])[index]]
    return int(index[np.lexsort(keys)[0]])


def fastest_expected(
    model: Transformer | str,
    hardware: Hardware | str,
    method: Method | str,
    parallelism: Parallelism | str,
    *,
    recipe: Recipe = DEFAULT_RECIPE,
    calibration: Calibration | None = None,
    max_gpus: int | None = None,
    partitioned: bool | None = None,
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
    schedule: str | None = None,
    n_v: int = 1,
) -> CalibratedSearchResult:
    """The configuration with the least expected training time (see the module's docstring)."""
    calibration = fitted_calibration() if calibration is None else calibration
    request = SearchRequest.create(model, hardware, method, parallelism, max_gpus=max_gpus, allow_offload=False,
                                   partitioned=partitioned, assumptions=assumptions, schedule=schedule, n_v=n_v)
    c = _schedule_candidates(request, candidates(request))
    limit = apply_to_hardware(request.hardware, request.assumptions).memory_bytes
    n = len(c["n_b"])
    if n == 0:
        return CalibratedSearchResult(_result(request, "fastest", None, None, ("critical batch: no configuration of "
                                                                               "this parallelism fits below it",), 0), None)
    n_gpu = c["n_b"] * c["n_l"] * c["n_a"]
    order = np.argsort(-n_gpu, kind="stable")
    c, n_gpu = take(c, order), n_gpu[order]
    measured = best_efficiency(request.hardware.name)  # a measured GEMM table's best, where one covers the GPU
    fastest_kernel = calibration.kappa * max(request.hardware.gemm_max_efficiency, calibration.attention_efficiency,
                                             0.0 if measured is None else measured)
    bound = _perfect_days(request) / max(1.0, fastest_kernel)
    best, visited = None, 0
    for start in range(0, n, SINGLE_PASS if n <= SINGLE_PASS else CHUNK):
        if best is not None and bound / n_gpu[start] > best[0] * (1 + 1e-12):
            break  # even 3 passes at peak on this many GPUs cannot beat the best time found
        part = slice(start, min(start + (SINGLE_PASS if n <= SINGLE_PASS else CHUNK), n))
        cc = {k: v[part] for k, v in c.items()}
        visited += part.stop - part.start
        ok = np.flatnonzero(_valid(request, cc, request.evaluate(cc)))
        if ok.size == 0:
            continue
        cc = take(cc, ok)
        r = _evaluate(request, cc, recipe, calibration)
        i = _select(cc, r, np.asarray(r["memory_bytes"]) <= limit)
        if i is not None and (best is None or r["time_days"][i] < best[0] * (1 - 1e-12)):
            best = (float(r["time_days"][i]), cc, i)
    if best is None:
        return CalibratedSearchResult(_result(request, "fastest", None, None, (
            "memory: no candidate fits the GPU's memory as the calibrated model counts it",), visited), None)
    _, cc, i = best
    config = request.config(cc, i)
    search = _result(request, "fastest", config, request.evaluate_config(config),
                     ("ranked by the calibrated model's expected training time",), visited)
    found = expected(request.model, request.hardware, config, recipe=recipe, schedule=request.schedule,
                     n_v=request.n_v, calibration=calibration, assumptions=request.assumptions)
    return CalibratedSearchResult(search, found)


def _perfect_days(request: SearchRequest) -> float:
    """GPU-days of the token count at peak flop/s with 3 passes (no recomputation): a lower bound on
    ``n_gpu x`` every candidate's expected training time."""
    r = evaluate_many(request.model, request.hardware, request.method, n_b=1, partitioned=request.partitioned,
                      assumptions=request.assumptions, schedule=request.schedule, n_v=request.n_v)
    return 0.75 * float(r["time_days"] * r["efficiency"] * r["n_gpu"])
