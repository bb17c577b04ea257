"""Memory per GPU: training state, activation checkpoints, parameter and gradient buffers, layer activations.

Appendix sec:resource_usage, "Memory" and "Parameter and gradient buffering".
Nothing here is a printed total: each category is *counted*, as a list of
:class:`Tensor` records (what is kept, how many values, bytes per value, how many
copies, and the parallel dimensions the copies are divided over), and its bytes
per device are the sum over that list.  The printed forms are read from the
paper's LaTeX (:mod:`.printed`) only to be compared with.  The records and the
bytes of a value are those of :mod:`.tensors`:

* training state (:func:`training_state`): Adam in mixed precision keeps three
  single-precision tensors of ``p`` values (master weights, running mean,
  running variance).  They are divided over the model-parallel devices
  (pipeline x tensor) or, partitioned, over all of them (data x pipeline x
  tensor).  The half-precision gradients are not kept (:data:`NOT_KEPT`):
  weights are updated as soon as their gradients are reduced.
* activation checkpoints (:func:`checkpoint_tensors`): the output of each layer,
  ``d_s x d_m`` half-precision values, one per sample and layer, divided over the
  data (samples), pipeline (layers) and tensor dimensions.
* buffers (:func:`buffer_tensors`): the largest total over the steps of the
  mixed-buffering schedule (table:mixed_buffering, stepped through in
  :mod:`.buffering`), each buffer one layer of half-precision values split over
  the tensor dimension.
* layer activations (:func:`activation_tensors`): the tensors of one layer,
  :data:`ACTIVATION_TENSORS` per token (``m_0``, which the paper does not
  print), for every token of the batch, divided over the data-parallel instances,
  the micro-batches and the tensor dimension.
"""

from __future__ import annotations

from collections import Counter
from functools import cache

import sympy

from ..symbols import b, b_mu, d_a, d_l, d_m, d_s, m_0, n_b, n_I, n_mu, p
from .buffering import BUFFERS, buffers_alive
from .derivation import Derivation
from .printed import paper_definitions, printed_formula
from .tensors import HALF, SINGLE, SPLIT_DEGREES, Tensor, devices_sharing, sum_bytes

# HALF, SINGLE, SPLIT_DEGREES, Tensor and devices_sharing are the counting vocabulary of .tensors,
# exported here too: a reader of the memory counts finds them where they are used.
__all__ = [
    "ADAM_BYTES_PER_PARAMETER",
    "HALF",
    "SINGLE",
    "SPLIT_DEGREES",
    "Tensor",
    "devices_sharing",
    "training_state",
    "NOT_KEPT",
    "checkpoint_tensors",
    "buffer_tensors",
    "activation_tensors",
    "memory_tensors",
    "ACTIVATION_TENSORS",
    "activation_bytes_per_token",
    "state_memory",
    "checkpoint_memory",
    "buffer_memory",
    "activation_memory",
    "DERIVATIONS",
]

# --- training state ---------------------------------------------------------------

#: Adam in mixed precision: the single-precision tensors of the training state, one value per parameter.
_ADAM_STATE = (
    ("master weights (single precision)", SINGLE),
    ("Adam running mean (first moment)", SINGLE),
    ("Adam running variance (second moment)", SINGLE),
)
#: Bytes per parameter of the training state (counted from the tensors above).
ADAM_BYTES_PER_PARAMETER = sum(size for _, size in _ADAM_STATE)
#: Which dimensions divide the state: the model-parallel ones, or, partitioned, all three.
_STATE_SPLIT = {False: ("pipeline", "tensor"), True: ("data", "pipeline", "tensor")}

#: Whole-model tensors the paper does not keep, with the reason: the half-precision gradients
#: ("an extra 2 p bytes") are reduced and applied layer by layer, and the half-precision
#: weights are converted (or restored) layer by layer ("the parameters need to be converted to
#: 16 bits before usage"), so only the buffers of :func:`buffer_tensors` hold either.
NOT_KEPT: tuple[Tensor, ...] = (
    Tensor("parameter gradients (half precision): applied as soon as reduced", p, HALF),
    Tensor("parameters (half precision): converted layer by layer into the parameter buffers", p, HALF),
)


def training_state(partitioned: bool) -> tuple[Tensor, ...]:
    """The tensors of the training state, each ``p`` values, split as the partition rule says."""
    return tuple(Tensor(name, p, size, split_over=_STATE_SPLIT[partitioned]) for name, size in _ADAM_STATE)


# --- activation checkpoints ---------------------------------------------------------


def checkpoint_tensors() -> tuple[Tensor, ...]:
    """One layer output per sample and layer, ``d_s x d_m`` half-precision values; the samples are
    divided over the data-parallel instances, the layers over the pipeline stages, and each
    output is partitioned over the tensor-parallel devices."""
    return (Tensor("layer output (the checkpoint), one per sample and layer", d_s * d_m, HALF,
                   copies=b * d_l, split_over=("data", "pipeline", "tensor")),)


# --- layer activations ------------------------------------------------------------------

#: The tensors alive at the peak of a layer's backward pass, per token, as
#: (name, values per token, bytes per value).  Forward activations are
#: recomputed from the checkpoint and all kept; a gradient of width d_m can be
#: written over an activation the backward pass no longer needs, but the softmax
#: backward needs the probabilities P, their gradient dP and produces dS at once,
#: so the two d_a d_s gradients add to the peak.  See book/assumptions.md.
ACTIVATION_TENSORS: tuple[tuple[str, sympy.Expr, int], ...] = (
    ("layer input (working copy of the checkpoint)", d_m, HALF),
    ("layer norm 1 output", d_m, HALF),
    ("query", d_m, HALF),
    ("key", d_m, HALF),
    ("value", d_m, HALF),
    ("attention scores Q K^T", d_a * d_s, HALF),
    ("attention probabilities softmax(Q K^T)", d_a * d_s, HALF),
    ("attention context P V", d_m, HALF),
    ("attention output projection", d_m, HALF),
    ("residual sum after attention", d_m, HALF),
    ("layer norm 2 output", d_m, HALF),
    ("feed-forward intermediate (before GeLU)", n_I * d_m, HALF),
    ("GeLU output", n_I * d_m, HALF),
    ("feed-forward output", d_m, HALF),
    ("residual sum (layer output)", d_m, HALF),
    ("gradient of the attention probabilities dP", d_a * d_s, HALF),
    ("gradient of the attention scores dS", d_a * d_s, HALF),
)

#: Layer activations are kept for every token of the batch, divided over the data-parallel
#: instances and the sequential micro-batches (a device holds one micro-batch of one layer at a
#: time: the layer being recomputed) and over the tensor-parallel devices.
_ACTIVATION_COPIES = b * d_s
_ACTIVATION_SPLIT = ("data", "micro-batch", "tensor")


def activation_bytes_per_token() -> sympy.Expr:
    """``m_0``: bytes per token of one layer's activations, ``2 (11 + 2 n_I) d_m + 8 d_a d_s``."""
    return sympy.expand(sum(values * size for _, values, size in ACTIVATION_TENSORS))


def activation_tensors() -> tuple[Tensor, ...]:
    """:data:`ACTIVATION_TENSORS`, one copy per token of the batch, split as the paper says."""
    return tuple(Tensor(name, values, size, copies=_ACTIVATION_COPIES, split_over=_ACTIVATION_SPLIT)
                 for name, values, size in ACTIVATION_TENSORS)


# --- parameter and gradient buffers (the peak of mixed buffering) -----------------


def buffer_tensors() -> tuple[Tensor, ...]:
    """The buffers alive at the step of the schedule where their bytes per device add up the most."""
    def at(alive: Counter) -> tuple[Tensor, ...]:
        return tuple(Tensor(tensor.name, tensor.values, tensor.bytes_per_value, sympy.Integer(alive[kind]), tensor.split_over)
                     for kind, tensor in BUFFERS.items())

    candidates = [at(alive) for alive in buffers_alive()]
    peak = sympy.Max(*(sum_bytes(c) for c in candidates))
    if isinstance(peak, sympy.Max):
        raise ValueError(f"cannot order the steps' buffer memory symbolically: {peak}")
    return next(c for c in candidates if sympy.simplify(sum_bytes(c) - peak) == 0)


# --- memory per GPU ---------------------------------------------------------


def memory_tensors(category: str) -> tuple[Tensor, ...]:
    """The counted tensors of one category: ``"state_memory"``, ``"state_memory_partitioned"``,
    ``"checkpoint_memory"``, ``"buffer_memory"`` or ``"activation_memory"``."""
    builders = {
        "state_memory": lambda: training_state(False),
        "state_memory_partitioned": lambda: training_state(True),
        "checkpoint_memory": checkpoint_tensors,
        "buffer_memory": buffer_tensors,
        "activation_memory": activation_tensors,
    }
    if category not in builders:
        raise KeyError(f"no memory category {category!r}; known: {', '.join(builders)}")
    return builders[category]()


def state_memory(partitioned: bool) -> sympy.Expr:
    """Training state per GPU, summed over :func:`training_state`: ``12 p / (n_l n_a)`` or, partitioned, ``12 p / n_gpu``."""
    return sum_bytes(training_state(partitioned))


def checkpoint_memory() -> sympy.Expr:
    """Activation checkpoints per GPU, summed over :func:`checkpoint_tensors`: ``2 b d_s d_m d_l / n_gpu``."""
    return sum_bytes(checkpoint_tensors())


def buffer_memory() -> sympy.Expr:
    """Parameter and gradient buffers per GPU at the peak of the mixed-buffering schedule: ``6 p_l / n_a``."""
    return sum_bytes(buffer_tensors())


def activation_memory(bytes_per_token: sympy.Expr | None = None) -> sympy.Expr:
    """Layer activations per GPU: every token's ``bytes_per_token`` (default: the counted
    ``m_0`` of :data:`ACTIVATION_TENSORS`), divided over the data-parallel instances, the
    micro-batches and the tensor-parallel devices, ``b d_s m_0 / (n_b n_mu n_a)``."""
    per_token = activation_bytes_per_token() if bytes_per_token is None else bytes_per_token
    return _ACTIVATION_COPIES * per_token / devices_sharing(_ACTIVATION_SPLIT)


def _paper(key: str) -> sympy.Expr:
    """The printed form of ``key``, from the paper's LaTeX, in the derivation's symbols (n_gpu = n_b n_l n_a)."""
    return printed_formula(key).subs(paper_definitions())


@cache
def _state(partitioned: bool) -> Derivation:
    key = "state_memory_partitioned" if partitioned else "state_memory"
    exact = state_memory(partitioned)
    return Derivation(
        key=key,
        label="sec:resource_usage (Memory)",
        title="Training state per GPU" + (", partitioned" if partitioned else ""),
        exact=exact,
        paper=_paper(key),
        limit=exact,
        approximation="none (gradients are not kept: weights updated as soon as reduced)",
        details={
            "bytes per parameter": sympy.Integer(ADAM_BYTES_PER_PARAMETER),
            "whole state (every device)": sum(t.total_bytes() for t in training_state(partitioned)),
            "printed whole state": printed_formula("state_memory_total"),
            "printed": printed_formula(key),
        },
    )


@cache
def _checkpoint() -> Derivation:
    exact = checkpoint_memory()
    return Derivation(
        key="checkpoint_memory",
        label="sec:resource_usage (Memory)",
        title="Activation checkpoints per GPU",
        exact=exact,
        paper=_paper("checkpoint_memory"),
        limit=exact,
        approximation="none (one half-precision layer output per layer and sample)",
        details={
            "all checkpoints (every device)": sum(t.total_bytes() for t in checkpoint_tensors()),
            "printed total": printed_formula("checkpoint_memory_total"),
            "printed": printed_formula("checkpoint_memory"),
        },
    )


@cache
def _buffers() -> Derivation:
    exact = buffer_memory()
    peak = {t.name.split(":")[0] + "s at the peak": t.copies for t in buffer_tensors()}
    return Derivation(
        key="buffer_memory",
        label="table:mixed_buffering",
        title="Parameter and gradient buffers per GPU (mixed buffering)",
        exact=exact,
        paper=_paper("buffer_memory"),
        limit=exact,
        approximation="none (the peak over the steps of the schedule)",
        details=peak | {"printed": printed_formula("buffer_memory")},
    )


@cache
def _activations() -> Derivation:
    exact = activation_memory()
    in_micro_batches = exact.subs(b, b_mu * n_b * n_mu)
    return Derivation(
        key="activation_memory",
        label="sec:resource_usage (Memory)",
        title="Layer activations per GPU",
        exact=exact,
        paper=_paper("activation_memory"),
        limit=activation_memory(m_0),
        approximation="m_0 kept as a symbol: the paper does not print its expansion (reconstructed here as "
        "2 (11 + 2 n_I) d_m + 8 d_a d_s bytes per token, checked against a hand count in the tests)",
        details={"m_0": activation_bytes_per_token(), "per micro-batch": sympy.simplify(in_micro_batches),
                 "printed": printed_formula("activation_memory")},
    )


DERIVATIONS = (
    lambda: _state(False),
    lambda: _state(True),
    _checkpoint,
    _buffers,
    _activations,
)
