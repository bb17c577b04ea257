"""Vocabulary of the schedule simulator: operations, streams, buffers, durations.

A :class:`Schedule` is a static description of one training step: which
operation runs on which stream of which device, in which order, and what it
waits for.  It carries no times; :func:`lgacc.schedule.engine.simulate` turns it
into a :class:`~lgacc.schedule.engine.Timeline`.

Durations are in arbitrary units (the figures use the forward pass of one layer
for one micro-batch as the unit).  Any real numbers work, including
:class:`fractions.Fraction`, in which case every time computed is exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction
from numbers import Rational, Real

from lgacc.errors import UserInputError

#: Largest schedule the simulator builds: refuse rather than exhaust memory or hang.
MAX_OPERATIONS = 200_000

STATES = ("replicated", "partitioned", "offloaded")


class Stream(str, Enum):
    """The in-order queues of one device (as CUDA streams are)."""

    COMPUTE = "compute"
    #: Data-parallel collectives: parameter restores (all-gather), gradient reductions.
    NETWORK = "network"
    #: Pipeline-parallel point-to-point transfers.  Kept apart from ``NETWORK`` because
    #: real implementations issue them on their own communicator and stream; sharing a
    #: queue would let a long gradient reduction block a pipeline send.
    PIPELINE = "pipeline"
    #: CPU-GPU copies of an offloaded training state.
    HOST = "host"


class Kind(str, Enum):
    FORWARD = "forward"
    #: Recomputation of a layer's activations from its checkpoint, first half of the
    #: backward pass with activation checkpointing ("Activations" in table:mixed_buffering).
    RECOMPUTE = "recompute"
    #: Gradient computation of a layer ("Gradients" in table:mixed_buffering).
    BACKWARD = "backward"
    #: Weight-gradient half of a split backward pass (zero-bubble schedules, Qi et al.):
    #: ``BACKWARD`` is then the input-gradient half, the only one the previous layer waits for.
    WEIGHT_GRADIENT = "weight_gradient"
    #: Parameter restore: all-gather of a partitioned layer, or host-to-GPU copy if offloaded.
    RESTORE = "restore"
    #: Gradient reduction of a partitioned layer: reduce-scatter (or GPU-to-host copy).
    REDUCE = "reduce"
    #: Gradient reduction of a replicated layer: reduce-scatter + all-gather (ring all-reduce).
    ALL_REDUCE = "all_reduce"
    #: Pipeline transfer of one micro-batch's activations (forward) or their gradients (backward).
    SEND = "send"


COMPUTE_KINDS = frozenset({Kind.FORWARD, Kind.RECOMPUTE, Kind.BACKWARD, Kind.WEIGHT_GRADIENT})
REDUCTION_KINDS = frozenset({Kind.REDUCE, Kind.ALL_REDUCE})

#: Data moved per device by one collective, in units of one all-gather of one layer's
#: parameters; an all-reduce is a reduce-scatter followed by an all-gather (sec:distributed).
COLLECTIVE_VOLUME = {Kind.RESTORE: 1, Kind.REDUCE: 1, Kind.ALL_REDUCE: 2}


@dataclass(frozen=True)
class Operation:
    """One operation of a step; ``deps`` are indices of operations it waits for.

    ``micro_batch`` is ``None`` for an operation serving several micro-batches
    (a restore or reduction in layered gradient accumulation).
    """

    index: int
    kind: Kind
    device: int
    stream: Stream
    duration: Real
    layer: int
    micro_batch: int | None
    deps: tuple[int, ...] = ()

    @property
    def is_compute(self) -> bool:
        return self.kind in COMPUTE_KINDS


@dataclass(frozen=True)
class BufferUse:
    """One lifetime of a parameter or gradient buffer (appendix sec:parameter_buffer_details).

    The buffer is held from the start of operation ``acquire`` to the end of
    operation ``release``.
    """

    kind: str  # "parameter" or "gradient"
    device: int
    layer: int
    acquire: int
    release: int


@dataclass(frozen=True)
class Durations:
    """Operation durations, per layer and (for compute and sends) per micro-batch.

    Defaults follow the paper's cost model (appendix sec:resource_usage): the forward
    pass costs 1, the backward pass 3 = 1 (activation recomputation) + 2 (gradients)
    with ``recompute=True``, or 2 without.  Transfers default to free (0), the setting
    in which the pipeline bubble has its closed form.
    """

    forward: Real = 1
    #: Gradient computation only; recomputation adds ``forward`` when ``recompute``.
    backward: Real = 2
    recompute: bool = True
    #: One restore of one layer's parameters (all-gather, or host copy if offloaded).
    restore: Real = 0
    #: One reduce-scatter of one layer's gradients; a replicated state's all-reduce takes twice this.
    reduce: Real = 0
    #: One pipeline transfer of one micro-batch's activations or activation gradients.
    send: Real = 0

    def __post_init__(self) -> None:
        for name in ("forward", "backward", "restore", "reduce", "send"):
            value = getattr(self, name)
            if type(value).__module__ == "numpy" and hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
                object.__setattr__(self, name, value.item())  # a numpy scalar as the Python number it holds
        for name in ("forward", "backward"):
            _check_duration(name, getattr(self, name), positive=True)
        for name in ("restore", "reduce", "send"):
            _check_duration(name, getattr(self, name), positive=False)
        if not isinstance(self.recompute, bool):
            raise UserInputError(f"recompute must be True or False, got {self.recompute!r}")
        _check_span({name: getattr(self, name) for name in ("forward", "backward", "restore", "reduce", "send")})

    @property
    def backward_pass(self) -> Real:
        """Compute time of the whole backward pass of one layer for one micro-batch."""
        return self.backward + (self.forward if self.recompute else 0)

    @property
    def split_backward(self) -> Real:
        """Each half of a split gradient computation (input gradients, weight gradients):
        the two matrix multiplications of a linear layer's backward pass cost the same."""
        if isinstance(self.backward, Rational):
            return Fraction(self.backward) / 2
        return self.backward / 2

    @property
    def all_reduce(self) -> Real:
        return 2 * self.reduce


#: Where a duration is a float, every nonzero duration is at least this fraction of the largest: a step
#: adds up to 200,000 of them, and a float sum would lose a smaller one entirely (1 + 1e-16 == 1).
DURATION_SPAN = 1e-9


def _check_span(durations: dict[str, Real]) -> None:
    """Nonzero float durations within :data:`DURATION_SPAN` of the largest (exact rationals need no bound)."""
    if all(isinstance(value, Rational) for value in durations.values()):
        return
    largest = max(durations, key=lambda name: durations[name])
    for name, value in durations.items():
        if 0 < value < durations[largest] * DURATION_SPAN:
            raise UserInputError(
                f"duration {name}={value:g} is below {DURATION_SPAN:g} of the largest duration, {largest}="
                f"{durations[largest]:g}: the simulated times could not tell it from zero (floating point)")


def _check_duration(name: str, value: object, *, positive: bool) -> None:
    rule = "> 0" if positive else ">= 0"
    shown = repr(value) if len(repr(value)) <= 60 else f"{repr(value)[:24]}...({len(repr(value))} characters)"
    try:
        finite = not isinstance(value, bool) and isinstance(value, Real) and math.isfinite(value)
    except OverflowError:  # 10**400: a number no float holds
        finite = False
    if not finite:
        raise UserInputError(f"duration {name} must be a finite number {rule} (a float), got {shown}")
    if (value <= 0) if positive else (value < 0):
        raise UserInputError(f"duration {name} must be {rule}, got {value!r}")


@dataclass(frozen=True)
class Schedule:
    """One training step of one data-parallel instance: its operations and buffer lifetimes.

    Operations on the same ``(device, stream)`` run in the order of ``operations``
    (in-order streams); each also waits for its ``deps``.
    """

    name: str
    n_l: int
    n_mu: int
    d_l: int
    n_b: int
    state: str
    #: Layered order (all micro-batches of a layer in a row): layered accumulation or modular pipeline.
    layered: bool
    durations: Durations
    operations: tuple[Operation, ...]
    buffers: tuple[BufferUse, ...] = field(default=())

    @property
    def devices(self) -> range:
        return range(self.n_l)


def check_size(name: str, value: object, minimum: int = 1) -> int:
    """``value`` as an int >= ``minimum``, or a :class:`UserInputError` naming it."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise UserInputError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise UserInputError(f"{name} must be >= {minimum}, got {value}")
    return value


def check_sizes(n_l: int, n_mu: int, d_l: int, n_b: int, state: str) -> None:
    """The rules every schedule obeys; errors name the value and the rule."""
    check_size("n_l (pipeline-parallel devices)", n_l)
    check_size("n_mu (micro-batches)", n_mu)
    check_size("d_l (layers)", d_l)
    check_size("n_b (data-parallel devices)", n_b)
    if d_l % n_l:
        raise UserInputError(f"n_l = {n_l} must divide d_l = {d_l} (each device gets d_l / n_l layers)")
    if state not in STATES:
        raise UserInputError(f"state must be one of {', '.join(STATES)}, got {state!r}")
    if state == "partitioned" and n_b < 2:
        raise UserInputError(f"a partitioned state needs n_b >= 2 data-parallel devices, got n_b = {n_b}")
    bound = operation_bound(n_l, n_mu, d_l, state)
    if bound > MAX_OPERATIONS:
        def short(value: int) -> str:  # 10**400 is not printed digit by digit
            return f"{value:,}" if len(str(value)) <= 24 else f"a {len(str(value))}-digit number"

        raise UserInputError(
            f"n_l = {short(n_l)}, n_mu = {short(n_mu)}, d_l = {short(d_l)} ({state} state) needs up to {short(bound)} "
            "operations, "
            f"above the simulator's limit of {MAX_OPERATIONS:,}; use fewer layers or micro-batches"
        )


def operation_bound(n_l: int, n_mu: int, d_l: int, state: str) -> int:
    """An upper bound on the operations of a step, computed before building anything.

    Per layer and micro-batch: up to 3 compute operations (forward, recompute,
    backward) and 2 pipeline sends; up to 3 collectives (2 restores, 1 reduction)
    per layer and micro-batch with a partitioned or offloaded state.
    """
    per_layer_micro_batch = 3 + (2 if n_l > 1 else 0) + (3 if state != "replicated" else 0)
    return d_l * n_mu * per_layer_micro_batch + d_l
