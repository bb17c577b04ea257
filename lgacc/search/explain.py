"""Why a search answered as it did: the rule that removed the last candidates, or what the next more
parallel configurations break."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from lgacc.model.config import TrainingConfig
from lgacc.model.evaluator import Evaluation

from .candidates import dimension_values
from .request import CANDIDATE_KEYS, SearchRequest
from .rules import OVERLAPPED, RULES, TOLERANCE, request_masks

__all__ = ["infeasible_reason", "explain"]


def infeasible_reason(request: SearchRequest, c: Mapping[str, np.ndarray], r: Mapping[str, np.ndarray] | None,
                      masks: Mapping[str, np.ndarray]) -> tuple[str, ...]:
    """The rule that removed the last candidates, with the evaluator's reason for the nearest miss."""
    alive = np.ones(len(c["n_b"]), bool)
    for name in [*RULES, *(k for k in masks if k not in RULES)]:
        if name not in masks:
            continue
        survivors = alive & masks[name]
        if not survivors.any():
            if not alive.any():
                break
            # nearest miss: among candidates alive before this rule, the fastest
            index = np.flatnonzero(alive)
            best = int(index[np.argmin(np.asarray(r["time_days"])[index])]) if r is not None else int(index[0])
            config = request.config(c, best)
            detail = ""
            if r is not None:
                evaluation = request.evaluate_config(config)
                detail = "; ".join(evaluation.reasons) or _bottleneck_detail(evaluation)
            text = f"{name}: {RULES.get(name, 'within the target time')}"
            if detail:
                text += (f" (e.g. n_b={config.n_b}, n_l={config.n_l}, n_a={config.n_a}, n_mu={config.n_mu}, "
                         f"b_mu={config.b_mu}, offload={config.offload}: {detail})")
            return (text,)
        alive = survivors
    return ("structure: no configuration of this parallelism fits the model",)


def _bottleneck_detail(evaluation: Evaluation) -> str:
    over = {k: v for k, v in evaluation.overheads.items() if k in OVERLAPPED + ("data",) and v > TOLERANCE}
    return ", ".join(f"{k} overhead {v:.3g}" for k, v in over.items())


def _neighbors(request: SearchRequest, config: TrainingConfig, n_ls, n_as) -> dict[str, TrainingConfig]:
    """The next more parallel configurations, with ``config``'s state partition."""
    B = request.batch_limit
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
    larger_l = [int(v) for v in n_ls if v > c.n_l]
    if larger_l:
        out["more pipeline stages"] = just_below(c.n_b, larger_l[0], c.n_a, c.b_mu, c.offload)
    larger_a = [int(v) for v in n_as if v > c.n_a]
    if larger_a:
        out["more tensor parallelism"] = just_below(c.n_b, c.n_l, larger_a[0], c.b_mu, c.offload)
    return {k: v for k, v in out.items() if v is not None}


def explain(request: SearchRequest, evaluation: Evaluation, *, just_below: bool = True) -> tuple[str, ...]:
    """Why the chosen configuration is not more parallel: the rules its neighbours break, or 'slower'."""
    n_ls, n_as = dimension_values(request, None)
    found = []
    for what, neighbor in _neighbors(request, evaluation.config, n_ls, n_as).items():
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
