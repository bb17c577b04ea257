"""The page "Measured on an H100": the calibrated model's constants and training steps against one GPU's
measurements (:mod:`lgacc.studies.gpu_measured`)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from lgacc.model.calibrated.parameters import fitted_calibration
from lgacc.model.hardware import load_hardware
from lgacc.studies.gpu_measured import (Measurement, assumed_against_measured, reads_the_layer_table,
                                        training_against_calibrated)

from .display import show_html
from .figures import show_svg_figure
from .tables import show_table

__all__ = ["environment_markdown", "assumed_table", "gemm_figure", "layer_table_markdown", "training_table",
           "training_summary_markdown"]


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
    top = cal.kappa * hw.gemm_max_efficiency
    half = top * hw.peak_flop_per_s * cal.kernel_latency_s  # lgacc.model.calibrated.gemm.half_saturation_flops
    axis.plot(flops, top * flops / (flops + half), color="black", lw=1.2,
              label="model's curve, no table")
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
            f"held-out error over the measured runs (the chapter before this one) is the check.")


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
        f"one by one from Python, about {eager * 1e6:.0f} µs each (the table above); the model's "
        f"{cal.kernel_latency_s * 1e6:.0f} µs per kernel and no host time make it too fast there, and close on the "
        f"larger ones.\n\n"
        f"These steps are not in the fit, which reads step times of multi-GPU runs only, and the model's constants "
        f"were not set from them.")
