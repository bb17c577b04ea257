"""The resource model as a JavaScript module for the book's calculator page, printed from the derivations.

``python -m lgacc.jsgen OUT.js`` writes one self-contained script (no import, no
network) that defines ``window.lgacc`` (``globalThis.lgacc`` and
``module.exports`` under node):

* ``lgacc.evaluate(input)``: the object ``lgacc evaluate --format json`` prints;
* ``lgacc.details(input)``: the same with the memory limit, the critical batch
  and the intensities, for the page's memory bar;
* ``lgacc.fastest(input)``: the configuration ``lgacc optimize`` selects (its rules, its GPU
  budget ``max_gpus``, its schedules, and its reason word for word when nothing passes).

A symbol outside the arguments (such as the activation memory's ``m_0`` in the
derivation's printed form) stops the build with its name rather than printing a
function that returns NaN.

What is printed, and from where (nothing of the resource model is typed here):

* every expression the evaluator's numeric code is generated from -- the
  intensities, the bubbles, the memory terms, the flops per batch, the physical
  overlap fractions: the table of :mod:`lgacc.evaluation_map` itself -- printed
  with sympy's :class:`~sympy.printing.jscode.JavascriptCodePrinter`, one
  function per expression, with the evaluator's argument order :data:`ARGUMENTS`,
  for both forms (``paper``, ``exact``);
* the pipeline schedules' terms (bubble, checkpoint share, pipeline intensity, data
  windows: :func:`lgacc.formulas.schedules.evaluator_terms`, as
  :func:`lgacc.evaluation_map.schedule_expressions` prepares them), with the chunks per
  device ``v`` as a last argument;
* the two overlap rules, printed from :mod:`lgacc.formulas.overlap` applied to a
  symbol;
* the model's parameter counts, the critical batch and the X family, printed
  from :mod:`lgacc.formulas.model`;
* as data (JSON): the shipped hardware specs (read by :func:`lgacc.hardware.load_hardware`,
  SI units), the named models, the spec units, the methods, the assumptions'
  defaults and choices, the evaluator's constants, the search's parallelisms and
  bottleneck constants and rules (:mod:`lgacc.search.rules`), the schedules' names, aliases
  and defaults, and the evaluator's declarative map from (method, partition, pipeline)
  to derivation keys (:mod:`lgacc.evaluation_map`).

The composition (:data:`RUNTIME`) is hand-written glue: it dispatches on that
data and combines the printed functions as :func:`lgacc.evaluate.evaluate_many`
does; ``tests/test_jsgen.py`` runs it under node against the Python evaluator.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import sympy
from sympy.printing.jscode import JavascriptCodePrinter

from . import evaluate as evaluator
from . import evaluation_map
from . import models as models_module
from . import symbols
from .assumptions import CHOICES, DEFAULT_ASSUMPTIONS, FIELDS, GIB_TO_GB
from .config import Method
from .formulas import model as model_formulas
from .formulas.overlap import not_overlapped_overhead, paper_overlapped_overhead
from .equations import equation_anchor, equation_name, equation_numbers
from .errors import UserInputError
from .hardware import DEFAULT_HARDWARE, GIB, QUANTITIES, allowed_keys, available_hardware, load_hardware
from .search import Parallelism
from .search import rules as search_rules

__all__ = ["ARGUMENTS", "expressions", "javascript_function", "data", "generate", "write"]

#: Arguments of every generated function, in the order the evaluator calls its generated functions.
ARGUMENTS = evaluation_map.ARGUMENTS


def expressions(form: str) -> tuple[dict[str, sympy.Expr], dict[str, list[tuple[str, float]]]]:
    """The expressions the evaluator's numeric code is generated from for ``form`` (its own table,
    :func:`lgacc.evaluation_map.expressions`), by name, and the physical passes of each overlapped kind as
    ``[(function name, relative intensity), ...]``."""
    if form not in evaluation_map.FORMS:
        raise ValueError(f"form={form!r} must be one of {', '.join(evaluation_map.FORMS)}")
    functions, constants = evaluation_map.expressions(form)
    expected = tuple(getattr(symbols, name) for name in ARGUMENTS)
    for name, (args, _) in functions.items():
        if tuple(args) != expected:  # the printed functions are called in the evaluator's argument order
            raise ValueError(f"{name}: arguments {args} differ from the evaluator's {ARGUMENTS}")
    return {name: expr for name, (_, expr) in functions.items()}, {
        kind: [(name, float(relative)) for name, relative in rows] for kind, rows in constants["physical"].items()}


class _Printer(JavascriptCodePrinter):
    """sympy's JavaScript printer with full-precision floats (``repr`` of the double)."""

    def _print_Float(self, expr):
        return repr(float(expr))


def javascript_function(args: tuple[sympy.Symbol, ...], names: tuple[str, ...], expr: sympy.Expr) -> str:
    """``function (names...) { return <expr>; }`` with each symbol of ``args`` renamed to ``names``."""
    safe = {sym: sympy.Symbol(name) for sym, name in zip(args, names)}
    free = sympy.sympify(expr).free_symbols - set(args)
    if free:
        raise ValueError(f"expression {expr} has symbols {free} outside the arguments {names}")
    body = _Printer({"strict": True}).doprint(sympy.sympify(expr).xreplace(safe))
    return f"function ({', '.join(names)}) {{ return {body}; }}"


def _functions_js(form: str) -> tuple[str, dict[str, list[tuple[str, float]]]]:
    exprs, physical = expressions(form)
    args = tuple(getattr(symbols, name) for name in ARGUMENTS)
    lines = [f"    {json.dumps(name)}: {javascript_function(args, ARGUMENTS, expr)}," for name, expr in exprs.items()]
    return "{\n" + "\n".join(lines) + "\n  }", physical


def _schedule_functions_js(form: str) -> str:
    """The schedule terms the evaluator reads (:func:`lgacc.evaluation_map.schedule_expressions`), arguments
    :data:`ARGUMENTS` then ``v`` (the chunks per device, ``n_v``)."""
    names = tuple(evaluation_map.SCHEDULE_ARGUMENTS)
    lines = [f"    {json.dumps(name)}: {javascript_function(tuple(args), names, expr)},"
             for name, (args, expr) in evaluation_map.schedule_expressions(form)[0].items()]
    return "{\n" + "\n".join(lines) + "\n  }"


def _model_functions_js() -> str:
    from .symbols import K_c

    x = model_formulas.x
    family = model_formulas.x_family()
    members = ", ".join(f"{json.dumps(str(sym))}: {sympy.printing.jscode(expr.xreplace({x: sympy.Symbol('x')}))}"
                        for sym, expr in family.items())
    layer_args = (symbols.d_m, symbols.d_h, model_formulas.d_kv, symbols.d_I)
    layer_names = ("d_m", "d_h", "d_kv", "d_I")
    rows = {}
    for gated in (False, True):
        suffix = "_gated" if gated else ""
        rows[f"layer_weights{suffix}"] = javascript_function(layer_args, layer_names, model_formulas.general_layer_weights(gated))
        rows[f"p_l{suffix}"] = javascript_function(layer_args, layer_names, model_formulas.general_layer_parameters(gated))
    rows |= {
        "critical_batch": javascript_function((K_c, symbols.p, symbols.d_s), ("K_c", "p", "d_s"),
                                              model_formulas.critical_batch()),
        "x_family": f"function (x) {{ return {{{members}}}; }}",
    }
    return "{\n" + "\n".join(f"    {name}: {text}," for name, text in rows.items()) + "\n  }"


def _rules_js() -> str:
    ratio = sympy.Symbol("ratio", positive=True)
    return ("{\n"
            f"    overlapped: {javascript_function((ratio,), ('ratio',), paper_overlapped_overhead(ratio))},\n"
            f"    not_overlapped: {javascript_function((ratio,), ('ratio',), not_overlapped_overhead(ratio))},\n"
            "  }")


def _hardware_record(hardware) -> dict[str, Any]:
    keys = ("name", "description", "peak_flop_per_s", "memory_bytes", *(f for f in QUANTITIES if f.endswith("_bytes_per_s")),
            "gpus_per_node")
    record = {key: getattr(hardware, key) for key in keys}
    if getattr(hardware, "kernel_efficiency", None) is not None:  # lgacc.evaluate.kernel_efficiency reads it when a spec has it
        record["kernel_efficiency"] = hardware.kernel_efficiency
    return record


def _model_record(model, stem: str) -> dict[str, Any]:
    keys = ("name", "d_l", "d_m", "d_a", "d_h", "d_s", "d_I", "gated", "d_kv")
    return {key: getattr(model, key) for key in keys} | {"file": stem}


def _search_data() -> dict[str, Any]:
    """The search's parallelisms (which dimensions each allows) and bottleneck rule constants."""
    return {
        "parallelisms": {p.value: [p.data, p.pipe, p.tensor] for p in Parallelism},
        "overlapped": tuple(search_rules.OVERLAPPED),
        "tolerance": float(search_rules.TOLERANCE),
        "rules": dict(search_rules.RULES),
    }


def _book_hardware(book_hardware: str | None) -> tuple[str, dict[str, Any]]:
    """The page's preselected spec (the book's ``HARDWARE``) by its key, and the specs the page offers:
    the shipped ones, and the book's own spec file when it is not one of them."""
    specs = {name: _hardware_record(load_hardware(name)) for name in available_hardware()}
    if book_hardware is None:
        return DEFAULT_HARDWARE, specs
    record = _hardware_record(load_hardware(book_hardware))
    for name, shipped in specs.items():
        if shipped == record:
            return name, specs
    key = record["name"] if record["name"] not in specs else f"{record['name']} ({Path(book_hardware).name})"
    specs[key] = record | {"name": key}
    return key, specs


def data(physical: dict[str, dict[str, list[tuple[str, float]]]], book_hardware: str | None = None) -> dict[str, Any]:
    """Everything the composition reads that is data, not code; ``book_hardware`` (the book's ``HARDWARE``, a
    shipped name or a spec file) is the page's preselected spec."""
    page_hardware, specs = _book_hardware(book_hardware)
    m = evaluation_map
    described = m.evaluation_map()
    return {
        "arguments": ARGUMENTS,
        "overheads": m.OVERHEADS,
        "capped": m.CAPPED_OVERHEADS,
        "forms": m.FORMS,
        "constants": {
            "DEFAULT_STEPS": evaluator.DEFAULT_STEPS,
            "DEFAULT_MAX_OVERHEAD": evaluator.DEFAULT_MAX_OVERHEAD,
            "SECONDS_PER_DAY": evaluator.SECONDS_PER_DAY,
            "GIB": GIB,
            "GIB_TO_GB": GIB_TO_GB,
            "K_c": models_module.critical_batch_constant(),
        },
        "methods": {m.value: {"layered": m.layered, "default_partitioned": m.default_partitioned} for m in Method},
        "maps": {
            "data": [{"layered": k[0], "partitioned": k[1], "pipelined": k[2], "derivation": v[0], "overlapped": v[1],
                      "physical": v[2]} for k, v in m.DATA_TRANSFERS.items()],
            "pipeline": [{"layered": k, "derivation": v[0], "physical": v[1]} for k, v in m.PIPELINE_TRANSFERS.items()],
            "state_offload": [{"layered": k[0], "partitioned": k[1], "derivation": v} for k, v in m.STATE_OFFLOAD.items()],
            "bubble": [{"layered": k, "derivation": v} for k, v in m.BUBBLE.items()],
            "tensor": described["tensor"]["derivation"],
            "checkpoint_offload": described["checkpoint_offload"]["derivation"],
        },
        "physical": physical,
        "hardware": specs,
        # lgacc evaluate's default spec; the page preselects the book's own
        "default_hardware": DEFAULT_HARDWARE,
        "page_hardware": page_hardware,
        "hardware_keys": allowed_keys(),
        "spec_units": {field: {"stem": stem, "units": dict(units)} for field, (stem, units) in QUANTITIES.items()},
        "models": {name: _model_record(models_module.load_model(str(path)), path.stem)
                   for name, path in models_module.shipped_model_files().items()},
        "model_keys": [*models_module.REQUIRED_KEYS, *models_module.OPTIONAL_KEYS],
        # how the book cites an equation label of a reason: "Eq. (N)", linked to its derivation
        "equations": {label: {"name": equation_name(label), "anchor": equation_anchor(label)}
                      for label in equation_numbers()},
        "schedules": {
            "names": evaluation_map.SCHEDULES,
            "aliases": dict(evaluation_map.SCHEDULE_ALIASES),
            "chunked": evaluation_map.CHUNKED_SCHEDULES,
            "default": {json.dumps(layered): name for layered, name in evaluation_map.METHOD_SCHEDULES.items()},
        },
        "search": _search_data(),
        "assumptions": {
            "defaults": {name: getattr(DEFAULT_ASSUMPTIONS, name) for name in FIELDS},
            "choices": dict(CHOICES),
            "meanings": {name: meaning for name, (meaning, _) in FIELDS.items()},
        },
    }


#: The composition: hand-written glue that dispatches on DATA and combines FUNCTIONS and RULES exactly as
#: lgacc.evaluate.evaluate_many does (tests/test_jsgen.py checks it against the Python evaluator).
RUNTIME = r"""
  class InputError extends Error {}
  InputError.prototype.name = "InputError";
  function fail(message) { throw new InputError(message); }

  // Python's format(x, ".<n>g") and format(x, "g") for the reasons' numbers (exact ties round to even, as Python does).
  function fmtG(x, n) {
    if (n === undefined) n = 6;
    if (!isFinite(x)) return x > 0 ? "inf" : x < 0 ? "-inf" : "nan";
    if (x === 0) return "0";
    const sign = x < 0 ? "-" : "";
    const a = Math.abs(x);
    let [mant, e] = a.toExponential(n - 1).split("e");
    const [longMant, longE] = a.toExponential(Math.min(100, n + 24)).split("e");
    const digits = longMant.replace(".", "");
    if (digits[n] === "5" && /^0*$/.test(digits.slice(n + 1)) && Number(digits[n - 1]) % 2 === 0) {
      mant = digits[0] + (n > 1 ? "." + digits.slice(1, n) : "");  // a tie: keep the even digit
      e = longE;
    }
    const exp = Number(e);
    let text;
    if (exp < -4 || exp >= n) {
      if (mant.includes(".")) mant = mant.replace(/0+$/, "").replace(/\.$/, "");
      const digitsE = String(Math.abs(exp));
      text = mant + "e" + (exp < 0 ? "-" : "+") + (digitsE.length < 2 ? "0" + digitsE : digitsE);
    } else {
      const m = mant.replace(".", "");
      text = exp >= 0 ? m.slice(0, exp + 1).padEnd(exp + 1, "0") + "." + m.slice(exp + 1) : "0." + "0".repeat(-exp - 1) + m;
      if (text.includes(".")) text = text.replace(/0+$/, "").replace(/\.$/, "");
    }
    return sign + text;
  }

  // Python's format(x, ".<d>f"): exact ties round to even.
  function fmtF(x, d) {
    const text = x.toFixed(d);
    const long = Math.abs(x).toFixed(Math.min(100, d + 25));
    const point = long.indexOf(".");
    const last = d === 0 ? long[point - 1] : long[point + d];
    if (long[point + d + 1] === "5" && /^0*$/.test(long.slice(point + d + 2)) && Number(last) % 2 === 0) {
      return (x < 0 ? "-" : "") + long.slice(0, d === 0 ? point : point + d + 1);
    }
    return text;
  }

  function positiveInt(owner, field, value) {
    let v = value;
    if (v === undefined || v === null || (typeof v === "string" && v.trim() === "")) fail(`${owner}: ${field} is missing; expected a positive integer`);
    if (typeof v === "string" && /^\s*\d+\s*$/.test(v)) v = Number(v);
    if (typeof v !== "number" || !Number.isInteger(v)) fail(`${owner}: ${field}=${JSON.stringify(value)} must be a positive integer`);
    if (v < 1) fail(`${owner}: ${field}=${v} must be a positive integer (>= 1)`);
    if (v > Number.MAX_SAFE_INTEGER) fail(`${owner}: ${field}=${v} exceeds the largest supported count 2**53 - 1`);
    return v;
  }

  function flag(owner, field, value, allowNull) {
    if (value === undefined || (allowNull && value === null)) return allowNull ? null : false;
    if (value === true || value === false) return value;
    fail(`${owner}: ${field}=${JSON.stringify(value)} must be true or false${allowNull ? " or unset" : ""}`);
  }

  // lgacc.models.Transformer: d_I from n_I (default 4 d_m), d_kv key/value heads (default d_a), gated feed-forward;
  // n_I becomes the equivalent factor of the paper's printed forms, (layer weights / d_m^2 - 4) / 2.
  function makeModel(dims) {
    const owner = `model ${JSON.stringify(dims.name)}`;
    // the keys of a model file (lgacc.models): the vocabulary and the published counts do not enter the evaluation
    const known = new Set([...DATA.model_keys, "file"]);
    for (const key of Object.keys(dims)) if (!known.has(key)) fail(`${owner}: unknown key ${JSON.stringify(key)}; allowed keys are ${DATA.model_keys.join(", ")}`);
    if (dims.d_v !== undefined && dims.d_v !== null && dims.d_v !== 0 && !(Number.isInteger(dims.d_v) && dims.d_v > 0))
      fail(`${owner}: d_v=${JSON.stringify(dims.d_v)} must be a whole number >= 0 (0: vocabulary not counted)`);
    if (dims.tied_embeddings !== undefined) flag(owner, "tied_embeddings", dims.tied_embeddings, false);
    const m = { name: dims.name };
    for (const field of ["d_l", "d_a", "d_h", "d_s"]) m[field] = positiveInt(owner, field, dims[field]);
    m.d_m = dims.d_m === undefined || dims.d_m === "" ? m.d_a * m.d_h : positiveInt(owner, "d_m", dims.d_m);
    if (m.d_m !== m.d_a * m.d_h) fail(`${owner}: d_m=${m.d_m} must equal d_a * d_h = ${m.d_a} * ${m.d_h} = ${m.d_a * m.d_h}`);
    m.gated = flag(owner, "gated", dims.gated, false);
    m.d_kv = dims.d_kv === undefined || dims.d_kv === null ? m.d_a : positiveInt(owner, "d_kv", dims.d_kv);
    if (m.d_a % m.d_kv) fail(`${owner}: d_a=${m.d_a} must be divisible by d_kv=${m.d_kv} (key/value heads)`);
    const hasNI = dims.n_I !== undefined && dims.n_I !== null && dims.n_I !== "";
    const hasDI = dims.d_I !== undefined && dims.d_I !== null && dims.d_I !== "";
    if (hasNI) {
      const nI = positiveInt(owner, "n_I", dims.n_I);
      if (hasDI && Number(dims.d_I) !== nI * m.d_m) fail(`${owner}: d_I=${dims.d_I} and n_I=${nI} disagree (d_I = n_I d_m); give one`);
      m.d_I = nI * m.d_m;
    } else {
      m.d_I = hasDI ? positiveInt(owner, "d_I", dims.d_I) : 4 * m.d_m;
    }
    const suffix = m.gated ? "_gated" : "";
    m.layer_weights = MODEL[`layer_weights${suffix}`](m.d_m, m.d_h, m.d_kv, m.d_I);
    m.p_l = MODEL[`p_l${suffix}`](m.d_m, m.d_h, m.d_kv, m.d_I);
    m.n_I = (m.layer_weights / (m.d_m * m.d_m) - 4) / 2;
    m.p = m.d_l * m.p_l;
    m.p_leading = m.d_l * m.layer_weights;
    m.critical_batch = MODEL.critical_batch(DATA.constants.K_c, m.p_leading, m.d_s);
    return m;
  }

  function parseModel(value) {
    if (value !== null && typeof value === "object") return makeModel(Object.assign({ name: "custom" }, value));
    const text = String(value === undefined ? "" : value).trim();
    const match = /^x_?\[?(\d+)\]?$/i.exec(text);
    if (match) {
      const x = Number(match[1]);
      if (x < 1) fail(`X family: x=${x} must be a positive integer (>= 1)`);
      if (x % 2) fail(`X family: x=${x} must be even, so that d_a = x/2 is a whole number of heads`);
      return makeModel(Object.assign({ name: `X${x}` }, MODEL.x_family(x)));
    }
    const squash = (s) => s.toLowerCase().replace(/[-_]/g, "");
    for (const [name, dims] of Object.entries(DATA.models)) {
      if (squash(name) === squash(text) || squash(dims.file) === squash(text)) {
        const copy = Object.assign({}, dims);
        delete copy.file;
        return makeModel(copy);
      }
    }
    fail(`unknown model ${JSON.stringify(text)}; expected X<x> with an even x (e.g. X160), one of ${Object.keys(DATA.models).join(", ")}, or an object of dimensions`);
  }

  // A hardware spec: a shipped name, or an object with the spec's keys (each quantity once, in one unit).
  function parseHardware(value) {
    if (value === undefined || value === null || value === "") value = DATA.default_hardware;
    if (typeof value === "string") {
      const hw = DATA.hardware[value.trim()];
      if (!hw) fail(`hardware ${JSON.stringify(value)}: no such hardware; known names are ${Object.keys(DATA.hardware).join(", ")}`);
      return Object.assign({}, hw);
    }
    if (typeof value !== "object") fail(`hardware ${JSON.stringify(value)}: expected a shipped name or an object of the spec's keys`);
    const origin = `hardware ${JSON.stringify(value.name || "custom")}`;
    const hw = { name: value.name || "custom", description: value.description || "" };
    const allowed = new Set(DATA.hardware_keys);  // the keys lgacc.hardware accepts in a spec file
    for (const [field, spec] of Object.entries(DATA.spec_units)) {
      const given = Object.keys(spec.units).filter((unit) => value[`${spec.stem}_${unit}`] !== undefined);
      for (const unit of Object.keys(spec.units)) allowed.add(`${spec.stem}_${unit}`);
      const choices = Object.keys(spec.units).map((u) => `${spec.stem}_${u}`).join(" or ");
      if (given.length === 0) fail(`${origin}: field '${choices}': missing; expected a positive number`);
      if (given.length > 1) fail(`${origin}: field '${spec.stem}_${given[0]}': given more than once; keep one`);
      const key = `${spec.stem}_${given[0]}`;
      let v = value[key];
      if (typeof v === "string" && v.trim() !== "" && isFinite(Number(v))) v = Number(v);
      if (typeof v !== "number" || !isFinite(v) || v <= 0) fail(`${origin}: field '${key}': expected a positive number, got ${JSON.stringify(value[key])}`);
      hw[field] = v * spec.units[given[0]];
    }
    for (const key of Object.keys(value)) {
      if (!allowed.has(key)) fail(`${origin}: field '${key}': unknown key; allowed keys are: ${DATA.hardware_keys.join(", ")}`);
    }
    hw.gpus_per_node = positiveInt(origin, "gpus_per_node", value.gpus_per_node);
    if (allowed.has("kernel_efficiency") && value.kernel_efficiency !== undefined) {
      const k = value.kernel_efficiency;  // in (0, 1], as lgacc.hardware checks it
      if (typeof k !== "number" || !(k > 0 && k <= 1)) fail(`${origin}: field 'kernel_efficiency': expected a number in (0, 1], got ${JSON.stringify(k)}`);
      hw.kernel_efficiency = k;
    }
    return hw;
  }

  function parseAssumptions(value) {
    const A = Object.assign({}, DATA.assumptions.defaults);
    if (value === undefined || value === null) return A;
    for (const [key, v] of Object.entries(value)) {
      if (!(key in A)) fail(`unknown assumption ${JSON.stringify(key)}; expected one of ${Object.keys(A).join(", ")}`);
      const choices = DATA.assumptions.choices[key];
      if (choices && !choices.includes(v)) fail(`assumption ${key}=${JSON.stringify(v)} must be one of ${choices.join(", ")}`);
      if (typeof A[key] === "boolean" && typeof v !== "boolean") fail(`assumption ${key}=${JSON.stringify(v)} must be true or false`);
      if (typeof A[key] === "number" && !(typeof v === "number" && v > 0 && isFinite(v) && (key !== "overlap_efficiency" || v <= 1)))
        fail(`assumption ${key}=${JSON.stringify(v)} must be ${key === "overlap_efficiency" ? "in (0, 1]" : "positive and finite"}`);
      A[key] = v;
    }
    return A;
  }

  // assumption gb="GB": the spec's numbers read as decimal GB (lgacc.assumptions.apply_to_hardware).
  function applyToHardware(hw, A) {
    if (A.gb === "GiB") return hw;
    const out = Object.assign({}, hw);
    for (const field of Object.keys(DATA.spec_units)) if (field !== "peak_flop_per_s") out[field] = hw[field] * DATA.constants.GIB_TO_GB;
    return out;
  }

  const threshold = (hw, link) => hw.peak_flop_per_s / hw[`${link}_bandwidth_bytes_per_s`];
  const pick = (rows, where) => rows.find((row) => Object.keys(where).every((k) => row[k] === where[k]));

  function parseInput(input) {
    if (input === null || typeof input !== "object") fail("input must be an object with keys model, hardware, method, n_b, ...");
    const known = new Set(["model", "hardware", "method", "n_b", "n_l", "n_a", "n_mu", "b_mu", "offload", "partitioned",
                           "schedule", "n_v", "max_overhead", "steps", "form", "assumptions"]);
    for (const key of Object.keys(input)) if (!known.has(key)) fail(`unknown input key ${JSON.stringify(key)}; expected one of ${[...known].join(", ")}`);
    const model = parseModel(input.model);
    const A = parseAssumptions(input.assumptions);
    const hardware = applyToHardware(parseHardware(input.hardware), A);
    const methodName = String(input.method === undefined ? "" : input.method).trim().toLowerCase();
    const method = DATA.methods[methodName];
    if (!method) fail(`unknown method ${JSON.stringify(input.method)}; expected one of ${Object.keys(DATA.methods).join(", ")}`);
    const owner = "training configuration";
    const c = { method: methodName };
    if (input.n_b === undefined) fail(`${owner}: n_b is required (data-parallel degree)`);
    for (const field of ["n_b", "n_l", "n_a", "n_mu", "b_mu"]) c[field] = positiveInt(owner, field, input[field] === undefined ? 1 : input[field]);
    c.offload = flag(owner, "offload", input.offload, false);
    c.partitioned = flag(owner, "partitioned", input.partitioned, true);
    const maxOverhead = input.max_overhead === undefined ? DATA.constants.DEFAULT_MAX_OVERHEAD : input.max_overhead;
    if (typeof maxOverhead !== "number" || !(maxOverhead > 0) || !isFinite(maxOverhead))
      fail(`max_overhead=${JSON.stringify(maxOverhead)} must be a positive number (eq:overhead_condition's epsilon)`);
    const steps = input.steps === undefined ? DATA.constants.DEFAULT_STEPS : positiveInt("options", "steps", input.steps);
    const form = input.form === undefined ? "paper" : input.form;
    if (!DATA.forms.includes(form)) fail(`form=${JSON.stringify(form)} must be one of ${DATA.forms.join(", ")}`);
    if (c.n_l > model.d_l) fail(`${owner}: n_l=${c.n_l} exceeds the ${model.name} layer count d_l=${model.d_l} (a pipeline stage needs at least one layer)`);
    if (A.heads_cap && c.n_a > model.d_a) fail(`${owner}: n_a=${c.n_a} exceeds the ${model.name} head count d_a=${model.d_a} (tensor parallelism splits the attention heads)`);
    Object.assign(c, parseSchedule(input.schedule, input.n_v));
    if (c.n_l > 1 && c.n_l * c.n_v > model.d_l)
      fail(`${owner}: n_l n_v = ${c.n_l} x ${c.n_v} = ${c.n_l * c.n_v} exceeds the ${model.name} layer count d_l=${model.d_l} (a chunk of the ${c.schedule} schedule needs at least one layer)`);
    for (const [name, v] of [["the batch b = n_b n_mu b_mu", c.n_b * c.n_mu * c.b_mu], ["the GPU count n_gpu = n_b n_l n_a", c.n_b * c.n_l * c.n_a]])
      if (v >= 2 ** 53) fail(`${name} = ${fmtG(v, 3)} is beyond the supported range (below 2**53)`);
    return { model, hardware, A, method, c, maxOverhead, steps, form };
  }

  // lgacc.evaluate.check_schedule: a schedule's name or alias (null: the method's own pipeline) and its chunks n_v.
  function parseSchedule(value, n_v) {
    const S = DATA.schedules;
    let schedule = null;
    if (value !== undefined && value !== null && value !== "") {
      let text = String(value).trim().toLowerCase();
      text = S.aliases[text] || text;
      if (!S.names.includes(text)) {
        const names = [...S.names, ...Object.entries(S.aliases).map(([a, n]) => `${a} (= ${n})`)].join(", ");
        fail(`unknown schedule ${JSON.stringify(String(value))}; expected one of ${names}`);
      }
      schedule = text;
    }
    let v = n_v === undefined || n_v === null || n_v === "" ? 1 : n_v;
    if (typeof v === "string" && /^\s*\d+\s*$/.test(v)) v = Number(v);
    if (typeof v === "boolean") fail(`n_v=${v ? "True" : "False"} must be a positive integer, not a boolean`);
    if (typeof v !== "number" || !Number.isInteger(v)) fail(`n_v must be positive integers, got ${JSON.stringify(n_v)}`);
    if (v < 1) fail(`n_v must be positive integers (>= 1), got ${v}`);
    if (v > Number.MAX_SAFE_INTEGER) fail(`n_v=${v} exceeds the largest supported count 2**53 - 1`);
    if (!S.chunked.includes(schedule) && v !== 1) {
      const which = schedule === null ? "no schedule is given" : `schedule ${schedule} has one chunk per device`;
      fail(`n_v=${v}: ${which}; n_v (chunks per device) applies to ${S.chunked.join(" and ")} only`);
    }
    return { schedule, n_v: v };
  }

  // ok_schedule of lgacc.evaluate.evaluate_many: the schedule's chunks hold whole layers; interleaved with
  // chunks runs the micro-batches in rounds of n_l.
  function scheduleAllows(model, A, sched, n_v, n_l, n_mu) {
    if (sched === null || n_l === 1) return true;
    const chunks = n_l * n_v;
    return chunks <= model.d_l && (!A.divisible_layers || model.d_l % chunks === 0)
      && (sched !== "interleaved" || n_v === 1 || n_mu % n_l === 0);
  }

  // One configuration, as lgacc.evaluate.evaluate_many computes it.
  function compose(model, hw, method, c, A, maxOverhead, steps, form) {
    const f = FUNCTIONS[form];
    const sched = c.schedule === undefined ? null : c.schedule;
    const n_v = c.n_v === undefined ? 1 : c.n_v;
    const pipelined = c.n_l > 1;
    const part = c.partitioned === null ? method.default_partitioned : c.partitioned;
    const off = c.offload;
    const { n_b, n_l, n_a, n_mu, b_mu } = c;
    const b = n_b * n_mu * b_mu;
    const n_gpu = n_b * n_l * n_a;
    const overlap = n_mu > n_l;
    const args = [model.d_s, model.d_m, model.d_l, model.d_a, model.n_I, model.p, model.p_l, b, n_b, n_l, n_a, n_mu];
    const call = (name) => f[name](...args);
    // the schedule's terms (lgacc.evaluation_map.SCHEDULE_TERMS), read only where n_l > 1
    const term = (name) => SCHEDULE_FUNCTIONS[form][`${name}:${sched}`](...args, n_v);
    // a schedule whose reduction window spans every micro-batch accumulates layer by layer
    const layered = sched !== null && pipelined ? term("layered_window") > 0 : method.layered;
    const physical = A.convention === "physical";
    const loss = 1.0 / A.overlap_efficiency;
    const overlapped = (kind, ratio) => {
      if (!physical) return RULES.overlapped(ratio);
      let total = 0;
      for (const [name, relative] of DATA.physical[form][kind]) total = total + call(name) * RULES.overlapped(ratio * relative);
      return total;
    };
    const nu_ib = threshold(hw, "infiniband");
    const nu_nvlink = threshold(hw, "nvlink");

    const state = part ? call("state_part") : call("state");
    const checkpoint = call("checkpoint_memory") * (sched !== null && pipelined ? term("checkpoint_share") : 1.0);
    const buffers = call("buffers");
    const activations = call("activations");
    const offloadable = state + checkpoint;
    const non_offloadable = buffers + activations;

    const bubble = !pipelined ? 0.0 : sched === null ? call(pick(DATA.maps.bubble, { layered }).derivation) : term("bubble");

    const tensor_on_ib = A.tensor_placement === "node" ? n_a > hw.gpus_per_node : true;
    const tensor_link = tensor_on_ib ? nu_ib : nu_nvlink;
    const nu_tensor = n_a > 1 ? call(DATA.maps.tensor) : Infinity;
    const tensor = n_a > 1 ? RULES.not_overlapped(tensor_link / nu_tensor) : 0.0;

    const pipe_on_nvlink = A.pipeline_placement === "intra-node" ? n_l * n_a <= hw.gpus_per_node : false;
    const pipe_link = pipe_on_nvlink ? nu_nvlink : nu_ib;
    // physical passes: the standard pipeline's for one chunk per device, else the modular one's
    const pipeCase = pick(DATA.maps.pipeline, { layered: sched === null ? layered : sched === "modular" || n_v > 1 });
    const nu_pipe = !pipelined ? Infinity : sched === null ? call(pipeCase.derivation) : term("pipeline_intensity");
    const ratio_pipe = pipe_link / nu_pipe;
    let pipe_overlapped = false;
    if (A.pipeline_overlap === "extra-micro-batches") pipe_overlapped = overlap && n_mu >= n_l * (1 + ratio_pipe * loss);
    else if (A.pipeline_overlap === "always") pipe_overlapped = overlap;
    const pipeline = n_l > 1
      ? (pipe_overlapped ? overlapped(pipeCase.physical, ratio_pipe * loss) : RULES.not_overlapped(ratio_pipe)) : 0.0;

    const dataCase = pick(DATA.maps.data, { layered, partitioned: part, pipelined: n_l > 1 });
    // a layered schedule hides the reduction behind its window, relative to the modular pipeline's
    const window = sched !== null && pipelined && layered ? term("data_window") : 1.0;
    const nu_data = n_b > 1 ? call(dataCase.derivation) * window : Infinity;
    const ratio_data = nu_ib / nu_data;
    let data = dataCase.overlapped ? overlapped(dataCase.physical, ratio_data * loss) : RULES.not_overlapped(ratio_data);
    if (sched !== null && pipelined && !layered && !part) {
      // a replicated state under a schedule that does not hide the reduction behind every micro-batch: the
      // paper's not-overlapped rule, or its own window (none when d_l = n_l) if that costs less
      const own = term("data_overlap");
      if (own > 0) data = Math.min(data, overlapped("data_base", ratio_data * loss / own));
    }
    if (!(n_b > 1)) data = 0.0;

    const nu_cpu = threshold(hw, "cpu_gpu") * loss;
    const nu_state = off ? call(pick(DATA.maps.state_offload, { layered, partitioned: part }).derivation) : Infinity;
    const nu_checkpoint = off ? call(DATA.maps.checkpoint_offload) : Infinity;
    const state_offload = off ? overlapped("state_offload", nu_cpu / nu_state) : 0.0;
    const checkpoint_offload = off ? overlapped("checkpoint_offload", nu_cpu / nu_checkpoint) : 0.0;
    // The node's PCIe link carries the offload and every transfer that leaves the node.
    let inverse = 1 / nu_state + 1 / nu_checkpoint + 1 / nu_data + (pipe_on_nvlink ? 0.0 : 1 / nu_pipe);
    inverse = inverse + (tensor_on_ib ? 1 / nu_tensor : 0.0);
    const nu_pcie = 1 / inverse;
    const pcie = off ? RULES.overlapped(threshold(hw, "pcie") * loss / nu_pcie) : 0.0;

    const overheads = { bubble, tensor, pipeline, data, state_offload, checkpoint_offload, pcie };
    let efficiency = 1.0;
    for (const name of DATA.overheads) efficiency = efficiency / (1 + overheads[name]);

    const b_c = model.critical_batch * A.critical_batch_scale;
    const kernel = hw.kernel_efficiency === undefined ? 1.0 : hw.kernel_efficiency;
    const flop_rate = n_gpu * hw.peak_flop_per_s * kernel * efficiency;
    const flops = f.flops_per_batch(args[0], args[1], args[2], args[3], args[4], args[5], args[6], b_c, n_b, n_l, n_a, n_mu);
    const time_days = steps * flops / flop_rate / DATA.constants.SECONDS_PER_DAY;
    const step_time_s = call("flops_per_batch") / flop_rate;

    const limit = hw.memory_bytes;
    const ok = {
      ok_batch: b <= b_c,
      ok_micro_batches: n_l === 1 || n_mu >= n_l,
      ok_layers: n_l <= model.d_l,
      ok_layers_divide: !A.divisible_layers || model.d_l % n_l === 0,
      ok_heads: !A.heads_cap || n_a <= model.d_a,
      ok_heads_divide: !A.divisible_heads || model.d_a % n_a === 0 || (n_a > model.d_a && n_a % model.d_a === 0),
      ok_memory: off ? non_offloadable <= limit : offloadable + non_offloadable <= limit,
      ok_overheads: DATA.capped.every((name) => overheads[name] <= maxOverhead),
      ok_schedule: scheduleAllows(model, A, sched, n_v, n_l, n_mu),
    };
    return {
      b, n_gpu, efficiency, time_days, step_time_s, state, checkpoint, buffers, activations, offloadable, non_offloadable,
      total: offloadable + non_offloadable, overheads, ok, feasible: Object.values(ok).every(Boolean), critical_batch: b_c,
      intensities: { data: nu_data, pipeline: nu_pipe, tensor: nu_tensor, state_offload: nu_state,
                     checkpoint_offload: nu_checkpoint, pcie: off ? nu_pcie : Infinity },
    };
  }

  // lgacc.evaluate._reasons, word for word.
  function reasons(model, hw, c, r, maxOverhead) {
    const out = [];
    const GIB = DATA.constants.GIB;
    if (!r.ok.ok_schedule) {
      if (model.d_l % (c.n_l * c.n_v)) out.push(`n_l n_v = ${c.n_l} x ${c.n_v} does not divide d_l=${model.d_l}: each of the ${c.schedule} schedule's chunks holds whole layers (assumption divisible_layers)`);
      else out.push(`n_mu=${c.n_mu} is not a multiple of n_l=${c.n_l}: the interleaved schedule with n_v=${c.n_v} runs the micro-batches in rounds of n_l`);
    }
    if (!r.ok.ok_batch) out.push(`batch b=${r.b} exceeds the critical batch b_c=${fmtF(r.critical_batch, 1)} (eq:critical_batch)`);
    if (!r.ok.ok_micro_batches) out.push(`n_mu=${c.n_mu} < n_l=${c.n_l}: the pipeline needs at least one micro-batch per stage`);
    if (!r.ok.ok_layers_divide) out.push(`n_l=${c.n_l} does not divide d_l=${model.d_l}: a pipeline stage holds whole layers (assumption divisible_layers)`);
    if (!r.ok.ok_heads) out.push(`n_a=${c.n_a} exceeds the head count d_a=${model.d_a}: tensor parallelism splits the heads (assumption heads_cap)`);
    if (!r.ok.ok_heads_divide) out.push(`n_a=${c.n_a} does not split the d_a=${model.d_a} heads evenly (assumption divisible_heads)`);
    if (!r.ok.ok_memory) {
      const limit = hw.memory_bytes / GIB;
      if (c.offload) out.push(`non-offloadable memory ${fmtG(r.non_offloadable / GIB, 3)} GiB exceeds the GPU's ${fmtG(limit)} GiB`);
      else out.push(`memory ${fmtG(r.total / GIB, 3)} GiB exceeds the GPU's ${fmtG(limit)} GiB without offload`);
    }
    for (const name of DATA.capped) {
      if (r.overheads[name] > maxOverhead) out.push(`${name} overhead ${fmtG(r.overheads[name], 3)} exceeds the maximum ${fmtG(maxOverhead)} (eq:overhead_condition)`);
    }
    return out;
  }

  const finite = (x) => (isFinite(x) ? x : null);
  const method_layered = (c) => DATA.methods[c.method].layered;

  function summary(model, hw, c, r, maxOverhead) {
    const GIB = DATA.constants.GIB;
    const why = reasons(model, hw, c, r, maxOverhead);
    const overheads = {};
    for (const name of DATA.overheads) overheads[name] = finite(r.overheads[name]);
    return {
      b: r.b, n_gpu: r.n_gpu, efficiency: finite(r.efficiency), time_days: finite(r.time_days),
      step_time_s: finite(r.step_time_s),
      memory_gib: {
        state: r.state / GIB, checkpoint: r.checkpoint / GIB, buffers: r.buffers / GIB, activations: r.activations / GIB,
        offloadable: r.offloadable / GIB, non_offloadable: r.non_offloadable / GIB,
      },
      overheads, feasible: r.feasible && why.length === 0, reasons: why,
      schedule: c.schedule === null || c.schedule === undefined ? DATA.schedules.default[String(method_layered(c))] : c.schedule,
      n_v: c.n_v === undefined ? 1 : c.n_v,
    };
  }

  function details(input) {
    const q = parseInput(input);
    const r = compose(q.model, q.hardware, q.method, q.c, q.A, q.maxOverhead, q.steps, q.form);
    return {
      summary: summary(q.model, q.hardware, q.c, r, q.maxOverhead), raw: r, model: q.model, hardware: q.hardware,
      config: q.c, memory_limit_gib: q.hardware.memory_bytes / DATA.constants.GIB, critical_batch: r.critical_batch,
      max_overhead: q.maxOverhead,
    };
  }

  function evaluate(input) { return details(input).summary; }
"""


def generate(book_hardware: str | None = None) -> str:
    """The whole JavaScript module as text; ``book_hardware`` as in :func:`data`."""
    parts, physical = {}, {}
    for form in evaluation_map.FORMS:
        parts[form], physical[form] = _functions_js(form)
    functions = "{\n" + "\n".join(f"  {json.dumps(form)}: {text}," for form, text in parts.items()) + "\n}"
    schedules = "{\n" + "\n".join(f"  {json.dumps(form)}: {_schedule_functions_js(form)}," for form in parts) + "\n}"
    payload = json.dumps(data(physical, book_hardware), indent=1, sort_keys=False)
    return "\n".join([
        "/* lgacc calculator: generated by `python -m lgacc.jsgen` from the sympy derivations of lgacc.formulas.",
        "   Do not edit; rebuild the book. Loads nothing; defines window.lgacc (globalThis.lgacc, module.exports). */",
        "(function (root) {",
        '  "use strict";',
        "  // Printed by sympy's JavascriptCodePrinter: the evaluator's expressions, per form.",
        f"  const FUNCTIONS = {functions};",
        "  // The pipeline schedules' terms (lgacc.formulas.schedules.evaluator_terms), per form: arguments, then v.",
        f"  const SCHEDULE_FUNCTIONS = {schedules};",
        "  // The model's parameter counts, critical batch and X family (lgacc.formulas.model).",
        f"  const MODEL = {_model_functions_js()};",
        "  // The two overlap rules (lgacc.formulas.overlap): eq:overlap_condition and eq:overhead_condition.",
        f"  const RULES = {_rules_js()};",
        "  // Data: shipped specs (SI), named models, units, methods, assumptions, constants, the evaluator's map.",
        f"  const DATA = {payload};",
        "  // ---- hand-written glue: dispatch on DATA, compose FUNCTIONS and RULES as lgacc.evaluate does ----",
        RUNTIME,
        SEARCH_RUNTIME,
        "  const api = { evaluate, details, fastest, InputError, DATA, FUNCTIONS, MODEL, RULES, parseModel, parseHardware, fmtG, fmtF };",
        "  root.lgacc = api;",
        '  if (typeof module === "object" && module.exports) module.exports = api;',
        '})(typeof window !== "undefined" ? window : globalThis);',
        "",
    ])


#: The "fastest configuration" search: candidate enumeration of lgacc.search (the micro-batch caps, the
#: lattice just below the critical batch) and its rule masks and preference order, as glue over compose().
SEARCH_RUNTIME = r"""
  const PARALLELISMS = DATA.search.parallelisms;
  const TOLERANCE = DATA.search.tolerance;
  const OVERLAPPED = DATA.search.overlapped;
  const SEARCH_RULES = DATA.search.rules;

  function range(lo, hi) { const out = []; for (let i = lo; i <= hi; i++) out.push(i); return out; }
  const pyBool = (v) => (v ? "True" : "False");

  // lgacc.search.fastest: the candidates of lgacc.search.candidates, the masks of lgacc.search.rules,
  // its preference order, and lgacc.search.explain.infeasible_reason when nothing passes.
  function fastest(input) {
    if (input === null || typeof input !== "object") fail("search input must be an object with keys model, hardware, method, parallelism, ...");
    const base = Object.assign({}, input, { n_b: 1, n_l: 1, n_a: 1, n_mu: 1, b_mu: 1, offload: false });
    const parallelismName = input.parallelism === undefined ? "3d" : input.parallelism;
    delete base.parallelism; delete base.allow_offload; delete base.max_gpus;
    const allowed = PARALLELISMS[parallelismName];
    if (!allowed) fail(`unknown parallelism ${JSON.stringify(parallelismName)}; expected one of ${Object.keys(PARALLELISMS).join(", ")}`);
    const [useData, usePipe, useTensor] = allowed;
    const allowOffload = input.allow_offload === undefined ? true : flag("search", "allow_offload", input.allow_offload, false);
    const q = parseInput(base);
    const { model, hardware, A, method, maxOverhead, steps } = q;
    const form = "paper";  // lgacc optimize evaluates the paper's printed forms
    const partitioned = q.c.partitioned;
    const { schedule, n_v } = q.c;
    // lgacc.search.request.SearchRequest.create: the chunks must fit the model
    if (n_v > model.d_l) fail(`n_v=${n_v} exceeds the ${model.name} layer count d_l=${model.d_l} (a chunk needs at least one layer)`);
    if (A.divisible_layers && model.d_l % n_v) fail(`n_v=${n_v} does not divide the ${model.name} layer count d_l=${model.d_l}: no pipeline holds whole chunks (assumption divisible_layers)`);
    // interleaved with chunks runs the micro-batches in rounds of n_l (lgacc.search.core._rounds)
    const rounds = schedule === "interleaved" && n_v > 1;
    const part = partitioned === null ? method.default_partitioned : partitioned;
    const noPipeline = part && !method.layered;
    const baselineLike = !method.layered && !part;
    const bc = model.critical_batch * A.critical_batch_scale;
    const B = Math.floor(bc);
    let maxGpus = null;
    if (input.max_gpus !== undefined && input.max_gpus !== null && input.max_gpus !== "") {
      if (typeof input.max_gpus !== "number" || !Number.isInteger(input.max_gpus) || input.max_gpus < 1)
        fail(`max_gpus=${JSON.stringify(input.max_gpus)} must be a positive integer`);
      // lgacc.search.request: more GPUs than the largest configuration can use changes nothing
      maxGpus = Math.min(input.max_gpus, Math.max(1, B) * model.d_l * 2 * model.d_a);
    }
    const layersAllowed = (n_l) => !A.divisible_layers || model.d_l % n_l === 0;
    const headsAllowed = (n_a) => (!A.heads_cap || n_a <= model.d_a)
      && (!A.divisible_heads || model.d_a % n_a === 0 || (n_a > model.d_a && n_a % model.d_a === 0));
    const withinBudget = (n) => maxGpus === null || n <= maxGpus;
    const n_ls = (usePipe && !noPipeline ? range(1, model.d_l) : [1]).filter((n) => layersAllowed(n) && withinBudget(n));
    const n_as = (useTensor ? range(1, (A.heads_cap ? 1 : 2) * model.d_a) : [1]).filter((n) => headsAllowed(n) && withinBudget(n));
    const offloads = allowOffload ? [false, true] : [false];
    const run = (c) => compose(model, hardware, method, Object.assign({ method: q.c.method, partitioned, schedule, n_v }, c), A,
                               maxOverhead, steps, form);
    const free = (r, n_l) => OVERLAPPED.every((k) => r.overheads[k] <= TOLERANCE)
      && (r.overheads.data <= TOLERANCE || (baselineLike && n_l > 1));
    // lgacc.search.rules.request_masks, in the order of RULES: those that need no evaluation, then the others
    // (with a schedule, lgacc.search.core._masks: its own rules join structure, micro-batches and critical batch)
    const plainMasks = (c) => {
      const b = c.n_b * c.n_mu * c.b_mu;
      const scheduleOk = scheduleAllows(model, A, schedule, n_v, c.n_l, c.n_mu);
      const step = c.n_l > 1 ? c.n_l : 1;
      return {
        "structure": (c.n_b === 1 || useData) && c.n_l <= model.d_l && layersAllowed(c.n_l) && headsAllowed(c.n_a) && scheduleOk,
        "critical batch": rounds ? b <= B && c.n_b * (c.n_mu + step) * c.b_mu > B : b <= bc && b + c.n_b * c.b_mu > bc,
        "micro-batches": c.n_mu >= c.n_l && (!rounds || scheduleOk),
        "GPU budget": withinBudget(c.n_b * c.n_l * c.n_a),
      };
    };
    const evaluatedMasks = (c, r) => ({
      "memory": r.ok.ok_memory,
      "overhead cap": r.ok.ok_overheads,
      "bottleneck": free(r, c.n_l),
      "offload": !c.offload || (r.total > hardware.memory_bytes && allowOffload),
    });
    const all = (m) => Object.values(m).every(Boolean);

    // micro-batch caps (lgacc.search.candidates.micro_batch_caps): smallest bottleneck-free probe at n_mu = n_l
    const probeSet = new Set(range(1, 16));
    for (let k = 5; k <= Math.max(5, B.toString(2).length); k++) probeSet.add(2 ** k);
    probeSet.add(B);
    const probes = [...probeSet].filter((p) => p <= B).sort((x, y) => x - y);
    let evaluated = 0;
    // (n_b, n_mu) with n_mu = floor(K / n_b), K = floor(B / b_mu), and n_b the largest for its n_mu (lgacc.search.candidates.levels)
    const levelCache = new Map();
    const levels = (b_mu) => {
      if (!levelCache.has(b_mu)) {
        const K = Math.floor(B / b_mu);
        const nbs = new Set();
        for (let root = 1; root * root <= K; root++) { nbs.add(root); nbs.add(Math.floor(K / root)); }
        const rows = [];
        for (const n_b of [...nbs].sort((x, y) => x - y)) {
          const n_mu = Math.floor(K / n_b);
          if (n_b === Math.floor(K / n_mu)) rows.push([n_b, n_mu]);
        }
        levelCache.set(b_mu, rows);
      }
      return levelCache.get(b_mu);
    };
    // the lattice just below the critical batch (lgacc.search.candidates.lattice), within the GPU budget
    const lattice = (n_l, n_a, bmuMax) => {
      let rows = [];
      for (let b_mu = 1; b_mu <= Math.min(bmuMax, B); b_mu++) for (const [n_b, n_mu] of levels(b_mu)) rows.push([n_b, n_mu, b_mu]);
      if (maxGpus !== null) {
        const cap = Math.floor(maxGpus / (n_l * n_a));
        if (cap < 1) return [];
        rows = rows.filter(([n_b]) => n_b <= cap);
        for (let b_mu = 1; b_mu <= bmuMax; b_mu++) {
          const K = Math.floor(B / b_mu);
          if (K >= 1 && K > cap && Math.floor(K / Math.max(Math.floor(K / cap), 1)) !== cap) rows.push([cap, Math.floor(K / cap), b_mu]);
        }
      }
      return rows.filter(([, n_mu]) => n_mu >= n_l);
    };
    const candidates = [];
    for (const n_l of n_ls) for (const n_a of n_as) for (const offload of offloads) {
      let cap = 0;
      for (const p of [...probes.filter((v) => v < Math.floor(B / n_l)), Math.floor(B / n_l)]) {
        if (p < 1) break;
        let n_b = Math.max(1, Math.floor(B / (p * n_l)));
        if (maxGpus !== null) n_b = Math.max(1, Math.min(n_b, Math.floor(maxGpus / (n_l * n_a))));
        const r = run({ n_b, n_l, n_a, n_mu: Math.floor(B / (p * n_b)), b_mu: p, offload });
        evaluated++;
        if (free(r, n_l)) { cap = p; break; }  // probes ascend: the first free one is the smallest
      }
      for (const [n_b, n_mu, b_mu] of lattice(n_l, n_a, cap)) {
        // rounds of n_l: n_mu rounded down to a multiple of n_l (lgacc.search.core._schedule_candidates)
        candidates.push({ n_b, n_l, n_a, n_mu: rounds && n_l > 1 ? n_l * Math.floor(n_mu / n_l) : n_mu, b_mu, offload });
      }
    }
    if (candidates.length === 0) {
      return { feasible: false, evaluated, reasons: ["critical batch: no configuration of this parallelism fits below the critical batch"] };
    }
    const better = (x, y) => {
      // lgacc.search.rules.preference_keys: (highest n_l for the baseline with a pipeline), time, n_gpu, b_mu, offload, -n_a
      const kx = [], ky = [];
      if (baselineLike && usePipe) { kx.push(-x.c.n_l); ky.push(-y.c.n_l); }
      kx.push(x.r.time_days, x.r.n_gpu, x.c.b_mu, x.c.offload ? 1 : 0, -x.c.n_a);
      ky.push(y.r.time_days, y.r.n_gpu, y.c.b_mu, y.c.offload ? 1 : 0, -y.c.n_a);
      for (let i = 0; i < kx.length; i++) { if (kx[i] < ky[i]) return true; if (kx[i] > ky[i]) return false; }
      return false;
    };
    // Visit by decreasing GPU count (the baseline with a pipeline: by decreasing n_l first) and stop once
    // perfect efficiency on that many GPUs cannot beat the best time (lgacc.search.core._branch_and_bound):
    // time x efficiency x n_gpu is the same for every configuration (the paper's fixed token count).
    const byLayers = baselineLike && usePipe;
    const gpus = (c) => c.n_b * c.n_l * c.n_a;
    const order = candidates.map((c, i) => i);  // a stable sort: ties keep the candidates' order
    order.sort((i, j) => {
      const x = candidates[i], y = candidates[j];
      return (byLayers && x.n_l !== y.n_l ? y.n_l - x.n_l : gpus(y) - gpus(x)) || i - j;
    });
    let best = null, gpuDays = null, level = null;
    for (const i of order) {
      const c = candidates[i];
      if (byLayers && c.n_l !== level) { if (best !== null) break; level = c.n_l; }
      if (best !== null && gpuDays !== null && gpuDays / gpus(c) > best.r.time_days * (1 + 1e-12)) {
        if (byLayers) continue; else break;
      }
      if (!all(plainMasks(c))) continue;  // its evaluation could not make it valid
      const r = run(c);
      evaluated++;
      if (gpuDays === null) gpuDays = r.time_days * r.efficiency * r.n_gpu;
      if (!all(evaluatedMasks(c, r))) continue;
      const entry = { c, r };
      if (best === null || better(entry, best)) best = entry;
    }
    const chosenInput = (c) => {
      const chosen = Object.assign({}, base, c, { partitioned });
      if (chosen.partitioned === null) delete chosen.partitioned;
      delete chosen.form;
      return chosen;
    };
    if (best === null) return { feasible: false, evaluated, reasons: [infeasibleReason(candidates, plainMasks, evaluatedMasks, run, chosenInput)] };
    return Object.assign(evaluate(chosenInput(best.c)), { n_b: best.c.n_b, n_l: best.c.n_l, n_a: best.c.n_a,
                                                          n_mu: best.c.n_mu, b_mu: best.c.b_mu, offload: best.c.offload, evaluated });
  }

  // lgacc.search.explain.infeasible_reason: the rule that removed the last candidates, with the evaluator's
  // reasons for the fastest candidate alive before it.
  function infeasibleReason(candidates, plainMasks, evaluatedMasks, run, chosenInput) {
    let alive = candidates.map((c) => ({ c, m: plainMasks(c) }));
    let evaluatedAll = false;
    for (const name of Object.keys(SEARCH_RULES)) {
      if (!(name in alive[0].m) && !evaluatedAll) {  // the survivors of the plain rules, evaluated once
        for (const row of alive) { row.r = run(row.c); Object.assign(row.m, evaluatedMasks(row.c, row.r)); }
        evaluatedAll = true;
      }
      const survivors = alive.filter((row) => row.m[name]);
      if (survivors.length === 0) {
        if (alive.length === 0) break;
        for (const row of alive) if (row.r === undefined) row.r = run(row.c);
        let nearest = alive[0];
        for (const row of alive) if (row.r.time_days < nearest.r.time_days) nearest = row;
        const c = nearest.c;
        const summary = evaluate(chosenInput(c));
        let detail = summary.reasons.join("; ");
        if (!detail) {
          detail = Object.entries(summary.overheads)
            .filter(([k, v]) => (OVERLAPPED.includes(k) || k === "data") && v > TOLERANCE)
            .map(([k, v]) => `${k} overhead ${fmtG(v, 3)}`).join(", ");
        }
        let text = `${name}: ${SEARCH_RULES[name]}`;
        if (detail) text += ` (e.g. n_b=${c.n_b}, n_l=${c.n_l}, n_a=${c.n_a}, n_mu=${c.n_mu}, b_mu=${c.b_mu}, offload=${pyBool(c.offload)}: ${detail})`;
        return text;
      }
      alive = survivors;
    }
    return "structure: no configuration of this parallelism fits the model";
  }
"""


def write(path: str | Path, book_hardware: str | None = None) -> Path:
    """Write the module to ``path`` (folders created) and return it."""
    path = Path(path)
    text = generate(book_hardware)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) not in (1, 3) or (len(argv) == 3 and argv[1] != "--hardware"):
        print("usage: python -m lgacc.jsgen OUT.js [--hardware NAME|PATH]  (the page's preselected spec)", file=sys.stderr)
        return 2
    try:
        print(write(argv[0], argv[2] if len(argv) == 3 else None))
    except UserInputError as error:
        print(f"lgacc.jsgen: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
