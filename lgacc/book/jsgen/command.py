"""``python -m lgacc.book.jsgen OUT.js [--hardware NAME|PATH]``: write the calculator script, the page preselecting
the given spec (the book's ``HARDWARE``); bad input gets one line and exit code 2."""

from __future__ import annotations

import sys

from lgacc.errors import UserInputError

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    usage = "usage: python -m lgacc.book.jsgen OUT.js [--hardware NAME|PATH]  (the page's preselected spec)"
    if argv in (["-h"], ["--help"]):
        print(usage)
        return 0
    if (len(argv) not in (1, 3) or (len(argv) == 3 and argv[1] != "--hardware")
            or argv[0].startswith("-")):  # an option is not a file name to write over
        print(usage, file=sys.stderr)
        return 2
    from .bundle import write

    try:
        print(write(argv[0], argv[2] if len(argv) == 3 else None))
    except UserInputError as error:
        print(f"lgacc.book.jsgen: {error}", file=sys.stderr)
        return 2
    return 0
