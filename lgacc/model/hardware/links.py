"""The links of ``table:hardware_bandwidth`` and the byte units a spec's quantities are given in."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GB", "GIB", "Link", "LINKS", "LINK_KEYS"]

#: A decimal gigabyte and a binary gibibyte, in bytes: a spec's key says which it means.
GB = 10**9
GIB = 2**30


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
