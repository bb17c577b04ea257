"""What a :class:`~lgacc.model.hardware.Hardware` value may hold: types, positive and finite numbers, and the
accepted and usual range of each quantity in SI units (:data:`RANGES`), with the error and the
warning that say which file and field is at fault."""

from __future__ import annotations

import math
import sys
import warnings
from typing import Any, NamedTuple

from lgacc.errors import UserInputError

from .links import GIB, LINK_KEYS

__all__ = [
    "HardwareSpecError",
    "HardwareSpecWarning",
    "Range",
    "RANGES",
    "TEXT_FIELDS",
    "INTEGER_FIELDS",
    "as_positive_number",
    "check_range",
    "validate_values",
]


class HardwareSpecError(UserInputError):
    """A hardware specification that cannot be used, with the file and field at fault."""

    def __init__(self, origin: str, field: str, problem: str):
        self.origin = origin
        self.field = field
        self.problem = problem
        super().__init__(f"{origin}: field '{field}': {problem}")


class HardwareSpecWarning(UserWarning):
    """A value that is possible but implausible (e.g. a peak below 1 Tflop/s): check the unit."""


class Range(NamedTuple):
    """Accepted range of a quantity in SI units: outside ``low``..``high`` an error,
    outside ``usual_low``..``usual_high`` a :class:`HardwareSpecWarning`."""

    low: float
    usual_low: float
    usual_high: float
    high: float
    unit: str
    low_inclusive: bool = True


_BANDWIDTH_RANGE = Range(1e3, 1e6, 1e14, 1e17, "bytes/s")
#: Accepted and usual ranges, in SI units, per field of :class:`Hardware`.
RANGES: dict[str, Range] = {
    "peak_flop_per_s": Range(1e9, 1e12, 1e17, 1e21, "flop/s"),
    # Above 10 TiB per GPU (no GPU has a tenth of it) a unit mistake is likelier than the memory.
    "memory_bytes": Range(float(2**20), float(GIB), float(10 * 2**40), float(2**60), "bytes"),
    **{f"{key}_bandwidth_bytes_per_s": _BANDWIDTH_RANGE for key in LINK_KEYS},
    # The scaling figures' "unlimited node" is 2**40 GPUs: the upper bound leaves room for it; the largest NVLink
    # domains today hold 72 to 576 GPUs, so more than 1000 in a node is worth a warning.
    "gpus_per_node": Range(1, 1, 1000, 2**62, "GPUs"),
    # Below a thousandth of the peak a spec is a unit mistake, and training times overflow (1e-300: inf days).
    "kernel_efficiency": Range(1e-3, 0.05, 1.0, 1.0, "(dimensionless)"),
    # Measured matrix-multiply efficiency over the peak (read by the calibrated model only); the same floor.
    "gemm_max_efficiency": Range(1e-3, 0.05, 1.0, 1.0, "(dimensionless)"),
}

#: Text fields of :class:`Hardware`, each with whether it is required (non-empty).
TEXT_FIELDS = {"name": True, "source": True, "description": False, "notes": False}
#: Numeric fields of :class:`Hardware` that hold whole numbers.
INTEGER_FIELDS = {"gpus_per_node"}


def as_positive_number(origin: str, key: str, value: Any, *, integer: bool = False) -> float:
    """``value`` as a finite positive float (or int), or an error naming ``key``."""
    kind = "a positive integer" if integer else "a positive number"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:  # numpy scalars and other real numbers
            import numbers

            if isinstance(value, numbers.Real) and not isinstance(value, bool) and type(value).__name__ != "bool_":
                value = int(value) if isinstance(value, numbers.Integral) else float(value)
        except (TypeError, ValueError, OverflowError):
            pass
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        hint = ""
        if isinstance(value, str):
            hint = " (write a plain number in the unit the key names, e.g. peak_flop_per_s: 312.0e+12)"
        raise HardwareSpecError(origin, key, f"expected {kind}, got {type(value).__name__} {value!r}{hint}")
    if isinstance(value, int) and not -(2**1000) < value < 2**1000:
        raise HardwareSpecError(origin, key, f"expected {kind} (> 0 and finite), got an integer of {len(str(value))} digits")
    if math.isnan(value) or math.isinf(value):
        raise HardwareSpecError(origin, key, f"expected {kind} (> 0 and finite), got {value!r}")
    if value <= 0:
        raise HardwareSpecError(origin, key, f"expected {kind} (> 0 and finite), got {value!r}")
    if integer and not float(value).is_integer():
        raise HardwareSpecError(origin, key, f"expected {kind}, got {value!r}")
    return int(value) if integer else value


def check_range(origin: str, key: str, field: str, si_value: float, given: str, warn: bool = True) -> None:
    """Errors outside the accepted range of ``field``, a warning (if ``warn``) outside its usual range.

    ``si_value`` is the value after the unit is applied; ``given`` says how it was written.
    """
    r = RANGES[field]
    as_si = "" if given == f"{si_value:g}" else f" = {si_value:.4g} {r.unit}"
    if not math.isfinite(si_value) or si_value > r.high:
        raise HardwareSpecError(
            origin, key, f"{given}{as_si} is above the largest accepted value {r.high:.4g} {r.unit}; check the unit"
        )
    if si_value < r.low or (si_value == r.low and not r.low_inclusive):
        bound = "smallest accepted value" if r.low_inclusive else "exclusive lower bound"
        hint = ""
        if field == "peak_flop_per_s" and RANGES[field].usual_low <= si_value * 1e12 <= RANGES[field].usual_high:
            hint = f" (in Tflop/s? write {si_value:g}.0e+12)" if float(si_value).is_integer() else f" (in Tflop/s? write {si_value * 1e12:.4g})"
        raise HardwareSpecError(
            origin, key, f"{given}{as_si} is below the {bound} {r.low:.4g} {r.unit}; check the unit{hint}"
        )
    if warn and not r.usual_low <= si_value <= r.usual_high:
        side = "below" if si_value < r.usual_low else "above"
        bound = r.usual_low if side == "below" else r.usual_high
        warnings.warn(
            HardwareSpecWarning(
                f"{origin}: field '{key}': {given}{as_si} is {side} the usual {bound:.4g} {r.unit}; "
                "accepted, but check the unit"
            ),
            stacklevel=4,
        )


def validate_values(hardware: Any, origin: str) -> None:
    """Types of every field, positive and finite (run on every construction).

    The plausible ranges of :data:`RANGES` apply to files only: the scaling analysis builds
    idealized hardware on purpose (``memory_bytes=1e30``, 2**40 GPUs per node)."""
    for field, required in TEXT_FIELDS.items():
        value = getattr(hardware, field)
        if not isinstance(value, str) or (required and not value.strip()):
            raise HardwareSpecError(origin, field, f"expected a non-empty string, got {value!r}")
    if not isinstance(hardware.path, str):
        raise HardwareSpecError(origin, "path", f"expected a string, got {hardware.path!r}")
    for field in RANGES:  # every numeric field, in the order of Hardware's fields
        integer = field in INTEGER_FIELDS
        value = as_positive_number(origin, field, getattr(hardware, field), integer=integer)
        value = value if integer else float(value)
        if value < sys.float_info.min:
            raise HardwareSpecError(origin, field, f"{value!r} is subnormal; expected a positive number")
        if field in ("kernel_efficiency", "gemm_max_efficiency"):
            check_range(origin, field, field, value, f"{value:g}", warn=False)
        object.__setattr__(hardware, field, value)
    if hardware.peak_fp8_flop_per_s is not None:
        value = float(as_positive_number(origin, "peak_fp8_flop_per_s", hardware.peak_fp8_flop_per_s))
        check_range(origin, "peak_fp8_flop_per_s", "peak_flop_per_s", value, f"{value:g}", warn=False)
        object.__setattr__(hardware, "peak_fp8_flop_per_s", value)
    names = hardware.link_names
    if not isinstance(names, tuple) or not all(
        isinstance(pair, tuple) and len(pair) == 2 and pair[0] in LINK_KEYS and isinstance(pair[1], str) for pair in names
    ):
        raise HardwareSpecError(origin, "link_names", f"expected a tuple of (link, name) pairs, got {names!r}")
