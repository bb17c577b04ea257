"""The vocabulary the memory derivations count with: a :class:`Tensor` kept in GPU memory, the
bytes of a value, and the parallel dimensions a tensor's copies are divided over.

Appendix sec:resource_usage, "Memory": :mod:`.memory` counts each category of memory per GPU
as a list of these records, :mod:`.buffering` the buffers of the mixed-buffering schedule.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from operator import mul

import sympy

from ..symbols import n_a, n_b, n_l, n_mu

__all__ = ["HALF", "SINGLE", "SPLIT_DEGREES", "Tensor", "devices_sharing", "sum_bytes"]

#: Bytes of a half-precision value (fp16: weights and gradients in use, activations).
HALF = 2
#: Bytes of a single-precision value (fp32: the optimizer's copy of the weights and its moments).
SINGLE = 4

#: How many devices divide a tensor along each dimension it is split over.  "micro-batch"
#: is not a device dimension: a device holds one micro-batch's activations at a time.
SPLIT_DEGREES: dict[str, sympy.Expr] = {"data": n_b, "pipeline": n_l, "tensor": n_a, "micro-batch": n_mu}


def devices_sharing(split_over: tuple[str, ...]) -> sympy.Expr:
    """Product of the degrees of the dimensions ``split_over`` (``("pipeline", "tensor")`` -> ``n_l n_a``)."""
    return reduce(mul, (SPLIT_DEGREES[name] for name in split_over), sympy.Integer(1))


@dataclass(frozen=True)
class Tensor:
    """One kind of tensor kept in GPU memory.

    ``values`` of one copy at ``bytes_per_value``; ``copies`` of it are kept (one
    per sample and layer for checkpoints, one per token for activations, one per
    live buffer); together they are divided over the parallel dimensions
    ``split_over`` (keys of :data:`SPLIT_DEGREES`).
    """

    name: str
    values: sympy.Expr
    bytes_per_value: int
    copies: sympy.Expr = sympy.Integer(1)
    split_over: tuple[str, ...] = ()

    def total_bytes(self) -> sympy.Expr:
        """Bytes of every copy, over the whole cluster (before the split)."""
        return self.copies * self.values * self.bytes_per_value

    def bytes_per_device(self) -> sympy.Expr:
        return self.total_bytes() / devices_sharing(self.split_over)


def sum_bytes(tensors: tuple[Tensor, ...]) -> sympy.Expr:
    """Bytes per device of ``tensors`` together."""
    return sum((t.bytes_per_device() for t in tensors), sympy.Integer(0))
