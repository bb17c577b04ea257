"""lgacc.studies.sensitivity and ``lgacc sensitivity``: independent facts about the headline results under each assumption."""

from __future__ import annotations

import json
import math
import random

import pytest
import yaml

from lgacc.cli import main
from lgacc.model.hardware import GIB, load_hardware
from lgacc.model.transformer import x_model
from lgacc.paper import PAPER_DIR, parse_printed
from lgacc.paper.claims import printed_claims
from lgacc.scaling import ONE_MONTH_DAYS, ONE_YEAR_DAYS, scenario_hardware
from lgacc.scaling import time_limit as sweep_time_limit
from lgacc.scaling.limits import bisect_last
from lgacc.search import fastest
from lgacc.studies.sensitivity import (
    CONCLUSIONS,
    RESULT_KEYS,
    Setting,
    classify,
    dimensions,
    family_model,
    headline,
    sensitivity_rows,
    verdicts,
)

A100 = load_hardware("a100-80gb")


@pytest.fixture(scope="module")
def rows():
    """Three assumptions whose searches are quick, with the shared default computed once."""
    return sensitivity_rows(A100, ["max_overhead", "gpus_per_node", "ethernet_bandwidth_gib_per_s"])


@pytest.fixture(scope="module")
def default():
    return headline(Setting(A100))[0]


def _printed_3d_rows() -> dict[str, dict]:
    table = yaml.safe_load((PAPER_DIR / "table_parallel_methods_comparison.yaml").read_text())
    return {r["method"].lower(): r for r in table["rows"] if r["parallelism"] == "3d"}


def test_default_row_is_the_search_on_x160_and_reproduces_the_printed_3d_times(default):
    for method in ("baseline", "improved"):
        e = fastest(x_model(160), A100, method, "3d", explain=False).evaluation
        assert getattr(default, f"{method}_time_days") == e.time_days
        assert getattr(default, f"{method}_n_gpu") == e.n_gpu
        printed = _printed_3d_rows()[method]
        # the paper prints times to two significant digits (13 d and 6.8 d) and GPU counts exactly
        assert parse_printed(printed["time"], significant=2).agrees(e.time_days)
        assert getattr(default, f"{method}_n_gpu") == int(printed["n_gpu"])
    memory = {c.id: c for c in printed_claims()}["improved_min_memory"]  # "4.72 GB"
    assert memory.agrees(default.min_memory_gib)
    assert default.speedup == default.baseline_time_days / default.improved_time_days
    assert default.min_memory_share == pytest.approx(default.min_memory_gib * GIB / A100.memory_bytes, rel=1e-12)


def test_default_limits_equal_the_exhaustive_sweep_of_lgacc_scaling(default):
    # the bisection over the ladder must find the bracket the scaling module's grid scan finds
    for days, value in ((ONE_MONTH_DAYS, default.one_month_limit_p), (ONE_YEAR_DAYS, default.one_year_limit_p)):
        assert value == pytest.approx(sweep_time_limit(days, A100).p, rel=1e-12)


def test_every_dimension_has_its_default_among_its_values_and_there_are_at_least_eight():
    found = dimensions(A100)
    assert len({d.name for d in found}) == len(found) >= 8
    for d in found:
        assert sum(v == d.default for v in d.values) == 1, d.name
        assert d.setting(Setting(A100), d.default) == Setting(A100), d.name


def test_rows_mark_exactly_one_default_per_assumption_and_it_equals_the_default(rows, default):
    by_name = {}
    for row in rows:
        by_name.setdefault(row.assumption, []).append(row)
        if row.is_paper_default:
            assert row.headline == default
    assert {name: sum(r.is_paper_default for r in group) for name, group in by_name.items()} == dict.fromkeys(by_name, 1)
    # the paper's node size is 16 GPUs: that row is the all-default row
    assert next(r for r in by_name["gpus_per_node"] if r.value == 16).is_paper_default


def test_a_larger_overhead_cap_never_slows_the_improved_method(rows):
    # the cap only removes candidates and the improved method takes the fastest: a looser cap cannot be slower
    group = sorted((r for r in rows if r.assumption == "max_overhead"), key=lambda r: r.value)
    times = [r.headline.improved_time_days for r in group]
    assert all(a >= b for a, b in zip(times, times[1:]))


def test_larger_nodes_never_slow_the_improved_method(rows):
    # NVLink beyond the old node size only replaces InfiniBand for the same configurations
    group = sorted((r for r in rows if r.assumption == "gpus_per_node"), key=lambda r: r.value)
    times = [r.headline.improved_time_days for r in group]
    assert all(a >= b for a, b in zip(times, times[1:]))


def test_ethernet_slowdown_falls_with_bandwidth_and_vanishes_at_infiniband_speed(rows):
    group = sorted((r for r in rows if r.assumption == "ethernet_bandwidth_gib_per_s"), key=lambda r: r.value)
    slowdowns = [r.headline.ethernet_slowdown for r in group]
    assert all(a >= b for a, b in zip(slowdowns, slowdowns[1:]))
    at_infiniband = [r for r in group if r.value * GIB == A100.infiniband_bandwidth_bytes_per_s]
    assert at_infiniband and at_infiniband[0].headline.ethernet_slowdown == 0
    # the Ethernet share moves nothing but the Ethernet result
    others = {k for k in RESULT_KEYS if k != "ethernet_slowdown"}
    first = {k: getattr(group[0].headline, k) for k in others}
    assert all({k: getattr(r.headline, k) for k in others} == first for r in group)


def test_family_model_keeps_the_size_and_the_heads():
    x160 = x_model(160)
    assert family_model(160, 1.0) == x160
    deeper, shallower = family_model(160, 4.0), family_model(160, 0.25)
    assert (deeper.d_l, deeper.d_h, deeper.d_a) == (640, 160, 80)
    assert (shallower.d_l, shallower.d_h, shallower.d_a) == (40, 640, 80)
    for model in (deeper, shallower):
        assert model.p_leading == x160.p_leading  # (4 + 2 n_I) d_m^2 d_l exactly preserved here
        assert model.critical_batch == x160.critical_batch


def test_bisect_agrees_with_a_linear_scan():
    rng = random.Random(16)
    for _ in range(500):
        n = rng.randint(1, 40)
        last = rng.randint(-1, n - 1)
        hint = rng.randint(0, n - 1)
        ladder = list(range(n))
        calls = []

        def condition(x):
            calls.append(x)
            return x <= last

        assert bisect_last(condition, ladder, hint) == (None if last < 0 else last)
        assert len(calls) <= 2 * math.ceil(math.log2(n + 1)) + 2


def _row(**values):
    base = {"speedup": math.nan, "improved_time_days": math.nan, "one_month_limit_p": math.nan, "one_month_bound": ""}
    base.update(values)
    return base


def test_classify_by_hand():
    """"Holds" is the claim's own rule (the claims page's) or past the printed number on the favourable side."""
    by_key = {c.key: c for c in CONCLUSIONS}
    speedup = by_key["speedup"]  # "at least twice", at one more digit: holds from 1.95, reverses at 1
    assert [classify(speedup, _row(speedup=v), 80) for v in (3.0, 1.96, 1.9, 1.5, 1.01, 1.0, 0.5)] == [
        "holds", "holds", "weakens", "weakens", "weakens", "reverses", "reverses"]
    week = by_key["improved_week"]  # "one week" to one digit (below 7.5 d), or shorter; reverses beyond 14 d
    assert [classify(week, _row(improved_time_days=v), 80) for v in (3, 7.49, 7.51, 14, 14.1)] == [
        "holds", "holds", "weakens", "weakens", "reverses"]
    month = by_key["one_month"]  # about 4.5 T: within 15 % holds, beyond weakens; memory-bound reverses
    assert [classify(month, _row(one_month_limit_p=v, one_month_bound="time"), 80)
            for v in (4.5e12, 3.9e12, 3.8e12, 5.1e12, 5.2e12, 40e12)] == ["holds", "holds", "weakens", "holds",
                                                                          "weakens", "weakens"]
    base = by_key["baseline_two_weeks"]  # about 14 d; a baseline within a week (14 / 2) reverses it
    assert [classify(base, {"baseline_time_days": v}, 80) for v in (14, 12, 11.8, 40, 7.1, 6.9)] == [
        "holds", "holds", "weakens", "weakens", "weakens", "reverses"]
    memory = by_key["memory"]  # "a tiny fraction": below a tenth of the GPU's memory; reverses past all of it
    assert [classify(memory, {"min_memory_share": v}, 80) for v in (0.059, 0.1, 0.5, 1.01)] == [
        "holds", "holds", "weakens", "reverses"]
    assert classify(month, _row(one_month_limit_p=4.5e12, one_month_bound="memory"), 80) == "reverses"
    assert classify(speedup, _row(), 80) == "reverses"  # infeasible


def test_verdicts_report_where_the_node_size_flips_a_conclusion(rows):
    found = {(v["conclusion"], v["assumption"]): v for v in verdicts(rows, A100)}
    week = found[("improved_week", "gpus_per_node")]
    assert week["at_default"] == "holds"
    # 8-GPU nodes halve the tensor parallelism: X160 takes about two weeks, not one
    assert week["verdicts"]["8 GPUs"] != "holds"
    assert any(f["from"] == 16 and f["to"] == 8 for f in week["flips"])


def test_command_json_rows(capsys):
    assert main(["sensitivity", "--assumption", "gb", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["value"] for r in out] == ["GiB", "GB"]
    assert [r["is_paper_default"] for r in out] == [True, False]
    assert {"assumption", "value", "is_paper_default", *RESULT_KEYS} <= set(out[0])


def test_command_bad_input_is_one_line_and_exit_2(capsys):
    assert main(["sensitivity", "--assumption", "node_size"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "node_size" in err[0] and "gpus_per_node" in err[0]
    assert main(["sensitivity", "--hardware", "no-such-gpu"]) == 2


def test_ethernet_scenario_is_the_spec_with_infiniband_replaced():
    setting = Setting(A100, ethernet_bytes_per_s=A100.infiniband_bandwidth_bytes_per_s)
    assert setting.ethernet_hardware() == scenario_hardware(A100.replace(
        ethernet_bandwidth_bytes_per_s=A100.infiniband_bandwidth_bytes_per_s), "ethernet")
