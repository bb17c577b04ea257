"""The memory terms of one evaluation, per GPU in bytes (appendix sec:resource_usage, "Memory").

Each term reads the derivation of :mod:`lgacc.model.formulas.memory` with the same key: the training state
``12 p / (n_l n_a)`` (``state``), or ``12 p / n_gpu`` when partitioned (``state_part``); the activation
checkpoints ``2 b d_s d_m d_l / n_gpu`` (``checkpoint_memory``), times the share of micro-batches a named
schedule holds at its peak; the mixed-buffering parameter and gradient buffers ``6 p_l / n_a``
(``buffers``, table:mixed_buffering); the layer activations ``b d_s m_0 / (n_b n_mu n_a)`` (``activations``).
The state and the checkpoints can be offloaded; the buffers and the activations cannot.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .context import Context

__all__ = ["Memory", "memory_terms"]


@dataclass(frozen=True, eq=False)
class Memory:
    """Bytes per GPU of each term, at every configuration."""

    state: np.ndarray
    checkpoint: np.ndarray
    buffers: np.ndarray
    activations: np.ndarray

    @property
    def offloadable(self) -> np.ndarray:
        return self.state + self.checkpoint

    @property
    def non_offloadable(self) -> np.ndarray:
        return self.buffers + self.activations


def memory_terms(ctx: Context, state: np.ndarray | None = None, buffers: np.ndarray | None = None) -> Memory:
    """The four memory terms; a named pipeline schedule scales the checkpoints by its peak share.  ``state`` and
    ``buffers``, when given, are those of the parameters a GPU holds (:mod:`.sparse`: a mixture of experts)."""
    if state is None:
        state = np.where(ctx.partitioned, ctx.call("state_part"), ctx.call("state"))
    checkpoint = ctx.call("checkpoint_memory")
    if ctx.schedule is not None:
        checkpoint = checkpoint * np.where(ctx.pipelined, ctx.term("checkpoint_share"), 1.0)
    buffers = ctx.call("buffers") if buffers is None else buffers
    return Memory(state=state, checkpoint=checkpoint, buffers=buffers, activations=ctx.call("activations"))
