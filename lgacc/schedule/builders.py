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
    check_sizes,
)

#: Buffers of mixed buffering (table:mixed_buffering).
PARAMETER_BUFFERS = 2
GRADIENT_BUFFERS = 1


@dataclass(frozen=True)
class Block:
    """The forward or backward pass of one layer over some micro-batches, on one device."""

    backward: bool
    layer: int
    micro_batches: tuple[int, ...]


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
    check_sizes(n_l, n_mu, d_l, n_b, state)
    per_device = d_l // n_l
    if modular:
        programs = [layered_program(list(range(k, d_l, n_l)), n_mu) for k in range(n_l)]
    else:
        programs = [gpipe_program(list(range(k * per_device, (k + 1) * per_device)), n_mu) for k in range(n_l)]
    name = f"{'modular' if modular else 'standard'} pipeline"
    return _build(name, programs, n_l, n_mu, d_l, n_b, state, modular, durations)


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
    last_backward_block = {b.layer: n for n, b in enumerate(program) if b.backward}
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
            if durations.recompute:
                ops.append(builder.add(Kind.RECOMPUTE, device, Stream.COMPUTE, durations.forward, block.layer, micro_batch, wait))
                compute[(Kind.RECOMPUTE, block.layer, micro_batch)] = ops[-1]
                wait = []
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
            if block.backward:
                previous_reduction = builder.add(
                    Kind.REDUCE, device, transfer_stream, durations.reduce, block.layer, single(block), [ops[-1]]
                )
                buffers.append(BufferUse("gradient", device, block.layer, first_backward, previous_reduction))
        elif n_b > 1 and block.backward and last_backward_block[block.layer] == n:
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
