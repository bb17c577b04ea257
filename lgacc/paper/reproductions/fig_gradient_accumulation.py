"""``fig:gradient_accumulation``: standard vs layered gradient accumulation with data parallelism.

Simulated rather than drawn (lgacc.schedule).  The paper's claim: standard
accumulation can only hide the gradient reduction behind the last micro-batch,
layered accumulation behind most of the backward pass (sec:layer_grad_accumulation).
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

LABEL = "fig:gradient_accumulation"

#: Example sizes (the paper's drawing is not to scale): 4 layers, 3 micro-batches, 2 data-parallel devices.
DEFAULTS = {"n_mu": 3, "d_l": 4, "n_b": 2}


def durations(n_mu: int = DEFAULTS["n_mu"]) -> Durations:
    """Forward 1, backward 1 + 2 (recomputation + gradients); an all-reduce of one layer takes
    as long as that layer's backward pass for two micro-batches (6): more than the last
    micro-batch's backward of a layer (3), which is all standard accumulation can hide it
    behind, and less than a layer's backward for all micro-batches (3 n_mu) when n_mu >= 2."""
    return Durations(reduce=3)


def timelines(n_mu: int = DEFAULTS["n_mu"], d_l: int = DEFAULTS["d_l"], n_b: int = DEFAULTS["n_b"]) -> tuple[Timeline, Timeline]:
    """(standard, layered) simulated timelines of one data-parallel device."""
    d = durations(n_mu)
    return tuple(simulate(gradient_accumulation(d_l, n_mu, layered=layered, n_b=n_b, durations=d)) for layered in (False, True))


def measured_vs_analytic(n_mu: int = DEFAULTS["n_mu"], d_l: int = DEFAULTS["d_l"], n_b: int = DEFAULTS["n_b"]) -> pd.DataFrame:
    """Compute time available to hide the reduction, and gradient reductions per step."""
    rows = []
    for timeline in timelines(n_mu, d_l, n_b):
        layered = timeline.schedule.layered
        m = measure(timeline)
        backward_pass = timeline.schedule.durations.backward_pass
        rows.append({
            "schedule": timeline.schedule.name,
            "quantity": "compute available to hide the reduction",
            "measured": float(m.reduction_window),
            "analytic": float(analytic.reduction_window(d_l, n_mu, layered=layered, durations=timeline.schedule.durations)),
            "formula": f"(d_l-1){' n_mu' if layered else ''} x backward ({backward_pass})",
        })
        rows.append({
            "schedule": timeline.schedule.name,
            "quantity": "gradient reductions per step",
            "measured": m.reductions,
            "analytic": analytic.accumulation_reductions(d_l, n_mu, layered=layered, state="replicated"),
            "formula": "d_l",
        })
    frame = pd.DataFrame(rows)
    frame["agrees"] = frame["measured"] == frame["analytic"]
    return frame


def build(hardware: Hardware | None = None, *, n_mu: int = DEFAULTS["n_mu"], d_l: int = DEFAULTS["d_l"], n_b: int = DEFAULTS["n_b"]) -> Figure:
    """Standard accumulation on top, layered below (unit durations; ``hardware`` is not used)."""
    standard, layered = timelines(n_mu, d_l, n_b)
    titles = []
    for name, timeline in (("Standard gradient accumulation", standard), ("Layered gradient accumulation", layered)):
        m = measure(timeline)
        titles.append(
            f"{name}: step time {float(m.step_time):g}, "
            f"{float(m.reduction_hidden_share):.0%} of the reduction hidden"
        )
    caption = (
        f"d_l = {d_l} layers, n_mu = {n_mu} micro-batches, data parallelism over n_b = {n_b} devices (one shown); "
        "forward 1, backward 1 + 2, all-reduce of one layer 6."
    )
    return comparison_figure([standard, layered], titles, caption=caption, width=TIMELINE_WIDTH_IN)


ARTIFACT = Artifact(
    label=LABEL,
    title="Standard and layered gradient accumulation with data parallelism",
    kind="figure",
    check=lambda hardware: measured_vs_analytic(),
    build=build,
    page="fig_gradient_accumulation",
    description=(
        "Simulated timelines of one data-parallel device: the layered order spreads the gradient "
        "reduction over the backward pass instead of the last micro-batch."
    ),
    parameters={"n_mu": "micro-batches", "d_l": "layers", "n_b": "data-parallel devices"},
)
