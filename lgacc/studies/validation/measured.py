"""What a run measured and what it computed: its step time, and the flops both sides count.

* **Measured step time**: the iteration time when the source prints one (or derives it from a
  printed throughput in tokens per second: the file says so), else the flops of one step by the
  source's own formula over the reported flop/s, ``flops / (TFLOP/s per GPU x n_gpu)``.  Formulas:
  ``megatron`` is Narayanan et al.'s ``96 B s l h^2 (1 + s/(6h) + V/(16 l h))``, which counts the
  recomputed forward pass (four passes); ``model-exact`` is the package's exact count of one
  forward and one backward pass (three), for a source whose formula is that or is not stated.
* **Work**: the flops the run did, by the same exact count, for the passes of its reading: three
  (forward, backward), one more forward with full recomputation (half of one when every other layer
  is recomputed, or with torchtitan's per-operation policy, which recomputes about half of the
  forward's products), the attention core again with selective recomputation.  The measured time and the predicted work therefore count the same
  passes whenever the run's reading is what its formula counts (an unstated recomputation is read
  as the formula's, :data:`lgacc.studies.validation.runs.DEFAULTS`, and bracketed).
"""

from __future__ import annotations

from lgacc.errors import UserInputError

from .runs import Run

__all__ = ["megatron_step_flops", "source_step_flops", "measured_step_time", "work_flops", "PASSES"]

#: Passes of the matrix products per step: forward, backward (x2) and, with full recomputation, the forward again.
PASSES = {"full": 4, "selective": 3, "none": 3, "op": 3.5, "alternate": 3.5}


def megatron_step_flops(b: int, d_s: int, d_l: int, d_m: int, d_v: int) -> float:
    """Narayanan et al. (2021), section 5.1: ``96 B s l h^2 (1 + s/(6h) + V/(16 l h))``."""
    return 96 * b * d_s * d_l * d_m**2 * (1 + d_s / (6 * d_m) + d_v / (16 * d_l * d_m))


def source_step_flops(run: Run) -> float:
    """Flops of one step by the source's own formula."""
    m = run.model
    if run.flop_formula == "megatron":
        return megatron_step_flops(run.b, m.d_s, m.d_l, m.d_m, m.d_v)
    return 3 * run.b * m.d_s * m.forward_flops_per_token()


def measured_step_time(run: Run) -> float:
    """Seconds per step: printed (or derived from a printed token throughput), else the source's flops over
    the reported TFLOP/s per GPU."""
    if "iteration_time_s" in run.reported:
        return float(run.reported["iteration_time_s"])
    if "tflops_per_gpu" not in run.reported:
        raise UserInputError(f"run {run.id!r}: reports neither an iteration time nor TFLOP/s per GPU")
    return source_step_flops(run) / (float(run.reported["tflops_per_gpu"]) * 1e12 * run.n_gpu)


def _attention_core_flops_per_token(run: Run) -> float:
    """Forward flops per token of the attention scores and attention over values, all layers: ``4 d_s d_a d_h d_l``."""
    m = run.model
    return 4 * m.d_s * m.d_a * m.d_h * m.d_l


def work_flops(run: Run) -> float:
    """Flops the run computed in one step, exact count, for the passes of its reading."""
    forward = run.b * run.model.d_s * run.model.forward_flops_per_token()
    work = PASSES[run.recomputation] * forward
    if run.recomputation == "selective":
        work += run.b * _attention_core_flops_per_token(run)
    return work
