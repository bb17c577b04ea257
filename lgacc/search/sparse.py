"""The search over the expert- and context-parallel degrees (issue #36): the paper's search at each ``(n_e, n_c)``.

For each expert-parallel degree ``n_e`` (by default every power of two dividing the model's experts: 1 for a dense
model) and each context-parallel degree ``n_c`` (by default 1: the paper's searches stay the paper's; ``"auto"``
in the command line: the powers of two up to the GPUs of a node that divide ``d_s``), the paper's search
(:func:`lgacc.search.fastest` or :func:`lgacc.search.cheapest`) runs with the degrees fixed, its GPU budget divided
by ``n_c``; the best result wins: the fastest (ties: fewer GPUs), or the fewest GPUs (ties: the faster).  Each inner
search is the paper's, so the outer one finds the best configuration the paper's search finds at some
``(n_e, n_c)`` of the lists.
"""

from __future__ import annotations

from lgacc.model.hardware import load_hardware
from lgacc.model.transformer import Transformer, named_model

from .core import cheapest, fastest
from .result import SearchResult

__all__ = ["expert_degrees", "context_degrees", "auto_context_degrees", "search_degrees"]


def expert_degrees(model: Transformer) -> tuple[int, ...]:
    """Every power of two dividing the experts (``(1,)`` for a dense model)."""
    out, d = [1], 2
    while model.experts and model.experts % d == 0:
        out.append(d)
        d *= 2
    return tuple(out)


def context_degrees(model: Transformer, gpus_per_node: int) -> tuple[int, ...]:
    """Powers of two up to ``gpus_per_node`` that divide the sequence ``d_s``."""
    out, d = [1], 2
    while d <= gpus_per_node and model.d_s % d == 0:
        out.append(d)
        d *= 2
    return tuple(out)


def _key(result: SearchResult, objective: str):
    e = result.evaluation
    return (e.time_days, e.n_gpu) if objective == "fastest" else (e.n_gpu, e.time_days)


def search_degrees(model, hardware, method, parallelism, *, objective: str = "fastest", target_days=None,
                   n_es=None, n_cs=(1,), max_gpus=None, **options) -> SearchResult:
    """The best of the paper's searches over ``n_es`` x ``n_cs`` (see the module); an infeasible result (the
    first one's reasons) when none is feasible."""
    model = named_model(model) if isinstance(model, str) else model
    n_es = expert_degrees(model) if n_es is None else tuple(n_es)
    best, first = None, None
    for n_c in n_cs:
        budget = None if max_gpus is None else max_gpus // n_c
        if budget == 0:
            continue
        for n_e in n_es:
            if objective == "fastest":
                result = fastest(model, hardware, method, parallelism, max_gpus=budget, n_e=n_e, n_c=n_c, **options)
            else:
                result = cheapest(model, hardware, method, parallelism, target_days, max_gpus=budget, n_e=n_e,
                                  n_c=n_c, **options)
            first = first or result
            if result.feasible and (best is None or _key(result, objective) < _key(best, objective)):
                best = result
    return best if best is not None else first


def auto_context_degrees(model, hardware) -> tuple[int, ...]:
    """:func:`context_degrees` on the hardware's node."""
    model = named_model(model) if isinstance(model, str) else model
    return context_degrees(model, load_hardware(hardware).gpus_per_node)
