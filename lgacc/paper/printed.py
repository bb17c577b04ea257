"""The paper's printed values, for comparison only, and the rule for "agrees".

Printed values are transcribed, as text, into ``data/paper/<label>.yaml``
(``table:hardware_bandwidth`` -> ``table_hardware_bandwidth.yaml``), each file
naming its source in the paper.  Nothing in ``lgacc`` computes from them: they
are read only to be shown beside a reproduction and compared with it.

A reproduced number *agrees to printed precision* with a printed one when it
rounds to it: it lies within half a unit of the printed value's last digit
(``143`` admits [142.5, 143.5]; ``4.61 k`` admits [4605, 4615]).  Every printed
digit counts, trailing zeros included: an integer printed without "about" must be
matched exactly (``7400`` admits only a reproduction that rounds to 7400, ``2420``
admits [2419.5, 2420.5]).  Only where a table states its own convention does the
caller pass the number of significant digits: table:x_model prints every derived
column to three significant digits (``488``, ``301 M``, ``8.15 B``, so its ``b_c``
``2420`` is read to three), and the time column of table:parallel_methods_comparison
prints two (``630 y``, ``1.3 y``, ``6.8 d``, ``32 d``, so ``100 d`` admits [95, 105]).
table:smaller_cluster's times are read to their last digit: it prints ``199 d`` and
``186 d``, three digits, so its ``180 d`` admits [179.5, 180.5].  Word rules ("about", "over", ...) are for prose and
live in :mod:`lgacc.paper.claims`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from lgacc.errors import UserInputError
from lgacc.paths import DATA
from lgacc.units import DAYS_PER_YEAR

#: The shipped spec of the hardware the paper's printed numbers are for (its appendix "Hardware
#: details": A100 80 GB on 16-GPU nodes).  The paper is graded on it whatever hardware a book is
#: built for: a printed number can only be reproduced on the hardware it was computed for.
PAPER_HARDWARE = "a100-80gb"

PAPER_DIR = DATA / "paper"

#: Multipliers of the suffixes the paper prints after a number.
SUFFIXES = {
    "": 1.0,
    "K": 1e3,
    "k": 1e3,
    "M": 1e6,
    "B": 1e9,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    # time units, converted to days
    "d": 1.0,
    "y": DAYS_PER_YEAR,
}

_PRINTED = re.compile(r"^\s*(?P<number>[-+]?\d+(?:\.\d+)?)\s*(?P<suffix>[A-Za-z]?)\s*$")


@dataclass(frozen=True)
class PrintedValue:
    """A number as the paper prints it: its value and the precision of its last digit."""

    text: str
    value: float
    half_unit: float

    def agrees(self, reproduced: float, *, relative_slack: float = 1e-9) -> bool:
        """Whether ``reproduced`` rounds to this printed value."""
        if reproduced is None or not math.isfinite(reproduced):
            return False
        return abs(reproduced - self.value) <= self.half_unit * (1 + relative_slack) + 1e-12 * abs(self.value)

    @property
    def low(self) -> float:
        return self.value - self.half_unit

    @property
    def high(self) -> float:
        return self.value + self.half_unit


def parse_printed(text: str | float | int, significant: int | None = None) -> PrintedValue:
    """Parse a printed number such as ``"143"``, ``"4.61 k"``, ``"2.91 M"`` or ``"6.8 d"``.

    ``significant`` overrides the number of significant digits read from the text.
    """
    raw = str(text)
    match = _PRINTED.match(raw)
    if match is None or match["suffix"] not in SUFFIXES:
        raise UserInputError(f"cannot read {raw!r} as a printed number (digits with an optional suffix {sorted(SUFFIXES)})")
    number = Decimal(match["number"])
    scale = SUFFIXES[match["suffix"]]
    exponent = number.as_tuple().exponent  # -2 for "4.61"
    if significant is not None and number != 0:
        exponent = number.adjusted() - significant + 1
    half_unit = 0.5 * float(Decimal(1).scaleb(exponent)) * scale
    return PrintedValue(text=raw, value=float(number) * scale, half_unit=half_unit)


def format_like(value: float, printed: str) -> str:
    """Format ``value`` with the same suffix and number of decimals as ``printed``."""
    match = _PRINTED.match(str(printed))
    if match is None:
        return f"{value:.3g}"
    suffix = match["suffix"]
    decimals = max(0, -Decimal(match["number"]).as_tuple().exponent)
    scaled = value / SUFFIXES.get(suffix, 1.0)
    return f"{scaled:.{decimals}f}" + (f" {suffix}" if suffix else "")


def paper_path(label: str) -> Path:
    """File of the paper's printed values for ``label`` (``table:x`` -> ``table_x.yaml``)."""
    return PAPER_DIR / f"{label.replace(':', '_')}.yaml"


def load_paper(label: str) -> dict[str, Any]:
    """The transcription of one table (or list of claims): ``source``, ``caption``, ``rows``."""
    path = paper_path(label)
    if not path.is_file():
        raise UserInputError(f"no transcription of {label!r} in {PAPER_DIR}")
    return yaml.safe_load(path.read_text())


def paper_table(label: str) -> pd.DataFrame:
    """The printed rows of ``label`` as a DataFrame of printed text."""
    return pd.DataFrame(load_paper(label)["rows"]).astype(str)


def compare_cell(column: str, printed: str, value: float, significant: int | None = None) -> dict[str, Any]:
    """The three comparison columns of one numeric cell: printed, reproduced (formatted
    like the printed text) and whether it agrees to printed precision."""
    return {
        f"{column} (paper)": printed,
        f"{column} (reproduced)": format_like(value, printed),
        f"{column} agrees": parse_printed(printed, significant).agrees(value),
    }
