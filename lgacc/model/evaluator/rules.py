"""The feasibility rules of one evaluation: one boolean array ``ok_<rule>`` per rule (sec:methodology).

A configuration breaking a rule is flagged, not rejected: :mod:`.result` words each broken rule.
"""

from __future__ import annotations

import numpy as np

from .context import Context
from .inputs import checked_product
from .mapping import CAPPED_OVERHEADS
from .memory import Memory

__all__ = ["feasibility"]


def _schedule_rule(ctx: Context) -> np.ndarray:
    """A named schedule's chunks hold whole layers (``n_l n_v`` divides ``d_l`` under ``divisible_layers``);
    interleaving needs ``n_mu`` a multiple of ``n_l``."""
    nl, nv = ctx.n_l, ctx.n_v
    if ctx.schedule is None:
        return np.ones(ctx.shape, bool)
    chunks = checked_product("the chunks n_l n_v", nl, nv)
    ok = (nl == 1) | ((chunks <= ctx.model.d_l) & ctx.assumptions.allows_layers(ctx.model.d_l, chunks))
    if ctx.schedule == "interleaved":
        ok &= (nl == 1) | (nv == 1) | (ctx.n_mu % nl == 0)
    return ok


def feasibility(ctx: Context, memory: Memory, overheads: dict[str, np.ndarray], b_c: float,
                max_overhead: float) -> dict[str, np.ndarray]:
    """``ok_batch`` (``b <= b_c``, eq:critical_batch), ``ok_micro_batches`` (``n_mu >= n_l``), ``ok_layers``
    and ``ok_layers_divide``, ``ok_heads`` and ``ok_heads_divide`` (the assumptions ``heads_cap`` and
    ``divisible_heads``), ``ok_memory`` (what cannot be offloaded, or everything without offload, fits the
    GPU; always true under ``memory_limit="output"``), ``ok_overheads`` (each capped overhead at most ``max_overhead``, eq:overhead_condition),
    ``ok_schedule``."""
    A, model = ctx.assumptions, ctx.model
    limit = ctx.hardware.memory_bytes
    # memory_limit="output": memory is reported, not a rule (the paper's scaling figures)
    fits = np.where(ctx.offload, memory.non_offloadable <= limit, memory.offloadable + memory.non_offloadable <= limit)
    return {
        "ok_batch": ctx.batch <= b_c,
        "ok_micro_batches": (ctx.n_l == 1) | (ctx.n_mu >= ctx.n_l),
        "ok_layers": ctx.n_l <= model.d_l,
        "ok_layers_divide": A.allows_layers(model.d_l, ctx.n_l),
        "ok_heads": A.replace(divisible_heads=False).allows_heads(model.d_a, ctx.n_a),
        "ok_heads_divide": A.replace(heads_cap=False).allows_heads(model.d_a, ctx.n_a),
        "ok_memory": fits | (A.memory_limit == "output"),
        "ok_overheads": np.all([overheads[name] <= max_overhead for name in CAPPED_OVERHEADS], axis=0),
        "ok_schedule": _schedule_rule(ctx),
    }
