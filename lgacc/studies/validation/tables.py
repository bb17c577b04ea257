"""One row per published run: the measurement, the ideal bound and the calibrated prediction, with the
readings of what the source does not state at both ends; and the summaries the page and the command print.

Runs with experts, context parallelism or FP8 (``extended``, issue #36) have their rows in the frame with their
``n_e``, ``n_c``, ``precision``; every summary number that existed before them (:func:`summary`'s keys,
:func:`by_publication`) reads the dense bf16 rows only, so that adding them moves none of those numbers, and
:func:`extension_errors` reports the MoE and the FP8 runs apart (the ``moe`` and ``fp8`` keys of :func:`summary`).

The frame is computed once per set of run files and sources and kept by :mod:`lgacc.cache.results`
(the ideal evaluations, the calibrated program, the fits of the leave-one-publication-out folds).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from lgacc.cache.results import cached
from lgacc.errors import UserInputError
from lgacc.model.calibrated import Calibration, fitted_calibration
from lgacc.model.calibrated.device_memory import deepspeed_step_segment_bytes, nccl_buffer_bytes
from lgacc.model.hardware import GIB, Hardware

from . import calibrated as cal
from .ideal import CONVENTIONS, DP_NETWORKS, ideal_efficiency, predicted_step_time
from .measured import measured_step_time
from .runs import DATA_DIR, Run, load_runs

__all__ = ["comparison", "frame_for", "summary", "by_publication", "CALCULON_ERROR", "MEMORY_PREDICTS", "MEMORY_RULE",
           "CUDA_CONTEXT_BYTES", "CONTEXT_GIB", "PEER_COLUMNS",
           "dense_rows", "extension_errors", "EXTENSIONS"]

#: Calculon's mean error against Megatron-LM's measured runs (Isaev et al. 2023), for comparison.
CALCULON_ERROR = 0.0365


def _computable(run: Run, what: str, seconds: float) -> None:
    """A step time the ratios can use: a positive, finite, normal float."""
    if not (isinstance(seconds, (int, float)) and 2.2250738585072014e-308 <= seconds < math.inf):
        raise UserInputError(
            f"run {run.id!r}: {what} = {seconds!r} s is not a positive finite number of seconds; "
            f"check its reported values {dict(run.reported)} and sizes (b={run.b}, d_s={run.model.d_s})"
        )


def _ideal_columns(run: Run) -> dict:
    measured = measured_step_time(run)
    _computable(run, "measured step time", measured)
    row = {"measured_step_s": measured}
    for convention in CONVENTIONS:
        predicted = predicted_step_time(run, convention)
        _computable(run, f"predicted step time ({convention} convention)", predicted)
        row[f"predicted_{convention}_s"] = predicted
        row[f"ratio_{convention}"] = measured / predicted
    row["efficiency_physical"] = ideal_efficiency(run, "physical")
    row["implied_kernel_efficiency"] = row["predicted_physical_s"] / measured
    row["upper_bound"] = bool(measured >= row["predicted_physical_s"])
    for network in DP_NETWORKS[1:]:
        predicted = predicted_step_time(run, "physical", network)
        row[f"predicted_physical_{network}_s"] = predicted
        row[f"upper_bound_{network}"] = bool(measured >= predicted)
    return row


def _alternatives(run: Run) -> list[Run]:
    out = []
    for name, value in run.bracket:
        other = run.with_reading(name, value)
        if other is not None:
            out.append(other)
    return out


def _describe(run: Run) -> dict:
    reading = run.reading()
    return {
        "id": run.id, "publication": run.publication, "citation": run.citation, "model": run.model.name,
        "hardware": run.hardware.name, "method": run.method.value, "schedule": run.schedule, "n_v": run.n_v,
        "n_gpu": run.n_gpu, "n_b": run.n_b, "n_l": run.n_l, "n_a": run.n_a, "n_mu": run.n_mu, "b_mu": run.b_mu,
        "b": run.b, "d_s": run.model.d_s, "recomputation": run.recomputation,
        "n_e": run.n_e, "n_c": run.n_c, "precision": run.precision, "moe": run.is_moe, "extended": run.extended,
        "sequence_parallel": reading["sequence_parallel"], "flash_attention": reading["flash_attention"],
        "zero_stage": reading["zero_stage"], "deepspeed_pipeline": reading["deepspeed_pipeline"],
        "uses": ",".join(run.uses),
        "assumed": "; ".join(f"{name} = {reading[name]} ({why})" for name, why in run.assumed.items()),
        "bracket": "; ".join(f"{name} = {value}" for name, value in run.bracket),
        "measured_memory_gib": run.measured_memory_gib if run.measured_memory_gib is not None else math.nan,
        "memory_statistic": run.memory_statistic if run.measured_memory_gib is not None else "",
        "measured_memory_reserved_gib": float(run.reported.get("memory_reserved_gib_per_gpu", math.nan)),
        "memory_context_gib": _context_gib(run),
        **{f"peer_{tool.lower()}_step_s": values.get("iteration_time_s", math.nan) for tool, values in run.peers.items()},
        **{f"peer_{tool.lower()}_memory_gib": values.get("memory_gib_per_gpu", math.nan)
           for tool, values in run.peers.items()},
    }


def _compute(runs: tuple[Run, ...], calibration: Calibration) -> pd.DataFrame:
    rows = [{**_describe(run), **_ideal_columns(run)} for run in runs]
    frame = pd.DataFrame(rows)
    for column in PEER_COLUMNS:  # present whether or not a run names the peer
        if column not in frame:
            frame[column] = math.nan
    central = cal.predict(runs, calibration)
    frame["expected_step_s"] = central["step_time_s"]
    frame["expected_memory_gib"] = central["memory_gib"]
    _deepspeed_step(frame, runs, central)
    frame["expected_ratio"] = frame["expected_step_s"] / frame["measured_step_s"]
    _beyond_allocated(frame)
    frame["memory_ratio"] = frame["expected_memory_compared_gib"] / frame["measured_memory_gib"]
    for part in ("pipeline", "bubble", "data_parallel", "optimizer", "fixed"):
        frame[f"expected_{part}_s"] = central[f"{part}_s"]
    if frame["extended"].any():  # the sparse extension's own parts (0 for a dense bf16 run)
        for part in ("expert_gemm", "all_to_all", "dispatch"):
            frame[f"expected_{part}_s"] = central[f"{part}_s"]
        frame["expected_all_to_all_share"] = frame["expected_all_to_all_s"] / frame["expected_step_s"]
    # both ends of every unstated choice: the ideal bound and the calibrated prediction at each reading
    alternatives = [(i, other) for i, run in enumerate(runs) for other in _alternatives(run)]
    ideal_low, ideal_high = frame["predicted_physical_s"].to_numpy().copy(), frame["predicted_physical_s"].to_numpy().copy()
    low, high = frame["expected_step_s"].to_numpy().copy(), frame["expected_step_s"].to_numpy().copy()
    if alternatives:
        step = cal.predict([other for _, other in alternatives], calibration, compact=True)["step_time_s"]
        for (i, other), value in zip(alternatives, step):
            ideal = predicted_step_time(other, "physical")
            ideal_low[i], ideal_high[i] = min(ideal_low[i], ideal), max(ideal_high[i], ideal)
            low[i], high[i] = min(low[i], value), max(high[i], value)
    frame["predicted_physical_low_s"], frame["predicted_physical_high_s"] = ideal_low, ideal_high
    frame["upper_bound_every_reading"] = frame["measured_step_s"] >= frame["predicted_physical_high_s"]
    frame["expected_low_s"], frame["expected_high_s"] = low, high
    # leave one publication out
    frame["expected_lopo_s"] = math.nan
    for publication, (_, step) in cal.leave_one_publication_out(runs).items():
        mask = (frame["publication"] == publication) & frame["uses"].str.contains("time")
        frame.loc[mask, "expected_lopo_s"] = step
    frame["lopo_ratio"] = frame["expected_lopo_s"] / frame["measured_step_s"]
    return frame


#: The peers' own published predictions kept beside the measurements (``peers`` of a run file).
PEER_COLUMNS = ("peer_simumax_step_s", "peer_simumax_memory_gib", "peer_calculon_step_s")
#: What the calibrated memory model predicts: the tensors alive at the peak (weights, gradients, optimizer state,
#: buffers, activations with a fragmentation share, the framework's workspaces): PyTorch's peak *allocated* memory
#: (``torch.cuda.max_memory_allocated``), not the caching allocator's reserved pool, which is larger.
MEMORY_PREDICTS = "allocated"
#: The GPU memory of a PyTorch process's CUDA context, as measured in pytorch/pytorch#86509 (the pull request that
#: made PyTorch 1.13 load kernels lazily): 666,632,192 bytes loading every module at start, 287,047,680 bytes with
#: ``CUDA_MODULE_LOADING=LAZY`` (``total - free`` of ``cudaMemGetInfo`` after one 6.4 MB tensor: the allocator's
#: 20 MiB segment for it, about 0.02 GiB, is counted in too). Not fitted: a published measurement.
#: ``lazy-cuda13``: 804,061,184 bytes (766.8 MiB) beyond the pool, measured by this package on an H100 with CUDA 13.0
#: and PyTorch 2.11 after training steps had loaded their kernels lazily (cuBLAS, flash attention, the fused
#: optimizer), the same at widths 1024 to 4096 (``data/calibrated/measured/h100-sxm-2026-11-27/device_memory.csv``,
#: ``benchmarks/gpu/measure_host.py``): CUDA 13's context is larger than CUDA 11.7's, and a reading during training
#: holds the kernels the step loaded.
CUDA_CONTEXT_BYTES = {"eager": 666_632_192, "lazy": 287_047_680, "lazy-cuda13": 804_061_184}
#: The contexts in GiB as the rule and the chapter print them (from :data:`CUDA_CONTEXT_BYTES`, never typed twice).
CONTEXT_GIB = {loading: f"{size / 2 ** 30:.2f} GiB" for loading, size in CUDA_CONTEXT_BYTES.items()}
#: How a measurement of another statistic is compared (issue #35): no term is fitted to bridge the statistics.
MEMORY_RULE = ("the calibrated model predicts the peak allocated memory (expected_memory_gib), and for a DeepSpeed run "
               "with its fp16 optimizer (recipe deepspeed_optimizer, DeepSpeed v0.5.10's defaults) the peak is the "
               "largest of the backward's and of two later phases, after the activations are freed: the gradient "
               "reduction's flat bucket of up to 5e8 gradients beside all of them, and the step's flat fp32 copy of "
               "the gradients (ZeRO-1/2: this rank's partition, half-precision flat copy and fp32 cast; without ZeRO: "
               "an fp32 copy of each gradient and their concatenation), and with DeepSpeed's PipelineEngine (recipe "
               "deepspeed_pipeline) each in-flight micro-batch's stage output split over the tensor-parallel ranks, "
               "restored in full beside the full received gradient at its backward; PyTorch's statistics "
               "are ordered allocated <= reserved (the caching allocator's pool, its free blocks included) <= device "
               "(NVML's used memory, as nvidia-smi or gpustat read it: the pool plus the CUDA context and the "
               "communication library's buffers); each statistic is compared with its own prediction, no term "
               "fitted: reserved = allocated x the measured pool/allocation ratio of the runs whose source "
               "publishes both, the run's own publication left out (expected_memory_reserved_gib, "
               "memory_pool_ratio), and for DeepSpeed's fp16 optimizer the pool of the backward's blocks (the "
               "allocated peak less the step's excess, memory_step_excess_gib) plus its step's flat gradients in "
               "segments of their own (memory_step_segments_gib: ZeRO-1/2 (2 + 4) / n_b bytes a parameter, without "
               "ZeRO 4; PyTorch's caching allocator never merges blocks of different segments, and no block the "
               "backward freed holds a whole partition); device = reserved + the CUDA context as the run's software loaded its kernels "
               f"(reported.cuda_module_loading: {CONTEXT_GIB['eager']} eagerly and {CONTEXT_GIB['lazy']} lazily with "
               f"CUDA 11.7, measured in pytorch/pytorch#86509; {CONTEXT_GIB['lazy-cuda13']} lazily with CUDA 13.0 "
               "after training steps, measured by this package on an H100) + NCCL's buffers at its documented defaults, 10 MiB per channel "
               "(4 MiB Simple, 0.5 MiB LL, 4.7 MiB LL128, rounded to cuMem's 2 MiB), 32 channels, per "
               "communicator of two ranks or more the run's parallelism creates (with DeepSpeed's PipelineEngine also "
               "its slice, model-parallel and tied-embedding groups) (expected_memory_device_gib, "
               "memory_nccl_gib); each statistic's error is reported apart (memory_by_statistic, with "
               "below_measured: the runs whose prediction is at most the measurement)")


def pool_ratios(frame: pd.DataFrame) -> pd.Series:
    """Per row, the caching allocator's measured pool over its allocation (peak reserved / peak allocated), the mean
    over the dense runs whose source publishes both statistics, the row's own publication left out (as the time fit
    leaves it out); 1 (no free blocks: the lower bound) where no other publication measured both."""
    both = dense_rows(frame)
    both = both[(both["memory_statistic"] == "allocated") & both["measured_memory_reserved_gib"].notna()]
    measured = both["measured_memory_reserved_gib"] / both["measured_memory_gib"]
    by_publication = {}
    for publication in frame["publication"].unique():
        others = measured[both["publication"] != publication]
        by_publication[publication] = float(others.mean()) if len(others) else 1.0
    return frame["publication"].map(by_publication).astype(float)


def _beyond_allocated(frame: pd.DataFrame) -> None:
    """The columns that compare the allocated prediction with a reserved or device reading (:data:`MEMORY_RULE`):
    ``memory_pool_ratio``, ``memory_nccl_gib``, ``expected_memory_reserved_gib``, ``expected_memory_device_gib``
    and ``expected_memory_compared_gib`` (the prediction of the statistic the run measured)."""
    frame["memory_pool_ratio"] = pool_ratios(frame).to_numpy()
    frame["memory_nccl_gib"] = [nccl_buffer_bytes(*(int(row[k]) for k in ("n_a", "n_l", "n_b", "n_c", "n_e")),
                                                  deepspeed_pipeline=bool(row["deepspeed_pipeline"])) / GIB
                                for _, row in frame.iterrows()]
    # the pool of the backward's blocks, and beside it DeepSpeed's step's flat gradients in segments of their own
    backward = frame["expected_memory_gib"] - frame["memory_step_excess_gib"]
    frame["expected_memory_reserved_gib"] = (backward * frame["memory_pool_ratio"]
                                             + np.maximum(frame["memory_step_excess_gib"],
                                                          frame["memory_step_segments_gib"]))
    frame["expected_memory_device_gib"] = (frame["expected_memory_reserved_gib"] + frame["memory_context_gib"]
                                           + frame["memory_nccl_gib"])
    statistic = frame["memory_statistic"]
    frame["expected_memory_compared_gib"] = np.where(
        statistic == "device", frame["expected_memory_device_gib"],
        np.where(statistic == "reserved", frame["expected_memory_reserved_gib"], frame["expected_memory_gib"]))


def _deepspeed_step(frame: pd.DataFrame, runs: Sequence[Run], central: Mapping[str, np.ndarray]) -> None:
    """``memory_step_excess_gib``: what DeepSpeed's fp16 optimizer's phases after the backward add to the allocated
    peak (the ``buffers`` beyond the others; 0 for any other run), and ``memory_step_segments_gib``: the pool segments
    its step's flat gradients hold beside the backward's (:func:`deepspeed_step_segment_bytes`)."""
    excess, segments = [], []
    for i, run in enumerate(runs):
        stage = run.recipe.zero_stage or 0
        if not run.recipe.deepspeed_optimizer or stage >= 3 or run.extended:
            excess.append(0.0)
            segments.append(0.0)
            continue
        parameters = float(central["memory_weights"][i]) / 2  # 2 bytes a half-precision weight, not sharded
        others = run.recipe.ddp_bucket_copy * run.recipe.grad_reduce_bytes * parameters
        excess.append((float(central["memory_buffers"][i]) - others) / GIB)
        segments.append(deepspeed_step_segment_bytes(parameters, run.n_b, stage, run.recipe.main_grad_bytes) / GIB)
    frame["memory_step_excess_gib"] = excess
    frame["memory_step_segments_gib"] = segments


def _context_gib(run: Run) -> float:
    """The CUDA context a ``device`` measurement holds beyond the allocator's pool (GiB), by how the run's software
    loaded its kernels; 0 for the other statistics, or where the run file does not say."""
    loading = run.reported.get("cuda_module_loading")
    if run.measured_memory_gib is None or run.memory_statistic != "device" or loading is None:
        return 0.0
    return CUDA_CONTEXT_BYTES[loading] / GIB



def frame_for(data_dir: Path | str = DATA_DIR, hardware: Hardware | str | None = None,
              calibration: Calibration | None = None) -> pd.DataFrame:
    """:func:`comparison` of the runs of ``data_dir`` (kept on disk, keyed by the files and the sources)."""
    runs = load_runs(data_dir, hardware=hardware)
    calibration = fitted_calibration() if calibration is None else calibration
    # keyed by what was read, not where from: every run's numbers, its model and its hardware (a spec file
    # named by a run or by --hardware, wherever it lives, is in the runs' values), and the calibration
    return cached("validation-frame", (runs, calibration), lambda: _compute(runs, calibration))


def comparison(runs: Sequence[Run], calibration: Calibration | None = None) -> pd.DataFrame:
    """One row per run: configuration and reading, measured time (and memory), the ideal model's predictions
    (``predicted_<convention>_s``, ratios, the bound at both ends of the readings), the calibrated model's
    (``expected_step_s``, its parts, ``expected_low_s``/``expected_high_s``, ``expected_lopo_s``, memory)."""
    calibration = fitted_calibration() if calibration is None else calibration
    return _compute(tuple(runs), calibration)


def _errors(ratio: pd.Series) -> tuple[float, float]:
    values = np.abs(ratio.dropna().to_numpy() - 1)
    return (float(values.mean()), float(values.max())) if values.size else (math.nan, math.nan)


def dense_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The dense bf16 rows of a comparison frame (all of them for a frame without an ``extended`` column)."""
    return frame[~frame["extended"].astype(bool)] if "extended" in frame.columns else frame


def _within_publication(frame: pd.DataFrame, runs: Sequence[Run]) -> float:
    """Mean error when each publication is fitted on its own dense bf16 runs and predicted with them (Calculon's
    way)."""
    errors = []
    timed = cal.fit_runs(runs)
    for publication in dict.fromkeys(run.publication for run in timed):
        own = [run for run in timed if run.publication == publication]
        step = cal.predict(own, cal.fit(own), compact=True)["step_time_s"]
        measured = np.array([measured_step_time(run) for run in own])
        errors.extend(np.abs(step / measured - 1))
    return float(np.mean(errors))


def by_publication(frame: pd.DataFrame) -> pd.DataFrame:
    """Per publication, dense bf16 runs: runs, methods, mean and worst leave-one-out error, in-sample error, bound
    held."""
    frame = dense_rows(frame)
    rows = []
    for publication, rows_of in frame.groupby("publication", sort=False):
        timed = rows_of[rows_of["uses"].str.contains("time")]
        lopo_mean, lopo_max = _errors(timed["lopo_ratio"])
        fit_mean, fit_max = _errors(timed["expected_ratio"])
        rows.append({"publication": publication, "runs": len(rows_of), "time_runs": len(timed),
                     "methods": ", ".join(sorted(set(rows_of["method"]))),
                     "lopo_mean_error": lopo_mean, "lopo_max_error": lopo_max,
                     "fitted_mean_error": fit_mean, "fitted_max_error": fit_max,
                     "ideal_bound_holds": int(rows_of["upper_bound"].sum())})
    return pd.DataFrame(rows, columns=["publication", "runs", "time_runs", "methods", "lopo_mean_error",
                                       "lopo_max_error", "fitted_mean_error", "fitted_max_error", "ideal_bound_holds"])


def _reserved_beside_allocated(memory: pd.DataFrame) -> dict:
    """The runs whose source gives both the peak allocated and the peak reserved memory: the prediction's error
    against each, and how much larger the measured pool is than the measured allocation (what the model leaves out
    when a source reports only the pool)."""
    both = memory[(memory["memory_statistic"] == "allocated") & memory["measured_memory_reserved_gib"].notna()]
    if both.empty:
        return {"runs": 0}
    versus_reserved = both["expected_memory_gib"] / both["measured_memory_reserved_gib"]
    mean_reserved, worst_reserved = _errors(versus_reserved)
    mean_allocated, worst_allocated = _errors(both["memory_ratio"])
    return {"runs": int(len(both)), "publications": int(both["publication"].nunique()),
            "mean_error_vs_allocated": mean_allocated, "max_error_vs_allocated": worst_allocated,
            "mean_error_vs_reserved": mean_reserved, "max_error_vs_reserved": worst_reserved,
            "below_reserved": int((versus_reserved <= 1).sum()),
            "measured_reserved_over_allocated": float((both["measured_memory_reserved_gib"]
                                                       / both["measured_memory_gib"]).mean())}


#: The paper's three methods: each is listed in :func:`summary`, with or without runs.
THREE_METHODS = ("baseline", "partitioned", "improved")
#: What a method without measured runs is missing (said in the JSON as in the measured-runs chapter).
MISSING = {"improved": "no publication measured the paper's improved method; its closest measured relative, "
                       "Breadth-First Pipeline Parallelism (Lamy-Poirier 2022, arXiv:2211.05953), publishes its "
                       "configurations (degrees, loops per device, micro-batch and batch sizes, schedule, sharding) "
                       "in an experiments section and appendix this package could not read: each measured point "
                       "would be a run file with method: improved, schedule: breadth-first and its n_v"}


def summary(frame: pd.DataFrame, runs: Sequence[Run] | None = None) -> dict:
    """The headline numbers of the dense bf16 runs: runs and sources per method, the calibrated errors (leave one
    publication out, fitted on all, within publication), memory errors, and the ideal bound under each network
    reading; ``moe`` and ``fp8``: :func:`extension_errors` of the runs with experts and of the FP8 runs."""
    whole = frame
    frame = dense_rows(frame)
    timed = frame[frame["uses"].str.contains("time")]
    memory = frame[frame["measured_memory_gib"].notna()]
    lopo_mean, lopo_max = _errors(timed["lopo_ratio"])
    fit_mean, fit_max = _errors(timed["expected_ratio"])
    memory_mean, memory_max = _errors(memory["memory_ratio"])
    by_statistic = {}
    for statistic, rows_of in memory.groupby("memory_statistic", sort=True):
        mean, worst = _errors(rows_of["memory_ratio"])
        by_statistic[statistic] = {"runs": int(len(rows_of)), "publications": int(rows_of["publication"].nunique()),
                                   "mean_error": mean, "max_error": worst,
                                   "mean_signed": float((rows_of["memory_ratio"] - 1).mean()),
                                   "below_measured": int((rows_of["memory_ratio"] <= 1).sum())}
    methods = {m: {"runs": int((frame["method"] == m).sum()),
                   "publications": int(frame.loc[frame["method"] == m, "publication"].nunique()),
                   "looped_runs": int(((frame["method"] == m) & (frame["n_v"] > 1)).sum())}
               for m in dict.fromkeys([*THREE_METHODS, *sorted(set(frame["method"]))])}
    for m, counts in methods.items():
        if not counts["runs"] and m in MISSING:
            counts["missing"] = MISSING[m]
    out = {
        "runs": int(len(frame)), "publications": int(frame["publication"].nunique()), "methods": methods,
        "time_runs": int(len(timed)), "time_publications": int(timed["publication"].nunique()),
        "memory_runs": int(len(memory)),
        "lopo_mean_error": lopo_mean, "lopo_max_error": lopo_max,
        "fitted_mean_error": fit_mean, "fitted_max_error": fit_max,
        "memory_mean_error": memory_mean, "memory_max_error": memory_max,
        "memory_publications": int(memory["publication"].nunique()), "memory_predicts": MEMORY_PREDICTS,
        "memory_by_statistic": by_statistic, "memory_rule": MEMORY_RULE,
        "memory_reserved_beside_allocated": _reserved_beside_allocated(memory),
        # the pool/allocation ratio each source's reserved and device readings are compared with (its own left out)
        "memory_pool_ratio_by_publication": {publication: float(ratio) for publication, ratio in
                                             memory.groupby("publication", sort=False)["memory_pool_ratio"].first().items()}
        if "memory_pool_ratio" in memory else {},
        "calculon_error": CALCULON_ERROR,
        "ideal_upper_bound": {"per-gpu": int(frame["upper_bound"].sum()),
                              **{n: int(frame[f"upper_bound_{n}"].sum()) for n in DP_NETWORKS[1:]},
                              "every_reading": int(frame["upper_bound_every_reading"].sum()),
                              "of": int(len(frame))},
    }
    if runs is not None:
        out["within_publication_error"] = cached("validation-within", tuple(run for run in runs if not run.extended),
                                                 lambda: _within_publication(frame, runs))
    out["errors_over"] = ("the keys above: the dense bf16 runs (the runs the calibration is fitted on); moe, fp8: "
                          "the runs with experts and the FP8 runs, always out of sample")
    out["all_runs"] = int(len(whole))
    out.update(extension_errors(whole))
    return out


#: The groups of runs the sparse extension reports apart: name -> (which rows, what they are).
EXTENSIONS = {"moe": ("moe", "runs whose model has routed experts (either precision)"),
              "fp8": ("precision", "runs computing in FP8 (dense or with experts)")}


def _group(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    if name == "moe":
        return frame[frame["moe"].astype(bool)] if "moe" in frame.columns else frame.iloc[:0]
    return frame[frame["precision"] == "fp8"] if "precision" in frame.columns else frame.iloc[:0]


def extension_errors(frame: pd.DataFrame) -> dict:
    """``{"moe": ..., "fp8": ...}``: for the runs with experts and for the FP8 runs apart, their count, sources,
    the calibrated model's leave-one-publication-out error (mean, worst, signed mean: each run predicted with the
    calibration fitted on the dense bf16 runs of the other publications), the ideal bound, the measured-memory
    error, and the same per publication."""
    out = {}
    for name, (_, what) in EXTENSIONS.items():
        rows = _group(frame, name)
        timed = rows[rows["uses"].str.contains("time")]
        memory = rows[rows["measured_memory_gib"].notna()]
        mean, worst = _errors(timed["lopo_ratio"])
        memory_mean, memory_worst = _errors(memory["memory_ratio"])
        publications = []
        for publication, rows_of in timed.groupby("publication", sort=False):
            p_mean, p_worst = _errors(rows_of["lopo_ratio"])
            publications.append({"publication": publication, "runs": int(len(rows_of)), "lopo_mean_error": p_mean,
                                 "lopo_max_error": p_worst,
                                 "lopo_mean_signed": float((rows_of["lopo_ratio"] - 1).mean())})
        out[name] = {
            "what": what, "runs": int(len(rows)), "time_runs": int(len(timed)),
            "publications": int(rows["publication"].nunique()), "sources": sorted(set(rows["publication"])),
            "dense_runs": int((~rows["moe"].astype(bool)).sum()) if len(rows) else 0,
            "lopo_mean_error": mean, "lopo_max_error": worst,
            "lopo_mean_signed": float((timed["lopo_ratio"] - 1).mean()) if len(timed) else math.nan,
            "memory_runs": int(len(memory)), "memory_mean_error": memory_mean, "memory_max_error": memory_worst,
            "ideal_upper_bound": int(rows["upper_bound"].sum()) if len(rows) else 0,
            "by_publication": publications,
            "fitted_on": "the dense bf16 runs of the other publications (leave one publication out)",
            "model": "calibrated",
        }
    return out
