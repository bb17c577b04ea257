"""Counting the cells of a comparison: computed outputs are graded, inputs echoed back are not.

A comparison (``Artifact.compare``) puts each printed cell beside its reproduction,
with three columns per quantity: ``q (paper)``, ``q (reproduced)``, ``q agrees``.
Some printed cells are not results at all but inputs the table shows again: the
models' dimensions of ``table:x_model``, the spec's own bandwidths of
``table:hardware_bandwidth``, the operation names of ``table:mixed_buffering``.
They agree by construction, so counting them as reproduced would inflate the
score.  A reproduction marks such a cell with a fourth column, ``q echoed_input``,
``True`` for the echoed cell (:func:`echoed`); a cell without the flag, or with it
``False``, is a computed output.  :func:`tally` counts the two apart.

A printed cell whose reproduction differs may still be *explained* by a named
reading: a ``q verdict`` column saying ``explained`` (``table:smaller_cluster``'s
``n_gpu``) moves the cell from *differs* to *explained*.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

AGREES = "agrees"
ECHOED = "echoed_input"
VERDICT = "verdict"
EXPLAINED = "explained"


def flag_column(quantity: str, suffix: str) -> str:
    """``("d_s", "echoed_input")`` -> ``"d_s echoed_input"``; a nameless quantity gives the bare suffix."""
    return f"{quantity} {suffix}" if quantity else suffix


def echoed(quantity: str, is_echoed: bool = True) -> dict[str, bool]:
    """The flag that marks one cell of ``quantity`` as an input echoed back (or, ``False``, as computed)."""
    return {flag_column(quantity, ECHOED): bool(is_echoed)}


def quantities(comparison) -> list[str]:
    """The graded quantities of a comparison, from its ``... agrees`` columns (``"p agrees"`` -> ``"p"``)."""
    return [str(c)[: -len(AGREES)].rstrip() for c in comparison.columns if str(c).endswith(AGREES)]


def _flag(value: Any) -> bool | None:
    """A cell's flag as a bool, or ``None`` where the paper prints nothing (NaN or None)."""
    if value is None or value != value:  # None or NaN
        return None
    return bool(value)


def is_echoed(row, quantity: str) -> bool:
    """Whether the cell of ``quantity`` in ``row`` (a mapping or Series) is an input echoed back."""
    return bool(_flag(row.get(flag_column(quantity, ECHOED))))


@dataclass(frozen=True)
class CellTally:
    """The compared cells of one comparison, computed outputs and echoed inputs apart."""

    #: computed cells compared with a printed value
    graded: int = 0
    #: of those, the ones that round to the printed value
    agree: int = 0
    #: of those that do not, the ones a named reading explains (a ``q verdict`` of ``explained``)
    explained: int = 0
    #: printed cells that are inputs echoed back, shown but not counted
    echoed: int = 0
    #: of those, the ones equal to the printed value (all of them on the paper's own inputs)
    echoed_agree: int = 0

    @property
    def differ(self) -> int:
        return self.graded - self.agree - self.explained

    def echoed_text(self) -> str:
        """``"49 inputs echoed, not counted"``, saying how many of them are not the paper's; empty without any."""
        if not self.echoed:
            return ""
        text = f"{self.echoed} input{'s' if self.echoed != 1 else ''} echoed, not counted"
        differing = self.echoed - self.echoed_agree
        if differing:
            text += f" ({differing} not the paper's: this spec's own value{'s' if differing != 1 else ''})"
        return text


def tally(comparison) -> CellTally:
    """Count the cells of ``comparison``: every ``q agrees`` flag that is set (a missing flag is a cell
    the paper does not print), split by its ``q echoed_input`` flag."""
    graded = agree = explained = echoed_count = echoed_agree = 0
    names = quantities(comparison)
    for _, row in comparison.iterrows():
        for quantity in names:
            ok = _flag(row.get(flag_column(quantity, AGREES)))
            if ok is None:
                continue
            if is_echoed(row, quantity):
                echoed_count += 1
                echoed_agree += ok
                continue
            graded += 1
            if ok:
                agree += 1
            elif str(row.get(flag_column(quantity, VERDICT), "")) == EXPLAINED:
                explained += 1
    return CellTally(graded, agree, explained, echoed_count, echoed_agree)
