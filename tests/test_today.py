"""The paper on today's hardware: the same search, other specs, verdicts computed."""

from __future__ import annotations

import pytest

from lgacc.search import fastest
from lgacc.today import compare_hardware, conclusions, fastest_by_method


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
    assert verdicts.groupby("hardware").size().tolist() == [4, 4]
    assert verdicts["holds"].dtype == bool
