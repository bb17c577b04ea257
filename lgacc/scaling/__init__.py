"""Scaling sweeps over the X_[x] family (sec:scaling_analysis, sec:additional_considerations).

Every row is the fastest configuration the search (:func:`lgacc.search.fastest`,
"3d" parallelism, the paper's "Optimal configuration" rules) finds for one model
X_[x], one method (baseline, partitioned, improved) and one *scenario*:

``limited`` (``fig:scaling_limited``)
    the hardware as given: NVLink tensor parallelism up to the node size (16 on
    the reference HGX node); beyond a node the evaluator sends tensor-parallel
    traffic over InfiniBand, which the search only keeps where it pays.
``unlimited`` (``fig:scaling_unlimited``)
    no node-size limit: tensor parallelism over NVLink at any degree.
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

Limits (the prose claims) are found on this grid, then refined on every such
``x`` in the bracketing interval: a feasibility limit is reported between the
largest feasible model and the next one (geometric mean), a time limit by
log-log interpolation of the training time.

The package has three modules: :mod:`~lgacc.scaling.grid` (the models swept, the scenarios,
one row per model), :mod:`~lgacc.scaling.sweeps` (the figures' sweeps) and
:mod:`~lgacc.scaling.limits` (the size limits of the prose claims).  Every public name is
re-exported here.
"""

from __future__ import annotations

from . import bounds, grid, limits, sweeps
from .bounds import *  # noqa: F401,F403
from .grid import *  # noqa: F401,F403
from .limits import *  # noqa: F401,F403
from .sweeps import *  # noqa: F401,F403

__all__ = [*grid.__all__, *sweeps.__all__, *limits.__all__, *bounds.__all__]
