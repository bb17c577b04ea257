"""Equation numbers: LaTeX's numbering rule on hand-written sources, and the paper's transcription.

Independent facts checked: numbers counted by hand on a hand-written source, the paper's
Eq. (2) and Eq. (12), and the transcription against the LaTeX source itself.
"""

from pathlib import Path

import pytest

from lgacc.paper.equations import equation_anchor, equation_name, equation_numbers, number_equations

PAPER = Path(__file__).resolve().parents[2] / "shared" / "paper" / "layered-gradient-accumulation.tex"


def test_numbering_rule_on_a_hand_written_source():
    tex = r"""
    \begin{align} a &= 1, \nonumber\\ b &= 2 \label{eq:b} \end{align}
    \begin{equation*} c = 3 \end{equation*}
    % \begin{equation} \label{eq:commented} \end{equation}
    \begin{equation}\label{eq:d} d = 4 \end{equation}
    \begin{align} e &= 5 \label{eq:e} \\ f &= 6 \\ g &= 7 \label{eq:g} \end{align}
    """
    assert number_equations(tex) == {"eq:b": 1, "eq:d": 2, "eq:e": 3, "eq:g": 5}


def test_the_transcription_holds_every_label_with_consecutive_numbers():
    numbers = equation_numbers()
    assert numbers["eq:critical_batch"] == 2  # after the X family's unlabelled definition
    assert sorted(numbers.values()) == list(range(2, 15))


@pytest.mark.skipif(not PAPER.exists(), reason="the paper's LaTeX source is not beside the repository")
def test_the_transcription_matches_the_latex_source():
    assert number_equations(PAPER.read_text()) == equation_numbers()


def test_names_and_anchors():
    assert equation_name("eq:tensor_intensity") == "Eq. (12)"
    assert equation_name("eq:not_in_the_paper") == "eq:not_in_the_paper"
    assert equation_anchor("eq:data_intensity_base_pipe") == "eq-data-intensity-base-pipe"
