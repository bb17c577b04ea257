"""``lgacc reproduce LABEL``: one table or figure of the paper, by its LaTeX label."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from ..artifacts import get_artifact
from ..errors import UserInputError
from ..hardware import DEFAULT_HARDWARE
from ._output import FORMATS, dumps, render_table


def register(subparsers) -> None:
    # No label list here: listing them imports every reproduction (matplotlib, sympy),
    # which would make each `lgacc reproduce` pay for all of them.  An unknown label
    # is answered with the list (get_artifact).
    parser = subparsers.add_parser(
        "reproduce",
        help="reproduce a table or figure of the paper by its LaTeX label",
        description="Reproduce a table or figure of the paper by its LaTeX label "
        "(table:..., fig:..., or claims); an unknown label prints the known ones.",
    )
    parser.add_argument("label", help="LaTeX label, e.g. table:hardware_bandwidth, fig:scaling_limited, claims")
    parser.add_argument(
        "--hardware", default=DEFAULT_HARDWARE, help=f"shipped spec name or path to a YAML spec (default: {DEFAULT_HARDWARE})"
    )
    parser.add_argument("--format", choices=FORMATS, default="table", help="output format for tables (default: table)")
    parser.add_argument("--compare", action="store_true", help="print the paper's values beside the reproduced ones")
    parser.add_argument("--out", type=Path, help="write a figure to this file (.svg, .png or .pdf)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    artifact = get_artifact(args.label)
    result = artifact.reproduce(args.hardware)
    if artifact.kind == "figure":
        if args.out is None:
            raise UserInputError(f"{args.label} is a figure: give --out FILE.svg")
        args.out.parent.mkdir(parents=True, exist_ok=True)
        result.savefig(args.out, bbox_inches="tight")
        print(args.out)
        return 0
    if args.compare:
        if artifact.compare is None:
            raise UserInputError(f"{args.label} has no comparison with the paper")
        result = artifact.compare(result)
    if isinstance(result, pd.DataFrame):
        print(render_table(result, args.format))
    else:
        print(dumps(result) if args.format == "json" else result)
    return 0
