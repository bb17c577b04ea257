"""The experts' dispatch permutations: the memory-bound work that puts a mixture of experts' tokens in the experts'
order and back, beside the all-to-alls (:mod:`.sparse`).

What runs is read from Megatron-Core's token dispatchers (``megatron/core/transformer/moe/token_dispatcher.py`` and
``moe_utils.py`` at core_r0.14.0), with ``t`` the tokens of a micro-batch on a GPU, ``k`` the experts a token
meets, ``L = E / n_e`` the experts a GPU holds, every row ``d_m`` bf16 values:

* **alltoall** (``MoEAlltoAllTokenDispatcher``, Megatron-Core's default ``moe_token_dispatcher_type``): ``permute``
  turns the ``t`` rows into ``t k`` copies, one per chosen expert, before the all-to-all; after it, where the GPU
  holds more than one expert (``L > 1``), ``sort_chunks_by_idxs`` reorders the received rows from source-major to
  expert-major (under tensor parallelism after gathering them over the expert-tensor-parallel group, ``n_a`` GPUs
  by Megatron-Core's default: ``n_a t k`` rows, ``t`` being then a sequence-parallel shard); the combine runs the
  same two backwards (the chunks unsorted, then ``unpermute``: ``t k`` rows merged into ``t``).  The all-to-all
  carries every copy: ``t k`` rows.
* **deepep** (``MoEFlexTokenDispatcher`` over DeepEP, ``_DeepepManager``): the dispatch kernel sends a token once
  to each GPU that holds one of its experts (DeepEP's ``get_dispatch_layout``: ``is_token_in_rank``,
  ``csrc/kernels/legacy/layout.cu`` at dd758ca), ``t r`` rows with ``r`` the GPUs a token meets
  (:func:`ranks_per_token`); the receiving GPU permutes them into its experts' copies
  (``get_permuted_hidden_states_by_experts``: ``t r`` rows in, ``t k`` out, balanced) and unpermutes before the
  combine.  No chunk sort.
  Across nodes, DeepEP's internode kernels send a token over the network once to each *node* holding one of its
  experts, to the GPU of the same local index, which forwards it over NVLink (``get_dispatch_layout``'s
  ``num_tokens_per_rdma_rank`` counts a token once per node of 8 GPUs; DeepSeek-V3's report, sec. 3.2.2: "transmitted
  via IB to the GPUs with the same in-node index on its target nodes [...] forwarded via NVLink"): ``t q`` rows
  cross the network, ``q`` the nodes a token meets (:func:`rows_between_nodes`).
* **hybridep** (``MoEFlexTokenDispatcher`` over HybridEP, ``_HybridEPManager`` at Megatron-LM 3cbe5c68a, the
  Megatron-Core of Megatron-Bridge's 25.11 release): the same ``t r`` rows sent, and the permutations fused into the
  communication kernels ("Permute tokens for communication, perform all-to-all communication, and permute tokens for
  experts in single step"): no permutation of its own; what the fused kernels move is the all-to-all's time.

Each permutation reads its input rows once and writes its output rows once (the least it can move); its backward is
the inverse permutation (the same bytes); a full recomputation runs the forward's again.  Their rate is the share of
the HBM bandwidth Transformer Engine's fused permutation reaches where it is measured: SimuMax's B200 measurement
(``data/calibrated/moe_permute.yaml``, :func:`permute_shares`), read against those least bytes, about 0.16 forward and
backward; every GPU borrows it (the only measurement found).  The chunk sort is timed at the same share.

Not counted (named): the router (its gate product is in the dense surrogate's weights; its softmax or sigmoid and
top-k over ``t E`` fp32 scores move ``t E`` values, under 3 % of the permutations' ``t k d_m`` for the models here),
the probabilities' permutation (``t k`` fp32 values beside ``t k d_m`` bf16 ones), and the all-to-alls themselves
(:mod:`.sparse`).  Balanced routing: every GPU gets ``t k`` copies (the imbalance is :mod:`.sparse`'s assumption).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from lgacc.errors import UserInputError
from lgacc.paths import DATA
from lgacc.yamlfile import load_yaml_mapping

from ..config import TrainingConfig
from ..transformer import Transformer

__all__ = ["DISPATCHERS", "PERMUTE_FILE", "DispatchRows", "PermuteShares", "dispatch_rows", "dispatch_seconds",
           "permute_shares", "ranks_per_token", "rows_between_nodes"]

PERMUTE_FILE = DATA / "calibrated" / "moe_permute.yaml"

#: recipe ``moe_dispatcher`` -> what it is
DISPATCHERS = {
    "alltoall": "Megatron-Core's MoEAlltoAllTokenDispatcher (its default): every copy permuted, sent and, with more "
                "than one expert on a GPU, sorted by expert",
    "deepep": "Megatron-Core's MoEFlexTokenDispatcher over DeepEP: a token sent once to each GPU holding one of its "
              "experts, permuted there; no chunk sort",
    "hybridep": "Megatron-Core's MoEFlexTokenDispatcher over HybridEP: sent as deepep, the permutations fused into the "
                "communication kernels",
}


@dataclass(frozen=True)
class PermuteShares:
    """The shares of the HBM bandwidth the fused permutation reaches, forward and backward, on the least bytes
    (each row read once and written once), and the measured seconds they come from (both cases together)."""

    forward: float
    backward: float
    forward_s: float
    backward_s: float
    least_bytes: float
    source: str


def _number(data: dict, key: str, where: str, positive: bool = True) -> float:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or (
            positive and value <= 0):
        raise UserInputError(f"{where}: {key} must be a positive number, got {value!r}")
    return float(value)


@cache
def permute_shares(path: Path = PERMUTE_FILE) -> PermuteShares:
    """The measured shares of :data:`PERMUTE_FILE`: SimuMax's efficiencies inverted into seconds (its
    ``efficiency_from_bytes_time``), then read against the least bytes the two cases move."""
    where = f"MoE permutation file {Path(path).name}"
    data = load_yaml_mapping(path, "MoE permutation file")
    count = data.get("simumax_byte_count")
    efficiency = data.get("efficiency")
    cases = data.get("cases")
    if not isinstance(count, dict) or not isinstance(efficiency, dict) or not isinstance(cases, list) or not cases:
        raise UserInputError(f"{where}: needs simumax_byte_count, efficiency and a list of cases")
    size = _number(data, "bytes_per_value", where)
    gbps, latency = _number(data, "gbps", where), _number(data, "latency_us", where, positive=False)
    launches = _number(data, "launches_per_case", where)
    reference = _number(data, "hbm_bandwidth_gb_per_s", where) * 1e9
    theirs = least = 0.0
    for case in cases:
        if not isinstance(case, dict):
            raise UserInputError(f"{where}: each case must be a mapping, got {case!r}")
        t, h = _number(case, "num_tokens", where), _number(case, "hidden_size", where)
        E, k = _number(case, "num_experts", where), _number(case, "topk", where)
        permuted = math.ceil(t * k / E) * _number(case, "capacity_factor", where) * E
        theirs += (_number(count, "input_rows_coefficient", where) * t
                   + _number(count, "permuted_rows_coefficient", where) * permuted) * h * size
        least += 2 * (t + permuted) * h * size
    seconds = {}
    for direction in ("forward", "backward"):
        share = _number(efficiency, direction, where)
        seconds[direction] = theirs / (gbps * 1024**3 * share) + latency * launches * len(cases) / 1e6
    return PermuteShares(forward=least / (seconds["forward"] * reference),
                         backward=least / (seconds["backward"] * reference),
                         forward_s=seconds["forward"], backward_s=seconds["backward"], least_bytes=least,
                         source=str(data.get("source", "")).strip())


def ranks_per_token(experts: int, k: int, n_e: int) -> float:
    """The GPUs a token's ``k`` experts sit on, on average, with its experts drawn uniformly without replacement
    from ``experts`` spread evenly over ``n_e`` GPUs: ``n_e (1 - C(E - E/n_e, k) / C(E, k))``."""
    per_gpu = experts // n_e
    return n_e * (1.0 - math.comb(experts - per_gpu, k) / math.comb(experts, k))


@dataclass(frozen=True)
class DispatchRows:
    """Rows of ``d_m`` values one MoE layer's forward moves per micro-batch on a GPU, read plus written:
    ``permute`` and ``unpermute`` (each ``input + output``), ``sort`` (the chunk sort and unsort together), and
    ``sent`` (the rows each all-to-all carries)."""

    permute: float
    unpermute: float
    sort: float
    sent: float

    @property
    def moved(self) -> float:
        return self.permute + self.unpermute + self.sort


def dispatch_rows(model: Transformer, config: TrainingConfig, dispatcher: str = "alltoall") -> DispatchRows:
    """The module docstring's rows for ``dispatcher``, at ``t = b_mu d_s / (n_c n_a)`` tokens a GPU (the all-to-all's
    own tokens: sequence-parallel shards under tensor parallelism)."""
    if dispatcher not in DISPATCHERS:
        raise UserInputError(f"recipe moe_dispatcher={dispatcher!r} must be one of {', '.join(DISPATCHERS)}")
    if not model.is_sparse:
        return DispatchRows(0.0, 0.0, 0.0, 0.0)
    t = config.b_mu * model.d_s / (config.n_c * config.n_a)
    k, E, n_e = model.experts_per_token, model.experts, config.n_e
    copies = t * k
    if dispatcher in ("deepep", "hybridep"):
        received = t * ranks_per_token(E, k, n_e)
        if dispatcher == "hybridep":  # permuted inside the communication kernels
            return DispatchRows(permute=0.0, unpermute=0.0, sort=0.0, sent=received)
        return DispatchRows(permute=received + copies, unpermute=copies + received, sort=0.0, sent=received)
    sort = 4 * copies * config.n_a if E // n_e > 1 else 0.0  # sorted after the tensor-parallel gather
    return DispatchRows(permute=t + copies, unpermute=copies + t, sort=sort, sent=copies)


def rows_between_nodes(model: Transformer, config: TrainingConfig, dispatcher: str,
                       gpus_per_node: int) -> tuple[float, int] | None:
    """``(rows, nodes)``: the rows of ``d_m`` values a GPU sends over the network per all-to-all under DeepEP's
    internode kernels, ``t q`` with ``q`` the nodes a token's experts sit on (:func:`ranks_per_token` over the
    ``nodes`` the expert- and tensor-parallel group spans), and that number of nodes; ``None`` where the reading
    does not apply (another dispatcher, a group inside one node, or experts that do not split evenly over its
    nodes): the all-to-all then carries :func:`dispatch_rows`' ``sent`` rows."""
    span = config.n_e * config.n_a
    if dispatcher != "deepep" or not model.is_sparse or span <= gpus_per_node or span % gpus_per_node:
        return None
    nodes = span // gpus_per_node
    if model.experts % nodes:
        return None
    t = config.b_mu * model.d_s / (config.n_c * config.n_a)
    return t * ranks_per_token(model.experts, model.experts_per_token, nodes), nodes


def dispatch_seconds(model: Transformer, config: TrainingConfig, beta_hbm: float, dispatcher: str = "alltoall",
                     recompute: float = 0.0, shares: PermuteShares | None = None) -> float:
    """Seconds one MoE layer's permutations take per micro-batch on a GPU whose HBM moves ``beta_hbm`` bytes a
    second: the forward (``1 + recompute`` times) at the measured forward share, the backward at its own."""
    rows = dispatch_rows(model, config, dispatcher)
    if rows.moved == 0:
        return 0.0
    shares = permute_shares() if shares is None else shares
    size = rows.moved * model.d_m * 2  # bf16
    return size * ((1 + recompute) / shares.forward + 1 / shares.backward) / beta_hbm
