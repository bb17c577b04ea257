"""What a build started from the previous one must redo (``make book``: :mod:`lgacc.book.htmlbuild`).

* Sphinx writes again the pages it read again, but other pages show what those define: every page's navigation
  (and each ``{doc}`` link) their titles, each ``{ref}`` link the title of the section it names.  When a page read
  again comes back with another title, or with labels that are not the same (added, removed, or naming another
  section title), every page is written again, so that no page shows the old text.
* The search index is the previous one with the pages read again re-indexed: Sphinx empties the terms of their
  old text but keeps them, each naming no page (148 numbers of the paper's spec in a book rebuilt for another).
  They are dropped before the index is written, so that it holds the terms of a clean build, no more.
"""

_SNAPSHOT = "_lgacc_shown_before"


def _title(env, docname):
    title = env.titles.get(docname)
    return None if title is None else title.astext()


def _shown(env, docnames):
    """What other pages show of the pages ``docnames``: their titles, and the labels they define (with the title
    of the section each names)."""
    titles = {docname: _title(env, docname) for docname in docnames if docname in env.titles}
    std = getattr(env, "domaindata", {}).get("std", {})
    labels = {(kind, name): tuple(value) for kind in ("labels", "anonlabels")
              for name, value in std.get(kind, {}).items() if value and value[0] in docnames}
    return titles, labels


def _remember(app, env, docnames):
    read = set(docnames)
    setattr(app, _SNAPSHOT, (read, _shown(env, read)))


def _stale_pages(app, env):
    read, (titles, labels) = getattr(app, _SNAPSHOT, (set(), ({}, {})))
    titles_now, labels_now = _shown(env, read)
    # a page new to this build had no title before: only the titles that were there are compared
    if any(titles_now.get(docname) != title for docname, title in titles.items()) or labels_now != labels:
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
    app.connect("env-before-read-docs", _remember)
    app.connect("env-get-updated", _stale_pages)
    app.connect("html-collect-pages", _drop_dead_terms)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
