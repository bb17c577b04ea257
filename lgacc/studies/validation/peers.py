"""Side by side with the peer tools: per run, the measurement, lgacc's calibrated prediction fitted without the
run's publication, and each peer's own prediction of the same run; mean and worst error per tool on the same runs.

A peer's prediction is data, kept in the run file (``peers``) with where it comes from: SimuMax's column
of its B200 release table (published beside the measurement), Calculon's ``total_time`` for Korthikanti et al.'s
Table 5 (computed by running Calculon on its own encodings of the runs, see the run file's header).  A peer's
column is as its authors report it: SimuMax and Calculon were set up with those runs in view (in-sample), while
lgacc's column is leave one publication out (held out): the comparison favours the peers.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .markdown import markdown_table

__all__ = ["PEERS", "side_by_side", "tool_errors", "side_by_side_markdown", "side_by_side_tables"]

#: peer -> the frame's column of its step-time prediction (:data:`.tables.PEER_COLUMNS`)
PEERS = {"SimuMax": "peer_simumax_step_s", "Calculon": "peer_calculon_step_s"}
LGACC = "lgacc calibrated (held out)"


def _peer_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The dense bf16 time runs a peer predicts (the MoE and FP8 ones: :func:`.tables.extension_errors`)."""
    if "extended" in frame.columns:
        frame = frame[~frame["extended"].astype(bool)]
    timed = frame[frame["uses"].str.contains("time")]
    present = np.zeros(len(timed), dtype=bool)
    for column in PEERS.values():
        if column in timed:
            present |= timed[column].notna().to_numpy()
    return timed[present]


def side_by_side(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per timed run that a peer predicts: ``id``, ``publication``, ``measured_s``, ``lgacc_s`` (the
    calibrated prediction fitted without the run's publication) and its signed error, and per peer ``<peer>_s``
    and its signed error (NaN where the peer has no prediction)."""
    rows = _peer_rows(frame)
    out = pd.DataFrame({"id": rows["id"].to_numpy(), "publication": rows["publication"].to_numpy(),
                        "measured_s": rows["measured_step_s"].to_numpy(), "lgacc_s": rows["expected_lopo_s"].to_numpy()})
    out["lgacc_error"] = out["lgacc_s"] / out["measured_s"] - 1
    for peer, column in PEERS.items():
        values = rows[column].to_numpy() if column in rows else np.full(len(rows), math.nan)
        out[f"{peer}_s"] = values
        out[f"{peer}_error"] = values / out["measured_s"] - 1
    return out


def tool_errors(frame: pd.DataFrame) -> pd.DataFrame:
    """Per peer, on the runs that peer predicts: the runs, the peer's mean and worst absolute error, and lgacc's (held
    out) on the same runs."""
    table = side_by_side(frame)
    rows = []
    for peer in PEERS:
        same = table[table[f"{peer}_s"].notna()]
        if not len(same):
            continue
        peer_abs, lgacc_abs = same[f"{peer}_error"].abs(), same["lgacc_error"].abs()
        rows.append({"tool": peer, "runs": int(len(same)), "publications": int(same["publication"].nunique()),
                     "peer_mean_error": float(peer_abs.mean()), "peer_max_error": float(peer_abs.max()),
                     "lgacc_mean_error": float(lgacc_abs.mean()), "lgacc_max_error": float(lgacc_abs.max())})
    return pd.DataFrame(rows, columns=["tool", "runs", "publications", "peer_mean_error", "peer_max_error",
                                       "lgacc_mean_error", "lgacc_max_error"])


def _cell(seconds: float, error: float) -> str:
    return "–" if not math.isfinite(seconds) else f"{seconds:.3g} ({error:+.0%})"


def side_by_side_markdown(frame: pd.DataFrame) -> str:
    """The chapter's side-by-side as Markdown: the per-tool summary, then one row per run (seconds and signed
    error); the cells of :func:`side_by_side_tables`."""
    summary, runs = side_by_side_tables(frame)
    return "\n".join([*markdown_table(summary), "", *markdown_table(runs, code=("run",))])


def side_by_side_tables(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`side_by_side_markdown`'s two tables as text cells under readers' headings, for
    :func:`lgacc.book.notebook.show_table` (which stacks their rows on a phone, where a run's id in a narrow column
    broke letter by letter): the per-tool summary, then one row per run."""
    errors = tool_errors(frame)
    summary = pd.DataFrame({"tool": errors["tool"].astype(str), "runs": errors["runs"].astype(str),
                            "its mean error": [f"{v:.1%}" for v in errors["peer_mean_error"]],
                            "its worst": [f"{v:.1%}" for v in errors["peer_max_error"]],
                            "lgacc held out, mean": [f"{v:.1%}" for v in errors["lgacc_mean_error"]],
                            "lgacc held out, worst": [f"{v:.1%}" for v in errors["lgacc_max_error"]]})
    table = side_by_side(frame)
    def cell(seconds: float, error: float) -> str:  # a time and its error on one line
        return _cell(seconds, error).replace(" (", "\u00a0(")

    runs = pd.DataFrame({"run": table["id"].astype(str),
                         "measured (s)": [f"{v:.3g}" for v in table["measured_s"]],
                         "lgacc, held out": [cell(s, e) for s, e in zip(table["lgacc_s"], table["lgacc_error"])]})
    for peer in PEERS:
        runs[peer] = [cell(s, e) for s, e in zip(table[f"{peer}_s"], table[f"{peer}_error"])]
    return summary, runs
