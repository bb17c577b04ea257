"""Display helpers for the book's notebooks: a notebook stays a thin narrative.

Every function here returns or displays a rendering of library results; none
computes anything of the paper's.  One module per job, each importing only those
above it:

===============  ==========================================================================
module           job
===============  ==========================================================================
``display``      HTML and Markdown shown (printed outside IPython); a sentence instead of a
                 traceback where a result cannot be computed
``formats``      numbers as a reader wants them: counts, durations, sizes, percentages; a
                 frame with its known columns formatted
``typeset``      math in text: equation labels as numbered links, printed powers of ten set
                 as math
``tables``       tables for people: HTML that fits the page, wide tables cut, a
                 configuration as a one-row table
``downloads``    embedded downloads (CSV, SVG) named after an artifact's label
``figures``      figures as inline SVG at text width, never narrower than legible, with their
                 downloads
``comparisons``  the paper beside the reproduction, differences marked; the scorecard
``claims``       the paper's prose claims as sentences and as tables that fit a page
``hardware``     the hardware a page was computed for
``readings``     the reading matrix as a table of marks, its legend and its values folded
===============  ==========================================================================

This package re-exports every public name of its modules, so ``from lgacc.book.notebook
import show_table`` and the like keep working.
"""

from __future__ import annotations

from . import claims, comparisons, display, downloads, figures, formats, hardware, readings, tables, typeset
from .claims import claim_markdown, claims_or_explain, claims_table, show_claims, switches_table
from .comparisons import (
    AGREE_MARK,
    DIFFER_MARK,
    agreement_columns,
    compact_comparison,
    comparison_sentence,
    linked_scorecard,
    row_notes,
    show_comparison,
    styled_comparison,
    summarize_agreement,
)
from .display import show_html, show_markdown, show_unavailable, try_show
from .downloads import artifact_filename, download_link, show_csv_download, show_data_download
from .figures import show_kept_svg_figure, show_svg_figure
from .formats import (
    BINARY_PREFIXES,
    COLUMN_FORMATS,
    COLUMN_TITLES,
    COUNT_SUFFIXES,
    SI_PREFIXES,
    format_bytes,
    format_count,
    format_days,
    format_gib,
    format_int,
    format_number,
    format_percent,
    format_si,
    is_missing,
    readable_frame,
)
from .hardware import hardware_summary, show_hardware
from .tables import SWEEP_COLUMNS, SYMBOL_LATEX, config_table, show_sweep_table, show_table, show_wide_table, table_html
from .typeset import link_equations, printed_math

# every public name of the modules, as the single module exported them
__all__ = [*display.__all__, *formats.__all__, *typeset.__all__, *tables.__all__, *downloads.__all__,
           *figures.__all__, *comparisons.__all__, *claims.__all__, *hardware.__all__]
