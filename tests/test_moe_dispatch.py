"""The experts' dispatch permutations (lgacc.model.calibrated.dispatch): rows counted by hand from Megatron-Core's
dispatchers, the measured share recovered by hand from SimuMax's file, the GPUs a token meets by enumeration, and
the step they add."""

from __future__ import annotations

import itertools
import math

import pytest

from lgacc.errors import UserInputError
from lgacc.model.calibrated.dispatch import (DISPATCHERS, PERMUTE_FILE, dispatch_rows, dispatch_seconds,
                                             permute_shares, ranks_per_token)
from lgacc.model.calibrated.recipe import MOE_DISPATCHERS, Recipe
from lgacc.model.config import TrainingConfig
from lgacc.model.transformer import load_model


def test_the_measured_share_by_hand_from_simumaxs_efficiency():
    # SimuMax's own byte count of its two cases: (2 t + 6 E capacity) hidden bf16 values
    theirs = (2 * 4096 + 6 * 154 * 160) * 5120 * 2 + (2 * 4096 + 6 * 128 * 256) * 7168 * 2
    # its efficiency_from_bytes_time inverted: 8000 "gbps" of 1024**3 bytes, 4 launches of 30 us a case
    forward_s = theirs / (8000 * 2**30 * 0.5008136513816437) + 2 * 4 * 30e-6
    least = 2 * (4096 + 24640) * 5120 * 2 + 2 * (4096 + 32768) * 7168 * 2  # each row read once, written once
    shares = permute_shares()
    assert shares.forward_s == pytest.approx(forward_s, rel=1e-12)
    assert shares.forward == pytest.approx(least / (forward_s * 8000e9), rel=1e-12)
    # a gather and a scatter are far from streaming (0.9 of the HBM bandwidth): about a sixth of it
    assert 0.15 < shares.forward < 0.17 and 0.15 < shares.backward < 0.17
    assert shares.backward > shares.forward  # the backward's efficiency in the file is the larger
    assert "4dcaae5" in shares.source


def test_the_gpus_a_token_meets_by_enumeration():
    for experts, k, n_e in ((8, 2, 4), (8, 3, 2), (12, 4, 3), (16, 2, 16), (6, 6, 3)):
        per_gpu = experts // n_e
        counts = [len({e // per_gpu for e in chosen}) for chosen in itertools.combinations(range(experts), k)]
        assert ranks_per_token(experts, k, n_e) == pytest.approx(sum(counts) / len(counts), rel=1e-12)
    assert ranks_per_token(256, 8, 1) == 1.0  # one GPU holds every expert
    assert ranks_per_token(256, 8, 256) == pytest.approx(8.0)  # one expert a GPU: every copy to its own GPU


def test_rows_by_hand_for_each_dispatcher():
    qwen = load_model("qwen3-30b-a3b")  # 128 experts, top-8
    assert (qwen.experts, qwen.experts_per_token) == (128, 8)
    config = TrainingConfig("baseline", n_b=8, n_e=8, b_mu=2)
    t = 2 * qwen.d_s
    rows = dispatch_rows(qwen, config, "alltoall")
    assert (rows.permute, rows.unpermute, rows.sort, rows.sent) == (t + 8 * t, 8 * t + t, 4 * 8 * t, 8 * t)
    r = 8 * (1 - math.comb(112, 8) / math.comb(128, 8))
    deepep = dispatch_rows(qwen, config, "deepep")
    assert deepep.sort == 0 and deepep.sent == pytest.approx(t * r) and deepep.permute == pytest.approx(t * r + 8 * t)
    hybrid = dispatch_rows(qwen, config, "hybridep")
    assert hybrid.moved == 0 and hybrid.sent == deepep.sent
    # one expert a GPU: nothing to sort
    assert dispatch_rows(load_model("mixtral-8x7b"), TrainingConfig("baseline", n_b=8, n_e=8), "alltoall").sort == 0
    # under tensor parallelism the all-to-all's tokens are a sequence shard, sorted after the gather
    tp = dispatch_rows(qwen, TrainingConfig("baseline", n_b=8, n_a=2, n_e=8, b_mu=2), "alltoall")
    assert (tp.sent, tp.permute, tp.sort) == (8 * t / 2, t / 2 + 8 * t / 2, 4 * 8 * t)
    # a dense model permutes nothing
    assert dispatch_rows(load_model("llama-3-8b"), TrainingConfig("baseline", n_b=8), "alltoall").moved == 0


def test_seconds_by_hand():
    qwen = load_model("qwen3-30b-a3b")
    config = TrainingConfig("baseline", n_b=8, n_e=8, b_mu=1)
    shares = permute_shares()
    t = qwen.d_s
    size = (2 * t + 2 * 8 * t + 4 * 8 * t) * qwen.d_m * 2
    for recompute in (0.0, 1.0):
        expected = size * ((1 + recompute) / shares.forward + 1 / shares.backward) / 3.35e12
        assert dispatch_seconds(qwen, config, 3.35e12, "alltoall", recompute) == pytest.approx(expected, rel=1e-12)
    assert dispatch_seconds(qwen, config, 3.35e12, "hybridep") == 0.0
    assert 0 < dispatch_seconds(qwen, config, 3.35e12, "deepep") < dispatch_seconds(qwen, config, 3.35e12)


def test_the_step_counts_the_permutations_and_names_them():
    from lgacc.model.calibrated.sparse import IMBALANCE, expected_sparse

    config = TrainingConfig("baseline", n_b=8, n_l=2, n_e=8, n_mu=4)
    model = load_model("qwen3-30b-a3b")
    each = {name: expected_sparse(model, "h100-sxm", config, recipe=Recipe(moe_dispatcher=name))
            for name in MOE_DISPATCHERS}
    plain, hybrid = each["alltoall"], each["hybridep"]
    repeats = (config.n_mu + config.n_l - 1) * model.moe_layers / config.n_l
    beta = 3.35e12  # the H100 SXM's HBM3
    assert Recipe().recompute == "full"  # the default recipe recomputes each layer's forward: its permutations too
    assert plain.dispatch_s == pytest.approx(repeats * dispatch_seconds(model, config, beta, recompute=1.0), rel=1e-9)
    assert hybrid.dispatch_s == 0.0
    # the same all-to-all rows for both flex dispatchers; only the permutations differ
    assert each["deepep"].step_time_s - hybrid.step_time_s == pytest.approx(each["deepep"].dispatch_s, rel=1e-9)
    assert plain.summary()["expected_step_breakdown_s"]["dispatch"] == plain.dispatch_s
    # the busiest rank's (1 + iota) tokens grow its permutations too
    assert plain.step_time_imbalanced_s - plain.step_time_s >= IMBALANCE["capacity-2"] * plain.dispatch_s
    # a dense bf16 model is the dense calibrated model, untouched by the dispatcher
    dense = TrainingConfig("baseline", n_b=8, n_l=4, n_mu=8)
    assert (expected_sparse("X32", "h100-sxm", dense, recipe=Recipe(moe_dispatcher="deepep")).step_time_s
            == expected_sparse("X32", "h100-sxm", dense).step_time_s)


@pytest.mark.filterwarnings("ignore:model Qwen3-30B-A3B")  # the ideal model's note on the vocabulary it ignores
def test_the_dispatcher_is_a_checked_recipe_switch(capsys):
    import json

    from lgacc.cli import main

    assert set(MOE_DISPATCHERS) == set(DISPATCHERS)
    with pytest.raises(UserInputError, match="moe_dispatcher='nccl' must be one of alltoall, deepep, hybridep"):
        Recipe(moe_dispatcher="nccl")
    argv = ["evaluate", "--model", "qwen3-30b-a3b", "--hardware", "h100-sxm", "--method", "baseline", "--n-b", "8",
            "--n-e", "8", "--format", "json"]
    assert main([*argv, "--recipe", "moe_dispatcher=DeepEP"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["expected_recipe"]["moe_dispatcher"] == "deepep"
    assert out["expected_step_breakdown_s"]["dispatch"] > 0
    assert main([*argv, "--recipe", "moe_dispatcher=nccl"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "moe_dispatcher" in err[0]


@pytest.mark.parametrize("change, rule", [
    (lambda d: d.pop("efficiency"), "needs simumax_byte_count, efficiency and a list of cases"),
    (lambda d: d["efficiency"].update(forward=-0.5), "forward must be a positive number"),
    (lambda d: d["cases"][0].update(topk="eight"), "topk must be a positive number"),
    (lambda d: d.update(cases=[]), "a list of cases"),
])
def test_a_bad_permutation_file_is_one_clear_error(tmp_path, change, rule):
    import yaml

    data = yaml.safe_load(PERMUTE_FILE.read_text())
    change(data)
    path = tmp_path / "moe_permute.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(UserInputError, match=rule):
        permute_shares(path)



def test_deepep_crosses_the_network_once_per_node_a_token_meets():
    """DeepEP's internode kernels send a token over the network once to each node holding one of its experts
    (get_dispatch_layout's num_tokens_per_rdma_rank), so DeepSeek-V3 over 64 GPUs of 8 nodes sends t q rows,
    q = 8 (1 - C(224, 8) / C(256, 8)) the nodes a token meets, 7/8 of them off the node; by hand, through the step."""
    from lgacc.model.calibrated.dispatch import rows_between_nodes
    from lgacc.model.calibrated.parameters import fitted_calibration
    from lgacc.model.calibrated.sparse import expected_sparse

    model = load_model("deepseek-v3")
    config = TrainingConfig("baseline", n_b=128, n_l=16, n_e=64, n_mu=120, precision="fp8")
    q = 8 * (1 - math.comb(224, 8) / math.comb(256, 8))
    rows, nodes = rows_between_nodes(model, config, "deepep", 8)
    assert nodes == 8 and rows == pytest.approx(4096 * q, rel=1e-12) and 5 < q < 6
    # every other reading keeps the per-GPU rows: another dispatcher, a group inside a node, uneven experts
    assert rows_between_nodes(model, config, "alltoall", 8) is None
    assert rows_between_nodes(model, config, "hybridep", 8) is None
    assert rows_between_nodes(model, TrainingConfig("baseline", n_b=8, n_e=8), "deepep", 8) is None
    assert rows_between_nodes(model, config, "deepep", 72) is None
    cal = fitted_calibration()
    e = expected_sparse(model, "h100-sxm", config, recipe=Recipe(moe_dispatcher="deepep"))
    one_way = 4096 * q * 7168 * 2 * 7 / 8
    per_layer = 2 * 3 * (cal.infiniband_latency_s + one_way / (cal.eta * 50e9))  # dispatch, combine; three passes
    assert e.all_to_all_s == pytest.approx((120 + 16 - 1) * 58 / 16 * per_layer, rel=1e-9)
