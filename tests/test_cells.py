"""Printed cells that are inputs echoed back are shown but not graded (issue #10).

Independent facts: the counts are written out by hand from the paper's tables (their rows and
columns in the LaTeX source), and a wrong echoed input must leave the graded count untouched
while a wrong computed cell must not.
"""

from __future__ import annotations

import pandas as pd
import pytest

from lgacc.model.hardware import load_hardware
from lgacc.paper.artifacts import agreement, get_artifact
from lgacc.paper.cells import CellTally, tally
from lgacc.paper.scorecard import score_artifact


def test_tally_counts_computed_and_echoed_cells_apart():
    comparison = pd.DataFrame([
        {"p agrees": True, "d_m agrees": True, "d_m echoed_input": True, "n_gpu agrees": False, "n_gpu verdict": "explained"},
        {"p agrees": False, "d_m agrees": False, "d_m echoed_input": True, "n_gpu agrees": False, "n_gpu verdict": "differs"},
        {"p agrees": None, "d_m agrees": float("nan"), "d_m echoed_input": float("nan"), "n_gpu agrees": True},
    ])
    counted = tally(comparison)
    # p: 2 printed (one missing), n_gpu: 3; d_m: 2 echoed (one not printed)
    assert counted == CellTally(graded=5, agree=2, explained=1, echoed=2, echoed_agree=1)
    assert counted.differ == 2
    assert agreement(comparison) == (2, 5)
    assert counted.echoed_text() == "2 inputs echoed, not counted (1 not the paper's: this spec's own value)"


def _x_model():
    artifact = get_artifact("table:x_model")
    return artifact, artifact.reproduce("a100-80gb")


def test_x_model_grades_only_its_derived_columns():
    """table:x_model prints 9 models.  Of its columns only p and b_c are results: 9 + 9 = 18 cells,
    less GPT-3's b_c, the calibration point of K_c (3.2 M tokens / d_s by construction) = 17.  The
    five dimensions d_s, d_a, d_h, d_m, d_l (9 x 5 = 45), the trained batches printed in parentheses
    (BERT 256, Megatron-LM 512, T-NLG 512: 3) and GPT-3's b_c are inputs: 45 + 3 + 1 = 49."""
    row = score_artifact("table:x_model", load_hardware("a100-80gb"))
    assert (row.cells_graded, row.inputs_echoed) == (17, 49)
    assert row.paper == "17 printed cells; 49 inputs echoed, not counted"
    assert row.reproduced.endswith(" of 17 agree")


def test_a_wrong_dimension_does_not_move_the_grade_but_a_wrong_parameter_count_does():
    artifact, built = _x_model()
    before = tally(artifact.compare(built))
    wrong_width = built.assign(d_m=built["d_m"] + 1)
    after = tally(artifact.compare(wrong_width))
    assert (after.graded, after.agree) == (before.graded, before.agree)
    assert after.echoed_agree == before.echoed_agree - 9  # every row's d_m now differs from the paper
    wrong_count = built.assign(p=built["p"] * 1.1)
    assert tally(artifact.compare(wrong_count)).agree < before.agree


def test_hardware_table_grades_the_thresholds_not_the_specs_bandwidths(tmp_path, a100_spec):
    """table:hardware_bandwidth: 8 links, bandwidth (the spec's input) and threshold (peak / bandwidth)."""
    import yaml

    row = score_artifact("table:hardware_bandwidth", load_hardware("a100-80gb"))
    assert (row.cells_graded, row.cells_agree, row.inputs_echoed) == (8, 8, 8)
    a100_spec["infiniband_bandwidth_gib_per_s"] *= 2
    path = tmp_path / "fast.yaml"
    path.write_text(yaml.safe_dump(a100_spec))
    changed = score_artifact("table:hardware_bandwidth", load_hardware(path))
    assert changed.reproduced == "7 of 8 agree"  # the InfiniBand threshold; its bandwidth is the spec's own
    assert "8 inputs echoed, not counted (1 not the paper's" in changed.paper


def test_mixed_buffering_grades_the_resources_not_the_operation_names():
    """table:mixed_buffering: 6 steps; the two operation names are the schedule itself (12 cells),
    buffers (2 columns), computation, network and intensity are results (6 x 5 = 30)."""
    row = score_artifact("table:mixed_buffering", load_hardware("a100-80gb"))
    assert (row.cells_graded, row.inputs_echoed) == (30, 12)


def test_searched_tables_echo_nothing():
    spec = load_hardware("a100-80gb")
    row = score_artifact("table:parallel_methods_comparison", spec)
    assert (row.cells_graded, row.inputs_echoed) == (9 * 10, 0)  # 9 rows: offload, b, b_mu, ..., efficiency, time


@pytest.mark.parametrize("label", ["table:x_model", "table:hardware_bandwidth", "table:mixed_buffering"])
def test_the_page_says_how_many_inputs_it_does_not_count(label):
    from lgacc.book.notebook import compact_comparison, comparison_sentence

    artifact = get_artifact(label)
    comparison = artifact.compare(artifact.reproduce("a100-80gb"))
    counted = tally(comparison)
    assert f"The {counted.echoed} cells marked *input*" in comparison_sentence(comparison)
    shown = compact_comparison(comparison)
    assert any(str(c).endswith("(input)") for c in shown.columns)
    assert not any("echoed_input" in str(c) for c in shown.columns)
    assert "✗" not in "".join(shown[[c for c in shown.columns if str(c).endswith("(input)")]].to_numpy().ravel())
