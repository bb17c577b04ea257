"""What each assumption switch moves (the assumptions page's computed section, issue #10).

Independent facts: the dataclass's own fields, and printed cells whose switched value is worked by
hand from the paper's inputs (312 Tflop/s, 2039 GB/s, X160's critical batch).
"""

from __future__ import annotations

import dataclasses

import pytest

from lgacc.model.assumptions import Assumptions
from lgacc.paper.assumption_effects import (
    MOVED_VALUES,
    assumption_tables,
    claim_effects,
    effects_markdown,
    effects_summary,
    switch_settings,
    table_effects,
)

SETTINGS = [("gb", "GB"), ("critical_batch_scale", 2.0)]


@pytest.fixture(scope="module")
def cells():
    return table_effects("a100-80gb", SETTINGS)


def test_every_switch_of_the_dataclass_is_listed_and_moved_off_its_default():
    settings = switch_settings()
    assert {name for name, _ in settings} == {f.name for f in dataclasses.fields(Assumptions)}
    defaults = Assumptions()
    for name, value in settings:
        assert value != getattr(defaults, name), name
        Assumptions().replace(**{name: value})  # a valid value
    assert ("pipeline_overlap", "always") in settings and ("pipeline_overlap", "never") in settings
    assert set(MOVED_VALUES) <= {name for name, _ in settings}


def test_every_table_with_printed_values_that_depends_on_assumptions_is_rebuilt():
    tables = set(assumption_tables())
    assert {"table:x_model", "table:hardware_bandwidth", "table:parallel_methods_comparison",
            "table:parallel_methods_memory", "table:smaller_cluster"} <= tables
    assert "table:mixed_buffering" not in tables  # symbolic: no hardware, no search, no switch


def _cell(cells, switch, table, row, cell):
    found = [c for c in cells if (c.switch, c.table, c.row, c.cell) == (switch, table, row, cell)]
    assert len(found) == 1, (switch, table, row, cell, found)
    return found[0]


def test_decimal_gb_moves_the_gpu_memory_threshold(cells):
    """The paper prints 143 flops/B for GPU memory: 312e12 / (2039 x 2^30) = 142.5.  Read as decimal
    GB, 312e12 / 2039e9 = 153.0: the cell moves and no longer agrees."""
    moved = _cell(cells, "gb", "table:hardware_bandwidth", "GPU memory", "threshold_flops_per_byte")
    assert (moved.printed, moved.default, moved.switched) == ("143", "143", "153")
    assert moved.default_agrees and not moved.switched_agrees and moved.verdict_changes


def test_an_input_shown_again_is_never_a_moved_cell(cells):
    """Under decimal GB the spec's "2039" still reads 2039 GB/s; only what is computed from it moves."""
    assert not [c for c in cells if c.cell in ("bandwidth_gb_s", "d_m", "d_l")]


def test_doubling_the_critical_batch_constant_moves_x160s_critical_batch(cells):
    """X160 prints b_c = 2420.  By hand, b_c = 3.2e6 / d_s(GPT-3) x (N_X160 / N_GPT-3)^(1/3) x 2048 / 2560
    with N = 12 d_m^2 d_l: 1562.5 x (12 x 25600^2 x 160 / (12 x 12288^2 x 96))^(1/3) x 0.8 = 2417.49;
    with K_c doubled, 4834.99 -> "4835": moved, and no longer agrees."""
    moved = _cell(cells, "critical_batch_scale", "table:x_model", "X160", "b_c")
    assert moved.printed == "2420" and moved.switched == "4835" and not moved.switched_agrees
    # GPT-3's b_c, the calibration point, is an input shown again: not listed even though it doubles
    assert not [c for c in cells if c.row == "GPT-3" and c.cell == "b_c"]


def test_a_switch_that_bears_on_no_table_moves_no_cell():
    from lgacc.paper.assumption_effects import CellEffect

    summary = effects_summary([CellEffect("gb", "GB", "t", "r", "c", "1", "1", "2", True, False)], [],
                              [("gb", "GB"), ("heads_cap", False)])
    assert summary.set_index("switch").loc["heads_cap", "cells_moved"] == 0
    assert summary.set_index("switch").loc["gb", "cells_now_differ"] == 1


def test_claims_study_rows_are_read_by_switch_and_value():
    records = [
        {"id": "a", "printed": "280 trillion", "reproduced": 1.0, "alternatives": [
            {"assumption": "divisible_heads=False, heads_cap=False", "reproduced": 2.0, "agrees": False},
            {"assumption": "gb='GB' (the paper's 80 GB read as 80 x 10^9 bytes)", "reproduced": 1.0, "agrees": False},
            {"assumption": "b_c rounded to 2420 as the paper prints it", "reproduced": 3.0, "agrees": True},
            {"assumption": "pipeline_overlap='always'", "reproduced": 3.0, "agrees": True},
        ]},
    ]
    effects = claim_effects(records)
    assert [(e.switch, e.value, e.moves, e.agrees) for e in effects] == [
        ("divisible_heads", "false", True, False), ("heads_cap", "false", True, False),
        ("gb", "GB", False, False), ("pipeline_overlap", "always", True, True)]
    summary = effects_summary([], effects).set_index(["switch", "value"])
    assert summary.loc[("pipeline_overlap", "always"), "claims_now_agree"] == 1
    assert summary.loc[("pipeline_overlap", "never"), "claims_tried"] == 0


def test_the_page_section_lists_every_switch(cells):
    text = effects_markdown(cells, [], "a100-80gb", SETTINGS)
    assert "| gb | GB |" in text and "| critical_batch_scale | 2 |" in text
    assert ":::{dropdown} `gb` = GB" in text
    assert "`table:hardware_bandwidth`\n\n| row | cell |" in text
    assert "| GPU memory | threshold flops per byte | 143 | 143 | 153 ✗ |" in text
