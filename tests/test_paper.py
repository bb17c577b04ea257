"""The rule for agreeing with a printed value."""

import pytest

from lgacc.errors import UserInputError
from lgacc.paper import format_like, parse_printed


@pytest.mark.parametrize(
    ("text", "inside", "outside"),
    [
        ("143", 142.51, 143.6),
        ("4.61 k", 4612.3, 4616.0),
        ("2.91 M", 2905726.0, 2904000.0),
        ("0.389", 0.3894, 0.3896),
        ("6.8 d", 6.84, 6.86),
        ("630 y", 630.4 * 365.0, 631 * 365.0),
        ("2420", 2419.6, 2416.3),
        ("7400", 7400.0, 7401.0),
        ("480", 480.4, 476.0),
        ("160", 160.0, 156.0),
    ],
)
def test_agrees_within_half_a_unit_of_the_last_digit(text, inside, outside):
    printed = parse_printed(text)
    assert printed.agrees(inside)
    assert not printed.agrees(outside)


def test_format_like_keeps_suffix_and_decimals():
    assert format_like(4612.26, "4.61 k") == "4.61 k"
    assert format_like(142.507, "143") == "143"
    assert format_like(0.38912, "0.389") == "0.389"


def test_unreadable_printed_value():
    with pytest.raises(UserInputError):
        parse_printed("about two weeks")


def test_stated_significant_digits_override_the_text():
    assert parse_printed("100 d", significant=2).agrees(101.7)
    assert not parse_printed("100 d", significant=2).agrees(106.0)
    assert not parse_printed("100 d").agrees(101.0)  # every printed digit counts when no convention is stated
    assert parse_printed("2420", significant=3).agrees(2416.3)


def test_exact_integers_match_exactly():
    """An integer printed without "about" is matched exactly: trailing zeros count."""
    for text in ("7400", "1300", "480", "160", "38640"):
        printed = parse_printed(text)
        assert printed.agrees(float(text))
        assert not printed.agrees(float(text) + 1)
        assert not printed.agrees(float(text) - 1)
