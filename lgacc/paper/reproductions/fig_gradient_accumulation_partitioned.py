"""``fig:gradient_accumulation_partitioned``: gradient accumulation with a partitioned or offloaded state.

Simulated rather than drawn (lgacc.schedule), under mixed buffering (two parameter
buffers, one gradient buffer; appendix sec:parameter_buffer_details,
table:mixed_buffering).  The paper's claim: standard accumulation restores and
reduces every layer for every micro-batch, layered accumulation once per step,
so it needs the bandwidth of training without accumulation.
"""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from lgacc.model.hardware import Hardware
from lgacc.schedule import Durations, Timeline, analytic, gradient_accumulation, measure, simulate
from lgacc.schedule.gantt import comparison_figure

from ..artifacts import Artifact

#: The book's text column is about 7 in at 10 pt: narrower than the default so the
#: timeline's 7-8 pt labels are not shrunk below legibility.
TIMELINE_WIDTH_IN = 6.5

LABEL = "fig:gradient_accumulation_partitioned"

#: Example sizes (the paper's drawing is not to scale): 4 layers, 3 micro-batches, 2 data-parallel devices.
DEFAULTS = {"n_mu": 3, "d_l": 4, "n_b": 2, "state": "partitioned"}

#: Forward 1, backward 1 + 2; restoring or reducing one layer takes as long as its forward
#: for one micro-batch: the most standard accumulation can overlap (table:mixed_buffering).
DURATIONS = Durations(restore=1, reduce=1)


def timelines(
    n_mu: int = DEFAULTS["n_mu"], d_l: int = DEFAULTS["d_l"], n_b: int = DEFAULTS["n_b"], state: str = DEFAULTS["state"]
) -> tuple[Timeline, Timeline]:
    """(standard, layered) simulated timelines of one data-parallel device."""
    return tuple(
        simulate(gradient_accumulation(d_l, n_mu, layered=layered, state=state, n_b=n_b, durations=DURATIONS))
        for layered in (False, True)
    )


def measured_vs_analytic(
    n_mu: int = DEFAULTS["n_mu"], d_l: int = DEFAULTS["d_l"], n_b: int = DEFAULTS["n_b"], state: str = DEFAULTS["state"]
) -> pd.DataFrame:
    """Restores, reductions and transferred volume per step; peak buffers."""
    replicated = measure(simulate(gradient_accumulation(d_l, n_mu, layered=True, n_b=n_b, durations=DURATIONS)))
    rows = []
    for timeline in timelines(n_mu, d_l, n_b, state):
        layered = timeline.schedule.layered
        m = measure(timeline)
        volume = m.network_volume + m.host_volume
        per = "once per step" if layered else "per micro-batch"
        for quantity, measured, expected, formula in (
            ("parameter restores per step", m.restores, analytic.accumulation_restores(d_l, n_mu, layered=layered, state=state),
             f"2 d_l {per}"),
            ("gradient reductions per step", m.reductions, analytic.accumulation_reductions(d_l, n_mu, layered=layered, state=state),
             f"d_l {per}"),
            ("transferred volume / replicated state's", volume / replicated.network_volume,
             analytic.partitioned_network_ratio(n_mu, layered=layered), "3/2" + ("" if layered else " n_mu")),
            ("peak parameter buffers", m.peak_parameter_buffers, 2, "table:mixed_buffering"),
            ("peak gradient buffers", m.peak_gradient_buffers, 1, "table:mixed_buffering"),
        ):
            rows.append({"schedule": timeline.schedule.name, "quantity": quantity, "measured": float(measured),
                         "analytic": float(expected), "formula": formula, "agrees": measured == expected})
    return pd.DataFrame(rows)


def build(
    hardware: Hardware | None = None,
    *,
    n_mu: int = DEFAULTS["n_mu"],
    d_l: int = DEFAULTS["d_l"],
    n_b: int = DEFAULTS["n_b"],
    state: str = DEFAULTS["state"],
) -> Figure:
    """Standard accumulation on top, layered below (unit durations; ``hardware`` is not used)."""
    standard, layered = timelines(n_mu, d_l, n_b, state)
    titles = []
    for name, timeline in (("Standard gradient accumulation", standard), ("Layered gradient accumulation", layered)):
        m = measure(timeline)
        titles.append(f"{name}: step time {float(m.step_time):g}, {m.restores} restores, {m.reductions} reductions")
    where = "offloaded to CPU memory" if state == "offloaded" else f"partitioned over n_b = {n_b} devices (one shown)"
    caption = (
        f"d_l = {d_l} layers, n_mu = {n_mu} micro-batches, training state {where}, mixed buffering; "
        "forward 1, backward 1 + 2, restore and reduction of one layer 1."
    )
    return comparison_figure([standard, layered], titles, caption=caption, width=TIMELINE_WIDTH_IN)


ARTIFACT = Artifact(
    label=LABEL,
    title="Standard and layered gradient accumulation with a partitioned or offloaded state",
    kind="figure",
    check=lambda hardware: measured_vs_analytic(),
    build=build,
    page="fig_gradient_accumulation_partitioned",
    description=(
        "Simulated timelines under mixed buffering: the standard order restores and reduces every layer "
        "for every micro-batch, the layered order once per step."
    ),
    parameters={"n_mu": "micro-batches", "d_l": "layers", "n_b": "data-parallel devices", "state": "partitioned or offloaded"},
)
