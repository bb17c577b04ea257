"""The paper's configuration-selection rules as a search (sec:methodology, "Optimal configuration").

For a model, a hardware spec, a method and the allowed parallelism, :func:`fastest`
returns the fastest configuration that obeys the paper's rules, and
:func:`cheapest` the one with the fewest GPUs that trains within a target time
(``table:smaller_cluster``).  Nothing here is typed in from the paper's tables:
every configuration comes out of :func:`lgacc.model.evaluator.evaluate_many`.

The rules, as stated in "Optimal configuration" and appendix sec:resource_usage,
each a filter on candidate configurations (:func:`rule_masks`):

``structure``
    Only the allowed parallel dimensions exceed one.  A pipeline stage holds whole
    layers (``n_l`` divides ``d_l``) and tensor parallelism splits whole heads
    (``n_a`` divides ``d_a``, at most ``d_a``; the assumptions ``divisible_heads`` and ``heads_cap``:
    without the cap the candidates reach the largest ``n_a`` the overhead cap allows,
    :func:`~lgacc.search.candidates.tensor_cap`).  "In the partitioned approach, we do not consider
    pipeline parallelism": ``n_l = 1``.
``critical batch``
    "We train at or slightly below the critical batch size": ``b <= b_c``, and for
    the fastest configuration ``b`` is the largest multiple of ``n_b b_mu`` below
    ``b_c`` (``n_mu = floor(b_c / (n_b b_mu))``).
``micro-batches``
    ``n_mu >= n_l``.  The extra micro-batches that overlap the pipeline transfers are
    not imposed: they are one more candidate, kept where faster (``table:parallel_methods_comparison``
    overlaps in the baseline and not in the improved method, as the paper says).
``GPU budget``
    ``n_gpu <= max_gpus`` when a budget is given.
``memory``
    The memory fits in the GPU (with offload: the non-offloadable part); none under
    ``memory_limit="output"``, where memory is reported, not fitted, and nothing is offloaded.
``overhead cap``
    Every overhead but the bubble is at most ``max_overhead`` (25 %,
    ``eq:overhead_condition``): the gradient reduction with pipeline parallelism
    and tensor parallelism (NVLink up to the node size, InfiniBand beyond).
``bottleneck``
    "The smallest micro-batch size that does not cause a communication
    bottleneck": the overlapped transfers (gradient reduction, state and checkpoint
    offload, the PCIe link shared by offload and InfiniBand) have zero overhead.
    The baseline's gradient reduction with a pipeline is not overlapped and is only
    capped.
``offload``
    "Offload when needed (and possible)": only when the configuration does not
    fit in GPU memory otherwise, and only if offloading is allowed.

Among the configurations that pass, the fastest wins (then fewer GPUs, then the
smaller micro-batch).  One rule is an order, not a filter: "In the baseline, we
select the highest possible pipeline parallelism", so with a pipeline allowed the
baseline first maximizes ``n_l``.

The search (:func:`fastest`) visits a pruned set of candidates; the exhaustive
:mod:`lgacc.search.reference` visits every integer configuration within bounds
with the same rules and objective, and the tests check the two agree.  Pruning:

* ``n_mu`` follows from ``(n_b, b_mu)`` (``critical batch``), and only the largest
  ``n_b`` for each ``n_mu`` is kept: the intensities depend on ``b / n_b``, not
  on ``n_b``, and more GPUs at the same efficiency are faster;
* micro-batch sizes above the smallest one that is bottleneck-free at ``n_mu =
  n_l`` are dropped (intensities grow with ``b_mu`` and ``n_mu``);
* candidates are visited by decreasing GPU count and the visit stops once the GPU
  count alone (at perfect efficiency) cannot beat the best time found;
* with memory an output, for the fastest configuration only the largest allowed ``n_a`` of each link is kept
  where that is exact (:func:`~lgacc.search.candidates.tensor_prunable`).

The state partition.  Every search takes ``partitioned`` (``None``: the
method's default, partitioned for the partitioned and improved methods).  With
``partitioned=False`` the improved method is layered gradient accumulation and
the modular pipeline without the partition: the dotted line of
``fig:scaling_Ethernet`` ("For the smallest models, the partition can be
avoided", sec:slow_network).  The rules follow the partition, not the method's
name: the no-pipeline rule of ``structure`` holds for a partitioned method
without layered gradient accumulation, and the non-overlapped gradient
reduction (``bottleneck``) and the highest-pipeline order for an unpartitioned
one.

The package, one job per module (each imports only those above it):

* :mod:`.parallelism` -- the :class:`Parallelism` enum and its parser;
* :mod:`.request` -- :class:`SearchRequest`, one search question as a frozen value;
* :mod:`.rules` -- :data:`RULES` as masks (:func:`rule_masks`), the one preference order
  (:func:`preference_keys`, :func:`select`);
* :mod:`.candidates` -- the pruned candidate set;
* :mod:`.explain` -- why the answer, or why none;
* :mod:`.result` -- :class:`SearchResult`;
* :mod:`.core` -- :func:`fastest` and :func:`cheapest`.
"""

from .candidates import candidates, dimension_values, fastest_tensor_degrees, tensor_cap
from .core import cheapest, fastest
from .parallelism import Parallelism, parse_parallelism
from .request import CANDIDATE_KEYS, SearchRequest
from .result import SearchResult
from .rules import (
    OBJECTIVES,
    RULES,
    all_valid,
    bottleneck_free,
    divisors,
    preference_keys,
    request_masks,
    rule_masks,
    select,
)

__all__ = [
    "Parallelism",
    "parse_parallelism",
    "SearchRequest",
    "SearchResult",
    "CANDIDATE_KEYS",
    "RULES",
    "OBJECTIVES",
    "rule_masks",
    "request_masks",
    "bottleneck_free",
    "preference_keys",
    "select",
    "all_valid",
    "divisors",
    "candidates",
    "dimension_values",
    "tensor_cap",
    "fastest_tensor_degrees",
    "fastest",
    "cheapest",
]
