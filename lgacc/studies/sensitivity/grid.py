"""The grid of the sensitivity study: each assumption the headline results rest on, and its range.

One job: say *what* is moved.  A :class:`Setting` holds every assumption at one
value; a :class:`Dimension` moves one of them over a range (the paper's value
included) and leaves the others at the paper's value; :func:`dimensions` lists
them for a spec; :func:`family_model` reshapes the X family at constant size.
Nothing here searches or judges.

May import: :mod:`lgacc.model.assumptions`, :mod:`lgacc.errors`, :mod:`lgacc.paper.equations`,
:mod:`lgacc.model.evaluator` (the default overhead cap), :mod:`lgacc.model.hardware`,
:mod:`lgacc.model.transformer`, :mod:`lgacc.scaling` (the Ethernet scenario's spec).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, Callable

from lgacc.errors import UserInputError
from lgacc.model.assumptions import Assumptions, apply_to_hardware
from lgacc.model.evaluator import DEFAULT_MAX_OVERHEAD
from lgacc.model.hardware import DEFAULT_HARDWARE, GIB, Hardware, load_hardware
from lgacc.model.transformer import Transformer, x_model
from lgacc.paper.equations import equation_name
from lgacc.scaling import SCALING_ASSUMPTIONS, scenario_hardware

__all__ = ["DIVISIBILITY", "Setting", "Dimension", "family_model", "dimensions"]


# --- one point of the grid ----------------------------------------------------------------------


@dataclass(frozen=True)
class Setting:
    """Every assumption the headline results depend on, at one value each.

    ``hardware`` is the spec the InfiniBand results use; ``ethernet_bytes_per_s``
    the Ethernet share per GPU of the Ethernet scenario (``None``: the spec's),
    kept apart so that moving it leaves the other results' searches identical.
    ``depth_factor`` reshapes the model family at constant parameter count
    (:func:`family_model`).  The assumptions start from the scaling analysis' reading
    (:data:`lgacc.scaling.SCALING_ASSUMPTIONS`: memory an output, tensor parallelism by the 25 % cap, the
    limits read on ``x = 2^k``), the reading of the claims the headline results are judged against; the
    X160 results are searched with memory a rule, as the trillion-parameter example's tables are.
    """

    hardware: Hardware
    assumptions: Assumptions = SCALING_ASSUMPTIONS
    max_overhead: float = DEFAULT_MAX_OVERHEAD
    depth_factor: float = 1.0
    ethernet_bytes_per_s: float | None = None

    def __post_init__(self) -> None:
        if self.ethernet_bytes_per_s == self.hardware.ethernet_bandwidth_bytes_per_s:
            object.__setattr__(self, "ethernet_bytes_per_s", None)  # one spelling of the spec's own share

    def model(self, x: int) -> Transformer:
        return family_model(x, self.depth_factor)

    def ethernet_hardware(self) -> Hardware:
        """The spec of sec:slow_network: the Ethernet share instead of InfiniBand."""
        spec = self.hardware
        if self.ethernet_bytes_per_s is not None:
            spec = spec.replace(ethernet_bandwidth_bytes_per_s=self.ethernet_bytes_per_s)
        return scenario_hardware(spec, "ethernet")

    def gpu_memory_bytes(self) -> float:
        """The GPU memory the evaluator sees (the ``gb`` switch rescales the spec's)."""
        return apply_to_hardware(self.hardware, self.assumptions).memory_bytes


def family_model(x: int, depth_factor: float = 1.0) -> Transformer:
    """X_[x], or the same-size model ``depth_factor`` times deeper and ``sqrt(depth_factor)`` times narrower.

    ``p ≈ (4 + 2 n_I) d_m^2 d_l`` is unchanged when ``d_l`` is multiplied by ``r`` and
    ``d_m`` divided by ``sqrt(r)``.  The head count ``d_a = x/2`` and the sequence
    length ``d_s = 16 x`` are kept, so the tensor-parallel degrees and the critical
    batch ``b_c ∝ p^(1/3) / d_s`` stay those of X_[x]; only the head size
    ``d_h = 2x / sqrt(r)`` and the depth move (both rounded to whole numbers).
    ``r = 1`` is X_[x] itself.
    """
    if not (isinstance(depth_factor, (int, float)) and depth_factor > 0 and math.isfinite(depth_factor)):
        raise UserInputError(f"depth factor {depth_factor!r} must be a positive number")
    base = x_model(x)
    if depth_factor == 1:
        return base
    d_l = max(1, round(base.d_l * depth_factor))
    d_h = max(1, round(base.d_h / math.sqrt(depth_factor)))
    return Transformer(
        name=f"X{x} (depth x{depth_factor:g})", d_l=d_l, d_m=base.d_a * d_h, d_a=base.d_a, d_h=d_h,
        d_s=base.d_s, n_I=base.n_I, source=f"X{x} reshaped: d_l x {depth_factor:g}, d_h / sqrt({depth_factor:g})",
    )


# --- the assumptions moved ----------------------------------------------------------------------


@dataclass(frozen=True)
class Dimension:
    """One assumption and the values it takes; ``apply(setting, value)`` moves it alone."""

    name: str
    title: str
    values: tuple[Any, ...]
    default: Any
    apply: Callable[[Setting, Any], Setting]
    label: Callable[[Any], str]
    why: str
    ordered: bool = True

    def setting(self, base: Setting, value: Any) -> Setting:
        return self.apply(base, value)


def _replace_assumptions(**changes) -> Callable[[Setting, Any], Setting]:
    def apply(setting: Setting, value: Any) -> Setting:
        resolved = {k: (value if v is None else v(value)) for k, v in changes.items()}
        return _setting_replace(setting, assumptions=setting.assumptions.replace(**resolved))

    return apply


def _setting_replace(setting: Setting, **changes) -> Setting:
    values = {f.name: getattr(setting, f.name) for f in fields(setting)}
    values.update(changes)
    return Setting(**values)


#: The divisibility switches of :class:`Assumptions`, by the value shown.
DIVISIBILITY = {
    "both": (True, True),
    "layers free": (False, True),
    "heads free": (True, False),
    "neither": (False, False),
}


def _times(value: float) -> str:
    return f"×{value:g}"


def dimensions(hardware: Hardware | str = DEFAULT_HARDWARE) -> tuple[Dimension, ...]:
    """The assumptions moved, each with its range; the spec's own node size and Ethernet share are included."""
    spec = load_hardware(hardware)
    nodes = tuple(sorted({4, 8, 16, 32, 72, spec.gpus_per_node}))
    ethernet = spec.ethernet_bandwidth_bytes_per_s
    return (
        Dimension(
            "critical_batch_scale", "Critical-batch constant K_c", (0.25, 0.5, 1.0, 2.0, 4.0, 8.0), 1.0,
            _replace_assumptions(critical_batch_scale=None), _times,
            "eq:critical_batch calibrates K_c on GPT-3 at 3.2 M tokens; Kaplan et al.'s own fit of B_crit is "
            "several times larger at the same loss",
        ),
        Dimension(
            "gpus_per_node", "GPUs per NVLink node", nodes, spec.gpus_per_node,
            lambda s, n: _setting_replace(s, hardware=s.hardware.replace(gpus_per_node=n)),
            lambda n: f"{n} GPUs",
            "the paper assumes 16-GPU HGX nodes; DGX/HGX A100 nodes have 8, NVL72 racks 72",
        ),
        Dimension(
            "max_overhead", f"Overhead cap ({equation_name('eq:overhead_condition')})", (0.10, 0.15, 0.25, 0.35, 0.50),
            DEFAULT_MAX_OVERHEAD, lambda s, v: _setting_replace(s, max_overhead=v), lambda v: f"{v:.0%}",
            "the paper caps each non-overlapped overhead at 25 %",
        ),
        Dimension(
            "overlap_efficiency", "Overlap efficiency", (0.5, 0.7, 0.9, 1.0), 1.0,
            _replace_assumptions(overlap_efficiency=None), _times,
            "the paper assumes perfect overlap; the factor multiplies the bandwidth of every overlapped transfer",
        ),
        Dimension(
            "gb", "Reading of the paper's 'GB'", ("GiB", "GB"), "GiB",
            _replace_assumptions(gb=None), str,
            "the tables come out as printed with GiB; decimal GB rescales every bandwidth and the GPU memory",
            ordered=False,
        ),
        Dimension(
            "divisibility", "Divisibility of layers and heads", tuple(DIVISIBILITY), "heads free",
            _replace_assumptions(divisible_layers=lambda v: DIVISIBILITY[v][0],
                                 divisible_heads=lambda v: DIVISIBILITY[v][1]),
            lambda v: {"both": "n_l | d_l, n_a | d_a", "layers free": "n_a | d_a only",
                       "heads free": "n_l | d_l only", "neither": "no divisibility"}[v],
            "the paper caps tensor parallelism by its overhead only ('any n_a the 25 % cap allows'); its printed "
            "configurations split whole layers",
            ordered=False,
        ),
        Dimension(
            "ethernet_bandwidth_gib_per_s", "Ethernet share per GPU",
            tuple(ethernet * f / GIB for f in (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)), ethernet / GIB,
            lambda s, v: _setting_replace(s, ethernet_bytes_per_s=v * GIB),
            lambda v: f"{v:g} GB/s",
            "sec:slow_network assumes a 400 Gb/s node link shared by 16 GPUs (25 Gb/s each way per GPU)",
        ),
        Dimension(
            "depth_factor", "Depth of the X family at the same size", (1 / 16, 1 / 4, 1.0, 4.0, 16.0), 1.0,
            lambda s, r: _setting_replace(s, depth_factor=r),
            lambda r: "X family" if r == 1 else (f"{r:g}× deeper" if r > 1 else f"{1 / r:g}× shallower"),
            "the paper picks d_l = sqrt(d_m) ('the exact configuration makes little difference')",
        ),
        Dimension(
            "convention", "How an overlapped transfer's overhead counts", ("paper", "physical"), "paper",
            _replace_assumptions(convention=None), str,
            "eq:overhead_condition states the overhead relative to the overlapped operation; 'physical' counts "
            "the non-overlapped time relative to the whole step",
            ordered=False,
        ),
        Dimension(
            "pipeline_overlap", "When pipeline transfers overlap", ("extra-micro-batches", "always", "never"),
            "extra-micro-batches", _replace_assumptions(pipeline_overlap=None), str,
            "the paper overlaps them with 'a small number of extra micro-batches'",
            ordered=False,
        ),
    )

