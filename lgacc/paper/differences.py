"""Every printed table cell the package does not reproduce under its defaults, found by comparing.

The assumptions page of the book lists them: each table of the paper is built on
the paper's hardware with the default assumptions and compared with its
transcription (:meth:`lgacc.paper.artifacts.Artifact.compare`); a computed cell that
does not round to the printed value is listed with both numbers, whether a named
reading explains it (its ``verdict``), and the page where it is discussed.
Nothing here is typed in: the list, the printed text and the reproduced value
come from the comparison, so a cell that starts to agree drops out, and one that
stops agreeing appears.

:data:`WHY` gives, for the cells whose cause the book has worked out, the cause in
words (no numbers: the numbers are the comparison's, and the pages linked show
the computation).  A differing cell without an entry says "not explained".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

from lgacc.cache.results import cached
from lgacc.model.hardware import Hardware, load_hardware

from .artifacts import registry
from .cells import AGREES, EXPLAINED, VERDICT, flag_column, is_echoed, quantities

__all__ = ["DifferingCell", "WHY", "differing_cells", "differences_markdown"]

#: The columns that name a row of a comparison, in the order they are joined.
_ROW_KEYS = ("model", "name", "phase", "parallelism", "method", "target")

#: The cause of a difference, where the book has found one: (table, quantity, words in the row name) -> why.
WHY: dict[tuple[str, str, str], str] = {
    ("table:x_model", "p", "BERT"): "no parameter count reproduces it: the exact count, with or without biases, "
                                    "rounds to another value",
    ("table:x_model", "p", "Megatron-LM"): "the paper used the leading-order count 12 d_m² d_l for this row and "
                                           "the exact count for the X rows",
    ("table:x_model", "b_c", "X32"): "the paper's critical-batch constant, rounded before use, gives the printed "
                                     "value; the derived constant gives the reproduced one",
    ("table:parallel_methods_memory", "offloadable", "None / Baseline"): "a tie in rounding: with the leading-order "
        "parameter count the sum lands exactly on the half and rounds (half to even) to the printed value",
    ("table:smaller_cluster", "efficiency", "3d / Baseline"): "the configuration decoded from the row's memory "
        "(n_l = 160, n_mu = 604) pays the bubble, the tensor all-reduces and the non-overlapped gradient reduction; "
        "the same rule gives the printed efficiency of table:parallel_methods_comparison's 3d baseline, so no one rule "
        "gives both printed efficiencies (the evaluation check computes both)",
}


@dataclass(frozen=True)
class DifferingCell:
    """One printed cell the defaults do not reproduce."""

    table: str
    row: str
    quantity: str
    printed: str
    reproduced: str
    explained: bool  # a named reading of the table explains it (its ``verdict`` column)
    page: str
    why: str


def _row_name(row) -> str:
    return " / ".join(str(row[key]) for key in _ROW_KEYS if key in row.index)


def _text(value) -> str:
    return "—" if value is None or value != value else str(value)


def _why(table: str, quantity: str, row: str) -> str:
    for (label, name, words), reason in WHY.items():
        if label == table and name == quantity and words in row:
            return reason
    return ""


def differing_cells(hardware: str | Hardware) -> list[DifferingCell]:
    """The differing cells of every table with a transcription, built on ``hardware``; kept on disk."""
    spec = load_hardware(hardware)
    return list(cached("differing_cells", spec, lambda: tuple(_differing_cells(spec))))


def _differing_cells(spec: Hardware) -> list[DifferingCell]:
    found = []
    for label, artifact in registry().items():
        if artifact.kind != "table" or artifact.compare is None:
            continue
        try:
            comparison = artifact.compare(artifact.build(spec))
        except Exception:  # a table without a transcription or one that cannot be built is graded elsewhere
            continue
        for _, row in comparison.iterrows():
            for quantity in quantities(comparison):
                agrees = row.get(flag_column(quantity, AGREES))
                if agrees is None or agrees != agrees or bool(agrees) or is_echoed(row, quantity):
                    continue  # not printed, agrees, or an input shown again
                name = _row_name(row)
                found.append(DifferingCell(
                    label, name, quantity, _text(row.get(f"{quantity} (paper)")),
                    _text(row.get(f"{quantity} (reproduced)")),
                    str(row.get(flag_column(quantity, VERDICT), "")) == EXPLAINED, artifact.page or "",
                    _why(label, quantity, name)))
    return found


def differences_markdown(cells: Sequence[DifferingCell], hardware_name: str) -> str:
    """The assumptions page's list: one dropdown per table, each cell with both numbers and its cause."""
    if not cells:
        return f"On **{hardware_name}** every computed printed cell of every table is reproduced.\n"
    tables = list(dict.fromkeys(c.table for c in cells))
    lines = [f"Computed for **{hardware_name}**, the paper's hardware, with the default assumptions: "
             f"{len(cells)} printed cell{'s' if len(cells) > 1 else ''} in {len(tables)} table{'s' if len(tables) > 1 else ''} do{'es' if len(cells) == 1 else ''} not round to the printed value "
             f"({sum(c.explained for c in cells)} of them explained by a named reading of the table). "
             "Inputs a table only shows again are not counted. Open a table to see its cells; the table's "
             "page shows the computation.", ""]
    for table in tables:
        rows = [c for c in cells if c.table == table]
        page = rows[0].page
        link = f"{{doc}}`{table} </generated/{page}>`" if page else f"`{table}`"
        lines += [f":::{{dropdown}} `{table}`: {len(rows)} cell{'s' if len(rows) > 1 else ''}", "", f"On the page {link}.", "",
                  "| row | cell | printed | reproduced | cause |", "|---|---|---|---|---|"]
        for c in rows:
            cause = c.why or ("explained by a named reading (see the page)" if c.explained else "not explained")
            lines.append(f"| {c.row} | {c.quantity} | {c.printed} | {c.reproduced} | {cause} |")
        lines += ["", ":::", ""]
    return "\n".join(lines)


def differences_records(cells: Sequence[DifferingCell]) -> list[dict]:
    """JSON-ready rows of :func:`differing_cells`."""
    return [asdict(c) for c in cells]
