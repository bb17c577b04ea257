"""Execute the book's notebooks with papermill, for one hardware spec.

``python -m lgacc.book.run --hardware a100-80gb`` runs every notebook of
``notebooks/`` (committed without outputs) into ``book/generated/`` (a build
product), at most two at a time, each with an explicit kernel, working
directory and per-cell timeout.  The hardware is passed to each notebook as its
``hardware`` parameter (and ``progress=False``: progress bars are for
interactive runs, not for the book).  On failure the runner names the notebook, the cell,
the exception and its message, keeps the failed output for inspection, and
exits non-zero.

It also writes ``book/generated/build_info.md``, included by the front page, so
the book says which hardware it was built for.

A build goes into a scratch folder beside ``book/generated/`` that takes its place at the end, so
the folder never mixes two specs' pages.  Ctrl-C (or ``kill``) stops the build within a second,
with one line (exit 130, or 143 for ``kill``), while the modules import included; the workers die with the
runner even when it is killed outright.

Each page's kernel is forked from its worker once the worker has imported what the notebooks import
(:mod:`lgacc.book.warmkernel`), instead of starting a new interpreter for every page; each page still runs in a
process of its own, and a normal kernel is started on any start-up problem.  ``--no-warm-kernel``: papermill's
own kernel for every page.
"""

from __future__ import annotations

if __name__ == "__main__":  # python -m lgacc.book.run: the module runs under its own name, its imports inside the guard
    import sys

    try:
        from lgacc.errors import run_quietly
    except KeyboardInterrupt:
        sys.stderr.write("python -m lgacc.book.run: interrupted\n")
        raise SystemExit(130)
    sys.exit(run_quietly("python -m lgacc.book.run", "lgacc.book.run"))

import argparse
import contextlib
import datetime as _dt
import hashlib
import os
import re
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from lgacc import __version__
from lgacc.errors import Terminated, UserInputError, raise_on_interrupts, report_interrupt
from lgacc.model.hardware import DEFAULT_HARDWARE, GIB, hardware_path, load_hardware
from lgacc.paths import ROOT

from .notebookcache import HARDWARE_PARAMETER, cache_path, keep, restore

NOTEBOOK_DIR = ROOT / "notebooks"
OUTPUT_DIR = ROOT / "book" / "generated"
DEFAULT_KERNEL = "lgacc"
DEFAULT_TIMEOUT_S = 600
MAX_JOBS = 2
FINDINGS = "findings.md"  # included by the front page; the scorecard notebook overwrites it
ASSUMPTION_EFFECTS = "assumption_effects.md"  # included by the assumptions page; written beside FINDINGS
DIFFERENCES = "differences.md"  # included by the assumptions page; written beside FINDINGS
SPEC_FILE = ".spec"  # which spec the folder's pages were built for (:func:`building`)
INCONSISTENCIES = "inconsistencies.md"  # included by the assumptions page; written beside FINDINGS
#: Notebooks started first, longest first, so that two workers finish together.  ``claims`` comes
#: last: it reads the claims the scorecard computed (:mod:`lgacc.cache.results`) instead of computing
#: them again, or waits for them.
LONGEST_FIRST = ("scorecard", "fig_scaling_unlimited", "sensitivity", "todays_hardware", "pipeline_schedules",
                 "fig_scaling_limited", "fig_scaling_Ethernet")
LAST = ("claims",)


@dataclass(frozen=True)
class NotebookResult:
    """Outcome of one notebook run."""

    notebook: Path
    output: Path
    seconds: float
    ok: bool
    cell_index: int | None = None  # index while executing (papermill injects a parameters cell)
    exception: str = ""
    message: str = ""
    cell_source: str = ""
    reused: bool = False  # the executed copy of an earlier build (:mod:`lgacc.book.notebookcache`)

    def describe(self) -> str:
        if self.ok:
            return f"ok     {self.notebook.name} ({self.seconds:.1f} s{', reused: executed before with the same inputs' if self.reused else ''})"
        where = "before any cell ran"
        if self.cell_index is not None:
            where = f"cell {self.cell_index}"
            if self.cell_source:
                where += f" ({self.cell_source!r})"
        return (
            f"FAILED {self.notebook.name}, {where}: {self.exception}: {self.message}\n"
            f"       failed output kept at {self.output}"
        )


def hardware_parameter(name_or_path: str) -> str:
    """The value given to the notebooks: a shipped name as is, a path made absolute.

    Notebooks run with ``notebooks/`` as working directory, so a relative path
    given on the command line would otherwise point elsewhere.
    """
    path = hardware_path(name_or_path)
    shipped = path.resolve().parent == (ROOT / "data" / "hardware").resolve() and str(name_or_path) == path.stem
    return str(name_or_path) if shipped else str(path.resolve())


def _parameters(notebook: Path, hardware: str, output_dir: Path = OUTPUT_DIR) -> dict:
    """Papermill parameters, each only where the notebook's parameters cell declares it: the hardware,
    ``progress=False``, and ``findings_path`` (the front page's findings, written by the scorecard notebook).

    A notebook that does not declare ``hardware`` is not given it: it shows the same page for every
    build, and the runner reuses its executed copy (:mod:`lgacc.book.notebookcache`)."""
    import nbformat

    cells = nbformat.read(notebook, as_version=4).cells
    declared = "".join(c.source for c in cells if "parameters" in c.metadata.get("tags", []))
    parameters = {}
    if re.search(rf"^{HARDWARE_PARAMETER}\s*=", declared, re.M):
        parameters[HARDWARE_PARAMETER] = hardware
    if re.search(r"^progress\s*=", declared, re.M):
        parameters["progress"] = False
    if re.search(r"^findings_path\s*=", declared, re.M):
        parameters["findings_path"] = str((output_dir / FINDINGS).resolve())
    return parameters


def run_notebook(
    notebook: Path,
    output: Path,
    parameters: dict,
    kernel: str = DEFAULT_KERNEL,
    timeout_s: int = DEFAULT_TIMEOUT_S,
    cwd: Path = NOTEBOOK_DIR,
    kept: Path | None = None,
    kernel_manager_class=None,
) -> NotebookResult:
    """Execute one notebook; never raises for a failing cell, reports it instead.

    ``kept`` is where an earlier build's executed copy is kept (:func:`lgacc.book.notebookcache.cache_path`):
    if it exists it is copied to ``output`` instead of executing; if not, a successful run is kept there.
    ``kernel_manager_class``: jupyter_client's kernel manager for papermill (:mod:`lgacc.book.warmkernel`'s);
    ``None``, papermill's own (jupyter_client's, with CurveZMQ keys: :func:`lgacc.book.warmkernel.encrypted`)."""
    start = time.perf_counter()
    reused = _reused(notebook, output, parameters, kept)
    if reused is not None:
        return reused
    side = _side_files(parameters, output)
    if side is None:
        kept = None  # it writes files elsewhere than beside its page: executed every time
    import papermill
    from papermill.exceptions import PapermillExecutionError

    output.parent.mkdir(parents=True, exist_ok=True)
    if kernel_manager_class is None:  # papermill's own kernel, with its sockets encrypted as the forked one's
        from jupyter_client.manager import AsyncKernelManager

        from .warmkernel import encrypted

        kernel_manager_class = encrypted(AsyncKernelManager)
    engine = {"kernel_manager_class": kernel_manager_class}
    try:
        papermill.execute_notebook(
            str(notebook),
            str(output),
            parameters=parameters,
            kernel_name=kernel,
            cwd=str(cwd),
            execution_timeout=timeout_s,
            progress_bar=False,
            log_output=False,
            **engine,
        )
    except PapermillExecutionError as error:
        return NotebookResult(
            notebook,
            output,
            time.perf_counter() - start,
            False,
            error.cell_index,
            error.ename,
            str(error.evalue),
            _first_line_of_failed_cell(output),
        )
    except Exception as error:  # kernel missing, timeout, unreadable notebook, ...
        return NotebookResult(notebook, output, time.perf_counter() - start, False, None, type(error).__name__, str(error))
    _hide_default_parameters(output)
    keep(output, kept, side or ())
    return NotebookResult(notebook, output, time.perf_counter() - start, True)


def _reused(notebook: Path, output: Path, parameters: dict, kept: Path | None) -> NotebookResult | None:
    """The result of restoring an earlier build's executed copy (:func:`lgacc.book.notebookcache.restore`), or
    ``None`` when the notebook must be executed."""
    start = time.perf_counter()
    side = _side_files(parameters, output)
    if side is None:
        return None  # it writes files elsewhere than beside its page: executed every time
    if restore(kept, output, side):
        return NotebookResult(notebook, output, time.perf_counter() - start, True, reused=True)
    return None


#: The files a notebook given ``findings_path`` writes beside it (the scorecard: the front page's findings and the
#: assumptions page's lists), kept and restored with its page.
SIDE_FILES = (FINDINGS, ASSUMPTION_EFFECTS, DIFFERENCES, INCONSISTENCIES)


def _side_files(parameters: dict, output: Path) -> tuple[str, ...] | None:
    """The files the run writes beside ``output`` (:data:`SIDE_FILES` when it is given ``findings_path`` there, else
    none); ``None`` when it writes them elsewhere."""
    if "findings_path" not in parameters:
        return ()
    if Path(parameters["findings_path"]).resolve().parent != output.parent.resolve():
        return None
    return SIDE_FILES


def _hide_default_parameters(path: Path) -> None:
    """Hide the default ``parameters`` cell in the book; papermill's injected cell,
    which shows the values actually used, stays in the page, folded."""
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        tags = cell.metadata.setdefault("tags", [])
        if "parameters" in tags and "remove-cell" not in tags:
            tags.append("remove-cell")
        if "injected-parameters" in tags and "hide-input" not in tags:
            tags.append("hide-input")  # folded like the other code cells; one click shows the values used
    nbformat.write(notebook, path)


def _first_line_of_failed_cell(path: Path) -> str:
    """First line of the cell whose output is an error, in the kept copy."""
    import nbformat

    try:
        cells = nbformat.read(path, as_version=4).cells
    except Exception:  # the report must not fail because the copy is unreadable
        return ""
    for cell in cells:
        if any(output.get("output_type") == "error" for output in cell.get("outputs", [])):
            lines = [line for line in cell.source.splitlines() if line.strip()]
            return lines[0][:80] if lines else ""
    return ""


def execution_order(notebooks) -> list[Path]:
    """:data:`LONGEST_FIRST` in its order, then the others by name, then :data:`LAST`."""
    def rank(path: Path) -> tuple[int, int, str]:
        if path.stem in LONGEST_FIRST:
            return (0, LONGEST_FIRST.index(path.stem), path.name)
        return (2 if path.stem in LAST else 1, 0, path.name)
    return sorted(notebooks, key=rank)


def build_info(hardware_name_or_path: str) -> str:
    """Markdown for the front page: which hardware and which version built this book."""
    hardware = load_hardware(hardware_name_or_path)
    today = _dt.date.today().isoformat()
    return "\n".join(
        [
            "```{admonition} This build",
            ":class: note",
            f"Built on {today} with lgacc {__version__} for hardware **{hardware.name}**"
            + (f" ({hardware.description})" if hardware.description else "")
            + f": peak {hardware.peak_flop_per_s / 1e12:g} Tflop/s, {hardware.memory_bytes / GIB:g} GiB per GPU,"
            f" {hardware.gpus_per_node} GPUs per NVLink node.",
            "",
            f"Source of the spec: {hardware.source}",
            "```",
            "",
        ]
    )


def run_all(
    hardware: str = DEFAULT_HARDWARE,
    notebooks: Sequence[Path] | None = None,
    output_dir: Path = OUTPUT_DIR,
    kernel: str = DEFAULT_KERNEL,
    timeout_s: int = DEFAULT_TIMEOUT_S,
    jobs: int = MAX_JOBS,
    warm: bool = True,
) -> list[NotebookResult]:
    """Run ``notebooks`` (default: all of ``notebooks/``) with ``hardware``; at most 2 at once.

    ``warm``: each page's kernel is forked from a worker that has imported what the notebooks import
    (:mod:`lgacc.book.warmkernel`; a normal kernel wherever that cannot be done); else papermill starts each one.

    The notebooks are executed into a scratch folder beside ``output_dir``, which then takes its place
    (:func:`building`): ``output_dir`` holds one spec's pages, never a mix of two builds, whether a
    build ends, fails or is interrupted."""
    load_hardware(hardware)  # fail here, clearly, rather than inside every notebook
    parameter = hardware_parameter(hardware)
    subset = notebooks is not None
    notebooks = execution_order(notebooks if notebooks is not None else NOTEBOOK_DIR.glob("*.ipynb"))
    if not notebooks:
        raise UserInputError(f"no notebooks found in {NOTEBOOK_DIR}")
    if not 1 <= jobs <= MAX_JOBS:
        raise UserInputError(f"jobs must be between 1 and {MAX_JOBS}, got {jobs}")
    with building(output_dir, _spec_id(hardware, parameter), keep_others=subset) as scratch:
        _write_placeholders(scratch, hardware, notebooks)
        tasks = []
        for notebook in notebooks:
            parameters = _parameters(notebook, parameter, scratch)
            tasks.append((notebook, scratch / notebook.name, parameters, kernel, timeout_s, notebook.parent,
                          cache_path(notebook, parameters, kernel)))
        warm_modules = _warm_modules(notebooks) if warm else None
        results = _execute(tasks, jobs, scratch, output_dir, warm_modules)
    return sorted(results, key=lambda r: r.notebook.name)


def _write_placeholders(folder: Path, hardware: str, notebooks: Sequence[Path]) -> None:
    """``build_info.md``, and the pages the scorecard notebook writes, as placeholders until it does."""
    (folder / "build_info.md").write_text(build_info(hardware))
    from lgacc.paper.findings import placeholder_markdown

    scorecard = any(n.stem == "scorecard" for n in notebooks)
    if not (folder / FINDINGS).exists() or scorecard:
        (folder / FINDINGS).write_text(placeholder_markdown("the scorecard notebook did not run."))
    if not (folder / ASSUMPTION_EFFECTS).exists() or scorecard:
        (folder / ASSUMPTION_EFFECTS).write_text(
            "```{note}\nWhat each switch moves is computed by the scorecard notebook, which did not run.\n```\n")
    if not (folder / DIFFERENCES).exists() or scorecard:
        (folder / DIFFERENCES).write_text(
            "```{note}\nThe cells that differ are listed by the scorecard notebook, which did not run.\n```\n")
    if not (folder / INCONSISTENCIES).exists() or scorecard:
        (folder / INCONSISTENCIES).write_text(
            "```{note}\nThe paper's inconsistencies are computed by the scorecard notebook, which did not run.\n```\n")


def _warm_modules(notebooks: Sequence[Path]) -> tuple[str, ...]:
    from .warmkernel import notebook_imports

    return notebook_imports(notebooks)


def _run_task(job: tuple) -> NotebookResult:
    """In a worker: one notebook, reused, or run by a kernel forked from this worker once it has imported
    ``warm`` (:mod:`lgacc.book.warmkernel`), or (``warm`` is ``None``, or forking failed) by papermill's own."""
    task, warm = job
    if warm is None or _WORKER_RAN_A_CLIENT:
        return run_notebook(*task)
    notebook, output, parameters, *_, kept = task
    reused = _reused(notebook, output, parameters, kept)
    if reused is not None:
        return reused
    from . import warmkernel

    if not warmkernel.warm_up(warm):  # the modules stay imported: paid once per worker
        return run_notebook(*task)  # not a fresh image (a runner called in-process by a session that imported them)
    try:
        return warmkernel.call_forked(run_notebook, *task)
    except (OSError, ChildProcessError):  # no fork, or the page's process died: the page as before, here
        _WORKER_RAN_A_CLIENT.append(True)  # this worker is no longer a clean image to fork kernels from
        return run_notebook(*task)


#: In a worker, once it ran a notebook's client itself (a fallback): its later pages are run the same way.
_WORKER_RAN_A_CLIENT: list = []


def _execute(tasks: list[tuple], jobs: int, scratch: Path, output_dir: Path,
             warm: tuple[str, ...] | None = None) -> list[NotebookResult]:
    """Run the tasks in a pool of workers that die with the runner (:func:`_worker_setup`); each result is
    printed as it comes, with its path in ``output_dir`` (where the scratch folder is about to go).  ``warm``:
    the modules a worker imports before it forks a page's kernel (:func:`_run_task`); ``None``, no forked kernel."""
    import dataclasses
    import multiprocessing

    results = []
    pool = multiprocessing.get_context("fork").Pool(jobs, initializer=_worker_setup, initargs=(os.getpid(),))
    try:
        for result in pool.imap_unordered(_run_task, [(task, warm) for task in tasks]):
            result = dataclasses.replace(result, output=output_dir / result.output.relative_to(scratch))
            print(result.describe(), flush=True)
            results.append(result)
    except BaseException:
        _kill_workers(pool)  # an interrupted build stops its workers, and their kernels, at once
        pool.terminate()
        pool.join()
        raise
    # A finished build lets its idle workers leave on the pool's own end-of-tasks message.  Terminating them
    # instead sent SIGTERM to workers waiting on the task queue, and a worker that never ran its handler left
    # the build hanging after its last notebook (seen twice, with every notebook done).
    pool.close()
    pool.join()
    return results


def _kill_workers(pool) -> None:
    """SIGKILL every worker of ``pool`` and its notebook's kernel.  The pool's own SIGTERM reaches a worker's
    Python handler only when its main thread wakes: a worker blocked on the task queue while the signal is taken
    by one of its kernel client's threads never ran it, and the build hung in ``join`` (seen under load)."""
    for worker in list(getattr(pool, "_pool", ())):
        try:
            import psutil

            for child in psutil.Process(worker.pid).children(recursive=True):
                child.kill()
        except Exception:  # noqa: BLE001 - psutil missing or the process gone: the kernel's poller remains
            pass
        try:
            worker.kill()
        except (OSError, ValueError, AttributeError):  # already gone
            pass


def _worker_setup(runner: int) -> None:
    """In each worker: Ctrl-C is the runner's to handle (no traceback per worker), and the worker stops with
    the runner, even if the runner is killed (Linux's parent-death signal), taking its notebook's kernel
    with it (:func:`_stop_worker`; else the kernel leaves within a second by ipykernel's parent poller)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop_worker)
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the pool's own shutdown is all there is
        pass
    if os.getppid() != runner:  # the runner died before the signal was set
        os._exit(1)


def _stop_worker(signum, frame) -> None:
    """A worker told to stop takes its notebook's kernel with it (silently), then leaves at once."""
    try:
        import psutil

        for child in psutil.Process().children(recursive=True):
            child.kill()
    except Exception:  # noqa: BLE001 - psutil missing or a child already gone: the kernel's poller remains
        pass
    os._exit(1)


def _spec_id(hardware: str, parameter: str) -> str:
    """What a build is for: the hardware as the notebooks receive it, and the spec's bytes."""
    digest = hashlib.sha256(hardware_path(hardware).read_bytes()).hexdigest()
    return f"{parameter}\n{digest}\n"


@contextlib.contextmanager
def building(output_dir: Path, spec_id: str, keep_others: bool = False):
    """A scratch folder beside ``output_dir`` to build into, which replaces ``output_dir`` at the end.

    One build at a time per folder (a lock beside it).  ``keep_others``: a build of some notebooks
    starts from the pages already there, if they were built for the same spec (``.spec``), else from
    nothing.  On an exception (an interrupt included) the scratch folder is removed and ``output_dir``
    is left as it was; a folder left by a killed build is removed by the next."""
    parent = output_dir.parent
    parent.mkdir(parents=True, exist_ok=True)
    scratch, old = parent / f".{output_dir.name}.next", parent / f".{output_dir.name}.old"
    with open(parent / f".{output_dir.name}.lock", "a") as lock:
        _exclusive(lock)
        for leftover in (scratch, old):
            shutil.rmtree(leftover, ignore_errors=True)
        try:
            if keep_others and _read(output_dir / SPEC_FILE) == spec_id:
                shutil.copytree(output_dir, scratch)
            else:
                scratch.mkdir()
            (scratch / SPEC_FILE).write_text(spec_id)
            yield scratch
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        keep_unchanged_times(scratch, output_dir)
        if output_dir.exists():
            os.replace(output_dir, old)
        os.replace(scratch, output_dir)
        shutil.rmtree(old, ignore_errors=True)


def keep_unchanged_times(new: Path, previous: Path) -> list[Path]:
    """Give each file of ``new`` whose bytes equal those of the same file in ``previous`` that file's times.

    Sphinx reads a page again when its file (or a file it includes) is newer than its last reading, so the
    book's HTML phase, which starts from the previous build (the Makefile), re-reads only the pages whose
    content changed: the hardware-free pages a new spec does not touch, and every page of a rebuild for the
    same spec, keep their times.  A file that differs, or is new, keeps its own (newer) time and is read
    again.  Returns the files given their old times."""
    kept = []
    for path in sorted(new.rglob("*")):
        before = previous / path.relative_to(new)
        try:
            if not path.is_file() or path.is_symlink() or not before.is_file() or before.is_symlink():
                continue
            stat = before.stat()
            if stat.st_size != path.stat().st_size or before.read_bytes() != path.read_bytes():
                continue
            os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        except OSError:  # unreadable: left with its new time, so it is read again
            continue
        kept.append(path)
    return kept


def _exclusive(handle) -> None:
    try:
        import fcntl

        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
    except (ImportError, OSError):  # no advisory locks: concurrent builds are the caller's to avoid
        pass


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lgacc.book.run", description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="notebooks to run (default: all of notebooks/)")
    parser.add_argument("--hardware", default=DEFAULT_HARDWARE, help="shipped spec name or path to a YAML spec")
    parser.add_argument("--output-dir", type=Path, default=OUTPUT_DIR)
    parser.add_argument("--kernel", default=DEFAULT_KERNEL, help=f"Jupyter kernel name (default: {DEFAULT_KERNEL})")
    parser.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT_S, help="per-cell timeout in seconds")
    parser.add_argument("--jobs", type=int, default=MAX_JOBS, help=f"notebooks at once (1 to {MAX_JOBS})")
    parser.add_argument("--no-warm-kernel", dest="warm", action="store_false",
                        help="start every page's kernel as a new interpreter (papermill's own way) instead of forking "
                             "it from a worker that has imported what the notebooks import")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    raise_on_interrupts()  # Ctrl-C even when started with SIGINT ignored (inherited); `kill` stops a build as Ctrl-C does
    try:
        results = run_all(args.hardware, args.notebooks or None, args.output_dir, args.kernel, args.timeout, args.jobs,
                          args.warm)
    except UserInputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as interrupt:  # Ctrl-C (130), or SIGTERM raised as Terminated (143)
        return report_interrupt(
            "python -m lgacc.book.run", interrupt,
            f"{'terminated' if isinstance(interrupt, Terminated) else 'interrupted'} after "
            f"{time.perf_counter() - start:.0f} s; the running notebooks were stopped and {args.output_dir} is as it was")
    failed = [r for r in results if not r.ok]
    elapsed = time.perf_counter() - start
    if failed:
        print(f"\n{len(failed)} of {len(results)} notebooks failed ({elapsed:.0f} s):", file=sys.stderr)
        for result in failed:
            print(result.describe(), file=sys.stderr)
        return 1
    print(f"{len(results)} notebooks executed into {args.output_dir} ({elapsed:.0f} s) for hardware {args.hardware}")
    return 0
