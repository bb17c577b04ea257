"""The hardware a page was computed for, stated on the page.
"""

from __future__ import annotations

import pandas as pd

from lgacc.model.hardware import GIB, Hardware

from .display import show_markdown

__all__ = ["hardware_summary", "show_hardware"]


def hardware_summary(hardware: Hardware) -> pd.DataFrame:
    """The spec a page was computed for, in the paper's units."""
    rows = [
        ("name", hardware.name),
        ("peak compute", f"{hardware.peak_flop_per_s / 1e12:g} Tflop/s"),
        ("memory", f"{hardware.memory_bytes / GIB:g} GiB"),
        ("GPUs per NVLink node", f"{hardware.gpus_per_node}"),
        ("source", hardware.source),
    ]
    return pd.DataFrame(rows, columns=["field", "value"])


def show_hardware(hardware: Hardware) -> None:
    """State which hardware the page was computed for."""
    show_markdown(f"Computed for hardware **{hardware.name}**" + (f" — {hardware.description}" if hardware.description else "") + ".")
