"""A co-design sweep file, read once and checked: the base spec, the hardware keys to vary, the models,
the method and the objective (:class:`Sweep`).

A sweep file is YAML (read by :func:`lgacc.yamlfile.load_yaml_mapping`: size, encoding, no aliases)::

    name: hardware-implications
    base: a100-80gb                # a shipped spec name or a spec file
    models: [X160, llama-3-70b]    # X family members and shipped model files
    method: improved               # baseline, partitioned or improved (default improved)
    parallelism: 3d                # as `lgacc optimize --parallelism` (default 3d)
    objective: fastest             # fastest, or cheapest (needs target_days)
    max_gpus: 65536                # the GPU budget (optional)
    target_days: 30                # cheapest only
    chunk_size: 8                  # designs per chunk (optional)
    vary:                          # one mapping (its product) or a list of mappings (the union)
      - split: [1, 2, 4, 8]
      - gpus_per_node: [8, 16, 72, 576]
      - memory_gib: {from: 10, to: 160, steps: 5, scale: log}

The keys that can vary are :data:`VARIABLES` (the spec's own unit suffixes) and ``split``: one GPU cut
into ``k`` smaller ones at constant totals (:mod:`.designs`), with ``split_links`` saying what happens to
the per-GPU link bandwidths.  Every error is one line naming the file, the key and the rule.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lgacc.errors import UserInputError
from lgacc.model.config import Method
from lgacc.model.hardware import GB, GIB, Hardware, check_range, load_hardware
from lgacc.model.transformer import Transformer, named_model
from lgacc.search import Parallelism, parse_parallelism
from lgacc.yamlfile import load_yaml_mapping

__all__ = ["VARIABLES", "SPLIT_LINKS", "OBJECTIVES", "MAX_DESIGNS", "Sweep", "load_sweep", "sweep_from_mapping",
           "expand_values"]

#: Sweep key -> (the :class:`Hardware` field it sets, the factor from the key's unit to SI).
VARIABLES: dict[str, tuple[str, float]] = {
    "peak_flop_per_s": ("peak_flop_per_s", 1.0),
    "peak_tflop_per_s": ("peak_flop_per_s", 1e12),
    "memory_gib": ("memory_bytes", float(GIB)),
    "memory_gb": ("memory_bytes", float(GB)),
    "gpu_memory_bandwidth_gb_per_s": ("gpu_memory_bandwidth_bytes_per_s", float(GB)),
    "gpu_memory_bandwidth_gib_per_s": ("gpu_memory_bandwidth_bytes_per_s", float(GIB)),
    "gpus_per_node": ("gpus_per_node", 1.0),
    "nvlink_bandwidth_gb_per_s": ("nvlink_bandwidth_bytes_per_s", float(GB)),
    "nvlink_bandwidth_gib_per_s": ("nvlink_bandwidth_bytes_per_s", float(GIB)),
    "infiniband_bandwidth_gb_per_s": ("infiniband_bandwidth_bytes_per_s", float(GB)),
    "infiniband_bandwidth_gib_per_s": ("infiniband_bandwidth_bytes_per_s", float(GIB)),
    "ethernet_bandwidth_gb_per_s": ("ethernet_bandwidth_bytes_per_s", float(GB)),
    "ethernet_bandwidth_gib_per_s": ("ethernet_bandwidth_bytes_per_s", float(GIB)),
}
#: What a split does to the per-GPU link bandwidths: ``divided`` by ``k`` like everything else (the node's
#: totals constant, every threshold unchanged), or ``kept`` (each small GPU keeps the big one's links).
SPLIT_LINKS = ("divided", "kept")
OBJECTIVES = ("fastest", "cheapest")
#: The most designs a sweep may expand to (a typo of a range must not start a week of work).
MAX_DESIGNS = 10_000_000
MAX_MODELS = 64
MAX_RANGE_STEPS = 100_000
_KEYS = ("name", "base", "models", "method", "parallelism", "objective", "max_gpus", "target_days", "chunk_size",
         "vary", "allow_offload")
_VARY_KEYS = (*VARIABLES, "split", "split_links")


@dataclass(frozen=True)
class Sweep:
    """A checked sweep: ``grids`` are tuples of ``(key, values)`` whose products the designs are."""

    name: str
    base: Hardware
    models: tuple[Transformer, ...]
    method: Method
    parallelism: Parallelism
    objective: str
    max_gpus: int | None
    target_days: float | None
    allow_offload: bool
    chunk_size: int | None
    grids: tuple[tuple[tuple[str, tuple[Any, ...]], ...], ...]
    origin: str = "<sweep>"


def _fail(origin: str, key: str, rule: str) -> UserInputError:
    return UserInputError(f"sweep {origin}: {key}: {rule}")


def _number(origin: str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)) \
            or float(value) <= 0:
        raise _fail(origin, key, f"{str(value)[:40]!r} must be a positive finite number")
    return float(value)


def _count(origin: str, key: str, value: Any, limit: int = 2**62) -> int:
    number = _number(origin, key, value)
    if not number.is_integer() or number > limit:
        raise _fail(origin, key, f"{str(value)[:40]!r} must be a positive integer of at most {limit}")
    return int(number)


def expand_values(origin: str, key: str, spec: Any) -> tuple[Any, ...]:
    """A list, one value, or ``{from, to, steps, scale: linear|log}`` as the tuple of its values (checked)."""
    name = key.rsplit(".", 1)[-1]
    if name == "split_links":
        values = spec if isinstance(spec, list) else [spec]
        for value in values:
            if value not in SPLIT_LINKS:
                raise _fail(origin, key, f"{str(value)[:40]!r} must be one of {', '.join(SPLIT_LINKS)}")
        return tuple(dict.fromkeys(values))
    integer = name in ("split", "gpus_per_node")
    if isinstance(spec, dict):
        unknown = sorted(set(spec) - {"from", "to", "steps", "scale"})
        if unknown or not {"from", "to", "steps"} <= set(spec):
            raise _fail(origin, key, "a range is {from: A, to: B, steps: N, scale: linear|log}")
        low, high = _number(origin, f"{key}.from", spec["from"]), _number(origin, f"{key}.to", spec["to"])
        steps = _count(origin, f"{key}.steps", spec["steps"], MAX_RANGE_STEPS)
        scale = spec.get("scale", "linear")
        if scale not in ("linear", "log"):
            raise _fail(origin, f"{key}.scale", f"{str(scale)[:40]!r} must be linear or log")
        if steps == 1:
            values = [low]
        elif scale == "log":
            ratio = math.log(high) - math.log(low)
            values = [math.exp(math.log(low) + ratio * i / (steps - 1)) for i in range(steps)]
        else:
            values = [low + (high - low) * i / (steps - 1) for i in range(steps)]
        if integer:
            values = [max(1, round(v)) for v in values]
    else:
        values = spec if isinstance(spec, list) else [spec]
        if not values:
            raise _fail(origin, key, "an empty list: give at least one value")
        values = [_count(origin, key, v) if integer else _number(origin, key, v) for v in values]
    return tuple(dict.fromkeys(values))  # each value once, in the file's order


def _grids(origin: str, vary: Any) -> tuple:
    if vary is None:
        return ((),)
    grids = vary if isinstance(vary, list) else [vary]
    if not grids:
        raise _fail(origin, "vary", "an empty list: give at least one mapping of keys to values")
    out = []
    for grid in grids:
        if not isinstance(grid, dict):
            raise _fail(origin, "vary", "each entry is a mapping of hardware keys to values or ranges")
        unknown = sorted(set(grid) - set(_VARY_KEYS))
        if unknown:
            raise _fail(origin, f"vary.{str(unknown[0])[:40]}",
                        f"not a key that can vary; keys: {', '.join(_VARY_KEYS)}")
        fields = [VARIABLES[k][0] for k in grid if k in VARIABLES]
        twice = sorted({f for f in fields if fields.count(f) > 1})
        if twice:
            raise _fail(origin, "vary", f"{twice[0]} is given in two units; give it once")
        values = tuple((str(k), expand_values(origin, f"vary.{k}", v)) for k, v in grid.items())
        for key, found in values:
            if key in VARIABLES:  # a spec file's plausible bounds: 312 flop/s is a peak given in Tflop/s
                field, factor = VARIABLES[key]
                for value in found:
                    check_range(f"sweep {origin}", f"vary.{key}", field, value * factor, f"{value:g}", warn=False)
        out.append(values)
    return tuple(out)


def _models(origin: str, models: Any) -> tuple[Transformer, ...]:
    names = models if isinstance(models, list) else [models]
    if not names or len(names) > MAX_MODELS or not all(isinstance(n, str) and n for n in names):
        raise _fail(origin, "models", f"a list of 1 to {MAX_MODELS} model names (X160, llama-3-70b, or a model file)")
    found = []
    for name in names:
        try:
            found.append(named_model(name))
        except UserInputError as error:
            raise _fail(origin, "models", str(error)) from None
    return tuple(dict.fromkeys(found))


def _design_count(grids) -> int:
    return sum(math.prod(len(values) for _, values in grid) for grid in grids)


def sweep_from_mapping(data: dict, origin: str = "<sweep>", relative_to: Path | None = None) -> Sweep:
    """The checked :class:`Sweep` of a sweep file's mapping (spec paths relative to ``relative_to``)."""
    unknown = sorted(set(data) - set(_KEYS), key=str)
    if unknown:
        raise _fail(origin, str(unknown[0])[:40], f"unknown key; keys are: {', '.join(_KEYS)}")
    for required in ("base", "models"):
        if required not in data:
            raise _fail(origin, required, "missing (required)")
    base = data["base"]
    if not isinstance(base, str) or not base:
        raise _fail(origin, "base", "a shipped spec name or a spec file path")
    if relative_to is not None and ("/" in base or base.endswith((".yaml", ".yml"))) and not Path(base).is_absolute():
        base = str(relative_to / base)
    try:
        spec = load_hardware(base)
        method = Method(data.get("method", "improved"))
    except UserInputError as error:
        raise _fail(origin, "base", str(error)) from None
    except ValueError:
        raise _fail(origin, "method",
                    f"{str(data.get('method'))[:40]!r} must be baseline, partitioned or improved") from None
    try:
        parallelism = parse_parallelism(str(data.get("parallelism", "3d")))
    except (UserInputError, ValueError) as error:
        raise _fail(origin, "parallelism", str(error)) from None
    objective = data.get("objective", "fastest")
    if objective not in OBJECTIVES:
        raise _fail(origin, "objective", f"{str(objective)[:40]!r} must be one of {', '.join(OBJECTIVES)}")
    target = data.get("target_days")
    if objective == "cheapest" and target is None:
        raise _fail(origin, "target_days", "the cheapest objective needs a target time in days")
    target = None if target is None else _number(origin, "target_days", target)
    budget = data.get("max_gpus")
    budget = None if budget is None else _count(origin, "max_gpus", budget)
    chunk = data.get("chunk_size")
    chunk = None if chunk is None else _count(origin, "chunk_size", chunk, 100_000)
    offload = data.get("allow_offload", True)
    if not isinstance(offload, bool):
        raise _fail(origin, "allow_offload", "true or false")
    grids = _grids(origin, data.get("vary"))
    if _design_count(grids) > MAX_DESIGNS:
        raise _fail(origin, "vary", f"{_design_count(grids)} designs; at most {MAX_DESIGNS} in one sweep")
    name = data.get("name", Path(origin).stem if origin != "<sweep>" else "sweep")
    return Sweep(str(name)[:200], spec, _models(origin, data["models"]), method, parallelism, objective, budget, target,
                 offload, chunk, grids, origin)


def load_sweep(path: str | Path) -> Sweep:
    """The checked :class:`Sweep` of the file at ``path``."""
    data = load_yaml_mapping(path, "sweep file")
    return sweep_from_mapping(data, str(path), Path(path).resolve().parent)
