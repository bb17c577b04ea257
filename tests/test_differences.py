"""The assumptions page's list of differing cells (lgacc.paper.differences) comes from the comparisons.

Independent facts checked: printed cells read from the transcription (``data/paper``), the
scorecard's per-table counts (:func:`lgacc.paper.cells.tally`, another path over the same comparisons),
and hand-chosen cells known to agree or to differ.
"""

from __future__ import annotations

import yaml

from lgacc.paper.differences import WHY, differences_markdown, differing_cells
from lgacc.paper.scorecard import cell_counts, scorecard


def test_the_list_has_as_many_cells_as_the_scorecard_counts_differing_or_explained():
    cells = differing_cells("a100-80gb")
    counts = cell_counts(scorecard("a100-80gb"))
    assert len(cells) == counts["differs"] + counts["explained"]
    assert sum(c.explained for c in cells) == counts["explained"]


def test_printed_text_is_the_transcriptions_and_known_cells_are_placed(root):
    cells = {(c.table, c.row, c.quantity): c for c in differing_cells("a100-80gb")}
    rows = yaml.safe_load((root / "data" / "paper" / "table_x_model.yaml").read_text())["rows"]
    bert = next(r for r in rows if r["model"] == "BERT")
    assert cells[("table:x_model", "BERT", "p")].printed == str(bert["p"])  # 301 M, as printed
    assert cells[("table:x_model", "BERT", "p")].reproduced != str(bert["p"])
    assert not any(key[:2] == ("table:x_model", "X160") and key[2] == "p" for key in cells)  # 1.0 T... agrees
    assert all(c.why for c in cells.values() if c.table == "table:x_model")  # each x_model cell has a cause


def test_every_cause_names_a_cell_that_differs_and_the_markdown_opens_one_dropdown_per_table():
    cells = differing_cells("a100-80gb")
    for (table, quantity, words) in WHY:
        assert any(c.table == table and c.quantity == quantity and words in c.row for c in cells), (table, words)
    text = differences_markdown(cells, "a100-80gb")
    assert text.count(":::{dropdown}") == len({c.table for c in cells})
    assert "every computed printed cell" in differences_markdown([], "x")
