"""Norms and gated activations run eagerly as PyTorch operations (recipe norm_kernel, activation_kernel)."""

from __future__ import annotations

import pytest

from lgacc.errors import UserInputError
from lgacc.model.calibrated import Recipe
from lgacc.model.calibrated import symbols as S
from lgacc.model.calibrated.recipe import EAGER_ACTIVATION_PASSES, EAGER_NORM_PASSES, eager_traffic
from lgacc.model.calibrated.step import layer_times
from lgacc.model.symbols import b_mu, d_I, d_m, d_s, n_a


def test_torchtitans_eager_rmsnorm_moves_the_bytes_counted_from_autograd():
    # forward, per normalized value: x.float() 2 + 4, pow 4 + 4, mean 4, eps and rsqrt on the rows 0,
    # x * rsqrt 4 + 4, type_as 4 + 2, * weight 2 + 2
    forward = 6 + 8 + 4 + 0 + 0 + 8 + 6 + 4
    # backward: grad * weight 4, grad * output 6 and its sum 2, the cast 6, grad * rsqrt 8, grad * x 12 and its
    # sum 4, rsqrt's 0, mean's expand-and-divide 4, pow's copy 8, times 2 8, times grad 12, the two summed 12,
    # the cast back 6
    backward = 4 + 6 + 2 + 6 + 8 + 12 + 4 + 0 + 4 + 8 + 8 + 12 + 12 + 6
    assert eager_traffic(EAGER_NORM_PASSES) == (forward, backward, 8, 14) == (36, 92, 8, 14)


def test_torchtitans_eager_swiglu_moves_the_bytes_counted_from_autograd():
    # forward: silu reads a and writes (4), the product reads silu(a) and b and writes (6); backward: the
    # product's two gradients read the incoming gradient and the other factor and write (6 each), silu's backward
    # reads the gradient and a and writes (6)
    assert eager_traffic(EAGER_ACTIVATION_PASSES) == (4 + 6, 6 + 6 + 6, 2, 3) == (10, 18, 2, 3)


def test_a_bad_kernel_choice_is_refused_in_one_line():
    with pytest.raises(UserInputError, match=r"recipe norm_kernel='triton' must be one of fused, eager"):
        Recipe(norm_kernel="triton")
    with pytest.raises(UserInputError, match=r"recipe activation_kernel='jit' must be one of fused, eager"):
        Recipe(activation_kernel="jit")
    assert Recipe.from_strings(["norm_kernel=eager", "activation_kernel=EAGER"]).as_dict()["activation_kernel"] == "eager"


def _values(changes=None):
    """One layer of width 4096, feed-forward 14336 (gated), 2 x 4096 tokens over 2 tensor-parallel ranks on an H100,
    no rotary positions, FlashAttention, no dropout, no sequence parallelism."""
    values = {S.e_hbm: 0.9, S.beta_hbm: 3.35e12, S.e_nF: 0.6, S.e_nB: 0.36, S.k_B: 1.5, S.t_k: 3e-6, S.fa: 1,
              S.drop: 0, S.sp: 0, S.gated: 1, S.d_R: 0, b_mu: 2, d_s: 4096, n_a: 2, d_m: 4096, d_I: 14336,
              S.e_N: 0, S.e_A: 0}
    values.update(changes or {})
    return values


def _difference(part, eager):
    expr = layer_times()[part]
    return float(expr.subs(_values(eager)) - expr.subs(_values()))


def test_eager_norms_replace_the_fused_kernels_by_hand():
    """Two norms of the 8,192 replicated tokens' 4,096 values: eager at e_hbm, 36 bytes a value forward and 92
    backward, 8 and 14 kernels, against the fused kernel's 4 at e_nF and 1.5 x 4 at e_nB, one kernel each way."""
    values = 2 * 4096 * 8192
    stream = 0.9 * 3.35e12
    forward = values * 36 / stream - values * 4 / (0.6 * 3.35e12) + 2 * (8 - 1) * 3e-6
    backward = values * 92 / stream - 1.5 * values * 4 / (0.36 * 3.35e12) + 2 * (14 - 1) * 3e-6
    assert _difference("forward", {S.e_N: 1}) == pytest.approx(forward, rel=1e-9)
    assert _difference("backward", {S.e_N: 1}) == pytest.approx(backward, rel=1e-9)


def test_an_eager_gated_activation_replaces_the_fused_kernel_by_hand():
    """The device's 7,168 feed-forward values of 8,192 tokens: 10 bytes a value forward and 18 backward, 2 and 3
    kernels, against the fused kernel's 6 and 1.5 x 6, one kernel each way."""
    values = 14336 / 2 * 8192
    stream = 0.9 * 3.35e12
    assert _difference("forward", {S.e_A: 1}) == pytest.approx((10 - 6) * values / stream + 1 * 3e-6, rel=1e-9)
    assert _difference("backward", {S.e_A: 1}) == pytest.approx((18 - 9) * values / stream + 2 * 3e-6, rel=1e-9)
    # an ungated activation (GeLU) is one kernel either way: eager changes nothing
    for part in ("forward", "backward"):
        expr = layer_times()[part]
        assert float(expr.subs(_values({S.e_A: 1, S.gated: 0})) - expr.subs(_values({S.gated: 0}))) == 0


def test_torchtitans_files_say_which_of_its_runs_run_eagerly():
    from lgacc.studies.validation.runs import load_runs

    runs = {run.id: run for run in load_runs()}
    for rid in ("torchtitan2024-llama3-70b-full", "torchtitan2024-llama2-70b-sel-op-b1", "torchtitan2024-llama2-70b-full-b2"):
        assert runs[rid].recipe.norm_kernel == "eager" and dict(runs[rid].bracket)["norm_kernel"] == "fused"
    for rid in ("torchtitan2024-llama3-8b-sel-layer", "torchtitan2024-llama2-13b-none"):  # norm_type fused_rmsnorm
        assert runs[rid].recipe.norm_kernel == "fused" and runs[rid].recipe.activation_kernel == "eager"
    compiled = [run for run in runs.values() if "float8" in run.id]
    assert compiled and all(run.recipe.norm_kernel == run.recipe.activation_kernel == "fused" for run in compiled)
    others = [run for rid, run in runs.items() if "torchtitan" not in rid]
    assert all(run.recipe.norm_kernel == run.recipe.activation_kernel == "fused" for run in others)
