"""``lgacc sensitivity``: the paper's headline results with each assumption moved alone (issue 16)."""

from __future__ import annotations

import argparse
import math
import sys

import pandas as pd

from lgacc.model.hardware import DEFAULT_HARDWARE, load_hardware
from lgacc.studies.sensitivity import (
    UNBOUNDED_WORDS,
    compact_frame,
    dimensions,
    sensitivity_rows,
    verdict_cell,
    verdicts,
)

from . import SUMMARIES
from ._output import FORMATS, add_format_argument, dumps, render_table


def register(subparsers) -> None:
    names = ", ".join(d.name for d in dimensions(load_hardware(DEFAULT_HARDWARE)))
    parser = subparsers.add_parser(
        "sensitivity",
        help=SUMMARIES["sensitivity"],
        description=(
            "For each assumption (" + names + ") and each value of its range, the paper's value included: "
            "the fastest X160 time and GPU count of the baseline and the improved method, the speed-up, the "
            "improved method's memory per GPU, the one-month and one-year model-size limits and the Ethernet "
            "slowdown, all found by the search. With --conclusions: whether each headline conclusion holds, "
            "weakens or reverses under each assumption, and where it flips."
        ),
    )
    parser.add_argument("--hardware", default=DEFAULT_HARDWARE, help=f"shipped spec name or YAML path (default: {DEFAULT_HARDWARE})")
    parser.add_argument("--assumption", action="append", metavar="NAME", default=None,
                        help=f"only this assumption (repeatable); one of {names}")
    parser.add_argument("--conclusions", action="store_true",
                        help="print the verdict per conclusion and assumption instead of the rows")
    add_format_argument(parser, FORMATS)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    spec = load_hardware(args.hardware)
    rows = sensitivity_rows(spec, args.assumption, progress=sys.stderr.isatty())
    if args.conclusions:
        records = verdicts(rows, spec)
        if args.format == "json":
            print(dumps(records))
            return 0
        flat = [{"conclusion": r["conclusion"], "assumption": r["assumption"], "worst": r["verdict"],
                 "over the range": verdict_cell(r)} for r in records]
        print(render_table(pd.DataFrame(flat), args.format))
        return 0
    records = [row.as_dict() for row in rows]
    if args.format == "json":
        print(dumps(records))
    elif args.format == "csv":
        frame = pd.DataFrame(records)
        for key, words in UNBOUNDED_WORDS.items():  # an infinite result in words, never "inf"
            if key in frame:
                frame[key] = [words if isinstance(v, float) and math.isinf(v) else v for v in frame[key]]
        print(render_table(frame, "csv"))
    else:
        print(render_table(compact_frame(rows), "table"))
    return 0
