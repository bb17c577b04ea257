"""Per-device programs turned into the operations of one training step, with their transfers.

The state decides the transfers around each block (appendix sec:parameter_buffer_details,
table:mixed_buffering):

* ``replicated``: each device holds its layers; with ``n_b > 1`` every layer's
  gradients are all-reduced once, after their last backward block.
* ``partitioned`` / ``offloaded``: every block restores its layer's parameters
  (all-gather over the network, or a host copy) and every backward block reduces
  its gradients (reduce-scatter, or a copy to the host), under *mixed buffering*:
  two parameter buffers, so the restore of the next block is prefetched while the
  current one computes, and one gradient buffer, so a block's gradients wait for
  the previous reduction to free it.

Between layers, the data dependencies, with a pipeline send wherever they cross devices.
"""

from __future__ import annotations

from .operations import BufferUse, Durations, Kind, Operation, Schedule, Stream
from .programs import Block

__all__ = ["PARAMETER_BUFFERS", "GRADIENT_BUFFERS", "schedule_from_programs"]

#: Buffers of mixed buffering (table:mixed_buffering).
PARAMETER_BUFFERS = 2
GRADIENT_BUFFERS = 1


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


def schedule_from_programs(name: str, programs: list[list[Block]], n_l: int, n_mu: int, d_l: int, n_b: int, state: str,
                           layered: bool, durations: Durations) -> Schedule:
    """The operations of one step in which device ``k`` runs ``programs[k]`` under ``state``, as a :class:`Schedule`."""
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
