"""The calculator's JavaScript (lgacc.book.jsgen) run under node against the Python evaluator and search.

The generated module is printed from the same derivations the evaluator lambdifies;
the composition is glue.  300 random configurations (every method, with and without
offload and partition, shipped and custom specs and models, both forms, random
assumptions) must agree with :func:`lgacc.model.evaluator.evaluate` to a relative 1e-9,
reasons word for word; bad input must give the Python message; the in-page search
must pick the configuration ``lgacc optimize`` picks.
"""

from __future__ import annotations

import json
import math
import random
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import yaml

from lgacc.book import jsgen
from lgacc.errors import UserInputError
from lgacc.model.assumptions import Assumptions
from lgacc.model.config import TrainingConfig, parse_precision
from lgacc.model.evaluator import evaluate
from lgacc.model.hardware import HardwareSpecError, HardwareSpecWarning, available_hardware
from lgacc.model.transformer import Transformer, model_from_mapping, named_model
from lgacc.search import fastest

ROOT = Path(__file__).resolve().parent.parent
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")
FIXTURE_SPECS = sorted((ROOT / "tests" / "fixtures" / "hardware").glob("*.yaml"))
KEYS = ("b", "n_gpu", "efficiency", "time_days", "step_time_s", "memory_gib", "overheads", "feasible", "reasons", "schedule",
        "n_v")
SCHEDULES = ("gpipe", "1f1b", "interleaved", "breadth-first", "zero-bubble", "modular", "standard", "Interleaved")
REL = 1e-9


@pytest.fixture(scope="module")
def module_path(tmp_path_factory) -> Path:
    return jsgen.write(tmp_path_factory.mktemp("calculator") / "lgacc-calculator.js")


def run_node(module_path: Path, script: str, payload) -> object:
    """Run ``script`` under node with ``lgacc`` (the module) and ``input`` (the payload) defined; return its JSON."""
    program = (f"const lgacc = require({json.dumps(str(module_path))});\n"
               "const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));\n" + script)
    out = subprocess.run([NODE, "-e", program], input=json.dumps(payload), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


EVALUATE_ALL = """
const out = input.map((q) => { try { return { ok: lgacc.evaluate(q) }; } catch (e) { return { error: e.message, name: e.name }; } });
process.stdout.write(JSON.stringify(out));
"""


#: Configurations ``lgacc optimize`` selects (inputs, not results): with fewer data-parallel instances
#: they stay near feasibility, so that the sample exercises feasible configurations as well.
ANCHORS = [
    ("X160", "a100-80gb", "improved", 483, 5, 16, 5, 1),
    ("X64", "a100-80gb", "improved", 65, 16, 8, 20, 1),
    ("BERT", "a100-80gb", "baseline", 15, 24, 1, 50, 1),
    ("X32", "h100-sxm", "partitioned", 21, 1, 1, 1, 39),
    ("GPT-3", "a100-80gb", "improved", 260, 6, 16, 6, 1),
    ("X128", "b200", "baseline", 13, 128, 8, 160, 1),
]


def _random_case(rng: random.Random) -> tuple[dict, Transformer, object]:
    """A JS input and the Python model and hardware it stands for."""
    if rng.random() < 0.3:
        name, hw, method, n_b, n_l, n_a, n_mu, b_mu = rng.choice(ANCHORS)
        q = {"model": name, "hardware": hw, "method": method, "n_b": rng.randint(1, n_b), "n_l": n_l, "n_a": n_a,
             "n_mu": n_mu + rng.randint(0, 3), "b_mu": b_mu, "offload": rng.random() < 0.3}
        return q, named_model(name), hw
    kind = rng.random()
    if kind < 0.55:
        x = rng.choice([8, 16, 32, 64, 96, 128, 160, 200, 250])
        js_model, model = f"X{x}", named_model(f"X{x}")
    elif kind < 0.8:
        name = rng.choice(["BERT", "Megatron-LM", "T-NLG", "GPT-3", "LLaMA-7B", "Mistral-7B", "llama-3-8b", "OPT-175B"])
        js_model, model = name, named_model(name)
    else:
        d_a, d_h = rng.choice([4, 8, 12, 16]), rng.choice([32, 64, 80])
        dims = dict(d_l=rng.choice([6, 12, 24, 30]), d_a=d_a, d_h=d_h, d_m=d_a * d_h, d_s=rng.choice([128, 512, 2048]))
        if rng.random() < 0.5:
            dims["n_I"] = rng.choice([2, 4])
        else:  # a gated feed-forward of any width, grouped key/value heads
            dims.update(d_I=rng.randint(1, 4 * d_a * d_h), gated=rng.random() < 0.7, d_kv=rng.choice([1, 2, d_a]))
        js_model, model = dims, Transformer("custom", **dims)
    if rng.random() < 0.8:
        name = rng.choice(available_hardware())
        js_hw, hw = name, name
    else:
        path = rng.choice(FIXTURE_SPECS)
        js_hw, hw = yaml.safe_load(path.read_text()), str(path)
    divisors = [d for d in range(1, model.d_l + 1) if model.d_l % d == 0]
    n_l = rng.choice(divisors) if rng.random() < 0.8 else rng.randint(1, model.d_l)
    n_a = rng.choice([d for d in range(1, model.d_a + 1) if model.d_a % d == 0]) if rng.random() < 0.8 else rng.randint(1, model.d_a)
    n_a = 1 if rng.random() < 0.4 else n_a
    n_mu = max(1, n_l + rng.randint(-1, 8)) if rng.random() < 0.9 else rng.randint(1, 4)
    q = {
        "model": js_model,
        "hardware": js_hw,
        "method": rng.choice(["baseline", "partitioned", "improved"]),
        "n_b": rng.choice([1, 2, rng.randint(1, 64), rng.randint(1, 4096)]),
        "n_l": n_l,
        "n_a": n_a,
        "n_mu": n_mu,
        "b_mu": rng.choice([1, 2, 4, 8, rng.randint(1, 16)]),
        "offload": rng.random() < 0.5,
    }
    if rng.random() < 0.6:  # below the critical batch, where configurations can be feasible
        q["n_b"] = rng.randint(1, max(1, int(model.critical_batch) // (q["n_mu"] * q["b_mu"])))
    if rng.random() < 0.4:
        q["partitioned"] = rng.random() < 0.5
    if rng.random() < 0.2:
        q["form"] = "exact"
    if rng.random() < 0.3:
        q["assumptions"] = {
            "convention": rng.choice(["paper", "physical"]),
            "pipeline_overlap": rng.choice(["extra-micro-batches", "always", "never"]),
            "tensor_placement": rng.choice(["node", "inter-node"]),
            "pipeline_placement": rng.choice(["inter-node", "intra-node"]),
            "overlap_efficiency": rng.choice([1.0, 0.8]),
            "critical_batch_scale": rng.choice([1.0, 0.5, 2.0]),
            "gb": rng.choice(["GiB", "GB"]),
            "divisible_layers": rng.random() < 0.7,
            "dp_network": rng.choice(["per-gpu", "ring"]),
            "memory_limit": rng.choice(["constraint", "constraint", "output"]),
        }
    if rng.random() < 0.35:  # a named pipeline schedule (lgacc evaluate --schedule, --n-v)
        q["schedule"] = rng.choice(SCHEDULES)
        if q["schedule"].lower() in ("interleaved", "breadth-first"):
            q["n_v"] = rng.choice([1, 2, 2, 3, 4])
            if rng.random() < 0.5:  # interleaved runs the micro-batches in rounds of n_l
                q["n_mu"] = q["n_l"] * rng.randint(1, 6)
    return q, model, hw


def python_summary(q: dict, model, hw) -> dict:
    """The library's summary (the keys the page shares with it) and, as ``warnings``, the spec loader's warnings."""
    config = TrainingConfig(q["method"], n_b=q["n_b"], n_l=q["n_l"], n_a=q["n_a"], n_mu=q["n_mu"], b_mu=q["b_mu"],
                            offload=q["offload"], partitioned=q.get("partitioned"))
    assumptions = Assumptions(**q.get("assumptions", {}))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        summary = evaluate(model, hw, config, form=q.get("form", "paper"), assumptions=assumptions, schedule=q.get("schedule"),
                           n_v=q.get("n_v", 1)).summary()
    return {key: summary[key] for key in KEYS} | {"warnings": spec_warnings(caught)}


def spec_warnings(caught) -> list[str]:
    """The loader's warnings without the file they name (the page names its spec instead): ``field '...': ...``."""
    return [without_origin(str(w.message)) for w in caught if issubclass(w.category, HardwareSpecWarning)]


def without_origin(message: str) -> str:
    return message[message.index("field '"):]


def page_summary(js: dict) -> dict:
    """The page's result in the same terms as :func:`python_summary`."""
    return {key: js[key] for key in KEYS} | {"warnings": [without_origin(w) for w in js["warnings"]]}


def assert_same(python, js, where: str) -> None:
    if isinstance(python, dict):
        assert set(python) == set(js), where
        for key in python:
            assert_same(python[key], js[key], f"{where}.{key}")
    elif isinstance(python, (bool, str, list)) or python is None:
        assert python == js, f"{where}: python {python!r}, javascript {js!r}"
    else:
        python = float(python) if math.isfinite(python) else None
        if python is None:
            assert js is None, f"{where}: python non-finite, javascript {js!r}"
        else:
            assert math.isclose(python, js, rel_tol=REL, abs_tol=1e-12), f"{where}: python {python!r}, javascript {js!r}"


def test_300_random_configurations_agree_with_the_python_evaluator(module_path):
    rng = random.Random(17)
    cases = [_random_case(rng) for _ in range(300)]
    results = run_node(module_path, EVALUATE_ALL, [q for q, _, _ in cases])
    compared = errors = 0
    for (q, model, hw), js in zip(cases, results):
        try:
            expected = python_summary(q, model, hw)
        except UserInputError as error:
            assert "error" in js, f"{q}: python refuses ({error}), javascript returns {js}"
            assert js["name"] == "InputError" and js["error"].endswith(str(error).split(": ", 1)[-1]), (q, js, str(error))
            errors += 1
            continue
        assert "ok" in js, f"{q}: javascript refuses: {js}"
        assert_same(expected, page_summary(js["ok"]), json.dumps(q))
        compared += 1
    assert compared >= 250, f"only {compared} configurations compared ({errors} refused by both)"
    feasible = sum(1 for js in results if js.get("ok", {}).get("feasible"))
    assert 30 <= feasible <= compared - 30, f"{feasible} of {compared} feasible: the sample does not exercise both outcomes"


def test_the_data_parallel_ring_agrees_with_the_python_evaluator(module_path):
    """dp_network="ring" on random configurations, every other assumption as drawn: the JavaScript ring (printed
    from lgacc.model.formulas.ring, composed in runtime.js) is the Python one, and it moves the data overhead or
    the PCIe link somewhere, so the comparison exercises it."""
    rng = random.Random(29)
    cases = []
    for _ in range(80):
        q, model, hw = _random_case(rng)
        q["assumptions"] = {**q.get("assumptions", {}), "dp_network": "ring"}
        cases.append((q, model, hw))
    results = run_node(module_path, EVALUATE_ALL, [q for q, _, _ in cases])
    compared = moved = 0
    for (q, model, hw), js in zip(cases, results):
        try:
            expected = python_summary(q, model, hw)
        except UserInputError:
            assert "error" in js, q
            continue
        assert "ok" in js, f"{q}: javascript refuses: {js}"
        assert_same(expected, page_summary(js["ok"]), json.dumps(q))
        paper = python_summary({**q, "assumptions": {**q["assumptions"], "dp_network": "per-gpu"}}, model, hw)
        moved += any(paper["overheads"][k] != expected["overheads"][k] for k in ("data", "pcie"))
        compared += 1
    assert compared >= 65, compared
    assert moved >= 15, f"the ring moved the data or PCIe overhead in only {moved} of {compared} configurations"


BAD_INPUTS = [
    ({"model": "X161", "method": "improved", "n_b": 1}, "x=161 must be even"),
    ({"model": "GPT-4", "method": "improved", "n_b": 1}, "unknown model"),
    ({"model": "X160", "method": "fast", "n_b": 1}, "unknown method"),
    ({"model": "X160", "method": "improved", "n_b": 0}, "n_b=0 must be a positive integer"),
    ({"model": "X160", "method": "improved", "n_b": 2.5}, "n_b=2.5 must be a positive integer"),
    ({"model": "X160", "method": "improved", "n_b": 1, "n_l": 161}, "exceeds the X160 layer count"),
    ({"model": "X160", "method": "improved", "n_b": 1, "hardware": "tpu"}, "no such hardware"),
    ({"model": {"d_l": 2, "d_a": 2, "d_h": 4, "d_m": 9, "d_s": 8}, "method": "improved", "n_b": 1}, "must equal d_a * d_h"),
    ({"model": "X16", "method": "improved", "n_b": 1, "hardware": {"name": "mine", "gpus_per_node": 8}}, "missing"),
    ({"model": "X16", "method": "improved", "n_b": 1, "schedule": "dualpipe"}, "unknown schedule"),
    ({"model": "X16", "method": "improved", "n_b": 1,
      "hardware": yaml.safe_load((ROOT / "data" / "hardware" / "a100-80gb.yaml").read_text()) | {"kernel_efficiency": 1.5}},
     "field 'kernel_efficiency'"),  # as lgacc.model.hardware refuses it: the share of the peak is in (0, 1]
    ({"model": "X16", "method": "improved", "n_b": 1, "n_v": 2}, "n_v=2: no schedule is given"),
    ({"model": "X16", "method": "improved", "n_b": 1, "schedule": "1f1b", "n_v": 2}, "schedule 1f1b has one chunk"),
    ({"model": "X16", "method": "improved", "n_b": 1, "n_l": 4, "schedule": "interleaved", "n_v": 8}, "exceeds the X16 layer"),
]


def test_bad_input_gets_one_clear_message(module_path):
    results = run_node(module_path, EVALUATE_ALL, [q for q, _ in BAD_INPUTS])
    for (q, words), js in zip(BAD_INPUTS, results):
        assert js.get("name") == "InputError", f"{q}: {js}"
        assert words in js["error"] and "\n" not in js["error"], f"{q}: {js['error']!r}"



#: The page stops a search after a second; on a busy test machine the comparisons give it the time it needs.
SEARCH_SCRIPT = """
const out = input.map((q) => {
  try { const t = Date.now(); const r = lgacc.fastest(Object.assign({ time_limit_s: 600 }, q)); r.ms = Date.now() - t; return r; }
  catch (e) { return { error: e.message, name: e.name }; }
});
process.stdout.write(JSON.stringify(out));
"""


def _spec(h):
    return yaml.safe_load(h.read_text()) if isinstance(h, Path) else h


def assert_same_search(request: dict, js: dict) -> bool:
    """The page's search answers ``request`` as :func:`lgacc.search.fastest` does; returns whether it offloads."""
    options = {k: request[k] for k in ("max_gpus", "allow_offload", "partitioned", "max_overhead", "schedule", "n_v")
               if k in request}
    hardware = request["hardware"]
    expected = fastest(request["model"], hardware if isinstance(hardware, str) else request["_path"], request["method"],
                       request["parallelism"], explain=False, assumptions=Assumptions(**request.get("assumptions", {})),
                       **options)
    where = json.dumps({k: v for k, v in request.items() if k != "hardware"})
    assert "error" not in js, (where, js)
    assert js["feasible"] == expected.feasible, (where, js, expected.binding)
    if not expected.feasible:
        assert js["reasons"] == list(expected.binding), where
        return False
    c = expected.config
    assert [js[k] for k in ("n_b", "n_l", "n_a", "n_mu", "b_mu", "offload")] == \
        [c.n_b, c.n_l, c.n_a, c.n_mu, c.b_mu, c.offload], where
    summary = expected.evaluation.summary()
    assert_same({key: summary[key] for key in KEYS}, {key: js[key] for key in KEYS}, where)
    return c.offload


SMALL_MEMORY = ROOT / "tests" / "fixtures" / "hardware" / "small-memory-gpu.yaml"
SEARCHES = [
    ("X32", "a100-80gb", "improved", "3d"),
    ("X32", "a100-80gb", "baseline", "3d"),
    ("BERT", "a100-80gb", "baseline", "Data + pipe"),
    ("X32", "b200", "partitioned", "Data + tensor"),
    ("GPT-3", "a100-80gb", "improved", "3d"),
    ("X64", SMALL_MEMORY, "improved", "Data"),  # 4 GiB: the search offloads
    ("X32", SMALL_MEMORY, "baseline", "Data"),
    # schedules that pipeline: interleaved in rounds of n_l, layered breadth-first, 1F1B at the highest n_l
    ("X160", "a100-80gb", "baseline", "3d", {"schedule": "interleaved", "n_v": 2}),
    ("X64", "a100-80gb", "baseline", "3d", {"schedule": "interleaved", "n_v": 2}),
    ("X160", "a100-80gb", "improved", "3d", {"schedule": "breadth-first", "n_v": 2}),
    ("GPT-3", "a100-80gb", "baseline", "Data + pipe", {"schedule": "1f1b"}),
]


def _search_request(model, hardware, method, parallelism, **options) -> dict:
    q = {"model": model, "hardware": _spec(hardware), "method": method, "parallelism": parallelism, **options}
    if isinstance(hardware, Path):
        q["_path"] = str(hardware)
    return q


def test_the_page_search_picks_what_lgacc_optimize_picks(module_path):
    requests = [_search_request(*case[:4], **(case[4] if len(case) > 4 else {})) for case in SEARCHES]
    results = run_node(module_path, SEARCH_SCRIPT, [{k: v for k, v in q.items() if k != "_path"} for q in requests])
    offloaded = [assert_same_search(q, js) for q, js in zip(requests, results)]
    assert any(offloaded), "no search exercised the offload rule"


def _random_search(rng: random.Random) -> dict:
    model = rng.choice(["X8", "X16", "X24", "X32", "X48", "X96", "X160", "BERT", "Megatron-LM", "GPT-3", "llama-3-8b",
                        "Mistral-7B", "OPT-175B"])
    hardware = rng.choice([*available_hardware(), *FIXTURE_SPECS, SMALL_MEMORY])
    options = {}
    if rng.random() < 0.4:
        options["max_gpus"] = rng.choice([1, 7, 64, 100, 1000, rng.randint(1, 5000)])
    if rng.random() < 0.3:
        options["allow_offload"] = False
    if rng.random() < 0.3:
        options["partitioned"] = rng.random() < 0.5
    if rng.random() < 0.2:
        options["max_overhead"] = rng.choice([0.01, 0.05, 0.1, 0.5])
    if rng.random() < 0.3:
        options["assumptions"] = {
            "convention": rng.choice(["paper", "physical"]),
            "pipeline_overlap": rng.choice(["extra-micro-batches", "always", "never"]),
            "tensor_placement": rng.choice(["node", "inter-node"]),
            "critical_batch_scale": rng.choice([1.0, 0.5]),
            "divisible_heads": rng.random() < 0.8,
            "heads_cap": rng.random() < 0.8,
            "memory_limit": rng.choice(["constraint", "constraint", "output"]),
        }
    if rng.random() < 0.35:  # lgacc optimize --schedule, --n-v
        options["schedule"] = rng.choice(SCHEDULES)
        if options["schedule"].lower() in ("interleaved", "breadth-first"):
            options["n_v"] = rng.choice([1, 2, 4])
    parallelism = rng.choice(["3d", "Data + pipe", "Data + tensor", "Pipe + tensor", "Data", "None"])
    return _search_request(model, hardware, rng.choice(["baseline", "partitioned", "improved"]), parallelism, **options)


def test_the_page_search_agrees_with_lgacc_optimize_on_random_requests(module_path):
    """GPU budgets, no offload, either partition, other overhead caps and assumptions; the infeasible ones
    must name the same binding rule, word for word."""
    rng = random.Random(1717)
    requests = [_random_search(rng) for _ in range(60)]
    results = run_node(module_path, SEARCH_SCRIPT, [{k: v for k, v in q.items() if k != "_path"} for q in requests])
    feasible = sum(bool(js.get("feasible")) for js in results)
    for q, js in zip(requests, results):
        assert_same_search(q, js)
    assert 10 <= feasible <= len(requests) - 5, f"{feasible} of {len(requests)} searches feasible: too one-sided"


def test_numbers_in_reasons_are_formatted_as_python_formats_them(module_path):
    """Exact ties (80.25 to three digits, 781.25 to one decimal) round to even in Python, not in toPrecision."""
    values = [80.25, 80.35, 0.125, 781.25, 781.35, 2.5, 3.5, 99.95, 9.995, 1234567.0, 1.234e-05, 0.25, 123456789.0, 4.2e18,
              1562.5, 10.05, 7.0, 0.0]
    script = """
process.stdout.write(JSON.stringify(input.map((x) => [lgacc.fmtG(x, 3), lgacc.fmtG(x), lgacc.fmtF(x, 1), lgacc.fmtF(x, 2)])));
"""
    got = run_node(module_path, script, values)
    assert got == [[format(x, ".3g"), format(x, "g"), format(x, ".1f"), format(x, ".2f")] for x in values]


def test_a_symbol_outside_the_arguments_stops_the_build():
    """The activation memory's printed form keeps ``m_0`` (bytes per token, not printed by the paper): printing
    it as a function of the evaluator's arguments would give NaN, so the generator names the symbol instead."""
    from lgacc.model import symbols
    from lgacc.model.formulas import derivation

    args = tuple(getattr(symbols, name) for name in jsgen.ARGUMENTS)
    with pytest.raises(ValueError, match="m_0"):
        jsgen.javascript_function(args, jsgen.ARGUMENTS, derivation("activation_memory").paper)
    text = jsgen.javascript_function(args, jsgen.ARGUMENTS, derivation("activation_memory").exact)
    assert text.startswith("function (d_s, d_m, d_l, d_a, n_I, p, p_l, b, n_b, n_l, n_a, n_mu) { return ")


def test_the_page_preselects_the_spec_the_book_was_built_for(tmp_path):
    """``make book HARDWARE=...`` preselects that spec on the page (a spec file joins the shipped ones), while
    ``window.lgacc.evaluate`` without a spec keeps ``lgacc evaluate``'s default."""
    path = jsgen.write(tmp_path / "file.js", str(SMALL_MEMORY))
    q = {"model": "X32", "method": "improved", "n_b": 3, "n_l": 2, "n_mu": 4, "offload": True}
    script = """
const page = lgacc.DATA.page_hardware;
process.stdout.write(JSON.stringify([page, lgacc.evaluate(Object.assign({ hardware: page }, input)), lgacc.evaluate(input)]));
"""
    page, on_file, default = run_node(path, script, q)
    assert page == "small-memory-gpu"
    config = TrainingConfig("improved", n_b=3, n_l=2, n_mu=4, offload=True)
    for hardware, js in ((str(SMALL_MEMORY), on_file), ("a100-80gb", default)):
        summary = evaluate(named_model("X32"), hardware, config).summary()
        assert_same({key: summary[key] for key in KEYS}, {key: js[key] for key in KEYS}, hardware)
        assert js["warnings"] == []
    shipped = jsgen.write(tmp_path / "shipped.js", "h100-sxm")
    assert run_node(shipped, "process.stdout.write(JSON.stringify(lgacc.DATA.page_hardware));", None) == "h100-sxm"
    assert jsgen.main([str(tmp_path / "bad.js"), "--hardware", "tpu-v9"]) == 2 and not (tmp_path / "bad.js").exists()


def test_the_hand_written_javascript_is_package_data():
    """``lgacc.book.jsgen`` reads its two runtimes with :mod:`importlib.resources`: both are files of the package and
    ``pyproject.toml`` declares them as package data, so a non-editable install carries them too."""
    import fnmatch
    import tomllib
    from importlib import resources

    from lgacc.book.jsgen import bundle

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-data"]
    package = resources.files("lgacc.book.jsgen")
    assets = sorted(p.name for p in package.iterdir() if p.is_file() and not p.name.endswith((".py", ".pyc")))
    assert assets == sorted(bundle.RUNTIMES)
    for name in assets:
        assert any(fnmatch.fnmatch(name, glob) for glob in declared["lgacc.book.jsgen"]), name


# --- the page's checks of a spec are the spec loader's (one table, lgacc.model.hardware.RANGES) -------------------------

A100 = yaml.safe_load((ROOT / "data" / "hardware" / "a100-80gb.yaml").read_text())


def _spec_variant(rng: random.Random) -> dict:
    """The shipped A100 spec with up to three fields changed: values across every magnitude and at the range
    bounds, the wrong type, another unit, a key given twice, missing or unknown."""
    from lgacc.model.hardware import QUANTITIES, RANGES

    spec = dict(A100)
    # each key of the spec: its field in RANGES and the factor of its unit to SI
    fields = {f"{stem}_{unit}": (field, factor) for field, (stem, units) in QUANTITIES.items() for unit, factor in units.items()}
    fields |= {"gpus_per_node": ("gpus_per_node", 1), "kernel_efficiency": ("kernel_efficiency", 1)}
    for _ in range(rng.choice([0, 1, 1, 1, 2, 3])):
        key = rng.choice([*(k for k in spec if k in fields), "gpus_per_node", "kernel_efficiency"])
        field, factor = fields[key]
        kind = rng.random()
        r = RANGES[field]
        if kind < 0.3:  # any magnitude, subnormal to overflowing
            spec[key] = rng.choice([1, 1, 1, -1]) * 10 ** rng.uniform(-330, 308)
        elif kind < 0.5 and r.usual_high < r.high:  # accepted but unusual: a warning
            low, high = rng.choice([(max(r.low, 1e-300), r.usual_low), (r.usual_high, r.high)])
            spec[key] = 10 ** rng.uniform(math.log10(low), math.log10(high)) / factor
        elif kind < 0.7:  # at and beside a bound of the table
            spec[key] = rng.choice(RANGES[field][:4]) / factor * rng.choice([0.5, 1, 1, 2])
        elif kind < 0.85:  # the wrong type or sign
            spec[key] = rng.choice(["312 TF", "fast", True, None, 0, -4, -2.5, 2.5])
        elif kind < 0.9 and key.endswith(("_per_s", "_gib", "_gb", "_bytes")):  # the same quantity in another unit, or twice
            stem = QUANTITIES[field][0]
            other = f"{stem}_{rng.choice(list(QUANTITIES[field][1]))}"
            spec[other] = spec.pop(key) if rng.random() < 0.5 else spec[key]
        elif kind < 0.95:
            spec.pop(key, None)
        else:
            spec[rng.choice(["peak_tflops", "memory_tib", "constructor"])] = 1
        if key == "gpus_per_node" and isinstance(spec.get(key), float) and 1 <= spec[key] < 2**53:
            spec[key] = round(spec[key])
    # JSON does not tell 4.0 from 4, which Python's messages print apart: whole numbers are written as integers
    return {key: int(v) if isinstance(v, float) and v.is_integer() and abs(v) < 1e16 else v for key, v in spec.items()}


CHECK_SPECS = """
process.stdout.write(JSON.stringify(input.map((spec) => {
  try { return { warnings: lgacc.evaluate({ model: "X16", method: "improved", n_b: 1, hardware: spec }).warnings }; }
  catch (e) { return { error: e.message, name: e.name }; }
})));
"""


def test_the_page_checks_a_spec_as_the_loader_does(module_path, tmp_path):
    """400 variants of a spec: where :func:`lgacc.model.hardware.load_hardware` refuses the file, the page refuses the same
    fields with the same words; where it warns, the page's result lists the same warnings. (Counts above 2**53 are the
    one difference: a double does not hold them exactly, so the page refuses them.)"""
    from lgacc.model.hardware import HardwareSpecError, load_hardware

    rng = random.Random(28)
    specs = [_spec_variant(rng) for _ in range(400)]
    results = run_node(module_path, CHECK_SPECS, specs)
    outcomes = {"refused": 0, "warned": 0, "clean": 0}
    for i, (spec, js) in enumerate(zip(specs, results)):
        path = tmp_path / f"spec-{i}.yaml"
        path.write_text(yaml.safe_dump(spec, sort_keys=False))  # in the page's order: the first unknown key is named
        where = json.dumps(spec, default=str)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                load_hardware(path)
            except HardwareSpecError as error:
                assert js.get("name") == "InputError", (where, str(error), js)
                assert without_origin(js["error"]) == without_origin(str(error)), where
                outcomes["refused"] += 1
                continue
        if isinstance(spec.get("gpus_per_node"), (int, float)) and 2**53 - 1 < spec["gpus_per_node"] <= 2**62:
            assert "2**53 - 1" in js["error"], (where, js)
            continue
        assert "warnings" in js, (where, js)
        assert [without_origin(w) for w in js["warnings"]] == spec_warnings(caught), where
        outcomes["warned" if js["warnings"] else "clean"] += 1
    assert min(outcomes.values()) >= 50, outcomes


def test_the_312_flops_peak_is_refused_with_the_loaders_hint(module_path):
    """Issue #27: a peak typed in Tflop/s (312) is refused and the message says what was meant; 5e11 is accepted with a
    warning in the result's list; 1e-320 flop/s and 1e308 GiB are refused, never "— days" or "inf GiB"."""
    spec = {key: value for key, value in A100.items() if key not in ("source", "description")}
    cases = [spec | {"peak_flop_per_s": 312}, spec | {"peak_flop_per_s": 5e11}, spec | {"peak_flop_per_s": 1e-320},
             spec | {"memory_gib": 1e308}, spec | {"memory_gib": 20000}, spec | {"gpus_per_node": 100000}]
    got = run_node(module_path, CHECK_SPECS, cases)
    assert got[0]["name"] == "InputError" and "(in Tflop/s? write 312.0e+12)" in got[0]["error"]
    assert got[1]["warnings"] == ['hardware "a100-80gb": field \'peak_flop_per_s\': 5e+11 is below the usual 1e+12 flop/s; '
                                  'accepted, but check the unit']
    assert "below the smallest accepted value 1e+09 flop/s" in got[2]["error"]
    assert "= inf bytes is above the largest accepted value" in got[3]["error"]
    assert "above the usual 1.1e+13 bytes" in got[4]["warnings"][0] and "above the usual 1000 GPUs" in got[5]["warnings"][0]


# --- robustness: names, types and sizes no input should break ----------------------------------------------------------

PROTOTYPE_NAMES = ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf"]

ROBUST_SCRIPT = """
const outcome = (f) => { try { const r = f(); return { ok: r }; } catch (e) { return { error: e.message, name: e.name }; } };
const base = { model: "X160", hardware: "a100-80gb", method: "improved", n_b: 483, n_l: 5, n_a: 16, n_mu: 5, b_mu: 1 };
const out = {};
for (const name of input.names) {
  out[`hardware ${name}`] = outcome(() => lgacc.evaluate({ ...base, hardware: name }));
  out[`method ${name}`] = outcome(() => lgacc.evaluate({ ...base, method: name }));
  out[`schedule ${name}`] = outcome(() => lgacc.evaluate({ ...base, schedule: name }));
  out[`model ${name}`] = outcome(() => lgacc.evaluate({ ...base, model: name }));
  out[`assumption ${name}`] = outcome(() => lgacc.evaluate({ ...base, assumptions: JSON.parse(`{"${name}": 1}`) }));
  out[`parallelism ${name}`] = outcome(() => lgacc.fastest({ model: "X16", method: "improved", parallelism: name }));
}
out.typed = outcome(() => lgacc.evaluate({ ...base, n_b: "9007199254740993" }));
out.x = outcome(() => lgacc.evaluate({ ...base, model: "X9007199254740994" }));
const t0 = Date.now();
out.huge = outcome(() => lgacc.fastest({ model: "X2000000", hardware: "a100-80gb", method: "improved", parallelism: "3d" }));
out.huge_ms = Date.now() - t0;
out.fuzz = require(input.fuzz)(lgacc, 2021, 3000);
process.stdout.write(JSON.stringify(out));
"""


def test_no_name_or_size_breaks_the_page(module_path):
    """Issue #28 item 5: names of Object.prototype are no hardware, method, schedule, model, assumption or parallelism
    of the page (one InputError each, never NaN or a TypeError); an integer beyond 2**53 is quoted as typed; the search
    of X2000000 stops with a message after about a second or two million candidates, whichever comes first (a slow machine lists them first); and 3000 fuzzed calls (tests/calculator_fuzz.js) give a
    result without NaN or one clear InputError."""
    out = run_node(module_path, ROBUST_SCRIPT, {"names": PROTOTYPE_NAMES, "fuzz": str(ROOT / "tests" / "calculator_fuzz.js")})
    for name in PROTOTYPE_NAMES:
        for what in ("hardware", "method", "schedule", "model", "assumption", "parallelism"):
            got = out[f"{what} {name}"]
            assert got.get("name") == "InputError" and name in got["error"], (what, name, got)
    assert "n_b=9007199254740993 exceeds the largest supported count" in out["typed"]["error"]
    assert "x=9007199254740994 exceeds" in out["x"]["error"]
    assert out["huge"]["name"] == "InputError" and out["huge"]["error"].startswith(("search stopped after 1 s", "search stopped at 2000000 candidates")), out["huge"]
    assert "X2000000" in out["huge"]["error"] and out["huge_ms"] < 3000, out["huge_ms"]
    fuzz = out["fuzz"]
    assert fuzz["problemCount"] == 0, fuzz["problems"]
    assert fuzz["results"] >= 300 and fuzz["refused"] >= 300, fuzz


#: The shipped mixtures of experts: the page computes the ideal model's sparse extension for them (issue #36).
MOE_MODELS = [name for name in jsgen.data({"paper": {}, "exact": {}})["models"]
              if named_model(name).experts > 0] if NODE else []
THREE_FUNCTIONS = """
const out = input.map((q) => ["evaluate", "expected", "fastest"].map((f) => {
  try { return { ok: lgacc[f](f === "fastest" ? { ...q, n_b: undefined, time_limit_s: 600 } : q) }; }
  catch (e) { return { error: e.message, name: e.name, field: e.field === undefined ? null : e.field, unsupported: Boolean(e.unsupported) }; }
}));
process.stdout.write(JSON.stringify(out));
"""
#: The ideal keys of the sparse extension, beside :data:`KEYS`.
SPARSE_KEYS = ("n_e", "n_c", "precision", "sparse_overheads", "all_to_all_share", "recompute")
#: The issue's configurations: its done-when (deepseek-v3 on FP8), mixtral-8x7b with n_e = 8, X160 with n_c = 2.
ISSUE_CASES = [
    {"model": "deepseek-v3", "hardware": "h100-sxm", "method": "baseline", "n_b": 128, "n_l": 16, "n_a": 1, "n_e": 64,
     "n_mu": 120, "b_mu": 1, "precision": "fp8"},
    {"model": "mixtral-8x7b", "hardware": "h100-sxm", "method": "baseline", "n_b": 8, "n_l": 1, "n_a": 1, "n_e": 8,
     "n_mu": 4, "b_mu": 1},
    {"model": "X160", "hardware": "h100-sxm", "method": "improved", "n_b": 8, "n_l": 4, "n_a": 8, "n_c": 2, "n_mu": 8,
     "b_mu": 1},
]


def _cli_json(*args: str):
    out = subprocess.run([sys.executable, "-m", "lgacc", "evaluate", "--format", "json", *args], capture_output=True, text=True)
    return out.returncode, (json.loads(out.stdout) if out.returncode == 0 else out.stderr.strip())


def _flags(q: dict) -> list[str]:
    return [text for key, value in q.items() for text in (f"--{key.replace('_', '-')}", str(value))]


def sparse_summary(q: dict) -> dict:
    """The library's ideal keys for ``q`` with its expert and context degrees and precision."""
    config = TrainingConfig(q["method"], n_b=q["n_b"], n_l=q["n_l"], n_a=q["n_a"], n_mu=q["n_mu"], b_mu=q["b_mu"],
                            offload=q.get("offload", False), partitioned=q.get("partitioned"), n_e=q.get("n_e", 1),
                            n_c=q.get("n_c", 1), precision=q.get("precision", "bf16"))
    model = q["model"] if isinstance(q["model"], str) else model_from_mapping(q["model"])
    summary = evaluate(model, q["hardware"], config, form=q.get("form", "paper")).summary()
    return {key: summary[key] for key in KEYS + SPARSE_KEYS}


def test_the_issues_sparse_configurations_agree_with_lgacc_evaluate(module_path):
    """Issue #36's three configurations: the page's ideal keys are those ``lgacc evaluate --format json`` prints, to 1e-9,
    with a non-zero all-to-all on deepseek-v3 (FP8, n_e = 64) and mixtral-8x7b (n_e = 8)."""
    results = run_node(module_path, EVALUATE_ALL, ISSUE_CASES)
    for q, js in zip(ISSUE_CASES, results):
        rc, cli = _cli_json(*_flags(q))
        assert rc == 0, (q, cli)
        assert "ok" in js, f"{q}: javascript refuses: {js}"
        assert_same({k: cli[k] for k in KEYS + SPARSE_KEYS}, {k: js["ok"][k] for k in KEYS + SPARSE_KEYS}, json.dumps(q))
    deepseek, mixtral, x160 = (js["ok"] for js in results)
    assert deepseek["precision"] == "fp8" and deepseek["n_e"] == 64 and deepseek["all_to_all_share"] > 0.5
    assert 0 < mixtral["sparse_overheads"]["expert"] < 1 and x160["n_c"] == 2 and x160["n_gpu"] == 8 * 4 * 8 * 2


def _sparse_case(rng: random.Random) -> dict:
    model = rng.choice([*MOE_MODELS, "X32", "X64", "X160", "Llama-3-8B", "Mistral-7B", "BLOOM-176B"])
    q = {"model": model, "hardware": rng.choice(["h100-sxm", "b200", "a100-80gb"]),
         "method": rng.choice(["baseline", "partitioned", "improved"]), "n_b": rng.choice([1, 2, 4, 8, 16, 64]),
         "n_l": rng.choice([1, 2, 4]), "n_a": rng.choice([1, 2, 4, 8]), "n_mu": rng.choice([1, 4, 8]),
         "b_mu": rng.choice([1, 2]), "n_c": rng.choice([1, 1, 2, 4, 8]), "precision": rng.choice(["bf16", "fp8"]),
         "offload": rng.random() < 0.15}
    if model in MOE_MODELS:
        q["n_e"] = rng.choice([1, 2, 4, 8, 16, 32, 3])
    if rng.random() < 0.2:
        q["form"] = "exact"
    return q


def test_120_random_sparse_configurations_agree_with_the_python_evaluator(module_path):
    """Every shipped mixture of experts, dense models of the extension (no biases, grouped keys) and the X family,
    with random expert and context degrees, FP8 and offload: the page's ideal keys equal the library's to 1e-9 (the
    expert and context overheads, the all-to-all's share, the held and partitioned state, the reasons word for word),
    and both refuse the same inputs (fp8 on a spec without an FP8 peak)."""
    assert {"DeepSeek-V3", "Mixtral-8x7B"} <= set(MOE_MODELS) and len(MOE_MODELS) >= 6
    rng = random.Random(36)
    cases = [_sparse_case(rng) for _ in range(120)]
    cases.append({"model": {"name": "tiny-moe", "d_l": 2, "d_m": 8, "d_a": 2, "d_h": 4, "d_s": 8, "gated": True, "experts": 4,
                            "experts_per_token": 1, "d_e": 8}, "hardware": "h100-sxm", "method": "baseline", "n_b": 4,
                  "n_l": 1, "n_a": 1, "n_mu": 1, "b_mu": 1, "n_e": 2, "n_c": 2})
    cases.append({"model": {"name": "no-biases", "d_l": 2, "d_m": 8, "d_a": 2, "d_h": 4, "d_s": 8, "linear_biases": False},
                  "hardware": "h100-sxm", "method": "improved", "n_b": 2, "n_l": 2, "n_a": 1, "n_mu": 2, "b_mu": 1})
    results = run_node(module_path, EVALUATE_ALL, cases)
    compared = expert = context = 0
    for q, js in zip(cases, results):
        try:
            expected = sparse_summary(q)
        except (UserInputError, HardwareSpecError) as error:
            assert "error" in js, f"{q}: python refuses ({error}), javascript returns {js}"
            continue
        assert "ok" in js, f"{q}: javascript refuses: {js}"
        assert_same(expected, {k: js["ok"][k] for k in KEYS + SPARSE_KEYS}, json.dumps(q))
        compared += 1
        expert += expected["sparse_overheads"]["expert"] > 0
        context += expected["sparse_overheads"]["context"] > 0
    assert compared >= 90 and expert >= 10 and context >= 10, (compared, expert, context)


def test_the_calibrated_model_and_the_search_refuse_the_sparse_cases_in_one_line(module_path):
    """The page's calibrated model and search do not compute experts, context parallelism or FP8: each refuses such an
    input with one line ("not computed here for experts/context/FP8"), never a number, while the ideal evaluation
    computes it; the rules the command line states (n_e > 1 on a dense model, fp8 on a spec without an FP8 peak, an
    unknown precision) are refused by all three with its words."""
    base = {"hardware": "h100-sxm", "method": "baseline", "n_b": 128, "n_l": 16, "n_a": 1, "n_mu": 120, "b_mu": 1}
    unsupported = [{**base, "model": name} for name in MOE_MODELS]
    unsupported.append({**base, "model": "X160", "n_c": 2})
    unsupported.append({**base, "model": "X160", "precision": "fp8"})
    rules = [({**base, "model": "X160", "n_e": 2}, ("--n-e", "2")),
             ({**base, "model": "X160", "precision": "fp8", "hardware": "a100-80gb"}, ("--precision", "fp8")),
             ({**base, "model": "X160", "precision": "fp4"}, None)]
    results = run_node(module_path, THREE_FUNCTIONS, unsupported + [q for q, _ in rules])
    for q, (ideal, *others) in zip(unsupported, results[:len(unsupported)]):
        assert "ok" in ideal, (q, ideal)
        for answer in others:
            assert "ok" not in answer, f"{q}: the page computed {answer}"
            assert answer["name"] == "InputError" and answer["unsupported"] and "\n" not in answer["error"], (q, answer)
            assert "not computed here for experts/context/FP8" in answer["error"], (q, answer)
    for (q, flags), answers in zip(rules, results[len(unsupported):]):
        if flags is None:  # argparse words it as a choice; the library's rule is the page's
            with pytest.raises(UserInputError) as refused:
                parse_precision(q["precision"])
            rule = str(refused.value)
        else:
            rc, message = _cli_json("--model", "X160", "--hardware", q["hardware"], "--method", "baseline", "--n-b", "128", *flags)
            assert rc == 2 and len(message.splitlines()) == 1, (flags, message)
            rule = message.split("error: ", 1)[1] if "field '" not in message else "field " + message.split("field ", 1)[1]
        for answer in answers:
            assert answer["name"] == "InputError" and not answer["unsupported"], (q, answer)
            assert rule in answer["error"], (rule, answer)


def test_a_dense_model_at_the_sparse_defaults_prints_the_command_lines_keys(module_path):
    """n_e = n_c = 1 in bf16 given explicitly is the page's dense evaluation, with the keys ``lgacc evaluate`` prints
    for it: no expert or context overhead, no all-to-all."""
    q = {"model": "X160", "hardware": "a100-80gb", "method": "improved", "n_b": 483, "n_l": 5, "n_a": 16, "n_mu": 5,
         "b_mu": 1}
    implicit, explicit = run_node(module_path, EVALUATE_ALL, [q, {**q, "n_e": 1, "n_c": 1, "precision": "bf16"}])
    rc, cli = _cli_json("--model", "X160", "--hardware", "a100-80gb", "--method", "improved", "--n-b", "483", "--n-l", "5",
                        "--n-a", "16", "--n-mu", "5", "--n-e", "1", "--n-c", "1", "--precision", "bf16")
    assert rc == 0
    keys = ("n_e", "n_c", "precision", "sparse_overheads", "all_to_all_share", "recompute", "efficiency", "step_time_s")
    for js in (implicit["ok"], explicit["ok"]):
        assert_same({k: cli[k] for k in keys}, {k: js[k] for k in keys}, "X160 improved at n_e = n_c = 1, bf16")
