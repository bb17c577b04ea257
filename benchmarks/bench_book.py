"""Time ``make book`` for a spec the machine has never seen (issue 15); not a test.

Run: ``.venv/bin/python benchmarks/bench_book.py [shipped-spec]``.  Writes a copy of the spec
(default ``h100-sxm``) with its peak raised by a random fraction of a percent, so that no
result of an earlier build can be reused (the on-disk results are keyed by the spec's values),
then runs ``make book HARDWARE=<copy>`` with the environment already installed.  Prints the
wall time, the notebooks' share (the runner's own total), the slowest notebooks, and the load
average: on a shared machine the numbers are upper bounds.  Target: 30 s.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 30.0


def fresh_spec(name: str, directory: Path) -> Path:
    """A copy of the shipped spec ``name`` that no earlier build has used."""
    spec = yaml.safe_load((ROOT / "data" / "hardware" / f"{name}.yaml").read_text())
    spec["name"] = f"{name}-bench"
    spec["peak_flop_per_s"] = float(spec["peak_flop_per_s"]) * (1 + random.uniform(1e-4, 1e-2))
    path = directory / f"{name}-bench.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def main() -> int:
    name = sys.argv[1] if len(sys.argv) > 1 else "h100-sxm"
    with tempfile.TemporaryDirectory() as scratch:
        spec = fresh_spec(name, Path(scratch))
        load = os.getloadavg()[0]
        start = time.perf_counter()
        done = subprocess.run(["make", "book", f"HARDWARE={spec}"], cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - start
    if done.returncode:
        print(done.stdout[-3000:], done.stderr[-3000:])
        return done.returncode
    notebooks = re.search(r"notebooks executed into .* \((\d+) s\)", done.stdout)
    slowest = sorted(((float(s), n) for n, s in re.findall(r"^ok\s+(\S+) \(([\d.]+) s\)", done.stdout, re.M)),
                     reverse=True)[:5]
    print(f"load average {load:.2f} on {os.cpu_count()} cores")
    print(f"make book for a new spec: {wall:.0f} s (target {TARGET_S:g} s: {'ok' if wall < TARGET_S else 'missed'})")
    if notebooks:
        print(f"  notebooks {notebooks.group(1)} s (two at a time), the rest Sphinx, MathJax and the calculator")
    for seconds, notebook in slowest:
        print(f"  {notebook:45s} {seconds:5.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
