"""What a search returns: the chosen configuration, its evaluation and what limits it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lgacc.model.config import Method, TrainingConfig
from lgacc.model.evaluator import Evaluation
from lgacc.model.hardware import Hardware
from lgacc.model.transformer import Transformer

from .parallelism import Parallelism

__all__ = ["SearchResult"]


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
