"""Scaling sweeps over the X_[x] family (sec:scaling_analysis, sec:additional_considerations).

Every row is the fastest configuration the search (:func:`lgacc.search.fastest`,
"3d" parallelism, the paper's "Optimal configuration" rules) finds for one model
X_[x], one method (baseline, partitioned, improved) and one *scenario*:

``limited`` (``fig:scaling_limited``)
    the hardware as given: NVLink tensor parallelism up to the node size (16 on
    the reference HGX node); beyond a node the evaluator sends tensor-parallel
    traffic over InfiniBand, which the search only keeps where it pays.
``unlimited`` (``fig:scaling_unlimited``)
    no node-size limit: tensor parallelism over NVLink at any degree the overhead cap allows.
``ethernet`` (``fig:scaling_Ethernet``)
    25 Gb/s Ethernet per GPU instead of InfiniBand (sec:slow_network).  This
    scenario's sweep adds the paper's dotted line, :data:`NOT_PARTITIONED`: the
    improved method (layered gradient accumulation, modular pipeline) without
    the state partition ("For the smallest models, the partition can be avoided
    to further reduce the training time at a minimal memory cost"), searched
    with ``fastest(..., partitioned=False)``.

Two derived sweeps, :func:`constant_time_sweep` (``fig:scaling_constant_time``, "There is no
memory wall") and :func:`offload_sweep` (``fig:scaling_offload``, sec:fast_checkpoints), are
described in :mod:`lgacc.scaling.sweeps`.

Choice of models.  The X family has ``d_a = x/2`` heads and ``d_l = x`` layers,
and tensor (pipeline) parallelism needs a divisor of ``d_a`` (``d_l``).  An ``x``
with a prime ``x/2`` (X298 has 149 heads) cannot use tensor parallelism at all
and shows as a spurious spike.  The sweep therefore rounds each log-spaced target
to a multiple of ``min(32, 2^floor(log2(x/2)))``, so that from X64 on every model
has a head count divisible by 16, as X160 in the paper.

The scaling analysis is computed under the paper's reading of it, :data:`SCALING_ASSUMPTIONS` (memory an
output of the fastest configuration, not a rule; tensor parallelism by the 25 % overhead cap alone; limits
read on ``x = 2^k``).  Limits (the prose claims) are read along the curves, log-log between the two
neighbouring models of the grid where a curve crosses its level (the assumption ``scaling_grid``: ``x = 2^k``,
or this log-spaced grid refined to every such ``x`` between the bracketing models); with memory a rule, a
memory limit is the geometric mean of the last feasible model and the next.  :mod:`~lgacc.scaling.bounds`
gives the floors no configuration beats, the computation behind a ``paper inconsistent`` verdict.

The package has four modules: :mod:`~lgacc.scaling.grid` (the models swept, the scenarios,
one row per model, the scaling reading), :mod:`~lgacc.scaling.sweeps` (the figures' sweeps),
:mod:`~lgacc.scaling.limits` (the size limits of the prose claims) and :mod:`~lgacc.scaling.bounds` (the
floors).  Every public name is re-exported here.
"""

from __future__ import annotations

from . import bounds, grid, limits, sweeps
from .bounds import *  # noqa: F401,F403
from .grid import *  # noqa: F401,F403
from .limits import *  # noqa: F401,F403
from .sweeps import *  # noqa: F401,F403

__all__ = [*grid.__all__, *sweeps.__all__, *limits.__all__, *bounds.__all__]
