"""The fit stays inside the calibration's own range: a simplex step past ``kappa = 1.5`` is a worse point, not an
error (adding Nemotron-4 15B's three runs made one leave-one-publication-out fit step to ``kappa = e^0.5`` and
``lgacc validate`` stop with "calibration kappa=1.648... must be in (0, 1.5]")."""

from __future__ import annotations

import math

from lgacc.studies.validation import load_runs
from lgacc.studies.validation.calibrated import KAPPA_MAX, fit_runs, nelder_mead, objective


def test_the_loss_is_infinite_outside_the_kappa_range_and_finite_inside():
    runs = fit_runs(load_runs())[:6]
    loss = objective(runs)
    assert math.isinf(loss([math.log(KAPPA_MAX) + 0.01, 0.0]))
    assert math.isfinite(loss([math.log(KAPPA_MAX) - 0.01, 0.0]))
    assert math.isfinite(loss([math.log(0.5), 0.0]))


def test_a_simplex_pushed_past_the_range_turns_back():
    # a function that keeps improving as kappa grows: unconstrained, the simplex would walk to kappa >> 1.5
    def falling(x):
        return math.inf if math.exp(x[0]) > KAPPA_MAX else -x[0] + x[1] ** 2

    best = nelder_mead(falling, [math.log(KAPPA_MAX) - 0.05, 0.0])
    assert math.exp(best[0]) <= KAPPA_MAX
    assert math.exp(best[0]) > KAPPA_MAX * 0.97
