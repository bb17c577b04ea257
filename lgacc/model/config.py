"""Training configurations: method, parallel degrees, micro-batching and offloading.

The three strategies of sec:methodology:

* ``baseline``: standard data and pipeline parallelism, standard gradient
  accumulation, training state not partitioned;
* ``partitioned``: the same with the training state partitioned in the
  data-parallel direction (ZeRO stage 3);
* ``improved``: layered gradient accumulation and modular pipeline parallelism,
  state partitioned unless told otherwise.
"""

from __future__ import annotations

import enum
import numbers
from dataclasses import dataclass

from lgacc.errors import UserInputError, positive_int

__all__ = ["Method", "TrainingConfig", "parse_method", "parse_precision", "PRECISIONS", "FOLDING"]

#: Compute precisions: ``bf16`` (the paper's half precision, the spec's ``peak_flop_per_s``) and ``fp8`` (the
#: matrix products at the spec's dense FP8 peak; state, checkpoints and transfers as in bf16).
PRECISIONS = ("bf16", "fp8")

#: How the expert- and context-parallel degrees fold into the GPUs, as Megatron-Core folds them
#: (``megatron/core/parallel_state.py``, ``initialize_model_parallel``): the dense layers are laid out as
#: ``world = TP x CP x DP x PP`` (here ``n_a n_c n_b n_l``), so context parallelism multiplies the GPU count;
#: the experts are laid out over the same GPUs as ``world = ETP x EP x EDP x PP`` with the expert tensor-parallel
#: degree ``ETP = TP`` (its default), so expert parallelism does not add GPUs: it re-reads the data- and
#: context-parallel ranks, ``n_e`` of them holding different experts and ``n_b n_c / n_e`` (the expert
#: data-parallel degree) holding the same ones.  ``n_e`` must divide ``n_b n_c`` and the experts.
FOLDING = "n_gpu = n_b n_l n_a n_c; n_e divides n_b n_c (expert data-parallel degree n_b n_c / n_e) and the experts"


def parse_precision(value) -> str:
    """``bf16`` or ``fp8`` (case-insensitive), or one clear error."""
    text = str(value).strip().lower()
    if text not in PRECISIONS:
        raise UserInputError(f"unknown precision {value!r}; expected one of {', '.join(PRECISIONS)}")
    return text


class Method(str, enum.Enum):
    BASELINE = "baseline"
    PARTITIONED = "partitioned"
    IMPROVED = "improved"

    @property
    def layered(self) -> bool:
        """Layered gradient accumulation and modular pipeline (the improved method)."""
        return self is Method.IMPROVED

    @property
    def default_partitioned(self) -> bool:
        return self is not Method.BASELINE


def parse_method(value: "Method | str") -> Method:
    """A :class:`Method` from its name (case-insensitive), or a clear error."""
    if isinstance(value, Method):
        return value
    text = str(value).strip().lower()
    for method in Method:
        if method.value == text:
            return method
    raise UserInputError(f"unknown method {value!r}; expected one of {', '.join(m.value for m in Method)}")


def _count(field: str, value) -> int:
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, int)):
        value = int(value)  # numpy integers count like Python ints
    elif isinstance(value, numbers.Real) and not isinstance(value, (bool, float, int)):
        value = float(value)
    return positive_int("training configuration", field, value)


@dataclass(frozen=True)
class TrainingConfig:
    """One distributed training configuration (sec:distributed).

    ``partitioned=None`` means the method's default (baseline: no, partitioned and
    improved: yes); ``overlap_pipeline=None`` overlaps the pipeline transfers iff
    there are more micro-batches than pipeline stages (``n_mu > n_l``).
    """

    method: Method
    n_b: int
    n_l: int = 1
    n_a: int = 1
    n_mu: int = 1
    b_mu: int = 1
    offload: bool = False
    partitioned: bool | None = None
    overlap_pipeline: bool | None = None
    #: Expert-parallel and context-parallel degrees and the compute precision (issue #36); see :data:`FOLDING`.
    n_e: int = 1
    n_c: int = 1
    precision: str = "bf16"

    def __post_init__(self) -> None:
        object.__setattr__(self, "method", parse_method(self.method))
        object.__setattr__(self, "precision", parse_precision(self.precision))
        for field in ("n_b", "n_l", "n_a", "n_mu", "b_mu", "n_e", "n_c"):
            object.__setattr__(self, field, _count(field, getattr(self, field)))
        for field in ("offload", "partitioned", "overlap_pipeline"):
            if type(getattr(self, field)).__name__ == "bool_":  # numpy booleans count like Python's
                object.__setattr__(self, field, bool(getattr(self, field)))
        for field in ("offload",):
            if not isinstance(getattr(self, field), bool):
                raise UserInputError(f"training configuration: {field}={getattr(self, field)!r} must be true or false")
        for field in ("partitioned", "overlap_pipeline"):
            value = getattr(self, field)
            if value is not None and not isinstance(value, bool):
                raise UserInputError(f"training configuration: {field}={value!r} must be true, false or unset")

    @property
    def b(self) -> int:
        """Batch size ``n_b n_mu b_mu``."""
        return self.n_b * self.n_mu * self.b_mu

    @property
    def n_gpu(self) -> int:
        """GPUs ``n_b n_l n_a n_c`` (``n_b n_l n_a`` without context parallelism; ``n_e`` is folded into
        ``n_b n_c``, see :data:`FOLDING`)."""
        return self.n_b * self.n_l * self.n_a * self.n_c

    @property
    def n_expert_data(self) -> float:
        """Expert data-parallel degree ``n_b n_c / n_e`` (a whole number when the configuration folds)."""
        return self.n_b * self.n_c / self.n_e

    @property
    def is_partitioned(self) -> bool:
        return self.method.default_partitioned if self.partitioned is None else self.partitioned

    @property
    def overlaps_pipeline(self) -> bool:
        return self.n_mu > self.n_l if self.overlap_pipeline is None else self.overlap_pipeline

    def check_model(self, model, *, heads_cap: bool = True) -> None:
        """Rules that depend on the model: ``n_l <= d_l`` and (with ``heads_cap``) ``n_a <= d_a``."""
        if self.n_l > model.d_l:
            raise UserInputError(
                f"training configuration: n_l={self.n_l} exceeds the {model.name} layer count d_l={model.d_l} "
                "(a pipeline stage needs at least one layer)"
            )
        if self.n_e > 1 and not getattr(model, "experts", 0):
            raise UserInputError(f"training configuration: n_e={self.n_e} needs a model with experts; "
                                 f"{model.name} is dense (experts: 0)")
        if heads_cap and self.n_a > model.d_a:
            raise UserInputError(
                f"training configuration: n_a={self.n_a} exceeds the {model.name} head count d_a={model.d_a} "
                "(tensor parallelism splits the attention heads)"
            )
