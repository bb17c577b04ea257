"""Start-up benchmark of the command line (issue 15); not a test: ``.venv/bin/python benchmarks/bench_cli.py [runs]``.

Targets on a quiet 2-core machine: ``lgacc evaluate`` median wall time under 0.3 s and
``lgacc reproduce table:parallel_methods_comparison`` under 0.5 s, with a warm cache of
generated code (the first run after a change of the derivations rebuilds it).  Uses
``hyperfine`` when it is installed, else a timing loop over fresh processes.  The load
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
                        "--n-a", "16", "--n-mu", "5", "--b-mu", "1", "--format", "json"], 0.3),
    "lgacc reproduce table:parallel_methods_comparison": ([LGACC, "reproduce", "table:parallel_methods_comparison"], 0.5),
}


def median_seconds(argv: list[str], runs: int) -> float:
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)  # warm the cache of generated code
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; hyperfine: {bool(shutil.which('hyperfine'))}")
    failed = False
    for name, (argv, target) in COMMANDS.items():
        seconds = median_seconds(argv, runs)
        verdict = "ok" if seconds < target else "over target"
        failed |= seconds >= target
        print(f"{name:55s} median {seconds:6.3f} s over {runs} runs (target < {target} s): {verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
