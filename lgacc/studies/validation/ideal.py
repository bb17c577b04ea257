"""The paper's ideal model on a published run: the bound it should be.

The predicted step time is the run's work (:func:`.measured.work_flops`) at peak flop/s over the
evaluator's efficiency (exact forms) for the run's configuration: its method (baseline,
partitioned, improved), its degrees, micro-batches, pipeline schedule and chunks per device.  Two
overlap conventions (``paper``, ``physical``) and, where the ideal model has the switch, both
readings of the data-parallel network (``dp_network``: ``per-gpu``, the paper's, and ``ring``).
The kernels run at peak, so the measured step should never be faster: the ratio
measured / predicted is at least 1 when the model is an upper bound on speed.  A run with experts, context
parallelism or FP8 (:attr:`.runs.Run.extended`) is evaluated with its ``n_e``, ``n_c`` and ``precision`` (the
evaluator's sparse extension, :mod:`lgacc.model.evaluator.sparse`) at the peak of its precision.
"""

from __future__ import annotations

from lgacc.errors import UserInputError
from lgacc.model.assumptions import FIELDS as ASSUMPTION_FIELDS
from lgacc.model.assumptions import Assumptions
from lgacc.model.evaluator import evaluate
from lgacc.model.evaluator.mapping import default_schedule

from .measured import work_flops
from .runs import Run

__all__ = ["CONVENTIONS", "DP_NETWORKS", "PREDICTION_FORM", "VALIDATION_ASSUMPTIONS", "ideal_efficiency",
           "predicted_step_time"]

CONVENTIONS = ("paper", "physical")
#: The readings of the data-parallel network the ideal model offers (the paper's alone before the switch exists).
DP_NETWORKS = ("per-gpu", "ring") if "dp_network" in ASSUMPTION_FIELDS else ("per-gpu",)
#: The evaluator's exact derived counts (not the paper's leading-order printed forms) for the overheads.
PREDICTION_FORM = "exact"
#: Assumptions of the predictions: fractional pipeline stages allowed (Llama 3's 126 layers on 16 stages).
VALIDATION_ASSUMPTIONS = dict(divisible_layers=False)


def _assumptions(convention: str, dp_network: str) -> Assumptions:
    extra = {"dp_network": dp_network} if "dp_network" in ASSUMPTION_FIELDS else {}
    return Assumptions(convention=convention, **VALIDATION_ASSUMPTIONS, **extra)


def ideal_efficiency(run: Run, convention: str = "physical", dp_network: str = "per-gpu") -> float:
    """The evaluator's efficiency (overheads only) for the run's configuration and schedule."""
    if dp_network not in DP_NETWORKS:
        raise UserInputError(f"dp_network={dp_network!r} must be one of {', '.join(DP_NETWORKS)}")
    own = run.schedule == default_schedule(run.method.layered)  # the method's own pipeline: the paper's evaluation
    result = evaluate(run.model, run.hardware, run.config(), assumptions=_assumptions(convention, dp_network),
                      form=PREDICTION_FORM, schedule=None if own else run.schedule, n_v=run.ideal_n_v)
    return result.efficiency


def predicted_step_time(run: Run, convention: str = "physical", dp_network: str = "per-gpu") -> float:
    """The ideal model's step time: the run's work at peak flop/s over the evaluator's efficiency."""
    if convention not in CONVENTIONS:
        raise UserInputError(f"convention={convention!r} must be one of {', '.join(CONVENTIONS)}")
    efficiency = ideal_efficiency(run, convention, dp_network)
    peak = run.hardware.at_precision(run.precision).peak_flop_per_s
    return work_flops(run) / (run.n_gpu * peak * efficiency)
