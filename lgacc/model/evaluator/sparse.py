"""Experts, context parallelism and FP8 in the ideal model (issue #36): the paper's rules, extended.

The paper's evaluation reads a model through seven numbers (``d_s, d_m, d_l, d_a, n_I, p, p_l``: the generated
functions' arguments).  A mixture of experts, context parallelism and FP8 change *which* numbers each term reads,
not the rules:

* **compute** (every flop count, the activations, the checkpoints, the tensor and pipeline intensities) reads the
  *active* model (:attr:`Transformer.p_active`: the weights a token meets), with the sequence split over the
  ``n_c`` context-parallel GPUs (``d_s / n_c`` tokens of each sample on each GPU);
* **the training state** reads the parameters a GPU holds: every expert, the routed ones divided over ``n_e``
  (:meth:`Transformer.p_held`); partitioned, the whole model over the ``n_b n_c n_l n_a`` GPUs (the dense
  parameters over the data- and context-parallel ranks, the experts over the expert data-parallel ranks
  ``n_b n_c / n_e``: the same share, see :data:`lgacc.model.config.FOLDING`);
* **the gradient reduction** moves the held gradients for the active flops: its intensity is the active model's
  times ``p_active / p_held``;
* **two new network overheads**: the expert all-to-all (dispatch and combine, eq:overhead_condition: not
  overlapped, like the tensor all-reduce it sits between two products of a layer), on NVLink when the expert group
  ``n_e n_a`` fits a node, else InfiniBand; the context-parallel key-value exchange (ring attention, overlapped
  with the layer, eq:overlap_condition), on NVLink when ``n_c n_a`` fits a node.  Both are capped by the 25 %
  rule (``max_overhead``) like every other network overhead;
* **FP8** computes at the spec's dense FP8 peak (:meth:`Hardware.at_precision`): the same bytes meet twice the
  flop/s, so every link's threshold doubles; state, checkpoints and transfers stay as in bf16.

At ``experts = 0``, ``n_e = n_c = 1`` and bf16 each context here is the paper's (the active model, the held
model and the model are the same seven numbers) and both new overheads are zero: the evaluation is today's,
exactly (tested on a grid of configurations).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from lgacc.errors import UserInputError

from ..config import parse_precision
from ..transformer import Transformer
from .context import Context
from .inputs import as_int_array, broadcast_together, checked_product

__all__ = ["SPARSE_OVERHEADS", "Shape", "Sparse", "sparse_setup", "expert_overhead", "context_overhead"]

#: The overheads the extension adds (zero for a dense model without context parallelism), reported beside
#: :data:`lgacc.model.evaluator.mapping.OVERHEADS` and capped like them.
SPARSE_OVERHEADS = ("expert", "context")


@dataclass(frozen=True)
class Shape:
    """What the generated functions read of a model (:meth:`Context.model_args`), with the rules' ``name``."""

    name: str
    d_s: float
    d_m: int
    d_l: int
    d_a: int
    n_I: float
    p: float
    p_l: float


def _shape(model: Transformer, *, d_s=None, p=None, n_I=None) -> Shape:
    p = model.p if p is None else p
    p_l = model.p_l if p is model.p else p / model.d_l
    return Shape(model.name, model.d_s if d_s is None else d_s, model.d_m, model.d_l, model.d_a,
                 model.n_I if n_I is None else n_I, p, p_l)


@dataclass(frozen=True, eq=False)
class Sparse:
    """The contexts each family of terms reads, and the degrees."""

    compute: Context
    state: Context
    n_e: np.ndarray
    n_c: np.ndarray
    #: the gradient reduction's intensity over the active model's: ``p_active / p_held``
    data_scale: np.ndarray | float
    n_gpu: np.ndarray
    ok_experts: np.ndarray
    ok_context: np.ndarray


def _active_n_I(model: Transformer) -> float:
    """The feed-forward factor of the active model: ``(4 + 2 n_I) d_m^2`` equals the active weights per layer."""
    if not model.is_sparse:
        return model.n_I
    return (model.p_active_leading / model.d_l / model.d_m**2 - 4) / 2


def sparse_setup(ctx: Context, n_e, n_c, precision) -> Sparse:
    """Check ``n_e``, ``n_c`` and ``precision`` and build the contexts of the extension (see the module)."""
    model = ctx.model
    precision = parse_precision(precision)
    ne, nc = as_int_array("n_e", n_e), as_int_array("n_c", n_c)
    if np.any(ne > 1) and not model.is_sparse:
        raise UserInputError(f"n_e={int(ne.max())} needs a model with experts; {model.name} is dense (experts: 0)")
    try:
        ne, nc = (np.broadcast_to(a, ctx.shape) for a in (ne, nc))
    except ValueError:
        broadcast_together(n_b=ctx.n_b, n_e=ne, n_c=nc)
        raise
    n_gpu = checked_product("the GPU count n_gpu = n_b n_l n_a n_c", ctx.n_gpu, nc)
    hardware = ctx.hardware.at_precision(precision)
    # every model goes through the shapes: a dense one's are its own seven numbers, as floats
    fc = nc.astype(float)
    compute_model = _shape(model, d_s=model.d_s / fc, p=float(model.p_active), n_I=_active_n_I(model))
    degrees, where = np.unique(ne, return_inverse=True)
    held = np.array([float(model.p_held(int(d))) for d in degrees])[where].reshape(ne.shape)
    state_model = _shape(model, p=held)
    scale = model.p_active / held
    experts = max(model.experts, 1)
    ok_experts = (experts % ne == 0) & ((ctx.n_b * nc) % ne == 0)
    ok_context = model.d_s % nc == 0
    compute = replace(ctx, model=compute_model, hardware=hardware)
    state = replace(ctx, model=state_model, hardware=hardware)
    return Sparse(compute, state, ne, nc, scale, n_gpu, ok_experts, ok_context)


def _link(ctx: Context, group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The threshold of the link a group of ``group`` GPUs spans (NVLink within a node, else InfiniBand)."""
    on_ib = group > ctx.hardware.gpus_per_node
    return np.where(on_ib, ctx.hardware.threshold("infiniband"), ctx.hardware.threshold("nvlink")), on_ib


def expert_overhead(model: Transformer, sparse: Sparse) -> tuple[np.ndarray, np.ndarray]:
    """``(overhead, nu_expert)``: the step's flops per token, ``8 p_active``, over the all-to-all's bytes per token,
    ``moe_layers`` times :meth:`Transformer.expert_bytes_per_token`; not overlapped (eq:overhead_condition)."""
    ctx = sparse.compute
    if not model.is_sparse:
        return np.zeros(ctx.shape), np.full(ctx.shape, np.inf)
    ne = sparse.n_e
    bytes_per_token = model.moe_layers * np.asarray(model.expert_bytes_per_token(ne.astype(float)), float)
    with np.errstate(divide="ignore"):
        nu = np.where(ne > 1, 8.0 * model.p_active / bytes_per_token, np.inf)
    threshold, _ = _link(ctx, ne * ctx.n_a)
    return np.where(ne > 1, threshold / nu, 0.0), nu


def context_overhead(model: Transformer, sparse: Sparse) -> tuple[np.ndarray, np.ndarray]:
    """``(overhead, nu_context)``: the step's flops per token of a GPU's shard, ``8 p_active / d_l`` a layer, over
    the key-value bytes per token and layer (:meth:`Transformer.context_bytes_per_token`); overlapped with the
    layer (eq:overlap_condition, the paper's ``max(0, nu_net / nu - 1)``)."""
    ctx, nc = sparse.compute, sparse.n_c
    if not np.any(nc > 1):
        return np.zeros(ctx.shape), np.full(ctx.shape, np.inf)
    per_layer = 8.0 * float(model.p_active) / model.d_l
    with np.errstate(divide="ignore"):
        nu = np.where(nc > 1, per_layer / np.asarray(model.context_bytes_per_token(nc.astype(float)), float), np.inf)
    threshold, _ = _link(ctx, nc * ctx.n_a)
    return np.where(nc > 1, np.maximum(0.0, threshold * ctx.loss / nu - 1), 0.0), nu
