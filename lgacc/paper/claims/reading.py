"""One reading of the paper: a complete assignment of every switch the claims' computations depend on.

A :class:`PaperReading` gives each switch one value.  :data:`PAPER_READING` is the package's reading of the
paper, chosen once for the whole paper (each value justified in :data:`SWITCHES`: a quote of the paper or the
printed numbers it reproduces); every claim is graded under it (:mod:`lgacc.paper.claims.registry`).  The
*reading matrix* recomputes every claim under :data:`COLUMNS`: the paper reading, each switch moved alone, and
the combinations an explanation of the paper has used; a verdict is read from the matrix
(:func:`lgacc.paper.claims.grading.verdict_from_matrix`).

Two kinds of switch:

* ``scaling`` -- a choice the paper leaves open in its analysis (the grid of models, whole heads per device, ...).
  A claim that agrees only with one moved is ``differs``: the matrix names the reading and what it breaks.
* ``fact`` -- a documented fact outside the analysis (GPT-3's published flop count, the paper multiplying by its
  rounded critical batch, the prose's decimal GB).  It may *explain* a claim, applied to every claim it touches,
  and only when it turns no reproduced claim into a miss.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from lgacc.model.assumptions import Assumptions, apply_to_hardware, paper_gb_bytes
from lgacc.model.hardware import Hardware
from lgacc.scaling import SCALING_ASSUMPTIONS

__all__ = ["PaperReading", "PAPER_READING", "Switch", "SWITCHES", "COLUMNS", "SCALING", "FACT", "column_name",
           "PAPER_NAME", "implied_infiniband_threshold", "TENSOR_ONSET"]

#: The overhead cap the paper states (eq:overhead_condition, "We impose a maximum overhead of 25%").
PAPER_CAP = 0.25
SCALING = "scaling"
FACT = "fact"
PAPER_NAME = "paper reading"
#: The value of ``infiniband_threshold`` that reads the spec's own InfiniBand bandwidth.
SPEC = "spec"
#: The value that sets the InfiniBand threshold to the one the paper's "~25 trillion parameters" implies.
TENSOR_ONSET = "implied by ~25 T"


@dataclass(frozen=True)
class PaperReading:
    """Every switch the graded computations read, one value each (see :data:`SWITCHES` for what each means)."""

    scaling_grid: str = "pow2"
    divisible_heads: bool = False
    heads_cap: bool = False
    memory_limit: str = "output"
    divisible_layers: bool = True
    pipeline_overlap: str = "extra-micro-batches"
    pipeline_placement: str = "inter-node"
    infiniband_threshold: str = SPEC
    cluster_target: str = "calendar"
    flops_per_token: int = 8
    critical_batch: str = "computed"
    gb: str = "GiB"

    def replace(self, **changes: Any) -> "PaperReading":
        return dataclasses.replace(self, **changes)

    def changes(self) -> dict[str, Any]:
        """The switches this reading moves away from :data:`PAPER_READING`, in field order."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if getattr(self, f.name) != getattr(PAPER_READING, f.name)}

    @property
    def name(self) -> str:
        return column_name(self.changes())

    def assumptions(self) -> Assumptions:
        """The evaluator's and the search's switches under this reading."""
        return SCALING_ASSUMPTIONS.replace(
            scaling_grid=self.scaling_grid, divisible_heads=self.divisible_heads, heads_cap=self.heads_cap,
            memory_limit=self.memory_limit, divisible_layers=self.divisible_layers,
            pipeline_overlap=self.pipeline_overlap, pipeline_placement=self.pipeline_placement, gb=self.gb)

    def hardware(self, spec: Hardware) -> Hardware:
        """The spec as this reading sees it: its InfiniBand bandwidth set from the implied threshold when asked
        (``gb`` is applied by the evaluator, :func:`lgacc.model.assumptions.apply_to_hardware`)."""
        if self.infiniband_threshold == SPEC:
            return spec
        threshold = implied_infiniband_threshold(spec)
        return spec.replace(infiniband_bandwidth_bytes_per_s=spec.peak_flop_per_s / threshold)

    @property
    def gb_bytes(self) -> float:
        """Bytes of one of the paper's "GB" under this reading."""
        return paper_gb_bytes(self.assumptions())

    def gpu_memory(self, spec: Hardware) -> float:
        """The GPU's memory in bytes as this reading reads the spec's number."""
        return apply_to_hardware(spec, self.assumptions()).memory_bytes


PAPER_READING = PaperReading()


def column_name(changes: dict[str, Any]) -> str:
    """``{}`` -> ``"paper reading"``; ``{"scaling_grid": "fine"}`` -> ``"scaling_grid='fine'"``."""
    return ", ".join(f"{k}={v!r}" for k, v in changes.items()) or PAPER_NAME


@dataclass(frozen=True)
class Switch:
    """One switch: its paper value, the other values the matrix moves it to, its kind and why the paper value."""

    field: str
    others: tuple[Any, ...]
    kind: str
    meaning: str
    why: str


#: Every switch of :class:`PaperReading`, with the justification of its paper value.
SWITCHES: tuple[Switch, ...] = (
    Switch("scaling_grid", ("fine",), SCALING,
           "The models a scaling limit is read between: x = 2^k ('pow2') or every grid model around the limit "
           "('fine'), log-log between neighbours.",
           "The paper does not say which models it evaluated. On x = 2^k its one-month and one-year pairs come out "
           "together (4.5 T with 13 GB, 50 T with 62 GB: printed 'limits of about 4.5 and 50 trillion parameters, "
           "with total memory usages of 13 and 62 GB'), and '90 trillion'; on the fine grid 50 T and 90 T do not."),
    Switch("divisible_heads", (True,), SCALING,
           "Tensor parallelism splits whole heads: n_a divides d_a.",
           "The scaling figures' curves are smooth in the model size ('Approximate minimal memory usage and training "
           "time'); with whole heads only, the tensor degree jumps with d_a. The paper is silent otherwise."),
    Switch("heads_cap", (True,), SCALING,
           "At most one tensor-parallel device per head, n_a <= d_a.",
           "'At extreme scales (~25 trillion parameters) it becomes possible to efficiently use tensor parallelism "
           "over InfiniBand with n_a > 16': the degree is bounded by the 25 % overhead cap, not by the heads."),
    Switch("memory_limit", ("constraint",), SCALING,
           "Memory a rule (configurations must fit) or an output (the fastest configuration's memory is reported).",
           "'80 GB is enough to train models up to 280 trillion parameters': the scaling figures report the memory of "
           "the fastest configuration past 80 GB. On X160 both choices pick the same configurations (tested)."),
    Switch("divisible_layers", (False,), SCALING,
           "A pipeline stage holds a whole number of layers: n_l divides d_l.",
           "Modular pipeline: 'each device holds d_l / n_l layers'; every printed configuration has n_l dividing d_l."),
    Switch("pipeline_overlap", ("always", "never"), SCALING,
           "When pipeline transfers are overlapped.",
           "'This can be addressed by adding a small number of extra micro-batches' (sec:resource_usage); the "
           "printed tables come out with extra micro-batches."),
    Switch("pipeline_placement", ("intra-node",), SCALING,
           "Whether pipeline traffic may use NVLink when the model-parallel group fits in a node.",
           "The paper is silent; its tables come out with InfiniBand."),
    Switch("infiniband_threshold", (TENSOR_ONSET,), SCALING,
           "The InfiniBand intensity threshold: the spec's (peak flop/s over the printed bandwidth) or the one the "
           "paper's '~25 trillion parameters' onset of tensor parallelism over InfiniBand implies.",
           "table:hardware_bandwidth prints the bandwidth; its threshold is printed there too and reproduced."),
    Switch("cluster_target", ("printed",), SCALING,
           "The target time of 'one month' and 'six months': the calendar's (a twelfth and a half of a year) or the "
           "time printed in the paper's own row of table:smaller_cluster.",
           "'the target training times of one and six months' (sec:trillion_parameter)."),
    Switch("flops_per_token", (6,), FACT,
           "Flops per token and parameter of a training step: 8 (forward, backward, recomputation) or 6 (without "
           "recomputation, as GPT-3's published 3640 petaflop/s-days were counted, Brown et al. 2020).",
           "'activation checkpoints at the output of each transformer layer' and 'a 33% increase in computation': "
           "the paper's step is 8 flops per token and parameter (derivation compute_per_batch, 8 b d_s p)."),
    Switch("critical_batch", ("printed",), FACT,
           "The critical batch of X160 as computed by eq:critical_batch, or rounded as the paper prints it.",
           "eq:critical_batch computes it; the paper prints it rounded ('around', data/paper/claims.yaml)."),
    Switch("gb", ("GB",), FACT,
           "The paper's 'GB': binary (GiB) or decimal.",
           "table:hardware_bandwidth and every printed memory of the tables come out only with GiB; some prose "
           "numbers read as decimal."),
)

#: Combinations of switches an explanation of the paper has used (shown as their own columns).
COMBINATIONS: tuple[dict[str, Any], ...] = (
    {"divisible_heads": True, "scaling_grid": "fine"},
    {"memory_limit": "constraint", "heads_cap": True, "divisible_heads": True},
    {"pipeline_placement": "intra-node", "divisible_layers": False},
    {"pipeline_overlap": "always", "divisible_layers": False},
)


def _columns() -> tuple[PaperReading, ...]:
    columns = [PAPER_READING]
    for switch in SWITCHES:
        columns += [PAPER_READING.replace(**{switch.field: value}) for value in switch.others]
    columns += [PAPER_READING.replace(**changes) for changes in COMBINATIONS]
    return tuple(columns)


#: The matrix's columns: the paper reading, each switch moved alone, then the combinations.
COLUMNS: tuple[PaperReading, ...] = _columns()


def kind_of(reading: PaperReading) -> str:
    """``fact`` when the reading moves fact switches only, else ``scaling`` (the paper reading: ``paper``)."""
    moved = reading.changes()
    if not moved:
        return "paper"
    kinds = {s.kind for s in SWITCHES if s.field in moved}
    return FACT if kinds == {FACT} else SCALING


#: The printed onset of tensor parallelism over InfiniBand (sec:methodology, "~25 trillion parameters"),
#: read from data/paper/claims.yaml by :func:`implied_infiniband_threshold`.
ONSET_CLAIM = "tensor_over_infiniband_above"


def tensor_onset(spec: Hardware, assumptions: Assumptions | None = None) -> tuple[float, str] | None:
    """The model size (parameters) from which 17 devices of tensor parallelism over InfiniBand cost at most the
    25 % cap (eq:tensor_intensity against the InfiniBand threshold, eq:overhead_condition), read log-log along the
    X family (every even x), and a sentence saying how; ``None`` when never reached up to X4096."""
    from lgacc.model.evaluator import evaluate_many
    from lgacc.model.transformer import x_model

    assumptions = assumptions or PAPER_READING.assumptions()
    node = int(spec.gpus_per_node)

    def overhead(x: int) -> float:
        r = evaluate_many(x_model(x), spec, "improved", n_b=1, n_a=node + 1, assumptions=assumptions)
        return float(r["tensor"])

    # the overhead falls with the model's width: a coarse scan finds the bracket, every even x inside it is read
    coarse = [x for x in range(64, 4097, 32) if overhead(x) <= PAPER_CAP]
    if not coarse or coarse[0] == 64:
        return None
    previous = None
    for x in range(coarse[0] - 32, coarse[0] + 1, 2):
        cost = overhead(x)
        if cost <= PAPER_CAP and previous is not None:
            (x0, c0), p0, p1 = previous, float(x_model(previous[0]).p), float(x_model(x).p)
            t = (math.log(PAPER_CAP) - math.log(c0)) / (math.log(cost) - math.log(c0))
            p = math.exp(math.log(p0) + t * (math.log(p1) - math.log(p0)))
            return p, (f"{node + 1}-way tensor parallelism over InfiniBand (threshold {spec.threshold('infiniband'):.4g} "
                       f"flop/B) costs {c0:.3f} at X{x0} ({p0:.3g} parameters) and {cost:.3f} at X{x} ({p1:.3g}); it "
                       f"reaches the 25 % cap at {p:.3g} parameters, log-log")
        previous = (x, cost)
    return None


@lru_cache(maxsize=8)
def implied_infiniband_threshold(spec: Hardware) -> float:
    """The InfiniBand threshold (flop/B) at which :func:`tensor_onset` falls on the printed "~25 trillion
    parameters" (bisection on the threshold; the onset scales with it)."""
    from .grading import printed_claims

    target = next(c.paper for c in printed_claims() if c.id == ONSET_CLAIM)
    peak = spec.peak_flop_per_s
    low, high = spec.threshold("infiniband") / 4, spec.threshold("infiniband") * 4

    def onset(threshold: float) -> float:
        found = tensor_onset(spec.replace(infiniband_bandwidth_bytes_per_s=peak / threshold))
        return math.inf if found is None else found[0]
    while high / low > 1 + 1e-4:
        middle = math.sqrt(low * high)
        low, high = (middle, high) if onset(middle) < target else (low, middle)
    return math.sqrt(low * high)
