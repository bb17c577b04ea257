"""One GPU and its links (:class:`Hardware`, in SI units) and the quantities derived from it: each
link's bandwidth and arithmetic-intensity threshold (``table:hardware_bandwidth``)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from .checks import HardwareSpecError, validate_values
from .links import LINK_KEYS

__all__ = ["Hardware"]


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
    #: The calibrated model's best matrix-multiply efficiency of this GPU, in (0, 1]: the maximum achievable
    #: matmul flop/s over ``peak_flop_per_s`` (0.8 when the spec has none). The ideal model never reads it.
    gemm_max_efficiency: float = 0.8
    #: The vendor's dense FP8 peak (no sparsity), where it publishes one (``None``: no FP8 tensor cores or none
    #: published); ``--precision fp8`` computes at it (issue #36).
    peak_fp8_flop_per_s: float | None = None
    description: str = ""
    notes: str = ""
    path: str = ""
    #: Display names given by the spec (``infiniband_name: InfiniBand (NDR 400 Gb/s)``).
    link_names: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        validate_values(self, origin=self.path or (self.name if isinstance(self.name, str) else "<hardware>"))

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

    def at_precision(self, precision: str) -> "Hardware":
        """This GPU computing in ``precision`` (``bf16``: itself; ``fp8``: its dense FP8 peak, which every link's
        threshold then divides: the same bytes against twice the flop/s)."""
        if precision == "bf16":
            return self
        if self.peak_fp8_flop_per_s is None:
            raise HardwareSpecError(self.path or self.name, "peak_fp8_flop_per_s",
                                    "precision fp8 needs the vendor's dense FP8 peak, which this spec does not give")
        return self.replace(peak_flop_per_s=self.peak_fp8_flop_per_s)

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
