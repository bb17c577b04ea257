"""The designs of a sweep: each grid's product, numbered, built one chunk at a time, and each design's
:class:`~lgacc.model.hardware.Hardware`.

A design is ``(grid, values)``: the grid it comes from (the position of its mapping under ``vary``) and the
value of each key that grid varies.  Designs are numbered grid by grid, the last key varying fastest, so
that design ``i`` is computed from ``i`` alone (:func:`design_at`): a chunk never needs the designs
before it, and a sweep of millions of designs holds one chunk at a time.

``split: k`` cuts one GPU into ``k`` smaller ones at constant totals: peak flop/s, memory and HBM
bandwidth are divided by ``k`` and the NVLink domain holds ``k`` times more GPUs (the same silicon).  The
per-GPU links (NVLink, PCIe, InfiniBand, CPU-GPU, Ethernet, the storage drives) are divided by ``k`` too
under ``split_links: divided`` (the default: every total constant, every arithmetic-intensity threshold
unchanged) and kept per GPU under ``split_links: kept`` (each small GPU has the big one's links).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterator

from lgacc.model.hardware import GB, GIB, Hardware

from .sweep import VARIABLES, Sweep

__all__ = ["Design", "design_count", "design_at", "designs", "hardware_of", "DESIGN_COLUMNS", "design_columns"]

#: Fields divided by ``k`` whatever ``split_links`` says (the totals of compute, memory and HBM).
_SPLIT_ALWAYS = ("peak_flop_per_s", "memory_bytes", "gpu_memory_bandwidth_bytes_per_s")
#: Per-GPU links, divided by ``k`` under ``split_links: divided``.
_SPLIT_LINKS = ("nvlink_bandwidth_bytes_per_s", "pcie_bandwidth_bytes_per_s", "infiniband_bandwidth_bytes_per_s",
                "cpu_gpu_bandwidth_bytes_per_s", "ethernet_bandwidth_bytes_per_s", "nvme_bandwidth_bytes_per_s",
                "hdd_bandwidth_bytes_per_s")
#: The effective hardware of a design as output columns: (column, field, divisor to the column's unit).
DESIGN_COLUMNS = (
    ("peak_tflop_per_s", "peak_flop_per_s", 1e12),
    ("memory_gib", "memory_bytes", float(GIB)),
    ("hbm_gb_per_s", "gpu_memory_bandwidth_bytes_per_s", float(GB)),
    ("gpus_per_node", "gpus_per_node", 1),
    ("nvlink_gb_per_s", "nvlink_bandwidth_bytes_per_s", float(GB)),
    ("infiniband_gb_per_s", "infiniband_bandwidth_bytes_per_s", float(GB)),
    ("ethernet_gb_per_s", "ethernet_bandwidth_bytes_per_s", float(GB)),
)


@dataclass(frozen=True)
class Design:
    """One design: its number in the sweep, its grid and the values that grid gives (``(key, value)`` pairs)."""

    index: int
    grid: int
    values: tuple[tuple[str, Any], ...]

    @property
    def label(self) -> str:
        """The varied values in words (``split=2 gpus_per_node=16``; ``base`` where nothing varies)."""
        return " ".join(f"{k}={v:g}" if isinstance(v, (int, float)) else f"{k}={v}" for k, v in self.values) or "base"


def _grid_sizes(sweep: Sweep) -> list[int]:
    return [math.prod(len(values) for _, values in grid) for grid in sweep.grids]


def design_count(sweep: Sweep) -> int:
    """How many designs the sweep has (the sum of its grids' products)."""
    return sum(_grid_sizes(sweep))


def design_at(sweep: Sweep, index: int) -> Design:
    """Design number ``index`` (mixed radix within its grid, the last key fastest)."""
    if not 0 <= index < design_count(sweep):
        raise IndexError(index)
    grid = 0
    for size in _grid_sizes(sweep):
        if index < size:
            break
        index -= size
        grid += 1
    number, values = index, []
    for key, choices in reversed(sweep.grids[grid]):
        number, digit = divmod(number, len(choices))
        values.append((key, choices[digit]))
    return Design(index + sum(_grid_sizes(sweep)[:grid]), grid, tuple(reversed(values)))


def designs(sweep: Sweep, start: int = 0, stop: int | None = None) -> Iterator[Design]:
    """The designs ``start`` to ``stop`` (exclusive), one at a time."""
    stop = design_count(sweep) if stop is None else min(stop, design_count(sweep))
    for index in range(start, stop):
        yield design_at(sweep, index)


def hardware_of(base: Hardware, design: Design) -> Hardware:
    """The base spec with the design's values set, then split (see the module's docstring)."""
    values = dict(design.values)
    changes: dict[str, Any] = {}
    for key, value in values.items():
        if key in VARIABLES:
            field, factor = VARIABLES[key]
            changes[field] = int(value) if field == "gpus_per_node" else float(value) * factor
    k = int(values.get("split", 1))
    if k > 1:
        links = values.get("split_links", "divided")
        divided = _SPLIT_ALWAYS + (_SPLIT_LINKS if links == "divided" else ())
        for field in divided:
            changes[field] = changes.get(field, getattr(base, field)) / k
        changes["gpus_per_node"] = int(changes.get("gpus_per_node", base.gpus_per_node)) * k
    return base.replace(name=f"{base.name} [{design.label}]", **changes)


def design_columns(hardware: Hardware) -> dict[str, float]:
    """A design's effective hardware as the output's columns (``DESIGN_COLUMNS``)."""
    return {column: int(getattr(hardware, field)) if field == "gpus_per_node" else getattr(hardware, field) / unit
            for column, field, unit in DESIGN_COLUMNS}
