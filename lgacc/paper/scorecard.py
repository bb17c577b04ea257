"""The reproduction scorecard: every table and figure of the paper, with a verdict.

One row per artifact listed in ``data/paper/artifacts.yaml`` (the paper's labels).
A table with a comparison is *agrees* when every compared cell rounds to the
printed value and *differs* otherwise, with the count; a figure without printed
values is *reproduced* when it builds; an artifact the package does not yet
produce is *not reproduced*.  No status is written by hand: each comes from
running the artifact.

Every row also carries a ``verdict`` (``reproduced``, ``explained``, ``paper inconsistent``,
``differs``, ``not reproduced``; a claim's is the one :mod:`lgacc.paper.claims` gives), the ``difference`` in a few characters, an ``explanation`` a
reader can follow, and for an explained claim the ``alternative``: the named
assumption and the value the package computes under it.

A table counts only its computed cells: a printed cell that is an input echoed
back (a model's dimension, the spec's own bandwidth, an operation's name; flagged
``echoed_input`` by the reproduction, see :mod:`lgacc.paper.cells`) is shown on the
table's page but not graded.  Each table row carries the counts, ``cells_graded``,
``cells_agree``, ``cells_explained`` and ``inputs_echoed``, and its ``paper`` text
says how many inputs were echoed ("17 printed cells; 49 inputs echoed, not counted").
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd
import yaml

from lgacc.cache.results import cached
from lgacc.model.hardware import DEFAULT_HARDWARE, Hardware, load_hardware

from .artifacts import agreement, registry
from .cells import tally

# Verdicts, shared with the claims: reproduced, explained (by a named assumption), differs, not reproduced.
from .claims import (
    DIFFERS as V_DIFFERS,
)
from .claims import (
    EXPLAINED as V_EXPLAINED,
)
from .claims import (
    NOT_REPRODUCED as V_MISSING,
)
from .claims import (
    PAPER_INCONSISTENT as V_INCONSISTENT,
)
from .claims import (
    REPRODUCED as V_REPRODUCED,
)
from .printed import PAPER_DIR

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
    verdict: str = V_MISSING
    difference: str = ""
    explanation: str = ""
    alternative: dict | None = None
    #: computed cells compared with the paper (a table's; ``None`` for a figure or a claim)
    cells_graded: int | None = None
    #: of those, the ones that agree at printed precision
    cells_agree: int | None = None
    #: of those that differ, the ones a named reading explains
    cells_explained: int | None = None
    #: printed cells that are inputs echoed back, not counted
    inputs_echoed: int | None = None


#: The integer counts of a table row, kept integers (``None`` elsewhere) in the scorecard's frame.
COUNT_COLUMNS = ("cells_graded", "cells_agree", "cells_explained", "inputs_echoed")


#: A figure with no printed values builds: ``built``, counted apart from the graded artifacts.
V_BUILT = "built"
_VERDICT_OF_STATUS = {AGREES: V_REPRODUCED, MATCHES_FORMULAS: V_REPRODUCED, REPRODUCED: V_BUILT,
                      DIFFERS: V_DIFFERS, MISSING: V_MISSING, FAILED: V_MISSING}


def _with_verdict(row: ScoreRow, explanation: str = "", difference: str = "") -> ScoreRow:
    from dataclasses import replace

    verdict = _VERDICT_OF_STATUS.get(row.status, V_DIFFERS)
    if not explanation:
        explanation = {
            AGREES: "every compared cell agrees at printed precision",
            MATCHES_FORMULAS: "the simulated schedule measures what the paper's formulas say",
            REPRODUCED: "the figure builds; the paper prints no values to compare",
            MISSING: "the package does not produce this artifact yet",
            FAILED: f"building it fails: {row.reproduced}",
        }.get(row.status, f"{row.reproduced} at printed precision; the page lists the cells that differ")
    if not difference:
        difference = "none" if verdict in (V_REPRODUCED, V_BUILT) else ("not computed" if verdict == V_MISSING else row.reproduced)
    return replace(row, verdict=verdict, difference=difference, explanation=explanation)


def paper_artifacts() -> list[dict[str, Any]]:
    """The paper's tables and figures, in its order."""
    return yaml.safe_load((PAPER_DIR / "artifacts.yaml").read_text())["artifacts"]


def score_artifact(label: str, hardware: Hardware, entry: dict[str, Any] | None = None) -> ScoreRow:
    """Build one artifact and grade it against the paper, with its verdict."""
    return _with_verdict(_score_artifact(label, hardware, entry))


def _score_artifact(label: str, hardware: Hardware, entry: dict[str, Any] | None = None) -> ScoreRow:
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
        counted = tally(artifact.compare(result))
    except Exception as error:
        return ScoreRow(label, artifact.kind, artifact.title, "", f"comparison fails: {type(error).__name__}: {error}", FAILED, page)
    agree, total = counted.agree, counted.graded
    status = AGREES if agree == total and total > 0 else DIFFERS
    paper = f"{total} printed cells" + (f"; {counted.echoed_text()}" if counted.echoed else "")
    return ScoreRow(label, artifact.kind, artifact.title, paper, f"{agree} of {total} agree", status, page,
                    cells_graded=total, cells_agree=agree, cells_explained=counted.explained,
                    inputs_echoed=counted.echoed)


CLAIMS_PAGE = "claims"


def score_claims(hardware: Hardware) -> list[ScoreRow]:
    """One row per prose claim of the paper, graded by :mod:`lgacc.paper.claims`."""
    from .claims import reproduce_claims

    from .claims.words import name_in_words
    from .findings import readable_value

    rows = []
    for claim in reproduce_claims(hardware):
        if claim.reproduced is None:
            status, reproduced = MISSING, "—"
        else:
            status, reproduced = (AGREES if claim.agrees else DIFFERS), readable_value(claim.reproduced, claim.unit)
        if claim.agrees and claim.rule not in ("exact",) and not claim.rule.startswith("digits"):
            status = f"agrees ({claim.tolerance})"
        if claim.verdict == V_EXPLAINED:
            status = f"{DIFFERS}, explained by {name_in_words(claim.alternative['assumption'])}"
        elif claim.verdict == V_INCONSISTENT:
            status = f"{DIFFERS}: the paper's own rules do not reach it"
        rows.append(
            # the paper's own words ("in a matter of minutes", "at least twice as fast"): a qualitative
            # claim has no printed number to show, and a number reads best as printed
            ScoreRow(f"claim:{claim.id}", "claim", claim.where, claim.printed, reproduced,
                     status, CLAIMS_PAGE, claim.verdict, claim.difference, claim.explanation, claim.alternative)
        )
    return rows


def scorecard(hardware: str | Hardware = DEFAULT_HARDWARE) -> pd.DataFrame:
    """One row per table, figure and prose claim of the paper (and any further artifact).

    Kept on disk for the next process (:mod:`lgacc.cache.results`): every artifact is built, which
    takes seconds, and the book, the command line and the tests ask for the same card."""
    spec = load_hardware(hardware)
    return cached("scorecard", spec, lambda: _scorecard(spec))


def _scorecard(spec: Hardware) -> pd.DataFrame:
    entries = paper_artifacts()
    labels = [entry["label"] for entry in entries]
    rows = [score_artifact(entry["label"], spec, entry) for entry in entries]
    rows += [score_artifact(label, spec) for label in registry() if label not in labels and registry()[label].kind != "claims"]
    rows += score_claims(spec)
    frame = pd.DataFrame([asdict(row) for row in rows])
    for column in COUNT_COLUMNS:  # integers where counted, None elsewhere (not a float column with NaN)
        frame[column] = pd.Series([getattr(row, column) for row in rows], dtype=object)
    return frame


def artifact_cells(label: str, hardware: str | Hardware = DEFAULT_HARDWARE) -> dict[str, int] | None:
    """The one count of an artifact's graded cells, from the scorecard (``graded``, ``agree``, ``explained``,
    ``echoed``): every page that states how many of a table's cells agree reads it here, so that each artifact
    shows one count everywhere; ``None`` for an artifact without graded cells (a figure, a claim)."""
    card = scorecard(hardware)
    row = card[card["label"] == label]
    if not len(row) or row.iloc[0]["cells_graded"] is None:
        return None
    r = row.iloc[0]
    return {"graded": int(r["cells_graded"]), "agree": int(r["cells_agree"]),
            "explained": int(r["cells_explained"] or 0), "echoed": int(r["inputs_echoed"] or 0)}


def cell_counts(card: pd.DataFrame) -> dict[str, int]:
    """The printed table cells of a scorecard, summed over its rows: computed cells ``reproduced``,
    ``explained`` and ``differs`` (together ``graded``), and the ``echoed`` inputs, not counted."""
    counted = card[card["cells_graded"].notna()] if "cells_graded" in card.columns else card.iloc[0:0]

    def total(column: str) -> int:
        return int(sum(int(v) for v in counted[column])) if len(counted) else 0

    graded, agree, explained = total("cells_graded"), total("cells_agree"), total("cells_explained")
    return {"graded": graded, "reproduced": agree, "explained": explained, "differs": graded - agree - explained,
            "echoed": total("inputs_echoed")}
