"""Mixed buffering (table:mixed_buffering, appendix sec:parameter_buffer_details): the schedule of
restores, computations and reductions that keeps two parameter buffers and one gradient buffer
per layer, the buffers alive at each of its steps, and the table of its steps.

The schedule is stepped through: a layer's buffer is alive from its first to its last use within
a phase.  :func:`lgacc.model.formulas.memory.buffer_tensors` takes the peak over the steps as the
buffer memory per GPU; :func:`mixed_buffering_table` gives each step's computation, network and
arithmetic intensity relative to the double-buffered forward step.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import sympy

from ..symbols import n_b, p_l
from .compute import forward_flops_per_token
from .tensors import HALF, Tensor

__all__ = [
    "BUFFERS_USED",
    "BUFFERS",
    "Operation",
    "BufferStep",
    "mixed_buffering_schedule",
    "buffers_alive",
    "mixed_buffering_table",
]

#: The buffers an operation of the schedule uses: computing a layer reads its parameters,
#: a restore writes them; computing gradients writes the layer's gradient buffer, a reduce reads it.
BUFFERS_USED = {
    "Activations": ("parameter",),
    "Gradients": ("parameter", "gradient"),
    "Restore": ("parameter",),
    "Reduce": ("gradient",),
}
#: Each buffer holds one layer in half precision, split over the tensor-parallel devices.
BUFFERS = {
    "parameter": Tensor("parameter buffer: one layer's parameters (half precision)", p_l, HALF, split_over=("tensor",)),
    "gradient": Tensor("gradient buffer: one layer's gradients (half precision)", p_l, HALF, split_over=("tensor",)),
}


@dataclass(frozen=True)
class Operation:
    """One operation of the buffering schedule on one layer."""

    kind: str  # "Activations", "Gradients", "Restore", "Reduce"
    layer: int  # offset from i

    @property
    def text(self) -> str:
        offset = "" if self.layer == 0 else f"{self.layer:+d}"
        return f"{self.kind}(i{offset})"

    def buffers_used(self) -> tuple[str, ...]:
        """The kinds of buffer of its layer the operation reads or writes."""
        return BUFFERS_USED[self.kind]

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

    @property
    def operations(self) -> tuple[Operation, Operation]:
        return (self.stream_1, self.stream_2)

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


def buffers_alive(schedule: tuple[BufferStep, ...] | None = None) -> list[Counter]:
    """Per step of ``schedule``, the buffers alive, by kind (``Counter({"parameter": 2, "gradient": 1})``).

    A buffer belongs to one layer, one kind and one phase (the forward and the
    backward pass restore the parameters separately).  It is alive from the first
    step that uses it to the last: a restore or a gradient computation allocates
    it, the last computation reading it (or the reduce) frees it.
    """
    steps = mixed_buffering_schedule() if schedule is None else schedule
    lifetimes: dict[tuple[str, str, int], tuple[int, int]] = {}
    for t, step in enumerate(steps):
        for op in step.operations:
            for kind in op.buffers_used():
                first, _ = lifetimes.get((kind, step.phase, op.layer), (t, t))
                lifetimes[(kind, step.phase, op.layer)] = (first, t)
    return [Counter({kind: 0 for kind in BUFFERS})
            + Counter(kind for (kind, _, _), (first, last) in lifetimes.items() if first <= t <= last)
            for t in range(len(steps))]


def mixed_buffering_table() -> list[dict[str, object]]:
    """table:mixed_buffering: each step's buffers, computation, network and intensity,
    relative to the double-buffered forward step (sympy rationals, simplified)."""
    steps = mixed_buffering_schedule()
    reference = steps[0]
    rows = []
    for step, alive in zip(steps, buffers_alive(steps)):
        computation = sympy.simplify(step.flops() / reference.flops())
        network = sympy.simplify(step.network_bytes() / reference.network_bytes())
        rows.append(
            {
                "phase": step.phase,
                "stream_1": step.stream_1.text,
                "stream_2": step.stream_2.text,
                "parameter_buffers": alive["parameter"],
                "gradient_buffers": alive["gradient"],
                "computation": computation,
                "network": network,
                "arithmetic_intensity": sympy.simplify(computation / network),
            }
        )
    return rows
