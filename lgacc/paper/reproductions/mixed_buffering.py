"""``table:mixed_buffering``: the mixed-buffering operation sequence and its resource usage.

Each row is built from the schedule of :func:`lgacc.model.formulas.buffering.mixed_buffering_schedule`:
the buffers are those the two streams' operations hold, the computation is the
matrix-product flops of the operation (a backward pass costs two forward
passes), the network the ring all-gather or reduce-scatter bytes of one layer,
all relative to the double-buffered forward step and simplified by sympy.

The operation names (``stream_1``, ``stream_2``) are the schedule as written from
the paper's text, shown again: the comparison flags them ``echoed_input`` and only
the buffers, computation, network and intensity count as reproduced (:mod:`lgacc.paper.cells`).
"""

from __future__ import annotations

import pandas as pd

from lgacc.model.formulas.buffering import mixed_buffering_table
from lgacc.model.hardware import Hardware

from ..artifacts import Artifact
from ..cells import echoed
from ..printed import compare_cell, paper_table

__all__ = ["LABEL", "build", "compare", "ARTIFACT"]

LABEL = "table:mixed_buffering"
NUMERIC = ("parameter_buffers", "gradient_buffers", "computation", "network", "arithmetic_intensity")


def build(hardware: Hardware | None = None) -> pd.DataFrame:
    """The six steps (forward, backward) with buffers, computation, network and intensity.

    Relative values are exact rationals from sympy, returned as numbers; the
    hardware does not enter this table.
    """
    rows = []
    for row in mixed_buffering_table():
        out = dict(row)
        for column in NUMERIC:
            value = out[column]
            out[column] = int(value) if getattr(value, "is_integer", False) else float(value)
        rows.append(out)
    return pd.DataFrame(rows)


def compare(reproduced: pd.DataFrame) -> pd.DataFrame:
    """Printed beside reproduced, row by row (the paper's row order, same operation labels)."""
    paper = paper_table(LABEL)
    if len(paper) != len(reproduced):
        raise ValueError(f"{LABEL}: {len(paper)} printed rows, {len(reproduced)} reproduced")
    rows = []
    for (_, printed), row in zip(paper.iterrows(), reproduced.itertuples(index=False)):
        out = {"phase": row.phase}
        for column in ("stream_1", "stream_2"):
            out[f"{column} (paper)"] = printed[column]
            out[f"{column} (reproduced)"] = getattr(row, column)
            out[f"{column} agrees"] = printed[column] == getattr(row, column)
            out.update(echoed(column))  # the schedule's own operation, as typed from the paper's text
        for column in NUMERIC:
            out.update(compare_cell(column, printed[column], float(getattr(row, column))))
        rows.append(out)
    return pd.DataFrame(rows)


ARTIFACT = Artifact(
    label=LABEL,
    title="Mixed buffering: operation sequence and resource usage",
    kind="table",
    build=build,
    compare=compare,
    page="mixed_buffering",
    description="Buffers, computation, network and arithmetic intensity of each step of the mixed-buffering schedule.",
)
