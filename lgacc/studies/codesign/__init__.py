"""The hardware co-design sweep (``lgacc codesign``, issue 37): the paper's search run over many hardware
designs, serially or on Dask, and the paper's "Hardware implications" graded from it.

One module per job, each importing only those above it:

* :mod:`.sweep` -- the sweep file, read and checked (:class:`Sweep`);
* :mod:`.designs` -- the designs, numbered, one chunk at a time, and each design's hardware;
* :mod:`.evaluate` -- one design under both models, one chunk (pure: what a worker runs);
* :mod:`.store` -- the finished chunks on disk (data only, keyed by content);
* :mod:`.runner` -- chunks, the serial and the Dask runner, the rows read back in order;
* :mod:`.implications` -- the paper's four hardware statements graded, the Pareto front (the chapter);
* :mod:`.figures` -- the chapter's figures.
"""

from .designs import Design, design_at, design_count, designs, hardware_of
from .evaluate import evaluate_chunk, evaluate_design
from .runner import RunReport, chunk_size, chunks, compute_seconds, default_workers, run_sweep, sweep_rows
from .store import ChunkStore
from .sweep import Sweep, load_sweep, sweep_from_mapping

__all__ = ["Sweep", "load_sweep", "sweep_from_mapping", "Design", "design_at", "design_count", "designs",
           "hardware_of", "evaluate_chunk", "evaluate_design", "ChunkStore", "RunReport", "chunk_size", "chunks",
           "default_workers", "run_sweep", "sweep_rows", "compute_seconds"]
