"""The recipe's ``vocabulary_chunks``: Llama 3's pipeline, where the embedding and the head each take one layer's place
(Dubey et al. 2024, section 3.3.2), in the calibrated step (lgacc.model.calibrated.step._vocabulary_chunks)."""

from __future__ import annotations

import pytest

from lgacc.errors import UserInputError
from lgacc.model.calibrated import Recipe, expected
from lgacc.model.calibrated.expected import expected_many
from lgacc.model.calibrated.parameters import fitted_calibration
from lgacc.model.config import TrainingConfig
from lgacc.model.transformer import load_model

LLAMA = load_model("llama-3-405b")  # 126 layers: on 16 stages, 7.875 a stage evenly, 8 with the two vocabulary slots
PIPELINE = TrainingConfig(method="baseline", n_b=1, n_l=16, n_a=8, n_mu=32, b_mu=1)


def _step(config, vocabulary_chunks: bool, n_v: int = 4):
    # CUDA graphs: no host floor, so the device's terms alone make the step
    recipe = Recipe(recompute="none", cuda_graphs=True, vocabulary_chunks=vocabulary_chunks)
    return expected(LLAMA, "h100-sxm", config, recipe=recipe, schedule="interleaved", n_v=n_v,
                    calibration=fitted_calibration())


def _parts(vocabulary_chunks: bool) -> dict[str, float]:
    recipe = Recipe(recompute="none", cuda_graphs=True, vocabulary_chunks=vocabulary_chunks)
    out = expected_many(LLAMA, "h100-sxm", "baseline", n_b=1, n_l=16, n_a=8, n_mu=32, b_mu=1, recipe=recipe,
                        schedule="interleaved", n_v=4, calibration=fitted_calibration())
    return {key: float(value) for key, value in out.items()}


def test_the_slowest_stage_is_a_full_one_or_the_last_by_hand():
    parts, llama = _parts(False), _parts(True)
    layer = parts["layer_forward"] + parts["layer_backward"]
    transfers = parts["stage_transfers"]
    assert layer > 0 and transfers > 0 and llama["layer_forward"] == parts["layer_forward"]
    # evenly: 126 / 16 layers and the head (or the embedding, the larger) on the last stage
    vocabulary = parts["pipeline_s"] / 32 - (126 / 16) * layer - transfers
    assert vocabulary > 0
    # Llama 3's: 8 layers on a full stage, 7 and the head on the last
    by_hand = max(8 * layer, 7 * layer + vocabulary) + transfers
    assert llama["pipeline_s"] == pytest.approx(32 * by_hand, rel=1e-9)
    assert llama["pipeline_s"] < parts["pipeline_s"]  # the head costs less than the 7/8 layer it replaces
    # the ramp passes full stages: 8 layers instead of 7.875
    ratio = (8 * layer + transfers) / (126 / 16 * layer + transfers)
    assert llama["bubble_s"] == pytest.approx(parts["bubble_s"] * ratio, rel=1e-9)


def test_without_a_pipeline_the_layout_changes_nothing():
    config = TrainingConfig(method="baseline", n_b=1, n_l=1, n_a=8, n_mu=2, b_mu=1)
    recipe = Recipe(recompute="full", cuda_graphs=True)
    single = expected(LLAMA, "h100-sxm", config, recipe=recipe, calibration=fitted_calibration())
    chunked = expected(LLAMA, "h100-sxm", config, recipe=recipe.replace(vocabulary_chunks=True),
                       calibration=fitted_calibration())
    assert chunked.step_time_s == single.step_time_s


def test_the_two_vocabulary_chunks_allow_n_l_n_v_up_to_d_l_plus_2():
    assert _step(PIPELINE, True, n_v=8).step_time_s > 0  # 16 x 8 = 128 = 126 + 2
    with pytest.raises(UserInputError, match=r"16 x 8 = 128 exceeds the Llama-3-405B layer count d_l=126 \("):
        _step(PIPELINE, False, n_v=8)
    with pytest.raises(UserInputError, match="plus the embedding's and the head's chunks") as caught:
        _step(PIPELINE, True, n_v=9)
    assert "\n" not in str(caught.value)


def test_the_recipe_field_reads_from_the_command_line_form():
    assert Recipe.from_strings(["vocabulary-chunks=yes"]).vocabulary_chunks is True
    with pytest.raises(UserInputError, match="vocabulary_chunks"):
        Recipe(vocabulary_chunks="yes")
