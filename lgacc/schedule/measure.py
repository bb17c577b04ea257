"""Quantities measured on a simulated :class:`~lgacc.schedule.engine.Timeline`.

These are the numbers the paper states in closed form: the pipeline bubble
(sec:distributed, sec:modular_pipeline), the network operations per step and
how much of the gradient reduction the backward pass hides
(sec:layer_grad_accumulation, appendix "Data parallel"), and the buffer counts of
table:mixed_buffering.  Nothing here assumes a schedule: all is read off intervals.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from fractions import Fraction
from numbers import Rational, Real

import pandas as pd

from lgacc.errors import UserInputError

from .engine import Interval, Timeline
from .operations import COLLECTIVE_VOLUME, REDUCTION_KINDS, Kind, Stream


@dataclass(frozen=True)
class Measurements:
    """One step, measured.  Counts and volumes are totals over the simulated devices
    (one data-parallel instance; each of the ``n_b`` instances does the same)."""

    step_time: Real
    #: Step time without idle compute: the busiest device's compute time.
    bubble_free_step_time: Real
    #: ``step_time / bubble_free_step_time - 1``.
    bubble_overhead: Real
    busy_fraction_per_device: tuple[Real, ...]
    operations: int
    restores: int
    reductions: int
    sends: int
    #: Data moved by collectives on the network stream, in all-gathers of one layer's
    #: parameters; times ``(n_b-1)/n_b`` of the layer's parameter bytes, per device.
    network_volume: Real
    #: The same for CPU-GPU copies of an offloaded state, in layer-parameter copies.
    host_volume: Real
    #: Total duration of the gradient reductions (reduce-scatters and all-reduces).
    reduction_time: Real
    #: Time during which a reduction and compute run together on the same device.
    reduction_overlap: Real
    #: ``reduction_overlap / reduction_time``; ``None`` without reduction time.
    reduction_hidden_share: Real | None
    #: Compute time after the first reduction of a device could start (its inputs ready):
    #: the compute available to hide the reductions, summed over devices.
    reduction_window: Real
    peak_parameter_buffers: int
    peak_gradient_buffers: int
    #: Most micro-batches whose activations one device holds at once, in units of one
    #: micro-batch through all the device's layers (see :func:`peak_activation_microbatches`).
    peak_activation_microbatches: Real
    #: Share of the compute during which the gradient reduction can run (see :func:`data_overlap_fraction`).
    data_overlap_fraction: Real

    def as_dict(self) -> dict:
        return asdict(self)


def compute_time(timeline: Timeline, device: int) -> Real:
    return sum(i.end - i.start for i in timeline.stream(device, Stream.COMPUTE))


def overlap(first: tuple[Interval, ...], second: tuple[Interval, ...]) -> Real:
    """Total length of the intersection of two sets of intervals, each disjoint and sorted."""
    total, a, b = 0, 0, 0
    while a < len(first) and b < len(second):
        low = max(first[a].start, second[b].start)
        high = min(first[a].end, second[b].end)
        if high > low:
            total += high - low
        if first[a].end <= second[b].end:
            a += 1
        else:
            b += 1
    return total


def _busy_after(intervals: tuple[Interval, ...], time: Real) -> Real:
    return sum(i.end - max(i.start, time) for i in intervals if i.end > time)


def peak_buffers(timeline: Timeline, kind: str) -> int:
    """Most ``kind`` buffers ("parameter" or "gradient") held at once on any device.

    A buffer is held from the start of its acquiring operation to the end of its
    releasing one; a release and an acquire at the same instant do not overlap.
    """
    peak = 0
    for device in timeline.schedule.devices:
        events = []
        for use in timeline.schedule.buffers:
            if use.kind == kind and use.device == device:
                events.append((timeline.intervals[use.acquire].start, 1))
                events.append((timeline.intervals[use.release].end, -1))
        held = 0
        for _, change in sorted(events):  # -1 sorts before +1 at equal times
            held += change
            peak = max(peak, held)
    return peak


def _ratio(numerator: Real, denominator: Real) -> Real:
    """Exact (a Fraction) when both are rational, e.g. integer durations; else a float."""
    if isinstance(numerator, Rational) and isinstance(denominator, Rational):
        return Fraction(numerator) / Fraction(denominator)
    return numerator / denominator


def _holders(timeline: Timeline) -> dict[tuple[int, int, int], list[Interval]]:
    """Compute intervals per ``(device, layer, micro_batch)``."""
    found: dict[tuple[int, int, int], list[Interval]] = {}
    for interval in timeline.intervals:
        op = interval.operation
        if op.is_compute:
            found.setdefault((op.device, op.layer, op.micro_batch), []).append(interval)
    return found


def peak_activation_microbatches(timeline: Timeline) -> Real:
    """Most micro-batches whose activations a device holds at once.

    A layer holds one micro-batch's activations (its checkpoint, with recomputation)
    from the start of that micro-batch's forward pass to the end of its last backward
    operation (weight gradients included: they need the layer's input).  The peak of the
    number of (layer, micro-batch) pairs held, over time and devices, is divided by the
    device's ``d_l / n_l`` layers: ``n_mu`` for GPipe, ``n_l`` for 1F1B on device 0.
    A release and an acquire at the same instant do not overlap.
    """
    schedule = timeline.schedule
    per_device = Fraction(schedule.d_l, schedule.n_l)
    events: dict[int, list[tuple[Real, int]]] = {}
    for (device, _, _), intervals in _holders(timeline).items():
        events.setdefault(device, []).append((min(i.start for i in intervals), 1))
        events.setdefault(device, []).append((max(i.end for i in intervals), -1))
    peak = 0
    for device_events in events.values():
        held = 0
        for _, change in sorted(device_events):
            held += change
            peak = max(peak, held)
    return peak / per_device


def data_overlap_fraction(timeline: Timeline) -> Real:
    """Share of the compute that can hide the gradient reduction: compute run after the
    first layer of a device has its complete gradients (the earliest a reduction can
    start), summed over devices, over all compute.  Read from the compute alone, so it
    is a property of the schedule, whatever the network: a reduction taking at most this
    share of the compute time is hidden (given perfect overlap, as the paper assumes)."""
    schedule = timeline.schedule
    # With a split backward pass the weight-gradient half completes the gradients.
    split = any(op.kind is Kind.WEIGHT_GRADIENT for op in schedule.operations)
    completing = Kind.WEIGHT_GRADIENT if split else Kind.BACKWARD
    complete: dict[tuple[int, int], Real] = {}
    for interval in timeline.intervals:
        op = interval.operation
        if op.kind is completing:
            key = (op.device, op.layer)
            complete[key] = max(complete.get(key, interval.end), interval.end)
    window, busy = 0, 0
    for device in schedule.devices:
        compute = timeline.stream(device, Stream.COMPUTE)
        busy += sum(i.end - i.start for i in compute)
        ready = min(t for (d, _), t in complete.items() if d == device)
        window += _busy_after(compute, ready)
    return _ratio(window, busy)


def measure(timeline: Timeline) -> Measurements:
    if not isinstance(timeline, Timeline):
        raise UserInputError(f"measure takes a Timeline (from simulate()), got {timeline!r}")
    schedule = timeline.schedule
    step_time = timeline.step_time
    busy = [compute_time(timeline, device) for device in schedule.devices]
    bubble_free = max(busy)
    ops = [i.operation for i in timeline.intervals]
    reduction_time, reduction_overlap, window = 0, 0, 0
    for device in schedule.devices:
        compute = timeline.stream(device, Stream.COMPUTE)
        reductions = tuple(
            i for i in timeline.intervals if i.operation.device == device and i.operation.kind in REDUCTION_KINDS
        )
        reductions = tuple(sorted(reductions, key=lambda i: i.start))
        reduction_time += sum(i.end - i.start for i in reductions)
        reduction_overlap += overlap(compute, reductions)
        if reductions:
            ready = min(max((timeline.intervals[d].end for d in i.operation.deps), default=0) for i in reductions)
            window += _busy_after(compute, ready)
    volume = {stream: 0 for stream in (Stream.NETWORK, Stream.HOST)}
    for op in ops:
        if op.kind in COLLECTIVE_VOLUME:
            volume[op.stream] += COLLECTIVE_VOLUME[op.kind]
    return Measurements(
        step_time=step_time,
        bubble_free_step_time=bubble_free,
        bubble_overhead=_ratio(step_time, bubble_free) - 1,
        busy_fraction_per_device=tuple(_ratio(b, step_time) for b in busy),
        operations=len(ops),
        restores=sum(op.kind is Kind.RESTORE for op in ops),
        reductions=sum(op.kind in REDUCTION_KINDS for op in ops),
        sends=sum(op.kind is Kind.SEND for op in ops),
        network_volume=volume[Stream.NETWORK],
        host_volume=volume[Stream.HOST],
        reduction_time=reduction_time,
        reduction_overlap=reduction_overlap,
        reduction_hidden_share=_ratio(reduction_overlap, reduction_time) if reduction_time else None,
        reduction_window=window,
        peak_parameter_buffers=peak_buffers(timeline, "parameter"),
        peak_gradient_buffers=peak_buffers(timeline, "gradient"),
        peak_activation_microbatches=peak_activation_microbatches(timeline),
        data_overlap_fraction=data_overlap_fraction(timeline),
    )


def overlapping_micro_batches(timeline: Timeline) -> frozenset[int]:
    """Micro-batches whose compute runs while a gradient reduction runs (on its device)."""
    found = set()
    for device in timeline.schedule.devices:
        reductions = [
            i for i in timeline.intervals
            if i.operation.device == device and i.operation.kind in REDUCTION_KINDS and i.end > i.start
        ]
        for c in timeline.stream(device, Stream.COMPUTE):
            if any(min(c.end, r.end) > max(c.start, r.start) for r in reductions):
                found.add(c.operation.micro_batch)
    return frozenset(found)


_PAPER_NAMES = {Kind.FORWARD: "Activations", Kind.RECOMPUTE: "Activations", Kind.BACKWARD: "Gradients",
                Kind.RESTORE: "Restore", Kind.REDUCE: "Reduce"}


def buffer_profile(timeline: Timeline, device: int = 0) -> pd.DataFrame:
    if not isinstance(timeline, Timeline):
        raise UserInputError(f"buffer_profile takes a Timeline (from simulate()), got {timeline!r}")
    if isinstance(device, bool) or not isinstance(device, int) or device not in timeline.schedule.devices:
        raise UserInputError(f"device must be an integer in 0..{timeline.schedule.n_l - 1}, got {device!r}")
    return _buffer_profile(timeline, device)


def _buffer_profile(timeline: Timeline, device: int) -> pd.DataFrame:
    """One row per compute operation, in the form of table:mixed_buffering.

    For each compute operation of ``device``: the transfers running beside it
    ("Stream 2"), the parameter and gradient buffers held at some time during it
    (lifetimes that intersect it; one that ends as it starts does not count), its
    compute time and the transfers' volume.  Layers are named by position in
    processing order (``order``), since the paper's ``i-1``, ``i``, ``i+1`` count
    in the order layers are processed, which is descending in the backward pass.
    """
    schedule = timeline.schedule
    transfers = [
        i for i in timeline.intervals
        if i.operation.device == device and i.operation.kind in (Kind.RESTORE, Kind.REDUCE) and i.end > i.start
    ]
    rows = []
    for c in timeline.stream(device, Stream.COMPUTE):
        beside = [t for t in transfers if min(t.end, c.end) > max(t.start, c.start)]
        held = {"parameter": 0, "gradient": 0}
        for use in schedule.buffers:
            begin, finish = timeline.intervals[use.acquire].start, timeline.intervals[use.release].end
            if use.device == device and min(finish, c.end) > max(begin, c.start):
                held[use.kind] += 1
        op = c.operation
        rows.append({
            "pass": "backward" if op.kind in (Kind.RECOMPUTE, Kind.BACKWARD) else "forward",
            "micro_batch": op.micro_batch,
            "stream_1": f"{_PAPER_NAMES[op.kind]}({op.layer})",
            "stream_1_layer": op.layer,
            "stream_2": ", ".join(f"{_PAPER_NAMES[t.operation.kind]}({t.operation.layer})" for t in beside),
            "stream_2_layer": beside[0].operation.layer if len(beside) == 1 else None,
            "parameter_buffers": held["parameter"],
            "gradient_buffers": held["gradient"],
            "computation": op.duration,
            "network": sum(COLLECTIVE_VOLUME[t.operation.kind] for t in beside),
        })
    return pd.DataFrame(rows)


def network_bytes(measurements: Measurements, n_b: int, layer_parameter_bytes: float) -> float:
    """Bytes each device sends per step over the network: ring collectives move
    ``(n_b-1)/n_b`` of the buffer per all-gather or reduce-scatter (sec:distributed)."""
    return measurements.network_volume * layer_parameter_bytes * (n_b - 1) / n_b
