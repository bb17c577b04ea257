"""``table:hardware_bandwidth``: bandwidths and arithmetic-intensity thresholds.

The bandwidths are the spec's own values, shown again: the comparison flags them
``echoed_input`` and only the thresholds (peak / bandwidth) count as reproduced
(:mod:`lgacc.paper.cells`).
"""

from __future__ import annotations

import pandas as pd

from lgacc.model.assumptions import DEFAULT_ASSUMPTIONS, Assumptions, apply_to_hardware, paper_gb_bytes
from lgacc.model.hardware import GIB, LINKS, Hardware

from ..artifacts import Artifact
from ..cells import echoed
from ..printed import compare_cell, paper_table

LABEL = "table:hardware_bandwidth"

#: Links the paper names by their per-direction line rate in Gb/s.
_RATED_LINKS = {"infiniband", "ethernet"}


def link_name(hardware: Hardware, key: str) -> str:
    """Row name: the spec's own name for the link if it gives one, else as the paper prints it.

    The paper names network links by their per-direction rate, which is derived
    here from the stored input + output bandwidth in the paper's GB (GiB): half
    of it, times 8 bits, e.g. 50 GB/s -> "InfiniBand (200 Gb/s)".
    """
    given = dict(hardware.link_names)
    if key in given:
        return given[key]
    link = next(link for link in LINKS if link.key == key)
    if key not in _RATED_LINKS:
        return link.name
    per_direction_gbit = hardware.bandwidth(key) / GIB / 2 * 8
    return f"{link.name} ({per_direction_gbit:g} Gb/s)"


def build(hardware: Hardware, assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> pd.DataFrame:
    """Bandwidth (paper GB/s, i.e. GiB/s) and threshold ``peak / bandwidth`` (flop/B) per link.

    Under ``assumptions.gb == "GB"`` the spec's numbers are read as decimal GB/s: the bandwidth
    column shows the same numbers and the thresholds move (:func:`lgacc.model.assumptions.apply_to_hardware`)."""
    read = apply_to_hardware(hardware, assumptions)
    unit = paper_gb_bytes(assumptions)
    rows = [
        {
            "key": link.key,
            "name": link_name(hardware, link.key),
            "bandwidth_gb_s": read.bandwidth(link.key) / unit,
            "threshold_flops_per_byte": read.threshold(link.key),
        }
        for link in LINKS
    ]
    return pd.DataFrame(rows)


def compare(reproduced: pd.DataFrame) -> pd.DataFrame:
    """The paper's printed rows beside the reproduced ones, one ``agrees`` flag per cell."""
    paper = paper_table(LABEL).set_index("key")
    rows = []
    for row in reproduced.itertuples(index=False):
        printed = paper.loc[row.key]
        out = {"name": row.name}
        for column in ("bandwidth_gb_s", "threshold_flops_per_byte"):
            out.update(compare_cell(column, printed[column], getattr(row, column)))
        out.update(echoed("bandwidth_gb_s"))  # the spec's own number
        rows.append(out)
    return pd.DataFrame(rows)


ARTIFACT = Artifact(
    label=LABEL,
    title="Bandwidth and arithmetic-intensity thresholds",
    kind="table",
    build=build,
    compare=compare,
    page="hardware_bandwidth",
    description="Bandwidth of each link and the arithmetic intensity above which an overlapped transfer is compute-bound.",
)
