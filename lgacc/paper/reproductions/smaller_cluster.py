"""``table:smaller_cluster``: the paper's example configurations for training X_160 in one and six months.

The paper gives "some example configurations with high efficiency for the target training times of one and
six months", chosen by hand ("it is also far more flexible, as shown for example in the last two entries":
b = 792 and b = 102 on purpose, a row at 199 d).  So each printed row is reproduced as what it is, one
configuration: decoded from its own cells (:mod:`lgacc.paper.reproductions.cluster_decoding`: ``b, n_a,
n_gpu`` and the printed memory fix it, the paper's selection rules break the ties), then evaluated.  The
decoded configuration is graded cell by cell at the printed precision; ``b``, ``n_a``, ``n_gpu`` and the two
memory cells are the decoding's inputs (flagged ``echoed_input``: shown and compared, not counted as
reproduced by the scorecard), the efficiency and the time are computed.

Beside it, graded separately, is *what the search would pick*: :func:`lgacc.search.cheapest`, the fewest
GPUs that train within the row's target (one month = 365.25 / 12 days, six months = 365.25 / 2 days;
``target_months`` in ``data/paper/``), with the row's method and parallelism, or the fastest configuration
when none reaches it.  Its GPU count is ``explained`` when no configuration reaches the target and the fastest
has the printed count (``FASTEST_IF_OUT_OF_REACH``).  When only the row's printed time taken as the target gives
the printed count (``PRINTED_TIME_TARGET``: the paper's "one month" rows take 31 to 32 days, its "six months"
rows 180 to 199 days), it ``differs``, naming that reading: the target is a reading of the paper's words (the
switch ``cluster_target`` of :class:`lgacc.paper.claims.PaperReading`), not a documented fact, so under the one
paper reading (calendar months) it cannot explain a cell (issue #32).
"""

from __future__ import annotations

import pandas as pd

from lgacc.model.assumptions import DEFAULT_ASSUMPTIONS, Assumptions, paper_gb_bytes
from lgacc.model.evaluator import evaluate
from lgacc.model.hardware import GIB, Hardware
from lgacc.model.transformer import x_model
from lgacc.search import Parallelism, cheapest, fastest
from lgacc.units import DAYS_PER_MONTH

from ..artifacts import Artifact
from ..cells import echoed
from ..printed import format_like, paper_table, parse_printed
from .cluster_decoding import decode_table
from .parallel_methods_comparison import MODEL_X, two_digits

LABEL = "table:smaller_cluster"
#: One calendar month in days (a twelfth of a Julian year).
MONTH_DAYS = DAYS_PER_MONTH
#: The alternative reading of a row's target, named as in the verdicts.
PRINTED_TIME_TARGET = "target = the row's printed time"
FASTEST_IF_OUT_OF_REACH = "the fastest configuration where the target is out of reach"

#: Printed column -> reproduced column of :func:`build` (the decoded configuration's).
_GRADED = {"b": "b", "n_a": "n_a", "n_gpu": "n_gpu", "offloadable": "offloadable",
           "non_offloadable": "non_offloadable", "efficiency": "efficiency", "time": "time_days"}
#: The printed cells the decoding reads: compared, but inputs rather than results.
DECODING_INPUTS = ("b", "n_a", "n_gpu", "offloadable", "non_offloadable")


def _measured(evaluation, config, assumptions: Assumptions, prefix: str = "") -> dict:
    """One configuration's cells of the table (memory in the paper's GB as ``gb`` reads it)."""
    record = {"offload": config.offload, "b": evaluation.b, "b_mu": config.b_mu, "n_mu": config.n_mu,
              "n_gpu": evaluation.n_gpu, "n_b": config.n_b, "n_l": config.n_l, "n_a": config.n_a,
              "efficiency": evaluation.efficiency, "time_days": evaluation.time_days,
              **{key: value * GIB / paper_gb_bytes(assumptions) for key, value in evaluation.memory.in_gib().items()}}
    return {f"{prefix}{key}": value for key, value in record.items()}


def _search_row(model, hardware: Hardware, method: str, parallelism: str, target_days: float,
                assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> dict:
    """The cheapest configuration within ``target_days``, or the fastest one when none reaches it (``search_``)."""
    found = cheapest(model, hardware, method, Parallelism(parallelism), target_days, explain=False, assumptions=assumptions)
    reached = bool(found.feasible)
    if not reached:
        found = fastest(model, hardware, method, Parallelism(parallelism), explain=False, assumptions=assumptions)
    record: dict = {"target_reached": reached, "search_binding": ""}
    if not found.feasible:
        record["search_binding"] = "; ".join(found.binding)
        return record
    record.update(_measured(found.evaluation, found.config, assumptions, "search_"))
    if not reached:
        record["search_binding"] = f"no configuration trains within {target_days:.1f} d; the fastest is shown"
    return record


def build(hardware: Hardware, x: int = MODEL_X, assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
          alternative: bool = True) -> pd.DataFrame:
    """Per printed row: its decoded configuration evaluated on ``hardware`` (``n_b`` ... ``time_days``, the
    decoding in ``decoded_*``), and the search's pick for the row's target (``search_*``, ``target_reached``).

    ``alt_n_gpu`` is the search with the row's printed time as the target (the alternative reading of the
    search's GPU count); ``alternative=False`` leaves it out (``None``), for a caller that only regrades the
    printed cells (:mod:`lgacc.paper.assumption_effects`).
    """
    model = x_model(x)
    decoded = decode_table(model)
    searched: dict[tuple, dict] = {}  # rows asking the same question (two "3d / Improved, six months") search once
    out = []
    for printed, decoding in zip(paper_table(LABEL).to_dict(orient="records"), decoded):
        months = int(printed["target_months"])
        method = printed["method"].lower()
        record = {"parallelism": printed["parallelism"], "method": printed["method"], "target_months": months,
                  "target_days": months * MONTH_DAYS}
        evaluation = evaluate(model, hardware, decoding.config, assumptions=assumptions)
        record.update(_measured(evaluation, decoding.config, assumptions))
        record.update(decoded_configuration=decoding.summary, decoded_candidates=decoding.candidates,
                      decoded_offload_ok=decoding.offload_ok, decoded_memory_ok=len(decoding.memory_ok),
                      decoded_memory_matched=decoding.memory_matched, decoded_rule=decoding.rule)
        question = (method, printed["parallelism"], months)
        if question not in searched:
            searched[question] = _search_row(model, hardware, method, printed["parallelism"], months * MONTH_DAYS,
                                             assumptions)
        record.update(searched[question])
        printed_days = parse_printed(printed["time"]).value  # the printed time, in days
        found = cheapest(model, hardware, method, Parallelism(printed["parallelism"]), printed_days,
                         explain=False, assumptions=assumptions) if printed_days and alternative else None
        record["alt_target_days"] = printed_days
        record["alt_n_gpu"] = found.evaluation.n_gpu if found is not None and found.feasible else None
        out.append(record)
    return pd.DataFrame(out)


def _search_n_gpu_verdict(printed: str, row) -> tuple[str, str]:
    """(verdict, explanation) of the search's GPU count: exact match, explained by the printed-time target, or differs."""
    paper = int(printed)
    found = not pd.isna(row.get("search_n_gpu"))
    if found and int(row["search_n_gpu"]) == paper and bool(row["target_reached"]):
        return "reproduced", ""
    if found and int(row["search_n_gpu"]) == paper:
        # the paper's row misses the target too: it is the fastest configuration there is
        return "explained", (f"{FASTEST_IF_OUT_OF_REACH}: no configuration reaches {row['target_days']:.1f} d; "
                             f"the fastest takes {row['search_time_days']:.1f} d on {paper} GPUs")
    alt = row.get("alt_n_gpu")
    if alt is not None and not pd.isna(alt) and int(alt) == paper:
        return "differs", (f"{int(row['search_n_gpu']) if found else 'none'} GPUs at {row['target_days']:.1f} d; it would be "
                           f"reproduced by {PRINTED_TIME_TARGET} ({row['alt_target_days']:.0f} d gives {int(alt)} GPUs), "
                           "a reading of the target, not the paper reading")
    got = f"{int(row['search_n_gpu'])}" if found else "none"
    if found and not bool(row["target_reached"]):
        return "differs", (f"no configuration reaches {row['target_days']:.1f} d; the fastest takes "
                           f"{row['search_time_days']:.1f} d on {got} GPUs")
    return "differs", f"{got} GPUs at {row['target_days']:.1f} d" + (
        f"; {int(alt)} at the printed time" if alt is not None and not pd.isna(alt) else "")


def _shown(column: str, value, text: str) -> str:
    """A value as the paper prints its column: integers exactly, the time and memory at the printed digits."""
    if value is None or pd.isna(value):
        return "—"
    if column in ("b", "n_a", "n_gpu"):
        return str(int(value))
    return format_like(float(value), text)


def _search_cells(printed: dict, row) -> int:
    """How many of the row's printed cells the search's pick reproduces at the printed precision."""
    if pd.isna(row.get("search_n_gpu")):
        return 0
    return sum(bool(parse_printed(str(printed[column])).agrees(float(row[f"search_{source}"])))
               for column, source in _GRADED.items())


def compare(reproduced: pd.DataFrame) -> pd.DataFrame:
    """Per row: every printed cell beside the decoded configuration's, graded at printed precision, and the
    search's pick beside it, graded apart (``search ...`` columns: none ends in ``agrees``)."""
    paper = paper_table(LABEL)
    rows = []
    for printed, (_, row) in zip(paper.to_dict(orient="records"), reproduced.iterrows()):
        if (printed["parallelism"], printed["method"]) != (row["parallelism"], row["method"]):
            raise ValueError(f"{LABEL}: row order differs at {printed['parallelism']}/{printed['method']}")
        months = int(row["target_months"])
        out = {
            "parallelism": row["parallelism"],
            "method": row["method"],
            "target": f"{months} month{'s' if months > 1 else ''} ({two_digits(row['target_days'])} d)",
        }
        for column, source in _GRADED.items():
            text = str(printed[column])
            value = row.get(source)
            out[f"{column} (paper)"] = text
            out[f"{column} (reproduced)"] = _shown(column, value, text)
            out[f"{column} agrees"] = bool(value is not None and not pd.isna(value)
                                           and parse_printed(text).agrees(float(value)))
            out.update(echoed(column, column in DECODING_INPUTS))
        out["configuration (decoded)"] = row["decoded_configuration"]
        # candidates -> offloading only when needed -> with the printed memory: how the last was chosen
        out["decoding"] = (f"{row['decoded_candidates']} → {row['decoded_offload_ok']} → {row['decoded_memory_ok']}: "
                           f"{row['decoded_rule']}")
        found = not pd.isna(row.get("search_n_gpu"))
        out["search pick"] = (f"{int(row['search_n_gpu'])} GPUs, {row['search_time_days']:.1f} d" if found
                              else row.get("search_binding", ""))
        out["search cells agreeing"] = f"{_search_cells(printed, row)} of {len(_GRADED)}"
        out["search n_gpu verdict"] = _search_n_gpu_verdict(printed["n_gpu"], row)[0]
        rows.append(out)
    return pd.DataFrame(rows)


#: The column of :func:`search_comparison` meant to read under its row (``show_table(..., notes=SEARCH_NOTES)``).
SEARCH_NOTES = "search's configuration"


def search_comparison(reproduced: pd.DataFrame) -> pd.DataFrame:
    """The search's pick for each row graded cell by cell (for the page): the search's value, ✓/✗, the printed one in
    brackets, under the printed table's headings; then, in :data:`SEARCH_NOTES`, its configuration and the verdict on its
    GPU count with the reason (long text, shown under the row so that the graded cells stay side by side)."""
    paper = paper_table(LABEL)
    rows = []
    for printed, (_, row) in zip(paper.to_dict(orient="records"), reproduced.iterrows()):
        target = f"{two_digits(row['target_days'])} d"
        out = {"parallelism": row["parallelism"], "method": row["method"],
               "target": target if row["target_reached"] else f"{target}, not reached"}
        for column, source in _GRADED.items():
            text = str(printed[column])
            value = row.get(f"search_{source}")
            shown = _shown(column, value, text)
            ok = value is not None and not pd.isna(value) and parse_printed(text).agrees(float(value))
            out[column] = f"{shown} {'✓' if ok else '✗'} ({text})"
        note = []
        if not pd.isna(row.get("search_n_gpu")):
            note.append(f"n_b={int(row['search_n_b'])} n_l={int(row['search_n_l'])} n_a={int(row['search_n_a'])} "
                        f"n_mu={int(row['search_n_mu'])} b_mu={int(row['search_b_mu'])}"
                        + (" offload" if row["search_offload"] else ""))
        verdict, why = _search_n_gpu_verdict(printed["n_gpu"], row)
        note.append(f"GPU count {verdict}" + (f": {why}" if why else ""))
        out[SEARCH_NOTES] = "; ".join(note)
        rows.append(out)
    return pd.DataFrame(rows)


ARTIFACT = Artifact(
    label=LABEL,
    title="Example configurations for training X160 in one or six months",
    kind="table",
    build=build,
    compare=compare,
    page="trillion_parameter",
    description="Each printed row decoded from its own cells and evaluated; the search's cheapest configuration for "
                "the same target beside it, graded separately.",
)
