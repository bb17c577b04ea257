"""Pipeline schedules since 2021: each simulated quantity equals its sympy derivation, exactly.

Integer (or Fraction) durations make every simulated time exact; the derivations of
lgacc.model.formulas.schedules, evaluated at the same sizes, are exact Fractions too.

Independent facts checked: simulator against derivation over a grid (two code paths); the
published bubbles computed by hand (3/8, 3/16, 3/32, 1/8); zero bubble a third of 1F1B;
aliases compared timeline by timeline and with a hand bubble of 1/4.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy

from lgacc.errors import UserInputError
from lgacc.model.formulas import schedules as formulas
from lgacc.schedule import Durations, measure, pipeline, simulate
from lgacc.schedule.analytic import schedule_quantity
from lgacc.schedule.builders import SCHEDULES, pipeline_schedule

EQUAL = Durations(recompute=False)  # t_F = t_B = t_W = 1 (backward 2 split in halves)
PAPER = Durations()  # recomputation: t_F = 1, t_B = 1 + 1, t_W = 1


def grid(name):
    for n_v in ((1, 2, 3) if name in ("interleaved", "breadth-first") else (1,)):
        for n_l in range(1, 6):
            # n_mu = n_l (the smallest the closed forms allow), one more, and multiples.
            for n_mu in sorted({n_l, n_l + 1, 2 * n_l, 3 * n_l}):
                if name == "interleaved" and n_v > 1 and n_mu % n_l:
                    continue
                for d_l in (n_l * n_v, 2 * n_l * n_v):
                    yield n_l, n_mu, d_l, n_v


def measured(name, n_l, n_mu, d_l, n_v, durations):
    m = measure(simulate(pipeline_schedule(name, n_l, n_mu, d_l, n_v=n_v, durations=durations)))
    return {
        "bubble_overhead": m.bubble_overhead,
        "peak_activation_microbatches": m.peak_activation_microbatches,
        "pipeline_transfers_per_step": m.sends,
        "data_overlap_fraction": m.data_overlap_fraction,
    }


@pytest.mark.parametrize("durations", [EQUAL, PAPER], ids=["equal-passes", "recompute"])
@pytest.mark.parametrize("name", SCHEDULES)
def test_every_simulated_quantity_equals_its_derivation_over_the_grid(name, durations):
    for n_l, n_mu, d_l, n_v in grid(name):
        values = measured(name, n_l, n_mu, d_l, n_v, durations)
        for quantity in formulas.QUANTITIES:
            expected = schedule_quantity(name, quantity, n_l, n_mu, d_l, n_v=n_v, durations=durations)
            assert values[quantity] == expected, (quantity, n_l, n_mu, d_l, n_v)


def test_published_bubbles_hand_values():
    # Hand-computed from the published forms, not from the package's expressions.
    cases = {("gpipe", 1): Fraction(3, 8), ("1f1b", 1): Fraction(3, 8), ("interleaved", 2): Fraction(3, 16),
             ("breadth-first", 4): Fraction(3, 32), ("zero-bubble", 1): Fraction(1, 8), ("modular", 1): Fraction(3, 32)}
    for (name, n_v), bubble in cases.items():
        m = measure(simulate(pipeline_schedule(name, 4, 8, 16, n_v=n_v, durations=EQUAL)))
        assert m.bubble_overhead == bubble, name


def test_zero_bubble_is_a_third_of_1f1b_with_equal_passes():
    for n_l, n_mu in [(2, 4), (4, 8), (5, 12)]:
        zb = measure(simulate(pipeline_schedule("zero-bubble", n_l, n_mu, 2 * n_l, durations=EQUAL))).bubble_overhead
        ofob = measure(simulate(pipeline_schedule("1f1b", n_l, n_mu, 2 * n_l, durations=EQUAL))).bubble_overhead
        assert zb * 3 == ofob


def test_derivations_hold_and_reuse_the_papers_bubbles():
    from lgacc.model.formulas.bubble import bubble

    for name in SCHEDULES:
        assert all(d.holds() for d in formulas.schedule_derivations(name))
    assert formulas.schedule_terms("gpipe")["bubble_overhead"] == bubble(False)
    assert formulas.schedule_terms("modular")["bubble_overhead"] == bubble(True)
    # and those bubbles, by hand: (n_l - 1) / n_mu and (n_l - 1) n_l / (n_mu d_l)
    n_l, n_mu, d_l = formulas.n_l, formulas.n_mu, formulas.d_l
    assert sympy.simplify(bubble(False) - (n_l - 1) / n_mu) == 0
    assert sympy.simplify(bubble(True) - (n_l - 1) * n_l / (n_mu * d_l)) == 0
    assert formulas.schedule_terms("standard") == formulas.schedule_terms("gpipe")
    # Breadth-first with one layer per chunk is the modular pipeline.
    bf = formulas.schedule_terms("breadth-first")
    modular = formulas.schedule_terms("modular")
    for q in ("bubble_overhead", "data_overlap_fraction", "pipeline_transfers_per_step"):
        assert sympy.simplify(bf[q].subs(formulas.v, formulas.d_l / formulas.n_l) - modular[q]) == 0


def test_terms_lambdify_for_the_evaluator():
    terms = formulas.schedule_terms("interleaved")
    f = sympy.lambdify((formulas.n_l, formulas.n_mu, formulas.d_l, formulas.v), terms["bubble_overhead"])
    assert f(4, 8, 16, 2) == pytest.approx(3 / 16)


def test_breadth_first_with_one_layer_per_chunk_is_the_modular_timeline():
    a = simulate(pipeline_schedule("breadth-first", 3, 4, 6, n_v=2))
    b = simulate(pipeline(3, 4, 6, modular=True))
    assert [(i.start, i.end) for i in a.intervals] == [(i.start, i.end) for i in b.intervals]
    # by hand: the modular bubble (n_l - 1) n_l / (n_mu d_l) = 2 * 3 / (4 * 6) = 1/4
    assert measure(a).bubble_overhead == Fraction(1, 4)


def test_standard_is_an_alias_of_gpipe():
    a = simulate(pipeline_schedule("standard", 2, 4, 4))
    b = simulate(pipeline(2, 4, 4, modular=False))
    assert [(i.start, i.end) for i in a.intervals] == [(i.start, i.end) for i in b.intervals]
    # and the value, by hand: GPipe's bubble (n_l - 1) / n_mu = 1/4
    assert measure(a).bubble_overhead == Fraction(1, 4)


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: pipeline_schedule("pipedream", 2, 4, 4), "schedule must be one of"),
        (lambda: pipeline_schedule(3, 2, 4, 4), "schedule must be one of"),
        (lambda: pipeline_schedule("1f1b", 2, 4, 4, n_v=2), "n_v = 2 applies only to"),
        (lambda: pipeline_schedule("interleaved", 2, 4, 4, n_v=3), "n_v = 3 must divide"),
        (lambda: pipeline_schedule("interleaved", 2, 3, 8, n_v=2), "multiple of n_l"),
        (lambda: pipeline_schedule("breadth-first", 2, 4, 4, n_v=0), "n_v .* must be >= 1"),
        (lambda: pipeline_schedule("breadth-first", 2, 4, 4, n_v="2"), "n_v .* must be an integer"),
    ],
)
def test_misuse_raises_user_input_error(call, message):
    with pytest.raises(UserInputError, match=message):
        call()


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: pipeline(2, 4, 4, modular="yes"), "modular must be True or False, got 'yes'"),
        (lambda: pipeline(2, 4, 4, modular=1), "modular must be True or False, got 1"),
        (lambda: __import__("lgacc.schedule", fromlist=["x"]).gradient_accumulation(4, 2, layered="no"),
         "layered must be True or False"),
        (lambda: pipeline(2, 4, 4, modular=True, durations={"forward": 1}), "durations must be"),
        (lambda: simulate("gpipe"), "simulate takes a Schedule"),
        (lambda: measure(None), "measure takes a Timeline"),
        (lambda: __import__("lgacc.schedule", fromlist=["x"]).buffer_profile(simulate(pipeline(2, 2, 2, modular=True)), 5),
         "device must be an integer in 0..1"),
    ],
)
def test_public_functions_reject_misuse_with_user_input_error(call, message):
    with pytest.raises(UserInputError, match=message):
        call()
