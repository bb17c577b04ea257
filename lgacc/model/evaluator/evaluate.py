"""Numeric evaluation of training configurations from the derived formulas.

The expressions of :mod:`lgacc.model.formulas` are compiled once to numpy code and
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
* **Assumptions** (:class:`lgacc.model.assumptions.Assumptions`): every choice the paper
  leaves open, with the paper-faithful defaults; the overlap convention
  (``paper`` or ``physical``, :mod:`lgacc.model.formulas.overlap`) is one of them.
* **Generated code**: the sympy expressions are printed once to numpy code committed with
  the package (:mod:`lgacc.cache.codegen`, ``lgacc/model/generated/``); this module imports no
  sympy unless a derivation changed since.
* **Schedules** (``schedule=``, issue #12): with a named pipeline schedule the bubble, the
  checkpoint memory (micro-batches held at the peak), the pipeline intensity (one transfer per
  chunk a device holds) and the data-parallel overlap come from the schedule's closed forms
  (:func:`lgacc.model.formulas.schedules.evaluator_terms`, ``evaluation_map()["schedules"]``).  Without
  one, the method's own pipeline: standard (GPipe) for the baseline and the partitioned
  approach, modular for the improved method, the paper's evaluation unchanged.
* **Memory** is per GPU in bytes; :meth:`MemoryBreakdown.in_gib` converts to the
  paper's GB, which are GiB (2**30 bytes).
* By default the paper's printed forms are evaluated (``form="paper"``);
  ``form="exact"`` evaluates the exact derived counts instead.
* **Input rules** (every count a positive integer, every flag a boolean, the options in
  range, a schedule's chunks) are :mod:`lgacc.model.evaluator.inputs`'s; the result of one
  configuration (:class:`Evaluation`, its JSON, the sentence for each broken rule) is
  :mod:`lgacc.model.evaluator.result`'s, re-exported here; this module computes.
"""

from __future__ import annotations

import numpy as np

from ..assumptions import DEFAULT_ASSUMPTIONS, Assumptions, apply_to_hardware, critical_batch
from ..config import Method, TrainingConfig
from ..hardware import Hardware, load_hardware
from ..transformer import Transformer
from .context import Context, prepare
from .inputs import as_count, as_model, check_chunks, check_config, check_options, check_schedule
from .mapping import OVERHEADS, default_schedule
from .memory import memory_terms
from .recomputation import PAPER_RECOMPUTE, work_ratio
from .overheads import (
    bubble_overhead,
    data_overhead,
    layered_accumulation,
    offload_overheads,
    pipeline_overhead,
    tensor_overhead,
)
from .result import Evaluation, MemoryBreakdown, infeasibility_reasons
from .rules import feasibility
from .sparse import SPARSE_OVERHEADS, context_overhead, expert_overhead, sparse_setup

__all__ = ["evaluate", "evaluate_many", "kernel_efficiency", "DEFAULT_STEPS", "DEFAULT_MAX_OVERHEAD", "SECONDS_PER_DAY"]

DEFAULT_STEPS = 100_000
DEFAULT_MAX_OVERHEAD = 0.25
SECONDS_PER_DAY = 86_400.0

def kernel_efficiency(hardware: Hardware) -> float:
    """Fraction of peak the compute kernels reach (``hardware.kernel_efficiency``, 1.0 when the spec has none).

    It divides the achievable flop/s: time and step time grow by ``1 / kernel_efficiency``;
    the reported ``efficiency`` (overheads only) excludes it.
    """
    return float(getattr(hardware, "kernel_efficiency", 1.0))


def _sparse_feasibility(ok: dict, model, sparse, added: dict, max_overhead: float) -> dict:
    """The paper's rules (``ok``) with the sparse extension's: its overheads under the cap, the expert and context
    degrees dividing what they split, and no offload with experts or context parallelism (not modelled)."""
    ok["ok_overheads"] = ok["ok_overheads"] & (added["expert"] <= max_overhead) & (added["context"] <= max_overhead)
    sparse_model = model.is_sparse or bool(np.any(sparse.n_c > 1))
    ok["ok_experts"], ok["ok_context"] = sparse.ok_experts, sparse.ok_context
    ok["ok_sparse_offload"] = ~(sparse.compute.offload & sparse_model)
    return ok


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
    n_e=1,
    n_c=1,
    precision: str = "bf16",
    recompute: str = PAPER_RECOMPUTE,
) -> dict[str, np.ndarray]:
    """Evaluate every configuration of broadcastable integer arrays at once.

    Returns arrays (broadcast shape) keyed ``efficiency, time_days, step_time_s, state,
    checkpoint, buffers, activations, offloadable, non_offloadable, total`` (bytes),
    ``feasible``, ``n_gpu``, ``b``, one array per name of :data:`OVERHEADS`, the
    binding intensities ``nu_<name>``, and one boolean per constraint ``ok_<rule>``.
    Configurations breaking a rule are flagged, not rejected: only malformed
    input (non-positive counts, unknown method: :mod:`lgacc.model.evaluator.inputs`) raises
    :class:`~lgacc.errors.UserInputError`.
    ``assumptions`` (:class:`lgacc.model.assumptions.Assumptions`) sets every choice the
    paper leaves open; the defaults reproduce its tables.

    ``schedule`` (a name of :data:`SCHEDULES`, or ``standard`` for ``gpipe``) replaces the method's
    pipeline where ``n_l > 1``: the bubble, the checkpoint memory (micro-batches held at the peak),
    the pipeline intensity and the data-parallel overlap come from the schedule's closed forms
    (:func:`lgacc.model.formulas.schedules.evaluator_terms`; see ``evaluation_map()["schedules"]``), with
    ``n_v`` chunks per device for ``interleaved`` and ``breadth-first``.  ``None`` (the default) is
    the method's own pipeline, exactly as the paper evaluates it.  A configuration the schedule cannot
    run (``n_l n_v`` not dividing ``d_l``; interleaved with ``n_mu`` not a multiple of ``n_l``) is
    flagged by ``ok_schedule``.

    ``n_e`` (expert-parallel degree), ``n_c`` (context-parallel degree) and ``precision`` (``bf16``, ``fp8``) extend
    the paper's rules to mixtures of experts, long sequences and FP8 (:mod:`.sparse`, :func:`_sparse_feasibility`):
    the terms read the active, held or whole model as each needs, ``expert`` (the all-to-all) and ``context`` (the
    key-value exchange) are added overheads, ``n_gpu`` is ``n_b n_l n_a n_c``; a dense model at the defaults is
    evaluated exactly as the paper does.

    The steps, each in its own module: :func:`~.context.prepare` (the input rules, broadcasting),
    :func:`~.memory.memory_terms`, the overheads of :mod:`.overheads` (one function per family), the
    efficiency and time (:func:`_efficiency_and_time`), and :func:`~.rules.feasibility`.

    ``recompute`` (:data:`~.recomputation.RECOMPUTE_MODES`; ``full``, the paper's ``8 b d_s p``, by default) scales
    ``step_time_s`` and ``time_days`` by :func:`~.recomputation.work_ratio`, not the overheads or the efficiency.
    """
    ctx = prepare(model, hardware, method, n_b=n_b, n_l=n_l, n_a=n_a, n_mu=n_mu, b_mu=b_mu, offload=offload,
                  partitioned=partitioned, overlap_pipeline=overlap_pipeline, max_overhead=max_overhead,
                  steps=steps, form=form, assumptions=assumptions, schedule=schedule, n_v=n_v)
    sparse = sparse_setup(ctx, n_e, n_c, precision)
    base, ctx = ctx, sparse.compute  # the compute terms read the active model on its sequence shard
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        layered = layered_accumulation(ctx)
        state = np.where(ctx.partitioned, base.call("state_part") / sparse.n_c, sparse.state.call("state"))
        memory = memory_terms(ctx, state=state, buffers=sparse.state.call("buffers"))
        bubble = bubble_overhead(ctx, layered)
        tensor = tensor_overhead(ctx)
        pipeline = pipeline_overhead(ctx, layered)
        data = data_overhead(ctx, layered, sparse.data_scale)
        offloads = offload_overheads(ctx, layered, data, pipeline, tensor)
        expert, nu_expert = expert_overhead(base.model, sparse)
        context, nu_context = context_overhead(base.model, sparse)
        overheads = {
            "bubble": bubble,
            "tensor": tensor.overhead,
            "pipeline": pipeline.overhead,
            "data": data.overhead,
            "state_offload": offloads.state,
            "checkpoint_offload": offloads.checkpoint,
            "pcie": offloads.pcie,
        }
        b_c = critical_batch(base.model, ctx.assumptions)
        added = {"expert": expert, "context": context}
        efficiency, time_days, step_time_s = _efficiency_and_time(ctx, {**overheads, **added}, b_c, int(steps))
        time_days, step_time_s = (t * work_ratio(base.model, recompute, form) for t in (time_days, step_time_s))
    ok = _sparse_feasibility(feasibility(ctx, memory, overheads, b_c, max_overhead), base.model, sparse, added,
                             max_overhead)
    return {
        "b": ctx.batch,
        "n_gpu": sparse.n_gpu,
        "n_e": sparse.n_e,
        "n_c": sparse.n_c,
        **added,
        # the share of the step the all-to-all takes: its factor (1 + expert) of the step time
        "expert_share": expert / (1 + expert),
        "expert_intensity": nu_expert,
        "context_intensity": nu_context,
        "efficiency": efficiency,
        "time_days": time_days,
        "step_time_s": step_time_s,
        "state": memory.state,
        "checkpoint": memory.checkpoint,
        "buffers": memory.buffers,
        "activations": memory.activations,
        "offloadable": memory.offloadable,
        "non_offloadable": memory.non_offloadable,
        "total": memory.offloadable + memory.non_offloadable,
        "feasible": np.all(list(ok.values()), axis=0),
        **overheads,
        **ok,
        "nu_data": data.nu,
        "nu_pipeline": pipeline.nu,
        "nu_tensor": tensor.nu,
        "nu_state_offload": offloads.nu_state,
        "nu_checkpoint_offload": offloads.nu_checkpoint,
        "nu_pcie": np.where(ctx.offload, offloads.nu_pcie, np.inf),
        "critical_batch": np.full(ctx.shape, b_c),
    }


def _efficiency_and_time(ctx: Context, overheads: dict[str, np.ndarray], b_c: float,
                         steps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The paper's efficiency, the product of ``1 / (1 + o)`` over the overheads; the training time,
    ``steps`` at the critical batch (eq:critical_batch) at peak flop/s times the efficiency; one step's time."""
    efficiency = np.ones(ctx.shape)
    for value in overheads.values():
        efficiency = efficiency / (1 + value)
    flop_rate = ctx.n_gpu * ctx.hardware.peak_flop_per_s * kernel_efficiency(ctx.hardware) * efficiency
    time_days = steps * ctx.flops_at_critical_batch(b_c) / flop_rate / SECONDS_PER_DAY
    step_time_s = ctx.call("flops_per_batch") / flop_rate
    return efficiency, time_days, step_time_s


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
    recompute: str = PAPER_RECOMPUTE,
) -> Evaluation:
    """Evaluate one configuration: efficiency, time, memory per GPU, overheads, feasibility.

    Raises :class:`UserInputError` for a configuration that cannot exist
    (``n_l > d_l``: a stage without a layer); every other broken rule (divisibility,
    ``n_a > d_a`` under ``heads_cap``, batch, memory, overheads) is listed in
    ``reasons`` and makes ``feasible`` false.

    ``schedule`` and ``n_v`` are :func:`evaluate_many`'s (``None``: the method's own pipeline);
    more chunks than layers (``n_l n_v > d_l``) raises :class:`UserInputError`.  ``recompute`` is
    :func:`evaluate_many`'s (``full``, the paper's, by default).
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
        n_e=config.n_e,
        n_c=config.n_c,
        precision=config.precision,
        recompute=recompute,
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
        sparse_overheads={name: float(r[name]) for name in SPARSE_OVERHEADS},
        expert_share=float(r["expert_share"]),
        recompute=recompute,
    )
