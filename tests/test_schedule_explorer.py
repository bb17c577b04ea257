"""The schedule explorer's data (lgacc.book.jsgen.schedules) under node against ``lgacc simulate``.

``window.lgacc.schedule`` must return what ``lgacc simulate --format json`` prints for the same arguments (every key,
the command itself for a few points, its in-process handler for the rest), refuse with the simulator's own message
where it refuses, and name the grid elsewhere; the decoded timeline must be the simulator's: per device, blocks that
do not overlap, end at the step time and add up to the busy time the measurements state. A small grid keeps this under
ten seconds; the browser test (tests/book/test_schedule_explorer.py) checks the book's full grid.
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from lgacc.book.jsgen import schedules as explorer
from lgacc.commands import simulate as simulate_command
from lgacc.schedule import pipeline_schedule, simulate

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")
SMALL = {"schedule": explorer.GRID["schedule"], "n_l": (2, 4), "n_mu": (4, 8), "n_v": (1, 2), "d_l": (8, 16)}


@pytest.fixture(scope="module")
def script(tmp_path_factory) -> Path:
    return explorer.write(tmp_path_factory.mktemp("explorer") / "lgacc-schedules.js", SMALL)


def run_node(path: Path, program: str, payload) -> object:
    code = (f"const lgacc = require({json.dumps(str(path))});\n"
            "const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));\n" + program)
    out = subprocess.run([NODE, "-e", code], input=json.dumps(payload), capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


ALL = """
process.stdout.write(JSON.stringify(input.map((q) => {
  try { return { ok: lgacc.schedule(q), timeline: lgacc.scheduleTimeline(q) }; }
  catch (e) { return { error: e.message, name: e.name }; }
})));
"""


def _handler(q: dict) -> dict:
    """What ``lgacc simulate --format json`` prints, through the command's own parser and handler (in process)."""
    parser = argparse.ArgumentParser()
    simulate_command.register(parser.add_subparsers())
    args = parser.parse_args(["simulate", "--schedule", q["schedule"], "--n-l", str(q["n_l"]), "--n-mu", str(q["n_mu"]),
                              "--n-v", str(q["n_v"]), "--d-l", str(q["d_l"]), "--format", "json"])
    return simulate_command.result(args)


def test_every_point_of_the_grid_is_what_lgacc_simulate_prints(script):
    points = [dict(zip(explorer.GRID, values)) for values in itertools.product(*SMALL.values())]
    results = run_node(script, ALL, points)
    compared = refused = 0
    for q, js in zip(points, results):
        try:
            expected = _handler(q)
        except Exception as error:  # noqa: BLE001 - a UserInputError: the page says the same
            assert js.get("name") == "InputError" and js["error"] == str(error), (q, js, error)
            refused += 1
            continue
        assert js["ok"] == json.loads(json.dumps(expected)), q
        _check_timeline(q, expected, js["timeline"])
        compared += 1
    assert compared >= 60 and refused >= 20, (compared, refused)


def _check_timeline(q: dict, expected: dict, timeline: dict) -> None:
    """The decoded blocks are the simulator's compute intervals, merged: same busy time per device, no overlap,
    the last one ends the step; and for the 1F1B points, block for block against a fresh simulation."""
    step = expected["step_time"]
    assert timeline["step_time"] == step and len(timeline["devices"]) == q["n_l"]
    for device, (blocks, busy) in enumerate(zip(timeline["devices"], expected["busy_fraction_per_device"])):
        assert abs(sum(b["end"] - b["start"] for b in blocks) - busy * step) < 1e-9, (q, device)
        assert all(a["end"] <= b["start"] for a, b in zip(blocks, blocks[1:])), (q, device)
        assert all(0 <= b["micro_batch"] < q["n_mu"] and 0 <= b["first_layer"] < q["d_l"] for b in blocks)
    assert max(b["end"] for blocks in timeline["devices"] for b in blocks) == step
    if q["schedule"] == "1f1b":  # one block per micro-batch and pass, each from the start of one simulated interval
        intervals = simulate(pipeline_schedule("1f1b", q["n_l"], q["n_mu"], q["d_l"])).intervals  # to the end of another
        for device, blocks in enumerate(timeline["devices"]):
            mine = [i for i in intervals if i.operation.device == device and i.operation.is_compute]
            starts, ends = {Fraction(i.start) for i in mine}, {Fraction(i.end) for i in mine}
            assert len(blocks) == 2 * q["n_mu"], (q, device)
            assert all(Fraction(b["start"]) in starts and Fraction(b["end"]) in ends for b in blocks), (q, device)


def test_the_command_line_itself_agrees(script):
    """One point through the real ``lgacc simulate`` process (JSON as printed), with a transfer size."""
    for q in ({"schedule": "interleaved", "n_l": 4, "n_mu": 8, "n_v": 2, "d_l": 16},):
        command = [sys.executable, "-m", "lgacc", "simulate", "--schedule", q["schedule"], "--n-l", str(q["n_l"]),
                   "--n-mu", str(q["n_mu"]), "--n-v", str(q["n_v"]), "--d-l", str(q["d_l"]), "--format", "json",
                   "--transfer-bytes", "4096"]
        cli = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
        (js,) = run_node(script, ALL, [q | {"transfer_bytes": 4096}])
        assert js["ok"] == cli, q


def test_names_and_values_outside_the_grid_get_one_line(script):
    bad = [{"schedule": name, "n_l": 2, "n_mu": 4, "d_l": 8} for name in ("constructor", "__proto__", "toString", "")]
    bad += [{"schedule": "gpipe", "n_l": 3, "n_mu": 4, "d_l": 8}, {"schedule": "gpipe", "n_l": "2", "n_mu": 4, "d_l": 8},
            {"schedule": "gpipe", "n_l": 2, "n_mu": 4, "d_l": 8, "transfer_bytes": -5},
            {"schedule": "gpipe", "n_l": 2, "n_mu": 4, "d_l": 8, "constructor": 1}, None, [], "gpipe"]
    for q, js in zip(bad, run_node(script, ALL, bad)):
        assert js.get("name") == "InputError" and "\n" not in js["error"], (q, js)
    (standard,) = run_node(script, ALL, [{"schedule": "standard", "n_l": 2, "n_mu": 4, "d_l": 8}])
    assert standard["ok"]["schedule"] == "standard" and standard["ok"] == _handler(
        {"schedule": "standard", "n_l": 2, "n_mu": 4, "n_v": 1, "d_l": 8})
