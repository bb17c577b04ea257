"""One call of the evaluator: the checked, broadcast configuration arrays and the derived terms read from them.

:func:`prepare` turns :func:`~lgacc.model.evaluator.evaluate_many`'s arguments into a :class:`Context`
(raising :class:`~lgacc.errors.UserInputError` for malformed input, :mod:`.inputs`); the steps of the
evaluation (:mod:`.memory`, :mod:`.overheads`, :mod:`.rules`) read every derived quantity through it:

* :meth:`Context.call` -- a derivation of :mod:`.mapping` (generated numeric code) at every configuration;
* :meth:`Context.term` -- a pipeline schedule's closed-form term (``SCHEDULE_TERMS``);
* :meth:`Context.overlapped` -- eq:overlap_condition in the chosen overlap convention;
* :meth:`Context.by_case` -- a value picked per configuration from one of the declarative tables.

Every array has the broadcast shape :attr:`Context.shape`.  Arithmetic runs under the caller's
``np.errstate`` (a division by an infinite intensity is zero on purpose).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from ..assumptions import Assumptions, apply_to_hardware
from ..config import Method, parse_method
from ..hardware import Hardware, load_hardware
from ..transformer import Transformer
from .inputs import (
    as_bool_array,
    as_int_array,
    as_model,
    broadcast_flag,
    broadcast_together,
    check_critical_batch,
    check_options,
    check_schedule,
    checked_product,
)
from .mapping import functions, overlapped_overhead, physical_functions, schedule_functions

__all__ = ["Context", "prepare"]


@dataclass(frozen=True, eq=False)
class Context:
    """The configurations of one evaluation, broadcast to one shape, and how to read derived terms at them."""

    model: Transformer
    hardware: Hardware
    method: Method
    assumptions: Assumptions
    schedule: str | None
    form: str
    n_b: np.ndarray
    n_l: np.ndarray
    n_a: np.ndarray
    n_mu: np.ndarray
    b_mu: np.ndarray
    n_v: np.ndarray
    offload: np.ndarray
    partitioned: np.ndarray
    batch: np.ndarray
    n_gpu: np.ndarray
    #: whether the pipeline transfers may be overlapped (``n_mu > n_l`` unless the caller says)
    overlap: np.ndarray
    #: the generated functions of ``form`` (:func:`.mapping.functions`), and per overlapped kind its passes
    #: (:func:`.mapping.physical_functions`, empty under the paper's convention)
    functions: Mapping[str, Callable]
    kinds: Mapping[str, tuple]
    #: ``(b, n_b, n_l, n_a, n_mu)`` as floats, the generated functions' configuration arguments
    floats: tuple[np.ndarray, ...]

    @property
    def shape(self) -> tuple[int, ...]:
        return self.n_b.shape

    @property
    def pipelined(self) -> np.ndarray:
        return self.n_l > 1

    @property
    def physical(self) -> bool:
        return self.assumptions.convention == "physical"

    @property
    def loss(self) -> float:
        """An overlapped transfer sees the bandwidth times ``overlap_efficiency``: its ratio grows by this."""
        return 1.0 / self.assumptions.overlap_efficiency

    def model_args(self) -> tuple:
        m = self.model
        return (m.d_s, m.d_m, m.d_l, m.d_a, m.n_I, m.p, m.p_l)

    def call(self, name: str | Callable) -> np.ndarray:
        """The derivation ``name`` (or a generated function) at every configuration."""
        fn = self.functions[name] if isinstance(name, str) else name
        fbatch, fb, fl, fa, fmu = self.floats
        return np.broadcast_to(np.asarray(fn(*self.model_args(), fbatch, fb, fl, fa, fmu), dtype=float), self.shape)

    def flops_at_critical_batch(self, b_c: float) -> np.ndarray:
        """eq:critical_batch's batch in the flops per batch (the paper's time counts 100 k steps at ``b_c``)."""
        _, fb, fl, fa, fmu = self.floats
        return np.asarray(self.functions["flops_per_batch"](*self.model_args(), b_c, fb, fl, fa, fmu), dtype=float)

    def term(self, name: str) -> np.ndarray:
        """The schedule's term ``name`` (:data:`lgacc.model.evaluator.mapping.SCHEDULE_TERMS`)."""
        fn = schedule_functions(self.form)[f"{name}:{self.schedule}"]
        fbatch, fb, fl, fa, fmu = self.floats
        fv = self.n_v.astype(float)
        return np.broadcast_to(np.asarray(fn(*self.model_args(), fbatch, fb, fl, fa, fmu, fv), dtype=float),
                               self.shape)

    def overlapped(self, kind: str, ratio: np.ndarray) -> np.ndarray:
        """eq:overlap_condition in the chosen convention: the paper's ``max(0, r - 1)``, or the
        physical sum over passes ``(C_p / S) max(0, r k_p - 1)`` (:mod:`lgacc.model.formulas.overlap`)."""
        if not self.physical:
            return overlapped_overhead(ratio)
        total = np.zeros(self.shape)
        for fraction, relative in self.kinds[kind]:
            total = total + self.call(fraction) * overlapped_overhead(ratio * relative)
        return total

    def by_case(self, table: Mapping, conditions: list[np.ndarray], value: Callable[[Any], Any]) -> np.ndarray:
        """``value(entry)`` selected elementwise by the boolean ``conditions`` keying ``table``."""
        out = np.zeros(self.shape)
        for key, entry in table.items():
            key = key if isinstance(key, tuple) else (key,)
            where = np.ones(self.shape, bool)
            for flag, condition in zip(key, conditions):
                where &= condition if flag else ~condition
            if where.any():
                out = np.where(where, value(entry), out)
        return out


def prepare(model, hardware, method, *, n_b, n_l, n_a, n_mu, b_mu, offload, partitioned, overlap_pipeline,
            max_overhead, steps, form, assumptions, schedule, n_v) -> Context:
    """Check and broadcast :func:`~lgacc.model.evaluator.evaluate_many`'s arguments (see there)."""
    model = as_model(model)
    check_options(max_overhead, steps, form, assumptions)
    check_critical_batch(model, assumptions)
    hardware = apply_to_hardware(load_hardware(hardware), assumptions)
    method = parse_method(method)
    sched = check_schedule(schedule, n_v)
    nb, nl, na, nmu, bmu, nv = (
        as_int_array(name, v)
        for name, v in (("n_b", n_b), ("n_l", n_l), ("n_a", n_a), ("n_mu", n_mu), ("b_mu", b_mu), ("n_v", n_v))
    )
    off = as_bool_array("offload", offload)
    part = (
        np.asarray(method.default_partitioned)
        if partitioned is None
        else as_bool_array("partitioned", partitioned)
    )
    nb, nl, na, nmu, bmu, off, part, nv = broadcast_together(
        n_b=nb, n_l=nl, n_a=na, n_mu=nmu, b_mu=bmu, offload=off, partitioned=part, n_v=nv)
    batch = checked_product("the batch b = n_b n_mu b_mu", nb, nmu, bmu)
    n_gpu = checked_product("the GPU count n_gpu = n_b n_l n_a", nb, nl, na)
    if overlap_pipeline is None:
        overlap = nmu > nl
    else:
        overlap = broadcast_flag("overlap_pipeline", overlap_pipeline, nb.shape)
    physical = assumptions.convention == "physical"
    return Context(model=model, hardware=hardware, method=method, assumptions=assumptions, schedule=sched, form=form,
                   n_b=nb, n_l=nl, n_a=na, n_mu=nmu, b_mu=bmu, n_v=nv, offload=off, partitioned=part, batch=batch,
                   n_gpu=n_gpu, overlap=overlap, functions=functions(form),
                   kinds=physical_functions(form) if physical else {},
                   floats=tuple(x.astype(float) for x in (batch, nb, nl, na, nmu)))
