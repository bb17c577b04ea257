"""The calibrated model, evaluated: expected step time, training time and memory of configurations.

:func:`expected_many` evaluates broadcastable arrays of configurations at once (the search uses
it), :func:`expected` one configuration (the command line's ``expected_*`` keys).  Both run the
programs of :func:`programs` (:mod:`.program`: the derived expressions of :mod:`.step` and
:mod:`.memory` kept as data, built once with sympy and then read from the results cache).

Inputs are read as the ideal model reads them: the model and configuration, the hardware under
the ``gb`` assumption, the critical batch under ``critical_batch_scale``.  The expected training
time is the ideal model's token count (``steps`` at the critical batch) at the configuration's
expected throughput: ``steps (b_c / b) T_step / 86400`` days.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any, Mapping

import numpy as np

from lgacc.model.hardware.links import GIB
from lgacc.paths import PACKAGE

from ..assumptions import DEFAULT_ASSUMPTIONS, Assumptions, apply_to_hardware, critical_batch
from ..config import Method, TrainingConfig, parse_method
from ..hardware import Hardware, load_hardware
from ..transformer import Transformer
from ..evaluator.inputs import as_count, as_model, check_chunks, check_config, check_schedule
from ..evaluator.mapping import default_schedule
from .parameters import Calibration, fitted_calibration
from .program import Program, run
from .recipe import DEFAULT_RECIPE, Recipe, loss_traffic, rope_traffic, zero_stage
from .store import load_or_build

__all__ = ["programs", "inputs", "evaluate_inputs", "expected_many", "expected", "Expected", "STEP_PARTS", "MEMORY_PARTS", "SECONDS_PER_DAY",
           "SCHEDULE_INPUTS"]

SECONDS_PER_DAY = 86_400.0
#: The additive parts of the step time, as :func:`lgacc.model.calibrated.step.step_terms` names them.
STEP_PARTS = ("pipeline", "bubble", "data_parallel", "optimizer", "host", "fixed")
#: The parts of the memory per GPU, as :func:`lgacc.model.calibrated.memory.memory_terms` names them.
MEMORY_PARTS = ("weights", "gradients", "optimizer", "buffers", "activations", "framework")
#: What the main program reads of a schedule (:func:`lgacc.model.calibrated.step.schedule_numbers`).
SCHEDULE_INPUTS = ("R_ramp", "chunks", "m_flight", "c_window", "zb", "lw")


def _build() -> dict[str, Program]:
    from ..formulas.schedules import SCHEDULES
    from .memory import memory_terms
    from .program import compile_program
    from .step import schedule_numbers, step_terms
    from .symbols import TABLE

    outputs = dict(step_terms())
    outputs.update({f"memory_{name}": expr for name, expr in memory_terms().items()})
    names = {symbol: name for name, symbol, _, _ in TABLE}
    built = {"main": compile_program(outputs, names)}
    for name in SCHEDULES:
        built[f"schedule:{name}"] = compile_program(schedule_numbers(name), names)
    return built


#: The files whose expressions the programs are compiled from: change one and they are rebuilt.
_SOURCES = (
    *sorted((PACKAGE / "model" / "calibrated").glob("*.py")),
    PACKAGE / "model" / "symbols.py",
    PACKAGE / "model" / "formulas" / "model.py",
    PACKAGE / "model" / "formulas" / "schedules.py",
    PACKAGE / "model" / "formulas" / "bubble.py",
)


@cache
def programs() -> dict[str, Program]:
    """``main`` (every step and memory term) and ``schedule:<name>`` (its numbers), as data: built once with
    sympy, kept on disk as JSON under a key of the source files that define them (:mod:`.store`)."""
    return load_or_build("calibrated-programs", _SOURCES, _build)


def _hardware_inputs(hardware: Hardware) -> dict[str, float]:
    """The spec's quantities the model reads; links per direction (specs store input + output)."""
    return {
        "c": hardware.peak_flop_per_s,
        "beta_hbm": hardware.gpu_memory_bandwidth_bytes_per_s,
        "beta_nvl": hardware.nvlink_bandwidth_bytes_per_s / 2,
        "beta_ib": hardware.infiniband_bandwidth_bytes_per_s / 2,
        "G": float(hardware.gpus_per_node),
        "e_max": hardware.gemm_max_efficiency,
    }


def megatron_host_inputs(t_h: float, calibration: Calibration, transformer_engine: bool = False) -> dict[str, float]:
    """The host's terms for a recipe whose ``host_framework`` is ``megatron`` or ``megatron_te`` (:mod:`.host`):
    ``t_h`` plain PyTorch's and what Megatron-Core's layer costs beyond it (and, with ``transformer_engine``, what
    Transformer Engine's layer costs beyond Megatron-Core's own); Megatron-Core's own terms once a step, once a layer
    and step and once a micro-batch; its recomputed forward, measured beside its plain layer, in place of PyTorch's
    (Transformer Engine's recomputed forward was not measured: Megatron-Core's own is read).  The selective
    recomputation and the overlapped reduction measured beside it are not carried
    (:func:`.host.megatron_host_variants`: the first recomputes an unfused attention core, the runs' is fused; the
    second is about the spread between the GPU's leases, and a measured step leaves no room for it)."""
    te_layer = calibration.host_te_layer_s if transformer_engine else 0.0
    return {"t_h": t_h + calibration.host_megatron_layer_s + te_layer, "t_hR": calibration.host_megatron_recompute_s,
            "t_hs": calibration.host_megatron_step_s, "t_hl": calibration.host_megatron_step_layer_s,
            "t_hm": calibration.host_megatron_micro_batch_s}


def _calibration_inputs(calibration: Calibration) -> dict[str, float]:
    return {
        "kappa": calibration.kappa, "eta": calibration.eta, "xi": calibration.xi, "T_0": calibration.T_0,
        "e_att": calibration.attention_efficiency, "t_k": calibration.kernel_latency_s,
        "e_hbm": calibration.hbm_efficiency, "alpha_nvl": calibration.nvlink_latency_s,
        "e_nF": calibration.norm_forward_efficiency, "e_nB": calibration.norm_backward_efficiency,
        "alpha_ib": calibration.infiniband_latency_s, "k_B": calibration.backward_bytes,
        "phi": calibration.fragmentation, "M_0": calibration.framework_gib * GIB,
        "t_h": calibration.host_layer_s, "t_hR": calibration.host_recompute_s,
        "t_hs": calibration.host_step_s, "t_hl": calibration.host_step_layer_s, "t_hm": calibration.host_micro_batch_s,
    }


def _link_inputs(hardware: Hardware, calibration: Calibration) -> dict[str, float]:
    """``eta_nvl``, ``alpha_nvl`` and ``delta_nvl``: a fit measured on the GPU's own node, else the published NCCL
    table of its NVLink generation (:func:`.links.nvlink_constants`), else the calibration's (the reference table's
    ``eta``, ``nvlink_latency_s``, no latency per rank)."""
    from .links import nvlink_constants  # here: python -m lgacc.model.calibrated.links runs cleanly

    found = nvlink_constants(hardware.nvlink_bandwidth_bytes_per_s / 2, hardware.gpus_per_node)
    if found is None:
        return {"eta_nvl": calibration.eta, "alpha_nvl": calibration.nvlink_latency_s, "delta_nvl": 0.0}
    return dict(found[1])


def _recipe_inputs(recipe: Recipe, stage: int, method: Method) -> dict[str, float]:
    return {
        "r_full": {"full": 1.0, "alternate": 0.5}.get(recipe.recompute, 0.0),
        "r_sel": float(recipe.recompute == "selective"), "r_op": float(recipe.recompute == "op"),
        "r_stop": float(recipe.recompute_early_stop),
        "sp": float(recipe.sequence_parallel), "fa": float(recipe.flash_attention), "drop": float(recipe.dropout),
        "z_1": float(stage >= 1), "z_2": float(stage >= 2), "z_3": float(stage >= 3),
        "gamma_G": float(recipe.grad_reduce_bytes), "gamma_M": float(recipe.main_grad_bytes),
        "amp": float(recipe.mixed_precision in ("amp", "amp-zeroed")),
        "keep_G": float(recipe.mixed_precision == "amp-zeroed"), "g_L": float(recipe.logit_bytes),
        "g_X": float(loss_traffic(recipe)),
        **dict(zip(("g_R", "n_R"), map(float, rope_traffic(recipe.rope_kernel)))),
        "e_N": float(recipe.norm_kernel == "eager"), "e_A": float(recipe.activation_kernel == "eager"),
        "ddp_copy": float(recipe.ddp_bucket_copy),
        "ds_opt": float(recipe.deepspeed_optimizer), "ds_pipe": float(recipe.deepspeed_pipeline),
        "fsdp_pp": float(recipe.fsdp_pipeline_unsharded),
        "ov_dp": float(recipe.dp_overlap), "ov_tp": float(recipe.tp_overlap), "pg": float(recipe.dp_network == "per-gpu"),
        "improved": float(method is Method.IMPROVED), "s_h": float(recipe.host_sync),
        "vc": float(recipe.vocabulary_chunks),
    }


def _gemm_inputs(hardware_name: str, model: Transformer, n_a, b_mu) -> dict[str, Any]:
    """``g_tab`` and the layer GEMMs' measured efficiencies at this width, split and micro-batch
    (:mod:`.gemm_table`); without a table ``g_tab = 0`` and the efficiencies 1 (unused: the curve times them)."""
    from .gemm_table import model_layer_efficiencies  # here: python -m lgacc.model.calibrated.gemm_table runs cleanly
    measured = model_layer_efficiencies(hardware_name, model, n_a, b_mu * model.d_s)
    if measured is None:
        return {"g_tab": 0.0, "e_qkv": 1.0, "e_proj": 1.0, "e_fc1": 1.0, "e_fc2": 1.0}
    return {"g_tab": 1.0, **{f"e_{name}": value for name, value in measured.items()}}


def _model_inputs(model: Transformer) -> dict[str, float]:
    return {"d_s": model.d_s, "d_m": model.d_m, "d_l": model.d_l, "d_a": model.d_a, "d_h": model.d_h,
            "d_kv": model.d_kv, "d_I": model.d_I, "d_v": model.d_v, "gated": float(model.gated),
            "tied": float(model.tied_embeddings), "d_R": float(model.rotary_width)}


def inputs(
    model: Transformer | str,
    hardware: Hardware | str,
    method: Method | str,
    *,
    n_b,
    n_l=1,
    n_a=1,
    n_mu=1,
    b_mu=1,
    partitioned: bool | None = None,
    recipe: Recipe = DEFAULT_RECIPE,
    schedule: str | None = None,
    n_v: int = 1,
    calibration: Calibration | None = None,
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
    attention_peak_flop_per_s: float | None = None,
) -> dict[str, Any]:
    """Every input of the main program (:data:`lgacc.model.calibrated.symbols.NAMES`) for the configurations
    of broadcastable arrays ``n_b, n_l, n_a, n_mu, b_mu`` (floats, broadcast to one shape), the schedule's
    numbers included.  ``schedule=None`` is the method's own pipeline, as the ideal model's.

    ``attention_peak_flop_per_s``: the peak the fused attention core runs at where it differs from the matrix
    products' (``hardware``'s): an FP8 recipe multiplies its linear maps in FP8 and keeps the attention in bf16
    (Transformer Engine's ``fp8_dpa`` and torchao's float8 leave it there), so its ``e_att`` is read against the
    bf16 peak.  None: the attention runs at ``hardware``'s peak."""
    model = as_model(model)
    method = parse_method(method)
    hw = apply_to_hardware(load_hardware(hardware), assumptions)
    calibration = fitted_calibration() if calibration is None else calibration
    partitioned = method.default_partitioned if partitioned is None else bool(partitioned)
    sched = check_schedule(schedule, n_v)
    name = default_schedule(method.layered) if sched is None else sched
    counts = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (n_b, n_l, n_a, n_mu, b_mu)))
    values: dict[str, Any] = dict(zip(("n_b", "n_l", "n_a", "n_mu", "b_mu"), counts))
    values["v"] = float(as_count("n_v", n_v))
    values.update(_model_inputs(model))
    values.update(_hardware_inputs(hw))
    values.update(_calibration_inputs(calibration))
    values.update(_link_inputs(hw, calibration))
    values.update(_recipe_inputs(recipe, zero_stage(recipe, partitioned), method))
    if recipe.cuda_graphs:  # the host replays a captured graph: no floor from issuing each layer's work
        values.update(t_h=0.0, t_hR=0.0, t_hs=0.0, t_hl=0.0, t_hm=0.0)
    elif recipe.host_framework in ("megatron", "megatron_te"):  # Megatron-Core's layer (and TE's), measured (.host)
        values.update(megatron_host_inputs(values["t_h"], calibration, recipe.host_framework == "megatron_te"))
    values["e_att"] = fused_attention_efficiency(hw, recipe, calibration, model.d_s, model.d_a, model.d_h, model.d_kv,
                                                 values["n_a"])
    if attention_peak_flop_per_s is not None:  # the program times attention at kappa e_att c, c the products' peak
        values["e_att"] = values["e_att"] * attention_peak_flop_per_s / hw.peak_flop_per_s
    values.update(_gemm_inputs(hw.name, model, values["n_a"], values["b_mu"]))
    values.update(run(programs()[f"schedule:{name}"], values))
    return values


def fused_attention_efficiency(hw: Hardware, recipe: Recipe, calibration: Calibration, d_s, d_a, d_h, d_kv, n_a,
                               d_v=None):
    """``e_att``: the recipe's fused attention kernel as measured on this GPU at this sequence length and head size, or from the
    GPU's attention table by shape (the B200's, SimuMax's) at these heads and head dimensions (``d_v``: the value
    heads' where it differs from ``d_h``); the calibration's ``attention_efficiency`` where neither measures it."""
    from .attention import attention_efficiency, kernel_measured  # here: python -m ...attention runs cleanly
    efficiency = attention_efficiency(hw.name, recipe.attention_kernel, d_s, calibration.attention_efficiency, d_h=d_h)
    if not kernel_measured(hw.name, recipe.attention_kernel):
        from .gemm_table import shape_attention_efficiency  # the GPU's attention by shape (the B200's, SimuMax's)
        measured = shape_attention_efficiency(hw.name, recipe.attention_kernel, d_s, d_a, d_h, d_kv, n_a, d_v)
        if measured is not None:
            return measured
    return efficiency


def evaluate_inputs(values: Mapping[str, Any], *, critical_batch_size: float, steps: int = 100_000,
                    compact: bool = False) -> dict[str, np.ndarray]:
    """The main program on ``values`` (:func:`inputs`): ``step_time_s``, ``time_days`` (``steps`` at the critical
    batch ``critical_batch_size``), ``memory_bytes`` and, unless ``compact``, every part."""
    wanted = ("step", "memory_total") if compact else None
    out = run(programs()["main"], values, wanted)
    shape = np.broadcast_shapes(*(np.shape(value) for value in values.values()))
    out = {key: np.broadcast_to(value, shape) for key, value in out.items()}
    step = out["step"]
    batch = np.asarray(values["n_b"]) * np.asarray(values["n_mu"]) * np.asarray(values["b_mu"])
    result = {"step_time_s": step, "time_days": steps * (critical_batch_size / batch) * step / SECONDS_PER_DAY,
              "memory_bytes": out["memory_total"]}
    if not compact:
        result.update({f"{part}_s": out[part] for part in STEP_PARTS})
        result.update({f"memory_{part}": out[f"memory_{part}"] for part in MEMORY_PARTS})
        result.update({key: value for key, value in out.items() if key.startswith(("layer_", "stage_"))})
    return result


def expected_many(
    model: Transformer | str,
    hardware: Hardware | str,
    method: Method | str,
    *,
    steps: int = 100_000,
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
    compact: bool = False,
    **configuration: Any,
) -> dict[str, np.ndarray]:
    """Every configuration of broadcastable arrays ``n_b, n_l, n_a, n_mu, b_mu`` at once.

    ``configuration`` are :func:`inputs`'s keywords (degrees, ``partitioned``, ``recipe``, ``schedule``,
    ``n_v``, ``calibration``).  Returns arrays keyed ``step_time_s``, ``time_days``, ``memory_bytes`` and,
    unless ``compact`` (the search's), each part of :data:`STEP_PARTS` (``<part>_s``) and
    :data:`MEMORY_PARTS` (``memory_<part>``) and the per-layer times.
    """
    model = as_model(model)
    values = inputs(model, hardware, method, assumptions=assumptions, **configuration)
    return evaluate_inputs(values, critical_batch_size=critical_batch(model, assumptions), steps=steps,
                           compact=compact)


@dataclass(frozen=True)
class Expected:
    """One configuration under the calibrated model: expected step time, training time and memory."""

    step_time_s: float
    time_days: float
    memory_bytes: float
    step_parts_s: Mapping[str, float] = field(default_factory=dict)
    memory_parts_bytes: Mapping[str, float] = field(default_factory=dict)
    recipe: Recipe = DEFAULT_RECIPE
    calibration: Calibration = field(default_factory=Calibration)
    schedule: str = "gpipe"
    zero_stage: int = 0
    fits: bool = True

    def summary(self) -> dict[str, Any]:
        """The ``expected_*`` keys of ``lgacc evaluate --format json`` (all from the calibrated model)."""
        return {
            "expected_step_time_s": self.step_time_s,
            "expected_time_days": self.time_days,
            "expected_memory_gib": {"total": self.memory_bytes / GIB,
                                    **{k: v / GIB for k, v in self.memory_parts_bytes.items()}},
            "expected_step_breakdown_s": dict(self.step_parts_s),
            "expected_memory_fits": self.fits,
            "expected_recipe": {**self.recipe.as_dict(), "zero_stage": self.zero_stage, "schedule": self.schedule},
            "expected_calibration": self.calibration.fitted(),
        }


def expected(
    model: Transformer | str,
    hardware: Hardware | str,
    config: TrainingConfig,
    *,
    recipe: Recipe = DEFAULT_RECIPE,
    schedule: str | None = None,
    n_v: int = 1,
    calibration: Calibration | None = None,
    steps: int = 100_000,
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
    attention_peak_flop_per_s: float | None = None,
) -> Expected:
    """One configuration (checked as :func:`lgacc.model.evaluator.evaluate` checks it) under the calibrated model
    (``attention_peak_flop_per_s``: as :func:`inputs`)."""
    model = as_model(model)
    check_config(config, model, heads_cap=assumptions.heads_cap)
    sched = check_schedule(schedule, n_v)
    n_v = as_count("n_v", n_v)
    check_chunks(config, model, sched, n_v, vocabulary_chunks=recipe.vocabulary_chunks)
    calibration = fitted_calibration() if calibration is None else calibration
    r = expected_many(model, hardware, config.method, n_b=config.n_b, n_l=config.n_l, n_a=config.n_a,
                      n_mu=config.n_mu, b_mu=config.b_mu, partitioned=config.is_partitioned, recipe=recipe,
                      schedule=sched, n_v=n_v, calibration=calibration, steps=steps, assumptions=assumptions,
                      attention_peak_flop_per_s=attention_peak_flop_per_s)
    hw = apply_to_hardware(load_hardware(hardware), assumptions)
    memory = float(r["memory_bytes"])
    return Expected(
        step_time_s=float(r["step_time_s"]),
        time_days=float(r["time_days"]),
        memory_bytes=memory,
        step_parts_s={part: float(r[f"{part}_s"]) for part in STEP_PARTS},
        memory_parts_bytes={part: float(r[f"memory_{part}"]) for part in MEMORY_PARTS},
        recipe=recipe,
        calibration=calibration,
        schedule=default_schedule(config.method.layered) if sched is None else sched,
        zero_stage=zero_stage(recipe, config.is_partitioned),
        fits=memory <= hw.memory_bytes,
    )
