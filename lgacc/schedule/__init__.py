"""Event-level simulation of one training step (fig:gradient_accumulation,
fig:gradient_accumulation_partitioned, fig:pipeline_comparison).

>>> from lgacc.schedule import pipeline, simulate, measure
>>> measure(simulate(pipeline(4, 8, 16, modular=True))).bubble_overhead
Fraction(3, 32)

Modules, one job each: :mod:`.operations` (vocabulary and input rules),
:mod:`.programs` (what each device runs, in order), :mod:`.lowering` (programs turned into
operations and transfers), :mod:`.builders` (the schedules by name: the paper's and, via
:func:`pipeline_schedule`, GPipe, 1F1B, interleaved, breadth-first, ZB-H1 and modular),
:mod:`.engine` (the simulation),
:mod:`.measure` (quantities read off a timeline), :mod:`.analytic` (the paper's
closed forms for them), :mod:`.gantt` (timeline drawings).
"""

from .analytic import pipeline_bubble
from .builders import SCHEDULES, gradient_accumulation, pipeline, pipeline_schedule
from .engine import Interval, ScheduleDeadlock, Timeline, simulate
from .measure import Measurements, buffer_profile, measure
from .operations import MAX_OPERATIONS, BufferUse, Durations, Kind, Operation, Schedule, Stream

__all__ = [
    "MAX_OPERATIONS",
    "SCHEDULES",
    "BufferUse",
    "Durations",
    "Interval",
    "Kind",
    "Measurements",
    "Operation",
    "Schedule",
    "ScheduleDeadlock",
    "Stream",
    "Timeline",
    "buffer_profile",
    "gradient_accumulation",
    "measure",
    "pipeline",
    "pipeline_bubble",
    "pipeline_schedule",
    "simulate",
]
