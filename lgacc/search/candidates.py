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

__all__ = ["candidates", "dimension_values", "take"]


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


def dimension_values(request: SearchRequest, max_gpus: int | None):
    """The pipeline and tensor degrees the structure rule allows, within ``max_gpus``."""
    model, parallelism, assumptions = request.model, request.parallelism, request.assumptions
    n_ls = np.arange(1, model.d_l + 1) if parallelism.pipe and not request.no_pipeline else np.array([1])
    n_ls = n_ls[assumptions.allows_layers(model.d_l, n_ls)]
    # without the heads cap, look up to two devices per head
    n_as = np.arange(1, (1 if assumptions.heads_cap else 2) * model.d_a + 1) if parallelism.tensor else np.array([1])
    n_as = n_as[assumptions.allows_heads(model.d_a, n_as)]
    if max_gpus is not None:
        n_ls = n_ls[n_ls <= max_gpus]
        n_as = n_as[n_as <= max_gpus]
    return n_ls, n_as


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


def candidates(request: SearchRequest) -> dict[str, np.ndarray]:
    """The pruned candidate set, as arrays."""
    B = request.batch_limit
    n_ls, n_as = dimension_values(request, request.max_gpus)
    offloads = (False, True) if request.allow_offload else (False,)
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
