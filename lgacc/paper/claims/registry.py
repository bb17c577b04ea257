"""The paper's prose claims computed and graded: one calculator per claim (:mod:`.calculators`), graded
by the rules of :mod:`.grading`, each result kept on disk (:mod:`lgacc.cache.results`)."""

from __future__ import annotations

import math
from dataclasses import asdict
from functools import lru_cache
from typing import Callable, Sequence

from lgacc.cache.results import cached
from lgacc.model.hardware import DEFAULT_HARDWARE, Hardware, load_hardware

from .calculators import CALCULATORS
from .grading import Calculator, ClaimResult, Outcome, PrintedClaim, as_outcome, grade, printed_claims


def calculators() -> dict[str, Calculator]:
    """Claim id -> calculator, gathered from the modules that can reproduce them."""
    return dict(CALCULATORS)


def reproduce_claims(hardware: str | Hardware = DEFAULT_HARDWARE, ids: Sequence[str] | None = None) -> list[ClaimResult]:
    """Every printed claim (or those with ``ids``, in the file's order) with its reproduction (or
    ``None`` and the reason), never raising."""
    return list(_reproduced(load_hardware(hardware), None if ids is None else tuple(ids)))


@lru_cache(maxsize=8)
def _reproduced(spec: Hardware, ids: tuple[str, ...] | None) -> tuple[ClaimResult, ...]:
    """The claims of one spec, computed once per process: the results are frozen and depend only on
    the spec's values (the scaling searches behind them take tens of seconds)."""
    known = calculators()
    return tuple(_claim_result(claim, known.get(claim.id), spec)
                 for claim in printed_claims() if ids is None or claim.id in ids)


def _claim_result(claim: PrintedClaim, calculator: Callable | None, spec: Hardware) -> ClaimResult:
    """One graded claim, kept on disk for the next process (the scorecard, claims and figure pages
    of the book, the tests ask for the same claims): see :mod:`lgacc.cache.results`."""
    def compute() -> ClaimResult:
        if calculator is None:
            return grade(claim, Outcome(None, "not reproduced yet: no calculator for this claim"))
        try:
            outcome = as_outcome(calculator(spec))
        except Exception as error:  # a claim that cannot be computed on this hardware is reported, not raised
            outcome = Outcome(None, f"cannot be computed on {spec.name}: {type(error).__name__}: {error}")
        return grade(claim, outcome)
    return cached("claim", (spec, claim.id), compute)


def verdict_of(claim_id: str, hardware: str | Hardware = DEFAULT_HARDWARE) -> str:
    """The verdict of one claim: the one place every page (claims, scorecard, front page, sensitivity, today's
    hardware) reads it from."""
    found = reproduce_claims(hardware, (claim_id,))
    if not found:
        raise KeyError(f"unknown claim {claim_id!r}")
    return found[0].verdict


def switch_effects(records: Sequence[dict]) -> list[dict]:
    """Every switch tried on a differing claim and what it does to the printed number: one row per
    (claim, switch) with ``switch, claim, printed, default, switched, moves, agrees``.

    ``moves`` is whether the switched value differs from the default one (relative 1e-9);
    ``agrees`` whether it reproduces the printed number.  ``records`` are :func:`claims_records` rows.
    """
    rows = []
    for r in records:
        if r.get("verdict") == "reproduced":  # the other readings of a reproduced claim are shown, not tried on it
            continue
        for alt in r.get("alternatives") or ():
            default, switched = r["reproduced"], alt["reproduced"]
            moves = switched is not None and (default is None or not math.isclose(switched, default, rel_tol=1e-9))
            rows.append({"switch": alt["assumption"], "claim": r["id"], "printed": r["printed"],
                         "default": default, "switched": switched, "moves": moves, "agrees": bool(alt["agrees"])})
    return rows


def claims_records(hardware: str | Hardware = DEFAULT_HARDWARE, ids: Sequence[str] | None = None) -> list[dict]:
    """JSON-ready rows: ``id, paper, reproduced, unit, agrees, printed, tolerance, how, where``
    and ``rule, verdict, alternative, difference, explanation, alternatives`` (all claims, or ``ids``)."""
    return [asdict(result) for result in reproduce_claims(hardware, ids)]
