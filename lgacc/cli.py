"""The ``lgacc`` command line.

Each subcommand lives in its own module of :mod:`lgacc.commands`, which defines
``register(subparsers)``: it adds its parser and sets ``handler`` to a function
``handler(args) -> int`` (the exit code).  Errors of the user's making
(:class:`lgacc.errors.UserInputError`, and argparse's own usage errors) print
one line ``lgacc <command>: error: ...`` on stderr and exit with code 2;
warnings print one line ``lgacc <command>: warning: ...``.  Anything else is a
bug: one line ``lgacc <command>: internal error: ...`` and exit code 1 (set
``LGACC_DEBUG=1`` for the traceback).
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
import warnings
from typing import NoReturn, Sequence

from lgacc.errors import UserInputError, interrupt_exit_code, received_interrupt

EXIT_USAGE = 2
EXIT_BUG = 1


class UsageError(Exception):
    """An argparse usage error, already formatted as one line."""

    def __init__(self, line: str):
        super().__init__(line)
        self.line = line


class _VersionAction(argparse.Action):
    """``--version``: the version is looked up only when asked for (importlib.metadata costs every other call
    a twentieth of a second)."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="show program's version number and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        from lgacc import __version__

        print(f"lgacc {__version__}")  # on stdout, as argparse's own version action
        parser.exit()


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, ``<prog>: error: <message>``
    (no usage block); subparsers inherit the class."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: error: {' '.join(str(message).split())}")


def build_parser(only: str | None = None, overview: bool = False) -> argparse.ArgumentParser:
    """The parser with every subcommand, or with ``only`` that one when it names a subcommand.

    Registering one subcommand imports only its module: ``lgacc evaluate`` does not
    pay for the plotting libraries of ``lgacc reproduce``.  ``overview``: each subcommand by its name and
    one-line help only (:data:`lgacc.commands.SUMMARIES`), importing no command's module, for a command line
    that names none (``lgacc --help``, ``lgacc``, a mistyped command): what argparse prints for those is the
    same.
    """
    from lgacc import commands

    parser = OneLineParser(
        prog="lgacc",
        description=(
            "Reproduce 'Layered gradient accumulation and modular pipeline parallelism' "
            "(Lamy-Poirier, 2021): its tables, figures and resource model."
        ),
    )
    parser.add_argument("--version", action=_VersionAction)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    names = _command_names(commands.__path__)
    if only in names:
        names, overview = [only], False
    for name in names:
        if overview and name in commands.SUMMARIES:
            subparsers.add_parser(name, help=commands.SUMMARIES[name])
            continue
        module = importlib.import_module(f"{commands.__name__}.{name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(subparsers)
    return parser


def _command_names(folders) -> list[str]:
    """The modules of ``lgacc.commands`` (``name.py`` or a package ``name/``), leading underscores left out: the
    folder listed directly, as pkgutil would list it, without pkgutil's import of ``inspect`` (a hundredth of a
    second on every call)."""
    names = set()
    for folder in folders:
        for entry in os.scandir(folder):
            stem, dot, suffix = entry.name.partition(".")
            if stem.startswith("_") or not stem.isidentifier():
                continue
            if (dot and suffix == "py" and entry.is_file()) or (
                    not dot and entry.is_dir() and os.path.isfile(os.path.join(entry.path, "__init__.py"))):
                names.add(stem)
    return sorted(names)


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


#: A value that argparse would take for an option because of its leading minus: -1e308, -inf, -nan, -.5.
_NEGATIVE_VALUE = re.compile(r"^-(\d|\.\d|inf\b|infinity\b|nan\b)", re.IGNORECASE)


def attach_negative_values(argv: Sequence[str]) -> list[str]:
    """``--option -1e308`` as ``--option=-1e308``: argparse reads only plain negative numbers (``-5``, ``-0.5``)
    as values, so ``--max-overhead -1e308`` or ``--n-a -inf`` would fail with "expected one argument"
    instead of the option's own rule.

    >>> attach_negative_values(["optimize", "--max-overhead", "-1e308", "--n-a", "-inf", "--", "-x"])
    ['optimize', '--max-overhead=-1e308', '--n-a=-inf', '--', '-x']
    """
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return out + list(argv[i:])
        if arg.startswith("--") and "=" not in arg and i + 1 < len(argv) and _NEGATIVE_VALUE.match(argv[i + 1]):
            out.append(f"{arg}={argv[i + 1]}")
            i += 2
            continue
        out.append(arg)
        i += 1
    return out


def main(argv: Sequence[str] | None = None) -> int:
    argv = attach_negative_values(list(sys.argv[1:] if argv is None else argv))
    first = next((arg for arg in argv if not arg.startswith("-")), None)
    parser = build_parser(first, overview=True)
    try:
        args = parser.parse_args(argv)
    except UsageError as error:
        print(error.line, file=sys.stderr)
        return EXIT_USAGE
    handler = getattr(args, "handler", None)
    if handler is None:
        commands = ", ".join(sorted(parser._subparsers._group_actions[0].choices))  # noqa: SLF001
        print(f"lgacc: error: a command is required, one of {commands} (see lgacc --help)", file=sys.stderr)
        return EXIT_USAGE
    prog = f"lgacc {args.command}"

    def show_warning(message, category, filename, lineno, file=None, line=None):
        print(f"{prog}: warning: {_one_line(message)}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.showwarning = show_warning
        try:
            return int(handler(args) or 0)
        except UserInputError as error:
            print(f"{prog}: error: {_one_line(error)}", file=sys.stderr)
            return EXIT_USAGE
        except BrokenPipeError:  # e.g. `lgacc reproduce ... | head`
            return 0
        except KeyboardInterrupt as interrupt:  # Ctrl-C, or SIGTERM under the `lgacc` command (lgacc.__main__)
            print(f"{prog}: interrupted", file=sys.stderr)
            return interrupt_exit_code(interrupt)
        except Exception as error:  # a bug, not the user's doing: one line unless debugging
            interrupt = received_interrupt()
            if interrupt is not None:  # an interrupt that an import turned into an error of its own (numpy's)
                print(f"{prog}: interrupted", file=sys.stderr)
                return interrupt_exit_code(interrupt)
            if os.environ.get("LGACC_DEBUG"):
                raise
            print(
                f"{prog}: internal error: {type(error).__name__}: {_one_line(error)[:300]} "
                "(a bug in lgacc; LGACC_DEBUG=1 shows the traceback)",
                file=sys.stderr,
            )
            return EXIT_BUG


if __name__ == "__main__":
    sys.exit(main())
