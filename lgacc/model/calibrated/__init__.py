"""The calibrated model: what real training runs pay, beside the paper's ideal bound.

The paper's model (:mod:`lgacc.model.evaluator`) runs every kernel at peak flop/s and multiplies
``1 / (1 + overhead)`` factors: an upper bound on speed, and the model of the reproduction pages.
This model predicts instead, for planning: each term is named after what it models, derived with
sympy where it has a closed form, and combined physically (times that do not overlap add,
overlapped ones take the maximum), so that a faster GPU never gives a slower step.  Three global
parameters are fitted on measured runs only (``data/validation``, :mod:`lgacc.studies.validation`).

One module per job:

* :mod:`.symbols` -- the inputs (the paper's notation and what it lacks), unevaluated ``max``/``min``;
* :mod:`.shapes` -- tokens, head widths, GEMM shapes and parameters per device;
* :mod:`.gemm` -- matrix-multiply time from its shape: a saturating efficiency curve; fused attention;
* :mod:`.kernels` -- memory-bound kernels (norms, activations, softmax, optimizer) at HBM bandwidth;
* :mod:`.collectives` -- alpha-beta collectives, bus factors, links, hierarchical data parallelism;
* :mod:`.step` -- the step's physical composition (layers, pipeline schedule, overlaps);
* :mod:`.memory` -- memory per GPU: ZeRO stages, recomputation, sequence parallelism, attention;
* :mod:`.recipe` -- the framework's choices (:class:`~.recipe.Recipe`);
* :mod:`.parameters` -- the constants, fitted and fixed (:class:`~.parameters.Calibration`);
* :mod:`.program` -- the expressions as a flat program of array operations (data), run with NumPy;
* :mod:`.expected` -- evaluation: :func:`~.expected.expected_many`, :func:`~.expected.expected`.
"""

from .expected import MEMORY_PARTS, STEP_PARTS, Expected, expected, expected_many, programs
from .parameters import FITTED, PRIORS, Calibration, fitted_calibration
from .recipe import DEFAULT_RECIPE, RECOMPUTE, Recipe

__all__ = ["Expected", "expected", "expected_many", "programs", "STEP_PARTS", "MEMORY_PARTS", "Calibration",
           "fitted_calibration", "FITTED", "PRIORS", "Recipe", "DEFAULT_RECIPE", "RECOMPUTE"]
