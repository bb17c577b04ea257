"""Memory per GPU: training state, activation checkpoints, parameter and gradient buffers, layer activations.

Appendix sec:resource_usage, "Memory" and "Parameter and gradient buffering".
Every size is a count of tensors times bytes per value:

* training state: Adam in mixed precision keeps single-precision weights, running
  mean and running variance, 3 x 4 = 12 bytes per parameter; split over the
  model-parallel devices (``12 p / (n_l n_a)``) or, partitioned, over all of them
  (``12 p / n_gpu``).  Half-precision gradients (2 p) are not kept: weights are
  updated as soon as their gradients are reduced.
* activation checkpoints: the output of each layer, ``d_s d_m`` half-precision
  values per sample, for every sample of the batch: ``2 b d_s d_m d_l / n_gpu``.
* buffers: the mixed-buffering schedule (table:mixed_buffering) keeps at most
  two parameter buffers and one gradient buffer of one layer in half precision,
  split over the tensor-parallel devices: ``3 x 2 p_l / n_a = 6 p_l / n_a``.
* layer activations: ``b d_s m_0 / (n_b n_mu n_a)``, with ``m_0`` reconstructed
  per tensor (the paper omits it; see :data:`ACTIVATION_TENSORS`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import sympy

from ..symbols import b, b_mu, d_a, d_l, d_m, d_s, m_0, n_a, n_b, n_gpu, n_I, n_l, n_mu, p, p_l
from . import Derivation
from .compute import forward_flops_per_token

__all__ = [
    "ADAM_BYTES_PER_PARAMETER",
    "HALF",
    "ACTIVATION_TENSORS",
    "activation_bytes_per_token",
    "BufferStep",
    "mixed_buffering_schedule",
    "mixed_buffering_table",
    "state_memory",
    "checkpoint_memory",
    "buffer_memory",
    "activation_memory",
    "DERIVATIONS",
]

#: Bytes of a half-precision value.
HALF = 2
#: Adam in mixed precision: fp32 weights, running mean and running variance.
ADAM_BYTES_PER_PARAMETER = 3 * 4

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


def activation_bytes_per_token() -> sympy.Expr:
    """``m_0``: bytes per token of one layer's activations, ``2 (11 + 2 n_I) d_m + 8 d_a d_s``."""
    return sympy.expand(sum(values * size for _, values, size in ACTIVATION_TENSORS))


# --- mixed buffering (table:mixed_buffering) ---------------------------------


@dataclass(frozen=True)
class Operation:
    """One operation of the buffering schedule on one layer."""

    kind: str  # "Activations", "Gradients", "Restore", "Reduce"
    layer: int  # offset from i

    @property
    def text(self) -> str:
        offset = "" if self.layer == 0 else f"{self.layer:+d}"
        return f"{self.kind}(i{offset})"

    def parameter_buffers(self) -> set[int]:
        # computing a layer reads its parameters; a restore writes the next layer's
        return {self.layer} if self.kind in ("Activations", "Gradients", "Restore") else set()

    def gradient_buffers(self) -> set[int]:
        # computing gradients writes the layer's gradient buffer; a reduce reads it
        return {self.layer} if self.kind in ("Gradients", "Reduce") else set()

    def flops(self) -> sympy.Expr:
        """Flops per token: a forward (or recomputed) layer, or its backward pass (twice the products)."""
        if self.kind == "Activations":
            return forward_flops_per_token()
        if self.kind == "Gradients":
            return 2 * forward_flops_per_token()
        return sympy.Integer(0)

    def network_bytes(self) -> sympy.Expr:
        """Bytes in + out per device: a ring all-gather (restore) or reduce-scatter (reduce) of
        the layer's half-precision parameters or gradients over n_b devices."""
        if self.kind in ("Restore", "Reduce"):
            return 2 * (n_b - 1) / n_b * HALF * p_l
        return sympy.Integer(0)


@dataclass(frozen=True)
class BufferStep:
    """One row of table:mixed_buffering: two streams running concurrently."""

    phase: str
    stream_1: Operation
    stream_2: Operation

    def parameter_buffers(self) -> int:
        return len(self.stream_1.parameter_buffers() | self.stream_2.parameter_buffers())

    def gradient_buffers(self) -> int:
        return len(self.stream_1.gradient_buffers() | self.stream_2.gradient_buffers())

    def flops(self) -> sympy.Expr:
        return self.stream_1.flops() + self.stream_2.flops()

    def network_bytes(self) -> sympy.Expr:
        return self.stream_1.network_bytes() + self.stream_2.network_bytes()


def mixed_buffering_schedule() -> tuple[BufferStep, ...]:
    """The operation sequence of sec:parameter_buffer_details.

    Forward: compute layer i-1 while restoring layer i.  Backward (layers in
    processing order): the gradients of layer i-1 are computed while layer i is
    restored; layer i is then recomputed while the gradients of i-1 are reduced,
    so one gradient buffer suffices.
    """
    A, G, R, D = "Activations", "Gradients", "Restore", "Reduce"
    return (
        BufferStep("Forward", Operation(A, -1), Operation(R, 0)),
        BufferStep("Forward", Operation(A, 0), Operation(R, 1)),
        BufferStep("Backward", Operation(G, -1), Operation(R, 0)),
        BufferStep("Backward", Operation(A, 0), Operation(D, -1)),
        BufferStep("Backward", Operation(G, 0), Operation(R, 1)),
        BufferStep("Backward", Operation(A, 1), Operation(D, 0)),
    )


def mixed_buffering_table() -> list[dict[str, object]]:
    """table:mixed_buffering: each step's buffers, computation, network and intensity,
    relative to the double-buffered forward step (sympy rationals, simplified)."""
    steps = mixed_buffering_schedule()
    reference = steps[0]
    rows = []
    for step in steps:
        computation = sympy.simplify(step.flops() / reference.flops())
        network = sympy.simplify(step.network_bytes() / reference.network_bytes())
        rows.append(
            {
                "phase": step.phase,
                "stream_1": step.stream_1.text,
                "stream_2": step.stream_2.text,
                "parameter_buffers": step.parameter_buffers(),
                "gradient_buffers": step.gradient_buffers(),
                "computation": computation,
                "network": network,
                "arithmetic_intensity": sympy.simplify(computation / network),
            }
        )
    return rows


# --- memory per GPU ---------------------------------------------------------


def state_memory(partitioned: bool) -> sympy.Expr:
    """Training state per GPU: ``12 p / (n_l n_a)`` or, partitioned, ``12 p / n_gpu``."""
    share = n_b * n_l * n_a if partitioned else n_l * n_a
    return ADAM_BYTES_PER_PARAMETER * p / share


def checkpoint_memory() -> sympy.Expr:
    """Activation checkpoints per GPU: one layer output per layer and sample, ``2 b d_s d_m d_l / n_gpu``."""
    return HALF * b * d_s * d_m * d_l / (n_b * n_l * n_a)


def buffer_memory() -> sympy.Expr:
    """Parameter and gradient buffers per GPU from the schedule: max buffers x ``2 p_l / n_a``."""
    peak = max(step.parameter_buffers() + step.gradient_buffers() for step in mixed_buffering_schedule())
    return peak * HALF * p_l / n_a


def activation_memory() -> sympy.Expr:
    """Layer activations per GPU, ``b d_s m_0 / (n_b n_mu n_a)`` with the reconstructed ``m_0``."""
    return b * d_s * activation_bytes_per_token() / (n_b * n_mu * n_a)


@cache
def _state(partitioned: bool) -> Derivation:
    printed = 12 * p / (n_gpu if partitioned else n_l * n_a)
    return Derivation(
        key="state_memory_partitioned" if partitioned else "state_memory",
        label="sec:resource_usage (Memory)",
        title="Training state per GPU" + (", partitioned" if partitioned else ""),
        exact=state_memory(partitioned),
        paper=printed.subs(n_gpu, n_b * n_l * n_a),
        limit=state_memory(partitioned),
        approximation="none (gradients are not kept: weights updated as soon as reduced)",
        details={"printed": printed},
    )


@cache
def _checkpoint() -> Derivation:
    printed = 2 * b * d_s * d_m * d_l / n_gpu
    return Derivation(
        key="checkpoint_memory",
        label="sec:resource_usage (Memory)",
        title="Activation checkpoints per GPU",
        exact=checkpoint_memory(),
        paper=printed.subs(n_gpu, n_b * n_l * n_a),
        limit=checkpoint_memory(),
        approximation="none (one half-precision layer output per layer and sample)",
        details={"printed": printed},
    )


@cache
def _buffers() -> Derivation:
    printed = 6 * p_l / n_a
    return Derivation(
        key="buffer_memory",
        label="table:mixed_buffering",
        title="Parameter and gradient buffers per GPU (mixed buffering)",
        exact=buffer_memory(),
        paper=printed,
        limit=buffer_memory(),
        approximation="none (peak of two parameter buffers and one gradient buffer)",
        details={"printed": printed},
    )


@cache
def _activations() -> Derivation:
    printed = b * d_s * m_0 / (n_b * n_mu * n_a)
    exact = activation_memory()
    in_micro_batches = exact.subs(b, b_mu * n_b * n_mu)
    return Derivation(
        key="activation_memory",
        label="sec:resource_usage (Memory)",
        title="Layer activations per GPU",
        exact=exact,
        paper=printed.subs(m_0, activation_bytes_per_token()),
        limit=exact,
        approximation="m_0 reconstructed (the paper omits it): 2 (11 + 2 n_I) d_m + 8 d_a d_s bytes per token",
        details={"m_0": activation_bytes_per_token(), "per micro-batch": sympy.simplify(in_micro_batches), "printed": printed},
    )


DERIVATIONS = (
    lambda: _state(False),
    lambda: _state(True),
    _checkpoint,
    _buffers,
    _activations,
)
