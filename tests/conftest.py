"""Shared fixtures: paths of the repository and small spec files for error tests."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture
def a100_spec() -> dict:
    """The shipped A100 spec as a mapping, to be altered by a test."""
    return yaml.safe_load((ROOT / "data" / "hardware" / "a100-80gb.yaml").read_text())


@pytest.fixture
def write_spec(tmp_path):
    """Write a mapping (or raw text) as a YAML spec file and return its path."""

    def write(spec, name: str = "spec.yaml") -> Path:
        path = tmp_path / name
        path.write_text(spec if isinstance(spec, str) else yaml.safe_dump(spec))
        return path

    return write


def pytest_collection_modifyitems(config, items):
    """The property-based suites (``tests/test_fuzz_*.py``) carry the ``fuzz`` mark: ``make test`` leaves them
    to ``make fuzz`` (issue #34: fast feedback), as it leaves the browser checks to ``make check-book``."""
    for item in items:
        if item.path.name.startswith("test_fuzz_"):
            item.add_marker(pytest.mark.fuzz)


def pytest_sessionfinish(session, exitstatus):
    """Write the fuzz suite's figures (cases tried, outcomes) to build/fuzz_stats.json."""
    import json
    import sys

    fuzzing = sys.modules.get("fuzzing")
    if fuzzing is None or not fuzzing.STATS:
        return
    stats = {name: dict(sorted(counter.items())) for name, counter in sorted(fuzzing.STATS.items())}
    stats["total cases"] = sum(sum(counter.values()) for counter in fuzzing.STATS.values())
    (ROOT / "build").mkdir(exist_ok=True)
    (ROOT / "build" / "fuzz_stats.json").write_text(json.dumps(stats, indent=2) + "\n")


@pytest.fixture(autouse=True)
def _signals_as_a_fresh_interpreter_has_them():
    """A test that runs a command in-process may change the process's signal handlers (an interrupted command
    ignores further signals while it reports); restore them, so that no later test's child process inherits an
    ignored Ctrl-C (two interrupt tests hung in the full suite, never alone)."""
    import signal

    yield
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
