"""The paper's notation: every symbol named, explained, with a unit."""

import sympy

from lgacc import symbols
from lgacc.symbols import NOTATION, glossary, notation, symbol

REQUIRED = "d_s d_m d_l d_a d_h d_I n_I p p_l b b_mu n_mu n_b n_l n_a n_gpu c_gpu".split()


def test_required_symbols_exist_with_meaning_and_unit():
    for name in REQUIRED:
        entry = notation(name)
        assert isinstance(entry.symbol, sympy.Symbol)
        assert entry.meaning and entry.unit, name
        assert getattr(symbols, name) is entry.symbol


def test_every_link_has_bandwidth_and_threshold():
    from lgacc.hardware import LINK_KEYS

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
    import pytest

    with pytest.raises(KeyError, match="unknown symbol"):
        notation("d_x")
