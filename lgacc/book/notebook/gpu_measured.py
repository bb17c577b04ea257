"""The page "Measured on an H100": the calibrated model's constants and training steps against one GPU's
measurements (:mod:`lgacc.studies.gpu_measured`)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from lgacc.model.calibrated.parameters import fitted_calibration
from lgacc.model.hardware import load_hardware
from lgacc.model.calibrated.host import TE_HOST_FILES, TE_SPEC, host_times, megatron_host_extra_s, te_host_extra_s
from lgacc.studies.gpu_measured import (HostMeasurement, te_versions, tutorial_shapes_against_calibrated, Measurement, assumed_against_measured,
                                        attention_read_by_model, device_beyond_pool, gemm_lease_check,
                                        memory_bound_against_assumed,
                                        host_floor_against_measured, host_time, megatron_host_times,
                                        megatron_widths_against_calibrated, reads_the_layer_table,
                                        recomputation_against_measured, training_against_calibrated)

from .display import show_html
from .figures import show_svg_figure
from .formats import format_list
from .tables import show_table

__all__ = ["environment_markdown", "assumed_table", "gemm_figure", "layer_table_markdown", "training_table",
           "training_summary_markdown", "recomputation_table", "recomputation_markdown", "host_markdown", "megatron_host_markdown", "te_host_markdown", "device_memory_table",
           "device_memory_markdown"]


def environment_markdown(measurement: Measurement) -> str:
    """One sentence: which GPU, driver and libraries, when, and the command that made the tables."""
    env = json.loads((measurement.folder / "environment.json").read_text())
    smi = env.get("nvidia_smi", "").splitlines()
    driver = smi[1].split(",")[1].strip() if len(smi) > 1 and "," in smi[1] else "not recorded"
    return (f"Measured on an **{env.get('gpu', 'unknown GPU')}** ({env.get('multiprocessors', '?')} multiprocessors, "
            f"driver {driver}) with PyTorch {env.get('torch', '?')}, CUDA {env.get('cuda', '?')}, on "
            f"{env.get('date_utc', '?')[:10]}; compared with the spec `{measurement.hardware}`. Made by "
            f"`python3 benchmarks/gpu/measure.py OUT` and copied to `{measurement.folder.relative_to(measurement.folder.parents[3])}/`.")


def _value(quantity: str, value: float) -> str:
    if "seconds" in quantity:
        return f"{value * 1e6:.2g} µs"
    return f"{value:.3g}"


def assumed_table(measurement: Measurement) -> None:
    frame = assumed_against_measured(measurement)
    shown = pd.DataFrame({
        "constant": frame["quantity"].str.replace(", seconds", "", regex=False),
        "model": [_value(q, v) for q, v in zip(frame["quantity"], frame["assumed"])],
        "measured": [_value(q, v) for q, v in zip(frame["quantity"], frame["measured"])],
        "measured / model": frame["ratio"].map(lambda r: f"{r:.2f}"),
        "how": frame["how"],
    })
    show_table(shown, notes="how", stack=True)


def gemm_figure(measurement: Measurement) -> None:
    """bf16 efficiency against a GEMM's flops, measured, with the model's saturating curve."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullFormatter

    hw = load_hardware(measurement.hardware)
    cal = fitted_calibration()
    gemm = measurement.table("gemm")
    gemm = gemm[gemm["precision"] == "bf16"].copy()
    gemm["efficiency"] = gemm["flops"] / gemm["seconds"] / hw.peak_flop_per_s
    figure, axis = plt.subplots(figsize=(4.4, 3.3))  # fits a phone's column with 9 px text
    kinds = [("square", gemm["label"] == "square", "o"), ("layer, whole", gemm["label"].str.contains("_tp1_"), "s"),
             ("layer, split 8 ways", gemm["label"].str.contains("_tp8_"), "^")]
    for name, mask, marker in kinds:
        axis.scatter(gemm.loc[mask, "flops"], gemm.loc[mask, "efficiency"], s=18, marker=marker, label=name, alpha=0.8)
    flops = np.logspace(np.log10(gemm["flops"].min()), np.log10(gemm["flops"].max()), 200)
    axis.plot(flops, _model_curve(hw, cal)(flops), color="black", lw=1.2, label="model's curve, no table")
    axis.axhline(hw.gemm_max_efficiency, color="grey", ls="--", lw=1, label="spec's best")
    axis.set_xscale("log")
    prefixes = {6: "M", 9: "G", 12: "T", 15: "P"}  # plain text: a superscript exponent would be under 9 px on a phone
    axis.xaxis.set_major_formatter(FuncFormatter(
        lambda x, _: f"{10 ** (round(np.log10(x)) % 3):g} {prefixes.get(3 * (round(np.log10(x)) // 3), '')}"))
    axis.xaxis.set_minor_formatter(NullFormatter())
    axis.set_xlabel("flop of one matrix multiply", fontsize=10)
    axis.set_ylabel("share of the bf16 peak", fontsize=10)
    axis.tick_params(labelsize=9)
    axis.set_ylim(0, 1)
    axis.legend(fontsize=9, loc="lower right", frameon=True, framealpha=0.9)
    axis.grid(alpha=0.3)
    show_svg_figure(figure, "gpu_measured_gemm", data=gemm)
    plt.close(figure)


def _model_curve(hw, cal):
    """The calibrated model's efficiency of a GEMM of ``F`` flops on ``hw`` where it has no measured table: its
    derived saturating curve, evaluated with the fitted constants."""
    import sympy

    from lgacc.model.calibrated.gemm import saturating_efficiency
    from lgacc.model.calibrated.symbols import c, e_max, kappa, t_k

    F, efficiency = saturating_efficiency()
    values = {kappa: cal.kappa, e_max: hw.gemm_max_efficiency, c: hw.peak_flop_per_s, t_k: cal.kernel_latency_s}
    return sympy.lambdify(F, efficiency.subs(values), "numpy")


def layer_table_markdown(measurement: Measurement) -> str:
    """Whether the model reads this measurement's layer table, in a sentence."""
    if not reads_the_layer_table(measurement):
        return ("The calibrated model does not read a measured table for this GPU: its layers run on the curve above "
                "(`kappa` times the spec's best).")
    cal = fitted_calibration()
    return (f"Since this measurement, the calibrated model reads the layer table itself on this GPU "
            f"(`data/calibrated/gemm_tables.yaml`; `python -m lgacc.model.calibrated.gemm_table` prints it): each of "
            f"a layer's matrix multiplies runs at `kappa` = {cal.kappa:.3g} times the speed measured for its width, "
            f"tensor-parallel split and tokens, and the curve is kept for GPUs without a table. The layer table is "
            f"then an input of the model, not a check of it, so the comparison above leaves it out; the model's "
            f"held-out error over the measured runs (the chapter before this one) is the check.") + _lease_sentence(measurement)


def _lease_sentence(measurement: Measurement) -> str:
    check = gemm_lease_check(measurement.hardware)
    if check is None:
        return ""
    return (f" A later lease measured the widths between the grid's ({format_list([f'{w:,}' for w in check['widths']])}:"
            f" the runs' own widths, such as GPT-2 XL's 1,600 and Nemotron-4's 6,144) and measured width 1,024 again:"
            f" its {check['points']} maps read a median {check['median']:.2f} of the first lease's"
            f" ({check['low']:.2f} to {check['high']:.2f}; the small products scatter most), and the model keeps the"
            f" first lease's points (`{check['files'][1]}`).")


_KERNEL_NAMES = {"cudnn": "cuDNN", "fa2": "FlashAttention-2", "triton": "FlashAttention in Triton"}


def _tokens(n: int) -> str:
    return f"{n // 1024}k" if n >= 1024 else str(n)


def attention_table(hardware: str = "h100-sxm") -> None:
    """The fused attention the model reads on ``hardware``, by kernel, head size and sequence length, with the
    kernels' authors' published figures beside it."""
    frame = attention_read_by_model(hardware)
    lengths = [c for c in frame.columns if isinstance(c, (int, np.integer))]
    shown = pd.DataFrame({"kernel": frame["kernel"].map(lambda k: _KERNEL_NAMES.get(k, k)),
                          "head size": frame["head_dim"].astype(int),
                          "source": frame["source"].str.replace("fa2", "FlashAttention-2's", regex=False)})
    for n in lengths:
        shown[f"{_tokens(int(n))} tokens"] = frame[n].map(lambda v: "" if pd.isna(v) else f"{v:.2f}")
    show_html('<p class="lgacc-caption">Causal fused attention, forward and backward, as a share of the H100\'s '
              'bf16 peak, by sequence length: measured (the rows the model reads) and the kernels\' authors\' '
              'published figures (head size 128, not read).</p>')
    show_table(shown)


def attention_markdown(hardware: str = "h100-sxm") -> str:
    """What the attention table says, in numbers."""
    frame = attention_read_by_model(hardware)
    if frame.empty:
        return "The calibrated model reads no measured attention table for this GPU."

    def at(kernel, head_dim, source, n):
        row = frame[(frame["kernel"] == kernel) & (frame["head_dim"] == head_dim) & (frame["source"] == source)]
        return float(row[n].iloc[0])

    cal = fitted_calibration()
    small, large = at("cudnn", 64, "measured", 2048), at("cudnn", 128, "measured", 2048)
    above_short = at("cudnn", 128, "published", 1024) / at("cudnn", 128, "measured", 1024) - 1
    above_long = at("cudnn", 128, "published", 8192) / at("cudnn", 128, "measured", 8192) - 1
    fa2_long = at("fa2", 128, "published", 8192) / at("fa2", 128, "measured", 8192) - 1
    return (f"The calibrated model reads the measured rows on H100-class GPUs (`data/calibrated/attention_kernels.yaml`;"
            f" `python -m lgacc.model.calibrated.attention` prints them): a run's kernel at its head size and sequence "
            f"length, linear in the logarithms of both between the measured points, at `kappa` = {cal.kappa:.3g} times "
            f"that speed. Heads of 64 run slower than heads of 128 (cuDNN at 2,048 tokens: {small:.2f} of the peak "
            f"against {large:.2f}), and short sequences slower than long ones. The published figures are faster, most "
            f"at short sequences: cuDNN's {above_short:.0%} above the measurement at 1,024 tokens and {above_long:.0%} "
            f"at 8,192, FlashAttention-2's {fa2_long:.0%} at 8,192. The measurement is causal, as the runs are; whether "
            "the published panel is causal is not stated in the transcription. GPUs without a table keep the "
            f"calibration's {cal.attention_efficiency:.2f} (FlashAttention-2 on an A100, Dao 2023).")


_KERNEL_WORDS = {"layer_norm": "layer norm", "gelu": "GELU (tanh)", "dropout": "dropout (p = 0.1)",
                 "add": "residual add"}


def memory_bound_table() -> None:
    """A layer's memory-bound kernels measured, as shares of the HBM bandwidth, beside the share the model reads."""
    frame = memory_bound_against_assumed()
    shown = pd.DataFrame({"kernel": frame["kernel"].map(lambda k: _KERNEL_WORDS.get(k, k)), "pass": frame["pass"],
                          "measured, median": frame["median"].map(lambda v: f"{v:.2f}"),
                          "measured, range": [f"{lo:.2f}–{hi:.2f}" for lo, hi in zip(frame["low"], frame["high"])],
                          "model": [f"{v:.2f}" + (" (this median)" if read else "")
                                    for v, read in zip(frame["assumed"], frame["read"])]})
    show_html('<p class="lgacc-caption">Share of the HBM bandwidth a memory-bound kernel reaches: the bytes each of its '
              'tensors must be read or written once, over the time measured (bf16, 16,384 and 65,536 tokens, widths '
              '1,024 to 8,192), beside the share the calibrated model streams the kernel at.</p>')
    show_table(shown)


def memory_bound_markdown() -> str:
    """What the memory-bound table says, in numbers, and what the model reads of it (the norms)."""
    frame = memory_bound_against_assumed().set_index(["kernel", "pass"])
    streaming_share = float(frame.loc[("gelu", "forward"), "assumed"])
    norm_f, norm_b = frame.loc[("layer_norm", "forward"), "median"], frame.loc[("layer_norm", "backward"), "median"]
    streaming = frame.loc[[("gelu", "forward"), ("gelu", "backward"), ("add", "forward"), ("dropout", "backward")],
                          "median"]
    drop = frame.loc[("dropout", "forward"), "median"]
    return (f"The element-wise kernels stream at the model's {streaming_share:.2f} of the bandwidth or near it (GELU, "
            f"the residual add and dropout's backward {streaming.min():.2f} to {streaming.max():.2f}). The layer norm "
            f"reaches {norm_f:.2f} forward and {norm_b:.2f} backward: it reduces over the width before it writes, and "
            f"its backward also reduces its weights' gradients over the tokens.\n\n"
            f"The calibrated model reads the norm's two medians (`norm_forward_efficiency`, `norm_backward_efficiency`; "
            f"`python -m lgacc.model.calibrated.memory_bound`) and streams the other kernels at {streaming_share:.2f}. "
            f"Dropout's forward, which draws its random numbers, reaches {drop:.2f}; it is not read, because only runs "
            f"with dropout pay it, on one small kernel of the layer. The shares are read for every GPU, as shares of "
            f"its own bandwidth: no other GPU was measured. They are PyTorch's own kernels "
            f"(`benchmarks/gpu/measure_memory_bound.py` times them one at a time). Megatron-LM's fused norms "
            f"(Apex's, Transformer Engine's) were not measured, and are read at the same shares.")


def training_table(measurement: Measurement) -> None:
    frame = training_against_calibrated(measurement)
    shown = pd.DataFrame({
        "d_m × d_l": [f"{m} × {l}" for m, l in zip(frame["d_m"], frame["d_l"])],
        "d_s × b_mu": [f"{s} × {b}" for s, b in zip(frame["d_s"], frame["b_mu"])],
        "recompute": frame["recompute"],
        "allocated": frame["measured_allocated_gib"].map(lambda v: f"{v:.1f} GiB"),
        "reserved": frame["measured_reserved_gib"].map(lambda v: f"{v:.1f} GiB"),
        "model": frame["expected_memory_gib"].map(lambda v: f"{v:.1f} GiB"),
        "step": frame["measured_step_s"].map(lambda v: f"{v * 1e3:.0f} ms"),
        "model step": frame["expected_step_s"].map(lambda v: f"{v * 1e3:.0f} ms"),
    })
    show_html('<p class="lgacc-caption">Memory: measured peak allocated and reserved, and the calibrated model\'s '
              'expectation; step time: measured median and the model\'s.</p>')
    show_table(shown, stack=True)


def training_summary_markdown(measurement: Measurement) -> str:
    frame = training_against_calibrated(measurement)
    memory = (frame["memory_ratio"] - 1).abs() * 100
    megatron = (frame["expected_memory_megatron_gib"] / frame["measured_allocated_gib"] - 1).abs() * 100
    time = (frame["time_ratio"] - 1).abs() * 100
    small = frame["parameters"] < frame["parameters"].median()
    static = frame["static_bytes_per_parameter"]
    beyond = frame["beyond_state_bytes"] / 2 ** 20
    cal = fitted_calibration()
    launch = measurement.table("launch")
    eager = float(launch.loc[launch["what"].str.contains("back to back"), "seconds_per_kernel"].iloc[0])
    host = host_times()
    source = frame["d_m"] == frame["d_m"].min()
    narrow, others = int(source.sum()), time[~source]
    return (
        f"With the script's recipe (PyTorch's mixed precision, cross entropy on fp32 logits, as the run file "
        f"`data/validation/lgacc_h100_2026.yaml` states it; these steps are one of the memory sources of the chapter "
        f"before this one), the calibrated model's memory is off by {memory.mean():.0f} % on average "
        f"({memory.max():.0f} % at worst, against the peak allocated), above the measurement on "
        f"{int((frame['memory_ratio'] > 1).sum())} of {len(frame)}; with its default "
        f"Megatron-LM recipe it would be {megatron.mean():.0f} %. Its step time is off by {time.mean():.0f} % "
        f"({time.max():.0f} % at worst; {time[~small].mean():.0f} % on the larger half of the models, "
        f"{time[small].mean():.0f} % on the smaller). Where they part:\n\n"
        f"- **State**: between steps PyTorch holds {static.min():.1f} to {static.max():.1f} bytes per parameter (fp32 "
        f"weights and AdamW's two moments: 12) and {beyond.min():.0f} to {beyond.max():.0f} MiB besides; the model adds "
        f"{cal.framework_gib * 1024:g} MiB for the framework's own memory (two cuBLAS workspaces of the 32 MiB cuBLAS "
        f"recommends on Hopper) to every run; one GPU holds no communication buffers.\n"
        f"- **Time**: on the small models a step is a few tens of milliseconds and hundreds of kernels launched "
        f"one by one from Python, about {eager * 1e6:.0f} µs each (the table above), and the host sets the pace. The "
        f"model's host floor for an eager framework is fitted to the next section's steps, measured apart; only "
        f"what a recomputed forward adds to it ({host['host_recompute_s'] * 1e3:.2f} ms per layer) was read from the "
        f"narrowest rows of this table ({narrow} of {len(frame)} rows, width {int(frame['d_m'].min())}): on the other "
        f"{len(frame) - narrow} the step time is off by {others.mean():.0f} % on average ({others.max():.0f} % at "
        f"worst).\n\n"
        f"These steps are not in the fit, which reads step times of multi-GPU runs only; of the model's constants, "
        f"only what recomputation adds to the host floor was read from them.")


def recomputation_table(measurement: Measurement) -> None:
    frame = recomputation_against_measured(measurement)
    shown = pd.DataFrame({
        "d_m × d_l": [f"{m} × {l}" for m, l in zip(frame["d_m"], frame["d_l"])],
        "d_s × b_mu": [f"{s} × {b}" for s, b in zip(frame["d_s"], frame["b_mu"])],
        "measured": frame["measured"].map(lambda v: f"{v:.3f}"),
        "whole forward": frame["whole_forward"].map(lambda v: f"{v:.3f}"),
        "early stop": frame["early_stop"].map(lambda v: f"{v:.3f}"),
        "device paced": frame["device_paced"].map(lambda v: "yes" if v else "no (host)"),
    })
    show_html('<p class="lgacc-caption">A step with full recomputation over the same step without it: measured, and '
              'the calibrated model\'s with each recomputed layer running its whole forward again or stopping before '
              'its last product (<code>recompute_early_stop</code>).</p>')
    show_table(shown, stack=True)


def recomputation_markdown(measurement: Measurement) -> str:
    frame = recomputation_against_measured(measurement)
    paced = frame[frame["device_paced"]]
    whole = (paced["whole_forward"] / paced["measured"] - 1).abs() * 100
    stop = (paced["early_stop"] / paced["measured"] - 1).abs() * 100
    closer = int((stop < whole).sum())
    return (
        f"The script recomputes each block with `torch.utils.checkpoint(..., use_reentrant=False)`. Since PyTorch 2.1 "
        f"that checkpoint stops a recomputation as soon as every tensor the backward needs has been saved again "
        f"(`set_checkpoint_early_stop`, on by default). A layer's last saved tensor is the input of the "
        f"feed-forward's second product, and it is saved before that product runs. So the product, and the "
        f"residual add after it, do not run again: a third of the forward's matrix work in a layer with a four-times-wide feed-forward.\n\n"
        f"On the {len(paced)} shapes where the GPU sets the pace, the measured ratio is "
        f"{paced['measured'].min():.2f} to {paced['measured'].max():.2f}. The model is off by {stop.mean():.1f} % on "
        f"average when it stops early, and by {whole.mean():.1f} % when it re-runs the whole forward; stopping early "
        f"is closer on {closer} of the {len(paced)}. On the other {len(frame) - len(paced)} shapes the host sets the "
        f"pace, and the ratio measures what the host issues.\n\n"
        f"The recipe field `recompute_early_stop` holds this choice. It is on for the published runs that recompute "
        f"with this checkpoint (LLM Foundry's and torchtitan's). It is off, and each layer re-runs its whole forward, "
        f"for Megatron-LM's and DeepSpeed's own checkpoint functions, the default.")


def _made_by(measurement: HostMeasurement) -> str:
    env = json.loads((measurement.folder / "environment.json").read_text())
    return (f"measured on an {env.get('gpu', 'unknown GPU')} with PyTorch {env.get('torch', '?')}, CUDA "
            f"{env.get('cuda', '?')}, on {env.get('date_utc', '?')[:10]} by `python3 benchmarks/gpu/measure_host.py OUT`, "
            f"kept in `{measurement.folder.relative_to(measurement.folder.parents[3])}/`")


def host_markdown(measurement: HostMeasurement, launch_s: float) -> str:
    """The host's time per layer, micro-batch and step of an eager step, against the bare launch time."""
    fit = host_time(measurement)
    wide = measurement.host[measurement.host["d_m"] > 64]
    lines = [
        f"The same GPT-like model at width 64 and 64 tokens ({fit.rows} steps, 1 to 32 layers, 1 to 8 micro-batches "
        f"of gradient accumulation; {_made_by(measurement)}): each kernel's work on the GPU is a few microseconds, so "
        f"the step's time is the host's. A least-squares fit of the step time to "
        f"`per step + d_l × per layer and step + n_mu × (per micro-batch + d_l × per layer)`:",
        "",
        f"- **a layer's forward and backward**: {fit.kernels_per_layer:.0f} kernels and "
        f"{fit.per_layer_s * 1e3:.2f} ms of the host per micro-batch, {fit.per_layer_s / fit.kernels_per_layer * 1e6:.0f} µs "
        f"per kernel: {fit.per_layer_s / fit.kernels_per_layer / launch_s:.1f} times the bare launch of a tiny kernel "
        f"({launch_s * 1e6:.0f} µs, the table above); the rest is autograd, the modules' Python and the dispatcher;",
        f"- **a micro-batch outside the layers** (embedding, loss): {fit.kernels_per_micro_batch:.0f} kernels, "
        f"{fit.per_micro_batch_s * 1e3:.1f} ms; **a step** (the fused optimizer, clearing the gradients): "
        f"{fit.per_step_s * 1e3:.1f} ms and {fit.per_layer_step_s * 1e3:.2f} ms per layer;",
        f"- over all kernels, {fit.seconds_per_kernel * 1e6:.0f} µs of host time per kernel launched; the fit's rows are "
        f"{fit.mean_relative_residual * 100:.0f} % from it on average (the one-layer steps of a few milliseconds vary "
        f"most).",
    ]
    if len(wide):
        expected = [fit.per_step_s + r.d_l * fit.per_layer_step_s + r.n_mu * (fit.per_micro_batch_s + r.d_l * fit.per_layer_s)
                    for r in wide.itertuples()]
        widest = wide.loc[wide["d_m"].idxmax()]
        b, t, n_l, d, v = (int(widest[k]) for k in ("b_mu", "d_s", "d_l", "d_m", "vocab"))
        flops = 72 * b * t * n_l * d ** 2 * (1 + t / (6 * d) + v / (12 * d * n_l)) * int(widest["n_mu"])
        at_peak = flops / load_hardware(measurement.hardware).peak_flop_per_s
        lines += ["", f"Wider models of {n_l} layers and {int(widest['n_mu'])} micro-batches of {t:,} tokens (width "
                  f"{int(wide['d_m'].min())} to {d:,}) took {wide['step_seconds'].min() * 1e3:.0f} to "
                  f"{wide['step_seconds'].max() * 1e3:.0f} ms a step, against {min(expected) * 1e3:.0f} ms of host "
                  f"time from the fit; at the GPU's peak the widest step's arithmetic takes {at_peak * 1e3:.0f} ms. On "
                  f"this machine an eager step of these sizes is bound by its host."]
    check = host_floor_against_measured()
    error = (check["ratio"] - 1).abs() * 100
    cal = fitted_calibration()
    lines += ["", f"**The model's floor, and its check.** The calibrated model bounds an eager step below by this fit: "
              f"`t_hs + d_l × t_hl + n_mu × (t_hm + d_l × t_h)` for a stage of `d_l` layers ({cal.host_step_s * 1e3:.2f}, "
              f"{cal.host_step_layer_s * 1e3:.2f}, {cal.host_micro_batch_s * 1e3:.2f} and {cal.host_layer_s * 1e3:.2f} "
              f"ms), so these steps cannot check it. The other script's whole steps of the day before can: at width "
              f"{1024:,}, {int(check['d_l'].iloc[0])} layers and one micro-batch of {int((check['b_mu'] * check['d_s']).iloc[0]):,} "
              f"tokens ({len(check)} steps) the floor is {error.mean():.0f} % from the measurement on average "
              f"({error.max():.0f} % at worst)."]
    return "\n".join(lines)


def _widths_lines(widths: pd.DataFrame) -> list[str]:
    """The width sweep: how the host's time and the device's compose, and the calibrated step beside each."""
    narrowest = int(widths["width"].min())
    over = widths["measured_s"] / widths["composed_s"] - 1
    summed = (widths["measured_s"].where(widths["width"] == narrowest).groupby(widths["n_mu"]).transform("max")
              + widths["busy_s"]) / widths["measured_s"] - 1
    worst = widths.loc[over.idxmax()]
    host_paced = widths[widths["width"] <= 256]
    widest = widths[widths["width"] == widths["width"].max()]
    lines = ["", f"**How the host's time and the device's compose.** The same layer at widths {narrowest} to "
             f"{int(widths['width'].max()):,} (2,048 tokens, 8 layers), with the device's busy time of one step "
             f"(the profiler's kernels, their intervals' union) and the calibrated model's step for the same "
             f"configuration (`host_framework=megatron`, no fused attention, one GPU):", "",
             "| width | micro-batches | measured, ms | device busy, ms | larger of host and busy, ms | "
             "calibrated, ms | calibrated / measured |", "|---:|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {r.width:,} | {r.n_mu} | {r.measured_s * 1e3:.1f} | {r.busy_s * 1e3:.1f} | "
              f"{r.composed_s * 1e3:.1f} | {r.expected_s * 1e3:.1f} | {r.ratio:.2f} |" for r in widths.itertuples()]
    lines += ["", f"The host's time is the width-{narrowest} step of the same micro-batches (the same kernels, each "
              f"a few microseconds of GPU work). Every step is within {over.max():.0%} of the larger of the host's "
              f"time and the device's busy time, the composition the calibrated model uses, and their sum would "
              f"read up to {summed.max():.0%} over; the most, {over.max():.0%}, is where the two are closest (width "
              f"{int(worst['width']):,}, {int(worst['n_mu'])} micro-batch{'es' if worst['n_mu'] > 1 else ''}), "
              f"where each in turn waits on the other. Where the host paces the step (widths "
              f"{format_list([f'{w:,}' for w in sorted(host_paced['width'].unique())])}) the calibrated step reads "
              f"{host_paced['ratio'].min():.2f} to {host_paced['ratio'].max():.2f} of the measured one, a check of "
              f"the floor on steps it was not read from. Wider, it falls to {widest['ratio'].min():.2f}: there its "
              f"device time is short of the busy time measured, because this script's layer runs the `local` "
              f"spec's unfused attention with every fusion off (the softmax in fp32 over all the heads' scores), "
              f"which no measured run does."]
    return lines


def megatron_host_markdown(measurement: HostMeasurement) -> str:
    """Megatron-Core's host time per layer beside plain PyTorch's, lease by lease, what the calibrated model takes
    from it, and the variants (recomputation, overlapped reduction, routed experts) measured beside it."""
    fits = megatron_host_times(measurement)
    dense = [f for f in fits if f.spec == "local" and f.per_step_s is not None]
    if not dense:
        return "This folder holds no Megatron-Core steps (`benchmarks/gpu/measure_megatron_host.py`)."
    env = json.loads((measurement.folder / "environment_megatron.json").read_text())
    eager = host_time(measurement)
    extra, cal = megatron_host_extra_s(), fitted_calibration()
    leases = format_list([f"{f.per_layer_s * 1e3:.2f}" for f in dense])
    lines = [
        f"Megatron-Core {env.get('megatron_core', '?')}'s own `GPTModel` at the same width (64) and tokens (64), in "
        f"its `DistributedDataParallel` wrapper (fp32 gradient buffers) and run by its forward-backward schedule, "
        f"steps of 2, 4 and 8 layers and 1, 2 and 4 micro-batches, on {len(dense)} leases of the same kind of machine "
        f"the same day (`python3 benchmarks/gpu/measure_megatron_host.py OUT`, with `PYTHONPATH` at Megatron-Core's "
        f"pure-Python folder). Transformer Engine was not on the machine, so the layer is Megatron-Core's `local` "
        f"spec on plain PyTorch, not the Transformer Engine spec Megatron-LM uses by default. The same fit:",
        "",
        f"- **a layer's forward and backward**: {dense[0].kernels_per_layer:.0f} kernels (plain PyTorch's: "
        f"{eager.kernels_per_layer:.0f}) and {leases} ms of the host per micro-batch on the {len(dense)} leases, "
        f"against {eager.per_layer_s * 1e3:.2f} ms for the plain PyTorch layer above. The leases differ by more than "
        f"one lease's steps scatter, so their steps are pooled: Megatron-Core's modules, its tensor-parallel layers' "
        f"autograd functions and its gradient hooks cost **{extra * 1e3:.2f} ms more per layer and micro-batch**;",
        f"- **a micro-batch outside the layers**: {format_list([f'{f.per_micro_batch_s * 1e3:.1f}' for f in dense])} ms "
        f"(plain PyTorch {eager.per_micro_batch_s * 1e3:.1f} ms): the leases scatter this most.",
        "",
        f"The calibrated model's recipe field `host_framework=megatron` (set for every Megatron-LM, NeMo, "
        f"Megatron-Bridge and Megatron-DeepSpeed run of the measured-runs chapter, plain PyTorch their bracket) reads "
        f"the same fit of the pooled steps for its host floor: `t_h` {cal.host_layer_s * 1e3:.2f} → "
        f"{(cal.host_layer_s + extra) * 1e3:.2f} ms per layer and micro-batch (the slopes' difference added), "
        f"{cal.host_megatron_step_layer_s * 1e3:.2f} ms per layer and step (plain PyTorch's "
        f"{cal.host_step_layer_s * 1e3:.2f}: the optimizer's and the gradients' work per tensor), "
        f"{cal.host_megatron_micro_batch_s * 1e3:.2f} ms per micro-batch (plain PyTorch's "
        f"{cal.host_micro_batch_s * 1e3:.2f}) and {cal.host_megatron_step_s * 1e3:.2f} ms per step (plain PyTorch's "
        f"{cal.host_step_s * 1e3:.2f}; each term a time, the fit keeps none negative), with its recomputed "
        f"forward's `t_hR` as measured below. A run on another machine pays its own CPU's time, and Transformer "
        f"Engine's modules issue other kernels: the measured-runs chapter shows how far the runs that wait on their "
        f"host still part from the model.",
    ]
    # the variants beside the plain layer of their own lease (one table)
    table = next((f.table for f in fits if f.spec in ("local_recompute_full", "local_recompute_selective",
                                                      "local_overlap_grad_reduce")), None)
    variants = {f.spec: f for f in fits if f.table == table and f.spec != "local"}
    base = next((f for f in dense if f.table == table), None)
    words = {"local_recompute_full": "recomputed in full (`--recompute-granularity full`, one layer at a time)",
             "local_recompute_selective": "with the attention core recomputed (`--recompute-granularity selective`)",
             "local_overlap_grad_reduce": "with the reduction overlapped (`--overlap-grad-reduce`, the distributed "
                                          "optimizer's buffer layout)"}
    forward = next((f for f in fits if f.spec == "local_forward_only"), None)
    forward_base = next((f for f in dense if forward is not None and f.table == forward.table), None)
    if variants and base is not None:
        lines += ["", f"Beside the plain layer of their own lease ({base.per_layer_s * 1e3:.2f} ms), the same layer:", ""]
        for spec, what in words.items():
            if spec in variants:
                fit = variants[spec]
                lines.append(f"- {what}: {fit.per_layer_s * 1e3:.2f} ms, "
                             f"{(fit.per_layer_s - base.per_layer_s) * 1e3:+.2f} ms;")
        lines[-1] = lines[-1][:-1] + "."
        if "local_recompute_full" in variants:
            measured = variants["local_recompute_full"].per_layer_s / base.per_layer_s - 1
            spread = max(f.per_layer_s for f in dense) - min(f.per_layer_s for f in dense)
            lines += ["", f"A recomputed forward adds {measured:.0%} of Megatron-Core's layer here (plain PyTorch's "
                      f"`torch.utils.checkpoint`: {cal.host_recompute_s / cal.host_layer_s:.0%}): a "
                      f"Megatron run's `t_hR` is this difference. The other two are not carried: the selective "
                      f"recomputation re-runs the `local` spec's unfused attention core, several kernels, where the "
                      f"runs recompute one fused kernel; the overlapped reduction's cost is about the spread between "
                      f"the leases' plain layers ({spread * 1e3:.2f} ms)."]
    if forward is not None and forward_base is not None:
        share = forward.per_layer_s / forward_base.per_layer_s
        lines += ["", f"**The forward's share.** On another lease the forward passes alone (the schedule's "
                  f"`forward_only`, autograd still recording) took {forward.per_layer_s * 1e3:.2f} ms of the host per "
                  f"layer and micro-batch, {share:.0%} of that lease's whole layer ({forward_base.per_layer_s * 1e3:.2f} "
                  f"ms), and {forward.kernels_per_layer:.0f} of its {forward_base.kernels_per_layer:.0f} kernels: the "
                  f"backward, with the autograd engine and a hook for every parameter's gradient, takes the rest. "
                  f"Megatron-LM's non-interleaved pipeline synchronizes the device at each point-to-point exchange "
                  f"(`batch_p2p_sync`, on by default), so a stage's forward and backward passes each wait on their own "
                  f"host's time; with the host's time split about as the device's (a third for the forward without "
                  f"recomputation), the floor of the whole step the model takes is near what the passes add up to, and "
                  f"the model does not split it."]
    widths = megatron_widths_against_calibrated(measurement)
    if len(widths):
        lines += _widths_lines(widths)
    experts = [f for f in fits if f.experts]
    if experts:
        lines += ["", "With routed experts (every MLP a router over the experts and Megatron-Core's `SequentialMLP`, "
                  "one small product per local expert, no expert parallelism on one GPU):", ""]
        for fit in experts:
            how = f"fitted to {fit.rows} steps" if fit.per_step_s is not None else f"the difference of {fit.rows} steps"
            lines.append(f"- **{fit.experts} experts, top {fit.topk}**: {fit.kernels_per_layer:,.0f} kernels and "
                         f"{fit.per_layer_s * 1e3:.1f} ms of the host per layer and micro-batch ({how});")
        lines[-1] = lines[-1][:-1] + "."
        lines += ["", "The calibrated model does not add this: the measured runs with experts use grouped products "
                  "(Transformer Engine's `GroupedLinear`, one call for all the local experts), which this machine "
                  "could not run. It bounds what a fine-grained model (Qwen3-30B-A3B: 128 experts, top 8) can pay on "
                  "the host when its experts are issued one by one."]
    return "\n".join(lines)


def device_memory_table(measurement: HostMeasurement) -> None:
    frame = device_beyond_pool(measurement)
    shown = pd.DataFrame({
        "stage of the process": frame["stage"],
        "device used": (frame["device_used_bytes"] / 2 ** 20).map(lambda v: f"{v:,.0f} MiB"),
        "reserved (pool)": (frame["reserved_bytes"] / 2 ** 20).map(lambda v: f"{v:,.0f} MiB"),
        "beyond the pool": (frame["beyond_pool_bytes"] / 2 ** 20).map(lambda v: f"{v:,.0f} MiB"),
    })
    show_html('<p class="lgacc-caption">The device\'s used memory (<code>cudaMemGetInfo</code>, what NVML, '
              '<code>nvidia-smi</code> and <code>gpustat</code> read) beside PyTorch\'s reserved pool, at stages of one '
              'process.</p>')
    show_table(shown, stack=True)


def _span(values: pd.Series) -> str:
    low, high = f"{values.min():,.0f}", f"{values.max():,.0f}"
    return low if low == high else f"{low} to {high}"


def device_memory_markdown(measurement: HostMeasurement) -> str:
    frame = device_beyond_pool(measurement)
    beyond = frame["beyond_pool_bytes"] / 2 ** 20
    training = beyond[frame["stage"].str.contains("training")]
    nccl = beyond[frame["stage"].str.contains("all-reduce")]
    text = (f"Beyond the allocator's pool the process holds {beyond.iloc[0]:,.0f} MiB once CUDA is initialised, and "
            f"{_span(training)} MiB once training steps have loaded their kernels "
            f"(cuBLAS, flash attention, the optimizer's), whatever the model's width: the context a `nvidia-smi` or "
            f"`gpustat` reading holds on top of the pool, with kernels loaded lazily as CUDA 12.2 and later do by "
            f"default ({_made_by(measurement)}).")
    if len(nccl):
        text += (f" A one-rank NCCL communicator adds {nccl.iloc[-1] - training.max():,.0f} MiB at its first "
                 f"all-reduce, before any peer: communicators over several GPUs hold more (one set of buffers per "
                 f"channel and peer).")
    from lgacc.studies.validation.tables import CUDA_CONTEXT_BYTES

    text += (f" The measured-runs chapter adds {CUDA_CONTEXT_BYTES['lazy-cuda13'] / 2 ** 20:,.0f} MiB for the context "
             f"to a device reading of a run whose software ran CUDA 13, and those measured in PyTorch's pull request #86509 with CUDA 11.7 "
             f"({CUDA_CONTEXT_BYTES['lazy'] / 2 ** 20:,.0f} MiB loading kernels lazily, "
             f"{CUDA_CONTEXT_BYTES['eager'] / 2 ** 20:,.0f} MiB eagerly) to older runs.")
    return text


#: the specs of the Transformer Engine lease, as its table names them, and what each is
_TE_SPECS = {"local": "Megatron-Core's own modules (`local`)",
             "transformer_engine": "Transformer Engine's modules, every fusion off",
             TE_SPEC: "Transformer Engine's modules, Megatron-LM's default fusions",
             "local_moe": "Megatron-Core's own modules, 8 experts, top 2",
             "transformer_engine_moe": "Transformer Engine's modules, 8 experts, top 2 (grouped GEMM)"}


def te_host_markdown() -> str:
    """Megatron-Core's host time per layer with Transformer Engine's modules beside its own, two runs on one H200
    lease (``TE_HOST_FILES``), and what the calibrated model takes from them (``host_framework=megatron_te``)."""
    folder = TE_HOST_FILES[0].parent
    env = json.loads((folder / "environment.json").read_text())
    measurement = HostMeasurement(folder, "h200-sxm", pd.DataFrame(), pd.DataFrame())
    fits = [f for f in megatron_host_times(measurement) if f.spec in _TE_SPECS]
    runs = {table: i + 1 for i, table in enumerate(sorted({f.table for f in fits}))}
    lines = [
        f"Megatron-LM's default layer is built of Transformer Engine's modules (`--transformer-impl "
        f"transformer_engine`), which the lent machines' image does not have. On one {env.get('gpu', 'H200')} lease "
        f"(PyTorch {env.get('torch', '?')}, Megatron-Core {env.get('megatron_core', '?')}, Transformer Engine "
        f"{env.get('transformer_engine', '?')}, packed for the image by `benchmarks/gpu/pack_te.sh` and run by "
        f"`benchmarks/gpu/run_te_host.sh`) the same script measured both, at the same width (64), tokens (64), "
        f"layers (2, 4, 8) and micro-batches (1, 2, 4), twice. Each spec's time per layer and micro-batch, fitted as "
        f"above, and the kernels it launches:", "",
        "| run | layer | host per layer and micro-batch, ms | kernels per layer |", "|---:|---|---:|---:|"]
    lines += [f"| {runs[f.table]} | {_TE_SPECS[f.spec]} | {f.per_layer_s * 1e3:.2f} | "
              f"{'' if f.kernels_per_layer is None else f'{f.kernels_per_layer:.0f}'} |" for f in fits]
    plain = te_host_extra_s("transformer_engine")
    lines += ["", "Transformer Engine's layer launches fewer kernels than Megatron-Core's own (its norm fused into the "
              "next product) but takes more of the host's time: what it costs is Python per call, not launches. "
              f"Against Megatron-Core's own layer of the same run (one machine, so its CPU drops out of the "
              f"difference), Transformer Engine's layer costs the host **{te_host_extra_s() * 1e3:.2f} ms more per "
              f"layer and micro-batch** with Megatron-LM's default fusions (bias-GELU and bias-dropout-add, each "
              f"a scripted function) and {plain * 1e3:.2f} ms more without them (the two runs' mean). The lent "
              f"machine's host is slower than the H100's: Megatron-Core's own layer took "
              f"{format_list([f'{f.per_layer_s * 1e3:.2f}' for f in fits if f.spec == 'local'])} ms here against the "
              f"pooled {(fitted_calibration().host_layer_s + megatron_host_extra_s()) * 1e3:.2f} ms there. The "
              f"recipe's `host_framework=megatron_te` adds the fused difference to Megatron-Core's terms; the "
              f"measured-runs chapter reads it as the bracket's other end for the runs that use Transformer Engine, "
              f"not as their reading, and says why. Not measured: Transformer Engine's recomputed forward, its "
              f"gradient-accumulation fusion (it needs Apex, absent from the image) and its releases after "
              f"{env.get('transformer_engine', '2.9')}, which cut its host work (TransformerEngine#2126)."]
    shapes = tutorial_shapes_against_calibrated()
    if len(shapes):
        lines += _tutorial_shape_lines(shapes)
    versions = te_versions()
    if len(versions) and len(shapes):
        lines += _version_lines(versions, float(shapes.loc[shapes["layers"] == 48, "measured_s"].iloc[0]))
    return "\n".join(lines)


def _version_lines(versions: pd.DataFrame, first_lease_s: float) -> list[str]:
    """Two Transformer Engine releases on one lease: the width-64 layers' fitted slopes and GPT-2 XL's whole step
    (``first_lease_s``: the same step on the lease before, the shapes table's)."""
    lines = ["", "**Two releases on one lease.** A third lease ran Transformer Engine 2.9.0 and 2.11.0 (the release "
             "SimuMax's B200 runs used) one after the other: the width-64 steps of both layers and "
             "GPT-2 XL's step at the tutorial's shape.", "",
             "| Transformer Engine | Megatron-Core's own layer, ms | TE's layer (default fusions), ms | difference, ms "
             "| GPT-2 XL step, s |", "|---|---:|---:|---:|---:|"]
    lines += [f"| {r.release} | {r.local_s * 1e3:.2f} | {r.te_s * 1e3:.2f} | {(r.te_s - r.local_s) * 1e3:.2f} | "
              f"{r.shape_s:.3f} |" for r in versions.itertuples()]
    old, new = versions.iloc[0], versions.iloc[-1]
    lines += ["", f"Megatron-Core's own layer, the same code in both runs, fits to "
              f"{format_list([f'{v * 1e3:.2f}' for v in versions['local_s']])} ms: on one machine, back to back, "
              f"the width-64 slopes scatter by about a millisecond, and so does each difference read from them "
              f"(the first lease's {te_host_extra_s() * 1e3:.2f} ms included). GPT-2 XL's whole step, whose "
              f"device is busy for only {old.shape_busy_s / old.shape_s:.0%} of it, repeats to "
              f"{abs(old.shape_s / first_lease_s - 1):.0%} across leases, and reads {new.release} "
              f"{1 - new.shape_s / old.shape_s:.0%} faster than {old.release}: about "
              f"{(old.shape_s - new.shape_s) / 48 * 1e3:.1f} ms less of the host per layer."]
    return lines


def _tutorial_shape_lines(shapes: pd.DataFrame) -> list[str]:
    """megatron-tutorials' single-GPU runs at their own shapes on the lent machine, beside the published steps and
    the calibrated model's two host readings."""
    slowest = shapes.loc[(shapes["busy_s"] / shapes["measured_s"]).idxmin()]
    lines = ["", "**The tutorials' own runs, at their shapes, on the lent machine.** Two of megatron-tutorials' runs "
             "use one GPU. A second lease of the same kind ran Megatron-Core with Transformer Engine's layers "
             "(Megatron-LM's default fusions, dropout 0.1, vocabulary 50,304, one micro-batch of the run's sequences "
             "of 1,024 tokens) at their shapes, ten steps each. The script's optimizer is PyTorch's fused AdamW on the "
             "bf16 weights, not Megatron-LM's on fp32 master weights: a few milliseconds of device time.", "",
             "| shape | published (its H100), s | here (H200), s | device busy here, s | calibrated, megatron, s "
             "| calibrated, megatron_te, s |",
             "|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {r.layers} layers of {r.width:,}, {r.micro_batch_size} sequence{'s' if r.micro_batch_size > 1 else ''} "
              f"| {r.published_s:.3f} | {r.measured_s:.3f} | {r.busy_s:.3f} | {r.megatron_s:.3f} | {r.megatron_te_s:.3f} |"
              for r in shapes.itertuples()]
    lines += ["", f"The rows are {format_list([f'`{r.id}`' for r in shapes.itertuples()])}. The calibrated columns "
              f"are for an H200, each run's recipe with `host_framework` read both ways. "
              f"`{slowest.id}` waits on the host (its device is busy {slowest.busy_s:.3f} of its "
              f"{slowest.measured_s:.3f} s): here its step took {slowest.measured_s / slowest.published_s:.2f} times "
              f"the tutorial's {slowest.published_s:.3f} s, and the `megatron_te` reading, built from the same kind of lent "
              f"machine, predicts it {slowest.megatron_te_s / slowest.measured_s - 1:+.0%}, where `megatron` reads "
              f"{slowest.megatron_s / slowest.measured_s - 1:+.0%}. The tutorial's host issued the same layers about "
              f"{slowest.measured_s / slowest.published_s:.1f} times faster than the lent one: a host floor is the "
              f"machine's as much as the framework's, which is why the measured-runs chapter keeps `megatron` as "
              f"the reading for these runs and `megatron_te` as its bracket."]
    return lines
