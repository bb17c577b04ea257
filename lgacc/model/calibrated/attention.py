"""Fused attention's efficiency from its authors' measured speeds, by GPU, kernel and sequence length.

``data/calibrated/attention_kernels.yaml`` holds the published forward and backward speeds of the fused
attention kernels (FlashAttention-2 and cuDNN's, FlashAttention-3's paper, H100) by sequence length.  The
calibrated model spends ``F`` executed flops forward and ``2.5 F`` backward (:func:`.gemm.flash_times`) at one
rate ``kappa e_att c``; :func:`attention_efficiency` gives ``e_att`` of a run as the kernel's measured forward and
backward speeds at the run's sequence length, combined in that proportion::

    e_att = 3.5 / (c / fwd + 2.5 c / bwd)

(the largest sequence length of the table not above the run's; the first one below the table).  A GPU without
a table keeps the calibration's ``attention_efficiency`` (FlashAttention-2 on A100, Dao 2023), unless the GPU's GEMM
table by shape also times its attention (:func:`.gemm_table.shape_attention_efficiency`: the B200's, SimuMax's).

A kernel published only as a speed-up of another (the file's ``derived`` section: ``triton``, FlashAttention in Triton,
which FlashAttention-2 beats 1.3-1.5 times forward and 2 times backward, Dao 2023) is the base kernel's forward and
backward speeds divided by those speed-ups wherever a table holds the base; elsewhere the calibration's
``attention_efficiency`` with both passes slowed alike, ``3.5 / (s_fwd + 2.5 s_bwd)`` of it
(:func:`fallback_factor`).  ``kappa``
multiplies it as it multiplies the GEMMs' best efficiency: the share of a kernel's best that training reaches.

``python -m lgacc.model.calibrated.attention`` prints each table's efficiencies.
"""

from __future__ import annotations

import sys
from functools import cache
from typing import Any

from lgacc.errors import UserInputError
from lgacc.paths import DATA
from lgacc.yamlfile import load_yaml_mapping

__all__ = ["ATTENTION_FILE", "KERNELS", "MEASURED_KERNELS", "attention_tables", "attention_efficiency",
           "kernel_measured", "combined_efficiency", "derived_kernels", "fallback_factor", "main"]

ATTENTION_FILE = DATA / "calibrated" / "attention_kernels.yaml"
#: The fused-attention kernels the file's tables measure.
MEASURED_KERNELS = ("fa2", "cudnn")
#: The fused-attention kernels a recipe may name (``attention_kernel``): the measured ones and those derived from them.
KERNELS = ("fa2", "cudnn", "triton")


def combined_efficiency(forward_tflops: float, backward_tflops: float, peak_tflops: float) -> float:
    """``3.5 / (c / fwd + 2.5 c / bwd)``: the share of the peak of a forward and its backward (2.5 times the flops)."""
    return 3.5 / (peak_tflops / forward_tflops + 2.5 * peak_tflops / backward_tflops)


@cache
def derived_kernels() -> dict[str, dict[str, Any]]:
    """The file's ``derived`` kernels, checked: ``{kernel: {"from": base, "forward_speedup": s_fwd,
    "backward_speedup": s_bwd}}`` (the base kernel's speeds over the speed-ups)."""
    data = load_yaml_mapping(ATTENTION_FILE, "attention kernel file")
    out = {}
    for kernel, spec in (data.get("derived") or {}).items():
        if kernel not in KERNELS or kernel in MEASURED_KERNELS or not isinstance(spec, dict) \
                or spec.get("from") not in MEASURED_KERNELS:
            raise UserInputError(f"{ATTENTION_FILE.name}: derived kernel {kernel!r} must be one of "
                                 f"{', '.join(k for k in KERNELS if k not in MEASURED_KERNELS)}, from one of "
                                 f"{', '.join(MEASURED_KERNELS)}")
        speedups = []
        for name in ("forward_speedup", "backward_speedup"):
            value = spec.get(name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise UserInputError(f"{ATTENTION_FILE.name}: derived kernel {kernel!r}: {name} must be a number > 0")
            speedups.append(float(value))
        out[str(kernel)] = {"from": spec["from"], "forward_speedup": speedups[0], "backward_speedup": speedups[1]}
    return out


def fallback_factor(kernel: str) -> float:
    """What a GPU without a table takes of the calibration's ``attention_efficiency`` for ``kernel``: 1 for a measured
    kernel, ``3.5 / (s_fwd + 2.5 s_bwd)`` for a derived one (both passes at the base kernel's share, slowed)."""
    spec = derived_kernels().get(kernel)
    if spec is None:
        return 1.0
    return 3.5 / (spec["forward_speedup"] + 2.5 * spec["backward_speedup"])


@cache
def attention_tables() -> tuple[dict[str, Any], ...]:
    """The tables of the data file, checked: ``gpus``, ``sequence_lengths`` and per kernel the efficiency at each
    (a derived kernel's wherever the table holds its base kernel)."""
    data = load_yaml_mapping(ATTENTION_FILE, "attention kernel file")
    derived = derived_kernels()
    out = []
    for table in data.get("tables") or ():
        lengths = [int(x) for x in table["sequence_lengths"]]
        if lengths != sorted(lengths):
            raise UserInputError(f"{ATTENTION_FILE.name}: sequence_lengths must increase")
        peak = float(table["peak_tflops"])
        kernels = {}
        for kernel, speeds in table["kernels"].items():
            if kernel not in MEASURED_KERNELS or len(speeds["forward"]) != len(lengths) \
                    or len(speeds["backward"]) != len(lengths):
                raise UserInputError(f"{ATTENTION_FILE.name}: kernel {kernel!r} must be one of "
                                     f"{', '.join(MEASURED_KERNELS)} with a forward and a backward speed per sequence "
                                     "length")
            kernels[kernel] = tuple(combined_efficiency(float(f), float(b), peak)
                                    for f, b in zip(speeds["forward"], speeds["backward"]))
            for name, spec in derived.items():
                if spec["from"] == kernel:
                    kernels[name] = tuple(combined_efficiency(float(f) / spec["forward_speedup"],
                                                              float(b) / spec["backward_speedup"], peak)
                                          for f, b in zip(speeds["forward"], speeds["backward"]))
        out.append({"gpus": tuple(str(g) for g in table["gpus"]), "sequence_lengths": tuple(lengths),
                    "kernels": kernels})
    return tuple(out)


def table_for_gpu(tables, hardware_name: str) -> dict[str, Any] | None:
    """The first of ``tables`` (each with its ``gpus``: lower-case name prefixes) whose prefixes start
    ``hardware_name``, else ``None``: how the calibrated model's measured tables (attention, GEMMs) find a GPU's."""
    name = hardware_name.lower()
    return next((table for table in tables if any(name.startswith(prefix) for prefix in table["gpus"])), None)


def _table_for(hardware_name: str) -> dict[str, Any] | None:
    return table_for_gpu(attention_tables(), hardware_name)


def kernel_measured(hardware_name: str, kernel: str) -> bool:
    """Whether this file's tables hold ``kernel`` on the GPU called ``hardware_name``."""
    table = _table_for(hardware_name)
    return table is not None and kernel in table["kernels"]


def attention_efficiency(hardware_name: str, kernel: str, d_s: float, default: float) -> float:
    """``e_att`` of ``kernel`` on the GPU called ``hardware_name`` at sequence length ``d_s``; ``default`` (the
    calibration's) times :func:`fallback_factor` where no table covers the GPU or the kernel."""
    table = _table_for(hardware_name)
    if table is None or kernel not in table["kernels"]:
        return default * fallback_factor(kernel)
    values = table["kernels"][kernel]
    index = max([0] + [i for i, length in enumerate(table["sequence_lengths"]) if length <= d_s])
    return values[index]


def main(argv: list[str] | None = None) -> int:
    for table in attention_tables():
        for kernel, values in table["kernels"].items():
            cells = ", ".join(f"{n}: {e:.3f}" for n, e in zip(table["sequence_lengths"], values))
            print(f"{'/'.join(table['gpus'])} {kernel}: e_att by sequence length {cells}")
    for kernel, spec in derived_kernels().items():
        print(f"{kernel}: {spec['from']} over {spec['forward_speedup']:g} forward, {spec['backward_speedup']:g} "
              f"backward; without a table {fallback_factor(kernel):.4f} of the calibration's attention_efficiency")
    return 0


if __name__ == "__main__":
    sys.exit(main())
