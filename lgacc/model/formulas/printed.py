"""The paper's printed formulas, read from their LaTeX in ``data/paper/`` and parsed into sympy.

A :class:`~lgacc.model.formulas.Derivation` compares what the package derives with what
the paper prints.  For that comparison to mean anything the printed side must come
from the paper's text, not from an expression typed beside the derivation: each
printed formula is transcribed verbatim (``$...$`` of the LaTeX source) into
``data/paper/printed_formulas.yaml`` and read here with a small parser for the
subset of LaTeX the formulas use: integers, the paper's symbols (``d_s``,
``n_\\mu``, ``n_{\\mu}``, ``n_\\text{gpu}``, ...), juxtaposition as a product,
``+``, ``-``, ``/``, ``^``, parentheses and ``\\frac``/``\\tfrac``.  A symbol the
notation (:mod:`lgacc.model.symbols`) does not know is an error, never a new symbol.
"""

from __future__ import annotations

import re
from functools import cache

import sympy
import yaml

from lgacc.paths import DATA

from ..symbols import NOTATION

__all__ = ["PRINTED_FORMULAS", "parse_printed_latex", "printed_formulas", "printed_formula", "paper_definitions"]

#: The transcription of the printed formulas (beside the other printed values, for comparison only).
PRINTED_FORMULAS = DATA / "paper" / "printed_formulas.yaml"

_TOKEN = re.compile(
    r"\s*(?:(?P<number>\d+(?:\.\d+)?)|(?P<command>\\[A-Za-z]+|\\[,;!])|(?P<letter>[A-Za-z])|(?P<char>[{}()^_+\-=/]))"
)
_IGNORED_COMMANDS = {r"\left", r"\right", r"\,", r"\!", r"\;"}
_PRODUCT_COMMANDS = {r"\cdot", r"\times"}
_FRACTIONS = {r"\frac", r"\tfrac", r"\dfrac"}


def _symbol_key(base: str, subscript: str | None) -> tuple[str, str]:
    """``("n", "\\mu")`` for ``n_\\mu``, ``n_{\\mu}``; ``("n", "gpu")`` for ``n_\\text{gpu}``."""
    sub = (subscript or "").replace(" ", "")
    sub = re.sub(r"\\text\{([^}]*)\}", r"\1", sub).replace("{", "").replace("}", "")
    return base, sub


def _notation_symbols() -> dict[tuple[str, str], sympy.Symbol]:
    table = {}
    for entry in NOTATION:
        match = re.fullmatch(r"(\\[A-Za-z]+|[A-Za-z])(?:_(.*))?", entry.latex)
        if match:
            table[_symbol_key(match[1], match[2])] = entry.symbol
    return table


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens = self._tokenize(text)
        self.position = 0
        self.symbols = _notation_symbols()

    @staticmethod
    def _tokenize(text: str) -> list[tuple[str, str]]:
        tokens, position = [], 0
        text = text.strip()
        while position < len(text):
            match = _TOKEN.match(text, position)
            if match is None or match.end() == position:
                raise ValueError(f"cannot read {text[position:]!r} in the printed formula {text!r}")
            kind = match.lastgroup
            value = match[kind]
            position = match.end()
            if kind == "command" and value in _IGNORED_COMMANDS:
                continue
            tokens.append((kind, value))
        return tokens

    def _peek(self) -> tuple[str, str] | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def _next(self) -> tuple[str, str]:
        token = self._peek()
        if token is None:
            raise ValueError(f"the printed formula {self.text!r} ends too early")
        self.position += 1
        return token

    def _expect(self, char: str) -> None:
        token = self._next()
        if token != ("char", char):
            raise ValueError(f"expected {char!r} in the printed formula {self.text!r}, found {token[1]!r}")

    def parse(self) -> sympy.Expr:
        expr = self._sum()
        if self._peek() is not None:
            raise ValueError(f"unexpected {self._peek()[1]!r} in the printed formula {self.text!r}")
        return expr

    def _sum(self) -> sympy.Expr:
        sign = 1
        if self._peek() in (("char", "-"), ("char", "+")):
            sign = -1 if self._next()[1] == "-" else 1
        total = sign * self._product()
        while self._peek() in (("char", "+"), ("char", "-")):
            sign = -1 if self._next()[1] == "-" else 1
            total += sign * self._product()
        return total

    @staticmethod
    def _starts_factor(token: tuple[str, str] | None) -> bool:
        """Juxtaposition is a product: a number, a symbol, a command or an opening bracket starts a factor."""
        return token is not None and (token[0] in ("number", "letter", "command") or token[1] in ("(", "{"))

    def _product(self) -> sympy.Expr:
        result = self._power()
        while self._starts_factor(self._peek()) or self._peek() == ("char", "/"):
            if self._peek() == ("char", "/"):
                self._next()
                result /= self._power()
                continue
            if self._peek()[1] in _PRODUCT_COMMANDS:
                self._next()
            result *= self._power()
        return result

    def _power(self) -> sympy.Expr:
        base = self._atom()
        if self._peek() == ("char", "^"):
            self._next()
            base = base ** self._atom()
        return base

    def _group(self) -> sympy.Expr:
        self._expect("{")
        inner = self._sum()
        self._expect("}")
        return inner

    def _subscript(self) -> str:
        kind, value = self._next()
        if value == "{":
            depth, parts = 1, []
            while True:
                kind, value = self._next()
                depth += {"{": 1, "}": -1}.get(value, 0) if kind == "char" else 0
                if depth == 0:
                    return "".join(parts)
                parts.append(value)
        if value == r"\text":
            self._expect("{")
            parts = []
            while self._peek() != ("char", "}"):
                parts.append(self._next()[1])
            self._next()
            return "".join(parts)
        if kind == "number":
            return value
        return value  # one letter or a command such as \mu

    def _atom(self) -> sympy.Expr:
        kind, value = self._next()
        if kind == "number":
            return sympy.Rational(value)
        if value == "(":
            inner = self._sum()
            self._expect(")")
            return inner
        if value == "{":
            self.position -= 1
            return self._group()
        if kind == "command" and value in _FRACTIONS:
            numerator = self._group()
            denominator = self._group()
            return numerator / denominator
        if kind in ("letter", "command"):
            subscript = None
            if self._peek() == ("char", "_"):
                self._next()
                subscript = self._subscript()
            key = _symbol_key(value, subscript)
            if key not in self.symbols:
                name = value + (f"_{subscript}" if subscript else "")
                raise ValueError(f"unknown symbol {name!r} in the printed formula {self.text!r} (not in lgacc.model.symbols)")
            return self.symbols[key]
        raise ValueError(f"unexpected {value!r} in the printed formula {self.text!r}")


def parse_printed_latex(latex: str) -> sympy.Expr:
    """The sympy expression of a formula as the paper prints it: ``\\tfrac{12 p}{n_l n_a}`` -> ``12 p / (n_l n_a)``.

    An equation ``lhs=rhs`` is returned as ``sympy.Eq(lhs, rhs)``.
    """
    text = latex.strip().strip("$")
    if "=" in text:
        left, right = text.split("=", 1)
        return sympy.Eq(_Parser(left).parse(), _Parser(right).parse())
    return _Parser(text).parse()


@cache
def _transcription() -> dict:
    return yaml.safe_load(PRINTED_FORMULAS.read_text())


def printed_formulas() -> dict[str, dict]:
    """Every transcribed formula by key: ``latex`` (verbatim), ``where`` (the paper's section), ``quote``."""
    return dict(_transcription()["formulas"])


def printed_formula(key: str) -> sympy.Expr:
    """One printed formula, parsed from its LaTeX (``"state_memory"`` -> ``12 p / (n_l n_a)``)."""
    formulas = _transcription()["formulas"]
    if key not in formulas:
        raise KeyError(f"no printed formula {key!r} in {PRINTED_FORMULAS.name}; known: {', '.join(formulas)}")
    return parse_printed_latex(formulas[key]["latex"])


def paper_definitions() -> dict[sympy.Symbol, sympy.Expr]:
    """The paper's definitions used to write a printed form in the derivation's symbols
    (``n_gpu = n_b n_l n_a``), parsed from their LaTeX like the formulas."""
    out = {}
    for entry in _transcription()["definitions"].values():
        equation = parse_printed_latex(entry["latex"])
        out[equation.lhs] = equation.rhs
    return out
