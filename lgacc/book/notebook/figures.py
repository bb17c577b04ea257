"""Figures as inline SVG, full text width, with downloads of the SVG and of the data drawn.
"""

from __future__ import annotations

import io
import re

import pandas as pd

from .display import show_html
from .downloads import artifact_filename, download_link

__all__ = ["show_svg_figure"]


def show_svg_figure(figure, label: str, data: pd.DataFrame | None = None) -> None:
    """Display a figure as SVG, full text width, with links that download the same SVG and,
    when given, the data drawn (CSV).

    Text is kept as SVG text (``svg.fonttype: none``), so it stays searchable and the
    book's browser checks can measure its rendered size.
    """
    import matplotlib

    buffer = io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        figure.savefig(buffer, format="svg", bbox_inches="tight")
    svg = buffer.getvalue()
    show_html(_fit_to_page(svg.decode("utf-8")))
    links = [download_link(svg, artifact_filename(label, ".svg"), "image/svg+xml", "Download the figure (SVG)")]
    if data is not None:
        links.append(download_link(data.to_csv(index=False).encode(), artifact_filename(label, ".csv"), "text/csv",
                                    "Download the data drawn (CSV)"))
    show_html(" · ".join(links))


def _fit_to_page(svg: str) -> str:
    """Let an inline SVG shrink to the page's width (it keeps its viewBox, so its aspect)."""
    head, sep, rest = svg.partition("<svg ")
    tag, close, body = rest.partition(">")
    tag = re.sub(r'\s(width|height)="[^"]*"', "", tag)
    return f'{head}{sep}{tag} style="width: 100%; height: auto; max-width: 100%"{close}{body}'
