"""``--convention`` and ``--assume KEY=VALUE``: the command line's view of :class:`lgacc.model.assumptions.Assumptions`."""

from __future__ import annotations

import argparse

from lgacc.model.assumptions import FIELDS, Assumptions


def add_assumption_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--convention {paper,physical}`` and a repeatable ``--assume KEY=VALUE`` to ``parser``."""
    parser.add_argument("--convention", choices=("paper", "physical"), default=None,
                        help="overlapped-transfer overhead: 'paper' (relative to the overlapped operation, as printed; "
                             "default) or 'physical' (the wait relative to the whole step)")
    parser.add_argument("--assume", action="append", default=[], metavar="KEY=VALUE",
                        help="set an assumption the paper leaves open (repeatable); KEY one of " + ", ".join(FIELDS))


def assumptions_from_args(args: argparse.Namespace) -> Assumptions:
    """The assumptions of ``--assume`` items, then ``--convention`` (which wins)."""
    assumptions = Assumptions.from_strings(args.assume)
    if args.convention is not None:
        assumptions = assumptions.replace(convention=args.convention)
    return assumptions
