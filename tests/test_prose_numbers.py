"""Every number the paper prints in prose is graded by a claim or excused with a reason (issue #32)."""

from __future__ import annotations

import pytest

from lgacc.paper import prose_numbers as P

pytestmark = pytest.mark.skipif(not P.TEX.is_file(), reason="the paper's LaTeX source is not beside the repository")


def test_every_prose_number_is_graded_or_excused():
    missing = [f"{n.text!r} in ...{n.context}..." for n in P.ungraded_numbers()]
    assert not missing, "numbers of the prose neither graded nor excused:\n" + "\n".join(missing)


def test_every_excuse_has_a_reason_and_quotes_the_prose():
    paragraphs = [P._normal(p) for p in P.prose_paragraphs()]
    for excuse in P.excuses():
        assert excuse["reason"].strip(), excuse
        assert any(P._normal(excuse["text"]) in p for p in paragraphs), f"stale excuse: {excuse['text']!r}"


def test_the_extractor_finds_numerals_and_words_and_skips_math_citations_and_dates():
    found = [n.text.lower() for n in P.prose_numbers()]
    for printed in ("280", "90", "4.5", "13", "62", "33", "2420", "7400", "1300", "twice", "half", "several", "dozens"):
        assert printed in found, printed
    assert found.count("33") == 2  # "a 33% increase in computation", "only 33% lower"
    assert "2021" not in found and "2020" not in found  # dates (and citations' years) are not numbers
    assert not any(n.text in ("8", "24") for n in P.prose_numbers() if "b d_s" in n.context)  # inline math is not prose


def test_the_issues_listed_numbers_are_claims():
    from lgacc.paper.claims import printed_claims

    ids = {c.id for c in printed_claims()}
    assert {"tensor_over_infiniband_above", "recomputation_33_percent", "partition_intensity_33_percent_lower",
            "without_tensor_above_three_months", "gpt3_dozens_of_gpus_memory", "inference_seconds_per_trillion",
            "gpt3_more_terabytes"} <= ids
