"""Hardware specifications and their arithmetic-intensity thresholds.

A specification is a YAML file in ``data/hardware/`` (or any path).  Every
quantity is stored under a key whose suffix names its unit, so a file says
itself whether a vendor's "GB/s" is decimal or binary:

==================  =========================================
suffix              meaning
==================  =========================================
``_flop_per_s``     floating-point operations per second
``_bytes_per_s``    bytes per second
``_gb_per_s``       10**9 bytes per second (decimal)
``_gib_per_s``      2**30 bytes per second (binary)
``_bytes``          bytes
``_gb``             10**9 bytes
``_gib``            2**30 bytes
==================  =========================================

Each quantity must be given exactly once, in one of the units allowed for it.
Internally everything is SI: bytes, bytes per second and flop/s.  Once in SI,
each quantity must lie in a range (:data:`RANGES`): outside the outer bounds it
is rejected (312 flop/s is a GPU peak given in Tflop/s by mistake, 1e300 GiB
is infinite memory), outside the inner ones it is accepted with a
:class:`HardwareSpecWarning` (a peak below 1 Tflop/s is possible, but rare).
The optional ``kernel_efficiency`` (dimensionless, in (0, 1], default 1.0) is
the share of the peak that the kernels reach; 1.0 is the paper's convention.

A spec is named either by a shipped name (``a100-80gb``: only the files of
``data/hardware/``) or by a path (a string containing ``/`` or ending in
``.yaml``/``.yml``, or a :class:`pathlib.Path`): a file in the working
directory never stands in for a shipped name.  Files are read by
:func:`lgacc.yamlfile.load_yaml_mapping` (UTF-8, at most 1 MB, no aliases, no
duplicate keys, YAML 1.2 numbers).

The paper's ``table:hardware_bandwidth`` prints thresholds ``peak / bandwidth``
which come out as printed only when its "GB" is read as GiB (2**30 bytes): at
312 Tflop/s, 2039 GB/s gives 143 flops/B with GiB and 153 with decimal GB.
``a100-80gb.yaml`` therefore stores the paper's figures in GiB.
"""

from __future__ import annotations

import math
import os
import sys
import warnings
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Mapping, NamedTuple

from .errors import UserInputError
from .yamlfile import load_yaml_mapping

__all__ = [
    "GIB",
    "GB",
    "LINKS",
    "Hardware",
    "HardwareSpecError",
    "HardwareSpecWarning",
    "QUANTITIES",
    "RANGES",
    "Link",
    "allowed_keys",
    "available_hardware",
    "load_hardware",
    "hardware_path",
]

GB = 10**9
GIB = 2**30

#: Default folder of the shipped specifications.
DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "hardware"
DEFAULT_HARDWARE = "a100-80gb"


@dataclass(frozen=True)
class Link:
    """A data path whose bandwidth bounds an operation's arithmetic intensity."""

    key: str
    name: str
    description: str


#: The links of ``table:hardware_bandwidth``, in the paper's order.
LINKS: tuple[Link, ...] = (
    Link("gpu_memory", "GPU memory", "GPU high-bandwidth memory (HBM)"),
    Link("nvlink", "NVLINK", "GPU-to-GPU NVLink inside a node, input + output"),
    Link("pcie", "PCI-express", "the GPU's PCIe link, input + output"),
    Link("infiniband", "InfiniBand", "the GPU's InfiniBand port, input + output"),
    Link("cpu_gpu", "CPU-GPU", "CPU-GPU transfers, one direction"),
    Link("ethernet", "Ethernet", "Ethernet share per GPU, input + output"),
    Link("nvme", "Disk (NVMe)", "NVMe solid-state drive"),
    Link("hdd", "Disk (Hard drive)", "hard-disk drive"),
)
LINK_KEYS = tuple(link.key for link in LINKS)

_RATE_UNITS = {"bytes_per_s": 1.0, "gb_per_s": float(GB), "gib_per_s": float(GIB)}
_SIZE_UNITS = {"bytes": 1.0, "gb": float(GB), "gib": float(GIB)}
_FLOP_UNITS = {"flop_per_s": 1.0}


@dataclass(frozen=True)
class Hardware:
    """One GPU and its links, all in SI units (bytes, bytes/s, flop/s).

    Attributes mirror the paper's appendix ``sec:hardware``: ``peak_flop_per_s``
    is :math:`c_\\text{gpu}`, ``memory_bytes`` is :math:`m_\\text{gpu}`, and each
    ``*_bandwidth_bytes_per_s`` is one row of ``table:hardware_bandwidth``.
    """

    name: str
    source: str
    peak_flop_per_s: float
    memory_bytes: float
    gpu_memory_bandwidth_bytes_per_s: float
    nvlink_bandwidth_bytes_per_s: float
    pcie_bandwidth_bytes_per_s: float
    infiniband_bandwidth_bytes_per_s: float
    cpu_gpu_bandwidth_bytes_per_s: float
    ethernet_bandwidth_bytes_per_s: float
    nvme_bandwidth_bytes_per_s: float
    hdd_bandwidth_bytes_per_s: float
    gpus_per_node: int
    #: Share of ``peak_flop_per_s`` the kernels reach, in (0, 1]; 1.0 is the paper's convention.
    kernel_efficiency: float = 1.0
    description: str = ""
    notes: str = ""
    path: str = ""
    #: Display names given by the spec (``infiniband_name: InfiniBand (NDR 400 Gb/s)``).
    link_names: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        _validate_values(self, origin=self.path or (self.name if isinstance(self.name, str) else "<hardware>"))

    def bandwidth(self, link: str) -> float:
        """Bandwidth of ``link`` (a key of :data:`LINKS`) in bytes/s."""
        if link not in LINK_KEYS:
            raise KeyError(f"unknown link {link!r}; expected one of {', '.join(LINK_KEYS)}")
        return getattr(self, f"{link}_bandwidth_bytes_per_s")

    def threshold(self, link: str) -> float:
        """Arithmetic-intensity threshold of ``link`` in flop/byte (``table:hardware_bandwidth``).

        An operation overlapped with a transfer over ``link`` is compute-bound when its
        arithmetic intensity is at least ``peak_flop_per_s / bandwidth`` (``eq:overlap_condition``).
        """
        return self.peak_flop_per_s / self.bandwidth(link)

    def thresholds(self) -> dict[str, float]:
        """All thresholds, keyed by link, in the paper's order."""
        return {key: self.threshold(key) for key in LINK_KEYS}

    def replace(self, **changes: Any) -> "Hardware":
        """A copy with some fields changed (validated like a loaded spec)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        unknown = sorted(set(changes) - set(values))
        if unknown:
            raise HardwareSpecError(self.path or self.name, unknown[0], f"unknown field; fields are: {', '.join(values)}")
        values.update(changes)
        return Hardware(**values)


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
    "memory_bytes": Range(float(2**20), float(GIB), float(2**46), float(2**60), "bytes"),
    **{f"{key}_bandwidth_bytes_per_s": _BANDWIDTH_RANGE for key in LINK_KEYS},
    # The scaling figures' "unlimited node" is 2**40 GPUs: the upper bound leaves room for it.
    "gpus_per_node": Range(1, 1, 4096, 2**62, "GPUs"),
    "kernel_efficiency": Range(0.0, 0.05, 1.0, 1.0, "(dimensionless)", low_inclusive=False),
}

#: Quantities of a spec file: dataclass field -> (key stem, allowed units).
QUANTITIES: dict[str, tuple[str, Mapping[str, float]]] = {
    "peak_flop_per_s": ("peak", _FLOP_UNITS),
    "memory_bytes": ("memory", _SIZE_UNITS),
    **{f"{key}_bandwidth_bytes_per_s": (f"{key}_bandwidth", _RATE_UNITS) for key in LINK_KEYS},
}
_TEXT_FIELDS = {"name": True, "source": True, "description": False, "notes": False}
_LINK_NAME_KEYS = {f"{key}_name": key for key in LINK_KEYS}
_INTEGER_FIELDS = {"gpus_per_node"}
_OPTIONAL_NUMBERS = {"kernel_efficiency": 1.0}


def allowed_keys() -> list[str]:
    """Every key a spec file may hold: the text fields, the counts, the link names, and each quantity in each unit allowed for it."""
    keys = list(_TEXT_FIELDS) + sorted(_INTEGER_FIELDS) + list(_OPTIONAL_NUMBERS) + list(_LINK_NAME_KEYS)
    for stem, units in QUANTITIES.values():
        keys.extend(f"{stem}_{unit}" for unit in units)
    return keys


def _as_positive_number(origin: str, key: str, value: Any, *, integer: bool = False) -> float:
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


def _check_range(origin: str, key: str, field: str, si_value: float, given: str, warn: bool = True) -> None:
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


def _validate_values(hardware: Hardware, origin: str) -> None:
    """Types of every field, positive and finite (run on every construction).

    The plausible ranges of :data:`RANGES` apply to files only: the scaling analysis builds
    idealized hardware on purpose (``memory_bytes=1e30``, 2**40 GPUs per node)."""
    for field, required in _TEXT_FIELDS.items():
        value = getattr(hardware, field)
        if not isinstance(value, str) or (required and not value.strip()):
            raise HardwareSpecError(origin, field, f"expected a non-empty string, got {value!r}")
    if not isinstance(hardware.path, str):
        raise HardwareSpecError(origin, "path", f"expected a string, got {hardware.path!r}")
    for field in list(QUANTITIES) + ["gpus_per_node", "kernel_efficiency"]:
        integer = field in _INTEGER_FIELDS
        value = _as_positive_number(origin, field, getattr(hardware, field), integer=integer)
        value = value if integer else float(value)
        if value < sys.float_info.min:
            raise HardwareSpecError(origin, field, f"{value!r} is subnormal; expected a positive number")
        if field == "kernel_efficiency":
            _check_range(origin, field, field, value, f"{value:g}", warn=False)
        object.__setattr__(hardware, field, value)
    names = hardware.link_names
    if not isinstance(names, tuple) or not all(
        isinstance(pair, tuple) and len(pair) == 2 and pair[0] in LINK_KEYS and isinstance(pair[1], str) for pair in names
    ):
        raise HardwareSpecError(origin, "link_names", f"expected a tuple of (link, name) pairs, got {names!r}")


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
    for field, required in _TEXT_FIELDS.items():
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
        number = _as_positive_number(origin, key, spec[key])
        try:
            si_value = float(number) * units[given[0]]
        except OverflowError:
            si_value = math.inf
        _check_range(origin, key, field, si_value, f"{number:g}")
        values[field] = si_value
    if "gpus_per_node" not in spec:
        raise HardwareSpecError(origin, "gpus_per_node", "missing; expected a positive integer")
    values["gpus_per_node"] = _as_positive_number(origin, "gpus_per_node", spec["gpus_per_node"], integer=True)
    _check_range(origin, "gpus_per_node", "gpus_per_node", values["gpus_per_node"], f"{values['gpus_per_node']}")
    for field, default in _OPTIONAL_NUMBERS.items():
        number = float(_as_positive_number(origin, field, spec.get(field, default)))
        _check_range(origin, field, field, number, f"{number:g}")
        values[field] = number
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
            if not candidate.is_file():
                problem = "is a folder, expected a YAML file" if candidate.is_dir() else "no such file"
                raise HardwareSpecError(str(candidate), "<file>", problem)
        except (OSError, ValueError) as error:  # a name too long, a NUL byte
            raise HardwareSpecError(str(candidate)[:200], "<file>", f"cannot be read: {error}") from None
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
