"""Transformer models: the X_[x] family and the named models of table:x_model.

A :class:`Transformer` is validated on construction (positive integer
dimensions, ``d_m = d_a d_h``).  Its parameter counts come from the
per-operation count of :mod:`lgacc.model.formulas.model` (lambdified once):

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

import math
import numbers
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from lgacc.cache import codegen as _codegen
from lgacc.errors import UserInputError, positive_int
from lgacc.paths import DATA, PACKAGE
from lgacc.yamlfile import load_yaml_mapping

__all__ = [
    "Transformer",
    "x_model",
    "named_model",
    "load_model",
    "model_from_mapping",
    "shipped_model_files",
    "NAMED_MODELS",
    "critical_batch_size",
    "critical_batch_constant",
    "CALIBRATION_MODEL",
    "CALIBRATION_TOKENS",
    "TRILLION_X",
]

#: The paper's trillion-parameter example, X_160 (sec:trillion_parameter, 1.26 T parameters): the model
#: of its three tables and of its claims about "a trillion-parameter model".  The one place it is named.
TRILLION_X = 160

#: The paper's calibration (appendix sec:transformer_scaling): "we assume that GPT-3
#: was trained at the critical batch size (3.2 M tokens)".
CALIBRATION_MODEL = "GPT-3"
CALIBRATION_TOKENS = 3.2e6


#: The files whose expressions the generated code prints: change one and the code is rebuilt.
_SOURCES = (
    PACKAGE / "model" / "transformer.py",
    PACKAGE / "model" / "symbols.py",
    PACKAGE / "model" / "formulas" / "__init__.py",
    PACKAGE / "model" / "formulas" / "model.py",
    PACKAGE / "model" / "formulas" / "compute.py",
)
#: The sparse counts' sources (a cache of their own: the dense models' generated code is untouched).
_SPARSE_SOURCES = (*_SOURCES, PACKAGE / "model" / "formulas" / "sparse.py")
#: Arguments of the sparse counts' generated functions (the symbols of :mod:`lgacc.model.formulas.sparse`).
_SPARSE_ARGUMENTS = ("d_m", "d_a", "d_h", "d_kv", "d_I", "d_l", "d_s", "E", "k", "d_e", "n_sh", "d_dense",
                     "r_q", "r_kv", "d_hn", "d_hr", "d_hv", "n_e", "n_c")
#: Bytes per value of the expert all-to-all and the context-parallel exchange: bf16 in both precisions (an
#: assumption: FP8 training keeps the exchanged activations in bf16; DeepSeek-V3 dispatches in FP8).
EXCHANGE_BYTES = 2
#: The model-file keys of the sparse extension (issue #36), all optional; their defaults are a dense model.
SPARSE_KEYS = ("experts", "experts_per_token", "d_e", "shared_experts", "dense_layers", "decoupled_heads",
               "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim",
               "linear_biases", "layer_norm")
_LAYER_ARGUMENTS = ("d_m", "d_h", "d_kv", "d_I")
_FLOP_ARGUMENTS = (*_LAYER_ARGUMENTS, "d_s", "d_v")
_X_FAMILY_FIELDS = ("d_l", "d_m", "d_a", "d_h", "d_s", "n_I")
_LATENT_FIELDS = ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")


def _build():
    """The model's counts as sympy expressions (imports sympy; run only when the cache is stale)."""
    import sympy

    from . import symbols
    from .formulas import compute as compute_formulas
    from .formulas import model as model_formulas

    def symbol(name):
        return getattr(model_formulas, name, None) or getattr(symbols, name)

    layer = tuple(symbol(name) for name in _LAYER_ARGUMENTS)
    flop = tuple(symbol(name) for name in _FLOP_ARGUMENTS)
    functions = {}
    for gated in (False, True):
        functions[f"layer_weights:{gated}"] = (layer, model_formulas.general_layer_weights(gated))
        functions[f"layer_parameters:{gated}"] = (layer, model_formulas.general_layer_parameters(gated))
        functions[f"forward_flops_per_token:{gated}"] = (flop, compute_formulas.general_forward_flops_per_token(gated))
    functions["output_flops_per_token"] = (flop, compute_formulas.output_flops_per_token())
    family = {str(sym): expr for sym, expr in model_formulas.x_family().items()}
    for name in _X_FAMILY_FIELDS:
        # times 2: the family's fractions (d_a = x/2) stay whole numbers in the generated code
        functions[f"x_family_twice:{name}"] = ((model_formulas.x,), sympy.expand(2 * family[name]))
    tokens, p_reference = sympy.symbols("tokens p_reference", positive=True)
    functions["critical_batch_constant"] = ((tokens, p_reference), model_formulas.critical_batch_constant(tokens, p_reference))
    functions["critical_batch"] = ((symbols.K_c, symbols.p, symbols.d_s), model_formulas.critical_batch())
    return functions, {}


def _build_sparse():
    """The sparse counts (:mod:`lgacc.model.formulas.sparse`) per variant, as sympy expressions."""
    import itertools

    from . import symbols
    from .formulas import model as model_formulas
    from .formulas import sparse

    def symbol(name):
        return sparse.SPARSE_SYMBOLS.get(name) or getattr(model_formulas, name, None) or getattr(symbols, name)

    args = tuple(symbol(name) for name in _SPARSE_ARGUMENTS)
    functions = {}
    for gated, latent, biases, layer_norm in itertools.product((False, True), repeat=4):
        options = dict(gated=gated, latent=latent, biases=biases, layer_norm=layer_norm)
        tag = f"{gated}:{latent}:{biases}:{layer_norm}"
        vectors = sparse._over_layers(lambda moe: sparse.layer_vectors(moe, **options))
        functions[f"weights:{tag}"] = (args, sparse.model_weights(**options))
        functions[f"vectors:{tag}"] = (args, vectors)
        functions[f"active:{tag}"] = (args, sparse.active_weights(**options))
        functions[f"held:{tag}"] = (args, sparse.held_weights(**options))
        attention = sparse.attention_flops_per_token(latent)
        functions[f"flops:{tag}"] = (args, sympy_expand(2 * sparse.active_weights(**options) + symbols.d_l * attention))
        if not (gated or biases or layer_norm):  # the exchanges depend on the attention only
            exchange = {sparse.s_a: EXCHANGE_BYTES}
            functions[f"expert_bytes:{latent}"] = (args, sparse.expert_bytes_per_token().subs(exchange))
            functions[f"context_bytes:{latent}"] = (args, sparse.context_bytes_per_token(latent).subs(exchange))
    return functions, {}


def sympy_expand(expr):
    import sympy

    return sympy.expand(expr)


#: The committed numeric code of :func:`_build_sparse` (``lgacc/model/generated/sparse_models.py``).
SPARSE_GENERATED = _codegen.Generated("sparse_models", "lgacc.model.generated.sparse_models", _SPARSE_SOURCES,
                                      _build_sparse)


@cache
def _sparse_functions() -> dict:
    """The generated sparse counts (committed: no sympy import unless a derivation changed)."""
    return SPARSE_GENERATED.namespace()["FUNCTIONS"]


#: The committed numeric code of :func:`_build` (``lgacc/model/generated/models.py``).
GENERATED = _codegen.Generated("models", "lgacc.model.generated.models", _SOURCES, _build)


@cache
def _functions() -> dict:
    """The generated numeric functions of :func:`_build`, from the package (no sympy import when current)."""
    return GENERATED.namespace()["FUNCTIONS"]


def _layer_functions(gated: bool):
    """(weights, parameters) of one layer as functions of ``(d_m, d_h, d_kv, d_I)``."""
    functions = _functions()
    return functions[f"layer_weights:{gated}"], functions[f"layer_parameters:{gated}"]


def _forward_flops_function(gated: bool):
    functions = _functions()
    return functions[f"forward_flops_per_token:{gated}"], functions["output_flops_per_token"]


def _check_bool(owner: str, field: str, value) -> bool:
    if not isinstance(value, bool):
        raise UserInputError(f"{owner}: {field}={value!r} must be true or false")
    return value


@dataclass(frozen=True)
class Transformer:
    """A dense transformer (sec:methodology): ``d_l`` layers of width ``d_m = d_a d_h``.

    The defaults are the paper's model: feed-forward width ``d_I = n_I d_m`` with
    ``n_I = 4``, two feed-forward matrices (``gated=False``), ``d_kv = d_a``
    key/value heads, and no vocabulary (``d_v = 0``: embedding and head not
    counted).  Other models set ``d_I``, ``gated``, ``d_kv``, ``d_v`` and
    ``tied_embeddings`` (one matrix shared by the embedding and the head).

    ``n_I`` is the factor the paper's printed forms see: given, it sets
    ``d_I = n_I d_m``; after construction it is the equivalent factor for which
    ``(4 + 2 n_I) d_m^2`` equals the layer's weights (``d_I / d_m`` for an ungated
    model with ``d_kv = d_a``; not a whole number in general).

    ``trained_batch`` is the batch size the model was actually trained with, when
    the paper quotes one (table:x_model's parenthesized ``b``); display only.
    """

    name: str
    d_l: int
    d_m: int
    d_a: int
    d_h: int
    d_s: int
    n_I: int | float | None = None
    trained_batch: int | None = None
    source: str = ""
    d_I: int | None = None
    gated: bool = False
    d_kv: int | None = None
    d_v: int = 0
    tied_embeddings: bool = True
    #: The sparse extension (issue #36, :mod:`lgacc.model.formulas.sparse`): routed experts per MoE layer
    #: (0: dense), experts per token (top-k), a routed expert's width, shared experts, leading dense layers.
    experts: int = 0
    experts_per_token: int = 0
    d_e: int | None = None
    shared_experts: int = 0
    dense_layers: int = 0
    #: ``d_a d_h`` need not equal ``d_m`` (Qwen3, GPT-OSS: a query width of its own).
    decoupled_heads: bool = False
    #: Multi-head latent attention (DeepSeek-V2/V3): all five or none.
    q_lora_rank: int | None = None
    kv_lora_rank: int | None = None
    qk_nope_head_dim: int | None = None
    qk_rope_head_dim: int | None = None
    v_head_dim: int | None = None
    #: Linear layers with biases and layer norms with gain and bias (the paper's model); false: none, RMSNorm.
    linear_biases: bool = True
    layer_norm: bool = True
    #: Rotary position embeddings (RoPE): each layer rotates its queries and keys (Llama, Mistral, Qwen3, Nemotron,
    #: DeepSeek's rotary part); false: learned or ALiBi positions, nothing rotated.  No weights and no matrix
    #: products: the counts of the paper's formulas do not see it; the calibrated model streams the rotation's bytes.
    rotary: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise UserInputError(f"model: name={self.name!r} must be a non-empty string")
        owner = f"model {self.name!r}"
        for field in ("d_l", "d_m", "d_a", "d_h", "d_s"):
            object.__setattr__(self, field, positive_int(owner, field, getattr(self, field)))
        self._check_sparse(owner)
        if self.d_m != self.d_a * self.d_h and not (self.decoupled_heads or self.latent_attention):
            raise UserInputError(
                f"{owner}: d_m={self.d_m} must equal d_a * d_h = {self.d_a} * {self.d_h} = {self.d_a * self.d_h}"
                " (or set decoupled_heads: true for a query width d_a d_h of its own)"
            )
        if self.trained_batch is not None:
            object.__setattr__(self, "trained_batch", positive_int(owner, "trained_batch", self.trained_batch))
        if not isinstance(self.source, str):
            raise UserInputError(f"{owner}: source={self.source!r} must be a string")
        _check_bool(owner, "gated", self.gated)
        _check_bool(owner, "tied_embeddings", self.tied_embeddings)
        _check_bool(owner, "rotary", self.rotary)
        d_kv_value = self.d_a if self.d_kv is None else positive_int(owner, "d_kv", self.d_kv)
        if self.d_a % d_kv_value:
            raise UserInputError(f"{owner}: d_a={self.d_a} must be divisible by d_kv={d_kv_value} (key/value heads)")
        object.__setattr__(self, "d_kv", d_kv_value)
        no_vocabulary = (isinstance(self.d_v, numbers.Real) and not isinstance(self.d_v, bool)
                         and type(self.d_v).__name__ != "bool_" and self.d_v == 0)
        if no_vocabulary:
            object.__setattr__(self, "d_v", 0)
        else:
            try:
                object.__setattr__(self, "d_v", positive_int(owner, "d_v", self.d_v))
            except UserInputError:
                raise UserInputError(
                    f"{owner}: d_v={self.d_v!r} must be a whole number >= 0 and at most 2**63 - 1 "
                    "(0: vocabulary not counted)"
                ) from None
        if self.n_I is not None:
            n_I_given = positive_int(owner, "n_I", self.n_I)
            if self.d_I is not None and self.d_I != n_I_given * self.d_m:
                raise UserInputError(f"{owner}: d_I={self.d_I} and n_I={n_I_given} disagree (d_I = n_I d_m); give one")
            object.__setattr__(self, "d_I", n_I_given * self.d_m)
        elif self.d_I is None:
            object.__setattr__(self, "d_I", 4 * self.d_m)
        else:
            object.__setattr__(self, "d_I", positive_int(owner, "d_I", self.d_I))
        if self._extended:
            self._check_sparse_counts(owner)
        twice_equivalent = self.layer_weights // self.d_m**2 - 4
        exact = self.layer_weights % self.d_m**2 == 0 and twice_equivalent % 2 == 0
        equivalent = twice_equivalent // 2 if exact else (self.layer_weights / self.d_m**2 - 4) / 2
        object.__setattr__(self, "n_I", equivalent)

    def _check_sparse(self, owner: str) -> None:
        """The sparse extension's fields: whole numbers in range, consistent with one another."""
        for field in ("decoupled_heads", "linear_biases", "layer_norm"):
            _check_bool(owner, field, getattr(self, field))
        for field in ("experts", "experts_per_token", "shared_experts", "dense_layers"):
            value = getattr(self, field)
            if value != 0:
                object.__setattr__(self, field, positive_int(owner, field, value))
            elif isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise UserInputError(f"{owner}: {field}={value!r} must be a whole number >= 0")
            else:
                object.__setattr__(self, field, 0)
        if self.experts:
            if not 1 <= self.experts_per_token <= self.experts:
                raise UserInputError(f"{owner}: experts_per_token={self.experts_per_token} must be between 1 and "
                                     f"experts={self.experts} (top-k routing)")
            if self.d_e is None:
                raise UserInputError(f"{owner}: d_e (a routed expert's width) is required with experts={self.experts}")
            object.__setattr__(self, "d_e", positive_int(owner, "d_e", self.d_e))
            if self.dense_layers >= self.d_l:
                raise UserInputError(f"{owner}: dense_layers={self.dense_layers} must be below d_l={self.d_l} "
                                     "(at least one MoE layer)")
        else:
            for field in ("experts_per_token", "shared_experts", "dense_layers", "d_e"):
                if getattr(self, field) not in (0, None):
                    raise UserInputError(f"{owner}: {field}={getattr(self, field)!r} needs experts > 0 "
                                         "(experts: 0 is a dense model)")
        latent = [getattr(self, f) for f in _LATENT_FIELDS]
        if any(v is not None for v in latent):
            if any(v is None for v in latent):
                missing = next(f for f in _LATENT_FIELDS if getattr(self, f) is None)
                raise UserInputError(f"{owner}: {missing} is missing; latent attention needs all of "
                                     f"{', '.join(_LATENT_FIELDS)}")
            for field in _LATENT_FIELDS:
                object.__setattr__(self, field, positive_int(owner, field, getattr(self, field)))

    def _check_sparse_counts(self, owner: str) -> None:
        """The sparse counts are finite numbers below 2**63 (a file's huge dimensions give one clear line)."""
        try:
            values = [self._sparse(what) for what in ("weights", "vectors", "active", "flops")]
            values.append(self._sparse("held", float(max(self.experts, 1))))
            ok = all(math.isfinite(float(v)) and 0 <= float(v) < 2.0**63 for v in values)
        except (OverflowError, ValueError, ZeroDivisionError):
            ok = False
        if not ok:
            raise UserInputError(f"{owner}: the parameter or flop counts of these dimensions are beyond the supported "
                                 "range (below 2**63)")

    @property
    def latent_attention(self) -> bool:
        """Multi-head latent attention (DeepSeek-V2/V3)."""
        return self.q_lora_rank is not None

    @property
    def rotary_width(self) -> int:
        """Values a token's rotary position embedding rotates in one layer: the queries' and the keys' heads
        (``(d_a + d_kv) d_h``), under latent attention their rotary parts only (``(d_a + 1) d_hr``: one key part
        shared by the heads); 0 without rotary positions."""
        if not self.rotary:
            return 0
        if self.latent_attention:
            return (self.d_a + 1) * self.qk_rope_head_dim
        return (self.d_a + self.d_kv) * self.d_h

    @property
    def is_sparse(self) -> bool:
        """A mixture of experts (``experts > 0``)."""
        return self.experts > 0

    @property
    def _extended(self) -> bool:
        """Counted by :mod:`lgacc.model.formulas.sparse` (experts, another attention or no biases); the
        paper's models and every dense file of today keep the counts of :mod:`lgacc.model.formulas.model`."""
        return (self.is_sparse or self.latent_attention or self.decoupled_heads
                or not self.linear_biases or not self.layer_norm)

    def _sparse_args(self, n_e=1.0, n_c=1.0) -> tuple:
        latent = [getattr(self, f) or 1 for f in _LATENT_FIELDS]
        return (self.d_m, self.d_a, self.d_h, self.d_kv, self.d_I, self.d_l, self.d_s, self.experts,
                self.experts_per_token, self.d_e or 1, self.shared_experts,
                self.dense_layers if self.is_sparse else self.d_l, *latent, n_e, n_c)

    def _sparse(self, what: str, n_e: float = 1.0) -> float:
        tag = f"{self.gated}:{self.latent_attention}:{self.linear_biases}:{self.layer_norm}"
        return _sparse_functions()[f"{what}:{tag}"](*self._sparse_args(n_e))

    @property
    def moe_layers(self) -> int:
        """Layers with experts: ``d_l - dense_layers`` (0 for a dense model)."""
        return self.d_l - self.dense_layers if self.is_sparse else 0

    def expert_bytes_per_token(self, n_e):
        """Bytes a GPU sends and receives per token and MoE layer in a step's expert all-to-alls
        (:func:`lgacc.model.formulas.sparse.expert_bytes_per_token`; 0 at ``n_e = 1``). ``n_e`` may be an array."""
        k = self.experts_per_token if self.is_sparse else 0
        return _sparse_functions()[f"expert_bytes:{self.latent_attention}"](*self._sparse_args_k(k, n_e, 1.0))

    def context_bytes_per_token(self, n_c):
        """Bytes a GPU exchanges per token of its shard and layer under context parallelism
        (:func:`lgacc.model.formulas.sparse.context_bytes_per_token`; 0 at ``n_c = 1``). ``n_c`` may be an array."""
        return _sparse_functions()[f"context_bytes:{self.latent_attention}"](*self._sparse_args(1.0, n_c))

    def _sparse_args_k(self, k, n_e, n_c) -> tuple:
        args = list(self._sparse_args(n_e, n_c))
        args[_SPARSE_ARGUMENTS.index("k")] = k
        return tuple(args)

    def _layer_args(self) -> tuple[int, int, int, int]:
        return (self.d_m, self.d_h, self.d_kv, self.d_I)

    @property
    def layer_weights(self) -> int | float:
        """Matrix weights of one layer (``(4 + 2 n_I) d_m^2`` for the paper's model); the average over the
        layers of a sparse model, every expert counted."""
        if self._extended:
            total = round(self._sparse("weights"))
            return total // self.d_l if total % self.d_l == 0 else total / self.d_l
        return int(_layer_functions(self.gated)[0](*self._layer_args()))

    @property
    def p_l(self) -> int | float:
        """Exact parameters per layer (``(4 + 2 n_I) d_m^2 + (9 + n_I) d_m`` for the paper's model); the
        average over the layers of a sparse model."""
        if self._extended:
            return self.p // self.d_l if self.p % self.d_l == 0 else self.p / self.d_l
        return int(_layer_functions(self.gated)[1](*self._layer_args()))

    @property
    def p(self) -> int:
        """Exact parameters of the layers, ``d_l p_l`` (embedding and language-model head excluded)."""
        if self._extended:
            return round(self._sparse("weights")) + round(self._sparse("vectors"))
        return self.d_l * self.p_l

    @property
    def p_active_leading(self) -> int | float:
        """Weights of the layers one token meets (every weight of a dense model: :attr:`p_leading`)."""
        return round(self._sparse("active")) if self.is_sparse else self.p_leading

    @property
    def p_active(self) -> float:
        """Exact parameters of the layers one token meets: :attr:`p` less the routed experts it skips."""
        if not self.is_sparse:
            return self.p
        skipped = self.p_leading - self.p_active_leading
        one_expert_vectors = ((2 if self.gated else 1) * self.d_e + self.d_m) if self.linear_biases else 0
        unused = (self.d_l - self.dense_layers) * (self.experts - self.experts_per_token) * one_expert_vectors
        return self.p - skipped - unused

    def p_held(self, n_e: int = 1) -> float:
        """Parameters of the layers one of ``n_e`` expert-parallel ranks holds: the routed experts divided by
        ``n_e``, the rest whole (:attr:`p` at ``n_e = 1``)."""
        if not self.is_sparse:
            return self.p
        weights_held = self._sparse("held", float(n_e))
        vectors = self.p - self.p_leading
        one_expert_vectors = ((2 if self.gated else 1) * self.d_e + self.d_m) if self.linear_biases else 0
        routed_vectors = (self.d_l - self.dense_layers) * self.experts * one_expert_vectors
        return weights_held + vectors - routed_vectors * (1 - 1 / n_e)

    @property
    def p_active_total(self) -> float:
        """Active parameters with the embedding and head, as model cards count them."""
        return self.p_active + self.p_embedding

    @property
    def p_embedding(self) -> int:
        """Embedding parameters ``d_v d_m``, doubled for an untied head; 0 without a vocabulary."""
        return (1 if self.tied_embeddings else 2) * self.d_v * self.d_m

    @property
    def p_total(self) -> int:
        """All parameters as model cards count them: layers, embedding and head."""
        return self.p + self.p_embedding

    @property
    def p_leading(self) -> int:
        """``(4 + 2 n_I) d_m^2 d_l``: the paper's ``p ≈`` and Kaplan et al.'s N (the layers' weights)."""
        if self._extended:
            return round(self._sparse("weights"))
        return self.d_l * self.layer_weights

    @property
    def critical_batch(self) -> float:
        """Critical batch size in samples (eq:critical_batch)."""
        return critical_batch_size(self)

    def forward_flops_per_token(self, output_layer: bool = True) -> float:
        """Exact forward flops per token: every layer's matrix products, attention included,
        and the language-model head ``2 d_v d_m`` when ``output_layer`` (zero when ``d_v = 0``)."""
        layer, head = _forward_flops_function(self.gated)
        args = (*self._layer_args(), self.d_s, self.d_v)
        if self._extended:  # the sparse extension's count: active weights and the attention products
            return float(self._sparse("flops")) + (head(*args) if output_layer else 0.0)
        return self.d_l * layer(*args) + (head(*args) if output_layer else 0.0)

    def dims(self) -> dict[str, int]:
        return {"d_s": self.d_s, "d_m": self.d_m, "d_l": self.d_l, "d_a": self.d_a, "d_h": self.d_h, "n_I": self.n_I}


def x_model(x: int) -> Transformer:
    """The model X_[x] (appendix sec:transformer_scaling): d_a = x/2, d_h = 2x, d_l = x, d_s = 16x, d_m = x^2."""
    x = positive_int("X family", "x", x)
    if x % 2:
        raise UserInputError(f"X family: x={x} must be even, so that d_a = x/2 is a whole number of heads")
    functions = _functions()
    values = {name: functions[f"x_family_twice:{name}"](x) // 2 for name in _X_FAMILY_FIELDS}
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


#: Default folder of the shipped model specifications.
DATA_DIR = DATA / "models"
#: Keys of a model file: required, then optional.
REQUIRED_KEYS = ("d_l", "d_m", "d_a", "d_h", "d_s")
OPTIONAL_KEYS = ("name", "source", "d_I", "n_I", "gated", "d_kv", "d_v", "tied_embeddings", "trained_batch",
                 "parameters_published", "parameters_source", *SPARSE_KEYS, "active_parameters_published",
                 "active_parameters_scope", "rotary")
#: Keys that quote a source and do not describe the model.
_QUOTED_KEYS = ("parameters_published", "parameters_source", "active_parameters_published", "active_parameters_scope")
#: Models of table:x_model (the rest of the shipped files are other models).
TABLE_MODELS = ("BERT", "Megatron-LM", "T-NLG", "GPT-3")


def _read_yaml(path: Path) -> dict:
    """The one place a model file is parsed: the hardware specs' safe reader (:mod:`lgacc.yamlfile`:
    UTF-8, at most 1 MB, no aliases or duplicate keys, YAML 1.2 numbers, bounded nesting)."""
    return load_yaml_mapping(path, "model file")


def _published(origin: str, spec: dict) -> None:
    """The quoted parameter count and its source, when given: a positive number and a string."""
    if "parameters_published" in spec:
        value = spec["parameters_published"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
            raise UserInputError(
                f"model file {origin}: parameters_published={value!r} must be a positive number"
            )
    if not isinstance(spec.get("parameters_source", ""), str):
        raise UserInputError(f"model file {origin}: parameters_source={spec['parameters_source']!r} must be a string")


def model_from_mapping(spec, origin: str = "<mapping>") -> Transformer:
    """A :class:`Transformer` from a file's mapping; one clear line per bad field."""
    if not isinstance(spec, dict):
        raise UserInputError(f"model file {origin}: must be a mapping of keys to values, got {type(spec).__name__}")
    unknown = sorted(str(k) for k in spec if k not in REQUIRED_KEYS + OPTIONAL_KEYS)
    if unknown:
        raise UserInputError(
            f"model file {origin}: unknown key {unknown[0]!r}; allowed keys are {', '.join(REQUIRED_KEYS + OPTIONAL_KEYS)}"
        )
    missing = [k for k in REQUIRED_KEYS if k not in spec]
    if missing:
        raise UserInputError(f"model file {origin}: missing required key {missing[0]!r}")
    _published(origin, spec)
    values = {k: spec[k] for k in spec if k not in _QUOTED_KEYS}
    values.setdefault("name", Path(origin).stem)
    try:
        return Transformer(**values)
    except UserInputError as error:
        raise UserInputError(f"model file {origin}: {error}") from None


@cache
def _shipped(path: str) -> Transformer:
    return model_from_mapping(_read_yaml(Path(path)), origin=path)


def shipped_model_files(data_dir: Path = DATA_DIR) -> dict[str, Path]:
    """Shipped model files by model name."""
    return {_shipped(str(path)).name: path for path in sorted(data_dir.glob("*.yaml"))}


def published_parameters(path: Path) -> tuple[float, str] | None:
    """The parameter count a model file quotes from its source, with the source, if any."""
    spec = _read_yaml(Path(path))
    _published(str(path), spec)
    if "parameters_published" in spec:
        return float(spec["parameters_published"]), str(spec.get("parameters_source", ""))
    return None


def _is_path(text: str) -> bool:
    return "/" in text or text.endswith((".yaml", ".yml"))


def load_model(name_or_path: "str | Path | Transformer") -> Transformer:
    """A model by name (``X<x>`` or a shipped file's name, case- and dash-insensitive) or by path.

    A path contains a ``/`` or ends in ``.yaml``; names resolve only to shipped
    files and paths only to paths.
    """
    if isinstance(name_or_path, Transformer):
        return name_or_path
    text = str(name_or_path).strip()
    if _is_path(text):
        return model_from_mapping(_read_yaml(Path(text)), origin=text)
    match = _X_NAME.match(text)
    if match:
        return x_model(int(match[1]))
    key = text.lower().replace("-", "").replace("_", "")
    for path in sorted(DATA_DIR.glob("*.yaml")):  # by file name first: one file read, not every shipped one
        if path.stem.lower().replace("-", "").replace("_", "") == key:
            return _shipped(str(path))
    for name, path in shipped_model_files().items():
        if name.lower().replace("-", "").replace("_", "") == key or path.stem.lower().replace("-", "").replace("_", "") == key:
            return _shipped(str(path))
    number = _X_NUMBER.match(text)
    if number:  # X-10, X2.5: the X family's own rule, as for X0 (one wording for every bad x)
        raise UserInputError(f"X family: x={number[1]} must be a positive integer (>= 1)")
    raise UserInputError(
        f"unknown model {text!r}; expected X<x> with an even x (e.g. X160), one of "
        f"{', '.join(shipped_model_files())}, or a path to a .yaml file"
    )


_X_NAME = re.compile(r"^x_?\[?(\d+)\]?$", re.IGNORECASE)
#: An X name whose x is a number but not a count (X-10, X2.5, X1e3).
_X_NUMBER = re.compile(r"^x_?\[?([-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)\]?$", re.IGNORECASE)


def named_model(name: "str | Path | Transformer") -> Transformer:
    """Same as :func:`load_model`: ``X<x>``, a shipped name (``GPT-3``, ``llama-3-8b``...) or a path."""
    return load_model(name)


#: Named models of table:x_model, from their files in ``data/models/``.
def __getattr__(name: str):
    """``NAMED_MODELS``: the named models of table:x_model, read from ``data/models/`` on first use (a command
    that names none does not read their files)."""
    if name != "NAMED_MODELS":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    models = {model: load_model(model) for model in TABLE_MODELS}
    globals()["NAMED_MODELS"] = models
    return models


@cache
def critical_batch_constant() -> float:
    """``K_c`` with ``b_c d_s = K_c N^(1/3)``, from GPT-3 at 3.2 M tokens (≈ 573)."""
    reference = load_model(CALIBRATION_MODEL)
    return float(_functions()["critical_batch_constant"](CALIBRATION_TOKENS, reference.p_leading))


@cache
def _critical_batch_function():
    return _functions()["critical_batch"]


def critical_batch_size(model: Transformer) -> float:
    """eq:critical_batch: ``b_c = K_c N^(1/3) / d_s`` in samples, with N = ``model.p_active_leading``: the
    layers' weights (``p_leading``) for a dense model, the weights a token meets for a mixture of experts (an
    assumption: Kaplan et al.'s N of a dense model of the same compute per token)."""
    return float(_critical_batch_function()(critical_batch_constant(), model.p_active_leading, model.d_s))
