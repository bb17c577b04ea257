"""Time ``make book`` rebuilds (issues 15 and 34); not a test.

Run: ``.venv/bin/python benchmarks/bench_book.py`` (the issue's two rebuilds), or
``.venv/bin/python benchmarks/bench_book.py --fresh [shipped-spec]`` (a spec no build has seen).

Default: ``make book`` for the paper's spec (the starting state, reported, not a target), then
``make book HARDWARE=h100-sxm`` -- a rebuild for another spec, target 30 s -- then the same command
again -- the same spec rebuilt, target 20 s.  Each is three ``make book`` runs: on a shared machine
run it once.  ``LGACC_CACHE_DIR`` is left as the caller sets it: point it at an empty folder for a
fresh clone's numbers.

``--fresh``: a copy of the spec (default ``h100-sxm``) with its peak raised by a random fraction of a
percent, so that no result of an earlier build can be reused (the on-disk results are keyed by the
spec's values), built once with ``make book HARDWARE=<copy>``.  Target: 30 s.

Each line gives the wall time, the notebooks' share (the runner's own total: the rest is Sphinx, MathJax
and the calculator), how many notebooks were reused and the slowest executed ones, whether the HTML phase
started from the previous build and how many pages Sphinx read again, and the load average: on a shared
machine the numbers are upper bounds.
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
OTHER_SPEC = "h100-sxm"
TARGET_OTHER_S = 30.0
TARGET_SAME_S = 20.0


def fresh_spec(name: str, directory: Path) -> Path:
    """A copy of the shipped spec ``name`` that no earlier build has used."""
    spec = yaml.safe_load((ROOT / "data" / "hardware" / f"{name}.yaml").read_text())
    spec["name"] = f"{name}-bench"
    spec["peak_flop_per_s"] = float(spec["peak_flop_per_s"]) * (1 + random.uniform(1e-4, 1e-2))
    path = directory / f"{name}-bench.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def make_book(hardware: str | None, what: str, target: float | None) -> bool:
    """Run ``make book`` (for ``hardware``, else the Makefile's default) and print what it took."""
    load = os.getloadavg()[0]
    command = ["make", "book"] + ([f"HARDWARE={hardware}"] if hardware else [])
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode:
        print(f"{' '.join(command)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        return False
    verdict = "" if target is None else f" (target {target:g} s: {'ok' if wall < target else 'missed'})"
    print(f"{what}: `{' '.join(command)}` {wall:.0f} s{verdict}, load average {load:.2f} on {os.cpu_count()} cores")
    notebooks = re.search(r"notebooks executed into .* \((\d+) s\)", done.stdout)
    reused = len(re.findall(r"^ok\s+\S+ \([\d.]+ s, reused", done.stdout, re.M))
    executed = sorted(((float(s), n) for n, s in re.findall(r"^ok\s+(\S+) \(([\d.]+) s\)", done.stdout, re.M)),
                      reverse=True)
    if notebooks:
        print(f"  notebooks {notebooks.group(1)} s (two at a time; {reused} reused, {len(executed)} executed), "
              f"the other {wall - float(notebooks.group(1)):.0f} s Sphinx (jupyter-book), MathJax and the calculator")
    html = re.search(r"^HTML: starting from (the previous build|nothing)", done.stdout, re.M)
    updating = re.search(r"updating environment: .*?(\d+) added, (\d+) changed, (\d+) removed", done.stdout)
    if html or updating:
        start = "the previous build" if html and html.group(1) == "the previous build" else "nothing"
        read = f"{int(updating.group(1)) + int(updating.group(2))} pages read" if updating else "no page read"
        print(f"  HTML phase started from {start}: {read} (lgacc.book.htmlbuild)")
    for seconds, notebook in executed[:5]:
        print(f"  {notebook:45s} {seconds:5.1f} s")
    return True


def main(argv: list[str]) -> int:
    if argv[:1] == ["--fresh"]:
        name = argv[1] if len(argv) > 1 else OTHER_SPEC
        with tempfile.TemporaryDirectory() as scratch:
            ok = make_book(str(fresh_spec(name, Path(scratch))), "a spec never built", TARGET_OTHER_S)
        return 0 if ok else 1
    steps = ((None, "the paper's spec (starting state)", None),
             (OTHER_SPEC, "another spec", TARGET_OTHER_S),
             (OTHER_SPEC, "the same spec again", TARGET_SAME_S))
    for hardware, what, target in steps:
        if not make_book(hardware, what, target):
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
