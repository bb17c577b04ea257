"""Display helpers for the book's notebooks: a notebook stays a thin narrative.

Every function here returns or displays a rendering of library results; none
computes anything of the paper's.
"""

from __future__ import annotations

import base64
import html
import io
import re
from typing import Any, Sequence

import pandas as pd

from .artifacts import Artifact, agreement
from .hardware import GIB, Hardware
from .units import DAYS_PER_YEAR

AGREE_MARK = "✓"
DIFFER_MARK = "✗"


def _display(obj: Any) -> None:
    try:
        from IPython.display import display
    except ImportError:  # plain Python: print instead
        print(obj)
    else:
        display(obj)


def _markdown(text: str) -> None:
    try:
        from IPython.display import Markdown, display
    except ImportError:
        print(text)
    else:
        display(Markdown(text))


def hardware_summary(hardware: Hardware) -> pd.DataFrame:
    """The spec a page was computed for, in the paper's units."""
    rows = [
        ("name", hardware.name),
        ("peak compute", f"{hardware.peak_flop_per_s / 1e12:g} Tflop/s"),
        ("memory", f"{hardware.memory_bytes / GIB:g} GiB"),
        ("GPUs per NVLink node", f"{hardware.gpus_per_node}"),
        ("source", hardware.source),
    ]
    return pd.DataFrame(rows, columns=["field", "value"])


def show_hardware(hardware: Hardware) -> None:
    """State which hardware the page was computed for."""
    _markdown(f"Computed for hardware **{hardware.name}**" + (f" — {hardware.description}" if hardware.description else "") + ".")


def agreement_columns(frame: pd.DataFrame) -> list[str]:
    return [column for column in frame.columns if str(column).endswith("agrees")]


def summarize_agreement(comparison: pd.DataFrame) -> tuple[int, int]:
    """(cells that agree, cells compared) over every ``... agrees`` column."""
    return agreement(comparison)


def comparison_sentence(comparison: pd.DataFrame) -> str:
    """One line: how many computed cells agree, and how many printed cells are inputs echoed back
    (shown, not counted; :mod:`lgacc.cells`)."""
    from .cells import tally

    counted = tally(comparison)
    agree, total = counted.agree, counted.graded
    if agree == total:
        text = f"{DIFFER_MARK if total == 0 else AGREE_MARK} All {total} compared cells agree with the paper to its printed precision."
    else:
        text = (
            f"{DIFFER_MARK} {total - agree} of {total} compared cells differ from the paper "
            f"(marked {DIFFER_MARK}); {agree} agree to its printed precision."
        )
    if counted.echoed:
        text += (f" The {counted.echoed} cells marked *input* are inputs the table shows again, not results, "
                 "and are not counted" + (f" ({counted.echoed - counted.echoed_agree} of them are this spec's own "
                                          "values, not the paper's)." if counted.echoed_agree < counted.echoed else "."))
    return text


def styled_comparison(comparison: pd.DataFrame):
    """The comparison with ✓/✗ marks and differing cells highlighted."""
    shown = comparison.copy()
    flags = agreement_columns(shown)
    for column in flags:
        shown[column] = shown[column].map(lambda ok: "" if ok is None or ok != ok else AGREE_MARK if ok else DIFFER_MARK)

    def highlight(value: Any) -> str:
        return "background-color: #f8d7da; color: #842029" if value == DIFFER_MARK else ""

    return shown.style.map(highlight, subset=flags).hide(axis="index")


def _download_link(payload: bytes, filename: str, mime: str, text: str) -> str:
    encoded = base64.b64encode(payload).decode("ascii")
    return f'<a download="{filename}" href="data:{mime};base64,{encoded}">{text}</a>'


def artifact_filename(label: str, suffix: str) -> str:
    """``table:x_model`` -> ``table_x_model.csv``."""
    return label.replace(":", "_") + suffix


def show_csv_download(frame: pd.DataFrame, label: str) -> None:
    """A link that downloads the reproduced table as CSV (embedded: the book stays offline)."""
    link = _download_link(frame.to_csv(index=False).encode(), artifact_filename(label, ".csv"), "text/csv", "Download the reproduced table (CSV)")
    _html(link)


def show_svg_figure(figure, label: str, data: pd.DataFrame | None = None) -> None:
    """Display a figure as SVG, full text width, with links that download the same SVG and,
    when given, the data drawn (CSV).

    Text is kept as SVG text (``svg.fonttype: none``), so it stays searchable and the
    book's browser checks can measure its rendered size.
    """
    import matplotlib

    buffer = io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        figure.savefig(buffer, format="svg", bbox_inches="tight")
    svg = buffer.getvalue()
    _html(_fit_to_page(svg.decode("utf-8")))
    links = [_download_link(svg, artifact_filename(label, ".svg"), "image/svg+xml", "Download the figure (SVG)")]
    if data is not None:
        links.append(_download_link(data.to_csv(index=False).encode(), artifact_filename(label, ".csv"), "text/csv",
                                    "Download the data drawn (CSV)"))
    _html(" · ".join(links))


def _fit_to_page(svg: str) -> str:
    """Let an inline SVG shrink to the page's width (it keeps its viewBox, so its aspect)."""
    head, sep, rest = svg.partition("<svg ")
    tag, close, body = rest.partition(">")
    tag = re.sub(r'\s(width|height)="[^"]*"', "", tag)
    return f'{head}{sep}{tag} style="width: 100%; height: auto; max-width: 100%"{close}{body}'


def _html(text: str) -> None:
    try:
        from IPython.display import HTML, display
    except ImportError:
        print(text)
    else:
        display(HTML(text))


_PAPER, _REPRODUCED, _AGREES, _ECHOED = " (paper)", " (reproduced)", " agrees", " echoed_input"


def compact_comparison(comparison: pd.DataFrame) -> pd.DataFrame:
    """One column per quantity instead of three (paper, reproduced, agrees), as HTML cells.

    A cell shows the reproduced value; where it differs from the paper it is marked
    ✗, highlighted, and the printed value is shown beneath it.  Any other printed value
    that reads differently (not graded, or agreeing within a stated rule) is shown
    beneath too, unmarked.  An input echoed back (flagged ``echoed_input``, not graded)
    is never marked: a quantity whose every cell is one is headed "(input)", a single
    such cell says "input" beneath it.
    The wide three-column form stays available as a CSV download.
    """
    columns = [str(c) for c in comparison.columns]
    quantities = [c[: -len(_REPRODUCED)] for c in columns if c.endswith(_REPRODUCED)]
    keys = [c for c in columns if not c.endswith((_PAPER, _REPRODUCED, _AGREES, _ECHOED))]

    def echoed(row: pd.Series, quantity: str) -> bool:
        flag = row.get(quantity + _ECHOED)
        return flag is not None and not _missing(flag) and bool(flag)

    all_echoed = {q for q in quantities if q + _ECHOED in columns
                  and all(echoed(row, q) for _, row in comparison.iterrows() if not _missing(row.get(q + _AGREES)))}

    def cell(row: pd.Series, quantity: str) -> str:
        value = row.get(quantity + _REPRODUCED)
        printed = row.get(quantity + _PAPER)
        verdict = row.get(quantity + _AGREES)
        shown = html.escape("—" if _missing(value) else str(value))
        paper = None if printed is None or _missing(printed) else html.escape(str(printed))
        if echoed(row, quantity):
            note = "" if quantity in all_echoed else '<br><span class="lgacc-printed">input, not graded</span>'
            differs = paper is not None and paper != shown
            return shown + (f'<br><span class="lgacc-printed">paper: {paper}</span>' if differs else "") + note
        if verdict is not None and not _missing(verdict) and not bool(verdict):
            return (f'<span class="lgacc-differs">{DIFFER_MARK} {shown}</span>'
                    f'<br><span class="lgacc-printed">paper: {paper if paper is not None else "—"}</span>')
        if paper is not None and paper != shown:  # ungraded, or agreeing by a rule other than equality
            return f'{shown}<br><span class="lgacc-printed">paper: {paper}</span>'
        return shown

    def heading(quantity: str) -> str:
        return f"{quantity} (input)" if quantity in all_echoed else quantity

    rows = []
    for _, row in comparison.iterrows():
        record = {key: html.escape(str(row[key])) for key in keys}
        record.update({heading(quantity): cell(row, quantity) for quantity in quantities})
        rows.append(record)
    return pd.DataFrame(rows, columns=keys + [heading(q) for q in quantities])


def show_comparison(artifact: Artifact, reproduced: Any) -> pd.DataFrame:
    """Display the reproduction with every difference from the paper marked, then one line
    saying whether they agree, then downloads of the reproduced table and of the full
    paper-beside-reproduction comparison (CSV)."""
    comparison = artifact.compare(reproduced)
    _html(table_html(compact_comparison(comparison), escape=False, classes="lgacc-comparison"))
    _markdown(comparison_sentence(comparison))
    if isinstance(reproduced, pd.DataFrame):
        show_csv_download(reproduced, artifact.label)
        _html(_download_link(comparison.to_csv(index=False).encode(),
                             artifact.label.replace(":", "_") + "_comparison.csv", "text/csv",
                             "Download the paper beside the reproduction, cell by cell (CSV)"))
    return comparison


def linked_scorecard(frame: pd.DataFrame):
    """The scorecard with each label linked to its page and the status coloured."""
    shown = frame.copy()
    shown["label"] = [
        f'<a href="{page}.html">{label}</a>' if page else label for label, page in zip(shown["label"], shown["page"])
    ]
    shown = shown.drop(columns=["page"])
    colours = {
        "agrees to printed precision": "background-color: #d1e7dd",
        "reproduced (no printed values to compare)": "background-color: #cfe2ff",
        "agrees with the paper's formulas": "background-color: #d1e7dd",
        "differs": "background-color: #f8d7da",
        "fails to build": "background-color: #f8d7da",
        "not reproduced yet": "background-color: #fff3cd",
    }
    return shown.style.map(lambda status: colours.get(status, ""), subset=["status"]).hide(axis="index")


# ---------------------------------------------------------------------------
# Formatters: numbers as a reader wants them (shared by every notebook).
# ---------------------------------------------------------------------------

SI_PREFIXES = ("", "k", "M", "G", "T", "P", "E")
BINARY_PREFIXES = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def _missing(value: Any) -> bool:
    try:
        return value is None or value != value  # None or NaN
    except (TypeError, ValueError):
        return False


def format_int(value: Any) -> str:
    """A count as an integer with thousands separators: ``10752.0`` -> ``10,752``."""
    if _missing(value):
        return "—"
    return f"{int(round(float(value))):,}"


def format_days(days: Any) -> str:
    """A duration given in days, in the unit that fits: ``y``, ``d``, ``h``, ``min`` or ``s``."""
    if _missing(days):
        return "—"
    days = float(days)
    if days >= DAYS_PER_YEAR:
        return f"{days / DAYS_PER_YEAR:.3g} y"
    if days >= 1:
        return f"{days:.3g} d"
    hours = days * 24
    if hours >= 1:
        return f"{hours:.3g} h"
    minutes = hours * 60
    if minutes >= 1:
        return f"{minutes:.3g} min"
    return f"{minutes * 60:.2g} s"


def format_si(value: Any, unit: str = "", digits: int = 3) -> str:
    """A quantity with an SI prefix: ``1.26e12`` parameters -> ``1.26 T``; ``312e12, "flop/s"`` -> ``312 Tflop/s``."""
    if _missing(value):
        return "—"
    value = float(value)
    index = 0
    while abs(value) >= 1000 and index < len(SI_PREFIXES) - 1:
        value /= 1000
        index += 1
    prefix = SI_PREFIXES[index]
    return f"{value:.{digits}g} {prefix}{unit}".rstrip()


def format_bytes(n_bytes: Any, digits: int = 3) -> str:
    """A size in binary units, as the paper's tables count them: ``5.24e11`` -> ``488 GiB``."""
    if _missing(n_bytes):
        return "—"
    value = float(n_bytes)
    index = 0
    while abs(value) >= 1024 and index < len(BINARY_PREFIXES) - 1:
        value /= 1024
        index += 1
    return f"{value:.{digits}g} {BINARY_PREFIXES[index]}"


def format_gib(gib: Any, digits: int = 3) -> str:
    """A size given in GiB, in the binary unit that fits."""
    return "—" if _missing(gib) else format_bytes(float(gib) * GIB, digits)


def format_number(value: Any, digits: int = 3) -> str:
    """A plain number to ``digits`` significant digits, never in e-notation below 10^6."""
    if _missing(value):
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    value = float(value)
    if value != 0 and (abs(value) >= 1e9 or abs(value) < 1e-3):
        return f"{value:.{digits}g}"
    text = f"{value:.{digits}g}"
    if "e" in text or abs(value) >= 1e4:  # 2908000.5 at 3 digits -> 2,910,000
        return f"{float(text):,.0f}"
    return text


def format_percent(fraction: Any, digits: int = 1) -> str:
    return "—" if _missing(fraction) else f"{100 * float(fraction):.{digits}f} %"


#: Column names the book shows, and how: a notebook passes its frame through
#: :func:`show_table` and every count, time, size and ratio is formatted alike.
COLUMN_FORMATS = {
    "n_gpu": format_int, "n_b": format_int, "n_l": format_int, "n_a": format_int, "n_mu": format_int,
    "b_mu": format_int, "b": format_int, "x": format_int,
    "time_days": format_days,
    "memory_gib": format_gib, "non_offloadable_gib": format_gib, "offloadable_gib": format_gib,
    "p": lambda v: format_si(v),
    "efficiency": lambda v: format_number(v, 2),
    "memory_fraction": format_percent,
}

#: Headers a reader can follow (the code's names stay in the CSV downloads).
COLUMN_TITLES = {
    "time_days": "time", "memory_gib": "memory per GPU", "non_offloadable_gib": "non-offloadable memory",
    "offloadable_gib": "offloadable memory", "p": "parameters", "memory_fraction": "share of GPU memory",
    "n_gpu": "GPUs",
}


def readable_frame(frame: pd.DataFrame, formats: dict[str, Any] | None = None, titles: dict[str, str] | None = None) -> pd.DataFrame:
    """A copy of ``frame`` with every known column formatted as text and headers renamed.

    Unknown float columns get 3 significant digits; booleans read yes/no.
    """
    formats = {**COLUMN_FORMATS, **(formats or {})}
    titles = {**COLUMN_TITLES, **(titles or {})}
    shown = frame.reset_index(drop=True).copy()
    for column in shown.columns:
        formatter = formats.get(str(column))
        series = shown[column]
        if formatter is not None:
            shown[column] = series.map(formatter)
        elif pd.api.types.is_bool_dtype(series):
            shown[column] = series.map(lambda v: "yes" if v else "no")
        elif pd.api.types.is_float_dtype(series):
            shown[column] = series.map(format_number)
        elif pd.api.types.is_integer_dtype(series):
            shown[column] = series.map(format_int)
    return shown.rename(columns={c: titles.get(str(c), c) for c in shown.columns})


_EQUATION_LABEL = re.compile(r'(?<![\w"#:/-])eq:([a-z][a-z_]*)')


def link_equations(html_text: str, page: str = "derivations.html") -> str:
    """Each numbered ``eq:label`` in HTML text as "Eq. (N)" linking to its derivation, as the book's
    text does (book/_ext/equation_links.py does it for Markdown; HTML output needs it here)."""
    from .equations import equation_anchor, equation_name, equation_numbers

    numbers = equation_numbers()

    def link(match: re.Match) -> str:
        label = match.group(0)
        if label not in numbers:
            return label
        return (f'<a class="reference internal" href="{page}#{equation_anchor(label)}" title="{label}">'
                f"{equation_name(label)}</a>")

    return _EQUATION_LABEL.sub(link, html_text)


#: A power of ten as the paper prints it ("6.24\times 10^{24}"), not already inside math.
_PRINTED_POWER = re.compile(r"(?<![\d.$])(?<!\\\()(\d[\d.]*\s*\\times\s*10\^\{?\d+\}?)")


def printed_math(text: str, open_: str = "$", close: str = "$") -> str:
    r"""``text`` with each printed power of ten set as math (``$...$`` in Markdown, ``\(...\)`` in HTML).

    >>> print(printed_math(r"6.23e+24 (6.24\times 10^{24} flop)", r"\(", r"\)"))
    6.23e+24 (\(6.24\times 10^{24}\) flop)
    >>> print(printed_math(r"already \(6.24\times 10^{24}\) or $3.2\times 10^6$"))
    already \(6.24\times 10^{24}\) or $3.2\times 10^6$
    """
    return _PRINTED_POWER.sub(lambda m: f"{open_}{m.group(1)}{close}", text)


def table_html(frame: pd.DataFrame, escape: bool = True, classes: str = "") -> str:
    """A table without index, in a container that scrolls sideways if it is wider than the page;
    equation labels in its cells become numbered links, printed powers of ten are typeset."""
    body = frame.to_html(index=False, escape=escape, border=0, classes=f"dataframe lgacc-table {classes}".strip(),
                         na_rep="—")
    body = printed_math(link_equations(body), r"\(", r"\)")
    return f'<div class="lgacc-scroll mathjax_process" style="overflow-x: auto; max-width: 100%">{body}</div>'


#: A cell that is one quantity: a number and its unit ("8.61 d", "9.44 GiB", "2.25 Pflop/s", "1.26 T").
_QUANTITY = re.compile(r"(-?[\d.,]+(?:e[+-]?\d+)?) ([^\s\d<>&]+)")


def show_table(frame: pd.DataFrame, formats: dict[str, Any] | None = None, titles: dict[str, str] | None = None,
               escape: bool = True) -> None:
    """Display ``frame`` formatted for people: no index, integers, d/h/min, sizes, scrolling if wide.

    The table's text wraps to fit the column, but a cell holding one quantity never breaks between
    its number and its unit ("8.61 d" on one line, not "8.61" above "d")."""
    shown = readable_frame(frame, formats, titles)
    for position in range(shown.shape[1]):
        shown.isetitem(position, shown.iloc[:, position].map(
            lambda text: _QUANTITY.sub("\\1\u00a0\\2", text) if isinstance(text, str) and _QUANTITY.fullmatch(text) else text))
    _html(table_html(shown, escape=escape))


def show_wide_table(frame: pd.DataFrame, key: str, max_columns: int = 6, formats: dict[str, Any] | None = None,
                    titles: dict[str, str] | None = None) -> None:
    """A wide table as several narrower ones, each repeating the ``key`` column."""
    others = [c for c in frame.columns if c != key]
    for start in range(0, len(others), max_columns):
        show_table(frame[[key, *others[start:start + max_columns]]], formats, titles)


def show_markdown(text: str) -> None:
    """Display Markdown from code; the book parses it as MyST (``nb_render_markdown_format: myst``),
    so pipe tables and ``$...$`` / ``$$...$$`` math render as they do in the pages' own text."""
    _markdown(text)


def config_table(config: Any, fields: Sequence[str] = ("n_b", "n_l", "n_a", "n_mu", "b_mu", "offload")) -> str:
    """A configuration as a small Markdown table (one row), instead of a parenthetical."""
    values = [getattr(config, name) if not isinstance(config, dict) else config[name] for name in fields]
    header = "| " + " | ".join(f"${SYMBOL_LATEX.get(name, name)}$" for name in fields) + " |"
    rule = "|" + "---|" * len(fields)
    cells = "| " + " | ".join(
        ("yes" if v else "no") if isinstance(v, bool) else format_int(v) if isinstance(v, (int, float)) else str(v)
        for v in values
    ) + " |"
    return "\n".join([header, rule, cells])


SYMBOL_LATEX = {
    "n_b": "n_b", "n_l": "n_l", "n_a": "n_a", "n_mu": r"n_\mu", "b_mu": r"b_\mu", "b": "b",
    "n_gpu": r"n_\text{gpu}", "offload": r"\text{offload}", "d_l": "d_l", "d_m": "d_m",
}


def show_unavailable(what: str, reason: str) -> None:
    """One plain sentence where a result cannot be computed on this hardware."""
    _markdown(f"```{{note}}\n{what} cannot be computed for this hardware: {reason}\n```")


def try_show(what: str, function, *args, **kwargs) -> Any:
    """Call a library function; on failure say so in a sentence instead of a traceback."""
    try:
        return function(*args, **kwargs)
    except Exception as error:  # a page must say what failed, not stop the book
        show_unavailable(what, f"{type(error).__name__}: {error}")
        return None


def claim_markdown(record: dict) -> str:
    """One claim as a sentence, the same wherever the claim appears (claims page, figure pages).

    ``record`` is a row of :func:`lgacc.claims.claims_records`.
    """
    from .findings import readable_value

    mark = AGREE_MARK if record["agrees"] else DIFFER_MARK
    printed = printed_math(str(record["printed"]))
    value = "not computed" if record.get("reproduced") is None else readable_value(record["reproduced"], record["unit"])
    how = str(record.get("how") or "").strip()
    return (f"- {mark} **{record['where']}** — the paper: *{printed}*; this build: **{value}** "
            f"({record['tolerance']}).{' ' + how if how else ''}")


def show_claims(records: Sequence[dict], ids: Sequence[str] | None = None) -> None:
    """The claims with ``ids`` (default: all), one sentence each."""
    if not records:  # not computable on this hardware: claims_or_explain has said why
        return
    chosen = [r for r in records if ids is None or r["id"] in ids]
    if not chosen:
        _markdown("No claim of the paper is read off this page.")
        return
    _markdown("\n".join(claim_markdown(r) for r in chosen))


def show_data_download(frame: pd.DataFrame, label: str, text: str = "Download the data (CSV)") -> None:
    """A CSV download of ``frame`` named after ``label`` (e.g. the full sweep behind a figure)."""
    _html(_download_link(frame.to_csv(index=False).encode(), artifact_filename(label, ".csv"), "text/csv", text))


def claims_or_explain(hardware: Any, ids: Sequence[str] | None = None) -> list[dict]:
    """The claims' records for ``hardware`` (all, or those with ``ids``); if they cannot be computed on
    it (e.g. the model does not fit its memory), one sentence saying so and an empty list, never a traceback."""
    from .claims import claims_records

    records = try_show("The paper's prose claims", claims_records, hardware, ids)
    return records if records is not None else []
