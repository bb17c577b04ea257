"""The one paper reading (issue #32): its switches, its columns, its justification page, and the tensor onset."""

from __future__ import annotations

import pytest

from lgacc.model.assumptions import Assumptions
from lgacc.model.hardware import load_hardware
from lgacc.paper.claims.reading import (
    COLUMNS,
    PAPER_NAME,
    PAPER_READING,
    SWITCHES,
    PaperReading,
    column_name,
    implied_infiniband_threshold,
    kind_of,
    tensor_onset,
)


def test_every_field_is_a_switch_with_a_justification():
    import dataclasses

    fields = [f.name for f in dataclasses.fields(PaperReading)]
    assert [s.field for s in SWITCHES] == fields
    for s in SWITCHES:
        assert s.why and s.meaning and s.others and s.kind in ("scaling", "fact")
        assert getattr(PAPER_READING, s.field) not in s.others


def test_the_columns_are_the_paper_reading_then_each_switch_alone_then_combinations():
    assert COLUMNS[0] == PAPER_READING and COLUMNS[0].name == PAPER_NAME and kind_of(COLUMNS[0]) == "paper"
    alone = {(k, v) for c in COLUMNS if len(c.changes()) == 1 for k, v in c.changes().items()}
    assert alone == {(s.field, v) for s in SWITCHES for v in s.others}
    assert len({c.name for c in COLUMNS}) == len(COLUMNS)
    assert column_name({"scaling_grid": "fine"}) == "scaling_grid='fine'"
    assert kind_of(PAPER_READING.replace(gb="GB")) == "fact"
    assert kind_of(PAPER_READING.replace(gb="GB", scaling_grid="fine")) == "scaling"


def test_the_assumptions_page_justifies_every_switch_with_its_paper_value(root):
    page = (root / "book" / "assumptions.md").read_text()
    section = page[page.index("## The paper reading"):page.index("## What each switch moves")]
    for s in SWITCHES:
        assert f"| `{s.field}` | `{getattr(PAPER_READING, s.field)!r}` |" in section, s.field


def test_x160_picks_the_same_configurations_under_the_tables_defaults_and_the_paper_reading():
    from lgacc.model.transformer import x_model
    from lgacc.search import fastest

    spec = load_hardware("a100-80gb")
    for method in ("baseline", "improved"):
        tables = fastest(x_model(160), spec, method, "3d", explain=False, assumptions=Assumptions())
        paper = fastest(x_model(160), spec, method, "3d", explain=False, assumptions=PAPER_READING.assumptions())
        assert tables.config == paper.config, method
        assert tables.evaluation.time_days == pytest.approx(paper.evaluation.time_days)


def test_the_tensor_onset_by_hand():
    """17 devices over InfiniBand: eq:tensor_intensity at n_I = 4 is nu = 12 d_m / (3 * 16) = d_m / 4, so the
    overhead nu_IB / nu is within 25 % from d_m = 16 nu_IB; x = sqrt(d_m), p = 12 x^5 + 13 x^3."""
    spec = load_hardware("a100-80gb")

    def by_hand(threshold: float) -> float:
        x = (16 * threshold) ** 0.5
        return 12 * x**5 + 13 * x**3
    onset, how = tensor_onset(spec)
    assert onset == pytest.approx(by_hand(spec.threshold("infiniband")), rel=0.02) and "25 %" in how
    implied = implied_infiniband_threshold(spec)
    assert by_hand(implied) == pytest.approx(25e12, rel=0.02)  # the printed "~25 trillion parameters"
    assert 5200 < implied < 5400 < spec.threshold("infiniband")


def test_the_readings_command_prints_the_matrix(capsys):
    """``lgacc reproduce readings --format json``: a row per graded claim, a cell per column (value, agrees), the
    paper reading first, and a summary per column whose counts are the rows' own."""
    import json

    from lgacc.cli import main
    from lgacc.paper.claims import printed_claims

    assert main(["reproduce", "readings", "--format", "json"]) == 0
    matrix = json.loads(capsys.readouterr().out)
    assert matrix["reading"] == PAPER_NAME and matrix["columns"][0]["name"] == PAPER_NAME
    assert [r["id"] for r in matrix["rows"]] == [c.id for c in printed_claims()]
    n = len(matrix["columns"])
    assert n == len(COLUMNS) and all(len(r["cells"]) == n for r in matrix["rows"])
    for i, s in enumerate(matrix["summary"]):
        assert s["agree"] == sum(r["cells"][i]["agrees"] for r in matrix["rows"])
        assert s["breaks"] == [r["id"] for r in matrix["rows"] if r["cells"][0]["agrees"] and not r["cells"][i]["agrees"]]
    assert matrix["summary"][0]["breaks"] == []
    # the example: the fine grid breaks "90 trillion" (offload_needed_above)
    fine = [c["name"] for c in matrix["columns"]].index("scaling_grid='fine'")
    assert "offload_needed_above" in matrix["summary"][fine]["breaks"]
    # rows agree with the verdicts: reproduced exactly when the paper reading's cell agrees
    for r in matrix["rows"]:
        assert (r["verdict"] == "reproduced") == r["cells"][0]["agrees"], r["id"]


def test_every_reading_of_the_matrix_reads_in_words():
    """Issue #33 item 7: a reader sees a switch's meaning, never its code name (lgacc.paper.claims.words)."""
    from lgacc.paper.claims.reading import COLUMNS, PAPER_NAME
    from lgacc.paper.claims.words import name_in_words

    for reading in COLUMNS:
        words = name_in_words(reading.name)
        assert "=" not in words and "_" not in words, (reading.name, words)
    assert name_in_words(PAPER_NAME) == "the paper reading"
    assert name_in_words("gb='GB', flops_per_token=6") == "decimal GB and 6 flops per token and parameter (no recomputation)"
