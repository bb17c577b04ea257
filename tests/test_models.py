"""Models: validation, the X family, parameter counts and the critical batch size.

Independent facts checked: 12 x^5 + 13 x^3 parameters for the X family, table:x_model's
models and Llama 3 8B counted by hand, each shipped file's count against the published count
it quotes (within 1 %), and three recent open models against their model-card counts typed
in the test (Llama 3 8B 8.03 B, Mistral 7B 7.24 B, LLaMA 7B 6.7 B); the critical batch
calibrated on GPT-3's 3.2 M tokens and scaling as p^(1/3).
"""

import math

import pytest
import sympy

from lgacc.errors import UserInputError
from lgacc.model.formulas.model import layer_parameters, layer_vectors
from lgacc.model.symbols import d_m, n_I
from lgacc.model.transformer import (
    CALIBRATION_TOKENS,
    NAMED_MODELS,
    Transformer,
    critical_batch_constant,
    critical_batch_size,
    named_model,
    x_model,
)


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
    # GPT-3 175B as in Brown et al. (2020), Table 2.1: 96 layers of width 12288, 96 heads of 128, context 2048
    gpt3 = named_model("gpt-3")
    assert (gpt3.d_l, gpt3.d_m, gpt3.d_a, gpt3.d_h, gpt3.d_s) == (96, 12288, 96, 128, 2048)
    assert named_model("megatron-lm").d_l == 72
    assert named_model("x160") == x_model(160)
    with pytest.raises(UserInputError, match="unknown model"):
        named_model("GPT-5")


def test_critical_batch_constant_is_calibrated_on_gpt3():
    gpt3 = named_model("GPT-3")
    # the calibration itself: GPT-3's critical batch is 3.2 M tokens
    assert math.isclose(critical_batch_size(gpt3) * gpt3.d_s, CALIBRATION_TOKENS, rel_tol=1e-12)
    # by hand: 3.2e6 tokens / 2048 tokens per sample = 1562.5 samples (table:x_model prints 1560)
    assert CALIBRATION_TOKENS == 3.2e6 and math.isclose(critical_batch_size(gpt3), 1562.5, rel_tol=1e-12)
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
    # sec:trillion_parameter: "the critical batch size is estimated to be around 2420" for X160
    assert round(x_model(160).critical_batch, -1) == 2420


# --- models beyond the X family: files, GQA, gated MLP, vocabulary ---

from lgacc.model.formulas.model import LAYER_OPERATIONS, d_kv, general_layer_parameters  # noqa: E402
from lgacc.model.symbols import d_h, d_I  # noqa: E402
from lgacc.model.transformer import load_model, published_parameters, shipped_model_files  # noqa: E402


def test_general_layer_reduces_to_the_papers_at_its_defaults():
    paper = sympy.expand(sum(w + v for _, w, v in LAYER_OPERATIONS))
    general = general_layer_parameters(False).subs({d_kv: d_m / d_h, d_I: n_I * d_m})
    assert sympy.expand(general - paper) == 0


def test_table_models_keep_their_numbers():
    # table:x_model's p column, recomputed by hand: 12 d_m^2 + 13 d_m per layer
    for name, (layers, width) in {"BERT": (24, 1024), "GPT-3": (96, 12288), "T-NLG": (78, 4256)}.items():
        assert named_model(name).p == layers * (12 * width**2 + 13 * width)
    assert named_model("GPT-3").n_I == 4 and named_model("GPT-3").d_I == 4 * 12288


def test_llama_3_8b_counted_by_hand():
    m = load_model("llama-3-8b")
    attention = 2 * 4096**2 + 2 * 8 * 128 * 4096
    mlp = 3 * 4096 * 14336
    vectors = 4096 + 2 * 1024 + 4096 + 2 * 14336 + 4096 + 4 * 4096
    assert m.p_l == attention + mlp + vectors
    assert m.p_total == 32 * m.p_l + 2 * 128256 * 4096


@pytest.mark.parametrize("name", sorted(shipped_model_files()))
def test_published_parameter_counts_within_one_percent(name):
    published = published_parameters(shipped_model_files()[name])
    if published is None:
        pytest.skip("the file quotes no published count")
    assert abs(load_model(name).p_total / published[0] - 1) < 0.01


def test_at_least_three_recent_open_models_are_checked():
    checked = [n for n, path in shipped_model_files().items() if published_parameters(path) and load_model(n).gated]
    assert len(checked) >= 3
    # named, with their published counts read here from the model cards and papers, not from the files:
    # Llama 3 8B (Dubey et al. 2024, 8.03 B on the model card), Mistral 7B (7.24 B on the model card;
    # "7.3 B" in the release), LLaMA 7B (Touvron et al. 2023, 6.7 B)
    for name, published in (("Llama-3-8B", 8.03e9), ("Mistral-7B", 7.24e9), ("LLaMA-7B", 6.7e9)):
        assert name in checked
        assert abs(load_model(name).p_total / published - 1) < 0.01, name


def test_names_resolve_to_shipped_files_and_paths_to_paths(tmp_path):
    assert load_model("Llama-3-8B") is load_model("llama-3-8b")
    with pytest.raises(UserInputError, match="unknown model"):
        load_model("bert.yml.bak")
    spec = tmp_path / "mine.yaml"
    spec.write_text("d_l: 2\nd_m: 8\nd_a: 2\nd_h: 4\nd_s: 16\n")
    model = named_model(str(spec))
    assert (model.name, model.d_I, model.d_kv, model.d_v) == ("mine", 32, 2, 0)
    with pytest.raises(UserInputError, match="no such file"):
        load_model(str(tmp_path / "absent.yaml"))


@pytest.mark.parametrize(
    "text, message",
    [
        ("d_l: 2\nd_m: 8\nd_a: 2\nd_h: 4\n", "missing required key 'd_s'"),
        ("d_l: 2\nd_m: 8\nd_a: 2\nd_h: 4\nd_s: 16\nwidth: 3\n", "unknown key 'width'"),
        ("d_l: 2\nd_m: 8\nd_a: 2\nd_h: 4\nd_s: -16\n", "d_s=-16"),
        ("d_l: 2\nd_m: 8\nd_a: 2\nd_h: 4\nd_s: 16\nd_kv: 3\n", "divisible by d_kv=3"),
        ("d_l: 2\nd_m: 8\nd_a: 2\nd_h: 4\nd_s: 16\ngated: yes please\n", "gated"),
        ("d_l: 2\nd_m: 8\nd_a: 2\nd_h: 4\nd_s: 16\nd_v: -1\n", "d_v=-1"),
        ("- 1\n- 2\n", "must be a mapping"),
        ("d_l: [2\n", "not valid YAML"),
    ],
)
def test_bad_model_files_get_one_clear_line(tmp_path, text, message):
    spec = tmp_path / "bad.yaml"
    spec.write_text(text)
    with pytest.raises(UserInputError, match=message) as error:
        load_model(str(spec))
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("name", [None, 3, ""])
def test_names_must_be_non_empty_strings(name):
    with pytest.raises(UserInputError, match="name"):
        Transformer(name, d_l=2, d_m=8, d_a=2, d_h=4, d_s=16)


def test_forward_flops_count_the_head_only_with_a_vocabulary():
    gpt3 = named_model("GPT-3")
    layer = 2 * 12 * 12288**2 + 4 * 2048 * 12288
    assert gpt3.forward_flops_per_token(output_layer=False) == 96 * layer
    assert gpt3.forward_flops_per_token() == 96 * layer + 2 * 50257 * 12288
