"""What each device runs, in order: a schedule's *program* is a list of :class:`Block` (the forward
or backward pass of one layer over some micro-batches) per device.

The paper's programs (standard and layered gradient accumulation, a contiguous GPipe stage) and
the per-device orders of the pipeline schedules it is compared with (1F1B, ZB-H1, interleaved
1F1B), each from its paper; :mod:`.lowering` turns the programs into operations and
:mod:`.builders` picks the programs of a schedule by name.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Block",
    "standard_accumulation_program",
    "layered_program",
    "gpipe_program",
    "stage_blocks",
    "one_f_one_b_order",
    "zero_bubble_h1_order",
    "interleaved_order",
]


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


def stage_blocks(layers: list[int], micro_batch: int, part: str) -> list[Block]:
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
