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

**Tables by shape.**  The file's ``shape_tables`` hold GEMM efficiencies measured by shape rather than a layer grid:
today SimuMax's B200 table (``simumax-b200-4dcaae5/b200_bf16_ceperm.json``, MooreThreads/SimuMax at 4dcaae5,
``accelerator.op.matmul.accurate_efficient_factor``: ``(b, m, k, n, layout, accumulate, out_dtype)`` over its
``tflops``), read by the B200 and by GB200 NVL72, whose GPU is the same Blackwell chip (as the H200 and H800 read the
H100's grid): the efficiencies are shares of the GPU's own peak, so a GB200 runs them at its 2.5 Pflop/s.  A linear
map ``(M, N, K)`` of :func:`.shapes.linear_gemms` (``M`` tokens, ``K`` in, ``N`` out, at the run's own widths:
grouped keys and values, gated feed-forward) spends three products, in the table's layouts::

    forward           TN   (m, k, n) = (M, K, N)
    input gradient    NN   (m, k, n) = (M, N, K)
    weight gradient   NT   (m, k, n) = (N, M, K)   accumulated into an fp32 main gradient

Each reads the entry of its layout nearest in ``(log m, log k, log n)`` (smallest sum of the three distances; a
tie goes to the entry first in the file), and the map's efficiency is ``3 / (1/e_f + 1/e_i + 1/e_w)``, the grid
tables' ``3 F / (c sum t)``.  The vocabulary head reads ``fc1``'s, as with a grid table.  A GPU covered by a grid
table reads the grid; a shape table is read only where no grid covers the GPU.

A shape table may also name a grouped-GEMM operation (``group_op``: SimuMax's ``group_matmul``, the experts' GEMMs
of a mixture of experts): entries ``(ng, M, N, K)`` (``ng`` experts on the GPU, each ``M`` tokens by a ``K x N``
weight: the forward's shape) for each stage, ``fwd``, ``bwd_grad_act`` and ``bwd_grad_w``, bf16 with an fp32 main
gradient; a stage reads its entry nearest in ``(log ng, log M, log N, log K)`` (:func:`grouped_efficiency`, used by
:mod:`.sparse`).  And fused attention (``attention_ops``: SimuMax's ``sdp_fwd``, ``sdp_bwd``) for one recipe kernel:
:func:`shape_attention_efficiency` (the data file's header states the rule).

**FP8.**  A grid table may name the GPU's products measured in both bf16 and FP8 (``fp8_products``: the same
``(M, N, K)`` timed in each precision): :func:`fp8_speedup` is the median of ``t_bf16 / t_fp8`` over the shapes
whose bf16 product reaches half the peak (compute-bound in both), the speed FP8 matrix products reach over bf16's
on that GPU (1.74 on our H100, not the 2 of the vendor's peaks).  The calibrated model runs an FP8 run's linear
maps at that multiple of its bf16 rate (:mod:`.sparse`); a GPU without such a measurement keeps the FP8 peak.

``python -m lgacc.model.calibrated.gemm_table`` prints each table's efficiencies.
"""

from __future__ import annotations

import csv
import json
import sys
from functools import cache
from typing import Any

import numpy as np

from lgacc.errors import UserInputError
from lgacc.paths import DATA
from lgacc.yamlfile import load_yaml_mapping

from .attention import index_for_gpu
from .lookup import log_weights

__all__ = ["GEMM_FILE", "MAPS", "PRODUCT_LAYOUTS", "gemm_tables", "table_for", "interpolate", "layer_efficiencies",
           "shape_tables", "shape_table_for", "product_shapes", "product_efficiency", "map_efficiencies",
           "model_layer_efficiencies", "GROUP_STAGES", "grouped_efficiency", "shape_attention_efficiency",
           "best_efficiency", "fp8_speedup", "main"]

GEMM_FILE = DATA / "calibrated" / "gemm_tables.yaml"
#: The layer's linear maps, in the order of :func:`lgacc.model.calibrated.shapes.linear_gemms`, and their inputs.
MAPS = ("qkv", "proj", "fc1", "fc2")
_PRODUCTS = ("forward", "input_gradient", "weight_gradient")


def _read_table(paths, peak_flop_per_s: float) -> dict[str, Any]:
    """``d``, ``tp``, ``M`` (the grid, increasing) and per map the efficiency array of shape ``(d, tp, M)``, from
    one or more files measured on the same kind of GPU: a point that two files measure is the first file's (a later
    lease's widths fill the grid between the first one's; the point it measured again checks the lease, unread)."""
    seconds: dict[tuple, float] = {}
    flops: dict[tuple, float] = {}
    for path in paths:
        mine: dict[tuple, list[float]] = {}
        try:
            with open(path, newline="") as handle:
                for row in csv.DictReader(handle):
                    key = (int(row["d"]), int(row["tp"]), int(row["M"]), row["layer"])
                    if row["product"] not in _PRODUCTS or row["layer"] not in MAPS:
                        raise ValueError(f"unknown layer {row['layer']!r} or product {row['product']!r}")
                    pair = mine.setdefault(key, [0.0, 0.0])
                    pair[0] += float(row["seconds"])
                    pair[1] += float(row["flops"])
        except (OSError, KeyError, ValueError) as error:
            raise UserInputError(f"{GEMM_FILE.name}: cannot read the GEMM table {path}: {error}") from None
        for key, (time, work) in mine.items():
            if key not in seconds:
                seconds[key], flops[key] = time, work
    path = ", ".join(str(p) for p in paths)
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


def _read_fp8_speedup(path, peak_flop_per_s: float) -> dict[str, Any]:
    """``{"speedup", "shapes", "low", "high"}``: the median (and range) of ``t_bf16 / t_fp8`` over the
    products measured in both precisions whose bf16 product reaches half of ``peak_flop_per_s``."""
    times: dict[tuple, dict[str, float]] = {}
    try:
        with open(path, newline="") as handle:
            for row in csv.DictReader(handle):
                if row["precision"] in ("bf16", "fp8"):
                    shape = (row["label"], int(row["M"]), int(row["N"]), int(row["K"]))
                    times.setdefault(shape, {})[row["precision"]] = float(row["seconds"])
    except (OSError, KeyError, ValueError) as error:
        raise UserInputError(f"{GEMM_FILE.name}: cannot read the FP8 products {path}: {error}") from None
    ratios = [t["bf16"] / t["fp8"] for (_, m, n, k), t in times.items()
              if "bf16" in t and "fp8" in t and t["bf16"] > 0 and t["fp8"] > 0
              and 2 * m * n * k / t["bf16"] >= peak_flop_per_s / 2]
    if not ratios:
        raise UserInputError(f"{GEMM_FILE.name}: {path} holds no compute-bound shape measured in both bf16 and fp8")
    return {"speedup": float(np.median(ratios)), "shapes": len(ratios), "low": min(ratios), "high": max(ratios)}


@cache
def _entries(kind: str) -> tuple[dict[str, Any], ...]:
    """The data file's entries of ``kind`` (``tables`` or ``shape_tables``) as written, each with its ``gpus`` (lower-case
    name prefixes): what finds a GPU's table before any table is read."""
    data = load_yaml_mapping(GEMM_FILE, "GEMM table file")
    return tuple({**table, "gpus": tuple(str(g).lower() for g in table["gpus"])} for table in data.get(kind) or ())


@cache
def _gemm_table(index: int) -> dict[str, Any]:
    """The grid table at ``index`` of the data file, read and checked (a GPU's run reads its own table only)."""
    table = _entries("tables")[index]
    files = table["file"] if isinstance(table["file"], list) else [table["file"]]
    peak = float(table["peak_tflops"]) * 1e12
    read = _read_table([GEMM_FILE.parent / str(f) for f in files], peak)
    fp8 = None
    if table.get("fp8_products"):
        fp8 = {**_read_fp8_speedup(GEMM_FILE.parent / str(table["fp8_products"]), peak),
               "source": str(table["fp8_products"])}
    return {"gpus": table["gpus"], "source": str(files[0]), "sources": tuple(str(f) for f in files), **read, "fp8": fp8}


def gemm_tables() -> tuple[dict[str, Any], ...]:
    """The tables of the data file, read and checked: ``gpus`` (name prefixes), ``source``, the grid and ``fp8``
    (:func:`_read_fp8_speedup`, or None where the table names no FP8 products)."""
    return tuple(_gemm_table(i) for i in range(len(_entries("tables"))))


def fp8_speedup(hardware_name: str) -> float | None:
    """How much faster the GPU's matrix products run in FP8 than in bf16, as measured on it (the module's
    docstring), or None where no table measures it."""
    table = table_for(hardware_name)
    return None if table is None or table["fp8"] is None else table["fp8"]["speedup"]


def table_for(hardware_name: str) -> dict[str, Any] | None:
    """The table whose GPU names start ``hardware_name`` (as :mod:`.attention` matches), else ``None``."""
    index = index_for_gpu(_entries("tables"), hardware_name)
    return None if index is None else _gemm_table(index)


def interpolate(table: dict[str, Any], name: str, d, tp, M) -> np.ndarray:
    """Map ``name``'s efficiency at width ``d``, split ``tp`` and tokens ``M`` (broadcastable arrays): trilinear in
    logs between the table's points, clamped to its range."""
    d, tp, M = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (d, tp, M)))
    cube = table["efficiency"][name]
    (i, wi), (j, wj), (k, wk) = log_weights(table["d"], d), log_weights(table["tp"], tp), log_weights(table["M"], M)
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


#: A shape table's entry kind of each product: ``(layout, accumulate, out_dtype)`` (see the module's docstring).
PRODUCT_LAYOUTS = {"forward": ("TN", "False", "bf16"), "input_gradient": ("NN", "False", "bf16"),
                   "weight_gradient": ("NT", "True", "fp32")}


_TIE = 1e-9


def _read_shape_table(path, op: str, peak_flop_per_s: float) -> dict[str, Any]:
    """Per product, the ``(m, k, n)`` of the file's entries of its kind (``shapes``, an int array ``(n, 3)``) and
    their efficiencies over ``peak_flop_per_s`` (``efficiency``), in the file's order."""
    try:
        data = json.loads(path.read_text())
        section = data["accelerator"]["op"][op]
        rate = float(section["tflops"]) * 1e12 / peak_flop_per_s
        entries = []
        for key, value in section["accurate_efficient_factor"].items():
            fields = dict(part.strip().split("=", 1) for part in key.split(","))
            entries.append((fields, float(value) * rate))
    except (OSError, KeyError, ValueError, TypeError, AttributeError) as error:
        raise UserInputError(f"{GEMM_FILE.name}: cannot read the GEMM shape table {path}: {error}") from None
    out: dict[str, Any] = {}
    for product, (layout, accumulate, out_dtype) in PRODUCT_LAYOUTS.items():
        chosen = [(f, e) for f, e in entries if f.get("layout") == layout and f.get("accumulate") == accumulate
                  and f.get("out_dtype") == out_dtype and f.get("b") == "1"]
        if not chosen or not all(0 < e <= 1 for _, e in chosen):
            raise UserInputError(f"{GEMM_FILE.name}: {path} must hold {product} entries (layout {layout}, "
                                 f"accumulate {accumulate}, out_dtype {out_dtype}) with an efficiency in (0, 1]")
        out[product] = {"shapes": np.array([[int(f["m"]), int(f["k"]), int(f["n"])] for f, _ in chosen]),
                        "efficiency": np.array([e for _, e in chosen])}
    return out


#: A grouped table's stages, in SimuMax's names: the forward, the input (activation) gradient, the weight gradient.
GROUP_STAGES = ("fwd", "bwd_grad_act", "bwd_grad_w")


def _read_group_table(path, op: str, peak_flop_per_s: float) -> dict[str, Any]:
    """Per stage (:data:`GROUP_STAGES`), the ``(ng, M, N, K)`` of the bf16 entries with an fp32 main gradient
    (``shapes``, ``(n, 4)``) and their efficiencies over ``peak_flop_per_s``, in the file's order."""
    try:
        section = json.loads(path.read_text())["accelerator"]["op"][op]
        rate = float(section["tflops"]) * 1e12 / peak_flop_per_s
        entries = [(dict(part.strip().split("=", 1) for part in key.split(",")), float(value) * rate)
                   for key, value in section["accurate_efficient_factor"].items()]
    except (OSError, KeyError, ValueError, TypeError, AttributeError) as error:
        raise UserInputError(f"{GEMM_FILE.name}: cannot read the grouped GEMM table {path}: {error}") from None
    out: dict[str, Any] = {}
    for stage in GROUP_STAGES:
        chosen = [(f, e) for f, e in entries if f.get("stage") == stage and f.get("dtype") == "bf16"
                  and f.get("main_grad_dtype") == "fp32"]
        if not chosen or not all(0 < e <= 1 for _, e in chosen):
            raise UserInputError(f"{GEMM_FILE.name}: {path} must hold {op} entries of stage {stage} (bf16, fp32 "
                                 "main gradient) with an efficiency in (0, 1]")
        out[stage] = {"shapes": np.array([[int(f[x]) for x in ("ng", "M", "N", "K")] for f, _ in chosen]),
                      "efficiency": np.array([e for _, e in chosen])}
    return out


_ATTENTION_KEYS = ("seq_len", "head_num", "kv_head_num", "qk_head_dim", "v_head_dim")


def _read_attention_table(path, ops, peak_flop_per_s: float) -> dict[str, Any]:
    """``shapes`` ``(n, 5)`` (:data:`_ATTENTION_KEYS`) of the batch-1 entries with ``qkv_contiguous=False`` found in
    both ``ops`` (forward, backward) and per op the efficiency over ``peak_flop_per_s`` in the model's count (the
    executed half of SimuMax's unmasked flops)."""
    try:
        data = json.loads(path.read_text())["accelerator"]["op"]
        read = []
        for op in ops:
            rate = float(data[op]["tflops"]) * 1e12 / peak_flop_per_s / 2
            entries = {}
            for key, value in data[op]["accurate_efficient_factor"].items():
                fields = dict(part.strip().split("=", 1) for part in key.split(","))
                if fields.get("batch") == "1" and fields.get("qkv_contiguous") == "False":
                    entries[tuple(int(fields[x]) for x in _ATTENTION_KEYS)] = float(value) * rate
            read.append(entries)
    except (OSError, KeyError, ValueError, TypeError, AttributeError) as error:
        raise UserInputError(f"{GEMM_FILE.name}: cannot read the attention table {path}: {error}") from None
    forward, backward = read
    shapes = [shape for shape in forward if shape in backward]
    if not shapes or not all(0 < e[s] <= 1 for e in read for s in shapes):
        raise UserInputError(f"{GEMM_FILE.name}: {path} must hold {ops[0]} and {ops[1]} entries of the same shapes "
                             "with an efficiency in (0, 1] (the executed half of the file's)")
    return {"shapes": np.array(shapes), "forward": np.array([forward[s] for s in shapes]),
            "backward": np.array([backward[s] for s in shapes])}


@cache
def _shape_table(index: int) -> dict[str, Any]:
    """The table by shape at ``index`` of the data file, read and checked."""
    table = _entries("shape_tables")[index]
    path = GEMM_FILE.parent / str(table["file"])
    peak = float(table["peak_tflops"]) * 1e12
    products = _read_shape_table(path, str(table["op"]), peak)
    grouped = _read_group_table(path, str(table["group_op"]), peak) if table.get("group_op") else None
    ops = table.get("attention_ops")
    attention = _read_attention_table(path, [str(op) for op in ops], peak) if ops else None
    return {"gpus": table["gpus"], "source": str(table["file"]), "origin": dict(table.get("source") or {}),
            "products": products, "grouped": grouped, "attention": attention,
            "attention_kernel": str(table.get("attention_kernel", ""))}


def shape_tables() -> tuple[dict[str, Any], ...]:
    """The file's tables by shape, read and checked: ``gpus``, ``source`` (file), ``origin`` (repository, commit,
    path) and per product (:data:`PRODUCT_LAYOUTS`) its entries' shapes and efficiencies."""
    return tuple(_shape_table(i) for i in range(len(_entries("shape_tables"))))


def shape_table_for(hardware_name: str) -> dict[str, Any] | None:
    """The shape table whose GPU names start ``hardware_name``, else ``None``."""
    index = index_for_gpu(_entries("shape_tables"), hardware_name)
    return None if index is None else _shape_table(index)


def product_shapes(M, N, K) -> dict[str, tuple]:
    """The table's ``(m, k, n)`` of the three products of the linear map ``(M, N, K)`` (``M`` tokens, ``K`` in,
    ``N`` out)."""
    return {"forward": (M, K, N), "input_gradient": (M, N, K), "weight_gradient": (N, M, K)}


def product_efficiency(table: dict[str, Any], product: str, m, k, n) -> np.ndarray:
    """The efficiency of the entry of ``product``'s kind nearest ``(m, k, n)`` (broadcastable arrays) in
    ``(log m, log k, log n)``, the sum of the three distances; the first such entry on a tie (distances within
    ``1e-9``, so that rounding of the logarithms never decides)."""
    entries = table["products"][product]
    m, k, n = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (m, k, n)))
    query = np.log(np.stack([m, k, n], axis=-1))[..., None, :]
    distance = np.abs(query - np.log(entries["shapes"].astype(float))).sum(axis=-1)
    nearest = distance <= distance.min(axis=-1, keepdims=True) + _TIE  # a tie within rounding: the first entry
    return entries["efficiency"][np.argmax(nearest, axis=-1)]


def grouped_efficiency(table: dict[str, Any], stage: str, ng, M, N, K) -> float:
    """The efficiency of ``stage``'s grouped entry nearest ``(ng, M, N, K)`` in logs (sum of the four distances;
    the first on a tie within ``1e-9``)."""
    entries = table["grouped"][stage]
    query = np.log(np.array([ng, M, N, K], dtype=float))
    distance = np.abs(query - np.log(entries["shapes"].astype(float))).sum(axis=-1)
    return float(entries["efficiency"][np.argmax(distance <= distance.min() + _TIE)])


def shape_attention_efficiency(hardware_name: str, kernel: str, d_s, d_a, d_h, d_kv, n_a,
                               d_v: float | None = None) -> np.ndarray | None:
    """``e_att`` of the recipe's ``kernel`` from the GPU's attention table by shape, at sequence ``d_s``, ``d_a / n_a``
    query and ``ceil(d_kv / n_a)`` key/value heads on the GPU, head dimension ``d_h`` (broadcastable arrays): the
    nearest entry in logs, ``3.5 / (1/e_fwd + 2.5/e_bwd)``; ``None`` where no such table covers the GPU and kernel.
    ``d_v``: the value heads' dimension where it differs from the query/key one ``d_h`` (multi-head latent attention:
    ``d_h = d_hn + d_hr``, ``d_v = d_hv``)."""
    d_v = d_h if d_v is None else d_v
    table = shape_table_for(hardware_name)
    if table is None or table["attention"] is None or table["attention_kernel"] != kernel:
        return None
    d_s, n_a = np.broadcast_arrays(np.asarray(d_s, dtype=float), np.asarray(n_a, dtype=float))
    query = np.stack([d_s, d_a / n_a, np.ceil(d_kv / n_a), np.full(np.shape(d_s), float(d_h)),
                      np.full(np.shape(d_s), float(d_v))], axis=-1)
    attention = table["attention"]
    distance = np.abs(np.log(query)[..., None, :] - np.log(attention["shapes"].astype(float))).sum(axis=-1)
    index = np.argmax(distance <= distance.min(axis=-1, keepdims=True) + _TIE, axis=-1)
    return 3.5 / (1 / attention["forward"][index] + 2.5 / attention["backward"][index])


def map_efficiencies(table: dict[str, Any], M, N, K) -> np.ndarray:
    """A linear map's efficiency from a shape table: its three products' flops over their summed time over the
    peak, ``3 / (1/e_f + 1/e_i + 1/e_w)``."""
    shapes = product_shapes(M, N, K)
    return 3 / sum(1 / product_efficiency(table, product, *shapes[product]) for product in PRODUCT_LAYOUTS)


def model_layer_efficiencies(hardware_name: str, model, n_a, tokens) -> dict[str, Any] | None:
    """The layer's map efficiencies for the transformer ``model`` (its ``d_m, d_a, d_h, d_kv, d_I, gated``) at
    split ``n_a`` and micro-batch tokens ``tokens`` (broadcastable arrays): a grid table's
    (:func:`layer_efficiencies`, by width) where one covers the GPU, else a shape table's at the run's own four
    products; ``None`` where neither covers it."""
    grid = layer_efficiencies(hardware_name, model.d_m, n_a, tokens)
    if grid is not None:
        return grid
    table = shape_table_for(hardware_name)
    if table is None:
        return None
    n_a, tokens = np.broadcast_arrays(np.asarray(n_a, dtype=float), np.asarray(tokens, dtype=float))
    h_q = model.d_a * model.d_h / n_a
    h_kv = np.ceil(model.d_kv / n_a) * model.d_h
    widths = {"qkv": (h_q + 2 * h_kv, model.d_m), "proj": (model.d_m, h_q),
              "fc1": ((1 + int(model.gated)) * model.d_I / n_a, model.d_m), "fc2": (model.d_m, model.d_I / n_a)}
    return {name: map_efficiencies(table, tokens, N, K) for name, (N, K) in widths.items()}


def best_efficiency(hardware_name: str) -> float | None:
    """The largest efficiency of the GPU's table (any map, any shape; for a shape table any entry), ``None``
    without a table: what no layer GEMM of the model exceeds there (the interpolation stays between measured
    points, a shape table's maps are harmonic means of its entries)."""
    table = table_for(hardware_name)
    if table is not None:
        return max(float(cube.max()) for cube in table["efficiency"].values())
    shaped = shape_table_for(hardware_name)
    if shaped is None:
        return None
    return max(float(p["efficiency"].max()) for p in shaped["products"].values())


def main(argv: list[str] | None = None) -> int:
    for table in gemm_tables():
        print(f"{'/'.join(table['gpus'])}: bf16 layer GEMM efficiency, 3 F / (c sum t), from {', '.join(table['sources'])}")
        for index, name in enumerate(MAPS):
            print(f"  {name}: rows tp, M; columns width d")
            print("    tp      M " + "".join(f"{d:>6}" for d in table["d"]))
            for j, tp in enumerate(table["tp"]):
                for k, m in enumerate(table["M"]):
                    cells = "".join(f"{table['efficiency'][name][i, j, k]:>6.2f}" for i in range(len(table["d"])))
                    print(f"    {tp:>2} {m:>6} {cells}")
        if table["fp8"] is not None:
            fp8 = table["fp8"]
            print(f"  FP8 over bf16, the same products (t_bf16 / t_fp8, {fp8['shapes']} compute-bound shapes of "
                  f"{fp8['source']}): median {fp8['speedup']:.3f} (from {fp8['low']:.3f} to {fp8['high']:.3f})")
    for table in shape_tables():
        origin = table["origin"]
        print(f"{'/'.join(table['gpus'])}: bf16 GEMM efficiency by shape, from {table['source']} "
              f"({origin.get('repository', '?')} at {str(origin.get('commit', '?'))[:7]}, {origin.get('path', '?')})")
        for product, (layout, accumulate, out_dtype) in PRODUCT_LAYOUTS.items():
            entries = table["products"][product]
            print(f"  {product} (layout {layout}, accumulate {accumulate}, out {out_dtype}): "
                  f"{len(entries['efficiency'])} entries")
            print("         m        k        n    e")
            for (m, k, n), e in zip(entries["shapes"], entries["efficiency"], strict=True):
                print(f"    {m:>6} {k:>8} {n:>8} {e:.3f}")
        for stage in GROUP_STAGES if table["grouped"] else ():
            entries = table["grouped"][stage]
            print(f"  grouped (experts) {stage}, bf16, fp32 main gradient: {len(entries['efficiency'])} entries")
            print("      ng      M      N      K    e")
            for (ng, m, n, k), e in zip(entries["shapes"], entries["efficiency"], strict=True):
                print(f"    {ng:>4} {m:>6} {n:>6} {k:>6} {e:.3f}")
        if table["attention"] is not None:
            attention = table["attention"]
            print(f"  fused attention (recipe kernel {table['attention_kernel']}), executed flops, batch 1: "
                  "e_att = 3.5 / (1/fwd + 2.5/bwd)")
            print("         s    h h_kv d_qk  d_v   fwd   bwd e_att")
            for shape, f, b in zip(attention["shapes"], attention["forward"], attention["backward"], strict=True):
                cells = "".join(f"{x:>5}" for x in shape[1:])
                print(f"    {shape[0]:>6}{cells} {f:.3f} {b:.3f} {3.5 / (1 / f + 2.5 / b):.3f}")
    return 0


if __name__ == "__main__":  # a closed pipe or Ctrl-C: one line or none, never a traceback
    from lgacc.errors import run_quietly

    sys.exit(run_quietly("python -m lgacc.model.calibrated.gemm_table", "lgacc.model.calibrated.gemm_table"))
