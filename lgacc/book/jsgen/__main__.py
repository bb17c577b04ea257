"""``python -m lgacc.book.jsgen OUT.js [--hardware NAME|PATH]`` (:func:`lgacc.book.jsgen.command.main`).

Ctrl-C or SIGTERM at any moment, while the modules import included, prints one line and exits 130 or 143
(:func:`lgacc.errors.run_quietly`)."""

import sys

if __name__ == "__main__":
    try:
        from lgacc.errors import run_quietly
    except KeyboardInterrupt:
        sys.stderr.write("python -m lgacc.book.jsgen: interrupted\n")
        raise SystemExit(130)
    sys.exit(run_quietly("python -m lgacc.book.jsgen", "lgacc.book.jsgen.command"))
