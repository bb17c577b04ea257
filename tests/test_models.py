"""Models: validation, the X family, parameter counts and the critical batch size."""

import math

import pytest
import sympy

from lgacc.errors import UserInputError
from lgacc.formulas.model import layer_parameters, layer_vectors
from lgacc.models import (
    CALIBRATION_TOKENS,
    NAMED_MODELS,
    Transformer,
    critical_batch_constant,
    critical_batch_size,
    named_model,
    x_model,
)
from lgacc.symbols import d_m, n_I


def test_width_must_be_heads_times_head_size():
    with pytest.raises(UserInputError, match=r"d_m=100 must equal d_a \* d_h"):
        Transformer("bad", d_l=2, d_m=100, d_a=3, d_h=32, d_s=16)


@pytest.mark.parametrize("field", ["d_l", "d_m", "d_a", "d_h", "d_s", "n_I"])
def test_dimensions_must_be_positive_integers(field):
    dims = dict(d_l=2, d_m=8, d_a=2, d_h=4, d_s=16, n_I=4)
    dims[field] = 0
    with pytest.raises(UserInputError, match=field):
        Transformer("bad", **dims)
    dims[field] = 2.5
    with pytest.raises(UserInputError, match=field):
        Transformer("bad", **dims)


def test_x_family_dimensions():
    m = x_model(160)
    assert (m.name, m.d_a, m.d_h, m.d_l, m.d_s, m.d_m, m.d_I) == ("X160", 80, 320, 160, 2560, 25600, 102400)
    with pytest.raises(UserInputError, match="even"):
        x_model(3)
    with pytest.raises(UserInputError):
        x_model(0)


@pytest.mark.parametrize("value", [2, 32, 64, 108, 160, 1000])
def test_parameter_count_is_12x5_plus_13x3(value):
    assert x_model(value).p == 12 * value**5 + 13 * value**3
    assert x_model(value).p_leading == 12 * value**5


def test_thirteen_d_m_are_biases_and_layer_norms():
    assert sympy.expand(layer_vectors() - (9 + n_I) * d_m) == 0
    assert sympy.expand(layer_parameters().subs(n_I, 4) - (12 * d_m**2 + 13 * d_m)) == 0


def test_named_models_lookup():
    assert named_model("gpt-3") is NAMED_MODELS["GPT-3"]
    assert named_model("megatron-lm").d_l == 72
    assert named_model("x160") == x_model(160)
    with pytest.raises(UserInputError, match="unknown model"):
        named_model("GPT-5")


def test_critical_batch_constant_is_calibrated_on_gpt3():
    gpt3 = named_model("GPT-3")
    # the calibration itself: GPT-3's critical batch is 3.2 M tokens
    assert math.isclose(critical_batch_size(gpt3) * gpt3.d_s, CALIBRATION_TOKENS, rel_tol=1e-12)
    k = critical_batch_constant()
    assert math.isclose(k, CALIBRATION_TOKENS / gpt3.p_leading ** (1 / 3), rel_tol=1e-12)


def test_critical_batch_scales_as_p_one_third():
    small, large = x_model(32), x_model(256)
    ratio = critical_batch_size(large) / critical_batch_size(small)
    expected = (large.p_leading / small.p_leading) ** (1 / 3) * small.d_s / large.d_s
    assert math.isclose(ratio, expected, rel_tol=1e-12)
    family = critical_batch_constant() * 12 ** (1 / 3) / 16
    assert math.isclose(critical_batch_size(x_model(160)), family * 160 ** (2 / 3), rel_tol=1e-9)
    assert x_model(160).critical_batch == critical_batch_size(x_model(160))
