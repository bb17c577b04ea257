"""One search question as a frozen value: what to search, under which options and assumptions."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from lgacc.errors import UserInputError, positive_finite
from lgacc.model.assumptions import DEFAULT_ASSUMPTIONS, Assumptions, critical_batch
from lgacc.model.config import Method, TrainingConfig, parse_method
from lgacc.model.evaluator import DEFAULT_MAX_OVERHEAD, Evaluation, check_schedule, evaluate, evaluate_many
from lgacc.model.evaluator.inputs import check_critical_batch
from lgacc.model.hardware import Hardware, load_hardware
from lgacc.model.transformer import Transformer, named_model

from .parallelism import Parallelism, parse_parallelism

__all__ = ["SearchRequest", "CANDIDATE_KEYS"]

#: The integer (and boolean ``offload``) arrays that describe candidate configurations.
CANDIDATE_KEYS = ("n_b", "n_l", "n_a", "n_mu", "b_mu", "offload")


@dataclass(frozen=True)
class SearchRequest:
    """The model, hardware, method and allowed parallelism of a search, with its options.

    ``partitioned`` is the state partition (``None``: the method's default);
    ``max_gpus`` is clamped to the largest count any configuration can use;
    ``schedule`` is the pipeline schedule whose closed forms the evaluator uses (``None``: the
    method's own pipeline, as the paper) and ``n_v`` its chunks per device.
    Build it with :meth:`create`, which parses names and validates every option.
    """

    model: Transformer
    hardware: Hardware
    method: Method
    parallelism: Parallelism
    max_gpus: int | None = None
    allow_offload: bool = True
    max_overhead: float = DEFAULT_MAX_OVERHEAD
    partitioned: bool | None = None
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS
    schedule: str | None = None
    n_v: int = 1
    #: Expert- and context-parallel degrees and the precision of every candidate (issue #36; the search over
    #: them is :mod:`lgacc.search.sparse`'s).
    n_e: int = 1
    n_c: int = 1
    precision: str = "bf16"

    @classmethod
    def create(cls, model, hardware, method, parallelism, *, max_gpus=None, allow_offload=True,
               max_overhead=DEFAULT_MAX_OVERHEAD, partitioned=None, assumptions=DEFAULT_ASSUMPTIONS,
               schedule=None, n_v=1, n_e=1, n_c=1, precision="bf16") -> "SearchRequest":
        model = named_model(model) if isinstance(model, str) else model
        if not isinstance(model, Transformer):
            raise UserInputError(f"model={model!r} must be a Transformer or a model name")
        if not isinstance(assumptions, Assumptions):
            raise UserInputError(f"assumptions={assumptions!r} must be an lgacc.model.assumptions.Assumptions")
        if positive_finite(max_overhead) is None:
            raise UserInputError(f"max_overhead={str(max_overhead)[:40]} must be a positive finite number "
                                 "(eq:overhead_condition's epsilon)")
        if not isinstance(allow_offload, (bool, np.bool_)):
            raise UserInputError(f"allow_offload={allow_offload!r} must be true or false")
        if partitioned is not None and not isinstance(partitioned, (bool, np.bool_)):
            raise UserInputError(f"partitioned={partitioned!r} must be true, false or unset")
        if max_gpus is not None:
            if isinstance(max_gpus, (bool, np.bool_)) or not isinstance(max_gpus, (int, float, np.integer, np.floating)) \
                    or not (isinstance(max_gpus, (int, np.integer)) or float(max_gpus).is_integer()) or max_gpus < 1:
                raise UserInputError(f"max_gpus={str(max_gpus)[:40]} must be a positive integer")
            # more GPUs than the largest configuration can use changes nothing: clamp (no int64 overflow downstream)
            largest = max(1, int(critical_batch(model, assumptions))) * model.d_l * 2 * model.d_a
            max_gpus = int(min(int(max_gpus), largest))
        check_critical_batch(model, assumptions)  # b_c beyond 2**62 (or infinite) is no batch to search below
        schedule = check_schedule(schedule, n_v)
        if isinstance(n_v, (bool, np.bool_)) or not isinstance(n_v, (int, np.integer)):
            raise UserInputError(f"n_v={n_v!r} must be a positive integer (chunks per device)")
        if n_v > model.d_l:
            raise UserInputError(f"n_v={n_v} exceeds the {model.name} layer count d_l={model.d_l} "
                                 "(a chunk needs at least one layer)")
        if not bool(assumptions.allows_layers(model.d_l, n_v)):
            raise UserInputError(f"n_v={n_v} does not divide the {model.name} layer count d_l={model.d_l}: no pipeline "
                                 "holds whole chunks (assumption divisible_layers)")
        degrees = TrainingConfig("baseline", n_b=1, n_e=n_e, n_c=n_c, precision=precision)  # the degrees' checks
        if degrees.n_e > 1 and not model.is_sparse:
            raise UserInputError(f"n_e={degrees.n_e} needs a model with experts; {model.name} is dense (experts: 0)")
        return cls(model, load_hardware(hardware), parse_method(method), parse_parallelism(parallelism), max_gpus,
                   bool(allow_offload), float(max_overhead), None if partitioned is None else bool(partitioned),
                   assumptions, schedule, int(n_v), degrees.n_e, degrees.n_c, degrees.precision)

    @property
    def is_partitioned(self) -> bool:
        """Whether the training state is partitioned: ``partitioned``, or the method's default when ``None``."""
        return self.method.default_partitioned if self.partitioned is None else self.partitioned

    @property
    def no_pipeline(self) -> bool:
        """"In the partitioned approach, we do not consider pipeline parallelism" (partitioned, not layered)."""
        return self.is_partitioned and not self.method.layered

    @property
    def baseline_like(self) -> bool:
        """Neither layered nor partitioned: the paper's baseline, whose reduction with a pipeline is not overlapped."""
        return not self.method.layered and not self.is_partitioned

    @property
    def batch_limit(self) -> int:
        """``floor(b_c)``: the largest batch (eq:critical_batch, scaled by the assumptions)."""
        return int(math.floor(critical_batch(self.model, self.assumptions)))

    def evaluate(self, candidates: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """:func:`lgacc.model.evaluator.evaluate_many` of the candidate arrays under this request's options."""
        c = candidates
        return evaluate_many(
            self.model, self.hardware, self.method, n_b=c["n_b"], n_l=c["n_l"], n_a=c["n_a"], n_mu=c["n_mu"],
            b_mu=c["b_mu"], offload=c["offload"], partitioned=self.partitioned, max_overhead=self.max_overhead,
            assumptions=self.assumptions, schedule=self.schedule, n_v=self.n_v, n_e=self.n_e, n_c=self.n_c,
            precision=self.precision,
        )

    def evaluate_config(self, config: TrainingConfig) -> Evaluation:
        """:func:`lgacc.model.evaluator.evaluate` of one configuration under this request's options and schedule."""
        return evaluate(self.model, self.hardware, config, max_overhead=self.max_overhead,
                        assumptions=self.assumptions, schedule=self.schedule, n_v=self.n_v)

    def config(self, candidates: Mapping[str, np.ndarray], i: int) -> TrainingConfig:
        """Candidate ``i`` as a :class:`TrainingConfig` with this request's state partition."""
        values = {k: np.asarray(candidates[k])[i].item() for k in CANDIDATE_KEYS}
        return TrainingConfig(self.method, partitioned=self.partitioned, n_e=self.n_e, n_c=self.n_c,
                              precision=self.precision, **values)
