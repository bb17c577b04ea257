"""The paper's notation: every symbol named, explained, with a unit.

Independent facts checked: each required symbol's LaTeX is spelled as in the paper's source
(``b_\\mu``, ``n_\\text{gpu}``, ...), hand-chosen units and groups of the paper's own definitions
(sec:methodology, sec:distributed). The key and shape checks guard the glossary page's interface
and come with those values.
"""

from pathlib import Path

import pytest
import sympy

from lgacc.model import symbols
from lgacc.model.symbols import NOTATION, glossary, notation, symbol

REQUIRED = "d_s d_m d_l d_a d_h d_I n_I p p_l b b_mu n_mu n_b n_l n_a n_gpu c_gpu".split()


def test_required_symbols_exist_with_meaning_and_unit():
    for name in REQUIRED:
        entry = notation(name)
        assert isinstance(entry.symbol, sympy.Symbol)
        assert entry.meaning and entry.unit, name
        assert getattr(symbols, name) is entry.symbol


def test_every_link_has_bandwidth_and_threshold():
    from lgacc.model.hardware import LINK_KEYS

    for key in LINK_KEYS:
        assert symbol(f"beta_{key}") is symbols.beta[key]
        assert symbol(f"nu_{key}") is symbols.nu[key]


def test_names_and_latex_are_unique_and_symbols_positive():
    names = [e.name for e in NOTATION]
    assert len(names) == len(set(names))
    assert len({e.symbol for e in NOTATION}) == len(NOTATION)
    assert all(e.symbol.is_positive for e in NOTATION)


def test_glossary_lists_every_symbol():
    table = glossary()
    assert list(table.columns) == ["symbol", "name", "meaning", "unit", "group"]
    assert len(table) == len(NOTATION)
    assert set(table["group"]) == {"model", "configuration", "hardware"}


def test_unknown_symbol_is_a_clear_error():
    with pytest.raises(KeyError, match="unknown symbol"):
        notation("d_x")


PAPER = Path(__file__).resolve().parents[2] / "shared" / "paper" / "layered-gradient-accumulation.tex"


@pytest.mark.skipif(not PAPER.exists(), reason="the paper's LaTeX source is not beside the repository")
def test_required_symbols_are_spelled_as_in_the_paper():
    tex = PAPER.read_text()
    for name in REQUIRED:
        assert notation(name).latex in tex, name
    assert (notation("b_mu").latex, notation("n_gpu").latex) == (r"b_\mu", r"n_\text{gpu}")


def test_units_and_groups_by_hand():
    # counts of devices are GPUs, the batch sizes samples, c_gpu a compute rate (sec:distributed, sec:hardware)
    expected = {"n_b": ("GPUs", "configuration"), "n_gpu": ("GPUs", "configuration"), "b": ("samples", "configuration"),
                "b_mu": ("samples", "configuration"), "d_s": ("tokens per sample", "model"),
                "c_gpu": ("flop/s", "hardware"), "n_I": ("dimensionless", "model")}
    for name, (unit, group) in expected.items():
        assert (notation(name).unit, notation(name).group) == (unit, group), name
    row = glossary().set_index("name").loc["n_gpu"]
    assert (row["unit"], row["group"]) == ("GPUs", "configuration")
