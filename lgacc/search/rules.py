"""The paper's selection rules as boolean masks over candidate arrays, and its one preference order.

Each rule of :data:`RULES` is a filter (sec:methodology, "Optimal configuration";
see :mod:`lgacc.search` for the rules in the paper's words).  The masks read the
evaluator's own rule flags (``ok_memory``, ``ok_overheads``) and the assumptions'
divisibility rules (:meth:`lgacc.model.assumptions.Assumptions.allows_layers`,
``allows_heads``): nothing here re-derives what the evaluator decides.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from lgacc.model.assumptions import DEFAULT_ASSUMPTIONS, Assumptions, apply_to_hardware, critical_batch
from lgacc.model.config import Method
from lgacc.model.hardware import Hardware
from lgacc.model.transformer import Transformer

from .bounds import divisors
from .parallelism import Parallelism
from .request import SearchRequest

__all__ = ["RULES", "OBJECTIVES", "divisors", "bottleneck_free", "request_masks", "rule_masks", "preference_keys",
           "select", "all_valid"]

#: The rules in the order they are reported, with what each requires.
RULES: dict[str, str] = {
    "structure": "allowed parallel dimensions only; n_l divides d_l, n_a divides d_a; no pipeline when partitioned",
    "critical batch": "b at or just below the critical batch b_c",
    "micro-batches": "at least n_l micro-batches",
    "GPU budget": "n_gpu within the budget",
    "memory": "memory within the GPU",
    "overhead cap": "each overhead except the bubble at most max_overhead",
    "bottleneck": "no communication bottleneck in the overlapped transfers (data, offload, PCIe)",
    "offload": "offload only when memory needs it, and only if allowed",
}

#: Overheads that must be zero for a configuration to be free of communication bottlenecks.
OVERLAPPED = ("state_offload", "checkpoint_offload", "pcie")
TOLERANCE = 1e-12
#: The two searches' objectives (:func:`preference_keys`).
OBJECTIVES = ("fastest", "cheapest")


def all_valid(masks: Mapping[str, np.ndarray]) -> np.ndarray:
    """Where every mask holds."""
    return np.all(list(masks.values()), axis=0)


def bottleneck_free(request: SearchRequest, n_l, evaluated: Mapping[str, np.ndarray]) -> np.ndarray:
    """"The smallest micro-batch size that does not cause a communication bottleneck": every overlapped
    transfer has zero overhead; the baseline's reduction with a pipeline is not overlapped (only capped)."""
    r = evaluated
    free = np.ones(np.shape(r["data"]), bool)
    for name in OVERLAPPED:
        free &= r[name] <= TOLERANCE
    free &= (r["data"] <= TOLERANCE) | (request.baseline_like & (np.asarray(n_l) > 1))
    return free


def request_masks(request: SearchRequest, candidates: Mapping[str, np.ndarray],
                  evaluated: Mapping[str, np.ndarray] | None, *, just_below: bool) -> dict[str, np.ndarray]:
    """One boolean array per rule of :data:`RULES` (True where the candidate obeys it); with
    ``evaluated=None`` only the rules that need no evaluation."""
    n_b, n_l, n_a, n_mu, b_mu, offload = (
        np.asarray(candidates[key]) for key in ("n_b", "n_l", "n_a", "n_mu", "b_mu", "offload")
    )
    model, parallelism, assumptions = request.model, request.parallelism, request.assumptions
    b_c = critical_batch(model, assumptions)
    b = n_b * n_mu * b_mu
    structure = (
        ((n_b == 1) | parallelism.data)
        & ((n_l == 1) | (parallelism.pipe and not request.no_pipeline))
        & ((n_a == 1) | parallelism.tensor)
        & (n_l <= model.d_l)
        & assumptions.allows_layers(model.d_l, n_l)
        & assumptions.allows_heads(model.d_a, n_a)
    )
    batch = b <= b_c
    if just_below:
        batch = batch & (b + n_b * b_mu > b_c)
    masks = {
        "structure": structure,
        "critical batch": batch,
        "micro-batches": n_mu >= n_l,
        "GPU budget": (np.ones(b.shape, bool) if request.max_gpus is None
                       else n_b * n_l * n_a * request.n_c <= request.max_gpus),
    }
    if evaluated is None:
        return masks
    r = evaluated
    # the extension's structure (issue #36): n_e folds into n_b n_c and the experts, n_c divides d_s; all true for
    # a dense model at n_e = n_c = 1
    for rule in ("ok_experts", "ok_context", "ok_sparse_offload"):
        if rule in r:
            masks["structure"] = masks["structure"] & np.asarray(r[rule], bool)
    masks["memory"] = np.asarray(r["ok_memory"], bool)
    masks["overhead cap"] = np.asarray(r["ok_overheads"], bool)
    masks["bottleneck"] = bottleneck_free(request, n_l, r)
    # under memory_limit="output" memory never needs offload: the memory is reported, not fitted
    needs_offload = (r["total"] > apply_to_hardware(request.hardware, assumptions).memory_bytes) \
        & (assumptions.memory_limit == "constraint")
    masks["offload"] = ~offload | (needs_offload & request.allow_offload)
    return masks


def rule_masks(
    model: Transformer,
    hardware: Hardware,
    method: Method,
    parallelism: Parallelism,
    candidates: Mapping[str, np.ndarray],
    evaluated: Mapping[str, np.ndarray] | None,
    *,
    max_gpus: int | None,
    allow_offload: bool,
    just_below: bool,
    partitioned: bool | None = None,
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
) -> dict[str, np.ndarray]:
    """:func:`request_masks` with the request spelled out in keywords.

    ``candidates`` holds integer arrays ``n_b, n_l, n_a, n_mu, b_mu`` and a boolean
    ``offload``; ``evaluated`` is :func:`lgacc.model.evaluator.evaluate_many`'s output for them, or
    ``None`` to compute only the rules that need no evaluation.  Shared by the
    search and the exhaustive reference so that both apply the same rules.
    """
    request = SearchRequest.create(model, hardware, method, parallelism, max_gpus=max_gpus, allow_offload=allow_offload,
                                   partitioned=partitioned, assumptions=assumptions)
    return request_masks(request, candidates, evaluated, just_below=just_below)


def preference_keys(request: SearchRequest, objective: str, candidates: Mapping[str, np.ndarray],
                    evaluated: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """The paper's preference order as ``np.lexsort`` keys, most significant last.

    ``fastest``: the least time, then fewer GPUs, the smaller micro-batch, no offload,
    more tensor parallelism; in the baseline with a pipeline allowed, first "the highest
    possible pipeline parallelism".  ``cheapest``: the fewest GPUs, then the least time,
    then the same ties.
    """
    c, r = candidates, evaluated
    ties = [-np.asarray(c["n_a"]), np.asarray(c["offload"]).astype(int), np.asarray(c["b_mu"])]
    if objective == "fastest":
        keys = ties + [np.asarray(r["n_gpu"]), np.asarray(r["time_days"])]
        if request.baseline_like and request.parallelism.pipe:
            keys.append(-np.asarray(c["n_l"]))  # "the highest possible pipeline parallelism"
        return keys
    if objective == "cheapest":
        return ties + [np.asarray(r["time_days"]), np.asarray(r["n_gpu"])]
    raise ValueError(f"objective {objective!r} is not one of {OBJECTIVES}")


def select(
    method: Method | SearchRequest,
    parallelism: Parallelism | None,
    candidates: Mapping[str, np.ndarray],
    evaluated: Mapping[str, np.ndarray],
    valid: np.ndarray,
    partitioned: bool | None = None,
    objective: str = "fastest",
) -> int | None:
    """Index of the preferred valid candidate under :func:`preference_keys`, or ``None``.

    ``method`` may be a :class:`SearchRequest` (then ``parallelism`` and ``partitioned`` are its own).
    """
    if isinstance(method, SearchRequest):
        request = method
    else:
        from lgacc.model.config import parse_method

        from .parallelism import parse_parallelism

        request = SearchRequest(None, None, parse_method(method), parse_parallelism(parallelism), partitioned=partitioned)
    index = np.flatnonzero(valid)
    if index.size == 0:
        return None
    c = {k: np.asarray(v)[index] for k, v in candidates.items()}
    r = {k: np.asarray(evaluated[k])[index] for k in ("n_gpu", "time_days")}
    order = np.lexsort(preference_keys(request, objective, c, r))
    return int(index[order[0]])
