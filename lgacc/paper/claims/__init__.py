"""The paper's prose claims as numbers: each printed number beside its reproduction, with a verdict.

* :mod:`.grading` -- the printed claims (``data/paper/claims.yaml``), the rules that grade them
  and the result types;
* :mod:`.calculators` -- one calculator per claim id;
* :mod:`.reading` -- the one paper reading, its switches and the reading matrix's columns;
* :mod:`.registry` -- every claim computed under every column, graded under the paper reading, kept on disk.
"""

from .grading import (
    ABOUT_FACTOR,
    CONFIRMING,
    MARKS,
    MARK_MEANINGS,
    DIFFERS,
    EXPLAINED,
    NOT_REPRODUCED,
    PAPER_INCONSISTENT,
    REPRODUCED,
    RULES,
    VERDICTS,
    WORD_TOLERANCE,
    Alternative,
    ClaimResult,
    Demonstration,
    Outcome,
    PrintedClaim,
    Rule,
    confirms,
    difference,
    grade,
    mark,
    printed_claims,
)
from .reading import COLUMNS, PAPER_NAME, PAPER_READING, SWITCHES, PaperReading
from .registry import calculators, claims_records, reading_matrix, reproduce_claims, switch_effects, verdict_of

__all__ = ["ABOUT_FACTOR", "CONFIRMING", "DIFFERS", "EXPLAINED", "NOT_REPRODUCED", "PAPER_INCONSISTENT", "REPRODUCED",
           "RULES", "VERDICTS", "WORD_TOLERANCE", "Alternative", "ClaimResult", "Demonstration", "Outcome", "PrintedClaim",
           "Rule", "confirms", "difference", "grade", "printed_claims", "calculators", "claims_records",
           "reproduce_claims", "switch_effects", "verdict_of", "MARKS", "MARK_MEANINGS", "mark", "COLUMNS", "PAPER_NAME",
           "PAPER_READING", "SWITCHES", "PaperReading", "reading_matrix"]
