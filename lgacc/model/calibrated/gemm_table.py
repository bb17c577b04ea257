"""A layer's matrix-multiply efficiency from a measured table, by GPU and shape.

``data/calibrated/gemm_tables.yaml`` names, per GPU chip, a table measured on it (today the H100 SXM's,
``data/calibrated/measured/h100-sxm-2026-11-26/gemm_layers.csv``): a transformer layer's four linear maps
(``qkv``, ``proj``, ``fc1``, ``fc2``, the GEMMs of :func:`.shapes.linear_gemms`) at widths ``d``, tensor-parallel
splits ``tp`` and tokens ``M``, each with its forward, input-gradient and weight-gradient product.  Each measured
point gives one efficiency per map, its three products' flops over their summed time over the peak::

    e = 3 F / (c (t_forward + t_input + t_weight))

(the calibrated model spends a forward and its two backward products at one rate).  A run's map reads the table
at its width ``d_m``, split ``n_a`` and micro-batch tokens ``T = b_mu d_s``: linear in ``(log d, log tp, log M)``
between the measured points (trilinear), clamped to the measured range (a width, split or token count beyond
the table takes the edge's value).  The query/key/value map of a run with grouped keys and values, a gated
feed-forward or another feed-forward width reads the map of the same name at the same ``(d, tp, M)``: the table
has the classic layer's shapes (``3 d``, ``d``, ``4 d``), and above ``d = 4096`` its efficiency no longer moves with
the shape (0.68-0.72).  The vocabulary head ``(T, d_v / n_a, d_m)`` reads ``fc1`` (same tokens and inner width, a
wide output).  The calibrated model times these GEMMs at ``kappa e`` (:func:`.gemm.table_gemm_time`): ``kappa``
is then the share of the isolated kernel's speed that training reaches.  A GPU without a table keeps the
saturating curve of :func:`.gemm.gemm_time` (``kappa`` times the spec's ``gemm_max_efficiency``); so do the
unfused attention's batched score products, which the table does not hold.

``python -m lgacc.model.calibrated.gemm_table`` prints each table's efficiencies.
"""

from __future__ import annotations

import csv
import sys
from functools import cache
from typing import Any

import numpy as np

from lgacc.errors import UserInputError
from lgacc.paths import DATA
from lgacc.yamlfile import load_yaml_mapping

from .attention import table_for_gpu

__all__ = ["GEMM_FILE", "MAPS", "gemm_tables", "table_for", "interpolate", "layer_efficiencies", "best_efficiency", "main"]

GEMM_FILE = DATA / "calibrated" / "gemm_tables.yaml"
#: The layer's linear maps, in the order of :func:`lgacc.model.calibrated.shapes.linear_gemms`, and their inputs.
MAPS = ("qkv", "proj", "fc1", "fc2")
_PRODUCTS = ("forward", "input_gradient", "weight_gradient")


def _read_table(path, peak_flop_per_s: float) -> dict[str, Any]:
    """``d``, ``tp``, ``M`` (the grid, increasing) and per map the efficiency array of shape ``(d, tp, M)``."""
    seconds: dict[tuple, float] = {}
    flops: dict[tuple, float] = {}
    try:
        with open(path, newline="") as handle:
            for row in csv.DictReader(handle):
                key = (int(row["d"]), int(row["tp"]), int(row["M"]), row["layer"])
                if row["product"] not in _PRODUCTS or row["layer"] not in MAPS:
                    raise ValueError(f"unknown layer {row['layer']!r} or product {row['product']!r}")
                seconds[key] = seconds.get(key, 0.0) + float(row["seconds"])
                flops[key] = flops.get(key, 0.0) + float(row["flops"])
    except (OSError, KeyError, ValueError) as error:
        raise UserInputError(f"{GEMM_FILE.name}: cannot read the GEMM table {path}: {error}") from None
    grid = [sorted({key[i] for key in seconds}) for i in range(3)]
    efficiency = {}
    for name in MAPS:
        cube = np.full([len(axis) for axis in grid], np.nan)
        for i, d in enumerate(grid[0]):
            for j, tp in enumerate(grid[1]):
                for k, m in enumerate(grid[2]):
                    key = (d, tp, m, name)
                    if key in seconds:
                        cube[i, j, k] = flops[key] / seconds[key] / peak_flop_per_s
        if np.isnan(cube).any() or not ((cube > 0) & (cube <= 1)).all():
            raise UserInputError(f"{GEMM_FILE.name}: {path} must hold every (d, tp, M) of map {name!r} "
                                 "with an efficiency in (0, 1]")
        efficiency[name] = cube
    return {"d": tuple(grid[0]), "tp": tuple(grid[1]), "M": tuple(grid[2]), "efficiency": efficiency}


@cache
def gemm_tables() -> tuple[dict[str, Any], ...]:
    """The tables of the data file, read and checked: ``gpus`` (name prefixes), ``source`` and the grid."""
    data = load_yaml_mapping(GEMM_FILE, "GEMM table file")
    out = []
    for table in data.get("tables") or ():
        path = GEMM_FILE.parent / str(table["file"])
        read = _read_table(path, float(table["peak_tflops"]) * 1e12)
        out.append({"gpus": tuple(str(g).lower() for g in table["gpus"]), "source": str(table["file"]), **read})
    return tuple(out)


def table_for(hardware_name: str) -> dict[str, Any] | None:
    """The table whose GPU names start ``hardware_name`` (as :mod:`.attention` matches), else ``None``."""
    return table_for_gpu(gemm_tables(), hardware_name)


def _weights(axis: tuple[int, ...], x) -> tuple[np.ndarray, np.ndarray]:
    """``(i, w)``: ``x`` lies at ``(1 - w)`` of grid point ``i`` and ``w`` of ``i + 1``, linear in logs, clamped."""
    logs = np.log(np.asarray(axis, dtype=float))
    lx = np.clip(np.log(np.asarray(x, dtype=float)), logs[0], logs[-1])
    if len(logs) == 1:
        return np.zeros(np.shape(lx), dtype=int), np.zeros(np.shape(lx))
    i = np.clip(np.searchsorted(logs, lx, side="right") - 1, 0, len(logs) - 2)
    return i, (lx - logs[i]) / (logs[i + 1] - logs[i])


def interpolate(table: dict[str, Any], name: str, d, tp, M) -> np.ndarray:
    """Map ``name``'s efficiency at width ``d``, split ``tp`` and tokens ``M`` (broadcastable arrays): trilinear in
    logs between the table's points, clamped to its range."""
    d, tp, M = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (d, tp, M)))
    cube = table["efficiency"][name]
    (i, wi), (j, wj), (k, wk) = _weights(table["d"], d), _weights(table["tp"], tp), _weights(table["M"], M)
    out = np.zeros(np.shape(d))
    for di, fi in ((0, 1 - wi), (1, wi)):
        for dj, fj in ((0, 1 - wj), (1, wj)):
            for dk, fk in ((0, 1 - wk), (1, wk)):
                ii = np.minimum(i + di, cube.shape[0] - 1)
                jj = np.minimum(j + dj, cube.shape[1] - 1)
                kk = np.minimum(k + dk, cube.shape[2] - 1)
                out = out + fi * fj * fk * cube[ii, jj, kk]
    return out


def layer_efficiencies(hardware_name: str, d_m, n_a, tokens) -> dict[str, Any] | None:
    """``{"qkv": e, "proj": e, "fc1": e, "fc2": e}`` on the GPU called ``hardware_name`` at width ``d_m``, split
    ``n_a`` and micro-batch tokens ``tokens`` (broadcastable arrays); ``None`` where no table covers the GPU."""
    table = table_for(hardware_name)
    if table is None:
        return None
    return {name: interpolate(table, name, d_m, n_a, tokens) for name in MAPS}


def best_efficiency(hardware_name: str) -> float | None:
    """The largest efficiency of the GPU's table (any map, any shape), ``None`` without a table: what no layer GEMM
    of the model exceeds there (the interpolation stays between measured points)."""
    table = table_for(hardware_name)
    return None if table is None else max(float(cube.max()) for cube in table["efficiency"].values())


def main(argv: list[str] | None = None) -> int:
    for table in gemm_tables():
        print(f"{'/'.join(table['gpus'])}: bf16 layer GEMM efficiency, 3 F / (c sum t), from {table['source']}")
        for index, name in enumerate(MAPS):
            print(f"  {name}: rows tp, M; columns width d")
            print("    tp      M " + "".join(f"{d:>6}" for d in table["d"]))
            for j, tp in enumerate(table["tp"]):
                for k, m in enumerate(table["M"]):
                    cells = "".join(f"{table['efficiency'][name][i, j, k]:>6.2f}" for i in range(len(table["d"])))
                    print(f"    {tp:>2} {m:>6} {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
