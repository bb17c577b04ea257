"""Candidate generation: the pruned set of configurations the search visits.

* ``n_mu`` follows from ``(n_b, b_mu)`` (the critical batch), and only the largest
  ``n_b`` for each ``n_mu`` is kept: the intensities depend on ``b / n_b``, not on
  ``n_b``, and more GPUs at the same efficiency are faster;
* micro-batch sizes above the smallest one that is bottleneck-free at ``n_mu = n_l``
  are dropped (intensities grow with ``b_mu`` and ``n_mu``).
"""

from __future__ import annotations

import math
from functools import cache, lru_cache

import numpy as np

from .request import CANDIDATE_KEYS, SearchRequest
from .rules import bottleneck_free

__all__ = ["candidates", "dimension_values", "take", "tensor_cap", "tensor_prunable", "fastest_tensor_degrees"]


def take(c, index) -> dict[str, np.ndarray]:
    """The candidates at ``index`` (an index array or a boolean mask)."""
    return {k: np.asarray(v)[index] for k, v in c.items()}


@cache
def levels(B: int, b_mu_max: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All ``(n_b, n_mu, b_mu)``, ``b_mu <= b_mu_max``, with ``n_mu = floor(B / (n_b b_mu))`` and ``n_b``
    the largest for its ``n_mu``: about ``2 sqrt(B / b_mu)`` per micro-batch size.  Sorted by ``b_mu``."""
    parts = []
    for b_mu in range(1, min(b_mu_max, B) + 1):
        K = B // b_mu
        root = np.arange(1, math.isqrt(K) + 1)
        n_b = np.union1d(root, K // root)
        n_mu = K // n_b
        keep = n_b == K // n_mu
        parts.append(np.stack([n_b[keep], n_mu[keep], np.full(int(keep.sum()), b_mu)]))
    table = np.concatenate(parts, axis=1) if parts else np.zeros((3, 0), np.int64)
    table.flags.writeable = False
    return table[0], table[1], table[2]


def lattice(
    B: int, n_l: int, n_a: int, b_mu_max: int, max_gpus: int | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(n_b, n_mu, b_mu)`` just below the critical batch with ``n_mu >= n_l``, largest ``n_b`` per level."""
    return _lattice(B, n_l, b_mu_max, None if max_gpus is None else max_gpus // (n_l * n_a))


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


def dimension_values(request: SearchRequest, max_gpus: int | None):
    """The pipeline and tensor degrees the structure rule allows, within ``max_gpus``."""
    model, parallelism, assumptions = request.model, request.parallelism, request.assumptions
    n_ls = np.arange(1, model.d_l + 1) if parallelism.pipe and not request.no_pipeline else np.array([1])
    n_ls = n_ls[assumptions.allows_layers(model.d_l, n_ls)]
    # without the heads cap, look up to the largest degree the overhead cap allows (at least d_a)
    top = model.d_a if assumptions.heads_cap or not parallelism.tensor else max(model.d_a, tensor_cap(request))
    if max_gpus is not None:
        top = min(top, max_gpus)
    n_as = np.arange(1, top + 1) if parallelism.tensor else np.array([1])
    n_as = n_as[assumptions.allows_heads(model.d_a, n_as)]
    if max_gpus is not None:
        n_ls = n_ls[n_ls <= max_gpus]
        n_as = n_as[n_as <= max_gpus]
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
    free = bottleneck_free(request, n_l, request.evaluate(c))
    # the smallest free probe per group (0 where none is free)
    smallest = np.full(len(groups), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(smallest, group_of[free], p[free])
    for group, cap in zip(groups, smallest.tolist()):
        caps[group] = 0 if cap == np.iinfo(np.int64).max else cap
    return caps


def candidates(request: SearchRequest, objective: str = "cheapest") -> dict[str, np.ndarray]:
    """The pruned candidate set, as arrays; for the ``fastest`` objective, where :func:`tensor_prunable`,
    only the tensor degrees of :func:`fastest_tensor_degrees`."""
    B = request.batch_limit
    n_ls, n_as = dimension_values(request, request.max_gpus)
    if objective == "fastest" and request.parallelism.tensor and tensor_prunable(request):
        n_as = fastest_tensor_degrees(request, n_as)
    # memory as an output (memory_limit="output") never needs offload
    offloads = (False, True) if request.allow_offload and request.assumptions.memory_limit == "constraint" else (False,)
    groups = [(int(n_l), int(n_a), off) for n_l in n_ls for n_a in n_as for off in offloads]
    caps = micro_batch_caps(request, B, groups)
    parts, owners = [], []
    for index, ((n_l, n_a, _), cap) in enumerate(caps.items()):
        part = lattice(B, n_l, n_a, cap, request.max_gpus)
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
