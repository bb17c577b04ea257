"""One verdict per claim, everywhere (issue #25): the claims page, the scorecard, the front page's findings,
the sensitivity study and today's-hardware page give each claim the same verdict on the paper's hardware.

The claims are computed once per process (:mod:`lgacc.paper.claims.registry`) and kept on disk, so this
reads what the claims tests computed; each page is then asked for its own view of the same claims.
"""

from __future__ import annotations

import pytest

from lgacc.paper import PAPER_HARDWARE
from lgacc.paper.claims import CONFIRMING, claims_records, confirms, verdict_of
from lgacc.paper.findings import CONFIRMING as FINDINGS_CONFIRMING


@pytest.fixture(scope="module")
def records():
    return {r["id"]: r for r in claims_records(PAPER_HARDWARE)}


def test_the_front_page_confirms_what_the_verdict_confirms(records):
    """The front page (lgacc.book.frontpage) groups each headline claim under the registry's verdict, says it
    holds exactly when that verdict confirms it, and grades the headline speed-up by the same record."""
    from lgacc.book import frontpage

    assert FINDINGS_CONFIRMING == CONFIRMING  # the formatting module's copy of the one list
    assert tuple(frontpage.HOLDING) == tuple(CONFIRMING)
    groups = frontpage._by_class(list(records.values()))
    for claim_id, words in frontpage.HEADLINE_CLAIMS:
        item = frontpage._item(records[claim_id], words)
        placed = [verdict for verdict, items in groups.items() if item in items]
        assert placed == [records[claim_id]["verdict"]], claim_id  # in exactly its verdict's group
        assert (placed[0] in frontpage.HOLDING) == confirms(records[claim_id]["verdict"]), claim_id
    assert frontpage.SPEEDUP_CLAIM in records
    # the statement the old pages graded twice (with and without X160) is one claim now
    assert "ethernet_unpartitioned_only_smallest" not in records


def test_the_scorecard_and_the_registry_give_each_claim_the_same_verdict(records):
    from lgacc.paper.scorecard import score_claims
    from lgacc.model.hardware import load_hardware

    rows = {row.label.removeprefix("claim:"): row.verdict for row in score_claims(load_hardware(PAPER_HARDWARE))}
    assert rows == {key: r["verdict"] for key, r in records.items()}
    assert all(verdict_of(key, PAPER_HARDWARE) == r["verdict"] for key, r in records.items())


def test_todays_hardware_gives_the_claims_verdict_on_the_papers_hardware(records):
    from lgacc.studies.today import compare_hardware, conclusions

    graded = conclusions(compare_hardware("X160", [PAPER_HARDWARE]))
    linked = graded[graded.claim_id != ""]
    assert len(linked) >= 4
    for row in linked.itertuples():
        assert row.claim_verdict == records[row.claim_id]["verdict"], row.claim_id
        assert row.holds == confirms(records[row.claim_id]["verdict"]), row.claim_id
    # the same rule computed independently of the registry gives the same answer
    from lgacc.studies.today import _graded
    speedup = records["improved_speedup_over_baseline"]["reproduced"]
    assert _graded("twice", speedup) == confirms(records["improved_speedup_over_baseline"]["verdict"])


def test_the_sensitivity_study_at_the_papers_values_says_what_the_claims_page_says(records):
    from lgacc.studies import sensitivity as S

    rows = S.sensitivity_rows(PAPER_HARDWARE, names=("gb",))  # one dimension: its paper value is the default row
    found = S.verdicts(rows, PAPER_HARDWARE)
    assert {v["conclusion"] for v in found} == {c.key for c in S.CONCLUSIONS}
    for v in found:
        claim = records[v["claim"]]
        assert v["claim_verdict"] == claim["verdict"], v["conclusion"]
        assert (v["at_default"] == "holds") == confirms(claim["verdict"]), (v["conclusion"], v["at_default"], claim)
