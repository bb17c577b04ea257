"""The built book as a reader sees it, in headless Chromium: every page loads with no
failed request, no page reaches outside the book, equations are typeset by the
vendored MathJax, no raw LaTeX or Markdown table syntax shows as text, nothing is
wider than the text column unless it scrolls, figure text is legible, and no
notebook shows an error.  A full-page screenshot of each page is kept under
``build/screenshots/`` or ``$LGACC_SCREENSHOTS`` (a CI artifact)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .conftest import HTML, ROOT

pytestmark = pytest.mark.book

SKIPPED_PAGES = {"search.html", "genindex.html"}  # Sphinx utility pages, not content
PAGES = sorted(
    str(path.relative_to(HTML)) for path in HTML.rglob("*.html") if path.name not in SKIPPED_PAGES and "_static" not in path.parts
) if HTML.is_dir() else []


@dataclass
class PageVisit:
    failed: list[str] = field(default_factory=list)
    external: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    typeset: int = 0
    math: int = 0
    tracebacks: int = 0
    text: str = ""
    prose: str = ""  # the rendered text outside code blocks
    too_wide: list[str] = field(default_factory=list)
    small_text: list[str] = field(default_factory=list)


#: Where the page screenshots go: ``make check-book`` sets LGACC_SCREENSHOTS from its SCREENSHOTS variable.
SCREENSHOTS = Path(os.environ.get("LGACC_SCREENSHOTS") or ROOT / "build" / "screenshots")
VIEWPORT = {"width": 1280, "height": 900}
#: Raw LaTeX or Markdown table syntax shown as text means a formula or table did not render.
RAW_MARKUP = ("$$", "\\frac", "\\left", "| --- |", "|---|")
MIN_FIGURE_TEXT_PX = 9.0

# Text outside code: what a reader sees as prose, tables and typeset math.
_PROSE_JS = """() => {
  const root = document.querySelector('article') || document.body;
  const copy = root.cloneNode(true);
  copy.querySelectorAll('pre, code, script, style, mjx-container, mjx-assistive-mml, .MathJax').forEach(e => e.remove());
  return copy.innerText;
}"""



def visit(browser, server: str, page_path: str, screenshot: bool = False) -> PageVisit:
    result = PageVisit()
    page = browser.new_page(viewport=VIEWPORT)
    page.on("requestfailed", lambda request: result.failed.append(f"{request.url} ({request.failure})"))
    page.on(
        "response",
        lambda response: response.status >= 400 and result.failed.append(f"{response.url} (HTTP {response.status})"),
    )
    page.on(
        "request",
        lambda request: not request.url.startswith((server, "data:", "blob:")) and result.external.append(request.url),
    )
    page.on("pageerror", lambda error: result.errors.append(str(error)))
    page.goto(f"{server}/{page_path}", wait_until="networkidle")
    result.math = page.locator(".math").count()
    if result.math:
        page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=15000)
        page.evaluate("() => MathJax.startup.promise")
        result.typeset = page.locator("mjx-container").count()
    result.tracebacks = page.locator(".output.traceback, .output.error, .output_error").count()
    result.text = page.inner_text("body")
    result.prose = page.evaluate(_PROSE_JS)
    result.too_wide = page.evaluate(_TOO_WIDE_JS)
    result.small_text = page.evaluate(_SMALL_TEXT_JS, MIN_FIGURE_TEXT_PX)
    if screenshot:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / (page_path.replace("/", "__").removesuffix(".html") + ".png")), full_page=True)
    page.close()
    return result


# Tables, images and figures wider than the text column, unless inside a container
# that scrolls sideways (overflow-x auto or scroll) and is itself no wider than the column.
_TOO_WIDE_JS = r"""() => {
  const column = document.querySelector('article.bd-article') || document.querySelector('article') || document.body;
  const limit = column.getBoundingClientRect().width + 1;
  const scrolls = (element) => {
    for (let e = element.parentElement; e && e !== column; e = e.parentElement) {
      const overflow = getComputedStyle(e).overflowX;
      if ((overflow === 'auto' || overflow === 'scroll') && e.getBoundingClientRect().width <= limit) return true;
    }
    return false;
  };
  const wide = [];
  column.querySelectorAll('table, img, svg, figure').forEach(e => {
    if (e.closest('mjx-container')) return;
    const width = Math.max(e.getBoundingClientRect().width, e.scrollWidth || 0);
    if (width > limit && !scrolls(e)) {
      const text = (e.innerText || e.getAttribute('alt') || '').slice(0, 60).replace(/\s+/g, ' ');
      wide.push(`${e.tagName.toLowerCase()} ${Math.round(width)} px > ${Math.round(limit)} px: ${text}`);
    }
  });
  return wide;
}"""

# Text of inline SVG figures (matplotlib writes <text> with svg.fonttype 'none') at its
# rendered size: the font size in user units times the scale of the element's transform.
_SMALL_TEXT_JS = """(minimum) => {
  const column = document.querySelector('article') || document.body;
  const small = [];
  column.querySelectorAll('svg text').forEach(t => {
    if (t.closest('mjx-container')) return;
    const ctm = t.getScreenCTM();
    if (!ctm || !t.textContent.trim()) return;
    const scale = Math.sqrt(ctm.a * ctm.a + ctm.b * ctm.b);
    const px = parseFloat(getComputedStyle(t).fontSize) * scale;
    if (px < minimum) small.push(`${t.textContent.trim().slice(0, 30)} (${px.toFixed(1)} px)`);
  });
  return small;
}"""


def test_the_book_has_pages(html_dir):
    assert "index.html" in PAGES
    assert any(page.startswith("generated/") for page in PAGES)


@pytest.mark.parametrize("page_path", PAGES)
def test_page_loads_offline_with_typeset_math(browser, server, page_path):
    result = visit(browser, server, page_path, screenshot=True)
    assert not result.failed, f"failed requests on {page_path}: {result.failed}"
    assert not result.external, f"{page_path} reaches outside the book: {result.external}"
    assert not result.errors, f"JavaScript errors on {page_path}: {result.errors}"
    assert result.tracebacks == 0, f"{page_path} shows a notebook error"
    if result.math:
        assert result.typeset >= result.math, f"{page_path}: {result.math} equations, {result.typeset} typeset"
    raw = [marker for marker in RAW_MARKUP if marker in result.prose]
    assert not raw, f"{page_path} shows raw markup as text: {raw} (a formula or table did not render)"
    assert not result.too_wide, f"{page_path}: wider than the text column and not scrollable: {result.too_wide}"
    assert not result.small_text, f"{page_path}: figure text under {MIN_FIGURE_TEXT_PX} px: {result.small_text[:8]}"


@pytest.mark.parametrize("html_file", PAGES)
def test_no_page_references_a_cdn(html_dir, html_file):
    text = (html_dir / html_file).read_text()
    remote = re.findall(r"""<(?:script|link|img)[^>]*(?:src|href)=["'](https?:)?//[^"']+""", text)
    assert not remote, f"{html_file} loads remote resources: {remote}"


def _built_for() -> str:
    info = (HTML.parent.parent / "generated" / "build_info.md").read_text()
    return re.search(r"for hardware \*\*([^*]+)\*\*", info)[1]


def test_hardware_page_reproduces_every_threshold(browser, server):
    """On the paper's hardware every threshold agrees; on another spec the page says what differs."""
    result = visit(browser, server, "generated/hardware_bandwidth.html")
    if _built_for() == "a100-80gb":
        assert "All 8 compared cells agree with the paper" in result.text
    else:
        assert re.search(r"All 8 compared cells agree|\d+ of 8 compared cells differ", result.text)
    assert result.math >= 1 and result.typeset >= 1


def test_front_page_states_the_hardware(browser, server):
    result = visit(browser, server, "index.html")
    assert re.search(r"for hardware \S+", result.text), "front page does not say which hardware it was built for"


@pytest.mark.parametrize("html_file", PAGES)
def test_internal_links_and_images_resolve(html_dir, html_file):
    """Every local link and image of a page points at a file of the build."""
    page = html_dir / html_file
    text = page.read_text()
    targets = re.findall(r"""<(?:a|img)\s[^>]*(?:href|src)=["']([^"'#?]+)""", text)
    broken = []
    for target in targets:
        if re.match(r"^[a-z]+:", target) or target.startswith("//"):
            continue  # mailto:, data:, ... (remote resources are caught above)
        resolved = (page.parent / target).resolve()
        if not resolved.exists():
            broken.append(target)
    assert not broken, f"{html_file} has broken links or images: {broken}"


@pytest.mark.parametrize("html_file", PAGES)
def test_equations_are_cited_by_number_and_link_to_their_derivation(html_dir, html_file):
    """A label such as eq:critical_batch reads "Eq. (2)" and its link lands on the derivation's anchor."""
    page = html_dir / html_file
    text = page.read_text()
    links = re.findall(r'<a [^>]*href="([^"]*)#(eq-[a-z-]+)"[^>]*>([^<]*)</a>', text)
    derivations = html_dir / "generated" / "derivations.html"
    anchors = set(re.findall(r'id="(eq-[a-z-]+)"', derivations.read_text())) if derivations.exists() else set()
    for target, anchor, shown in links:
        assert re.fullmatch(r"Eq\. \(\d+\)", shown), f"{html_file}: link to {anchor} reads {shown!r}"
        assert anchor in anchors, f"{html_file}: no derivation carries the anchor {anchor}"
    if html_file != "generated/derivations.html":
        prose = re.sub(r"<(script|pre|code|style)\b.*?</\1>|<[^>]+>", " ", text, flags=re.S)
        raw = sorted(set(re.findall(r"\beq:[a-z_]+", prose)))
        assert not raw, f"{html_file} names equations by their LaTeX label: {raw}"


def test_every_reproduced_table_and_figure_is_downloadable(html_dir):
    """Tables as CSV, figures as SVG, from the page of each artifact."""
    from lgacc.paper.artifacts import registry

    wanted = {"table": ".csv", "figure": ".svg"}
    missing = []
    for artifact in registry().values():
        suffix = wanted.get(artifact.kind)
        if suffix is None:
            continue
        page = html_dir / "generated" / f"{artifact.page}.html"
        if not page.is_file() or not re.search(rf'download="[^"]+\{suffix}"', page.read_text()):
            missing.append(f"{artifact.label} ({artifact.page}.html, {suffix})")
    assert not missing, f"no download link for: {missing}"


def test_the_reader_checks_can_fail(browser):
    """The checks find raw LaTeX, an unscrollable wide table and tiny figure text on a page made to have them,
    and accept the same table in a scroll container."""
    page = browser.new_page(viewport=VIEWPORT)
    page.set_content(
        """<article class="bd-article" style="width: 600px">
        <p>exact: $$\\frac{a}{b}$$</p><p>| --- |</p>
        <table id="wide" style="width: 1200px"><tr><td>too wide</td></tr></table>
        <div style="overflow-x: auto; width: 600px"><table style="width: 1200px"><tr><td>scrolls</td></tr></table></div>
        <svg viewBox="0 0 1000 100" style="width: 600px"><text x="10" y="50" style="font-size: 10px">tiny</text></svg>
        </article>"""
    )
    prose = page.evaluate(_PROSE_JS)
    assert "$$" in prose and "\\frac" in prose and "| --- |" in prose
    too_wide = page.evaluate(_TOO_WIDE_JS)
    assert len(too_wide) == 1 and "too wide" in too_wide[0]
    small = page.evaluate(_SMALL_TEXT_JS, MIN_FIGURE_TEXT_PX)
    assert small == ["tiny (6.0 px)"]
    page.close()
