"""What the calibrated model assumes, against what one GPU measured (issue #35 item 7).

``benchmarks/gpu/measure.py`` ran on a lent H100 writes ``data/calibrated/measured/<folder>/``: matrix-multiply
time by shape and precision, fused attention by sequence and head size, copy bandwidth by size, the time per
kernel, and a GPT-like training step on one GPU (peak memory allocated and reserved, step time).  This module
reads those tables and sets each of the calibrated model's kernel constants beside the value measured
(:func:`assumed_against_measured`), and the model's expected memory and step time beside each measured
training step (:func:`training_against_calibrated`).  Nothing here is fitted: the comparison is out of sample.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from lgacc.errors import UserInputError
from lgacc.model.calibrated.attention import attention_efficiency, attention_tables, kernel_measured, published_efficiency
from lgacc.model.calibrated.expected import expected
from lgacc.model.calibrated.gemm_table import table_for
from lgacc.model.calibrated.host import HOST_TERMS, host_step_fit
from lgacc.model.calibrated.memory_bound import MEMORY_BOUND_FILE, READ_KERNEL, share_samples
from lgacc.model.calibrated.parameters import fitted_calibration
from lgacc.model.calibrated.recipe import Recipe
from lgacc.model.config import TrainingConfig
from lgacc.model.hardware import load_hardware
from lgacc.model.transformer import Transformer
from lgacc.paths import DATA

__all__ = ["MEASURED", "MEASURED_RECIPE", "Measurement", "measurements", "read_measurement", "assumed_against_measured",
           "training_against_calibrated", "training_model", "reads_the_layer_table", "HostMeasurement",
           "HostTime", "host_measurements", "read_host_measurement", "host_time", "device_beyond_pool",
           "host_floor_against_measured", "MegatronHostTime", "megatron_host_times", "megatron_widths_against_calibrated",
           "attention_read_by_model", "gemm_lease_check", "MEMORY_BOUND_FILE", "memory_bound_against_assumed",
           "recomputation_against_measured", "TE_SHAPES_FILE", "TUTORIAL_SHAPE_RUNS",
           "tutorial_shapes_against_calibrated", "TE_VERSIONS_FILE", "TE_VERSIONS_SHAPES_FILE", "te_versions"]

#: Where the measurements are kept, one folder per GPU and date.
MEASURED = DATA / "calibrated" / "measured"
_TABLES = ("gemm", "attention", "bandwidth", "launch", "training")
#: The recipe's name (``attention_kernel``) of each measured PyTorch back end: its flash back end is FlashAttention-2.
_KERNEL = {"flash": "fa2", "cudnn": "cudnn"}
#: The script's recipe in the calibrated model's terms (as data/validation/lgacc_h100_2026.yaml states it): PyTorch's
#: mixed precision (fp32 weights and AdamW moments, gradients freed after the step), cross entropy on an fp32 copy
#: of the logits, FlashAttention-2 (the flash back end of scaled_dot_product_attention), one GPU.
MEASURED_RECIPE = Recipe(mixed_precision="amp", logit_bytes=14, attention_kernel="fa2", zero_stage=0,
                         dp_overlap=False, recompute_early_stop=True)  # torch.utils.checkpoint(use_reentrant=False)
#: Transformer-layer GEMMs counted as "a real layer's": at least this many tokens and this hidden width.
_LAYER_TOKENS, _LAYER_WIDTH = 2048, 2048


@dataclass(frozen=True)
class Measurement:
    """The tables of one folder (``gemm``, ``attention``, ``bandwidth``, ``launch``, ``training``) and the name of
    the hardware spec it is compared with."""

    folder: Path
    hardware: str
    tables: tuple[tuple[str, pd.DataFrame], ...]

    def table(self, name: str) -> pd.DataFrame:
        return dict(self.tables)[name].copy()


def _folders(tables: tuple[str, ...]) -> list[Path]:
    folders = [p for p in MEASURED.iterdir() if p.is_dir()] if MEASURED.is_dir() else []
    folders = [p for p in folders if all((p / f"{name}.csv").is_file() for name in tables)]
    return sorted(folders, key=lambda p: ("-".join(p.name.split("-")[-3:]), p.name))


def measurements() -> list[Path]:
    """The folders of kernel measurements (``benchmarks/gpu/measure.py``), oldest first (by the date that ends
    each name)."""
    return _folders(_TABLES)


def _read_tables(folder: Path | str, tables: tuple[str, ...]) -> tuple[Path, str, dict[str, pd.DataFrame]]:
    """``folder``, its hardware spec (the name before the date: ``h100-sxm-2026-11-26``) and its ``tables``."""
    folder = Path(folder)
    missing = [name for name in tables if not (folder / f"{name}.csv").is_file()]
    if missing:
        raise UserInputError(f"measurement folder {folder}: {', '.join(n + '.csv' for n in missing)} missing")
    hardware = "-".join(folder.name.split("-")[:-3]) or folder.name
    return folder, hardware, {name: pd.read_csv(folder / f"{name}.csv") for name in tables}


def read_measurement(folder: Path | str) -> Measurement:
    """The kernel tables of ``folder`` (:data:`_TABLES`)."""
    folder, hardware, tables = _read_tables(folder, _TABLES)
    return Measurement(folder, hardware, tuple(tables.items()))


def _layer_gemms(gemm: pd.DataFrame) -> pd.DataFrame:
    layer = gemm[gemm["label"].str.contains("_tp") & (gemm["precision"] == "bf16")].copy()
    layer["width"] = layer["label"].str.extract(r"_d(\d+)$")[0].astype(int)
    return layer[(layer["M"] >= _LAYER_TOKENS) & (layer["width"] >= _LAYER_WIDTH)]


def assumed_against_measured(measurement: Measurement) -> pd.DataFrame:
    """One row per constant of the calibrated model: ``quantity``, ``assumed`` (the model's value), ``measured``,
    ``ratio`` (measured over assumed) and ``how`` (what was measured)."""
    hw = load_hardware(measurement.hardware)
    cal = fitted_calibration()
    gemm, attention = measurement.table("gemm"), measurement.table("attention")
    bandwidth, launch = measurement.table("bandwidth"), measurement.table("launch")
    peak = hw.peak_flop_per_s
    efficiency = gemm["flops"] / gemm["seconds"] / peak
    bf16 = efficiency[gemm["precision"] == "bf16"]
    layer = _layer_gemms(gemm)
    layer_efficiency = (layer["flops"] / layer["seconds"] / peak).median()
    long = attention[(attention["seq"] >= 2048) & (attention["pass"] == "forward+backward")].copy()
    long["measured"] = long["flops"] / long["seconds"] / peak
    # where a measured attention table covers the GPU the model reads it (an input, not a check, as the layer
    # table): the page's attention section sets it beside the kernels' authors' figures instead
    reads_attention = kernel_measured(hw.name, "fa2")
    long["model"] = [cal.kappa * attention_efficiency(hw.name, _KERNEL.get(backend, backend), seq,
                                                      cal.attention_efficiency, d_h=head_dim)
                     for backend, seq, head_dim in zip(long["backend"], long["seq"], long["head_dim"])]
    large = bandwidth[(bandwidth["operation"] == "copy") & (bandwidth["bytes_per_tensor"] >= 256 * 2 ** 20)]
    hbm = (large["bytes_moved"] / large["seconds"]).median() / hw.gpu_memory_bandwidth_bytes_per_s
    per_kernel = dict(zip(launch["what"], launch["seconds_per_kernel"]))
    graph = next((v for k, v in per_kernel.items() if "graph" in k), float("nan"))
    eager = next((v for k, v in per_kernel.items() if "back to back" in k), float("nan"))
    rows = [("best bf16 matrix multiply over peak (the spec's gemm_max_efficiency)", hw.gemm_max_efficiency,
             float(bf16.max()), f"the fastest of {len(bf16)} bf16 shapes")]
    if not reads_the_layer_table(measurement):  # where the model reads the layer table, it is an input, not a check
        rows.append(("a transformer layer's bf16 matrix multiplies over peak (kappa × gemm_max_efficiency)",
                     cal.kappa * hw.gemm_max_efficiency, float(layer_efficiency),
                     f"median of {len(layer)} layer GEMMs (QKV, projection, MLP; whole and split 8 ways; "
                     f"≥ {_LAYER_TOKENS} tokens, width ≥ {_LAYER_WIDTH})"))
    for backend, group in ([] if reads_attention else long.groupby("backend")):
        rows.append((f"causal fused attention, forward and backward, over peak (kappa × the {backend} kernel's "
                     "efficiency)", float(group["model"].median()), float(group["measured"].median()),
                     f"median over sequences of {int(group['seq'].min()):,} to {int(group['seq'].max()):,} "
                     "tokens (PyTorch's scaled_dot_product_attention)"))
    rows += [
        ("share of the HBM bandwidth a copy reaches (hbm_efficiency)", cal.hbm_efficiency, float(hbm),
         "device-to-device copies of 256 MiB to 2 GiB, bytes read and written"),
        ("fixed time per kernel, seconds (kernel_latency_s): replayed in a CUDA graph", cal.kernel_latency_s,
         float(graph), "a tiny kernel, 100 of them in one graph"),
        ("fixed time per kernel, seconds (kernel_latency_s): launched one by one from Python", cal.kernel_latency_s,
         float(eager), "a tiny kernel, 2,000 back to back (the host's launch rate sets the pace)"),
    ]
    if getattr(hw, "peak_fp8_flop_per_s", None):
        fp8 = gemm[gemm["precision"] == "fp8"]
        if len(fp8):
            rows.append(("best fp8 matrix multiply over the FP8 peak (the model uses gemm_max_efficiency)",
                         hw.gemm_max_efficiency, float((fp8["flops"] / fp8["seconds"]).max() / hw.peak_fp8_flop_per_s),
                         f"the fastest of {len(fp8)} fp8 shapes (torch._scaled_mm, e4m3, one scale per tensor)"))
    frame = pd.DataFrame(rows, columns=["quantity", "assumed", "measured", "how"])
    frame["ratio"] = frame["measured"] / frame["assumed"]
    return frame[["quantity", "assumed", "measured", "ratio", "how"]]


def reads_the_layer_table(measurement: Measurement) -> bool:
    """Whether the calibrated model times this GPU's layer GEMMs from a measured table
    (``data/calibrated/gemm_tables.yaml``): then the measured layer GEMMs are the model's input, and comparing the
    model with them could not fail."""
    return table_for(load_hardware(measurement.hardware).name) is not None


def training_model(row: pd.Series) -> Transformer:
    """The GPT of one measured training step (``benchmarks/gpu/measure.py``'s ``GPT``: untied embeddings, a
    4x MLP, learned positions, which the model does not count)."""
    d_m, d_a = int(row["d_m"]), int(row["d_a"])
    return Transformer(name=f"measured GPT d_m={d_m} d_l={int(row['d_l'])} d_s={int(row['d_s'])}",
                       d_l=int(row["d_l"]), d_m=d_m, d_a=d_a, d_h=d_m // d_a, d_s=int(row["d_s"]),
                       d_v=int(row["vocab"]), tied_embeddings=False, source="benchmarks/gpu/measure.py")


def training_against_calibrated(measurement: Measurement) -> pd.DataFrame:
    """Each measured training step beside the calibrated model's expectation for it (one GPU, the script's recipe,
    :data:`MEASURED_RECIPE`, with the recomputation measured; and, for contrast, the default Megatron-LM recipe):
    memory against the peak allocated and
    the peak reserved, step time against the measured median."""
    out = []
    for _, row in measurement.table("training").iterrows():
        recompute = "full" if row["recompute"] == "full" else "none"
        config = TrainingConfig(method="baseline", n_b=1, n_l=1, n_a=1, n_mu=1, b_mu=int(row["b_mu"]))
        model = training_model(row)
        e = expected(model, measurement.hardware, config, recipe=MEASURED_RECIPE.replace(recompute=recompute))
        megatron = expected(model, measurement.hardware, config, recipe=Recipe(recompute=recompute, attention_kernel="fa2"))
        out.append({
            "d_m": int(row["d_m"]), "d_l": int(row["d_l"]), "d_s": int(row["d_s"]), "b_mu": int(row["b_mu"]),
            "recompute": recompute, "parameters": int(row["parameters"]),
            "measured_allocated_gib": row["peak_allocated_bytes"] / 2 ** 30,
            "measured_reserved_gib": row["peak_reserved_bytes"] / 2 ** 30,
            "expected_memory_gib": e.memory_bytes / 2 ** 30,
            "memory_ratio": e.memory_bytes / row["peak_allocated_bytes"],
            "expected_memory_megatron_gib": megatron.memory_bytes / 2 ** 30,
            "beyond_state_bytes": row["static_allocated_bytes"] - 12 * row["parameters"],
            "static_bytes_per_parameter": row["static_allocated_bytes"] / row["parameters"],
            "measured_step_s": float(row["step_seconds"]),
            "expected_step_s": e.step_time_s,
            "time_ratio": e.step_time_s / float(row["step_seconds"]),
        })
    return pd.DataFrame(out)


def recomputation_against_measured(measurement: Measurement) -> pd.DataFrame:
    """What full recomputation adds to each measured step, against the calibrated model's two readings of it.

    ``benchmarks/gpu/measure.py`` recomputes each block with ``torch.utils.checkpoint(use_reentrant=False)``, whose
    recomputation stops once the backward's last saved tensor (the input of the block's last product) is saved
    again.  Per shape measured with and without recomputation: ``measured`` (the step's ratio, full over none),
    ``whole_forward`` (the model's ratio re-running each layer's whole forward, ``recompute_early_stop`` off) and
    ``early_stop`` (on), and ``device_paced`` (the model's host floor binds in none of the four steps: where the
    ratio says what the GPU does, not what the host issues)."""
    rows = measurement.table("training")
    out = []
    for (d_m, d_l, d_s, b_mu), shape in rows.groupby(["d_m", "d_l", "d_s", "b_mu"], sort=True):
        by = {r["recompute"]: r for _, r in shape.iterrows()}
        if not {"none", "full"} <= set(by):
            continue
        model = training_model(by["none"])
        config = TrainingConfig(method="baseline", n_b=1, n_l=1, n_a=1, n_mu=1, b_mu=int(b_mu))
        steps = {(recompute, stop): expected(model, measurement.hardware, config,
                                             recipe=MEASURED_RECIPE.replace(recompute=recompute,
                                                                            recompute_early_stop=stop))
                 for recompute in ("none", "full") for stop in (False, True)}
        out.append({
            "d_m": int(d_m), "d_l": int(d_l), "d_s": int(d_s), "b_mu": int(b_mu),
            "measured": float(by["full"]["step_seconds"]) / float(by["none"]["step_seconds"]),
            "whole_forward": steps["full", False].step_time_s / steps["none", False].step_time_s,
            "early_stop": steps["full", True].step_time_s / steps["none", True].step_time_s,
            "device_paced": all(e.step_parts_s["host"] == 0 for e in steps.values()),
        })
    return pd.DataFrame(out)


# --- the host's share of an eager step and the device memory beyond the pool (benchmarks/gpu/measure_host.py) ------

_HOST_TABLES = ("host", "device_memory")
#: The width of the host-time rows: small enough that every kernel's GPU work is a few microseconds.
_HOST_WIDTH = 64


@dataclass(frozen=True)
class HostMeasurement:
    """The tables of one ``measure_host.py`` folder: ``host`` (eager training steps by width, layers and
    micro-batches, with the kernels each launches) and ``device_memory`` (the device's used memory beside
    PyTorch's pool at stages of a process)."""

    folder: Path
    hardware: str
    host: pd.DataFrame
    device_memory: pd.DataFrame


@dataclass(frozen=True)
class HostTime:
    """Least-squares fit of ``t = per_step + d_l per_layer_step + n_mu (per_micro_batch + d_l per_layer)`` to the
    host-bound steps, the same form for the kernels launched (``per_layer_step``: the optimizer's and the gradients'
    per-tensor work, once a step; ``per_layer``: a layer's forward and backward, once a micro-batch), and the host
    seconds per kernel launched (one constant through the origin). ``mean_relative_residual`` and
    ``max_relative_residual``: the rows' distance from the fitted time."""

    per_step_s: float
    per_layer_step_s: float
    per_micro_batch_s: float
    per_layer_s: float
    kernels_per_step: float
    kernels_per_layer_step: float
    kernels_per_micro_batch: float
    kernels_per_layer: float
    seconds_per_kernel: float
    mean_relative_residual: float
    max_relative_residual: float
    rows: int


def host_measurements() -> list[Path]:
    """The folders of host and device-memory measurements (``benchmarks/gpu/measure_host.py``), oldest first."""
    return _folders(_HOST_TABLES)


def read_host_measurement(folder: Path | str) -> HostMeasurement:
    """The host and device-memory tables of ``folder`` (:data:`_HOST_TABLES`)."""
    folder, hardware, tables = _read_tables(folder, _HOST_TABLES)
    return HostMeasurement(folder, hardware, tables["host"], tables["device_memory"])


def host_time(measurement: HostMeasurement) -> HostTime:
    """The host's time per step, per micro-batch and per layer and micro-batch (forward and backward) of an eager
    PyTorch training step, from the rows of width 64 (the GPU idles between kernels there)."""
    rows = measurement.host[measurement.host["d_m"] == _HOST_WIDTH]
    if len(rows) < 3:
        raise UserInputError(f"{measurement.folder}: fewer than 3 host-bound rows (width {_HOST_WIDTH})")
    seconds, kernels = rows["step_seconds"].to_numpy(float), rows["kernels_per_step"].to_numpy(float)
    times, mean, largest = host_step_fit(rows["d_l"], rows["n_mu"], seconds)
    counts, _, _ = host_step_fit(rows["d_l"], rows["n_mu"], kernels, non_negative=False)
    per_kernel = float(seconds @ kernels / (kernels @ kernels))
    return HostTime(*times, *counts, per_kernel, mean, largest, len(rows))


def device_beyond_pool(measurement: HostMeasurement) -> pd.DataFrame:
    """Each stage's device reading (``cudaMemGetInfo``'s used memory, as NVML reports it) beside PyTorch's pool:
    ``beyond_pool_bytes`` = used - reserved (the CUDA context, loaded kernels, the communication library's
    buffers: what a ``nvidia-smi`` reading holds that the allocator's statistics do not)."""
    frame = measurement.device_memory.dropna(subset=["device_used_bytes"]).copy()
    frame["beyond_pool_bytes"] = frame["device_used_bytes"] - frame["reserved_bytes"]
    return frame[["stage", "device_used_bytes", "reserved_bytes", "allocated_bytes", "beyond_pool_bytes"]]


def host_floor_against_measured() -> pd.DataFrame:
    """The calibrated model's host floor for plain PyTorch (its four terms, fitted to the host script's steps at width
    64, :func:`lgacc.model.calibrated.host.host_terms`) beside the whole eager steps of the kernel measurement's
    training table at its narrowest width and fewest tokens, without recomputation (another day, another script,
    width 1,024: steps the floor was not read from and can fail on): ``d_l``, ``n_mu``, ``d_s``, ``b_mu``, ``measured_s``, ``floor_s``
    (``t_hs + d_l t_hl + n_mu (t_hm + d_l t_h)``) and ``ratio``."""
    from lgacc.model.calibrated.host import TRAINING_FILE, host_terms

    terms = host_terms("pytorch")
    rows = pd.read_csv(TRAINING_FILE)
    rows = rows[(rows["d_m"] == rows["d_m"].min()) & (rows["recompute"] == "none")]
    tokens = rows["b_mu"] * rows["d_s"]
    rows = rows[tokens == tokens.min()]  # the fewest tokens a micro-batch: the steps least loaded on the GPU
    frame = pd.DataFrame({"d_l": rows["d_l"].astype(int), "n_mu": 1,  # one micro-batch a step
                          "d_s": rows["d_s"].astype(int), "b_mu": rows["b_mu"].astype(int),
                          "measured_s": rows["step_seconds"].astype(float)})
    frame["floor_s"] = (terms["step_s"] + frame["d_l"] * terms["step_layer_s"]
                        + frame["n_mu"] * (terms["micro_batch_s"] + frame["d_l"] * terms["layer_s"]))
    frame["ratio"] = frame["floor_s"] / frame["measured_s"]
    return frame.reset_index(drop=True)


# --- Megatron-Core's host (benchmarks/gpu/measure_megatron_host.py) ----------------------------------------------------

@dataclass(frozen=True)
class MegatronHostTime:
    """One layer spec's host-bound steps in one ``megatron_host*.csv`` table (``table``, one lease of the GPU):
    ``spec`` (``local``, ``local_moe``, ``local_recompute_full``, ...), ``experts`` and ``topk`` (0 for a dense
    layer), ``per_layer_s`` (a layer's forward and backward per micro-batch), ``per_micro_batch_s`` and
    ``per_step_s`` (once each, outside the layers; None where the rows are too few for the four-term fit: then the
    layer's time is the steps' difference, ``((L2, m2) - (L2, m1) - (L1, m2) + (L1, m1)) / ((L2 - L1)(m2 - m1))``),
    ``kernels_per_layer`` (the same difference of the kernels launched, where counted) and ``rows``."""

    table: str
    spec: str
    experts: int
    topk: int
    per_layer_s: float
    per_micro_batch_s: float | None
    per_step_s: float | None
    kernels_per_layer: float | None
    rows: int


def _difference(rows: pd.DataFrame, column: str) -> float:
    layers, micro = sorted(rows["layers"].unique()), sorted(rows["micro_batches"].unique())
    (l1, l2), (m1, m2) = (layers[0], layers[-1]), (micro[0], micro[-1])
    at = {(int(r.layers), int(r.micro_batches)): float(getattr(r, column)) for r in rows.itertuples()}
    return (at[l2, m2] - at[l2, m1] - at[l1, m2] + at[l1, m1]) / ((l2 - l1) * (m2 - m1))


def megatron_host_times(measurement: HostMeasurement) -> list[MegatronHostTime]:
    """Every layer spec of every ``megatron_host*.csv`` table of the folder (none if it has none), table by table
    in the order their names sort, specs in the order measured."""
    out = []
    for path in sorted(measurement.folder.glob("megatron_host*.csv")):
        frame = pd.read_csv(path)
        for spec, rows in frame[frame["width"] == _HOST_WIDTH].groupby("spec", sort=False):
            experts = int(rows["experts"].fillna(0).iloc[0])
            topk = int(rows["topk"].fillna(0).iloc[0])
            counted = rows["kernels"].notna().all()
            kernels = _difference(rows, "kernels") if counted else None
            try:
                (step, _, micro, layer), _, _ = host_step_fit(rows["layers"], rows["micro_batches"],
                                                              rows["step_seconds"])
            except UserInputError:  # a quick run: 2 x 2 steps, the layer's time from their difference
                step, micro, layer = None, None, _difference(rows, "step_seconds")
            out.append(MegatronHostTime(path.name, str(spec), experts, topk, float(layer), micro, step,
                                        None if kernels is None else float(kernels), len(rows)))
    return out


def megatron_widths_against_calibrated(measurement: HostMeasurement) -> pd.DataFrame:
    """The folder's ``megatron_widths.csv`` (Megatron-Core's plain layer by width; none: an empty frame) beside the
    calibrated model's step for the same configuration with ``host_framework=megatron``: one GPU, the script's
    recipe in the model's terms (no recomputation, no fused attention, no dropout, the vocabulary of 256 tied to the
    embedding, 64 per head).  Columns ``width``, ``n_mu``, ``measured_s``, ``expected_s``, ``ratio`` (expected over
    measured), ``host_s`` (the floor's share the device waits for), ``busy_s`` (the device's busy time measured in
    one profiled step) and ``composed_s``: the larger of the host's time, read as the narrowest width's step of the
    same micro-batches (the same kernels, each a few microseconds of GPU work), and the device's busy time, which is
    how the calibrated model composes them."""
    path = measurement.folder / "megatron_widths.csv"
    columns = ["width", "n_mu", "measured_s", "expected_s", "ratio", "host_s", "busy_s", "composed_s"]
    if not path.is_file():
        return pd.DataFrame(columns=columns)
    recipe = Recipe(recompute="none", flash_attention=False, dropout=False, zero_stage=0, dp_overlap=False,
                    host_framework="megatron")
    out = []
    for row in pd.read_csv(path).itertuples():
        model = Transformer(name=f"megatron-core local d_m={row.width}", d_s=int(row.tokens), d_m=int(row.width),
                            d_l=int(row.layers), d_a=int(row.width) // 64, d_h=64, d_v=256, tied_embeddings=True)
        config = TrainingConfig(method="baseline", n_b=1, n_l=1, n_a=1, n_mu=int(row.micro_batches), b_mu=1)
        result = expected(model, measurement.hardware, config, recipe=recipe)
        out.append({"width": int(row.width), "n_mu": int(row.micro_batches), "measured_s": float(row.step_seconds),
                    "expected_s": result.step_time_s, "ratio": result.step_time_s / float(row.step_seconds),
                    "host_s": result.step_parts_s["host"], "busy_s": float(row.device_busy_seconds)})
    frame = pd.DataFrame(out, columns=columns[:7])
    narrowest = frame[frame["width"] == frame["width"].min()].set_index("n_mu")["measured_s"]
    frame["composed_s"] = np.maximum(frame["n_mu"].map(narrowest), frame["busy_s"])
    return frame


def attention_read_by_model(hardware: str = "h100-sxm") -> pd.DataFrame:
    """The fused attention the calibrated model reads on ``hardware`` (:mod:`lgacc.model.calibrated.attention`):
    one row per kernel and head size, ``kernel``, ``head_dim``, ``source`` (``measured``, or ``published`` for the
    kernel's authors' figures shown beside them, not read; a derived kernel's base, slowed) and the efficiency over peak at each sequence length of the
    measured table (a published figure at its largest length not above it; NaN beyond the figure's range)."""
    from lgacc.model.calibrated.attention import derived_kernels, published_tables, table_for_gpu

    name = load_hardware(hardware).name
    table = table_for_gpu(attention_tables(), name)
    if table is None:
        return pd.DataFrame(columns=["kernel", "head_dim", "source"])
    lengths = table["sequence_lengths"]
    derived = derived_kernels()
    rows = [{"kernel": kernel, "head_dim": head_dim,
             "source": f"{derived[kernel]['from']} measured, slowed" if kernel in derived else "measured",
             **dict(zip(lengths, values))}
            for kernel, grid in table["kernels"].items() for head_dim, values in zip(table["head_dims"], grid)]
    published = table_for_gpu(published_tables(), name)
    for kernel, values in ({} if published is None else published["kernels"]).items():
        shown = {n: (published_efficiency(name, kernel, n) if published["sequence_lengths"][0] <= n
                     <= published["sequence_lengths"][-1] else np.nan) for n in lengths}
        rows.append({"kernel": kernel, "head_dim": published["head_dim"], "source": "published", **shown})
    return pd.DataFrame(rows)


def gemm_lease_check(hardware: str = "h100-sxm") -> dict | None:
    """What a later lease's GEMM file adds to the GPU's layer grid: ``files``, ``widths`` (the widths it adds) and,
    over the points both leases measured (the first lease's are read), the later lease's efficiency over the first's
    (``median``, ``low``, ``high``, ``points``); None where the GPU has no grid or one file."""
    from lgacc.model.calibrated.gemm_table import GEMM_FILE

    table = table_for(load_hardware(hardware).name)
    if table is None or len(table["sources"]) < 2:
        return None
    frames = [pd.read_csv(GEMM_FILE.parent / source) for source in table["sources"]]
    maps = [frame.groupby(["d", "tp", "M", "layer"])[["flops", "seconds"]].sum() for frame in frames]
    first, later = maps[0], pd.concat(maps[1:])
    both = first.merge(later, left_index=True, right_index=True, suffixes=("_first", "_later"))
    ratio = (both["flops_later"] / both["seconds_later"]) / (both["flops_first"] / both["seconds_first"])
    widths = sorted(set(later.index.get_level_values("d")) - set(first.index.get_level_values("d")))
    return {"files": list(table["sources"]), "widths": [int(w) for w in widths], "median": float(ratio.median()),
            "low": float(ratio.min()), "high": float(ratio.max()), "points": int(len(ratio))}


def memory_bound_against_assumed(path: Path = MEMORY_BOUND_FILE, hardware: str = "h100-sxm") -> pd.DataFrame:
    """Each memory-bound kernel and pass of ``path`` (``kernel``, ``pass``): the share of ``hardware``'s HBM bandwidth
    its least bytes reach (the bytes each tensor is read or written once, over the time measured), the ``median``,
    ``low`` and ``high`` over the tokens and widths measured, beside ``assumed``, the share the calibrated model
    streams the kernel at (the layer norm's medians, ``norm_forward_efficiency`` and ``norm_backward_efficiency``;
    the others ``hbm_efficiency``), and ``read`` (whether the model reads the kernel's measured share)."""
    samples = share_samples(Path(path), hardware)  # the shares the model reads its medians from
    out = pd.DataFrame([{"kernel": kernel, "pass": name, "median": float(np.median(shares)), "low": min(shares),
                         "high": max(shares), "cases": len(shares)} for (kernel, name), shares in samples.items()])
    calibration = fitted_calibration()
    norms = {"forward": calibration.norm_forward_efficiency, "backward": calibration.norm_backward_efficiency}
    out["read"] = out["kernel"] == READ_KERNEL
    out["assumed"] = [norms[name] if read else calibration.hbm_efficiency
                      for read, name in zip(out["read"], out["pass"])]
    return out


#: the H200 lease's steps of Megatron-Core at two published runs' own shapes, local and Transformer Engine layers
TE_SHAPES_FILE = MEASURED / "h200-sxm-2026-11-28" / "megatron_tutorial_shapes.csv"
#: (layers, width) of each shape -> the published single-GPU run of megatron-tutorials it is (data/validation)
TUTORIAL_SHAPE_RUNS = {(48, 1600): "mtut-dp-r1-gpt2xl-dp1-gbs1", (40, 1536): "mtut-tpweak-r1-gpt2-1.2b-tp1-gbs8"}


def tutorial_shapes_against_calibrated(path: Path = TE_SHAPES_FILE) -> pd.DataFrame:
    """Each single-GPU run of megatron-tutorials whose shape the H200 lease ran with Transformer Engine's layers and
    Megatron-LM's default fusions (:data:`TUTORIAL_SHAPE_RUNS`): ``id``, ``layers``, ``width``,
    ``micro_batch_size``, ``published_s`` (the tutorial's step on its H100), ``measured_s`` and ``busy_s`` (the
    lease's step and its device's busy time), ``megatron_s`` and ``megatron_te_s`` (the calibrated model on an H200,
    the run's recipe with ``host_framework`` read each way)."""
    from lgacc.model.calibrated.host import TE_SPEC
    from lgacc.studies.validation.measured import measured_step_time
    from lgacc.studies.validation.runs import load_runs

    frame = pd.read_csv(path)
    frame = frame[frame["spec"] == TE_SPEC]
    runs = {run.id: run for run in load_runs()}
    out = []
    for row in frame.itertuples():
        run = runs[TUTORIAL_SHAPE_RUNS[int(row.layers), int(row.width)]]
        config = TrainingConfig(method=run.method, n_b=run.n_b, n_l=run.n_l, n_a=run.n_a, n_mu=run.n_mu, b_mu=run.b_mu)
        steps = {framework: expected(run.model, "h200-sxm", config, recipe=run.recipe.replace(host_framework=framework),
                                     calibration=fitted_calibration()).step_time_s
                 for framework in ("megatron", "megatron_te")}
        out.append({"id": run.id, "layers": int(row.layers), "width": int(row.width),
                    "micro_batch_size": int(row.micro_batch_size), "published_s": measured_step_time(run),
                    "measured_s": float(row.step_seconds), "busy_s": float(row.device_busy_seconds),
                    "megatron_s": steps["megatron"], "megatron_te_s": steps["megatron_te"]})
    return pd.DataFrame(out)


#: a third lease: two Transformer Engine releases one after the other, the width-64 steps and GPT-2 XL's step
TE_VERSIONS_FILE = MEASURED / "h200-sxm-2026-11-28" / "te_versions.csv"
TE_VERSIONS_SHAPES_FILE = MEASURED / "h200-sxm-2026-11-28" / "te_versions_shapes.csv"


def te_versions(grid: Path = TE_VERSIONS_FILE, shapes: Path = TE_VERSIONS_SHAPES_FILE) -> pd.DataFrame:
    """One row per Transformer Engine release of the third lease, in the order run: ``release``, ``local_s`` and
    ``te_s`` (the width-64 layers' host time per layer and micro-batch, Megatron-Core's own and TE's with
    Megatron-LM's default fusions, fitted as :func:`megatron_host_times` fits them), ``shape_s`` and
    ``shape_busy_s`` (GPT-2 XL's step at the tutorial's shape and its device's busy time)."""
    from lgacc.model.calibrated.host import TE_SPEC

    if not grid.is_file() or not shapes.is_file():
        return pd.DataFrame(columns=["release", "local_s", "te_s", "shape_s", "shape_busy_s"])
    steps, whole = pd.read_csv(grid, dtype={"transformer_engine": str}), pd.read_csv(shapes, dtype={"transformer_engine": str})
    out = []
    for release in dict.fromkeys(steps["transformer_engine"]):
        rows = steps[steps["transformer_engine"] == release]
        slope = {spec: dict(zip(HOST_TERMS, host_step_fit(part["layers"], part["micro_batches"],
                                                           part["step_seconds"])[0]))["layer_s"]
                 for spec, part in rows.groupby("spec")}
        step = whole[whole["transformer_engine"] == release].iloc[0]
        out.append({"release": release, "local_s": float(slope["local"]), "te_s": float(slope[TE_SPEC]),
                    "shape_s": float(step["step_seconds"]), "shape_busy_s": float(step["device_busy_seconds"])})
    return pd.DataFrame(out)
