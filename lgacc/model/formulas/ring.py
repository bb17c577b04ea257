"""Data-parallel traffic on real nodes: the bytes each link carries under ring and hierarchical collectives.

The paper counts every data-parallel byte against the GPU's own InfiniBand link
(appendix sec:resource_usage, "Data parallel": ``8 (n_b - 1) p / n_gpu`` bytes in + out
for the gradient reduction) and says why that is pessimistic in the footnote of
sec:hardware: "In a data parallel scenario, network operations use a ring topology
which effectively makes the entire Ethernet bandwidth available to a single device.
We ignore this fact for simplicity".  This module derives what the footnote sets
aside, for the switch ``dp_network="ring"`` of :class:`lgacc.model.assumptions.Assumptions`.

Layout.  A node holds ``G`` GPUs joined by NVSwitch (every GPU its own NVLink port) and
gives each GPU a share of the node's network cards (one card per GPU on DGX/HGX
nodes, the paper's "each GPU can only efficiently use one connector"; a shared node
link, as the paper's Ethernet, is the same per-GPU share).  Ranks fill the nodes in
the order tensor, data, pipeline (Megatron-LM's default), so each data-parallel group
has ``g`` peers on every node it touches (:func:`peers_per_node`) and spans
``m = n_b / g`` nodes.

Bytes.  A collective that moves ``V`` bytes in + out per GPU in the paper's count
(``all_gather_bytes`` of :mod:`.network`, the paper's ring with every edge leaving the
node) moves, per GPU:

* flat ring (NCCL's ring: the ``g`` members of a node consecutive, one channel per
  member leaving the node through that member's card): ``V / g`` through the card and
  ``V (g - 1) / g`` through NVLink (:func:`flat_ring_link_bytes`), when the group spans
  more than one node; all of ``V`` through NVLink when it fits in one (``m = 1``);
* hierarchical (reduce-scatter inside the node, the collective of the ``1/g`` shard
  across nodes, all-gather inside the node): ``2 (m - 1)/m S / g`` per pass through the
  card and ``2 (g - 1)/g S`` through NVLink (:func:`hierarchical_link_bytes`).  At leading
  order in ``n_b`` (``m`` large, ``g`` fixed) the two coincide.

Intensities.  With the flops a transfer overlaps unchanged, each ``eq:data_intensity_*``
becomes one intensity per link: ``g nu_b`` against the card's threshold and
``g / (g - 1) nu_b`` against NVLink's (:func:`ring_data_derivations`, each named by the label
it replaces); the transfer is bound by the slower link, so the paper's condition
``nu_b >= nu_IB`` (eq:overlap_condition) becomes ``nu_b >= nu_DP`` with the effective threshold
``nu_DP = max(s_card nu_IB, s_NVL nu_NVL)`` (:func:`ring_threshold_derivation`), where
``s_card = 1/g`` and ``s_NVL = (g - 1)/g`` are the shares of the paper's bytes on each link.
With ``g = 1`` (the tensor group fills the node) every form is the paper's.
"""

from __future__ import annotations

from functools import cache

import sympy

from ..symbols import n_b, nu
from . import network
from .derivation import Derivation, leading_order
from .network import all_gather_bytes

__all__ = [
    "g",
    "G",
    "inner",
    "C",
    "S",
    "flat_ring_link_bytes",
    "hierarchical_link_bytes",
    "link_shares",
    "ring_threshold",
    "peers_per_node",
    "ring_data_derivations",
    "ring_threshold_derivation",
    "derivations",
    "evaluator_functions",
]

#: data-parallel peers on each node a group touches; GPUs per node; the model-parallel ranks placed
#: inside a node before the data ranks (n_a, or n_l n_a when the pipeline is inside the node);
#: ring channels; bytes of one GPU's shard
g, G, inner, C, S = sympy.symbols("g G n_inner C S", positive=True)
_nu_ib, _nu_nvl = nu["infiniband"], nu["nvlink"]

#: the paper's data intensities (:mod:`.network`) by key: (method, partitioned, pipelined) of
#: :func:`.network.data_transfers`
_DATA_CASES = {
    "data_intensity_base": ("standard", False, False),
    "data_intensity_base_pipe": ("standard", False, True),
    "data_intensity_base_partition": ("standard", True, False),
    "data_intensity_improved": ("layered", False, False),
    "data_intensity_improved_partition": ("layered", True, False),
}


# --- bytes per link ------------------------------------------------------------------------------


def flat_ring_link_bytes(size: sympy.Expr, n: sympy.Expr, peers: sympy.Expr = g) -> dict[str, sympy.Expr]:
    """Bytes in + out per GPU, by link, of one ring reduce-scatter (or all-gather) of ``size`` bytes over ``n``
    ranks with ``peers`` consecutive ranks per node, spanning two nodes or more.

    Counted per channel: ``C`` channels each carry ``size / C``; in each, every rank sends
    ``(n - 1)/n`` of its chunk to the next rank and receives as much from the previous one.
    Of a node's ``peers`` ring edges per channel one leaves the node (the last member sends
    through its card, the first of the next node receives through its own), and NCCL rotates
    which member that is, so each member leaves through its card in ``C / peers`` channels
    and is entered through it in as many: the rest of its traffic runs on NVLink.
    """
    per_channel = (n - 1) / n * size / C  # sent, and received, by one rank in one channel
    channels_on_card = C / peers
    card = 2 * channels_on_card * per_channel  # sent as the exit, received as the entry
    nvlink = 2 * (C - channels_on_card) * per_channel
    return {"card": sympy.factor(card), "nvlink": sympy.factor(nvlink)}


def hierarchical_link_bytes(size: sympy.Expr, n: sympy.Expr, peers: sympy.Expr = g) -> dict[str, sympy.Expr]:
    """Bytes in + out per GPU, by link, of one hierarchical reduce-scatter (or all-gather) of ``size`` bytes
    over ``n`` ranks, ``peers`` per node: a ring of the ``peers`` members inside the node (NVLink), then
    a ring of the ``1 / peers`` shard across the ``n / peers`` nodes, each member on its own card."""
    nodes = n / peers
    return {"card": sympy.factor(all_gather_bytes(size / peers, nodes)),
            "nvlink": sympy.factor(all_gather_bytes(size, peers))}


@cache
def link_shares(kind: str = "ring") -> dict[str, sympy.Expr]:
    """The share of the paper's per-GPU bytes (:func:`.network.all_gather_bytes` over ``n_b``, every edge
    leaving the node) that each link carries: ``{"card": s_card, "nvlink": s_NVL}`` for a group spanning
    two nodes or more."""
    bytes_by_link = (flat_ring_link_bytes if kind == "ring" else hierarchical_link_bytes)(S, n_b)
    paper = all_gather_bytes(S, n_b)
    return {link: sympy.factor(value / paper) for link, value in bytes_by_link.items()}


def _shares_with_one_node() -> tuple[sympy.Expr, sympy.Expr]:
    """The flat ring's shares for any ``n_b >= g``: those of :func:`link_shares` over two nodes or more, and
    inside one node (``n_b = g``, no edge leaves it) nothing on the card and everything on NVLink."""
    shares = link_shares("ring")
    spans = sympy.StrictGreaterThan(n_b, g)
    card = sympy.Piecewise((shares["card"], spans), (0, True))
    nvlink = sympy.Piecewise((shares["nvlink"], spans), (1, True))
    return card, nvlink


def ring_threshold() -> sympy.Expr:
    """``nu_DP``: the intensity a data-parallel transfer of the paper's per-GPU intensity ``nu_b`` must reach
    to hide behind its computation, the slower of its two links: ``max(s_card nu_IB, s_NVL nu_NVL)``.

    Transfer time over computation time is ``max(B_card / beta_IB, B_NVL / beta_NVL) / (F / c_gpu)``;
    with ``B_link = s_link V`` and ``nu_b = F / V`` this is ``max(s_card nu_IB, s_NVL nu_NVL) / nu_b``.
    """
    card, nvlink = _shares_with_one_node()
    return sympy.Max(card * _nu_ib, nvlink * _nu_nvl)


def peers_per_node(n_data: sympy.Expr = n_b, ranks_inside: sympy.Expr = inner, node: sympy.Expr = G) -> sympy.Expr:
    """``g``: peers of one data-parallel group on a node, ``min(n_b, max(1, floor(G / inner)))``.

    The model-parallel ranks placed inside a node before the data ranks (``inner``) take
    ``floor(G / inner)`` slots for data-parallel peers, at least one; a group of fewer peers
    holds one node.  The nodes are taken as filled (a group whose size is not a multiple of
    ``g`` leaves one node with fewer peers, which the ideal model ignores as it ignores GPU
    counts that are not whole nodes)."""
    whole = sympy.floor(node / ranks_inside)
    slots = sympy.Piecewise((whole, whole >= 1), (1, True))  # max(1, floor(G / inner))
    return sympy.Piecewise((n_data, n_data <= slots), (slots, True))  # min(n_b, slots)


# --- the ring forms of eq:data_intensity_* --------------------------------------------------------


def _link_intensity(key: str, link: str, kind: str = "ring") -> sympy.Expr:
    """The intensity of the transfer ``key`` against one link: the flops of each pass of
    :func:`.network.data_transfers` over the bytes that pass moves through ``link``, at the binding pass."""
    method, partitioned, pipelined = _DATA_CASES[key]
    count = flat_ring_link_bytes if kind == "ring" else hierarchical_link_bytes
    passes = network.data_transfers(method, partitioned, pipelined=pipelined,
                                    link_bytes=lambda size, n: count(size, n)[link])
    intensities = [sympy.factor(flops / size) for flops, size, _ in passes.values()]
    binding = intensities[0]
    for other in intensities[1:]:  # the passes differ by a constant factor (checked): keep the lowest
        ratio = sympy.cancel(other / binding)
        if not ratio.is_number:
            raise ValueError(f"{key}: cannot order the passes, ratio {ratio}")
        binding = other if ratio < 1 else binding
    return binding


def _ring_data_derivation(key: str) -> Derivation:
    per_gpu = next(d for d in map(lambda builder: builder(), network.DERIVATIONS) if d.key == key)
    exact = _link_intensity(key, "card")
    return Derivation(
        key=f"{key}_ring",
        label=f"eq:{key}",
        title=f"{per_gpu.title}: through the node's cards, ring",
        exact=exact,
        paper=per_gpu.paper,
        limit=leading_order(exact.subs(g, 1), n_b),
        approximation="g = 1 (every data-parallel peer on its own node: the paper's per-GPU count), (n_b - 1)/n_b -> 1",
        details={
            "card intensity, leading order": leading_order(exact, n_b),
            "NVLink intensity": _link_intensity(key, "nvlink"),
            "card intensity, hierarchical": _link_intensity(key, "card", "hierarchical"),
            "NVLink intensity, hierarchical": _link_intensity(key, "nvlink", "hierarchical"),
        },
    )


@cache
def ring_data_derivations() -> tuple[Derivation, ...]:
    """The ring form of each eq:data_intensity_* (key ``<paper key>_ring``, the paper's label): its intensity
    against the card's threshold, reducing to the paper's at ``g = 1``; the NVLink and hierarchical forms in
    ``details``."""
    return tuple(_ring_data_derivation(key) for key in _DATA_CASES)


@cache
def ring_threshold_derivation() -> Derivation:
    """eq:overlap_condition for a data-parallel transfer under the ring: ``nu_b >= nu_DP``, with ``nu_DP`` of
    :func:`ring_threshold`; at ``g = 1`` it is the paper's ``nu_b >= nu_IB``."""
    exact = ring_threshold()
    card, nvlink = link_shares("ring").values()
    spanning = sympy.Max(card * _nu_ib, nvlink * _nu_nvl)  # a group over two nodes or more
    return Derivation(
        key="data_network_threshold_ring",
        label="eq:overlap_condition",
        title="Data-parallel threshold over the card and NVLink, ring",
        exact=exact,
        paper=_nu_ib,
        limit=spanning.subs(g, 1),
        approximation="g = 1 (every data-parallel peer on its own node)",
        details={
            "card share": card,
            "NVLink share": nvlink,
            "NVLink binds when": sympy.Gt((g - 1) * _nu_nvl, _nu_ib),
            "hierarchical card share": link_shares("hierarchical")["card"],
            "hierarchical NVLink share": link_shares("hierarchical")["nvlink"],
        },
    )


def derivations() -> list[Derivation]:
    """The ring forms, in the book's order: the five data intensities, then the threshold."""
    return [*ring_data_derivations(), ring_threshold_derivation()]


# --- what the evaluator and the calculator compute --------------------------------------------------

def _pairwise(e: sympy.Expr, first_wins) -> sympy.Expr:
    first, *rest = e.args
    for other in rest:
        first = sympy.Piecewise((first, first_wins(first, other)), (other, True))
    return first


def _as_piecewise(expr: sympy.Expr) -> sympy.Expr:
    """Min and Max as nested Piecewise: printed to numpy they broadcast (numpy.select), as the schedules' terms."""
    expr = expr.replace(lambda e: isinstance(e, sympy.Min), lambda e: _pairwise(e, lambda a, b: a <= b))
    return expr.replace(lambda e: isinstance(e, sympy.Max), lambda e: _pairwise(e, lambda a, b: a >= b))


def evaluator_functions() -> dict[str, tuple[tuple[sympy.Symbol, ...], sympy.Expr]]:
    """``{name: (arguments, expression)}`` for the generated numeric code and the calculator: ``peers`` (``g``
    from ``n_b``, the ranks inside a node before the data ranks, and ``G``), ``card_share`` (the share of
    the paper's bytes through the card, for the PCIe rule) and ``threshold`` (``nu_DP``)."""
    card, _ = _shares_with_one_node()
    return {
        "peers": ((n_b, inner, G), peers_per_node()),
        "card_share": ((n_b, g), card),
        "threshold": ((_nu_ib, _nu_nvl, n_b, g), _as_piecewise(ring_threshold())),
    }
