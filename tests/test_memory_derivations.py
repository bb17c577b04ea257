"""The memory derivations count tensors and bytes; the printed side is read from the paper's LaTeX.

The hand counts below are written out in numbers (X160: d_m = 25600, d_s = 2560,
d_a = 80, n_I = 4, d_l = 160), independently of the package's expressions.

Independent facts checked: the parser on hand-written LaTeX, the transcription quoted verbatim
from the paper, m_0 = 2 611 200 bytes per token at X160, the printed 0.389 GB activation cell,
the evaluator's memory at the headline configuration, the counted tensors against per-GPU
bytes written by hand (12 p / (n_l n_a), 2 b d_s d_m d_l / n_gpu, 6 p_l / n_a, ...), and the
buffer peak against the event simulator.
"""

from __future__ import annotations

import pytest
import sympy
import yaml

from lgacc.model.config import TrainingConfig
from lgacc.model.evaluator import evaluate
from lgacc.model.formulas import buffering, derivation, memory
from lgacc.model.formulas.printed import (
    PRINTED_FORMULAS,
    paper_definitions,
    parse_printed_latex,
    printed_formula,
    printed_formulas,
)
from lgacc.model.symbols import b, b_mu, d_a, d_l, d_m, d_s, m_0, n_a, n_b, n_gpu, n_I, n_l, n_mu, p, p_l
from lgacc.paper import load_paper, parse_printed

MEMORY_KEYS = ("state_memory", "state_memory_partitioned", "checkpoint_memory", "buffer_memory", "activation_memory")
GIB = 2**30

# X160 by hand (table:x_model): p_l = 12 d_m^2 + 13 d_m, p = d_l p_l.
X160 = {"d_m": 25600, "d_s": 2560, "d_a": 80, "n_I": 4, "d_l": 160}
X160_P_L = 12 * 25600**2 + 13 * 25600  # 7 864 652 800
X160_P = 160 * X160_P_L  # 1 258 344 448 000


def _paper_tex(root):
    for candidate in (root.parent / "shared" / "paper", root.parent.parent / "shared" / "paper"):
        tex = candidate / "layered-gradient-accumulation.tex"
        if tex.is_file():
            return tex.read_text()
    return None


# --- the printed side ------------------------------------------------------------------------


def test_parser_reads_the_papers_notation():
    assert parse_printed_latex(r"\tfrac{12 p}{n_l n_a}") == 12 * p / (n_l * n_a)
    assert parse_printed_latex(r"\frac{3b d_s}{4 n_b n_\mu}") == 3 * b * d_s / (4 * n_b * n_mu)
    assert parse_printed_latex(r"\tfrac{8(n_b-1)p}{n_\text{gpu}}") == 8 * (n_b - 1) * p / n_gpu
    assert parse_printed_latex(r"b_{\mu}=b/(n_b n_{\mu})") == sympy.Eq(b_mu, b / (n_b * n_mu))
    assert parse_printed_latex(r"12 d_m^2 + 13 d_m") == 12 * d_m**2 + 13 * d_m
    assert parse_printed_latex(r"2 \cdot 3 d_m^{2}") == 6 * d_m**2
    assert parse_printed_latex("2 b d_s d_m d_l") == 2 * b * d_s * d_m * d_l
    assert parse_printed_latex("m_0") == m_0
    assert parse_printed_latex(r"\left(4+2n_I\right)\, d_m / n_{\text{gpu}}") == (4 + 2 * n_I) * d_m / n_gpu


@pytest.mark.parametrize("text", [r"x_q", r"\tfrac{12 p}{n_l", r"12 p \geq 3", r"12 p)", "12 # p"])
def test_parser_refuses_what_it_cannot_read(text):
    with pytest.raises(ValueError):
        parse_printed_latex(text)


def test_each_printed_formula_is_quoted_verbatim(root):
    transcription = yaml.safe_load(PRINTED_FORMULAS.read_text())
    entries = {**transcription["formulas"], **transcription["definitions"]}
    tex = _paper_tex(root)
    for key, entry in entries.items():
        assert entry["latex"] in entry["quote"], key
        if tex is not None:  # the paper sits beside the clone in development
            assert entry["quote"] in tex, key


def test_memory_derivations_compare_with_the_transcribed_latex():
    """The paper side is the parse of data/paper/printed_formulas.yaml, nothing typed in lgacc."""
    assert paper_definitions() == {n_gpu: n_b * n_l * n_a}
    for key in MEMORY_KEYS:
        d = derivation(key)
        assert d.paper == parse_printed_latex(printed_formulas()[key]["latex"]).subs(n_gpu, n_b * n_l * n_a), key
        assert d.holds(), (key, d.limit, d.paper)


def test_activation_paper_side_is_the_printed_form_in_m_0():
    d = derivation("activation_memory")
    assert d.paper == b * d_s * m_0 / (n_b * n_mu * n_a)  # the paper prints m_0, not its expansion
    assert not d.paper.has(d_m, d_a, n_I)
    assert d.limit.has(m_0) and not d.exact.has(m_0)
    assert sympy.simplify(d.limit.subs(m_0, memory.activation_bytes_per_token()) - d.exact) == 0


# --- training state ------------------------------------------------------------------------------


def test_state_is_three_single_precision_tensors_of_p_values():
    tensors = memory.training_state(partitioned=False)
    assert [(t.values, t.bytes_per_value, t.copies) for t in tensors] == [(p, 4, 1)] * 3
    assert memory.ADAM_BYTES_PER_PARAMETER == 12
    # the whole state, before the split, is the printed total "12 p"
    assert sum(t.total_bytes() for t in tensors) == printed_formula("state_memory_total")
    # the half-precision gradients the paper leaves out are its "extra 2 p bytes"
    (gradients,) = [t for t in memory.NOT_KEPT if t.name.startswith("parameter gradients")]
    assert gradients.total_bytes() == printed_formula("gradients_not_kept")


def test_state_split_follows_the_partition_rule():
    assert memory.devices_sharing(memory.training_state(False)[0].split_over) == n_l * n_a
    assert memory.devices_sharing(memory.training_state(True)[0].split_over) == n_b * n_l * n_a
    assert sympy.simplify(memory.state_memory(False) / memory.state_memory(True) - n_b) == 0


# --- checkpoints ------------------------------------------------------------------------------


def test_checkpoints_are_one_half_precision_layer_output_per_sample_and_layer():
    (tensor,) = memory.checkpoint_tensors()
    assert (tensor.values, tensor.bytes_per_value, tensor.copies) == (d_s * d_m, 2, b * d_l)
    assert tensor.total_bytes() == printed_formula("checkpoint_memory_total")
    assert memory.devices_sharing(tensor.split_over) == n_b * n_l * n_a


# --- buffers -------------------------------------------------------------------------------------


def test_buffers_alive_at_each_step_match_the_printed_table():
    printed = load_paper("table:mixed_buffering")["rows"]
    alive = buffering.buffers_alive()
    assert [(a["parameter"], a["gradient"]) for a in alive] == [
        (int(r["parameter_buffers"]), int(r["gradient_buffers"])) for r in printed
    ]


def test_buffer_lifetime_spans_steps_that_do_not_touch_the_buffer():
    """A buffer restored at one step and used two steps later is alive in between."""
    Op, Step = buffering.Operation, buffering.BufferStep
    schedule = (
        Step("Backward", Op("Restore", 1), Op("Reduce", -1)),
        Step("Backward", Op("Gradients", 0), Op("Reduce", -1)),
        Step("Backward", Op("Activations", 1), Op("Reduce", 0)),
    )
    alive = buffering.buffers_alive(schedule)
    assert [a["parameter"] for a in alive] == [1, 2, 1]  # layer 1's buffer is alive during step 2
    assert [a["gradient"] for a in alive] == [1, 2, 1]


def test_buffer_peak_agrees_with_the_event_simulator():
    from lgacc.schedule import Durations, gradient_accumulation, measure, simulate

    peak = {t.name.split(":")[0]: t.copies for t in memory.buffer_tensors()}
    measured = measure(simulate(gradient_accumulation(5, 3, layered=True, state="partitioned",
                                                      durations=Durations(restore=1, reduce=1))))
    assert (peak["parameter buffer"], peak["gradient buffer"]) == (measured.peak_parameter_buffers,
                                                                   measured.peak_gradient_buffers) == (2, 1)


def test_buffer_memory_is_the_peak_over_the_steps():
    per_step = [2 * p_l * (a["parameter"] + a["gradient"]) / n_a for a in buffering.buffers_alive()]
    assert memory.buffer_memory() == 6 * p_l / n_a
    assert all(sympy.simplify(memory.buffer_memory() - s).is_nonnegative for s in per_step)


# --- activations ---------------------------------------------------------------------------


def test_m_0_against_a_hand_count_at_x160():
    # per token, half precision: 11 tensors of width d_m (input, layer norms, q, k, v, context,
    # projection, two residual sums, feed-forward output), 2 of width n_I d_m (before and after
    # GeLU), 4 of d_a d_s (scores, probabilities and their two gradients)
    hand = 2 * (11 * 25600 + 2 * 4 * 25600 + 4 * 80 * 2560)
    assert hand == 2_611_200
    m0 = memory.activation_bytes_per_token().subs({d_m: 25600, d_s: 2560, d_a: 80, n_I: 4})
    assert m0 == hand


def test_activations_at_x160_reproduce_the_printed_cell():
    """One sample per micro-batch over 16 tensor-parallel GPUs: 2560 tokens x m_0 / 16 bytes,
    the 0.389 GB of table:parallel_methods_memory's 3d rows."""
    hand = 2560 * 2_611_200 // 16
    assert hand == 417_792_000
    rows = load_paper("table:parallel_methods_memory")["rows"]
    printed = [r["activations"] for r in rows if r["parallelism"] == "3d"]
    assert printed and all(parse_printed(cell).agrees(hand / GIB) for cell in printed)
    expr = memory.activation_memory().subs({b: 483 * 5, n_b: 483, n_mu: 5, n_a: 16, d_m: 25600, d_s: 2560, d_a: 80, n_I: 4})
    assert expr == hand


# --- the evaluator's numbers do not move -------------------------------------------------------


def test_evaluator_memory_at_x160_equals_the_hand_count():
    e = evaluate("X160", "a100-80gb", TrainingConfig("improved", n_b=483, n_l=5, n_a=16, n_mu=5, b_mu=1))
    assert e.memory.state == pytest.approx(12 * X160_P / (483 * 5 * 16), rel=1e-12)
    assert e.memory.checkpoint == pytest.approx(2 * 2415 * 2560 * 25600 * 160 / (483 * 5 * 16), rel=1e-12)
    assert e.memory.buffers == pytest.approx(6 * X160_P_L / 16, rel=1e-12)
    assert e.memory.activations == pytest.approx(417_792_000, rel=1e-12)
    baseline = evaluate("X160", "a100-80gb", TrainingConfig("baseline", n_b=483, n_l=5, n_a=16, n_mu=5, b_mu=1))
    assert baseline.memory.state == pytest.approx(12 * X160_P / (5 * 16), rel=1e-12)


def test_memory_functions_sum_their_counted_tensors():
    """Each category's counted tensors sum to the per-GPU bytes written here by hand (not to the
    derivation, which is built from the same tensors)."""
    m0 = 2 * (11 + 2 * n_I) * d_m + 8 * d_a * d_s  # per token: see test_m_0_against_a_hand_count_at_x160
    hand = {
        "state_memory": 12 * p / (n_l * n_a),  # three fp32 copies of p, split over one instance
        "state_memory_partitioned": 12 * p / (n_b * n_l * n_a),  # and over the data-parallel instances
        "checkpoint_memory": 2 * b * d_s * d_m * d_l / (n_b * n_l * n_a),  # one fp16 layer input per sample and layer
        "buffer_memory": 6 * p_l / n_a,  # two parameter buffers and one gradient buffer of a layer, fp16
        "activation_memory": b * d_s * m0 / (n_b * n_mu * n_a),  # one micro-batch's layer activations
    }
    for key in MEMORY_KEYS:
        counted = sum(t.bytes_per_device() for t in memory.memory_tensors(key))
        assert sympy.simplify(counted - hand[key]) == 0, (key, counted)
        assert sympy.simplify(derivation(key).exact - hand[key]) == 0, key
    with pytest.raises(KeyError):
        memory.memory_tensors("nothing")
