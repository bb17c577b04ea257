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
Internally everything is SI: bytes, bytes per second and flop/s.

The paper's ``table:hardware_bandwidth`` prints thresholds ``peak / bandwidth``
which come out as printed only when its "GB" is read as GiB (2**30 bytes): at
312 Tflop/s, 2039 GB/s gives 143 flops/B with GiB and 153 with decimal GB.
``a100-80gb.yaml`` therefore stores the paper's figures in GiB.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Mapping

import yaml

from .errors import UserInputError

__all__ = [
    "GIB",
    "GB",
    "LINKS",
    "Hardware",
    "HardwareSpecError",
    "Link",
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
    description: str = ""
    notes: str = ""
    path: str = ""
    #: Display names given by the spec (``infiniband_name: InfiniBand (NDR 400 Gb/s)``).
    link_names: tuple[tuple[str, str], ...] = ()

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
        values.update(changes)
        hardware = Hardware(**values)
        _validate_values(hardware, origin=self.path or self.name)
        return hardware


class HardwareSpecError(UserInputError):
    """A hardware specification that cannot be used, with the file and field at fault."""

    def __init__(self, origin: str, field: str, problem: str):
        self.origin = origin
        self.field = field
        self.problem = problem
        super().__init__(f"{origin}: field '{field}': {problem}")


# Quantities of a spec file: dataclass field -> (key stem, allowed units).
_QUANTITIES: dict[str, tuple[str, Mapping[str, float]]] = {
    "peak_flop_per_s": ("peak", _FLOP_UNITS),
    "memory_bytes": ("memory", _SIZE_UNITS),
    **{f"{key}_bandwidth_bytes_per_s": (f"{key}_bandwidth", _RATE_UNITS) for key in LINK_KEYS},
}
_TEXT_FIELDS = {"name": True, "source": True, "description": False, "notes": False}
_LINK_NAME_KEYS = {f"{key}_name": key for key in LINK_KEYS}
_INTEGER_FIELDS = {"gpus_per_node"}


def _allowed_keys() -> list[str]:
    keys = list(_TEXT_FIELDS) + sorted(_INTEGER_FIELDS) + list(_LINK_NAME_KEYS)
    for stem, units in _QUANTITIES.values():
        keys.extend(f"{stem}_{unit}" for unit in units)
    return keys


def _as_positive_number(origin: str, key: str, value: Any, *, integer: bool = False) -> float:
    kind = "a positive integer" if integer else "a positive number"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        hint = ""
        if isinstance(value, str):
            hint = (
                " (YAML reads a float without a dot or a signed exponent, such as 312e12,"
                " as a string: write 312.0e+12)"
            )
        raise HardwareSpecError(origin, key, f"expected {kind}, got {type(value).__name__} {value!r}{hint}")
    if integer and not float(value).is_integer():
        raise HardwareSpecError(origin, key, f"expected {kind}, got {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise HardwareSpecError(origin, key, f"expected {kind} (> 0 and finite), got {value!r}")
    return int(value) if integer else float(value)


def _validate_values(hardware: Hardware, origin: str) -> None:
    for field in _QUANTITIES:
        _as_positive_number(origin, field, getattr(hardware, field))
    _as_positive_number(origin, "gpus_per_node", hardware.gpus_per_node, integer=True)
    for field, required in _TEXT_FIELDS.items():
        value = getattr(hardware, field)
        if not isinstance(value, str) or (required and not value.strip()):
            raise HardwareSpecError(origin, field, f"expected a non-empty string, got {value!r}")


def hardware_from_mapping(spec: Mapping[str, Any], origin: str = "<mapping>") -> Hardware:
    """Validate a parsed specification and convert it to SI units."""
    if not isinstance(spec, Mapping):
        raise HardwareSpecError(origin, "<top level>", f"expected a mapping of fields, got {type(spec).__name__}")
    allowed = _allowed_keys()
    unknown = [key for key in spec if key not in allowed]
    if unknown:
        raise HardwareSpecError(
            origin, str(unknown[0]), f"unknown key; allowed keys are: {', '.join(allowed)}"
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
    for field, (stem, units) in _QUANTITIES.items():
        given = [unit for unit in units if f"{stem}_{unit}" in spec]
        choices = " or ".join(f"{stem}_{unit}" for unit in units)
        if not given:
            raise HardwareSpecError(origin, choices, "missing; expected a positive number")
        if len(given) > 1:
            raise HardwareSpecError(
                origin, f"{stem}_{given[0]}", f"given more than once ({', '.join(f'{stem}_{u}' for u in given)}); keep one"
            )
        key = f"{stem}_{given[0]}"
        values[field] = _as_positive_number(origin, key, spec[key]) * units[given[0]]
    if "gpus_per_node" not in spec:
        raise HardwareSpecError(origin, "gpus_per_node", "missing; expected a positive integer")
    values["gpus_per_node"] = _as_positive_number(origin, "gpus_per_node", spec["gpus_per_node"], integer=True)
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


def hardware_path(name_or_path: str | Path, data_dir: Path = DATA_DIR) -> Path:
    """Resolve a shipped name (``a100-80gb``) or a path to a spec file."""
    candidate = Path(name_or_path)
    if candidate.suffix in {".yaml", ".yml"} or candidate.exists():
        if not candidate.is_file():
            raise HardwareSpecError(str(candidate), "<file>", "no such file")
        return candidate
    shipped = data_dir / f"{name_or_path}.yaml"
    if not shipped.is_file():
        raise HardwareSpecError(
            str(name_or_path),
            "<name>",
            f"no such hardware; known names are {', '.join(available_hardware(data_dir))}, or give a path to a .yaml file",
        )
    return shipped


def load_hardware(name_or_path: str | Path | Hardware = DEFAULT_HARDWARE) -> Hardware:
    """Load and validate a hardware specification by shipped name or file path.

    Raises :class:`HardwareSpecError` naming the file, the field and what is allowed.
    """
    if isinstance(name_or_path, Hardware):
        return name_or_path
    path = hardware_path(name_or_path)
    try:
        spec = yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:
        raise HardwareSpecError(str(path), "<file>", f"not valid YAML: {error}") from None
    return hardware_from_mapping(spec if spec is not None else {}, origin=str(path))
