"""``lgacc simulate``: simulate one training step of a standard or modular pipeline.

Prints the measured bubble beside the paper's formula (sec:distributed,
sec:modular_pipeline), the step time and each device's busy fraction.
"""

from __future__ import annotations

import argparse
import math

import pandas as pd

from lgacc.schedule import MAX_OPERATIONS, Durations
from lgacc.schedule.builders import ALIASES, SCHEDULES
from lgacc.schedule.summary import simulation

from . import SUMMARIES
from ._output import dumps

#: Largest duration accepted: sums of up to MAX_OPERATIONS of them stay exact in a float.
MAX_DURATION = 1e9


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    if abs(value) > MAX_DURATION:
        raise argparse.ArgumentTypeError(f"duration {text} is above the limit of {MAX_DURATION:g}")
    # Integral durations stay integers so the simulation and the bubble are exact.
    return int(value) if value.is_integer() else value


#: Largest byte count of one transfer: 2**53, so that the bytes of a step stay exact in a float.
MAX_TRANSFER_BYTES = 2**53


def _bytes(text: str) -> int | float:
    """A byte count: finite, at least 0, at most :data:`MAX_TRANSFER_BYTES`."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of bytes, got {text[:40]!r}") from None
    if not math.isfinite(value) or not 0 <= value <= MAX_TRANSFER_BYTES:
        raise argparse.ArgumentTypeError(f"a byte count must be from 0 to 2**53, got {text[:40]}")
    return int(value) if value.is_integer() else value


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "simulate",
        help=SUMMARIES["simulate"],
        description=(
            "Simulate one training step of a standard (contiguous, GPipe) or modular pipeline "
            "(layer i on device i mod n_l) and print the measured bubble beside the paper's "
            f"formula. Durations are per layer and micro-batch; at most {MAX_OPERATIONS:,} "
            "operations are simulated."
        ),
    )
    parser.add_argument(
        "--schedule", choices=(*SCHEDULES, *ALIASES), required=True,
        help="gpipe (alias standard), 1f1b, interleaved, breadth-first, zero-bubble (ZB-H1) or modular",
    )
    parser.add_argument("--n-v", type=_integer, default=1, help="virtual stages per device (interleaved, breadth-first; default 1)")
    parser.add_argument(
        "--transfer-bytes", type=_bytes, default=1,
        help="bytes of one pipeline transfer (one micro-batch's activations at a layer boundary); default 1",
    )
    parser.add_argument("--n-l", type=_integer, required=True, help="pipeline-parallel devices n_l")
    parser.add_argument("--n-mu", type=_integer, required=True, help="micro-batches n_mu")
    parser.add_argument("--d-l", type=_integer, required=True, help="layers d_l (a multiple of n_l)")
    parser.add_argument("--n-b", type=_integer, default=1, help="data-parallel instances n_b (default 1: no gradient reduction)")
    parser.add_argument("--state", choices=("replicated", "partitioned", "offloaded"), default="replicated")
    parser.add_argument("--forward", type=_number, default=1, help="forward duration (default 1)")
    parser.add_argument("--backward", type=_number, default=2, help="gradient computation duration (default 2)")
    parser.add_argument(
        "--no-recompute", dest="recompute", action="store_false",
        help="no activation recomputation (by default the backward pass is recompute + gradients = 1 + 2)",
    )
    parser.add_argument("--send", type=_number, default=0, help="pipeline transfer duration (default 0: free)")
    parser.add_argument("--restore", type=_number, default=0, help="parameter restore duration (default 0)")
    parser.add_argument("--reduce", type=_number, default=0, help="reduce-scatter duration; all-reduce takes twice (default 0)")
    parser.add_argument("--format", choices=("json", "table"), default="table", help="output format (default: table)")
    parser.set_defaults(handler=run)


def result(args: argparse.Namespace) -> dict:
    """The simulation's measurements as plain numbers (:func:`lgacc.schedule.summary.simulation`)."""
    durations = Durations(
        forward=args.forward, backward=args.backward, recompute=args.recompute,
        send=args.send, restore=args.restore, reduce=args.reduce,
    )
    values, _ = simulation(args.schedule, args.n_l, args.n_mu, args.d_l, n_v=args.n_v, n_b=args.n_b, state=args.state,
                           durations=durations, transfer_bytes=args.transfer_bytes)
    return values


def run(args: argparse.Namespace) -> int:
    values = result(args)
    if args.format == "json":
        print(dumps(values))
        return 0
    rows = [
        (key, ", ".join(f"{v:.4g}" for v in value) if isinstance(value, list) else ("-" if value is None else value))
        for key, value in values.items()
    ]
    print(pd.DataFrame(rows, columns=["quantity", "value"]).to_string(index=False))
    return 0


__all__ = ["register", "run", "result"]
