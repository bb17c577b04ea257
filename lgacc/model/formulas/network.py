"""Arithmetic intensities of every transfer: data, pipeline and tensor parallelism, offloading.

Appendix sec:resource_usage, "Network" and "CPU-GPU transfers".  Each intensity
is flops over bytes, both counted per device:

* flops: the paper's model, 2 flops per token and parameter for a forward pass,
  twice that for the backward pass and the same again for the recomputation
  (:mod:`.compute` shows this is the matrix-product count to leading order);
* bytes: bandwidth-optimal ring collectives over ``n`` devices.  In an all-gather
  (or a reduce-scatter) of ``S`` bytes each device receives ``(n-1)/n S`` and sends
  the same, ``2 (n-1)/n S`` in + out; an all-reduce is a reduce-scatter followed
  by an all-gather.

The exact forms keep ``(n_b - 1) / n_b`` and the ``(9 + n_I) d_m`` biases of
``p_l``; the paper's printed forms drop them, which :meth:`Derivation.holds`
checks.  Thresholds: InfiniBand and NVLink bandwidths are in + out, CPU-GPU is
one direction (table:hardware_bandwidth), so data and pipeline bytes are counted
in + out and offload bytes in one direction (the binding one).
"""

from __future__ import annotations

from functools import cache

import sympy

from ..symbols import b, c_gpu, d_l, d_m, d_s, epsilon, n_a, n_b, n_I, n_l, n_mu, nu_net, nu_op, p
from .derivation import Derivation, leading_order
from .memory import HALF
from .model import layer_parameters

__all__ = [
    "all_gather_bytes",
    "reduce_scatter_bytes",
    "all_reduce_bytes_per_direction",
    "forward_flops",
    "data_intensity",
    "pipeline_intensity",
    "tensor_intensity",
    "state_offload_intensity",
    "checkpoint_offload_intensity",
    "DERIVATIONS",
]

# Per-device flops of one pass over the device's share of the model, for ``samples`` samples.
PASS = {"forward": 2, "backward": 6, "step": 8}  # backward includes the recomputation


def all_gather_bytes(size: sympy.Expr, n: sympy.Expr) -> sympy.Expr:
    """Bytes in + out per device of a ring all-gather of ``size`` bytes over ``n`` devices."""
    return 2 * (n - 1) / n * size


def reduce_scatter_bytes(size: sympy.Expr, n: sympy.Expr) -> sympy.Expr:
    """Bytes in + out per device of a ring reduce-scatter (same traffic as an all-gather)."""
    return 2 * (n - 1) / n * size


def all_reduce_bytes_per_direction(size: sympy.Expr, n: sympy.Expr) -> sympy.Expr:
    """Bytes sent (equally, received) per device by a ring all-reduce: reduce-scatter + all-gather."""
    return 2 * (n - 1) / n * size


def forward_flops(samples: sympy.Expr, parameters: sympy.Expr) -> sympy.Expr:
    """Forward flops: 2 per token and parameter."""
    return 2 * samples * d_s * parameters


def _flops(kind: str, samples: sympy.Expr, parameters: sympy.Expr) -> sympy.Expr:
    return PASS[kind] // 2 * forward_flops(samples, parameters)


_SHARD = p / (n_l * n_a)  # parameters of one model-parallel instance (per data-parallel device group)
_PER_DEVICE = 1 / n_b  # a device computes 1 / n_b of the batch on its model shard


# --- data parallel ------------------------------------------------------------


def data_transfers(method: str, partitioned: bool, *, pipelined: bool = False,
                   link_bytes=None) -> dict[str, tuple[sympy.Expr, sympy.Expr, sympy.Expr]]:
    """Per pass, ``(flops, bytes, repeats)``: the compute a data-parallel transfer overlaps, its bytes
    (in + out, per device), and how many times per step it happens.

    ``method`` is ``"standard"`` (standard gradient accumulation: transfers per
    micro-batch when partitioned, the reduction overlapped with the last
    micro-batch only) or ``"layered"`` (layered gradient accumulation: once per
    batch, overlapped with the whole pass).  ``pipelined`` (standard,
    non-partitioned) compares the reduction with the whole batch: not overlapped.
    ``link_bytes(size, n)``, when given, counts the bytes of one reduce-scatter or all-gather on
    one link instead of the paper's (every byte through the device's own link; :mod:`.ring`).
    """
    scatter = reduce_scatter_bytes if link_bytes is None else link_bytes
    gather_bytes = all_gather_bytes if link_bytes is None else link_bytes
    grads = HALF * _SHARD  # bytes of the device group's half-precision gradients
    reduce = scatter(grads, n_b) + gather_bytes(grads, n_b)
    gather = gather_bytes(grads, n_b)
    batch = b * _PER_DEVICE
    micro = b * _PER_DEVICE / n_mu
    one = sympy.Integer(1)
    if method == "standard" and not partitioned:
        if pipelined:
            return {"batch": (_flops("step", batch, _SHARD), reduce, one)}
        return {"backward": (_flops("backward", micro, _SHARD), reduce, one)}
    if method == "standard" and partitioned:
        return {
            "forward": (_flops("forward", micro, _SHARD), gather, n_mu),
            "backward": (_flops("backward", micro, _SHARD), reduce, n_mu),
        }
    if method == "layered" and not partitioned:
        return {"backward": (_flops("backward", batch, _SHARD), reduce, one)}
    if method == "layered" and partitioned:
        return {
            "forward": (_flops("forward", batch, _SHARD), gather, one),
            "backward": (_flops("backward", batch, _SHARD), reduce, one),
        }
    raise ValueError(f"unknown method {method!r}")


def data_step_flops() -> sympy.Expr:
    """Flops of one training step per device of a data-parallel group (forward, recomputation, backward)."""
    return _flops("step", b * _PER_DEVICE, _SHARD)


def data_intensity(method: str, partitioned: bool, *, pipelined: bool = False) -> dict[str, sympy.Expr]:
    """Exact data-parallel intensities per pass ``{"forward": ..., "backward": ...}`` (absent = no transfer):
    flops over bytes of :func:`data_transfers`."""
    return {name: flops / size for name, (flops, size, _) in data_transfers(method, partitioned, pipelined=pipelined).items()}


def _binding(intensities: dict[str, sympy.Expr]) -> tuple[str, sympy.Expr]:
    """The pass with the lowest intensity (checked symbolically: the ratio is a constant)."""
    if len(intensities) == 1:
        return next(iter(intensities.items()))
    (k1, v1), (k2, v2) = intensities.items()
    ratio = sympy.simplify(v1 / v2)
    if not ratio.is_number:
        raise ValueError(f"cannot order {k1} and {k2}: ratio {ratio}")
    return (k1, v1) if ratio <= 1 else (k2, v2)


def _data_derivation(key: str, label: str, method: str, partitioned: bool, pipelined: bool, paper: sympy.Expr, title: str) -> Derivation:
    passes = data_intensity(method, partitioned, pipelined=pipelined)
    binding, exact = _binding(passes)
    exact = sympy.simplify(exact)
    return Derivation(
        key=key,
        label=label,
        title=title,
        exact=exact,
        paper=paper,
        limit=leading_order(exact, n_b),
        approximation="(n_b - 1)/n_b -> 1",
        details={f"{name} pass": sympy.simplify(value) for name, value in passes.items()} | {"binding pass": sympy.Symbol(binding)},
    )


@cache
def _data_base() -> Derivation:
    return _data_derivation(
        "data_intensity_base", "eq:data_intensity_base", "standard", False, False, 3 * b * d_s / (4 * n_b * n_mu),
        "Gradient reduction, baseline (overlapped with the last micro-batch)",
    )


@cache
def _data_base_pipe() -> Derivation:
    return _data_derivation(
        "data_intensity_base_pipe", "eq:data_intensity_base_pipe", "standard", False, True, b * d_s / n_b,
        "Gradient reduction, baseline with pipeline (not overlapped)",
    )


@cache
def _data_base_partition() -> Derivation:
    return _data_derivation(
        "data_intensity_base_partition", "eq:data_intensity_base_partition", "standard", True, False, b * d_s / (2 * n_b * n_mu),
        "Parameter restore and gradient reduction, partitioned (per micro-batch)",
    )


@cache
def _data_improved() -> Derivation:
    return _data_derivation(
        "data_intensity_improved", "eq:data_intensity_improved", "layered", False, False, 3 * b * d_s / (4 * n_b),
        "Gradient reduction, layered gradient accumulation",
    )


@cache
def _data_improved_partition() -> Derivation:
    return _data_derivation(
        "data_intensity_improved_partition", "eq:data_intensity_improved_partition", "layered", True, False, b * d_s / (2 * n_b),
        "Parameter restore and gradient reduction, layered and partitioned",
    )


# --- pipeline parallel ----------------------------------------------------------


def pipeline_intensity(modular: bool) -> sympy.Expr:
    """Exact pipeline intensity of the forward pass for a middle stage (receives and sends).

    Per micro-batch a stage receives the ``b_mu d_s d_m`` half-precision inputs and
    sends its outputs, split over the ``n_a`` tensor-parallel devices; standard
    stages do it once per micro-batch, modular ones after each of their
    ``d_l / n_l`` layers.
    """
    micro = b / (n_b * n_mu)
    per_transfer = 2 * HALF * micro * d_s * d_m / n_a  # in + out
    transfers = n_mu * (d_l / n_l if modular else 1)
    flops = forward_flops(b / n_b, d_l * layer_parameters() / (n_l * n_a))
    return sympy.simplify(flops / (transfers * per_transfer))


@cache
def pipeline_base() -> Derivation:
    exact = pipeline_intensity(modular=False)
    return Derivation(
        key="pipeline_intensity_base",
        label="eq:pipeline_intensity_base",
        title="Pipeline transfers, standard pipeline",
        exact=exact,
        paper=(2 + n_I) * d_m * d_l / n_l,
        limit=leading_order(exact, d_m),
        approximation="p_l ≈ (4 + 2 n_I) d_m^2 (leading order in d_m)",
        details={"bytes per batch (printed)": 4 * b * d_s * d_m / (n_b * n_a), "flops (printed)": 2 * b * d_s * p / (n_b * n_l * n_a)},
    )


@cache
def _pipeline_improved() -> Derivation:
    exact = pipeline_intensity(modular=True)
    return Derivation(
        key="pipeline_intensity_impr",
        label="eq:pipeline_intensity_impr",
        title="Pipeline transfers, modular pipeline",
        exact=exact,
        paper=(2 + n_I) * d_m,
        limit=leading_order(exact, d_m),
        approximation="p_l ≈ (4 + 2 n_I) d_m^2 (leading order in d_m)",
    )


# --- tensor parallel ------------------------------------------------------------


def tensor_bytes_per_layer(direction: str = "one") -> sympy.Expr:
    """Tensor-parallel bytes per device and layer for a batch: six all-reduces of the
    ``b d_s d_m / n_b`` half-precision activations (two in the forward pass, two in
    the recomputation, two in the backward pass).  ``direction="one"`` counts bytes
    sent (the paper's count), ``"both"`` in + out."""
    size = HALF * b * d_s * d_m / n_b
    per_direction = 6 * all_reduce_bytes_per_direction(size, n_a)
    return per_direction if direction == "one" else 2 * per_direction


def tensor_intensity(direction: str = "one") -> sympy.Expr:
    """Exact tensor-parallel intensity ``8 b d_s p_l / (n_b n_a)`` flops over the all-reduce bytes."""
    flops = _flops("step", b / n_b, layer_parameters() / n_a)
    return sympy.simplify(flops / tensor_bytes_per_layer(direction))


@cache
def _tensor() -> Derivation:
    exact = tensor_intensity("one")
    return Derivation(
        key="tensor_intensity",
        label="eq:tensor_intensity",
        title="Tensor-parallel all-reduces (not overlapped)",
        exact=exact,
        paper=(4 + 2 * n_I) * d_m / (3 * (n_a - 1)),
        limit=leading_order(exact, d_m),
        approximation="p_l ≈ (4 + 2 n_I) d_m^2; all-reduce bytes counted in one direction, as printed "
        "(24 b d_s d_m (n_a - 1) / (n_b n_a)); in + out would halve the intensity",
        details={
            "bytes per layer (one direction)": sympy.simplify(tensor_bytes_per_layer("one")),
            "intensity counting in + out": tensor_intensity("both"),
        },
    )


# --- CPU-GPU transfers ----------------------------------------------------------


def state_offload_intensity(layered: bool, partitioned: bool) -> dict[str, sympy.Expr]:
    """Exact state-offload intensities per pass and direction.

    The device restores the half-precision weights it holds in CPU memory -- its
    model-parallel shard, or its partition -- for every micro-batch (standard) or
    once per batch (layered).  Forward: weights in; backward: weights in and
    gradients out (one direction each), against three times the computation.
    """
    held = p / (n_b * n_l * n_a) if partitioned else p / (n_l * n_a)
    transfers = 1 if layered else n_mu
    bytes_one_way = transfers * HALF * held
    forward = forward_flops(b / n_b, p / (n_l * n_a))
    return {"forward": forward / bytes_one_way, "backward": 3 * forward / bytes_one_way}


def checkpoint_offload_intensity() -> dict[str, sympy.Expr]:
    """Exact checkpoint-offload intensity: one layer output (``2 d_s d_m / n_a`` bytes per sample,
    partitioned in the tensor dimension) out in the forward pass, in again in the backward pass."""
    samples = b / n_b
    bytes_per_layer = HALF * samples * d_s * d_m / n_a
    flops = forward_flops(samples, layer_parameters() / n_a)
    return {"forward": flops / bytes_per_layer, "backward": 3 * flops / bytes_per_layer}


_STATE_PAPER = {
    (False, False): ("base", b * d_s / (n_mu * n_b)),
    (False, True): ("base-part", b * d_s / n_mu),
    (True, False): ("impr", b * d_s / n_b),
    (True, True): ("impr-part", b * d_s),
}


def _state_offload(layered: bool, partitioned: bool) -> Derivation:
    name, paper = _STATE_PAPER[(layered, partitioned)]
    passes = state_offload_intensity(layered, partitioned)
    _, exact = _binding(passes)
    exact = sympy.simplify(exact)
    return Derivation(
        key=f"state_offload_intensity_{name.replace('-', '_')}",
        label="eq:state_offload_intensity",
        title=f"State offload, nu_s^{name}",
        exact=exact,
        paper=paper,
        limit=exact,
        approximation="none (the forward pass is binding: the backward has 3x the flops per byte each way)",
        details={f"{k} pass": sympy.simplify(v) for k, v in passes.items()},
    )


@cache
def _checkpoint_offload() -> Derivation:
    passes = checkpoint_offload_intensity()
    _, exact = _binding(passes)
    exact = sympy.simplify(exact)
    return Derivation(
        key="checkpoint_offload_intensity",
        label="eq:checkpoint_offload_intensity",
        title="Activation-checkpoint offload",
        exact=exact,
        paper=(4 + 2 * n_I) * d_m,
        limit=leading_order(exact, d_m),
        approximation="p_l ≈ (4 + 2 n_I) d_m^2 (leading order in d_m)",
        details={f"{k} pass": sympy.simplify(v) for k, v in passes.items()},
    )


# --- conditions -----------------------------------------------------------------

_F, _B, _beta = sympy.symbols("F B beta", positive=True)  # flops, bytes, bandwidth


@cache
def _overlap_condition() -> Derivation:
    """eq:overlap_condition: overlapped work is compute-bound iff ``nu_op >= nu_net``.

    ``t_compute - t_transfer = F / c_gpu - B / beta``; with ``nu_op = F / B`` and
    ``nu_net = c_gpu / beta`` it equals ``(B / c_gpu) (nu_op - nu_net)``, whose sign is that of
    ``nu_op - nu_net`` since ``B / c_gpu > 0``.
    """
    exact = _F / c_gpu - _B / _beta
    paper = (_B / c_gpu) * (nu_op - nu_net)
    limit = exact
    return Derivation(
        key="overlap_condition",
        label="eq:overlap_condition",
        title="Overlap condition nu_op >= nu_net",
        exact=exact,
        paper=paper.subs({nu_op: _F / _B, nu_net: c_gpu / _beta}),
        limit=limit,
        approximation="none: t_compute - t_transfer = (B / c_gpu)(nu_op - nu_net)",
        details={"printed": (_B / c_gpu) * (nu_op - nu_net)},
    )


@cache
def _overhead_condition() -> Derivation:
    """eq:overhead_condition: a transfer that is not overlapped costs ``t_transfer / t_compute =
    nu_net / nu_op``; it stays within ``epsilon`` iff ``epsilon nu_op >= nu_net`` (``nu_op > 0``)."""
    overhead = (_B / _beta) / (_F / c_gpu)
    exact = (_F / _B) * (epsilon - overhead)
    paper = epsilon * nu_op - nu_net
    return Derivation(
        key="overhead_condition",
        label="eq:overhead_condition",
        title="Overhead condition epsilon nu_op >= nu_net",
        exact=exact,
        paper=paper.subs({nu_op: _F / _B, nu_net: c_gpu / _beta}),
        limit=exact,
        approximation="none: nu_op (epsilon - overhead) with overhead = t_transfer / t_compute = nu_net / nu_op",
        details={"overhead": sympy.simplify(overhead), "printed": paper},
    )


DERIVATIONS = (
    _data_base,
    _data_base_pipe,
    _data_base_partition,
    _data_improved,
    _data_improved_partition,
    pipeline_base,
    _pipeline_improved,
    _tensor,
    cache(lambda: _state_offload(False, False)),
    cache(lambda: _state_offload(False, True)),
    cache(lambda: _state_offload(True, False)),
    cache(lambda: _state_offload(True, True)),
    _checkpoint_offload,
    _overlap_condition,
    _overhead_condition,
)
