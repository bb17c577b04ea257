"""Shared output helpers for subcommands: one way to print tables and JSON."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pandas is imported by whoever builds the frame; JSON output needs no pandas
    import pandas as pd

FORMATS = ("table", "csv", "json")


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
