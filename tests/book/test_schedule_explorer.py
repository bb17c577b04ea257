"""The schedule explorer page of the built book in headless Chromium, with every request outside the book blocked.

``window.lgacc.schedule`` returns what ``lgacc simulate --format json`` prints on a sample of the book's grid (every
schedule; the command itself for one point), each change of a choice redraws in under 0.2 s, the page stays light and
fits a phone, and a fuzz of its API finds nothing but results and one-line InputErrors.
"""

from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys

import pytest

pytestmark = pytest.mark.book
FIELDS = ("schedule", "n_l", "n_mu", "n_v", "d_l")


@pytest.fixture(scope="module")
def explorer(browser, server, html_dir):
    if not (html_dir / "schedule_explorer.html").is_file():
        pytest.fail("schedule_explorer.html is not in the built book")
    outside, errors = [], []
    page = browser.new_page(viewport={"width": 1400, "height": 900})

    def route(request_route):
        url = request_route.request.url
        if url.startswith((server, "data:", "blob:")):
            request_route.continue_()
        else:
            outside.append(url)
            request_route.abort()

    page.route("**/*", route)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{server}/schedule_explorer.html", wait_until="networkidle")
    page.wait_for_function("() => document.getElementById('lgacc-explorer').dataset.state === 'drawn'")
    yield page, outside, errors
    page.close()


def test_the_explorer_works_offline_and_stays_light(explorer, html_dir):
    page, outside, errors = explorer
    assert not outside and not errors, (outside, errors)
    weight = (html_dir / "schedule_explorer.html").stat().st_size + (html_dir / "_static" / "lgacc-schedules.js").stat().st_size
    assert weight < 1_000_000, f"the page and its data weigh {weight:,} bytes"
    assert page.locator("#lgacc-explorer-chart canvas").count() == 1
    page.hover("#lgacc-explorer-chart canvas", position={"x": 200, "y": 16})
    assert page.inner_text("#lgacc-explorer-block").startswith("device 0: micro-batch")


def test_window_lgacc_schedule_is_what_lgacc_simulate_prints(explorer):
    """42 points of the grid (each schedule at least six times) through the command's own handler, one through the
    ``lgacc simulate`` process; a point the simulator refuses gets its message."""
    from lgacc.commands.simulate import register, result

    page, _, _ = explorer
    grid = page.evaluate("() => window.lgacc.scheduleGrid")
    rng = random.Random(27)
    points = [dict(zip(FIELDS, values)) for values in itertools.product(*(grid[f] for f in FIELDS))]
    plausible = [p for p in points if p["n_v"] == 1 or p["schedule"] in ("interleaved", "breadth-first")]
    sample = [p for name in grid["schedule"] for p in rng.sample([p for p in plausible if p["schedule"] == name], 6)]
    sample += rng.sample(points, 6)
    got = page.evaluate("""qs => qs.map(q => { try { return { ok: window.lgacc.schedule(q) }; }
                                               catch (e) { return { error: e.message, name: e.name }; } })""", sample)
    import argparse

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    compared = 0
    for q, js in zip(sample, got):
        args = parser.parse_args(["simulate", "--format", "json"] + [a for f in FIELDS for a in (f"--{f.replace('_', '-')}", str(q[f]))])
        try:
            expected = json.loads(json.dumps(result(args)))
        except Exception as error:  # noqa: BLE001 - the simulator refuses: so does the page, in its words
            assert js.get("name") == "InputError" and js["error"] == str(error), (q, js)
            continue
        assert js.get("ok") == expected, q
        compared += 1
    assert compared >= 25, compared
    q = {"schedule": "breadth-first", "n_l": 4, "n_mu": 8, "n_v": 2, "d_l": 32}
    command = [sys.executable, "-m", "lgacc", "simulate", "--format", "json"] + [
        a for f in FIELDS for a in (f"--{f.replace('_', '-')}", str(q[f]))]
    cli = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
    assert page.evaluate("q => window.lgacc.schedule(q)", q) == cli


def test_each_change_redraws_in_under_a_fifth_of_a_second(explorer):
    """The heaviest points (32 layers, 16 micro-batches) and a refused one, each chosen as a reader chooses it."""
    page, _, errors = explorer
    # from the change to the next frame painted (requestAnimationFrame, then a task: the frame is out)
    timings = page.evaluate("""async choices => {
        const out = [];
        for (const [field, value] of choices) {
            const select = document.getElementById(`lgacc-explorer-${field}`);
            await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
            const t0 = performance.now();
            select.value = String(value);
            select.dispatchEvent(new Event('change', { bubbles: true }));
            await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
            out.push([field, value, performance.now() - t0, document.getElementById('lgacc-explorer').dataset.state]);
        }
        return out;
    }""", [["d_l", 32], ["n_mu", 16], ["n_l", 2], ["schedule", "modular"], ["schedule", "breadth-first"], ["n_v", 4],
            ["schedule", "zero-bubble"], ["schedule", "interleaved"], ["n_mu", 4], ["n_l", 8], ["schedule", "gpipe"]])
    for field, value, ms, state in timings:
        assert ms < 200, (field, value, ms)
    states = [state for *_, state in timings]
    assert "drawn" in states and "refused" in states, timings  # interleaved, n_v = 4, n_l = 8, n_mu = 4: refused
    assert page.inner_text("#lgacc-explorer-error").strip() != ""
    page.select_option("#lgacc-explorer-n_v", "1")
    page.select_option("#lgacc-explorer-n_mu", "8")
    assert page.evaluate("document.getElementById('lgacc-explorer').dataset.state") == "drawn"
    assert page.inner_text("#lgacc-explorer-error").strip() == "" and not errors


def test_the_explorer_fits_a_phone_with_readable_text(browser, server):
    phone = browser.new_page(viewport={"width": 390, "height": 844})
    try:
        phone.goto(f"{server}/schedule_explorer.html", wait_until="networkidle")
        phone.wait_for_function("() => document.getElementById('lgacc-explorer').dataset.state === 'drawn'")
        assert phone.evaluate("document.documentElement.scrollWidth") <= 390
        # the canvas is drawn at the page's scale (CSS width = drawing width): its smallest font is its size on screen
        font, drawn, shown, right = phone.evaluate("""() => { const c = document.querySelector('#lgacc-explorer-chart canvas');
            return [Number(c.dataset.fontPx), c.width / (window.devicePixelRatio || 1), c.getBoundingClientRect().width,
                    c.getBoundingClientRect().right]; }""")
        assert font * shown / drawn >= 9, (font, shown, drawn)
        assert right <= 390
    finally:
        phone.close()


def test_a_phone_shows_the_micro_batch_numbers(browser, server):
    """Issue #33: on a phone the blocks narrower than 13 px lost their micro-batch numbers (all of them at the
    default sizes); each block now carries its number wherever the number fits, at the chart's smallest size."""
    phone = browser.new_page(viewport={"width": 390, "height": 844})
    try:
        phone.add_init_script("""{
            const fill = CanvasRenderingContext2D.prototype.fillText;
            window.__texts = [];
            CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
                window.__texts.push(String(text)); return fill.call(this, text, ...rest); };
        }""")
        phone.goto(f"{server}/schedule_explorer.html", wait_until="networkidle")
        phone.wait_for_function("() => document.getElementById('lgacc-explorer').dataset.state === 'drawn'")
        phone.select_option("#lgacc-explorer-schedule", "modular")
        phone.evaluate("() => { window.__texts = []; }")
        phone.select_option("#lgacc-explorer-n_mu", "4")  # a redraw, recorded
        texts = phone.evaluate("() => window.__texts")
        n_l = int(phone.input_value("#lgacc-explorer-n_l"))
        numbers = [t for t in texts if t in {"0", "1", "2", "3"}]  # the time axis adds one "0" at most
        # every micro-batch 0..3, forward and backward, on every device
        assert {"1", "2", "3"} <= set(numbers), texts
        assert len(numbers) >= 2 * 4 * n_l + 1, (len(numbers), texts)
    finally:
        phone.close()


FUZZ = """
(seed) => {
  let state = seed;
  const random = () => { state = (state * 1103515245 + 12345) % 2147483648; return state / 2147483648; };
  const choice = (xs) => xs[Math.floor(random() * xs.length)];
  const values = ["constructor", "__proto__", "toString", "valueOf", "", "gpipe", "modular", "standard", 0, -1, 2, 4, 8, 16,
                  32, 2.5, NaN, Infinity, 1e308, null, true, [], {}, "4", 2 ** 53];
  const problems = [];
  let results = 0;
  for (let i = 0; i < 3000; i++) {
    const q = { schedule: choice(window.lgacc.scheduleGrid.schedule), n_l: 4, n_mu: 8, n_v: 1, d_l: 16 };
    for (let k = Math.floor(random() * 3); k >= 0; k--)
      Object.defineProperty(q, choice(["schedule", "n_l", "n_mu", "n_v", "d_l", "transfer_bytes", "constructor"]),
                            { value: choice(values), enumerable: true, configurable: true, writable: true });
    try {
      const r = window.lgacc.schedule(q);
      const t = window.lgacc.scheduleTimeline(q);
      results++;
      if (Object.values(r).some((v) => typeof v === "number" && !isFinite(v)) || !(t.step_time > 0)) problems.push(JSON.stringify(q));
    } catch (e) {
      if (!(e instanceof window.lgacc.InputError) || /\\n|undefined/.test(e.message)) problems.push(`${e.name}: ${e.message}`);
    }
  }
  return [results, problems.slice(0, 10)];
}
"""


def test_a_fuzz_of_the_explorers_api(explorer):
    page, _, _ = explorer
    results, problems = page.evaluate(FUZZ, 2027)
    assert not problems, problems
    assert results >= 100, results


def test_every_number_of_the_explorer_has_its_unit(browser, server):
    """Issue #33 item 4: "Step time 152" had no unit."""
    page = browser.new_page(viewport={"width": 390, "height": 844})
    try:
        page.goto(f"{server}/schedule_explorer.html", wait_until="networkidle")
        page.wait_for_function("() => document.getElementById('lgacc-explorer').dataset.state === 'drawn'")
        for id, unit in (("bubble", " %"), ("memory", " micro-batches"), ("traffic", " transfers"), ("step", " layer passes")):
            text = page.inner_text(f"#lgacc-explorer-{id}")
            assert text.endswith(unit) and any(ch.isdigit() for ch in text), (id, text)
        assert "layer passes busy on the busiest device" in page.inner_text("#lgacc-explorer-step-words")
    finally:
        page.close()
