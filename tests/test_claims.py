"""The prose claims: every printed number with a rule, a verdict, and a computation."""

from __future__ import annotations

import json

import pytest

from lgacc.model.hardware import load_hardware
from lgacc.model.transformer import x_model
from lgacc.paper.claims import (
    DIFFERS,
    EXPLAINED,
    NOT_REPRODUCED,
    PAPER_INCONSISTENT,
    REPRODUCED,
    VERDICTS,
    RULES,
    WORD_TOLERANCE,
    Alternative,
    Demonstration,
    Outcome,
    Rule,
    claims_records,
    grade,
    printed_claims,
)
from lgacc.paper.claims.calculators import CALCULATORS, total_flops

KEYS = {"id", "paper", "reproduced", "unit", "agrees", "printed", "tolerance", "how", "where", "verdict", "alternative", "rule",
        "reading", "reproduced_by", "mark"}


@pytest.fixture(scope="module")
def records():
    return {r["id"]: r for r in claims_records("a100-80gb")}


def test_at_least_35_claims_each_with_a_calculator():
    claims = printed_claims()
    assert len(claims) >= 35
    assert len({c.id for c in claims}) == len(claims)
    assert {c.id for c in claims} <= set(CALCULATORS)


def test_records_have_the_keys_and_a_verdict(records):
    assert set(records) == {c.id for c in printed_claims()}
    for r in records.values():
        assert KEYS <= set(r)
        assert r["verdict"] in VERDICTS == (REPRODUCED, EXPLAINED, PAPER_INCONSISTENT, DIFFERS, NOT_REPRODUCED)
        assert r["how"]
        assert (r["verdict"] == REPRODUCED) == r["agrees"]
        if r["verdict"] == EXPLAINED:
            alt = r["alternative"]
            assert alt["assumption"] and alt["agrees"] is True and alt["reproduced"] is not None
        if r["verdict"] == PAPER_INCONSISTENT:  # only with its computation: readings computed, none agreeing
            shown = r["demonstration"]
            assert shown["statement"] and len(shown["readings"]) >= 1, r["id"]
            assert all(x["reproduced"] is not None and not x["agrees"] for x in shown["readings"]), r["id"]
            assert not r["reproduced_by"] and not any(a["agrees"] for a in r["alternatives"]), r["id"]


def test_one_reading_for_every_claim(records):
    """Issue #32: every claim graded under the one paper reading, named the same in every record."""
    from lgacc.paper.claims import PAPER_NAME

    assert {r["reading"] for r in records.values()} == {PAPER_NAME}
    assert NOT_REPRODUCED not in [r["verdict"] for r in records.values()]


def test_an_explanation_breaks_no_reproduced_claim(records):
    """An explained claim's reading is a fact switch, and under it every claim reproduced under the paper reading
    still agrees (read from the matrix, independently of the verdicts' own bookkeeping)."""
    from lgacc.paper.claims import SWITCHES, reading_matrix

    facts = {s.field for s in SWITCHES if s.kind == "fact"}
    matrix = reading_matrix("a100-80gb")
    names = [c["name"] for c in matrix["columns"]]
    for r in records.values():
        if r["verdict"] != EXPLAINED:
            continue
        reading = r["alternative"]["assumption"]
        column = matrix["columns"][names.index(reading)]
        assert set(column["changes"]) <= facts, reading
        i = names.index(reading)
        broken = [row["id"] for row in matrix["rows"] if row["cells"][0]["agrees"] and not row["cells"][i]["agrees"]]
        assert broken == [], (r["id"], reading, broken)


def test_a_differing_claim_names_the_readings_that_would_reproduce_it(records):
    """The memory-wall paragraph of the issue: the fine grid mends nothing there and breaks "90 T" ; whole heads
    mend "62 GB" and break "90 T"; the InfiniBand threshold the printed ~25 T implies reaches "280 T"."""
    by = {k: {x["reading"]: x for x in r["reproduced_by"]} for k, r in records.items()}
    assert records["offload_needed_above"]["verdict"] == REPRODUCED
    assert records["one_year_memory"]["verdict"] == DIFFERS
    assert "offload_needed_above" in by["one_year_memory"]["divisible_heads=True"]["breaks"]
    assert records["memory_limit_80gb"]["verdict"] == DIFFERS
    assert any("infiniband_threshold" in name for name in by["memory_limit_80gb"])
    assert records["tensor_over_infiniband_above"]["verdict"] == DIFFERS


# --- the rules: each fails if its tolerance is widened ---------------------------------------------


def test_word_tolerance_is_fifteen_percent():
    assert WORD_TOLERANCE == 0.15


@pytest.mark.parametrize(("rule", "paper", "inside", "outside"), [
    ("exact", 7400, [7400], [7399, 7401, 7400.5]),
    ({"digits": 2}, 2.8e14, [2.75e14, 2.849e14], [2.74e14, 2.86e14, 1.2e14]),
    ({"digits": 1}, 9e13, [8.5e13, 9.49e13], [8.4e13, 9.6e13]),
    ({"digits": 3}, 143, [142.51, 143.49], [142.4, 143.6]),
    ("about", 0.04, [0.035, 0.045], [0.033, 0.047, 0.43]),
    ("about", 14, [12, 16], [11.8, 16.2, 7, 28]),
    ("nearly", 40000, [38640, 34001, 40000], [40001, 33999]),
    # rule 4 of issue 32: rounded to one more significant digit than printed, then compared
    ("over", 2000, [1950, 2311], [1949, 1800]),
    ("at least", 2, [1.96, 1.976, 2.5], [1.94, 1.78]),
    ({"word": "at least", "digits": 1}, 2, [1.976, 3], [1.78, 1.5, 1.0]),
    ({"digits": 2}, 1300, [1250, 1276, 1349], [1249.9, 1350.1, 1200]),
    ({"digits": 2}, 7400, [7350, 7440], [7840, 7349]),
    ("below", 1, [0.999, 0.5, 1.04], [1.06, 1.1]),
    ("below", 0.1, [0.059, 0.104], [0.106, 0.2]),
    ("up to", 4, [3.41, 4, 4.04], [3.39, 4.06, 4.54]),
    ({"between": [20, 100]}, 20, [20, 99.9], [19.9, 100]),
])
def test_rule(rule, paper, inside, outside):
    parsed = Rule.parse(rule)
    for value in inside:
        assert parsed.agrees(paper, value), (rule, value)
    for value in outside:
        assert not parsed.agrees(paper, value), (rule, value)


def test_every_rule_is_documented_and_unknown_rules_are_refused():
    for claim in printed_claims():
        assert claim.rule.kind in RULES
    with pytest.raises(ValueError):
        Rule.parse("roughly")


def test_numbers_printed_without_a_word_get_no_word_rule():
    """The issue's list: printed without "about", so compared at printed precision."""
    rules = {c.id: c.rule.kind for c in printed_claims()}
    for key in ("one_month_memory", "one_year_memory", "memory_limit_80gb", "offload_needed_above",
                "unlimited_node_one_month", "unlimited_node_one_year", "unlimited_node_memory_limit"):
        assert rules[key] == "digits", key
    # round numbers graded to the digits they show: "7400" and "1300" to two, "twice" to one
    claims = {c.id: c for c in printed_claims()}
    assert rules["one_month_cluster"] == rules["six_month_cluster"] == "digits"
    assert claims["one_month_cluster"].rule.digits == claims["six_month_cluster"].rule.digits == 2
    assert rules["finetune_gpu_days"] == "over" and rules["improved_speedup_over_baseline"] == "at least"
    assert rules["improved_halves_min_time"] == "digits" and claims["improved_halves_min_time"].rule.digits == 2
    assert claims["improved_speedup_over_baseline"].rule.digits == 1


# --- verdicts ---------------------------------------------------------------------------------------


def _claim(rule="exact", paper=10.0):
    from lgacc.paper.claims import PrintedClaim
    return PrintedClaim("c", "10", paper, "u", Rule.parse(rule), "here")


def test_verdicts_from_the_matrix():
    assert grade(_claim(), Outcome(10.0, "computed")).verdict == REPRODUCED
    assert grade(_claim(), Outcome(11.0, "computed")).verdict == DIFFERS
    assert grade(_claim(), Outcome(None, "cannot")).verdict == NOT_REPRODUCED
    # a calculator's own alternative is never chosen: only the matrix's columns count
    assert grade(_claim(), Outcome(11.0, "computed", Alternative("switch=x", 10.0))).verdict == DIFFERS
    # a fact reading that agrees and breaks nothing explains it
    explained = grade(_claim(), Outcome(11.0, "computed"), "paper", [("gb='GB'", "fact", 10.0)], {"gb='GB'": []})
    assert explained.verdict == EXPLAINED and explained.alternative == {"assumption": "gb='GB'", "reproduced": 10.0, "agrees": True}
    # ... but not when it breaks a reproduced claim, nor when it is a scaling switch: differs, naming it
    breaking = grade(_claim(), Outcome(11.0, "c"), "paper", [("gb='GB'", "fact", 10.0)], {"gb='GB'": ["other"]})
    assert breaking.verdict == DIFFERS and breaking.reproduced_by[0]["breaks"] == ["other"] and "other" in breaking.explanation
    scaling = grade(_claim(), Outcome(11.0, "c"), "paper", [("scaling_grid='fine'", "scaling", 10.0)], {})
    assert scaling.verdict == DIFFERS and "limits read between every model of the grid" in scaling.explanation
    # a column that does not agree (or cannot run) leaves the claim differing, naming no reading
    assert not grade(_claim(), Outcome(11.0, "c"), "paper", [("x", "fact", 12.0), ("y", "fact", None)], {}).reproduced_by


def test_paper_inconsistent_only_with_a_demonstration_no_reading_of_which_agrees():
    shown = Demonstration("the floor", (Alternative("a", 12.0), Alternative("floor", 11.5)))
    result = grade(_claim(), Outcome(11.0, "computed", None, shown), "paper", [("x", "scaling", 12.0)], {})
    assert result.verdict == PAPER_INCONSISTENT and result.demonstration["readings"][1]["reproduced"] == 11.5
    assert "the floor" in result.explanation and "11.5" in result.explanation
    # a column of the matrix that agrees makes it differ (naming it), never inconsistent
    assert grade(_claim(), Outcome(11.0, "c", None, shown), "paper", [("x", "scaling", 10.0)], {}).verdict == DIFFERS
    # a demonstration reading that agrees or could not be computed leaves it differing
    agreeing = Demonstration("x", (Alternative("a", 10.0),))
    assert grade(_claim(), Outcome(11.0, "c", None, agreeing)).verdict == DIFFERS
    missing = Demonstration("x", (Alternative("a", None),))
    assert grade(_claim(), Outcome(11.0, "c", None, missing)).verdict == DIFFERS
    # and an agreeing value needs none
    assert grade(_claim(), Outcome(10.0, "c", None, shown)).verdict == REPRODUCED


def test_tensor_16_above_is_where_the_cap_allows_16_devices(records):
    """By hand: 16-way tensor parallelism over NVLink costs nu_NVLink 3 (16 - 1) / (12 d_m) (eq:tensor_intensity
    at n_I = 4), within the 25 % cap from d_m = 15 nu_NVLink (7264, x = sqrt(d_m) = 85.2): about 54 billion."""
    nu = 312e12 / (600 * 2**30)
    d_m = 3 * 15 * nu / (12 * 0.25)
    x = d_m ** 0.5
    p = 12 * x**5 + 13 * x**3
    claim = records["tensor_16_above"]
    assert claim["reproduced"] == pytest.approx(p, rel=0.01)
    assert claim["verdict"] == REPRODUCED  # "above ~50 billion parameters": about 54 billion


def test_the_headline_speedup_is_twice_at_two_digits(records):
    """13.5 d / 6.81 d = 1.98, which rounds to 2.0: "at least twice" holds (the paper's own table gives 1.91,
    which would round to 1.9 and fail)."""
    speedup = records["improved_speedup_over_baseline"]
    assert speedup["reproduced"] == pytest.approx(
        records["baseline_min_time_1t"]["reproduced"] / records["improved_min_time_1t"]["reproduced"])
    assert 1.95 <= speedup["reproduced"] < 2 and speedup["verdict"] == REPRODUCED
    claim = next(c for c in printed_claims() if c.id == "improved_speedup_over_baseline")
    assert not claim.agrees(13 / 6.8) and not claim.agrees(1.78)  # the paper's own ratio; B200's ratio


def test_the_ethernet_small_scale_claim_is_graded_where_its_label_says(records):
    """Issue #32: the value is the ratio at 10^10 parameters, the point its unit names (0.098: the improved
    method is slower there), so it differs."""
    r = records["ethernet_improved_beats_baseline_small"]
    assert "10^10" in r["unit"] and "1e+10" in r["how"]
    assert r["reproduced"] < 1 and r["verdict"] == DIFFERS


def test_difference_sizes():
    assert grade(_claim(), Outcome(23.0, "c")).difference == "×2.3"
    assert grade(_claim(), Outcome(5.0, "c")).difference == "÷2"
    assert grade(_claim(), Outcome(10.5, "c")).difference == "+5.0 %"


# --- computed values --------------------------------------------------------------------------------


def test_model_only_claims(records):
    for key in ("x160_exaflop_days", "x160_gpu_days", "x160_parameters", "matmul_1024_intensity",
                "binary_addition_intensity", "partition_network_increase", "finetune_gpu_days"):
        assert records[key]["verdict"] == REPRODUCED, records[key]
    flops = records["x160_total_flops"]
    assert flops["reproduced"] == pytest.approx(8 * x_model(160).critical_batch * 2560 * x_model(160).p_leading * 1e5)
    assert flops["verdict"] == EXPLAINED and flops["alternative"]["assumption"] == "critical_batch='printed'"
    assert flops["alternative"]["reproduced"] == pytest.approx(8 * 2420 * 2560 * x_model(160).p_leading * 1e5)


def test_hand_computed_values(records):
    assert records["matmul_1024_intensity"]["reproduced"] == pytest.approx(1024 / 3)
    assert records["binary_addition_intensity"]["reproduced"] == pytest.approx(1 / 6)
    assert records["partition_network_increase"]["reproduced"] == pytest.approx(0.5)
    # 80 GB as 10^9 bytes: 20 B fp32 parameters, 6.67 B with Adam (12 bytes each); the decimal GB breaks
    # reproduced claims (the 143 flop/B threshold among them), so these differ, naming it
    by = {k: {x["reading"]: x for x in r["reproduced_by"]} for k, r in records.items()}
    assert by["params_fp32_80gb"]["gb='GB'"]["reproduced"] == pytest.approx(20e9)
    assert by["params_adam_80gb"]["gb='GB'"]["reproduced"] == pytest.approx(80e9 / 12)
    assert "a100_intensity_threshold" in by["params_fp32_80gb"]["gb='GB'"]["breaks"]
    assert records["params_fp32_80gb"]["reproduced"] == pytest.approx(80 * 2**30 / 4)
    assert records["recomputation_33_percent"]["reproduced"] == pytest.approx(1 / 3, rel=1e-3)
    assert records["partition_intensity_33_percent_lower"]["reproduced"] == pytest.approx(1 / 3)


def test_gpu_days_follow_from_flops():
    hardware = load_hardware("a100-80gb")
    from lgacc.paper.claims import PAPER_READING

    outcome = CALCULATORS["x160_gpu_days"](hardware, PAPER_READING)
    assert outcome.value == pytest.approx(total_flops() / hardware.peak_flop_per_s / 86400)


def test_disagreements_say_why(records):
    for r in records.values():
        if r["verdict"] != REPRODUCED:
            assert len(r["how"]) > 40, r


@pytest.mark.parametrize("fixture", ["small-memory-gpu.yaml", "slow-network-cluster.yaml"])
def test_claims_degrade_on_unusual_hardware(root, fixture):
    rows = claims_records(root / "tests" / "fixtures" / "hardware" / fixture)
    assert len(rows) == len(printed_claims())
    for r in rows:
        if r["reproduced"] is None:
            assert r["verdict"] == NOT_REPRODUCED and r["how"]


def test_cli_prints_json(records, capsys):
    """In process, after the ``records`` fixture: the claims are computed once per process and spec."""
    from lgacc.cli import main

    assert main(["reproduce", "claims", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["id"]: r["verdict"] for r in rows} == {k: r["verdict"] for k, r in records.items()}
    assert {r["id"] for r in rows} == {c.id for c in printed_claims()}
    assert all(KEYS <= set(r) for r in rows)
