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
``eta`` serves InfiniBand, for want of a published inter-node table of the same kind (a known limit).
A GPU whose NVLink runs at the bandwidth of another table's link (the same NVLink generation and link count:
H100 and H200 SXM, 450 GB/s per direction, NVLink 4 with NVSwitch) reads its NVLink collectives from that
table instead (:func:`nvlink_constants`: ``eta_nvl`` and ``alpha_nvl``); a GPU without one (B200's NVLink 5,
H800's reduced NVLink) keeps the reference.  The tables are all-reduce benchmarks (NVLS, the switch's reduction,
where the hardware has it); the model applies their share of the link to its reduce-scatters, all-gathers and
transfers as well, as it does on A100.

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

__all__ = ["NCCL_FILE", "REFERENCE_TABLE", "LinkFit", "fit_table", "link_fits", "link_constants", "nvlink_constants",
           "main"]

NCCL_FILE = DATA / "calibrated" / "nccl_allreduce_busbw.yaml"
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


def link_constants() -> dict[str, float]:
    """The calibration's link constants from the reference table: ``eta`` and ``nvlink_latency_s``."""
    fit = link_fits()[REFERENCE_TABLE]
    return {"eta": round(fit.efficiency, 4), "nvlink_latency_s": round(fit.alpha_s, 7)}


@cache
def nvlink_constants(link_bytes_per_s: float) -> tuple[str, dict[str, float]] | None:
    """(table, ``{"eta_nvl", "alpha_nvl"}``) of the first table whose NVLink carries ``link_bytes_per_s`` per
    direction (the same generation and link count), or None (the model keeps the reference's constants)."""
    for fit in link_fits().values():
        if abs(fit.link_bytes_per_s - link_bytes_per_s) <= 1e-6 * link_bytes_per_s:
            return fit.name, {"eta_nvl": round(fit.efficiency, 4), "alpha_nvl": round(fit.alpha_s, 7)}
    return None


def main(argv: list[str] | None = None) -> int:
    for fit in link_fits().values():
        print(f"{fit.name}: alpha = {fit.alpha_s * 1e6:.1f} us, bus bandwidth = {fit.busbw / 1e9:.1f} GB/s "
              f"(eta = {fit.efficiency:.3f} of the link), worst relative error {fit.worst_error:.0%}  [{fit.source}]")
    print(f"the calibrated model uses {REFERENCE_TABLE}: {link_constants()}; a GPU whose NVLink runs at another "
          "table's link bandwidth reads that table's eta_nvl and alpha_nvl for its NVLink collectives")
    return 0


if __name__ == "__main__":
    sys.exit(main())
