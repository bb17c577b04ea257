"""The schedules by name: the paper's figures' and the pipeline schedules compared with them, with their input rules.

Every schedule is a *program* per device: a sequence of blocks, each the forward
or backward pass of one layer over some micro-batches.  The four orderings differ
only in their programs:

==============================  ============================================================
schedule                        program of device ``k``
==============================  ============================================================
standard accumulation           for each micro-batch: forward of every layer, then backward
layered accumulation            for each layer: forward of every micro-batch; then backward
                                (sec:layer_grad_accumulation, fig:gradient_accumulation)
standard pipeline               contiguous stage ``k``: forwards of every micro-batch, then
                                backwards (GPipe; top of fig:pipeline_comparison)
modular pipeline                layers ``i`` with ``i mod n_l == k``, scheduled as layered
                                accumulation (sec:modular_pipeline)
==============================  ============================================================

Each builder checks its inputs, picks every device's program (:mod:`.programs`) and hands them
to :mod:`.lowering`, which adds the transfers the state calls for (restores and reductions under
mixed buffering, all-reduces, pipeline sends) and returns the :class:`Schedule`.
"""

from __future__ import annotations

from lgacc.errors import UserInputError

from .lowering import schedule_from_programs
from .operations import Durations, Schedule, check_size, check_sizes
from .programs import (
    Block,
    gpipe_program,
    interleaved_order,
    layered_program,
    one_f_one_b_order,
    stage_blocks,
    standard_accumulation_program,
    zero_bubble_h1_order,
)

__all__ = ["SCHEDULES", "ALIASES", "LOOPED", "gradient_accumulation", "pipeline", "pipeline_schedule", "schedule_name",
           "check_flag"]

def gradient_accumulation(
    d_l: int,
    n_mu: int,
    *,
    layered: bool,
    state: str = "replicated",
    n_b: int = 2,
    durations: Durations = Durations(),
) -> Schedule:
    """Standard or layered gradient accumulation on one device of a data-parallel group.

    The ``n_b`` data-parallel devices run identical programs, so one is simulated;
    its collectives stand for the group's.  fig:gradient_accumulation uses a
    replicated state, fig:gradient_accumulation_partitioned a partitioned or
    offloaded one.
    """
    check_flag("layered", layered)
    _check_durations(durations)
    check_sizes(1, n_mu, d_l, n_b, state)
    program = layered_program(list(range(d_l)), n_mu) if layered else standard_accumulation_program(d_l, n_mu)
    name = f"{'layered' if layered else 'standard'} gradient accumulation"
    return schedule_from_programs(name, [program], 1, n_mu, d_l, n_b, state, layered, durations)


def pipeline(
    n_l: int,
    n_mu: int,
    d_l: int,
    *,
    modular: bool,
    state: str = "replicated",
    n_b: int = 1,
    durations: Durations = Durations(),
) -> Schedule:
    """A standard (contiguous, GPipe) or modular pipeline over ``n_l`` devices (fig:pipeline_comparison).

    Standard: device ``k`` holds layers ``k d_l/n_l`` to ``(k+1) d_l/n_l - 1``.
    Modular: device ``k`` holds the layers ``i`` with ``i mod n_l == k``.
    With ``n_b > 1`` the instance is one of ``n_b`` data-parallel ones and reduces its gradients.
    """
    check_flag("modular", modular)
    _check_durations(durations)
    check_sizes(n_l, n_mu, d_l, n_b, state)
    per_device = d_l // n_l
    if modular:
        programs = [layered_program(list(range(k, d_l, n_l)), n_mu) for k in range(n_l)]
    else:
        programs = [gpipe_program(list(range(k * per_device, (k + 1) * per_device)), n_mu) for k in range(n_l)]
    name = f"{'modular' if modular else 'standard'} pipeline"
    return schedule_from_programs(name, programs, n_l, n_mu, d_l, n_b, state, modular, durations)


#: The pipeline schedules :func:`pipeline_schedule` builds; ``standard`` is the paper's name for ``gpipe``.
SCHEDULES = ("gpipe", "1f1b", "interleaved", "breadth-first", "zero-bubble", "modular")
ALIASES = {"standard": "gpipe"}
#: Schedules with ``n_v`` virtual stages (chunks) per device, in looped placement.
LOOPED = frozenset({"interleaved", "breadth-first"})


def schedule_name(name: object) -> str:
    """The canonical name of a schedule (``standard`` -> ``gpipe``), or a :class:`UserInputError`."""
    if not isinstance(name, str) or ALIASES.get(name, name) not in SCHEDULES:
        known = ", ".join((*SCHEDULES, *ALIASES))
        raise UserInputError(f"schedule must be one of {known}, got {name!r}")
    return ALIASES.get(name, name)


def pipeline_schedule(
    name: str,
    n_l: int,
    n_mu: int,
    d_l: int,
    *,
    n_v: int = 1,
    state: str = "replicated",
    n_b: int = 1,
    durations: Durations = Durations(),
) -> Schedule:
    """One step of the pipeline schedule ``name`` (one of :data:`SCHEDULES`, or ``standard``).

    Placement: ``gpipe``, ``1f1b`` and ``zero-bubble`` give device ``k`` the contiguous
    stage of layers ``k d_l/n_l .. (k+1) d_l/n_l - 1``; ``interleaved`` and ``breadth-first``
    cut the model into ``n_l n_v`` contiguous chunks and give device ``k`` the chunks
    ``k, k + n_l, ...`` (looped placement); ``modular`` is looped with one layer per chunk.
    Order: ``breadth-first`` and ``modular`` run every micro-batch through a chunk before
    the next chunk (forward, then backward in reverse); the others follow their papers.
    """
    name = schedule_name(name)
    _check_durations(durations)
    check_sizes(n_l, n_mu, d_l, n_b, state)
    check_size("n_v (virtual stages per device)", n_v)
    if n_v != 1 and name not in LOOPED:
        raise UserInputError(f"n_v = {n_v} applies only to {' and '.join(sorted(LOOPED))}; {name} has one stage per device")
    per_device = d_l // n_l
    if name == "modular":
        return pipeline(n_l, n_mu, d_l, modular=True, state=state, n_b=n_b, durations=durations)
    if name in LOOPED:
        if per_device % n_v:
            raise UserInputError(f"n_v = {n_v} must divide d_l / n_l = {per_device} (each chunk gets whole layers)")
        if name == "interleaved" and n_v > 1 and n_mu % n_l:
            raise UserInputError(
                f"interleaved needs n_mu a multiple of n_l (micro-batches go in groups of n_l), got n_mu = {n_mu}, n_l = {n_l}"
            )
    chunk_size = per_device // n_v

    def chunk_layers(device: int, chunk: int) -> list[int]:
        first = (chunk * n_l + device) * chunk_size
        return list(range(first, first + chunk_size))

    programs = []
    for k in range(n_l):
        program: list[Block] = []
        if name == "gpipe":
            program = gpipe_program(chunk_layers(k, 0), n_mu)
        elif name == "1f1b":
            for part, m in one_f_one_b_order(n_l, n_mu, k):
                program += stage_blocks(chunk_layers(k, 0), m, part)
        elif name == "zero-bubble":
            for part, m in zero_bubble_h1_order(n_l, n_mu, k):
                program += stage_blocks(chunk_layers(k, 0), m, part)
        elif name == "interleaved":
            if n_v == 1:
                units = [(part, 0, m) for part, m in one_f_one_b_order(n_l, n_mu, k)]
            else:
                units = interleaved_order(n_l, n_mu, n_v, k)
            for part, chunk, m in units:
                program += stage_blocks(chunk_layers(k, chunk), m, part)
        else:  # breadth-first
            for chunk in range(n_v):
                for m in range(n_mu):
                    program += stage_blocks(chunk_layers(k, chunk), m, "forward")
            for chunk in reversed(range(n_v)):
                for m in range(n_mu):
                    program += stage_blocks(chunk_layers(k, chunk), m, "backward")
        programs.append(program)
    return schedule_from_programs(name, programs, n_l, n_mu, d_l, n_b, state, False, durations)


def check_flag(name: str, value: object) -> bool:
    """A yes/no option must be a bool: ``"yes"`` or ``0`` would silently pick a schedule."""
    if not isinstance(value, bool):
        raise UserInputError(f"{name} must be True or False, got {value!r}")
    return value


def _check_durations(durations: object) -> None:
    if not isinstance(durations, Durations):
        raise UserInputError(f"durations must be a lgacc.schedule.Durations, got {durations!r}")


