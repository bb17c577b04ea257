"""``python -m lgacc.book.jsgen OUT.js [--hardware NAME|PATH]`` (:func:`lgacc.book.jsgen.command.main`)."""

from .command import main

if __name__ == "__main__":
    raise SystemExit(main())
