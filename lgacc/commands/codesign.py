"""``lgacc codesign``: the paper's search over many hardware designs, serially or on Dask (issue 37)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Iterator

from lgacc.errors import UserInputError
from lgacc.studies.codesign import default_workers, load_sweep, run_sweep, sweep_rows

from . import SUMMARIES
from ._args import count
from ._output import to_jsonable

FORMATS = ("table", "json", "parquet")
#: The table's columns: (heading, row key).
TABLE_COLUMNS = (("design", "label"), ("model", "model"), ("ideal d", "ideal_time_days"), ("ideal GPUs", "ideal_n_gpu"),
                 ("ideal GPU-h", "ideal_gpu_hours"), ("calibrated d", "calibrated_time_days"),
                 ("calibrated GPUs", "calibrated_n_gpu"), ("calibrated GPU-h", "calibrated_gpu_hours"))
#: At most this many workers on this machine (a typo must not start thousands of processes).
MAX_LOCAL_WORKERS = 1024


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "codesign",
        help=SUMMARIES["codesign"],
        description=(
            "Run the paper's search for every hardware design of a sweep file (a base spec and the keys to vary) "
            "and every model it names: per design and model, the best configuration, its time, GPU count and "
            "GPU-hours under the ideal model (ideal_* keys) and the calibrated model (calibrated_* keys). Chunks run "
            "on a local Dask cluster of one worker process per core (--workers), or on an existing cluster "
            "(--scheduler); finished chunks are kept on disk, so an interrupted sweep resumes where it stopped."
        ),
    )
    parser.add_argument("--sweep", required=True, metavar="FILE", help="the sweep file (YAML; see data/sweeps/)")
    parser.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table; "
                        "parquet needs --out)")
    parser.add_argument("--out", metavar="FILE", default=None, help="write the output to FILE instead of stdout")
    parser.add_argument("--workers", type=count("workers"), default=None, metavar="N",
                        help="local worker processes (default: one per core; 1 runs in this process, without Dask)")
    parser.add_argument("--scheduler", metavar="ADDRESS", default=None,
                        help="address of a running Dask scheduler (tcp://host:port); --workers is then ignored")
    parser.set_defaults(handler=run)


def _out_path(out: str | None, fmt: str) -> Path | None:
    if out is None:
        if fmt == "parquet":
            raise UserInputError("--format parquet is binary: give --out FILE.parquet")
        return None
    if not out.strip():
        raise UserInputError("--out is empty; give a file name")
    path = Path(out)
    if path.is_dir():
        raise UserInputError(f"--out {out[:80]!r} is a folder; give a file name")
    return path


#: A Dask scheduler's address: ``[protocol://]host:port``.
_ADDRESS = re.compile(r"^(?:(tcp|tls|ucx|ws|wss)://)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]{0,252}):(\d{1,5})$")


def scheduler_address(text: str) -> str:
    """``--scheduler`` checked before any work: ``[tcp://]host:port`` with a port in 1..65535."""
    found = _ADDRESS.match(text)
    if found is None or not 0 < int(found.group(3)) < 65536:
        raise UserInputError(f"--scheduler {text[:80]!r} is not a Dask scheduler address; give tcp://HOST:PORT "
                             "(e.g. tcp://127.0.0.1:8786)")
    return text if found.group(1) else f"tcp://{text}"


def _table(rows) -> str:
    import pandas as pd

    frame = pd.DataFrame([{heading: row.get(key) for heading, key in TABLE_COLUMNS} for row in rows])
    for heading in frame.columns[2:]:
        frame[heading] = ["infeasible" if v is None or v != v else f"{v:.4g}" for v in frame[heading]]
    return frame.to_string(index=False)


def json_lines(rows) -> Iterator[str]:
    """The text of ``dumps(list(rows))``, a row at a time: a sweep of millions of rows is written without
    holding them (the same bytes as the list's JSON)."""
    first = True
    for row in rows:
        yield ("[\n  " if first else ",\n  ") + json.dumps(to_jsonable(row), indent=2).replace("\n", "\n  ")
        first = False
    yield "[]" if first else "\n]"


def _stream_json(path: Path | None, rows) -> None:
    try:
        handle = sys.stdout if path is None else open(path, "w", encoding="utf-8")
    except OSError as error:
        raise UserInputError(f"--out {str(path)[:80]!r}: cannot write the file: {error.strerror or error}") from None
    try:
        for text in json_lines(rows):
            handle.write(text)
        handle.write("\n")
    finally:
        if path is not None:
            handle.close()


def _write(path: Path | None, fmt: str, rows: list) -> None:
    if fmt == "parquet":
        import pandas as pd

        try:
            pd.DataFrame(rows).to_parquet(path, engine="pyarrow", index=False)
        except OSError as error:
            raise UserInputError(f"--out {str(path)[:80]!r}: cannot write the file: "
                                 f"{error.strerror or error}") from None
        return
    text = _table(rows)
    if path is None:
        print(text)
        return
    try:
        path.write_text(text + "\n", encoding="utf-8")
    except OSError as error:
        raise UserInputError(f"--out {str(path)[:80]!r}: cannot write the file: {error.strerror or error}") from None


def run(args: argparse.Namespace) -> int:
    path = _out_path(args.out, args.format)
    sweep = load_sweep(args.sweep)
    workers = args.workers or default_workers()
    if args.scheduler is None and workers > MAX_LOCAL_WORKERS:
        raise UserInputError(f"--workers {workers}: at most {MAX_LOCAL_WORKERS} local workers")
    scheduler = None if args.scheduler is None else scheduler_address(args.scheduler)
    terminal = sys.stderr.isatty()
    report = run_sweep(sweep, workers=workers, scheduler=scheduler, progress=terminal)
    if report.reused and terminal:  # beside the progress bar; piped output stays quiet
        print(f"lgacc codesign: resumed: {report.reused} of {report.chunks} chunks were already computed "
              f"({report.folder}); computed {report.computed}", file=sys.stderr)
    if args.format == "json":  # streamed, chunk by chunk from the store
        _stream_json(path, sweep_rows(sweep))
    else:  # a table and a Parquet file are built whole
        _write(path, args.format, list(sweep_rows(sweep)))
    return 0


__all__ = ["register", "run"]
