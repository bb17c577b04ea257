"""The measured-runs chapter's sentences, each from the comparison frame (:func:`.tables.frame_for`) and its
summary (:func:`.tables.summary`): the notebook only shows them.

Every number is read from those two; a sentence that states a finding (the ideal bound fails for some
method under the paper's network count) states it only where the frame shows it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from .ideal import DP_NETWORKS
from .peer_terms import TERM_NAMES
from .tables import CALCULON_ERROR, CONTEXT_GIB, EXTENSIONS, dense_rows

__all__ = ["runs_sentence", "bound_paragraph", "errors_sentence", "memory_sentence", "worst_runs_markdown",
           "onefactor_sentence", "peers_paragraph", "peer_flag_sentence", "peer_terms_paragraph", "extensions_paragraph",
           "host_floor_bullet", "te_readings"]


def runs_sentence(numbers: Mapping[str, Any]) -> str:
    """How many runs, of which method, and how many are compared on time and on memory."""
    methods = numbers["methods"]
    return (f"**{numbers['runs']} runs from {numbers['publications']} publications and benchmark suites**: "
            + ", ".join(f"{v['runs']} of the {k} method ({v['publications']} sources)" for k, v in methods.items())
            + f". {numbers['time_runs']} are compared on their step time, {numbers['memory_runs']} on their measured "
            "memory (torchtitan's H100 runs of unknown peak flop/s, BigScience's topology probes and the "
            "Lightning GPT-2 benchmarks on memory only).")


def bound_paragraph(frame: pd.DataFrame, numbers: Mapping[str, Any]) -> str:
    """On how many runs the ideal model is an upper bound on speed under each data-parallel network reading, which
    runs it fails for (and of which method) under the paper's per-GPU count, and at the readings of unstated choices
    that make each run do the most work."""
    bound = numbers["ideal_upper_bound"]
    frame = dense_rows(frame)  # the summary's population; the MoE and FP8 runs: extensions_paragraph
    failed = frame.loc[~frame["upper_bound"].astype(bool)]
    text = (f"**Under the paper's per-GPU count** the measured step is at least the ideal one for {bound['per-gpu']} of "
            f"{bound['of']} runs")
    if len(failed):
        methods = sorted(set(failed["method"]))
        text += (f"; it is not for {len(failed)} runs, all of the {', '.join(methods)} method"
                 f"{'s' if len(methods) > 1 else ''} ({', '.join(failed['id'])}): their measured steps are faster than "
                 "the paper's model allows, because the paper counts each GPU's full data-parallel volume through its "
                 "own network card. This is a finding about the paper's model, not an error of the runs.")
    else:
        text += ": the ideal model is an upper bound on speed for every run."
    for network in DP_NETWORKS[1:]:
        text += f" Under the **{network}** reading it holds for {bound[network]} of {bound['of']} runs."
    return text + (f" At the readings of unstated choices that make each run do the most work, the bound holds for "
                   f"{bound['every_reading']} of {bound['of']}.")


def _nvlink(gpu: str) -> dict[str, float]:
    """The NVLink collectives' constants the GPU ``gpu`` reads on its own node (a fit measured on such a node, else
    its NVLink generation's table: :func:`lgacc.model.calibrated.links.nvlink_constants`)."""
    from lgacc.model.calibrated.links import nvlink_constants
    from lgacc.model.hardware import load_hardware

    hardware = load_hardware(gpu)
    return nvlink_constants(hardware.nvlink_bandwidth_bytes_per_s / 2, hardware.gpus_per_node)[1]


def errors_sentence(numbers: Mapping[str, Any], parameters) -> str:
    """The fitted parameters and the calibrated model's errors: held out, fitted on all, within publication (beside
    Calculon's), and memory."""
    nvlink4, nvlink5 = _nvlink("h100-sxm"), _nvlink("b200")
    return (f"Fitted on the step times of {numbers['time_runs']} runs: $\\kappa$ = {parameters.kappa:.3g} (the share of "
            f"the isolated kernels' matrix-multiply speed real layers reach: of each layer product's efficiency "
            f"measured by shape on H100-class GPUs, of the GPU's best elsewhere) and $\\xi$ = {parameters.xi:.3g} (the share of "
            f"an overlapped collective's time that still slows the compute it overlaps), the two fitted parameters; "
            f"$\\eta$ = "
            f"{parameters.eta:.3g} (achieved over link bandwidth) and the NVLink latency "
            f"{parameters.nvlink_latency_s * 1e6:.0f} µs come from an α–β fit to a published NCCL all-reduce benchmark "
            f"on A100 (H100 and H200 read the NVLink 4 table of the same benchmark: $\\eta$ "
            f"{nvlink4['eta_nvl']:.3g}, {nvlink4['alpha_nvl'] * 1e6:.0f} µs; the B200 reads SimuMax's all-gather and "
            f"reduce-scatter fits, measured on its 8-GPU node: $\\eta$ {nvlink5['eta_nvl']:.3g}, "
            f"{nvlink5['alpha_nvl'] * 1e6:.0f} µs plus {nvlink5['delta_nvl'] * 1e6:.1f} µs for each rank beyond the "
            f"first), an eager framework's step is never "
            f"shorter than its host takes to issue it ({parameters.host_layer_s * 1e3:.1f} ms per layer and micro-batch, "
            f"{parameters.host_micro_batch_s * 1e3:.1f} ms per micro-batch and {parameters.host_step_s * 1e3:.1f} ms per "
            f"step for plain PyTorch, measured on an H100; the reduction left after the last backward pass and the optimizer step follow "
            f"that floor, not fill it, because Megatron-LM waits for the device at the gradients' norm and at its step "
            f"timer), and no constant time per step is fitted. **Leave one publication out: "
            f"{numbers['lopo_mean_error']:.1%} mean, {numbers['lopo_max_error']:.1%} worst** over {numbers['time_runs']} "
            f"runs of {numbers.get('time_publications', numbers['publications'])} sources; fitted on all: {numbers['fitted_mean_error']:.1%}; within "
            f"publication: {numbers['within_publication_error']:.1%}, beside Calculon's {CALCULON_ERROR:.2%}. Memory: "
            f"{numbers['memory_mean_error']:.1%} mean, {numbers['memory_max_error']:.1%} worst over the "
            f"{numbers['memory_runs']} runs whose source measured it.")


def memory_sentence(parameters, numbers: Mapping[str, Any] | None = None) -> str:
    """What the measured memory is and what the model counts, so that the reader knows which way it errs; with the
    summary's ``numbers``, the error for each statistic (allocated, reserved, device) apart, how many runs read
    below their measurement, and the runs whose source gives both the allocation and the pool."""
    text = ("The model predicts PyTorch's peak **allocated** memory: the tensors alive at the peak and "
            f"{parameters.fragmentation:.0%} of the activations for fragmentation. A source's *reserved* memory (the "
            "caching allocator's pool, freed blocks included) is larger, and the *device* memory nvidia-smi or "
            "gpustat show (the pool, the CUDA context and the communication buffers) larger still. Each reading is "
            "compared with its own prediction, each term measured or documented, none fitted: a reserved reading "
            "with the prediction times the pool's measured size over the allocation (the mean over the runs whose "
            "source publishes both, the run's own source left out), plus, for DeepSpeed's fp16 optimizer, its step's "
            "flat gradients, which sit beside that pool in segments of their own (PyTorch's caching allocator never "
            "merges the blocks of different segments, and no block the backward freed holds a whole gradient "
            "partition); a "
            "device reading with that, plus the CUDA "
            f"context as the run's software loaded its kernels (with CUDA 11.7, {CONTEXT_GIB['eager']} loading every "
            f"kernel at start and {CONTEXT_GIB['lazy']} loading them lazily, as PyTorch measured it; with CUDA 13, "
            f"{CONTEXT_GIB['lazy-cuda13']} once training steps have loaded theirs, as measured on the H100 page) and NCCL's buffers at their documented defaults (10 MiB per channel: 4 MiB for "
            "the Simple protocol, 0.5 MiB for LL, 4.7 MiB for LL128, rounded to 2 MiB; 32 channels; per "
            "communicator of two GPUs or more: one per parallel dimension, and the world group beside two or "
            "more; with DeepSpeed's pipeline engine also its own slice, model-parallel and tied-embedding groups). "
            "The training state is "
            "counted as the run's framework keeps it (the recipe's memory fields, stated in each run file): "
            "Megatron-LM's half-precision weights beside fp32 master weights, Adam's moments and a main gradient "
            "(18 bytes a parameter with fp32 gradients, 16 with DeepSpeed fp16's 2-byte ones); PyTorch AMP's fp32 "
            "weights and moments (12 bytes), its gradients only from the backward pass on when zero_grad frees "
            "them, autocast's half copies of the matrix weights and an fp32 residual stream; PyTorch DDP's second "
            "copy of the gradients in its buckets; DeepSpeed's fp16 optimizer (DeepSpeed 0.5's defaults), whose "
            "gradient reduction flattens a bucket of up to 5e8 gradients and whose step flattens the gradients to "
            "fp32 after the backward, so that they raise the peak where the state outweighs the activations; "
            "DeepSpeed's pipeline engine, which keeps each in-flight micro-batch's stage output and restores it in "
            "full beside its gradient at the backward; and the bytes a logit takes at the loss (10 for Megatron-LM's "
            "vocab-parallel cross entropy, 14 for PyTorch's on fp32 logits, 6 on half logits). The recipe's kernel choices "
            "(`rope_kernel`, `norm_kernel`, `activation_kernel`, `loss_kernel`) move time only: what eager kernels save for their "
            "backward beyond the fused kernel's (an eager RMSNorm's fp32 copy of its input) is not counted.")
    framework = getattr(parameters, "framework_gib", None)
    if framework is not None:
        text += (f" A fixed {framework * 1024:g} MiB of framework memory is added to every run: two cuBLAS "
                 "workspaces of the 32 MiB cuBLAS recommends on Hopper (the forward's and the backward thread's), "
                 "not fitted; this package's H100 steps measured 65-69 MiB beyond their state.")
    if numbers is None or not numbers.get("memory_by_statistic"):
        return text
    parts = [f"{name}: {v['runs']} runs of {v['publications']} source{'s' if v['publications'] > 1 else ''}, "
             f"{v['mean_error']:.1%} mean, {v['max_error']:.1%} worst ({v['mean_signed']:+.1%} on average"
             + (f"; below the measurement on {v['below_measured']}" if "below_measured" in v else "") + ")"
             for name, v in numbers["memory_by_statistic"].items()]
    text += " Measured " + "; ".join(parts) + "."
    both = numbers.get("memory_reserved_beside_allocated") or {}
    if both.get("runs"):
        text += (f" Where a source gives both for the same {both['runs']} runs, the pool is "
                 f"{both['measured_reserved_over_allocated'] - 1:.1%} larger than the allocation on average, and "
                 f"the prediction is {both['mean_error_vs_allocated']:.1%} from the allocation, "
                 f"{both['mean_error_vs_reserved']:.1%} from the pool.")
    return text


def worst_runs_markdown(frame: pd.DataFrame, count: int = 5) -> str:
    """The dense bf16 runs the calibrated model predicts worst, each with its publication left out of the fit."""
    frame = dense_rows(frame)
    timed = frame[frame["uses"].str.contains("time")]
    worst = timed.assign(error=(timed["lopo_ratio"] - 1).abs()).nlargest(count, "error")
    lines = [f"* `{row.id}` ({row.publication}): predicted {row.expected_lopo_s:.3g} s with its source left out, "
             f"measured {row.measured_step_s:.3g} s ({row.lopo_ratio - 1:+.0%})." for row in worst.itertuples()]
    return (f"The {len(lines)} runs the calibrated model predicts worst, each with its source left out of the fit:\n\n"
            + "\n".join(lines))


def host_floor_bullet(frame: pd.DataFrame, runs, parameters, readings: Mapping[str, float] | None = None) -> str:
    """What Megatron-LM with Transformer Engine costs its host per layer, read from the runs that wait on it (GPT-2 1.2B
    with one micro-batch on TP 2, 4 and 8, megatron-tutorials; Llama-3-70B's 12 layers on TP 8 with 4 micro-batches,
    SimuMax), beside the floor the calibrated model takes for a Megatron run (plain PyTorch's, measured on an H100, and
    what Megatron-Core's own layer costs the host more, measured the same way), and how the pipeline runs with many
    micro-batches still read with their source left out; then the same runs read with Transformer Engine's measured
    host cost (``readings``, held-out ratio less one by run; None: computed by :func:`te_readings`)."""
    by_id = frame.set_index("id")
    layers = {run.id: run.model.d_l for run in runs}
    tp = [f"mtut-tpstrong-r1{i}-gpt2-1.2b-tp{n}-gbs8" for i, n in ((2, 2), (3, 4), (4, 8))]
    llama = "simumax-b200-llama3-70b-l12-tp8-pp1-dp1-mbc4-cef"
    many = ["mtut-pp-r5-gpt2-8.3b-pp8-m16", "mtut-pp-r6-gpt2-8.3b-pp8-m32"]
    if any(run_id not in by_id.index or run_id not in layers for run_id in (*tp, llama, *many)):
        return ""
    steps = [by_id.loc[run_id, "measured_step_s"] for run_id in tp]
    per_layer = min(steps) / layers[tp[0]]
    row = by_id.loc[llama]
    llama_per_layer = row.measured_step_s / (row.n_mu * layers[llama])
    megatron = parameters.host_layer_s + parameters.host_megatron_layer_s
    # the floor of one micro-batch of the 1.2B model's layers, Megatron-Core's terms (lgacc.model.calibrated.host)
    one = (parameters.host_megatron_step_s + parameters.host_megatron_micro_batch_s
           + layers[tp[0]] * (parameters.host_megatron_step_layer_s + megatron))
    signed = [by_id.loc[run_id, "lopo_ratio"] - 1 for run_id in many]
    te = te_readings(frame, runs, parameters, [*many, *tp, llama]) if readings is None else readings
    return (f"* **Megatron-LM's host, measured, and what its runs still read.** GPT-2 1.2B's step of one micro-batch "
            f"of 8 sequences reads {steps[0]:.3g}, {steps[1]:.3g} and {steps[2]:.3g} s on 2, 4 and 8 GPUs of tensor "
            f"parallelism (megatron-tutorials): the same time whatever the split, {per_layer * 1e3:.1f} ms per layer. "
            f"Llama-3-70B's {layers[llama]} layers on 8 B200s, 4 micro-batches, read {llama_per_layer * 1e3:.1f} ms "
            f"per layer and micro-batch (SimuMax). The model's floor for a Megatron run (recipe `host_framework="
            f"megatron`, plain PyTorch the bracket) is Megatron-Core's own, measured on an H100 ({{ref}}`measured-gpu`): "
            f"{megatron * 1e3:.2f} ms per layer and micro-batch (plain PyTorch's {parameters.host_layer_s * 1e3:.2f} ms "
            f"and {parameters.host_megatron_layer_s * 1e3:.2f} ms more), "
            f"{parameters.host_megatron_step_layer_s * 1e3:.2f} ms per layer and step (the optimizer's and the "
            f"gradients' work per tensor), {parameters.host_megatron_micro_batch_s * 1e3:.2f} ms per micro-batch and "
            f"{parameters.host_megatron_step_s * 1e3:.2f} ms per step: {one:.3g} s for the 1.2B model's "
            f"{layers[tp[0]]} layers and one micro-batch. The 1F1B runs of 16 and 32 "
            f"micro-batches of one sequence still read {signed[0]:+.0%} and {signed[1]:+.0%} with their source left "
            f"out. Transformer Engine's modules, which these runs use, were measured beside Megatron-Core's own on one "
            f"H200 ({{ref}}`measured-gpu`): with Megatron-LM's default fusions its layer costs the host "
            f"{parameters.host_te_layer_s * 1e3:.2f} ms more per layer and micro-batch (recipe `host_framework="
            f"megatron_te`). Read that way the two 1F1B runs would come to {te[many[0]]:+.0%} and {te[many[1]]:+.0%} "
            f"and Llama-3-70B's to {te[llama]:+.0%}, but the 1.2B model's one-micro-batch runs, on the same machine "
            f"and software as the 1F1B runs, would go to {min(te[r] for r in tp):+.0%} to {max(te[r] for r in tp):+.0%}: "
            f"their host issues a layer faster than the lent H200's did{_shape_clause()}, so the measurement is the "
            f"bracket's other end, not the reading, and what slows the 1F1B runs' slots stays open.")


def _shape_clause() -> str:
    """The lent H200's own step of megatron-tutorials' host-bound GPT-2 XL run, beside the published one."""
    from lgacc.studies.gpu_measured import tutorial_shapes_against_calibrated

    shapes = tutorial_shapes_against_calibrated()
    if not len(shapes):
        return ""
    row = shapes.loc[(shapes["busy_s"] / shapes["measured_s"]).idxmin()]
    return (f" (run at the tutorial's own shape there, `{row.id}` took {row.measured_s:.3f} s against the published "
            f"{row.published_s:.3f} s, its device busy {row.busy_s:.3f} s of it)")


def te_readings(frame: pd.DataFrame, runs, parameters, ids: list[str]) -> dict[str, float]:
    """Each run of ``ids`` read with Transformer Engine's measured host cost (``host_framework=megatron_te``): its
    held-out ratio scaled by what that reading changes in the step (both with ``parameters``), less one."""
    from . import calibrated as cal

    chosen = [run for run in runs if run.id in ids]
    other = [run.with_reading("host_framework", "megatron_te") for run in chosen]
    central = cal.predict(chosen, parameters, compact=True)["step_time_s"]
    te = cal.predict(other, parameters, compact=True)["step_time_s"]
    ratio = frame.set_index("id")["lopo_ratio"]
    return {run.id: float(ratio[run.id] * t / c - 1) for run, c, t in zip(chosen, central, te)}


def onefactor_sentence(onefactor: Mapping[str, float], numbers: Mapping[str, Any]) -> str:
    """The earlier calibration (one kernel efficiency) against the calibrated model, both held out."""
    return (f"One factor $k = {onefactor['kernel_efficiency']:.3f}$ on all runs; leaving one publication out, "
            f"{onefactor['lopo_mean_abs_error']:.1%} mean error, against {numbers['lopo_mean_error']:.1%} for the "
            "calibrated model: the bubble, the overlaps and the memory-bound kernels do not scale with one factor.")


def peers_paragraph(errors: pd.DataFrame) -> str:
    """The side-by-side's summary in words (:func:`.peers.tool_errors`), with who saw which runs."""
    parts = [f"**{r.tool}** {r.peer_mean_error:.1%} mean, {r.peer_max_error:.1%} worst on its {r.runs} runs, where "
             f"lgacc held out reads {r.lgacc_mean_error:.1%} and {r.lgacc_max_error:.1%}" for r in errors.itertuples()]
    return ("; ".join(parts) + ". The peers' columns are in-sample (each tool was set up with those runs in view); "
            "lgacc's is fitted without the run's publication.") if parts else "No peer predicts these runs."


def peer_flag_sentence(steps: Mapping[str, tuple[float, float]]) -> str:
    """How far SimuMax's release tool, with the cross-entropy setting it ships, reads from SimuMax's own table
    (:func:`.peer_terms.release_tool_steps`)."""
    slower = [unfused / step - 1 for step, unfused in steps.values()]
    return (f"SimuMax's totals equal its table's column only with its fused cross entropy on, which the rows' `_cef` "
            "suffix names (Megatron-LM's `--cross-entropy-loss-fusion --cross-entropy-fusion-impl te`) and its release "
            f"tool leaves off: as shipped, the tool reads {min(slower):.1%}–{max(slower):.1%} slower than its own "
            f"table on these {len(steps)} rows.")


def peer_terms_paragraph(comparison: pd.DataFrame, kappa: float) -> str:
    """What the term-by-term comparison with SimuMax (:func:`.peer_terms.term_comparison`) shows: how lgacc's layer
    compute stands to SimuMax's (both read SimuMax's kernel table; lgacc at ``kappa`` of it), what each tool charges
    for the terms without matrix products and for those with some, and where each total stands to the measured
    step."""
    by_term = comparison.pivot_table(index="term", values=["peer_s", "lgacc_s"], aggfunc="sum")
    compute = comparison[comparison["term"] == "layer_compute"]
    ratios = compute["lgacc_s"] / compute["peer_s"]
    runs = comparison["run"].nunique()

    def listed(terms) -> str:
        shown = [t for t in terms if by_term.loc[t, "peer_s"] + by_term.loc[t, "lgacc_s"] > 0]
        return "; ".join(f"{TERM_NAMES[t].removeprefix('layers: ')} {by_term.loc[t, 'peer_s'] * 1e3:.0f} against "
                         f"{by_term.loc[t, 'lgacc_s'] * 1e3:.0f}" for t in shown)

    def direction(terms) -> str:
        peer, ours = (sum(by_term.loc[t, column] for t in terms) for column in ("peer_s", "lgacc_s"))
        return "less" if ours < peer else "more"

    plain = ("layer_memory_bound", "layer_tensor_parallel", "data_parallel", "optimizer", "host")
    mixed = ("vocabulary", "ramp")
    totals = comparison[comparison["term"] == "total"].set_index("run")
    measured = comparison[comparison["term"] == "measured"].set_index("run")["peer_s"]
    low = {tool: int((totals[column] < measured).sum()) for tool, column in (("SimuMax", "peer_s"), ("lgacc", "lgacc_s"))}
    return (f"**The layers' matrix products and attention cost lgacc {ratios.min():.3f}–{ratios.max():.3f} times "
            f"SimuMax's** on these {runs} runs: both read the same kernel table, measured by SimuMax on the release "
            f"node, and lgacc runs its kernels at $\\kappa = {kappa:.3f}$ of it (1/$\\kappa$ = {1 / kappa:.3f}; "
            f"SimuMax reads the table at face value). **Where no matrix product runs, lgacc charges {direction(plain)}**"
            f" (milliseconds over the {runs} steps, SimuMax's against lgacc's): {listed(plain)}. SimuMax adds 30 µs to "
            "every memory-bound kernel; it counts 6 all-gathers and 4 reduce-scatters per layer and micro-batch where "
            "lgacc counts 4 and 4 (the column-parallel layers gather their input again in the backward pass for the "
            "weight gradient, which Megatron-LM overlaps with the input-gradient product and SimuMax runs in series); "
            "and it charges the optimizer seven passes over memory. The terms that hold matrix products (the head, "
            f"the ramp's stage pass) cost lgacc {direction(mixed)}: {listed(mixed)}. Against the measured step, "
            f"SimuMax's total is below it on {low['SimuMax']} of the {runs} runs and lgacc's on {low['lgacc']}.")


def extensions_paragraph(frame: pd.DataFrame, numbers: Mapping[str, Any]) -> str:
    """The runs with experts and the FP8 runs, apart (the summary's ``moe`` and ``fp8`` keys): how many, from how
    many sources, the calibrated model's error with each source left out (its calibration fitted on dense bf16
    runs only), which way it errs, how often the ideal model is a bound, and the error of the memory where runs
    measure it; then one line per source."""
    sentences, lines = [], ["| group | source | runs | left out: mean | left out: worst | signed mean |",
                            "|---|---|---:|---:|---:|---:|"]
    for name, (_, what) in EXTENSIONS.items():
        block = numbers.get(name) or {}
        if not block.get("time_runs"):
            sentences.append(f"No {what}.")
            continue
        label = {"moe": "MoE", "fp8": "FP8"}[name]
        sign = "faster" if block["lopo_mean_signed"] < 0 else "slower"
        kind = ("runs with routed experts" if name == "moe" else
                f"FP8 runs ({block['dense_runs']} of dense models)")
        memory = (f" Their memory, {block['memory_runs']} runs: {block['memory_mean_error']:.1%} mean, "
                  f"{block['memory_max_error']:.1%} worst." if block.get("memory_runs") else "")
        sentences.append(
            f"**{label}: {block['runs']} {kind} from {block['publications']} sources; left out "
            f"{block['lopo_mean_error']:.1%} mean, {block['lopo_max_error']:.1%} worst**, the calibrated step "
            f"{abs(block['lopo_mean_signed']):.1%} {sign} than measured on average; the ideal model is a bound for "
            f"{block['ideal_upper_bound']} of {block['runs']}.{memory}")
        lines += [f"| {label} | {row['publication']} | {row['runs']} | {row['lopo_mean_error']:.1%} | "
                  f"{row['lopo_max_error']:.1%} | {row['lopo_mean_signed']:+.1%} |" for row in block["by_publication"]]
    return (" ".join(sentences) + " The calibration was fitted on dense bf16 runs only: these errors are those of "
            "a prediction for configurations it never saw.\n\n" + "\n".join(lines))
