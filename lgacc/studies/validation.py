"""The resource model against published training runs (``data/validation/*.yaml``).

Each file holds the runs of one publication exactly as printed (model, parallel
degrees, batch, sequence, recomputation, reported throughput), with ``"not
stated"`` where the source is silent.  For each run:

* **measured step time**: the printed iteration time when there is one, else the
  flops of one step by the source's own formula over the reported flop/s,
  ``flops / (TFLOP/s per GPU x n_gpu)``.  Formulas: ``megatron`` is Narayanan et
  al.'s ``96 B s l h^2 (1 + s/(6h) + V/(16 l h))`` (recomputation included);
  ``model-exact`` is the package's exact count of the forward and backward passes
  (:meth:`lgacc.model.transformer.Transformer.forward_flops_per_token`, output layer
  included), for a source that does not state its formula.
* **predicted step time**: the work the run did, at peak flop/s over the
  evaluator's efficiency (exact forms) for the same configuration (method ``baseline``, the
  run's ``n_b, n_l, n_a``, micro-batches of ``b_mu``), under the ``paper`` and
  the ``physical`` overlap conventions.  The work is the exact count of forward
  and backward passes, plus one forward pass when the run recomputes activations
  (``recomputation: full``); when the source does not say, no recomputation (the
  least work, so that the prediction stays a lower bound on the time).  The
  kernels run at peak (``kernel_efficiency`` 1, the paper's convention).
* **ratio** measured / predicted: at least 1 when the model is an upper bound on
  speed.  The implied kernel efficiency is the physical prediction over the
  measured time.

Modelling choices stated on the book page: a micro-batch size the source does not
state is 1 (the largest ``n_mu``, the standard bubble ``(n_l - 1) / n_mu`` at its
smallest); an interleaved pipeline schedule is modelled as the standard one;
sequence parallelism as plain tensor parallelism (same traffic); a pipeline stage
may hold a fractional number of layers (Llama 3's 126 layers on 16 stages); the
runs' clusters have 8-GPU nodes (``gpus_per_node`` of the file).
"""

from __future__ import annotations

import dataclasses
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from lgacc.errors import UserInputError, positive_int
from lgacc.model.assumptions import Assumptions
from lgacc.model.config import TrainingConfig
from lgacc.model.evaluator import evaluate
from lgacc.model.hardware import GB, Hardware, load_hardware
from lgacc.model.transformer import Transformer, load_model
from lgacc.paths import DATA
from lgacc.yamlfile import load_yaml_mapping

__all__ = [
    "DATA_DIR",
    "CONVENTIONS",
    "Run",
    "load_runs",
    "source_step_flops",
    "measured_step_time",
    "work_flops",
    "predicted_step_time",
    "comparison",
    "fit_kernel_efficiency",
    "leave_one_publication_out",
    "calibration_summary",
    "plot_comparison",
]

DATA_DIR = DATA / "validation"
CONVENTIONS = ("paper", "physical")
NOT_STATED = "not stated"
FLOP_FORMULAS = ("megatron", "model-exact")
#: Passes of the matrix products per training step: forward, backward (x2), and the recomputed forward.
PASSES = {"full": 4, "none": 3, NOT_STATED: 3}
#: The evaluator's exact derived counts (not the paper's leading-order printed forms) for the overheads.
PREDICTION_FORM = "exact"
#: Assumptions of the predictions: fractional pipeline stages allowed (see the module docstring).
VALIDATION_ASSUMPTIONS = dict(divisible_layers=False)


@dataclass(frozen=True)
class Run:
    """One published training run, as printed, with the values the model needs."""

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

    @property
    def n_b(self) -> int:
        return self.n_gpu // (self.n_a * self.n_l)

    @property
    def n_mu(self) -> int:
        return self.b // (self.n_b * self.b_mu)

    def config(self) -> TrainingConfig:
        return TrainingConfig(method="baseline", n_b=self.n_b, n_l=self.n_l, n_a=self.n_a, n_mu=self.n_mu, b_mu=self.b_mu)


def _read(path: Path) -> dict:
    """The one place a run file is parsed: the hardware specs' safe reader (:mod:`lgacc.yamlfile`:
    UTF-8, at most 1 MB, no aliases or duplicate keys, YAML 1.2 numbers, bounded nesting)."""
    return load_yaml_mapping(path, "run file")


def _count(origin: str, field: str, value: Any) -> int:
    return positive_int(origin, field, value)


def _positive_number(origin: str, field: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        raise UserInputError(f"{origin}: {field}={value!r} must be a positive number")
    return float(value)


def _text(origin: str, field: str, value: Any) -> str:
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise UserInputError(f"{origin}: {field}={value!r} must be a text")
    return str(value)


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


def _run(spec: Mapping[str, Any], top: Mapping[str, Any], hardware: Hardware, origin: str) -> Run:
    if not isinstance(spec, dict):
        raise UserInputError(f"{origin}: each run must be a mapping")
    where = f"{origin} run {spec.get('id', '?')!r}"
    for key in ("id", "citation", "model", "n_gpu", "tensor_parallel", "pipeline_parallel", "batch_size",
                "sequence_length", "reported"):
        if key not in spec:
            raise UserInputError(f"{where}: missing key {key!r}")
    n_gpu, n_a, n_l, b, d_s = (_count(where, k, spec[k]) for k in
                                ("n_gpu", "tensor_parallel", "pipeline_parallel", "batch_size", "sequence_length"))
    if n_gpu % (n_a * n_l):
        raise UserInputError(f"{where}: n_gpu={n_gpu} is not a multiple of tensor x pipeline = {n_a * n_l}")
    n_b = n_gpu // (n_a * n_l)
    stated = spec.get("micro_batch_size", NOT_STATED) != NOT_STATED
    b_mu = _count(where, "micro_batch_size", spec["micro_batch_size"]) if stated else 1
    if b % (n_b * b_mu):
        raise UserInputError(f"{where}: batch_size={b} is not a multiple of n_b b_mu = {n_b * b_mu}")
    recomputation = spec.get("recomputation", NOT_STATED)
    if recomputation not in PASSES:
        raise UserInputError(f"{where}: recomputation={recomputation!r} must be one of {', '.join(PASSES)}")
    reported = spec["reported"]
    if not isinstance(reported, dict) or not ({"iteration_time_s", "tflops_per_gpu"} & set(reported)):
        raise UserInputError(f"{where}: reported must give iteration_time_s or tflops_per_gpu")
    for key in ("iteration_time_s", "tflops_per_gpu"):
        if key in reported:
            _positive_number(where, f"reported.{key}", reported[key])
    _check_percent_of_peak(where, reported, hardware)
    for key in ("id", "citation"):
        _text(where, key, spec[key])
    if not isinstance(spec["model"], str):
        raise UserInputError(f"{where}: model={spec['model']!r} must be a model name or a path to a model file")
    model = load_model(spec["model"])
    if model.d_s != d_s:
        model = dataclasses.replace(model, d_s=d_s, n_I=None)
    return Run(
        id=str(spec["id"]),
        publication=str(top["publication"]),
        citation=str(spec["citation"]),
        model=model,
        hardware=hardware,
        n_gpu=n_gpu,
        n_a=n_a,
        n_l=n_l,
        b=b,
        b_mu=b_mu,
        micro_batch_stated=stated,
        recomputation=recomputation,
        interleaved_schedule=str(spec.get("interleaved_schedule", NOT_STATED)),
        flop_formula=str(top["flop_formula"]),
        reported=dict(reported),
    )


def _cluster_hardware(top: Mapping[str, Any], origin: str, hardware_override: Hardware | str | None) -> Hardware:
    hardware = load_hardware(hardware_override if hardware_override is not None else top["hardware"])
    cluster = top.get("cluster") or {}
    if not isinstance(cluster, dict):
        raise UserInputError(f"{origin}: cluster={cluster!r} must be a mapping (gpus_per_node, infiniband_gb_per_s)")
    changes: dict[str, Any] = {}
    if "gpus_per_node" in cluster:
        changes["gpus_per_node"] = _count(origin, "cluster.gpus_per_node", cluster["gpus_per_node"])
    if "infiniband_gb_per_s" in cluster and hardware_override is None:
        value = cluster["infiniband_gb_per_s"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise UserInputError(f"{origin}: cluster.infiniband_gb_per_s={value!r} must be a positive number")
        changes["infiniband_bandwidth_bytes_per_s"] = float(value) * GB
    return hardware.replace(**changes) if changes else hardware


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
        cluster_hw = _cluster_hardware(top, origin, hardware)
        runs.extend(_run(spec, top, cluster_hw, origin) for spec in top["runs"])
    ids = [run.id for run in runs]
    if len(set(ids)) != len(ids):
        raise UserInputError(f"run files: duplicate run id {next(i for i in ids if ids.count(i) > 1)!r}")
    return tuple(runs)


def megatron_step_flops(b: int, d_s: int, d_l: int, d_m: int, d_v: int) -> float:
    """Narayanan et al. (2021), section 5.1: ``96 B s l h^2 (1 + s/(6h) + V/(16 l h))``."""
    return 96 * b * d_s * d_l * d_m**2 * (1 + d_s / (6 * d_m) + d_v / (16 * d_l * d_m))


def source_step_flops(run: Run) -> float:
    """Flops of one step by the source's own formula."""
    m = run.model
    if run.flop_formula == "megatron":
        return megatron_step_flops(run.b, m.d_s, m.d_l, m.d_m, m.d_v)
    return 3 * run.b * m.d_s * m.forward_flops_per_token()


def measured_step_time(run: Run) -> float:
    """Seconds per step: printed, or the source's flops over the reported TFLOP/s per GPU."""
    if "iteration_time_s" in run.reported:
        return float(run.reported["iteration_time_s"])
    return source_step_flops(run) / (float(run.reported["tflops_per_gpu"]) * 1e12 * run.n_gpu)


def work_flops(run: Run) -> float:
    """Flops the run computed in one step: exact forward count x passes (4 with recomputation, else 3)."""
    return PASSES[run.recomputation] * run.b * run.model.d_s * run.model.forward_flops_per_token()


def _efficiency(run: Run, convention: str) -> float:
    assumptions = Assumptions(convention=convention, **VALIDATION_ASSUMPTIONS)
    return evaluate(run.model, run.hardware, run.config(), assumptions=assumptions, form=PREDICTION_FORM).efficiency


def predicted_step_time(run: Run, convention: str = "physical") -> float:
    """The model's step time: the run's work at peak flop/s over the evaluator's efficiency."""
    if convention not in CONVENTIONS:
        raise UserInputError(f"convention={convention!r} must be one of {', '.join(CONVENTIONS)}")
    return work_flops(run) / (run.n_gpu * run.hardware.peak_flop_per_s * _efficiency(run, convention))


def _computable(run: Run, what: str, seconds: float) -> None:
    """A step time the ratios can use: a positive, finite, normal float (a subnormal one overflows its inverse)."""
    if not (isinstance(seconds, (int, float)) and sys.float_info.min <= seconds < math.inf):
        raise UserInputError(
            f"run {run.id!r}: {what} = {seconds!r} s is not a positive finite number of seconds; "
            f"check its reported values {dict(run.reported)} and sizes (b={run.b}, d_s={run.model.d_s})"
        )


def comparison(runs: tuple[Run, ...]) -> pd.DataFrame:
    """One row per run: configuration, measured and predicted step times, ratios, implied kernel efficiency."""
    rows = []
    for run in runs:
        measured = measured_step_time(run)
        predicted = {c: predicted_step_time(run, c) for c in CONVENTIONS}
        _computable(run, "measured step time", measured)
        for convention, value in predicted.items():
            _computable(run, f"predicted step time ({convention} convention)", value)
        rows.append({
            "id": run.id,
            "publication": run.publication,
            "citation": run.citation,
            "model": run.model.name,
            "hardware": run.hardware.name,
            "n_gpu": run.n_gpu,
            "n_b": run.n_b,
            "n_l": run.n_l,
            "n_a": run.n_a,
            "n_mu": run.n_mu,
            "b_mu": run.b_mu,
            "b": run.b,
            "d_s": run.model.d_s,
            "recomputation": run.recomputation,
            "measured_step_s": measured,
            "predicted_paper_s": predicted["paper"],
            "predicted_physical_s": predicted["physical"],
            "ratio_paper": measured / predicted["paper"],
            "ratio_physical": measured / predicted["physical"],
            "efficiency_physical": _efficiency(run, "physical"),
            "implied_kernel_efficiency": predicted["physical"] / measured,
            "upper_bound": bool(measured >= predicted["physical"]),
        })
    return pd.DataFrame(rows)


def fit_kernel_efficiency(implied: np.ndarray | pd.Series) -> float:
    """The one factor k with ``measured ≈ predicted / k``: least squares in log, the geometric mean."""
    values = np.asarray(implied, dtype=float)
    if values.size == 0 or not np.all(values > 0):
        raise UserInputError("kernel efficiency: needs at least one run with a positive implied efficiency")
    return float(math.exp(np.mean(np.log(values))))


def leave_one_publication_out(frame: pd.DataFrame) -> pd.DataFrame:
    """For each publication: k fitted on the others, and the error of ``predicted_physical / k`` on its runs.

    Columns: ``publication, runs, k, mean_abs_error, max_abs_error`` (relative to the measured time).
    """
    rows = []
    for publication, held_out in frame.groupby("publication", sort=False):
        others = frame[frame["publication"] != publication]
        if others.empty:  # a folder of one publication: nothing to fit on, no held-out error (NaN, JSON null)
            rows.append({"publication": publication, "runs": len(held_out), "k": math.nan,
                         "mean_abs_error": math.nan, "max_abs_error": math.nan})
            continue
        k = fit_kernel_efficiency(others["implied_kernel_efficiency"])
        errors = np.abs(held_out["predicted_physical_s"] / k / held_out["measured_step_s"] - 1)
        rows.append({"publication": publication, "runs": len(held_out), "k": k,
                     "mean_abs_error": float(errors.mean()), "max_abs_error": float(errors.max())})
    return pd.DataFrame(rows)


def calibration_summary(frame: pd.DataFrame) -> dict[str, float]:
    """k on all runs, and the leave-one-publication-out mean absolute error over every run."""
    lopo = leave_one_publication_out(frame)
    total = float((lopo["mean_abs_error"] * lopo["runs"]).sum(min_count=1) / lopo["runs"].sum())  # NaN: one publication
    return {"kernel_efficiency": fit_kernel_efficiency(frame["implied_kernel_efficiency"]),
            "lopo_mean_abs_error": total, "runs": int(len(frame)), "publications": int(lopo.shape[0])}


def plot_comparison(frame: pd.DataFrame, convention: str = "physical"):
    """Predicted against measured step time, log axes, one marker per publication, with the line y = x."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6.4, 5.2))
    markers = "osD^vP*X"
    for i, (publication, rows) in enumerate(frame.groupby("publication", sort=True)):
        axis.scatter(rows["measured_step_s"], rows[f"predicted_{convention}_s"], marker=markers[i % len(markers)],
                     s=48, label=publication)
    values = pd.concat([frame["measured_step_s"], frame[f"predicted_{convention}_s"]])
    low, high = values.min() / 1.5, values.max() * 1.5
    axis.plot([low, high], [low, high], color="grey", linewidth=1, label="predicted = measured")
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_xlim(low, high)
    axis.set_ylim(low, high)
    axis.set_xlabel("measured step time (s)")
    axis.set_ylabel(f"predicted step time, {convention} convention (s)")
    axis.legend(fontsize=8, loc="upper left")
    axis.grid(True, which="major", alpha=0.3)
    figure.tight_layout()
    plt.close(figure)
    return figure
