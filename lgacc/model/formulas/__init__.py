"""Symbolic derivations of the paper's resource model.

Each formula is *derived* from per-operation counts (the flops of each matrix
multiplication, the bytes each ring collective sends, the buffers alive at each
step of a schedule) and returned as a :class:`Derivation`: the exact derived
expression, the paper's printed form, and the approximation the paper states.
:meth:`Derivation.holds` checks with sympy that the exact form, under that
approximation, *equals* the printed one (``simplify(limit - paper) == 0``).

Modules:

* :mod:`.derivation` -- the :class:`~.derivation.Derivation` record and :func:`~.derivation.leading_order`;
* :mod:`.model` -- parameter counts per operation, the critical batch size;
* :mod:`.compute` -- flops per batch and per device;
* :mod:`.tensors` -- the records the memory is counted with (:class:`~.tensors.Tensor`, bytes
  of a value, the dimensions a tensor is divided over);
* :mod:`.buffering` -- the mixed-buffering schedule (table:mixed_buffering), its buffers alive
  at each step;
* :mod:`.memory` -- training state, checkpoints, buffers (the peak of mixed buffering),
  activations, each counted tensor by tensor;
* :mod:`.network` -- data, pipeline and tensor intensities, offload intensities, conditions;
* :mod:`.ring` -- the data-parallel bytes on each link of a node under ring and hierarchical
  collectives (assumption ``dp_network``): the ring forms of the data intensities, kept apart from
  :func:`derivations` (the paper's own);
* :mod:`.bubble` -- the pipeline bubble, standard and modular;
* :mod:`.printed` -- the paper's printed formulas, parsed from their LaTeX in ``data/paper/``
  (the memory derivations take their ``paper`` side from there).

:func:`derivations` lists all of them.
"""

from __future__ import annotations

from typing import Callable

from .derivation import PAPER_APPROXIMATIONS, Derivation, leading_order

__all__ = ["Derivation", "leading_order", "derivations", "derivation", "PAPER_APPROXIMATIONS"]


def _all_builders() -> list[Callable[[], Derivation]]:
    from . import bubble, compute, memory, model, network  # sympy-heavy: imported when first asked

    return [*model.DERIVATIONS, *compute.DERIVATIONS, *memory.DERIVATIONS, *network.DERIVATIONS, *bubble.DERIVATIONS]


def derivations() -> list[Derivation]:
    """Every derivation of the resource model, in the book's order."""
    return [builder() for builder in _all_builders()]


def derivation(key: str) -> Derivation:
    """One derivation by its key (``"tensor_intensity"``) or equation label (``"eq:tensor_intensity"``)."""
    for builder in _all_builders():
        d = builder()
        if key in (d.key, d.label):
            return d
    raise KeyError(f"no derivation {key!r}")
