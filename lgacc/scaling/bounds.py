"""Bounds no configuration beats under the paper's rules, at each model size, and the limits they set.

A printed limit is *inconsistent* with the paper's own rules when even the most favourable configuration
misses it.  Two such bounds, each read from the evaluator at one model size:

* the **memory floor** (:func:`memory_floor_gib`): what stays on the GPU with everything offloadable
  offloaded is ``(buffers + activations) / n_a`` = ``(6 p_l + b_mu d_s m_0) / n_a``; it is smallest at
  ``b_mu = 1`` and the largest ``n_a`` the 25 % overhead cap allows (:func:`lgacc.search.candidates.tensor_cap`),
  whatever the other degrees;
* the **time floor** (:func:`time_floor_days`): a configuration's time is ``G / (n_gpu efficiency)``, with
  ``G`` the GPU-days at perfect efficiency (the same for every configuration), ``n_gpu = n_b n_l n_a``,
  ``n_b n_l <= n_b n_mu <= floor(b_c)`` (``n_mu >= n_l``, ``b_mu >= 1``) and an efficiency at most the
  tensor all-reduces' ``1 / (1 + o_a)``: so the time is at least ``G / (floor(b_c) max_n n / (1 + o_a(n)))``
  over the tensor degrees ``n`` the cap allows.  Every other overhead (bubble, gradient reduction, pipeline
  transfers) is taken as zero.

:func:`bound_limit` reads where a floor crosses a level: on every even ``x`` of the X family (a model needs
whole heads, ``d_a = x / 2``), interpolated log-log between the two neighbours, and on the paper's grid
``x = 2^k`` likewise; the larger of the two is the most favourable reading.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np

from lgacc.model.assumptions import Assumptions, apply_to_hardware
from lgacc.model.hardware import GIB, Hardware, load_hardware
from lgacc.model.transformer import x_model
from lgacc.search import SearchRequest, dimension_values, fastest_tensor_degrees, tensor_cap

from .grid import SCALING_ASSUMPTIONS, pow2_xs, scenario_hardware

__all__ = ["BoundLimit", "memory_floor_gib", "time_floor_days", "bound_limit"]


def _request(x: int, hardware: Hardware, assumptions: Assumptions, max_overhead: float | None = None) -> SearchRequest:
    options = {} if max_overhead is None else {"max_overhead": max_overhead}
    return SearchRequest.create(x_model(x), hardware, "improved", "3d", assumptions=assumptions, **options)


def _one(n_a: np.ndarray) -> dict[str, np.ndarray]:
    ones = np.ones(len(n_a), dtype=np.int64)
    return {"n_b": ones, "n_l": ones, "n_a": n_a, "n_mu": ones, "b_mu": ones, "offload": np.zeros(len(n_a), bool)}


@lru_cache(maxsize=8192)
def memory_floor_gib(x: int, hardware: Hardware, assumptions: Assumptions = SCALING_ASSUMPTIONS,
                     max_overhead: float | None = None) -> float:
    """The least non-offloadable memory (GiB per GPU) of X_[x] under the paper's rules: ``b_mu = 1`` and the
    largest tensor degree the overhead cap allows."""
    request = _request(x, hardware, assumptions, max_overhead)
    _, n_as = dimension_values(request, None)
    n_a = int(n_as[n_as <= tensor_cap(request)].max(initial=1))
    return float(request.evaluate(_one(np.array([n_a])))["non_offloadable"][0]) / GIB


@lru_cache(maxsize=8192)
def time_floor_days(x: int, hardware: Hardware, assumptions: Assumptions = SCALING_ASSUMPTIONS,
                    max_overhead: float | None = None) -> float:
    """The least training time (days) of X_[x] under the paper's rules: every GPU the critical batch allows per
    tensor-parallel group, ``floor(b_c) n_a``, at no overhead but the tensor all-reduces, at the best tensor degree
    within the cap."""
    request = _request(x, hardware, assumptions, max_overhead)
    _, n_as = dimension_values(request, None)
    degrees = fastest_tensor_degrees(request, n_as)
    r = request.evaluate(_one(degrees))
    gpu_days = float(r["time_days"][0] * r["efficiency"][0] * r["n_gpu"][0])  # the same for every configuration
    best = float(np.max(degrees / (1 + np.asarray(r["tensor"]))))
    return gpu_days / (request.batch_limit * best)


@dataclass(frozen=True)
class BoundLimit:
    """Where a floor crosses a level: ``p_models`` on every even ``x`` (log-log between neighbours), ``p_grid`` on
    ``x = 2^k`` (likewise), ``p`` the larger (the most favourable reading), and the bracketing models."""

    p: float
    p_models: float
    p_grid: float
    x_low: int
    x_high: int
    how: str


def _interpolated(x0: int, v0: float, x1: int, v1: float, level: float) -> float:
    p0, p1 = float(x_model(x0).p), float(x_model(x1).p)
    t = (math.log(level) - math.log(v0)) / (math.log(v1) - math.log(v0))
    return math.exp(math.log(p0) + t * (math.log(p1) - math.log(p0)))


def _crossing(floor: Callable[[int], float], level: float, xs: list[int]) -> tuple[float, int, int] | None:
    """The first neighbouring pair of ``xs`` whose floor passes ``level``, and the size there (log-log)."""
    values = [floor(x) for x in xs]
    for (x0, v0), (x1, v1) in zip(zip(xs, values), zip(xs[1:], values[1:])):
        if v0 <= level < v1:
            return _interpolated(x0, v0, x1, v1, level), x0, x1
    return None


def _bisected(floor: Callable[[int], float], level: float, x0: int, x1: int) -> tuple[float, int, int]:
    """The crossing between ``x0`` (below ``level``) and ``x1`` (above) on every even ``x``, by bisection: the time
    floor grows with the model (the best of the two links' tensor degrees is taken at every size)."""
    while x1 - x0 > 2:
        middle = (x0 + x1) // 4 * 2
        x0, x1 = (middle, x1) if floor(middle) <= level else (x0, middle)
    return _interpolated(x0, floor(x0), x1, floor(x1), level), x0, x1


def bound_limit(kind: str, hardware: Hardware | str = "a100-80gb", scenario: str = "limited", days: float | None = None,
                assumptions: Assumptions = SCALING_ASSUMPTIONS, max_overhead: float | None = None) -> BoundLimit | None:
    """The largest model the memory floor fits in the GPU (``kind="memory"``) or the time floor trains within
    ``days`` (``kind="time"``), by the scenario's hardware: nothing under the paper's rules goes beyond it."""
    spec = scenario_hardware(load_hardware(hardware), scenario)
    if kind == "memory":
        level = apply_to_hardware(spec, assumptions).memory_bytes / GIB
        floor = lambda x: memory_floor_gib(x, spec, assumptions, max_overhead)  # noqa: E731
        what = f"the memory floor reaches the GPU's {level:.3g} GB"
    elif kind == "time":
        level = float(days)
        floor = lambda x: time_floor_days(x, spec, assumptions, max_overhead)  # noqa: E731
        what = f"the time floor reaches {level:.4g} d"
    else:
        raise ValueError(f"unknown bound {kind!r}: memory or time")
    grid = list(pow2_xs())
    on_grid = _crossing(floor, level, grid)
    if on_grid is None:
        return None
    p_grid, x0, x1 = on_grid
    if kind == "time":
        p_models, m0, m1 = _bisected(floor, level, x0, x1)
    else:  # the memory floor drops where the cap first lets n_a leave the node: every model is read
        models = _crossing(floor, level, list(range(x0, x1 + 1, 2)))
        p_models, m0, m1 = models if models is not None else (p_grid, x0, x1)
    how = (f"{what} at {p_models:.3g} parameters (between X{m0} and X{m1}; {p_grid:.3g} read log-log between "
           f"X{x0} and X{x1})")
    return BoundLimit(max(p_models, p_grid), p_models, p_grid, m0, m1, how)
