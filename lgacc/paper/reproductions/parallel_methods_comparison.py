"""``table:parallel_methods_comparison``: the fastest configuration of X_160 per method, found by search.

Each row is a question, (parallelism, method), answered by :func:`lgacc.search.fastest`
with the paper's rules; no configuration is typed in.  The same rows give
``table:parallel_methods_memory`` (:mod:`.parallel_methods_memory`).
"""

from __future__ import annotations

import pandas as pd

from lgacc.model.assumptions import DEFAULT_ASSUMPTIONS, Assumptions, paper_gb_bytes
from lgacc.model.hardware import GIB, Hardware
from lgacc.model.transformer import TRILLION_X, x_model
from lgacc.search import Parallelism, fastest
from lgacc.units import DAYS_PER_YEAR

from ..artifacts import Artifact
from ..printed import format_like, paper_table, parse_printed

LABEL = "table:parallel_methods_comparison"

#: The model of sec:trillion_parameter, X_160 (1.26 T parameters).
MODEL_X = TRILLION_X

#: The table's rows: (parallelism, method) as the paper spells them.  Questions, not answers.
ROWS: tuple[tuple[str, str], ...] = (
    ("None", "Baseline"),
    ("Data", "Baseline"),
    ("Data", "Partitioned"),
    ("Data + pipe", "Baseline"),
    ("Data + pipe", "Improved"),
    ("Data + tensor", "Baseline"),
    ("Data + tensor", "Partitioned"),
    ("3d", "Baseline"),
    ("3d", "Improved"),
)

CONFIG_COLUMNS = ("offload", "b", "b_mu", "n_mu", "n_gpu", "n_b", "n_l", "n_a", "efficiency", "time_days")
MEMORY_COLUMNS = ("state", "checkpoint", "buffers", "activations", "offloadable", "non_offloadable")


def result_row(parallelism: str, method: str, result, assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> dict:
    """One row of the reproduced tables from a :class:`lgacc.search.SearchResult` (memory in the
    paper's GB: GiB, or 10^9 bytes under ``gb="GB"``)."""
    row = {"parallelism": parallelism, "method": method}
    if not result.feasible:
        row.update({key: None for key in CONFIG_COLUMNS + MEMORY_COLUMNS})
        row["binding"] = "; ".join(result.binding)
        return row
    c, e = result.config, result.evaluation
    row.update(
        offload=c.offload, b=e.b, b_mu=c.b_mu, n_mu=c.n_mu, n_gpu=e.n_gpu, n_b=c.n_b, n_l=c.n_l, n_a=c.n_a,
        efficiency=e.efficiency, time_days=e.time_days,
    )
    row.update(e.memory.in_gib())
    scale = GIB / paper_gb_bytes(assumptions)
    row.update({key: row[key] * scale for key in MEMORY_COLUMNS})
    row["binding"] = "; ".join(result.binding)
    return row


def build(hardware: Hardware, rows: tuple[tuple[str, str], ...] = ROWS, x: int = MODEL_X,
          assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> pd.DataFrame:
    """The fastest configuration for each (parallelism, method), its efficiency, time and memory (GiB),
    under ``assumptions`` (the paper's by default)."""
    model = x_model(x)
    out = []
    for parallelism, method in rows:
        result = fastest(model, hardware, method.lower(), Parallelism(parallelism), assumptions=assumptions)
        out.append(result_row(parallelism, method, result, assumptions))
    return pd.DataFrame(out)


def infeasible_markdown(searched: pd.DataFrame, spec_name: str, x: int = MODEL_X) -> str:
    """The rows with no feasible configuration, grouped by the rule that removed their last candidates (the
    search's own reason, not a guess: memory is not always what binds); empty when every row is feasible."""
    rows = searched[searched["n_b"].isna()]
    if rows.empty:
        return ""
    by_rule: dict[str, list[str]] = {}
    for row in rows.itertuples():
        rule = str(row.binding).split(" (e.g.", 1)[0].strip() or "no rule reported"
        by_rule.setdefault(rule, []).append(f"{row.parallelism} / {row.method}")
    parts = [f"{', '.join(names)} (the rule that removes the last candidates: *{rule}*)" for rule, names in by_rule.items()]
    return (f"On **{spec_name}**, no configuration of X<sub>{x}</sub> is feasible for " + "; ".join(parts)
            + ": those rows show — instead of a value, and their cells differ from the paper's.")


def two_digits(value: float) -> str:
    """``value`` to two significant digits in plain notation, as the paper prints times (630, 1.3, 6.8)."""
    return f"{float(f'{value:.2g}'):g}"


def _printed_offload(text: str) -> bool:
    return str(text).strip().lower() in ("yes", "true", "✓")


def compare_columns(reproduced: pd.DataFrame, label: str, columns: dict[str, str]) -> pd.DataFrame:
    """Printed beside reproduced for ``columns`` (printed name -> reproduced column), one flag per cell.

    Times are compared to the paper's two significant digits; the offload mark exactly.
    """
    paper = paper_table(label)
    rows = []
    for printed, (_, row) in zip(paper.to_dict(orient="records"), reproduced.iterrows()):
        if (printed["parallelism"], printed["method"]) != (row["parallelism"], row["method"]):
            raise ValueError(f"{label}: row order differs: {printed['parallelism']}/{printed['method']}")
        out = {"parallelism": row["parallelism"], "method": row["method"]}
        for column, source in columns.items():
            value = row[source]
            text = printed[column]
            out[f"{column} (paper)"] = text
            if value is None or (isinstance(value, float) and pd.isna(value)):
                out[f"{column} (reproduced)"] = "—"
                out[f"{column} agrees"] = False
                continue
            if column == "offload":
                out[f"{column} (reproduced)"] = "yes" if value else "no"
                out[f"{column} agrees"] = bool(value) == _printed_offload(text)
                continue
            significant = 2 if column == "time" else None
            shown = parse_printed(text, significant=significant)
            if column == "time":
                unit = DAYS_PER_YEAR if str(text).strip().endswith("y") else 1.0
                out[f"{column} (reproduced)"] = two_digits(value / unit) + (" y" if unit > 1 else " d")
            else:
                out[f"{column} (reproduced)"] = format_like(float(value), text)
            out[f"{column} agrees"] = bool(shown.agrees(float(value)))
        rows.append(out)
    return pd.DataFrame(rows)


def compare(reproduced: pd.DataFrame) -> pd.DataFrame:
    """The paper's configuration cells beside the searched ones."""
    columns = {c: c for c in ("offload", "b", "b_mu", "n_mu", "n_gpu", "n_b", "n_l", "n_a", "efficiency")}
    columns["time"] = "time_days"
    return compare_columns(reproduced, LABEL, columns)


ARTIFACT = Artifact(
    label=LABEL,
    title="Fastest training configuration for X160, per method",
    kind="table",
    build=build,
    compare=compare,
    page="trillion_parameter",
    description="The fastest configuration of the 1.26 T-parameter X160 under the paper's rules, found by search.",
)
