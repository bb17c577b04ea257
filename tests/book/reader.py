"""What a reader sees on a page of the built book, measured in headless Chromium at a given width.

One visit per page and width (:func:`visit_all`, a few pages at a time): the page loads, MathJax
finishes typesetting, then one script (:data:`PROBE_JS`) measures what the checks in
``test_browser.py`` assert, and a full-page screenshot is kept.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from pathlib import Path

#: The widths a reader uses: a desktop browser and a phone (CSS pixels).
DESKTOP, PHONE = 1400, 390
WIDTHS = (DESKTOP, PHONE)
HEIGHT = 900
#: Smallest legible figure text, in CSS pixels as rendered.
MIN_FIGURE_TEXT_PX = 9.0
#: Raw LaTeX or Markdown table syntax shown as text means a formula or table did not render.  The
#: TeX delimiters and the sub/superscripts with braces only ever come from math MathJax left alone.
RAW_MARKUP = ("$$", "\\frac", "\\left", "\\(", "\\[", "_{", "^{", "| --- |", "|---|")
MATHJAX_TIMEOUT_MS = 30000
#: Words a computed number must never show as (a JavaScript or NumPy value that is not a number, shown as text).
NOT_NUMBERS = ("nan", "NaN", "Infinity", "undefined")


@dataclass
class PageVisit:
    page: str = ""
    width: int = DESKTOP
    failed: list[str] = field(default_factory=list)
    external: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # uncaught exceptions and console errors
    typeset: int = 0
    math: int = 0
    tracebacks: int = 0
    text: str = ""
    prose: str = ""  # the rendered text outside code and typeset math
    page_width: int = 0  # the document's width: wider than the window means the page scrolls sideways
    too_wide: list[str] = field(default_factory=list)
    scrolling_tables: list[str] = field(default_factory=list)
    small_text: list[str] = field(default_factory=list)
    math_errors: list[str] = field(default_factory=list)  # formulas MathJax could not parse ("Math input error")
    screenshot: Path | None = None

    def raw_markers(self) -> list[str]:
        """The markers of :data:`RAW_MARKUP` found in the prose."""
        return [marker for marker in RAW_MARKUP if marker in self.prose]

    def not_numbers(self) -> list[str]:
        """Each of :data:`NOT_NUMBERS` found as a word in the prose (code cells, scripts and fields aside), in context."""
        found = []
        for word in NOT_NUMBERS:
            match = re.search(rf"(?<![\w.])(?<!\w-){word}(?![\w])", self.prose)  # not ZeRO-Infinity, a name
            if match:
                at = match.start()
                found.append(f"{word!r} in {' '.join(self.prose[max(0, at - 40):at + 40].split())!r}")
        return found

    def raw_markup(self) -> list[str]:
        """Each raw marker found in the prose, with the text around its first occurrence."""
        found = []
        for marker in self.raw_markers():
            at = self.prose.find(marker)
            found.append(f"{marker!r} in {' '.join(self.prose[max(0, at - 40):at + 40].split())!r}")
        return found


# One script, run after MathJax has finished: every measure of the page at once.
#  * prose: the article's text without `pre` and `code` (code blocks and code spans show LaTeX or
#    Python source on purpose, e.g. a formula's `\frac` or a label such as `eq:model_size`), scripts,
#    form fields (the calculator's inputs hold what the reader typed), and MathJax's own output;
#    what is left is what must read as prose, tables and typeset math;
#  * too_wide: tables, images and figures wider than the text column and not in a container that
#    scrolls sideways (overflow-x auto or scroll) no wider than the column;
#  * scrolling_tables: tables and figures wider than the box they sit in, so that the reader
#    scrolls to see their last columns (a phone's way with a wide table or figure, not a desktop's);
#  * small_text: text of inline SVG figures (matplotlib writes <text> with svg.fonttype 'none') at
#    its rendered size, the font size in user units times the scale of the element's transform.
PROBE_JS = r"""(minimum) => {
  const column = document.querySelector('article.bd-article') || document.querySelector('article') || document.body;
  const limit = column.getBoundingClientRect().width + 1;
  const scrollBox = (element) => {
    for (let e = element.parentElement; e && e !== column; e = e.parentElement) {
      const overflow = getComputedStyle(e).overflowX;
      if (overflow === 'auto' || overflow === 'scroll') return e;
    }
    return null;
  };
  const name = (e) => (e.innerText || e.getAttribute('alt') || e.getAttribute('aria-label') || '').slice(0, 60).replace(/\s+/g, ' ');
  const copy = column.cloneNode(true);
  copy.querySelectorAll('pre, code, script, style, textarea, input, select, mjx-container, mjx-assistive-mml, .MathJax')
    .forEach(e => e.remove());
  const tooWide = [], scrolling = [], small = [];
  column.querySelectorAll('table, img, svg, figure').forEach(e => {
    if (e.closest('mjx-container, pre')) return;
    const width = Math.max(e.getBoundingClientRect().width, e.scrollWidth || 0);
    const box = scrollBox(e);
    if (width > limit && !(box && box.getBoundingClientRect().width <= limit)) {
      tooWide.push(`${e.tagName.toLowerCase()} ${Math.round(width)} px > ${Math.round(limit)} px: ${name(e)}`);
    }
    if ((e.tagName === 'TABLE' || e.tagName === 'svg') && box && box.scrollWidth > box.clientWidth + 1) {
      scrolling.push(`${e.tagName.toLowerCase()} ${box.scrollWidth} px in a ${box.clientWidth} px box: ${name(e)}`);
    }
  });
  column.querySelectorAll('svg text').forEach(t => {
    if (t.closest('mjx-container')) return;
    const ctm = t.getScreenCTM();
    if (!ctm || !t.textContent.trim()) return;
    const scale = Math.sqrt(ctm.a * ctm.a + ctm.b * ctm.b);
    const px = parseFloat(getComputedStyle(t).fontSize) * scale;
    if (px < minimum) small.push(`${t.textContent.trim().slice(0, 30)} (${px.toFixed(1)} px)`);
  });
  return {
    prose: copy.innerText,
    text: document.body.innerText,
    pageWidth: document.documentElement.scrollWidth,
    tooWide, scrolling, small,
    mathErrors: [...document.querySelectorAll('mjx-merror')].map(
      (e) => (e.getAttribute('data-mjx-error') || e.textContent || '').slice(0, 80)),
    math: document.querySelectorAll('.math').length,
    typeset: document.querySelectorAll('mjx-container').length,
    tracebacks: document.querySelectorAll('.output.traceback, .output.error, .output_error').length,
  };
}"""

# MathJax is loaded on a page that has math; its startup promise settles once the first typesetting
# pass is over.  Waiting on it (not on the network) is what "MathJax has finished" means.
MATHJAX_DONE_JS = """() => {
  if (!document.querySelector('script[src*="mathjax"]')) return true;
  return !!(window.MathJax && MathJax.startup && MathJax.startup.promise);
}"""


def _reported(message) -> bool:
    """A console error, except the browser's own request for /favicon.ico (the book has none; Chromium
    asks every site for one, and the page never does)."""
    return message.type == "error" and not str((message.location or {}).get("url", "")).endswith("/favicon.ico")


def screenshot_name(page_path: str, width: int) -> str:
    """``generated/claims.html`` at 1400 px -> ``generated__claims.png``; at 390 px ``generated__claims.390px.png``."""
    stem = page_path.replace("/", "__").removesuffix(".html")
    return f"{stem}.png" if width == DESKTOP else f"{stem}.{width}px.png"


async def visit(browser, server: str, page_path: str, width: int, screenshots: Path | None) -> PageVisit:
    """One page at one width, as a first visit: a fresh context (no stored theme, no cache)."""
    result = PageVisit(page=page_path, width=width)
    context = await browser.new_context(viewport={"width": width, "height": HEIGHT})
    page = await context.new_page()
    page.on("requestfailed", lambda request: result.failed.append(f"{request.url} ({request.failure})"))
    page.on("response", lambda response: response.status >= 400
            and result.failed.append(f"{response.url} (HTTP {response.status})"))
    page.on("request", lambda request: not request.url.startswith((server, "data:", "blob:"))
            and result.external.append(request.url))
    page.on("pageerror", lambda error: result.errors.append(str(error)))
    page.on("console", lambda message: _reported(message) and result.errors.append(f"console: {message.text}"))
    try:
        await page.goto(f"{server}/{page_path}", wait_until="load")
        await page.wait_for_function(MATHJAX_DONE_JS, timeout=MATHJAX_TIMEOUT_MS)
        await page.evaluate("() => window.MathJax && MathJax.startup ? MathJax.startup.promise.then(() => true) : true")
        measured = await page.evaluate(PROBE_JS, MIN_FIGURE_TEXT_PX)
        result.prose, result.text, result.page_width = measured["prose"], measured["text"], measured["pageWidth"]
        result.too_wide, result.scrolling_tables, result.small_text = measured["tooWide"], measured["scrolling"], measured["small"]
        result.math, result.typeset, result.tracebacks = measured["math"], measured["typeset"], measured["tracebacks"]
        result.math_errors = measured["mathErrors"]
        if screenshots is not None:
            result.screenshot = screenshots / screenshot_name(page_path, width)
            await page.screenshot(path=str(result.screenshot), full_page=True)
    except Exception as error:  # the page's test reports it; the other visits go on
        result.errors.append(f"visit failed: {type(error).__name__}: {error}")
    finally:
        await context.close()
    return result


def visit_all(server: str, pages, widths, executable: str, flags, screenshots: Path | None, jobs: int = 2) -> dict:
    """``{(page, width): PageVisit}`` for every page at every width, ``jobs`` tabs at a time."""
    from playwright.async_api import async_playwright

    async def main() -> dict:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=executable, headless=True, args=list(flags))
            gate = asyncio.Semaphore(max(1, jobs))

            async def one(page_path: str, width: int) -> PageVisit:
                async with gate:
                    return await visit(browser, server, page_path, width, screenshots)

            done = await asyncio.gather(*(one(p, w) for w in widths for p in pages))
            await browser.close()
        return {(v.page, v.width): v for v in done}

    return asyncio.run(main())
