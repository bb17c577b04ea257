"""Designs per second of ``lgacc codesign`` (issue 37): serial, 1 and 2 local Dask workers, and a Dask
scheduler with its workers started separately on 127.0.0.1; not a test.

Run: ``.venv/bin/python benchmarks/bench_codesign.py [designs]``.  Each run computes the same sweep (the
paper's A100 with its NVLink domain, memory and GPU size moved; X160 and Llama-3-70B; both models'
searches) in a fresh chunk store (a unique sweep name), so nothing is read back from an earlier run.  Each
time includes starting the workers (a few seconds on a busy machine): a sweep of a few hundred designs shows
the start-up, one of thousands the throughput.  Prints designs per second and design-model pairs per second
per run and the load average: on a shared machine the numbers are lower bounds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LGACC = [sys.executable, "-m", "lgacc", "codesign"]


def sweep_text(designs: int) -> str:
    """A sweep of about ``designs`` designs: memory in ``designs / 16`` steps × NVLink domain × split."""
    steps = max(1, designs // 16)
    return (f"name: bench-{uuid.uuid4().hex}\nbase: a100-80gb\nmodels: [X160, llama-3-70b]\n"
            "vary:\n  - gpus_per_node: [8, 16, 72, 576]\n    split: [1, 2]\n    split_links: [divided, kept]\n"
            f"    memory_gib: {{from: 5, to: 640, steps: {steps}, scale: log}}\n")


def timed(argv: list[str], sweep: Path) -> float:
    from lgacc.studies.codesign import ChunkStore, chunk_size, load_sweep

    loaded = load_sweep(sweep)
    shutil.rmtree(ChunkStore(loaded, chunk_size(loaded)).folder, ignore_errors=True)  # nothing to resume
    start = time.perf_counter()
    subprocess.run([*LGACC, "--sweep", str(sweep), "--format", "json", "--out", os.devnull, *argv], check=True,
                   cwd=ROOT)
    seconds = time.perf_counter() - start
    shutil.rmtree(ChunkStore(loaded, chunk_size(loaded)).folder, ignore_errors=True)
    return seconds


def main() -> int:
    from distributed import LocalCluster

    from lgacc.studies.codesign import design_count, load_sweep

    designs = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    with tempfile.TemporaryDirectory() as scratch:
        sweep = Path(scratch) / "bench.yaml"
        sweep.write_text(sweep_text(designs))
        count = design_count(load_sweep(sweep))
        pairs = count * 2
        print(f"{count} designs × 2 models; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        runs = [("serial (--workers 1)", ["--workers", "1"]), ("local Dask, 1 worker", None),
                ("local Dask, 2 workers", ["--workers", "2"])]
        for name, argv in runs:
            if argv is None:  # one Dask worker: a LocalCluster of one, through --scheduler
                with LocalCluster(n_workers=1, threads_per_worker=1, host="127.0.0.1", dashboard_address=None) as one:
                    seconds = timed(["--scheduler", one.scheduler_address], sweep)
            else:
                seconds = timed(argv, sweep)
            print(f"{name:34s} {seconds:7.1f} s  {count / seconds:7.1f} designs/s  {pairs / seconds:7.1f} pairs/s")
        scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                      "--port", "0", "--no-dashboard", "--scheduler-file",
                                      str(Path(scratch) / "scheduler.json")], stderr=subprocess.DEVNULL)
        worker = None
        try:
            while not (Path(scratch) / "scheduler.json").exists():
                time.sleep(0.1)
            worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file",
                                       str(Path(scratch) / "scheduler.json"), "--nworkers", "2", "--nthreads", "1",
                                       "--host", "127.0.0.1", "--no-dashboard"], stderr=subprocess.DEVNULL)
            import json

            address = json.loads((Path(scratch) / "scheduler.json").read_text())["address"]
            from distributed import Client

            with Client(address) as client:
                client.wait_for_workers(2, timeout=60)
            seconds = timed(["--scheduler", address], sweep)
            print(f"{'dask scheduler on 127.0.0.1, 2 w.':34s} {seconds:7.1f} s  {count / seconds:7.1f} designs/s  "
                  f"{pairs / seconds:7.1f} pairs/s")
        finally:
            for process in (worker, scheduler):
                if process is not None:
                    process.terminate()
                    process.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
