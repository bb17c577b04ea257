"""Why a search answered as it did: the rule that removed the last candidates, or what the next more
parallel configurations break."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from lgacc.model.config import TrainingConfig
from lgacc.model.evaluator import Evaluation

from .bounds import head_degrees, layer_degrees, next_degree
from .candidates import tensor_top
from .request import CANDIDATE_KEYS, SearchRequest
from .rules import OVERLAPPED, RULES, TOLERANCE, request_masks

__all__ = ["infeasible_reason", "explain", "RuleTally"]


class RuleTally:
    """:func:`infeasible_reason` over candidates seen in chunks, with the answer of one pass over them all.

    Per rule (in :data:`RULES` order, then the extra masks), whether any candidate survives it and every
    rule before it, and the fastest candidate alive before it (the first of the fastest in the candidates'
    own order, as ``numpy.argmin``): what :func:`infeasible_reason` reads, kept without the arrays."""

    def __init__(self) -> None:
        self.names: list[str] | None = None
        self.survives: dict[str, bool] = {}
        self.alive: dict[str, bool] = {}
        self.fastest: dict[str, tuple] = {}

    def add(self, c: Mapping[str, np.ndarray], r: Mapping[str, np.ndarray] | None, masks: Mapping[str, np.ndarray],
            index: np.ndarray | None = None) -> None:
        """One chunk: candidates ``c``, their evaluation ``r`` (or ``None``), masks, and their positions
        ``index`` in the whole candidate order (default ``0..n-1``)."""
        n = len(c["n_b"])
        index = np.arange(n) if index is None else np.asarray(index)
        if self.names is None:
            self.names = [name for name in [*RULES, *(k for k in masks if k not in RULES)] if name in masks]
        alive = np.ones(n, bool)
        for name in self.names:
            rows = np.flatnonzero(alive)
            if rows.size:
                self.alive[name] = True
                self._fastest(name, c, r, rows, index)
            alive = alive & masks[name]
            self.survives[name] = self.survives.get(name, False) or bool(alive.any())

    def _fastest(self, name, c, r, rows, index) -> None:
        if r is None:
            pick, key = rows[0], (0, 0.0, int(index[rows[0]]))
        else:
            times = np.asarray(r["time_days"], float)[rows]
            nan = np.isnan(times)
            pick = rows[int(np.argmax(nan))] if nan.any() else rows[int(np.argmin(times))]
            key = (0, 0.0, int(index[pick])) if nan.any() else (1, float(np.asarray(r["time_days"])[pick]),
                                                               int(index[pick]))
        if name not in self.fastest or key < self.fastest[name][0]:
            self.fastest[name] = (key, {k: np.asarray(c[k])[pick].item() for k in CANDIDATE_KEYS})

    def reason(self, request: SearchRequest, evaluated: bool = True) -> tuple[str, ...]:
        """The rule that removed the last candidates, with the evaluator's reason for the nearest miss."""
        for name in self.names or ():
            if self.survives[name]:
                continue
            if not self.alive.get(name):
                break
            row = self.fastest[name][1]
            config = request.config({k: np.array([v]) for k, v in row.items()}, 0)
            detail = ""
            if evaluated:
                evaluation = request.evaluate_config(config)
                detail = "; ".join(evaluation.reasons) or _bottleneck_detail(evaluation)
            text = f"{name}: {RULES.get(name, 'within the target time')}"
            if detail:
                text += (f" (e.g. n_b={config.n_b}, n_l={config.n_l}, n_a={config.n_a}, n_mu={config.n_mu}, "
                         f"b_mu={config.b_mu}, offload={config.offload}: {detail})")
            return (text,)
        return ("structure: no configuration of this parallelism fits the model",)


def infeasible_reason(request: SearchRequest, c: Mapping[str, np.ndarray], r: Mapping[str, np.ndarray] | None,
                      masks: Mapping[str, np.ndarray]) -> tuple[str, ...]:
    """The rule that removed the last candidates, with the evaluator's reason for the nearest miss."""
    tally = RuleTally()
    tally.add(c, r, masks)
    return tally.reason(request, evaluated=r is not None)


def _bottleneck_detail(evaluation: Evaluation) -> str:
    over = {k: v for k, v in evaluation.overheads.items() if k in OVERLAPPED + ("data",) and v > TOLERANCE}
    return ", ".join(f"{k} overhead {v:.3g}" for k, v in over.items())


def _neighbors(request: SearchRequest, config: TrainingConfig) -> dict[str, TrainingConfig]:
    """The next more parallel configurations, with ``config``'s state partition."""
    B = request.batch_limit
    next_l, next_a = _next_degrees(request)
    out = {}

    def just_below(n_b, n_l, n_a, b_mu, offload):
        n_mu = B // (n_b * b_mu)
        if n_mu < 1:
            return None
        return TrainingConfig(request.method, n_b=n_b, n_l=n_l, n_a=n_a, n_mu=n_mu, b_mu=b_mu, offload=offload,
                              partitioned=config.partitioned)

    c = config
    out["one more data-parallel instance"] = just_below(c.n_b + 1, c.n_l, c.n_a, c.b_mu, c.offload)
    if c.b_mu > 1:
        out["a smaller micro-batch"] = just_below(c.n_b, c.n_l, c.n_a, c.b_mu - 1, c.offload)
    larger_l = next_l(c.n_l)
    if larger_l is not None:
        out["more pipeline stages"] = just_below(c.n_b, larger_l, c.n_a, c.b_mu, c.offload)
    larger_a = next_a(c.n_a)
    if larger_a is not None:
        out["more tensor parallelism"] = just_below(c.n_b, c.n_l, larger_a, c.b_mu, c.offload)
    return {k: v for k, v in out.items() if v is not None}


def _next_degrees(request: SearchRequest):
    """The next larger allowed ``n_l`` and ``n_a`` after a value (``None``: none), as the search's structure
    rule allows them up to ``d_l`` and the heads rule, found without listing every degree."""
    model, assumptions, parallelism = request.model, request.assumptions, request.parallelism
    pipe = parallelism.pipe and not request.no_pipeline
    heads = tensor_top(request)

    def next_l(n_l: int) -> int | None:
        if not pipe:
            return None
        return next_degree(lambda upper: layer_degrees(model, assumptions, upper), n_l, model.d_l)

    def next_a(n_a: int) -> int | None:
        if not parallelism.tensor:
            return None
        return next_degree(lambda upper: head_degrees(model, assumptions, upper), n_a, heads)

    return next_l, next_a


def explain(request: SearchRequest, evaluation: Evaluation, *, just_below: bool = True) -> tuple[str, ...]:
    """Why the chosen configuration is not more parallel: the rules its neighbours break, or 'slower'."""
    found = []
    for what, neighbor in _neighbors(request, evaluation.config).items():
        c = {k: np.array([getattr(neighbor, k)]) for k in CANDIDATE_KEYS}
        r = request.evaluate(c)
        masks = request_masks(request, c, r, just_below=just_below)
        broken = [name for name, m in masks.items() if not m[0]]
        if "offload" in broken and not neighbor.offload and request.allow_offload:
            broken = [b for b in broken if b != "offload"]
        if broken:
            found.append(f"{what}: breaks {', '.join(broken)}")
        else:
            found.append(f"{what}: allowed but slower ({float(r['time_days'][0]):.3g} d)")
    return tuple(found)
