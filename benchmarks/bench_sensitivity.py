"""Time the whole sensitivity grid (issue 16: under 20 s on this machine).  Not a test.

Run: ``.venv/bin/python benchmarks/bench_sensitivity.py [repeats]``.  Each run starts from a
cold memo of searches and with the on-disk result cache off (``LGACC_RESULT_CACHE=0``: the
computation is timed, not the read); the formulas are lambdified once, before timing.  Prints
the median wall time and the time per assumption of the last run.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

os.environ["LGACC_RESULT_CACHE"] = "0"  # time the computation, not a read of an earlier result

from lgacc.model.hardware import load_hardware
from lgacc.model.transformer import x_model
from lgacc.search import fastest
from lgacc.studies.sensitivity import dimensions, sensitivity_rows

TARGET_S = 20.0


def main(repeats: int = 3) -> None:
    hardware = load_hardware("a100-80gb")
    fastest(x_model(160), hardware, "improved", "3d", explain=False)  # lambdify the formulas once
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        rows = sensitivity_rows(hardware)
        times.append(time.perf_counter() - start)
    median = statistics.median(times)
    print(f"{len(rows)} rows over {len(dimensions(hardware))} assumptions; runs: "
          + ", ".join(f"{t:.1f} s" for t in times))
    print(f"median {median:.1f} s {'ok' if median < TARGET_S else f'SLOW (> {TARGET_S:g} s)'}")
    for d in dimensions(hardware):
        start = time.perf_counter()
        sensitivity_rows(hardware, [d.name])
        print(f"  {d.name:30s} {time.perf_counter() - start:6.1f} s (with the default row)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
