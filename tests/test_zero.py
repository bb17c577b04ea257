"""The ZeRO study (lgacc.studies.zero): its verdict rule on made-up margins, the hand-checkable facts it rests
on, the paper's printed margin, and the hook that adds a column.

Facts used: the printed times of table:parallel_methods_comparison (32 d and 6.8 d: the improved method 4.7
times faster than the partitioned one with tensor parallelism); under the ring a pure data-parallel X160
replica group has 16 peers on a 16-GPU node, so its threshold is 15/16 of NVLink's (454 flop/B), below the
partitioned intensity b_mu d_s / 2 = 1280 at b_mu = 1: micro-batches of one, as many replicas as the critical
batch allows, no overhead.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from lgacc.model.transformer import x_model
from lgacc.paper.assumption_effects import FIGURE_SWITCHES, _series_effect, switch_settings
from lgacc.paper.printed import paper_table
from lgacc.studies import zero

XS = (64, 160)


@pytest.fixture(scope="module")
def small():
    return zero.study("a100-80gb", scenarios=("limited",), xs=XS)


def _margins(rows):
    return pd.DataFrame(rows, columns=["column", "scenario", "x", "p", "baseline", "partitioned", "improved"]).assign(
        **{"partitioned / baseline": lambda f: f.partitioned / f.baseline,
           "partitioned / improved": lambda f: f.partitioned / f.improved})


def test_the_verdict_rule():
    big = 1e12
    slower = [("a", "limited", 160, big, 1.0, 2.0, 0.5), ("a", "limited", 200, big, 1.0, 3.0, 1.0)]
    faster = [("b", "limited", 160, big, 2.0, 1.0, 1.0), ("b", "limited", 200, big, 2.0, 1.0, 1.0)]
    mixed = [("c", "limited", 160, big, 1.0, 2.0, 1.0), ("c", "limited", 200, big, 2.0, 1.0, 1.0),
             ("c", "limited", 300, big, 2.0, 1.0, 1.0)]
    tie = [("d", "limited", 160, big, 1.0, 1.005, 1.0), ("d", "limited", 200, big, 1.0, 1.005, 1.0)]
    small_only = [("e", "limited", 160, big, 1.0, 2.0, 1.0), ("e", "limited", 8, 1e6, 2.0, 1.0, 1.0)]
    table = zero.verdicts(_margins(slower + faster + mixed + tie + small_only)).set_index("column")
    assert table.verdict.to_dict() == {"a": "holds", "b": "reverses", "c": "weakens", "d": "reverses", "e": "holds"}
    assert table.loc["a", "median partitioned / improved"] == 3.5  # median of 4 and 3
    assert table.loc["e", "models compared"] == 1  # the small model is not graded


def test_the_papers_margin_at_x160_is_the_printed_one(small):
    margins = small.trillion_margins.set_index(["column", "partitioned row"])
    printed = paper_table("table:parallel_methods_comparison").set_index(["parallelism", "method"])["time"]
    days = {key: float(str(text).split()[0]) for key, text in printed.items()}
    assert days[("Data + tensor", "Partitioned")] / days[("3d", "Improved")] == pytest.approx(
        margins.loc[("per-gpu", "Data + tensor"), "partitioned / improved"], rel=0.02)
    # n_a = 16 fills the node: g = 1, the ring moves nothing there
    assert margins.loc[("ring", "Data + tensor"), "partitioned / improved"] == \
        margins.loc[("per-gpu", "Data + tensor"), "partitioned / improved"]


def test_the_ring_frees_pure_data_parallelism_at_x160(small):
    rows = small.trillion.set_index(["column", "parallelism", "method"])
    part = rows.loc[("ring", "Data", "partitioned")]
    b_c = x_model(160).critical_batch
    assert (part.b_mu, part.n_b, part.efficiency, part.offload) == (1, math.floor(b_c), 1.0, False)
    # with one layer group and one micro-batch the improved method is the partitioned one: no margin left
    improved = rows.loc[("ring", "Data + pipe", "improved")]
    assert improved.n_l == 1 and improved.time_days == part.time_days
    margin = small.trillion_margins.set_index(["column", "partitioned row"])
    assert margin.loc[("ring", "Data"), "partitioned / improved"] == 1.0
    assert margin.loc[("per-gpu", "Data"), "partitioned / improved"] > 4


def test_every_column_gets_a_verdict(small):
    assert set(small.verdicts.column) == {"per-gpu", "ring"}
    assert set(small.verdicts.verdict) <= {"holds", "weakens", "reverses"}
    assert small.verdict("per-gpu") in ("holds", "weakens", "reverses")
    with pytest.raises(KeyError):
        small.verdict("calibrated")


def test_a_third_column_plugs_in():
    """A column of made-up outcomes (the partitioned method three times faster than the ideal per-GPU one) gets
    its rows, margins and verdict; its key keeps it apart on disk."""
    per_gpu = zero.ideal_column("per-gpu")

    def fastest(model, hardware, method, parallelism):
        out = per_gpu.fastest(model, hardware, method, parallelism)
        if out is None or method != "partitioned":
            return out
        return zero.Outcome(**{**out.__dict__, "time_days": out.time_days / 3})

    third = zero.Column("made-up", "calibrated", "test:made-up partitioned / 3", fastest)
    result = zero.study("a100-80gb", columns=(per_gpu,), extra=(third,), scenarios=("limited",), xs=XS)
    verdicts = result.verdicts.set_index("column")
    assert list(verdicts.index) == ["per-gpu", "made-up"]
    assert verdicts.loc["made-up", "X160 partitioned / baseline"] == pytest.approx(
        verdicts.loc["per-gpu", "X160 partitioned / baseline"] / 3)
    with pytest.raises(ValueError):
        zero.study("a100-80gb", columns=(per_gpu,), extra=(zero.ideal_column("per-gpu"),), scenarios=("limited",), xs=XS)


def test_the_quote_is_the_papers():
    from lgacc.paths import ROOT

    tex = (ROOT.parent / "shared" / "paper" / "layered-gradient-accumulation.tex")
    if not tex.exists():
        pytest.skip("the paper's source is not beside the checkout")
    assert zero.QUOTE in " ".join(tex.read_text().split())


def test_the_network_switch_is_tried_on_its_figures():
    assert set(FIGURE_SWITCHES) <= set(switch_settings())
    x = [8, 160, 512]
    before = pd.DataFrame({"x": x, "method": "baseline", "feasible": [True, True, False], "time_days": [1.0, 10.0, math.nan]})
    after = pd.DataFrame({"x": x, "method": "baseline", "feasible": [True, True, True], "time_days": [0.5, 10.0, 3.0]})
    effect = _series_effect("dp_network", "ring", "ethernet", "baseline", before, after)
    assert (effect.figure, effect.models, effect.moved) == ("fig:scaling_Ethernet", 3, 2)
    assert (effect.lowest_ratio, effect.highest_ratio, effect.x160_default_days, effect.x160_switched_days) == \
        (0.5, 1.0, 10.0, 10.0)
