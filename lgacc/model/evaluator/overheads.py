"""The overheads of one evaluation, one function per family, each read from the declarative map (:mod:`.mapping`).

An overhead is the time a configuration loses relative to its computation: the pipeline bubble, the
tensor-parallel all-reduces (never overlapped), the pipeline transfers, the data-parallel gradient reduction,
and with offload the CPU-GPU transfers and the PCIe link they share.  Transfers are compared with the link's
arithmetic-intensity threshold ``nu_net``: overlapped, eq:overlap_condition (``max(0, nu_net / nu_op - 1)``);
not overlapped, eq:overhead_condition (``nu_net / nu_op``).  The efficiency is the product of ``1 / (1 + o)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .context import Context
from .mapping import (
    BUBBLE,
    DATA_TRANSFERS,
    PIPELINE_TRANSFERS,
    STATE_OFFLOAD,
    not_overlapped_overhead,
    overlapped_overhead,
    ring_functions,
)

__all__ = [
    "Transfer",
    "Offload",
    "layered_accumulation",
    "bubble_overhead",
    "tensor_overhead",
    "pipeline_overhead",
    "pipeline_on_nvlink",
    "data_network",
    "data_overhead",
    "offload_overheads",
]


@dataclass(frozen=True, eq=False)
class Transfer:
    """One transfer family: its overhead, its arithmetic intensity ``nu`` and whether it leaves the node."""

    overhead: np.ndarray
    nu: np.ndarray
    leaves_node: np.ndarray
    #: the share of the bytes through the GPU's network card, which the PCIe rule counts (the data-parallel
    #: transfer under ``dp_network="ring"``; 1 otherwise)
    card_share: np.ndarray | float = 1.0


@dataclass(frozen=True, eq=False)
class Offload:
    """The offload overheads and their intensities: the state, the checkpoints, and the PCIe link they share."""

    state: np.ndarray
    checkpoint: np.ndarray
    pcie: np.ndarray
    nu_state: np.ndarray
    nu_checkpoint: np.ndarray
    nu_pcie: np.ndarray


def layered_accumulation(ctx: Context) -> np.ndarray:
    """Whether each configuration accumulates gradients layer by layer (sec:layer_grad_accumulation): the
    improved method does; under a named schedule, one whose reduction window spans every micro-batch."""
    layered = np.full(ctx.shape, ctx.method.layered)
    if ctx.schedule is not None:
        layered = np.where(ctx.pipelined, ctx.term("layered_window") > 0, layered)
    return layered


def bubble_overhead(ctx: Context, layered: np.ndarray) -> np.ndarray:
    """The pipeline bubble: standard ``(n_l - 1) / n_mu`` (sec:distributed), modular ``x n_l / d_l``
    (sec:modular_pipeline), or the named schedule's closed form."""
    if ctx.schedule is None:
        return np.where(ctx.n_l > 1, ctx.by_case(BUBBLE, [layered], ctx.call), 0.0)
    return np.where(ctx.pipelined, ctx.term("bubble"), 0.0)


def tensor_overhead(ctx: Context) -> Transfer:
    """eq:tensor_intensity against NVLink, or InfiniBand for a group larger than the node (the assumption
    ``tensor_placement``), never overlapped (eq:overhead_condition)."""
    hardware = ctx.hardware
    if ctx.assumptions.tensor_placement == "node":
        on_ib = ctx.n_a > hardware.gpus_per_node
    else:
        on_ib = np.ones(ctx.shape, bool)
    link = np.where(on_ib, hardware.threshold("infiniband"), hardware.threshold("nvlink"))
    nu = np.where(ctx.n_a > 1, ctx.call("tensor_intensity"), np.inf)
    overhead = np.where(ctx.n_a > 1, not_overlapped_overhead(link / nu), 0.0)
    return Transfer(overhead, nu, on_ib)


def pipeline_overhead(ctx: Context, layered: np.ndarray) -> Transfer:
    """eq:pipeline_intensity_base (standard) or eq:pipeline_intensity_impr (modular), or the schedule's
    intensity: overlapped per the assumption ``pipeline_overlap`` (by default with enough extra micro-batches,
    ``n_mu >= n_l (1 + nu_net / nu_l)``), else not."""
    hardware, A, nl = ctx.hardware, ctx.assumptions, ctx.n_l
    on_nvlink = pipeline_on_nvlink(ctx)
    link = np.where(on_nvlink, hardware.threshold("nvlink"), hardware.threshold("infiniband"))
    if ctx.schedule is None:
        nu = np.where(nl > 1, ctx.by_case(PIPELINE_TRANSFERS, [layered], lambda e: ctx.call(e[0])), np.inf)
        chunked = layered
    else:
        nu = np.where(ctx.pipelined, ctx.term("pipeline_intensity"), np.inf)
        # physical passes: those of the standard pipeline for one chunk per device, else the modular one's
        chunked = np.full(ctx.shape, ctx.schedule == "modular") | (ctx.n_v > 1)
    ratio = link / nu
    if A.pipeline_overlap == "extra-micro-batches":
        overlapped = ctx.overlap & (ctx.n_mu >= nl * (1 + ratio * ctx.loss))
    elif A.pipeline_overlap == "always":
        overlapped = ctx.overlap
    else:
        overlapped = np.zeros(ctx.shape, bool)
    hidden = ctx.by_case(PIPELINE_TRANSFERS, [chunked], lambda e: ctx.overlapped(e[1], ratio * ctx.loss))
    overhead = np.where(nl > 1, np.where(overlapped, hidden, not_overlapped_overhead(ratio)), 0.0)
    return Transfer(overhead, nu, ~on_nvlink)


def pipeline_on_nvlink(ctx: Context) -> np.ndarray:
    """Where the pipeline transfers run on NVLink: under ``pipeline_placement="intra-node"``, when the whole
    model-parallel group fits a node (``n_l n_a <= gpus_per_node``); never under the paper's placement."""
    if ctx.assumptions.pipeline_placement == "intra-node":
        return ctx.n_l * ctx.n_a <= ctx.hardware.gpus_per_node
    return np.zeros(ctx.shape, bool)


def data_network(ctx: Context) -> tuple[np.ndarray | float, np.ndarray | float]:
    """``(nu_net, card_share)`` of the data-parallel transfer: the threshold its per-GPU intensity (the paper's
    ``nu_b``) is compared with, and the share of its bytes through the GPU's card (assumption ``dp_network``).

    ``per-gpu`` (the paper): every byte through the GPU's own InfiniBand link, ``nu_IB`` and 1.  ``ring``: the
    group's ``g`` peers on each node (ranks placed tensor, then pipeline when it runs on NVLink, then data)
    send ``1/g`` of the bytes through their cards and the rest over NVLink, the slower link binding:
    ``max(nu_IB / g, nu_NVL (g - 1) / g)``, or ``nu_NVL`` for a group inside one node
    (:mod:`lgacc.model.formulas.ring`)."""
    hardware = ctx.hardware
    nu_ib = hardware.threshold("infiniband")
    if ctx.assumptions.dp_network == "per-gpu":
        return nu_ib, 1.0
    ring = ring_functions()
    n_b = ctx.n_b.astype(float)
    inner = (ctx.n_a * np.where(pipeline_on_nvlink(ctx), ctx.n_l, 1)).astype(float)
    g = ring["peers"](n_b, inner, float(hardware.gpus_per_node))
    threshold = ring["threshold"](nu_ib, hardware.threshold("nvlink"), n_b, g)
    share = ring["card_share"](n_b, g)
    return np.broadcast_to(np.asarray(threshold, float), ctx.shape), np.broadcast_to(np.asarray(share, float), ctx.shape)


def data_overhead(ctx: Context, layered: np.ndarray, scale: np.ndarray | float = 1.0) -> Transfer:
    """The gradient reduction over the network of :func:`data_network`: eq:data_intensity_base, eq:data_intensity_base_pipe (not
    overlapped), eq:data_intensity_base_partition, eq:data_intensity_improved or
    eq:data_intensity_improved_partition by ``(layered, partitioned, pipelined)``; a named schedule widens or
    narrows the reduction window.  ``scale`` multiplies the intensity: a mixture of experts reduces the gradients
    it holds for the flops it computes (``p_active / p_held``, :mod:`.sparse`; 1 for a dense model)."""
    nb = ctx.n_b
    nu_net, card_share = data_network(ctx)
    case = [layered, ctx.partitioned, ctx.n_l > 1]
    nu = np.where(nb > 1, ctx.by_case(DATA_TRANSFERS, case, lambda e: ctx.call(e[0])), np.inf) * scale
    if ctx.schedule is not None:
        # a layered schedule hides the reduction behind its window, relative to the modular pipeline's
        nu = nu * np.where(ctx.pipelined & layered, ctx.term("data_window"), 1.0)
    ratio = nu_net / nu
    overhead = ctx.by_case(
        DATA_TRANSFERS, case,
        lambda e: ctx.overlapped(e[2], ratio * ctx.loss) if e[1] else not_overlapped_overhead(ratio),
    )
    if ctx.schedule is not None:
        # A replicated state under a schedule that does not hide the reduction behind every micro-batch
        # falls under the paper's rule for its standard pipeline (not overlapped); the schedule's own
        # window (none when d_l = n_l, as in the paper's baseline rows) may still hide it for less.
        window = ctx.term("data_overlap")
        behind = ctx.pipelined & ~layered & ~ctx.partitioned & (window > 0)
        hidden = ctx.overlapped("data_base", ratio * ctx.loss / np.where(behind, window, 1.0))
        overhead = np.where(behind, np.minimum(overhead, hidden), overhead)
    return Transfer(np.where(nb > 1, overhead, 0.0), nu, np.ones(ctx.shape, bool), card_share)


def offload_overheads(ctx: Context, layered: np.ndarray, data: Transfer, pipeline: Transfer,
                      tensor: Transfer) -> Offload:
    """eq:state_offload_intensity and eq:checkpoint_offload_intensity against the CPU-GPU link (overlapped),
    and the HGX node's PCIe link, which carries the offload and every transfer that leaves the node: the
    sum of ``1 / nu`` over those transfers must stay above the PCIe threshold.  The data-parallel transfer
    counts its bytes through the card (``card_share / nu``: all of them under ``dp_network="per-gpu"``; under
    ``ring``, the NVLink share never crosses PCIe)."""
    off, loss, hardware = ctx.offload, ctx.loss, ctx.hardware
    nu_cpu = hardware.threshold("cpu_gpu") * loss
    nu_state = np.where(off, ctx.by_case(STATE_OFFLOAD, [layered, ctx.partitioned], ctx.call), np.inf)
    nu_checkpoint = np.where(off, ctx.call("checkpoint_offload_intensity"), np.inf)
    state = np.where(off, ctx.overlapped("state_offload", nu_cpu / nu_state), 0.0)
    checkpoint = np.where(off, ctx.overlapped("checkpoint_offload", nu_cpu / nu_checkpoint), 0.0)
    inverse = 1 / nu_state + 1 / nu_checkpoint + data.card_share / data.nu + np.where(pipeline.leaves_node, 1 / pipeline.nu, 0.0)
    inverse = inverse + np.where(tensor.leaves_node, 1 / tensor.nu, 0.0)
    nu_pcie = 1 / inverse
    pcie = np.where(off, overlapped_overhead(hardware.threshold("pcie") * loss / nu_pcie), 0.0)
    return Offload(state, checkpoint, pcie, nu_state, nu_checkpoint, nu_pcie)
