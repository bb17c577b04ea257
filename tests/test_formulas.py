"""Every derivation equals the paper's printed form under the paper's approximation."""

import dataclasses

import pytest
import sympy

from lgacc.formulas import Derivation, derivation, derivations, leading_order
from lgacc.formulas.compute import PASS_FACTORS, batch_flops
from lgacc.formulas.memory import activation_bytes_per_token, mixed_buffering_table
from lgacc.formulas.network import tensor_intensity
from lgacc.models import x_model
from lgacc.paper import load_paper
from lgacc.symbols import b, d_a, d_l, d_m, d_s, n_a, n_b, n_I, n_l, n_mu, p, p_l

ALL = derivations()

REQUIRED_LABELS = {
    "eq:data_intensity_base",
    "eq:data_intensity_base_pipe",
    "eq:data_intensity_base_partition",
    "eq:data_intensity_improved",
    "eq:data_intensity_improved_partition",
    "eq:pipeline_intensity_base",
    "eq:pipeline_intensity_impr",
    "eq:tensor_intensity",
    "eq:state_offload_intensity",
    "eq:checkpoint_offload_intensity",
    "eq:overlap_condition",
    "eq:overhead_condition",
    "eq:critical_batch",
    "table:mixed_buffering",
    "table:x_model",
}


def test_every_listed_equation_has_a_derivation():
    labels = {d.label for d in ALL}
    assert REQUIRED_LABELS <= labels
    assert len([d for d in ALL if d.label == "eq:state_offload_intensity"]) == 4
    keys = {d.key for d in ALL}
    assert {"compute_per_batch", "compute_per_device", "bubble_standard", "bubble_modular",
            "state_memory", "state_memory_partitioned", "checkpoint_memory", "buffer_memory",
            "activation_memory"} <= keys


@pytest.mark.parametrize("d", ALL, ids=[d.key for d in ALL])
def test_derivation_reproduces_printed_form(d):
    assert sympy.simplify(d.limit - d.paper) == 0, (d.key, d.limit, d.paper)


@pytest.mark.parametrize("d", ALL, ids=[d.key for d in ALL])
def test_check_can_fail(d):
    # the same check rejects a form off by a factor: the test is not vacuous
    wrong = dataclasses.replace(d, limit=2 * d.limit)
    if d.paper != 0:
        assert not wrong.holds()


def test_leading_order():
    assert leading_order((n_b - 1) / n_b, n_b) == 1
    assert sympy.simplify(leading_order(12 * d_m**2 + 13 * d_m, d_m) - 12 * d_m**2) == 0
    assert sympy.simplify(leading_order(3 * b * d_s / (4 * n_mu * (n_b - 1)), n_b) - 3 * b * d_s / (4 * n_b * n_mu)) == 0


def test_exact_forms_keep_the_neglected_terms():
    # (n_b - 1) in the data intensities, attention matmuls in the compute, biases in p_l
    assert derivation("eq:data_intensity_improved").exact.has(n_b)
    assert sympy.simplify(derivation("eq:data_intensity_improved").exact - 3 * b * d_s / (4 * (n_b - 1))) == 0
    assert sympy.expand(derivation("compute_per_batch").exact - derivation("compute_per_batch").limit) != 0
    assert derivation("eq:tensor_intensity").exact != derivation("eq:tensor_intensity").limit


def test_compute_is_four_forward_passes():
    assert sum(PASS_FACTORS.values()) == 4
    assert sympy.simplify(batch_flops() - 4 * batch_flops(("forward",))) == 0


def test_size_of_approximations_at_x160():
    m = x_model(160)
    values = {d_s: m.d_s, d_m: m.d_m, d_l: m.d_l, d_a: m.d_a, n_I: m.n_I, b: 2415, n_b: 483, n_l: 5, n_a: 16, n_mu: 5,
              p: m.p, p_l: m.p_l}
    errors = {d.key: d.relative_error(values) for d in ALL}
    # attention matmuls: d_s / (6 d_m) = 1/60 of the weight products at X160
    assert errors["compute_per_batch"] == pytest.approx(-1 / 61, rel=1e-3)
    # (n_b - 1)/n_b at n_b = 483
    assert errors["data_intensity_improved"] == pytest.approx(482 / 483 - 1, rel=1e-9)
    assert all(abs(e) < 0.02 for e in errors.values() if e == e), errors


def test_tensor_intensity_counts_one_direction():
    assert sympy.simplify(tensor_intensity("both") / tensor_intensity("one")) == sympy.Rational(1, 2)


def test_activation_bytes_per_token():
    m0 = activation_bytes_per_token()
    assert sympy.expand(m0 - (2 * (11 + 2 * n_I) * d_m + 8 * d_a * d_s)) == 0
    # the X family has d_a d_s = 8 d_m, so m_0 = 102 d_m bytes per token at n_I = 4
    x = sympy.Symbol("x", positive=True)
    family = {d_a: x / 2, d_s: 16 * x, d_m: x**2, n_I: 4}
    assert sympy.simplify(m0.subs(family) / (x**2)) == 102


def test_mixed_buffering_table_matches_the_paper():
    printed = load_paper("table:mixed_buffering")["rows"]
    derived = mixed_buffering_table()
    assert len(printed) == len(derived)
    for row, expected in zip(derived, printed):
        for key, value in expected.items():
            assert str(row[key]) == str(value), (key, row, expected)


def test_buffer_memory_is_three_layer_buffers():
    assert sympy.simplify(derivation("buffer_memory").exact - 6 * p_l / n_a) == 0


def test_derivation_lookup():
    assert derivation("eq:tensor_intensity").key == "tensor_intensity"
    with pytest.raises(KeyError):
        derivation("eq:nothing")
    assert isinstance(ALL[0], Derivation)


def test_every_data_intensity_label_is_written_literally():
    """grep finds each equation label where its formula is derived (not built with an f-string)."""
    from pathlib import Path

    import lgacc.formulas.network as network

    text = Path(network.__file__).read_text()
    for label in ("eq:data_intensity_base", "eq:data_intensity_base_pipe", "eq:data_intensity_base_partition",
                  "eq:data_intensity_improved", "eq:data_intensity_improved_partition"):
        assert f'"{label}"' in text, label
    assert 'f"eq:' not in text
