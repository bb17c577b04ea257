"""Fixtures for checks of the built book: a local HTTP server, headless Chromium, and every page
visited once at each reader's width.

These tests need ``make book`` first.  ``make check-book`` sets
``LGACC_REQUIRE_BOOK=1`` so that a missing build or browser fails instead of skipping.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest

from .reader import WIDTHS, visit_all

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "book" / "_build" / "html"
REQUIRED = os.environ.get("LGACC_REQUIRE_BOOK") == "1"
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SKIPPED_PAGES = {"search.html", "genindex.html"}  # Sphinx utility pages, not content
#: Every content page of the build, relative to its root.
PAGES = sorted(
    str(path.relative_to(HTML)) for path in HTML.rglob("*.html") if path.name not in SKIPPED_PAGES and "_static" not in path.parts
) if HTML.is_dir() else []
#: Where the page screenshots go: ``make check-book`` sets LGACC_SCREENSHOTS from its SCREENSHOTS variable.
SCREENSHOTS = Path(os.environ.get("LGACC_SCREENSHOTS") or ROOT / "build" / "screenshots")
#: Pages visited at once (each in its own tab): the visits wait on rendering more than on Python.
JOBS = int(os.environ.get("LGACC_BOOK_JOBS", "2"))


def _missing(reason: str):
    if REQUIRED:
        pytest.fail(reason)
    pytest.skip(reason)


def chromium_executable() -> str:
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        _missing("Chromium is not installed (apt-get install chromium)")
    return executable


@pytest.fixture(scope="session")
def html_dir() -> Path:
    if not (HTML / "index.html").is_file():
        _missing(f"no built book at {HTML}: run `make book` first")
    return HTML


@pytest.fixture(scope="session")
def server(html_dir):
    handler = functools.partial(_QuietHandler, directory=str(html_dir))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output readable
        pass


@pytest.fixture(scope="session")
def browser():
    executable = chromium_executable()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def visits(server):
    """Every page at every width of :data:`WIDTHS`, visited once (a full-page screenshot of each kept in
    :data:`SCREENSHOTS`): ``{(page, width): PageVisit}``.  The visits run :data:`JOBS` at a time in their
    own browser, in a thread of their own (Playwright's synchronous API, which the other checks use, owns
    this thread's event loop)."""
    executable = chromium_executable()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    done: dict = {}
    failure: list[BaseException] = []

    def run():
        try:
            done.update(visit_all(server, PAGES, WIDTHS, executable, CHROMIUM_FLAGS, SCREENSHOTS, JOBS))
        except BaseException as error:  # reported in the test thread below
            failure.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return done
