"""Running a sweep: its chunks, computed serially or on Dask, kept on disk as they finish, read back in order.

* Chunks: :data:`PAIRS_PER_CHUNK` design-model pairs (about a second of the search each, a few seconds a
  chunk on one core), or the sweep's ``chunk_size`` designs.  The boundaries depend on the sweep alone, so
  a restarted sweep finds the chunks of the run it resumes.
* Serial (``workers=1``, no scheduler): every pending chunk in this process, one after the other.
* Dask (``dask.distributed``): a ``LocalCluster`` of ``workers`` single-threaded worker processes on
  127.0.0.1 (no dashboard), or the cluster whose scheduler is at ``scheduler``.  At most two chunks per
  worker are in flight; each is written to the store (:class:`~.store.ChunkStore`) as it comes back.
* Either way, the rows are read back from the store in design order (:func:`sweep_rows`): the same values
  whichever way, and however often, the sweep was interrupted.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from dataclasses import dataclass
from typing import Any, Iterator

from lgacc.errors import UserInputError

from .designs import design_count
from .evaluate import timed_chunk
from .store import ChunkStore
from .sweep import Sweep

__all__ = ["PAIRS_PER_CHUNK", "chunk_size", "chunks", "RunReport", "run_sweep", "sweep_rows", "default_workers",
           "compute_seconds"]

#: Design-model pairs in a chunk when the sweep does not say: a pair takes 10 to 100 ms on one core (both
#: models' searches), so a chunk takes seconds.
PAIRS_PER_CHUNK = 64
#: Chunks in flight per Dask worker: one computing, one waiting, so that no worker idles between chunks.
IN_FLIGHT_PER_WORKER = 2


def chunk_size(sweep: Sweep) -> int:
    """Designs per chunk: the sweep's ``chunk_size``, else :data:`PAIRS_PER_CHUNK` pairs' worth."""
    return sweep.chunk_size or max(1, PAIRS_PER_CHUNK // len(sweep.models))


def chunks(sweep: Sweep) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` of each chunk, in design order."""
    size, total = chunk_size(sweep), design_count(sweep)
    for start in range(0, total, size):
        yield start, min(start + size, total)


def default_workers() -> int:
    """One worker per core this process may run on."""
    import os

    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no affinity on this platform
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class RunReport:
    """What a run did: chunks in all, found already kept, computed now; where they are kept."""

    chunks: int
    reused: int
    computed: int
    folder: str


def _progress(total: int, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, unit="chunk", file=sys.stderr, disable=not enabled, desc="codesign")


def _serial(sweep: Sweep, pending, store: ChunkStore, bar) -> None:
    with bar() as progress:
        for start, stop in pending:
            store.write(start, stop, *timed_chunk(sweep, start, stop))
            progress.update(1)


def _client(workers: int, scheduler: str | None):
    """A ``distributed.Client``: to ``scheduler``, or to a new local cluster (closed with the client)."""
    if scheduler is not None:
        from distributed import Client

        logging.getLogger("distributed").setLevel(logging.ERROR)  # its INFO lines are not the command's output
        try:
            return Client(scheduler, timeout="5s", set_as_default=False), None
        except (OSError, TimeoutError, ValueError) as error:
            raise UserInputError(f"--scheduler {scheduler[:80]}: cannot reach a Dask scheduler there "
                                 f"({type(error).__name__}: {str(error)[:120]})") from None
    cluster = client = None
    with _quiet_start() as pressed:
        from distributed import Client, LocalCluster

        try:
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                   dashboard_address=None, silence_logs=logging.CRITICAL)
            client = Client(cluster, set_as_default=False)
        except Exception:
            if not pressed:  # a failure of its own
                raise
        if pressed:  # a Ctrl-C while it started: stopped here, quietly, then the interrupt goes on
            for started in (client, cluster):
                if started is not None:
                    started.close()
    if pressed:
        raise KeyboardInterrupt
    # Dask's log lines are not the command's output: a worker's error comes back from its chunk's future, and
    # the workers' deaths at a Ctrl-C (they see it too) are this command's doing
    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    return client, cluster


#: The loggers a local cluster writes through (its own, and the event loops it runs on): silenced while it starts
#: and once an interrupt has stopped it.
_DASK_LOGGERS = ("distributed", "asyncio", "tornado")


@contextlib.contextmanager
def _quiet_start():
    """While a local cluster starts: a Ctrl-C is noted, not raised (the list yielded says whether one came), the
    processes started meanwhile (the workers) write their stderr to the null device, and Dask's loggers are
    silent.  A Ctrl-C from a terminal reaches the whole process group, workers included: they stop without a
    word, and this process stops the cluster and says 'interrupted' in one line.  (A worker's error in a
    chunk is raised here, from the chunk's future.)"""
    import os
    import signal
    import threading

    pressed: list[int] = []
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, lambda *_: pressed.append(1)) if main else None
    loggers = [logging.getLogger(name) for name in _DASK_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    sys.stderr.flush()
    saved = os.dup(2)
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 2)
    os.close(quiet)
    try:
        yield pressed
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)
        if main:
            signal.signal(signal.SIGINT, previous)


def _dask(sweep: Sweep, pending, store: ChunkStore, bar, workers: int, scheduler: str | None) -> None:
    client, cluster = _client(workers, scheduler)
    from distributed import as_completed

    try:
        progress = bar()
        slots = IN_FLIGHT_PER_WORKER * max(1, len(client.scheduler_info().get("workers", {})) or workers)
        shared = client.scatter(sweep, broadcast=True)
        queue = iter(pending)
        running = {}

        def submit():
            chunk = next(queue, None)
            if chunk is None:
                return None
            future = client.submit(timed_chunk, shared, *chunk, pure=False)
            running[future.key] = chunk
            return future

        first = [f for f in (submit() for _ in range(slots)) if f is not None]
        flow = as_completed(first, loop=client.loop)
        for future in flow:
            start, stop = running.pop(future.key)
            store.write(start, stop, *future.result())  # a worker's error is raised here, in this process
            future.release()
            progress.update(1)
            following = submit()
            if following is not None:
                flow.add(following)
    finally:
        if "progress" in locals():
            progress.close()
        if isinstance(sys.exc_info()[1], KeyboardInterrupt):  # Ctrl-C, or SIGTERM as lgacc.errors.Terminated
            # the workers die with the interrupt: the scheduler's connection handlers then fail, and asyncio reports
            # each failed task when it is collected, after the command's one line; those are this command's doing
            for name in _DASK_LOGGERS:
                logging.getLogger(name).setLevel(logging.CRITICAL + 1)
        client.close()
        if cluster is not None:
            cluster.close()


def run_sweep(sweep: Sweep, *, workers: int = 1, scheduler: str | None = None, progress: bool = False,
              store: ChunkStore | None = None) -> RunReport:
    """Compute every chunk the store does not hold yet (see the module's docstring)."""
    store = ChunkStore(sweep, chunk_size(sweep)) if store is None else store
    every = list(chunks(sweep))
    pending = [c for c in every if not store.has(*c)]

    def bar():  # made once the workers run
        found = _progress(len(every), progress)
        found.update(len(every) - len(pending))
        return found

    if pending and scheduler is None and workers <= 1:
        _serial(sweep, pending, store, bar)
    elif pending:
        _dask(sweep, pending, store, bar, workers, scheduler)
    return RunReport(len(every), len(every) - len(pending), len(pending), str(store.folder))


def sweep_rows(sweep: Sweep, store: ChunkStore | None = None) -> Iterator[dict[str, Any]]:
    """Every row of a finished sweep, in design order, read chunk by chunk from ``store``."""
    store = ChunkStore(sweep, chunk_size(sweep)) if store is None else store
    for start, stop in chunks(sweep):
        rows = store.read(start, stop)
        if rows is None:  # removed since the run: computed again here
            rows = store.write(start, stop, *timed_chunk(sweep, start, stop))
        yield from rows


def compute_seconds(sweep: Sweep, store: ChunkStore | None = None) -> float | None:
    """The seconds of one core the sweep's chunks took to compute (the sum over its kept chunks; ``None`` if
    one was not measured)."""
    store = ChunkStore(sweep, chunk_size(sweep)) if store is None else store
    total = 0.0
    for start, stop in chunks(sweep):
        seconds = store.seconds(start, stop)
        if seconds is None:
            return None
        total += seconds
    return total
