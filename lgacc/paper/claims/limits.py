"""Calculators of the scaling analysis' claims (sec:scaling_analysis, the computational wall): size limits, the
times and memories at them, and the time of a given size, each read along the curves the way the paper reads its
figures.

The reading is the scaling analysis' own (:data:`lgacc.scaling.SCALING_ASSUMPTIONS`): memory an output of the
fastest configuration, tensor parallelism by the 25 % overhead cap alone, the limits interpolated log-log between
the models ``x = 2^k``.  Every claim also tries the other readings of :data:`READINGS` (each a named switch of
:class:`~lgacc.model.assumptions.Assumptions`, computed in full); the first that agrees explains it.  Where none
does, :func:`_bound_demonstration` shows that nothing under the paper's rules reaches the printed number: the
memory or time *floor* (:mod:`lgacc.scaling.bounds`) no configuration beats, read on every model and on the grid.
"""

from __future__ import annotations

import math
from typing import Callable

from lgacc.model.hardware import Hardware
from lgacc.model.transformer import x_model
from lgacc.scaling import (
    ONE_YEAR_DAYS,
    SCALING_ASSUMPTIONS,
    along_curve,
    bound_limit,
    feasibility_limit,
    offload_limit,
    time_limit,
)

from .grading import Alternative, Demonstration, Outcome

__all__ = ["READINGS", "TABLES_READING", "GRID_CLAIMS", "limit_calculator", "memory_limit_years", "years_at",
           "tensor_16_from_cap", "grid_moves"]

#: The tables' reading of the same switches: memory a rule (offload when needed), at most one device per head and
#: whole heads per device (``lgacc.model.assumptions``'s defaults), on the same grid.
TABLES_READING = {"memory_limit": "constraint", "heads_cap": True, "divisible_heads": True}
#: The other readings each scaling claim is computed under, in the order tried: the fine grid, whole heads per
#: device (on either grid), and the tables' reading.
READINGS: tuple[dict, ...] = (
    {"scaling_grid": "fine"},
    {"divisible_heads": True},
    {"divisible_heads": True, "scaling_grid": "fine"},
    TABLES_READING,
)
#: "Decades" and other time words are read in years; the overhead cap the paper states (eq:overhead_condition).
PAPER_CAP = 0.25
#: A cap of a third: an efficiency of at least 75 %, the other reading of "a maximum overhead of 25 %" (what the
#: paper would have needed where its own cap falls short).
THIRD_CAP = 1 / 3


def _name(switches: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in switches.items())


def _alternative(switches: dict, compute: Callable) -> Alternative:
    """``compute(assumptions)`` under the scaling reading with ``switches``, or a note why it gave nothing."""
    try:
        value = compute(SCALING_ASSUMPTIONS.replace(**switches))
    except Exception as error:  # an alternative that cannot run is reported, not raised
        return Alternative(_name(switches), None, f"{type(error).__name__}: {error}")
    return Alternative(_name(switches), None if value is None else float(value))


def _limit(kind: str, hardware: Hardware, scenario: str, days: float | None, assumptions):
    if kind == "feasible":
        return feasibility_limit(hardware, scenario, assumptions=assumptions)
    if kind == "offload":
        return offload_limit(hardware, scenario, assumptions=assumptions)
    return time_limit(days, hardware, scenario, assumptions=assumptions)


def _read(limit, quantity: str):
    if limit is None:
        return None
    return {"p": limit.p, "memory": limit.memory_gib, "years": limit.time_days / ONE_YEAR_DAYS}[quantity]


def _bound_demonstration(kind: str, hardware: Hardware, scenario: str, days: float | None,
                         alternatives: tuple[Alternative, ...]) -> Demonstration | None:
    """The readings computed and the floor's limit: no configuration within the paper's rules goes beyond it."""
    bound = bound_limit("memory" if kind == "feasible" else "time", hardware, scenario, days)
    if bound is None:
        return None
    third = bound_limit("memory" if kind == "feasible" else "time", hardware, scenario, days, max_overhead=THIRD_CAP)
    what = ("its non-offloadable memory, (6 p_l + d_s m_0) / n_a at b_mu = 1 and the largest n_a the 25 % cap allows"
            if kind == "feasible" else
            "its time with floor(b_c) n_a GPUs at no overhead but the tensor all-reduces, at the best n_a the 25 % cap "
            "allows")
    statement = (f"No configuration within the paper's rules beats {what}; {bound.how}, so no choice of the other "
                 f"degrees, read on either grid, reaches beyond {bound.p:.3g} parameters")
    readings = alternatives + (Alternative("the floor, the more favourable of every model and the 2^k grid", bound.p),)
    needed = "" if third is None else (f"the printed number needs more than the paper's cap: with a cap of a third "
                                       f"(an efficiency of 75 %) the floor reaches {third.p:.3g}")
    return Demonstration(statement, readings, needed)


def limit_calculator(kind: str, scenario: str, quantity: str, days: float | None = None,
                     demonstrate: bool = False) -> Callable[[Hardware], Outcome]:
    """A limit (``kind``: ``feasible`` memory, ``offload``, ``time``) of ``scenario`` read as ``quantity`` (``p``,
    ``memory`` at the limit, ``years`` to train it), under the scaling reading and every reading of :data:`READINGS`;
    ``demonstrate`` adds the floor's bound (the claims no reading reaches)."""
    def calculate(hardware: Hardware) -> Outcome:
        limit = _limit(kind, hardware, scenario, days, SCALING_ASSUMPTIONS)
        if limit is None:
            return Outcome(None, f"no limit found on the grid of the {scenario} scenario")
        alternatives = tuple(_alternative(sw, lambda a: _read(_limit(kind, hardware, scenario, days, a), quantity))
                             for sw in READINGS)
        demonstration = _bound_demonstration(kind, hardware, scenario, days, alternatives) if demonstrate else None
        return Outcome(_read(limit, quantity), f"improved method, {scenario} scenario, memory as an output: {limit.how}",
                       alternatives, demonstration)
    return calculate


def memory_limit_years(hardware: Hardware) -> Outcome:
    """The training time of the largest model the GPU's memory holds ("such model would take up to four years")."""
    return limit_calculator("feasible", "limited", "years")(hardware)


def _years_along(p: float, hardware: Hardware, assumptions) -> float | None:
    found = along_curve(p, hardware, "limited", assumptions=assumptions)
    return None if found is None else found[0]["time_days"] / ONE_YEAR_DAYS


def years_at(p: float, demonstrate: bool = False) -> Callable[[Hardware], Outcome]:
    """The training time of a ``p``-parameter model read along the improved method's curve (limited scenario);
    ``demonstrate``: the curve's configurations show the minimum is no longer (the claims no reading reaches)."""
    def calculate(hardware: Hardware) -> Outcome:
        found = along_curve(p, hardware, "limited")
        if found is None:
            return Outcome(None, f"{p:.3g} parameters lie outside the grid or beyond a feasible configuration")
        at_p, low, high = found
        how = (f"{p:.3g} parameters, between {low['model']} ({low['time_days'] / ONE_YEAR_DAYS:.3g} y, n_a = "
               f"{low['n_a']:g}) and {high['model']} ({high['time_days'] / ONE_YEAR_DAYS:.3g} y, n_a = {high['n_a']:g}) "
               "on the fastest improved curve, memory as an output, log-log")
        # memory as a rule leaves no configuration of these sizes: the tables' reading has no time to show
        readings = tuple(_alternative(sw, lambda a: _years_along(p, hardware, a)) for sw in READINGS
                         if sw is not TABLES_READING)
        demonstration = None
        if demonstrate:
            demonstration = Demonstration(
                f"Every configuration on the curve obeys the paper's rules, so the minimum training time at "
                f"{p:.3g} parameters is at most what the curve reads: {at_p['time_days'] / ONE_YEAR_DAYS:.3g} years "
                "(with memory a rule, no configuration of this size fits at all)", readings)
        return Outcome(at_p["time_days"] / ONE_YEAR_DAYS, how, readings, demonstration)
    return calculate


def tensor_16_from_cap(hardware: Hardware) -> Outcome:
    """"A maximum overhead of 25 %, which for large models (above ~50 billion parameters) allows the practical limit
    n_a = 16": where the tensor overhead of 16 devices over NVLink falls to the cap along the X family (every even x,
    log-log between the two neighbours)."""
    from lgacc.model.evaluator import evaluate_many

    def overhead(x: int) -> float:
        r = evaluate_many(x_model(x), hardware, "improved", n_b=1, n_a=16, assumptions=SCALING_ASSUMPTIONS)
        return float(r["tensor"])

    previous = None
    for x in range(4, 1025, 2):
        cost = overhead(x)
        if cost <= PAPER_CAP and previous is not None:
            (x0, c0), p0, p1 = previous, float(x_model(previous[0]).p), float(x_model(x).p)
            t = (math.log(PAPER_CAP) - math.log(c0)) / (math.log(cost) - math.log(c0))
            p = math.exp(math.log(p0) + t * (math.log(p1) - math.log(p0)))
            return Outcome(p, f"16-way tensor parallelism over NVLink costs {c0:.3f} at X{x0} ({p0:.3g} parameters) and "
                              f"{cost:.3f} at X{x} ({p1:.3g}) (eq:tensor_intensity against the NVLink threshold); it "
                              f"reaches the 25 % cap (eq:overhead_condition) at {p:.3g} parameters, log-log")
        previous = (x, cost)
    return Outcome(None, "16-way tensor parallelism stays above the 25 % cap up to X1024 on this hardware")


#: The claims read off the scaling curves: the ones whose value depends on the grid.
GRID_CLAIMS = ("memory_limit_80gb", "offload_needed_above", "memory_limit_train_years", "one_month_limit",
               "one_month_memory", "one_year_limit", "one_year_memory", "unlimited_node_memory_limit",
               "unlimited_node_one_month", "unlimited_node_one_year", "fifty_trillion_at_least_a_year",
               "quadrillion_decades")
_FINE = _name({"scaling_grid": "fine"})


def grid_moves(records) -> list[dict]:
    """Each limit read on the paper's grid ``x = 2^k`` and on the fine grid (the claims' own computations, from
    their records: the value and its ``scaling_grid='fine'`` alternative), and how far the grid moves it."""
    rows = []
    for r in records:
        if r["id"] not in GRID_CLAIMS:
            continue
        fine = next((a["reproduced"] for a in r.get("alternatives") or () if a["assumption"] == _FINE), None)
        pow2 = r.get("reproduced")
        moves = None if fine is None or pow2 is None or not pow2 else fine / pow2
        rows.append({"claim": r["id"], "printed": r["printed"], "unit": r["unit"], "on x = 2^k": pow2, "on the fine grid": fine,
                     "fine / 2^k": moves, "verdict": r["verdict"]})
    return rows
