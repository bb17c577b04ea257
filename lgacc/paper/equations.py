"""The paper's equation numbers, so the book can cite ``eq:critical_batch`` as "Eq. (2)".

LaTeX numbers every line of an ``equation`` or ``align`` environment that is not
marked ``\\nonumber`` (``\\notag``), one counter for the whole article (the
paper resets only its table counter per section).  :func:`number_equations`
applies that rule to the LaTeX source; the numbers it yields for the paper are
transcribed in ``data/paper/equations.yaml`` (the source is not shipped with the
package) and a test checks the transcription against the source when it is present.
"""

from __future__ import annotations

import re
from functools import cache

import yaml

from lgacc.paths import DATA

__all__ = ["number_equations", "equation_numbers", "equation_anchor", "equation_name", "LABEL_PATTERN"]

#: An equation label as the paper writes it, and as the code names each formula.
LABEL_PATTERN = re.compile(r"eq:[A-Za-z0-9_]+")

_NUMBERED = ("equation", "align", "gather", "multline", "eqnarray")
_ENVIRONMENT = re.compile(
    r"\\begin\{(?P<name>" + "|".join(_NUMBERED) + r")(?P<star>\*?)\}(?P<body>.*?)\\end\{(?P=name)(?P=star)\}", re.S
)
_COMMENT = re.compile(r"(?<!\\)%.*")
_DATA = DATA / "paper" / "equations.yaml"


def number_equations(tex: str) -> dict[str, int]:
    """Map each equation label of ``tex`` to the number LaTeX prints for it.

    An unlabelled numbered line still takes a number (the X family's definition is
    equation 1 in the paper).  A label stands for the number of the line it is on.
    """
    tex = _COMMENT.sub("", tex)
    numbers: dict[str, int] = {}
    counter = 0
    for match in _ENVIRONMENT.finditer(tex):
        name, starred, body = match["name"], match["star"], match["body"]
        if starred:
            continue
        # equation and multline hold one numbered line; align-like environments one per row
        rows = [body] if name in ("equation", "multline") else re.split(r"\\\\", body)
        for row in rows:
            if not row.strip() or re.search(r"\\(nonumber|notag)\b", row):
                continue
            counter += 1
            for label in re.findall(r"\\label\{(eq:[^}]+)\}", row):
                numbers[label] = counter
    return numbers


@cache
def equation_numbers() -> dict[str, int]:
    """The paper's equation numbers, from ``data/paper/equations.yaml``."""
    return {str(label): int(number) for label, number in yaml.safe_load(_DATA.read_text()).items()}


def equation_anchor(label: str) -> str:
    """The HTML id of the derivation of ``label`` on the derivations page (``eq-critical-batch``)."""
    return label.replace(":", "-").replace("_", "-")


def equation_name(label: str) -> str:
    """How the book names ``label``: "Eq. (2)", or the label itself if the paper does not number it."""
    number = equation_numbers().get(label)
    return f"Eq. ({number})" if number is not None else label
