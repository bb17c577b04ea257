"""``fig:pipeline_comparison``: standard (contiguous) vs modular pipeline, no state partition.

Simulated rather than drawn (lgacc.schedule).  The paper's claims: the bubble
falls from ``(n_l-1)/n_mu`` to ``(n_l-1)/n_mu * n_l/d_l`` (sec:modular_pipeline),
and the gradient reduction is spread over the backward pass.
"""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from lgacc.model.hardware import Hardware
from lgacc.schedule import Durations, Timeline, analytic, measure, pipeline, simulate
from lgacc.schedule.gantt import comparison_figure

from ..artifacts import Artifact

#: The book's text column is about 7 in at 10 pt: narrower than the default so the
#: timeline's 7-8 pt labels are not shrunk below legibility.
TIMELINE_WIDTH_IN = 6.5

LABEL = "fig:pipeline_comparison"

#: Example sizes: 4 pipeline devices, 4 micro-batches (the minimum n_mu = n_l), 8 layers,
#: and 2 data-parallel instances so that there is a gradient reduction to overlap.
DEFAULTS = {"n_l": 4, "n_mu": 4, "d_l": 8, "n_b": 2}

#: Forward 1, backward 1 + 2; all-reduce of one layer 4, longer than one micro-batch's
#: backward of a layer (3) but shorter than all micro-batches' (3 n_mu); pipeline transfers
#: free, the setting of the bubble formulas.
DURATIONS = Durations(reduce=2)


def timelines(
    n_l: int = DEFAULTS["n_l"], n_mu: int = DEFAULTS["n_mu"], d_l: int = DEFAULTS["d_l"], n_b: int = DEFAULTS["n_b"],
    durations: Durations = DURATIONS,
) -> tuple[Timeline, Timeline]:
    """(standard, modular) simulated timelines of one pipeline instance."""
    return tuple(
        simulate(pipeline(n_l, n_mu, d_l, modular=modular, n_b=n_b, durations=durations)) for modular in (False, True)
    )


def measured_vs_analytic(n_l: int = DEFAULTS["n_l"], n_mu: int = DEFAULTS["n_mu"], d_l: int = DEFAULTS["d_l"]) -> pd.DataFrame:
    """Bubble overhead (with free transfers, the formula's setting) and pipeline transfers per step."""
    rows = []
    for timeline in timelines(n_l, n_mu, d_l, n_b=1, durations=Durations()):
        modular = timeline.schedule.layered
        m = measure(timeline)
        expected = analytic.pipeline_bubble(n_l, n_mu, d_l, modular=modular)
        applies = not modular or n_mu >= n_l
        rows.append({
            "schedule": timeline.schedule.name, "quantity": "bubble overhead",
            "measured": float(m.bubble_overhead), "analytic": float(expected),
            "formula": "(n_l-1)/n_mu" + (" * n_l/d_l" if modular else "") + ("" if applies else " (needs n_mu >= n_l)"),
            "agrees": (m.bubble_overhead == expected) if applies else None,
        })
        sends = 2 * ((d_l if modular else n_l) - 1) * n_mu
        rows.append({
            "schedule": timeline.schedule.name, "quantity": "pipeline transfers per step",
            "measured": float(m.sends), "analytic": float(sends),
            "formula": f"2 ({'d_l' if modular else 'n_l'} - 1) n_mu", "agrees": m.sends == sends,
        })
    return pd.DataFrame(rows)


def build(
    hardware: Hardware | None = None,
    *,
    n_l: int = DEFAULTS["n_l"],
    n_mu: int = DEFAULTS["n_mu"],
    d_l: int = DEFAULTS["d_l"],
    n_b: int = DEFAULTS["n_b"],
) -> Figure:
    """Standard pipeline on top, modular below (unit durations; ``hardware`` is not used)."""
    standard, modular = timelines(n_l, n_mu, d_l, n_b)
    titles = []
    for name, timeline in (("Standard pipeline", standard), ("Modular pipeline", modular)):
        m = measure(timeline)
        share = "" if m.reduction_hidden_share is None else f", {float(m.reduction_hidden_share):.0%} of reduction hidden"
        titles.append(f"{name}: step {float(m.step_time):g}, compute busy {float(m.busy_fraction_per_device[0]):.0%}{share}")
    caption = (
        f"n_l = {n_l} devices, d_l = {d_l} layers, n_mu = {n_mu} micro-batches"
        + (f", data parallelism over n_b = {n_b} instances (one shown)" if n_b > 1 else "")
        + "; forward 1, backward 1 + 2, all-reduce of one layer 4, pipeline transfers free."
    )
    return comparison_figure([standard, modular], titles, caption=caption, width=TIMELINE_WIDTH_IN)


ARTIFACT = Artifact(
    label=LABEL,
    title="Standard and modular pipeline parallelism",
    kind="figure",
    check=lambda hardware: measured_vs_analytic(),
    build=build,
    page="fig_pipeline_comparison",
    description=(
        "Simulated timelines of a contiguous (GPipe) and a modular pipeline: the modular placement divides "
        "the bubble by d_l/n_l and spreads the gradient reduction over the backward pass."
    ),
    parameters={"n_l": "pipeline devices", "n_mu": "micro-batches", "d_l": "layers", "n_b": "data-parallel instances"},
)
