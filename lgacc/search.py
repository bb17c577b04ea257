"""The paper's configuration-selection rules as a search (sec:methodology, "Optimal configuration").

For a model, a hardware spec, a method and the allowed parallelism, :func:`fastest`
returns the fastest configuration that obeys the paper's rules, and
:func:`cheapest` the one with the fewest GPUs that trains within a target time
(``table:smaller_cluster``).  Nothing here is typed in from the paper's tables:
every configuration comes out of :func:`lgacc.evaluate.evaluate_many`.

The rules, as stated in "Optimal configuration" and appendix sec:resource_usage,
each a filter on candidate configurations (:func:`rule_masks`):

``structure``
    Only the allowed parallel dimensions exceed one.  A pipeline stage holds whole
    layers (``n_l`` divides ``d_l``) and tensor parallelism splits whole heads
    (``n_a`` divides ``d_a``).  "In the partitioned approach, we do not consider
    pipeline parallelism": ``n_l = 1``.
``critical batch``
    "We train at or slightly below the critical batch size": ``b <= b_c``, and for
    the fastest configuration ``b`` is the largest multiple of ``n_b b_mu`` below
    ``b_c`` (``n_mu = floor(b_c / (n_b b_mu))``).
``micro-batches``
    ``n_mu >= n_l``.  The extra micro-batches that overlap the pipeline transfers are
    not imposed: they are one more candidate, kept where faster (``table:parallel_methods_comparison``
    overlaps in the baseline and not in the improved method, as the paper says).
``GPU budget``
    ``n_gpu <= max_gpus`` when a budget is given.
``memory``
    The memory fits in the GPU (with offload: the non-offloadable part).
``overhead cap``
    Every overhead but the bubble is at most ``max_overhead`` (25 %,
    ``eq:overhead_condition``): the gradient reduction with pipeline parallelism
    and tensor parallelism (NVLink up to the node size, InfiniBand beyond).
``bottleneck``
    "The smallest micro-batch size that does not cause a communication
    bottleneck": the overlapped transfers (gradient reduction, state and checkpoint
    offload, the PCIe link shared by offload and InfiniBand) have zero overhead.
    The baseline's gradient reduction with a pipeline is not overlapped and is only
    capped.
``offload``
    "Offload when needed (and possible)": only when the configuration does not
    fit in GPU memory otherwise, and only if offloading is allowed.

Among the configurations that pass, the fastest wins (then fewer GPUs, then the
smaller micro-batch).  One rule is an order, not a filter: "In the baseline, we
select the highest possible pipeline parallelism", so with a pipeline allowed the
baseline first maximizes ``n_l``.

The search (:func:`fastest`) visits a pruned set of candidates; the exhaustive
:mod:`lgacc.search_reference` visits every integer configuration within bounds
with the same rules and objective, and the tests check the two agree.  Pruning:

* ``n_mu`` follows from ``(n_b, b_mu)`` (``critical batch``), and only the largest
  ``n_b`` for each ``n_mu`` is kept: the intensities depend on ``b / n_b``, not
  on ``n_b``, and more GPUs at the same efficiency are faster;
* micro-batch sizes above the smallest one that is bottleneck-free at ``n_mu =
  n_l`` are dropped (intensities grow with ``b_mu`` and ``n_mu``);
* candidates are visited by decreasing GPU count and the visit stops once the GPU
  count alone (at perfect efficiency) cannot beat the best time found.

The state partition.  Every search takes ``partitioned`` (``None``: the
method's default, partitioned for the partitioned and improved methods).  With
``partitioned=False`` the improved method is layered gradient accumulation and
the modular pipeline without the partition: the dotted line of
``fig:scaling_Ethernet`` ("For the smallest models, the partition can be
avoided", sec:slow_network).  The rules follow the partition, not the method's
name: the no-pipeline rule of ``structure`` holds for a partitioned method
without layered gradient accumulation, and the non-overlapped gradient
reduction (``bottleneck``) and the highest-pipeline order for an unpartitioned
one.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from functools import cache
from typing import Any, Mapping

import numpy as np

from .config import Method, TrainingConfig, parse_method
from .errors import UserInputError
from .assumptions import DEFAULT_ASSUMPTIONS, Assumptions, apply_to_hardware, critical_batch
from .evaluate import DEFAULT_MAX_OVERHEAD, Evaluation, evaluate, evaluate_many
from .hardware import Hardware, load_hardware
from .models import Transformer, named_model

__all__ = [
    "Parallelism",
    "parse_parallelism",
    "RULES",
    "SearchResult",
    "fastest",
    "cheapest",
    "rule_masks",
    "select",
    "divisors",
]


class Parallelism(str, enum.Enum):
    """Which parallel dimensions may exceed one, spelled as in ``table:parallel_methods_comparison``."""

    NONE = "None"
    DATA = "Data"
    DATA_PIPE = "Data + pipe"
    DATA_TENSOR = "Data + tensor"
    PIPE_TENSOR = "Pipe + tensor"
    THREE_D = "3d"

    @property
    def data(self) -> bool:
        return self in (Parallelism.DATA, Parallelism.DATA_PIPE, Parallelism.DATA_TENSOR, Parallelism.THREE_D)

    @property
    def pipe(self) -> bool:
        return self in (Parallelism.DATA_PIPE, Parallelism.PIPE_TENSOR, Parallelism.THREE_D)

    @property
    def tensor(self) -> bool:
        return self in (Parallelism.DATA_TENSOR, Parallelism.PIPE_TENSOR, Parallelism.THREE_D)


_PARALLELISM_KEYS = {"".join(ch for ch in p.value.lower() if ch.isalnum()): p for p in Parallelism}


def parse_parallelism(value: "Parallelism | str") -> Parallelism:
    """A :class:`Parallelism` from the paper's spelling or a loose one (``data+pipe``, ``3D``, ``none``)."""
    if isinstance(value, Parallelism):
        return value
    key = "".join(ch for ch in str(value).lower() if ch.isalnum())
    if key in _PARALLELISM_KEYS:
        return _PARALLELISM_KEYS[key]
    raise UserInputError(
        f"unknown parallelism {value!r}; expected one of {', '.join(repr(p.value) for p in Parallelism)}"
    )


#: The rules in the order they are reported, with what each requires.
RULES: dict[str, str] = {
    "structure": "allowed parallel dimensions only; n_l divides d_l, n_a divides d_a; no pipeline when partitioned",
    "critical batch": "b at or just below the critical batch b_c",
    "micro-batches": "at least n_l micro-batches",
    "GPU budget": "n_gpu within the budget",
    "memory": "memory within the GPU",
    "overhead cap": "each overhead except the bubble at most max_overhead",
    "bottleneck": "no communication bottleneck in the overlapped transfers (data, offload, PCIe)",
    "offload": "offload only when memory needs it, and only if allowed",
}

#: Overheads that must be zero for a configuration to be free of communication bottlenecks.
_OVERLAPPED = ("state_offload", "checkpoint_offload", "pcie")
_TOLERANCE = 1e-12


def divisors(n: int) -> np.ndarray:
    """The divisors of ``n`` in increasing order."""
    values = np.arange(1, n + 1)
    return values[n % values == 0]


def _is_partitioned(method: Method, partitioned: bool | None) -> bool:
    """Whether the training state is partitioned: ``partitioned``, or the method's default when ``None``."""
    return method.default_partitioned if partitioned is None else bool(partitioned)


def _no_pipeline(method: Method, partitioned: bool | None) -> bool:
    """"In the partitioned approach, we do not consider pipeline parallelism" (partitioned, not layered)."""
    return _is_partitioned(method, partitioned) and not method.layered


def _baseline_like(method: Method, partitioned: bool | None) -> bool:
    """Neither layered nor partitioned: the paper's baseline, whose reduction with a pipeline is not overlapped."""
    return not method.layered and not _is_partitioned(method, partitioned)


def _pipelined_baseline(method: Method, n_l: np.ndarray, partitioned: bool | None = None) -> np.ndarray:
    """Where the gradient reduction is not overlapped (baseline, unpartitioned, with a pipeline)."""
    return _baseline_like(method, partitioned) & (n_l > 1)


def _layers_allowed(model: Transformer, n_l, assumptions: Assumptions):
    """Pipeline degrees the assumptions allow: ``n_l`` divides ``d_l`` under ``divisible_layers``."""
    n_l = np.asarray(n_l)
    return (model.d_l % n_l == 0) if assumptions.divisible_layers else np.ones(n_l.shape, bool)


def _heads_allowed(model: Transformer, n_a, assumptions: Assumptions):
    """Tensor degrees the assumptions allow: ``n_a <= d_a`` (``heads_cap``), heads split evenly (``divisible_heads``)."""
    n_a = np.asarray(n_a)
    ok = (n_a <= model.d_a) if assumptions.heads_cap else np.ones(n_a.shape, bool)
    if assumptions.divisible_heads:
        ok = ok & ((model.d_a % n_a == 0) | ((n_a > model.d_a) & (n_a % model.d_a == 0)))
    return ok


def rule_masks(
    model: Transformer,
    hardware: Hardware,
    method: Method,
    parallelism: Parallelism,
    candidates: Mapping[str, np.ndarray],
    evaluated: Mapping[str, np.ndarray] | None,
    *,
    max_gpus: int | None,
    allow_offload: bool,
    just_below: bool,
    partitioned: bool | None = None,
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
) -> dict[str, np.ndarray]:
    """One boolean array per rule of :data:`RULES` (True where the candidate obeys it).

    ``candidates`` holds integer arrays ``n_b, n_l, n_a, n_mu, b_mu`` and a boolean
    ``offload``; ``evaluated`` is :func:`evaluate_many`'s output for them, or
    ``None`` to compute only the rules that need no evaluation.  Shared by the
    search and the exhaustive reference so that both apply the same rules.
    ``partitioned`` is the state partition the candidates were evaluated with
    (``None``: the method's default).
    """
    n_b, n_l, n_a, n_mu, b_mu, offload = (
        np.asarray(candidates[key]) for key in ("n_b", "n_l", "n_a", "n_mu", "b_mu", "offload")
    )
    b_c = critical_batch(model, assumptions)
    b = n_b * n_mu * b_mu
    structure = (
        ((n_b == 1) | parallelism.data)
        & ((n_l == 1) | (parallelism.pipe and not _no_pipeline(method, partitioned)))
        & ((n_a == 1) | parallelism.tensor)
        & (n_l <= model.d_l)
        & _layers_allowed(model, n_l, assumptions)
        & _heads_allowed(model, n_a, assumptions)
    )
    batch = b <= b_c
    if just_below:
        batch = batch & (b + n_b * b_mu > b_c)
    masks = {
        "structure": structure,
        "critical batch": batch,
        "micro-batches": n_mu >= n_l,
        "GPU budget": np.ones(b.shape, bool) if max_gpus is None else n_b * n_l * n_a <= max_gpus,
    }
    if evaluated is None:
        return masks
    r = evaluated
    masks["memory"] = np.asarray(r["ok_memory"], bool)
    masks["overhead cap"] = np.asarray(r["ok_overheads"], bool)
    free = np.ones(b.shape, bool)
    for name in _OVERLAPPED:
        free &= r[name] <= _TOLERANCE
    free &= (r["data"] <= _TOLERANCE) | _pipelined_baseline(method, n_l, partitioned)
    masks["bottleneck"] = free
    needs_offload = r["total"] > apply_to_hardware(hardware, assumptions).memory_bytes
    masks["offload"] = ~offload | (needs_offload & allow_offload)
    return masks


def _order_keys(method: Method, parallelism: Parallelism, c: Mapping[str, np.ndarray], r: Mapping[str, np.ndarray],
                partitioned: bool | None = None):
    """Sort keys, most significant last (``np.lexsort``): the paper's preference order."""
    keys = [-c["n_a"], c["offload"].astype(int), c["b_mu"], r["n_gpu"], r["time_days"]]
    if _baseline_like(method, partitioned) and parallelism.pipe:
        keys.append(-c["n_l"])  # "the highest possible pipeline parallelism"
    return keys


def select(
    method: Method,
    parallelism: Parallelism,
    candidates: Mapping[str, np.ndarray],
    evaluated: Mapping[str, np.ndarray],
    valid: np.ndarray,
    partitioned: bool | None = None,
) -> int | None:
    """Index of the preferred valid candidate (fastest, with the baseline's ``n_l`` first), or ``None``."""
    index = np.flatnonzero(valid)
    if index.size == 0:
        return None
    c = {k: np.asarray(v)[index] for k, v in candidates.items()}
    r = {k: np.asarray(v)[index] for k, v in evaluated.items()}
    order = np.lexsort(_order_keys(method, parallelism, c, r, partitioned))
    return int(index[order[0]])


@dataclass(frozen=True)
class SearchResult:
    """The configuration a search chose, its evaluation and what limits it.

    ``binding`` names, for a feasible result, why the next more parallel
    configurations (one more data-parallel instance, a smaller micro-batch, more
    pipeline or tensor parallelism) were not taken; for an infeasible request, the
    rule that removed the last candidates and the evaluator's reason.
    ``partitioned`` is the search's state-partition option (``None``: the
    method's default).
    """

    model: Transformer
    hardware: Hardware
    method: Method
    parallelism: Parallelism
    objective: str
    config: TrainingConfig | None
    evaluation: Evaluation | None
    binding: tuple[str, ...]
    candidates: int
    target_days: float | None = None
    partitioned: bool | None = None

    @property
    def feasible(self) -> bool:
        return self.evaluation is not None

    def summary(self) -> dict[str, Any]:
        """The command line's JSON object: ``lgacc evaluate``'s keys plus the configuration."""
        if self.evaluation is None:
            return {
                "model": self.model.name,
                "method": self.method.value,
                "parallelism": self.parallelism.value,
                "feasible": False,
                "reasons": list(self.binding),
            }
        c = self.config
        out = self.evaluation.summary()
        out.update(
            parallelism=self.parallelism.value,
            n_b=c.n_b,
            n_l=c.n_l,
            n_a=c.n_a,
            n_mu=c.n_mu,
            b_mu=c.b_mu,
            offload=c.offload,
            binding=list(self.binding),
        )
        return out


# --- candidate generation --------------------------------------------------------------------


@cache
def _levels(B: int, b_mu_max: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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


def _lattice(
    B: int, n_l: int, n_a: int, b_mu_max: int, max_gpus: int | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(n_b, n_mu, b_mu)`` just below the critical batch with ``n_mu >= n_l``, largest ``n_b`` per level."""
    n_b, n_mu, b_mu = _levels(B, 1 << max(0, b_mu_max - 1).bit_length())  # shared per power of two
    stop = int(np.searchsorted(b_mu, b_mu_max, side="right"))
    n_b, n_mu, b_mu = n_b[:stop], n_mu[:stop], b_mu[:stop]
    if max_gpus is not None:
        cap = max_gpus // (n_l * n_a)
        if cap < 1:
            empty = np.zeros(0, np.int64)
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
    return n_b[keep], n_mu[keep], b_mu[keep]


def _dimension_values(model: Transformer, method: Method, parallelism: Parallelism, max_gpus: int | None,
                      partitioned: bool | None = None, assumptions: Assumptions = DEFAULT_ASSUMPTIONS):
    n_ls = np.arange(1, model.d_l + 1) if parallelism.pipe and not _no_pipeline(method, partitioned) else np.array([1])
    n_ls = n_ls[_layers_allowed(model, n_ls, assumptions)]
    # without the heads cap, look up to two devices per head
    n_as = np.arange(1, (1 if assumptions.heads_cap else 2) * model.d_a + 1) if parallelism.tensor else np.array([1])
    n_as = n_as[_heads_allowed(model, n_as, assumptions)]
    if max_gpus is not None:
        n_ls = n_ls[n_ls <= max_gpus]
        n_as = n_as[n_as <= max_gpus]
    return n_ls, n_as


def _micro_batch_caps(
    model: Transformer,
    hardware: Hardware,
    method: Method,
    B: int,
    groups: list[tuple[int, int, bool]],
    max_overhead: float,
    max_gpus: int | None,
    partitioned: bool | None = None,
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
) -> dict[tuple[int, int, bool], int]:
    """Per ``(n_l, n_a, offload)``: a micro-batch size at or above the smallest bottleneck-free one.

    Probed at ``n_mu = n_l`` and the largest ``n_b`` on sizes 1..16 then doubling up to
    ``B // n_l``; larger micro-batches only lower the GPU count or the micro-batch count.
    """
    probes = sorted(set(range(1, 17)) | {2**k for k in range(5, max(5, B.bit_length()) + 1)} | {B})
    probes = np.array([p for p in probes if p <= B])
    rows = []
    for n_l, n_a, off in groups:
        for p in [*(q for q in probes if q < B // n_l), B // n_l]:
            if p < 1:
                break
            n_b = max(1, B // (p * n_l))
            if max_gpus is not None:
                n_b = max(1, min(n_b, max_gpus // (n_l * n_a)))
            rows.append((n_b, n_l, n_a, B // (p * n_b), p, off))
    caps = {group: 0 for group in groups}
    if not rows:
        return caps
    a = np.array(rows, dtype=np.int64)
    r = evaluate_many(
        model, hardware, method, n_b=a[:, 0], n_l=a[:, 1], n_a=a[:, 2], n_mu=a[:, 3], b_mu=a[:, 4],
        offload=a[:, 5].astype(bool), partitioned=partitioned, max_overhead=max_overhead, assumptions=assumptions,
    )
    free = np.ones(len(a), bool)
    for name in _OVERLAPPED:
        free &= r[name] <= _TOLERANCE
    free &= (r["data"] <= _TOLERANCE) | _pipelined_baseline(method, a[:, 1], partitioned)
    for (n_b, n_l, n_a, n_mu, p, off), ok in zip(rows, free):
        key = (n_l, n_a, bool(off))
        if caps[key] == 0 or (caps[key] < 0):
            pass
        if ok and (caps[key] == 0 or p < caps[key]):
            caps[key] = int(p)
    # A group with no bottleneck-free probe, not even at the largest micro-batch and a single
    # data-parallel instance (its most favourable point), is dropped (cap 0).
    return caps


def _prepare(model, hardware, method, parallelism):
    model = named_model(model) if isinstance(model, str) else model
    hardware = load_hardware(hardware)
    return model, hardware, parse_method(method), parse_parallelism(parallelism)


def _candidates(model, hardware, method, parallelism, *, max_gpus, allow_offload, max_overhead, partitioned=None,
                assumptions=DEFAULT_ASSUMPTIONS):
    """The pruned candidate set, as arrays, grouped by ``n_l`` (largest first)."""
    B = int(math.floor(critical_batch(model, assumptions)))
    n_ls, n_as = _dimension_values(model, method, parallelism, max_gpus, partitioned, assumptions)
    offloads = (False, True) if allow_offload else (False,)
    groups = [(int(n_l), int(n_a), off) for n_l in n_ls for n_a in n_as for off in offloads]
    caps = _micro_batch_caps(model, hardware, method, B, groups, max_overhead, max_gpus, partitioned, assumptions)
    columns: dict[str, list[np.ndarray]] = {k: [] for k in ("n_b", "n_l", "n_a", "n_mu", "b_mu", "offload")}
    for (n_l, n_a, off), cap in caps.items():
        n_b, n_mu, b_mu = _lattice(B, n_l, n_a, cap, max_gpus)
        if n_b.size == 0:
            continue
        columns["n_b"].append(n_b)
        columns["n_mu"].append(n_mu)
        columns["b_mu"].append(b_mu)
        columns["n_l"].append(np.full(n_b.shape, n_l))
        columns["n_a"].append(np.full(n_b.shape, n_a))
        columns["offload"].append(np.full(n_b.shape, off))
    if not columns["n_b"]:
        return {k: np.zeros(0, bool if k == "offload" else np.int64) for k in columns}
    return {k: np.concatenate(v) for k, v in columns.items()}


def _take(c: Mapping[str, np.ndarray], index) -> dict[str, np.ndarray]:
    return {k: np.asarray(v)[index] for k, v in c.items()}


def _evaluate(model, hardware, method, c, max_overhead, partitioned=None, assumptions=DEFAULT_ASSUMPTIONS):
    return evaluate_many(
        model, hardware, method, n_b=c["n_b"], n_l=c["n_l"], n_a=c["n_a"], n_mu=c["n_mu"], b_mu=c["b_mu"],
        offload=c["offload"], partitioned=partitioned, max_overhead=max_overhead, assumptions=assumptions,
    )


def _config(method: Method, c: Mapping[str, np.ndarray], i: int, partitioned: bool | None = None) -> TrainingConfig:
    return TrainingConfig(
        method,
        n_b=int(c["n_b"][i]),
        n_l=int(c["n_l"][i]),
        n_a=int(c["n_a"][i]),
        n_mu=int(c["n_mu"][i]),
        b_mu=int(c["b_mu"][i]),
        offload=bool(c["offload"][i]),
        partitioned=partitioned,
    )


def _all_valid(masks: Mapping[str, np.ndarray]) -> np.ndarray:
    return np.all(list(masks.values()), axis=0)


def _gpu_days(model, hardware, method, max_overhead, partitioned=None, assumptions=DEFAULT_ASSUMPTIONS) -> float:
    """``time x efficiency x n_gpu``: GPU-days at perfect efficiency, the same for every configuration."""
    r = evaluate_many(model, hardware, method, n_b=1, partitioned=partitioned, max_overhead=max_overhead,
                      assumptions=assumptions)
    return float(r["time_days"] * r["efficiency"] * r["n_gpu"])


def _infeasible_reason(model, hardware, method, parallelism, c, r, masks, partitioned=None, *,
                       max_overhead=DEFAULT_MAX_OVERHEAD, assumptions=DEFAULT_ASSUMPTIONS) -> tuple[str, ...]:
    """The rule that removed the last candidates, with the evaluator's reason for the nearest miss."""
    alive = np.ones(len(c["n_b"]), bool)
    for name in [*RULES, *(k for k in masks if k not in RULES)]:
        if name not in masks:
            continue
        survivors = alive & masks[name]
        if not survivors.any():
            if not alive.any():
                break
            # nearest miss: among candidates alive before this rule, the fastest
            index = np.flatnonzero(alive)
            best = int(index[np.argmin(np.asarray(r["time_days"])[index])]) if r is not None else int(index[0])
            config = _config(method, c, best, partitioned)
            detail = ""
            if r is not None:
                evaluation = evaluate(model, hardware, config, max_overhead=max_overhead, assumptions=assumptions)
                detail = "; ".join(evaluation.reasons) or _bottleneck_detail(evaluation, method)
            text = f"{name}: {RULES.get(name, 'within the target time')}"
            if detail:
                text += f" (e.g. n_b={config.n_b}, n_l={config.n_l}, n_a={config.n_a}, n_mu={config.n_mu}, b_mu={config.b_mu}, offload={config.offload}: {detail})"
            return (text,)
        alive = survivors
    return ("structure: no configuration of this parallelism fits the model",)


def _bottleneck_detail(evaluation: Evaluation, method: Method) -> str:
    over = {k: v for k, v in evaluation.overheads.items() if k in _OVERLAPPED + ("data",) and v > _TOLERANCE}
    if not over:
        return ""
    return ", ".join(f"{k} overhead {v:.3g}" for k, v in over.items())


def _neighbors(model: Transformer, method: Method, config: TrainingConfig, n_ls, n_as,
               assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> dict[str, TrainingConfig]:
    """The next more parallel configurations, with ``config``'s state partition."""
    B = int(math.floor(critical_batch(model, assumptions)))
    out = {}

    def just_below(n_b, n_l, n_a, b_mu, offload):
        n_mu = B // (n_b * b_mu)
        if n_mu < 1:
            return None
        return TrainingConfig(method, n_b=n_b, n_l=n_l, n_a=n_a, n_mu=n_mu, b_mu=b_mu, offload=offload,
                              partitioned=config.partitioned)

    c = config
    out["one more data-parallel instance"] = just_below(c.n_b + 1, c.n_l, c.n_a, c.b_mu, c.offload)
    if c.b_mu > 1:
        out["a smaller micro-batch"] = just_below(c.n_b, c.n_l, c.n_a, c.b_mu - 1, c.offload)
    larger_l = [int(v) for v in n_ls if v > c.n_l]
    if larger_l:
        out["more pipeline stages"] = just_below(c.n_b, larger_l[0], c.n_a, c.b_mu, c.offload)
    larger_a = [int(v) for v in n_as if v > c.n_a]
    if larger_a:
        out["more tensor parallelism"] = just_below(c.n_b, c.n_l, larger_a[0], c.b_mu, c.offload)
    return {k: v for k, v in out.items() if v is not None}


def _explain(model, hardware, method, parallelism, evaluation: Evaluation, *, max_gpus, allow_offload, max_overhead,
             just_below=True, partitioned=None, assumptions=DEFAULT_ASSUMPTIONS):
    """Why the chosen configuration is not more parallel: the rules its neighbours break, or 'slower'."""
    config = evaluation.config
    n_ls, n_as = _dimension_values(model, method, parallelism, None, partitioned, assumptions)
    found = []
    for what, neighbor in _neighbors(model, method, config, n_ls, n_as, assumptions).items():
        c = {k: np.array([getattr(neighbor, k)]) for k in ("n_b", "n_l", "n_a", "n_mu", "b_mu", "offload")}
        r = _evaluate(model, hardware, method, c, max_overhead, partitioned, assumptions)
        masks = rule_masks(model, hardware, method, parallelism, c, r, max_gpus=max_gpus, allow_offload=allow_offload,
                           just_below=just_below, partitioned=partitioned, assumptions=assumptions)
        broken = [name for name, m in masks.items() if not m[0]]
        if "offload" in broken and not neighbor.offload and allow_offload:
            broken = [b for b in broken if b != "offload"]
        if broken:
            found.append(f"{what}: breaks {', '.join(broken)}")
        else:
            found.append(f"{what}: allowed but slower ({float(r['time_days'][0]):.3g} d)")
    return tuple(found)


# --- the searches ----------------------------------------------------------------------------


_SINGLE_PASS = 16384
_CHUNK = 4096


def _branch_and_bound(model, hardware, method, parallelism, c, n_gpu, max_overhead, kwargs):
    # ``kwargs`` are rule_masks' keywords, ``partitioned`` among them
    """Visit candidates by decreasing ``n_l`` (the baseline with a pipeline) then decreasing GPU count, in chunks.

    A chunk is skipped, and the visit of the level ends, once its largest GPU count at
    perfect efficiency cannot beat the best time found: ``time x efficiency x n_gpu``
    is the same for every configuration (the paper's fixed token count).
    """
    partitioned = kwargs.get("partitioned")
    by_layers = _baseline_like(method, partitioned) and parallelism.pipe
    order = np.lexsort((-n_gpu, -c["n_l"])) if by_layers else np.argsort(-n_gpu, kind="stable")
    c = _take(c, order)
    n_gpu = n_gpu[order]
    levels = list(dict.fromkeys(c["n_l"].tolist())) if by_layers else [None]
    visited = 0
    gpu_days = None
    for level in levels:
        index = np.flatnonzero(c["n_l"] == level) if level is not None else np.arange(n_gpu.size)
        best_here = None
        start = 0
        while start < index.size:
            if best_here is not None and gpu_days / n_gpu[index[start]] > best_here[0] * (1 + 1e-12):
                break  # perfect efficiency on this many GPUs cannot beat the best time found
            part = index[start:start + _CHUNK]
            start += _CHUNK
            cc = _take(c, part)
            r = _evaluate(model, hardware, method, cc, max_overhead, partitioned, kwargs["assumptions"])
            visited += part.size
            if gpu_days is None:
                gpu_days = float(r["time_days"][0] * r["efficiency"][0] * r["n_gpu"][0])
            valid = _all_valid(rule_masks(model, hardware, method, parallelism, cc, r, **kwargs))
            i = select(method, parallelism, cc, r, valid, partitioned)
            if i is None:
                continue
            candidate = (float(r["time_days"][i]), cc, r, i)
            if best_here is None or _better(method, parallelism, candidate, best_here, partitioned):
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
) -> SearchResult:
    """The fastest configuration under the paper's rules (``table:parallel_methods_comparison``).

    ``partitioned`` sets the state partition (``None``: the method's default);
    ``partitioned=False`` with the improved method is the dotted line of
    ``fig:scaling_Ethernet``.  Raises nothing for an impossible request: the
    result has ``evaluation=None`` and ``binding`` names the rule that removed
    the last candidates.
    """
    model, hardware, method, parallelism = _prepare(model, hardware, method, parallelism)
    partitioned = _check_partitioned(partitioned)
    max_gpus = _check_search_options(model, max_gpus, max_overhead, allow_offload, assumptions)
    c = _candidates(model, hardware, method, parallelism, max_gpus=max_gpus, allow_offload=allow_offload,
                    max_overhead=max_overhead, partitioned=partitioned, assumptions=assumptions)
    n = len(c["n_b"])
    kwargs = dict(max_gpus=max_gpus, allow_offload=allow_offload, just_below=True, partitioned=partitioned,
                  assumptions=assumptions)
    if n == 0:
        return SearchResult(model, hardware, method, parallelism, "fastest", None, None,
                            ("critical batch: no configuration of this parallelism fits below the critical batch",), 0,
                            partitioned=partitioned)
    n_gpu = c["n_b"] * c["n_l"] * c["n_a"]
    visited = 0
    best = None
    if n <= _SINGLE_PASS:
        # small enough: one vectorized pass over every candidate
        r = _evaluate(model, hardware, method, c, max_overhead, partitioned, assumptions)
        visited = n
        i = select(method, parallelism, c, r, _all_valid(rule_masks(model, hardware, method, parallelism, c, r, **kwargs)),
                   partitioned)
        if i is not None:
            best = (float(r["time_days"][i]), c, r, i)
    else:
        best, visited = _branch_and_bound(model, hardware, method, parallelism, c, n_gpu, max_overhead, kwargs)
    if best is None:
        r = _evaluate(model, hardware, method, c, max_overhead, partitioned, assumptions)
        masks = rule_masks(model, hardware, method, parallelism, c, r, **kwargs)
        reason = _infeasible_reason(model, hardware, method, parallelism, c, r, masks, partitioned,
                                    max_overhead=max_overhead, assumptions=assumptions)
        return SearchResult(model, hardware, method, parallelism, "fastest", None, None, reason, n, partitioned=partitioned)
    _, cc, r, i = best
    config = _config(method, cc, i, partitioned)
    evaluation = evaluate(model, hardware, config, max_overhead=max_overhead, assumptions=assumptions)
    binding = _explain(model, hardware, method, parallelism, evaluation, max_gpus=max_gpus, allow_offload=allow_offload,
                       max_overhead=max_overhead, partitioned=partitioned, assumptions=assumptions) if explain else ()
    return SearchResult(model, hardware, method, parallelism, "fastest", config, evaluation, binding, visited,
                        partitioned=partitioned)


def _check_search_options(model, max_gpus, max_overhead, allow_offload, assumptions) -> int | None:
    """Validate the search's options; ``max_gpus`` is returned clamped to the largest useful count."""
    if not isinstance(assumptions, Assumptions):
        raise UserInputError(f"assumptions={assumptions!r} must be an lgacc.assumptions.Assumptions")
    if isinstance(max_overhead, (bool, np.bool_)) or not isinstance(max_overhead, (int, float, np.integer, np.floating)) \
            or not (0 < max_overhead < float("inf")):
        raise UserInputError(f"max_overhead={max_overhead!r} must be a positive number (eq:overhead_condition's epsilon)")
    if not isinstance(allow_offload, (bool, np.bool_)):
        raise UserInputError(f"allow_offload={allow_offload!r} must be true or false")
    if max_gpus is None:
        return None
    if isinstance(max_gpus, (bool, np.bool_)) or not isinstance(max_gpus, (int, float, np.integer, np.floating)) \
            or not float(max_gpus).is_integer() or max_gpus < 1:
        raise UserInputError(f"max_gpus={max_gpus!r} must be a positive integer")
    # more GPUs than the largest configuration can use changes nothing: clamp (no int64 overflow downstream)
    largest = max(1, int(critical_batch(model, assumptions))) * model.d_l * 2 * model.d_a
    return int(min(int(max_gpus), largest))


def _check_partitioned(partitioned) -> bool | None:
    """``partitioned`` as given (``None``, True or False), or a clear error."""
    if partitioned is not None and not isinstance(partitioned, (bool, np.bool_)):
        raise UserInputError(f"partitioned={partitioned!r} must be true, false or unset")
    return None if partitioned is None else bool(partitioned)


def _better(method, parallelism, a, b, partitioned=None) -> bool:
    """Whether candidate ``a`` is preferred to ``b`` (both ``(time, candidates, evaluated, index)``)."""
    c = {k: np.array([a[1][k][a[3]], b[1][k][b[3]]]) for k in a[1]}
    r = {k: np.array([a[2][k][a[3]], b[2][k][b[3]]]) for k in ("n_gpu", "time_days")}
    return int(np.lexsort(_order_keys(method, parallelism, c, r, partitioned))[0]) == 0


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
) -> SearchResult:
    """The fewest GPUs that train within ``target_days`` under the paper's rules (``table:smaller_cluster``).

    ``partitioned`` sets the state partition (``None``: the method's default).

    The batch may be well below the critical batch (the paper's smaller clusters
    do so); ties on the GPU count go to the faster configuration.
    Candidates: for each ``(n_l, n_a, offload, b_mu)`` of the fastest search, every
    ``n_b`` with enough GPUs to meet the target at perfect efficiency, and the
    largest ``n_mu`` below the critical batch whose memory fits (efficiency grows
    with ``n_mu``, and so does the checkpoint memory).
    """
    model, hardware, method, parallelism = _prepare(model, hardware, method, parallelism)
    if not (isinstance(target_days, (int, float)) and not isinstance(target_days, bool) and target_days > 0):
        raise UserInputError(f"target time {target_days!r} must be a positive number of days")
    partitioned = _check_partitioned(partitioned)
    max_gpus = _check_search_options(model, max_gpus, max_overhead, allow_offload, assumptions)
    c = _candidates(model, hardware, method, parallelism, max_gpus=max_gpus, allow_offload=allow_offload,
                    max_overhead=max_overhead, partitioned=partitioned, assumptions=assumptions)
    kwargs = dict(max_gpus=max_gpus, allow_offload=allow_offload, just_below=False, partitioned=partitioned,
                  assumptions=assumptions)
    if len(c["n_b"]) == 0:
        return SearchResult(model, hardware, method, parallelism, "cheapest", None, None,
                            ("critical batch: no configuration of this parallelism fits below the critical batch",), 0, target_days,
                            partitioned)
    gpu_days = _gpu_days(model, hardware, method, max_overhead, partitioned, assumptions)
    B = int(math.floor(critical_batch(model, assumptions)))
    # Every data-parallel degree of every (n_l, n_a, offload, b_mu) group, enough GPUs to possibly meet the target.
    groups = {(int(l), int(a), bool(o), int(m)) for l, a, o, m in zip(c["n_l"], c["n_a"], c["offload"], c["b_mu"])}
    columns: dict[str, list] = {k: [] for k in ("n_b", "n_l", "n_a", "n_mu", "b_mu", "offload")}
    for n_l, n_a, off, b_mu in groups:
        top = B // (b_mu * n_l)
        if max_gpus is not None:
            top = min(top, max_gpus // (n_l * n_a))
        needed = gpu_days / (target_days * n_l * n_a) * (1 - 1e-9)
        if not math.isfinite(needed) or needed > top:
            continue
        low = max(1, math.ceil(needed))
        if top < low:
            continue
        n_b = np.arange(low, top + 1)
        columns["n_b"].append(n_b)
        columns["n_mu"].append(B // (n_b * b_mu))
        for key, value in (("n_l", n_l), ("n_a", n_a), ("b_mu", b_mu), ("offload", off)):
            columns[key].append(np.full(n_b.shape, value))
    if not columns["n_b"]:
        return SearchResult(model, hardware, method, parallelism, "cheapest", None, None,
                            (f"target time: even at perfect efficiency {target_days:g} d needs more GPUs than the rules allow",),
                            0, target_days, partitioned)
    cand = {k: np.concatenate(v) for k, v in columns.items()}
    # Efficiency grows with n_mu and the memory with it: take the largest n_mu whose memory fits (bisection).
    hi = cand["n_mu"].copy()
    lo = np.minimum(cand["n_l"], hi)
    r = _evaluate(model, hardware, method, cand, max_overhead, partitioned, assumptions)
    fits = np.asarray(r["ok_memory"], bool)
    visited = hi.size
    probe = dict(cand)
    probe["n_mu"] = lo
    r_lo = _evaluate(model, hardware, method, probe, max_overhead, partitioned, assumptions)
    search = ~fits & np.asarray(r_lo["ok_memory"], bool)
    lo_s, hi_s = lo[search], hi[search]  # memory fits at lo, not at hi
    sub = _take(cand, search)
    while (hi_s - lo_s > 1).any():
        mid = (lo_s + hi_s) // 2
        sub["n_mu"] = mid
        ok = np.asarray(_evaluate(model, hardware, method, sub, max_overhead, partitioned, assumptions)["ok_memory"], bool)
        visited += mid.size
        lo_s = np.where(ok, mid, lo_s)
        hi_s = np.where(ok, hi_s, mid)
    cand["n_mu"] = cand["n_mu"].copy()
    cand["n_mu"][search] = lo_s
    r = _evaluate(model, hardware, method, cand, max_overhead, partitioned, assumptions)
    masks = rule_masks(model, hardware, method, parallelism, cand, r, **kwargs)
    reach = np.asarray(r["time_days"]) <= target_days
    valid = _all_valid(masks) & reach
    if not valid.any():
        reason = _infeasible_reason(model, hardware, method, parallelism, cand, r, masks | {"target time": reach}, partitioned,
                                    max_overhead=max_overhead, assumptions=assumptions)
        return SearchResult(model, hardware, method, parallelism, "cheapest", None, None, reason, visited, target_days,
                            partitioned)
    keys = [-cand["n_a"], cand["offload"].astype(int), cand["b_mu"], r["time_days"], r["n_gpu"]]
    index = np.flatnonzero(valid)
    order = np.lexsort([np.asarray(k)[index] for k in keys])
    i = int(index[order[0]])
    config = _config(method, cand, i, partitioned)
    evaluation = evaluate(model, hardware, config, max_overhead=max_overhead, assumptions=assumptions)
    binding = (f"target time {target_days:g} d: {evaluation.time_days:.3g} d on {evaluation.n_gpu} GPUs at efficiency {evaluation.efficiency:.3g}",)
    return SearchResult(model, hardware, method, parallelism, "cheapest", config, evaluation, binding, visited, target_days,
                        partitioned)
