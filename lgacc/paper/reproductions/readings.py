"""``readings``: the reading matrix, every graded claim under the paper reading, each switch moved alone and
the combinations explanations have used (:func:`lgacc.paper.claims.reading_matrix`)."""

from __future__ import annotations

from ..artifacts import Artifact
from ..claims import reading_matrix

ARTIFACT = Artifact(
    label="readings",
    title="The reading matrix: every claim under every reading of the paper",
    kind="claims",
    build=lambda hardware: reading_matrix(hardware),
    page="readings",
    description="Rows: every graded claim; columns: the paper reading, each switch moved alone, and the combinations "
    "an explanation uses; each cell the value and whether it agrees; a summary per column.",
)
