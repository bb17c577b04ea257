"""Keep the built book self-contained: no page may load anything from the network.

Jupyter Book 1 always enables sphinx-thebe, which adds to every page an inline
script naming a CDN copy of thebe (twice, which also raises a JavaScript error)
and a loader for it.  This book has no live-code button, so both are dropped
from each page's script list.  Any other remote script is an error.
"""

from __future__ import annotations

from sphinx.errors import ExtensionError

_THEBE_MARKERS = ("THEBE_JS_URL", "sphinx-thebe.js")


def _is_thebe(script) -> bool:
    body = getattr(script, "attributes", {}).get("body", "") or ""
    return any(marker in (getattr(script, "filename", "") or "") or marker in body for marker in _THEBE_MARKERS)


def _strip_remote_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if scripts is None:
        return
    kept = [script for script in scripts if not _is_thebe(script)]
    remote = [getattr(s, "filename", str(s)) for s in kept if "://" in (getattr(s, "filename", "") or "")]
    if remote:
        raise ExtensionError(f"page {pagename} would load remote scripts {remote}; the book must build offline")
    context["script_files"] = kept


def setup(app):
    app.set_html_assets_policy("always")
    app.connect("html-page-context", _strip_remote_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
