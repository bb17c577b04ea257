"""The front page's first screen: does the headline hold, what fails and why, in at most eight
sentences beside one figure.

Every number is computed on the paper's hardware (:data:`lgacc.paper.PAPER_HARDWARE`) whatever
hardware the book is built for, because a printed number can only be graded on the hardware it was
computed for:

* the verdicts come from the scorecard and the claims registry (:func:`lgacc.paper.claims.claims_records`):
  read, never restated, so that a verdict the registry adds (``paper inconsistent``) shows here as it is;
* the headline times and GPU counts from :func:`lgacc.studies.today.fastest_by_method` (X160, 3d);
* the later pipeline schedules from :func:`lgacc.search.core.fastest_schedule` under both of the paper's
  3d rule sets, as the pipeline-schedules page searches them;
* the measured runs from :mod:`lgacc.studies.validation`: the ideal bound's ratio to the measured step
  times, and whatever prediction error the validation summary reports.

:func:`gather` computes the :class:`Facts`; :func:`lead_sentences`, :func:`summary_figure` and
:func:`front_page_markdown` present them (``book/generated/findings.md``, written by the scorecard
notebook with :func:`write_front_page`).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

__all__ = ["HEADLINE_CLAIMS", "SPEEDUP_CLAIM", "MAX_SENTENCES", "intro", "ScheduleResult", "Facts", "gather", "measured_summary",
           "lead_sentences", "summary_figure", "front_page_markdown", "write_front_page"]

MODEL = "X160"
#: The claim the headline's speed-up is graded by.
SPEEDUP_CLAIM = "improved_speedup_over_baseline"
#: The paper's headline conclusions, in its order, each as a few words around its printed text
#: (``{printed}``, the paper's words) or its printed number in short form (``{paper}``, e.g. "4.5 T").
#: Which claims are headline ones is an editorial choice; their numbers and verdicts are the registry's.
HEADLINE_CLAIMS: tuple[tuple[str, str], ...] = (
    ("baseline_min_time_1t", "*{printed}* for the baseline"),
    ("improved_min_time_1t", "*{printed}* for the new methods"),
    ("improved_min_memory", "{paper} per GPU"),
    ("memory_17_times_less", "*{printed}* memory than the GPU has"),
    ("one_month_limit", "{paper} parameters in a month"),
    ("one_year_limit", "{paper} in a year"),
    ("memory_limit_80gb", "80 GB enough up to {paper}"),
    ("ethernet_x160_slowdown", "a {paper} slowdown over Ethernet"),
    ("one_month_cluster", "{paper} GPUs for a month"),
    ("six_month_cluster", "{paper} for six months"),
)
#: The later schedules the paper's modular pipeline is set against in words (the figure shows all).
RIVALS = ("1f1b", "interleaved", "zero-bubble")
SCHEDULE_NAMES = {"gpipe": "GPipe", "1f1b": "1F1B", "interleaved": "interleaved", "breadth-first": "breadth-first",
                  "zero-bubble": "zero-bubble", "modular": "modular"}
PAGES = {"headline": "trillion_parameter", "overall": "scorecard", "claims": "claims",
         "schedules": "pipeline_schedules", "measured": "against_measured_runs", "today": "todays_hardware"}
#: How a verdict class reads in the sentences, as a participle so that counts need no verb ("17 differing");
#: a class the registry adds reads as its own name.
CLASS_WORDS = {"reproduced": "reproduced", "explained": "explained", "paper inconsistent": "paper inconsistent",
               "differs": "differing", "not reproduced": "not reproduced", "built": "built (figures with no printed values)"}
HOLDING = ("reproduced", "explained")
#: The verdicts' marks, as :mod:`lgacc.paper.findings` defines them (once).
from lgacc.paper.findings import MARKS as MARK  # noqa: E402
from lgacc.paper.claims.words import WORDS, name_in_words  # noqa: E402
from lgacc.book.notebook.formats import format_list  # noqa: E402
#: A cause longer than this is cut at a word (the claims page gives it whole): the first screen stays one.
CAUSE_CHARACTERS = 80


@dataclass(frozen=True)
class ScheduleResult:
    """The fastest X160 configuration with one pipeline schedule (``None`` times: none is feasible)."""

    schedule: str
    rules: str
    time_days: float | None
    n_gpu: int | None
    n_v: int = 1
    memory_gib: float | None = None


@dataclass(frozen=True)
class Facts:
    """Everything the first screen says, computed (:func:`gather`) or made by hand in a test."""

    hardware: str
    counts: Mapping[str, int]  # items of the scorecard by verdict
    tables: int  # tables and figures graded
    records: Sequence[dict]  # the claims registry's rows
    baseline: tuple[float, int] | None  # (days, GPUs) of the fastest 3d baseline
    improved: tuple[float, int] | None  # same, layered gradient accumulation + modular pipeline
    printed: Mapping[str, str] = field(default_factory=dict)  # the paper's printed times: baseline, improved
    schedules: Sequence[ScheduleResult] = ()
    measured: Mapping[str, Any] | None = None  # :func:`measured_summary`
    built_for: str | None = None
    build_improved: tuple[float, int] | None = None  # the new methods on the build's hardware, if other


def _row_time(frame, method: str) -> tuple[float, int] | None:
    rows = frame[(frame["method"] == method) & frame["feasible"]]
    return None if rows.empty else (float(rows.iloc[0]["time_days"]), int(rows.iloc[0]["n_gpu"]))


def fastest_schedules(hardware, model: str = MODEL) -> list[ScheduleResult]:
    """Each schedule's fastest configuration, over the paper's two 3d rule sets (between equal times, the
    smaller memory), as on the pipeline-schedules page."""
    from lgacc.model.hardware import GIB
    from lgacc.schedule import SCHEDULES
    from lgacc.search.core import fastest_schedule

    results = []
    for name in SCHEDULES:
        best = None
        for rules in ("baseline", "improved"):
            found = fastest_schedule(model, hardware, rules, "3d", name, explain=False)
            if not found.feasible:
                continue
            e = found.evaluation
            candidate = ScheduleResult(name, rules, e.time_days, e.n_gpu, e.n_v, e.memory.total / GIB)
            if best is None or (candidate.time_days, candidate.memory_gib) < (best.time_days, best.memory_gib):
                best = candidate
        results.append(best or ScheduleResult(name, "", None, None))
    return results


def measured_summary(frame, summary: Mapping[str, Any]) -> dict[str, Any]:
    """The measured runs in the numbers the first screen uses: how many runs and publications, the
    measured step time over the ideal bound's (least, median, most; ``ratio_physical``), on how many
    runs the bound holds under each overlap rule, and every key of the validation ``summary`` as it is
    (today the kernel efficiency fitted on all runs and its leave-one-publication-out error).  A
    calibrated prediction in ``frame`` (a column ``expected_step_time_s`` or ``expected_step_s``) adds
    its mean error against the measured times, ``expected_mean_abs_error``; a column ``lopo_ratio`` (each
    run predicted by a fit without its publication) ``expected_lopo_error``, and ``upper_bound_ring`` the
    runs the bound holds for with ring traffic, ``bound_holds_ring``."""
    ratios = [float(r) for r in frame["ratio_physical"]]
    out = dict(summary)
    out.update(runs=len(frame), publications=int(frame["publication"].nunique()),
               ratio_min=min(ratios), ratio_median=statistics.median(ratios), ratio_max=max(ratios),
               bound_holds=sum(r >= 1 for r in ratios))
    if "method" in frame:  # the paper's new methods measured or not: the caveat a planner needs first
        out["improved_runs"] = int((frame["method"] == "improved").sum())
    if "ratio_paper" in frame:
        out["bound_holds_paper"] = int(sum(float(r) >= 1 for r in frame["ratio_paper"]))
    if "upper_bound_ring" in frame:
        out["bound_holds_ring"] = int(sum(bool(b) for b in frame["upper_bound_ring"]))
    for column in ("expected_step_time_s", "expected_step_s"):
        if column in frame:
            pairs = [(float(e), float(m)) for e, m in zip(frame[column], frame["measured_step_s"])
                     if _finite(float(e)) and _finite(float(m)) and float(m) > 0]
            if pairs:
                out.setdefault("expected_mean_abs_error", sum(abs(e / m - 1) for e, m in pairs) / len(pairs))
    if "lopo_ratio" in frame:  # each run predicted by a fit without its publication, as lgacc validate reports it:
        # over the dense bf16 runs (the runs with experts, context parallelism or FP8 are reported apart)
        dense = frame[~frame["extended"].astype(bool)] if "extended" in frame else frame
        held_out = [abs(float(r) - 1) for r in dense["lopo_ratio"] if _finite(float(r))]
        if held_out:
            out["expected_lopo_error"] = sum(held_out) / len(held_out)
    return out


def gather(built_for=None) -> Facts:
    """The first screen's numbers, on the paper's hardware (and the build's, for one sentence).

    ``built_for``: the build's hardware, a :class:`lgacc.model.hardware.Hardware` or anything
    :func:`lgacc.model.hardware.load_hardware` takes (a shipped name, a spec file's path)."""
    from lgacc.model.hardware import load_hardware
    from lgacc.paper import PAPER_HARDWARE, paper_table
    from lgacc.paper.claims import claims_records
    from lgacc.paper.findings import verdict_counts, with_verdicts
    from lgacc.paper.scorecard import scorecard
    from lgacc.studies.today import fastest_by_method
    from lgacc.studies.validation import calibration_summary, frame_for
    from lgacc.studies.validation.tables import dense_rows

    spec = load_hardware(PAPER_HARDWARE)
    card = with_verdicts(scorecard(spec))
    methods = fastest_by_method(MODEL, spec)
    printed = paper_table("table:parallel_methods_comparison")
    printed_3d = printed[printed["parallelism"] == "3d"].set_index("method")["time"]
    try:
        # the measured-runs chapter's frame (the shipped runs, the fitted calibration), read from the result cache
        # that chapter fills (keyed by every run's values), instead of computed again: 8 s of a build for a new spec
        frame = frame_for()
        # the dense bf16 runs, as the measured-runs chapter counts them (the runs with experts and in FP8 apart)
        measured = measured_summary(dense_rows(frame), calibration_summary(frame))
    except Exception as error:  # the first screen says what failed rather than failing the page
        measured = {"error": f"{type(error).__name__}: {error}"}
    build = None if built_for is None else load_hardware(built_for)
    build_improved = None
    if build is not None and build.name != spec.name:
        build_improved = _row_time(fastest_by_method(MODEL, build), "improved")
    return Facts(
        hardware=spec.name, counts=verdict_counts(card), tables=int(card["kind"].isin(["table", "figure"]).sum()),
        records=claims_records(spec), baseline=_row_time(methods, "baseline"), improved=_row_time(methods, "improved"),
        printed={"baseline": str(printed_3d.get("Baseline", "")), "improved": str(printed_3d.get("Improved", ""))},
        schedules=fastest_schedules(spec), measured=measured, built_for=None if build is None else build.name,
        build_improved=build_improved,
    )


# --- words -----------------------------------------------------------------------------------------


def _link(key: str, words: str) -> str:
    return f"{{doc}}`{words} </generated/{PAGES[key]}>`"


def _days(days: float) -> str:
    from lgacc.book.notebook.formats import format_days

    return format_days(days)


def _short(value: float, unit: str) -> str:
    """A value as short as a sentence wants it: ``4.57 T``, ``6.81 d``, ``42.8 %``, ``7,840``, ``16.9×``."""
    from lgacc.book.notebook.formats import format_count, format_days
    from lgacc.paper.findings import readable_value

    if unit == "parameters":
        return format_count(value)
    if unit == "days":
        return format_days(value)
    if unit == "fraction":
        return f"{100 * value:.3g} %"
    if unit == "GPUs":
        return f"{value:,.0f}"
    return readable_value(value, unit)


def _cause(record: Mapping[str, Any]) -> str:
    """Why a claim does not reproduce under the defaults, in a phrase, from the registry's own fields."""
    verdict = record.get("verdict")
    alternative = record.get("alternative") or {}
    if verdict == "explained" and alternative.get("assumption"):
        assumption = str(alternative["assumption"])
        if all(part in WORDS for part in assumption.split(", ")):  # switches of the reading matrix: their meaning
            words = name_in_words(assumption)
            return f"with {words}" if len(words) <= CAUSE_CHARACTERS else f"with {words[:CAUSE_CHARACTERS].rsplit(' ', 1)[0]}…"
        head, _, note = assumption.partition(" (")
        note = note.rstrip(")")
        if "=" in head and note and len(note) <= CAUSE_CHARACTERS // 2:
            return f"with {note}"
        return f"with {head if len(head) <= CAUSE_CHARACTERS // 2 else head.split(', ')[0]}"
    if verdict == "differs":  # the reading of the matrix that would reproduce it, if any (issue #32)
        readings = [name_in_words(r["reading"]) for r in record.get("reproduced_by") or ()]
        if not readings:
            return ""
        phrase = f"only with {readings[0]}" + (f" or {len(readings) - 1} more readings" if len(readings) > 1 else "")
        return phrase if len(phrase) <= CAUSE_CHARACTERS else phrase[:CAUSE_CHARACTERS].rsplit(" ", 1)[0] + "…"
    if verdict == "reproduced":
        return ""
    explanation = str(record.get("explanation") or "")
    phrase = explanation.split(";")[0].split(" (")[0].split(", ")[0].strip().rstrip(",;:.")
    if phrase[1:2].islower():  # a sentence's capital, not an acronym's, inside the bracket
        phrase = phrase[:1].lower() + phrase[1:]
    return phrase if len(phrase) <= CAUSE_CHARACTERS else phrase[:CAUSE_CHARACTERS].rsplit(" ", 1)[0] + "…"


def _item(record: Mapping[str, Any], words: str) -> str:
    """A claim in a few words, with the package's value where it reads otherwise than the paper's, and
    the cause the registry gives for a verdict other than reproduced or differs."""
    from lgacc.book.notebook.typeset import printed_math

    paper = _short(float(record["paper"]), record["unit"])
    text = words.format(printed=printed_math(str(record["printed"])), paper=paper)
    value = None if record.get("reproduced") is None else _short(float(record["reproduced"]), record["unit"])
    detail = [value or "not computed"] if value != paper else []
    cause = _cause(record)
    if cause:
        detail.append(cause)
    return f"{text} ({', '.join(detail)})" if detail else text


def _by_class(records: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """The headline claims' items grouped by verdict class, in :data:`HEADLINE_CLAIMS`' order."""
    by_id = {r["id"]: r for r in records}
    groups: dict[str, list[str]] = {}
    for claim_id, words in HEADLINE_CLAIMS:
        if claim_id in by_id:
            groups.setdefault(str(by_id[claim_id].get("verdict")), []).append(_item(by_id[claim_id], words))
    return groups


def _counts_phrase(counts: Mapping[str, int]) -> str:
    """``31 reproduced, 6 explained, 17 differing and 1 not reproduced``."""
    parts = [f"{n:,} {MARK.get(verdict, '')} {CLASS_WORDS.get(verdict, verdict)}".replace("  ", " ")
             for verdict, n in counts.items() if n]
    return format_list(parts) if parts else "none graded"


def headline_sentence(facts: Facts) -> str:
    link = _link("headline", "The search")
    if facts.baseline is None or facts.improved is None:
        missing = "the baseline" if facts.baseline is None else "the new methods"
        return f"**Headline.** {link} finds no feasible 3d configuration of {MODEL} for {missing} on {facts.hardware}."
    by_id = {r["id"]: r for r in facts.records}
    size = by_id.get("x160_parameters", {}).get("reproduced")
    ratio = facts.baseline[0] / facts.improved[0]
    speedup = by_id.get(SPEEDUP_CLAIM)
    grade = ""
    if speedup is not None:
        printed, verdict, cause = speedup["printed"], speedup.get("verdict"), _cause(speedup)
        grade = {"reproduced": f": *{printed}* holds {MARK['reproduced']}",
                 "differs": f", so *{printed}* differs ({str(speedup.get('difference', '')).replace('-', '−')})",
                 }.get(verdict, f", so *{printed}* is {CLASS_WORDS.get(verdict, verdict)}" + (f" ({cause})" if cause else ""))
    printed = [facts.printed.get(k) for k in ("improved", "baseline")]
    paper_ratio = ""
    if all(printed):  # the paper's own printed times give their own ratio, shown beside the computed one
        from lgacc.paper import parse_printed

        times = [parse_printed(str(t).removesuffix(" d")).value for t in printed]
        paper_ratio = f" (printed: {printed[1]} / {printed[0]} = **{times[1] / times[0]:.2f}×**)"
    return (f"**Headline.** {link} trains {MODEL}" + (f" ({_short(size, 'parameters')} parameters)" if size else "")
            + f" in **{_days(facts.improved[0])} on {facts.improved[1]:,} GPUs** with the paper's methods, against "
            f"**{_days(facts.baseline[0])} on {facts.baseline[1]:,}** with the baseline: **{ratio:.2f}×**{paper_ratio}{grade}.")


def overall_sentence(facts: Facts) -> str:
    graded = {v: n for v, n in facts.counts.items() if v != "built"}
    built = facts.counts.get("built", 0)
    total = sum(graded.values())
    return (f"**Overall.** Of {total} graded items ({facts.tables - built} tables and figures, {len(facts.records)} prose "
            f"numbers): {_counts_phrase(graded)} ({_link('overall', 'scorecard')}).")  # built figures: in the details


def conclusion_sentences(facts: Facts) -> list[str]:
    """What holds (reproduced; explained, with the named reading) and what fails (every other class,
    each with its cause where the registry computes one), over :data:`HEADLINE_CLAIMS`."""
    from lgacc.paper.findings import VERDICTS

    groups = _by_class(facts.records)
    holds = [f"{CLASS_WORDS[v]}: {format_list(groups[v])}" for v in HOLDING if v in groups]
    fails = []
    for verdict in dict.fromkeys([*VERDICTS, *groups]):  # the known classes in their order, then any other
        if verdict in groups and verdict not in HOLDING:
            words = CLASS_WORDS.get(verdict, verdict)
            fails.append(f"{words}: {format_list(groups[verdict])}")
    link = _link("claims", "claims")
    out = []
    if holds:
        out.append(f"**Holds.** {_capital('; '.join(holds))} ({link}).")
    if fails:
        out.append(f"**Fails.** {_capital('; '.join(fails))} ({link}).")
    return out


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def schedules_sentence(facts: Facts) -> str | None:
    by_name = {s.schedule: s for s in facts.schedules if s.time_days is not None}
    ours = by_name.get("modular")
    if ours is None:
        return None

    def verdict(theirs: ScheduleResult) -> str:  # at the paper's two printed digits for a time
        a, b = float(f"{ours.time_days:.1e}"), float(f"{theirs.time_days:.1e}")
        return "ties" if a == b else "beats" if a < b else "loses to"

    groups: dict[str, list[str]] = {}
    for name in RIVALS:
        if name in by_name:
            groups.setdefault(verdict(by_name[name]), []).append(f"{SCHEDULE_NAMES[name]} ({_days(by_name[name].time_days)})")
    parts = [f"{word} {format_list(items)}" for word, items in groups.items()]
    return (f"**Later schedules.** At {MODEL} the modular pipeline ({_days(ours.time_days)}) {format_list(parts)} "
            f"under the paper's rules ({_link('schedules', 'pipeline schedules')}).")


def measured_sentence(measured: Mapping[str, Any] | None) -> str | None:
    """The ideal bound against measured runs, from whatever :func:`measured_summary` holds: the median of the
    measured over the ideal step time, on how many runs the bound holds with the paper's per-GPU data-parallel
    traffic and with ring traffic (``dp_network``), and the calibrated model's error on publications it was not
    fitted on (else on all of them, said so)."""
    if not measured:
        return None
    if "error" in measured:
        return (f"**Measured runs.** The comparison with measured runs could not be computed: {measured['error']} "
                f"({_link('measured', 'measured runs')}).")
    runs, holds = measured["runs"], measured["bound_holds"]

    def count(n: int) -> str:
        return "all" if n == runs else f"{n} of {runs}"

    improved = measured.get("improved_runs")
    text = "**Measured runs.** "
    if improved == 0:  # the caveat first: the new methods' times are a model's, never a measurement
        text += f"None of the {runs} measured runs uses the paper's new methods. "
    elif improved:
        text += f"{improved} of the {runs} measured runs use the paper's new methods. "
    source = "" if improved is not None else f" ({runs} runs, {measured['publications']} publications)"
    text += (f"Real steps take a median {measured['ratio_median']:.2f}× the ideal bound{source}, below the "
             f"measured step in {count(holds)} runs")
    if "bound_holds_ring" in measured:
        ring = measured["bound_holds_ring"]
        text += (f" ({'all' if ring == runs else ring} with ring all-reduce)"
                 if ring != holds else "")
    if _finite(measured.get("expected_lopo_error")):
        text += f"; the calibrated model is off by {measured['expected_lopo_error']:.0%} on unseen publications"
    elif _finite(measured.get("expected_mean_abs_error")):
        text += f"; the calibrated prediction is off by {measured['expected_mean_abs_error']:.0%} on average (fitted on these runs)"
    elif _finite(measured.get("lopo_mean_abs_error")) and _finite(measured.get("kernel_efficiency")):
        text += (f"; one fitted kernel efficiency ({measured['kernel_efficiency']:.2f}) predicts a held-out "
                 f"publication within {measured['lopo_mean_abs_error']:.0%}")
    return text + f" ({_link('measured', 'measured runs')})."


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


def build_sentence(facts: Facts) -> str | None:
    if not facts.built_for or facts.built_for == facts.hardware:
        return None
    there = (f"the new methods train {MODEL} in {_days(facts.build_improved[0])} on {facts.build_improved[1]:,} GPUs"
             if facts.build_improved else f"no 3d configuration of {MODEL} is feasible with the new methods")
    return (f"This build is for **{facts.built_for}**: there {there} ({_link('today', 'today’s hardware')}); the "
            "pages show its numbers beside the paper's.")


def intro(hardware: str) -> str:
    """The sentence before the list: what the numbers are, and on which hardware."""
    return ("[The paper](https://arxiv.org/abs/2106.02679) (Lamy-Poirier, 2021) recomputed by `lgacc` on its own "
            f"hardware ({hardware}); times are the paper's ideal bound, every kernel at peak.")


#: The first screen holds at most this many sentences, :func:`intro` included.
MAX_SENTENCES = 8


def lead_sentences(facts: Facts) -> list[str]:
    """At most seven sentences (eight with :func:`intro`), each with numbers and a link to its page."""
    sentences = [headline_sentence(facts), overall_sentence(facts), *conclusion_sentences(facts),
                 schedules_sentence(facts), measured_sentence(facts.measured)]
    return [s for s in sentences if s][:MAX_SENTENCES - 1]


# --- the figure and the page -----------------------------------------------------------------------


def summary_figure(facts: Facts):
    """X160's training time with each pipeline schedule (fastest configuration, ideal bound), the paper's
    printed times marked: sized to read at 9 px or more on a phone."""
    from matplotlib.figure import Figure

    shown = [s for s in facts.schedules if s.time_days is not None]
    figure = Figure(figsize=(4.4, 0.5 + 0.42 * max(len(shown), 1)))
    axis = figure.subplots()
    labels, colours = [], []
    for s in shown:
        name = SCHEDULE_NAMES.get(s.schedule, s.schedule)
        labels.append(name + (" (paper)" if s.schedule == "modular" else " (baseline)" if s.schedule == "gpipe" else "")
                      + (f", v={s.n_v}" if s.n_v > 1 else ""))
        colours.append("#1f77b4" if s.schedule == "modular" else "#9aa5b1")
    y = list(range(len(shown)))[::-1]
    axis.barh(y, [s.time_days for s in shown], color=colours, height=0.62)
    longest = max((s.time_days for s in shown), default=1.0)
    for position, s in zip(y, shown):
        axis.text(s.time_days + longest * 0.02, position, f"{_days(s.time_days)} · {s.n_gpu:,} GPUs",
                  va="center", fontsize=9)
    for key, schedule in (("baseline", "gpipe"), ("improved", "modular")):
        from lgacc.paper import parse_printed

        printed = facts.printed.get(key)
        rows = [p for p, s in zip(y, shown) if s.schedule == schedule]
        if printed and rows:
            value = parse_printed(printed.removesuffix(" d")).value
            axis.plot([value, value], [rows[0] - 0.42, rows[0] + 0.42], color="black", linewidth=1.6)
    axis.set_yticks(y, labels, fontsize=9.5)
    axis.set_xlim(0, longest * 1.75)
    axis.set_xlabel(f"days to train {MODEL} (black tick: the paper's time)", fontsize=9)
    axis.tick_params(axis="x", labelsize=9)
    for side in ("top", "right"):
        axis.spines[side].set_visible(False)
    figure.tight_layout()
    return figure


def front_page_markdown(facts: Facts, details: str = "") -> str:
    """The first screen (the sentences beside the figure), the marks' legend (defined once,
    :data:`lgacc.paper.findings.MARKS`), then ``details`` (the scorecard's breakdown)."""
    from lgacc.book.notebook.figures import figure_html, figure_svg
    from lgacc.paper.findings import marks_legend

    figure = summary_figure(facts)
    svg = "\n".join(line for line in figure_html(figure_svg(figure)).splitlines() if line.strip())  # one HTML block
    caption = f"{MODEL}'s shortest training time by pipeline schedule, each searched under the paper's rules."
    # the figure first: on a wide screen it floats right of the sentences (book/_static/lgacc.css), on a
    # phone it is ordered after them
    lines = ["::::{container} lgacc-lead", ":::{container} lgacc-lead-figure", svg, "", caption, ":::",
             ":::{container} lgacc-lead-text", intro(facts.hardware), "",
             *[f"- {sentence}" for sentence in lead_sentences(facts)], ":::", "::::", ""]
    build = build_sentence(facts)
    if build:  # a build for other hardware: its own numbers are a sentence away, under the first screen
        lines += [build, ""]
    lines += [f"**Marks.** {marks_legend()}.", ""]
    if details:
        lines += ["## The grading in detail", "", details]
    return "\n".join(lines)


def write_front_page(path: Path | str, built_for=None, details: str = "") -> None:
    """Compute the first screen and write it to ``path`` (the front page includes it); ``built_for`` as
    :func:`gather` takes it."""
    Path(path).write_text(front_page_markdown(gather(built_for), details))
