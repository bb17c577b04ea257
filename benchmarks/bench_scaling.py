"""Time each scaling figure's sweep (issue 6: each under 10 s on a 2-core machine).  Not a test.

Run: ``.venv/bin/python benchmarks/bench_scaling.py``.  Each sweep starts from a cold cache.
"""

from __future__ import annotations

import time

from lgacc import scaling
from lgacc.model.hardware import load_hardware

SWEEPS = {
    "fig:scaling_limited": lambda h: scaling.scaling_sweep(h, "limited"),
    "fig:scaling_unlimited": lambda h: scaling.scaling_sweep(h, "unlimited"),
    "fig:scaling_Ethernet": lambda h: scaling.scaling_sweep(h, "ethernet"),
    "fig:scaling_constant_time": lambda h: scaling.constant_time_sweep(h),
    "fig:scaling_offload": lambda h: scaling.offload_sweep(h),
}


def main() -> None:
    hardware = load_hardware("a100-80gb")
    scaling.fastest_row(2, hardware, "improved")  # lambdify the formulas once
    for label, sweep in SWEEPS.items():
        scaling.clear_row_cache()
        start = time.perf_counter()
        sweep(hardware)
        elapsed = time.perf_counter() - start
        print(f"{label:28s} {elapsed:6.2f} s {'ok' if elapsed < 10 else 'SLOW (> 10 s)'}")


if __name__ == "__main__":
    main()
