"""Downloads embedded in the page (data URLs: the book stays offline): a reproduced table, the data
behind a figure, named after the artifact's label.
"""

from __future__ import annotations

import base64

import pandas as pd

from .display import show_html

__all__ = ["download_link", "artifact_filename", "show_csv_download", "show_data_download"]


def download_link(payload: bytes, filename: str, mime: str, text: str) -> str:
    """An HTML link that downloads ``payload`` as ``filename`` (embedded as a data URL: the book stays offline)."""
    encoded = base64.b64encode(payload).decode("ascii")
    return f'<a download="{filename}" href="data:{mime};base64,{encoded}">{text}</a>'


def artifact_filename(label: str, suffix: str) -> str:
    """``table:x_model`` -> ``table_x_model.csv``."""
    return label.replace(":", "_") + suffix


def show_csv_download(frame: pd.DataFrame, label: str) -> None:
    """A link that downloads the reproduced table as CSV (embedded: the book stays offline)."""
    link = download_link(frame.to_csv(index=False).encode(), artifact_filename(label, ".csv"), "text/csv", "Download the reproduced table (CSV)")
    show_html(link)


def show_data_download(frame: pd.DataFrame, label: str, text: str = "Download the data (CSV)") -> None:
    """A CSV download of ``frame`` named after ``label`` (e.g. the full sweep behind a figure)."""
    show_html(download_link(frame.to_csv(index=False).encode(), artifact_filename(label, ".csv"), "text/csv", text))
