"""``python -m lgacc.jsgen OUT.js [--hardware NAME|PATH]`` (:func:`lgacc.jsgen.command.main`)."""

from .command import main

if __name__ == "__main__":
    raise SystemExit(main())
