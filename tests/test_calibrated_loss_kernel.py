"""The cross entropy's kernels by implementation (recipe loss_kernel; logit_bytes names one when it is unset)."""

from __future__ import annotations

import pytest

from lgacc.errors import UserInputError
from lgacc.model.calibrated import Recipe
from lgacc.model.calibrated.expected import inputs
from lgacc.model.calibrated.recipe import LOGIT_TRAFFIC, LOSS_TRAFFIC, loss_traffic


def test_flash_attentions_fused_cross_entropy_moves_eight_bytes_a_logit():
    # csrc/xentropy/xentropy_kernel.cu on 2-byte logits: the forward reads the row for its maximum and sum, then
    # for its sum of exponentials (2 + 2); the backward reads it and writes the gradient (2 + 2)
    assert LOSS_TRAFFIC["xentropy"] == (2 + 2) + (2 + 2) == 8
    # the three implementations logit_bytes names keep their counts (test_calibrated.py counts them)
    assert LOGIT_TRAFFIC == {6: 20, 10: 52, 12: 48, 14: 48, 16: 48}
    assert {k: LOSS_TRAFFIC[k] for k in ("half", "megatron", "pytorch")} == {"half": 20, "megatron": 52, "pytorch": 48}


def test_transformer_engines_triton_cross_entropy_moves_ten_bytes_a_logit():
    # transformer_engine/common/triton/cross_entropy.py (v2.11) on 2-byte logits: online_softmax_kernel reads the row
    # (2); cross_entropy_kernel reads it again and writes the gradient in place (2 + 2); the backward's
    # element_mul_kernel reads the gradient and writes it scaled (2 + 2)
    assert LOSS_TRAFFIC["te"] == 2 + (2 + 2) + (2 + 2) == 10
    assert loss_traffic(Recipe(loss_kernel="te")) == 10
    assert Recipe.from_strings(["loss_kernel=te"]).loss_kernel == "te"


def test_unset_the_loss_is_the_one_logit_bytes_names_and_set_it_wins():
    assert loss_traffic(Recipe()) == 52
    assert loss_traffic(Recipe(logit_bytes=14)) == 48
    assert loss_traffic(Recipe(logit_bytes=14, loss_kernel="xentropy")) == 8
    assert Recipe.from_strings(["loss_kernel=unset"]).loss_kernel is None
    assert Recipe.from_strings(["loss_kernel=XENTROPY"]).loss_kernel == "xentropy"
    with pytest.raises(UserInputError, match=r"recipe loss_kernel='liger' must be one of half, megatron, pytorch, xentropy, te, pytorch-half"):
        Recipe(loss_kernel="liger")


def test_the_loss_kernel_sets_the_programs_bytes_and_leaves_the_memory_at_the_loss():
    plain = inputs("llama-3-8b", "h100-sxm", "baseline", n_b=8)
    fused = inputs("llama-3-8b", "h100-sxm", "baseline", n_b=8, recipe=Recipe(loss_kernel="xentropy"))
    assert plain["g_X"] == 52 and fused["g_X"] == 8
    assert plain["g_L"] == fused["g_L"] == 10  # bytes alive at the loss: logit_bytes', unchanged


def test_llm_foundrys_runs_read_its_fused_cross_entropy():
    from lgacc.studies.validation.runs import load_runs

    runs = load_runs()
    mosaic = [run for run in runs if run.id.startswith("mosaicml-")]
    assert len(mosaic) >= 90 and all(run.recipe.loss_kernel == "xentropy" for run in mosaic)
    assert all(run.recipe.loss_kernel is None for run in runs
               if not run.id.startswith(("mosaicml-", "simumax-", "mbridge2511-", "automodel2025-")))


def test_megatron_bridges_performance_recipes_read_transformer_engines_fused_cross_entropy():
    from lgacc.studies.validation.runs import load_runs

    bridge = [run for run in load_runs() if run.id.startswith("mbridge2511-")]
    # set_common_perf_overrides sets the TE implementation for every recipe; the providers leave the fusion on
    assert len(bridge) == 22 and all(run.recipe.loss_kernel == "te" and "loss_kernel" in run.assumed for run in bridge)


def test_simumaxs_cef_rows_read_transformer_engines_fused_cross_entropy_as_stated():
    from lgacc.studies.validation.runs import load_runs

    simumax = [run for run in load_runs() if run.id.startswith("simumax-")]
    # every row of the release table is a "_cef" case: --cross-entropy-loss-fusion --cross-entropy-fusion-impl te
    assert len(simumax) == 36 and all(run.id.endswith("-cef") for run in simumax)
    assert all(run.recipe.loss_kernel == "te" and "loss_kernel" in run.stated for run in simumax)


def test_torchtitans_logits_freed_before_the_backward_save_what_its_commit_says():
    import dataclasses

    from lgacc.model.calibrated.parameters import fitted_calibration
    from lgacc.studies.validation.calibrated import predict
    from lgacc.studies.validation.runs import load_runs

    runs = load_runs()
    # 157a12c56 (A100 table) keeps the model's fp32 logits through the backward; 9dec370 (H100 table) frees them
    a100 = [run for run in runs if run.id.startswith("torchtitan2024-") and "-h100-" not in run.id]
    h100 = [run for run in runs if run.id.startswith(("torchtitan2024-h100-llama31-", "torchtitan2024-h100-float8-"))]
    assert a100 and all(run.recipe.logit_bytes == 16 and "logit_bytes" in run.assumed for run in a100)
    assert h100 and all(run.recipe.logit_bytes == 12 and "logit_bytes" in run.assumed for run in h100)
    assert all(run.recipe.loss_kernel is None and loss_traffic(run.recipe) == 48 for run in a100 + h100)
    # torchtitan e29b6b4d4 (2024-06-12): "del logits=(bs, seq_len, vocab_size) to save 3.9G memory", at the
    # 8B configuration's local batch 1, sequence 8192, vocabulary 128,256: 4 fp32 bytes a logit
    saved = (16 - 12) * 1 * 8192 * 128256
    assert round(saved / 2**30, 1) == 3.9
    run = next(run for run in a100 if run.id == "torchtitan2024-llama3-8b-sel-layer")
    assert (run.b_mu, run.model.d_s, run.model.d_v) == (1, 8192, 128256)
    freed = dataclasses.replace(run, recipe=dataclasses.replace(run.recipe, logit_bytes=12))
    calibration = fitted_calibration()
    kept, after = predict([run, freed], calibration)["memory_bytes"]
    # the logits' term is at the peak; the allocator's fragmentation share rides on it as on every activation
    assert kept - after == pytest.approx(saved * (1 + calibration.fragmentation), rel=1e-9)


def test_nemo_automodels_loss_is_pytorchs_cross_entropy_on_the_half_logits():
    from lgacc.studies.validation.runs import load_runs

    # PyTorch's kernels on 2-byte logits without the casts: log_softmax reads the row three times and writes it
    # (4 x 2), nll_loss's backward writes a zero gradient and scatters (2), log_softmax's backward reads the incoming
    # gradient twice and its output once and writes (4 x 2)
    assert LOSS_TRAFFIC["pytorch-half"] == 4 * 2 + 2 + 4 * 2 == 18
    # the same kernels as the fp32 loss, every tensor half the size, less the two casts (2 + 4 each way)
    assert LOSS_TRAFFIC["pytorch"] == 2 * LOSS_TRAFFIC["pytorch-half"] + (2 + 4) + (4 + 2)
    automodel = [run for run in load_runs() if run.id.startswith("automodel2025-")]
    assert automodel and all(run.recipe.loss_kernel == "pytorch-half" and "loss_kernel" in run.assumed
                             for run in automodel)
