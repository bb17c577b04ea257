"""``claims``: every number the paper states in prose (data/paper/claims.yaml) beside its reproduction.

Calculators in :mod:`lgacc.paper.claims.calculators`; agreement rules in :mod:`lgacc.paper.claims`.
"""

from __future__ import annotations

from ..artifacts import Artifact
from ..claims import claims_records

ARTIFACT = Artifact(
    label="claims",
    title="The paper's prose claims as numbers",
    kind="claims",
    build=lambda hardware: claims_records(hardware),
    page="claims",
    description="Each number printed in the text (trillion-parameter example, scaling limits, Ethernet, introduction) "
    "with the reproduced value, the tolerance and how it was obtained.",
)
