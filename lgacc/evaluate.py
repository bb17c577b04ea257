"""Numeric evaluation of training configurations from the derived formulas.

The expressions of :mod:`lgacc.formulas` are lambdified once (numpy) and
evaluated over broadcastable arrays of configurations (:func:`evaluate_many`);
:func:`evaluate` is the one-configuration view of the same arrays.

Conventions (see ``book/assumptions.md``, each checked against the paper's tables):

* **Efficiency** is the product over named overheads ``o`` of ``1 / (1 + o)``:
  ``bubble`` (standard ``(n_l-1)/n_mu``, modular ``x n_l/d_l``); ``tensor``
  (``nu_link / nu_a``, never overlapped); ``pipeline`` (``nu_IB / nu_l`` when not
  overlapped, else zero if there are enough extra micro-batches); ``data``
  (gradient reduction: ``nu_IB / nu_b^pipe`` for the baseline with a pipeline, else
  overlapped, ``max(0, nu_IB / nu_b - 1)``); with offload, ``state_offload`` and
  ``checkpoint_offload`` (overlapped, against the CPU-GPU threshold) and ``pcie``:
  the HGX node's PCIe link carries both the offload and the InfiniBand traffic, so
  ``1 / nu_pcie_op = sum of 1 / nu`` over those transfers must stay above the PCIe
  threshold.
* **Time** follows the paper's convention: the number of tokens is that of
  100 k steps at the critical batch, ``steps b_c d_s``, whatever the batch used
  (a smaller batch takes proportionally more steps), at peak flop/s over the
  efficiency: ``8 steps b_c d_s p / (n_gpu c_gpu efficiency)``.
* **Memory** is per GPU in bytes; :meth:`MemoryBreakdown.in_gib` converts to the
  paper's GB, which are GiB (2**30 bytes).
* By default the paper's printed forms are evaluated (``form="paper"``);
  ``form="exact"`` evaluates the exact derived counts instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any, Mapping

import numpy as np
import sympy

from .config import Method, TrainingConfig, parse_method
from .errors import UserInputError
from .formulas import compute, memory
from .formulas import derivation as _derivation
from .hardware import GIB, Hardware, load_hardware
from .models import Transformer, named_model
from .symbols import b, d_a, d_l, d_m, d_s, n_a, n_b, n_I, n_l, n_mu, p, p_l

__all__ = [
    "OVERHEADS",
    "FORMS",
    "MemoryBreakdown",
    "Evaluation",
    "evaluate",
    "evaluate_many",
    "DEFAULT_STEPS",
    "DEFAULT_MAX_OVERHEAD",
]

#: Named overheads, in the order they are reported.
OVERHEADS = ("bubble", "tensor", "pipeline", "data", "state_offload", "checkpoint_offload", "pcie")
#: Overheads whose size is capped by ``max_overhead`` (the bubble is what the search trades off).
CAPPED_OVERHEADS = tuple(name for name in OVERHEADS if name != "bubble")
FORMS = ("paper", "exact")
DEFAULT_STEPS = 100_000
DEFAULT_MAX_OVERHEAD = 0.25
SECONDS_PER_DAY = 86_400.0

_ARGS = (d_s, d_m, d_l, d_a, n_I, p, p_l, b, n_b, n_l, n_a, n_mu)

#: Derivation keys of the intensities, by role.
_INTENSITIES = {
    "data_base": "data_intensity_base",
    "data_base_pipe": "data_intensity_base_pipe",
    "data_base_part": "data_intensity_base_partition",
    "data_impr": "data_intensity_improved",
    "data_impr_part": "data_intensity_improved_partition",
    "pipe_base": "pipeline_intensity_base",
    "pipe_impr": "pipeline_intensity_impr",
    "tensor": "tensor_intensity",
    "state_base": "state_offload_intensity_base",
    "state_base_part": "state_offload_intensity_base_part",
    "state_impr": "state_offload_intensity_impr",
    "state_impr_part": "state_offload_intensity_impr_part",
    "checkpoint": "checkpoint_offload_intensity",
    "bubble_standard": "bubble_standard",
    "bubble_modular": "bubble_modular",
}


@cache
def _expressions(form: str) -> dict[str, sympy.Expr]:
    if form not in FORMS:
        raise UserInputError(f"form={form!r} must be one of {', '.join(FORMS)}")
    exprs: dict[str, sympy.Expr] = {}
    for name, key in _INTENSITIES.items():
        d = _derivation(key)
        exprs[name] = d.exact if form == "exact" else d.paper
    exprs["state"] = memory.state_memory(False)
    exprs["state_part"] = memory.state_memory(True)
    exprs["checkpoint_memory"] = memory.checkpoint_memory()
    exprs["buffers"] = memory.buffer_memory()
    exprs["activations"] = memory.activation_memory()
    flops = _derivation("compute_per_batch")
    exprs["flops_per_batch"] = compute.batch_flops() if form == "exact" else flops.details["printed"]
    return exprs


@cache
def _functions(form: str) -> dict[str, Any]:
    return {name: sympy.lambdify(_ARGS, expr, "numpy") for name, expr in _expressions(form).items()}


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

    def summary(self) -> dict[str, Any]:
        """The command line's JSON object."""
        return {
            "model": self.model.name,
            "method": self.config.method.value,
            "b": self.b,
            "n_gpu": self.n_gpu,
            "efficiency": self.efficiency,
            "time_days": self.time_days,
            "memory_gib": self.memory.in_gib(),
            "overheads": dict(self.overheads),
            "feasible": self.feasible,
            "reasons": list(self.reasons),
        }


def _as_int_array(name: str, value) -> np.ndarray:
    array = np.asarray(value)
    if array.dtype == bool or not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)):
        raise UserInputError(f"{name} must be positive integers, got {value!r}")
    if np.issubdtype(array.dtype, np.floating):
        if not np.all(np.isfinite(array)) or not np.all(array == np.round(array)):
            raise UserInputError(f"{name} must be positive integers, got {value!r}")
        array = array.astype(np.int64)
    if np.any(array < 1):
        raise UserInputError(f"{name} must be positive integers (>= 1), got {value!r}")
    return array.astype(np.int64)


def _as_bool_array(name: str, value) -> np.ndarray:
    array = np.asarray(value)
    if array.dtype != bool:
        raise UserInputError(f"{name} must be true or false, got {value!r}")
    return array


def evaluate_many(
    model: Transformer | str,
    hardware: Hardware | str,
    method: Method | str,
    *,
    n_b,
    n_l=1,
    n_a=1,
    n_mu=1,
    b_mu=1,
    offload=False,
    partitioned=None,
    overlap_pipeline=None,
    max_overhead: float = DEFAULT_MAX_OVERHEAD,
    steps: int = DEFAULT_STEPS,
    form: str = "paper",
) -> dict[str, np.ndarray]:
    """Evaluate every configuration of broadcastable integer arrays at once.

    Returns arrays (broadcast shape) keyed ``efficiency, time_days, state,
    checkpoint, buffers, activations, offloadable, non_offloadable, total`` (bytes),
    ``feasible``, ``n_gpu``, ``b``, one array per name of :data:`OVERHEADS`, the
    binding intensities ``nu_<name>``, and one boolean per constraint ``ok_<rule>``.
    Configurations breaking a rule are flagged, not rejected: only malformed
    input (non-positive counts, unknown method) raises :class:`UserInputError`.
    """
    model = named_model(model) if isinstance(model, str) else model
    hardware = load_hardware(hardware)
    method = parse_method(method)
    if not (isinstance(max_overhead, (int, float)) and max_overhead > 0):
        raise UserInputError(f"max_overhead={max_overhead!r} must be a positive number")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise UserInputError(f"steps={steps!r} must be a positive integer")
    nb, nl, na, nmu, bmu = (
        _as_int_array(name, v) for name, v in (("n_b", n_b), ("n_l", n_l), ("n_a", n_a), ("n_mu", n_mu), ("b_mu", b_mu))
    )
    off = _as_bool_array("offload", offload)
    part = (
        np.asarray(method.default_partitioned)
        if partitioned is None
        else _as_bool_array("partitioned", partitioned)
    )
    nb, nl, na, nmu, bmu, off, part = np.broadcast_arrays(nb, nl, na, nmu, bmu, off, part)
    batch = nb * nmu * bmu
    n_gpu = nb * nl * na
    if overlap_pipeline is None:
        overlap = nmu > nl
    else:
        overlap = np.broadcast_to(_as_bool_array("overlap_pipeline", overlap_pipeline), nb.shape)

    f = _functions(form)
    model_args = (model.d_s, model.d_m, model.d_l, model.d_a, model.n_I, model.p, model.p_l)
    with np.errstate(divide="ignore", invalid="ignore"):
        fb, fl, fa, fmu, fbatch = (x.astype(float) for x in (nb, nl, na, nmu, batch))

        def call(name: str) -> np.ndarray:
            return np.broadcast_to(np.asarray(f[name](*model_args, fbatch, fb, fl, fa, fmu), dtype=float), nb.shape)

        nu_ib = hardware.threshold("infiniband")
        layered = method.layered

        # --- memory ---
        state = np.where(part, call("state_part"), call("state"))
        checkpoint = call("checkpoint_memory")
        buffers = call("buffers")
        activations = call("activations")
        offloadable = state + checkpoint
        non_offloadable = buffers + activations

        # --- overheads ---
        bubble = np.where(nl > 1, call("bubble_modular" if layered else "bubble_standard"), 0.0)

        tensor_link = np.where(na <= hardware.gpus_per_node, hardware.threshold("nvlink"), nu_ib)
        nu_tensor = np.where(na > 1, call("tensor"), np.inf)
        tensor = np.where(na > 1, tensor_link / nu_tensor, 0.0)

        nu_pipe = np.where(nl > 1, call("pipe_impr" if layered else "pipe_base"), np.inf)
        ratio_pipe = nu_ib / nu_pipe
        enough_extra = nmu >= nl * (1 + ratio_pipe)
        pipeline = np.where(
            nl > 1,
            np.where(overlap & enough_extra, np.maximum(0.0, ratio_pipe - 1), ratio_pipe),
            0.0,
        )

        if layered:
            nu_data = np.where(part, call("data_impr_part"), call("data_impr"))
            data_overlapped = np.ones(nb.shape, dtype=bool)
        else:
            nu_data = np.where(part, call("data_base_part"), np.where(nl > 1, call("data_base_pipe"), call("data_base")))
            data_overlapped = part | (nl == 1)
        nu_data = np.where(nb > 1, nu_data, np.inf)
        ratio_data = nu_ib / nu_data
        data = np.where(nb > 1, np.where(data_overlapped, np.maximum(0.0, ratio_data - 1), ratio_data), 0.0)

        nu_cpu = hardware.threshold("cpu_gpu")
        if layered:
            nu_state = np.where(part, call("state_impr_part"), call("state_impr"))
        else:
            nu_state = np.where(part, call("state_base_part"), call("state_base"))
        nu_state = np.where(off, nu_state, np.inf)
        nu_checkpoint = np.where(off, call("checkpoint"), np.inf)
        state_offload = np.where(off, np.maximum(0.0, nu_cpu / nu_state - 1), 0.0)
        checkpoint_offload = np.where(off, np.maximum(0.0, nu_cpu / nu_checkpoint - 1), 0.0)
        inverse = 1 / nu_state + 1 / nu_checkpoint + 1 / nu_data + 1 / nu_pipe
        inverse = inverse + np.where(na > hardware.gpus_per_node, 1 / nu_tensor, 0.0)
        nu_pcie = 1 / inverse
        pcie = np.where(off, np.maximum(0.0, hardware.threshold("pcie") / nu_pcie - 1), 0.0)

        overheads = {
            "bubble": bubble,
            "tensor": tensor,
            "pipeline": pipeline,
            "data": data,
            "state_offload": state_offload,
            "checkpoint_offload": checkpoint_offload,
            "pcie": pcie,
        }
        efficiency = np.ones(nb.shape)
        for value in overheads.values():
            efficiency = efficiency / (1 + value)

        b_c = model.critical_batch
        flops = np.asarray(f["flops_per_batch"](*model_args, b_c, fb, fl, fa, fmu), dtype=float)
        time_days = steps * flops / (n_gpu * hardware.peak_flop_per_s * efficiency) / SECONDS_PER_DAY

    memory_limit = hardware.memory_bytes
    ok = {
        "ok_batch": batch <= b_c,
        "ok_micro_batches": (nl == 1) | (nmu >= nl),
        "ok_layers": nl <= model.d_l,
        "ok_heads": na <= model.d_a,
        "ok_memory": np.where(off, non_offloadable <= memory_limit, offloadable + non_offloadable <= memory_limit),
        "ok_overheads": np.all([overheads[name] <= max_overhead for name in CAPPED_OVERHEADS], axis=0),
    }
    feasible = np.all(list(ok.values()), axis=0)
    result: dict[str, np.ndarray] = {
        "b": batch,
        "n_gpu": n_gpu,
        "efficiency": efficiency,
        "time_days": time_days,
        "state": state,
        "checkpoint": checkpoint,
        "buffers": buffers,
        "activations": activations,
        "offloadable": offloadable,
        "non_offloadable": non_offloadable,
        "total": offloadable + non_offloadable,
        "feasible": feasible,
        **overheads,
        **ok,
        "nu_data": nu_data,
        "nu_pipeline": nu_pipe,
        "nu_tensor": nu_tensor,
        "nu_state_offload": nu_state,
        "nu_checkpoint_offload": nu_checkpoint,
        "nu_pcie": np.where(off, nu_pcie, np.inf),
        "critical_batch": np.full(nb.shape, b_c),
    }
    return result


def _reasons(model: Transformer, hardware: Hardware, config: TrainingConfig, r: Mapping[str, Any], max_overhead: float) -> list[str]:
    reasons = []
    if not r["ok_batch"]:
        reasons.append(f"batch b={config.b} exceeds the critical batch b_c={r['critical_batch']:.1f} (eq:critical_batch)")
    if not r["ok_micro_batches"]:
        reasons.append(f"n_mu={config.n_mu} < n_l={config.n_l}: the pipeline needs at least one micro-batch per stage")
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
    for name in CAPPED_OVERHEADS:
        if r[name] > max_overhead:
            reasons.append(f"{name} overhead {r[name]:.3g} exceeds the maximum {max_overhead:g} (eq:overhead_condition)")
    return reasons


def evaluate(
    model: Transformer | str,
    hardware: Hardware | str,
    config: TrainingConfig,
    *,
    max_overhead: float = DEFAULT_MAX_OVERHEAD,
    steps: int = DEFAULT_STEPS,
    form: str = "paper",
) -> Evaluation:
    """Evaluate one configuration: efficiency, time, memory per GPU, overheads, feasibility.

    Raises :class:`UserInputError` for a configuration that does not fit the
    model (``n_l > d_l``, ``n_a > d_a``); other broken rules are listed in
    ``reasons`` and make ``feasible`` false.
    """
    model = named_model(model) if isinstance(model, str) else model
    hardware = load_hardware(hardware)
    if not isinstance(config, TrainingConfig):
        raise UserInputError(f"config must be a TrainingConfig, got {type(config).__name__}")
    config.check_model(model)
    arrays = evaluate_many(
        model,
        hardware,
        config.method,
        n_b=config.n_b,
        n_l=config.n_l,
        n_a=config.n_a,
        n_mu=config.n_mu,
        b_mu=config.b_mu,
        offload=config.offload,
        partitioned=config.is_partitioned,
        overlap_pipeline=config.overlaps_pipeline,
        max_overhead=max_overhead,
        steps=steps,
        form=form,
    )
    r = {key: value.item() for key, value in arrays.items()}
    reasons = _reasons(model, hardware, config, r, max_overhead)
    return Evaluation(
        model=model,
        hardware=hardware,
        config=config,
        b=int(r["b"]),
        n_gpu=int(r["n_gpu"]),
        efficiency=float(r["efficiency"]),
        time_days=float(r["time_days"]),
        memory=MemoryBreakdown(
            state=float(r["state"]),
            checkpoint=float(r["checkpoint"]),
            buffers=float(r["buffers"]),
            activations=float(r["activations"]),
        ),
        overheads={name: float(r[name]) for name in OVERHEADS},
        feasible=bool(r["feasible"]) and not reasons,
        reasons=tuple(reasons),
        critical_batch=float(r["critical_batch"]),
        intensities={key[3:]: float(r[key]) for key in r if key.startswith("nu_")},
    )
