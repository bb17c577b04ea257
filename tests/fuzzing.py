"""Shared pieces of the fuzz suite (``tests/test_fuzz_*.py``): settings, the in-process
CLI call with a time limit, and the contract every call must keep.

The contract (issue #14): exit 0 with valid JSON when JSON was asked for, or exit 2 with
exactly one line on stderr (``lgacc <command>: error: ...``); never a traceback, never
longer than :data:`TIME_LIMIT_S`.  Warning lines (``lgacc <command>: warning: ...``) may
precede a result.
"""

from __future__ import annotations

import contextlib
import io
import json
import signal
import time
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, settings

from lgacc.cli import main

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "hardware"

#: Seconds after which one example counts as hung (issue #34: a hang detector, not a speed check -- speed
#: lives in benchmarks/; a 10 s limit failed `make test` on a busy 2-core machine).
TIME_LIMIT_S = 60

#: Examples per fuzz test.  Derandomized: every run tries the same cases, so CI is
#: reproducible and ``book/input_checks.md`` can state the figures.
EXAMPLES = {
    "spec_mutations": 150,
    "spec_text_noise": 150,
    "evaluate": 150,
    "optimize": 60,
    "simulate": 150,
    "schedules": 150,
    "reproduce": 80,
    "scorecard": 20,
    "sensitivity": 30,
    "codesign": 40,
    "api_counts": 150,
    "api_hardware": 100,
    "api_config": 150,
    "model_files": 150,
    "run_files": 80,
    # issue #28 (tests/test_fuzz_reliability.py)
    "edge_numbers": 40,
    "edge_durations": 50,
    "figure_names": 25,
    "deep_models": 10,
    "api_edges": 60,
    "damaged_caches": 45,
    # issue #34 (tests/test_fuzz_api_errors.py)
    "api_errors": 60,
}


def fuzz_settings(name: str) -> settings:
    return settings(
        max_examples=EXAMPLES[name],
        deadline=None,  # the per-example limit is TIME_LIMIT_S, enforced by an alarm
        derandomize=True,
        database=None,
        print_blob=False,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                               HealthCheck.filter_too_much, HealthCheck.data_too_large],
    )


#: Outcomes of the cases tried in this session, by test: ``{"evaluate": {"exit 0": n, "exit 2": m}}``;
#: written to ``build/fuzz_stats.json`` at the end of the session (tests/conftest.py).
STATS: dict[str, Counter] = {}


def record(name: str, outcome: str) -> None:
    STATS.setdefault(name, Counter())[outcome] += 1


def mostly(valid, wild, wild_share: int = 8):
    """``valid`` about ``100 - 100/wild_share`` % of the time, else ``wild``: an argument
    vector with every value wild would only ever test the first check."""
    from hypothesis import strategies as st

    return st.integers(1, wild_share).flatmap(lambda k: wild if k == 1 else valid)


class TimeLimitExceeded(BaseException):
    """Not an Exception: the CLI's catch-all for bugs must not swallow it."""


@contextlib.contextmanager
def time_limit(seconds: float = TIME_LIMIT_S):
    def expire(signum, frame):
        raise TimeLimitExceeded(f"took longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def call_cli(argv: list[str]) -> tuple[int, str, str, float]:
    """``lgacc.cli.main(argv)`` in-process: exit code, stdout, stderr, seconds."""
    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    try:
        with time_limit(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exit_:  # only --help and --version exit; they are not generated
                code = exit_.code if isinstance(exit_.code, int) else 1
    except TimeLimitExceeded:
        raise AssertionError(f"argv={argv!r} took longer than {TIME_LIMIT_S} s") from None
    return code, out.getvalue(), err.getvalue(), time.perf_counter() - start


def requested_format(argv: list[str]) -> str | None:
    """The value of the last ``--format`` (argparse keeps the last)."""
    values = [argv[i + 1] for i, token in enumerate(argv[:-1]) if token == "--format"]
    values += [token.split("=", 1)[1] for token in argv if token.startswith("--format=")]
    return values[-1] if values else None


def check_contract(argv: list[str], code: int, out: str, err: str) -> None:
    """Exit 0 (valid JSON if asked), or exit 2 and one error line; nothing else."""
    shown = f"argv={argv!r}\nexit={code}\nstderr={err[-2000:]}"
    assert "Traceback" not in err, shown
    lines = [line for line in err.splitlines() if line.strip()]
    errors = [line for line in lines if ": warning: " not in line]
    if code == 0:
        assert not errors, shown
        if requested_format(argv) == "json":
            try:
                json.loads(out)
            except ValueError as error:
                raise AssertionError(f"{shown}\nstdout is not JSON ({error}): {out[:500]}") from None
        return
    assert code == 2, shown
    assert len(lines) == 1 and len(errors) == 1, shown
    assert errors[0].startswith("lgacc") and ": error: " in errors[0], shown
