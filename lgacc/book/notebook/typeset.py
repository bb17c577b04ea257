"""Math in the book's text: equation labels as numbered links to their derivation, the paper's
printed powers of ten set as math.
"""

from __future__ import annotations

import re

__all__ = ["link_equations", "printed_math"]


_EQUATION_LABEL = re.compile(r'(?<![\w"#:/-])eq:([a-z][a-z_]*)')


def link_equations(html_text: str, page: str = "derivations.html") -> str:
    """Each numbered ``eq:label`` in HTML text as "Eq. (N)" linking to its derivation, as the book's
    text does (book/_ext/equation_links.py does it for Markdown; HTML output needs it here)."""
    from lgacc.paper.equations import equation_anchor, equation_name, equation_numbers

    numbers = equation_numbers()

    def link(match: re.Match) -> str:
        label = match.group(0)
        if label not in numbers:
            return label
        return (f'<a class="reference internal" href="{page}#{equation_anchor(label)}" title="{label}">'
                f"{equation_name(label)}</a>")

    return _EQUATION_LABEL.sub(link, html_text)


#: A power of ten as the paper prints it ("6.24\times 10^{24}"), not already inside math.
_PRINTED_POWER = re.compile(r"(?<![\d.$])(?<!\\\()(\d[\d.]*\s*\\times\s*10\^\{?\d+\}?)")


def printed_math(text: str, open_: str = "$", close: str = "$") -> str:
    r"""``text`` with each printed power of ten set as math (``$...$`` in Markdown, ``\(...\)`` in HTML).

    >>> print(printed_math(r"6.23e+24 (6.24\times 10^{24} flop)", r"\(", r"\)"))
    6.23e+24 (\(6.24\times 10^{24}\) flop)
    >>> print(printed_math(r"already \(6.24\times 10^{24}\) or $3.2\times 10^6$"))
    already \(6.24\times 10^{24}\) or $3.2\times 10^6$
    """
    return _PRINTED_POWER.sub(lambda m: f"{open_}{m.group(1)}{close}", text)
