"""One simulated step as the plain numbers ``lgacc simulate --format json`` prints, with its timeline.

:func:`simulation` builds the schedule by name (:func:`~lgacc.schedule.builders.pipeline_schedule`), simulates and
measures it, and returns the command line's JSON object beside the :class:`~lgacc.schedule.engine.Timeline`: the
command prints the first, the book's schedule explorer draws the second and quotes the first (one computation for
both, so that the page and ``lgacc simulate`` cannot disagree).
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np

from lgacc.errors import UserInputError

from .analytic import schedule_quantity
from .builders import ALIASES, pipeline_schedule
from .engine import Timeline, simulate
from .measure import measure
from .operations import Durations

__all__ = ["simulation"]


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:24]}...({len(text)} characters)"


def _check_arguments(schedule, state, durations, transfer_bytes) -> None:
    """The arguments the builders do not check: a schedule and a state are names, the durations a
    :class:`Durations`, a transfer's size a finite number of bytes >= 0 (never text: ``'2' * 8`` repeats it)."""
    for label, value in (("schedule", schedule), ("state", state)):
        if not isinstance(value, str):
            raise UserInputError(f"{label}={_shown(value)} must be a name (a string)")
    if not isinstance(durations, Durations):
        raise UserInputError(f"durations={_shown(durations)} must be an lgacc.schedule.operations.Durations")
    try:
        ok = (not isinstance(transfer_bytes, (bool, np.bool_)) and isinstance(transfer_bytes, Real)
              and math.isfinite(transfer_bytes) and transfer_bytes >= 0)
    except OverflowError:  # 10**400
        ok = False
    if not ok:
        raise UserInputError(f"transfer_bytes={_shown(transfer_bytes)} must be a finite number of bytes >= 0 (a float)")


def simulation(
    schedule: str,
    n_l: int,
    n_mu: int,
    d_l: int,
    *,
    n_v: int = 1,
    n_b: int = 1,
    state: str = "replicated",
    durations: Durations = Durations(),
    transfer_bytes: float = 1,
) -> tuple[dict, Timeline]:
    """The measurements of one step of ``schedule`` (its name as given, an alias kept) as ``lgacc simulate`` prints them,
    and the timeline they are read from. ``transfer_bytes`` is the size of one pipeline transfer (one micro-batch's
    activations at a layer boundary)."""
    _check_arguments(schedule, state, durations, transfer_bytes)
    transfer_bytes = float(transfer_bytes)
    name = ALIASES.get(schedule, schedule)
    timeline = simulate(pipeline_schedule(name, n_l, n_mu, d_l, n_v=n_v, state=state, n_b=n_b, durations=durations))
    measured = measure(timeline)
    free = durations.send == 0 and durations.restore == 0 and durations.reduce == 0
    # The closed forms hold with free transfers and n_mu >= n_l (ZB-H1: t_W <= t_F).
    applies = free and n_mu >= n_l
    if name == "zero-bubble":
        applies = applies and durations.split_backward <= durations.forward
    share = measured.reduction_hidden_share
    values = {
        "schedule": schedule,
        "n_l": n_l,
        "n_mu": n_mu,
        "d_l": d_l,
        "n_b": n_b,
        "state": state,
        "bubble_overhead": float(measured.bubble_overhead),
        "n_v": n_v,
        "analytic_bubble_overhead": float(
            schedule_quantity(name, "bubble_overhead", n_l, n_mu, d_l, n_v=n_v, durations=durations)
        ) if applies else None,
        "step_time": float(measured.step_time),
        "bubble_free_step_time": float(measured.bubble_free_step_time),
        "busy_fraction_per_device": [float(f) for f in measured.busy_fraction_per_device],
        "operations": measured.operations,
        "pipeline_sends": measured.sends,
        "restores": measured.restores,
        "reductions": measured.reductions,
        "network_volume_layers": float(measured.network_volume),
        "reduction_hidden_share": None if share is None else float(share),
        "peak_parameter_buffers": measured.peak_parameter_buffers,
        "peak_gradient_buffers": measured.peak_gradient_buffers,
        "peak_activation_microbatches": float(measured.peak_activation_microbatches),
        "pipeline_bytes_per_step": float(measured.sends * transfer_bytes),
        "data_overlap_fraction": float(measured.data_overlap_fraction),
    }
    return values, timeline
