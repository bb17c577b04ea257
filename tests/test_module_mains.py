"""The package's ``python -m`` programs answer a reader that stops reading, and a mistaken option, without a
traceback: the guide's "one clear line" rule holds for them as it does for ``lgacc``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Each program with arguments that make it print (and nothing heavier than a second or two).
PRINTING = [
    ["lgacc.model.calibrated.memory_bound"],
    ["lgacc.model.calibrated.links"],
    ["lgacc.model.calibrated.host"],
    ["lgacc.model.calibrated.attention"],
    ["lgacc.model.calibrated.gemm_table"],
    ["lgacc.model.regenerate", "--help"],
    ["lgacc.studies.validation.fit"],
    ["lgacc.book.htmlbuild", "--help"],
    ["lgacc.book.run", "--help"],
]


def _run_with_closed_stdout(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """Run ``python -m args`` with its standard output a pipe whose reading end is closed before it writes."""
    read, write = os.pipe()
    os.close(read)  # every write now fails with EPIPE, as under `| head` once head has left
    try:
        return subprocess.run([sys.executable, "-m", *args], stdout=write, stderr=subprocess.PIPE, text=True,
                              cwd=cwd, timeout=120)
    finally:
        os.close(write)


@pytest.mark.parametrize("args", PRINTING, ids=lambda a: " ".join(a))
def test_a_reader_that_stopped_reading_gets_no_traceback(args, tmp_path):
    done = _run_with_closed_stdout(args, tmp_path)
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr


def test_the_same_program_prints_in_full_to_a_reader_that_reads(tmp_path):
    # the guard changes nothing for a reader who reads: the host floor's lines are all there
    done = subprocess.run([sys.executable, "-m", "lgacc.model.calibrated.host"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert sum(line.startswith("host_framework=") for line in done.stdout.splitlines()) == 2 and "Transformer Engine" in done.stdout


@pytest.mark.parametrize("program", ["lgacc.book.jsgen", "lgacc.book.jsgen.schedules"])
def test_the_script_writers_take_help_for_help_not_for_a_file_name(program, tmp_path):
    done = subprocess.run([sys.executable, "-m", program, "--help"], capture_output=True, text=True, cwd=tmp_path,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.startswith(f"usage: python -m {program} OUT.js")
    assert not (tmp_path / "--help").exists() and not (ROOT / "--help").exists()
    mistaken = subprocess.run([sys.executable, "-m", program, "-o"], capture_output=True, text=True, cwd=tmp_path,
                              timeout=120)
    assert mistaken.returncode == 2 and mistaken.stderr.count("\n") == 1 and "usage:" in mistaken.stderr
    assert not (tmp_path / "-o").exists() and not (ROOT / "-o").exists()
