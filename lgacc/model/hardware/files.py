"""Spec files: the keys a YAML spec may hold and their units, a shipped name or a path resolved to a
file, and the file read, converted to SI units and checked into a :class:`~lgacc.model.hardware.Hardware`."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Mapping

from lgacc.errors import UserInputError
from lgacc.paths import DATA
from lgacc.yamlfile import file_problem, load_yaml_mapping

from .checks import INTEGER_FIELDS, TEXT_FIELDS, HardwareSpecError, as_positive_number, check_range
from .links import GB, GIB, LINK_KEYS
from .spec import Hardware

__all__ = [
    "DATA_DIR",
    "DEFAULT_HARDWARE",
    "RATE_UNITS",
    "SIZE_UNITS",
    "FLOP_UNITS",
    "QUANTITIES",
    "allowed_keys",
    "hardware_from_mapping",
    "available_hardware",
    "is_path",
    "hardware_path",
    "load_hardware",
]

#: Default folder of the shipped specifications.
DATA_DIR = DATA / "hardware"
DEFAULT_HARDWARE = "a100-80gb"

#: The units a spec file may give a quantity in, by key suffix, as a factor to SI units.
RATE_UNITS = {"bytes_per_s": 1.0, "gb_per_s": float(GB), "gib_per_s": float(GIB)}
SIZE_UNITS = {"bytes": 1.0, "gb": float(GB), "gib": float(GIB)}
FLOP_UNITS = {"flop_per_s": 1.0}


#: Quantities of a spec file: dataclass field -> (key stem, allowed units).
QUANTITIES: dict[str, tuple[str, Mapping[str, float]]] = {
    "peak_flop_per_s": ("peak", FLOP_UNITS),
    "memory_bytes": ("memory", SIZE_UNITS),
    **{f"{key}_bandwidth_bytes_per_s": (f"{key}_bandwidth", RATE_UNITS) for key in LINK_KEYS},
}
_LINK_NAME_KEYS = {f"{key}_name": key for key in LINK_KEYS}
_OPTIONAL_NUMBERS = {"kernel_efficiency": 1.0, "gemm_max_efficiency": 0.8}
#: The dense FP8 peak, optional and without a default (a GPU without one computes only in bf16).
FP8_PEAK_KEY = "peak_fp8_flop_per_s"


def allowed_keys() -> list[str]:
    """Every key a spec file may hold: the text fields, the counts, the link names, and each quantity in each unit allowed for it."""
    keys = list(TEXT_FIELDS) + sorted(INTEGER_FIELDS) + list(_OPTIONAL_NUMBERS) + list(_LINK_NAME_KEYS)
    keys.append(FP8_PEAK_KEY)
    for stem, units in QUANTITIES.values():
        keys.extend(f"{stem}_{unit}" for unit in units)
    return keys


def hardware_from_mapping(spec: Mapping[str, Any], origin: str = "<mapping>") -> Hardware:
    """Validate a parsed specification and convert it to SI units.

    The range of each quantity is checked after its unit is applied, so
    ``memory_gib: 1.0e+300`` is rejected (it overflows to infinite bytes).
    """
    if not isinstance(spec, Mapping):
        raise HardwareSpecError(origin, "<top level>", f"expected a mapping of fields, got {type(spec).__name__}")
    allowed = allowed_keys()
    unknown = [key for key in spec if key not in allowed]
    if unknown:
        raise HardwareSpecError(
            origin, str(unknown[0])[:80], f"unknown key; allowed keys are: {', '.join(allowed)}"
        )
    values: dict[str, Any] = {}
    for field, required in TEXT_FIELDS.items():
        if field not in spec:
            if required:
                raise HardwareSpecError(origin, field, "missing; expected a non-empty string")
            continue
        value = spec[field]
        if not isinstance(value, str) or not value.strip():
            raise HardwareSpecError(origin, field, f"expected a non-empty string, got {value!r}")
        values[field] = value.strip()
    for field, (stem, units) in QUANTITIES.items():
        given = [unit for unit in units if f"{stem}_{unit}" in spec]
        choices = " or ".join(f"{stem}_{unit}" for unit in units)
        if not given:
            raise HardwareSpecError(origin, choices, "missing; expected a positive number")
        if len(given) > 1:
            raise HardwareSpecError(
                origin, f"{stem}_{given[0]}", f"given more than once ({', '.join(f'{stem}_{u}' for u in given)}); keep one"
            )
        key = f"{stem}_{given[0]}"
        number = as_positive_number(origin, key, spec[key])
        try:
            si_value = float(number) * units[given[0]]
        except OverflowError:
            si_value = math.inf
        check_range(origin, key, field, si_value, f"{number:g}")
        values[field] = si_value
    if "gpus_per_node" not in spec:
        raise HardwareSpecError(origin, "gpus_per_node", "missing; expected a positive integer")
    values["gpus_per_node"] = as_positive_number(origin, "gpus_per_node", spec["gpus_per_node"], integer=True)
    check_range(origin, "gpus_per_node", "gpus_per_node", values["gpus_per_node"], f"{values['gpus_per_node']}")
    for field, default in _OPTIONAL_NUMBERS.items():
        number = float(as_positive_number(origin, field, spec.get(field, default)))
        check_range(origin, field, field, number, f"{number:g}")
        values[field] = number
    if FP8_PEAK_KEY in spec:
        number = float(as_positive_number(origin, FP8_PEAK_KEY, spec[FP8_PEAK_KEY]))
        check_range(origin, FP8_PEAK_KEY, "peak_flop_per_s", number, f"{number:g}")
        values[FP8_PEAK_KEY] = number
    names = []
    for key, link in _LINK_NAME_KEYS.items():
        if key in spec:
            if not isinstance(spec[key], str) or not spec[key].strip():
                raise HardwareSpecError(origin, key, f"expected a non-empty string, got {spec[key]!r}")
            names.append((link, spec[key].strip()))
    values["link_names"] = tuple(names)
    values["path"] = origin
    return Hardware(**values)


def available_hardware(data_dir: Path = DATA_DIR) -> list[str]:
    """Names of the shipped specifications."""
    return sorted(path.stem for path in data_dir.glob("*.yaml"))


def is_path(name_or_path: str | os.PathLike) -> bool:
    """Whether ``name_or_path`` names a file rather than a shipped spec.

    A path is a :class:`os.PathLike`, or a string that contains ``/`` (or the
    system's separator) or ends in ``.yaml`` or ``.yml``; anything else is a
    shipped name, never looked up in the working directory.
    """
    if isinstance(name_or_path, os.PathLike):
        return True
    text = str(name_or_path)
    return "/" in text or os.sep in text or text.lower().endswith((".yaml", ".yml"))


def hardware_path(name_or_path: str | Path, data_dir: Path = DATA_DIR) -> Path:
    """Resolve a shipped name (``a100-80gb``) or a path to a spec file (see :func:`is_path`)."""
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise HardwareSpecError(
            repr(name_or_path)[:80], "<name>",
            f"expected a shipped hardware name or a path to a .yaml file, got {type(name_or_path).__name__}",
        )
    if is_path(name_or_path):
        candidate = Path(name_or_path)
        try:
            problem = file_problem(candidate)
        except (OSError, ValueError) as error:  # a name too long, a NUL byte
            reason = getattr(error, "strerror", None) or str(error)
            raise HardwareSpecError(str(candidate)[:200], "<file>", f"cannot be read: {reason}") from None
        if problem:
            raise HardwareSpecError(str(candidate)[:200], "<file>", problem)
        return candidate
    known = available_hardware(data_dir)
    if name_or_path not in known:
        raise HardwareSpecError(
            repr(name_or_path)[1:-1][:80],
            "<name>",
            f"no such hardware; known names are {', '.join(known)}, or give a path to a .yaml file (e.g. ./{name_or_path}.yaml)",
        )
    return data_dir / f"{name_or_path}.yaml"


def load_hardware(name_or_path: str | Path | Hardware = DEFAULT_HARDWARE) -> Hardware:
    """Load and validate a hardware specification by shipped name or file path.

    Raises :class:`HardwareSpecError` naming the file, the field and what is allowed;
    warns (:class:`HardwareSpecWarning`) for values that are possible but implausible.
    """
    if isinstance(name_or_path, Hardware):
        return name_or_path
    path = hardware_path(name_or_path)
    try:
        spec = load_yaml_mapping(path, "hardware spec")
    except UserInputError as error:
        message = str(error).removeprefix(f"hardware spec {str(path)!r}: ")
        raise HardwareSpecError(str(path), "<file>", message) from None
    return hardware_from_mapping(spec, origin=str(path))
