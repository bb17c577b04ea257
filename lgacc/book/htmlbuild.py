"""The book's HTML phase starts from the previous build, so that Sphinx writes only what changed.

``make book`` builds the HTML aside (``build/book-next``) and swaps it in when complete.  Started from an empty
folder, Sphinx read and wrote every page each time (13-18 s of a rebuild on two cores); started from a copy of
the previous ``book/_build`` (its pickled environment, doctrees and pages), it reads again only the pages whose
file, or a file they include, is newer than its last reading -- and the notebook runner leaves every page whose
bytes did not change with its old time (:func:`lgacc.book.run.keep_unchanged_times`) -- and writes those pages
and the ones they make stale (a changed title: ``book/_ext/incremental.py``), the search index updated in place.

Sphinx sees changes of the pages, of what they include, and of its configuration, not of the book's own
extensions, templates and styles, nor of the theme's version.  So the copy is taken only when the previous
build was made from the same such inputs: :func:`build_key` (the bytes of ``book/_config.yml``, ``book/_toc.yml``,
every file of ``book/_ext`` and ``book/_static``, every source of the package and file of ``data/`` -- the
extensions read the equation numbers from them -- and the versions of the packages that render the book), kept
in the build as ``.lgacc-html-key``; else the phase starts from nothing, as before.

``python -m lgacc.book.htmlbuild seed BOOK NEXT``: copy ``BOOK/_build`` into ``NEXT/_build`` if its key is the
current one (else leave ``NEXT`` empty), and write the current key into ``NEXT/_build``.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import signal
import sys
from importlib import metadata
from pathlib import Path
from typing import Sequence

#: The file in a build naming the inputs Sphinx does not track that it was built from.
KEY_FILE = ".lgacc-html-key"
#: Packages whose version changes the HTML without Sphinx noticing (themes, notebook rendering).
RENDERING_PACKAGES = ("sphinx", "jupyter-book", "myst-nb", "myst-parser", "sphinx-book-theme", "pydata-sphinx-theme",
                      "docutils", "sphinx-external-toc", "sphinx-design", "sphinx-togglebutton", "sphinx-copybutton",
                      "sphinx-comments", "sphinx-thebe", "sphinx-jupyterbook-latex", "sphinx-multitoc-numbering",
                      "sphinxcontrib-bibtex")
#: Files and folders of the book's source that shape every page and that Sphinx does not track.
UNTRACKED = ("_config.yml", "_toc.yml", "_ext", "_static")


def build_key(book: Path) -> str:
    """A digest of what Sphinx does not track: the book's configuration, extensions, styles, package versions."""
    digest = hashlib.sha256()
    for name in RENDERING_PACKAGES:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "absent"
        digest.update(f"{name}={version}\n".encode())
    digest.update(f"python={sys.version}\n".encode())
    digest.update(f"package={_package_digest()}\n".encode())  # the extensions read the package (equation numbers)
    for name in UNTRACKED:
        top = book / name
        files = [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file()) if top.is_dir() else []
        for path in files:
            if "__pycache__" in path.parts:
                continue
            digest.update(str(path.relative_to(book)).encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _package_digest() -> str:
    """Every source of the package and file of ``data/`` (:func:`lgacc.cache.results.inputs_digest`)."""
    from lgacc.cache.results import inputs_digest

    return inputs_digest()


def seed(book: Path, next_dir: Path) -> bool:
    """Start the build in ``next_dir`` from ``book/_build`` when that was built from the current :func:`build_key`;
    ``next_dir/_build`` then holds the current key either way.  Returns whether the previous build was copied."""
    previous, target = book / "_build", next_dir / "_build"
    key = build_key(book)
    if target.exists():
        shutil.rmtree(target)
    copied = False
    try:
        if (previous / KEY_FILE).read_text() == key and (previous / "html").is_dir():
            shutil.copytree(previous, target, symlinks=True)  # copy2: the pages keep their times
            copied = True
    except OSError:  # no previous build, or an unreadable one: start from nothing
        shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True, exist_ok=True)
    (target / KEY_FILE).write_text(key)
    return copied


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lgacc.book.htmlbuild", description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["seed"])
    parser.add_argument("book", type=Path, help="the book's source folder (its _build is the previous build)")
    parser.add_argument("next", type=Path, help="the folder the new build is made in (--path-output)")
    args = parser.parse_args(argv)
    copied = seed(args.book, args.next)
    print("HTML: starting from the previous build (only changed pages are read and written)" if copied else
          "HTML: starting from nothing (no previous build, or one made from other configuration, extensions or versions)")
    return 0


def _terminated(signum, frame) -> None:
    raise KeyboardInterrupt(signum)


def entry(argv: Sequence[str] | None = None) -> int:
    """:func:`main`, where Ctrl-C or `kill` prints one line (exit 130 or 143), like the notebook phase; the
    previous ``book/_build`` is untouched either way (only the new build's folder is written)."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _terminated)
    try:
        return main(argv)
    except KeyboardInterrupt as interrupt:
        terminated = bool(interrupt.args) and interrupt.args[0] == signal.SIGTERM
        print("python -m lgacc.book.htmlbuild: interrupted; book/_build is as it was", file=sys.stderr)
        return 143 if terminated else 130


if __name__ == "__main__":  # a closed pipe: no traceback (lgacc.errors.run_quietly); entry() answers interrupts
    from lgacc.errors import run_quietly

    sys.exit(run_quietly("python -m lgacc.book.htmlbuild", "lgacc.book.htmlbuild", "entry"))
