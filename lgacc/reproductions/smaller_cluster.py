"""``table:smaller_cluster``: the fewest GPUs that train X_160 within a target time, found by search.

The paper gives "example configurations with high efficiency for the target
training times of one and six months"; its rows take 31 to 32 days for "one month"
and 180 to 199 days for "six months".  Each row is therefore answered for the
time that row itself achieves: its configuration (as inferred from the printed
``b, n_a, n_gpu`` by :func:`lgacc.reproductions.parallel_methods_check.smaller_cluster_rows`)
is evaluated, and :func:`lgacc.search.cheapest` looks for the fewest GPUs reaching
that time with the same method and parallelism.  A row is met when the search
needs no more GPUs than the paper and reaches the time.  The search's answer for
the calendar targets (one month = 365.25/12 days, six months = 365.25/2 days) is
shown too, without a verdict: the paper's own rows do not all meet them.
"""

from __future__ import annotations

import pandas as pd

from ..artifacts import Artifact
from ..evaluate import evaluate
from ..hardware import Hardware
from ..models import x_model
from ..paper import format_like, paper_table
from ..search import Parallelism, cheapest
from .parallel_methods_comparison import MODEL_X, two_digits
from .parallel_methods_check import smaller_cluster_rows

LABEL = "table:smaller_cluster"
MONTH_DAYS = 365.25 / 12


def build(hardware: Hardware, x: int = MODEL_X) -> pd.DataFrame:
    """Per printed row: the paper's configuration evaluated, and the cheapest searched configuration."""
    model = x_model(x)
    out = []
    for row in smaller_cluster_rows():
        paper = evaluate(model, hardware, row.config)
        months = 1 if paper.time_days < 3 * MONTH_DAYS else 6
        target = paper.time_days
        found = cheapest(model, hardware, row.method.lower(), Parallelism(row.parallelism), target)
        calendar = cheapest(model, hardware, row.method.lower(), Parallelism(row.parallelism), months * MONTH_DAYS, explain=False)
        record = {
            "parallelism": row.parallelism,
            "method": row.method,
            "months": months,
            "target_days": target,
            "paper_n_gpu": paper.n_gpu,
            "paper_b": paper.b,
            "paper_efficiency": paper.efficiency,
            "paper_time_days": paper.time_days,
            "paper_config": f"n_b={row.config.n_b} n_l={row.config.n_l} n_a={row.config.n_a} n_mu={row.config.n_mu} b_mu={row.config.b_mu}"
            + (" offload" if row.config.offload else ""),
        }
        if found.feasible:
            c, e = found.config, found.evaluation
            memory = e.memory.in_gib()
            record.update(
                offload=c.offload, b=e.b, b_mu=c.b_mu, n_mu=c.n_mu, n_gpu=e.n_gpu, n_b=c.n_b, n_l=c.n_l, n_a=c.n_a,
                efficiency=e.efficiency, time_days=e.time_days, **memory,
            )
        else:
            record["binding"] = "; ".join(found.binding)
        record["calendar_target_days"] = months * MONTH_DAYS
        record["calendar_n_gpu"] = calendar.evaluation.n_gpu if calendar.feasible else None
        record["calendar_time_days"] = calendar.evaluation.time_days if calendar.feasible else None
        out.append(record)
    return pd.DataFrame(out)


def compare(reproduced: pd.DataFrame) -> pd.DataFrame:
    """Per row: met when the search uses no more GPUs than the paper and trains within the row's time."""
    paper = paper_table(LABEL)
    rows = []
    for printed, (_, row) in zip(paper.to_dict(orient="records"), reproduced.iterrows()):
        if (printed["parallelism"], printed["method"]) != (row["parallelism"], row["method"]):
            raise ValueError(f"{LABEL}: row order differs at {printed['parallelism']}/{printed['method']}")
        found = not pd.isna(row.get("n_gpu"))
        rows.append({
            "parallelism": row["parallelism"],
            "method": row["method"],
            "target": f"{row['months']} month{'s' if row['months'] > 1 else ''} (row's time {two_digits(row['target_days'])} d)",
            "n_gpu (paper)": printed["n_gpu"],
            "n_gpu (reproduced)": str(int(row["n_gpu"])) if found else "—",
            "n_gpu agrees": bool(found and row["n_gpu"] <= int(printed["n_gpu"])),
            "time (paper)": printed["time"],
            "time (reproduced)": (two_digits(row["time_days"]) + " d") if found else "—",
            "time agrees": bool(found and row["time_days"] <= row["target_days"] * (1 + 1e-12)),
            "b (paper)": printed["b"],
            "b (reproduced)": str(int(row["b"])) if found else "—",
            "n_a (paper)": printed["n_a"],
            "n_a (reproduced)": str(int(row["n_a"])) if found else "—",
            "efficiency (paper)": printed["efficiency"],
            "efficiency (reproduced)": format_like(row["efficiency"], printed["efficiency"]) if found else "—",
            "configuration (reproduced)": (
                f"n_b={int(row['n_b'])} n_l={int(row['n_l'])} n_mu={int(row['n_mu'])} b_mu={int(row['b_mu'])}"
                + (" offload" if row["offload"] else "")
            ) if found else row.get("binding", ""),
        })
    return pd.DataFrame(rows)


ARTIFACT = Artifact(
    label=LABEL,
    title="Fewest GPUs to train X160 in one or six months",
    kind="table",
    build=build,
    compare=compare,
    page="trillion_parameter",
    description="The cheapest configuration meeting each printed row's training time, beside the paper's row.",
)
