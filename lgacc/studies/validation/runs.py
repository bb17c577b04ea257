"""The published runs (``data/validation/*.yaml``): read, checked, and each one's reading of what its source
does not state.

Each file holds the runs of one publication or benchmark suite exactly as printed, with
``"not stated"`` where the source is silent.  Per run, besides the model, the degrees and the
batch:

* ``method``: ``baseline`` (3D parallelism, state not partitioned), ``partitioned`` (fully sharded
  data parallelism: ZeRO-3, PyTorch FSDP) or ``improved`` (layered gradient accumulation, a looped
  breadth-first pipeline);
* the recipe (:data:`READING_FIELDS`): ``schedule``, ``n_v``, ``micro_batch_size``,
  ``recomputation``, ``sequence_parallel``, ``flash_attention``, ``dropout``, ``zero_stage``,
  ``grad_reduce_bytes``, ``dp_overlap``, ``tp_overlap``, ``dp_network``, ``attention_kernel`` and the memory's ``mixed_precision``,
  ``main_grad_bytes``, ``logit_bytes``, ``ddp_bucket_copy``, ``deepspeed_optimizer``, ``deepspeed_pipeline``: each stated, or
  ``"not stated"``;
* ``reported``: the iteration time (printed, or derived from a printed throughput and said so),
  or TFLOP/s per GPU; the measured memory per GPU where the source gives it (``memory_gib_per_gpu``), with the
  statistic it is (``memory_statistic``: ``allocated``, ``reserved``, ``device`` or ``not stated``, see
  :data:`MEMORY_STATISTICS`);
* ``use``: what the run is compared on (``time``, ``memory``; default: time, and memory where
  measured);
* ``n_e``, ``n_c``, ``precision`` (issue #36): the expert-parallel and context-parallel degrees and the compute
  precision (default 1, 1, ``bf16``; ``precision`` may also be the file's), folded as Megatron-Core folds them
  (:data:`lgacc.model.config.FOLDING`: ``n_gpu = n_b n_l n_a n_c``, ``n_e`` divides ``n_b n_c`` and the experts).
  A run with experts, context parallelism or FP8 is *extended* (:attr:`Run.extended`): both models evaluate it
  with the sparse extension, and the calibrated model is fitted on the other runs only.

**Unstated choices are named and bracketed.**  A field the source does not state takes the
file's or the run's ``assumed`` value (``{field: {value: ..., why: ...}}``), else the default of
:data:`DEFAULTS` (with its reason); its ``bracket`` lists the other plausible values (the run's or
the file's; for a default, the default's), and every prediction is also computed at each of them,
so that both ends are shown.

The pipeline schedule defaults to ``1f1b`` with a pipeline (Megatron-LM's and DeepSpeed's
non-interleaved schedule); the paper's own default (``gpipe``) has the same bubble and more
activation memory.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from lgacc.errors import UserInputError, positive_int
from lgacc.model.calibrated import Recipe
from lgacc.model.config import Method, TrainingConfig, parse_method, parse_precision
from lgacc.model.evaluator.mapping import CHUNKED_SCHEDULES, parse_schedule
from lgacc.model.hardware import GB, Hardware, is_path, load_hardware
from lgacc.model.transformer import Transformer, load_model
from lgacc.paths import DATA
from lgacc.yamlfile import load_yaml_mapping

__all__ = ["DATA_DIR", "NOT_STATED", "MEMORY_STATISTICS", "CUDA_MODULE_LOADING", "FLOP_FORMULAS", "READING_FIELDS", "DEFAULTS", "Run", "load_runs", "USES",
           "fp8_runs_left_out"]

DATA_DIR = DATA / "validation"
NOT_STATED = "not stated"
FLOP_FORMULAS = ("megatron", "model-exact")
USES = ("time", "memory")
RECOMPUTATION = ("full", "selective", "none", "op", "alternate")

#: The fields a run's source may leave unstated, with the values each may take.
READING_FIELDS: dict[str, tuple[Any, ...] | None] = {
    "schedule": None,  # a schedule of lgacc.model.formulas.schedules
    "n_v": None,  # a positive integer
    "micro_batch_size": None,  # a positive integer
    "recomputation": RECOMPUTATION,
    "sequence_parallel": (True, False),
    "flash_attention": (True, False),
    "dropout": (True, False),
    "zero_stage": (0, 1, 2, 3),
    "grad_reduce_bytes": (2, 4),
    "dp_overlap": (True, False),
    "tp_overlap": (True, False),
    "dp_network": ("ring", "per-gpu"),
    "attention_kernel": ("fa2", "cudnn", "triton"),
    "mixed_precision": ("megatron", "amp", "amp-zeroed"),
    "main_grad_bytes": (2, 4),
    "logit_bytes": (6, 10, 12, 14, 16),
    "ddp_bucket_copy": (True, False),
    "cuda_graphs": (True, False),
    "host_sync": (True, False),
    "deepspeed_optimizer": (True, False),
    "deepspeed_pipeline": (True, False),
    "vocabulary_chunks": (True, False),
    "ep_overlap": (True, False),
    "moe_dispatcher": ("alltoall", "deepep", "hybridep"),
    "fsdp_pipeline_unsharded": (True, False),
    "host_framework": ("pytorch", "megatron", "megatron_te"),
    "recompute_early_stop": (True, False),
    "rope_kernel": ("fused", "complex"),
    "norm_kernel": ("fused", "eager"),
    "activation_kernel": ("fused", "eager"),
    "loss_kernel": (None, "megatron", "pytorch", "half", "xentropy", "te", "pytorch-half"),
}


def _default_schedule(run: Mapping[str, Any]) -> Any:
    return "1f1b" if run["n_l"] > 1 else "gpipe"


#: field -> (value, why, bracket) when neither the source, the file nor the run says; value and bracket
#: may depend on the run (a function of its known values: ``n_l``, ``n_a``, ``n_b``, ``method``, ``formula``).
DEFAULTS: dict[str, tuple[Any, str, Any]] = {
    "schedule": (_default_schedule, "Megatron-LM's and DeepSpeed's non-interleaved schedule (1F1B) when there is "
                 "a pipeline", lambda r: ("interleaved",) if r["n_l"] > 1 else ()),
    "n_v": (1, "one chunk per device unless the source says how many", lambda r: ()),
    "micro_batch_size": (lambda r: r["replica_batch"] if r["n_l"] == 1 else 1,
                         "with a pipeline, the smallest micro-batch (the most micro-batches, the smallest bubble); "
                         "without one, one micro-batch of the replica's whole batch (the fewest passes)",
                         lambda r: (1,) if r["n_l"] == 1 and r["replica_batch"] > 1 else ()),
    "recomputation": (lambda r: "full" if r["formula"] == "megatron" else "none",
                      "what the source's throughput formula counts: Narayanan et al.'s counts the recomputed "
                      "forward pass (4 passes), the exact count does not (3)", lambda r: ("full", "selective", "none")),
    "sequence_parallel": (False, "not before Korthikanti et al. (2022)", lambda r: (True,) if r["n_a"] > 1 else ()),
    "flash_attention": (False, "attention kernels that store the scores, unless the source names a fused kernel",
                        lambda r: (True,)),
    "dropout": (False, "large language models pre-trained since 2022 use none", lambda r: (True,)),
    "zero_stage": (lambda r: 3 if r["method"] is not Method.BASELINE else 0,
                   "the method's: 0 for the baseline, 3 for a partitioned state",
                   lambda r: (1,) if r["method"] is Method.BASELINE and r["n_b"] > 1 else ()),
    "grad_reduce_bytes": (4, "fp32 gradient reduction, Megatron-LM's and PyTorch FSDP's default with bf16",
                          lambda r: (2,) if r["n_b"] > 1 else ()),
    "dp_overlap": (False, "the reduction after the backward pass, as Megatron-LM did until 2022 (a partitioned "
                   "state reduces layer by layer instead)",
                   lambda r: (True,) if r["n_b"] > 1 and r["method"] is Method.BASELINE else ()),
    "tp_overlap": (False, "tensor-parallel collectives not overlapped (the paper's and Megatron-LM's default)",
                   lambda r: (True,) if r["n_a"] > 1 else ()),
    "dp_network": ("ring", "NCCL's rings and trees use the node's NVLink and all its network cards", lambda r: ()),
    "attention_kernel": ("fa2", "FlashAttention-2 (Dao 2023), the fused kernel of the frameworks that name one; a "
                         "Transformer Engine run on Hopper says cudnn in its file (it only matters on a GPU with "
                         "measured kernels, data/calibrated/attention_kernels.yaml)", lambda r: ()),
    "mixed_precision": ("megatron", "half-precision weights beside fp32 master weights and Adam's moments (Megatron-LM, "
                        "DeepSpeed's fp16 and bf16 optimizers)", lambda r: ()),
    "main_grad_bytes": (4, "fp32 gradients kept for the optimizer (Megatron-LM's main_grad, PyTorch AMP's and FSDP's "
                        "fp32 gradients)", lambda r: ()),
    "logit_bytes": (10, "half-precision logits, an fp32 softmax and its gradient (Megatron-LM's vocab-parallel "
                    "cross entropy)", lambda r: ()),
    "ddp_bucket_copy": (False, "gradients reduced in place (Megatron-LM's contiguous gradient buffer, FSDP, ZeRO)",
                        lambda r: ()),
    "cuda_graphs": (False, "an eager step, every framework's default: CUDA graphs are opt-in (Megatron-LM's "
                    "--enable-cuda-graph and --external-cuda-graph, PyTorch's torch.cuda.graph and torch.compile's "
                    "reduce-overhead mode), and no run's source names them; the host then issues each layer's work "
                    "(lgacc.model.calibrated.host)", lambda r: (True,)),
    "host_sync": (True, "the host waits for the device after the layers' passes: Megatron-LM reads the gradients' norm "
                  "on the host with the default --clip-grad 1.0 (clip_grads.get_grad_norm_fp32: .item()) and its step "
                  "timer synchronizes the device at each logged step (megatron/core/timers.py); it matters only where "
                  "the host's floor binds", lambda r: (False,)),
    "deepspeed_optimizer": (False, "a framework other than DeepSpeed: no fp16 optimizer flattening the gradients "
                            "after the backward (a DeepSpeed run says so in its file)", lambda r: ()),
    "deepspeed_pipeline": (False, "a framework other than DeepSpeed: no PipelineEngine buffers or process groups (a "
                           "DeepSpeed pipeline run says so in its file)", lambda r: ()),
    "vocabulary_chunks": (False, "the layers spread evenly over the stages, the embedding and the head on top of the "
                          "first and last stages' share (Megatron-LM's and DeepSpeed's split; a run whose source gives "
                          "them a chunk of their own says so in its file)", lambda r: ()),
    "ep_overlap": (False, "the experts' all-to-alls stall their layer, Megatron-Core's default (a run whose schedule "
                   "hides them says so in its file; it matters only with expert parallelism)", lambda r: ()),
    "fsdp_pipeline_unsharded": (False, "a pipeline whose sharded weights are gathered a layer at a time and whose "
                                "gradients are reduced as they come (a torchtitan run with FSDP and a pipeline says so "
                                "in its file; it matters only with both)", lambda r: ()),
    "moe_dispatcher": ("alltoall", "Megatron-Core's default token dispatcher, MoEAlltoAllTokenDispatcher "
                       "(moe_token_dispatcher_type alltoall; Megatron-Bridge's MoE providers keep it, "
                       "moe_permute_fusion on): every copy permuted, sent and sorted by expert (a run that dispatches "
                       "over DeepEP or HybridEP says deepep or hybridep in its file; a dense model permutes nothing)",
                       lambda r: ()),
    "host_framework": ("pytorch", "plain PyTorch modules, the host time the floor was measured with (a run whose "
                       "framework is Megatron-LM, NeMo or Megatron-Bridge says megatron in its file: Megatron-Core's "
                       "layer, measured on the same kind of H100, costs the host more per micro-batch, python -m "
                       "lgacc.model.calibrated.host; it matters only where the host's floor binds)", lambda r: ()),
    "recompute_early_stop": (False, "a recomputed layer runs its whole forward again, as Megatron-LM's and DeepSpeed's "
                             "checkpoint functions do (a run whose framework recomputes with PyTorch's non-reentrant "
                             "checkpoint, torch 2.1 and later, says so in its file: LLM Foundry, torchtitan; it matters "
                             "only with recomputation)", lambda r: ()),
    "rope_kernel": ("fused", "a rotary embedding fused into one kernel a tensor and pass (Transformer Engine's, which "
                    "Megatron-LM, NeMo and Megatron-Bridge call by default; a run whose framework rotates in eager "
                    "complex fp32, torchtitan's, says so in its file; it matters only for a model with rotary "
                    "positions)", lambda r: ()),
    "norm_kernel": ("fused", "fused norms, one kernel each way (Transformer Engine's, Apex's and Megatron-LM's, PyTorch's "
                    "layer norm, torch.compile's; a run whose framework runs its norms as PyTorch operations, "
                    "torchtitan's rmsnorm without torch.compile, says so in its file)", lambda r: ()),
    "activation_kernel": ("fused", "a fused gated activation (Megatron-LM's bias_swiglu_fusion, Transformer Engine's; a run "
                          "whose framework runs the SiLU and the product apart, torchtitan's without torch.compile, "
                          "says so in its file; it matters only for a gated feed-forward)", lambda r: ()),
    "loss_kernel": (None, "the cross entropy's kernels as logit_bytes names them (Megatron-LM's vocab-parallel loss "
                    "by default; a run whose framework uses another, LLM Foundry's fused_crossentropy or Transformer Engine's "
                    "through Megatron-LM's --cross-entropy-loss-fusion, says so in its file)", lambda r: ()),
}


@dataclass(frozen=True)
class Run:
    """One published run, as printed, with the reading the model evaluates (``reading``: every field of
    :data:`READING_FIELDS`, stated or assumed) and the other readings of what the source leaves open."""

    id: str
    publication: str
    citation: str
    model: Transformer
    hardware: Hardware
    n_gpu: int
    n_a: int
    n_l: int
    b: int
    b_mu: int
    micro_batch_stated: bool
    recomputation: str
    interleaved_schedule: str
    flop_formula: str
    reported: Mapping[str, Any]
    method: Method = Method.BASELINE
    schedule: str = "gpipe"
    n_v: int = 1
    recipe: Recipe = field(default_factory=Recipe)
    stated: tuple[str, ...] = ()
    assumed: Mapping[str, str] = field(default_factory=dict)
    bracket: tuple[tuple[str, Any], ...] = ()
    uses: tuple[str, ...] = ("time",)
    #: peer tool -> its own published prediction of this run (``iteration_time_s``, ``memory_gib_per_gpu``)
    peers: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    #: expert-parallel and context-parallel degrees, compute precision (issue #36)
    n_e: int = 1
    n_c: int = 1
    precision: str = "bf16"

    @property
    def n_b(self) -> int:
        return self.n_gpu // (self.n_a * self.n_l * self.n_c)

    @property
    def is_moe(self) -> bool:
        """Whether the run's model has routed experts."""
        return bool(self.model.is_sparse)

    @property
    def extended(self) -> bool:
        """Whether the run needs the sparse extension: experts, context parallelism or FP8 (else a dense bf16
        run, evaluated exactly as before issue #36)."""
        return self.is_moe or self.n_c > 1 or self.precision != "bf16"

    @property
    def n_mu(self) -> int:
        return self.b // (self.n_b * self.b_mu)

    @property
    def memory_statistic(self) -> str:
        """What the measured memory is: ``allocated`` (the allocator's live tensors, ``max_memory_allocated``),
        ``reserved`` (its pool, ``max_memory_reserved``), ``device`` (NVML's used memory: nvidia-smi, gpustat) or
        ``not stated``."""
        return str(self.reported.get("memory_statistic", NOT_STATED))

    @property
    def measured_memory_gib(self) -> float | None:
        value = self.reported.get("memory_gib_per_gpu")
        return None if value is None else float(value)

    def config(self) -> TrainingConfig:
        """The configuration in the paper's terms: the run's method, a partitioned state iff ZeRO-3."""
        partitioned = self.recipe.zero_stage == 3
        return TrainingConfig(method=self.method, n_b=self.n_b, n_l=self.n_l, n_a=self.n_a, n_mu=self.n_mu,
                              b_mu=self.b_mu, partitioned=partitioned, n_e=self.n_e, n_c=self.n_c,
                              precision=self.precision)

    @property
    def chunk_slots(self) -> int:
        """Chunks a pipeline may cut: ``d_l``, and two more where the embedding and the head take a chunk each
        (the recipe's ``vocabulary_chunks``)."""
        return self.model.d_l + (2 if self.recipe.vocabulary_chunks else 0)

    @property
    def ideal_n_v(self) -> int:
        """The chunks per device the ideal model evaluates: the run's, at most ``d_l // n_l`` (the paper's chunks
        hold layers only; a run whose embedding and head take chunks of their own may have more)."""
        return self.n_v if self.n_l == 1 else max(1, min(self.n_v, self.model.d_l // self.n_l))

    def reading(self) -> dict[str, Any]:
        """Every field of :data:`READING_FIELDS` as evaluated."""
        values = {"schedule": self.schedule, "n_v": self.n_v, "micro_batch_size": self.b_mu,
                  "recomputation": self.recipe.recompute}
        values.update({name: getattr(self.recipe, name) for name in
                       ("sequence_parallel", "flash_attention", "dropout", "zero_stage", "grad_reduce_bytes",
                        "dp_overlap", "tp_overlap", "dp_network", "attention_kernel", "mixed_precision",
                        "main_grad_bytes", "logit_bytes", "ddp_bucket_copy", "cuda_graphs", "host_sync",
                        "deepspeed_optimizer", "deepspeed_pipeline", "vocabulary_chunks", "ep_overlap",
                        "moe_dispatcher", "fsdp_pipeline_unsharded", "host_framework", "recompute_early_stop",
                        "rope_kernel", "norm_kernel", "activation_kernel", "loss_kernel")})
        return values

    def with_reading(self, name: str, value: Any) -> "Run | None":
        """The same run with one field read otherwise (a bracket's end), or None if the run cannot take it."""
        if name == "micro_batch_size":
            if self.b % (self.n_b * value):
                return None
            return dataclasses.replace(self, b_mu=value)
        if name == "schedule":
            schedule, n_v = value if isinstance(value, tuple) else (value, 1)
            if self.n_l > 1 and self.n_l * n_v > self.chunk_slots:
                return None
            return dataclasses.replace(self, schedule=schedule, n_v=n_v)
        if name == "n_v":
            if self.n_l * value > self.chunk_slots and self.n_l > 1:
                return None
            return dataclasses.replace(self, n_v=value)
        recipe_name = "recompute" if name == "recomputation" else name
        changed = dataclasses.replace(self, recipe=self.recipe.replace(**{recipe_name: value}))
        return dataclasses.replace(changed, recomputation=value) if name == "recomputation" else changed


def _read(path: Path) -> dict:
    """The one place a run file is parsed: the hardware specs' safe reader (:mod:`lgacc.yamlfile`)."""
    return load_yaml_mapping(path, "run file")


#: Words of a descriptive ``precision`` text (the MosaicML files': "amp_bf16 / FSDP mixed precision DEFAULT") that
#: name each compute precision.
PRECISION_WORDS = {"bf16": ("bf16", "bfloat16"), "fp8": ("fp8", "float8")}


def _precision(where: str, value: Any) -> str:
    """The compute precision of a run: a precision name (``bf16``, ``fp8``), or a text describing the recipe that
    names exactly one of them (the files written before issue #36 describe their mixed precision in words)."""
    if not isinstance(value, str):
        raise UserInputError(f"{where}: precision={value!r} must be bf16 or fp8 (or a text naming one of them)")
    text = value.strip().lower()
    if text in PRECISION_WORDS:
        return parse_precision(text)
    named = [name for name, words in PRECISION_WORDS.items() if any(word in text for word in words)]
    if len(named) != 1:
        raise UserInputError(f"{where}: precision={value!r} must be bf16 or fp8 (or a text naming exactly one)")
    return named[0]


def _positive_number(origin: str, name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        raise UserInputError(f"{origin}: {name}={value!r} must be a positive number")
    return float(value)


def _text(origin: str, name: str, value: Any) -> str:
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise UserInputError(f"{origin}: {name}={value!r} must be a text")
    return str(value)


def _check_value(where: str, name: str, value: Any) -> Any:
    """A field's value as the model takes it, or one clear line."""
    if name == "schedule":
        schedule = parse_schedule(value) if isinstance(value, str) else None
        if schedule is None:
            raise UserInputError(f"{where}: schedule={value!r} must be a schedule name or {NOT_STATED!r}")
        return schedule
    if name in ("n_v", "micro_batch_size"):
        return positive_int(where, name, value)
    choices = READING_FIELDS[name]
    if isinstance(value, bool) != isinstance(choices[0], bool) or value not in choices:
        raise UserInputError(f"{where}: {name}={value!r} must be one of {', '.join(map(str, choices))} or {NOT_STATED!r}")
    return value


def _assumption(where: str, table: Any, name: str) -> tuple[Any, str] | None:
    """``(value, why)`` of ``name`` in an ``assumed`` mapping, or None."""
    if table is None:
        return None
    if not isinstance(table, dict):
        raise UserInputError(f"{where}: assumed must map a field to {{value: ..., why: ...}}")
    entry = table.get(name)
    if entry is None:
        return None
    if not isinstance(entry, dict) or set(entry) != {"value", "why"}:
        raise UserInputError(f"{where}: assumed.{name} must be {{value: ..., why: ...}}")
    return _check_value(where, name, entry["value"]), _text(where, f"assumed.{name}.why", entry["why"])


def _bracket_value(where: str, name: str, value: Any) -> Any:
    """A bracket's value; a schedule with chunks may name them, ``interleaved:2`` (kept as ``(name, n_v)``)."""
    if name == "schedule" and isinstance(value, str) and ":" in value:
        schedule, _, chunks = value.partition(":")
        try:
            n_v = int(chunks)
        except ValueError:
            raise UserInputError(f"{where}: bracket schedule {value!r} must be NAME or NAME:CHUNKS") from None
        return _check_value(where, name, schedule), positive_int(where, "n_v", n_v)
    return _check_value(where, name, value)


def _bracket(where: str, table: Any, name: str) -> tuple[Any, ...] | None:
    if table is None or name not in table:
        return None
    values = table[name]
    if not isinstance(values, list):
        raise UserInputError(f"{where}: bracket.{name} must be a list of values")
    return tuple(_bracket_value(where, name, value) for value in values)


def _resolve(where: str, spec: Mapping[str, Any], top: Mapping[str, Any], known: Mapping[str, Any]):
    """``(values, stated, assumed reasons, bracket)`` of every reading field of one run."""
    values, stated, reasons, bracket = {}, [], {}, []
    for name in READING_FIELDS:
        given = spec.get(name, NOT_STATED)
        if given != NOT_STATED:
            values[name] = _check_value(where, name, given)
            stated.append(name)
            continue
        if name == "schedule" and known["n_l"] == 1:  # no pipeline: no schedule to assume
            values[name] = "gpipe"
            stated.append(name)
            continue
        found = _assumption(where, spec.get("assumed"), name) or _assumption(where, top.get("assumed"), name)
        from_default = found is None
        if from_default:
            default, why, _ = DEFAULTS[name]
            found = (default(known) if callable(default) else default, why)
        values[name], reasons[name] = found
        others = _bracket(where, spec.get("bracket"), name)
        if others is None:
            others = _bracket(where, top.get("bracket"), name)
        if others is None:  # an assumption with its reason brackets only what its file lists
            others = DEFAULTS[name][2](known) if from_default else ()
        bracket.extend((name, value) for value in others if value != values[name])
    return values, tuple(stated), reasons, tuple(bracket)


def _uses(where: str, spec: Mapping[str, Any], reported: Mapping[str, Any]) -> tuple[str, ...]:
    uses = spec.get("use")
    if uses is None:
        return ("time", "memory") if "memory_gib_per_gpu" in reported else ("time",)
    if not isinstance(uses, list) or not uses or any(u not in USES for u in uses):
        raise UserInputError(f"{where}: use={uses!r} must be a list of {', '.join(USES)}")
    return tuple(uses)


#: What a measured peak memory may be: the allocator's live tensors (``max_memory_allocated``), its reserved pool
#: (``max_memory_reserved``), the device memory in use as NVML reports it (``device``: nvidia-smi, gpustat: the
#: reserved pool plus the CUDA context and the communication library's buffers), or unsaid.
MEMORY_STATISTICS = ("allocated", "reserved", "device", NOT_STATED)
#: How the CUDA runtime loaded its kernels in a run with ``device`` memory (``reported.cuda_module_loading``): all at
#: start (``eager``, before CUDA 11.7 / PyTorch 1.13) or on first use (``lazy``, as pytorch/pytorch#86509 measured it
#: with CUDA 11.7; ``lazy-cuda13``, as this package measured it with CUDA 13.0); the context it costs differs.
CUDA_MODULE_LOADING = ("eager", "lazy", "lazy-cuda13")


def _peers(where: str, table: Any) -> dict[str, dict[str, float]]:
    """``peers``: tool name -> its own published prediction of the run (``iteration_time_s``, ``memory_gib_per_gpu``)."""
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise UserInputError(f"{where}: peers must map a tool's name to its predictions")
    out = {}
    for tool, values in table.items():
        if not isinstance(values, dict) or not values or set(values) - {"iteration_time_s", "memory_gib_per_gpu"}:
            raise UserInputError(f"{where}: peers.{tool} must give iteration_time_s and/or memory_gib_per_gpu")
        out[str(tool)] = {key: _positive_number(where, f"peers.{tool}.{key}", value) for key, value in values.items()}
    return out


#: Percentage points a run's printed share of the peak may differ from its printed TFLOP/s over the spec's
#: peak: both are rounded (137 TFLOP/s of 312 is 43.9 %, printed 44).
PERCENT_TOLERANCE = 1.0


def _check_percent_of_peak(where: str, reported: Mapping[str, Any], hardware: Hardware) -> None:
    """``reported.percent_of_peak``, when given, is a share of the peak (0 to 100 %) that agrees with
    ``reported.tflops_per_gpu`` on the spec's peak (within :data:`PERCENT_TOLERANCE` points)."""
    if "percent_of_peak" not in reported:
        return
    percent = reported["percent_of_peak"]
    if isinstance(percent, bool) or not isinstance(percent, (int, float)) or not 0 < percent <= 100:
        raise UserInputError(f"{where}: reported.percent_of_peak={percent!r} must be a share of the peak, "
                             "above 0 and at most 100")
    if "tflops_per_gpu" in reported:
        implied = float(reported["tflops_per_gpu"]) * 1e12 / hardware.peak_flop_per_s * 100
        if abs(implied - percent) > PERCENT_TOLERANCE:
            raise UserInputError(
                f"{where}: reported.percent_of_peak={percent!r} disagrees with tflops_per_gpu="
                f"{reported['tflops_per_gpu']!r}, which is {implied:.1f} % of the {hardware.name} peak "
                f"{hardware.peak_flop_per_s / 1e12:g} TFLOP/s")


def _run(spec: Mapping[str, Any], top: Mapping[str, Any], hardware: Hardware, origin: str, folder: Path,
         overridden: bool = False) -> Run | None:
    if not isinstance(spec, dict):
        raise UserInputError(f"{origin}: each run must be a mapping")
    where = f"{origin} run {spec.get('id', '?')!r}"
    for key in ("id", "citation", "model", "n_gpu", "tensor_parallel", "pipeline_parallel", "batch_size",
                "sequence_length", "reported"):
        if key not in spec:
            raise UserInputError(f"{where}: missing key {key!r}")
    n_gpu, n_a, n_l, b, d_s = (positive_int(where, k, spec[k]) for k in
                                ("n_gpu", "tensor_parallel", "pipeline_parallel", "batch_size", "sequence_length"))
    n_e, n_c = (positive_int(where, k, spec.get(k, 1)) for k in ("n_e", "n_c"))
    precision = _precision(where, spec.get("precision", top.get("precision", "bf16")))
    if n_gpu % (n_a * n_l * n_c):
        raise UserInputError(f"{where}: n_gpu={n_gpu} is not a multiple of tensor x pipeline x context = "
                             f"{n_a * n_l * n_c}")
    method = parse_method(spec.get("method", "baseline"))
    n_b = n_gpu // (n_a * n_l * n_c)
    if (n_b * n_c) % n_e:
        raise UserInputError(f"{where}: n_e={n_e} must divide data x context parallel = {n_b * n_c}")
    known = {"n_l": n_l, "n_a": n_a, "n_b": n_b, "method": method, "formula": top["flop_formula"],
             "replica_batch": max(1, b // n_b)}
    values, stated, reasons, bracket = _resolve(where, spec, top, known)
    if values["schedule"] not in CHUNKED_SCHEDULES and "n_v" not in stated:  # one chunk: nothing to assume
        values["n_v"] = 1
        reasons.pop("n_v", None)
        bracket = tuple((name, value) for name, value in bracket if name != "n_v")
    b_mu = values["micro_batch_size"]
    if b % (n_b * b_mu):
        raise UserInputError(f"{where}: batch_size={b} is not a multiple of n_b b_mu = {n_b * b_mu}")
    if values["schedule"] not in CHUNKED_SCHEDULES and values["n_v"] != 1:
        raise UserInputError(f"{where}: n_v={values['n_v']} needs a schedule with chunks ({', '.join(CHUNKED_SCHEDULES)})")
    reported = spec["reported"]
    if not isinstance(reported, dict) or not ({"iteration_time_s", "tflops_per_gpu"} & set(reported)):
        raise UserInputError(f"{where}: reported must give iteration_time_s or tflops_per_gpu")
    for key in ("iteration_time_s", "tflops_per_gpu", "memory_gib_per_gpu"):
        if key in reported:
            _positive_number(where, f"reported.{key}", reported[key])
    _check_percent_of_peak(where, reported, hardware)
    if reported.get("memory_statistic", NOT_STATED) not in MEMORY_STATISTICS:
        raise UserInputError(f"{where}: reported.memory_statistic={reported['memory_statistic']!r} must be one of "
                             f"{', '.join(MEMORY_STATISTICS)}")
    loading = reported.get("cuda_module_loading")
    if loading is not None and loading not in CUDA_MODULE_LOADING:
        raise UserInputError(f"{where}: reported.cuda_module_loading={loading!r} must be one of "
                             f"{', '.join(CUDA_MODULE_LOADING)}")
    peers = _peers(where, spec.get("peers"))
    for key in ("id", "citation"):
        _text(where, key, spec[key])
    if not isinstance(spec["model"], str):
        raise UserInputError(f"{where}: model={spec['model']!r} must be a model name or a path to a model file "
                             "(relative to the run file's folder or to data/validation)")
    model = load_model(_beside(folder / "run.yaml", spec["model"]))
    if model.d_s != d_s:
        model = dataclasses.replace(model, d_s=d_s, n_I=None)
    if n_e > 1 and not model.is_sparse:
        raise UserInputError(f"{where}: n_e={n_e} needs a model with experts ({model.name} has none)")
    if n_e > 1 and model.experts % n_e:
        raise UserInputError(f"{where}: n_e={n_e} must divide the model's {model.experts} experts")
    if precision != "bf16" and hardware.peak_fp8_flop_per_s is None:
        if overridden:  # --hardware names a GPU without an FP8 peak: the run is left out (fp8_runs_left_out)
            return None
        raise UserInputError(f"{where}: precision={precision} needs a spec with peak_fp8_flop_per_s "
                             f"({hardware.name} has none)")
    recipe = Recipe(recompute=values["recomputation"], sequence_parallel=values["sequence_parallel"],
                    flash_attention=values["flash_attention"], dropout=values["dropout"],
                    zero_stage=values["zero_stage"], grad_reduce_bytes=values["grad_reduce_bytes"],
                    dp_overlap=values["dp_overlap"], tp_overlap=values["tp_overlap"], dp_network=values["dp_network"],
                    attention_kernel=values["attention_kernel"], mixed_precision=values["mixed_precision"],
                    main_grad_bytes=values["main_grad_bytes"], logit_bytes=values["logit_bytes"],
                    ddp_bucket_copy=values["ddp_bucket_copy"], cuda_graphs=values["cuda_graphs"],
                    host_sync=values["host_sync"],
                    deepspeed_optimizer=values["deepspeed_optimizer"],
                    deepspeed_pipeline=values["deepspeed_pipeline"],
                    vocabulary_chunks=values["vocabulary_chunks"], ep_overlap=values["ep_overlap"],
                    moe_dispatcher=values["moe_dispatcher"],
                    fsdp_pipeline_unsharded=values["fsdp_pipeline_unsharded"], host_framework=values["host_framework"],
                    recompute_early_stop=values["recompute_early_stop"], rope_kernel=values["rope_kernel"],
                    norm_kernel=values["norm_kernel"], activation_kernel=values["activation_kernel"],
                    loss_kernel=values["loss_kernel"])
    return Run(
        id=str(spec["id"]), publication=str(top["publication"]), citation=str(spec["citation"]), model=model,
        hardware=hardware, n_gpu=n_gpu, n_a=n_a, n_l=n_l, b=b, b_mu=b_mu,
        micro_batch_stated="micro_batch_size" in stated, recomputation=values["recomputation"],
        interleaved_schedule=str(spec.get("interleaved_schedule", NOT_STATED)), flop_formula=str(top["flop_formula"]),
        reported=dict(reported), method=method, schedule=values["schedule"], n_v=values["n_v"], recipe=recipe,
        stated=stated, assumed=reasons, bracket=bracket, uses=_uses(where, spec, reported), peers=peers,
        n_e=n_e, n_c=n_c, precision=precision,
    )


def _cluster_hardware(top: Mapping[str, Any], path: Path, hardware_override: Hardware | str | None) -> Hardware:
    """The file's hardware (a shipped name, or a path relative to the run file), with its cluster's node size and
    network; ``hardware_override`` replaces the spec (the node size kept)."""
    origin = f"run file {path.name}"
    given = top["hardware"]
    cluster = top.get("cluster") or {}
    if not isinstance(cluster, dict):
        raise UserInputError(f"{origin}: cluster={cluster!r} must be a mapping (gpus_per_node, infiniband_gb_per_s)")
    hardware = load_hardware(hardware_override if hardware_override is not None else _beside(path, given))
    changes: dict[str, Any] = {}
    if "gpus_per_node" in cluster:
        changes["gpus_per_node"] = positive_int(origin, "cluster.gpus_per_node", cluster["gpus_per_node"])
    if "infiniband_gb_per_s" in cluster and hardware_override is None:
        value = cluster["infiniband_gb_per_s"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise UserInputError(f"{origin}: cluster.infiniband_gb_per_s={value!r} must be a positive number")
        changes["infiniband_bandwidth_bytes_per_s"] = float(value) * GB
    return hardware.replace(**changes) if changes else hardware


def _beside(run_file: Path, given: str) -> Path | str:
    """A spec or model path relative to the run file's folder, else to the shipped ``data/validation`` (a file
    copied elsewhere keeps reading the shipped ones); a name stays a name."""
    if not is_path(given):
        return given
    here = run_file.parent / given
    return here if here.exists() or Path(given).is_absolute() else DATA_DIR / given


def _run_files(data_dir: Path | str) -> list[Path]:
    """The ``*.yaml`` files of the folder ``data_dir``; an error unless there is at least one."""
    if not isinstance(data_dir, (str, Path)) or not str(data_dir).strip():
        raise UserInputError(f"runs folder {data_dir!r} must be a path to a folder")
    folder = Path(data_dir)
    try:
        if not folder.is_dir():
            reason = "is a file, expected a folder of run files" if folder.exists() else "no such folder"
            raise UserInputError(f"runs folder {str(data_dir)!r}: {reason}")
        files = sorted(path for path in folder.glob("*.yaml"))
    except OSError as error:
        raise UserInputError(f"runs folder {str(data_dir)!r}: cannot be read: {error.strerror or error}") from None
    if not files:
        raise UserInputError(f"runs folder {str(data_dir)!r}: holds no run file (*.yaml)")
    return files


def load_runs(data_dir: Path | str = DATA_DIR, hardware: Hardware | str | None = None) -> tuple[Run, ...]:
    """Every run of every file of ``data_dir``; ``hardware`` replaces each file's (its node size kept)."""
    runs: list[Run] = []
    for path in _run_files(data_dir):
        origin = f"run file {path.name}"
        top = _read(path)
        for key in ("publication", "hardware", "flop_formula", "runs"):
            if key not in top:
                raise UserInputError(f"{origin}: missing key {key!r}")
        _text(origin, "publication", top["publication"])
        if not isinstance(top["hardware"], str):
            raise UserInputError(f"{origin}: hardware={top['hardware']!r} must be a shipped spec name or a path")
        if top["flop_formula"] not in FLOP_FORMULAS:
            raise UserInputError(f"{origin}: flop_formula={top['flop_formula']!r} must be one of {', '.join(FLOP_FORMULAS)}")
        if not isinstance(top["runs"], list) or not top["runs"]:
            raise UserInputError(f"{origin}: runs must be a non-empty list of runs")
        cluster_hw = _cluster_hardware(top, path, hardware)
        runs.extend(_run(spec, top, cluster_hw, origin, path.parent, hardware is not None) for spec in top["runs"])
    left_out = sum(run is None for run in runs)
    runs = [run for run in runs if run is not None]
    if not runs:
        raise UserInputError(f"runs folder {str(data_dir)!r}: its {left_out} runs compute in FP8 and the hardware "
                             "given has no peak_fp8_flop_per_s")
    ids = [run.id for run in runs]
    if len(set(ids)) != len(ids):
        raise UserInputError(f"run files: duplicate run id {next(i for i in ids if ids.count(i) > 1)!r}")
    return tuple(runs)


def fp8_runs_left_out(data_dir: Path | str = DATA_DIR, hardware: Hardware | str | None = None) -> tuple[str, ...]:
    """The ids of the FP8 runs that :func:`load_runs` leaves out when ``hardware`` (replacing each file's) has no
    dense FP8 peak: none without a replacement, or with one that has the peak."""
    if hardware is None or load_hardware(hardware).peak_fp8_flop_per_s is not None:
        return ()
    return tuple(run.id for run in load_runs(data_dir) if run.precision == "fp8")
