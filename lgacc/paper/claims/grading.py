"""The paper's prose claims as numbers: each printed number beside its reproduction, with a verdict.

The printed numbers live in ``data/paper/claims.yaml``; each claim states its
*rule*, the comparison its printed precision or its qualifying word implies.
All rules are defined here, in :data:`RULES`, and nowhere else:

``exact``
    an integer count printed without a qualifier: the reproduction must equal it.
``digits: n``
    a number printed to ``n`` significant digits: the reproduction must round to it
    (within half a unit of its last printed digit).
``about`` / ``approximately`` / ``around``
    within :data:`WORD_TOLERANCE` (15 %) of the printed value either way.  15 % is
    wider than the rounding of a two-digit number (at most 10 %: "about 4.5" could be
    4.3 or 4.7) and narrower than the gap between the round values the paper picks
    from ("about 4%" is not 3 % or 5 %); a 1.2x miss fails, so does any 2x miss.
``nearly``
    below the printed value but within :data:`WORD_TOLERANCE` of it ("nearly 40000").
``at least`` / ``over`` / ``above`` / ``more than``
    the reproduction, rounded to one more significant digit than the printed number shows (the rule's
    ``digits``, else the printed number's own: "twice" is 2.0, "2000" is 2000 to two digits), is at least the
    printed value: "at least twice as fast" holds for 1.976 (2.0) and fails for 1.78 (1.8).
``up to`` / ``below``
    likewise at most the printed value ("below a tenth": 0.059 holds); ``up to`` names the largest value
    reached, so it is also no less than :data:`WORD_TOLERANCE` below it ("up to four years": 3.4 to 4.0 holds,
    4.54 rounds to 4.5 and fails).
``between``
    a word naming a range, with the range stated in the transcription ("decades":
    20 to 100 years; "a matter of minutes": 1 to 60 minutes).

A claim's *verdict* is read from the reading matrix (:func:`verdict_from_matrix`; the readings are
:mod:`.reading`'s): ``reproduced`` when it agrees under the paper reading; ``explained`` when it does not, but
a reading that moves only a documented fact (:data:`~lgacc.paper.claims.reading.FACT` switches) makes it agree
and that reading turns no reproduced claim into a miss; ``paper inconsistent`` when no column of the matrix
agrees and the calculator shows that nothing under the paper's rules reaches the number (its
``demonstration``: a bound, each reading computed); ``differs`` otherwise, naming the readings that would
reproduce it and what each breaks; ``not reproduced`` when nothing could be computed (the reason is given).

:data:`CONFIRMING` names the verdicts under which a page may say the paper's number is confirmed
(reproduced, or explained by a named reading): every page that shows a claim reads its verdict
from :mod:`lgacc.paper.claims.registry` and maps it with :func:`confirms`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import yaml

from lgacc.model.hardware import Hardware

from ..printed import PAPER_DIR

#: Relative tolerance of the words "about", "approximately", "around", "nearly" and "up to".
WORD_TOLERANCE = 0.15
#: Kept for :mod:`lgacc.studies.sensitivity`, whose "holds / weakens" test of a conclusion under other
#: hardware uses it; no claim is graded with it (grading follows the printed precision and words).
ABOUT_FACTOR = 1.25

REPRODUCED = "reproduced"
EXPLAINED = "explained"
PAPER_INCONSISTENT = "paper inconsistent"
DIFFERS = "differs"
NOT_REPRODUCED = "not reproduced"
VERDICTS = (REPRODUCED, EXPLAINED, PAPER_INCONSISTENT, DIFFERS, NOT_REPRODUCED)
#: The verdicts under which the paper's number comes out of the package's computation.
CONFIRMING = (REPRODUCED, EXPLAINED)
#: One mark per verdict and what it means: defined once, in :mod:`lgacc.paper.findings` (pure formatting,
#: read by the book's pages and the front page's legend).
from ..findings import MARK_MEANINGS, MARKS, readable_value, verdict_mark  # noqa: E402
from .words import name_in_words  # noqa: E402


def mark(verdict: str) -> str:
    """The mark of a verdict (:data:`MARKS`); an unknown verdict keeps its name."""
    return verdict_mark(verdict)


def confirms(verdict: str) -> bool:
    """Whether a page may mark a claim with this verdict as confirmed (✓, "holds")."""
    return verdict in CONFIRMING

#: The word rules and what each compares (value v, printed p, tolerance w).
RULES = {
    "exact": "v = p",
    "digits": "v rounds to p at its printed significant digits",
    "about": f"|v - p| <= {WORD_TOLERANCE:g} p",
    "approximately": f"|v - p| <= {WORD_TOLERANCE:g} p",
    "around": f"|v - p| <= {WORD_TOLERANCE:g} p",
    "nearly": f"(1 - {WORD_TOLERANCE:g}) p <= v <= p",
    "over": "v rounded to one more significant digit than p shows >= p",
    "above": "v rounded to one more significant digit than p shows >= p",
    "more than": "v rounded to one more significant digit than p shows >= p",
    "at least": "v rounded to one more significant digit than p shows >= p",
    "below": "v rounded to one more significant digit than p shows <= p",
    "up to": f"(1 - {WORD_TOLERANCE:g}) p <= v, and v rounded to one more significant digit than p shows <= p",
    "between": "low <= v < high",
}
_SAME_AS_ABOUT = ("about", "approximately", "around")
#: The words graded at one more significant digit than printed (rule 4 of issue 32).
_AT_LEAST = ("at least", "over", "above", "more than")
_AT_MOST = ("up to", "below")


def significant_digits(value: float) -> int:
    """The significant digits a printed number shows: 2000 -> 1, 4.5 -> 2, 0.1 -> 1, 1/6 -> 15 (capped at 15)."""
    if value == 0 or not math.isfinite(value):
        return 1
    text = f"{abs(value):.15g}"
    mantissa = text.split("e")[0].replace(".", "").lstrip("0").rstrip("0")
    return max(1, min(15, len(mantissa)))


def round_significant(value: float, digits: int) -> float:
    """``value`` rounded to ``digits`` significant digits."""
    return float(f"{value:.{digits}g}")


@dataclass(frozen=True)
class Rule:
    """How a reproduction is compared with one printed number."""

    kind: str
    digits: int | None = None
    low: float | None = None
    high: float | None = None

    @classmethod
    def parse(cls, spec: Any) -> "Rule":
        if isinstance(spec, dict):
            if "word" in spec and "digits" in spec:
                if spec["word"] not in _AT_LEAST + _AT_MOST:
                    raise ValueError(f"a word with digits is one of {_AT_LEAST + _AT_MOST}, not {spec['word']!r}")
                return cls(str(spec["word"]), digits=int(spec["digits"]))
            if "digits" in spec:
                return cls("digits", digits=int(spec["digits"]))
            if "between" in spec:
                low, high = spec["between"]
                return cls("between", low=float(low), high=float(high))
            if "word" in spec:
                return cls.parse(spec["word"])
        if spec in RULES and spec not in ("digits", "between"):
            return cls(str(spec))
        raise ValueError(f"unknown claim rule {spec!r}; rules: {sorted(RULES)}")

    def _half_unit(self, paper: float, digits: int) -> float:
        if paper == 0:
            return 0.0
        return 0.5 * 10 ** (math.floor(math.log10(abs(paper))) - digits + 1)

    def agrees(self, paper: float, value: float | None) -> bool:
        if value is None or not math.isfinite(value):
            return False
        k, w = self.kind, WORD_TOLERANCE
        if k == "exact":
            return value == paper
        if k == "digits":
            return abs(value - paper) <= self._half_unit(paper, self.digits) * (1 + 1e-9)
        if k in _SAME_AS_ABOUT:
            return abs(value - paper) <= w * abs(paper)
        if k == "nearly":
            return (1 - w) * paper <= value <= paper
        digits = (self.digits or significant_digits(paper)) + 1
        if k in _AT_LEAST:
            return round_significant(value, digits) >= paper
        if k == "below":
            return round_significant(value, digits) <= paper
        if k == "up to":
            return (1 - w) * paper <= value and round_significant(value, digits) <= paper
        if k == "between":
            return self.low <= value < self.high
        raise ValueError(k)

    @property
    def text(self) -> str:
        if self.kind == "digits":
            return f"digits: {self.digits}"
        if self.digits is not None:
            return f"{self.kind}, digits: {self.digits}"
        if self.kind == "between":
            return f"between {self.low:g} and {self.high:g}"
        return self.kind

    @property
    def tolerance(self) -> str:
        if self.kind == "exact":
            return "exactly"
        if self.kind == "digits":
            return f"to {self.digits} significant digit{'s' if self.digits > 1 else ''}"
        if self.kind == "between":
            return f"in [{self.low:g}, {self.high:g})"
        if self.kind in _AT_LEAST + _AT_MOST:
            shown = "" if self.digits is None else f" (p printed to {self.digits} significant digit{'s' if self.digits > 1 else ''})"
            return f'"{self.kind}": {RULES[self.kind]}{shown}'
        return f'"{self.kind}": {RULES[self.kind]}'


@dataclass(frozen=True)
class PrintedClaim:
    id: str
    printed: str
    paper: float
    unit: str
    rule: Rule
    where: str

    def agrees(self, reproduced: float | None) -> bool:
        return self.rule.agrees(self.paper, reproduced)

    @property
    def tolerance(self) -> str:
        return self.rule.tolerance


@dataclass(frozen=True)
class Alternative:
    """A named assumption under which the package's own computation gives ``reproduced``."""

    assumption: str
    reproduced: float | None
    how: str = ""


@dataclass(frozen=True)
class Demonstration:
    """That no reading of the paper's stated rules reaches a printed number: the most favourable readings, each
    computed (none may agree, or the claim is explained), a bound where one exists, and what the paper would
    have needed."""

    statement: str
    readings: tuple[Alternative, ...]
    needed: str = ""


@dataclass(frozen=True)
class Outcome:
    """What a calculator returns: the value in the claim's unit, how, and optionally an alternative."""

    value: float | None
    how: str
    #: kept for old callers: a calculator computes under the reading it is given, and the readings are the
    #: matrix's columns (:mod:`.reading`), so this is ignored by the grading
    alternative: Alternative | tuple[Alternative, ...] | None = None
    #: for a printed number no reading reaches: the readings tried and the bound (``paper inconsistent``)
    demonstration: Demonstration | None = None


@dataclass(frozen=True)
class ClaimResult:
    id: str
    paper: float
    reproduced: float | None
    unit: str
    agrees: bool
    printed: str
    tolerance: str
    how: str
    where: str
    rule: str = ""
    verdict: str = NOT_REPRODUCED
    #: for ``explained``: ``{"assumption", "reproduced", "agrees"}`` of the fact reading that explains it
    alternative: dict | None = None
    difference: str = ""
    explanation: str = field(default="")
    #: every other column of the reading matrix: ``{"assumption", "reproduced", "agrees"}``
    alternatives: tuple[dict, ...] = ()
    #: for ``paper inconsistent``: ``{"statement", "readings": [{"assumption", "reproduced", "agrees"}], "needed"}``
    demonstration: dict | None = None
    #: the reading every claim is graded under (:data:`lgacc.paper.claims.reading.PAPER_NAME`)
    reading: str = ""
    #: the readings (matrix columns) under which the claim agrees, each with the claims reproduced under the paper
    #: reading that it turns into misses: ``{"reading", "kind", "reproduced", "breaks"}``
    reproduced_by: tuple[dict, ...] = ()
    mark: str = ""


Calculator = Callable[[Hardware], Any]


def printed_claims() -> list[PrintedClaim]:
    data = yaml.safe_load((PAPER_DIR / "claims.yaml").read_text())
    return [
        PrintedClaim(c["id"], c["printed"], float(c["paper"]), c["unit"], Rule.parse(c["rule"]), c["where"])
        for c in data["claims"]
    ]


def difference(paper: float, value: float | None, agrees: bool) -> str:
    """The size of a difference in words a reader can scan: "none", "×2.3", "+8 %"."""
    if value is None:
        return "not computed"
    if agrees:
        return "none"
    if paper == 0 or value == 0 or (paper < 0) != (value < 0):
        return f"{value - paper:+.3g}"
    ratio = value / paper
    if 0.9 <= ratio <= 1.1:
        return f"{100 * (ratio - 1):+.1f} %"
    return f"×{ratio:.2g}" if ratio >= 1 else f"÷{1 / ratio:.2g}"


def as_outcome(raw: Any) -> Outcome:
    if isinstance(raw, Outcome):
        return raw
    value, how = raw[:2]
    return Outcome(None if value is None else float(value), how, raw[2] if len(raw) > 2 else None)


def _cells(claim: PrintedClaim, cells: Sequence[tuple[str, float | None]]) -> list[dict]:
    return [{"assumption": name, "reproduced": value, "agrees": claim.agrees(value)} for name, value in cells]


def grade(claim: PrintedClaim, outcome: Outcome, reading: str = "", others: Sequence[tuple[str, str, float | None]] = (),
          breaks: dict[str, Sequence[str]] | None = None) -> ClaimResult:
    """Grade one claim from its row of the reading matrix: ``outcome`` under the paper reading (named
    ``reading``), ``others`` the other columns ``(name, kind, value)`` (kind ``fact`` or ``scaling``), ``breaks``
    the claims each column turns from agreeing into a miss.  The rules are :func:`verdict_from_matrix`'s."""
    breaks = breaks or {}
    agrees = claim.agrees(outcome.value)
    alternatives = tuple(_cells(claim, [(name, value) for name, _, value in others]))
    agreeing = [(name, kind, value) for name, kind, value in others if claim.agrees(value)]
    # for a claim that does not agree under the paper reading: the readings that would reproduce it, and what each breaks
    reproduced_by = () if agrees else tuple(
        {"reading": name, "kind": kind, "reproduced": value, "breaks": list(breaks.get(name, ()))}
        for name, kind, value in agreeing)
    alternative = demonstration = None
    if outcome.value is None:
        verdict, explanation = NOT_REPRODUCED, outcome.how
    elif agrees:
        verdict, explanation = REPRODUCED, f"agrees {claim.tolerance}"
    else:
        verdict = DIFFERS
        explanation = (f"the package gives {readable_value(outcome.value, claim.unit)} against the printed "
                       f"{claim.printed}")
        facts = [r for r in reproduced_by if r["kind"] == "fact" and not r["breaks"]]
        if facts:
            fact = facts[0]
            verdict = EXPLAINED
            alternative = {"assumption": fact["reading"], "reproduced": fact["reproduced"], "agrees": True}
            explanation = (f"with {name_in_words(fact['reading'])} (a documented fact, applied to every claim, which "
                           f"breaks none), the same computation gives {readable_value(fact['reproduced'], claim.unit)}, "
                           "which agrees")
        elif reproduced_by:
            named = "; ".join(f"{name_in_words(r['reading'])} gives {readable_value(r['reproduced'], claim.unit)} but breaks "
                              + (", ".join(r["breaks"]) if r["breaks"] else "nothing")
                              + (" (a fact reading that breaks a reproduced claim)" if r["kind"] == "fact" and r["breaks"] else "")
                              for r in reproduced_by)
            explanation += f"; it would be reproduced by {named}"
        elif outcome.demonstration is not None:
            verdict, text, demonstration = _inconsistent(claim, outcome.demonstration)
            explanation = text if verdict == PAPER_INCONSISTENT else f"{explanation}; no reading of the matrix reaches it. {text}"
        else:
            explanation += f"; no reading of the matrix ({len(others) + 1} columns) reaches it"
    return ClaimResult(
        claim.id, claim.paper, outcome.value, claim.unit, agrees, claim.printed, claim.tolerance, outcome.how,
        claim.where, claim.rule.text, verdict, alternative, difference(claim.paper, outcome.value, agrees), explanation,
        alternatives, demonstration, reading, reproduced_by, mark(verdict),
    )


def verdict_from_matrix(claim: PrintedClaim, outcome: Outcome, others, breaks) -> str:
    """The verdict alone (see :func:`grade`)."""
    return grade(claim, outcome, "", others, breaks).verdict


def _inconsistent(claim: PrintedClaim, shown: Demonstration) -> tuple[str, str, dict | None]:
    """``paper inconsistent`` when every reading of the demonstration was computed and none agrees (the matrix's
    columns were checked before: none agrees); else ``differs``."""
    readings = [{"assumption": r.assumption, "reproduced": r.reproduced, "agrees": claim.agrees(r.reproduced)}
                for r in shown.readings]
    record = {"statement": shown.statement, "readings": readings, "needed": shown.needed}
    if any(r["agrees"] for r in readings) or any(r["reproduced"] is None for r in readings):
        return DIFFERS, f"{shown.statement} (a reading of the demonstration agrees or could not be computed)", record
    values = "; ".join(f"{name_in_words(r['assumption'])}: {readable_value(r['reproduced'], claim.unit)}" for r in readings)
    text = (f"{shown.statement}. No column of the reading matrix agrees" + (f"; {values}" if values else "")
            + f", none {claim.tolerance}")
    if shown.needed:
        text += f"; {shown.needed}"
    return PAPER_INCONSISTENT, text, record
