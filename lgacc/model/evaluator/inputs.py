"""The evaluator's input rules: what :func:`lgacc.model.evaluator.evaluate` and :func:`~lgacc.model.evaluator.evaluate_many` accept.

One job: turn what a caller passes into what the evaluator computes with, or
raise one :class:`~lgacc.errors.UserInputError` naming the value and the rule.
Every count (``n_b, n_l, n_a, n_mu, b_mu, n_v``) is a positive integer of at most
``2**63 - 1`` (:data:`lgacc.errors.MAX_INT64`), and the products the evaluator
forms from them (the batch, the GPU count, the chunks) stay below ``2**62``; every
flag is a boolean; ``max_overhead``, ``steps``, ``form`` and ``assumptions`` are
in range; a schedule has chunks only where it can (:data:`CHUNKED_SCHEDULES`);
a configuration fits its model.  Rules that make a configuration *infeasible*
rather than malformed (batch, memory, overheads) are not here: the evaluator
flags them.

May import: :mod:`lgacc.errors`, :mod:`lgacc.model.assumptions`, :mod:`lgacc.model.config`,
:mod:`lgacc.model.transformer`, :mod:`lgacc.model.evaluator.mapping` (the forms and the schedules); numpy.

>>> as_int_array("n_b", [1, 2.0]).tolist()
[1, 2]
>>> as_int_array("n_b", 0)
Traceback (most recent call last):
...
lgacc.errors.UserInputError: n_b must be positive integers (>= 1), got 0
>>> as_count("n_v", [1, 2])
Traceback (most recent call last):
...
lgacc.errors.UserInputError: n_v=[1, 2] must be one positive integer, not an array
>>> broadcast_together(n_b=np.array([1, 2, 3]), n_l=np.array([1, 2]))
Traceback (most recent call last):
...
lgacc.errors.UserInputError: the arrays do not broadcast to one shape: n_b (3,), n_l (2,)
"""

from __future__ import annotations

import math

import numpy as np

from lgacc.errors import MAX_INT64, UserInputError, positive_finite

from ..assumptions import Assumptions, critical_batch
from ..config import TrainingConfig
from ..transformer import Transformer, named_model
from .mapping import CHUNKED_SCHEDULES, FORMS, parse_schedule

__all__ = [
    "as_model",
    "as_int_array",
    "as_bool_array",
    "as_count",
    "broadcast_together",
    "broadcast_flag",
    "checked_product",
    "check_options",
    "check_schedule",
    "check_critical_batch",
    "check_config",
    "check_chunks",
    "MAX_CONFIGURATIONS",
]

#: Products of counts (the batch, the GPU count, the chunks) stay below this: int64 with room to spare.
PRODUCT_LIMIT = 2.0**62
#: Configurations one :func:`~lgacc.model.evaluator.evaluate_many` call takes at most (an array, or the shape
#: the arrays broadcast to): a few seconds of work, as many as a search holds (``lgacc.search.bounds``).
MAX_CONFIGURATIONS = 6_000_000


def as_model(model: Transformer | str) -> Transformer:
    """``model`` itself, or the named model (:func:`lgacc.model.transformer.named_model`)."""
    model = named_model(model) if isinstance(model, str) else model
    if not isinstance(model, Transformer):
        raise UserInputError(f"model={model!r} must be a Transformer or a model name")
    return model


def as_int_array(name: str, value) -> np.ndarray:
    """``value`` (a count or an array of counts) as an int64 array of positive integers."""
    if isinstance(value, (bool, np.bool_)):
        raise UserInputError(f"{name}={value!r} must be a positive integer, not a boolean")
    if isinstance(value, (str, bytes)):
        raise UserInputError(f"{name}={_shown(value)} must be a positive integer, not text")
    try:
        array = np.asarray(value)
    except (OverflowError, ValueError, TypeError):
        raise UserInputError(f"{name}={_shown(value)} must be positive integers") from None
    if array.size > MAX_CONFIGURATIONS:
        raise UserInputError(f"{name} holds {array.size:,} values: at most {MAX_CONFIGURATIONS:,} configurations "
                             "are evaluated in one call")
    if array.dtype == object and array.size and all(isinstance(v, int) and not isinstance(v, bool) for v in array.flat):
        if any(v > MAX_INT64 for v in array.flat):
            raise UserInputError(f"{name}={_shown(value)} exceeds the largest supported count 2**63 - 1")
        if any(v < 1 for v in array.flat):
            raise UserInputError(f"{name} must be positive integers (>= 1), got {_shown(value)}")
        array = array.astype(np.int64)
    if array.dtype == bool or not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)):
        raise UserInputError(f"{name} must be positive integers, got {value!r}")
    if np.issubdtype(array.dtype, np.unsignedinteger) and np.any(array > MAX_INT64):
        raise UserInputError(f"{name}={value!r} exceeds the largest supported count 2**63 - 1")
    if np.issubdtype(array.dtype, np.floating):
        if not np.all(np.isfinite(array)) or not np.all(array == np.round(array)):
            raise UserInputError(f"{name} must be positive integers, got {value!r}")
        if np.any(array >= 2.0**63):
            raise UserInputError(f"{name}={value!r} exceeds the largest supported count 2**63 - 1")
        array = array.astype(np.int64)
    if np.any(array < 1):
        raise UserInputError(f"{name} must be positive integers (>= 1), got {value!r}")
    return array.astype(np.int64)


def as_count(name: str, value) -> int:
    """``value`` as one positive integer (:func:`as_int_array`'s rules; an array is not one count)."""
    array = as_int_array(name, value)
    if array.ndim:
        raise UserInputError(f"{name}={value!r} must be one positive integer, not an array")
    return int(array)


def broadcast_together(**arrays: np.ndarray) -> list[np.ndarray]:
    """The arrays broadcast to one shape (numpy's rules), or an error naming each array's shape."""
    try:
        shape = np.broadcast_shapes(*(np.shape(value) for value in arrays.values()))
        if math.prod(shape) > MAX_CONFIGURATIONS:
            shapes = ", ".join(f"{name} {np.shape(value)}" for name, value in arrays.items() if np.ndim(value))
            raise UserInputError(f"the arrays ({shapes}) broadcast to {math.prod(shape):,} configurations: at most "
                                 f"{MAX_CONFIGURATIONS:,} are evaluated in one call")
        return np.broadcast_arrays(*arrays.values())
    except ValueError as error:
        if isinstance(error, UserInputError):
            raise
        shapes = ", ".join(f"{name} {np.shape(value)}" for name, value in arrays.items() if np.ndim(value))
        raise UserInputError(f"the arrays do not broadcast to one shape: {shapes}") from None


def broadcast_flag(name: str, value, shape: tuple[int, ...]) -> np.ndarray:
    """The flag ``value`` (:func:`as_bool_array`) broadcast to the configurations' ``shape``."""
    array = as_bool_array(name, value)
    try:
        return np.broadcast_to(array, shape)
    except ValueError:
        raise UserInputError(f"{name} of shape {array.shape} does not broadcast to the configurations' "
                             f"shape {shape}") from None


def checked_product(names: str, *arrays: np.ndarray) -> np.ndarray:
    """The elementwise product of positive int64 arrays, or a clear error where it would overflow int64."""
    approx = np.ones(np.broadcast(*arrays).shape)
    for array in arrays:
        approx = approx * array.astype(float)
    if np.any(approx >= PRODUCT_LIMIT):
        raise UserInputError(f"{names} = {float(np.max(approx)):.3g} is beyond the supported range (below 2**62)")
    out = arrays[0]
    for array in arrays[1:]:
        out = out * array
    return out


def as_bool_array(name: str, value) -> np.ndarray:
    """``value`` (a flag or an array of flags) as a boolean array; numbers are not flags."""
    array = np.asarray(value)
    if array.dtype != bool:
        raise UserInputError(f"{name} must be true or false, got {value!r}")
    return array


def check_options(max_overhead, steps, form, assumptions) -> None:
    """The evaluator's options: a positive finite overhead cap, a positive step count, a known form."""
    if positive_finite(max_overhead) is None:
        raise UserInputError(f"max_overhead={_shown(max_overhead)} must be a positive finite number "
                             "(eq:overhead_condition's epsilon)")
    if isinstance(steps, (bool, np.bool_)) or not isinstance(steps, (int, np.integer)) or not 1 <= steps <= MAX_INT64:
        raise UserInputError(f"steps={_shown(steps)} must be a positive integer of at most 2**63 - 1")
    if not isinstance(form, str) or form not in FORMS:
        raise UserInputError(f"form={_shown(form)} must be one of {', '.join(FORMS)}")
    if not isinstance(assumptions, Assumptions):
        raise UserInputError(f"assumptions={assumptions!r} must be an lgacc.model.assumptions.Assumptions")


def _shown(value) -> str:
    """A value as an error message quotes it: at most 60 characters (``10**400`` has 401 digits)."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:24]}...({len(text)} characters)"


def check_critical_batch(model: Transformer, assumptions: Assumptions) -> None:
    """eq:critical_batch's ``b_c`` (scaled by ``critical_batch_scale``) below :data:`PRODUCT_LIMIT` samples: the
    training time counts ``steps b_c d_s`` tokens, which a larger batch makes overflow to infinity."""
    b_c = critical_batch(model, assumptions)
    if not b_c < PRODUCT_LIMIT:
        shown = f"{b_c:.3g}" if math.isfinite(b_c) else "larger than a float holds"
        raise UserInputError(f"the critical batch b_c = {shown} of {model.name} (critical_batch_scale="
                             f"{assumptions.critical_batch_scale:g}) is beyond the supported range (below 2**62 samples)")


def check_schedule(schedule: str | None, n_v) -> str | None:
    """The schedule's name (``None`` stays ``None``: the method's own pipeline), after checking ``n_v``:
    positive integers, and 1 unless the schedule has chunks (:data:`CHUNKED_SCHEDULES`)."""
    name = None if schedule is None else parse_schedule(schedule)
    chunks = as_int_array("n_v", n_v)
    if name not in CHUNKED_SCHEDULES and np.any(chunks != 1):
        shown = int(chunks.flat[np.flatnonzero(chunks != 1)[0]])
        which = "no schedule is given" if name is None else f"schedule {name} has one chunk per device"
        raise UserInputError(f"n_v={shown}: {which}; n_v (chunks per device) applies to "
                             f"{' and '.join(CHUNKED_SCHEDULES)} only")
    return name


def check_config(config, model: Transformer, *, heads_cap: bool) -> None:
    """``config`` is a :class:`TrainingConfig` that fits ``model`` (:meth:`TrainingConfig.check_model`)."""
    if not isinstance(config, TrainingConfig):
        raise UserInputError(f"config must be a TrainingConfig, got {type(config).__name__}")
    config.check_model(model, heads_cap=heads_cap)


def check_chunks(config: TrainingConfig, model: Transformer, schedule: str | None, n_v: int, *,
                 vocabulary_chunks: bool = False) -> None:
    """Every chunk of a pipelined schedule holds at least one layer: ``n_l n_v <= d_l`` when ``n_l > 1``; with
    ``vocabulary_chunks`` (the calibrated recipe's: the embedding and the head take a chunk each, as Llama 3's
    pipeline does) ``n_l n_v <= d_l + 2``."""
    slots = model.d_l + (2 if vocabulary_chunks else 0)
    if config.n_l > 1 and config.n_l * n_v > slots:
        what = (f"layer count d_l={model.d_l} plus the embedding's and the head's chunks" if vocabulary_chunks
                else f"layer count d_l={model.d_l}")
        raise UserInputError(
            f"training configuration: n_l n_v = {config.n_l} x {n_v} = {config.n_l * n_v} exceeds the {model.name} "
            f"{what} (a chunk of the {schedule} schedule needs at least one layer)"
        )
