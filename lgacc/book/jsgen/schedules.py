"""The schedule explorer's data: the simulator's timelines and measurements for a grid of pipeline schedules.

``python -m lgacc.book.jsgen.schedules OUT.js`` writes one self-contained script (data and a few lines of lookup,
no simulator) that adds to ``window.lgacc``:

* ``lgacc.schedule({schedule, n_l, n_mu, n_v, d_l, transfer_bytes})``: the object ``lgacc simulate --format json``
  prints for those arguments (the same computation, :func:`lgacc.schedule.summary.simulation`, run when the book is
  built), or an ``InputError`` with the simulator's own message where it refuses them, or one that names the grid;
* ``lgacc.scheduleTimeline(...)``: the step's compute intervals per device, for the Gantt chart;
* ``lgacc.scheduleGrid``: the values each argument takes.

The grid (:data:`GRID`) keeps the page light: every schedule of :data:`lgacc.schedule.SCHEDULES` on 2, 4 or 8
devices, 4 to 16 micro-batches, 1, 2 or 4 chunks per device and 8 to 32 layers, with the paper's cost model
(forward 1, backward 1 + 2 with recomputation, free transfers: the defaults of ``lgacc simulate``).  A timeline is
stored as blocks: the simulator's consecutive intervals of one micro-batch and one pass through adjacent layers of
one device, merged (a stage's forward pass is one block), each as seven characters of base 64.
"""

from __future__ import annotations

if __name__ == "__main__":  # python -m lgacc.book.jsgen.schedules: the module runs under its own name, its imports inside the guard
    import sys

    try:
        from lgacc.errors import run_quietly
    except KeyboardInterrupt:
        sys.stderr.write("python -m lgacc.book.jsgen.schedules: interrupted\n")
        raise SystemExit(130)
    sys.exit(run_quietly("python -m lgacc.book.jsgen.schedules", "lgacc.book.jsgen.schedules"))

import itertools
import json
import math
import sys
from fractions import Fraction
from pathlib import Path

from matplotlib.colors import to_hex

from lgacc.cache.results import cached
from lgacc.errors import UserInputError
from lgacc.schedule import SCHEDULES, Kind
from lgacc.schedule.builders import ALIASES, LOOPED
from lgacc.schedule.gantt import layer_colours, light
from lgacc.schedule.summary import simulation

from .command import usage_exit

__all__ = ["GRID", "PHASES", "grid_data", "generate", "write", "main"]

#: The values of each argument the page offers (``lgacc simulate`` takes any).
GRID = {
    "schedule": SCHEDULES,
    "n_l": (2, 4, 8),
    "n_mu": (4, 8, 16),
    "n_v": (1, 2, 4),
    "d_l": (8, 16, 32),
}
#: The passes a block belongs to: the backward pass holds its recomputation; the weight gradients are the split
#: backward's second half (zero-bubble).
PHASES = {Kind.FORWARD: 0, Kind.RECOMPUTE: 1, Kind.BACKWARD: 1, Kind.WEIGHT_GRADIENT: 2}
_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _digits(value: int, width: int) -> str:
    if not 0 <= value < 64**width:
        raise ValueError(f"{value} does not fit {width} base-64 digits: the explorer's grid is too large for its encoding")
    return "".join(_DIGITS[(value // 64**i) % 64] for i in reversed(range(width)))


def _blocks(timeline) -> tuple[int, list[list[list]]]:
    """The compute intervals of each device, merged into blocks ``[start, end, micro_batch, phase, first, last layer]``
    on an integer clock, and the clock's ticks per time unit."""
    computes = sorted((i for i in timeline.intervals if i.operation.is_compute),
                      key=lambda i: (i.operation.device, i.start, i.operation.index))
    scale = math.lcm(*(Fraction(t).denominator for i in computes for t in (i.start, i.end)))
    devices: dict[int, list[list]] = {device: [] for device in timeline.schedule.devices}
    for interval in computes:
        op = interval.operation
        start, end = int(Fraction(interval.start) * scale), int(Fraction(interval.end) * scale)
        phase = PHASES[op.kind]
        blocks = devices[op.device]
        last = blocks[-1] if blocks else None
        if last and last[1] == start and last[2] == op.micro_batch and last[3] == phase and abs(op.layer - last[5]) <= 1:
            last[1], last[5] = end, op.layer
        else:
            blocks.append([start, end, op.micro_batch, phase, op.layer, op.layer])
    return scale, [devices[d] for d in sorted(devices)]


def _encode(devices: list[list[list]]) -> list[str]:
    """Each device's blocks as a string: gap since the last block and duration (two digits each), micro-batch and
    phase, first and last layer (one digit each)."""
    out = []
    for blocks in devices:
        text, clock = [], 0
        for start, end, micro_batch, phase, first, last in blocks:
            text.append(_digits(start - clock, 2) + _digits(end - start, 2) + _digits(3 * micro_batch + phase, 1)
                        + _digits(first, 1) + _digits(last, 1))
            clock = end
        out.append("".join(text))
    return out


def _point(schedule: str, n_l: int, n_mu: int, n_v: int, d_l: int) -> dict:
    try:
        values, timeline = simulation(schedule, n_l, n_mu, d_l, n_v=n_v)
    except UserInputError as error:
        return {"error": str(error)}
    scale, devices = _blocks(timeline)
    return {"values": values, "scale": scale, "devices": _encode(devices)}


def grid_data(grid: dict = GRID) -> dict:
    """Every point of ``grid`` (:data:`GRID`: the values of each argument): its measurements (the keys of
    ``lgacc simulate --format json``, listed once) and its encoded timeline, or the simulator's message where it
    refuses the point; the layer colours of the book's Gantt charts (:func:`lgacc.schedule.gantt.layer_colours`,
    forward shade and backward shade). Seconds of simulation, kept on disk (:mod:`lgacc.cache.results`)."""
    def compute() -> dict:
        keys, points, errors = None, {}, []
        for schedule, n_l, n_mu, n_v, d_l in itertools.product(*(grid[k] for k in GRID)):
            point = _point(schedule, n_l, n_mu, n_v, d_l)
            key = f"{schedule}|{n_l}|{n_mu}|{n_v}|{d_l}"
            if "error" in point:
                if point["error"] not in errors:
                    errors.append(point["error"])
                points[key] = errors.index(point["error"])
                continue
            keys = keys or list(point["values"])
            points[key] = {"v": [point["values"][k] for k in keys], "s": point["scale"], "t": point["devices"]}
        colours = {d_l: {"forward": [to_hex(light(c)) for c in layer_colours(d_l)],
                         "backward": [to_hex(c) for c in layer_colours(d_l)]} for d_l in grid["d_l"]}
        return {"grid": {k: grid[k] for k in GRID}, "aliases": dict(ALIASES), "looped": sorted(LOOPED), "keys": keys, "points": points,
                "errors": errors, "colours": colours, "digits": _DIGITS}
    return cached("jsgen-schedules", tuple((k, tuple(grid[k])) for k in GRID), compute)


_LOOKUP = r"""
  // the calculator's InputError where the page has it, so that one instanceof test covers both scripts
  const InputError = (root.lgacc && root.lgacc.InputError) || class InputError extends Error {};
  InputError.prototype.name = "InputError";
  const own = (table, key) => (typeof key === "string" && Object.hasOwn(table, key) ? table[key] : undefined);
  const show = (v) => { try { const t = typeof v === "number" ? String(v) : JSON.stringify(v); return t === undefined ? String(v) : t; } catch (e) { return typeof v; } };
  function point(input) {
    if (input === null || typeof input !== "object" || Array.isArray(input))
      throw new InputError("input must be an object with keys schedule, n_l, n_mu, n_v, d_l");
    const known = ["schedule", "n_l", "n_mu", "n_v", "d_l", "transfer_bytes"];
    for (const key of Object.keys(input)) if (!known.includes(key)) throw new InputError(`unknown input key ${show(key)}; expected one of ${known.join(", ")}`);
    const name = typeof input.schedule === "string" ? (own(S.aliases, input.schedule) || input.schedule) : undefined;
    if (!S.grid.schedule.includes(name))
      throw new InputError(`schedule must be one of ${[...S.grid.schedule, ...Object.keys(S.aliases)].join(", ")}, got ${show(input.schedule)}`);
    const args = [name];
    for (const field of ["n_l", "n_mu", "n_v", "d_l"]) {
      const value = field === "n_v" && input.n_v === undefined ? 1 : input[field];
      if (!S.grid[field].includes(value))
        throw new InputError(`${field}=${show(value)} is not in the explorer's grid (${S.grid[field].join(", ")}); lgacc simulate takes any value`);
      args.push(value);
    }
    const found = own(S.points, args.join("|"));
    if (typeof found === "number") throw new InputError(S.errors[found]);
    return found;
  }
  // lgacc simulate --format json, as computed when the book was built; transfer_bytes as its --transfer-bytes (default 1).
  function schedule(input) {
    const p = point(input);
    const bytes = input.transfer_bytes === undefined ? 1 : input.transfer_bytes;
    if (typeof bytes !== "number" || !isFinite(bytes) || bytes < 0 || !isFinite(bytes * p.v[S.keys.indexOf("pipeline_sends")]))
      throw new InputError(`transfer_bytes=${show(bytes)} must be a number of bytes >= 0 whose traffic per step is finite`);
    const out = {};
    S.keys.forEach((key, i) => { out[key] = Array.isArray(p.v[i]) ? [...p.v[i]] : p.v[i]; });
    out.schedule = input.schedule;
    out.pipeline_bytes_per_step = out.pipeline_sends * bytes;
    return out;
  }
  const digit = new Map([...S.digits].map((c, i) => [c, i]));
  const number = (text, at, width) => { let v = 0; for (let i = 0; i < width; i++) v = 64 * v + digit.get(text[at + i]); return v; };
  // The compute blocks of each device: start and end (in forward passes of one layer for one micro-batch), the
  // micro-batch, the pass (forward, backward, weight gradients) and the layers.
  function scheduleTimeline(input) {
    const p = point(input);
    const devices = p.t.map((text) => {
      const blocks = [];
      let clock = 0;
      for (let at = 0; at < text.length; at += 7) {
        const start = clock + number(text, at, 2), end = start + number(text, at + 2, 2), mp = number(text, at + 4, 1);
        blocks.push({ start: start / p.s, end: end / p.s, micro_batch: Math.floor(mp / 3), phase: PHASES[mp % 3],
                      first_layer: number(text, at + 5, 1), last_layer: number(text, at + 6, 1) });
        clock = end;
      }
      return blocks;
    });
    return { devices, step_time: p.v[S.keys.indexOf("step_time")], colours: S.colours[String(input.d_l)] };
  }
  const PHASES = ["forward", "backward", "weight gradients"];
"""


def generate(grid: dict = GRID) -> str:
    """The explorer's script as text (``grid``: the points it holds, :data:`GRID` unless a test asks for fewer)."""
    payload = json.dumps(grid_data(grid), separators=(",", ":"))
    return "\n".join([
        "/* lgacc schedule explorer: generated by `python -m lgacc.book.jsgen.schedules` from the simulator (lgacc.schedule).",
        "   Do not edit; rebuild the book. Loads nothing; adds schedule, scheduleTimeline, scheduleGrid to window.lgacc. */",
        "(function (root) {",
        '  "use strict";',
        f"  const S = {payload};",
        _LOOKUP,
        "  const api = root.lgacc || (root.lgacc = {});",
        "  Object.assign(api, { schedule, scheduleTimeline, scheduleGrid: S.grid });",
        "  if (!api.InputError) api.InputError = InputError;",
        '  if (typeof module === "object" && module.exports) module.exports = { schedule, scheduleTimeline, scheduleGrid: S.grid, InputError };',
        '})(typeof window !== "undefined" ? window : globalThis);',
        "",
    ])


def write(path: str | Path, grid: dict = GRID) -> Path:
    """Write the script to ``path`` (folders created) and return it."""
    path = Path(path)
    text = generate(grid)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    """``python -m lgacc.book.jsgen.schedules OUT.js``."""
    argv = sys.argv[1:] if argv is None else argv
    code = usage_exit(argv, "usage: python -m lgacc.book.jsgen.schedules OUT.js", len(argv) == 1)
    if code is not None:
        return code
    print(write(argv[0]))
    return 0
