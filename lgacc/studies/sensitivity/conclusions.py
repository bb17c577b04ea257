"""The conclusions of the sensitivity study: does each headline claim hold, weaken or reverse?

One job: judge.  Each :class:`Conclusion` names the result it rests on and the
printed claim (``data/paper/claims.yaml``) it is judged against; :func:`classify`
grades one row, :func:`verdicts` every row of each assumption with the values
where the verdict flips, and :func:`verdict_cell`, :func:`verdict_table` and
:func:`conclusion_sentences` say it in words and tables.

A conclusion *holds* where its printed claim's own rule (``data/paper/claims.yaml``, graded by
:mod:`lgacc.paper.claims`: the printed digits, or the word "about", "at least", ...) accepts the result, or
where the result is past the printed number on the favourable side (a shorter time than "about a week", a
larger speed-up); so at the paper's values on the paper's hardware it says what the claims page says, and
:func:`verdicts` puts the claim's verdict from :mod:`lgacc.paper.claims.registry` (the one place verdicts are
given) beside it.

May import: :mod:`lgacc.studies.sensitivity.grid`, :mod:`lgacc.studies.sensitivity.compute` (the
rows it judges), :mod:`lgacc.paper.claims` (the printed claims, their rules and verdicts),
:mod:`lgacc.model.evaluator` (the default overhead cap), :mod:`lgacc.model.hardware`; pandas for the table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Any, Callable, Mapping, Sequence

from lgacc.model.evaluator import DEFAULT_MAX_OVERHEAD
from lgacc.model.hardware import DEFAULT_HARDWARE, GIB, Hardware, load_hardware
from lgacc.paper.claims import printed_claims

from .compute import SensitivityRow
from .grid import Dimension, Setting, dimensions

__all__ = [
    "VERDICTS",
    "REVERSAL_FACTOR",
    "Conclusion",
    "CONCLUSIONS",
    "classify",
    "verdicts",
    "verdict_cell",
    "verdict_table",
    "conclusion_sentences",
    "claim_verdicts",
]

# --- conclusions ---------------------------------------------------------------------------------

#: Verdicts, from best to worst.
VERDICTS = ("holds", "weakens", "reverses")
#: A time this factor off the printed one is the other method's: the improved method in two weeks
#: is the baseline's printed time, the baseline in one week the improved method's.
REVERSAL_FACTOR = 2.0


@dataclass(frozen=True)
class Conclusion:
    """A headline conclusion, the result it rests on and the printed claim it is judged against.

    ``short`` is its name in a table's header.

    ``kind``: ``"at least"`` (holds where the claim's rule accepts the value or above the printed
    value, reverses at or below ``reverse_at``), ``"at most"`` (holds where the rule accepts it or
    below the printed value, reverses above ``reverse_at``), ``"about"`` (holds where the rule accepts
    it, reverses below ``reverse_at`` when given, or when ``bound_key`` says memory, not time, sets
    the limit; weakens otherwise).  ``reverse_at`` takes the printed value and the GPU's memory in GB.
    """

    key: str
    statement: str
    result: str
    claim: str
    kind: str
    reverse_at: Callable[[float, float], float] | None = None
    bound_key: str | None = None
    reversal: str = ""
    short: str = ""


@cache
def _claims() -> dict:
    return {c.id: c for c in printed_claims()}


def _printed(claim: str) -> float:
    """The printed number a conclusion is judged against (``data/paper/claims.yaml``)."""
    return _claims()[claim].paper


CONCLUSIONS: tuple[Conclusion, ...] = (
    Conclusion("speedup", "The improved method is at least twice as fast as the baseline on X160",
               "speedup", "improved_speedup_over_baseline", "at least", lambda printed, _: 1.0,
               reversal="the baseline is as fast or faster", short="speed-up ≥ 2"),
    Conclusion("improved_week", "X160 trains in about a week with the improved method",
               "improved_time_days", "improved_min_time_1t", "at most", lambda printed, _: REVERSAL_FACTOR * printed,
               reversal="it takes more than two weeks", short="improved ≈ 1 week"),
    Conclusion("baseline_two_weeks", "X160 takes about two weeks with the baseline",
               "baseline_time_days", "baseline_min_time_1t", "about", lambda printed, _: printed / REVERSAL_FACTOR,
               reversal="the baseline trains it within a week", short="baseline ≈ 2 weeks"),
    Conclusion("memory", "Memory is not the limit: the improved method needs a tiny fraction of the GPU's memory",
               "min_memory_share", "improved_memory_tiny_fraction", "at most", lambda printed, gpu_gib: 1.0,
               reversal="it no longer fits in the GPU", short="memory ≪ GPU"),
    Conclusion("one_month", "About 4.5 T parameters train within a month",
               "one_month_limit_p", "one_month_limit", "about", bound_key="one_month_bound",
               reversal="memory, not the training time, sets the limit", short="1 month ≈ 4.5 T"),
    Conclusion("one_year", "About 50 T parameters train within a year",
               "one_year_limit_p", "one_year_limit", "about", bound_key="one_year_bound",
               reversal="memory, not the training time, sets the limit", short="1 year ≈ 50 T"),
    # Ethernet is "enough" while its slowdown stays within the overhead the paper accepts anywhere else.
    Conclusion("ethernet", "Ethernet is enough: X160 slows down by only about 4 % over Ethernet",
               "ethernet_slowdown", "ethernet_x160_slowdown", "at most", lambda printed, _: DEFAULT_MAX_OVERHEAD,
               reversal="the slowdown exceeds the 25 % overhead cap", short="Ethernet ≈ 4 %"),
)


def classify(conclusion: Conclusion, row: Mapping[str, Any], gpu_memory_gib: float) -> str:
    """``holds``, ``weakens`` or ``reverses`` for one row's results."""
    value = row[conclusion.result]
    claim = _claims()[conclusion.claim]
    printed = claim.paper
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "reverses"
    accepted = claim.agrees(value)  # the claim's own rule, as the claims page grades it
    if conclusion.kind == "at least":
        if accepted or value >= printed:
            return "holds"
        return "weakens" if value > conclusion.reverse_at(printed, gpu_memory_gib) else "reverses"
    if conclusion.kind == "at most":
        if accepted or value <= printed:
            return "holds"
        return "weakens" if value <= conclusion.reverse_at(printed, gpu_memory_gib) else "reverses"
    if conclusion.bound_key and row.get(conclusion.bound_key) == "memory":
        return "reverses"
    if conclusion.reverse_at is not None and value < conclusion.reverse_at(printed, gpu_memory_gib):
        return "reverses"
    return "holds" if accepted else "weakens"


def verdicts(rows: Sequence[SensitivityRow], hardware: Hardware | str = DEFAULT_HARDWARE) -> list[dict[str, Any]]:
    """Per conclusion and assumption: the verdict at each value, the worst one, and where it flips.

    ``flips`` lists, walking away from the paper's value in each direction (in the
    order of the values), every change of verdict: the value ``to`` where the new
    verdict starts and the value ``from`` just before it, so that the threshold lies
    between them.  For an unordered assumption (a choice), each value whose verdict
    differs from the paper's.
    """
    spec = load_hardware(hardware)
    claimed = claim_verdicts(spec)
    by_dimension: dict[str, list[SensitivityRow]] = {}
    for row in rows:
        by_dimension.setdefault(row.assumption, []).append(row)
    titles = {d.name: d for d in dimensions(spec)}
    out = []
    for conclusion in CONCLUSIONS:
        for name, group in by_dimension.items():
            gpu_gib = {id(r): _gpu_memory_gib(spec, titles[name], r.value) for r in group}
            classes = [classify(conclusion, r.as_dict(), gpu_gib[id(r)]) for r in group]
            worst = max(classes, key=VERDICTS.index)
            default = next((i for i, r in enumerate(group) if r.is_paper_default), 0)
            flips = []
            if titles[name].ordered:
                for direction in (-1, 1):
                    i = default
                    while 0 <= i + direction < len(group):
                        j = i + direction
                        if classes[j] != classes[i]:
                            flips.append({"verdict": classes[j], "from": group[i].value, "to": group[j].value,
                                          "from_label": group[i].label, "to_label": group[j].label})
                        i = j
            else:
                for r, c in zip(group, classes):
                    if c != classes[default]:
                        flips.append({"verdict": c, "from": group[default].value, "to": r.value,
                                      "from_label": group[default].label, "to_label": r.label})
            out.append({
                "conclusion": conclusion.key, "statement": conclusion.statement, "assumption": name,
                "title": titles[name].title, "verdict": worst, "at_default": classes[default],
                "verdicts": dict(zip([r.label for r in group], classes)), "flips": flips,
                "claim": conclusion.claim, "claim_verdict": claimed.get(conclusion.claim),
            })
    return out


def claim_verdicts(hardware: Hardware | str = DEFAULT_HARDWARE) -> dict[str, str]:
    """The claims page's verdict of each conclusion's claim (:func:`lgacc.paper.claims.registry.verdict_of`), where
    the study runs on the paper's hardware; empty elsewhere (the claims are graded on the paper's hardware only)."""
    from lgacc.paper import PAPER_HARDWARE
    from lgacc.paper.claims import verdict_of

    if load_hardware(hardware) != load_hardware(PAPER_HARDWARE):
        return {}
    return {c.claim: verdict_of(c.claim, PAPER_HARDWARE) for c in CONCLUSIONS}


def _gpu_memory_gib(spec: Hardware, dimension: Dimension, value: Any) -> float:
    return dimension.setting(Setting(spec), value).gpu_memory_bytes() / GIB


def verdict_cell(record: Mapping[str, Any]) -> str:
    """The verdict at the paper's value and each change over the range (``weakens between 16 GPUs and 8 GPUs``)."""
    parts = [f"{f['verdict']} with {f['to_label']}" if not _ordered(record["assumption"])
             else f"{f['verdict']} between {f['from_label']} and {f['to_label']}" for f in record["flips"]]
    return "; ".join([f"{record['at_default']} at the paper's value"] + parts)


def _ordered(name: str) -> bool:
    return {d.name: d.ordered for d in dimensions()}.get(name, True)


def verdict_table(records: Sequence[Mapping[str, Any]]):
    """Assumptions down, conclusions across: the worst verdict over each range (cells of :func:`verdicts`)."""
    import pandas as pd

    titles = {d.name: d.title for d in dimensions()}
    shorts = {c.key: c.short or c.key for c in CONCLUSIONS}
    table: dict[str, dict[str, str]] = {}
    for r in records:
        table.setdefault(titles.get(r["assumption"], r["assumption"]), {})[shorts[r["conclusion"]]] = r["verdict"]
    return pd.DataFrame.from_dict(table, orient="index")


def conclusion_sentences(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """One sentence per conclusion, written from the verdicts: where it stands and which values change it."""
    titles = {d.name: d.title for d in dimensions()}
    out = []
    for conclusion in CONCLUSIONS:
        mine = [r for r in records if r["conclusion"] == conclusion.key]
        if not mine:
            continue
        at_default = mine[0]["at_default"]
        buckets: dict[str, list[str]] = {v: [] for v in VERDICTS}
        for r in mine:
            for verdict in VERDICTS:
                hits = [f for f in r["flips"] if f["verdict"] == verdict and verdict != at_default]
                if hits:
                    where = ", ".join(f"{f['to_label']}" if not _ordered(r["assumption"])
                                      else f"{f['to_label']} (flips between {f['from_label']} and {f['to_label']})"
                                      for f in hits)
                    buckets[verdict].append(f"{titles[r['assumption']]}: {where}")
        sentence = f"**{conclusion.statement}.** With every assumption at the paper's value it *{at_default}*"
        claimed = mine[0].get("claim_verdict")
        sentence += (f" (the claims page: *{claimed}*, `{conclusion.claim}`)." if claimed else ".")
        if buckets["reverses"]:
            sentence += f" It reverses ({conclusion.reversal}) with " + "; ".join(buckets["reverses"]) + "."
        if buckets["weakens"]:
            sentence += " It weakens with " + "; ".join(buckets["weakens"]) + "."
        if buckets["holds"]:
            sentence += " It holds with " + "; ".join(buckets["holds"]) + "."
        if not any(buckets.values()):
            sentence += " No assumption in the ranges here changes that."
        out.append(sentence)
    return out

