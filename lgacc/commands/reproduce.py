"""``lgacc reproduce LABEL``: one table or figure of the paper, by its LaTeX label."""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
from typing import TYPE_CHECKING

from lgacc.errors import UserInputError
from lgacc.model.hardware import DEFAULT_HARDWARE

from . import SUMMARIES
from ._output import FORMATS, dumps, figure_path, render_table, save_figure

if TYPE_CHECKING:  # imported where a table is built: a repeated command is answered from the cache without it
    import pandas as pd


def register(subparsers) -> None:
    # No label list here: listing them imports every reproduction (matplotlib, sympy),
    # which would make each `lgacc reproduce` pay for all of them.  An unknown label
    # is answered with the list (get_artifact).
    parser = subparsers.add_parser(
        "reproduce",
        help=SUMMARIES["reproduce"],
        description="Reproduce a table or figure of the paper by its LaTeX label "
        "(table:..., fig:..., claims, or readings: the reading matrix); an unknown label prints the known ones.",
    )
    parser.add_argument("label", help="LaTeX label, e.g. table:hardware_bandwidth, fig:scaling_limited, claims")
    parser.add_argument(
        "--hardware", default=DEFAULT_HARDWARE, help=f"shipped spec name or path to a YAML spec (default: {DEFAULT_HARDWARE})"
    )
    parser.add_argument("--format", choices=FORMATS, default=None,
                        help="output format for tables and claims (default: table); for a figure, json prints the file written")
    parser.add_argument("--compare", action="store_true", help="print the paper's values beside the reproduced ones (tables and claims)")
    parser.add_argument("--out", help="write a figure to this file (.svg, .png or .pdf; figures only)")
    parser.set_defaults(handler=run)


#: The result cache's name for a command's printed answer.
OUTPUT_CACHE = "reproduce-output"


def run(args: argparse.Namespace) -> int:
    """Print the artifact.  A table, the claims or the reading matrix (no ``--out``) is printed from the result
    cache when the same command ran before: the text it printed, keyed by the label, the options, the hardware
    spec's content (wherever its file lives), the versions of the libraries that format it and the package's
    sources and data (:mod:`lgacc.cache.results`: verified data, recomputed when anything differs).  A warm call
    then imports neither pandas nor the reproduction (issue 15's half-second)."""
    if args.out is not None:  # a figure (or an option error): drawn every time
        return _reproduce(args)
    from lgacc.cache.results import cached
    from lgacc.model.hardware import load_hardware

    hardware = load_hardware(args.hardware)
    inputs = (args.label, hardware, args.format or "table", bool(args.compare), _formatting_libraries())
    sys.stdout.write(cached(OUTPUT_CACHE, inputs, lambda: _printed(args, hardware)))
    return 0


def _formatting_libraries() -> tuple[tuple[str, str], ...]:
    """The versions of the libraries that compute and format the printed text (a new pandas may align a table
    differently), read from the installed metadata without importing them."""
    from importlib import metadata

    versions = []
    for name in ("numpy", "pandas"):
        try:
            versions.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            versions.append((name, ""))
    return tuple(versions)


def _printed(args: argparse.Namespace, hardware) -> str:
    """What :func:`_reproduce` prints, as text."""
    with contextlib.redirect_stdout(io.StringIO()) as out:
        _reproduce(args, hardware)
    return out.getvalue()


def _reproduce(args: argparse.Namespace, hardware=None) -> int:
    from lgacc.paper.artifacts import get_artifact

    artifact = get_artifact(args.label)
    # Options that do not apply are errors, not silently ignored: checked before any work.
    if artifact.kind == "figure":
        if args.out is None:
            raise UserInputError(f"{args.label} is a figure: give --out FILE.svg (or .png, .pdf)")
        if args.compare:
            raise UserInputError(f"--compare applies to tables and claims; {args.label} is a figure")
        if args.format == "csv":
            raise UserInputError(f"--format csv applies to tables and claims; {args.label} is a figure (table or json)")
        figure_path(args.out)
    elif args.out is not None:
        raise UserInputError(f"--out applies to figures; {args.label} is a {artifact.kind}: use --format and redirect the output")
    fmt = args.format or "table"
    result = artifact.reproduce(args.hardware if hardware is None else hardware)
    if artifact.kind == "figure":
        path = save_figure(result, args.out)
        print(dumps({"label": args.label, "out": str(path)}) if fmt == "json" else path)
        return 0
    if args.compare and artifact.kind != "claims":  # claims always print the paper's number beside their own
        if artifact.compare is None:
            raise UserInputError(f"{args.label} has no comparison with the paper")
        result = artifact.compare(result)
    import pandas as pd

    if isinstance(result, list) and result and all(isinstance(row, dict) for row in result) and fmt != "json":
        result = pd.DataFrame(result)  # records (the claims) as a table, not a Python list
        if fmt == "table":
            print(render_table(_short_columns(result), fmt))
            return 0
    if isinstance(result, dict) and "rows" in result and "summary" in result and fmt != "json":
        result = _matrix_frame(result, legend=fmt == "table")  # the reading matrix: a row per claim, a mark per reading
    if isinstance(result, pd.DataFrame):
        print(render_table(result, fmt))
    else:
        print(dumps(result) if fmt == "json" else result)
    return 0


#: Longest text kept in a column of the terminal table; longer columns go to csv and json only.
TABLE_TEXT_WIDTH = 40


def _short_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """The columns that fit a terminal; a last note names the others (printed by --format csv or json)."""
    long = [c for c in frame.columns if frame[c].map(lambda v: len(str(v))).max() > TABLE_TEXT_WIDTH]
    if long:
        print(f"(columns {', '.join(long)}: with --format csv or json)")
    return frame.drop(columns=long)


def _matrix_frame(matrix: dict, legend: bool = True) -> pd.DataFrame:
    """The reading matrix as a table: a row per claim, a column per reading (1, 2, ... in the order of
    ``matrix["columns"]``), each cell ``+`` (agrees) or ``-``; the last row counts the claims that agree."""
    import pandas as pd

    names = [c["name"] for c in matrix["columns"]]
    if legend:  # a csv stays a csv: its columns are numbered like the json's "columns"
        print("; ".join(f"{i}: {name}" for i, name in enumerate(names)))
    rows = [{"claim": r["id"], "verdict": r["verdict"],
             **{str(i): "+" if cell["agrees"] else "-" for i, cell in enumerate(r["cells"])}} for r in matrix["rows"]]
    rows.append({"claim": "agree", "verdict": "", **{str(i): str(s["agree"]) for i, s in enumerate(matrix["summary"])}})
    return pd.DataFrame(rows)
