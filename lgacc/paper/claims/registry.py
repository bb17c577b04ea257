"""The paper's prose claims computed and graded: one calculator per claim (:mod:`.calculators`), each
computed under every column of the reading matrix (:mod:`.reading`), graded under the one paper reading by
the rules of :mod:`.grading`; the matrix is kept on disk (:mod:`lgacc.cache.results`)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Callable, Sequence

from lgacc.cache.results import cached
from lgacc.model.hardware import DEFAULT_HARDWARE, Hardware, load_hardware

from .calculators import CALCULATORS, READS
from .grading import Calculator, ClaimResult, Outcome, PrintedClaim, as_outcome, grade, printed_claims
from ..printed import PAPER_HARDWARE
from .reading import COLUMNS, PAPER_NAME, PAPER_READING, PaperReading, kind_of


def calculators() -> dict[str, Calculator]:
    """Claim id -> calculator, gathered from the modules that can reproduce them."""
    return dict(CALCULATORS)


def reproduce_claims(hardware: str | Hardware = DEFAULT_HARDWARE, ids: Sequence[str] | None = None) -> list[ClaimResult]:
    """Every printed claim (or those with ``ids``, in the file's order) graded under the paper reading from its
    row of the reading matrix (or ``None`` and the reason), never raising."""
    graded = _graded(load_hardware(hardware))
    return [r for r in graded if ids is None or r.id in ids]


@dataclass(frozen=True)
class Cell:
    """One cell of the reading matrix: a claim's value under one reading, and how it was computed."""

    claim: str
    reading: str
    kind: str
    value: float | None
    how: str
    agrees: bool


def _outcome(claim: PrintedClaim, calculator: Callable | None, spec: Hardware, reading: PaperReading) -> Outcome:
    if calculator is None:
        return Outcome(None, "not reproduced yet: no calculator for this claim")
    try:
        return as_outcome(calculator(spec, reading))
    except Exception as error:  # a claim that cannot be computed on this hardware is reported, not raised
        return Outcome(None, f"cannot be computed on {spec.name} under {reading.name}: {type(error).__name__}: {error}")


def columns_for(spec: Hardware) -> tuple[PaperReading, ...]:
    """The matrix's columns on ``spec``: every column of :data:`COLUMNS` on the paper's own hardware; elsewhere the
    paper reading alone (the printed numbers are the paper's for its hardware: another reading cannot explain them
    on other hardware, and the claims there are graded by the same rules under the same reading)."""
    return COLUMNS if spec == load_hardware(PAPER_HARDWARE) else COLUMNS[:1]


@lru_cache(maxsize=8)
def _matrix(spec: Hardware) -> tuple[tuple[Outcome, ...], ...]:
    """Each claim's outcome under each column of :func:`columns_for`, kept on disk (:mod:`lgacc.cache.results`):
    a column that moves none of the switches a claim reads repeats its paper-reading outcome."""
    columns = columns_for(spec)

    def compute():
        known = calculators()
        rows = []
        for claim in printed_claims():
            reads = READS.get(claim.id, frozenset())
            paper = _outcome(claim, known.get(claim.id), spec, PAPER_READING)
            row = [paper]
            for column in columns[1:]:
                if reads & set(column.changes()):
                    row.append(_outcome(claim, known.get(claim.id), spec, column))
                else:
                    row.append(Outcome(paper.value, paper.how))
            rows.append(tuple(row))
        return tuple(rows)
    return cached("reading-matrix", spec, compute)


@lru_cache(maxsize=8)
def _graded(spec: Hardware) -> tuple[ClaimResult, ...]:
    claims = printed_claims()
    matrix = _matrix(spec)
    columns = columns_for(spec)
    names = [c.name for c in columns]
    paper_agrees = {claim.id: claim.agrees(row[0].value) for claim, row in zip(claims, matrix)}
    breaks = {name: [claim.id for claim, row in zip(claims, matrix)
                     if paper_agrees[claim.id] and not claim.agrees(row[i].value)]
              for i, name in enumerate(names) if i}
    results = []
    for claim, row in zip(claims, matrix):
        others = [(names[i], kind_of(columns[i]), row[i].value) for i in range(1, len(columns))]
        results.append(grade(claim, row[0], PAPER_NAME, others, breaks))
    return tuple(results)


def reading_matrix(hardware: str | Hardware = DEFAULT_HARDWARE) -> dict:
    """The reading matrix as JSON-ready data: ``reading`` (the paper reading's switches), ``columns`` (each
    ``{"name", "kind", "changes"}``), ``rows`` (each claim: ``id, printed, unit, verdict, mark, cells`` with one
    ``{"reading", "value", "agrees"}`` per column) and ``summary`` (per column: ``agree``, the claims that agree,
    and ``breaks``, the claims reproduced under the paper reading that do not agree under it)."""
    spec = load_hardware(hardware)
    claims = printed_claims()
    matrix = _matrix(spec)
    graded = {r.id: r for r in _graded(spec)}
    columns = columns_for(spec)
    names = [c.name for c in columns]
    rows = []
    for claim, row in zip(claims, matrix):
        rows.append({"id": claim.id, "printed": claim.printed, "unit": claim.unit, "rule": claim.rule.text,
                     "verdict": graded[claim.id].verdict, "mark": graded[claim.id].mark,
                     "cells": [{"reading": names[i], "value": outcome.value, "agrees": claim.agrees(outcome.value)}
                               for i, outcome in enumerate(row)]})
    summary = []
    for i, column in enumerate(columns):
        agree = sum(r["cells"][i]["agrees"] for r in rows)
        broken = [r["id"] for r in rows if r["cells"][0]["agrees"] and not r["cells"][i]["agrees"]]
        summary.append({"reading": names[i], "kind": kind_of(column), "agree": agree, "of": len(rows), "breaks": broken})
    return {"hardware": spec.name, "reading": PAPER_NAME,
            "paper_reading": asdict(PAPER_READING),
            "columns": [{"name": names[i], "kind": kind_of(c), "changes": c.changes()} for i, c in enumerate(columns)],
            "rows": rows, "summary": summary}


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
