"""How robust are the paper's conclusions?  Its headline results under each assumption moved alone.

The paper makes several choices once: the critical-batch constant ``K_c`` of
``eq:critical_batch`` (calibrated on GPT-3 at 3.2 M tokens), a 16-GPU node, the
25 % overhead cap of ``eq:overhead_condition``, perfect overlap, "GB" read as
GiB, whole layers per pipeline stage and whole heads per tensor-parallel
device, a 25 Gb/s Ethernet share and the X family's depth-to-width ratio.
Each :class:`Dimension` moves one of them over a range of values (the paper's
value included) and leaves the others at the paper's value.

For every value, :func:`headline` computes the paper's headline results with the
search (:func:`lgacc.search.fastest`, "3d" parallelism), never with a formula
retyped here:

* the fastest X160 configuration of the baseline and of the improved method
  (time and GPU count, ``table:parallel_methods_comparison``) and their ratio,
  the improved-over-baseline speed-up ("at least twice as fast", sec:intro);
* the improved method's memory per GPU there ("4.72 GB, 17 times less than the
  memory available", sec:trillion_parameter);
* the largest model the improved method trains within one month and one year
  (sec:scaling_analysis), found by bisection over the X family with the search
  (:func:`time_limit`), interpolated like :func:`lgacc.scaling.time_limit`;
* the slowdown of X160 when InfiniBand is replaced by the Ethernet share
  (sec:slow_network, "Ethernet is enough").

The switches are those of :class:`lgacc.model.assumptions.Assumptions` (the fidelity
options of the evaluator and the search), the hardware spec
(:meth:`lgacc.model.hardware.Hardware.replace`), the search's ``max_overhead`` and the
shape of the model family (:func:`family_model`).  :data:`CONCLUSIONS` then
classifies each result against the paper's printed claim (``data/paper/claims.yaml``):
*holds*, *weakens* or *reverses* (:func:`verdicts`).

One module per job, each importing only those above it:

=================  ==========================================================================
module             job
=================  ==========================================================================
``grid``           the assumptions and their ranges: :class:`Setting`, :class:`Dimension`,
                   :func:`dimensions`, :func:`family_model`
``compute``        the headline results at every point with the search: :func:`headline`,
                   :func:`time_limit`, :func:`sensitivity_rows` (kept on disk)
``conclusions``    holds, weakens or reverses: :data:`CONCLUSIONS`, :func:`classify`,
                   :func:`verdicts` and their sentences and table
``presentation``   the rows as tables and a tornado chart: :func:`compact_frame`,
                   :func:`swings`, :func:`tornado_figure`
=================  ==========================================================================

This package re-exports every public name of the four, so ``from lgacc import
sensitivity as S`` and ``S.<name>`` reach all of them.
"""

from __future__ import annotations

from . import compute, conclusions, grid, presentation  # noqa: E402  (the submodules, for their __all__)
from .compute import (
    PARALLELISM,
    RESULT_KEYS,
    TRILLION_X,
    Headline,
    Limit,
    SensitivityRow,
    gpu_resident_bytes,
    headline,
    limit_ladder,
    sensitivity_rows,
    time_limit,
)
from .conclusions import (
    CONCLUSIONS,
    REVERSAL_FACTOR,
    VERDICTS,
    Conclusion,
    classify,
    conclusion_sentences,
    verdict_cell,
    verdict_table,
    verdicts,
)
from .grid import DIVISIBILITY, Dimension, Setting, dimensions, family_model
from .presentation import (
    COMPACT_COLUMNS,
    TORNADO_RESULTS,
    UNBOUNDED_WORDS,
    compact_frame,
    rank,
    rows_frame,
    swings,
    tornado_figure,
    unmoved,
)

# every public name of the four modules, as the single module exported them
__all__ = [*grid.__all__, *compute.__all__, *conclusions.__all__, *presentation.__all__]
