"""The trillion-parameter page's paragraphs (lgacc.paper.reproductions.trillion_narrative): computed numbers.

Independent facts checked: hand-computed values from the paper's definitions (the critical batch of
X160 from its constant, floor(b_c / b_mu), the modular bubble (n_l - 1) / (n_mu d_l / n_l) with
n_l = n_mu = 5 and d_l = 160), the searches' own answers (n_gpu = n_b n_l n_a), and a hardware on
which the search finds nothing.
"""

from __future__ import annotations

import math

from lgacc.model.transformer import x_model
from lgacc.paper.reproductions.trillion_narrative import narrative_markdown
from lgacc.search import fastest


def test_the_paragraphs_state_the_searches_numbers_and_hand_computed_ones():
    text = narrative_markdown("a100-80gb")
    b_c = x_model(160).critical_batch
    assert 2417 <= b_c < 2418  # about 2420 in the paper
    assert f"\\lfloor 2417/5 \\rfloor = {math.floor(2417.49 / 5)}$" in text and math.floor(2417.49 / 5) == 483
    assert (5 - 1) / (5 * 160 / 5) == 0.025 and "= 2.5 %." in text
    improved = fastest("X160", "a100-80gb", "improved", "3d", explain=False)
    c = improved.config
    assert c.n_b * c.n_l * c.n_a == improved.evaluation.n_gpu == 38640 and "38,640 GPUs at 0.88 efficiency" in text
    # one micro-batch more at the same batch: floor(2417.49 / 6) = 402 instances, 1 - 402/483 = 16.8 %
    assert math.floor(2417.49 / 6) == 402 and "would cost 17 % of the instances (402 instead of 483)" in text
    assert "so the search does not overlap" in text


def test_on_a_spec_without_the_configurations_it_says_so_in_one_sentence():
    text = narrative_markdown("h100-sxm")  # X160's baseline does not fit an H100 without a pipeline
    assert text.startswith("On h100-sxm the search finds no feasible configuration") and "\n" not in text
