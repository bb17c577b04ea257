"""The calibrated memory's sharded and gathered state, counted by hand: a mixture of experts' routed experts over
the expert-data-parallel group, and torchtitan's FSDP2 under a pipeline."""

from __future__ import annotations

import pytest

from lgacc.model.calibrated.recipe import Recipe
from lgacc.model.config import TrainingConfig


@pytest.mark.parametrize("stage", [0, 1, 2])
def test_the_experts_state_is_sharded_over_the_ranks_holding_the_same_experts(stage):
    """Megatron-Core's distributed optimizer shards expert parameters over the expert-data-parallel group, the
    n_b / n_e ranks that hold the same experts: at n_b = n_e = 8 nobody shares a GPU's experts' state, while the
    rest is split eight ways. Hand count on SimuMax's 4-layer DeepSeek-V3 (one dense layer, three of 256 experts)."""
    from lgacc.model.calibrated.sparse import expected_sparse
    from lgacc.studies.validation.runs import load_runs

    model = next(run.model for run in load_runs() if run.id.startswith("simumax-b200-deepseekv3-l4-tp1-ep8"))
    routed = 3 * 256 * 3 * 7168 * 2048  # three layers of 256 gated experts, 7168 x 2048 each map
    rest = model.p_total - routed
    result = expected_sparse(model, "b200", TrainingConfig("baseline", n_b=8, n_e=8, n_mu=4),
                             recipe=Recipe(zero_stage=stage))
    held = routed / 8  # 32 experts of each layer on every GPU
    optimizer = 12 * (held + (rest / 8 if stage >= 1 else rest))
    gradients = 4 * (held + (rest / 8 if stage >= 2 else rest))
    assert result.memory_parts_bytes["optimizer"] == pytest.approx(optimizer, rel=1e-12)
    assert result.memory_parts_bytes["gradients"] == pytest.approx(gradients, rel=1e-12)
    assert result.memory_parts_bytes["weights"] == pytest.approx(2 * (held + rest), rel=1e-12)


def test_the_experts_state_is_read_on_the_stage_with_the_most_expert_layers():
    """Two stages of the 4-layer DeepSeek-V3 (a dense layer, then three with experts): one stage holds two expert
    layers, 4/3 of the average, and every state part of the routed experts is read there, the sharded ones (ZeRO-1's
    optimizer) over the n_b / n_e = 1 ranks that share them, the rest as the dense program has it."""
    from lgacc.model.calibrated.sparse import active_surrogate, expected_sparse
    from lgacc.studies.validation.runs import load_runs

    model = next(run.model for run in load_runs() if run.id.startswith("simumax-b200-deepseekv3-l4-tp1-ep4"))
    routed = 3 * 256 * 3 * 7168 * 2048 / 4  # a GPU's 64 experts of each of the three layers, on average
    fullest = 4 / 3  # two expert layers where the average stage has one and a half
    held = model.p_total - 3 * 256 * 3 * 7168 * 2048 * 3 / 4  # the rest whole, the routed experts over n_e = 4
    surrogate = active_surrogate(model)
    active = surrogate.p + surrogate.p_embedding
    result = expected_sparse(model, "b200", TrainingConfig("baseline", n_b=4, n_l=2, n_e=4, n_mu=4),
                             recipe=Recipe(zero_stage=1))
    dense = result.dense.memory_parts_bytes
    for part, shared_by in (("weights", 1), ("gradients", 1), ("optimizer", 4)):
        expected = dense[part] / active * (held - routed + fullest * routed * shared_by)
        assert result.memory_parts_bytes[part] == pytest.approx(expected, rel=1e-12)


def test_torchtitans_pipeline_keeps_the_stage_gathered_and_its_gradients_unsharded():
    """Under a pipeline (fsdp_pipeline_unsharded, torchtitan's FSDP2): the stage's weights in bf16 and its gradients
    in the reduction's fp32, unsharded, in place of two gathered layers and a bucket. Hand count on Llama 3 8B (32
    layers of 4096 with 8 key-value heads of 128, gated 14336; vocabulary 128256, untied) over
    two stages: 16 layers and one vocabulary matrix on the most loaded GPU."""
    from lgacc.model.calibrated.expected import expected
    from lgacc.model.transformer import load_model

    model = load_model("llama-3-8b")
    layer = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336  # query and output, key and value, gated FFN
    # the calibrated model's small term, GPT's layer vectors kept for every model: a bias for every matrix and two
    # norms of a gain and a bias each
    vectors = (4096 + 1024 + 1024 + 4096) + (2 * 14336 + 4096) + 2 * 2 * 4096
    stage = 16 * (layer + vectors) + 128256 * 4096
    config = TrainingConfig("partitioned", n_b=8, n_l=2, n_mu=8)
    plain = Recipe(zero_stage=3, grad_reduce_bytes=4)
    off = expected(model, "h100-sxm", config, recipe=plain).memory_parts_bytes["buffers"]
    on = expected(model, "h100-sxm", config, recipe=plain.replace(fsdp_pipeline_unsharded=True))
    gathered = (2 * 2 + 4) * 128256 * 4096  # two units and a bucket: the vocabulary matrix is the largest unit
    assert off == pytest.approx(gathered, rel=1e-12)
    assert on.memory_parts_bytes["buffers"] == pytest.approx((2 + 4) * stage, rel=1e-12)
    # without a pipeline the switch changes nothing: FSDP reshards as usual
    single = TrainingConfig("partitioned", n_b=8, n_l=1, n_mu=8)
    assert (expected(model, "h100-sxm", single, recipe=plain.replace(fsdp_pipeline_unsharded=True)).memory_bytes
            == expected(model, "h100-sxm", single, recipe=plain).memory_bytes)
