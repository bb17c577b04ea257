"""The rotary position embedding's kernels in the calibrated model (recipe rope_kernel, model rotary)."""

from __future__ import annotations

import pytest

from lgacc.errors import UserInputError
from lgacc.model.calibrated import Recipe
from lgacc.model.calibrated import symbols as S
from lgacc.model.calibrated.recipe import ROPE_PASSES, rope_traffic
from lgacc.model.calibrated.step import layer_times
from lgacc.model.symbols import b_mu, d_s, n_a
from lgacc.model.transformer import Transformer, load_model, model_from_mapping


def test_each_implementation_moves_the_bytes_counted_from_its_code():
    # Transformer Engine's fused rotation: read the half-precision value, write the rotated one
    fused = 2 + 2
    # torchtitan's eager complex fp32: .float() (2 + 4), the complex product (4 + 4), type_as (4 + 2)
    complex_fp32 = (2 + 4) + (4 + 4) + (4 + 2)
    assert rope_traffic("fused") == (fused, 1) == (4, 1)
    assert rope_traffic("complex") == (complex_fp32, 3) == (20, 3)
    assert set(ROPE_PASSES) == {"fused", "complex"}


def test_the_rotated_width_is_the_queries_and_keys_heads():
    llama = load_model("llama-3-8b")  # 32 query heads, 8 key/value heads of 128
    assert llama.rotary and llama.rotary_width == (32 + 8) * 128 == 5120
    deepseek = load_model("deepseek-v3")  # 128 heads' rotary parts of 64 and one shared key part
    assert deepseek.rotary and deepseek.rotary_width == (128 + 1) * 64
    assert load_model("gpt-3").rotary is False and load_model("gpt-3").rotary_width == 0  # learned positions
    assert Transformer(name="t", d_l=2, d_m=64, d_a=4, d_h=16, d_s=32).rotary_width == 0


def test_a_model_files_rotary_is_true_or_false_in_one_line():
    spec = {"name": "t", "d_l": 2, "d_m": 64, "d_a": 4, "d_h": 16, "d_s": 32, "rotary": "yes"}
    with pytest.raises(UserInputError, match="rotary"):
        model_from_mapping(spec)
    assert model_from_mapping({**spec, "rotary": True}).rotary_width == (4 + 4) * 16


def test_a_bad_rope_kernel_is_refused_in_one_line():
    with pytest.raises(UserInputError, match=r"recipe rope_kernel='eager' must be one of fused, complex"):
        Recipe(rope_kernel="eager")
    assert Recipe.from_strings(["rope_kernel=complex"]).rope_kernel == "complex"


def _values(changes=None):
    values = {S.e_hbm: 0.9, S.beta_hbm: 3.35e12, S.t_k: 3e-6, S.fa: 1, b_mu: 2, d_s: 4096, n_a: 2,
              S.d_R: 5120, S.g_R: 20, S.n_R: 3, S.e_N: 0, S.e_A: 0}
    values.update(changes or {})
    return values


@pytest.mark.parametrize("part", ["forward", "backward"])
def test_each_pass_streams_the_rotation_once_and_launches_its_kernels(part):
    """Forward and backward each grow by the rotation's bytes over the streaming rate (not k_B times them in the
    backward: it runs the same kernels) and by 2 n_R fixed kernel times, by hand."""
    expr = layer_times()[part]
    with_rope = expr.subs(_values())
    without = expr.subs(_values({S.d_R: 0}))
    tokens = 2 * 4096
    by_hand = 20 * 5120 / 2 * tokens / (0.9 * 3.35e12) + 2 * 3 * 3e-6
    assert float((with_rope - without).subs({S.k_B: 1.5})) == pytest.approx(by_hand, rel=1e-12)
    # the fused kernel: 4 bytes, one kernel a tensor
    fused = float((expr.subs(_values({S.g_R: 4, S.n_R: 1})) - without).subs({S.k_B: 1.5}))
    assert fused == pytest.approx(4 * 5120 / 2 * tokens / (0.9 * 3.35e12) + 2 * 3e-6, rel=1e-12)


def test_a_model_without_rotary_positions_pays_nothing_whatever_the_recipe():
    expr = layer_times()["forward"]
    assert (expr.subs(_values({S.d_R: 0, S.g_R: 20, S.n_R: 3})) - expr.subs(_values({S.d_R: 0, S.g_R: 4, S.n_R: 1}))
            ).subs({S.k_B: 1.5}) == 0


def test_torchtitans_eager_runs_rotate_in_complex_fp32_and_compiled_ones_fused():
    from lgacc.studies.validation.runs import load_runs

    runs = load_runs()
    for run in runs:
        if run.id.startswith("torchtitan2024-llama") or run.id.startswith("torchtitan2024-h100-llama"):
            assert run.recipe.rope_kernel == "complex", run.id
        elif "float8" in run.id:
            assert run.recipe.rope_kernel == "fused", run.id
        else:
            assert run.recipe.rope_kernel == "fused", run.id
    assert any(run.recipe.rope_kernel == "complex" for run in runs)
