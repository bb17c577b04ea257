"""What a build started from the previous one must redo (``make book``: :mod:`lgacc.book.htmlbuild`).

* Sphinx writes again the pages it read again, but every page's navigation (and each ``{doc}`` link) shows the
  other pages' titles: when a page read again comes back with another title, every page is written again, so
  that no page shows the old one.
* The search index is the previous one with the pages read again re-indexed: Sphinx empties the terms of their
  old text but keeps them, each naming no page (148 numbers of the paper's spec in a book rebuilt for another).
  They are dropped before the index is written, so that it holds the terms of a clean build, no more.
"""

_SNAPSHOT = "_lgacc_titles_before"


def _title(env, docname):
    title = env.titles.get(docname)
    return None if title is None else title.astext()


def _remember_titles(app, env, docnames):
    setattr(app, _SNAPSHOT, {docname: _title(env, docname) for docname in docnames if docname in env.titles})


def _stale_pages(app, env):
    before = getattr(app, _SNAPSHOT, {})
    if any(_title(env, docname) != title for docname, title in before.items()):
        return sorted(env.found_docs)
    return []


def _drop_dead_terms(app):
    """Drop the search terms that name no page (called before the index is written); no pages added."""
    indexer = getattr(app.builder, "indexer", None)
    for name in ("_mapping", "_title_mapping"):
        mapping = getattr(indexer, name, None)
        if isinstance(mapping, dict):
            for term in [term for term, pages in mapping.items() if not pages]:
                del mapping[term]
    return []


def setup(app):
    app.connect("env-before-read-docs", _remember_titles)
    app.connect("env-get-updated", _stale_pages)
    app.connect("html-collect-pages", _drop_dead_terms)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
