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
``over`` / ``above``
    strictly greater than the printed value ("over 2000 GPU-days").
``at least``
    greater than or equal ("at least twice as fast" is a ratio >= 2); with ``digits`` (a round number,
    ``{word: at least, digits: 1}``), at least the printed value at its significant digits: the
    reproduction rounds to it or above ("at least twice" is a ratio that rounds to 2 or more, >= 1.5).
``up to``
    the largest value reached: at most the printed value (to its last digit) and no
    less than :data:`WORD_TOLERANCE` below it ("up to four years").
``between``
    a word naming a range, with the range stated in the transcription ("decades":
    20 to 100 years; "a matter of minutes": 1 to 60 minutes).

A claim's *verdict* is ``reproduced`` when the package's computation agrees under
the paper-faithful assumptions, ``explained`` when it does not but the calculator
names an assumption under which the package's own computation agrees (its
``alternative``), ``paper inconsistent`` when no reading of the paper's stated rules
reaches the printed number and the calculator shows it (its ``demonstration``: the
most favourable readings, each computed, none agreeing, and a bound where one
exists), ``differs`` otherwise, and ``not reproduced`` when nothing could be computed
(the reason is given).  A prose explanation without a computation is ``differs``.

:data:`CONFIRMING` names the verdicts under which a page may say the paper's number is confirmed
(reproduced, or explained by a named reading): every page that shows a claim reads its verdict
from :mod:`lgacc.paper.claims.registry` and maps it with :func:`confirms`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

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
    "over": "v > p",
    "above": "v > p",
    "at least": "v >= p",
    "below": "v < p",
    "up to": f"(1 - {WORD_TOLERANCE:g}) p <= v <= p + half a unit of its last digit",
    "between": "low <= v < high",
}
_SAME_AS_ABOUT = ("about", "approximately", "around")


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
                if spec["word"] not in ("at least",):
                    raise ValueError(f"a word with digits is 'at least' only, not {spec['word']!r}")
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
        if k in ("over", "above"):
            return value > paper
        if k == "at least":
            slack = 0.0 if self.digits is None else self._half_unit(paper, self.digits)
            return value >= paper - slack
        if k == "below":
            return value < paper
        if k == "up to":
            return (1 - w) * paper <= value <= paper + self._half_unit(paper, 1)
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
        if self.digits is not None:
            return (f'"{self.kind}" a round number: v rounds to p or above at {self.digits} significant '
                    f'digit{"s" if self.digits > 1 else ""}')
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
    #: one named alternative, or several tried in turn (the first that agrees explains the claim)
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
    alternative: dict | None = None
    difference: str = ""
    explanation: str = field(default="")
    #: every alternative computed (for any claim whose calculator computes some): ``{"assumption", "reproduced",
    #: "agrees"}``
    alternatives: tuple[dict, ...] = ()
    #: for ``paper inconsistent``: ``{"statement", "readings": [{"assumption", "reproduced", "agrees"}], "needed"}``
    demonstration: dict | None = None


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


def _shown(value: float | None) -> str:
    return "nothing" if value is None else f"{value:.3g}"


def grade(claim: PrintedClaim, outcome: Outcome) -> ClaimResult:
    """Compare one outcome with its printed claim and give the verdict."""
    agrees = claim.agrees(outcome.value)
    alternative = None
    alternatives: tuple[dict, ...] = ()
    demonstration = None
    if outcome.value is None:
        verdict = NOT_REPRODUCED
        explanation = outcome.how
    elif agrees:
        verdict = REPRODUCED
        explanation = f"agrees {claim.tolerance}"
        # the other readings computed are kept (a page shows how far each moves the number), none is chosen
        alternatives = tuple({"assumption": a.assumption, "reproduced": a.reproduced,
                              "agrees": claim.agrees(a.reproduced)} for a in _alternatives(outcome))
    else:
        verdict = DIFFERS
        explanation = f"the package gives {outcome.value:.3g} {claim.unit} against the printed {claim.printed}"
        tried = _alternatives(outcome)
        if tried:
            alt = _chosen(claim, tried)
            alt_agrees = claim.agrees(alt.reproduced)
            alternative = {"assumption": alt.assumption, "reproduced": alt.reproduced, "agrees": alt_agrees}
            alternatives = tuple({"assumption": a.assumption, "reproduced": a.reproduced,
                                  "agrees": claim.agrees(a.reproduced)} for a in tried)
            if alt_agrees:
                verdict = EXPLAINED
                explanation = f"with {alt.assumption}, the same computation gives {alt.reproduced:.3g} {claim.unit}, which agrees"
            else:
                closest = "the closest of the switches tried, " if len(tried) > 1 else ""
                explanation += (f"; with {alt.assumption} ({closest}{len(tried)} tried) it gives {_shown(alt.reproduced)}, "
                                "which does not agree either")
            if alt.how:
                explanation += f" ({alt.how})"
        if verdict == DIFFERS and outcome.demonstration is not None:
            verdict, explanation, demonstration = _inconsistent(claim, outcome.demonstration)
    return ClaimResult(
        claim.id, claim.paper, outcome.value, claim.unit, agrees, claim.printed, claim.tolerance, outcome.how,
        claim.where, claim.rule.text, verdict, alternative, difference(claim.paper, outcome.value, agrees), explanation,
        alternatives, demonstration,
    )


def _inconsistent(claim: PrintedClaim, shown: Demonstration) -> tuple[str, str, dict | None]:
    """``paper inconsistent`` when every reading of the demonstration was computed and none agrees (one that
    agrees explains the claim instead; one not computed leaves it ``differs``)."""
    readings = [{"assumption": r.assumption, "reproduced": r.reproduced, "agrees": claim.agrees(r.reproduced)}
                for r in shown.readings]
    record = {"statement": shown.statement, "readings": readings, "needed": shown.needed}
    agreeing = [r for r in readings if r["agrees"]]
    if agreeing:
        first = agreeing[0]
        return EXPLAINED, (f"with {first['assumption']}, the same computation gives {first['reproduced']:.3g} "
                           f"{claim.unit}, which agrees"), record
    if not readings or any(r["reproduced"] is None for r in readings):
        return DIFFERS, f"{shown.statement} (a reading could not be computed)", record
    values = "; ".join(f"{r['assumption']}: {_shown(r['reproduced'])}" for r in readings)
    text = f"{shown.statement}. The most favourable readings give {values} {claim.unit}, none {claim.tolerance}"
    if shown.needed:
        text += f"; {shown.needed}"
    return PAPER_INCONSISTENT, text, record


def _alternatives(outcome: Outcome) -> list[Alternative]:
    alt = outcome.alternative
    if alt is None:
        return []
    return [alt] if isinstance(alt, Alternative) else list(alt)


def _chosen(claim: PrintedClaim, tried: list[Alternative]) -> Alternative:
    """The first alternative that agrees, else the one closest to the printed number (by log ratio)."""
    for alt in tried:
        if claim.agrees(alt.reproduced):
            return alt

    def distance(alt: Alternative) -> float:
        value = alt.reproduced
        if value is None or value <= 0 or claim.paper <= 0:
            return math.inf
        return abs(math.log(value / claim.paper))
    return min(tried, key=distance)
