"""The calibrated model's constants: two fitted on measured runs, the rest fixed from measurements of kernels.

Fitted (``data/calibrated/fitted.yaml``, written by ``python -m lgacc.studies.validation.fit --write``
from the runs of ``data/validation/`` only, never from the paper's numbers):

* ``kappa``: the share of the isolated kernels' matrix-multiply speed that real training layers reach: of the
  layer GEMMs' measured efficiency at the run's shape where a measured table covers the GPU (:mod:`.gemm_table`,
  ``data/calibrated/gemm_tables.yaml``: the H100 chip's grid, the B200's table by shape from SimuMax), else of the GPU's best (``e_max``, the hardware spec's
  ``gemm_max_efficiency``, on :func:`.gemm.gemm_time`'s saturating curve);
* ``xi``: the share of an overlapped collective's time that still delays the compute it overlaps (its kernels
  take streaming multiprocessors and memory bandwidth from the GEMMs): an overlap costs
  ``max(a, b) + xi min(a, b)``.

No longer fitted (issue #35): ``eta`` (achieved bus bandwidth over link bandwidth) and the NVLink latency
``nvlink_latency_s`` come from an alpha-beta fit to a published NCCL all-reduce benchmark
(:mod:`.links`, ``data/calibrated/nccl_allreduce_busbw.yaml``): :func:`link_priors`; a GPU whose NVLink runs at the
bandwidth of another of the file's tables (H100 and H200 SXM: NVLink 4) reads its NVLink collectives from that
table (:func:`.links.nvlink_constants`, the inputs ``eta_nvl`` and ``alpha_nvl``); the B200 on its 8-GPU node reads
the all-gather and reduce-scatter fits SimuMax measured there (``data/calibrated/nccl_collective_fits.yaml``), with a
latency per rank beyond the first (``delta_nvl``; 0 for the others).

``T_0``, a fixed time per step, is no longer fitted (issue #35: a constant per-step time is not
physics; it absorbed what the model did not describe) and is 0; it stays a field so that a planner
can add a known per-step cost (data loading, checkpointing) by hand.

Fixed (not fitted), with their sources:

* ``attention_efficiency`` 0.55: FlashAttention-2 reaches 50-73 % of A100 peak forward and less
  backward (Dao 2023); it is multiplied by ``kappa`` like ``e_max``.  It serves a GPU without measured
  kernel speeds: for H100-class GPUs the recipe's ``attention_kernel`` reads its speed measured on an H100 by head
  size and sequence length (:mod:`.attention`, ``data/calibrated/attention_kernels.yaml``);
* ``kernel_latency_s`` 3 us: the fixed time per kernel, which puts the half-saturation of an A100
  GEMM near 0.8 GFLOP, as Calculon's efficiency table (0.6 of its top value at 1 GFLOP);
* ``hbm_efficiency`` 0.9: streaming kernels' share of the HBM bandwidth (Calculon 0.90, SimuMax 0.91; our H100
  measured GELU, the residual add and dropout's backward at 0.89-0.91, :mod:`.memory_bound`);
* ``norm_forward_efficiency``, ``norm_backward_efficiency``: the layer norm's share of the HBM bandwidth forward and
  backward, the medians measured on our H100 (:func:`.memory_bound.norm_shares`, about 0.60 and 0.36: a norm reduces
  before it writes, and its backward reduces its weights' gradients over the tokens).  ``hbm_efficiency`` in
  :data:`PRIORS`; :func:`link_priors` reads the measurement;
* ``infiniband_latency_s`` 20 us per collective (Calculon's A100 files); ``nvlink_latency_s`` 10 us is only the
  prior: the model reads the NCCL benchmark's (:func:`link_priors`);
* ``backward_bytes`` 1.5: backward over forward bytes of the memory-bound kernels (three tensors
  against two);
* ``fragmentation`` 0.05: Megatron-LM's estimator adds 5 % to the activations;
* ``framework_gib`` 0.0625 (64 MiB, issue #35; was an unsourced 1 GiB): the allocated memory outside the counted
  tensors: the cuBLAS workspaces PyTorch allocates from its caching allocator, one per cuBLAS handle and stream,
  of the size cuBLAS recommends for Hopper (32 MiB; ``cublasSetWorkspace`` in the cuBLAS documentation, and
  PyTorch's default there), two of them in an eager training step (the forward pass's thread and the autograd
  engine's backward thread each take a handle).  Checked, not fitted: this package's H100 steps measured 65-69 MiB
  allocated beyond the 12 bytes a parameter of their state before the first step
  (``data/calibrated/measured/h100-sxm-2026-11-26/training.csv``).  Before Hopper PyTorch's default workspace is
  8.125 MiB (48 MiB less for two, under 0.1 % of any run here).  The communication library's buffers and the CUDA
  context are outside PyTorch's pool: the validation study adds them to a device reading
  (:mod:`.device_memory`).
* ``host_step_s``, ``host_step_layer_s``, ``host_micro_batch_s``, ``host_layer_s``: an eager framework's host
  time in four terms, once a step, once a layer and step, once a micro-batch and once a layer and micro-batch
  (forward and backward), fitted to plain PyTorch steps measured on our H100 where the host sets the pace
  (:func:`.host.host_terms`, ``data/calibrated/measured/h100-sxm-2026-11-27/host.csv``): a stage is never faster
  than its host issues it (:mod:`.step`).  ``host_recompute_s``: what a recomputed forward adds per layer and
  micro-batch (:func:`.host.host_times`, ``h100-sxm-2026-11-26/training.csv``).  0 in :data:`PRIORS`;
  :func:`link_priors` reads the measurements.
* ``host_megatron_step_s``, ``host_megatron_step_layer_s``, ``host_megatron_micro_batch_s``: the same terms of
  Megatron-Core's own step, for a recipe whose ``host_framework`` is ``megatron``; ``host_megatron_layer_s``: what
  its layer costs the host beyond plain PyTorch's per layer and micro-batch; ``host_megatron_recompute_s``: what its
  recomputed forward costs (in place of ``host_recompute_s``), measured on an H100 (:func:`.host.host_terms`,
  :func:`.host.megatron_host_extra_s`, :func:`.host.megatron_host_variants`).  0 in :data:`PRIORS`.
* ``host_te_layer_s``: what Transformer Engine's layer (with Megatron-LM's default fusions) costs the host beyond
  Megatron-Core's own per layer and micro-batch, for a recipe whose ``host_framework`` is ``megatron_te``, both
  measured on one H200 lease (:func:`.host.te_host_extra_s`).  0 in :data:`PRIORS`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from lgacc.errors import UserInputError
from lgacc.paths import DATA
from lgacc.yamlfile import load_yaml_mapping

__all__ = ["Calibration", "FITTED", "FITTED_FILE", "PRIORS", "fitted_calibration", "link_priors"]

#: The two fitted parameters, in the order the fit varies them.
FITTED = ("kappa", "xi")
FITTED_FILE = DATA / "calibrated" / "fitted.yaml"


@dataclass(frozen=True)
class Calibration:
    """The constants of the calibrated model (see the module's docstring for each one's source)."""

    kappa: float = 1.0
    eta: float = 0.75
    xi: float = 0.0
    T_0: float = 0.0
    attention_efficiency: float = 0.55
    kernel_latency_s: float = 3e-6
    hbm_efficiency: float = 0.9
    norm_forward_efficiency: float = 0.9
    norm_backward_efficiency: float = 0.9
    nvlink_latency_s: float = 10e-6
    infiniband_latency_s: float = 20e-6
    backward_bytes: float = 1.5
    fragmentation: float = 0.05
    framework_gib: float = 0.0625
    host_layer_s: float = 0.0
    host_recompute_s: float = 0.0
    host_megatron_layer_s: float = 0.0
    host_megatron_recompute_s: float = 0.0
    host_step_s: float = 0.0
    host_step_layer_s: float = 0.0
    host_micro_batch_s: float = 0.0
    host_megatron_step_s: float = 0.0
    host_megatron_step_layer_s: float = 0.0
    host_megatron_micro_batch_s: float = 0.0
    host_te_layer_s: float = 0.0

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise UserInputError(f"calibration {field.name}={value!r} must be a finite number >= 0")
            object.__setattr__(self, field.name, float(value))
        for name in ("kappa", "eta", "attention_efficiency", "hbm_efficiency", "norm_forward_efficiency",
                     "norm_backward_efficiency"):
            if not 0 < getattr(self, name) <= 1.5:
                raise UserInputError(f"calibration {name}={getattr(self, name)!r} must be in (0, 1.5]")

    def replace(self, **changes: Any) -> "Calibration":
        return dataclasses.replace(self, **changes)

    def fitted(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in FITTED}


#: The priors the fit starts from and is pulled towards: kernels at their best, Calculon's bus efficiency.
PRIORS = Calibration()


def _read(path: Path) -> Calibration:
    data = load_yaml_mapping(path, "calibration file")
    values = data.get("parameters")
    if not isinstance(values, dict) or set(values) != set(FITTED):
        raise UserInputError(f"calibration file {str(path)!r}: 'parameters' must give exactly {', '.join(FITTED)}")
    return link_priors().replace(**values)


@cache
def link_priors() -> Calibration:
    """The priors with the link constants of the published NCCL benchmark (:func:`.links.link_constants`), the
    host's times measured on our H100 (:func:`.host.host_terms`, :func:`.host.host_times`) and the layer norm's
    measured shares of the bandwidth (:func:`.memory_bound.norm_shares`)."""
    from .host import host_terms, host_times, megatron_host_extra_s, megatron_host_variants, te_host_extra_s
    from .links import link_constants
    from .memory_bound import norm_shares

    eager, core = host_terms("pytorch"), host_terms("megatron")
    norm_forward, norm_backward = norm_shares()
    return PRIORS.replace(**link_constants(), host_layer_s=eager["layer_s"],
                          norm_forward_efficiency=norm_forward, norm_backward_efficiency=norm_backward,
                          host_recompute_s=host_times()["host_recompute_s"],
                          **{f"host_{name}": eager[name] for name in ("step_s", "step_layer_s", "micro_batch_s")},
                          **{f"host_megatron_{name}": core[name] for name in ("step_s", "step_layer_s", "micro_batch_s")},
                          host_megatron_layer_s=megatron_host_extra_s(),
                          host_megatron_recompute_s=megatron_host_variants()["recompute_full"],
                          host_te_layer_s=te_host_extra_s())


@cache
def fitted_calibration(path: Path | None = None) -> Calibration:
    """The calibration with the fitted parameters of ``data/calibrated/fitted.yaml`` (the priors if the file
    is absent: a source checkout before its first fit)."""
    path = FITTED_FILE if path is None else Path(path)
    if not path.is_file():
        return link_priors()
    return _read(path)
