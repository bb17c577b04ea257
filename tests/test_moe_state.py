"""The calibrated memory of a mixture of experts: the routed experts' sharded state over the expert-data-parallel
group, counted by hand."""

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
