"""``table:parallel_methods_memory``: memory per GPU of the searched X_160 configurations.

The rows are those of ``table:parallel_methods_comparison``, found by the same
search (:mod:`.parallel_methods_comparison`); memory in the paper's GB (GiB).
"""

from __future__ import annotations

import pandas as pd

from ..artifacts import Artifact
from . import parallel_methods_comparison as comparison

LABEL = "table:parallel_methods_memory"


#: Same rows and keys as ``table:parallel_methods_comparison`` (memory in GiB): the same function, so
#: a caller building both (the scorecard, :mod:`lgacc.paper.assumption_effects`) can tell they are one search.
build = comparison.build


def compare(reproduced: pd.DataFrame) -> pd.DataFrame:
    return comparison.compare_columns(reproduced, LABEL, {c: c for c in comparison.MEMORY_COLUMNS})


ARTIFACT = Artifact(
    label=LABEL,
    title="Memory usage breakdown of the fastest X160 configurations",
    kind="table",
    build=build,
    compare=compare,
    page="trillion_parameter",
    description="State, checkpoints, buffers and activations per GPU for the searched configurations.",
)
