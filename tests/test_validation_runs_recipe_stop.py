"""Which published runs recompute with PyTorch's non-reentrant checkpoint (recipe recompute_early_stop)."""

from __future__ import annotations

from lgacc.studies.validation.runs import load_runs


def test_the_runs_that_recompute_with_pytorchs_checkpoint_stop_early_and_bracket_the_whole_forward():
    runs = load_runs()
    foundry = [run for run in runs if run.publication.startswith("MosaicML")]
    titan = [run for run in runs if run.publication.startswith("torchtitan")]
    assert foundry and titan
    for run in foundry + titan:  # LLM Foundry (Composer, torch 2.1.0) and torchtitan: use_reentrant=False
        assert run.recipe.recompute_early_stop is True
        assert "recompute_early_stop" in run.assumed and dict(run.bracket)["recompute_early_stop"] is False
        assert run.with_reading("recompute_early_stop", False).recipe.recompute_early_stop is False
    # Megatron-LM's and DeepSpeed's own checkpoint functions re-run the whole forward
    for run in runs:
        if run.publication.startswith(("Narayanan", "Korthikanti", "Smith", "BigScience", "vuiseng9")):
            assert run.recipe.recompute_early_stop is False
