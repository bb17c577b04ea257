"""The paper and its grading: the printed values, the equation numbers, the prose claims, one
reproduction per table and figure, the scorecard, the cells that differ and why, the front page's
findings, and what each assumption switch moves.

* :mod:`.printed` -- the paper's printed values (``data/paper/``) and the rule for "agrees";
* :mod:`.equations` -- the paper's equation numbers;
* :mod:`.cells` -- which printed cells are computed and which are inputs echoed back;
* :mod:`.claims` -- the prose claims, one calculator each, graded;
* :mod:`.artifacts` and :mod:`.reproductions` -- one builder per LaTeX label;
* :mod:`.scorecard`, :mod:`.differences`, :mod:`.findings`, :mod:`.assumption_effects`.
"""

import importlib

__all__ = ["PAPER_DIR", "PAPER_HARDWARE", "PrintedValue", "compare_cell", "format_like", "load_paper", "paper_path",
           "paper_table", "parse_printed"]


def __getattr__(name: str):
    """The names of :mod:`.printed`, imported on first use: a module of this package that needs neither pandas nor
    the printed values (:mod:`.equations`, read by the calculator's script) does not import them."""
    if name in __all__:
        return getattr(importlib.import_module(".printed", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
