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

Two derived sweeps:

:func:`constant_time_sweep` (``fig:scaling_constant_time``, "There is no memory wall")
    the memory-to-compute ratio needed to train in one month when data and
    pipeline parallelism are used as much as the critical batch allows and only
    tensor parallelism scales further (assumed free of overhead: "faster devices
    or faster network connections").  With ``n_b, n_l`` fixed, every memory term
    of the resource model divides by ``n_a`` as does the compute per GPU, so the
    ratio is the memory of one tensor-parallel *instance* over the compute it
    needs to finish in a month.  The dotted line is our reading of "a faster
    training scheme which is already possible on A100s": the ``limited``
    improved configuration, for the models it trains within a month, at its
    actual memory per A100 over the A100's peak.
:func:`offload_sweep` (``fig:scaling_offload``, sec:fast_checkpoints)
    for each method's fastest configuration, the arithmetic intensity (and the
    per-GPU bandwidth ``c_gpu / nu``) of offloading the training state and the
    activation checkpoints, to compare with the CPU-GPU, NVMe, hard-drive and
    Ethernet thresholds of ``table:hardware_bandwidth``.

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

from . import grid, limits, sweeps
from .grid import *  # noqa: F401,F403
from .limits import *  # noqa: F401,F403
from .sweeps import *  # noqa: F401,F403

__all__ = [*grid.__all__, *sweeps.__all__, *limits.__all__]
