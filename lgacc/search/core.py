"""The two searches: :func:`fastest` (``table:parallel_methods_comparison``) and :func:`cheapest`
(``table:smaller_cluster``), over the candidates of :mod:`.candidates` with the rules of :mod:`.rules`."""

from __future__ import annotations

import math

import numpy as np

from lgacc.errors import UserInputError, positive_finite
from lgacc.model.assumptions import DEFAULT_ASSUMPTIONS, Assumptions
from lgacc.model.config import Method
from lgacc.model.evaluator import DEFAULT_MAX_OVERHEAD, evaluate_many
from lgacc.model.hardware import Hardware
from lgacc.model.transformer import Transformer

from .candidates import EVALUATION_CHUNK, candidates, take
from .explain import RuleTally, infeasible_reason
from .explain import explain as explain_result
from .parallelism import Parallelism
from .bounds import MAX_CANDIDATES, layer_degrees, too_large
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


def _rows(arrays, part: slice) -> dict[str, np.ndarray]:
    """The rows ``part`` of each array (views)."""
    return {k: v[part] if np.ndim(v) else v for k, v in arrays.items()}


def _level_runs(request: SearchRequest, n_l_sorted: np.ndarray | None, n: int) -> list[tuple[int, int]]:
    """``(first, stop)`` of each run the branch and bound visits: one per ``n_l`` (sorted decreasing) for the
    baseline with a pipeline, else one run of all ``n`` candidates."""
    if n_l_sorted is None:
        return [(0, n)]
    starts = np.concatenate([[0], np.flatnonzero(np.diff(n_l_sorted)) + 1, [n]])
    return list(zip(starts[:-1].tolist(), starts[1:].tolist()))


def _branch_and_bound(request: SearchRequest, c, n_gpu):
    """Visit candidates by decreasing ``n_l`` (the baseline with a pipeline) then decreasing GPU count, in chunks.

    A chunk is skipped, and the visit of the level ends, once its largest GPU count at
    perfect efficiency cannot beat the best time found: ``time x efficiency x n_gpu``
    is the same for every configuration (the paper's fixed token count).

    The chunks of :data:`CHUNK` candidates are evaluated in blocks of up to
    :data:`~.candidates.EVALUATION_CHUNK` (growing from one chunk: an evaluation per chunk is slow, a block
    past the bound is wasted), gathered from ``c`` through the visiting order (no sorted copy of the
    candidates).  Where no candidate is valid every one is seen once, and the :class:`RuleTally` of that
    pass says why.  Returns ``(best, visited, tally)``.
    """
    by_layers = request.baseline_like and request.parallelism.pipe
    order = np.lexsort((-n_gpu, -c["n_l"])) if by_layers else np.argsort(-n_gpu, kind="stable")
    n_gpu = n_gpu[order]
    runs = _level_runs(request, c["n_l"][order] if by_layers else None, n_gpu.size)
    visited = 0
    gpu_days = None
    tally = RuleTally()
    for first, stop in runs:
        best_here = None
        start, block = first, (None, None, None, first, first)
        size = CHUNK
        while start < stop:
            if best_here is not None and gpu_days / n_gpu[start] > best_here[0] * (1 + 1e-12):
                break  # perfect efficiency on this many GPUs cannot beat the best time found
            if start >= block[4]:  # evaluate the next block of chunks
                end = min(start + size, stop)
                rows = order[start:end]
                cb = take(c, rows)
                rb = request.evaluate(cb)
                block = (cb, rb, _masks(request, cb, rb, just_below=True), start, end)
                size = min(2 * size, max(CHUNK, EVALUATION_CHUNK))
                if gpu_days is None:
                    gpu_days = float(rb["time_days"][0] * rb["efficiency"][0] * rb["n_gpu"][0])
            cb, rb, mb, block_start = block[:4]
            part = slice(start - block_start, min(start + CHUNK, stop) - block_start)
            start += CHUNK
            cc, r, masks = _rows(cb, part), _rows(rb, part), _rows(mb, part)
            visited += part.stop - part.start
            tally.add(cc, r, masks, order[block_start + part.start: block_start + part.stop])
            i = select(request, None, cc, r, all_valid(masks))
            if i is None:
                continue
            candidate = (float(r["time_days"][i]), cc, r, i)
            if best_here is None or _better(request, candidate, best_here):
                best_here = candidate
        if best_here is not None:
            return best_here, visited, tally
    return None, visited, tally


def _check_explain(explain) -> None:
    if not isinstance(explain, bool):
        raise UserInputError(f"explain={str(explain)[:40]!s} must be true or false")


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
    n_e: int = 1,
    n_c: int = 1,
    precision: str = "bf16",
) -> SearchResult:
    """The fastest configuration under the paper's rules (``table:parallel_methods_comparison``).

    ``partitioned`` sets the state partition (``None``: the method's default);
    ``partitioned=False`` with the improved method is the dotted line of
    ``fig:scaling_Ethernet``.  Raises nothing for an impossible request: the
    result has ``evaluation=None`` and ``binding`` names the rule that removed
    the last candidates.  A search beyond the budgets of :mod:`.bounds` (a model too
    large to search in bounded time and memory) raises a one-line ``UserInputError``.  ``schedule`` and ``n_v`` choose the pipeline schedule whose closed
    forms the evaluator uses (``None``: the method's own, as the paper).
    """
    _check_explain(explain)
    request = SearchRequest.create(model, hardware, method, parallelism, max_gpus=max_gpus, allow_offload=allow_offload,
                                   max_overhead=max_overhead, partitioned=partitioned, assumptions=assumptions,
                                   schedule=schedule, n_v=n_v, n_e=n_e, n_c=n_c, precision=precision)
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
        best, visited, tally = _branch_and_bound(request, c, n_gpu)
        if best is None:  # every candidate was seen: the tally of that pass says why none is valid
            return _result(request, "fastest", None, None, tally.reason(request), n)
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
                      n_v=request.n_v, n_c=request.n_c, precision=request.precision)
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
    n_e: int = 1,
    n_c: int = 1,
    precision: str = "bf16",
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
    _check_explain(explain)
    request = SearchRequest.create(model, hardware, method, parallelism, max_gpus=max_gpus, allow_offload=allow_offload,
                                   max_overhead=max_overhead, partitioned=partitioned, assumptions=assumptions,
                                   schedule=schedule, n_v=n_v, n_e=n_e, n_c=n_c, precision=precision)
    if positive_finite(target_days) is None:
        raise UserInputError(f"target time {str(target_days)[:40]} must be a positive finite number of days")
    target_days = float(target_days) if not isinstance(target_days, int) else target_days
    c = candidates(request)
    if len(c["n_b"]) == 0:
        return _result(request, "cheapest", None, None,
                       ("critical batch: no configuration of this parallelism fits below the critical batch",), 0,
                       target_days)
    gpu_days = _gpu_days(request)
    cand = _cheapest_candidates(request, c, gpu_days, target_days)
    del c
    if cand is None:
        return _result(request, "cheapest", None, None,
                       (f"target time: even at perfect efficiency {target_days:g} d needs more GPUs than the rules allow",),
                       0, target_days)
    n = cand["n_b"].size
    # visited by increasing GPU count (stable: equal counts keep the candidates' order), in chunks; once a valid
    # candidate is found, the chunks whose smallest GPU count exceeds its count cannot hold the preferred one
    # (the fewest GPUs come first in the preference), so the visit stops there
    gpus = cand["n_b"] * cand["n_l"] * cand["n_a"]
    order = np.argsort(gpus, kind="stable")
    tally, winners, searched, rounds, seen, fewest = RuleTally(), [], 0, 0, 0, None
    for start in range(0, n, EVALUATION_CHUNK):
        # a chunk's rows in the candidates' order, as the one-pass visit sees them (its ties: the first wins)
        rows = np.sort(order[start: start + EVALUATION_CHUNK])
        if fewest is not None and gpus[order[start]] > fewest:
            break
        sub, r, masks, reach, found, iterations = _cheapest_chunk(request, take(cand, rows), target_days)
        searched, rounds, seen = searched + found, max(rounds, iterations), seen + rows.size
        valid = all_valid(masks) & reach
        tally.add(sub, r, masks | {"target time": reach}, rows)
        i = select(request, None, sub, r, valid, objective="cheapest")
        if i is not None:
            fewest = gpus[rows[i]] if fewest is None else min(fewest, gpus[rows[i]])
            winners.append({k: sub[k][i: i + 1] for k in CANDIDATE_KEYS} | {
                "n_gpu": np.asarray(r["n_gpu"])[i: i + 1], "time_days": np.asarray(r["time_days"])[i: i + 1]})
    visited = seen + searched * rounds  # every candidate visited, then each bisection round over every searched one
    if not winners:
        return _result(request, "cheapest", None, None, tally.reason(request), visited, target_days)
    # the chunks' winners in order (equal GPU counts in the candidates' order): the first of the preferred, as one
    # selection over every candidate
    best = {k: np.concatenate([w[k] for w in winners]) for k in winners[0]}
    i = select(request, None, best, best, np.ones(len(winners), bool), objective="cheapest")
    config = request.config(best, i)
    evaluation = request.evaluate_config(config)
    binding = (f"target time {target_days:g} d: {evaluation.time_days:.3g} d on {evaluation.n_gpu} GPUs "
               f"at efficiency {evaluation.efficiency:.3g}",)
    return _result(request, "cheapest", config, evaluation, binding, visited, target_days)


def _cheapest_candidates(request: SearchRequest, c, gpu_days: float, target_days: float):
    """Every data-parallel degree of every ``(n_l, n_a, offload, b_mu)`` group of ``c`` with enough GPUs to
    possibly meet the target, at the largest ``n_mu`` below the critical batch (``None``: no group can).
    Counted before it is built: at most :data:`~.bounds.MAX_CANDIDATES`."""
    B = request.batch_limit
    max_gpus = request.max_gpus
    # the groups as a set filled in the candidates' order (the order the search has always visited them in):
    # a key seen again changes no set, so the first row of each run of equal keys is all the set needs
    n = c["n_b"].size
    starts = np.zeros(n, bool)
    starts[:1] = True
    for key in ("n_l", "n_a", "offload", "b_mu"):
        starts[1:] |= c[key][1:] != c[key][:-1]
    rows = np.flatnonzero(starts)
    groups = {(int(l), int(a), bool(o), int(m)) for l, a, o, m in
              zip(c["n_l"][rows].tolist(), c["n_a"][rows].tolist(), c["offload"][rows].tolist(), c["b_mu"][rows].tolist())}
    ranges = []
    for n_l, n_a, off, b_mu in groups:
        top = B // (b_mu * n_l)
        if max_gpus is not None:
            top = min(top, max_gpus // (n_l * n_a))
        needed = gpu_days / (target_days * n_l * n_a) * (1 - 1e-9)
        if not math.isfinite(needed) or needed > top:
            continue
        ranges.append((n_l, n_a, off, b_mu, max(1, math.ceil(needed)), top))
    if not ranges:
        return None
    count = sum(top - low + 1 for *_, low, top in ranges)
    if count > MAX_CANDIDATES:
        raise too_large(request.model.name, count, MAX_CANDIDATES,
                        f"data-parallel degrees to meet {target_days:g} d ({len(ranges)} groups of pipeline, tensor, "
                        "offload and micro-batch choices)")
    columns: dict[str, list] = {k: [] for k in CANDIDATE_KEYS}
    for n_l, n_a, off, b_mu, low, top in ranges:
        n_b = np.arange(low, top + 1)
        columns["n_b"].append(n_b)
        columns["n_mu"].append(B // (n_b * b_mu))
        for key, value in (("n_l", n_l), ("n_a", n_a), ("b_mu", b_mu), ("offload", off)):
            columns[key].append(np.full(n_b.shape, value))
    return {k: np.concatenate(v) for k, v in columns.items()}


def _cheapest_chunk(request: SearchRequest, cand, target_days: float):
    """One chunk of :func:`cheapest`'s candidates: the largest ``n_mu`` whose memory fits (efficiency grows with
    ``n_mu`` and the memory with it: bisection), then their evaluation, masks and reach.  Returns
    ``(candidates, evaluated, masks, reach, searched, rounds)``: how many were bisected, in how many rounds."""
    cand = dict(cand)
    hi = cand["n_mu"].copy()
    lo = np.minimum(cand["n_l"], hi)
    first = request.evaluate(cand)
    fits = np.asarray(first["ok_memory"], bool)
    # only the candidates that do not fit at n_mu are probed at lo (the evaluation is elementwise: a subset
    # evaluates to the same values)
    search = np.zeros(fits.shape, bool)
    if not fits.all():
        probe = take(cand, ~fits)
        probe["n_mu"] = lo[~fits]
        search[~fits] = np.asarray(request.evaluate(probe)["ok_memory"], bool)
    lo_s, hi_s = lo[search], hi[search]  # memory fits at lo, not at hi
    sub = take(cand, search)
    rounds = 0
    while (hi_s - lo_s > 1).any():
        mid = (lo_s + hi_s) // 2
        sub["n_mu"] = mid
        ok = np.asarray(request.evaluate(sub)["ok_memory"], bool)
        rounds += 1
        lo_s = np.where(ok, mid, lo_s)
        hi_s = np.where(ok, hi_s, mid)
    if not search.any() and not _rounds(request):
        r = first  # no n_mu moved: the candidates are the ones evaluated first
    else:
        cand["n_mu"] = cand["n_mu"].copy()
        cand["n_mu"][search] = lo_s
        cand = _schedule_candidates(request, cand)
        r = request.evaluate(cand)
    masks = _masks(request, cand, r, just_below=False)
    reach = np.asarray(r["time_days"]) <= target_days
    return cand, r, masks, reach, int(search.sum()), rounds


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
    chunks = layer_degrees(request.model, request.assumptions, d_l).tolist() if name in CHUNKED_SCHEDULES else [1]
    best = None
    for n_v in chunks:
        found = fastest(request.model, hardware, method, parallelism, schedule=name, n_v=n_v, **options)
        if found.feasible and (best is None or not best.feasible
                               or found.evaluation.time_days < best.evaluation.time_days * (1 - 1e-12)):
            best = found
        elif best is None:
            best = found
    return best
