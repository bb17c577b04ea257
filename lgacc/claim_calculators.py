"""Calculators of the paper's prose claims (``data/paper/claims.yaml``), one per claim id.

Each calculator takes the hardware and returns ``(value in the claim's unit, how)``;
:mod:`lgacc.claims` compares the value with the printed one.  The numbers come
from the derivations (:mod:`lgacc.formulas`), the search (:mod:`lgacc.search`)
and the scaling sweeps (:mod:`lgacc.scaling`); none is typed in from the paper.

Claims of sec:trillion_parameter use X160 (``x160_*``, ``improved_min_memory``)
and the fastest "3d" configurations; those of sec:scaling_analysis and
sec:slow_network use the improved method's curves of ``fig:scaling_limited``,
``fig:scaling_unlimited`` and ``fig:scaling_Ethernet``.
"""

from __future__ import annotations

from typing import Callable

from .evaluate import DEFAULT_STEPS, SECONDS_PER_DAY
from .formulas import derivation
from .hardware import GIB, Hardware
from .models import x_model
from .scaling import ONE_MONTH_DAYS, ONE_YEAR_DAYS, feasibility_limit, offload_limit, scenario_hardware, time_limit
from .search import fastest
from .symbols import b, d_a, d_l, d_m, d_s, n_I

#: The trillion-parameter example of sec:trillion_parameter.
TRILLION_X = 160

__all__ = ["CALCULATORS", "TRILLION_X", "total_flops"]


def total_flops(x: int = TRILLION_X, steps: int = DEFAULT_STEPS) -> float:
    """Flops of ``steps`` batches at the critical batch: the derivation ``compute_per_batch`` (8 b d_s p)."""
    model = x_model(x)
    expr = derivation("compute_per_batch").paper
    values = {b: model.critical_batch, d_s: model.d_s, d_m: model.d_m, d_l: model.d_l, d_a: model.d_a, n_I: model.n_I}
    return float(expr.subs(values)) * steps


def _x160_flops(hardware: Hardware) -> tuple[float, str]:
    m = x_model(TRILLION_X)
    value = total_flops()
    printed_b_c = float(f"{m.critical_batch:.3g}")
    rounded = value * printed_b_c / m.critical_batch
    return value, (f"8 b_c d_s p (derivation compute_per_batch) for X160 at b_c = {m.critical_batch:.1f}, "
                   f"d_s = {m.d_s}, times {DEFAULT_STEPS:,} steps; with b_c rounded to {printed_b_c:g} as table:x_model "
                   f"prints it, the same formula gives {rounded:.3g}, so a last-digit difference comes from that rounding")


def _x160_exaflop_days(hardware: Hardware) -> tuple[float, str]:
    return total_flops() / (1e18 * SECONDS_PER_DAY), "X160 total flops / (1e18 flop/s x 86400 s)"


def _x160_gpu_days(hardware: Hardware) -> tuple[float, str]:
    return (total_flops() / (hardware.peak_flop_per_s * SECONDS_PER_DAY),
            f"X160 total flops / ({hardware.peak_flop_per_s:.3g} flop/s peak x 86400 s), at perfect efficiency")


class _NotTrainable(Exception):
    """X160 has no feasible configuration on this hardware: the claim has no value, only this sentence."""


def _fastest(hardware: Hardware, method: str, scenario: str = "limited"):
    result = fastest(x_model(TRILLION_X), scenario_hardware(hardware, scenario), method, "3d", explain=False)
    if result.evaluation is None:
        raise _NotTrainable(f"X160 cannot be trained with the {method} method on {hardware.name} "
                            f"({scenario} scenario): no feasible 3d configuration")
    return result


def _degrading(calculate: Callable[[Hardware], tuple[float, str]]) -> Callable[[Hardware], tuple[float | None, str]]:
    """The calculator, returning ``(None, why)`` instead of raising where X160 cannot be trained."""

    def degraded(hardware: Hardware) -> tuple[float | None, str]:
        try:
            return calculate(hardware)
        except _NotTrainable as reason:
            return None, str(reason)

    return degraded


def _describe(result) -> str:
    c, e = result.config, result.evaluation
    return (f"n_b={c.n_b}, n_l={c.n_l}, n_a={c.n_a}, n_mu={c.n_mu}, b_mu={c.b_mu}: {e.n_gpu} GPUs at "
            f"efficiency {e.efficiency:.2f}, {e.time_days:.3g} d, {e.memory.total / GIB:.3g} GB")


def _improved_min_memory(hardware: Hardware) -> tuple[float, str]:
    r = _fastest(hardware, "improved")
    return r.evaluation.memory.total / GIB, f"total memory per GPU of the fastest improved 3d configuration of X160 ({_describe(r)})"


def _baseline_time(hardware: Hardware) -> tuple[float, str]:
    r = _fastest(hardware, "baseline")
    return r.evaluation.time_days, f"fastest baseline 3d configuration of X160 ({_describe(r)})"


def _improved_time(hardware: Hardware) -> tuple[float, str]:
    r = _fastest(hardware, "improved")
    return r.evaluation.time_days, f"fastest improved 3d configuration of X160 ({_describe(r)})"


def _speedup(hardware: Hardware) -> tuple[float, str]:
    base, impr = _fastest(hardware, "baseline"), _fastest(hardware, "improved")
    return (base.evaluation.time_days / impr.evaluation.time_days,
            f"X160 fastest baseline time {base.evaluation.time_days:.3g} d over fastest improved {impr.evaluation.time_days:.3g} d "
            "(the trillion-parameter scale; the ratio varies along fig:scaling_limited)")


def _ethernet_slowdown(hardware: Hardware) -> tuple[float, str]:
    ib, eth = _fastest(hardware, "improved"), _fastest(hardware, "improved", "ethernet")
    slowdown = eth.evaluation.time_days / ib.evaluation.time_days - 1
    how = (f"X160 improved: {eth.evaluation.time_days:.3g} d over 25 Gb/s Ethernet ({_describe(eth)}) against "
           f"{ib.evaluation.time_days:.3g} d over InfiniBand")
    ci, ce = ib.config, eth.config
    if slowdown > 0.1:
        how += (f"; over the slower link the gradient reduction needs more micro-batches per data-parallel instance, "
                f"so the search trades data parallelism (n_b {ci.n_b} -> {ce.n_b}) for pipeline parallelism "
                f"(n_l {ci.n_l} -> {ce.n_l}) and its bubble: fewer GPUs at a lower efficiency, a larger slowdown than the paper's")
    return slowdown, how


def _limit_calculator(kind: str, scenario: str, quantity: str, days: float | None = None, note: str = ""):
    def calculate(hardware: Hardware) -> tuple[float, str]:
        if kind == "feasible":
            limit = feasibility_limit(hardware, scenario)
        elif kind == "offload":
            limit = offload_limit(hardware, scenario)
        else:
            limit = time_limit(days, hardware, scenario)
        if limit is None:
            return None, f"no limit found on the sweep grid of the {scenario} scenario"
        value = limit.p if quantity == "p" else limit.memory_gib
        return value, f"improved method, {scenario} scenario: {limit.how}" + (f"; {note}" if note else "")

    return calculate


_TENSOR_CAP = ("tensor parallelism beyond 16 GPUs goes over InfiniBand, whose tensor overhead exceeds the 25 % cap "
               "until larger models than the model's memory allows")
_HEADS = "tensor parallelism cannot exceed the head count n_a <= d_a = x/2, which bounds the split of the buffers and activations"

CALCULATORS: dict[str, Callable[[Hardware], tuple[float, str]]] = {
    "x160_total_flops": _x160_flops,
    "x160_exaflop_days": _x160_exaflop_days,
    "x160_gpu_days": _x160_gpu_days,
    "improved_min_memory": _improved_min_memory,
    "memory_limit_80gb": _limit_calculator("feasible", "limited", "p", note=f"what bounds it: {_TENSOR_CAP}"),
    "offload_needed_above": _limit_calculator("offload", "limited", "p"),
    "one_month_limit": _limit_calculator("time", "limited", "p", ONE_MONTH_DAYS),
    "one_month_memory": _limit_calculator("time", "limited", "memory", ONE_MONTH_DAYS),
    "one_year_limit": _limit_calculator("time", "limited", "p", ONE_YEAR_DAYS),
    "one_year_memory": _limit_calculator("time", "limited", "memory", ONE_YEAR_DAYS),
    "unlimited_node_memory_limit": _limit_calculator("feasible", "unlimited", "p", note=f"what bounds it: {_HEADS}"),
    "unlimited_node_one_month": _limit_calculator("time", "unlimited", "p", ONE_MONTH_DAYS),
    "unlimited_node_one_year": _limit_calculator("time", "unlimited", "p", ONE_YEAR_DAYS),
    "ethernet_x160_slowdown": _ethernet_slowdown,
    "baseline_min_time_1t": _baseline_time,
    "improved_min_time_1t": _improved_time,
    "improved_speedup_over_baseline": _speedup,
}

#: On hardware where X160 cannot be trained (a 4 GiB GPU), its claims say so instead of raising.
CALCULATORS = {claim: _degrading(calculate) for claim, calculate in CALCULATORS.items()}
