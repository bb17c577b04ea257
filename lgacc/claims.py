"""The paper's prose claims as numbers: each printed number beside its reproduction.

The printed numbers live in ``data/paper/claims.yaml``.  Each claim id maps to a
*calculator*, a function of the hardware returning the reproduced value (in the
claim's unit) and a sentence saying how it was obtained.  A claim without a
calculator is reported as not reproduced, never given a value.

Agreement: a claim printed to ``n`` significant digits agrees when the
reproduction rounds to it; a claim the paper states loosely ("about", "around",
"up to", read off a log-scale figure) agrees within a factor of
:data:`ABOUT_FACTOR` either way.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Callable

import yaml

from .hardware import DEFAULT_HARDWARE, Hardware, load_hardware
from .paper import PAPER_DIR

#: Tolerance of a claim the paper states loosely: agree within this factor.
ABOUT_FACTOR = 1.25

Calculator = Callable[[Hardware], tuple[float, str]]


@dataclass(frozen=True)
class PrintedClaim:
    id: str
    printed: str
    paper: float
    unit: str
    significant: int | str
    where: str

    def agrees(self, reproduced: float | None) -> bool:
        if reproduced is None:
            return False
        if self.significant == "about":
            return self.paper / ABOUT_FACTOR <= reproduced <= self.paper * ABOUT_FACTOR
        half_unit = 0.5 * 10 ** (math.floor(math.log10(abs(self.paper))) - int(self.significant) + 1)
        return abs(reproduced - self.paper) <= half_unit * (1 + 1e-9)

    @property
    def tolerance(self) -> str:
        if self.significant == "about":
            return f"within a factor {ABOUT_FACTOR:g}"
        return f"to {self.significant} significant digits"


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


def printed_claims() -> list[PrintedClaim]:
    data = yaml.safe_load((PAPER_DIR / "claims.yaml").read_text())
    return [
        PrintedClaim(c["id"], c["printed"], float(c["paper"]), c["unit"], c["significant"], c["where"])
        for c in data["claims"]
    ]


def calculators() -> dict[str, Calculator]:
    """Claim id -> calculator, gathered from the modules that can reproduce them."""
    from . import claim_calculators

    return dict(claim_calculators.CALCULATORS)


def reproduce_claims(hardware: str | Hardware = DEFAULT_HARDWARE) -> list[ClaimResult]:
    """Every printed claim with its reproduction (or ``None`` and the reason)."""
    spec = load_hardware(hardware)
    known = calculators()
    results = []
    for claim in printed_claims():
        if claim.id not in known:
            value, how = None, "not reproduced yet: no calculator for this claim"
        else:
            value, how = known[claim.id](spec)
        results.append(
            ClaimResult(
                claim.id, claim.paper, value, claim.unit, claim.agrees(value), claim.printed, claim.tolerance, how, claim.where
            )
        )
    return results


def claims_records(hardware: str | Hardware = DEFAULT_HARDWARE) -> list[dict]:
    """JSON-ready rows: ``id, paper, reproduced, unit, agrees`` and the explanation."""
    return [asdict(result) for result in reproduce_claims(hardware)]
