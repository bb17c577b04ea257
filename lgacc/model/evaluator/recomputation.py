"""The ideal model's work per step for each activation-recomputation mode: one ideal, whatever the command.

The paper assumes full activation recomputation: "tensor parallelism requires two all-reduce
operations for each transformer layer in the forward pass ... An extra two all-reduces are needed
in the gradient computation, for a total of six (when including the activation re-computation)"
(sec:resource_usage), and counts the computation per batch as ``8 b d_s p`` (four passes of
``2 p`` flops per token: forward, recomputed forward, backward twice).  That is
:data:`PAPER_RECOMPUTE`, the evaluator's default, under which every reproduction page's number is
the paper's.

Another mode changes only the work, not the overheads (which are the paper's ratios of
communication to computation): the step and training times scale by :func:`work_ratio`, the work
of the mode over the work of full recomputation,

* ``full``: ``4 F`` (the paper's); ``none``: ``3 F``; ``selective`` (Korthikanti et al.'s attention core):
  ``3 F + A``; ``op`` (torchtitan's per-operation policy, about half the forward's products again) and
  ``alternate`` (every other layer in full): ``3.5 F``,

with ``F`` the forward flops per token of the layers and ``A`` those of the attention scores and the
attention over values, ``4 d_s d_a d_h d_l``.  With the paper's printed form ``F = 2 p`` and ``A = 0``
(its count drops the attention products), so the ratios are 1, 3/4, 3/4, 7/8, 7/8; with the exact form
``F`` and ``A`` are the model's exact counts (the same as ``lgacc validate``'s ideal).
"""

from __future__ import annotations

import dataclasses

from lgacc.errors import UserInputError

from ..transformer import Transformer

__all__ = ["PAPER_RECOMPUTE", "RECOMPUTE_MODES", "EXTRA_FORWARD", "work_ratio", "with_recompute"]

#: The paper's recomputation (four passes, ``8 b d_s p``): the evaluator's default.
PAPER_RECOMPUTE = "full"
#: Forward passes of the layers' products recomputed per step, by mode (on top of forward + backward = 3).
EXTRA_FORWARD = {"full": 1.0, "selective": 0.0, "none": 0.0, "op": 0.5, "alternate": 0.5}
RECOMPUTE_MODES = tuple(EXTRA_FORWARD)


def work_ratio(model: Transformer, recompute: str = PAPER_RECOMPUTE, form: str = "paper") -> float:
    """Work of one step with ``recompute`` over the work with full recomputation (the paper's), for the
    evaluator's ``form`` (``paper``: ``8 b d_s p``; ``exact``: the exact counts, attention included)."""
    if recompute not in EXTRA_FORWARD:
        raise UserInputError(f"recompute={recompute!r} must be one of {', '.join(RECOMPUTE_MODES)}")
    if form == "paper":
        forward, attention_core = 1.0, 0.0
    else:
        forward = model.forward_flops_per_token(output_layer=False)
        attention_core = 4.0 * model.d_s * model.d_a * model.d_h * model.d_l
    selective = attention_core if recompute == "selective" else 0.0
    return ((3.0 + EXTRA_FORWARD[recompute]) * forward + selective) / (4.0 * forward)


def with_recompute(evaluation, recompute: str, form: str = "paper"):
    """``evaluation`` (an :class:`~.result.Evaluation`) with its step and training times counted for ``recompute``
    instead of its own mode: what a search that ranks by the paper's work (the ratio is the same for every
    configuration of one model, so the ranking does not change) reports for the recomputation asked for."""
    ratio = work_ratio(evaluation.model, recompute, form) / work_ratio(evaluation.model, evaluation.recompute, form)
    return dataclasses.replace(evaluation, time_days=evaluation.time_days * ratio,
                               step_time_s=evaluation.step_time_s * ratio, recompute=recompute)
