"""Event-level simulation of a :class:`~lgacc.schedule.operations.Schedule`.

Every stream is in-order: an operation starts when the previous operation of its
``(device, stream)`` has ended and all its dependencies have ended, and runs for
its duration (overlap between streams is perfect, as the paper assumes in
"Communication overlap").  Start times are then a longest-path computation over
the graph of stream-order and dependency edges, done once in topological order.
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass
from numbers import Real

from lgacc.errors import UserInputError

from .operations import Operation, Schedule, Stream


class ScheduleDeadlock(RuntimeError):
    """A schedule whose dependencies and stream orders form a cycle (a bug in its builder)."""


@dataclass(frozen=True)
class Interval:
    """When one operation ran."""

    operation: Operation
    start: Real
    end: Real


@dataclass(frozen=True)
class Timeline:
    """The simulated step: one interval per operation, indexed like ``schedule.operations``."""

    schedule: Schedule
    intervals: tuple[Interval, ...]

    @property
    def step_time(self) -> Real:
        """End of the last operation (the optimizer update is not modelled)."""
        return max((interval.end for interval in self.intervals), default=0)

    def stream(self, device: int, stream: Stream) -> tuple[Interval, ...]:
        """Intervals of one stream, in start order."""
        found = [i for i in self.intervals if i.operation.device == device and i.operation.stream is stream]
        return tuple(sorted(found, key=lambda i: (i.start, i.operation.index)))

    def streams_used(self, device: int) -> tuple[Stream, ...]:
        """Streams of ``device`` with at least one operation of non-zero duration, compute first."""
        used = {i.operation.stream for i in self.intervals if i.operation.device == device and i.end > i.start}
        return tuple(stream for stream in Stream if stream in used)


def simulate(schedule: Schedule) -> Timeline:
    """Run ``schedule``: each operation starts as soon as its stream and its dependencies allow."""
    if not isinstance(schedule, Schedule):
        raise UserInputError(f"simulate takes a Schedule (from pipeline(), pipeline_schedule(), ...), got {schedule!r}")
    operations = schedule.operations
    predecessors: list[list[int]] = [list(op.deps) for op in operations]
    last_on_stream: dict[tuple[int, Stream], int] = {}
    for op in operations:
        key = (op.device, op.stream)
        if key in last_on_stream:
            predecessors[op.index].append(last_on_stream[key])
        last_on_stream[key] = op.index

    successors: dict[int, list[int]] = defaultdict(list)
    waiting = [0] * len(operations)
    for index, preds in enumerate(predecessors):
        waiting[index] = len(preds)
        for pred in preds:
            successors[pred].append(index)

    start: list[Real] = [0] * len(operations)
    end: list[Real] = [0] * len(operations)
    ready = deque(index for index, count in enumerate(waiting) if count == 0)
    done = 0
    while ready:
        index = ready.popleft()
        preds = predecessors[index]
        start[index] = max((end[p] for p in preds), default=0)
        end[index] = start[index] + operations[index].duration
        done += 1
        for successor in successors[index]:
            waiting[successor] -= 1
            if waiting[successor] == 0:
                ready.append(successor)
    if done != len(operations):
        stuck = next(op for op in operations if waiting[op.index] > 0)
        raise ScheduleDeadlock(f"{schedule.name}: {len(operations) - done} operations never start, e.g. {stuck}")
    return Timeline(schedule, tuple(Interval(op, start[op.index], end[op.index]) for op in operations))
