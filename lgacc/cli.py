"""The ``lgacc`` command line.

Each subcommand lives in its own module of :mod:`lgacc.commands`, which defines
``register(subparsers)``: it adds its parser and sets ``handler`` to a function
``handler(args) -> int`` (the exit code).  Errors of the user's making
(:class:`lgacc.errors.UserInputError`) print one line and exit with code 2.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from typing import Sequence

from . import __version__
from .errors import UserInputError

EXIT_USAGE = 2


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser with every subcommand, or with ``only`` that one when it names a subcommand.

    Registering one subcommand imports only its module: ``lgacc evaluate`` does not
    pay for the plotting libraries of ``lgacc reproduce``.
    """
    from . import commands

    parser = argparse.ArgumentParser(
        prog="lgacc",
        description=(
            "Reproduce 'Layered gradient accumulation and modular pipeline parallelism' "
            "(Lamy-Poirier, 2021): its tables, figures and resource model."
        ),
    )
    parser.add_argument("--version", action="version", version=f"lgacc {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    names = sorted(m.name for m in pkgutil.iter_modules(commands.__path__) if not m.name.startswith("_"))
    if only in names:
        names = [only]
    for name in names:
        module = importlib.import_module(f"{commands.__name__}.{name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    first = next((arg for arg in argv if not arg.startswith("-")), None)
    parser = build_parser(first)
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(handler(args) or 0)
    except UserInputError as error:
        print(f"lgacc {args.command}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # e.g. `lgacc reproduce ... | head`
        return 0


if __name__ == "__main__":
    sys.exit(main())
