"""The user's run on ``lgacc evaluate`` and ``lgacc optimize``: a token budget, a global batch, a price per GPU-hour.

By default the run is the paper's: ``--steps`` (100 k) steps at the critical batch ``b_c``, that is
``steps b_c d_s`` tokens.  With ``--tokens T`` the time is that of ``T / (b d_s)`` steps of the configuration
(``b = n_b n_mu b_mu`` sequences of ``d_s`` tokens each): both models' times scale by ``T / (steps b_c d_s)``.
``--global-batch B`` (default ``b``) counts the run's optimizer steps, ``T / (B d_s)``; the time is the
configuration's throughput either way.  The calculator page computes the same keys (``parseRun`` and ``runKeys``
of ``lgacc/book/jsgen/runtime.js``), and a browser test compares them to 1e-9.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from lgacc.errors import UserInputError

from ._args import count, positive_float

__all__ = ["RUN_KEYS", "EXPECTED_RUN_KEYS", "add_run_arguments", "run_keys"]

#: The run's keys (``time_days`` among the ideal model's keys is the run's time).
RUN_KEYS = ("tokens", "global_batch", "sequence_length", "run_steps", "gpu_hours", "cost")
#: The calibrated model's run keys (``expected_time_days`` is the run's expected time).
EXPECTED_RUN_KEYS = ("expected_gpu_hours", "expected_cost")


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """``--tokens``, ``--global-batch`` and ``--gpu-hour-price``."""
    parser.add_argument("--tokens", type=positive_float, default=None,
                        help="the run's training tokens (default: the paper's 100 k steps at the critical batch, "
                             "steps x b_c x d_s); the time is tokens / (b d_s) steps of the configuration")
    parser.add_argument("--global-batch", type=count("global_batch"), default=None,
                        help="the run's global batch in sequences (default: the configuration's b = n_b n_mu b_mu); "
                             "sets the optimizer steps tokens / (global batch x d_s)")
    parser.add_argument("--gpu-hour-price", type=positive_float, default=None,
                        help="price of one GPU-hour, for the cost keys (cost, expected_cost)")


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def run_keys(summary: dict[str, Any], *, d_s: int, critical_batch: float, steps: int, tokens: float | None = None,
             global_batch: int | None = None, price: float | None = None) -> dict[str, Any]:
    """The run's keys for ``summary`` (``b``, ``n_gpu``, ``time_days`` and, if present, ``expected_time_days`` at
    ``steps`` steps of the critical batch ``critical_batch``): the times of ``tokens`` tokens, the GPU-hours, the cost."""
    paper = steps * critical_batch * d_s
    scale = 1.0 if tokens is None else tokens / paper
    batch = summary["b"] if global_batch is None else global_batch
    out: dict[str, Any] = {"tokens": paper if tokens is None else tokens, "global_batch": batch, "sequence_length": d_s,
                           "run_steps": (paper if tokens is None else tokens) / (batch * d_s)}
    for prefix in ("", "expected_"):
        if f"{prefix}time_days" not in summary:
            continue
        days = summary[f"{prefix}time_days"]
        days = None if days is None else _finite(days * scale)
        hours = None if days is None else _finite(days * 24 * summary["n_gpu"])
        out[f"{prefix}time_days"] = days
        out[f"{prefix}gpu_hours"] = hours
        out[f"{prefix}cost"] = None if price is None or hours is None else _finite(hours * price)
    return out


def check_run_arguments(args: argparse.Namespace) -> None:
    """``--tokens`` and ``--steps`` both set the run's length: one of them."""
    if getattr(args, "steps", None) is not None and args.tokens is not None:
        raise UserInputError(f"--tokens {args.tokens:g} and --steps {args.steps} both set the run's length: give one")
