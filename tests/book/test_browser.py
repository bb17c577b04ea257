"""The built book as a reader sees it, in headless Chromium at a desktop width (1400 px) and a
phone's (390 px): every page loads with no failed request, no console error and no page reaching
outside the book; MathJax finishes and leaves no raw LaTeX (``\\(``, ``\\[``, ``_{``, ``^{``) or
Markdown table syntax in the text, and no formula it could not parse ("Math input error"); no page is
wider than the screen; on the desktop every table and figure fits its column without scrolling; figure text
is legible (9 px or more as rendered, at both widths: on a phone a figure keeps a legible width and
scrolls sideways in its own box); and no notebook shows an error.  Each page is visited once per width
(``conftest.visits``); a full-page screenshot of each visit is kept under ``build/screenshots/`` or
``$LGACC_SCREENSHOTS`` (a CI artifact)."""

from __future__ import annotations

import re

import pytest

from .conftest import HTML, PAGES
from .reader import DESKTOP, MIN_FIGURE_TEXT_PX, PHONE, PROBE_JS, WIDTHS, PageVisit

pytestmark = pytest.mark.book


def test_the_book_has_pages(html_dir):
    assert "index.html" in PAGES
    assert any(page.startswith("generated/") for page in PAGES)
    # issue #33: no empty index page (no page declares an index entry), and no link to one
    assert not (html_dir / "genindex.html").exists()
    assert 'href="genindex.html"' not in (html_dir / "index.html").read_text()


def problems(result: PageVisit) -> list[str]:
    """Everything a reader would trip on in one visit, each in a line (all of them, not the first only)."""
    found = []
    if result.failed:
        found.append(f"failed requests: {result.failed}")
    if result.external:
        found.append(f"reaches outside the book: {result.external}")
    if result.errors:
        found.append(f"errors: {result.errors}")
    if result.tracebacks:
        found.append("shows a notebook error")
    if result.math and result.typeset < result.math:
        found.append(f"{result.math} equations, {result.typeset} typeset")
    if result.math_errors:
        found.append(f"formulas MathJax could not read (shown as 'Math input error'): {result.math_errors}")
    if result.raw_markers():
        found.append(f"raw markup as text (a formula or table did not render): {result.raw_markup()}")
    if result.page_width > result.width + 1:
        found.append(f"the page is {result.page_width} px wide and scrolls sideways")
    if result.too_wide:
        found.append(f"wider than the text column and not scrollable: {result.too_wide}")
    if result.width == DESKTOP and result.scrolling_tables:
        found.append(f"tables or figures the reader must scroll sideways: {result.scrolling_tables}")
    if result.small_text:
        found.append(f"figure text under {MIN_FIGURE_TEXT_PX:g} px: {len(result.small_text)} labels, e.g. {result.small_text[:4]}")
    if result.not_numbers():
        found.append(f"a number that is not one (nan, NaN, Infinity, undefined) in the prose: {result.not_numbers()}")
    return found


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("page_path", PAGES)
def test_page_reads_well(visits, page_path, width):
    found = problems(visits[(page_path, width)])
    assert not found, f"{page_path} at {width} px:\n  " + "\n  ".join(found)


@pytest.mark.parametrize("html_file", PAGES)
def test_no_page_references_a_cdn(html_dir, html_file):
    text = (html_dir / html_file).read_text()
    remote = re.findall(r"""<(?:script|link|img)[^>]*(?:src|href)=["'](https?:)?//[^"']+""", text)
    assert not remote, f"{html_file} loads remote resources: {remote}"


def _built_for() -> str:
    info = (HTML.parent.parent / "generated" / "build_info.md").read_text()
    return re.search(r"for hardware \*\*([^*]+)\*\*", info)[1]


def test_hardware_page_reproduces_every_threshold(visits):
    """On the paper's hardware every threshold agrees; on another spec the page says what differs."""
    result = visits[("generated/hardware_bandwidth.html", DESKTOP)]
    if _built_for() == "a100-80gb":
        assert "All 8 compared cells agree with the paper" in result.text
    else:
        assert re.search(r"All 8 compared cells agree|\d+ of 8 compared cells differ", result.text)
    assert result.math >= 1 and result.typeset >= 1


def test_front_page_states_the_hardware(visits):
    result = visits[("index.html", DESKTOP)]
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
    """The checks find, on a page made to have them: LaTeX that MathJax left raw in a table cell (as the
    x_model page once showed \\(3 d_{m}^{2}\\)) but not the same text in code; a table wider than the
    column that does not scroll; a table that scrolls (accepted on a phone, not on the desktop); a
    page wider than the screen; figure text too small to read; and a formula MathJax could not parse (it shows
    "Math input error", which the prose check cannot see: MathJax's output is not prose)."""
    page = browser.new_page(viewport={"width": PHONE, "height": 900})
    page.set_content(
        """<body><article class="bd-article" style="width: 360px">
        <p>exact: $$\\frac{a}{b}$$</p><p>| --- |</p>
        <table><tr><td>key, value projections</td><td>\\(3 d_{m}^{2}\\)</td></tr></table>
        <pre>x = r"\\[a^{2}\\]"</pre><p><code>\\(b_{1}\\)</code></p>
        <table id="wide" style="width: 1200px"><tr><td>too wide</td></tr></table>
        <div style="overflow-x: auto; width: 360px"><table style="width: 1200px"><tr><td>scrolls</td></tr></table></div>
        <svg viewBox="0 0 1000 100" style="width: 360px"><text x="10" y="50" style="font-size: 20px">tiny</text></svg>
        <mjx-container><mjx-merror data-mjx-error="Missing argument for \\frac">Math input error</mjx-merror></mjx-container>
        </article><div style="width: 700px">wider than the screen</div></body>"""
    )
    measured = page.evaluate(PROBE_JS, MIN_FIGURE_TEXT_PX)
    page.close()
    result = PageVisit(prose=measured["prose"])
    assert set(result.raw_markers()) == {"$$", "\\frac", "\\(", "_{", "^{", "| --- |"}  # not the code's \\[
    assert "b_{1}" not in result.prose and "a^{2}" not in result.prose
    assert len(measured["tooWide"]) == 1 and "too wide" in measured["tooWide"][0]
    assert len(measured["scrolling"]) == 1 and "scrolls" in measured["scrolling"][0]
    assert measured["pageWidth"] > PHONE + 1
    assert measured["small"] == ["tiny (7.2 px)"]
    assert measured["mathErrors"] == ["Missing argument for \\frac"]
    cells = PageVisit(prose="memory 4.7 GiB | nan GiB per GPU | -Infinity days | undefined | NaN\nNanjing, a nano-batch, ZeRO-Infinity")
    assert [found.split(" in ")[0] for found in cells.not_numbers()] == ["'nan'", "'NaN'", "'Infinity'", "'undefined'"]


def test_front_page_says_what_holds_on_its_first_screen(browser, server):
    """At 1400 x 900 the findings (at most eight sentences, each linking to its page) and the summary figure
    are on the first screen; on a phone the figure follows the sentences, its text still legible."""
    for width, height in ((DESKTOP, 900), (PHONE, 844)):
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(f"{server}/index.html", wait_until="load")
        lead = page.evaluate("""() => {
          const items = [...document.querySelectorAll('div.lgacc-lead-text li')];
          const figure = document.querySelector('div.lgacc-lead-figure svg');
          return {sentences: items.length, linked: items.filter(li => li.querySelector('a[href]')).length,
                  first_bottom: items.length ? items[0].getBoundingClientRect().bottom + scrollY : null,
                  numbered: items.filter(li => /\\d/.test(li.innerText)).length,
                  bottom: items.length ? items[items.length - 1].getBoundingClientRect().bottom + scrollY : null,
                  figure_top: figure ? figure.getBoundingClientRect().top + scrollY : null,
                  figure_bottom: figure ? figure.getBoundingClientRect().bottom + scrollY : null};
        }""")
        page.close()
        assert 2 <= lead["sentences"] <= 7, lead  # with the sentence before the list, at most eight
        assert lead["linked"] == lead["numbered"] == lead["sentences"], lead
        assert lead["figure_top"] is not None, "no summary figure"
        if width == DESKTOP:
            assert lead["bottom"] <= height and lead["figure_bottom"] <= height, f"not on the first screen: {lead}"
        else:
            assert lead["figure_top"] >= lead["bottom"], f"on a phone the figure follows the sentences: {lead}"
            # issue #33: the one-sentence answer (the headline) is on a phone's first screen
            assert lead["first_bottom"] <= height, f"the headline sentence is below a phone's first screen: {lead}"


def test_the_front_page_names_the_caveats_a_planner_needs(browser, server):
    """Issue #33 item 5: whether any measured run uses the paper's new methods (computed from the runs), that the
    times are lower bounds with the measured median beside them, and which GB the page means."""
    from lgacc.studies.validation import comparison, load_runs
    from lgacc.studies.validation.tables import dense_rows

    frame = dense_rows(comparison(load_runs()))  # the runs the measured-runs chapter counts (experts and FP8 apart)
    page = browser.new_page(viewport={"width": DESKTOP, "height": 900})
    try:
        page.goto(f"{server}/index.html", wait_until="load")
        text = " ".join(page.inner_text("article").replace("\u2019", "'").split())
    finally:
        page.close()
    if not (frame["method"] == "improved").any():
        assert f"None of the {len(frame)} measured runs uses the paper's new methods" in text, text[:3000]
    assert "Real steps take a median" in text and "below the measured step in" in text and "2³⁰ bytes" in text


def test_the_measured_runs_page_leads_with_its_conclusions_and_folds_its_tables(browser, server):
    """Issue #33 item 6: on a phone the first screen holds the conclusions or the figure, not the 83-row table,
    which is folded (a <details>) as is the table of step times."""
    page = browser.new_page(viewport={"width": PHONE, "height": 844})
    try:
        page.goto(f"{server}/generated/against_measured_runs.html", wait_until="load")
        found = page.evaluate("""() => {
          const section = document.getElementById('in-short');
          const first = section ? section.querySelector('li') : null;
          const figure = section ? section.querySelector('svg, img') : null;
          const tables = [...document.querySelectorAll('article table')];
          const open = tables.filter(t => t.closest('details') === null && t.getBoundingClientRect().height > 0);
          return {first: first ? first.getBoundingClientRect().top : null, figure: figure ? figure.getBoundingClientRect().top : null,
                  firstTable: open.length ? open[0].getBoundingClientRect().top : null,
                  folded: tables.filter(t => t.closest('details') !== null).length,
                  rows: Math.max(0, ...tables.filter(t => t.closest('details') === null).map(t => t.rows.length))};
        }""")
    finally:
        page.close()
    assert found["first"] is not None and found["first"] < 844, found
    assert found["firstTable"] is None or found["firstTable"] > 844, found
    assert found["folded"] >= 2 and found["rows"] < 40, found


def test_the_measured_runs_page_stacks_its_per_run_tables_on_a_phone(browser, server):
    """The side-by-side table's run ids (korthikanti2022-22b-full, simumax-b200-...) broke letter by letter in a
    narrow column on a phone; as the recipe effects, that table now reads as one block per row, each cell the
    phone's width."""
    phone = browser.new_page(viewport={"width": PHONE, "height": 844})
    try:
        phone.goto(f"{server}/generated/against_measured_runs.html", wait_until="load")
        found = phone.evaluate("""() => {
          const cells = [...document.querySelectorAll('article td')].filter(td => td.closest('details') === null);
          const ids = cells.filter(td => /^(korthikanti2022|simumax-b200)-/.test(td.innerText.trim()));
          const choices = cells.filter(td => td.innerText.includes('host_framework'));
          return {ids: ids.length, narrow: ids.filter(td => td.getBoundingClientRect().width < 200).map(td => td.innerText),
                  stacked: ids.filter(td => td.closest('table.lgacc-stack') !== null).length,
                  choices: choices.filter(td => td.closest('table.lgacc-stack') !== null).length,
                  width: document.documentElement.scrollWidth};
        }""")
    finally:
        phone.close()
    assert found["ids"] >= 32 and found["stacked"] == found["ids"] and not found["narrow"], found
    assert found["choices"] == 2 and found["width"] <= PHONE, found


def test_the_evaluation_page_stacks_its_tables_on_a_phone_and_its_sidebar_fits(browser, server):
    """Issue #33 item 6: the printed-against-reproduced tables read as blocks on a phone, with words for the
    booleans; on the desktop the contents sidebar does not scroll sideways."""
    phone = browser.new_page(viewport={"width": PHONE, "height": 844})
    desktop = browser.new_page(viewport={"width": DESKTOP, "height": 900})
    try:
        phone.goto(f"{server}/generated/evaluation_check.html", wait_until="load")
        found = phone.evaluate("""() => ({stacked: document.querySelectorAll('table.lgacc-stack').length,
            width: document.documentElement.scrollWidth,
            text: [...document.querySelectorAll('table.lgacc-stack td')].map(td => td.innerText).join(' ')})""")
        assert found["stacked"] >= 3 and found["width"] <= PHONE, found["stacked"]
        assert "✓ yes" in found["text"] and "True" not in found["text"] and "False" not in found["text"]
        desktop.goto(f"{server}/generated/evaluation_check.html", wait_until="load")
        sidebar = desktop.evaluate("""() => { const s = document.querySelector('.bd-sidebar-secondary');
            return s ? [s.scrollWidth, s.clientWidth] : null; }""")
        assert sidebar is None or sidebar[0] <= sidebar[1] + 1, sidebar
    finally:
        phone.close()
        desktop.close()
