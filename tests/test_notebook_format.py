"""The book's formatters and findings, on hand-computed values."""

import pandas as pd

from lgacc.book.notebook import config_table, format_bytes, format_days, format_int, format_si, readable_frame
from lgacc.model.hardware import GIB
from lgacc.paper.findings import findings_markdown, readable_value, verdict_counts


def test_counts_are_integers():
    assert format_int(10752.0) == "10,752"
    assert format_int(float("nan")) == "—"


def test_times_in_the_unit_that_fits():
    assert format_days(27.0) == "27 d"
    assert format_days(0.5) == "12 h"
    assert format_days(1 / 1440 * 5) == "5 min"
    assert format_days(730.5) == "2 y"


def test_sizes_with_prefixes():
    assert format_bytes(488 * GIB) == "488 GiB"
    assert format_bytes(61.25 * 1024 * GIB) == "61.2 TiB"
    assert format_si(312e12, "flop/s") == "312 Tflop/s"
    from lgacc.book.notebook import format_count

    # the paper's suffixes for parameter counts (table:x_model prints 8.15 B, not 8.15 G)
    assert (format_count(8.157e9), format_count(301_989_888), format_count(488), format_count(1.26e12)) == \
        ("8.16 B", "302 M", "488", "1.26 T")


def test_readable_frame_has_no_index_and_formats_known_columns():
    frame = pd.DataFrame({"n_gpu": [10752.0], "time_days": [0.25], "memory_gib": [4.72]}, index=[7])
    shown = readable_frame(frame)
    assert list(shown.index) == [0]
    assert shown.iloc[0].tolist() == ["10,752", "6 h", "4.72 GiB"]


def test_a_missing_value_reads_a_dash_whatever_the_columns_formatter():
    """The sensitivity page's ratio columns had a plain ``f"{v:.2f}"`` formatter: an infeasible row read "nan"."""
    frame = pd.DataFrame({"ratio": [1.5, float("nan"), None]})
    shown = readable_frame(frame, formats={"ratio": lambda v: f"{v:.2f}"})
    assert shown["ratio"].tolist() == ["1.50", "—", "—"]


def test_configuration_as_a_small_table():
    text = config_table({"n_b": 2285, "n_l": 2, "n_a": 208}, fields=("n_b", "n_l", "n_a"))
    assert text.splitlines() == ["| $n_b$ | $n_l$ | $n_a$ |", "|---|---|---|", "| 2,285 | 2 | 208 |"]


def test_findings_count_verdicts_from_status_and_keep_the_classes_apart():
    card = pd.DataFrame([
        {"label": "table:a", "kind": "table", "status": "agrees to printed precision", "reproduced": "3 of 3 agree", "page": "a"},
        {"label": "table:b", "kind": "table", "status": "differs", "reproduced": "1 of 2 agree", "page": "b"},
        {"label": "claim:c", "kind": "claim", "status": "differs", "verdict": "paper inconsistent", "reproduced": "", "page": "claims"},
    ])
    assert verdict_counts(card) == {"reproduced": 1, "explained": 0, "paper inconsistent": 1, "differs": 1,
                                    "not reproduced": 0, "built": 0}
    claims = [{"id": "c", "verdict": "paper inconsistent"}, {"id": "d", "verdict": "withdrawn"}]
    text = findings_markdown(card, claims, "a100-80gb")
    assert "3 graded items (tables, figures and numbers stated in prose) are 1 ✓ *reproduced*, 1 ⚠ *paper inconsistent*, " \
           "1 ✗ *differs*." in text  # no "1 are", no class merged into another; each with its mark
    assert "1 of 2 graded tables and figures reproduce:" in text
    assert "table:b </generated/b>`: 1 of 2 printed cells agree (*differs*)." in text
    assert "2 claims: 1 *paper inconsistent*, 1 *withdrawn*." in text  # an unknown class under its own name
    assert readable_value(0.428, "fraction") == "42.8 %"
    assert readable_value(33.9, "fraction") == "3,390 %"  # not 3.39e+03 % (issue #33 item 7)
    assert readable_value(2417.2, "samples") == "2,417 samples"
    assert readable_value(1.976, "ratio") == "1.98×"
    assert readable_value(6.2298e24, "flop") == "6.23 × 10²⁴ flop"  # never e-notation
    # a build for other hardware is told why the grading stays on the paper's; the paper's own build is not
    other = findings_markdown(card, claims, "a100-80gb", "h100-sxm")
    assert "This book is built for **h100-sxm**" in other and "graded there" in other
    assert "built for" not in findings_markdown(card, claims, "a100-80gb", "a100-80gb")


def test_compact_comparison_marks_only_the_differences():
    from lgacc.book.notebook import compact_comparison

    comparison = pd.DataFrame([
        {"method": "Baseline", "n_gpu (paper)": "7400", "n_gpu (reproduced)": "7360", "n_gpu agrees": False,
         "b (paper)": "2415", "b (reproduced)": "2415", "b agrees": True,
         "n_a (paper)": "4", "n_a (reproduced)": "8"},
    ])
    shown = compact_comparison(comparison)
    assert list(shown.columns) == ["method", "n_gpu", "b", "n_a"]
    row = shown.iloc[0]
    assert row["b"] == "2415"
    assert "✗ 7360" in row["n_gpu"] and "paper: 7400" in row["n_gpu"] and "lgacc-differs" in row["n_gpu"]
    assert row["n_a"] == '8<br><span class="lgacc-printed">paper: 4</span>'  # not graded: shown, not marked


def test_equation_labels_in_table_cells_become_numbered_links():
    """A cell naming eq:overhead_condition reads "Eq. (4)" (the paper's fourth numbered equation:
    critical_batch 2, ... see data/paper/equations.yaml) and links to its derivation; attributes
    and labels the paper does not number are left alone."""
    import pandas as pd

    from lgacc.book.notebook import table_html

    html = table_html(pd.DataFrame({"assumption": ["Overhead cap (eq:overhead_condition)", "eq:not_a_label"]}))
    assert 'href="derivations.html#eq-overhead-condition"' in html
    assert ">Eq. (4)</a>" in html
    assert "eq:not_a_label" in html
    assert html.count("eq:overhead_condition") == 1  # only in the link's title


def test_a_shown_quantity_never_breaks_between_number_and_unit():
    """Table text wraps to fit the column (8.61 above d was seen on the H100 build); names and prose still wrap."""
    from unittest import mock

    import lgacc.book.notebook as notebook
    import lgacc.book.notebook.tables as tables

    frame = pd.DataFrame({"hardware": ["gb200-nvl72 and more"], "time_days": [8.61], "memory_gib": [9.44], "n_gpu": [17920.0],
                          "peak": ["2.25 Pflop/s"], "note": ["5 stages of 8"]})
    with mock.patch.object(tables, "show_html") as display:
        notebook.show_table(frame)
    html = display.call_args[0][0]
    assert "<td>8.61\u00a0d</td>" in html and "<td>9.44\u00a0GiB</td>" in html and "<td>17,920</td>" in html
    assert "<td>2.25\u00a0Pflop/s</td>" in html
    assert "<td>gb200-nvl72 and more</td>" in html and "<td>5 stages of 8</td>" in html


def test_a_printed_power_of_ten_in_a_table_is_typeset_once():
    import pandas as pd

    from lgacc.book.notebook import table_html

    body = table_html(pd.DataFrame({"printed": [r"6.24\times 10^{24} floating point operations", r"\(3\times 10^6\)"]}))
    assert r"\(6.24\times 10^{24}\) floating point operations" in body
    assert r"\(3\times 10^6\)" in body and r"\(\(" not in body


def test_a_comparisons_notes_leave_its_table_for_one_of_their_own():
    """Hand-made comparison: ``method`` names the row, ``ok`` is a flag and ``why`` a note after the
    graded quantity; only ``method`` stays beside the numbers."""
    from lgacc.book.notebook import row_notes

    comparison = pd.DataFrame([{"method": "Baseline", "ok": True, "b (paper)": "2", "b (reproduced)": "2",
                                "b agrees": True, "why": "a reason", "setup (reproduced)": "n_b=1"}])
    assert row_notes(comparison) == (["method"], ["ok", "why", "setup (reproduced)"])
    no_quantity = pd.DataFrame([{"model": "X2"}])
    assert row_notes(no_quantity) == (["model"], [])


def test_figures_keep_a_legible_width_and_lose_only_bytes():
    from lgacc.book.notebook.figures import figure_html, legible_width, lighter_svg

    svg = ('<?xml version="1.0"?>\n<svg width="468pt" height="100pt" viewBox="0 0 468 100" xmlns="http://www.w3.org/2000/svg">'
           '<metadata>big</metadata><text style="font-size: 7px; font-family: \'DejaVu Sans\', \'Bitstream Vera Sans\', '
           '\'Lucid\', sans-serif" x="12.345678" y="0.123456" transform="scale(0.015625)">a</text>'
           '<text style="font-size: 10px">b</text></svg>')
    assert legible_width(svg) == 602  # 9 px x 468 / 7: the 7-unit text reads at 9 px from 602 px wide
    assert legible_width(svg, 14) == 936
    light = lighter_svg(svg)
    assert "metadata" not in light and 'x="12.34"' in light
    assert 'y="0.123456"' in light and "scale(0.015625)" in light  # numbers below 1 keep every digit
    assert "'Lucid'" not in light and "font-size: 7px" in light
    html = figure_html(svg)
    assert html.startswith('<div class="lgacc-figure lgacc-wide"><svg ') and "<?xml" not in html  # 602 px > a phone
    assert 'style="width: 100%; height: auto; min-width: 602px;"' in html and 'width="468pt"' not in html


def test_tables_with_notes_under_rows_and_cells_labelled_for_a_phone():
    from lgacc.book.notebook.tables import table_html

    frame = pd.DataFrame({"item": ["a", "b"], "parameter_buffers": [1, 2], "explanation": ["why <a>", ""]})
    html = table_html(frame, notes="explanation", stack=True)
    assert "<th>explanation</th>" not in html and "<th>parameter_<wbr>buffers</th>" in html
    rows = html.split("<tbody>")[1]
    # a's row, then its note across both columns (escaped), then b's row: b has no note
    assert rows.index('<td data-label="item">a</td>') < rows.index('<td colspan="2">why &lt;a&gt;</td>') \
        < rows.index('<td data-label="item">b</td>')
    assert rows.count("lgacc-note") == 1 and rows.count('class="lgacc-row"') == 2
    assert '<td data-label="parameter_buffers">2</td>' in rows and "lgacc-stack" in html


def test_claims_table_marks_follow_the_verdict_not_the_default_reading():
    """Each verdict shows its own mark (issue #32: ≈ explained, never the ✓ of reproduced), whatever ``agrees``
    says: a *paper inconsistent* one that happens to carry ``agrees`` shows ⚠."""
    from lgacc.book.notebook import claims_table

    records = [{"id": "a_b", "printed": "1300 GPUs", "reproduced": 1290.0, "unit": "GPUs", "agrees": False, "verdict": "explained"},
               {"id": "c", "printed": "50 T", "reproduced": 3.8e13, "unit": "parameters", "agrees": True, "verdict": "paper inconsistent"}]
    table = claims_table(records)
    assert table["verdict"].tolist() == ["≈\u00a0explained", "⚠\u00a0paper inconsistent"]
    assert table["claim"].iloc[0] == "a_<wbr>b"


def test_a_long_identifier_may_break_after_its_underscores():
    """A claim's id alone set its column to 262 px (the claims page's grid table was 853 px in a 784 px column);
    it may now break after each underscore, and prose or short names are left as they are."""
    from lgacc.book.notebook.tables import table_html

    html = table_html(pd.DataFrame({"claim": ["unlimited_node_memory_limit", "n_b", "two words_here"]}))
    assert "<td>unlimited_<wbr>node_<wbr>memory_<wbr>limit</td>" in html
    assert "<td>n_b</td>" in html and "<td>two words_here</td>" in html


def test_a_sweep_shows_its_degrees_in_one_column():
    """The three scaling figures' tables: feasible rows only, n_b × n_l × n_a in one column (the twelve columns
    were 786-819 px in a 784 px column), every other column as the sweep has it."""
    from unittest import mock

    import lgacc.book.notebook.tables as tables

    frame = pd.DataFrame({"model": ["X160", "X2048"], "method": ["improved", "improved"], "p": [1.26e12, 5.4e17],
                          "time_days": [6.81, 1e9], "n_gpu": [38640, 1], "efficiency": [0.88, 0.1], "n_b": [483, 1],
                          "n_l": [5, 1], "n_a": [16, 1], "offload": [False, True], "memory_gib": [4.4, 9e9],
                          "non_offloadable_gib": [2.9, 1.0], "feasible": [True, False]})
    with mock.patch.object(tables, "show_html") as display:
        tables.show_sweep_table(frame)
    html = display.call_args[0][0]
    assert "<td>483 × 5 × 16</td>" in html and "X2048" not in html
    assert "n_b × n_l × n_a" in html and "<th>non-offloadable</th>" in html


def test_a_column_already_text_is_shown_as_it_is():
    """A known column's formatter (``b`` is a count) is for numbers: text under that heading, such as a graded cell
    ``2415 ✓ (2415)``, is shown as it is (the trillion page's search table raised a ValueError)."""
    from lgacc.book.notebook.formats import readable_frame

    shown = readable_frame(pd.DataFrame({"b": ["2415 ✓ (2415)", None], "n_gpu": [38640, 7728]}))
    assert shown["b"].tolist()[0] == "2415 ✓ (2415)" and shown["GPUs"].tolist() == ["38,640", "7,728"]


def test_a_list_reads_as_a_sentence_writes_it():
    from lgacc.book.notebook.formats import format_list

    assert format_list(["64"]) == "64"
    assert format_list(["64", "256"]) == "64 and 256"
    assert format_list(["3.73", "2.68", "2.66"]) == "3.73, 2.68 and 2.66"
