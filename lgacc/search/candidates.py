"""Candidate generation: the pruned set of configurations the search visits.

* ``n_mu`` follows from ``(n_b, b_mu)`` (the critical batch), and only the largest
  ``n_b`` for each ``n_mu`` is kept: the intensities depend on ``b / n_b``, not on
  ``n_b``, and more GPUs at the same efficiency are faster;
* micro-batch sizes above the smallest one that is bottleneck-free at ``n_mu = n_l``
  are dropped (intensities grow with ``b_mu`` and ``n_mu``).

Every array is bounded by the critical batch and the budgets of :mod:`.bounds`, never by ``d_l``
or ``d_a``; evaluations go in chunks of :data:`EVALUATION_CHUNK`.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .bounds import (
    MAX_CANDIDATES,
    MAX_PROBES,
    head_degrees,
    isqrt,
    lattice_counts,
    layer_degrees,
    product_limit,
    too_large,
)
from .request import CANDIDATE_KEYS, SearchRequest
from .rules import bottleneck_free

__all__ = ["candidates", "dimension_values", "take", "tensor_cap", "tensor_top", "tensor_prunable", "fastest_tensor_degrees",
           "EVALUATION_CHUNK"]

#: Configurations evaluated in one call where a search evaluates many (a few tens of MB of results).
EVALUATION_CHUNK = 65536
#: Candidate sets up to this size keep their lattices in the cache, for the next search of a sweep.
CACHED_CANDIDATES = 1_000_000


def take(c, index) -> dict[str, np.ndarray]:
    """The candidates at ``index`` (an index array or a boolean mask)."""
    return {k: np.asarray(v)[index] for k, v in c.items()}


@lru_cache(maxsize=32)
def levels(B: int, b_mu_max: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All ``(n_b, n_mu, b_mu)``, ``b_mu <= b_mu_max``, with ``n_mu = floor(B / (n_b b_mu))`` and ``n_b``
    the largest for its ``n_mu``: about ``2 sqrt(B / b_mu)`` per micro-batch size.  Sorted by ``b_mu``, then
    ``n_b``.

    For ``K = B // b_mu`` and ``s = isqrt(K)`` the values of ``n_b`` are ``1..s`` then ``K // n`` for
    ``n = s..1`` (the first dropped where it equals ``s``): built for every ``b_mu`` at once."""
    sizes = np.arange(1, min(b_mu_max, B) + 1, dtype=np.int64)
    K = B // sizes
    s = isqrt(K)
    repeated = s == K // np.maximum(s, 1)  # K // s == s: the second run starts one lower
    low, high = s, s - repeated
    per_size = low + high
    total = int(per_size.sum())
    size = np.repeat(sizes, per_size)
    start = np.repeat(np.cumsum(per_size) - per_size, per_size)
    rank = np.arange(total, dtype=np.int64) - start  # position within its micro-batch size
    K_, low_, high_ = np.repeat(K, per_size), np.repeat(low, per_size), np.repeat(high, per_size)
    second = rank >= low_
    n_b = np.where(second, K_ // np.maximum(high_ - (rank - low_), 1), rank + 1)
    n_mu = K_ // n_b
    keep = n_b == K_ // n_mu
    table = np.stack([n_b[keep], n_mu[keep], size[keep]]) if total else np.zeros((3, 0), np.int64)
    table.flags.writeable = False
    return table[0], table[1], table[2]


def lattice(
    B: int, n_l: int, n_a: int, b_mu_max: int, max_gpus: int | None, build=None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(n_b, n_mu, b_mu)`` just below the critical batch with ``n_mu >= n_l``, largest ``n_b`` per level
    (``build``: :func:`_lattice`, cached, or the same function uncached)."""
    return (build or _lattice)(B, n_l, b_mu_max, None if max_gpus is None else max_gpus // (n_l * n_a))


@lru_cache(maxsize=4096)
def _lattice(B: int, n_l: int, b_mu_max: int, cap: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`lattice` with the GPU budget as a cap on ``n_b``; cached (read-only arrays), since the
    searches of a sweep or a claim study ask for the same lattices again and again."""
    n_b, n_mu, b_mu = levels(B, 1 << max(0, b_mu_max - 1).bit_length())  # shared per power of two
    stop = int(np.searchsorted(b_mu, b_mu_max, side="right"))
    n_b, n_mu, b_mu = n_b[:stop], n_mu[:stop], b_mu[:stop]
    if cap is not None:
        if cap < 1:
            empty = np.zeros(0, np.int64)
            empty.flags.writeable = False
            return empty, empty, empty
        under = n_b <= cap
        # each b_mu whose levels reach beyond the cap adds the level (cap, K // cap)
        sizes = np.arange(1, b_mu_max + 1)
        K = B // sizes
        extra = (K > cap) & (K // np.maximum(K // cap, 1) != cap)
        extra &= K >= 1
        n_b = np.concatenate([n_b[under], np.full(int(extra.sum()), cap)])
        n_mu = np.concatenate([n_mu[under], K[extra] // cap])
        b_mu = np.concatenate([b_mu[under], sizes[extra]])
    keep = n_mu >= n_l
    out = n_b[keep], n_mu[keep], b_mu[keep]
    for array in out:
        array.flags.writeable = False
    return out


#: The largest tensor-parallel degree :func:`tensor_cap` looks at (no model of the X family up to X10^4
#: comes near it).
TENSOR_CAP_LIMIT = 2**40


def _largest_within_cap(ok, low: int, high: int, guess: int) -> int:
    """The largest ``n`` in ``[low, high]`` with ``ok(n)``, given ``ok(low)`` and ``ok`` true up to some ``n``
    and false beyond: galloping from ``guess``, then bisection (a good guess costs two or three calls)."""
    guess = min(max(guess, low), high)
    if ok(guess):
        good, step = guess, 1
        while good + step <= high and ok(good + step):
            good, step = good + step, step * 2
        bad = min(good + step, high + 1)
    else:
        bad, step = guess, 1
        while bad - step > low and not ok(bad - step):
            bad, step = bad - step, step * 2
        good = max(bad - step, low)
    while bad - good > 1:
        middle = (good + bad) // 2
        good, bad = (middle, bad) if ok(middle) else (good, middle)
    return good


@lru_cache(maxsize=4096)
def tensor_cap(request: SearchRequest) -> int:
    """The largest ``n_a`` whose tensor-parallel overhead is within ``max_overhead`` (eq:overhead_condition with
    eq:tensor_intensity): over NVLink up to the node size, over InfiniBand beyond (``tensor_placement``).

    The overhead grows with ``n_a`` on each link, so the allowed degrees are ``1..a`` within the node and
    ``node+1..b`` beyond it (empty when InfiniBand cannot carry ``node + 1``); the cap is the larger end.
    The search starts from the overhead's linear growth in ``n_a - 1`` (eq:tensor_intensity) and checks
    every answer with the evaluator.
    """
    def overhead(n_a: int) -> float:
        c = {"n_b": np.array([1]), "n_l": np.array([1]), "n_a": np.array([n_a]), "n_mu": np.array([1]),
             "b_mu": np.array([1]), "offload": np.array([False])}
        return float(request.evaluate(c)["tensor"][0])

    def ok(n_a: int) -> bool:
        return overhead(n_a) <= request.max_overhead

    def guess(probe: int) -> int:
        cost = overhead(probe)
        return probe if cost <= 0 else 1 + int(request.max_overhead * (probe - 1) / cost)

    node = int(min(request.hardware.gpus_per_node, TENSOR_CAP_LIMIT))
    if node < TENSOR_CAP_LIMIT and ok(node + 1):
        return _largest_within_cap(ok, node + 1, TENSOR_CAP_LIMIT, guess(node + 1))
    return _largest_within_cap(ok, 1, node, guess(2) if node >= 2 else 1)


def tensor_top(request: SearchRequest) -> int:
    """The largest tensor degree the search lists: ``d_a`` under the heads cap, else the largest degree the
    overhead cap allows (:func:`tensor_cap`), at least ``d_a``."""
    d_a = int(request.model.d_a)
    return d_a if request.assumptions.heads_cap else max(d_a, tensor_cap(request))


def dimension_values(request: SearchRequest, max_gpus: int | None):
    """The pipeline and tensor degrees the structure rule allows, within ``max_gpus``.

    ``n_l`` stops at the critical batch (``n_mu >= n_l`` micro-batches below it, :mod:`.bounds`), the
    degrees are listed from the divisors of ``d_l`` and ``d_a``: no array as long as the model is deep."""
    model, parallelism, assumptions = request.model, request.parallelism, request.assumptions
    upper = max(1, request.batch_limit) if max_gpus is None else min(max(1, request.batch_limit), max_gpus)
    n_ls = layer_degrees(model, assumptions, upper) if parallelism.pipe and not request.no_pipeline \
        else np.array([1], dtype=np.int64)
    if parallelism.tensor:
        top = tensor_top(request)
        n_as = head_degrees(model, assumptions, top if max_gpus is None else min(top, max_gpus))
    else:
        n_as = np.array([1], dtype=np.int64)
    return n_ls, n_as


def tensor_prunable(request: SearchRequest) -> bool:
    """Whether the fastest search may keep only the largest allowed ``n_a`` of each link (:func:`fastest_tensor_degrees`).

    With memory an output (no memory rule, no offload), the paper's overlap convention, pipeline transfers
    over InfiniBand, the method's own pipeline and no GPU budget, ``n_a`` enters a configuration only through
    its GPU count and its tensor overhead ``o = k (n_a - 1)`` on its link (eq:tensor_intensity): the time
    falls as ``n_a / (1 + k (n_a - 1))`` grows, which it does for every ``k < 1``, and a configuration with
    ``k >= 1`` is over the cap already at ``n_a = 2``.  So on each link the largest allowed ``n_a`` is the
    fastest, whatever the other degrees.
    """
    A = request.assumptions
    return (A.memory_limit == "output" and A.convention == "paper" and A.pipeline_placement == "inter-node"
            and request.schedule is None and request.max_gpus is None)


def fastest_tensor_degrees(request: SearchRequest, n_as: np.ndarray) -> np.ndarray:
    """Of the allowed tensor degrees ``n_as``, those within the overhead cap that can be fastest: the largest
    within the node (NVLink) and the largest beyond it (InfiniBand) (see :func:`tensor_prunable`)."""
    cap = tensor_cap(request)
    node = request.hardware.gpus_per_node
    within = n_as[n_as <= cap]
    keep = [within[within <= node].max(initial=0), within[within > node].max(initial=0)]
    return np.array(sorted({int(v) for v in keep if v > 0} or {int(n_as.min(initial=1))}))


def micro_batch_caps(request: SearchRequest, B: int, groups: list[tuple[int, int, bool]]) -> dict[tuple[int, int, bool], int]:
    """Per ``(n_l, n_a, offload)``: a micro-batch size at or above the smallest bottleneck-free one.

    Probed at ``n_mu = n_l`` and the largest ``n_b`` on sizes 1..16 then doubling up to
    ``B // n_l``; larger micro-batches only lower the GPU count or the micro-batch count.
    A group with no bottleneck-free probe, not even at the largest micro-batch and a single
    data-parallel instance (its most favourable point), is dropped (cap 0).
    """
    caps = {group: 0 for group in groups}
    if not groups:
        return caps
    probes = sorted(set(range(1, 17)) | {2**k for k in range(5, max(5, B.bit_length()) + 1)} | {B})
    probes = np.array([p for p in probes if p <= B], dtype=np.int64)
    g = np.array([(n_l, n_a, off) for n_l, n_a, off in groups], dtype=np.int64).reshape(-1, 3)
    g_l, g_a = g[:, 0], g[:, 1]
    top = B // g_l  # the largest micro-batch with n_mu >= n_l
    # per group: every probe below its largest micro-batch, then that micro-batch itself (if at least 1)
    below = probes[None, :] < top[:, None]
    group_of = np.concatenate([np.nonzero(below)[0], np.flatnonzero(top >= 1)])
    p = np.concatenate([np.broadcast_to(probes, below.shape)[below], top[top >= 1]])
    if p.size == 0:
        return caps
    n_l, n_a, off = g_l[group_of], g_a[group_of], g[group_of, 2].astype(bool)
    n_b = np.maximum(1, B // (p * n_l))
    if request.max_gpus is not None:
        n_b = np.maximum(1, np.minimum(n_b, request.max_gpus // (n_l * n_a)))
    c = {"n_b": n_b, "n_l": n_l, "n_a": n_a, "n_mu": B // (p * n_b), "b_mu": p, "offload": off}
    free = np.concatenate([
        bottleneck_free(request, n_l[part], request.evaluate({k: v[part] for k, v in c.items()}))
        for part in (slice(start, start + EVALUATION_CHUNK) for start in range(0, p.size, EVALUATION_CHUNK))
    ])
    # the smallest free probe per group (0 where none is free)
    smallest = np.full(len(groups), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(smallest, group_of[free], p[free])
    for group, cap in zip(groups, smallest.tolist()):
        caps[group] = 0 if cap == np.iinfo(np.int64).max else cap
    return caps


def _check_probes(request: SearchRequest, B: int, n_ls: np.ndarray, per_layer_degree: int) -> None:
    """The micro-batch probes of every group stay within :data:`MAX_PROBES` evaluations."""
    probes = 16 + max(0, B.bit_length() - 4) + 1
    count = len(n_ls) * per_layer_degree * probes
    if count > MAX_PROBES:
        raise too_large(request.model.name, count, MAX_PROBES,
                        f"evaluations to find the micro-batch sizes of {len(n_ls)} pipeline x {per_layer_degree} "
                        f"tensor and offload choices (b_c = {B})")


def _check_candidates(request: SearchRequest, B: int, caps: dict) -> int:
    """The candidate set stays within :data:`MAX_CANDIDATES` configurations, counted before it is built;
    the count (exact without a GPU budget, an upper bound with one)."""
    if not caps:
        return 0
    groups = np.array([(n_l, cap) for (n_l, _, _), cap in caps.items()], dtype=np.int64).reshape(-1, 2)
    count = lattice_counts(B, groups[:, 0], groups[:, 1], request.max_gpus is not None)
    if count > MAX_CANDIDATES:
        raise too_large(request.model.name, count, MAX_CANDIDATES,
                        f"configurations below the critical batch b_c = {B} ({len(caps)} groups of pipeline, "
                        f"tensor and offload choices)")
    return count


def candidates(request: SearchRequest, objective: str = "cheapest") -> dict[str, np.ndarray]:
    """The pruned candidate set, as arrays; for the ``fastest`` objective, where :func:`tensor_prunable`,
    only the tensor degrees of :func:`fastest_tensor_degrees`."""
    B = request.batch_limit
    n_ls, n_as = dimension_values(request, request.max_gpus)
    if objective == "fastest" and request.parallelism.tensor and tensor_prunable(request):
        n_as = fastest_tensor_degrees(request, n_as)
    product_limit(request.model.name, B, int(n_as.max()), request.max_gpus)
    # memory as an output (memory_limit="output") never needs offload
    offloads = (False, True) if request.allow_offload and request.assumptions.memory_limit == "constraint" else (False,)
    _check_probes(request, B, n_ls, len(n_as) * len(offloads))
    groups = [(int(n_l), int(n_a), off) for n_l in n_ls for n_a in n_as for off in offloads]
    caps = micro_batch_caps(request, B, groups)
    count = _check_candidates(request, B, caps)
    # a large set is built without keeping its lattices in the cache (they would double its memory)
    build = _lattice if count <= CACHED_CANDIDATES else _lattice.__wrapped__
    parts, owners = [], []
    for index, ((n_l, n_a, _), cap) in enumerate(caps.items()):
        part = lattice(B, n_l, n_a, cap, request.max_gpus, build)
        if part[0].size:
            parts.append(part)
            owners.append(index)
    if not parts:
        return {k: np.zeros(0, bool if k == "offload" else np.int64) for k in CANDIDATE_KEYS}
    # the group's (n_l, n_a, offload) repeated over its lattice, in one pass
    group = np.array(list(caps), dtype=np.int64).reshape(-1, 3)[owners]
    sizes = [part[0].size for part in parts]
    return {
        "n_b": np.concatenate([part[0] for part in parts]),
        "n_l": np.repeat(group[:, 0], sizes),
        "n_a": np.repeat(group[:, 1], sizes),
        "n_mu": np.concatenate([part[1] for part in parts]),
        "b_mu": np.concatenate([part[2] for part in parts]),
        "offload": np.repeat(group[:, 2].astype(bool), sizes),
    }
