"""The two searches: :func:`fastest` (``table:parallel_methods_comparison``) and :func:`cheapest`
(``table:smaller_cluster``), over the candidates of :mod:`.candidates` with the rules of :mod:`.rules`."""

from __future__ import annotations

import math

import numpy as np

from lgacc.errors import UserInputError
from lgacc.model.assumptions import DEFAULT_ASSUMPTIONS, Assumptions
from lgacc.model.config import Method
from lgacc.model.evaluator import DEFAULT_MAX_OVERHEAD, evaluate_many
from lgacc.model.hardware import Hardware
from lgacc.model.transformer import Transformer

from .candidates import candidates, take
from .explain import explain as explain_result
from .explain import infeasible_reason
from .parallelism import Parallelism
from .request import CANDIDATE_KEYS, SearchRequest
from .result import SearchResult
from .rules import all_valid, preference_keys, request_masks, select

__all__ = ["fastest", "cheapest", "fastest_schedule"]

#: Candidate sets up to this size are evaluated in one vectorized pass; larger ones by branch and bound.
SINGLE_PASS = 16384
#: Candidates evaluated at a time by the branch and bound.
CHUNK = 4096


def _rounds(request: SearchRequest) -> bool:
    """Whether the schedule runs the micro-batches in rounds of ``n_l`` (interleaved with ``n_v > 1``)."""
    return request.schedule == "interleaved" and request.n_v > 1


def _schedule_candidates(request: SearchRequest, c):
    """The candidates with ``n_mu`` rounded down to a multiple of ``n_l`` where the schedule runs rounds."""
    if not _rounds(request):
        return c
    c = dict(c)
    n_l = np.asarray(c["n_l"])
    c["n_mu"] = np.where(n_l > 1, n_l * (np.asarray(c["n_mu"]) // n_l), c["n_mu"])
    return c


def _masks(request: SearchRequest, c, r, *, just_below: bool):
    """:func:`request_masks` with the schedule's own rules: its chunks hold whole layers (``structure``),
    interleaved micro-batches come in rounds of ``n_l`` (``micro-batches``), and then "just below the
    critical batch" means that one more round would exceed it."""
    masks = request_masks(request, c, r, just_below=just_below)
    if request.schedule is None:
        return masks
    ok = np.asarray(r["ok_schedule"], bool)
    masks["structure"] = masks["structure"] & ok
    if _rounds(request):
        n_b, n_l, n_mu, b_mu = (np.asarray(c[k]) for k in ("n_b", "n_l", "n_mu", "b_mu"))
        masks["micro-batches"] = masks["micro-batches"] & ok
        if just_below:
            step = np.where(n_l > 1, n_l, 1)
            masks["critical batch"] = (n_b * n_mu * b_mu <= request.batch_limit) & (
                n_b * (n_mu + step) * b_mu > request.batch_limit)
    return masks


def _result(request: SearchRequest, objective: str, config, evaluation, binding, visited, target_days=None):
    return SearchResult(request.model, request.hardware, request.method, request.parallelism, objective, config,
                        evaluation, binding, visited, target_days, request.partitioned)


def _better(request: SearchRequest, a, b) -> bool:
    """Whether candidate ``a`` is preferred to ``b`` (both ``(time, candidates, evaluated, index)``)."""
    c = {k: np.array([a[1][k][a[3]], b[1][k][b[3]]]) for k in a[1]}
    r = {k: np.array([a[2][k][a[3]], b[2][k][b[3]]]) for k in ("n_gpu", "time_days")}
    return int(np.lexsort(preference_keys(request, "fastest", c, r))[0]) == 0


def _branch_and_bound(request: SearchRequest, c, n_gpu):
    """Visit candidates by decreasing ``n_l`` (the baseline with a pipeline) then decreasing GPU count, in chunks.

    A chunk is skipped, and the visit of the level ends, once its largest GPU count at
    perfect efficiency cannot beat the best time found: ``time x efficiency x n_gpu``
    is the same for every configuration (the paper's fixed token count).
    """
    by_layers = request.baseline_like and request.parallelism.pipe
    order = np.lexsort((-n_gpu, -c["n_l"])) if by_layers else np.argsort(-n_gpu, kind="stable")
    c = take(c, order)
    n_gpu = n_gpu[order]
    levels = list(dict.fromkeys(c["n_l"].tolist())) if by_layers else [None]
    visited = 0
    gpu_days = None
    for level in levels:
        # the sort makes each level one contiguous run: chunks are slices (views, not copies)
        first, stop = (0, n_gpu.size) if level is None else np.flatnonzero(c["n_l"] == level)[[0, -1]] + (0, 1)
        best_here = None
        start = int(first)
        while start < stop:
            if best_here is not None and gpu_days / n_gpu[start] > best_here[0] * (1 + 1e-12):
                break  # perfect efficiency on this many GPUs cannot beat the best time found
            part = slice(start, min(start + CHUNK, int(stop)))
            start += CHUNK
            cc = {k: v[part] for k, v in c.items()}
            r = request.evaluate(cc)
            visited += part.stop - part.start
            if gpu_days is None:
                gpu_days = float(r["time_days"][0] * r["efficiency"][0] * r["n_gpu"][0])
            valid = all_valid(_masks(request, cc, r, just_below=True))
            i = select(request, None, cc, r, valid)
            if i is None:
                continue
            candidate = (float(r["time_days"][i]), cc, r, i)
            if best_here is None or _better(request, candidate, best_here):
                best_here = candidate
        if best_here is not None:
            return best_here, visited
    return None, visited


def fastest(
    model: Transformer | str,
    hardware: Hardware | str,
    method: Method | str,
    parallelism: Parallelism | str,
    *,
    max_gpus: int | None = None,
    allow_offload: bool = True,
    max_overhead: float = DEFAULT_MAX_OVERHEAD,
    explain: bool = True,
    partitioned: bool | None = None,
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
    schedule: str | None = None,
    n_v: int = 1,
) -> SearchResult:
    """The fastest configuration under the paper's rules (``table:parallel_methods_comparison``).

    ``partitioned`` sets the state partition (``None``: the method's default);
    ``partitioned=False`` with the improved method is the dotted line of
    ``fig:scaling_Ethernet``.  Raises nothing for an impossible request: the
    result has ``evaluation=None`` and ``binding`` names the rule that removed
    the last candidates.  ``schedule`` and ``n_v`` choose the pipeline schedule whose closed
    forms the evaluator uses (``None``: the method's own, as the paper).
    """
    request = SearchRequest.create(model, hardware, method, parallelism, max_gpus=max_gpus, allow_offload=allow_offload,
                                   max_overhead=max_overhead, partitioned=partitioned, assumptions=assumptions,
                                   schedule=schedule, n_v=n_v)
    c = _schedule_candidates(request, candidates(request, "fastest"))
    n = len(c["n_b"])
    if n == 0:
        return _result(request, "fastest", None, None,
                       ("critical batch: no configuration of this parallelism fits below the critical batch",), 0)
    n_gpu = c["n_b"] * c["n_l"] * c["n_a"]
    best = None
    if n <= SINGLE_PASS:
        # small enough: one vectorized pass over every candidate
        r = request.evaluate(c)
        visited = n
        i = select(request, None, c, r, all_valid(_masks(request, c, r, just_below=True)))
        if i is not None:
            best = (float(r["time_days"][i]), c, r, i)
    else:
        best, visited = _branch_and_bound(request, c, n_gpu)
    if best is None:
        r = request.evaluate(c)
        masks = _masks(request, c, r, just_below=True)
        return _result(request, "fastest", None, None, infeasible_reason(request, c, r, masks), n)
    _, cc, r, i = best
    config = request.config(cc, i)
    evaluation = request.evaluate_config(config)
    binding = explain_result(request, evaluation) if explain else ()
    return _result(request, "fastest", config, evaluation, binding, visited)


def _gpu_days(request: SearchRequest) -> float:
    """``time x efficiency x n_gpu``: GPU-days at perfect efficiency, the same for every configuration."""
    r = evaluate_many(request.model, request.hardware, request.method, n_b=1, partitioned=request.partitioned,
                      max_overhead=request.max_overhead, assumptions=request.assumptions, schedule=request.schedule,
                      n_v=request.n_v)
    return float(r["time_days"] * r["efficiency"] * r["n_gpu"])


def cheapest(
    model: Transformer | str,
    hardware: Hardware | str,
    method: Method | str,
    parallelism: Parallelism | str,
    target_days: float,
    *,
    max_gpus: int | None = None,
    allow_offload: bool = True,
    max_overhead: float = DEFAULT_MAX_OVERHEAD,
    explain: bool = True,
    partitioned: bool | None = None,
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
    schedule: str | None = None,
    n_v: int = 1,
) -> SearchResult:
    """The fewest GPUs that train within ``target_days`` under the paper's rules (``table:smaller_cluster``).

    ``partitioned`` sets the state partition (``None``: the method's default); ``schedule`` and
    ``n_v`` as in :func:`fastest`.

    The batch may be well below the critical batch (the paper's smaller clusters
    do so); ties on the GPU count go to the faster configuration.
    Candidates: for each ``(n_l, n_a, offload, b_mu)`` of the fastest search, every
    ``n_b`` with enough GPUs to meet the target at perfect efficiency, and the
    largest ``n_mu`` below the critical batch whose memory fits (efficiency grows
    with ``n_mu``, and so does the checkpoint memory).
    """
    request = SearchRequest.create(model, hardware, method, parallelism, max_gpus=max_gpus, allow_offload=allow_offload,
                                   max_overhead=max_overhead, partitioned=partitioned, assumptions=assumptions,
                                   schedule=schedule, n_v=n_v)
    if not (isinstance(target_days, (int, float)) and not isinstance(target_days, bool) and target_days > 0):
        raise UserInputError(f"target time {target_days!r} must be a positive number of days")
    c = candidates(request)
    if len(c["n_b"]) == 0:
        return _result(request, "cheapest", None, None,
                       ("critical batch: no configuration of this parallelism fits below the critical batch",), 0,
                       target_days)
    gpu_days = _gpu_days(request)
    B = request.batch_limit
    max_gpus = request.max_gpus
    # Every data-parallel degree of every (n_l, n_a, offload, b_mu) group, enough GPUs to possibly meet the target.
    groups = {(int(l), int(a), bool(o), int(m)) for l, a, o, m in zip(c["n_l"], c["n_a"], c["offload"], c["b_mu"])}
    columns: dict[str, list] = {k: [] for k in CANDIDATE_KEYS}
    for n_l, n_a, off, b_mu in groups:
        top = B // (b_mu * n_l)
        if max_gpus is not None:
            top = min(top, max_gpus // (n_l * n_a))
        needed = gpu_days / (target_days * n_l * n_a) * (1 - 1e-9)
        if not math.isfinite(needed) or needed > top:
            continue
        low = max(1, math.ceil(needed))
        n_b = np.arange(low, top + 1)
        columns["n_b"].append(n_b)
        columns["n_mu"].append(B // (n_b * b_mu))
        for key, value in (("n_l", n_l), ("n_a", n_a), ("b_mu", b_mu), ("offload", off)):
            columns[key].append(np.full(n_b.shape, value))
    if not columns["n_b"]:
        return _result(request, "cheapest", None, None,
                       (f"target time: even at perfect efficiency {target_days:g} d needs more GPUs than the rules allow",),
                       0, target_days)
    cand = {k: np.concatenate(v) for k, v in columns.items()}
    # Efficiency grows with n_mu and the memory with it: take the largest n_mu whose memory fits (bisection).
    hi = cand["n_mu"].copy()
    lo = np.minimum(cand["n_l"], hi)
    r = request.evaluate(cand)
    fits = np.asarray(r["ok_memory"], bool)
    visited = hi.size
    probe = dict(cand)
    probe["n_mu"] = lo
    r_lo = request.evaluate(probe)
    search = ~fits & np.asarray(r_lo["ok_memory"], bool)
    lo_s, hi_s = lo[search], hi[search]  # memory fits at lo, not at hi
    sub = take(cand, search)
    while (hi_s - lo_s > 1).any():
        mid = (lo_s + hi_s) // 2
        sub["n_mu"] = mid
        ok = np.asarray(request.evaluate(sub)["ok_memory"], bool)
        visited += mid.size
        lo_s = np.where(ok, mid, lo_s)
        hi_s = np.where(ok, hi_s, mid)
    cand["n_mu"] = cand["n_mu"].copy()
    cand["n_mu"][search] = lo_s
    cand = _schedule_candidates(request, cand)
    r = request.evaluate(cand)
    masks = _masks(request, cand, r, just_below=False)
    reach = np.asarray(r["time_days"]) <= target_days
    valid = all_valid(masks) & reach
    if not valid.any():
        reason = infeasible_reason(request, cand, r, masks | {"target time": reach})
        return _result(request, "cheapest", None, None, reason, visited, target_days)
    i = select(request, None, cand, r, valid, objective="cheapest")
    config = request.config(cand, i)
    evaluation = request.evaluate_config(config)
    binding = (f"target time {target_days:g} d: {evaluation.time_days:.3g} d on {evaluation.n_gpu} GPUs "
               f"at efficiency {evaluation.efficiency:.3g}",)
    return _result(request, "cheapest", config, evaluation, binding, visited, target_days)


def fastest_schedule(
    model: Transformer | str,
    hardware: Hardware | str,
    method: Method | str,
    parallelism: Parallelism | str,
    schedule: str,
    **options,
) -> SearchResult:
    """:func:`fastest` with ``schedule``, its chunks per device chosen too: every ``n_v`` dividing ``d_l`` for
    ``interleaved`` and ``breadth-first`` (``n_v = 1`` for the others), the fastest kept (ties: fewer chunks,
    fewer transfers).  ``options`` are :func:`fastest`'s keywords (not ``n_v``)."""
    from lgacc.model.evaluator.mapping import CHUNKED_SCHEDULES, parse_schedule

    name = parse_schedule(schedule)
    request = SearchRequest.create(model, hardware, method, parallelism, schedule=name)
    d_l = request.model.d_l
    chunks = [v for v in range(1, d_l + 1) if bool(request.assumptions.allows_layers(d_l, v))] \
        if name in CHUNKED_SCHEDULES else [1]
    best = None
    for n_v in chunks:
        found = fastest(request.model, hardware, method, parallelism, schedule=name, n_v=n_v, **options)
        if found.feasible and (best is None or not best.feasible
                               or found.evaluation.time_days < best.evaluation.time_days * (1 - 1e-12)):
            best = found
        elif best is None:
            best = found
    return best
