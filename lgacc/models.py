"""Transformer models: the X_[x] family and the named models of table:x_model.

A :class:`Transformer` is validated on construction (positive integer
dimensions, ``d_m = d_a d_h``).  Its parameter counts come from the
per-operation count of :mod:`lgacc.formulas.model` (lambdified once):

* ``p_l``, ``p``: exact, including the ``(9 + n_I) d_m`` biases and layer-norm
  gains of each layer (``13 d_m`` at ``n_I = 4``: 3 d_m for Q, K, V, d_m for the
  attention output, ``n_I d_m`` and d_m for the two feed-forward biases, and
  2 x 2 d_m for the gains and biases of the two layer norms);
* ``p_leading = (4 + 2 n_I) d_m^2 d_l``: the paper's ``p ≈`` of sec:methodology,
  which is also Kaplan et al.'s non-embedding parameter count N.

The critical batch size (eq:critical_batch) follows Kaplan et al.'s scaling
``b_c d_s ∝ N^(1/3)`` with the constant derived from the paper's calibration:
GPT-3 trained at its critical batch of 3.2 M tokens.  ``N`` is Kaplan et al.'s
count, ``p_leading`` (see ``book/assumptions.md``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import sympy

from .errors import UserInputError, positive_int
from .formulas import model as model_formulas
from .symbols import d_l, d_m, n_I

__all__ = [
    "Transformer",
    "x_model",
    "named_model",
    "NAMED_MODELS",
    "critical_batch_size",
    "critical_batch_constant",
    "CALIBRATION_MODEL",
    "CALIBRATION_TOKENS",
]

#: The paper's calibration (appendix sec:transformer_scaling): "we assume that GPT-3
#: was trained at the critical batch size (3.2 M tokens)".
CALIBRATION_MODEL = "GPT-3"
CALIBRATION_TOKENS = 3.2e6


@cache
def _p_l_function():
    return sympy.lambdify((d_m, n_I), model_formulas.layer_parameters(), "math")


@cache
def _p_leading_function():
    return sympy.lambdify((d_m, d_l, n_I), model_formulas.parameter_count_leading(), "math")


@dataclass(frozen=True)
class Transformer:
    """A dense transformer encoder (sec:methodology): ``d_l`` layers of width ``d_m = d_a d_h``.

    ``trained_batch`` is the batch size the model was actually trained with, when
    the paper quotes one (table:x_model's parenthesized ``b``); it is an input,
    used only for display.
    """

    name: str
    d_l: int
    d_m: int
    d_a: int
    d_h: int
    d_s: int
    n_I: int = 4
    trained_batch: int | None = None
    source: str = ""

    def __post_init__(self) -> None:
        owner = f"model {self.name!r}"
        for field in ("d_l", "d_m", "d_a", "d_h", "d_s", "n_I"):
            object.__setattr__(self, field, positive_int(owner, field, getattr(self, field)))
        if self.trained_batch is not None:
            object.__setattr__(self, "trained_batch", positive_int(owner, "trained_batch", self.trained_batch))
        if self.d_m != self.d_a * self.d_h:
            raise UserInputError(
                f"{owner}: d_m={self.d_m} must equal d_a * d_h = {self.d_a} * {self.d_h} = {self.d_a * self.d_h}"
            )

    @property
    def d_I(self) -> int:
        """Feed-forward intermediate size ``n_I d_m``."""
        return self.n_I * self.d_m

    @property
    def p_l(self) -> int:
        """Exact parameters per layer, ``(4 + 2 n_I) d_m^2 + (9 + n_I) d_m``."""
        return int(_p_l_function()(self.d_m, self.n_I))

    @property
    def p(self) -> int:
        """Exact parameters, ``d_l p_l`` (embedding and language-model head excluded)."""
        return self.d_l * self.p_l

    @property
    def p_leading(self) -> int:
        """``(4 + 2 n_I) d_m^2 d_l``: the paper's ``p ≈`` and Kaplan et al.'s N."""
        return int(_p_leading_function()(self.d_m, self.d_l, self.n_I))

    @property
    def critical_batch(self) -> float:
        """Critical batch size in samples (eq:critical_batch)."""
        return critical_batch_size(self)

    def dims(self) -> dict[str, int]:
        return {"d_s": self.d_s, "d_m": self.d_m, "d_l": self.d_l, "d_a": self.d_a, "d_h": self.d_h, "n_I": self.n_I}


def x_model(x: int) -> Transformer:
    """The model X_[x] (appendix sec:transformer_scaling): d_a = x/2, d_h = 2x, d_l = x, d_s = 16x, d_m = x^2."""
    x = positive_int("X family", "x", x)
    if x % 2:
        raise UserInputError(f"X family: x={x} must be even, so that d_a = x/2 is a whole number of heads")
    family = model_formulas.x_family()
    values = {str(sym): int(expr.subs(model_formulas.x, x)) for sym, expr in family.items()}
    return Transformer(
        name=f"X{x}",
        d_l=values["d_l"],
        d_m=values["d_m"],
        d_a=values["d_a"],
        d_h=values["d_h"],
        d_s=values["d_s"],
        n_I=values["n_I"],
        source="appendix sec:transformer_scaling",
    )


#: Named models of table:x_model; dimensions are inputs from the cited papers.
NAMED_MODELS: dict[str, Transformer] = {
    m.name: m
    for m in (
        Transformer("BERT", d_l=24, d_m=1024, d_a=16, d_h=64, d_s=512, trained_batch=256,
                    source="BERT-large, Devlin et al. (2019)"),
        Transformer("Megatron-LM", d_l=72, d_m=3072, d_a=32, d_h=96, d_s=1024, trained_batch=512,
                    source="Megatron-LM 8.3B, Shoeybi et al. (2020)"),
        Transformer("T-NLG", d_l=78, d_m=4256, d_a=28, d_h=152, d_s=1024, trained_batch=512,
                    source="Turing-NLG 17B, Microsoft (2020)"),
        Transformer("GPT-3", d_l=96, d_m=12288, d_a=96, d_h=128, d_s=2048,
                    source="GPT-3 175B, Brown et al. (2020)"),
    )
}

_X_NAME = re.compile(r"^x_?\[?(\d+)\]?$", re.IGNORECASE)


def named_model(name: str) -> Transformer:
    """A model by name: ``BERT``, ``Megatron-LM``, ``T-NLG``, ``GPT-3`` or ``X<x>`` (case-insensitive)."""
    text = str(name).strip()
    match = _X_NAME.match(text)
    if match:
        return x_model(int(match[1]))
    for key, model in NAMED_MODELS.items():
        if key.lower() == text.lower() or key.lower().replace("-", "") == text.lower().replace("-", ""):
            return model
    raise UserInputError(
        f"unknown model {name!r}; expected X<x> with an even x (e.g. X160) or one of {', '.join(NAMED_MODELS)}"
    )


@cache
def critical_batch_constant() -> float:
    """``K_c`` with ``b_c d_s = K_c N^(1/3)``, from GPT-3 at 3.2 M tokens (≈ 573)."""
    reference = NAMED_MODELS[CALIBRATION_MODEL]
    expr = model_formulas.critical_batch_constant(sympy.Float(CALIBRATION_TOKENS), sympy.Integer(reference.p_leading))
    return float(expr)


@cache
def _critical_batch_function():
    from .symbols import K_c, d_s, p

    return sympy.lambdify((K_c, p, d_s), model_formulas.critical_batch(), "math")


def critical_batch_size(model: Transformer) -> float:
    """eq:critical_batch: ``b_c = K_c N^(1/3) / d_s`` in samples, with N = ``model.p_leading``."""
    return float(_critical_batch_function()(critical_batch_constant(), model.p_leading, model.d_s))
