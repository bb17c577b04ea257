"""Collectives with latency and bandwidth (alpha-beta), the algorithm's bus factor, and the links they use.

For a buffer of ``S`` bytes over ``n`` ranks whose slowest link carries ``beta`` bytes/s in one
direction (NCCL's bus-bandwidth convention, ``NVIDIA/nccl-tests`` ``doc/PERFORMANCE.md``)::

    all-reduce                      alpha + 2 (n - 1)/n S / (eta beta)
    reduce-scatter, all-gather      alpha +   (n - 1)/n S / (eta beta)
    point-to-point                  alpha +             S / (eta beta)     (send and receive at once)

``eta`` (fitted) is the achieved share of the link.  A group of size 1 costs nothing: the latency
is multiplied by ``min(1, n - 1)``, which is 0 or 1 for a whole ``n``.

Over NVLink a collective's latency is ``alpha_NVL + (n - 1) delta_NVL``: ``delta_NVL`` is the latency each rank beyond
the first adds (a ring's step), measured where a fit by group size is published (the B200,
:mod:`.links`), else 0 (the vendor tables are of 8 ranks only).  A point-to-point transfer pays ``alpha_NVL``.

Links: the tensor-parallel group uses NVLink when it fits in a node (``n_a <= G``), InfiniBand
beyond; pipeline neighbours are on one node only when the whole job is; the data-parallel group is
**hierarchical**, as ring and two-level collectives move it (``dp_ring_derivation``, ranks ordered
tensor < data < pipeline as Megatron-LM does): ``g = min(n_b, max(1, floor(G / n_a)))`` members of a
group share a node, each node's share of the volume leaves through the ``g`` members' own network
cards, and the rest crosses NVLink::

    t_DP(S, f) = alpha_IB + f (n_b - 1)/n_b S max( 1 / (g eta beta_IB), (g - 1) / (g eta beta_NVL) )

and a group that lies inside one node (``g = n_b``) is one ring over NVLink, no InfiniBand (:func:`data_parallel_time`)

with ``f = 2`` for an all-reduce and 1 for a reduce-scatter or an all-gather.  ``g = 1`` is the
paper's per-GPU count (every GPU's full volume through its own card): the recipe's ``dp_network``
reading ``per-gpu`` (``pg = 1``) for an implementation whose collectives do not use the node's
other cards and NVLink.
"""

from __future__ import annotations

import sympy

from ..symbols import n_a, n_b, n_l
from .symbols import G, alpha_ib, alpha_nvl, beta_ib, beta_nvl, delta_nvl, eta, eta_nvl, maximum, minimum, pg

__all__ = ["present", "ring_time", "tensor_link", "pipeline_link", "data_peers_per_node", "data_parallel_time",
           "point_to_point_time"]


def present(n) -> sympy.Expr:
    """1 for a group of two or more ranks, 0 for one: ``min(1, n - 1)``."""
    return minimum(1, n - 1)


def ring_time(size_bytes, n, volume: int, bandwidth, alpha) -> sympy.Expr:
    """One ring collective over ``n`` ranks: ``volume`` is 2 (all-reduce) or 1 (reduce-scatter, all-gather);
    ``bandwidth`` the achieved one (``eta_nvl beta_nvl`` or ``eta beta_ib``, :func:`tensor_link`)."""
    return present(n) * alpha + volume * (n - 1) / n * size_bytes / bandwidth


def tensor_link() -> tuple[sympy.Expr, sympy.Expr]:
    """(achieved bandwidth, latency) of the tensor-parallel group: NVLink when ``n_a <= G``, else InfiniBand."""
    inside = n_a <= G
    return (sympy.Piecewise((eta_nvl * beta_nvl, inside), (eta * beta_ib, True)),
            sympy.Piecewise((alpha_nvl + (n_a - 1) * delta_nvl, inside), (alpha_ib, True)))


def pipeline_link() -> tuple[sympy.Expr, sympy.Expr]:
    """(achieved bandwidth, latency) between pipeline neighbours: NVLink only when the whole job is one node."""
    inside = n_a * n_b * n_l <= G
    return (sympy.Piecewise((eta_nvl * beta_nvl, inside), (eta * beta_ib, True)),
            sympy.Piecewise((alpha_nvl, inside), (alpha_ib, True)))


def point_to_point_time(size_bytes) -> sympy.Expr:
    """One pipeline transfer of ``size_bytes`` (each way at once, full duplex)."""
    bandwidth, alpha = pipeline_link()
    return alpha + size_bytes / bandwidth


def data_peers_per_node() -> sympy.Expr:
    """``g``: members of one data-parallel group on each node (tensor ranks innermost, then data); 1 when the
    collectives run through each GPU's own card (``pg``: the paper's per-GPU count, a flat implementation)."""
    return (1 - pg) * minimum(n_b, maximum(1, sympy.floor(G / n_a))) + pg


def data_parallel_time(size_bytes, volume: int) -> sympy.Expr:
    """One hierarchical data-parallel collective of ``size_bytes`` per GPU (``volume`` 2: all-reduce, 1: one half).

    A group that spans several nodes (``n_b / g >= 2``) crosses InfiniBand as the module's docstring says; a group
    that lies inside one node (``g = n_b``: nothing leaves the node) is one ring over NVLink, ``alpha_NVL + (n_b - 1)
    delta_NVL + f (n_b - 1)/n_b S / (eta beta_NVL)``: ``across = min(1, n_b / g - 1)`` picks between the two (0 inside
    a node, 1 across)."""
    g = data_peers_per_node()
    across = present(n_b / g)
    per_byte = (across * maximum(1 / (g * eta * beta_ib), (g - 1) / (g * eta_nvl * beta_nvl))
                + (1 - across) / (eta_nvl * beta_nvl))
    latency = across * alpha_ib + (1 - across) * (alpha_nvl + (n_b - 1) * delta_nvl)
    return present(n_b) * latency + volume * (n_b - 1) / n_b * size_bytes * per_byte
