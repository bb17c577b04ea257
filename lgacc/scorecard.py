"""The reproduction scorecard: every table and figure of the paper, with a verdict.

One row per artifact listed in ``data/paper/artifacts.yaml`` (the paper's labels).
A table with a comparison is *agrees* when every compared cell rounds to the
printed value and *differs* otherwise, with the count; a figure without printed
values is *reproduced* when it builds; an artifact the package does not yet
produce is *not reproduced*.  No status is written by hand: each comes from
running the artifact.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from .artifacts import agreement, registry
from .hardware import DEFAULT_HARDWARE, Hardware, load_hardware
from .paper import PAPER_DIR

import yaml

AGREES = "agrees to printed precision"
DIFFERS = "differs"
REPRODUCED = "reproduced (no printed values to compare)"
MATCHES_FORMULAS = "agrees with the paper's formulas"
MISSING = "not reproduced yet"
FAILED = "fails to build"


@dataclass(frozen=True)
class ScoreRow:
    label: str
    kind: str
    title: str
    paper: str
    reproduced: str
    status: str
    page: str


def paper_artifacts() -> list[dict[str, Any]]:
    """The paper's tables and figures, in its order."""
    return yaml.safe_load((PAPER_DIR / "artifacts.yaml").read_text())["artifacts"]


def score_artifact(label: str, hardware: Hardware, entry: dict[str, Any] | None = None) -> ScoreRow:
    """Build one artifact and grade it against the paper."""
    entry = entry or {}
    artifacts = registry()
    title = entry.get("caption", "")
    kind = entry.get("kind", "")
    if label not in artifacts:
        return ScoreRow(label, kind, title, "printed in the paper", "—", MISSING, "")
    artifact = artifacts[label]
    page = artifact.page
    try:
        result = artifact.build(hardware)
    except Exception as error:  # the scorecard reports a broken artifact rather than hiding it
        return ScoreRow(label, artifact.kind, artifact.title, "", f"{type(error).__name__}: {error}", FAILED, page)
    if artifact.compare is None and artifact.check is not None:
        agree, total = agreement(artifact.check(hardware))
        status = MATCHES_FORMULAS if agree == total and total > 0 else DIFFERS
        return ScoreRow(label, artifact.kind, artifact.title, f"{total} formulas", f"{agree} of {total} measured = analytic", status, page)
    if artifact.compare is None:
        return ScoreRow(label, artifact.kind, artifact.title, "no printed values", "built", REPRODUCED, page)
    try:
        agree, total = agreement(artifact.compare(result))
    except Exception as error:
        return ScoreRow(label, artifact.kind, artifact.title, "", f"comparison fails: {type(error).__name__}: {error}", FAILED, page)
    status = AGREES if agree == total and total > 0 else DIFFERS
    return ScoreRow(label, artifact.kind, artifact.title, f"{total} printed cells", f"{agree} of {total} agree", status, page)


CLAIMS_PAGE = "claims"


def score_claims(hardware: Hardware) -> list[ScoreRow]:
    """One row per prose claim of the paper, graded by :mod:`lgacc.claims`."""
    from .claims import reproduce_claims

    rows = []
    for claim in reproduce_claims(hardware):
        if claim.reproduced is None:
            status, reproduced = MISSING, "—"
        else:
            status, reproduced = (AGREES if claim.agrees else DIFFERS), f"{claim.reproduced:.3g} {claim.unit}"
        if claim.agrees and claim.tolerance.startswith("within"):
            status = f"agrees {claim.tolerance}"
        rows.append(
            ScoreRow(f"claim:{claim.id}", "claim", claim.where, f"{claim.paper:.3g} {claim.unit} ({claim.printed})", reproduced, status, CLAIMS_PAGE)
        )
    return rows


def scorecard(hardware: str | Hardware = DEFAULT_HARDWARE) -> pd.DataFrame:
    """One row per table, figure and prose claim of the paper (and any further artifact)."""
    spec = load_hardware(hardware)
    entries = paper_artifacts()
    labels = [entry["label"] for entry in entries]
    rows = [score_artifact(entry["label"], spec, entry) for entry in entries]
    rows += [score_artifact(label, spec) for label in registry() if label not in labels and registry()[label].kind != "claims"]
    rows += score_claims(spec)
    return pd.DataFrame([asdict(row) for row in rows])
