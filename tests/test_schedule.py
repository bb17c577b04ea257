"""The schedule simulator, measured against the paper's closed forms.

Integer durations make every simulated time an integer and every ratio an exact
Fraction, so the comparisons below are equalities, not tolerances.

Independent facts checked: the event simulator (one code path) against the sympy derivations
of lgacc.model.formulas (another) and against the bubble (n_l - 1)/n_mu, times n_l/d_l for the
modular pipeline, written by hand; send, restore and reduction counts by hand; the printed
rows of table:mixed_buffering; hand-built malformed schedules and inputs.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from lgacc.errors import UserInputError
from lgacc.paper import paper_table
from lgacc.schedule import (
    MAX_OPERATIONS,
    Durations,
    Kind,
    Operation,
    Schedule,
    ScheduleDeadlock,
    Stream,
    analytic,
    buffer_profile,
    gradient_accumulation,
    measure,
    pipeline,
    simulate,
)
from lgacc.schedule.measure import overlapping_micro_batches

PIPELINE_GRID = [
    (n_l, n_mu, d_l)
    for n_l in range(1, 9)
    for n_mu in range(n_l, 3 * n_l + 1)
    for d_l in (n_l, 2 * n_l, 3 * n_l)
]


# --- pipeline bubble (sec:distributed, sec:modular_pipeline) -------------------------


@pytest.mark.parametrize("modular", [False, True], ids=["standard", "modular"])
def test_bubble_equals_the_paper_formula_over_the_grid(modular):
    for n_l, n_mu, d_l in PIPELINE_GRID:
        measured = measure(simulate(pipeline(n_l, n_mu, d_l, modular=modular)))
        expected = analytic.pipeline_bubble(n_l, n_mu, d_l, modular=modular)
        assert measured.bubble_overhead == expected, (n_l, n_mu, d_l)
        # by hand: (n_l - 1) / n_mu, the modular pipeline's times n_l / d_l (its idle steps are one layer long)
        assert expected == Fraction(n_l - 1, n_mu) * (Fraction(n_l, d_l) if modular else 1), (n_l, n_mu, d_l)
        assert measured.step_time == analytic.pipeline_step_time(n_l, n_mu, d_l, modular=modular)
        # Every device does the same compute, so each is busy 1 / (1 + bubble) of the step.
        assert set(measured.busy_fraction_per_device) == {1 / (1 + expected)}


def test_bubble_formula_holds_for_any_forward_backward_ratio():
    durations = Durations(forward=Fraction(2, 7), backward=Fraction(5, 3), recompute=False)
    for n_l, n_mu, d_l in [(2, 3, 6), (3, 4, 9), (4, 5, 8)]:
        for modular in (False, True):
            measured = measure(simulate(pipeline(n_l, n_mu, d_l, modular=modular, durations=durations)))
            assert measured.bubble_overhead == analytic.pipeline_bubble(n_l, n_mu, d_l, modular=modular)


def test_modular_bubble_is_larger_than_the_formula_with_fewer_micro_batches_than_devices():
    # The formula assumes n_mu >= n_l: otherwise device 0 waits for layer n_l's input.
    for n_l, n_mu, d_l in [(4, 2, 8), (4, 3, 8), (8, 4, 16)]:
        measured = measure(simulate(pipeline(n_l, n_mu, d_l, modular=True)))
        assert measured.bubble_overhead > analytic.pipeline_bubble(n_l, n_mu, d_l, modular=True)


def test_modular_pipeline_sends_after_every_layer():
    # sec:modular_pipeline / eq:pipeline_intensity_impr: transfers multiplied by about d_l / n_l.
    n_l, n_mu, d_l = 4, 6, 12
    standard = measure(simulate(pipeline(n_l, n_mu, d_l, modular=False)))
    modular = measure(simulate(pipeline(n_l, n_mu, d_l, modular=True)))
    assert standard.sends == 2 * (n_l - 1) * n_mu
    assert modular.sends == 2 * (d_l - 1) * n_mu


def test_layer_placement():
    n_l, d_l = 3, 9
    modular = pipeline(n_l, 3, d_l, modular=True)
    standard = pipeline(n_l, 3, d_l, modular=False)
    assert {(op.layer, op.device) for op in modular.operations if op.is_compute} == {(i, i % n_l) for i in range(d_l)}
    assert {(op.layer, op.device) for op in standard.operations if op.is_compute} == {(i, i // 3) for i in range(d_l)}


# --- network operations per step (fig:gradient_accumulation_partitioned) -------------


@pytest.mark.parametrize("state", ["partitioned", "offloaded"])
@pytest.mark.parametrize("d_l,n_mu", [(4, 3), (6, 5), (3, 1)])
def test_partitioned_state_transfers_per_micro_batch_or_once_per_step(state, d_l, n_mu):
    durations = Durations(restore=1, reduce=1)
    replicated = measure(simulate(gradient_accumulation(d_l, n_mu, layered=True, durations=durations)))
    for layered in (False, True):
        measured = measure(simulate(gradient_accumulation(d_l, n_mu, layered=layered, state=state, durations=durations)))
        assert measured.restores == analytic.accumulation_restores(d_l, n_mu, layered=layered, state=state)
        assert measured.reductions == analytic.accumulation_reductions(d_l, n_mu, layered=layered, state=state)
        assert measured.restores == 2 * d_l * (1 if layered else n_mu)
        volume = measured.network_volume + measured.host_volume
        assert Fraction(volume, replicated.network_volume) == analytic.partitioned_network_ratio(n_mu, layered=layered)
        # Offloading moves the same data over the host link instead of the network.
        assert (measured.host_volume > 0) == (state == "offloaded")


def test_replicated_state_reduces_each_layer_once():
    for layered in (False, True):
        measured = measure(simulate(gradient_accumulation(5, 4, layered=layered)))
        assert (measured.restores, measured.reductions) == (0, 5)


# --- gradient reduction hidden behind compute (fig:gradient_accumulation) -------------


@pytest.mark.parametrize("d_l,n_mu", [(4, 3), (6, 2), (8, 5), (2, 1)])
def test_reduction_can_hide_behind_last_micro_batch_or_whole_backward_pass(d_l, n_mu):
    durations = Durations(reduce=1)
    for layered in (False, True):
        measured = measure(simulate(gradient_accumulation(d_l, n_mu, layered=layered, durations=durations)))
        assert measured.reduction_window == analytic.reduction_window(d_l, n_mu, layered=layered)


@pytest.mark.parametrize("d_l,n_mu", [(4, 3), (6, 2), (5, 4)])
def test_saturated_reduction_overlaps_only_the_last_micro_batch_in_standard_accumulation(d_l, n_mu):
    # An all-reduce as long as a layer's whole backward pass keeps the network busy to the
    # end, so the overlap is exactly the compute left once the first reduction starts.
    durations = Durations()
    durations = Durations(reduce=Fraction(n_mu * durations.backward_pass, 2))
    standard = simulate(gradient_accumulation(d_l, n_mu, layered=False, durations=durations))
    layered = simulate(gradient_accumulation(d_l, n_mu, layered=True, durations=durations))
    assert overlapping_micro_batches(standard) == {n_mu - 1}
    assert overlapping_micro_batches(layered) == set(range(n_mu))
    s, l = measure(standard), measure(layered)
    assert s.reduction_overlap == (d_l - 1) * durations.backward_pass
    assert l.reduction_overlap == (d_l - 1) * n_mu * durations.backward_pass
    assert s.reduction_hidden_share == Fraction(d_l - 1, d_l * n_mu)
    assert l.reduction_hidden_share == Fraction(d_l - 1, d_l)


@pytest.mark.parametrize("n_l,n_mu,d_l", [(4, 4, 8), (2, 3, 6), (3, 5, 12)])
def test_modular_pipeline_spreads_the_reduction_over_the_backward_pass(n_l, n_mu, d_l):
    # sec:modular_pipeline: each device's reductions overlap its whole backward pass rather
    # than its last micro-batch.  Saturating all-reduces (a layer's whole backward pass
    # long) make the overlap exactly the compute left once a device's first one starts.
    backward_pass = Durations().backward_pass
    durations = Durations(reduce=Fraction(n_mu * backward_pass, 2))
    standard = simulate(pipeline(n_l, n_mu, d_l, modular=False, n_b=2, durations=durations))
    modular = simulate(pipeline(n_l, n_mu, d_l, modular=True, n_b=2, durations=durations))
    layers_after_first = d_l // n_l - 1
    assert measure(standard).reduction_overlap == n_l * layers_after_first * backward_pass
    assert measure(modular).reduction_overlap == n_l * layers_after_first * n_mu * backward_pass
    assert overlapping_micro_batches(standard) == {n_mu - 1}
    assert overlapping_micro_batches(modular) == set(range(n_mu))


# --- mixed buffering (table:mixed_buffering) -----------------------------------------


@pytest.mark.parametrize("state", ["partitioned", "offloaded"])
@pytest.mark.parametrize("layered", [False, True])
@pytest.mark.parametrize("restore", [Fraction(1, 4), 1, 3])
def test_peak_buffers_are_two_parameter_and_one_gradient(state, layered, restore):
    # With fast restores, an unconstrained prefetch would hold three parameter buffers.
    durations = Durations(restore=restore, reduce=restore)
    measured = measure(simulate(gradient_accumulation(5, 3, layered=layered, state=state, durations=durations)))
    assert (measured.peak_parameter_buffers, measured.peak_gradient_buffers) == (2, 1)


def test_partitioned_pipeline_buffers():
    durations = Durations(restore=1, reduce=1)
    for modular in (False, True):
        measured = measure(simulate(pipeline(2, 3, 6, modular=modular, state="partitioned", n_b=2, durations=durations)))
        assert (measured.peak_parameter_buffers, measured.peak_gradient_buffers) == (2, 1)


def test_operation_sequence_matches_table_mixed_buffering():
    """Away from the first and last layers, each compute operation runs beside the transfer,
    and holds the buffers, that the paper's table lists (layers counted in processing order)."""
    d_l = 8
    timeline = simulate(gradient_accumulation(d_l, 1, layered=True, state="partitioned", durations=Durations(restore=1, reduce=1)))
    rows = buffer_profile(timeline).to_dict(orient="records")
    forward = [r for r in rows if r["pass"] == "forward"][1:-2]
    backward = [r for r in rows if r["pass"] == "backward"][2:-2]
    table = {
        (row["phase"].lower(), row["stream_1"].split("(")[0], row["stream_2"].split("(")[0]): tuple(
            int(row[key])
            for key in ("parameter_buffers", "gradient_buffers", "computation", "network", "arithmetic_intensity")
        )
        for row in paper_table("table:mixed_buffering").to_dict(orient="records")
    }
    assert forward and backward
    for r in forward + backward:
        compute, transfer = r["stream_1"].split("(")[0], r["stream_2"].split("(")[0]
        parameters, gradients, computation, network, intensity = table[(r["pass"], compute, transfer)]
        assert (r["parameter_buffers"], r["gradient_buffers"]) == (parameters, gradients), r
        assert (r["computation"], r["network"], r["computation"] / r["network"]) == (computation, network, intensity), r
        # Restore(i) runs beside the layer before it in processing order, Reduce(i-1) beside the one after.
        step = -1 if r["pass"] == "backward" else 1
        offset = step if transfer == "Restore" else -step
        assert r["stream_2_layer"] == r["stream_1_layer"] + offset, r
    assert {r["stream_2"].split("(")[0] for r in backward} == {"Restore", "Reduce"}


# --- the engine and its inputs --------------------------------------------------------


@pytest.mark.parametrize(
    "schedule",
    [
        pipeline(3, 4, 6, modular=True, state="partitioned", n_b=2, durations=Durations(restore=1, reduce=2, send=Fraction(1, 2))),
        pipeline(2, 3, 4, modular=False, n_b=2, durations=Durations(reduce=1, send=1)),
        gradient_accumulation(4, 3, layered=False, state="offloaded", durations=Durations(restore=2, reduce=1)),
    ],
    ids=["modular-partitioned", "standard-replicated", "standard-offloaded"],
)
def test_streams_are_in_order_and_dependencies_respected(schedule):
    timeline = simulate(schedule)
    for interval in timeline.intervals:
        op = interval.operation
        assert interval.end - interval.start == op.duration
        assert all(timeline.intervals[d].end <= interval.start for d in op.deps)
    for device in schedule.devices:
        for stream in Stream:
            intervals = sorted(
                (i for i in timeline.intervals if i.operation.device == device and i.operation.stream is stream),
                key=lambda i: i.operation.index,
            )
            assert all(a.end <= b.start for a, b in zip(intervals, intervals[1:]))


def test_cyclic_dependencies_are_reported():
    ops = (
        Operation(0, Kind.FORWARD, 0, Stream.COMPUTE, 1, 0, 0, deps=(1,)),
        Operation(1, Kind.SEND, 0, Stream.PIPELINE, 1, 0, 0, deps=(0,)),
    )
    schedule = Schedule("cycle", 1, 1, 1, 1, "replicated", False, Durations(), ops)
    with pytest.raises(ScheduleDeadlock, match="never start"):
        simulate(schedule)


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: pipeline(3, 4, 8, modular=True), "n_l = 3 must divide d_l = 8"),
        (lambda: pipeline(2, 0, 4, modular=False), "n_mu .* must be >= 1, got 0"),
        (lambda: pipeline(0, 1, 4, modular=False), "n_l .* must be >= 1, got 0"),
        (lambda: pipeline(2, 2, -4, modular=False), "d_l .* must be >= 1, got -4"),
        (lambda: pipeline(2, 2.5, 4, modular=False), "n_mu .* must be an integer"),
        (lambda: pipeline(True, 2, 4, modular=False), "n_l .* must be an integer"),
        (lambda: gradient_accumulation(4, 2, layered=True, state="sharded"), "state must be one of"),
        (lambda: gradient_accumulation(4, 2, layered=True, state="partitioned", n_b=1), "n_b >= 2"),
        (lambda: pipeline(8, 10_000, 64, modular=True), f"limit of {MAX_OPERATIONS:,}"),
        (lambda: Durations(forward=0), "duration forward must be > 0, got 0"),
        (lambda: Durations(reduce=-1), "duration reduce must be >= 0, got -1"),
        (lambda: Durations(send=float("nan")), "duration send must be a finite number"),
    ],
)
def test_bad_input_names_the_value_and_rule(call, message):
    with pytest.raises(UserInputError, match=message):
        call()


# --- figures -------------------------------------------------------------------------

FIGURES = ["fig:gradient_accumulation", "fig:gradient_accumulation_partitioned", "fig:pipeline_comparison"]


@pytest.mark.parametrize("label", FIGURES)
def test_figure_draws_every_timed_operation_standard_on_top(label):
    from matplotlib.patches import Rectangle

    from lgacc.paper.artifacts import get_artifact

    artifact = get_artifact(label)
    module = __import__(artifact.build.__module__, fromlist=["timelines"])
    figure = artifact.reproduce("a100-80gb")
    axes = figure.axes
    assert len(axes) == 2
    assert axes[0].get_title(loc="left").startswith("Standard")
    for ax, timeline in zip(axes, module.timelines()):
        blocks = [p for p in ax.patches if isinstance(p, Rectangle)]
        assert len(blocks) == sum(i.end > i.start for i in timeline.intervals)
        if label == "fig:pipeline_comparison":
            # by hand at the figure's defaults (n_l = 4, n_mu = 4, d_l = 8, n_b = 2): each of the
            # d_l n_mu = 32 (layer, micro-batch) pairs runs forward, recompute and backward, and each
            # of the 8 layers is all-reduced once: 3 * 32 + 8 = 104 blocks in either panel
            assert len(blocks) == 104
        # Micro-batch indices are written in the compute blocks.
        assert {t.get_text() for t in ax.texts} >= {str(m) for m in range(timeline.schedule.n_mu)}


def test_figure_parameters_change_the_drawing():
    from lgacc.paper.artifacts import reproduce

    figure = reproduce("fig:pipeline_comparison", n_l=2, n_mu=3, d_l=6)
    assert len(figure.axes[0].get_yticks()) == 2 * 2  # compute + network row per device
    with pytest.raises(UserInputError, match="n_l = 4 must divide d_l = 6"):
        reproduce("fig:pipeline_comparison", n_l=4, d_l=6)


def test_agreement_sentence_reports_disagreement():
    import pandas as pd

    from lgacc.schedule.report import agreement_sentence

    assert agreement_sentence(pd.DataFrame({"agrees": [True, True]})).startswith("✓ All 2")
    assert agreement_sentence(pd.DataFrame({"agrees": [True, False, None]})).startswith("✗ 1 of 2")
