"""Every choice the paper leaves open, as a named switch with the paper-faithful default.

:class:`Assumptions` is a frozen dataclass read by the evaluator
(:func:`lgacc.model.evaluator.evaluate_many`) and the search (:mod:`lgacc.search`).
The defaults reproduce the paper's printed tables; every other value is an
alternative reading that :mod:`lgacc.studies.sensitivity` and the assumptions page of
the book (``book/assumptions.md``, rows from :meth:`Assumptions.describe`) show
beside the default.  On the command line each field is ``--assume KEY=VALUE``
(:meth:`Assumptions.from_strings`).

The field names are an interface: add fields, do not rename them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Iterable

from lgacc.errors import UserInputError, positive_finite

__all__ = ["Assumptions", "CHOICES", "FIELDS", "GIB_TO_GB", "apply_to_hardware", "critical_batch", "paper_gb_bytes", "DEFAULT_ASSUMPTIONS"]

#: Factor that turns a quantity written in GiB into the same number of decimal GB: ``1e9 / 2**30``.
GIB_TO_GB = 1e9 / 2**30

#: field -> its allowed values, for the fields that take one of a few words
CHOICES: dict[str, tuple[str, ...]] = {
    "gb": ("GiB", "GB"),
    "tensor_placement": ("node", "inter-node"),
    "pipeline_placement": ("inter-node", "intra-node"),
    "pipeline_overlap": ("extra-micro-batches", "always", "never"),
    "convention": ("paper", "physical"),
    "dp_network": ("per-gpu", "ring"),
    "memory_limit": ("constraint", "output"),
    "scaling_grid": ("fine", "pow2"),
}
_CHOICES = CHOICES  # the name lgacc.paper.assumption_effects imports

#: field -> (meaning, the paper's words it rests on, or why the paper is silent)
FIELDS: dict[str, tuple[str, str]] = {
    "divisible_layers": (
        "A pipeline stage holds a whole number of layers: n_l divides d_l.",
        "The paper is silent; every printed configuration has n_l dividing d_l "
        "(modular pipeline: 'each device holds d_l / n_l layers').",
    ),
    "divisible_heads": (
        "Tensor parallelism splits whole heads evenly: n_a divides d_a (or d_a divides n_a when the "
        "heads cap is lifted).",
        "The paper is silent; it follows Megatron-LM (\\cite{shoeybi2020megatronlm}), which splits heads.",
    ),
    "heads_cap": (
        "At most one tensor-parallel device per head: n_a <= d_a.",
        "The paper is silent; Megatron-LM's method splits the attention heads. Without the cap the "
        "search looks up to the largest n_a the 25 % overhead cap allows (eq:overhead_condition with "
        "eq:tensor_intensity, over InfiniBand above the node size), and at least to d_a.",
    ),
    "gb": (
        "Whether the paper's 'GB' is binary (GiB, default) or decimal. 'GB' rescales every bandwidth and "
        "the GPU memory of a spec by 1e9 / 2**30 (the shipped spec stores GiB).",
        "The paper writes 'GB' throughout; its tables only come out as printed with GiB "
        "(table:hardware_bandwidth), some prose reads as decimal.",
    ),
    "tensor_placement": (
        "'node': tensor-parallel all-reduces use NVLink when n_a <= gpus_per_node, InfiniBand beyond; "
        "'inter-node': always InfiniBand.",
        "'tensor parallelism ... within a node' (sec:methodology); beyond a node the paper is silent.",
    ),
    "pipeline_placement": (
        "'inter-node': all pipeline traffic over InfiniBand; 'intra-node': over NVLink when the whole "
        "model-parallel group fits in a node (n_l n_a <= gpus_per_node).",
        "The paper is silent; its tables are reproduced with InfiniBand.",
    ),
    "pipeline_overlap": (
        "When pipeline transfers are overlapped: 'extra-micro-batches' (only if n_mu >= n_l (1 + nu_net / "
        "nu_l), then overhead max(0, nu_net / nu_l - 1), else nu_net / nu_l); 'always' (overlapped whenever "
        "the configuration overlaps, no extra micro-batch needed); 'never' (nu_net / nu_l).",
        "'This can be addressed by adding a small number of extra micro-batches, approximately given by "
        "nu_l / nu_net n_mu' (sec:resource_usage, Pipeline parallel).",
    ),
    "convention": (
        "'paper': an overlapped transfer costs max(0, nu_net / nu_op - 1), relative to the overlapped "
        "operation, as printed; 'physical': the non-overlapped time relative to the whole step, "
        "sum over passes of (overlapped compute / step compute) max(0, transfer / overlapped compute - 1).",
        "eq:overlap_condition, eq:overhead_condition state the overhead relative to the operation; the "
        "paper does not say how it adds up over a step.",
    ),
    "overlap_efficiency": (
        "Factor in [1e-6, 1] on the bandwidth of every overlapped transfer (data, overlapped pipeline, "
        "offload, PCIe).",
        "'In practice, there is a small overhead to overlapping the operations, but we ignore it' (1.0).",
    ),
    "critical_batch_scale": (
        "Multiplies the critical-batch constant K_c, hence b_c: the batch limit and the token count "
        "(steps x b_c x d_s) of the training time.",
        "eq:critical_batch with the paper's fitted constant (1.0).",
    ),
    "dp_network": (
        "Which links carry the data-parallel traffic: 'per-gpu' (every byte through the GPU's own InfiniBand "
        "link, the paper's count); 'ring' (as ring and hierarchical collectives move it: with g = min(n_b, "
        "G / n_a) peers of a group on each node, 1/g of the bytes through the GPU's card and (g - 1)/g over "
        "NVLink, the slower link binding; lgacc.model.formulas.ring).",
        "'In a data parallel scenario, network operations use a ring topology which effectively makes the "
        "entire Ethernet bandwidth available to a single device. We ignore this fact for simplicity' "
        "(sec:hardware, footnote); the appendix counts 8 (n_b - 1) p / n_gpu bytes per GPU.",
    ),
    "memory_limit": (
        "'constraint': a configuration must fit the GPU's memory (offloading when that is needed and "
        "possible); 'output': memory is not a rule, the fastest configuration is kept and its memory "
        "reported (no offload), so a curve shows where memory exceeds the GPU instead of stopping.",
        "The tables select configurations that fit ('All methods are possible from a memory perspective'); "
        "the scaling figures report the memory of the fastest configuration past 80 GB ('80 GB is enough to "
        "train models up to 280 trillion parameters', 'a quadrillion parameter model would need decades'), "
        "which the scaling analysis (lgacc.scaling) reads with 'output'.",
    ),
    "scaling_grid": (
        "The models a scaling limit is read between: 'fine' (log-spaced X models, refined to every grid model "
        "around the limit) or 'pow2' (x = 2^k, the paper's apparent grid); a limit is interpolated log-log "
        "along the curve between two neighbouring models. Read only by lgacc.scaling, never by the evaluator.",
        "The paper does not say which models it evaluated; its one-month and one-year pairs (4.5 T with "
        "13 GB, 50 T with 62 GB) come out on x = 2^k.",
    ),
}


#: The smallest ``overlap_efficiency`` taken: below it an overlapped transfer's overhead has no meaningful
#: (or no finite) value (issue #34: 5e-324 printed "inf").
MIN_OVERLAP_EFFICIENCY = 1e-6


@dataclass(frozen=True)
class Assumptions:
    """The paper's open choices; the defaults reproduce its printed tables (see :data:`FIELDS`)."""

    divisible_layers: bool = True
    divisible_heads: bool = True
    heads_cap: bool = True
    gb: str = "GiB"
    tensor_placement: str = "node"
    pipeline_placement: str = "inter-node"
    pipeline_overlap: str = "extra-micro-batches"
    convention: str = "paper"
    overlap_efficiency: float = 1.0
    critical_batch_scale: float = 1.0
    dp_network: str = "per-gpu"
    memory_limit: str = "constraint"
    scaling_grid: str = "fine"

    def __post_init__(self) -> None:
        for name in ("divisible_layers", "divisible_heads", "heads_cap"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise UserInputError(f"assumption {name}={value!r} must be true or false")
        for name, choices in CHOICES.items():
            value = getattr(self, name)
            if value not in choices:
                raise UserInputError(f"assumption {name}={value!r} must be one of {', '.join(choices)}")
        for name, lower, upper in (("overlap_efficiency", MIN_OVERLAP_EFFICIENCY, 1.0), ("critical_batch_scale", 0, None)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value == value:
                raise UserInputError(f"assumption {name}={str(value)[:40]} must be a number")
            number = positive_finite(value)  # 10**400 is a number no float holds
            if number is None or (upper is not None and number > upper) or number < lower:
                rule = (f"in [{lower:g}, 1] (a smaller factor makes an overlapped transfer over a million times "
                        "slower: its overhead would be unbounded)") if upper is not None else "positive and finite (a float)"
                raise UserInputError(f"assumption {name}={str(value)[:40]} must be {rule}")
            object.__setattr__(self, name, number)

    def replace(self, **changes: Any) -> "Assumptions":
        """A copy with ``changes`` (validated); an unknown field is a :class:`UserInputError`."""
        unknown = [k for k in changes if k not in FIELDS]
        if unknown:
            raise UserInputError(f"unknown assumption {unknown[0]!r}; expected one of {', '.join(FIELDS)}")
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_strings(cls, items: Iterable[str], base: "Assumptions | None" = None) -> "Assumptions":
        """Parse ``["key=value", ...]`` (the command line's ``--assume``) onto ``base`` (default: the defaults)."""
        base = cls() if base is None else base
        changes: dict[str, Any] = {}
        for item in items:
            key, sep, text = str(item).partition("=")
            key, text = key.strip().replace("-", "_"), text.strip()
            if not sep or not key:
                raise UserInputError(f"--assume {item!r} must be KEY=VALUE with KEY one of {', '.join(FIELDS)}")
            if key not in FIELDS:
                raise UserInputError(f"unknown assumption {key!r}; expected one of {', '.join(FIELDS)}")
            default = getattr(base, key)
            if isinstance(default, bool):
                lowered = text.lower()
                if lowered in ("true", "yes", "1", "on"):
                    changes[key] = True
                elif lowered in ("false", "no", "0", "off"):
                    changes[key] = False
                else:
                    raise UserInputError(f"assumption {key}={text!r} must be true or false")
            elif isinstance(default, float):
                try:
                    changes[key] = float(text)
                except ValueError:
                    raise UserInputError(f"assumption {key}={text!r} must be a number") from None
            else:
                changes[key] = text
        return base.replace(**changes)

    def describe(self) -> list[dict[str, Any]]:
        """One row per field: name, value, default, meaning, the paper's words (for the assumptions page)."""
        defaults = Assumptions()
        return [
            {
                "name": name,
                "value": getattr(self, name),
                "default": getattr(defaults, name),
                "choices": CHOICES.get(name, ()),
                "meaning": meaning,
                "paper": paper,
            }
            for name, (meaning, paper) in FIELDS.items()
        ]

    def allows_layers(self, d_l: int, n_l):
        """Where ``n_l`` pipeline stages are allowed for ``d_l`` layers: ``n_l`` divides ``d_l``
        under ``divisible_layers`` (``n_l <= d_l`` always holds separately). Works on arrays."""
        import numpy as np

        n_l = np.asarray(n_l)
        return (d_l % n_l == 0) if self.divisible_layers else np.ones(n_l.shape, bool)

    def allows_heads(self, d_a: int, n_a):
        """Where ``n_a`` tensor-parallel devices are allowed for ``d_a`` heads: ``n_a <= d_a`` under
        ``heads_cap``; the heads split evenly (``n_a`` divides ``d_a``, or ``d_a`` divides ``n_a`` beyond
        the cap) under ``divisible_heads``. Works on arrays."""
        import numpy as np

        n_a = np.asarray(n_a)
        ok = (n_a <= d_a) if self.heads_cap else np.ones(n_a.shape, bool)
        if self.divisible_heads:
            ok = ok & ((d_a % n_a == 0) | ((n_a > d_a) & (n_a % d_a == 0)))
        return ok

    def changed(self) -> dict[str, Any]:
        """The fields that differ from the defaults."""
        defaults = Assumptions()
        return {name: getattr(self, name) for name in FIELDS if getattr(self, name) != getattr(defaults, name)}


DEFAULT_ASSUMPTIONS = Assumptions()

_BANDWIDTH_FIELDS = (
    "gpu_memory_bandwidth_bytes_per_s",
    "nvlink_bandwidth_bytes_per_s",
    "pcie_bandwidth_bytes_per_s",
    "infiniband_bandwidth_bytes_per_s",
    "cpu_gpu_bandwidth_bytes_per_s",
    "ethernet_bandwidth_bytes_per_s",
    "nvme_bandwidth_bytes_per_s",
    "hdd_bandwidth_bytes_per_s",
)


def apply_to_hardware(hardware, assumptions: Assumptions = DEFAULT_ASSUMPTIONS):
    """``hardware`` as the assumptions read it.

    ``gb="GB"`` reads the spec's numbers as decimal GB: the GPU memory and every
    bandwidth are multiplied by ``1e9 / 2**30`` (the shipped ``a100-80gb`` spec is
    written entirely in GiB, which is the default reading).  Any other field is
    left alone.
    """
    if assumptions.gb == "GiB":
        return hardware
    changes = {name: getattr(hardware, name) * GIB_TO_GB for name in ("memory_bytes", *_BANDWIDTH_FIELDS)}
    return dataclasses.replace(hardware, **changes)


def paper_gb_bytes(assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> float:
    """Bytes in one of the paper's "GB" as the ``gb`` switch reads it: ``2**30`` (GiB) or ``1e9``.

    A table printed in the paper's GB is shown in this unit, so that under ``gb="GB"`` the
    spec's "600 GB/s" still reads 600 and only what is computed from it moves."""
    return 2**30 if assumptions.gb == "GiB" else 1e9


def critical_batch(model, assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> float:
    """``b_c`` of ``model`` with the critical-batch constant scaled by ``critical_batch_scale`` (eq:critical_batch)."""
    return model.critical_batch * assumptions.critical_batch_scale
