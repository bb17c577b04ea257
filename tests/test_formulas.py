"""Every derivation equals the paper's printed form under the paper's approximation.

Independent facts checked: each derivation's limit against the parse of the paper's LaTeX
(data/paper/printed_formulas.yaml), and that check rejects every small perturbation; values
behind the labels by hand at the headline configuration (6826.7, 153600, 9600, 12800 flop/B);
the size of the neglected terms at X160 (1/61 and 1/483); m_0 = 102 d_m for the X family; the
mixed-buffering table against its printed cells.
"""

import dataclasses

import pytest
import sympy

from lgacc.model.formulas import Derivation, derivation, derivations, leading_order
from lgacc.model.formulas.buffering import mixed_buffering_table
from lgacc.model.formulas.compute import PASS_FACTORS, batch_flops
from lgacc.model.formulas.memory import activation_bytes_per_token
from lgacc.model.formulas.network import tensor_intensity
from lgacc.model.formulas.printed import printed_formula, printed_formulas
from lgacc.model.symbols import b, d_a, d_l, d_m, d_s, n_a, n_b, n_I, n_l, n_mu, p, p_l
from lgacc.model.transformer import x_model
from lgacc.paper import load_paper

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
    # values behind the labels, by hand at the headline configuration (X160, n_b = 483, n_l = 5, n_a = 16)
    at = {d_m: 25600, n_I: 4, n_a: 16, n_l: 5, d_l: 160, b: 2415, d_s: 2560, n_b: 483}
    hand = {
        "eq:tensor_intensity": sympy.Rational(12 * 25600, 3 * 15),  # (4 + 2 n_I) d_m / (3 (n_a - 1)) = 6826.7
        "eq:pipeline_intensity_impr": 6 * 25600,  # (2 + n_I) d_m
        "eq:pipeline_intensity_base": 6 * 25600 * 160 // 5,  # (2 + n_I) d_m d_l / n_l
        "eq:data_intensity_improved": 3 * 2415 * 2560 // (4 * 483),  # 3 b d_s / (4 n_b) = 9600
        "eq:data_intensity_base_pipe": 2415 * 2560 // 483,  # b d_s / n_b = 12800
    }
    for label, value in hand.items():
        assert derivation(label).paper.subs(at) == value, label


@pytest.mark.parametrize("d", ALL, ids=[d.key for d in ALL])
def test_derivation_reproduces_printed_form(d):
    assert sympy.simplify(d.limit - d.paper) == 0, (d.key, d.limit, d.paper)


def _nodes(expr, path=()):
    """Every sub-expression of ``expr`` with its position (argument indices from the root)."""
    yield path, expr
    for i, arg in enumerate(expr.args):
        yield from _nodes(arg, path + (i,))


def _replace_at(expr, path, new):
    if not path:
        return new
    args = list(expr.args)
    args[path[0]] = _replace_at(args[path[0]], path[1:], new)
    return expr.func(*args)


def perturbations(expr, symbols):
    """Small errors of ``expr``, built from its tree: each integer (coefficient or power) off by one,
    each rational's numerator or denominator off by one, each additive term dropped, each free symbol
    replaced by another of ``symbols``, and the whole 5 % off.  ``(description, wrong expression)``."""
    out = []
    for path, node in _nodes(expr):
        if isinstance(node, sympy.Integer):
            out += [(f"{node} -> {node + delta}", _replace_at(expr, path, node + delta)) for delta in (1, -1)]
        elif isinstance(node, sympy.Rational):
            for num, den in ((node.p + 1, node.q), (node.p - 1, node.q), (node.p, node.q + 1), (node.p, node.q - 1)):
                if den > 0:
                    out.append((f"{node} -> {num}/{den}", _replace_at(expr, path, sympy.Rational(num, den))))
        elif isinstance(node, sympy.Add):
            out += [(f"drop {term}", _replace_at(expr, path, sympy.Add(*(node.args[:i] + node.args[i + 1:]))))
                    for i, term in enumerate(node.args)]
    for old in sorted(expr.free_symbols, key=str):
        out += [(f"{old} -> {new}", expr.xreplace({old: new})) for new in symbols if new != old]
    out += [("5 % high", expr * sympy.Rational(21, 20)), ("5 % low", expr * sympy.Rational(19, 20))]
    return out


def test_perturbations_include_the_errors_a_reader_would_make():
    wrong = {sympy.srepr(e) for _, e in perturbations(12 * p / (n_l * n_a), [p, n_l, n_a])}
    for expected in (11 * p / (n_l * n_a), 13 * p / (n_l * n_a), 12 * p / n_l**2, 12 * p / (n_l * n_a**2), 12 * p / n_l,
                     12 * p * sympy.Rational(21, 20) / (n_l * n_a)):
        assert sympy.srepr(expected) in wrong, expected
    wrong = {sympy.srepr(e) for _, e in perturbations(12 * d_m**2 + 13 * d_m, [d_m])}
    for expected in (12 * d_m + 13 * d_m, 12 * d_m**2, 13 * d_m, 12 * d_m**3 + 13 * d_m, 12 * d_m**2 + 12 * d_m):
        assert sympy.srepr(expected) in wrong, expected


@pytest.mark.parametrize("d", ALL, ids=[d.key for d in ALL])
def test_check_can_fail(d):
    """The check rejects every small error of the derived side, not only a factor 2."""
    symbols = sorted(d.limit.free_symbols | d.paper.free_symbols, key=str)
    wrong = perturbations(d.limit, symbols)
    assert len(wrong) > 2, d.key  # more than the two 5 % errors: symbol swaps, coefficients and powers where any
    accepted = [description for description, expr in wrong if dataclasses.replace(d, limit=expr).holds()]
    assert not accepted, (d.key, accepted)


def test_typed_printed_forms_are_the_papers_text():
    """Where a derivation's printed form is typed (the evaluator's 'paper' form reads it), it equals the
    parse of the paper's LaTeX transcribed in data/paper/printed_formulas.yaml."""
    keys = {d.key for d in ALL}
    transcribed = [key for key in printed_formulas() if key in keys]
    assert {"data_intensity_base", "tensor_intensity", "state_offload_intensity_impr_part", "compute_per_device",
            "checkpoint_offload_intensity", "bubble_standard", "state_memory"} <= set(transcribed)
    for key in transcribed:
        d = derivation(key)
        typed = d.details.get("printed", d.paper)  # the form as printed, before p is written in d_m
        assert sympy.simplify(typed - printed_formula(key)) == 0, (key, typed, printed_formula(key))


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

    import lgacc.model.formulas.network as network

    text = Path(network.__file__).read_text()
    for label in ("eq:data_intensity_base", "eq:data_intensity_base_pipe", "eq:data_intensity_base_partition",
                  "eq:data_intensity_improved", "eq:data_intensity_improved_partition"):
        assert f'"{label}"' in text, label
    assert 'f"eq:' not in text
