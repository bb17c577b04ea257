"""``lgacc scorecard``: every table and figure of the paper with its verdict."""

from __future__ import annotations

from lgacc.model.hardware import DEFAULT_HARDWARE
from lgacc.paper.scorecard import scorecard

from . import SUMMARIES
from ._output import FORMATS, render_table


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "scorecard",
        help=SUMMARIES["scorecard"],
        description="One row per table and figure of the paper: paper value, reproduced value, status.",
    )
    parser.add_argument("--hardware", default=DEFAULT_HARDWARE, help="shipped spec name or path to a YAML spec")
    parser.add_argument("--format", choices=FORMATS, default="table")
    parser.set_defaults(handler=run)


def run(args) -> int:
    print(render_table(scorecard(args.hardware), args.format))
    return 0
