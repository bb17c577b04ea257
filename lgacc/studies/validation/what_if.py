"""What the calibrated model's borrowed InfiniBand efficiency moves: the held-out errors with InfiniBand at the share
of the card NCCL's developers state a ring reaches.

The model's collectives over InfiniBand achieve ``eta`` of the card's bandwidth, the share fitted to the NVLink 3
all-reduce table (:mod:`lgacc.model.calibrated.links`; no published inter-node table by message size was found).
NCCL's developers state what a ring reaches per card (``data/calibrated/nccl_infiniband_statements.yaml``).  This
module sets ``eta`` to the median of their stated shares, refits ``kappa`` and ``xi`` and leaves each publication out
again, so that the measured-runs page can show which sources move and by how much.  A what-if only: the calibrated
model keeps its reading, and every number here is computed by the same fit and prediction as ``lgacc validate``'s.
"""

from __future__ import annotations

import datetime
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from lgacc.errors import UserInputError
from lgacc.model.calibrated.parameters import Calibration, link_priors
from lgacc.paths import DATA
from lgacc.yamlfile import load_yaml_mapping

from . import calibrated as cal
from .measured import measured_step_time
from .runs import Run

__all__ = ["STATEMENTS_FILE", "Statement", "load_statements", "stated_share", "held_out_errors", "infiniband_what_if",
           "infiniband_table", "infiniband_paragraph"]

STATEMENTS_FILE = DATA / "calibrated" / "nccl_infiniband_statements.yaml"


@dataclass(frozen=True)
class Statement:
    """One stated ring bandwidth per card: ``low`` to ``high`` bytes/s on a link of ``link_bytes_per_s`` per
    direction."""

    source: str
    who: str
    date: str
    link: str
    link_bytes_per_s: float
    low_bytes_per_s: float
    high_bytes_per_s: float

    @property
    def share(self) -> float:
        """The middle of the stated range over the link's bandwidth."""
        return (self.low_bytes_per_s + self.high_bytes_per_s) / 2 / self.link_bytes_per_s


def _number(value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise UserInputError(f"{what}={value!r} must be a positive number of GB/s")
    return float(value)


def load_statements(path: Path = STATEMENTS_FILE) -> tuple[Statement, ...]:
    """The statements of ``path``, each checked: a positive link rate and a stated range inside it."""
    data = load_yaml_mapping(path, "NCCL InfiniBand statements file")
    rows = data.get("statements")
    if not isinstance(rows, list) or not rows:
        raise UserInputError(f"NCCL InfiniBand statements file {str(path)!r}: 'statements' must be a non-empty list")
    out = []
    for i, row in enumerate(rows):
        where = f"{str(path)!r} statement {i + 1}"
        if not isinstance(row, dict):
            raise UserInputError(f"{where}: must be a mapping")
        missing = [key for key in ("source", "who", "date", "link", "link_gb_per_s", "stated_gb_per_s") if key not in row]
        if missing:
            raise UserInputError(f"{where}: missing {', '.join(missing)}")
        link = _number(row["link_gb_per_s"], f"{where} link_gb_per_s")
        stated = row["stated_gb_per_s"]
        if not isinstance(stated, list) or len(stated) != 2:
            raise UserInputError(f"{where}: stated_gb_per_s must be [low, high]")
        low, high = (_number(value, f"{where} stated_gb_per_s") for value in stated)
        if not low <= high <= link:
            raise UserInputError(f"{where}: stated_gb_per_s {stated!r} must rise and stay within the link's {link:g}")
        date = row["date"]
        date = date.isoformat() if isinstance(date, datetime.date) else str(date)
        out.append(Statement(str(row["source"]), str(row["who"]), date, str(row["link"]), link * 1e9, low * 1e9,
                             high * 1e9))
    return tuple(out)


def stated_share(statements: Sequence[Statement]) -> float:
    """The median of the statements' shares of their links, to two decimals (the statements' own precision)."""
    return round(statistics.median(statement.share for statement in statements), 2)


def held_out_errors(runs: Sequence[Run], base: Calibration | None = None) -> tuple[Calibration, pd.DataFrame]:
    """The calibration fitted on every dense bf16 run with ``base``'s fixed constants, and per dense bf16 time run
    the step predicted leaving its publication out (``publication``, ``id``, ``ratio`` of predicted to measured)."""
    timed = cal.time_runs(runs)
    rows = []
    for publication, (_, step) in cal.leave_one_publication_out(runs, base).items():
        held = [run for run in timed if run.publication == publication]
        for run, value in zip(held, step):
            if not run.extended:
                rows.append({"publication": publication, "id": run.id, "ratio": float(value) / measured_step_time(run)})
    return cal.fit(cal.fit_runs(runs), base=base), pd.DataFrame(rows)


def _by_publication(errors: pd.DataFrame) -> pd.DataFrame:
    error = (errors["ratio"] - 1).abs()
    grouped = errors.assign(error=error, signed=errors["ratio"] - 1).groupby("publication", sort=False)
    return pd.DataFrame({"runs": grouped.size(), "mean_error": grouped["error"].mean(),
                         "max_error": grouped["error"].max(), "mean_signed": grouped["signed"].mean()})


def infiniband_what_if(runs: Sequence[Run], statements: Sequence[Statement] | None = None) -> dict:
    """The held-out errors as the model reads InfiniBand (``eta`` of the NVLink 3 table) and at the statements'
    median share: ``eta`` (both), ``kappa`` and ``xi`` refitted on all runs (both), ``mean_error`` and ``max_error``
    over the dense bf16 time runs (both), and ``by_publication``: one row per source with both readings' mean, worst
    and signed mean errors."""
    statements = load_statements() if statements is None else statements
    share = stated_share(statements)
    base = link_priors()
    model_fit, model_errors = held_out_errors(runs)
    stated_fit, stated_errors = held_out_errors(runs, base.replace(eta=share))
    both = _by_publication(model_errors).merge(_by_publication(stated_errors).drop(columns="runs"),
                                               left_index=True, right_index=True, suffixes=("", "_stated"))
    both = both.reset_index()
    out = {"statements": len(statements), "eta": {"model": base.eta, "stated": share}}
    for name, fitted, errors in (("model", model_fit, model_errors), ("stated", stated_fit, stated_errors)):
        error = np.abs(errors["ratio"].to_numpy() - 1)
        out[name] = {"kappa": fitted.kappa, "xi": fitted.xi, "runs": int(error.size),
                     "mean_error": float(error.mean()), "max_error": float(error.max())}
    out["by_publication"] = both
    out["runs"] = model_errors.merge(stated_errors, on=["publication", "id"], suffixes=("_model", "_stated"))
    return out


def infiniband_table(what_if: dict) -> pd.DataFrame:
    """The page's table: per source, its runs and the held-out mean and worst errors under each reading of
    InfiniBand, as text cells for :func:`lgacc.book.notebook.show_table` (which stacks its rows on a phone); a
    mean and its worst stay on one line."""
    rows = what_if["by_publication"]
    eta = what_if["eta"]
    return pd.DataFrame({
        "source": rows["publication"].astype(str),
        "runs": rows["runs"].astype(str),
        f"η {eta['model']:.2f}: mean / worst": [f"{m:.1%}\u00a0/\u00a0{w:.1%}" for m, w in
                                                zip(rows["mean_error"], rows["max_error"])],
        f"η {eta['stated']:.2f}: mean / worst": [f"{m:.1%}\u00a0/\u00a0{w:.1%}" for m, w in
                                                 zip(rows["mean_error_stated"], rows["max_error_stated"])],
        f"η {eta['stated']:.2f}: signed mean": [f"{v:+.1%}" for v in rows["mean_signed_stated"]],
    })


def _change(row) -> str:
    return f"{row['publication']} ({row['mean_error']:.1%} → {row['mean_error_stated']:.1%})"


def infiniband_paragraph(what_if: dict, statements: Sequence[Statement]) -> str:
    """What the table shows, computed: the two readings, the refit, the headline under each, the sources that gain
    and lose most, and the run whose prediction moves most."""
    eta, model, stated = what_if["eta"], what_if["model"], what_if["stated"]
    rows = what_if["by_publication"].assign(delta=lambda f: f["mean_error_stated"] - f["mean_error"])
    gain = rows[rows["delta"] < 0].nsmallest(2, "delta")
    lose = rows[rows["delta"] > 0].nlargest(2, "delta")
    moved = what_if["runs"].assign(move=lambda f: f["ratio_stated"] - f["ratio_model"]).nsmallest(1, "move").iloc[0]
    by_link: dict[tuple[str, float], list[str]] = {}
    for statement in statements:
        low, high = statement.low_bytes_per_s / 1e9, statement.high_bytes_per_s / 1e9
        by_link.setdefault((statement.link, statement.link_bytes_per_s), []).append(
            f"{low:g}" if low == high else f"{low:g}–{high:g}")
    shares = [f"{' and '.join(ranges)} GB/s of the {rate / 1e9:g} an {link} card carries each way"
              for (link, rate), ranges in by_link.items()]
    text = (f"The model reads a collective over InfiniBand at $\\eta$ = {eta['model']:.3g} of the card's bandwidth, the "
            f"share it fits to the NVLink 3 all-reduce table, for want of a published table across nodes. NCCL's "
            f"developers state what a ring reaches per card: {'; '.join(shares)} (the median share, "
            f"{eta['stated']:.2f}). Read at {eta['stated']:.2f}, with the two fitted parameters refitted ($\\kappa$ "
            f"{model['kappa']:.3g} → {stated['kappa']:.3g}, $\\xi$ {model['xi']:.3g} → {stated['xi']:.3g}), the held-out "
            f"mean moves from **{model['mean_error']:.2%} to {stated['mean_error']:.2%}** (worst "
            f"{model['max_error']:.1%} → {stated['max_error']:.1%}) over {model['runs']} runs.")
    if len(gain):
        text += f" Gaining most: {', '.join(_change(row) for _, row in gain.iterrows())}."
    if len(lose):
        text += f" Losing most: {', '.join(_change(row) for _, row in lose.iterrows())}."
    text += (f" The run that moves most is `{moved['id']}` ({moved['ratio_model'] - 1:+.1%} → "
             f"{moved['ratio_stated'] - 1:+.1%} of its measured step). ")
    verdict = ("does not predict these runs better" if stated["mean_error"] >= model["mean_error"] else
               "predicts these runs better on the whole, but not every source")
    text += (f"The model keeps the table's $\\eta$: the stated share {verdict}, and what a training step's "
             f"collectives reach across nodes is a measurement still to make.")
    return text
