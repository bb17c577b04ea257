"""Benchmark of the configuration search (issue 4); not a test: run ``.venv/bin/python benchmarks/bench_search.py``.

Targets: the 9 rows of table:parallel_methods_comparison under 0.5 s in all; one
search for any x in [2, 2000] under 50 ms median; the speed-up over the
exhaustive reference (lgacc.search.reference) on the same small cases; and the
calibrated search (``lgacc optimize --calibrated``, lgacc.search.calibrated) at most twice
the ideal search's time on the same requests (issue #26).
"""

from __future__ import annotations

import random
import statistics
import sys
import time

from lgacc.model.config import Method
from lgacc.model.hardware import load_hardware
from lgacc.model.transformer import x_model
from lgacc.paper.reproductions.parallel_methods_comparison import ROWS
from lgacc.model.calibrated import Recipe
from lgacc.search import Parallelism, fastest
from lgacc.search.calibrated import fastest_expected
from lgacc.search.reference import reference_fastest


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return time.perf_counter() - start, result


def main() -> int:
    hardware = load_hardware("a100-80gb")
    fastest(x_model(160), hardware, "improved", "3d")  # warm the lambdified formulas
    ok = True

    x160 = x_model(160)
    total, _ = timed(lambda: [fastest(x160, hardware, m.lower(), Parallelism(p)) for p, m in ROWS])
    ok &= total < 0.5
    print(f"table:parallel_methods_comparison, 9 rows: {total * 1000:.0f} ms (target < 500 ms)")

    rng = random.Random(4)
    times = []
    worst = (0.0, None)
    for _ in range(200):
        x = 2 * rng.randint(1, 1000)
        method, parallelism = rng.choice(list(Method)), rng.choice(list(Parallelism))
        t, _ = timed(fastest, x_model(x), hardware, method, parallelism)
        times.append(t)
        worst = max(worst, (t, (x, method.value, parallelism.value)))
    median = statistics.median(times)
    ok &= median < 0.05
    print(f"one search, x in [2, 2000], 200 random (method, parallelism): median {median * 1000:.1f} ms "
          f"(target < 50 ms), p90 {sorted(times)[179] * 1000:.1f} ms, worst {worst[0] * 1000:.0f} ms for X{worst[1][0]} {worst[1][1]} {worst[1][2]}")
    for x in (2, 160, 2000):
        t = statistics.median(timed(fastest, x_model(x), hardware, "improved", "3d")[0] for _ in range(5))
        print(f"  X{x} improved 3d: {t * 1000:.1f} ms")

    rng = random.Random(5)
    ratios, search_total, reference_total = [], 0.0, 0.0
    for _ in range(24):
        model = x_model(rng.choice([8, 12, 16]))
        method, parallelism = rng.choice(list(Method)), rng.choice(list(Parallelism))
        t_search, _ = timed(fastest, model, hardware, method, parallelism, explain=False)
        t_reference, _ = timed(reference_fastest, model, hardware, method, parallelism)
        ratios.append(t_reference / t_search)
        search_total += t_search
        reference_total += t_reference
    print(f"speed-up over the exhaustive reference, 24 cases X8..X16: median {statistics.median(ratios):.0f}x, "
          f"total {reference_total / search_total:.0f}x ({reference_total:.2f} s vs {search_total:.3f} s)")
    ok &= calibrated_against_ideal(hardware)
    print("all targets met" if ok else "TARGET MISSED")
    return 0 if ok else 1


def calibrated_against_ideal(hardware) -> bool:
    """The calibrated search's time over the ideal search's, on the 9 rows and on random requests (medians of 3)."""
    recipe = Recipe(sequence_parallel=True)
    fastest_expected(x_model(160), hardware, "improved", "3d", recipe=recipe)  # warm the compiled programs
    x160 = x_model(160)
    rows = [(m.lower(), Parallelism(p)) for p, m in ROWS]

    def median_of(function, *args, **kwargs):
        return statistics.median(timed(function, *args, **kwargs)[0] for _ in range(3))

    ideal = sum(median_of(fastest, x160, hardware, m, p, explain=False) for m, p in rows)
    calibrated = sum(median_of(fastest_expected, x160, hardware, m, p, recipe=recipe) for m, p in rows)
    rng = random.Random(6)
    ratios = []
    for _ in range(40):
        x = 2 * rng.randint(8, 500)
        method, parallelism = rng.choice(list(Method)), rng.choice(list(Parallelism))
        t_ideal = median_of(fastest, x_model(x), hardware, method, parallelism, explain=False)
        t_calibrated = median_of(fastest_expected, x_model(x), hardware, method, parallelism, recipe=recipe)
        ratios.append(t_calibrated / t_ideal)
    ratio = calibrated / ideal
    print(f"calibrated search (lgacc optimize --calibrated) against the ideal one: the 9 rows {calibrated * 1000:.0f} ms "
          f"vs {ideal * 1000:.0f} ms ({ratio:.2f}x, target <= 2x); 40 random requests: median {statistics.median(ratios):.2f}x, "
          f"p90 {sorted(ratios)[35]:.2f}x")
    return ratio <= 2 and statistics.median(ratios) <= 2


if __name__ == "__main__":
    sys.exit(main())
