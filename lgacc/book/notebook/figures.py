"""Figures as inline SVG, full text width and never smaller than legible, with their downloads.
"""

from __future__ import annotations

import io
import math
import re

import pandas as pd

from .display import show_html
from .downloads import artifact_filename, download_link

__all__ = ["MIN_TEXT_PX", "PHONE_COLUMN_PX", "figure_svg", "legible_width", "lighter_svg", "figure_html", "show_svg_figure",
           "show_kept_svg_figure"]

#: Smallest text a reader can read, in CSS pixels as rendered (the book's browser checks use the same).
MIN_TEXT_PX = 9.0
#: The text column of a 390 px phone, in CSS pixels: a figure that needs more scrolls sideways there.
PHONE_COLUMN_PX = 358

_FONT_SIZE = re.compile(r"font(?:-size)?:\s*([\d.]+)px")
_VIEWBOX_WIDTH = re.compile(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+) [\d.]+"')
#: A coordinate with more decimals than a drawing needs (matplotlib writes six); numbers below 1 (scales,
#: line widths, dash patterns) are left alone.
_LONG_DECIMAL = re.compile(r"(?<![\w.#-])(-?[1-9]\d*\.\d{2})\d+")
_FONT_FAMILY = re.compile(r"font-family: 'DejaVu Sans'[^;\"]*")


def figure_svg(figure, rasterize: bool = False, dpi: int = 150) -> str:
    """The figure as SVG text, text kept as text (``svg.fonttype: none``: searchable, and measurable by
    the book's browser checks).  ``rasterize`` draws the patches (bars, blocks) as one embedded image
    while text, lines and axes stay vector: a timeline of thousands of blocks weighs a tenth as much."""
    import matplotlib

    if rasterize:
        for axis in figure.axes:
            for patch in axis.patches:
                patch.set_rasterized(True)
    buffer = io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "lgacc"}):
        figure.savefig(buffer, format="svg", bbox_inches="tight", dpi=dpi)
    return lighter_svg(buffer.getvalue().decode("utf-8"))


def lighter_svg(svg: str) -> str:
    """The same drawing in fewer bytes: no metadata, coordinates to 1/100 of a point, a short font list."""
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)
    svg = _FONT_FAMILY.sub("font-family: 'DejaVu Sans', 'Bitstream Vera Sans', Arial, sans-serif", svg)
    return _LONG_DECIMAL.sub(r"\1", svg)


def legible_width(svg: str, minimum_px: float = MIN_TEXT_PX) -> int | None:
    """The narrowest width, in CSS pixels, at which the SVG's smallest text renders at ``minimum_px``
    (font sizes are in the drawing's units, scaled by rendered width / viewBox width); ``None`` if it
    has no text or no viewBox."""
    sizes = [float(size) for size in _FONT_SIZE.findall(svg) if float(size) > 0]
    box = _VIEWBOX_WIDTH.search(svg)
    if not sizes or box is None:
        return None
    return math.ceil(minimum_px * float(box.group(1)) / min(sizes))


def figure_html(svg: str) -> str:
    """An inline SVG as wide as the text column, but never narrower than :func:`legible_width`: on a
    phone a wide figure keeps legible text and scrolls sideways in its own box (``div.lgacc-figure``)."""
    head, sep, rest = svg.partition("<svg ")
    tag, close, body = rest.partition(">")
    tag = re.sub(r'(^|\s)(width|height)="[^"]*"', "", tag).strip()
    width = legible_width(svg)
    minimum = f" min-width: {width}px;" if width else ""
    inline = f'{sep}{tag} style="width: 100%; height: auto;{minimum}"{close}{body}'
    wide = " lgacc-wide" if width and width > PHONE_COLUMN_PX else ""  # a phone shows a hint to swipe
    return f'<div class="lgacc-figure{wide}">{inline}</div>' if sep else head


def show_svg_figure(figure, label: str, data: pd.DataFrame | None = None, rasterize: bool = False) -> None:
    """Display a figure as SVG, full text width and legible (:func:`figure_html`), with links that
    download the same SVG and, when given, the data drawn (CSV).  ``rasterize``: see :func:`figure_svg`."""
    _show_svg(figure_svg(figure, rasterize=rasterize), label, data)


def show_kept_svg_figure(name: str, inputs: object, draw, label: str, rasterize: bool = False) -> None:
    """:func:`show_svg_figure` of the figure ``draw()`` returns (closed once drawn), its SVG text kept in the
    result cache (:func:`lgacc.cache.results.cached`: data, keyed by ``inputs`` -- values, every one the drawing
    reads --, the package's sources and matplotlib's version).  For a figure the hardware does not enter, on a
    page that also shows the hardware's numbers: a build for a new spec reads it instead of drawing it again
    (the SVG is the same text: its ids are salted with a constant)."""
    import matplotlib
    import matplotlib.pyplot as plt

    from lgacc.cache.results import cached

    def compute() -> str:
        figure = draw()
        try:
            return figure_svg(figure, rasterize=rasterize)
        finally:
            plt.close(figure)

    _show_svg(cached(f"figure-svg-{name}", (inputs, rasterize, matplotlib.__version__), compute), label, None)


def _show_svg(svg: str, label: str, data: pd.DataFrame | None) -> None:
    show_html(figure_html(svg))
    links = [download_link(svg.encode("utf-8"), artifact_filename(label, ".svg"), "image/svg+xml",
                           "Download the figure (SVG)")]
    if data is not None:
        links.append(download_link(data.to_csv(index=False).encode(), artifact_filename(label, ".csv"), "text/csv",
                                    "Download the data drawn (CSV)"))
    show_html(" · ".join(links))
