"""The front page's first screen on hand-made facts: at most eight sentences, each with a number and a
link to its page; the verdict classes kept apart and read from the records as they are (a class the
registry adds appears under its own name); the measured-runs sentence reads whatever the validation
summary holds; the figure's text legible on a phone."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from lgacc.book.frontpage import (
    MAX_SENTENCES,
    Facts,
    ScheduleResult,
    front_page_markdown,
    intro,
    lead_sentences,
    measured_summary,
    measured_sentence,
    schedules_sentence,
    summary_figure,
)
from lgacc.book.notebook.figures import MIN_TEXT_PX, figure_svg, legible_width


def record(claim_id, verdict, reproduced, unit, printed, paper, difference="none", **extra):
    return {"id": claim_id, "verdict": verdict, "reproduced": reproduced, "unit": unit, "printed": printed, "paper": paper,
            "agrees": verdict == "reproduced", "difference": difference, "explanation": "", **extra}


RECORDS = [
    record("x160_parameters", "reproduced", 1.258e12, "parameters", "1.26 trillion parameter", 1.26e12),
    record("baseline_min_time_1t", "reproduced", 13.47, "days", "about two weeks", 14),
    record("improved_min_time_1t", "reproduced", 6.81, "days", "one week", 7),
    record("improved_speedup_over_baseline", "differs", 1.976, "ratio", "at least twice as fast", 2.0, "-1.2 %"),
    record("one_year_limit", "differs", 3.76e13, "parameters", "about 50 trillion parameters", 5e13, "÷1.3"),
    record("six_month_cluster", "explained", 1276.0, "GPUs", "1300", 1300, "-1.8 %",
           alternative={"assumption": "round=2 (1300 read to two significant digits)", "reproduced": 1276.0, "agrees": True}),
    record("ethernet_x160_slowdown", "paper inconsistent", 0.428, "fraction", "about 4%", 0.04, "×11",
           explanation="no reading of the paper's rules gives less than 21 %; the paper would need free pipeline transfers"),
]
SCHEDULES = [ScheduleResult("gpipe", "baseline", 13.47, 35840), ScheduleResult("1f1b", "baseline", 13.47, 35840),
             ScheduleResult("interleaved", "baseline", 7.27, 38656, n_v=10),
             ScheduleResult("zero-bubble", "baseline", 10.13, 38400),
             ScheduleResult("modular", "improved", 6.81, 38640)]
MEASURED = {"runs": 16, "publications": 4, "ratio_min": 1.05, "ratio_median": 1.86, "ratio_max": 2.86,
            "bound_holds": 16, "bound_holds_paper": 12, "kernel_efficiency": 0.527, "lopo_mean_abs_error": 0.266}


def facts(**changes) -> Facts:
    base = dict(hardware="a100-80gb", counts={"reproduced": 31, "explained": 6, "paper inconsistent": 0,
                                              "differs": 17, "not reproduced": 1},
                tables=14, records=RECORDS, baseline=(13.47, 35840), improved=(6.81, 38640),
                printed={"baseline": "13 d", "improved": "6.8 d"}, schedules=SCHEDULES, measured=MEASURED)
    return Facts(**(base | changes))


def test_at_most_eight_sentences_each_with_a_number_and_a_link():
    sentences = lead_sentences(facts(built_for="h100-sxm", build_improved=(4.1, 20000)))
    assert len(sentences) + 1 <= MAX_SENTENCES == 8  # the intro is the eighth
    assert not any("h100-sxm" in s for s in sentences)  # the build's own hardware comes after the first screen
    for sentence in sentences:
        assert re.search(r"\d", sentence), sentence
        assert re.search(r"\{doc\}`[^`]+ </generated/\w+>`", sentence), sentence
        assert sentence.count(". ") == 0 or "e.g." in sentence, f"one sentence per item: {sentence}"
    headline = sentences[0]
    assert "**6.81 d on 38,640 GPUs**" in headline and "**13.5 d on 35,840**" in headline
    assert "**1.98×** (printed: 13 d / 6.8 d = **1.91×**), so *at least twice as fast* differs (−1.2 %)" in headline  # 13.47 / 6.81; the registry's verdict; the printed times' own ratio beside it
    assert "13 d / 6.8 d" in headline  # the printed times, in the printed ratio
    page = front_page_markdown(facts(built_for="h100-sxm", build_improved=(4.1, 20000)), details="details")
    assert "This build is for **h100-sxm**: there the new methods train X160 in 4.1 d on 20,000 GPUs" in page


def test_verdict_classes_are_kept_apart_and_read_from_the_records():
    sentences = lead_sentences(facts())
    holds = next(s for s in sentences if s.startswith("**Holds.**"))
    fails = next(s for s in sentences if s.startswith("**Fails.**"))
    assert "Reproduced: *about two weeks* for the baseline (13.5 d) and *one week* for the new methods (6.81 d);" in holds
    # explained: with the named reading as its cause, among what holds, not among what fails
    assert "explained: 1,300 for six months (1,276, with 1300 read to two significant digits)" in holds
    # a new class appears under its own name, with the cause the registry computed, apart from "differing"
    assert "Paper inconsistent: a 4 % slowdown over Ethernet (42.8 %, no reading of the paper's rules gives less" in fails
    assert "; differing: 50 T in a year (37.6 T)" in fails  # a hand-made record naming no reading
    assert "31 ✓ reproduced, 6 ≈ explained, 17 ✗ differing and 1 – not reproduced" in sentences[1]  # each with its mark
    # a class nobody has heard of yet is counted and listed under its own name
    strange = [r | {"verdict": "withdrawn"} if r["id"] == "one_year_limit" else r for r in RECORDS]
    text = "\n".join(lead_sentences(facts(records=strange, counts={"reproduced": 3, "withdrawn": 1})))
    assert "withdrawn: 50 T in a year (37.6 T)" in text and "1 withdrawn" in text


def test_schedules_are_compared_at_two_significant_digits():
    sentence = schedules_sentence(facts())
    assert "modular pipeline (6.81 d) beats 1F1B (13.5 d), interleaved (7.27 d) and zero-bubble (10.1 d)" in sentence
    tied = facts(schedules=[*SCHEDULES[:4], ScheduleResult("modular", "improved", 7.26, 38640)])
    assert "beats 1F1B (13.5 d) and zero-bubble (10.1 d) and ties interleaved (7.27 d) under" in schedules_sentence(tied)


def test_measured_runs_read_whatever_the_summary_holds():
    today = measured_sentence(MEASURED)
    assert "Real steps take a median 1.86× the ideal bound (16 runs, 4 publications), below the measured step in all runs" in today
    assert "new methods" not in today  # the summary does not say which methods were measured: no caveat made up
    assert "one fitted kernel efficiency (0.53) predicts a held-out publication within 27%" in today
    assert "calibrated" not in today and "ring" not in today
    frame = pd.DataFrame({"publication": ["a", "a", "b"], "ratio_physical": [1.2, 2.0, 0.5],
                          "ratio_paper": [0.9, 2.0, 1.5], "measured_step_s": [10.0, 20.0, 30.0],
                          "expected_step_time_s": [11.0, 18.0, 30.0]})
    summary = measured_summary(frame, {"kernel_efficiency": 0.6, "lopo_mean_abs_error": float("nan")})
    assert summary["ratio_median"] == 1.2 and summary["bound_holds"] == 2 and summary["bound_holds_paper"] == 2
    assert summary["expected_mean_abs_error"] == pytest.approx((0.1 + 0.1 + 0) / 3)
    later = measured_sentence(summary)
    assert "below the measured step in 2 of 3 runs;" in later and "ring" not in later
    assert "the calibrated prediction is off by 7% on average (fitted on these runs)" in later and "kernel efficiency" not in later
    # the held-out error where each run was predicted without its publication, and the bound under ring traffic
    frame["lopo_ratio"] = [1.2, 0.9, float("nan")]  # a memory-only run has no time prediction
    frame["upper_bound_ring"] = [True, True, True]
    summary = measured_summary(frame, {})
    assert summary["expected_lopo_error"] == pytest.approx(0.15) and summary["bound_holds_ring"] == 3
    held = measured_sentence(summary)
    assert "in 2 of 3 runs (all with ring all-reduce)" in held
    assert "the calibrated model is off by 15% on unseen publications" in held


def test_the_page_has_the_intro_the_list_and_a_legible_figure():
    text = front_page_markdown(facts(), details="details here")
    # the figure first (it floats right of the sentences on a wide screen, follows them on a phone)
    assert text.index("<svg") < text.index(intro("a100-80gb")) < text.index("- **Headline.**") < text.index("details here")
    assert "\n\n" not in text[text.index("<svg"):text.index("</svg>")]  # one HTML block for MyST
    svg = figure_svg(summary_figure(facts()))
    width = legible_width(svg)
    assert width is not None and width <= 358  # a 390 px phone's text column
    assert "paper" in svg and "38,640 GPUs" in svg and MIN_TEXT_PX == 9.0


def test_a_comparison_that_fails_is_said_not_hidden():
    sentence = measured_sentence({"error": "UserInputError: run 'x': measured step time = 0.0 s"})
    assert "could not be computed: UserInputError: run 'x'" in sentence and "{doc}`measured runs" in sentence


def test_the_build_may_be_a_spec_file_not_a_shipped_name(monkeypatch):
    """A build for a spec file (CI's test fixtures) is given as the Hardware the notebook loaded, not by its
    name (no shipped spec has it); the library calls are replaced here by their shapes, to stay fast."""
    import lgacc.book.frontpage as frontpage
    from lgacc.model.hardware import load_hardware
    from lgacc.paths import ROOT

    spec = load_hardware(ROOT / "tests" / "fixtures" / "hardware" / "small-memory-gpu.yaml")
    asked = []

    def by_method(model, hardware):
        asked.append(hardware.name)
        feasible = hardware.name != spec.name  # X160 fits no configuration on the 4 GiB GPU
        return pd.DataFrame([{"method": m, "feasible": feasible, "time_days": 5.0, "n_gpu": 100}
                             for m in ("baseline", "improved")])

    card = pd.DataFrame([{"label": "table:a", "kind": "table", "verdict": "reproduced"}])
    monkeypatch.setattr("lgacc.paper.scorecard.scorecard", lambda hardware: card)
    monkeypatch.setattr("lgacc.paper.claims.claims_records", lambda hardware: RECORDS)
    monkeypatch.setattr("lgacc.studies.today.fastest_by_method", by_method)
    from lgacc.studies.validation import comparison

    monkeypatch.setattr("lgacc.studies.validation.frame_for", lambda: comparison(()))  # the frame of no runs
    monkeypatch.setattr(frontpage, "fastest_schedules", lambda hardware: SCHEDULES)
    found = frontpage.gather(spec)
    assert asked == ["a100-80gb", "small-memory-gpu"] and found.built_for == "small-memory-gpu"
    assert found.build_improved is None and found.improved == (5.0, 100)
    assert "error" in found.measured  # no runs: said, not hidden
    assert "no 3d configuration of X160 is feasible" in front_page_markdown(found)


def test_a_cause_reads_inside_its_bracket():
    """The registry's explanation is a sentence; inside the first screen's bracket it loses its capital and any
    clause after the first comma (the claims page gives it whole), and never ends on a comma."""
    from lgacc.book.frontpage import _cause

    record = {"verdict": "paper inconsistent",
              "explanation": "No configuration within the paper's rules beats its memory, even with every reading (see below)"}
    assert _cause(record) == "no configuration within the paper's rules beats its memory"
    assert _cause({"verdict": "paper inconsistent", "explanation": "GPU memory is the limit; more"}) == "GPU memory is the limit"
    explained = {"verdict": "explained", "alternative": {"assumption": "target = 32 d, the printed time of the paper's row"}}
    assert _cause(explained) == "with target = 32 d"
    # a switch of the reading matrix reads as its meaning (issue #33 item 7), never as "flops_per_token=6"
    switch = {"verdict": "explained", "alternative": {"assumption": "flops_per_token=6"}}
    assert _cause(switch) == "with 6 flops per token and parameter (no recomputation)"


def test_the_first_caveat_is_that_no_measured_run_uses_the_new_methods():
    """Issue #33 item 5: the planner's caveat, computed from the runs' methods (said only where the frame has them)."""
    frame = pd.DataFrame({"publication": ["a", "b", "b"], "method": ["baseline", "partitioned", "baseline"],
                          "ratio_physical": [1.5, 2.0, 0.9], "measured_step_s": [1.0, 2.0, 3.0]})
    summary = measured_summary(frame, {})
    assert summary["improved_runs"] == 0
    text = measured_sentence(summary)
    assert text.startswith("**Measured runs.** None of the 3 measured runs uses the paper's new methods. Real steps take "
                           "a median 1.50× the ideal bound, below the measured step in 2 of 3 runs"), text
    frame.loc[0, "method"] = "improved"
    assert "1 of the 3 measured runs use the paper's new methods." in measured_sentence(measured_summary(frame, {}))


def test_the_marks_are_defined_once_and_the_legend_lists_each():
    """Issue #32: ✓ reproduced, ≈ explained, ✗ differs, ⚠ paper inconsistent, defined in lgacc.paper.findings and
    read by the claims registry, the claims page and the front page's legend."""
    from lgacc.paper.claims import MARKS as CLAIM_MARKS
    from lgacc.paper.claims import mark
    from lgacc.paper.findings import MARKS, marks_legend

    assert CLAIM_MARKS is MARKS
    assert (MARKS["reproduced"], MARKS["explained"], MARKS["differs"], MARKS["paper inconsistent"]) == ("✓", "≈", "✗", "⚠")
    assert len(set(MARKS.values())) == len(MARKS) and mark("explained") == "≈"
    legend = marks_legend()
    for verdict, symbol in MARKS.items():
        assert f"{symbol} *{verdict}*" in legend
    page = front_page_markdown(facts())
    assert legend in page


def test_a_differing_headline_claim_names_the_reading_that_would_reproduce_it():
    import lgacc.book.frontpage as frontpage

    record = {"id": "memory_limit_80gb", "printed": "280 trillion parameters", "paper": 2.8e14, "unit": "parameters",
              "reproduced": 2.42e14, "verdict": "differs",
              "reproduced_by": [{"reading": "infiniband_threshold='implied by ~25 T'", "kind": "scaling",
                                 "reproduced": 2.82e14, "breaks": ["offload_needed_above"]}]}
    item = frontpage._item(record, "80 GB enough up to {paper}")
    assert "only with the InfiniBand threshold ~25 T implies" in item
