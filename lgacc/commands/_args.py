"""Argument types shared by the subcommands: each rejects a bad value in one line
(``argument --n-b: ...``) naming the value and the rule, before any work is done."""

from __future__ import annotations

import argparse
import math
from typing import Callable

from lgacc.errors import MAX_INT64


def count(name: str, int64: bool = True) -> Callable[[str], int]:
    """A type accepting a positive integer that fits in int64 (numpy arithmetic wraps beyond
    it) or, with ``int64=False``, any positive integer (a budget such as ``--max-gpus``,
    where a value beyond every configuration changes nothing); ``name`` is the paper's
    symbol (``n_b``), used in the message."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name}={text[:40]!r} must be a positive integer") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"{name}={value} must be a positive integer (>= 1)")
        if int64 and value > MAX_INT64:
            raise argparse.ArgumentTypeError(f"{name}={value} must be at most 2**63 - 1 = {MAX_INT64}")
        return value

    parse.__name__ = "positive integer"
    return parse


def _float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text[:40]!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text[:40]!r}")
    return value


def positive_float(text: str) -> float:
    """A finite number > 0."""
    value = _float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text[:40]!r}")
    return value
