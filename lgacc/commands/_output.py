"""Shared output helpers for subcommands: one way to print tables and JSON."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pandas is imported by whoever builds the frame; JSON output needs no pandas
    import pandas as pd

FORMATS = ("table", "csv", "json")
#: File types a figure can be written to, by suffix.
FIGURE_SUFFIXES = (".svg", ".png", ".pdf")
#: The longest file or folder name (one path component) common file systems allow, in bytes.
MAX_NAME_BYTES = 255


def add_format_argument(parser, choices=FORMATS, default="table") -> None:
    parser.add_argument(
        "--format", choices=choices, default=default, help=f"output format (default: {default})"
    )


def to_jsonable(value: Any) -> Any:
    """Plain Python values for JSON: numpy scalars to numbers, NaN to null."""
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def dumps(value: Any) -> str:
    return json.dumps(to_jsonable(value), indent=2)


def render_table(frame: "pd.DataFrame", fmt: str) -> str:
    """A DataFrame as an aligned text table, CSV, or a JSON list of row objects."""
    if fmt == "json":
        return dumps(frame.to_dict(orient="records"))
    if fmt == "csv":
        return frame.to_csv(index=False).rstrip("\n")
    return frame.to_string(index=False)


def figure_path(out: str | Path) -> Path:
    """``--out`` checked before any work: a file name ending in .svg, .png or .pdf.

    Without the rule matplotlib would write ``pfile.png`` for ``--out pfile`` while the
    command printed ``pfile``, and raise a ValueError for ``--out p.txt``.
    """
    from lgacc.errors import UserInputError

    shown = repr(str(out)) if len(str(out)) <= 80 else f"'{str(out)[:60]}...' ({len(str(out))} characters)"
    if not str(out).strip():
        raise UserInputError(f"--out {shown} is empty; give a file name ending in {', '.join(FIGURE_SUFFIXES)}")
    path = Path(out)
    if path.suffix.lower() not in FIGURE_SUFFIXES:
        raise UserInputError(
            f"--out {shown}: the file name must end in {', '.join(FIGURE_SUFFIXES)} (it sets the figure's format)"
        )
    too_long = [part for part in path.parts if len(part.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES]
    if too_long:
        raise UserInputError(f"--out {shown}: a file or folder name of {len(too_long[0].encode('utf-8', 'surrogateescape'))} "
                             f"bytes is longer than the {MAX_NAME_BYTES} bytes a file system allows")
    try:
        is_folder = path.is_dir()
    except OSError as error:  # e.g. a path too long as a whole
        raise UserInputError(f"--out {shown}: {error.strerror or error}") from None
    if is_folder:
        raise UserInputError(f"--out {shown} is a folder; give a file name ending in {', '.join(FIGURE_SUFFIXES)}")
    return path


def save_figure(figure, out: str | Path) -> Path:
    """Write a matplotlib figure to ``out`` (its folder created if missing), or one clear error."""
    from lgacc.errors import UserInputError

    path = figure_path(out)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(path, bbox_inches="tight", format=path.suffix.lower().lstrip("."))
    except (FileExistsError, NotADirectoryError):
        raise UserInputError(f"--out {str(out)[:80]!r}: cannot write the file: a folder on its path is a file") from None
    except OSError as error:
        reason = error.strerror or str(error)
        raise UserInputError(f"--out {str(out)[:80]!r}: cannot write the file: {reason}") from None
    finally:
        import matplotlib.pyplot as plt

        plt.close(figure)
    return path
