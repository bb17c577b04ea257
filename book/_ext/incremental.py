"""Pages made stale by another page's title are written again (``make book`` starts from the previous build).

Sphinx writes again the pages it read again, but every page's navigation (and each ``{doc}`` link) shows the
other pages' titles: when a page read again comes back with another title, every page is written again, so that
no page shows the old one (:mod:`lgacc.book.htmlbuild`).
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


def setup(app):
    app.connect("env-before-read-docs", _remember_titles)
    app.connect("env-get-updated", _stale_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
