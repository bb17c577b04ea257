"""``python -m lgacc.book.jsgen OUT.js [--hardware NAME|PATH]``: write the calculator script, the page preselecting
the given spec (the book's ``HARDWARE``); bad input gets one line and exit code 2."""

from __future__ import annotations

import sys

from lgacc.errors import UserInputError

__all__ = ["main", "usage_exit"]


def usage_exit(argv: list[str], usage: str, well_formed: bool) -> int | None:
    """The exit code of a script writer's command line that asks for help (usage on stdout, 0) or is malformed
    (usage on stderr, 2: a leading option is never a file name to write over), else None: go on."""
    if argv in (["-h"], ["--help"]):
        print(usage)
        return 0
    if not well_formed or not argv or argv[0].startswith("-"):
        print(usage, file=sys.stderr)
        return 2
    return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    usage = "usage: python -m lgacc.book.jsgen OUT.js [--hardware NAME|PATH]  (the page's preselected spec)"
    code = usage_exit(argv, usage, len(argv) == 1 or (len(argv) == 3 and argv[1] == "--hardware"))
    if code is not None:
        return code
    from .bundle import write

    try:
        print(write(argv[0], argv[2] if len(argv) == 3 else None))
    except UserInputError as error:
        print(f"lgacc.book.jsgen: {error}", file=sys.stderr)
        return 2
    return 0
