"""Calculators of the scaling analysis' claims (sec:scaling_analysis, the computational wall): size limits, the
times and memories at them, and the time of a given size, each read along the curves the way the paper reads its
figures.

Each calculator computes under the reading it is given (:class:`~lgacc.paper.claims.reading.PaperReading`): the
paper reading is the scaling analysis' own (memory an output of the fastest configuration, tensor parallelism by the
25 % overhead cap alone, the limits interpolated log-log between the models ``x = 2^k``); the other readings are
the matrix's columns.  For the claims no reading reaches, :func:`_bound_demonstration` shows that nothing under the
paper's rules reaches the printed number: the memory or time *floor* (:mod:`lgacc.scaling.bounds`) no
configuration beats, read on every model and on the grid.
"""

from __future__ import annotations

import math
import re
from typing import Callable

from lgacc.model.hardware import Hardware
from lgacc.model.transformer import x_model
from lgacc.scaling import (
    ONE_YEAR_DAYS,
    along_curve,
    bound_limit,
    feasibility_limit,
    offload_limit,
    time_limit,
)

from ..findings import readable_value
from .grading import Alternative, Demonstration, Outcome
from .reading import PAPER_CAP, PAPER_READING, PaperReading, column_name

__all__ = ["SEARCH_READS", "SCALING_READS", "GRID_CLAIMS", "limit_calculator", "memory_limit_years", "years_at",
           "tensor_16_from_cap", "tensor_onset_claim", "grid_moves"]

#: The switches a search reads (the evaluator's assumptions, the InfiniBand threshold, the GB).
SEARCH_READS = frozenset({"divisible_heads", "heads_cap", "memory_limit", "divisible_layers", "pipeline_overlap",
                          "pipeline_placement", "infiniband_threshold", "gb"})
#: The switches a scaling limit reads: a search's and the grid.
SCALING_READS = SEARCH_READS | {"scaling_grid"}
#: "Decades" and other time words are read in years; the overhead cap the paper states (eq:overhead_condition).
#: A cap of a third: an efficiency of at least 75 %, the other reading of "a maximum overhead of 25 %" (what the
#: paper would have needed where its own cap falls short).
THIRD_CAP = 1 / 3


def _limit(kind: str, hardware: Hardware, scenario: str, days: float | None, assumptions):
    if kind == "feasible":
        return feasibility_limit(hardware, scenario, assumptions=assumptions)
    if kind == "offload":
        return offload_limit(hardware, scenario, assumptions=assumptions)
    return time_limit(days, hardware, scenario, assumptions=assumptions)


def _read(limit, quantity: str, reading: PaperReading):
    if limit is None:
        return None
    memory = limit.memory_gib * 2**30 / reading.gb_bytes
    return {"p": limit.p, "memory": memory, "years": limit.time_days / ONE_YEAR_DAYS}[quantity]


_E_NUMBER = re.compile(r"\b(\d+(?:\.\d+)?e[+-]?\d+)(?: parameters)?")


def in_words(text: str) -> str:
    """``"at 2.34e+13 parameters"`` -> ``"at 23.4 trillion parameters"``: a sentence from the scaling bounds
    (which know no page units, and whose every number in e-notation is a parameter count) as the page writes it."""
    return _E_NUMBER.sub(lambda m: readable_value(float(m.group(1)), "parameters"), text)


def _bound_demonstration(kind: str, hardware: Hardware, scenario: str, days: float | None) -> Demonstration | None:
    """The readings computed and the floor's limit: no configuration within the paper's rules goes beyond it."""
    bound = bound_limit("memory" if kind == "feasible" else "time", hardware, scenario, days)
    if bound is None:
        return None
    third = bound_limit("memory" if kind == "feasible" else "time", hardware, scenario, days, max_overhead=THIRD_CAP)
    first, what = (("No configuration under the paper's rules fits a larger model in memory",
                    "the memory that cannot be offloaded, (6 p_l + d_s m_0) / n_a with one sample per micro-batch "
                    "(b_mu = 1) and the largest n_a the 25 % overhead cap allows")
                   if kind == "feasible" else
                   ("No configuration under the paper's rules trains a larger model in time",
                    "the time on floor(b_c) n_a GPUs with no overhead but the tensor all-reduces, at the best n_a the "
                    "25 % overhead cap allows"))
    statement = (f"{first}; its floor is {what}; {in_words(bound.how)}, so no choice of the other degrees, read on "
                 f"either grid, reaches beyond {readable_value(bound.p, 'parameters')}")
    readings = (Alternative("the floor, the more favourable of every model and the 2^k grid", bound.p),)
    needed = "" if third is None else (f"the printed number needs more than the paper's cap: with a cap of a third "
                                       f"(an efficiency of 75 %) the floor reaches "
                                       f"{readable_value(third.p, 'parameters')}")
    return Demonstration(statement, readings, needed)


def limit_calculator(kind: str, scenario: str, quantity: str, days: float | None = None,
                     demonstrate: bool = False) -> Callable[[Hardware, PaperReading], Outcome]:
    """A limit (``kind``: ``feasible`` memory, ``offload``, ``time``) of ``scenario`` read as ``quantity`` (``p``,
    ``memory`` at the limit, ``years`` to train it), under the reading given; ``demonstrate`` adds, under the paper
    reading, the floor's bound (the claims no reading reaches)."""
    def calculate(hardware: Hardware, reading: PaperReading) -> Outcome:
        limit = _limit(kind, reading.hardware(hardware), scenario, days, reading.assumptions())
        if limit is None:
            return Outcome(None, f"no limit found on the grid of the {scenario} scenario")
        demonstration = (_bound_demonstration(kind, hardware, scenario, days)
                         if demonstrate and reading == PAPER_READING else None)
        return Outcome(_read(limit, quantity, reading), f"improved method, {scenario} scenario, memory as an output: {limit.how}",
                       demonstration=demonstration)
    return calculate


def memory_limit_years(hardware: Hardware, reading: PaperReading) -> Outcome:
    """The training time of the largest model the GPU's memory holds ("such model would take up to four years")."""
    return limit_calculator("feasible", "limited", "years")(hardware, reading)


def years_at(p: float, demonstrate: bool = False) -> Callable[[Hardware, PaperReading], Outcome]:
    """The training time of a ``p``-parameter model read along the improved method's curve (limited scenario);
    ``demonstrate``: the curve's configurations show the minimum is no longer (the claims no reading reaches)."""
    def calculate(hardware: Hardware, reading: PaperReading) -> Outcome:
        found = along_curve(p, reading.hardware(hardware), "limited", assumptions=reading.assumptions())
        if found is None:
            return Outcome(None, f"{p:.3g} parameters lie outside the grid or beyond a feasible configuration")
        at_p, low, high = found
        how = (f"{p:.3g} parameters, between {low['model']} ({low['time_days'] / ONE_YEAR_DAYS:.3g} y, n_a = "
               f"{low['n_a']:g}) and {high['model']} ({high['time_days'] / ONE_YEAR_DAYS:.3g} y, n_a = {high['n_a']:g}) "
               "on the fastest improved curve, log-log")
        demonstration = None
        if demonstrate and reading == PAPER_READING:
            demonstration = Demonstration(
                f"Every configuration on the curve obeys the paper's rules, so the minimum training time at "
                f"{p:.3g} parameters is at most what the curve reads: {at_p['time_days'] / ONE_YEAR_DAYS:.3g} years",
                ())
        return Outcome(at_p["time_days"] / ONE_YEAR_DAYS, how, demonstration=demonstration)
    return calculate


def tensor_onset_claim(hardware: Hardware, reading: PaperReading) -> Outcome:
    """"At extreme scales (~25 trillion parameters) it becomes possible to efficiently use tensor parallelism over
    InfiniBand with n_a > 16": where 17 devices over InfiniBand reach the 25 % cap; ``how`` also names the
    InfiniBand threshold the printed onset implies (the reading ``infiniband_threshold``)."""
    from .reading import implied_infiniband_threshold, tensor_onset

    spec = reading.hardware(hardware)
    found = tensor_onset(spec, reading.assumptions())
    if found is None:
        return Outcome(None, "tensor parallelism over InfiniBand stays above the 25 % cap up to X4096 on this hardware")
    implied = implied_infiniband_threshold(hardware)
    return Outcome(found[0], f"{found[1]}; the printed ~25 T implies an InfiniBand threshold of {implied:.4g} flop/B "
                   f"instead of the spec's {hardware.threshold('infiniband'):.4g}")


def tensor_16_from_cap(hardware: Hardware, reading: PaperReading) -> Outcome:
    """"A maximum overhead of 25 %, which for large models (above ~50 billion parameters) allows the practical limit
    n_a = 16": where the tensor overhead of 16 devices over NVLink falls to the cap along the X family (every even x,
    log-log between the two neighbours)."""
    from lgacc.model.evaluator import evaluate_many

    def overhead(x: int) -> float:
        r = evaluate_many(x_model(x), reading.hardware(hardware), "improved", n_b=1, n_a=16,
                          assumptions=reading.assumptions())
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
_FINE = column_name({"scaling_grid": "fine"})


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
