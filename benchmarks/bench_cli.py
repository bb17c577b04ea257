"""Start-up benchmark of the command line (issues 15, 34, 35); not a test: ``.venv/bin/python benchmarks/bench_cli.py [runs]``.

Targets on a quiet 2-core machine: ``lgacc evaluate`` median wall time under 0.2 s once warm and under
2 s for the *first* call of a fresh install (an empty cache directory and no compiled bytecode: the
numeric code ships with the package, nothing is derived with sympy), and ``lgacc reproduce
table:parallel_methods_comparison`` under 0.5 s once warm: a repeated ``reproduce`` prints its answer from the
result cache (verified data keyed by everything it depends on, :mod:`lgacc.commands.reproduce`); the same command
with the cache off (``LGACC_RESULT_CACHE=0``: the table computed, pandas imported) is printed beside it, without a
target.  A timing loop over fresh processes.  The load
average is printed beside the numbers: on a shared machine they are upper bounds.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

LGACC = str(Path(sys.executable).with_name("lgacc"))
COMMANDS = {
    "lgacc evaluate": ([LGACC, "evaluate", "--model", "X160", "--method", "improved", "--n-b", "483", "--n-l", "5",
                        "--n-a", "16", "--n-mu", "5", "--b-mu", "1", "--format", "json"], 0.2),
    "lgacc reproduce table:parallel_methods_comparison": ([LGACC, "reproduce", "table:parallel_methods_comparison"], 0.5),
}


def median_seconds(argv: list[str], runs: int, env: dict | None = None) -> float:
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)  # warm the caches
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def first_call_seconds(argv: list[str]) -> float:
    """One call as a fresh install makes it: an empty cache directory, no compiled bytecode to reuse."""
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "LGACC_CACHE_DIR": f"{scratch}/cache", "PYTHONPYCACHEPREFIX": f"{scratch}/pycache"}
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
        return time.perf_counter() - start


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; hyperfine: {bool(shutil.which('hyperfine'))}")
    failed = False
    argv, _ = COMMANDS["lgacc evaluate"]
    seconds = first_call_seconds(argv)
    # a warm call reuses the package's compiled bytecode, as an install has it (pip compiles it); where the
    # environment says PYTHONDONTWRITEBYTECODE (this sandbox does), a module edited since its .pyc was written
    # would be compiled again in every timed run
    import compileall

    compileall.compile_dir(str(Path(__file__).resolve().parent.parent / "lgacc"), quiet=1)
    failed |= seconds >= 2.0
    print(f"{'lgacc evaluate, first call of a fresh install':55s} {seconds:6.3f} s (target < 2 s): "
          f"{'ok' if seconds < 2.0 else 'over target'}")
    for name, (argv, target) in COMMANDS.items():
        seconds = median_seconds(argv, runs)
        verdict = "ok" if seconds < target else "over target"
        failed |= seconds >= target
        print(f"{name:55s} median {seconds:6.3f} s over {runs} runs (target < {target} s): {verdict}")
    argv, _ = COMMANDS["lgacc reproduce table:parallel_methods_comparison"]
    seconds = median_seconds(argv, runs, env={**os.environ, "LGACC_RESULT_CACHE": "0"})
    print(f"{'  the same with the result cache off':55s} median {seconds:6.3f} s over {runs} runs (no target)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
