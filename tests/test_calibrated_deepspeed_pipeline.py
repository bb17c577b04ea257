"""DeepSpeed's PipelineEngine sends each stage output split over the tensor-parallel ranks but each gradient whole
(``is_grad_partitioned = False``), each send and receive a blocking instruction of its own: the calibrated step's
transfers (lgacc.model.calibrated.step._stage_transfers)."""

from __future__ import annotations

import pytest

from lgacc.model.calibrated import Recipe
from lgacc.model.calibrated.expected import expected_many
from lgacc.model.calibrated.parameters import fitted_calibration

N_A = 8


def _transfers(deepspeed_pipeline: bool, b_mu: int, n_l: int = 4) -> float:
    recipe = Recipe(recompute="full", cuda_graphs=True, deepspeed_pipeline=deepspeed_pipeline)
    out = expected_many("mt-nlg-530b", "h100-sxm", "baseline", n_b=1, n_l=n_l, n_a=N_A, n_mu=8, b_mu=b_mu,
                        recipe=recipe, schedule="1f1b", calibration=fitted_calibration())
    return float(out["stage_transfers"])


def test_the_gradient_goes_whole_the_output_split_by_hand():
    # each transfer costs alpha + bytes / beta; doubling the micro-batch doubles the bytes: the split transfer's
    # bandwidth term is half the difference (two transfers a pass), and the whole gradient costs n_a of them
    one, two = _transfers(False, 1), _transfers(False, 2)
    split = (two - one) / 2
    assert split > 0
    # and its blocking sends and receives follow one another: twice the exchanges of a batched send-and-receive
    assert _transfers(True, 1) == pytest.approx(2 * (one + (N_A - 1) * split), rel=1e-9)


def test_without_a_pipeline_there_is_nothing_to_send():
    assert _transfers(True, 1, n_l=1) == _transfers(False, 1, n_l=1) == 0
