"""Numbers as a reader wants them: counts, durations, sizes, SI prefixes, percentages, and a frame
with every known column formatted and its header made readable (shared by every notebook).
"""

from __future__ import annotations

from typing import Any, Sequence

import pandas as pd

from lgacc.model.hardware import GIB
from lgacc.units import DAYS_PER_YEAR

__all__ = ["SI_PREFIXES", "BINARY_PREFIXES", "COUNT_SUFFIXES", "is_missing", "format_int", "format_days", "format_si",
           "format_count",
           "format_bytes", "format_gib", "format_number", "format_percent", "format_list", "COLUMN_FORMATS",
           "COLUMN_TITLES", "readable_frame"]


SI_PREFIXES = ("", "k", "M", "G", "T", "P", "E")
BINARY_PREFIXES = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
#: The suffixes the paper prints after a parameter count (``301 M``, ``8.15 B``, ``1.26 T``): B, not G.
COUNT_SUFFIXES = ("", "K", "M", "B", "T", "P", "E")


def format_list(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``: a list as a sentence writes it."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def is_missing(value: Any) -> bool:
    """Whether ``value`` is absent: ``None`` or NaN."""
    try:
        return value is None or value != value  # None or NaN
    except (TypeError, ValueError):
        return False


def format_int(value: Any) -> str:
    """A count as an integer with thousands separators: ``10752.0`` -> ``10,752``."""
    if is_missing(value):
        return "—"
    return f"{int(round(float(value))):,}"


def format_days(days: Any) -> str:
    """A duration given in days, in the unit that fits: ``y``, ``d``, ``h``, ``min`` or ``s``."""
    if is_missing(days):
        return "—"
    days = float(days)
    if days >= DAYS_PER_YEAR:
        return f"{days / DAYS_PER_YEAR:.3g} y"
    if days >= 1:
        return f"{days:.3g} d"
    hours = days * 24
    if hours >= 1:
        return f"{hours:.3g} h"
    minutes = hours * 60
    if minutes >= 1:
        return f"{minutes:.3g} min"
    return f"{minutes * 60:.2g} s"


def _scaled(value: float, base: int, names: Sequence[str]) -> tuple[float, str]:
    """``value`` divided by ``base`` until below it (or out of ``names``), with the name of the step."""
    index = 0
    while abs(value) >= base and index < len(names) - 1:
        value /= base
        index += 1
    return value, names[index]


def format_si(value: Any, unit: str = "", digits: int = 3) -> str:
    """A quantity with an SI prefix: ``1.26e12`` parameters -> ``1.26 T``; ``312e12, "flop/s"`` -> ``312 Tflop/s``."""
    if is_missing(value):
        return "—"
    scaled, prefix = _scaled(float(value), 1000, SI_PREFIXES)
    return f"{scaled:.{digits}g} {prefix}{unit}".rstrip()


def format_count(value: Any, digits: int = 3) -> str:
    """A parameter count as the paper prints it: ``8.157e9`` -> ``8.16 B``; ``488`` -> ``488``."""
    if is_missing(value):
        return "—"
    scaled, suffix = _scaled(float(value), 1000, COUNT_SUFFIXES)
    return f"{scaled:.{digits}g} {suffix}".rstrip()


def format_bytes(n_bytes: Any, digits: int = 3) -> str:
    """A size in binary units, as the paper's tables count them: ``5.24e11`` -> ``488 GiB``."""
    if is_missing(n_bytes):
        return "—"
    scaled, unit = _scaled(float(n_bytes), 1024, BINARY_PREFIXES)
    return f"{scaled:.{digits}g} {unit}"


def format_gib(gib: Any, digits: int = 3) -> str:
    """A size given in GiB, in the binary unit that fits."""
    return "—" if is_missing(gib) else format_bytes(float(gib) * GIB, digits)


def format_number(value: Any, digits: int = 3) -> str:
    """A plain number to ``digits`` significant digits, never in e-notation below 10^6."""
    if is_missing(value):
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    value = float(value)
    if value != 0 and (abs(value) >= 1e9 or abs(value) < 1e-3):
        return f"{value:.{digits}g}"
    text = f"{value:.{digits}g}"
    if "e" in text or abs(value) >= 1e4:  # 2908000.5 at 3 digits -> 2,910,000
        return f"{float(text):,.0f}"
    return text


def format_percent(fraction: Any, digits: int = 1) -> str:
    return "—" if is_missing(fraction) else f"{100 * float(fraction):.{digits}f} %"


#: Column names the book shows, and how: a notebook passes its frame through
#: :func:`show_table` and every count, time, size and ratio is formatted alike.
COLUMN_FORMATS = {
    "n_gpu": format_int, "n_b": format_int, "n_l": format_int, "n_a": format_int, "n_mu": format_int,
    "b_mu": format_int, "b": format_int, "x": format_int,
    "time_days": format_days,
    "memory_gib": format_gib, "non_offloadable_gib": format_gib, "offloadable_gib": format_gib,
    "p": lambda v: format_count(v),
    "p_leading": lambda v: format_count(v),
    "efficiency": lambda v: format_number(v, 2),
    "memory_fraction": format_percent,
}


#: Headers a reader can follow (the code's names stay in the CSV downloads).
COLUMN_TITLES = {
    "time_days": "time", "memory_gib": "memory per GPU", "non_offloadable_gib": "non-offloadable memory",
    "offloadable_gib": "offloadable memory", "p": "parameters", "memory_fraction": "share of GPU memory",
    "n_gpu": "GPUs", "p_leading": "weights only",
}


def readable_frame(frame: pd.DataFrame, formats: dict[str, Any] | None = None, titles: dict[str, str] | None = None) -> pd.DataFrame:
    """A copy of ``frame`` with every known column formatted as text and headers renamed.

    Unknown float columns get 3 significant digits; booleans read yes/no; a missing value (None, NaN) reads "—".
    """
    formats = {**COLUMN_FORMATS, **(formats or {})}
    titles = {**COLUMN_TITLES, **(titles or {})}
    shown = frame.reset_index(drop=True).copy()
    for column in shown.columns:
        formatter = formats.get(str(column))
        series = shown[column]
        already_text = series.dropna().map(lambda v: isinstance(v, str)).all()  # e.g. a graded cell "value ✓ (printed)"
        already_text = already_text and series.notna().any()
        if formatter is not None and not already_text:  # a missing value reads "—" whatever the formatter ("nan" never)
            shown[column] = series.map(lambda v, f=formatter: "—" if is_missing(v) else f(v))
        elif pd.api.types.is_bool_dtype(series):
            shown[column] = series.map(lambda v: "yes" if v else "no")
        elif pd.api.types.is_float_dtype(series):
            shown[column] = series.map(format_number)
        elif pd.api.types.is_integer_dtype(series):
            shown[column] = series.map(format_int)
    return shown.rename(columns={c: titles.get(str(c), c) for c in shown.columns})
