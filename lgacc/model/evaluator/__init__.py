"""The evaluator: configurations -> efficiency with each overhead named, time, memory, feasibility.

* :mod:`.mapping` -- the evaluator as data: which derivation each overhead reads in each case,
  the two overlap rules, the numeric code generated from the derivations;
* :mod:`.inputs` -- the input rules (counts, flags, options, schedule chunks);
* :mod:`.result` -- one configuration's result (:class:`Evaluation`), its JSON, the sentence for
  each broken rule;
* :mod:`.evaluate` -- :func:`evaluate_many` over arrays of configurations, :func:`evaluate` for one.
"""

from .evaluate import (
    DEFAULT_MAX_OVERHEAD,
    DEFAULT_STEPS,
    SECONDS_PER_DAY,
    evaluate,
    evaluate_many,
    kernel_efficiency,
)
from .inputs import check_schedule
from .mapping import (
    DATA_TRANSFERS,
    FORMS,
    OVERHEADS,
    SCHEDULES,
    evaluation_map,
    not_overlapped_overhead,
    overlapped_overhead,
    parse_schedule,
)
from .result import Evaluation, MemoryBreakdown

__all__ = [
    "OVERHEADS",
    "FORMS",
    "MemoryBreakdown",
    "Evaluation",
    "evaluate",
    "evaluate_many",
    "evaluation_map",
    "overlapped_overhead",
    "not_overlapped_overhead",
    "DATA_TRANSFERS",
    "DEFAULT_STEPS",
    "DEFAULT_MAX_OVERHEAD",
    "SECONDS_PER_DAY",
    "kernel_efficiency",
    "SCHEDULES",
    "parse_schedule",
    "check_schedule",
]
