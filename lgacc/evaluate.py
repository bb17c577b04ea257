"""Numeric evaluation of training configurations from the derived formulas.

The expressions of :mod:`lgacc.formulas` are compiled once to numpy code and
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
  efficiency: ``8 steps b_c d_s p / (n_gpu c_gpu efficiency)``.  ``step_time_s`` is one
  step at the configuration's own batch, ``8 b d_s p / (n_gpu c_gpu efficiency)``.  A
  spec's ``kernel_efficiency`` (1.0 when absent) divides the achievable flop/s: both
  times grow by ``1 / kernel_efficiency``; ``efficiency`` (overheads only) excludes it.
* **Assumptions** (:class:`lgacc.assumptions.Assumptions`): every choice the paper
  leaves open, with the paper-faithful defaults; the overlap convention
  (``paper`` or ``physical``, :mod:`lgacc.formulas.overlap`) is one of them.
* **Generated code**: the sympy expressions are printed once to numpy code cached on
  disk (:mod:`lgacc._codegen`); this module imports no sympy unless the cache is
  rebuilt.
* **Schedules** (``schedule=``, issue #12): with a named pipeline schedule the bubble, the
  checkpoint memory (micro-batches held at the peak), the pipeline intensity (one transfer per
  chunk a device holds) and the data-parallel overlap come from the schedule's closed forms
  (:func:`lgacc.formulas.schedules.evaluator_terms`, ``evaluation_map()["schedules"]``).  Without
  one, the method's own pipeline: standard (GPipe) for the baseline and the partitioned
  approach, modular for the improved method, the paper's evaluation unchanged.
* **Memory** is per GPU in bytes; :meth:`MemoryBreakdown.in_gib` converts to the
  paper's GB, which are GiB (2**30 bytes).
* By default the paper's printed forms are evaluated (``form="paper"``);
  ``form="exact"`` evaluates the exact derived counts instead.
* **Input rules** (every count a positive integer, every flag a boolean, the options in
  range, a schedule's chunks) are :mod:`lgacc.evaluate_inputs`'s; the result of one
  configuration (:class:`Evaluation`, its JSON, the sentence for each broken rule) is
  :mod:`lgacc.evaluation_result`'s, re-exported here; this module computes.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from .assumptions import DEFAULT_ASSUMPTIONS, Assumptions, apply_to_hardware, critical_batch
from .config import Method, TrainingConfig, parse_method
from .hardware import Hardware, load_hardware
from .evaluation_map import (
    ARGUMENTS,
    BUBBLE,
    CAPPED_OVERHEADS,
    DATA_TRANSFERS,
    FORMS,
    OVERHEADS,
    PIPELINE_TRANSFERS,
    SCHEDULES,
    STATE_OFFLOAD,
    default_schedule,
    evaluation_map,
    not_overlapped_overhead,
    overlapped_overhead,
    parse_schedule,
)
from .evaluation_map import functions as _functions
from .evaluation_map import physical_functions as _physical_functions
from .evaluation_map import schedule_functions as _schedule_functions
from .evaluate_inputs import (
    as_bool_array,
    as_count,
    as_int_array,
    as_model,
    broadcast_flag,
    broadcast_together,
    check_chunks,
    check_config,
    check_options,
    check_schedule,
    checked_product,
)
from .evaluation_result import Evaluation, MemoryBreakdown, infeasibility_reasons
from .models import Transformer

__all__ = [
    "OVERHEADS",
    "FORMS",
    "MemoryBreakdown",
    "Evaluation",
    "evaluate",
    "evaluate_many",
    "evaluation_map",
    "overlapped_overhead",
    "not_overlapped_overhead",
    "DATA_TRANSFERS",
    "DEFAULT_STEPS",
    "DEFAULT_MAX_OVERHEAD",
    "SECONDS_PER_DAY",
    "kernel_efficiency",
    "SCHEDULES",
    "parse_schedule",
    "check_schedule",
]

DEFAULT_STEPS = 100_000
DEFAULT_MAX_OVERHEAD = 0.25
SECONDS_PER_DAY = 86_400.0

def kernel_efficiency(hardware: Hardware) -> float:
    """Fraction of peak the compute kernels reach (``hardware.kernel_efficiency``, 1.0 when the spec has none).

    It divides the achievable flop/s: time and step time grow by ``1 / kernel_efficiency``;
    the reported ``efficiency`` (overheads only) excludes it.
    """
    return float(getattr(hardware, "kernel_efficiency", 1.0))


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
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
    schedule: str | None = None,
    n_v=1,
) -> dict[str, np.ndarray]:
    """Evaluate every configuration of broadcastable integer arrays at once.

    Returns arrays (broadcast shape) keyed ``efficiency, time_days, step_time_s, state,
    checkpoint, buffers, activations, offloadable, non_offloadable, total`` (bytes),
    ``feasible``, ``n_gpu``, ``b``, one array per name of :data:`OVERHEADS`, the
    binding intensities ``nu_<name>``, and one boolean per constraint ``ok_<rule>``.
    Configurations breaking a rule are flagged, not rejected: only malformed
    input (non-positive counts, unknown method: :mod:`lgacc.evaluate_inputs`) raises
    :class:`~lgacc.errors.UserInputError`.
    ``assumptions`` (:class:`lgacc.assumptions.Assumptions`) sets every choice the
    paper leaves open; the defaults reproduce its tables.

    ``schedule`` (a name of :data:`SCHEDULES`, or ``standard`` for ``gpipe``) replaces the method's
    pipeline where ``n_l > 1``: the bubble, the checkpoint memory (micro-batches held at the peak),
    the pipeline intensity and the data-parallel overlap come from the schedule's closed forms
    (:func:`lgacc.formulas.schedules.evaluator_terms`; see ``evaluation_map()["schedules"]``), with
    ``n_v`` chunks per device for ``interleaved`` and ``breadth-first``.  ``None`` (the default) is
    the method's own pipeline, exactly as the paper evaluates it.  A configuration the schedule cannot
    run (``n_l n_v`` not dividing ``d_l``; interleaved with ``n_mu`` not a multiple of ``n_l``) is
    flagged by ``ok_schedule``.
    """
    model = as_model(model)
    check_options(max_overhead, steps, form, assumptions)
    A = assumptions
    hardware = apply_to_hardware(load_hardware(hardware), A)
    method = parse_method(method)
    sched = check_schedule(schedule, n_v)
    steps = int(steps)
    nb, nl, na, nmu, bmu, nv = (
        as_int_array(name, v)
        for name, v in (("n_b", n_b), ("n_l", n_l), ("n_a", n_a), ("n_mu", n_mu), ("b_mu", b_mu), ("n_v", n_v))
    )
    off = as_bool_array("offload", offload)
    part = (
        np.asarray(method.default_partitioned)
        if partitioned is None
        else as_bool_array("partitioned", partitioned)
    )
    nb, nl, na, nmu, bmu, off, part, nv = broadcast_together(
        n_b=nb, n_l=nl, n_a=na, n_mu=nmu, b_mu=bmu, offload=off, partitioned=part, n_v=nv)
    batch = checked_product("the batch b = n_b n_mu b_mu", nb, nmu, bmu)
    n_gpu = checked_product("the GPU count n_gpu = n_b n_l n_a", nb, nl, na)
    if overlap_pipeline is None:
        overlap = nmu > nl
    else:
        overlap = broadcast_flag("overlap_pipeline", overlap_pipeline, nb.shape)

    f = _functions(form)
    model_args = (model.d_s, model.d_m, model.d_l, model.d_a, model.n_I, model.p, model.p_l)
    physical = A.convention == "physical"
    kinds = _physical_functions(form) if physical else {}
    loss = 1.0 / A.overlap_efficiency  # an overlapped transfer sees the bandwidth times overlap_efficiency
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        fb, fl, fa, fmu, fbatch, fv = (x.astype(float) for x in (nb, nl, na, nmu, batch, nv))

        def call(name: str | Any) -> np.ndarray:
            fn = f[name] if isinstance(name, str) else name
            return np.broadcast_to(np.asarray(fn(*model_args, fbatch, fb, fl, fa, fmu), dtype=float), nb.shape)

        terms = _schedule_functions(form) if sched is not None else {}

        def term(name: str) -> np.ndarray:
            """The schedule's term ``name`` (:data:`lgacc.evaluation_map.SCHEDULE_TERMS`)."""
            fn = terms[f"{name}:{sched}"]
            return np.broadcast_to(np.asarray(fn(*model_args, fbatch, fb, fl, fa, fmu, fv), dtype=float), nb.shape)

        pipelined = nl > 1

        def overlapped(kind: str, ratio: np.ndarray) -> np.ndarray:
            """eq:overlap_condition in the chosen convention: the paper's ``max(0, r - 1)``, or the
            physical sum over passes ``(C_p / S) max(0, r k_p - 1)`` (:mod:`lgacc.formulas.overlap`)."""
            if not physical:
                return overlapped_overhead(ratio)
            total = np.zeros(nb.shape)
            for fraction, relative in kinds[kind]:
                total = total + call(fraction) * overlapped_overhead(ratio * relative)
            return total

        def by_case(table: Mapping, conditions: list[np.ndarray], value) -> np.ndarray:
            """``value(entry)`` selected elementwise by the boolean ``conditions`` keying ``table``."""
            out = np.zeros(nb.shape)
            for key, entry in table.items():
                key = key if isinstance(key, tuple) else (key,)
                where = np.ones(nb.shape, bool)
                for flag, condition in zip(key, conditions):
                    where &= condition if flag else ~condition
                if where.any():
                    out = np.where(where, value(entry), out)
            return out

        nu_ib = hardware.threshold("infiniband")
        nu_nvlink = hardware.threshold("nvlink")
        layered = np.full(nb.shape, method.layered)
        if sched is not None:
            # A schedule whose reduction window spans every micro-batch accumulates layer by layer.
            layered = np.where(pipelined, term("layered_window") > 0, layered)

        # --- memory ---
        state = np.where(part, call("state_part"), call("state"))
        checkpoint = call("checkpoint_memory")
        if sched is not None:
            checkpoint = checkpoint * np.where(pipelined, term("checkpoint_share"), 1.0)
        buffers = call("buffers")
        activations = call("activations")
        offloadable = state + checkpoint
        non_offloadable = buffers + activations

        # --- overheads, each read from the declarative map ---
        if sched is None:
            bubble = np.where(nl > 1, by_case(BUBBLE, [layered], call), 0.0)
        else:
            bubble = np.where(pipelined, term("bubble"), 0.0)

        tensor_on_ib = (na > hardware.gpus_per_node) if A.tensor_placement == "node" else np.ones(nb.shape, bool)
        tensor_link = np.where(tensor_on_ib, nu_ib, nu_nvlink)
        nu_tensor = np.where(na > 1, call("tensor_intensity"), np.inf)
        tensor = np.where(na > 1, not_overlapped_overhead(tensor_link / nu_tensor), 0.0)

        pipe_on_nvlink = (
            (nl * na <= hardware.gpus_per_node) if A.pipeline_placement == "intra-node" else np.zeros(nb.shape, bool)
        )
        pipe_link = np.where(pipe_on_nvlink, nu_nvlink, nu_ib)
        if sched is None:
            nu_pipe = np.where(nl > 1, by_case(PIPELINE_TRANSFERS, [layered], lambda e: call(e[0])), np.inf)
            pipe_chunked = layered
        else:
            nu_pipe = np.where(pipelined, term("pipeline_intensity"), np.inf)
            # physical passes: those of the standard pipeline for one chunk per device, else the modular one's
            pipe_chunked = np.full(nb.shape, sched == "modular") | (nv > 1)
        ratio_pipe = pipe_link / nu_pipe
        if A.pipeline_overlap == "extra-micro-batches":
            pipe_overlapped = overlap & (nmu >= nl * (1 + ratio_pipe * loss))
        elif A.pipeline_overlap == "always":
            pipe_overlapped = overlap
        else:
            pipe_overlapped = np.zeros(nb.shape, bool)
        pipe_ov = by_case(PIPELINE_TRANSFERS, [pipe_chunked], lambda e: overlapped(e[1], ratio_pipe * loss))
        pipeline = np.where(nl > 1, np.where(pipe_overlapped, pipe_ov, not_overlapped_overhead(ratio_pipe)), 0.0)

        data_case = [layered, part, nl > 1]
        nu_data = np.where(nb > 1, by_case(DATA_TRANSFERS, data_case, lambda e: call(e[0])), np.inf)
        if sched is not None:
            # a layered schedule hides the reduction behind its window, relative to the modular pipeline's
            nu_data = nu_data * np.where(pipelined & layered, term("data_window"), 1.0)
        ratio_data = nu_ib / nu_data
        data = by_case(
            DATA_TRANSFERS, data_case,
            lambda e: overlapped(e[2], ratio_data * loss) if e[1] else not_overlapped_overhead(ratio_data),
        )
        if sched is not None:
            # A replicated state under a schedule that does not hide the reduction behind every micro-batch
            # falls under the paper's rule for its standard pipeline (not overlapped); the schedule's own
            # window (none when d_l = n_l, as in the paper's baseline rows) may still hide it for less.
            window = term("data_overlap")
            behind = pipelined & ~layered & ~part & (window > 0)
            hidden = overlapped("data_base", ratio_data * loss / np.where(behind, window, 1.0))
            data = np.where(behind, np.minimum(data, hidden), data)
        data = np.where(nb > 1, data, 0.0)

        nu_cpu = hardware.threshold("cpu_gpu") * loss
        nu_state = np.where(off, by_case(STATE_OFFLOAD, [layered, part], call), np.inf)
        nu_checkpoint = np.where(off, call("checkpoint_offload_intensity"), np.inf)
        state_offload = np.where(off, overlapped("state_offload", nu_cpu / nu_state), 0.0)
        checkpoint_offload = np.where(off, overlapped("checkpoint_offload", nu_cpu / nu_checkpoint), 0.0)
        # The node's PCIe link carries the offload and every transfer that leaves the node.
        inverse = 1 / nu_state + 1 / nu_checkpoint + 1 / nu_data + np.where(pipe_on_nvlink, 0.0, 1 / nu_pipe)
        inverse = inverse + np.where(tensor_on_ib, 1 / nu_tensor, 0.0)
        nu_pcie = 1 / inverse
        pcie = np.where(off, overlapped_overhead(hardware.threshold("pcie") * loss / nu_pcie), 0.0)

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

        b_c = critical_batch(model, A)
        flop_rate = n_gpu * hardware.peak_flop_per_s * kernel_efficiency(hardware) * efficiency
        flops = np.asarray(f["flops_per_batch"](*model_args, b_c, fb, fl, fa, fmu), dtype=float)
        time_days = steps * flops / flop_rate / SECONDS_PER_DAY
        step_flops = call("flops_per_batch")
        step_time_s = step_flops / flop_rate

    memory_limit = hardware.memory_bytes
    if sched is None:
        ok_schedule = np.ones(nb.shape, bool)
    else:
        chunks = checked_product("the chunks n_l n_v", nl, nv)
        ok_schedule = (nl == 1) | ((chunks <= model.d_l) & A.allows_layers(model.d_l, chunks))
        if sched == "interleaved":
            ok_schedule &= (nl == 1) | (nv == 1) | (nmu % nl == 0)
    ok = {
        "ok_batch": batch <= b_c,
        "ok_micro_batches": (nl == 1) | (nmu >= nl),
        "ok_layers": nl <= model.d_l,
        "ok_layers_divide": A.allows_layers(model.d_l, nl),
        "ok_heads": A.replace(divisible_heads=False).allows_heads(model.d_a, na),
        "ok_heads_divide": A.replace(heads_cap=False).allows_heads(model.d_a, na),
        "ok_memory": np.where(off, non_offloadable <= memory_limit, offloadable + non_offloadable <= memory_limit),
        "ok_overheads": np.all([overheads[name] <= max_overhead for name in CAPPED_OVERHEADS], axis=0),
        "ok_schedule": ok_schedule,
    }
    feasible = np.all(list(ok.values()), axis=0)
    result: dict[str, np.ndarray] = {
        "b": batch,
        "n_gpu": n_gpu,
        "efficiency": efficiency,
        "time_days": time_days,
        "step_time_s": step_time_s,
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


def evaluate(
    model: Transformer | str,
    hardware: Hardware | str,
    config: TrainingConfig,
    *,
    max_overhead: float = DEFAULT_MAX_OVERHEAD,
    steps: int = DEFAULT_STEPS,
    form: str = "paper",
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
    schedule: str | None = None,
    n_v: int = 1,
) -> Evaluation:
    """Evaluate one configuration: efficiency, time, memory per GPU, overheads, feasibility.

    Raises :class:`UserInputError` for a configuration that cannot exist
    (``n_l > d_l``: a stage without a layer); every other broken rule (divisibility,
    ``n_a > d_a`` under ``heads_cap``, batch, memory, overheads) is listed in
    ``reasons`` and makes ``feasible`` false.

    ``schedule`` and ``n_v`` are :func:`evaluate_many`'s (``None``: the method's own pipeline);
    more chunks than layers (``n_l n_v > d_l``) raises :class:`UserInputError`.
    """
    model = as_model(model)
    check_options(max_overhead, steps, form, assumptions)
    hardware = apply_to_hardware(load_hardware(hardware), assumptions)
    check_config(config, model, heads_cap=assumptions.heads_cap)
    sched = check_schedule(schedule, n_v)
    n_v = as_count("n_v", n_v)
    check_chunks(config, model, sched, n_v)
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
        assumptions=assumptions.replace(gb="GiB"),  # the hardware is already read under ``gb``
        schedule=sched,
        n_v=n_v,
    )
    r = {key: value.item() for key, value in arrays.items()}
    reasons = infeasibility_reasons(model, hardware, config, r, max_overhead, sched, n_v)
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
        step_time_s=float(r["step_time_s"]),
        assumptions=assumptions,
        schedule=default_schedule(config.method.layered) if sched is None else sched,
        n_v=n_v,
    )
