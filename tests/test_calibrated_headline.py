"""The trillion-parameter page's paragraph on the headline under the calibrated model, on made-up rows: ratios
under each model, the verdict by the claims page's own rule (the speed-up at one significant digit), the
slowdowns of the paper's configurations, and an infeasible row said in words."""

from __future__ import annotations

import math

import pandas as pd

from lgacc.studies.calibrated_headline import halves_under_rule, headline_markdown, headline_ratios


def rows(improved_calibrated: float) -> pd.DataFrame:
    return pd.DataFrame([
        {"parallelism": "Data + tensor", "method": "Partitioned", "ideal_days": 32.0, "same_config_days": 64.0,
         "calibrated_days": 60.0},
        {"parallelism": "3d", "method": "Baseline", "ideal_days": 13.0, "same_config_days": 26.0, "calibrated_days": 20.0},
        {"parallelism": "3d", "method": "Improved", "ideal_days": 6.5, "same_config_days": 13.0,
         "calibrated_days": improved_calibrated},
        {"parallelism": "Data", "method": "Baseline", "ideal_days": 400.0, "same_config_days": math.nan,
         "calibrated_days": math.nan},
    ])


def test_ratios_and_the_rule_by_hand():
    ratios = headline_ratios(rows(10.0))
    assert ratios["ideal_improved_over_baseline"] == 0.5 and ratios["calibrated_search_improved_over_baseline"] == 0.5
    assert ratios["ideal_improved_over_partitioned"] == 6.5 / 32
    assert halves_under_rule(0.5) is True and halves_under_rule(1 / 1.4) is False  # 1.4 rounds to 1, not 2
    assert halves_under_rule(math.nan) is None


def test_the_paragraph_says_the_verdict_and_the_slowdowns():
    text = headline_markdown(rows(10.0))
    assert "0.5 of the time under the paper's model, 0.5 under the calibrated model for the same configurations" in text
    assert "cuts the training time by half holds" in text
    assert "2.00× (Data + tensor, partitioned), 2.00× (3d, baseline), 2.00× (3d, improved)" in text
    assert "(Data, baseline)" not in text  # a row without a calibrated time is not a slowdown
    slower = headline_markdown(rows(15.0))  # 0.75 of the baseline's time: a speed-up of 1.3
    assert "does not hold" in slower and "0.75 of the baseline's time, against 0.5" in slower


def test_an_infeasible_row_is_said_in_words():
    text = headline_markdown(rows(math.nan))
    assert "cannot be re-graded here" in text and "nan" not in text.lower().replace("cannot", "")
