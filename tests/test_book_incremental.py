"""A book rebuild reads and writes only what changed (issue #34: fast feedback), and stays correct.

Independent facts checked: file times set by hand and compared after the runner's swap; a build folder copied
or not according to a key that changes with each input Sphinx does not track; the title guard's answer on
hand-made environments; a figure read from the result cache is the text drawn fresh, and is not drawn again.
"""

from __future__ import annotations

import os
import types

import pytest

from lgacc.book import htmlbuild, run
from lgacc.paths import ROOT

OLD_NS = 1_000_000_000 * 1_600_000_000  # 2020-09-13: older than any file written by the test


def test_pages_with_the_same_bytes_keep_their_time_the_others_their_own(tmp_path):
    previous, new = tmp_path / "generated", tmp_path / ".generated.next"
    for folder in (previous, new):
        folder.mkdir()
    (previous / "same.ipynb").write_text('{"cells": [1]}')
    (previous / "changed.ipynb").write_text('{"cells": [1]}')
    (previous / "longer.md").write_text("a")
    for path in previous.iterdir():
        os.utime(path, ns=(OLD_NS, OLD_NS))
    (new / "same.ipynb").write_text('{"cells": [1]}')
    (new / "changed.ipynb").write_text('{"cells": [2]}')  # same size, other bytes
    (new / "longer.md").write_text("ab")
    (new / "added.md").write_text("new page")
    kept = run.keep_unchanged_times(new, previous)
    assert kept == [new / "same.ipynb"]
    assert (new / "same.ipynb").stat().st_mtime_ns == OLD_NS
    for name in ("changed.ipynb", "longer.md", "added.md"):
        assert (new / name).stat().st_mtime_ns > OLD_NS


def test_the_runners_swap_keeps_the_time_of_an_unchanged_page(tmp_path):
    output = tmp_path / "generated"
    output.mkdir()
    (output / "page.md").write_text("unchanged")
    (output / "other.md").write_text("before")
    for path in output.iterdir():
        os.utime(path, ns=(OLD_NS, OLD_NS))
    with run.building(output, "spec\n") as scratch:
        (scratch / "page.md").write_text("unchanged")
        (scratch / "other.md").write_text("after")
    assert (output / "page.md").stat().st_mtime_ns == OLD_NS
    assert (output / "other.md").read_text() == "after" and (output / "other.md").stat().st_mtime_ns > OLD_NS


def _book(tmp_path):
    book = tmp_path / "book"
    (book / "_ext").mkdir(parents=True)
    (book / "_static").mkdir()
    (book / "_config.yml").write_text("title: t\n")
    (book / "_toc.yml").write_text("root: index\n")
    (book / "_ext" / "x.py").write_text("def setup(app): pass\n")
    (book / "_static" / "s.css").write_text("p {}\n")
    (book / "index.md").write_text("# Index\n")
    return book


def _previous_build(book, key):
    html = book / "_build" / "html"
    html.mkdir(parents=True)
    (html / "index.html").write_text("<p>old</p>")
    os.utime(html / "index.html", ns=(OLD_NS, OLD_NS))
    (book / "_build" / htmlbuild.KEY_FILE).write_text(key)


def test_the_html_phase_starts_from_the_previous_build_made_from_the_same_inputs(tmp_path):
    book = _book(tmp_path)
    _previous_build(book, htmlbuild.build_key(book))
    assert htmlbuild.seed(book, tmp_path / "next")
    copied = tmp_path / "next" / "_build" / "html" / "index.html"
    assert copied.read_text() == "<p>old</p>" and copied.stat().st_mtime_ns == OLD_NS  # times kept: Sphinx compares them
    assert (tmp_path / "next" / "_build" / htmlbuild.KEY_FILE).read_text() == htmlbuild.build_key(book)


@pytest.mark.parametrize("untracked", ["_config.yml", "_toc.yml", "_ext/x.py", "_static/s.css", "_ext/new.py"])
def test_a_change_sphinx_does_not_see_starts_the_html_phase_from_nothing(tmp_path, untracked):
    book = _book(tmp_path)
    _previous_build(book, htmlbuild.build_key(book))
    (book / untracked).write_text("changed\n")
    assert not htmlbuild.seed(book, tmp_path / "next")
    target = tmp_path / "next" / "_build"
    assert sorted(p.name for p in target.iterdir()) == [htmlbuild.KEY_FILE]
    assert target.joinpath(htmlbuild.KEY_FILE).read_text() == htmlbuild.build_key(book)


def test_a_page_source_does_not_enter_the_key_but_the_package_does(tmp_path, monkeypatch):
    book = _book(tmp_path)
    key = htmlbuild.build_key(book)
    (book / "index.md").write_text("# Another title\n")  # Sphinx sees this one itself
    assert htmlbuild.build_key(book) == key
    monkeypatch.setattr(htmlbuild, "_package_digest", lambda: "another package")
    assert htmlbuild.build_key(book) != key


def test_no_previous_build_or_one_without_a_key_starts_from_nothing(tmp_path):
    book = _book(tmp_path)
    assert not htmlbuild.seed(book, tmp_path / "next")
    (book / "_build" / "html").mkdir(parents=True)
    assert not htmlbuild.seed(book, tmp_path / "next")


def _load_incremental():
    import importlib.util

    spec = importlib.util.spec_from_file_location("incremental", ROOT / "book" / "_ext" / "incremental.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Title:
    def __init__(self, text):
        self.text = text

    def astext(self):
        return self.text


def _env(titles, labels=None):
    return types.SimpleNamespace(titles={d: _Title(t) for d, t in titles.items()}, found_docs={"a", "b", "c"},
                                 domaindata={"std": {"labels": dict(labels or {}), "anonlabels": {}}})


def test_a_page_read_again_with_another_title_makes_every_page_written_again():
    incremental = _load_incremental()
    env = _env({"a": "A", "b": "B"})
    app = types.SimpleNamespace()
    incremental._remember(app, env, ["a", "new"])
    assert incremental._stale_pages(app, env) == []  # the same title: only the page read again is written
    env.titles["a"] = _Title("A, retitled")
    assert incremental._stale_pages(app, env) == ["a", "b", "c"]


def test_a_page_read_again_with_other_labels_makes_every_page_written_again():
    incremental = _load_incremental()
    env = _env({"a": "A", "b": "B"}, {"sens": ("a", "sens", "Sensitivity"), "other": ("b", "other", "Other")})
    app = types.SimpleNamespace()
    incremental._remember(app, env, ["a"])
    env.domaindata["std"]["labels"]["other"] = ("b", "other", "Changed, but on a page not read again")
    assert incremental._stale_pages(app, env) == []
    env.domaindata["std"]["labels"]["sens"] = ("a", "sens", "Sensitivity to the spec")  # a {ref} elsewhere shows it
    assert incremental._stale_pages(app, env) == ["a", "b", "c"]
    del env.domaindata["std"]["labels"]["sens"]
    assert incremental._stale_pages(app, env) == ["a", "b", "c"]


def test_a_kept_figure_is_the_figure_drawn_and_is_drawn_once(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lgacc.book.notebook import figures

    monkeypatch.setenv("LGACC_CACHE_DIR", str(tmp_path / "cache"))
    shown = []
    monkeypatch.setattr(figures, "show_html", shown.append)
    draws = []

    def draw():
        draws.append(1)
        figure, axis = plt.subplots(figsize=(3, 2))
        axis.bar([0, 1, 2], [3, 1, 2])
        axis.set_title("three bars")
        return figure

    figures.show_svg_figure(draw(), "bars", rasterize=True)
    fresh = list(shown)
    shown.clear()
    figures.show_kept_svg_figure("test-bars", (3, "bars"), draw, "bars", rasterize=True)
    figures.show_kept_svg_figure("test-bars", (3, "bars"), draw, "bars", rasterize=True)
    assert len(draws) == 2  # once fresh, once for the first kept call; the second read it
    assert shown[:2] == fresh and shown[2:] == fresh
    figures.show_kept_svg_figure("test-bars", (4, "bars"), draw, "bars", rasterize=True)  # other inputs: drawn
    assert len(draws) == 3
    plt.close("all")


def test_search_terms_that_name_no_page_are_dropped_before_the_index_is_written():
    incremental = _load_incremental()
    indexer = types.SimpleNamespace(_mapping={"070": set(), "bubble": {"a"}}, _title_mapping={"old": set(), "x": {"b"}})
    app = types.SimpleNamespace(builder=types.SimpleNamespace(indexer=indexer))
    assert incremental._drop_dead_terms(app) == []
    assert indexer._mapping == {"bubble": {"a"}} and indexer._title_mapping == {"x": {"b"}}
    assert incremental._drop_dead_terms(types.SimpleNamespace(builder=types.SimpleNamespace(indexer=None))) == []


@pytest.mark.parametrize("signum, code", [("SIGINT", 130), ("SIGTERM", 143)])
def test_an_interrupted_seed_prints_one_line(tmp_path, signum, code):
    import signal
    import subprocess
    import sys

    book = _book(tmp_path)
    code_to_run = ("import sys, time, lgacc.book.htmlbuild as h\n"
                   "h.seed = lambda book, next_dir: (print('copying', flush=True), time.sleep(30))  # a long copy\n"
                   "sys.exit(h.entry(['seed', sys.argv[1], sys.argv[2]]))\n")
    process = subprocess.Popen([sys.executable, "-c", code_to_run, str(book), str(tmp_path / "next")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout.readline() == "copying\n"  # inside the handlers' reach: no guessed delay
    process.send_signal(getattr(signal, signum))
    _, err = process.communicate(timeout=60)
    assert process.returncode == code
    assert err.strip().count("\n") == 0 and "interrupted" in err
