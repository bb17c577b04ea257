"""The schedules of the paper's figures, as per-device programs turned into operations.

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

The state decides the transfers around each block (appendix
sec:parameter_buffer_details, table:mixed_buffering):

* ``replicated``: each device holds its layers; with ``n_b > 1`` every layer's
  gradients are all-reduced once, after their last backward block.
* ``partitioned`` / ``offloaded``: every block restores its layer's parameters
  (all-gather over the network, or a host copy) and every backward block reduces
  its gradients (reduce-scatter, or a copy to the host), under *mixed buffering*:
  two parameter buffers, so the restore of the next block is prefetched while the
  current one computes, and one gradient buffer, so a block's gradients wait for
  the previous reduction to free it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .operations import (
    BufferUse,
    Durations,
    Kind,
    Operation,
    Schedule,
    Stream,
    check_size,
    check_sizes,
)
from ..errors import UserInputError

#: Buffers of mixed buffering (table:mixed_buffering).
PARAMETER_BUFFERS = 2
GRADIENT_BUFFERS = 1


@dataclass(frozen=True)
class Block:
    """The forward or backward pass of one layer over some micro-batches, on one device."""

    backward: bool
    layer: int
    micro_batches: tuple[int, ...]
    #: Zero-bubble split of a backward block: ``"input"`` (recomputation and activation
    #: gradients, which the previous layer waits for) or ``"weight"`` (weight gradients,
    #: which nothing downstream waits for); ``None`` for a whole backward pass.
    split: str | None = None

    @property
    def weight_gradients(self) -> bool:
        """Whether this block completes weight gradients (so a reduction may follow)."""
        return self.backward and self.split != "input"


def standard_accumulation_program(d_l: int, n_mu: int) -> list[Block]:
    """Standard gradient accumulation: one micro-batch at a time through the whole model."""
    program = []
    for micro_batch in range(n_mu):
        program += [Block(False, layer, (micro_batch,)) for layer in range(d_l)]
        program += [Block(True, layer, (micro_batch,)) for layer in reversed(range(d_l))]
    return program


def layered_program(layers: list[int], n_mu: int) -> list[Block]:
    """Layered order: all micro-batches of a layer before the next layer (forward, then backward)."""
    all_micro_batches = tuple(range(n_mu))
    return [Block(False, layer, all_micro_batches) for layer in layers] + [
        Block(True, layer, all_micro_batches) for layer in reversed(layers)
    ]


def gpipe_program(layers: list[int], n_mu: int) -> list[Block]:
    """A contiguous pipeline stage: every micro-batch's forward, then every micro-batch's backward."""
    program = []
    for micro_batch in range(n_mu):
        program += [Block(False, layer, (micro_batch,)) for layer in layers]
    for micro_batch in range(n_mu):
        program += [Block(True, layer, (micro_batch,)) for layer in reversed(layers)]
    return program


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
    return _build(name, [program], 1, n_mu, d_l, n_b, state, layered, durations)


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
    return _build(name, programs, n_l, n_mu, d_l, n_b, state, modular, durations)


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


def _stage_blocks(layers: list[int], micro_batch: int, part: str) -> list[Block]:
    """One micro-batch through a chunk of contiguous layers: ``forward``, ``backward``
    (whole), or the ``input`` / ``weight`` halves of a split backward pass."""
    if part == "forward":
        return [Block(False, layer, (micro_batch,)) for layer in layers]
    split = None if part == "backward" else part
    return [Block(True, layer, (micro_batch,), split) for layer in reversed(layers)]


def one_f_one_b_order(n_l: int, n_mu: int, device: int) -> list[tuple[str, int]]:
    """PipeDream-Flush (1F1B): ``n_l - 1 - device`` warm-up forwards, then one forward and
    one backward in turn, then the remaining backwards (Narayanan et al. 2021)."""
    warmup = min(n_l - 1 - device, n_mu)
    order = [("forward", m) for m in range(warmup)]
    for j in range(n_mu - warmup):
        order += [("forward", warmup + j), ("backward", j)]
    return order + [("backward", m) for m in range(n_mu - warmup, n_mu)]


def zero_bubble_h1_order(n_l: int, n_mu: int, device: int) -> list[tuple[str, int]]:
    """ZB-H1 (Qi et al. 2024): the 1F1B order with each backward split into an input-gradient
    pass B and a weight-gradient pass W.  W passes are deferred by ``device`` slots in the
    steady state, so that the last devices' ramp-down fills with deferred W's; the
    micro-batches in flight stay at most ``n_l`` as in 1F1B."""
    warmup = min(n_l - 1 - device, n_mu)
    order = [("forward", m) for m in range(warmup)]
    weights = 0
    deferred = device
    for j in range(n_mu - warmup):
        order += [("forward", warmup + j), ("input", j)]
        if j >= deferred:
            order.append(("weight", weights))
            weights += 1
    for m in range(n_mu - warmup, n_mu):
        order.append(("input", m))
        if weights < m + 1:  # one deferred W after each B of the ramp-down, the rest at the end
            order.append(("weight", weights))
            weights += 1
    return order + [("weight", m) for m in range(weights, n_mu)]


def interleaved_order(n_l: int, n_mu: int, n_v: int, device: int) -> list[tuple[str, int, int]]:
    """Megatron-LM's interleaved 1F1B (Narayanan et al. 2021): units of (pass, chunk,
    micro-batch) in groups of ``n_l`` micro-batches per chunk, ``2 (n_l - 1 - device) +
    (n_v - 1) n_l`` warm-up forwards, then one forward and one backward in turn."""
    total = n_mu * n_v

    def unit(i: int, backward: bool) -> tuple[int, int]:
        group, offset = divmod(i % (n_l * n_v), n_l)
        chunk = n_v - 1 - group if backward else group
        return chunk, (i // (n_l * n_v)) * n_l + offset

    warmup = min(2 * (n_l - 1 - device) + (n_v - 1) * n_l, total)
    order = [("forward", *unit(i, False)) for i in range(warmup)]
    for j in range(total - warmup):
        order += [("forward", *unit(warmup + j, False)), ("backward", *unit(j, True))]
    return order + [("backward", *unit(i, True)) for i in range(total - warmup, total)]


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
                program += _stage_blocks(chunk_layers(k, 0), m, part)
        elif name == "zero-bubble":
            for part, m in zero_bubble_h1_order(n_l, n_mu, k):
                program += _stage_blocks(chunk_layers(k, 0), m, part)
        elif name == "interleaved":
            if n_v == 1:
                units = [(part, 0, m) for part, m in one_f_one_b_order(n_l, n_mu, k)]
            else:
                units = interleaved_order(n_l, n_mu, n_v, k)
            for part, chunk, m in units:
                program += _stage_blocks(chunk_layers(k, chunk), m, part)
        else:  # breadth-first
            for chunk in range(n_v):
                for m in range(n_mu):
                    program += _stage_blocks(chunk_layers(k, chunk), m, "forward")
            for chunk in reversed(range(n_v)):
                for m in range(n_mu):
                    program += _stage_blocks(chunk_layers(k, chunk), m, "backward")
        programs.append(program)
    return _build(name, programs, n_l, n_mu, d_l, n_b, state, False, durations)


def check_flag(name: str, value: object) -> bool:
    """A yes/no option must be a bool: ``"yes"`` or ``0`` would silently pick a schedule."""
    if not isinstance(value, bool):
        raise UserInputError(f"{name} must be True or False, got {value!r}")
    return value


def _check_durations(durations: object) -> None:
    if not isinstance(durations, Durations):
        raise UserInputError(f"durations must be a lgacc.schedule.Durations, got {durations!r}")


class _Builder:
    """Accumulates operations; mutable only while one schedule is being built."""

    def __init__(self) -> None:
        self.rows: list[dict] = []

    def add(self, kind: Kind, device: int, stream: Stream, duration, layer: int, micro_batch, deps=()) -> int:
        self.rows.append(
            dict(kind=kind, device=device, stream=stream, duration=duration, layer=layer,
                 micro_batch=micro_batch, deps=[d for d in deps if d is not None])
        )
        return len(self.rows) - 1

    def freeze(self) -> tuple[Operation, ...]:
        return tuple(
            Operation(index=i, **{**row, "deps": tuple(dict.fromkeys(row["deps"]))}) for i, row in enumerate(self.rows)
        )


def _build(name, programs, n_l, n_mu, d_l, n_b, state, layered, durations: Durations) -> Schedule:
    builder = _Builder()
    buffers: list[BufferUse] = []
    compute: dict[tuple[Kind, int, int], int] = {}
    order: list[list[int]] = []  # compute operations of each device, in stream order
    transfer_stream = Stream.HOST if state == "offloaded" else Stream.NETWORK
    for device, program in enumerate(programs):
        order.append(_device_pass1(builder, device, program, n_b, state, transfer_stream, durations, compute, buffers))
    _link_layers(builder, order, compute, d_l, durations)
    return Schedule(
        name=name, n_l=n_l, n_mu=n_mu, d_l=d_l, n_b=n_b, state=state, layered=layered,
        durations=durations, operations=builder.freeze(), buffers=tuple(buffers),
    )


def _device_pass1(builder, device, program, n_b, state, transfer_stream, durations, compute, buffers) -> list[int]:
    """Compute operations and data-parallel transfers of one device, in program order."""
    compute_order: list[int] = []
    single = lambda block: block.micro_batches[0] if len(block.micro_batches) == 1 else None  # noqa: E731

    # Replicated: a layer's gradients are complete after its last backward block.
    last_backward_block = {b.layer: n for n, b in enumerate(program) if b.weight_gradients}
    restores: dict[int, int] = {}
    parameter_releases: list[int] = []
    previous_reduction = None

    def restore(n: int) -> None:
        block = program[n]
        # Two parameter buffers: the restore of block n reuses the buffer block n-2 released.
        freed = parameter_releases[n - PARAMETER_BUFFERS] if n >= PARAMETER_BUFFERS else None
        restores[n] = builder.add(Kind.RESTORE, device, transfer_stream, durations.restore, block.layer, single(block), [freed])

    for n, block in enumerate(program):
        if state != "replicated":
            if n == 0:
                restore(0)
            if n + 1 < len(program):
                # Prefetch before this block's reduction so that, on the transfer stream,
                # Restore(next) overlaps Gradients(this) and Reduce(this) overlaps
                # Activations(next), as in table:mixed_buffering.
                # Its buffer is the one block n-1 releases, already known here.
                restore(n + 1)
        first_backward = None
        ops = []
        for micro_batch in block.micro_batches:
            wait = [restores.get(n)] if not ops else []
            if not block.backward:
                ops.append(builder.add(Kind.FORWARD, device, Stream.COMPUTE, durations.forward, block.layer, micro_batch, wait))
                compute[(Kind.FORWARD, block.layer, micro_batch)] = ops[-1]
                continue
            if block.split == "weight":
                wait = wait + [compute[(Kind.BACKWARD, block.layer, micro_batch)]]
                if first_backward is None and state != "replicated":
                    wait = wait + [previous_reduction]
                ops.append(builder.add(Kind.WEIGHT_GRADIENT, device, Stream.COMPUTE, durations.split_backward,
                                       block.layer, micro_batch, wait))
                compute[(Kind.WEIGHT_GRADIENT, block.layer, micro_batch)] = ops[-1]
                if first_backward is None:
                    first_backward = ops[-1]
                continue
            if durations.recompute:
                ops.append(builder.add(Kind.RECOMPUTE, device, Stream.COMPUTE, durations.forward, block.layer, micro_batch, wait))
                compute[(Kind.RECOMPUTE, block.layer, micro_batch)] = ops[-1]
                wait = []
            if block.split == "input":
                ops.append(builder.add(Kind.BACKWARD, device, Stream.COMPUTE, durations.split_backward,
                                       block.layer, micro_batch, wait))
                compute[(Kind.BACKWARD, block.layer, micro_batch)] = ops[-1]
                continue
            if first_backward is None and state != "replicated":
                # One gradient buffer: wait until the previous reduction has emptied it.
                wait = wait + [previous_reduction]
            ops.append(builder.add(Kind.BACKWARD, device, Stream.COMPUTE, durations.backward, block.layer, micro_batch, wait))
            compute[(Kind.BACKWARD, block.layer, micro_batch)] = ops[-1]
            if first_backward is None:
                first_backward = ops[-1]
        compute_order += ops
        if state != "replicated":
            parameter_releases.append(ops[-1])
            buffers.append(BufferUse("parameter", device, block.layer, restores[n], ops[-1]))
            if block.weight_gradients:
                previous_reduction = builder.add(
                    Kind.REDUCE, device, transfer_stream, durations.reduce, block.layer, single(block), [ops[-1]]
                )
                buffers.append(BufferUse("gradient", device, block.layer, first_backward, previous_reduction))
        elif n_b > 1 and block.weight_gradients and last_backward_block[block.layer] == n:
            builder.add(Kind.ALL_REDUCE, device, Stream.NETWORK, durations.all_reduce, block.layer, None, [ops[-1]])
    return compute_order


def _link_layers(builder, order, compute, d_l, durations: Durations) -> None:
    """Data dependencies between layers; a pipeline send wherever they cross devices.

    Sends are appended per producing device in its compute order, so each device's
    pipeline stream sends in the order the data is produced.
    """
    first_backward_kind = Kind.RECOMPUTE if durations.recompute else Kind.BACKWARD
    rows = builder.rows
    for device_ops in order:
        for producer in device_ops:
            row = rows[producer]
            kind, layer, micro_batch = row["kind"], row["layer"], row["micro_batch"]
            if kind is Kind.FORWARD and layer + 1 < d_l:
                consumer = compute[(Kind.FORWARD, layer + 1, micro_batch)]
            elif kind is Kind.FORWARD:  # last layer: the loss starts the backward pass
                consumer = compute[(first_backward_kind, layer, micro_batch)]
            elif kind is Kind.BACKWARD and layer > 0:
                # The activation gradient feeds the next layer's backward, recomputation
                # included: recomputation is triggered by that gradient's arrival.
                consumer = compute[(first_backward_kind, layer - 1, micro_batch)]
            else:
                continue
            if rows[consumer]["device"] == row["device"]:
                rows[consumer]["deps"].append(producer)
            else:
                send = builder.add(Kind.SEND, row["device"], Stream.PIPELINE, durations.send, layer, micro_batch, [producer])
                rows[consumer]["deps"].append(send)
    # Backward of a layer needs its own forward's checkpoint (same device, earlier in
    # stream order in every program here, so this only documents the dependency).
    for (kind, layer, micro_batch), index in compute.items():
        if kind is first_backward_kind:
            rows[index]["deps"].append(compute[(Kind.FORWARD, layer, micro_batch)])
