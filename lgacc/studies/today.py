"""The paper's trillion-parameter comparison on today's GPUs.

For each hardware spec, the fastest configuration of each method (baseline,
partitioned, improved) with 3d parallelism for a model (X_160 by default), and
the paper's conclusions re-tested on that hardware.  Nothing here is specific
to one GPU: the specs in ``data/hardware/`` supply every number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

import pandas as pd

from lgacc.cache.results import cached
from lgacc.model.config import Method
from lgacc.model.hardware import GIB, Hardware, load_hardware
from lgacc.model.transformer import Transformer, named_model
from lgacc.search import fastest

TODAYS_HARDWARE = ("a100-80gb", "h100-sxm", "h200-sxm", "b200", "gb200-nvl72")
METHODS = (Method.BASELINE, Method.PARTITIONED, Method.IMPROVED)

#: The paper's headline conclusions, each graded by its printed claim's own rule (``data/paper/claims.yaml``,
#: :mod:`lgacc.paper.claims`): the same rule as the claims page, so that on the paper's hardware this page
#: gives each claim the claims page's verdict (read from :func:`lgacc.paper.claims.verdict_of`).
CLAIM_OF = {
    "halving": "improved_halves_min_time",  # "cut the shortest training time by half": rounds to 2.0
    "twice": "improved_speedup_over_baseline",  # "at least twice as fast": rounds to 2.0 or more
    "memory": "improved_memory_tiny_fraction",  # "a tiny fraction of the available GPU memory": below a tenth
    "week": "improved_min_time_1t",  # "to one week for a trillion-parameter model": one week or less
}
#: "one week" on faster hardware: the conclusion holds where the time rounds to a week or is shorter.
ONE_WEEK_OR_LESS = ("week",)


def fastest_by_method(model: Transformer | str, hardware: Hardware | str) -> pd.DataFrame:
    """One row per method: the fastest 3d configuration on ``hardware`` and what it costs."""
    model = named_model(model) if isinstance(model, str) else model
    spec = load_hardware(hardware)
    # kept on disk per (model, spec): every build of the book compares the same shipped GPUs
    return cached("fastest_by_method", (model, spec), lambda: _fastest_by_method(model, spec))


def _fastest_by_method(model: Transformer, spec: Hardware) -> pd.DataFrame:
    rows = []
    for method in METHODS:
        result = fastest(model, spec, method, "3d", explain=False)
        evaluation = result.evaluation
        row = {"hardware": spec.name, "method": method.value, "feasible": evaluation is not None}
        if evaluation is None:  # the rule that removed the last candidates, in words
            row["reason"] = "; ".join(result.binding).split(" (e.g.", 1)[0]
        else:
            config = result.config
            row.update(
                n_gpu=evaluation.n_gpu,
                n_b=config.n_b,
                n_l=config.n_l,
                n_a=config.n_a,
                n_mu=config.n_mu,
                b_mu=config.b_mu,
                offload=config.offload,
                efficiency=evaluation.efficiency,
                time_days=evaluation.time_days,
                memory_gib=evaluation.memory.total / GIB,
                memory_fraction=evaluation.memory.total / spec.memory_bytes,
            )
        rows.append(row)
    return pd.DataFrame(rows)


def compare_hardware(model: Transformer | str = "X160", hardware: Iterable[str] = TODAYS_HARDWARE) -> pd.DataFrame:
    """:func:`fastest_by_method` for every spec, stacked."""
    return pd.concat([fastest_by_method(model, name) for name in hardware], ignore_index=True)


@dataclass(frozen=True)
class Conclusion:
    hardware: str
    claim: str
    measure: str
    holds: bool
    #: the printed claim it is graded as (``data/paper/claims.yaml``), and its verdict on the paper's hardware
    claim_id: str = ""
    claim_verdict: str = ""


#: The conclusions in the order the page lists them, with the words each is graded on.
CLAIMS = {
    "fastest": "layered accumulation + modular pipeline is the fastest method",
    "halving": "they cut the shortest training time by half (speed-up rounds to 2.0: 1.95 to 2.05)",
    "twice": "at least twice as fast as the baseline (speed-up rounds to 2.0 or more: ≥ 1.95)",
    "memory": "memory use is a tiny fraction of the GPU's (below 10 %)",
    "week": "a trillion-parameter model trains in one week or less (rounds to 7 d or is shorter: < 7.5 d)",
}


def _graded(key: str, value: float) -> bool:
    """Whether ``value`` passes the claim behind conclusion ``key`` by that claim's own rule (and for "one week",
    a shorter time too: on faster hardware the week is an upper bound)."""
    from lgacc.paper.claims import printed_claims

    claim = next(c for c in printed_claims() if c.id == CLAIM_OF[key])
    return bool(claim.agrees(value) or (key in ONE_WEEK_OR_LESS and value <= claim.paper))


def conclusions(comparison: pd.DataFrame) -> pd.DataFrame:
    """The paper's headline conclusions, re-tested on each spec of ``comparison``.

    Each is graded by its printed claim's rule (:data:`CLAIM_OF`): the speed-up against the baseline, the
    method the paper compares with ("at least twice as fast as previous methods"), as the claims page does.
    On the paper's hardware the claims page's verdict is the one shown (``claim_verdict``); it is computed
    by the same rule on the same numbers, and a test checks the two agree.
    """
    from lgacc.paper import PAPER_HARDWARE
    from lgacc.paper.claims import confirms, verdict_of

    paper_spec = load_hardware(PAPER_HARDWARE)
    out: list[Conclusion] = []
    for name, rows in comparison.groupby("hardware", sort=False):
        by_method = rows.set_index("method")
        feasible = by_method[by_method["feasible"]]
        if Method.IMPROVED.value not in feasible.index:
            words = _no_feasible(by_method, [Method.IMPROVED.value])
            out.extend(Conclusion(name, claim, words, False) for claim in CLAIMS.values())
            continue
        improved = feasible.loc[Method.IMPROVED.value]
        others = feasible.drop(index=Method.IMPROVED.value)
        best_other = others["time_days"].min() if len(others) else float("inf")
        baseline = feasible["time_days"].get(Method.BASELINE.value, float("inf"))
        if len(others):
            fastest_measure = f"{improved['time_days']:.3g} d vs {best_other:.3g} d"
        else:  # the other methods cannot train it at all: said in words, never "inf d"
            fastest_measure = f"{improved['time_days']:.3g} d; " + _no_feasible(
                by_method, [m for m in by_method.index if m != Method.IMPROVED.value])
        found = [Conclusion(name, CLAIMS["fastest"], fastest_measure, bool(best_other / improved["time_days"] > 1))]
        if math.isfinite(baseline):
            speedup = baseline / improved["time_days"]
            found += [
                Conclusion(name, CLAIMS["halving"], f"{speedup:.2f}×", _graded("halving", speedup), CLAIM_OF["halving"]),
                Conclusion(name, CLAIMS["twice"], f"{speedup:.2f}×", _graded("twice", speedup), CLAIM_OF["twice"]),
            ]
        else:  # no baseline to compare with: no speed-up to measure
            alone = _no_feasible(by_method, [Method.BASELINE.value])
            found += [Conclusion(name, CLAIMS[key], f"no speed-up to measure: {alone}", False, CLAIM_OF[key])
                      for key in ("halving", "twice")]
        found += [
            Conclusion(name, CLAIMS["memory"], f"{improved['memory_gib']:.3g} GiB, {improved['memory_fraction']:.1%}",
                       _graded("memory", improved["memory_fraction"]), CLAIM_OF["memory"]),
            Conclusion(name, CLAIMS["week"], f"{improved['time_days']:.3g} d on {int(improved['n_gpu']):,} GPUs",
                       _graded("week", improved["time_days"]), CLAIM_OF["week"]),
        ]
        if _spec_of(rows) == paper_spec:  # the claims page's verdict, read from the one place it is given
            found = [c if not c.claim_id else Conclusion(
                c.hardware, c.claim, c.measure, confirms(verdict_of(c.claim_id, PAPER_HARDWARE)), c.claim_id,
                verdict_of(c.claim_id, PAPER_HARDWARE)) for c in found]
        out += found
    return pd.DataFrame([c.__dict__ for c in out])


def _no_feasible(by_method: pd.DataFrame, methods: list[str]) -> str:
    """``baseline, partitioned: no feasible configuration (rule: memory)``, each method with the rule that
    removed its last candidates (the search's reason) when the frame has it."""
    reasons: dict[str, list[str]] = {}
    for method in methods:
        reason = by_method.loc[method].get("reason") if "reason" in by_method.columns else None
        rule = reason.split(":", 1)[0] if isinstance(reason, str) and reason else "no rule reported"
        reasons.setdefault(rule, []).append(method)
    return "; ".join(f"{', '.join(names)}: no feasible configuration (rule: {rule})" for rule, names in reasons.items())


def _spec_of(rows: pd.DataFrame) -> Hardware | None:
    """The spec a comparison's rows were computed on (their ``hardware`` column is its name)."""
    try:
        return load_hardware(str(rows["hardware"].iloc[0]))
    except Exception:  # a spec given by path and named otherwise: not the paper's
        return None


def conclusions_matrix(verdicts: pd.DataFrame) -> pd.DataFrame:
    """One row per conclusion, one column per hardware, each cell "measure ✓" or "measure ✗"."""
    marked = verdicts.assign(cell=[f"{m} {'✓' if h else '✗'}" for m, h in zip(verdicts["measure"], verdicts["holds"])])
    matrix = marked.pivot(index="claim", columns="hardware", values="cell")
    order = [c for c in CLAIMS.values() if c in matrix.index]
    matrix = matrix.loc[order, list(dict.fromkeys(verdicts["hardware"]))].reset_index().rename(columns={"claim": "conclusion"})
    matrix.columns.name = None
    return matrix


def scaling_by_hardware(hardware: Iterable[str] = TODAYS_HARDWARE, methods: Iterable[str] = ("baseline", "improved"),
                        xs: Iterable[int] | None = None) -> pd.DataFrame:
    """``fig:scaling_limited`` redrawn per GPU: the fastest configuration of each method for each
    X-family model on each spec (the paper's limited scenario: the spec's own nodes and links).

    The rows are :func:`lgacc.scaling.scaling_sweep`'s, stacked with a ``hardware`` column; the
    search and its rules are the paper figure's, only the spec changes.
    """
    from lgacc.scaling import scaling_sweep  # the sweep's plotting stack is needed only here

    frames = [scaling_sweep(name, "limited", tuple(methods), xs).assign(hardware=load_hardware(name).name)
              for name in hardware]
    return pd.concat(frames, ignore_index=True)


def limits_by_hardware(hardware: Iterable[str] = TODAYS_HARDWARE, days: Iterable[float] | None = None,
                       method: str = "improved") -> pd.DataFrame:
    """The largest model each spec trains within each duration (one month and one year by
    default), by the limited-scenario search of ``fig:scaling_limited``; NaN where none fits."""
    from lgacc.scaling import ONE_MONTH_DAYS, ONE_YEAR_DAYS, time_limit

    days = (ONE_MONTH_DAYS, ONE_YEAR_DAYS) if days is None else tuple(days)
    def limits(spec: Hardware) -> list[dict]:
        rows = []
        for target in days:
            limit = time_limit(target, spec, "limited", method)
            rows.append({"hardware": spec.name, "days": target, "p": limit.p if limit else float("nan")})
        return rows

    specs = [load_hardware(name) for name in hardware]
    # kept on disk per spec, as the comparison above
    return pd.DataFrame([row for spec in specs
                         for row in cached("time_limits", (spec, days, method), lambda: limits(spec))])


def time_by_hardware_figure(frame: pd.DataFrame):
    """Training time along the X family, one colour per GPU, improved solid and baseline dashed,
    drawn like ``fig:scaling_limited``'s time panel (same axes, ticks and reference lines)."""
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    from lgacc.paper.reproductions.fig_scaling_limited import FONT_PT, MARKER, WIDTH_IN, set_time_axis
    from lgacc.scaling import ONE_MONTH_DAYS, ONE_YEAR_DAYS

    figure = Figure(figsize=(WIDTH_IN, 4.8), layout="constrained")
    ax = figure.subplots()
    names = list(dict.fromkeys(frame["hardware"]))
    colors = {name: f"C{i}" for i, name in enumerate(names)}
    styles = {"improved": "-", "baseline": "--"}
    times = []
    for name in names:
        for method, style in styles.items():
            rows = frame[(frame.hardware == name) & (frame.method == method) & frame.feasible.astype(bool)]
            if not rows.empty:
                ax.plot(rows.p, rows.time_days, style, color=colors[name], **MARKER)
                times += list(rows.time_days)
    for days, label in ((ONE_MONTH_DAYS, "one month"), (ONE_YEAR_DAYS, "one year")):
        ax.axhline(days, color="grey", lw=1, ls="-.")
        ax.annotate(label, (0.02, days), xycoords=("axes fraction", "data"), ha="left", va="bottom",
                    fontsize=FONT_PT - 1, color="dimgrey")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.grid(True, which="major", alpha=0.3)
    ax.tick_params(labelsize=FONT_PT)
    ax.set_xlabel("Model size p (parameters)", fontsize=FONT_PT)
    ax.set_ylabel("Training time (h, d, wk, mo, y)", fontsize=FONT_PT)
    set_time_axis(ax, times)
    # start where the first curve rises above the axis's hour: smaller models train in minutes
    # and would leave most of the width empty
    shown = frame[frame.feasible.astype(bool) & (frame.time_days >= ax.get_ylim()[0])]
    if not shown.empty:
        ax.set_xlim(left=float(shown.p.min()) / 2)
    handles = [Line2D([], [], color=colors[n], **MARKER, label=n) for n in names]
    handles += [Line2D([], [], color="black", ls=s, label=m) for m, s in styles.items()]
    figure.legend(handles=handles, loc="outside lower center", ncol=4, fontsize=FONT_PT - 1, frameon=False)
    return figure
