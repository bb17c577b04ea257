"""The paper on today's hardware: the same search, other specs, verdicts computed."""

from __future__ import annotations

import pytest

from lgacc.search import fastest
import pandas as pd

from lgacc.today import CLAIMS, compare_hardware, conclusions, conclusions_matrix, fastest_by_method


def test_each_row_is_the_searchs_fastest_configuration():
    table = fastest_by_method("X32", "h100-sxm").set_index("method")
    result = fastest("X32", "h100-sxm", "improved", "3d", explain=False)
    assert table.loc["improved", "n_gpu"] == result.evaluation.n_gpu
    assert table.loc["improved", "time_days"] == pytest.approx(result.evaluation.time_days)


def test_more_compute_per_gpu_trains_faster_on_the_same_model():
    table = compare_hardware("X160", ["a100-80gb", "b200"]).set_index(["hardware", "method"])
    assert table.loc[("b200", "improved"), "time_days"] < table.loc[("a100-80gb", "improved"), "time_days"]


def test_conclusions_are_graded_per_hardware():
    verdicts = conclusions(compare_hardware("X32", ["a100-80gb", "gb200-nvl72"]))
    assert set(verdicts["hardware"]) == {"a100-80gb", "gb200-nvl72"}
    assert verdicts.groupby("hardware").size().tolist() == [len(CLAIMS)] * 2
    assert verdicts["holds"].dtype == bool


def _row(method, time_days, memory_fraction=0.05):
    return {"hardware": "hand", "method": method, "feasible": True, "time_days": time_days, "n_gpu": 1000,
            "memory_gib": 80 * memory_fraction, "memory_fraction": memory_fraction}


def test_the_papers_own_numbers_halve_but_are_not_twice_as_fast():
    # table:parallel_methods_comparison prints 13 d (3d baseline) and 6.8 d (3d improved): 1.91x
    printed = pd.DataFrame([_row("baseline", 13.0), _row("partitioned", 32.0), _row("improved", 6.8)])
    holds = conclusions(printed).set_index("claim")["holds"]
    assert holds[CLAIMS["fastest"]] and holds[CLAIMS["halving"]] and holds[CLAIMS["week"]] and holds[CLAIMS["memory"]]
    assert not holds[CLAIMS["twice"]]


def test_each_threshold_can_fail():
    slow = pd.DataFrame([_row("baseline", 10.0), _row("improved", 12.0, memory_fraction=0.2)])
    assert not conclusions(slow)["holds"].any()  # 0.83x, 20 % of memory, 12 days


def test_matrix_has_a_row_per_conclusion_and_a_column_per_hardware():
    verdicts = pd.DataFrame([_row("baseline", 13.0), _row("improved", 6.8)])
    matrix = conclusions_matrix(conclusions(verdicts))
    assert list(matrix.columns) == ["conclusion", "hand"]
    assert matrix["conclusion"].tolist() == list(CLAIMS.values())
    assert matrix.iloc[2]["hand"] == "1.91× ✗"
