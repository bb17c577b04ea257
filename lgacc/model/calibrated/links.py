"""Latency and bandwidth of a collective (alpha-beta) fitted to a published NCCL benchmark table.

``data/calibrated/nccl_allreduce_busbw.yaml`` holds vendor tables of NCCL's all-reduce bus bandwidth by
message size on one 8-GPU NVLink node (the source of each named in the file).  nccl-tests reports for a
buffer of ``S`` bytes over ``n`` ranks ``busbw = algbw 2 (n - 1) / n`` with ``algbw = S / t``
(``NVIDIA/nccl-tests`` ``doc/PERFORMANCE.md``), so the time is ``t = 2 (n - 1)/n S / busbw``; the
calibrated model's all-reduce is ``t = alpha + 2 (n - 1)/n S / (eta beta)``
(:mod:`lgacc.model.calibrated.collectives`).  :func:`fit_table` fits ``alpha`` and the asymptotic bus
bandwidth ``B = eta beta`` by least squares on the relative error of ``t`` over every size; ``eta`` is
``B`` over the link's bandwidth per direction.

The calibrated model reads the NVLink 3 table (A100, the GPU of most measured runs): its ``eta`` and its
``alpha`` replace the fitted bus efficiency and Calculon's 10 us (:func:`link_constants`); the same
``eta`` serves InfiniBand, for want of a published inter-node table of the same kind (a known limit: NCCL's
developers state that a ring reaches about 0.96 of an InfiniBand card, ``data/calibrated/nccl_infiniband_statements.yaml``;
the measured-runs page computes what that reading would move, :mod:`lgacc.studies.validation.what_if`).
A GPU whose NVLink runs at the bandwidth of another table's link (the same NVLink generation and link count:
H100 and H200 SXM, 450 GB/s per direction, NVLink 4 with NVSwitch) reads its NVLink collectives from that
table instead (:func:`nvlink_constants`: ``eta_nvl`` and ``alpha_nvl``); a GPU without one (H800's reduced
NVLink, GB200 NVL72's rack-wide NVLink domain) keeps the reference.  The tables are all-reduce benchmarks (NVLS, the
switch's reduction, where the hardware has it); the model applies their share of the link to its reduce-scatters,
all-gathers and transfers as well, as it does on A100.

``data/calibrated/nccl_collective_fits.yaml`` holds fits measured on a GPU's own node where a peer publishes them
but not the table (:func:`measured_fits`): SimuMax's B200 release node (NVLink 5, 8 GPUs), whose all-gather and
reduce-scatter take ``fixed + step (n - 1) + (n - 1)/n S / B``.  A GPU with that link bandwidth and that node size
reads them first: ``eta_nvl = B / link``, ``alpha_nvl = fixed`` and ``delta_nvl = step`` (the latency each rank
beyond the first adds, :mod:`.collectives`), the mean of the two collectives' fits.  The vendor tables are of one
group size (8 ranks), so they give no ``delta_nvl`` (0): their ``alpha`` is that of 8 ranks.

``python -m lgacc.model.calibrated.links`` prints each table's fit.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from lgacc.errors import UserInputError
from lgacc.paths import DATA
from lgacc.yamlfile import load_yaml_mapping

__all__ = ["NCCL_FILE", "FITS_FILE", "REFERENCE_TABLE", "LinkFit", "MeasuredFit", "fit_table", "link_fits",
           "measured_fits", "link_constants", "nvlink_constants", "all_to_all_constants", "main"]

NCCL_FILE = DATA / "calibrated" / "nccl_allreduce_busbw.yaml"
FITS_FILE = DATA / "calibrated" / "nccl_collective_fits.yaml"
#: The table whose fit the calibrated model uses.
REFERENCE_TABLE = "a100-sxm-80gb-nvlink3"
_UNITS = {"K": 2**10, "M": 2**20, "G": 2**30}


@dataclass(frozen=True)
class LinkFit:
    """One table's alpha-beta fit: ``alpha_s`` (s), ``busbw`` (bytes/s, asymptotic), ``efficiency`` (busbw over the
    link's bandwidth per direction), ``worst_error`` (largest relative error of the fitted time over the table)."""

    name: str
    source: str
    alpha_s: float
    busbw: float
    efficiency: float
    worst_error: float
    link_bytes_per_s: float = 0.0


@dataclass(frozen=True)
class MeasuredFit:
    """A published fit measured on one node: ``efficiency`` (bus bandwidth over ``link_bytes_per_s``, the GPUs' NVLink
    per direction), ``alpha_s`` (fixed latency), ``step_s`` (latency per rank beyond the first), for GPUs whose NVLink
    carries ``link_bytes_per_s`` on a node of ``gpus_per_node``."""

    name: str
    source: str
    link_bytes_per_s: float
    gpus_per_node: int
    efficiency: float
    alpha_s: float
    step_s: float
    #: the all-to-all's own fit, where the file names one: (efficiency, step_s, {ranks: fixed latency_s}, default)
    all_to_all: tuple[float, float, tuple[tuple[int, float], ...], float] | None = None


def _size(text) -> int:
    text = str(text).strip()
    if text and text[-1] in _UNITS and text[:-1].isdigit():
        return int(text[:-1]) * _UNITS[text[-1]]
    if text.isdigit():
        return int(text)
    raise UserInputError(f"{NCCL_FILE.name}: message size {text!r} must be a number of bytes or N[K|M|G]")


def fit_table(sizes: np.ndarray, busbw: np.ndarray, ranks: int) -> tuple[float, float, float]:
    """``(alpha_s, busbw_bytes_per_s, worst relative error)`` of ``t = alpha + 2 (n-1)/n S / B`` fitted to the
    times the table implies, least squares on the relative error."""
    factor = 2 * (ranks - 1) / ranks
    times = factor * sizes / busbw
    design = np.stack([np.ones_like(times), factor * sizes], axis=1) / times[:, None]
    (alpha, inverse), *_ = np.linalg.lstsq(design, np.ones_like(times), rcond=None)
    fitted = alpha + factor * sizes * inverse
    return float(alpha), float(1 / inverse), float(np.max(np.abs(fitted / times - 1)))


@cache
def link_fits(path: Path = NCCL_FILE) -> dict[str, LinkFit]:
    """Every table of ``path``, fitted."""
    data = load_yaml_mapping(path, "NCCL benchmark file")
    out = {}
    for table in data.get("tables", []):
        points = sorted((_size(k), float(v)) for k, v in table["busbw_gb_per_s"].items())
        sizes = np.array([p[0] for p in points], dtype=float)
        busbw = np.array([p[1] for p in points]) * 1e9
        alpha, bandwidth, worst = fit_table(sizes, busbw, int(table["ranks"]))
        out[table["name"]] = LinkFit(name=table["name"], source=str(table["source"]), alpha_s=alpha, busbw=bandwidth,
                                     efficiency=bandwidth / (float(table["link_gb_per_s"]) * 1e9), worst_error=worst,
                                     link_bytes_per_s=float(table["link_gb_per_s"]) * 1e9)
    return out


def _positive(value, what: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    if not number >= 0:
        raise UserInputError(f"{FITS_FILE.name}: {what} = {value!r} must be a number >= 0")
    return number


@cache
def measured_fits(path: Path = FITS_FILE) -> dict[str, MeasuredFit]:
    """Every fit of ``path``: the mean of the collectives its ``model_reads`` names, each ``t = fixed_latency_us +
    latency_us scale (n + offset) + scale (n + offset)/n S / (efficient_factor nominal_gib_per_s 2^30)`` with scale 1,
    offset -1 (the file's header)."""
    data = load_yaml_mapping(path, "NCCL fits file")
    try:
        return _read_fits(path, data)
    except (KeyError, TypeError, AttributeError, ValueError) as error:
        if isinstance(error, UserInputError):
            raise
        what = f"key {error.args[0]!r} is missing" if isinstance(error, KeyError) else f"an entry is malformed ({error})"
        raise UserInputError(f"{Path(path).name}: {what}; each fit needs name, source, link_gb_per_s, gpus_per_node, "
                             "nominal_gib_per_s, model_reads and ops with efficient_factor, fixed_latency_us, "
                             "latency_us, scale and offset") from None


def _read_fits(path: Path, data: dict) -> dict[str, MeasuredFit]:
    out = {}
    for fit in data.get("fits", []):
        ops = [fit["ops"][op] for op in fit["model_reads"]]
        if not ops or any(op.get("scale") != 1 or op.get("offset") != -1 for op in ops):
            raise UserInputError(f"{path.name}: {fit.get('name')}: model_reads must name collectives of scale 1, "
                                 "offset -1 (all-gather, reduce-scatter)")
        nominal = _positive(fit["nominal_gib_per_s"], "nominal_gib_per_s") * 2**30
        link = _positive(fit["link_gb_per_s"], "link_gb_per_s") * 1e9
        busbw = float(np.mean([_positive(op["efficient_factor"], "efficient_factor") for op in ops])) * nominal
        all_to_all = None
        if fit.get("all_to_all_reads"):
            op = fit["ops"][fit["all_to_all_reads"]]
            by_ranks = tuple(sorted((int(n), _positive(v, "fixed_latency_us_by_comm_num") * 1e-6)
                                    for n, v in (op.get("fixed_latency_us_by_comm_num") or {}).items()))
            all_to_all = (_positive(op["efficient_factor"], "efficient_factor") * nominal / link,
                          _positive(op["latency_us"], "latency_us") * 1e-6, by_ranks,
                          _positive(op.get("fixed_latency_us", 0.0), "fixed_latency_us") * 1e-6)
        out[fit["name"]] = MeasuredFit(
            name=fit["name"], source=" ".join(str(fit["source"]).split()), link_bytes_per_s=link,
            gpus_per_node=int(fit["gpus_per_node"]), efficiency=busbw / link,
            alpha_s=float(np.mean([_positive(op["fixed_latency_us"], "fixed_latency_us") for op in ops])) * 1e-6,
            step_s=float(np.mean([_positive(op["latency_us"], "latency_us") for op in ops])) * 1e-6,
            all_to_all=all_to_all)
    return out


def link_constants() -> dict[str, float]:
    """The calibration's link constants from the reference table: ``eta`` and ``nvlink_latency_s``."""
    fit = link_fits()[REFERENCE_TABLE]
    return {"eta": round(fit.efficiency, 4), "nvlink_latency_s": round(fit.alpha_s, 7)}


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-6 * b


@cache
def nvlink_constants(link_bytes_per_s: float, gpus_per_node: float | None = None
                     ) -> tuple[str, dict[str, float]] | None:
    """(name, ``{"eta_nvl", "alpha_nvl", "delta_nvl"}``) for a GPU whose NVLink carries ``link_bytes_per_s`` per
    direction on a node of ``gpus_per_node``: a fit measured on such a node (:func:`measured_fits`) first, else the
    first vendor table of the same link bandwidth (the same generation and link count; ``delta_nvl`` 0), else None
    (the model keeps the reference's constants)."""
    for fit in measured_fits().values():
        if _same(link_bytes_per_s, fit.link_bytes_per_s) and gpus_per_node == fit.gpus_per_node:
            return fit.name, {"eta_nvl": round(fit.efficiency, 4), "alpha_nvl": round(fit.alpha_s, 9),
                              "delta_nvl": round(fit.step_s, 9)}  # to the nanosecond: the file prints 0.1 ns
    for fit in link_fits().values():
        if _same(link_bytes_per_s, fit.link_bytes_per_s):
            return fit.name, {"eta_nvl": round(fit.efficiency, 4), "alpha_nvl": round(fit.alpha_s, 7),
                              "delta_nvl": 0.0}
    return None


def all_to_all_constants(link_bytes_per_s: float, gpus_per_node: float, ranks: int) -> tuple[float, float] | None:
    """(efficiency over the link, latency in s) of an all-to-all over ``ranks`` GPUs of one node, from a fit measured on
    such a node that has one (``fixed + step (ranks - 1)``, the fixed part of that group size where the file gives it
    by group size, else its scalar), or None (the caller keeps the collectives' NVLink constants)."""
    for fit in measured_fits().values():
        if fit.all_to_all and _same(link_bytes_per_s, fit.link_bytes_per_s) and gpus_per_node == fit.gpus_per_node:
            efficiency, step, by_ranks, default = fit.all_to_all
            return efficiency, dict(by_ranks).get(int(ranks), default) + step * (ranks - 1)
    return None


def main(argv: list[str] | None = None) -> int:
    for fit in link_fits().values():
        print(f"{fit.name}: alpha = {fit.alpha_s * 1e6:.1f} us, bus bandwidth = {fit.busbw / 1e9:.1f} GB/s "
              f"(eta = {fit.efficiency:.3f} of the link), worst relative error {fit.worst_error:.0%}  [{fit.source}]")
    for fit in measured_fits().values():
        print(f"{fit.name} (measured fit, {fit.gpus_per_node}-GPU node): alpha = {fit.alpha_s * 1e6:.1f} us + "
              f"{fit.step_s * 1e6:.2f} us per rank beyond the first, bus bandwidth = "
              f"{fit.efficiency * fit.link_bytes_per_s / 1e9:.1f} GB/s (eta = {fit.efficiency:.3f} of the link)  "
              f"[{fit.source}]")
    print(f"the calibrated model uses {REFERENCE_TABLE}: {link_constants()}; a GPU whose NVLink runs at another "
          "table's link bandwidth reads that table's eta_nvl and alpha_nvl for its NVLink collectives (a measured "
          "fit first where its node matches, with delta_nvl)")
    return 0


if __name__ == "__main__":  # a closed pipe or Ctrl-C: one line or none, never a traceback
    from lgacc.errors import run_quietly

    sys.exit(run_quietly("python -m lgacc.model.calibrated.links", "lgacc.model.calibrated.links"))
