"""Display helpers for the book's notebooks: a notebook stays a thin narrative.

Every function here returns or displays a rendering of library results; none
computes anything of the paper's.
"""

from __future__ import annotations

import base64
import io
import re
from typing import Any

import pandas as pd

from .artifacts import Artifact, agreement
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
    return agreement(comparison)


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
        shown[column] = shown[column].map(lambda ok: "" if ok is None or ok != ok else AGREE_MARK if ok else DIFFER_MARK)

    def highlight(value: Any) -> str:
        return "background-color: #f8d7da; color: #842029" if value == DIFFER_MARK else ""

    return shown.style.map(highlight, subset=flags).hide(axis="index")


def _download_link(payload: bytes, filename: str, mime: str, text: str) -> str:
    encoded = base64.b64encode(payload).decode("ascii")
    return f'<a download="{filename}" href="data:{mime};base64,{encoded}">{text}</a>'


def artifact_filename(label: str, suffix: str) -> str:
    """``table:x_model`` -> ``table_x_model.csv``."""
    return label.replace(":", "_") + suffix


def show_csv_download(frame: pd.DataFrame, label: str) -> None:
    """A link that downloads the reproduced table as CSV (embedded: the book stays offline)."""
    link = _download_link(frame.to_csv(index=False).encode(), artifact_filename(label, ".csv"), "text/csv", "Download the reproduced table (CSV)")
    _html(link)


def show_svg_figure(figure, label: str) -> None:
    """Display a figure as SVG with a link that downloads the same SVG."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight")
    svg = buffer.getvalue()
    _html(_fit_to_page(svg.decode("utf-8")))
    _html(_download_link(svg, artifact_filename(label, ".svg"), "image/svg+xml", "Download the figure (SVG)"))


def _fit_to_page(svg: str) -> str:
    """Let an inline SVG shrink to the page's width (it keeps its viewBox, so its aspect)."""
    head, sep, rest = svg.partition("<svg ")
    tag, close, body = rest.partition(">")
    tag = re.sub(r'\s(width|height)="[^"]*"', "", tag)
    return f'{head}{sep}{tag} style="width: 100%; height: auto; max-width: 100%"{close}{body}'


def _html(text: str) -> None:
    try:
        from IPython.display import HTML, display
    except ImportError:
        print(text)
    else:
        display(HTML(text))


def show_comparison(artifact: Artifact, reproduced: Any) -> pd.DataFrame:
    """Display the paper beside the reproduction, then one line saying whether they agree.

    A reproduced table also gets a CSV download link.
    """
    comparison = artifact.compare(reproduced)
    _display(styled_comparison(comparison))
    _markdown(comparison_sentence(comparison))
    if isinstance(reproduced, pd.DataFrame):
        show_csv_download(reproduced, artifact.label)
    return comparison


def linked_scorecard(frame: pd.DataFrame):
    """The scorecard with each label linked to its page and the status coloured."""
    shown = frame.copy()
    shown["label"] = [
        f'<a href="{page}.html">{label}</a>' if page else label for label, page in zip(shown["label"], shown["page"])
    ]
    shown = shown.drop(columns=["page"])
    colours = {
        "agrees to printed precision": "background-color: #d1e7dd",
        "reproduced (no printed values to compare)": "background-color: #cfe2ff",
        "agrees with the paper's formulas": "background-color: #d1e7dd",
        "differs": "background-color: #f8d7da",
        "fails to build": "background-color: #f8d7da",
        "not reproduced yet": "background-color: #fff3cd",
    }
    return shown.style.map(lambda status: colours.get(status, ""), subset=["status"]).hide(axis="index")
