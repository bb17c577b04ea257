"""Exhaustive reference for :mod:`lgacc.search`: every integer configuration within bounds.

Visits all ``(n_b, n_l, n_a, n_mu, b_mu, offload)`` with ``1 <= n_l <= d_l``,
``1 <= n_a <= d_a`` and ``n_b n_mu b_mu <= floor(b_c)`` (and ``n_gpu <= max_gpus``),
applies the same rules (:func:`lgacc.search.rule_masks`) and keeps the preferred
valid one (:func:`lgacc.search.select`).  ``partitioned`` is the search's
state-partition option (``None``: the method's default; ``False`` with the
improved method: the dotted line of ``fig:scaling_Ethernet``).  No pruning: it is slow by design and
meant for small models in tests and the benchmark's speed-up figure.
"""

from __future__ import annotations

import math

import numpy as np

from lgacc.model.assumptions import DEFAULT_ASSUMPTIONS, Assumptions, critical_batch
from lgacc.model.config import Method
from lgacc.model.evaluator import DEFAULT_MAX_OVERHEAD
from lgacc.model.hardware import Hardware
from lgacc.model.transformer import Transformer

from . import Parallelism, SearchRequest, all_valid, request_masks, select

__all__ = ["enumerate_all", "reference_fastest"]


def _batch_triples(B: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every ``(n_b, n_mu, b_mu)`` of positive integers with product at most ``B``."""
    out_b, out_mu, out_bmu = [], [], []
    for n_b in range(1, B + 1):
        for b_mu in range(1, B // n_b + 1):
            top = B // (n_b * b_mu)
            out_b.append(np.full(top, n_b))
            out_bmu.append(np.full(top, b_mu))
            out_mu.append(np.arange(1, top + 1))
    return np.concatenate(out_b), np.concatenate(out_mu), np.concatenate(out_bmu)


def enumerate_all(model: Transformer, *, max_gpus: int | None = None, allow_offload: bool = True, chunk: int = 1 << 18,
                  assumptions: Assumptions = DEFAULT_ASSUMPTIONS):
    """Yield candidate arrays ``{n_b, n_l, n_a, n_mu, b_mu, offload}`` covering the whole space, in chunks."""
    B = int(math.floor(critical_batch(model, assumptions)))
    n_b, n_mu, b_mu = _batch_triples(B)
    parts: list[dict[str, np.ndarray]] = []
    size = 0
    for n_l in range(1, model.d_l + 1):
        for n_a in range(1, model.d_a + 1):
            keep = np.ones(n_b.shape, bool) if max_gpus is None else n_b * n_l * n_a <= max_gpus
            count = int(keep.sum())
            if count == 0:
                continue
            for offload in (False, True) if allow_offload else (False,):
                parts.append({
                    "n_b": n_b[keep],
                    "n_l": np.full(count, n_l),
                    "n_a": np.full(count, n_a),
                    "n_mu": n_mu[keep],
                    "b_mu": b_mu[keep],
                    "offload": np.full(count, offload),
                })
                size += count
                if size >= chunk:
                    yield {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
                    parts, size = [], 0
    if parts:
        yield {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}



def _evaluated(request: SearchRequest, c, *, just_below: bool):
    """Every candidate of ``c`` evaluated, and which of them pass every rule of the search."""
    r = request.evaluate(c)
    return r, all_valid(request_masks(request, c, r, just_below=just_below))


def reference_fastest(
    model: Transformer | str,
    hardware: Hardware | str,
    method: Method | str,
    parallelism: Parallelism | str,
    *,
    max_gpus: int | None = None,
    allow_offload: bool = True,
    max_overhead: float = DEFAULT_MAX_OVERHEAD,
    partitioned: bool | None = None,
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
) -> tuple[dict | None, int]:
    """The preferred valid configuration by brute force, as a dict of its values and evaluation, and the count visited.

    Every candidate is evaluated (the rules that need no evaluation are not used to
    skip any), so the count is the size of the whole space within bounds.
    """
    request = SearchRequest.create(model, hardware, method, parallelism, max_gpus=max_gpus, allow_offload=allow_offload,
                                   max_overhead=max_overhead, partitioned=partitioned, assumptions=assumptions)
    best = None
    visited = 0
    for c in enumerate_all(request.model, max_gpus=max_gpus, allow_offload=allow_offload, assumptions=assumptions):
        r, valid = _evaluated(request, c, just_below=True)
        visited += c["n_b"].size
        i = select(request, None, c, r, valid)
        if i is None:
            continue
        row = {k: v[i].item() for k, v in c.items()} | {k: np.asarray(r[k])[i].item() for k in ("time_days", "n_gpu", "efficiency", "b")}
        if best is None:
            best = row
        else:
            pair_c = {k: np.array([row[k], best[k]]) for k in c}
            pair_r = {k: np.array([row[k], best[k]]) for k in ("time_days", "n_gpu", "efficiency", "b")}
            if select(request, None, pair_c, pair_r, np.array([True, True])) == 0:
                best = row
    return best, visited


def reference_cheapest(
    model: Transformer | str,
    hardware: Hardware | str,
    method: Method | str,
    parallelism: Parallelism | str,
    target_days: float,
    *,
    max_gpus: int | None = None,
    allow_offload: bool = True,
    max_overhead: float = DEFAULT_MAX_OVERHEAD,
    partitioned: bool | None = None,
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
) -> tuple[dict | None, int]:
    """The fewest GPUs meeting ``target_days`` by brute force (batch anywhere up to the critical batch)."""
    request = SearchRequest.create(model, hardware, method, parallelism, max_gpus=max_gpus, allow_offload=allow_offload,
                                   max_overhead=max_overhead, partitioned=partitioned, assumptions=assumptions)
    best = None
    visited = 0
    for c in enumerate_all(request.model, max_gpus=max_gpus, allow_offload=allow_offload, assumptions=assumptions):
        r, valid = _evaluated(request, c, just_below=False)
        valid &= r["time_days"] <= target_days
        visited += c["n_b"].size
        index = np.flatnonzero(valid)
        if index.size == 0:
            continue
        order = np.lexsort((r["time_days"][index], r["n_gpu"][index]))
        i = int(index[order[0]])
        row = {k: v[i].item() for k, v in c.items()} | {k: np.asarray(r[k])[i].item() for k in ("time_days", "n_gpu", "efficiency", "b")}
        if best is None or (row["n_gpu"], row["time_days"]) < (best["n_gpu"], best["time_days"]):
            best = row
    return best, visited
