"""Fused attention's efficiency from measured tables, by GPU, kernel, head size and sequence length.

``data/calibrated/attention_kernels.yaml`` names, per GPU chip, a table of causal fused attention measured on it
(today the H100 SXM's, ``data/calibrated/measured/h100-sxm-2026-11-27/attention.csv``, by
``benchmarks/gpu/measure.py``: PyTorch's ``scaled_dot_product_attention(is_causal=True)`` with its flash back end,
FlashAttention-2, and its cuDNN back end, by head size 64, 96 and 128 and sequence length 512 to 32,768).  The
calibrated model spends ``F`` executed flops forward and ``2.5 F`` backward (:func:`.gemm.flash_times`, ``F`` the
causal half) at one rate ``kappa e_att c``; a measured point gives ``e_att`` as the pair's flops over its time::

    e_att = 3.5 F / (c t_forward+backward)

and a run reads its kernel's table at its head size ``d_h`` and sequence length ``d_s``: linear in
``(log d_h, log d_s)`` between the measured points, clamped to the measured range (:mod:`.lookup`, as the GEMM
table is read).  A GPU without a table keeps the calibration's ``attention_efficiency`` (FlashAttention-2 on A100,
Dao 2023), unless the GPU's GEMM table by shape also times its attention
(:func:`.gemm_table.shape_attention_efficiency`: the B200's, SimuMax's).

The kernels' authors publish faster speeds (the file's ``published`` section: FlashAttention-3's paper, head size 128,
H100), most of all at short sequences: cuDNN's 8 % above ours at 8,192 tokens and 43 % at 1,024.  The table measured
here is causal, as the runs are, and has head sizes 64 and 96, which run slower than 128; the published figures are
shown beside it on the book's page *Measured on an H100* (:func:`published_efficiency`), not read by the model.

A kernel published only as a speed-up of another (the file's ``derived`` section: ``triton``, FlashAttention in Triton,
which FlashAttention-2 beats 1.3-1.5 times forward and 2 times backward, Dao 2023) is the base kernel's forward and
backward times multiplied by those speed-ups wherever a table holds the base (the measured forward alone, and the
backward as the pair's time less it); elsewhere the calibration's ``attention_efficiency`` with both passes slowed
alike, ``3.5 / (s_fwd + 2.5 s_bwd)`` of it (:func:`fallback_factor`).  ``kappa`` multiplies it as it multiplies the
GEMMs' best efficiency: the share of a kernel's best that training reaches.

``python -m lgacc.model.calibrated.attention`` prints each table's efficiencies.
"""

from __future__ import annotations

import csv
import sys
from functools import cache
from typing import Any

from lgacc.errors import UserInputError
from lgacc.paths import DATA
from lgacc.yamlfile import load_yaml_mapping

from .lookup import log_weights

__all__ = ["ATTENTION_FILE", "KERNELS", "MEASURED_KERNELS", "attention_tables", "attention_efficiency",
           "published_tables", "published_efficiency",
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


#: The measured table's pass timed alone (``forward``, under ``no_grad``) and with its backward.
_FORWARD, _PAIR = "forward", "forward+backward"


def _read_measured(table: dict[str, Any], derived: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One ``tables`` entry read from its file: ``gpus``, ``source``, ``head_dims``, ``sequence_lengths`` (increasing)
    and per kernel (the recipe's names: the file's back ends through ``backends``, then the derived kernels of a
    measured base) the efficiency grid ``[head_dim][sequence_length]``."""
    path = ATTENTION_FILE.parent / str(table.get("file"))
    backends = table.get("backends")
    if not isinstance(backends, dict) or not set(backends.values()) <= set(MEASURED_KERNELS):
        raise UserInputError(f"{ATTENTION_FILE.name}: a table's backends must map the file's back ends to "
                             f"{', '.join(MEASURED_KERNELS)}")
    peak = float(table["peak_tflops"]) * 1e12
    times: dict[tuple[str, int, int, str], tuple[float, float]] = {}
    try:
        with open(path, newline="") as handle:
            for row in csv.DictReader(handle):
                if row["backend"] in backends and row["pass"] in (_FORWARD, _PAIR):
                    key = (backends[row["backend"]], int(row["head_dim"]), int(row["seq"]), row["pass"])
                    times[key] = (float(row["flops"]), float(row["seconds"]))
    except (OSError, KeyError, ValueError) as error:
        raise UserInputError(f"{ATTENTION_FILE.name}: cannot read the attention table {path}: {error}") from None
    head_dims = sorted({key[1] for key in times})
    lengths = sorted({key[2] for key in times})
    kernels: dict[str, tuple[tuple[float, ...], ...]] = {}
    for kernel in sorted(set(backends.values())):
        grid, slowed = [], {name: [] for name, spec in derived.items() if spec["from"] == kernel}
        for head_dim in head_dims:
            row, rows = [], {name: [] for name in slowed}
            for length in lengths:
                forward, pair = times.get((kernel, head_dim, length, _FORWARD)), times.get((kernel, head_dim, length, _PAIR))
                if forward is None or pair is None or not 0 < forward[1] < pair[1] or not 0 < pair[0] / pair[1] <= peak:
                    raise UserInputError(f"{ATTENTION_FILE.name}: {path} must time kernel {kernel!r} at every head size "
                                         "and sequence length, forward alone and with its backward, the pair longer "
                                         "and under the peak")
                row.append(pair[0] / pair[1] / peak)
                for name in rows:  # the base's forward and backward times slowed by the stated speed-ups
                    spec = derived[name]
                    time = forward[1] * spec["forward_speedup"] + (pair[1] - forward[1]) * spec["backward_speedup"]
                    rows[name].append(pair[0] / time / peak)
            grid.append(tuple(row))
            for name in rows:
                slowed[name].append(tuple(rows[name]))
        kernels[kernel] = tuple(grid)
        kernels.update({name: tuple(values) for name, values in slowed.items()})
    return {"gpus": tuple(str(g).lower() for g in table["gpus"]), "source": str(table["file"]),
            "head_dims": tuple(head_dims), "sequence_lengths": tuple(lengths), "kernels": kernels}


@cache
def _measured_entries() -> tuple[dict[str, Any], ...]:
    """The data file's ``tables`` entries as written, each with its ``gpus`` as lower-case name prefixes: what finds a
    GPU's table before any table is read."""
    data = load_yaml_mapping(ATTENTION_FILE, "attention kernel file")
    return tuple({**table, "gpus": tuple(str(g).lower() for g in table["gpus"])} for table in data.get("tables") or ())


@cache
def _measured_table(index: int) -> dict[str, Any]:
    """The measured table at ``index``, read and checked (:func:`_read_measured`): a GPU's run reads its own only."""
    return _read_measured(_measured_entries()[index], derived_kernels())


def attention_tables() -> tuple[dict[str, Any], ...]:
    """The measured tables of the data file, read and checked (:func:`_read_measured`)."""
    return tuple(_measured_table(i) for i in range(len(_measured_entries())))


@cache
def published_tables() -> tuple[dict[str, Any], ...]:
    """The file's ``published`` figures (the kernels' authors', one head size), checked: ``gpus``, ``head_dim``,
    ``sequence_lengths`` and per kernel the combined efficiency at each; shown beside the measured table, not read
    by the model."""
    data = load_yaml_mapping(ATTENTION_FILE, "attention kernel file")
    out = []
    for table in data.get("published") or ():
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
        out.append({"gpus": tuple(str(g) for g in table["gpus"]), "head_dim": int(table["head_dim"]),
                    "sequence_lengths": tuple(lengths), "kernels": kernels})
    return tuple(out)


def published_efficiency(hardware_name: str, kernel: str, d_s: float) -> float | None:
    """The kernel's authors' combined efficiency on this GPU at the largest published length not above ``d_s`` (the
    first below the figure), or None where they publish none."""
    table = table_for_gpu(published_tables(), hardware_name)
    if table is None or kernel not in table["kernels"]:
        return None
    index = max([0] + [i for i, length in enumerate(table["sequence_lengths"]) if length <= d_s])
    return table["kernels"][kernel][index]


def index_for_gpu(tables, hardware_name: str) -> int | None:
    """The position of the first of ``tables`` (each with its ``gpus``: lower-case name prefixes) whose prefixes
    start ``hardware_name``, else ``None``: how the calibrated model's measured tables (attention, GEMMs) find a
    GPU's, before any table is read."""
    name = hardware_name.lower()
    return next((i for i, table in enumerate(tables) if any(name.startswith(prefix) for prefix in table["gpus"])), None)


def table_for_gpu(tables, hardware_name: str) -> dict[str, Any] | None:
    """The first of ``tables`` whose prefixes start ``hardware_name`` (:func:`index_for_gpu`), else ``None``."""
    index = index_for_gpu(tables, hardware_name)
    return None if index is None else tables[index]


def _table_for(hardware_name: str) -> dict[str, Any] | None:
    index = index_for_gpu(_measured_entries(), hardware_name)
    return None if index is None else _measured_table(index)


def kernel_measured(hardware_name: str, kernel: str) -> bool:
    """Whether this file's tables hold ``kernel`` on the GPU called ``hardware_name``."""
    table = _table_for(hardware_name)
    return table is not None and kernel in table["kernels"]


def attention_efficiency(hardware_name: str, kernel: str, d_s: float, default: float, *, d_h: float) -> float:
    """``e_att`` of ``kernel`` on the GPU called ``hardware_name`` at sequence length ``d_s`` and head size ``d_h``:
    its measured table, linear in ``(log d_h, log d_s)`` and clamped; ``default`` (the calibration's) times
    :func:`fallback_factor` where no table covers the GPU or the kernel."""
    table = _table_for(hardware_name)
    if table is None or kernel not in table["kernels"]:
        return default * fallback_factor(kernel)
    grid = table["kernels"][kernel]
    i, wi = log_weights(table["head_dims"], d_h)
    j, wj = log_weights(table["sequence_lengths"], d_s)
    i, j = int(i), int(j)
    last_i, last_j = len(table["head_dims"]) - 1, len(table["sequence_lengths"]) - 1
    out = 0.0
    for di, fi in ((0, 1 - float(wi)), (1, float(wi))):
        for dj, fj in ((0, 1 - float(wj)), (1, float(wj))):
            out += fi * fj * grid[min(i + di, last_i)][min(j + dj, last_j)]
    return out


def main(argv: list[str] | None = None) -> int:
    for table in attention_tables():
        for kernel, grid in table["kernels"].items():
            for head_dim, values in zip(table["head_dims"], grid):
                cells = ", ".join(f"{n}: {e:.3f}" for n, e in zip(table["sequence_lengths"], values))
                print(f"{'/'.join(table['gpus'])} {kernel}, head size {head_dim}: e_att by sequence length {cells}"
                      f"  [{table['source']}]")
    for table in published_tables():
        for kernel, values in table["kernels"].items():
            cells = ", ".join(f"{n}: {e:.3f}" for n, e in zip(table["sequence_lengths"], values))
            print(f"published, not read: {'/'.join(table['gpus'])} {kernel}, head size {table['head_dim']}: {cells}")
    for kernel, spec in derived_kernels().items():
        print(f"{kernel}: {spec['from']} over {spec['forward_speedup']:g} forward, {spec['backward_speedup']:g} "
              f"backward; without a table {fallback_factor(kernel):.4f} of the calibration's attention_efficiency")
    return 0


if __name__ == "__main__":  # a closed pipe or Ctrl-C: one line or none, never a traceback
    from lgacc.errors import run_quietly

    sys.exit(run_quietly("python -m lgacc.model.calibrated.attention", "lgacc.model.calibrated.attention"))
