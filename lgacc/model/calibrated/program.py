"""The derived expressions as a flat program of array operations, kept as data, and its NumPy interpreter.

The calibrated step time is one sympy expression of about seven thousand operations in which the
same sub-expressions (a GEMM's time, a layer's forward pass) recur.  :func:`compile_program` walks
it once and keeps every distinct sub-expression once, in an order where each comes after its
arguments: a tuple of nodes ``(operation, *arguments)`` whose arguments are earlier nodes' indices,
an input's name or a constant.  That tuple is plain data (strings, integers, floats): it is kept on
disk by :mod:`lgacc.cache.results` and read back without sympy, it runs in NumPy here
(:func:`run`) and it prints to JavaScript for the book's calculator
(:mod:`lgacc.book.jsgen.expected`), so that both evaluate exactly the same operations.
"""

from __future__ import annotations

from functools import lru_cache, reduce
from typing import Any, Mapping

import numpy as np

__all__ = ["Program", "OPERATIONS", "compile_program", "run", "needed"]

#: (nodes, outputs): nodes are ``(operation, *arguments)``; outputs map a name to a node index.
Program = tuple[tuple[tuple[Any, ...], ...], tuple[tuple[str, int], ...]]

#: Every operation a node may hold, with its arity (``None``: any number of node arguments).
OPERATIONS = {
    "input": 1, "const": 1, "add": None, "mul": None, "pow": 2, "max": None, "min": None, "floor": 1,
    "ceil": 1, "le": 2, "lt": 2, "eq": 2, "ne": 2, "true": 0, "false": 0, "piecewise": None,
}


def compile_program(outputs: Mapping[str, Any], names: Mapping[Any, str] | None = None) -> Program:
    """The nodes of ``outputs`` (name -> sympy expression), each distinct sub-expression once; an input is
    called by ``names[symbol]`` (default: the symbol's own name)."""
    import sympy

    nodes: list[tuple[Any, ...]] = []
    index: dict[Any, int] = {}

    def add(node: tuple[Any, ...]) -> int:
        if node not in index:
            index[node] = len(nodes)
            nodes.append(node)
        return index[node]

    relations = {sympy.LessThan: "le", sympy.StrictLessThan: "lt", sympy.Equality: "eq", sympy.Unequality: "ne"}
    functions = {sympy.Max: "max", sympy.Min: "min", sympy.Add: "add", sympy.Mul: "mul"}

    def visit(expr) -> int:
        if expr is sympy.true:
            return add(("true",))
        if expr is sympy.false:
            return add(("false",))
        if isinstance(expr, sympy.Symbol):
            return add(("input", (names or {}).get(expr, expr.name)))
        if isinstance(expr, sympy.Number):
            return add(("const", float(expr)))
        if type(expr) in functions:
            return add((functions[type(expr)], *(visit(a) for a in expr.args)))
        if isinstance(expr, sympy.Pow):
            return add(("pow", visit(expr.base), visit(expr.exp)))
        if isinstance(expr, (sympy.floor, sympy.ceiling)):
            return add(("floor" if isinstance(expr, sympy.floor) else "ceil", visit(expr.args[0])))
        if isinstance(expr, sympy.GreaterThan):
            return add(("le", visit(expr.rhs), visit(expr.lhs)))
        if isinstance(expr, sympy.StrictGreaterThan):
            return add(("lt", visit(expr.rhs), visit(expr.lhs)))
        if type(expr) in relations:
            return add((relations[type(expr)], visit(expr.lhs), visit(expr.rhs)))
        if isinstance(expr, sympy.Piecewise):
            flat = [visit(part) for pair in expr.args for part in pair]  # (value, condition) pairs
            return add(("piecewise", *flat))
        raise TypeError(f"cannot compile {type(expr).__name__}: {expr}")

    named = tuple((name, visit(sympy.sympify(expr))) for name, expr in outputs.items())
    return tuple(nodes), named


def needed(program: Program, outputs: tuple[str, ...]) -> tuple[int, ...]:
    """The indices of the nodes that ``outputs`` depend on, in order."""
    return _needed(program, outputs)


@lru_cache(maxsize=64)
def _needed(program: Program, outputs: tuple[str, ...]) -> tuple[int, ...]:
    nodes, names = program
    by_name = dict(names)
    stack = [by_name[name] for name in outputs]
    seen: set[int] = set()
    while stack:
        i = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        op, *args = nodes[i]
        if op not in ("input", "const"):
            stack.extend(args)
    return tuple(sorted(seen))


def _piecewise(*values) -> Any:
    """``(value, condition)`` pairs, the first whose condition holds (sympy's ``Piecewise``; the last is ``True``)."""
    pairs = list(zip(values[0::2], values[1::2]))
    out = pairs[-1][0]
    for value, condition in reversed(pairs[:-1]):
        out = np.where(condition, value, out)
    return out


def _chain(binary):
    """An n-ary operation from a binary ufunc."""
    def apply(*values):
        out = binary(values[0], values[1])
        for value in values[2:]:
            out = binary(out, value)
        return out
    return apply


_NUMPY = {
    "add": _chain(np.add),
    "mul": _chain(np.multiply),
    "max": _chain(np.maximum),
    "min": _chain(np.minimum),
    "pow": np.power,
    "floor": np.floor,
    "ceil": np.ceil,
    "le": np.less_equal,
    "lt": np.less,
    "eq": np.equal,
    "ne": np.not_equal,
    "piecewise": _piecewise,
}


@lru_cache(maxsize=64)
def _plan(program: Program, outputs: tuple[str, ...]) -> tuple[tuple[int, Any, Any], ...]:
    """The nodes ``outputs`` need, as ``(index, function or None, arguments)``: inputs and constants have no
    function (their argument is the name or the value); ``x ** -1`` is ``1 / x``."""
    nodes, _ = program
    plan = []
    for i in needed(program, outputs):
        op, *args = nodes[i]
        if op in ("input", "const"):
            plan.append((i, op, args[0]))
        elif op in ("true", "false"):
            plan.append((i, "const", op == "true"))
        elif op == "pow" and nodes[args[1]] == ("const", -1.0):
            plan.append((i, np.reciprocal, (args[0],)))
        else:
            plan.append((i, _NUMPY[op], tuple(args)))
    return tuple(plan)


def run(program: Program, inputs: Mapping[str, Any], outputs: tuple[str, ...] | None = None) -> dict[str, np.ndarray]:
    """The ``outputs`` (default: all) of ``program`` for ``inputs`` (name -> number or array, broadcast)."""
    _, names = program
    outputs = tuple(name for name, _ in names) if outputs is None else tuple(outputs)
    values: list[Any] = [None] * len(program[0])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for i, function, args in _plan(program, outputs):
            if function == "input":
                value = inputs[args]
                values[i] = value if isinstance(value, np.ndarray) else float(value)
            elif function == "const":
                values[i] = args
            else:
                values[i] = function(*[values[j] for j in args])
    by_name = dict(names)
    return {name: np.asarray(values[by_name[name]], dtype=float) for name in outputs}
