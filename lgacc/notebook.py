"""Display helpers for the book's notebooks: a notebook stays a thin narrative.

Every function here returns or displays a rendering of library results; none
computes anything of the paper's.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from .artifacts import Artifact
from .hardware import GIB, Hardware

AGREE_MARK = "✓"
DIFFER_MARK = "✗"


def _display(obj: Any) -> None:
    try:
        from IPython.display import display
    except ImportError:  # plain Python: print instead
        print(obj)
    else:
        display(obj)


def _markdown(text: str) -> None:
    try:
        from IPython.display import Markdown, display
    except ImportError:
        print(text)
    else:
        display(Markdown(text))


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
    _markdown(f"Computed for hardware **{hardware.name}**" + (f" — {hardware.description}" if hardware.description else "") + ".")


def agreement_columns(frame: pd.DataFrame) -> list[str]:
    return [column for column in frame.columns if str(column).endswith("agrees")]


def summarize_agreement(comparison: pd.DataFrame) -> tuple[int, int]:
    """(cells that agree, cells compared) over every ``... agrees`` column."""
    flags = comparison[agreement_columns(comparison)]
    return int(flags.to_numpy().sum()), int(flags.size)


def comparison_sentence(comparison: pd.DataFrame) -> str:
    agree, total = summarize_agreement(comparison)
    if agree == total:
        return f"{DIFFER_MARK if total == 0 else AGREE_MARK} All {total} compared cells agree with the paper to its printed precision."
    return (
        f"{DIFFER_MARK} {total - agree} of {total} compared cells differ from the paper "
        f"(marked {DIFFER_MARK}); {agree} agree to its printed precision."
    )


def styled_comparison(comparison: pd.DataFrame):
    """The comparison with ✓/✗ marks and differing cells highlighted."""
    shown = comparison.copy()
    flags = agreement_columns(shown)
    for column in flags:
        shown[column] = shown[column].map(lambda ok: AGREE_MARK if ok else DIFFER_MARK)

    def highlight(value: Any) -> str:
        return "background-color: #f8d7da; color: #842029" if value == DIFFER_MARK else ""

    return shown.style.map(highlight, subset=flags).hide(axis="index")


def show_comparison(artifact: Artifact, reproduced: Any) -> pd.DataFrame:
    """Display the paper beside the reproduction, then one line saying whether they agree."""
    comparison = artifact.compare(reproduced)
    _display(styled_comparison(comparison))
    _markdown(comparison_sentence(comparison))
    return comparison
