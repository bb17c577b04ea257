"""The result of evaluating one configuration: :class:`Evaluation` and its :class:`MemoryBreakdown`.

One job: what :func:`lgacc.model.evaluator.evaluate` returns: the frozen result types, the command
line's JSON object (:meth:`Evaluation.summary`) and the sentence for each rule a configuration
breaks (:func:`infeasibility_reasons`).  The numbers themselves are :mod:`lgacc.model.evaluator`'s,
which re-exports these names.
"""

from __future__ import annotations

import math

from dataclasses import dataclass, field
from typing import Any, Mapping

from ..assumptions import DEFAULT_ASSUMPTIONS, Assumptions
from ..config import TrainingConfig
from ..hardware import GIB, Hardware
from ..transformer import Transformer
from .mapping import CAPPED_OVERHEADS

__all__ = ["MemoryBreakdown", "Evaluation", "infeasibility_reasons"]


@dataclass(frozen=True)
class MemoryBreakdown:
    """Memory per GPU in bytes (sec:resource_usage, "Memory")."""

    state: float
    checkpoint: float
    buffers: float
    activations: float

    @property
    def offloadable(self) -> float:
        """Training state and activation checkpoints: may live in CPU memory."""
        return self.state + self.checkpoint

    @property
    def non_offloadable(self) -> float:
        """Buffers and layer activations: must stay on the GPU."""
        return self.buffers + self.activations

    @property
    def total(self) -> float:
        return self.offloadable + self.non_offloadable

    def in_gib(self) -> dict[str, float]:
        """The six printed columns of table:parallel_methods_memory, in the paper's GB (GiB)."""
        return {
            "state": self.state / GIB,
            "checkpoint": self.checkpoint / GIB,
            "buffers": self.buffers / GIB,
            "activations": self.activations / GIB,
            "offloadable": self.offloadable / GIB,
            "non_offloadable": self.non_offloadable / GIB,
        }


@dataclass(frozen=True)
class Evaluation:
    """One configuration evaluated: speed, memory, overheads and feasibility."""

    model: Transformer
    hardware: Hardware
    config: TrainingConfig
    b: int
    n_gpu: int
    efficiency: float
    time_days: float
    memory: MemoryBreakdown
    overheads: dict[str, float]
    feasible: bool
    reasons: tuple[str, ...]
    critical_batch: float = 0.0
    intensities: Mapping[str, float] = field(default_factory=dict)
    #: Seconds of one training step at the configuration's batch: ``flops / (n_gpu peak kernel_efficiency efficiency)``.
    step_time_s: float = 0.0
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS
    #: The pipeline schedule evaluated: the one asked for, or the method's own (baseline and
    #: partitioned: ``gpipe``, the paper's standard pipeline; improved: ``modular``).
    schedule: str = "gpipe"
    #: Chunks per device (``interleaved``, ``breadth-first``); 1 for the other schedules.
    n_v: int = 1
    #: The overheads of the sparse extension (:mod:`lgacc.model.evaluator.sparse`): ``expert`` (the all-to-all)
    #: and ``context`` (the key-value exchange); zero for a dense model without context parallelism.
    sparse_overheads: Mapping[str, float] = field(default_factory=dict)
    #: The share of a step the expert all-to-all takes, ``expert / (1 + expert)``.
    expert_share: float = 0.0
    #: The activation recomputation the step's work counts (``full``: the paper's ``8 b d_s p``).
    recompute: str = "full"

    def summary(self) -> dict[str, Any]:
        """The command line's JSON object."""
        return {
            "model": self.model.name,
            "method": self.config.method.value,
            "b": self.b,
            "n_gpu": self.n_gpu,
            "efficiency": self.efficiency,
            "time_days": self.time_days,
            "step_time_s": self.step_time_s,
            "memory_gib": self.memory.in_gib(),
            "overheads": dict(self.overheads),
            "feasible": self.feasible,
            "reasons": list(self.reasons),
            "schedule": self.schedule,
            "n_v": self.n_v,
            "n_e": self.config.n_e,
            "n_c": self.config.n_c,
            "precision": self.config.precision,
            "sparse_overheads": dict(self.sparse_overheads),
            "all_to_all_share": self.expert_share,
            "recompute": self.recompute,
        }


def infeasibility_reasons(model: Transformer, hardware: Hardware, config: TrainingConfig, r: Mapping[str, Any],
                          max_overhead: float, schedule: str | None = None, n_v: int = 1) -> list[str]:
    """One sentence per rule ``config`` breaks, from :func:`lgacc.model.evaluator.evaluate_many`'s scalars ``r``
    (``ok_*`` flags, memory, overheads): the evaluation's ``reasons``, which the browser calculator
    repeats word for word."""
    reasons = []
    if not r["ok_schedule"]:
        if model.d_l % (config.n_l * n_v):
            reasons.append(f"n_l n_v = {config.n_l} x {n_v} does not divide d_l={model.d_l}: each of the {schedule} "
                           "schedule's chunks holds whole layers (assumption divisible_layers)")
        else:
            reasons.append(f"n_mu={config.n_mu} is not a multiple of n_l={config.n_l}: the interleaved schedule with "
                           f"n_v={n_v} runs the micro-batches in rounds of n_l")
    if not r["ok_batch"]:
        reasons.append(f"batch b={config.b} exceeds the critical batch b_c={r['critical_batch']:.1f} (eq:critical_batch)")
    if not r["ok_micro_batches"]:
        reasons.append(f"n_mu={config.n_mu} < n_l={config.n_l}: the pipeline needs at least one micro-batch per stage")
    if not r["ok_layers_divide"]:
        reasons.append(f"n_l={config.n_l} does not divide d_l={model.d_l}: a pipeline stage holds whole layers "
                       "(assumption divisible_layers)")
    if not r["ok_heads"]:
        reasons.append(f"n_a={config.n_a} exceeds the head count d_a={model.d_a}: tensor parallelism splits the heads "
                       "(assumption heads_cap)")
    if not r["ok_heads_divide"]:
        reasons.append(f"n_a={config.n_a} does not split the d_a={model.d_a} heads evenly (assumption divisible_heads)")
    if not r["ok_memory"]:
        limit = hardware.memory_bytes / GIB
        if config.offload:
            reasons.append(
                f"non-offloadable memory {r['non_offloadable'] / GIB:.3g} GiB exceeds the GPU's {limit:g} GiB"
            )
        else:
            reasons.append(
                f"memory {r['total'] / GIB:.3g} GiB exceeds the GPU's {limit:g} GiB without offload"
            )
    for name in CAPPED_OVERHEADS + ("expert", "context"):
        if float(r.get(name, 0.0)) == math.inf:  # never "inf" in words: the overhead has no finite value
            reasons.append(f"{name} overhead is unbounded (larger than a float holds) and exceeds the maximum "
                           f"{max_overhead:g} (eq:overhead_condition)")
        elif r.get(name, 0.0) > max_overhead:
            reasons.append(f"{name} overhead {r[name]:.3g} exceeds the maximum {max_overhead:g} (eq:overhead_condition)")
    if not r.get("ok_experts", True):
        reasons.append(f"n_e={config.n_e} must divide the experts ({model.experts}) and n_b n_c = "
                       f"{config.n_b * config.n_c} (expert parallelism folds into the data- and context-parallel ranks)")
    if not r.get("ok_context", True):
        reasons.append(f"n_c={config.n_c} does not divide the sequence d_s={model.d_s} (context parallelism)")
    if not r.get("ok_sparse_offload", True):
        reasons.append("offload is not modelled with experts or context parallelism")
    return reasons
