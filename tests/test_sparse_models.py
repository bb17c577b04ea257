"""The sparse extension of the model (issue #36): mixture-of-experts files reproduce their published total and
active parameter counts, each count is checked by hand on one model, and every sparse formula reduces exactly to
the dense one it extends when there are no experts."""

from __future__ import annotations

import decimal

import pytest
import sympy

from lgacc.errors import UserInputError
from lgacc.model.formulas import sparse
from lgacc.model.transformer import Transformer, load_model, shipped_model_files, x_model

#: (total, active, active counts the input embedding) as each publication prints them, read here from the
#: papers and model cards (not from the files): DeepSeek-V3 (arXiv 2412.19437 abstract: 671B, 37B; its weights'
#: README counts 36.6B with the head, without the input embedding), Mixtral 8x7B (Mistral AI, 2023-12-11: 46.7B,
#: 12.9B), Mixtral 8x22B (Mistral AI, 2024-04-17: 141B, 39B), Qwen3 (model cards: 30.5B and 3.3B; 235B and
#: 22B), gpt-oss-120b (model card, Table 1: 116.83B, 5.13B).
PUBLISHED = {
    "DeepSeek-V3": ("671", "37", False),
    "Mixtral-8x7B": ("46.7", "12.9", True),
    "Mixtral-8x22B": ("141", "39", True),
    "Qwen3-30B-A3B": ("30.5", "3.3", True),
    "Qwen3-235B-A22B": ("235", "22", True),
    "GPT-OSS-120B": ("116.83", "5.13", False),
}


def printed_as(value: float, printed: str) -> bool:
    """``value`` (parameters) shows as ``printed`` billions at the printed digits, rounded or truncated."""
    places = decimal.Decimal(printed).as_tuple().exponent
    billions = decimal.Decimal(value) / decimal.Decimal(10**9)
    quantum = decimal.Decimal(1).scaleb(places)
    return decimal.Decimal(printed) in (billions.quantize(quantum, decimal.ROUND_HALF_EVEN),
                                        billions.quantize(quantum, decimal.ROUND_DOWN))


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_moe_files_reproduce_their_published_total_and_active_counts(name):
    model = load_model(name)
    total, active, with_embedding = PUBLISHED[name]
    assert model.is_sparse
    assert printed_as(model.p_total, total), (model.p_total, total)
    counted = model.p_active_total if with_embedding else model.p_active_total - model.d_v * model.d_m
    assert printed_as(counted, active), (counted, active)


def test_printed_as_can_fail():
    assert printed_as(37.4e9, "37") and not printed_as(38.0e9, "37") and not printed_as(36.4e9, "37")


def test_mixtral_8x7b_counted_by_hand():
    m = load_model("mixtral-8x7b")
    attention = 2 * 4096 * 4096 + 2 * 1024 * 4096
    expert = 3 * 4096 * 14336
    norms = 2 * 4096
    router = 4096 * 8
    assert m.p == 32 * (attention + 8 * expert + router + norms)
    assert m.p_active == 32 * (attention + 2 * expert + router + norms)
    # four of the eight experts on each of two expert-parallel ranks
    assert m.p_held(2) == 32 * (attention + 4 * expert + router + norms)


def test_deepseek_v3_latent_attention_counted_by_hand():
    m = load_model("deepseek-v3")
    attention = (7168 * 1536 + 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 + 512 * 128 * 256 + 128 * 128 * 7168)
    expert = 3 * 7168 * 2048
    moe = 7168 * 256 + 256 * expert + expert
    dense = 3 * 7168 * 18432
    assert m.p == 3 * (attention + dense + 2 * 7168) + 58 * (attention + moe + 2 * 7168)


def test_a_sparse_model_flops_count_only_active_experts():
    m = load_model("mixtral-8x7b")
    per_token = m.forward_flops_per_token(output_layer=False)
    attention = 32 * 4 * m.d_s * 32 * 128
    assert per_token == pytest.approx(2 * m.p_active_leading + attention, rel=1e-12)
    assert per_token < 2 * m.p_leading


def _dense_models():
    return [x_model(x) for x in (4, 16, 32, 64, 160)] + [load_model(name) for name in sorted(shipped_model_files())
                                                         if not load_model(name)._extended]


@pytest.mark.parametrize("model", _dense_models(), ids=lambda m: m.name)
def test_sparse_counts_reduce_exactly_to_the_dense_ones(model):
    """The sparse formulas at experts = 0 on every dense model (the paper's X family and the dense files):
    weights, parameters, active and held weights and flops equal today's counts exactly."""
    assert not model.is_sparse and not model._extended
    assert round(model._sparse("weights")) == model.p_leading
    assert round(model._sparse("weights")) + round(model._sparse("vectors")) == model.p
    assert round(model._sparse("active")) == model.p_leading == model.p_active_leading
    assert round(model._sparse("held", 8.0)) == model.p_leading
    assert model.p_held(8) == model.p_active == model.p
    flops = model._sparse("flops")
    assert flops == pytest.approx(model.forward_flops_per_token(output_layer=False), rel=1e-15)


def test_sparse_formulas_reduce_symbolically():
    assert all(value == 0 for value in sparse.dense_reduction().values()), sparse.dense_reduction()


def test_expert_gemm_intensity_falls_as_experts_grow_at_fixed_top_k():
    values = {sparse.d_m: 4096, sparse.d_e: 1024, sparse.t: 4096, sparse.k: 2}
    intensities = [float(sparse.expert_gemm_intensity().subs({**values, sparse.E: e})) for e in (2, 8, 64, 512)]
    assert intensities == sorted(intensities, reverse=True)
    # by hand at E = 8: t_e = 1024 tokens, 2 * 1024 * 4096 * 1024 / (2 (1024 * 4096 + 4096 * 1024 + 1024 * 1024))
    assert intensities[1] == pytest.approx(2 * 1024 * 4096 * 1024 / (2 * (2 * 1024 * 4096 + 1024 * 1024)))


def test_expert_intensity_by_hand():
    nu = sparse.expert_intensity(gated=True, biases=False)
    value = nu.subs({sparse.d_m: 4096, sparse.d_a: 32, sparse.d_h: 128, sparse.SPARSE_SYMBOLS["E"]: 8,
                     sparse.k: 2, sparse.d_e: 14336, sparse.n_sh: 0, sparse.n_e: 8, sparse.s_a: 2,
                     sympy.Symbol("d_kv", positive=True): 8})
    active = 2 * 4096 * 4096 + 2 * 1024 * 4096 + 2 * 3 * 4096 * 14336 + 4096 * 8
    assert float(value) == pytest.approx(8 * active / (2 * 6 * 2 * 4096 * 2 * 7 / 8))


@pytest.mark.parametrize("changes, message", [
    ({"experts": 8}, "experts_per_token"),
    ({"experts": 8, "experts_per_token": 9, "d_e": 4}, "between 1 and"),
    ({"experts": 8, "experts_per_token": 2}, "d_e"),
    ({"experts_per_token": 2}, "needs experts"),
    ({"experts": 8, "experts_per_token": 2, "d_e": 4, "dense_layers": 2}, "at least one MoE layer"),
    ({"q_lora_rank": 4}, "latent attention needs"),
    ({"experts": -1}, "experts"),
    ({"d_h": 8}, "decoupled_heads"),
])
def test_bad_sparse_fields_get_one_clear_line(changes, message):
    values = dict(name="m", d_l=2, d_m=16, d_a=4, d_h=4, d_s=8)
    values.update(changes)
    with pytest.raises(UserInputError, match=message):
        Transformer(**values)


def test_the_data_intensity_scale_is_one_without_experts_and_k_over_e_at_the_limit():
    scale = sparse.data_intensity_scale(gated=False)
    dense = {sparse.d_dense: sparse.SPARSE_SYMBOLS["E"] * 0 + sympy.Symbol("d_l", positive=True)}
    assert sympy.simplify(scale.subs(dense)) == 1
    # experts only (no attention, no router): k experts active out of E/n_e held
    ratio = sympy.limit(scale.subs({sparse.d_dense: 0, sparse.n_sh: 0}), sparse.d_e, sympy.oo)
    assert sympy.simplify(ratio - sparse.k * sparse.n_e / sparse.SPARSE_SYMBOLS["E"]) == 0
