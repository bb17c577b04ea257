"""The derived expressions printed as JavaScript functions, with sympy's JavaScript printer.

Each expression becomes ``function (names...) { return <expr>; }`` with floats at full
precision (``repr`` of the double); a symbol outside the arguments (such as the
activation memory's ``m_0`` in the derivation's printed form) stops the build with its
name rather than printing a function that returns NaN.  What is printed, each as one
JavaScript object of functions:

* :func:`expressions_js`: every expression the evaluator's numeric code is generated
  from (:func:`lgacc.model.evaluator.mapping.expressions`), with the evaluator's argument order
  :data:`ARGUMENTS`;
* :func:`schedules_js`: the pipeline schedules' terms
  (:func:`lgacc.model.evaluator.mapping.schedule_expressions`), with the chunks per device ``v`` as a
  last argument;
* :func:`model_js`: the model's parameter counts, the critical batch and the X family
  (:mod:`lgacc.model.formulas.model`);
* :func:`rules_js`: the two overlap rules (:mod:`lgacc.model.formulas.overlap`) applied to a symbol;
* :func:`ring_js`: the functions of the assumption ``dp_network="ring"`` (:mod:`lgacc.model.formulas.ring`),
  with the argument names of :data:`lgacc.model.evaluator.mapping.RING_ARGUMENTS`.
"""

from __future__ import annotations

import json

import sympy
from sympy.printing.jscode import JavascriptCodePrinter

from lgacc.model import symbols
from lgacc.model.evaluator import mapping as evaluation_map
from lgacc.model.formulas import model as model_formulas
from lgacc.model.formulas.overlap import not_overlapped_overhead, paper_overlapped_overhead

__all__ = ["ARGUMENTS", "expressions", "javascript_function", "expressions_js", "schedules_js", "model_js", "rules_js",
           "ring_js", "sparse_js"]

#: Arguments of every generated function, in the order the evaluator calls its generated functions.
ARGUMENTS = evaluation_map.ARGUMENTS


def expressions(form: str) -> tuple[dict[str, sympy.Expr], dict[str, list[tuple[str, float]]]]:
    """The expressions the evaluator's numeric code is generated from for ``form`` (its own table,
    :func:`lgacc.model.evaluator.mapping.expressions`), by name, and the physical passes of each overlapped kind as
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


def expressions_js(form: str) -> tuple[str, dict[str, list[tuple[str, float]]]]:
    """The evaluator's expressions of ``form`` as a JavaScript object of functions, and their physical passes
    (as :func:`expressions` gives them, for the data)."""
    exprs, physical = expressions(form)
    args = tuple(getattr(symbols, name) for name in ARGUMENTS)
    lines = [f"    {json.dumps(name)}: {javascript_function(args, ARGUMENTS, expr)}," for name, expr in exprs.items()]
    return "{\n" + "\n".join(lines) + "\n  }", physical


def schedules_js(form: str) -> str:
    """The schedule terms the evaluator reads (:func:`lgacc.model.evaluator.mapping.schedule_expressions`), arguments
    :data:`ARGUMENTS` then ``v`` (the chunks per device, ``n_v``)."""
    names = tuple(evaluation_map.SCHEDULE_ARGUMENTS)
    lines = [f"    {json.dumps(name)}: {javascript_function(tuple(args), names, expr)},"
             for name, (args, expr) in evaluation_map.schedule_expressions(form)[0].items()]
    return "{\n" + "\n".join(lines) + "\n  }"


def model_js() -> str:
    """The layer weights and parameters per layer (plain and gated), the critical batch, and the X family."""
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
        "critical_batch": javascript_function((symbols.K_c, symbols.p, symbols.d_s), ("K_c", "p", "d_s"),
                                              model_formulas.critical_batch()),
        "x_family": f"function (x) {{ return {{{members}}}; }}",
    }
    return "{\n" + "\n".join(f"    {name}: {text}," for name, text in rows.items()) + "\n  }"


def rules_js() -> str:
    """The overlap rules of eq:overlap_condition and eq:overhead_condition as functions of the ratio."""
    ratio = sympy.Symbol("ratio", positive=True)
    return ("{\n"
            f"    overlapped: {javascript_function((ratio,), ('ratio',), paper_overlapped_overhead(ratio))},\n"
            f"    not_overlapped: {javascript_function((ratio,), ('ratio',), not_overlapped_overhead(ratio))},\n"
            "  }")


def ring_js() -> str:
    """``peers``, ``card_share`` and ``threshold`` of the data-parallel ring (``dp_network="ring"``), as the evaluator's
    generated code computes them (:func:`lgacc.model.evaluator.mapping.ring_functions`)."""
    from lgacc.model.formulas.ring import evaluator_functions

    names = evaluation_map.RING_ARGUMENTS
    lines = [f"    {name}: {javascript_function(tuple(args), names[name], expr)},"
             for name, (args, expr) in evaluator_functions().items()]
    return "{\n" + "\n".join(lines) + "\n  }"


def sparse_js() -> str:
    """The sparse extension's counts (issue #36), one function per variant, printed from the same sympy expressions as
    the committed ``lgacc/model/generated/sparse_models.py`` (:func:`lgacc.model.transformer._build_sparse`), with its
    argument names (``_SPARSE_ARGUMENTS``)."""
    from lgacc.model import transformer

    names = transformer._SPARSE_ARGUMENTS
    functions, _ = transformer._build_sparse()
    lines = [f"    {json.dumps(name)}: {javascript_function(tuple(args), names, expr)},"
             for name, (args, expr) in functions.items()]
    return "{\n" + "\n".join(lines) + "\n  }"
