"""The data-parallel ring (lgacc.model.formulas.ring, assumption dp_network) against independent facts.

* brute force: ring and hierarchical all-reduces run on numbers over simulated nodes (channels
  rotating the GPU that leaves the node), checked to reduce correctly, with every byte counted on the
  link it crosses; the counts equal the derived bytes per link;
* identities: every ring form reduces to the paper's printed form at g = 1; at g = 1 the card carries
  the appendix's printed count 8 (n_b - 1) p / n_gpu;
* hand values: the effective thresholds on the paper's A100 node, the peers per node, data and PCIe
  overheads of configurations computed by hand from the spec;
* the evaluator: under ring with the tensor group filling the node (g = 1) nothing moves.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import sympy

from lgacc.model.assumptions import Assumptions
from lgacc.model.evaluator import evaluate_many
from lgacc.model.evaluator.mapping import RING_ARGUMENTS, evaluation_map, ring_functions
from lgacc.model.formulas import ring
from lgacc.model.formulas.ring import G, S, flat_ring_link_bytes, g, hierarchical_link_bytes, inner
from lgacc.model.hardware import load_hardware
from lgacc.model.symbols import n_a, n_b, n_l, nu, p

RING = Assumptions(dp_network="ring")


# --- brute force --------------------------------------------------------------------------------


class Links:
    """Bytes in + out per GPU on its card and on NVLink."""

    def __init__(self, n: int, per_node: int):
        self.node = [r // per_node for r in range(n)]
        self.card = np.zeros(n)
        self.nvlink = np.zeros(n)

    def send(self, src: int, dst: int, size: float) -> None:
        link = self.card if self.node[src] != self.node[dst] else self.nvlink
        link[src] += size
        link[dst] += size


def ring_pass(order: list[int], data: dict[int, np.ndarray], links: Links, kind: str) -> None:
    """One ring reduce-scatter (``kind="rs"``) or all-gather (``"ag"``) of the arrays ``data`` (one per rank of
    ``order``, each split in ``len(order)`` chunks), step by step, each chunk sent to the next rank of the ring."""
    n = len(order)
    chunks = {r: np.array_split(np.arange(len(data[r])), n) for r in order}
    for step in range(n - 1):
        sends = []
        for i, r in enumerate(order):
            c = (i - step) % n if kind == "rs" else (i + 1 - step) % n
            sends.append((r, order[(i + 1) % n], chunks[r][c], data[r][chunks[r][c]].copy()))
        for src, dst, index, values in sends:
            links.send(src, dst, values.size)
            data[dst][index] = data[dst][index] + values if kind == "rs" else values


def flat_ring_all_reduce(n: int, per_node: int, channels: int, size: int):
    """NCCL's ring over nodes of ``per_node`` consecutive ranks, ``channels`` rings each on its slice of the buffer,
    channel ``c`` rotating by ``c`` the member that leaves each node; returns the reduced buffers and the links."""
    rng = np.random.default_rng(n * 100 + per_node)
    start = {r: rng.integers(0, 1000, size).astype(float) for r in range(n)}
    total = sum(start.values())
    links = Links(n, per_node)
    slices = np.array_split(np.arange(size), channels)
    out = {r: start[r].copy() for r in range(n)}
    for c, where in enumerate(slices):
        order = [k * per_node + (j + c) % per_node for k in range(n // per_node) for j in range(per_node)]
        data = {r: out[r][where].copy() for r in range(n)}
        ring_pass(order, data, links, "rs")
        ring_pass(order, data, links, "ag")
        for r in range(n):
            out[r][where] = data[r]
    return out, total, links


def hierarchical_all_reduce(n: int, per_node: int, size: int):
    """Reduce-scatter inside each node, all-reduce of each shard across nodes (ranks of the same local index),
    all-gather inside each node."""
    rng = np.random.default_rng(n * 7 + per_node)
    data = {r: rng.integers(0, 1000, size).astype(float) for r in range(n)}
    total = sum(data.values())
    links = Links(n, per_node)
    nodes = [list(range(k * per_node, (k + 1) * per_node)) for k in range(n // per_node)]
    for members in nodes:
        ring_pass(members, data, links, "rs")
    shard = np.array_split(np.arange(size), per_node)
    for j in range(per_node):  # after the ring reduce-scatter, local rank i holds chunk (i + 1) mod g
        peers = [members[(j - 1) % per_node] for members in nodes]
        part = {r: data[r][shard[j]].copy() for r in peers}
        ring_pass(peers, part, links, "rs")
        ring_pass(peers, part, links, "ag")
        for r in peers:
            data[r][shard[j]] = part[r]
    for members in nodes:
        ring_pass(members, data, links, "ag")
    return data, total, links


@pytest.mark.parametrize("n, per_node", [(4, 1), (6, 2), (8, 4), (12, 4), (16, 8), (6, 3)])
def test_a_simulated_ring_over_nodes_moves_the_derived_bytes_on_each_link(n, per_node):
    size = n * per_node * 12  # divisible by every chunking below
    out, total, links = flat_ring_all_reduce(n, per_node, channels=per_node * 2, size=size)
    for r in range(n):
        assert np.array_equal(out[r], total)  # a real all-reduce
    derived = {k: 2 * float(v.subs({S: size, n_b: n, g: per_node})) for k, v in flat_ring_link_bytes(S, n_b).items()}
    assert np.allclose(links.card, derived["card"]) and np.allclose(links.nvlink, derived["nvlink"])
    assert np.allclose(links.card + links.nvlink, 4 * (n - 1) / n * size)  # the paper's bytes, all of them


def test_a_ring_inside_one_node_never_leaves_it():
    out, total, links = flat_ring_all_reduce(8, 8, channels=8, size=8 * 16)
    assert np.array_equal(out[0], total)
    assert links.card.sum() == 0 and np.allclose(links.nvlink, 4 * 7 / 8 * 8 * 16)
    fn = ring_functions()
    assert fn["card_share"](8.0, 8.0) == 0  # and the evaluator's share says so


@pytest.mark.parametrize("n, per_node", [(4, 2), (8, 4), (12, 4), (16, 8)])
def test_a_simulated_hierarchical_all_reduce_moves_the_derived_bytes(n, per_node):
    size = n * per_node * 6
    out, total, links = hierarchical_all_reduce(n, per_node, size)
    for r in range(n):
        assert np.array_equal(out[r], total)
    derived = {k: 2 * float(v.subs({S: size, n_b: n, g: per_node})) for k, v in hierarchical_link_bytes(S, n_b).items()}
    assert np.allclose(links.card, derived["card"]) and np.allclose(links.nvlink, derived["nvlink"])


# --- identities -----------------------------------------------------------------------------------


def test_every_ring_form_reduces_to_the_papers_at_one_peer_per_node():
    forms = ring.derivations()
    assert [d.label for d in forms] == ["eq:data_intensity_base", "eq:data_intensity_base_pipe",
                                        "eq:data_intensity_base_partition", "eq:data_intensity_improved",
                                        "eq:data_intensity_improved_partition", "eq:overlap_condition"]
    for d in forms:
        assert d.holds(), d.key
    for d in forms[:-1]:  # two peers per node: twice the paper's intensity on the card
        assert sympy.cancel(d.exact.subs(g, 2) / d.exact.subs(g, 1)) == 2, d.key


def test_the_card_carries_the_appendix_count_at_one_peer_per_node():
    # "a bandwidth usage of 8 (n_b - 1) p / n_gpu": a reduce-scatter and an all-gather of 2p / (n_l n_a) bytes
    grads = 2 * p / (n_l * n_a)
    card = 2 * flat_ring_link_bytes(grads, n_b)["card"]
    assert sympy.simplify(card.subs(g, 1) - 8 * (n_b - 1) * p / (n_b * n_l * n_a)) == 0
    assert sympy.simplify(card - 8 * (n_b - 1) * p / (n_b * n_l * n_a) / g) == 0


def test_ring_and_hierarchical_agree_at_leading_order():
    for link in ("card", "nvlink"):
        flat, hier = flat_ring_link_bytes(S, n_b)[link], hierarchical_link_bytes(S, n_b)[link]
        assert sympy.limit(flat / hier, n_b, sympy.oo) == 1
    # on the cards the hierarchical one saves (g - 1) / (g m) of the paper's bytes, m = n_b / g nodes
    saved = (flat_ring_link_bytes(S, n_b)["card"] - hierarchical_link_bytes(S, n_b)["card"]) * g / (2 * S)
    assert sympy.simplify(saved - (g - 1) / (g * (n_b / g))) == 0


# --- hand values ------------------------------------------------------------------------------------


A100 = load_hardware("a100-80gb")
NU_IB = 312e12 / (50 * 2**30)  # 5811.5 flop/B, table:hardware_bandwidth's 5.81 k
NU_NVL = 312e12 / (600 * 2**30)  # 484.3, its 484


@pytest.mark.parametrize("peers, expected", [(1, NU_IB), (2, NU_IB / 2), (4, NU_IB / 4), (8, NU_IB / 8),
                                              (12, NU_IB / 12), (16, NU_NVL * 15 / 16)])
def test_the_effective_threshold_on_the_papers_node(peers, expected):
    fn = ring_functions()
    got = float(fn["threshold"](A100.threshold("infiniband"), A100.threshold("nvlink"), 1000.0, float(peers)))
    assert got == pytest.approx(expected, rel=1e-12)
    # NVLink binds from g - 1 > nu_IB / nu_NVL = 12 on: 13 peers and more
    assert (got == pytest.approx(NU_NVL * (peers - 1) / peers)) == (peers - 1 > 12)


def test_the_threshold_expression_by_substitution():
    d = ring.ring_threshold_derivation()
    at = {nu["infiniband"]: NU_IB, nu["nvlink"]: NU_NVL, n_b: 483}
    assert float(d.exact.subs(at | {g: 4})) == pytest.approx(NU_IB / 4)
    assert float(d.exact.subs(at | {g: 483})) == pytest.approx(NU_NVL)  # one node: NVLink only


@pytest.mark.parametrize("n_data, ranks_inside, node, expected", [
    (483, 16, 16, 1), (483, 1, 16, 16), (370, 4, 16, 4), (166, 8, 16, 2), (3, 1, 16, 3),
    (17, 32, 16, 1), (100, 5, 16, 3), (8, 1, 2**40, 8), (1, 1, 16, 1),
])
def test_peers_per_node(n_data, ranks_inside, node, expected):
    assert ring_functions()["peers"](float(n_data), float(ranks_inside), float(node)) == expected
    assert ring.peers_per_node().subs({n_b: n_data, inner: ranks_inside, G: node}) == expected


def test_the_data_overhead_by_hand():
    # X32 (d_s = 512), partitioned, data only, b_mu = 1: nu_b = b_mu d_s / 2 = 256 flop/B per GPU (paper form)
    r = evaluate_many("X32", A100, "partitioned", n_b=64, b_mu=1, assumptions=RING)
    assert r["nu_data"] == pytest.approx(256)
    assert r["data"] == pytest.approx(NU_NVL * 15 / 16 / 256 - 1, rel=1e-12)  # g = 16: NVLink binds
    paper = evaluate_many("X32", A100, "partitioned", n_b=64, b_mu=1)
    assert paper["data"] == pytest.approx(NU_IB / 256 - 1, rel=1e-12)
    # n_a = 4: g = 4, the card binds
    r = evaluate_many("X32", A100, "partitioned", n_b=64, n_a=4, b_mu=1, assumptions=RING)
    assert r["data"] == pytest.approx(NU_IB / 4 / 256 - 1, rel=1e-12)


def test_the_pcie_rule_counts_the_card_share_by_hand():
    # X160, Data / Baseline with offload at b_mu = 4: the paper's PCIe rule fails (1/(1/10240 + 1/307200 + 1/7680)
    # = 4327 < 4612, assumptions page); under the ring only 1/16 of the reduction crosses PCIe
    kw = dict(n_b=483, b_mu=4, offload=True)
    nu_pcie = 1 / (1 / 10240 + 1 / 307200 + 1 / 16 / 7680)
    r = evaluate_many("X160", A100, "baseline", **kw, assumptions=RING)
    assert r["nu_pcie"] == pytest.approx(nu_pcie, rel=1e-9)
    assert r["pcie"] == 0 and nu_pcie > 312e12 / (63 * 2**30)
    assert evaluate_many("X160", A100, "baseline", **kw)["pcie"] > 0


# --- the evaluator ------------------------------------------------------------------------------------


def test_nothing_moves_when_the_tensor_group_fills_the_node():
    grid = np.array(list(itertools.product([2, 7, 64, 483], [1, 5, 32], [1, 4, 16], [False, True]))).T
    n_data, n_pipe, n_mu, off = grid[0], grid[1], grid[2] + grid[1], grid[3].astype(bool)
    for method in ("baseline", "partitioned", "improved"):
        kw = dict(n_b=n_data, n_l=n_pipe, n_a=16, n_mu=n_mu, b_mu=1, offload=off)
        paper = evaluate_many("X160", A100, method, **kw)
        ringed = evaluate_many("X160", A100, method, **kw, assumptions=RING)
        for key in ("efficiency", "data", "pcie", "time_days"):
            assert np.array_equal(paper[key], ringed[key]), (method, key)


def test_the_unlimited_node_puts_the_whole_reduction_on_nvlink():
    big = A100.replace(gpus_per_node=2**40)
    r = evaluate_many("X32", big, "partitioned", n_b=64, b_mu=1, assumptions=RING)
    assert r["data"] == pytest.approx(NU_NVL / 256 - 1, rel=1e-12)


def test_the_map_names_the_switch_and_its_functions():
    network = evaluation_map()["data"]["network"]
    assert set(network) >= {"per-gpu", "ring"}
    assert network["functions"] == {k: list(v) for k, v in RING_ARGUMENTS.items()}
    assert {k: len(args) for k, (args, _) in ring.evaluator_functions().items()} == \
        {k: len(v) for k, v in RING_ARGUMENTS.items()}


def test_the_search_under_the_ring_is_as_fast_as_the_exhaustive_reference():
    """The search prunes to the largest n_b per micro-batch count, which assumes more replicas never cost
    efficiency; under the ring the peers per node grow with n_b, so check it against the reference on small
    models and node sizes where g varies (InfiniBand and NVLink scaled so that the data rule binds)."""
    import random

    from lgacc.search import fastest
    from lgacc.search.reference import reference_fastest
    from lgacc.model.transformer import x_model

    rng = random.Random(2929)
    compared = moved = 0
    for case in range(12):
        hardware = A100.replace(
            memory_bytes=A100.memory_bytes * 2 ** rng.uniform(-16, -8),
            infiniband_bandwidth_bytes_per_s=A100.infiniband_bandwidth_bytes_per_s * 30 * 2 ** rng.uniform(-3, 3),
            nvlink_bandwidth_bytes_per_s=A100.nvlink_bandwidth_bytes_per_s * 30 * 2 ** rng.uniform(-3, 3),
            gpus_per_node=rng.choice([2, 4, 8, 16]))
        model, method = x_model(rng.choice([2, 4, 6])), rng.choice(["baseline", "partitioned", "improved"])
        parallelism = rng.choice(["Data", "Data + tensor", "3d"])
        found = fastest(model, hardware, method, parallelism, explain=False, assumptions=RING)
        best, _ = reference_fastest(model, hardware, method, parallelism, assumptions=RING)
        assert found.feasible == (best is not None), case
        if best is not None:
            assert found.evaluation.time_days == pytest.approx(best["time_days"], rel=1e-9), (case, found.config, best)
            paper = fastest(model, hardware, method, parallelism, explain=False)
            moved += paper.evaluation is None or paper.evaluation.time_days != found.evaluation.time_days
            compared += 1
    assert compared >= 8 and moved >= compared // 2, (compared, moved)  # the cases exercise the ring
