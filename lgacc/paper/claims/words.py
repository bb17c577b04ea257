"""The readings of the paper in a reader's words: each moved switch by its meaning, not its code name (issue #33
item 7).  A reading's name is :func:`lgacc.paper.claims.reading.column_name`'s, ``"field=value, field=value"``
(``"paper reading"`` for the paper's); this module needs nothing else, so the grading can name readings without
importing the matrix.  ``tests/test_reading.py`` checks that every switch value of the matrix has its words."""

from __future__ import annotations

__all__ = ["WORDS", "name_in_words"]

#: ``field=value`` (as :func:`~lgacc.paper.claims.reading.column_name` writes it) -> its meaning in words.
WORDS: dict[str, str] = {
    "scaling_grid='fine'": "limits read between every model of the grid",
    "divisible_heads=True": "whole attention heads per GPU",
    "heads_cap=True": "at most one GPU per attention head",
    "memory_limit='constraint'": "memory as a rule rather than an output",
    "divisible_layers=False": "pipeline stages holding fractions of layers",
    "pipeline_overlap='always'": "pipeline transfers always overlapped",
    "pipeline_overlap='never'": "pipeline transfers never overlapped",
    "pipeline_placement='intra-node'": "pipeline traffic on NVLink inside a node",
    "infiniband_threshold='implied by ~25 T'": "the InfiniBand threshold ~25 T implies",
    "cluster_target='printed'": "the printed time as target",
    "flops_per_token=6": "6 flops per token and parameter (no recomputation)",
    "critical_batch='printed'": "the critical batch rounded as the paper prints it",
    "gb='GB'": "decimal GB",
}


def name_in_words(name: str) -> str:
    """``"gb='GB'"`` -> ``"decimal GB"``; ``"a=1, b=2"`` -> both parts' words joined by "and"; ``"paper reading"``
    -> ``"the paper reading"``; a part without words is kept as it is."""
    if name == "paper reading":
        return "the paper reading"
    return " and ".join(WORDS.get(part, part) for part in name.split(", "))
