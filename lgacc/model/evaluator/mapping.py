"""The evaluator as data: which derivation each overhead reads in each case, the two overlap rules,
and the numeric code generated from the derivations.

:func:`evaluation_map` is the whole map as plain data, for a code generator (the
in-browser calculator) to emit the evaluator without retyping its logic;
:mod:`lgacc.model.evaluator` walks the same tables.  The numeric functions are printed once
from the sympy expressions into modules committed with the package (:mod:`lgacc.cache.codegen`,
``lgacc/model/generated/``), so importing this module does not import sympy.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from lgacc.cache import codegen as _codegen
from lgacc.errors import UserInputError
from lgacc.paths import PACKAGE

__all__ = [
    "ARGUMENTS",
    "FORMS",
    "OVERHEADS",
    "CAPPED_OVERHEADS",
    "overlapped_overhead",
    "not_overlapped_overhead",
    "DATA_TRANSFERS",
    "PIPELINE_TRANSFERS",
    "STATE_OFFLOAD",
    "BUBBLE",
    "SCHEDULES",
    "SCHEDULE_ALIASES",
    "CHUNKED_SCHEDULES",
    "METHOD_SCHEDULES",
    "SCHEDULE_TERMS",
    "SCHEDULE_ARGUMENTS",
    "parse_schedule",
    "default_schedule",
    "evaluation_map",
    "expressions",
    "schedule_expressions",
    "functions",
    "physical_functions",
    "schedule_functions",
    "RING_ARGUMENTS",
    "ring_functions",
]

#: Named overheads, in the order they are reported.
OVERHEADS = ("bubble", "tensor", "pipeline", "data", "state_offload", "checkpoint_offload", "pcie")
#: Overheads whose size is capped by ``max_overhead`` (the bubble is what the search trades off).
CAPPED_OVERHEADS = tuple(name for name in OVERHEADS if name != "bubble")
FORMS = ("paper", "exact")

#: The arguments of every generated function, in the paper's notation (names of :mod:`lgacc.model.symbols`).
ARGUMENTS = ("d_s", "d_m", "d_l", "d_a", "n_I", "p", "p_l", "b", "n_b", "n_l", "n_a", "n_mu")


# --- the two overlap rules -------------------------------------------------------------------


def overlapped_overhead(ratio):
    """eq:overlap_condition: a transfer overlapped with computation costs ``max(0, nu_net / nu_op - 1)``
    (``ratio = nu_net / nu_op``; zero when ``nu_op >= nu_net``), relative to the overlapped operation."""
    return np.maximum(0.0, ratio - 1)


def not_overlapped_overhead(ratio):
    """eq:overhead_condition: a transfer that is not overlapped costs ``nu_net / nu_op`` (``ratio``)."""
    return ratio


# --- the declarative map ---------------------------------------------------------------------

#: Gradient reduction (and parameter restore when partitioned), by
#: ``(layered, partitioned, pipelined)``: ``(derivation key, overlapped, physical kind)``.
#: The physical kind names :func:`lgacc.model.formulas.overlap.physical_passes`' derivation.
DATA_TRANSFERS: dict[tuple[bool, bool, bool], tuple[str, bool, str | None]] = {
    (False, False, False): ("data_intensity_base", True, "data_base"),
    (False, False, True): ("data_intensity_base_pipe", False, None),
    (False, True, False): ("data_intensity_base_partition", True, "data_base_partition"),
    (False, True, True): ("data_intensity_base_partition", True, "data_base_partition"),
    (True, False, False): ("data_intensity_improved", True, "data_improved"),
    (True, False, True): ("data_intensity_improved", True, "data_improved"),
    (True, True, False): ("data_intensity_improved_partition", True, "data_improved_partition"),
    (True, True, True): ("data_intensity_improved_partition", True, "data_improved_partition"),
}

#: Pipeline transfers by ``layered``: ``(derivation key, physical kind)``; overlapped per ``pipeline_overlap``.
PIPELINE_TRANSFERS = {False: ("pipeline_intensity_base", "pipeline_base"), True: ("pipeline_intensity_impr", "pipeline_improved")}
#: State offload by ``(layered, partitioned)``: derivation key (always overlapped, physical kind ``state_offload``).
STATE_OFFLOAD = {
    (False, False): "state_offload_intensity_base",
    (False, True): "state_offload_intensity_base_part",
    (True, False): "state_offload_intensity_impr",
    (True, True): "state_offload_intensity_impr_part",
}
#: The bubble by ``layered``.
BUBBLE = {False: "bubble_standard", True: "bubble_modular"}

# --- pipeline schedules (--schedule): each term from lgacc.model.formulas.schedules.evaluator_terms ----

#: The functions of the assumption ``dp_network="ring"`` and their arguments, in the order of
#: :func:`lgacc.model.formulas.ring.evaluator_functions` (``n_inner``: the model-parallel ranks inside a node
#: before the data ranks; ``G``: GPUs per node; ``g``: data-parallel peers per node).
RING_ARGUMENTS = {
    "peers": ("n_b", "n_inner", "G"),
    "card_share": ("n_b", "g"),
    "threshold": ("nu_infiniband", "nu_nvlink", "n_b", "g"),
}

#: The schedules the evaluator takes; the same names as :data:`lgacc.model.formulas.schedules.SCHEDULES`.
SCHEDULES = ("gpipe", "1f1b", "interleaved", "breadth-first", "zero-bubble", "modular")
#: Other names accepted for a schedule: the paper's "standard" pipeline is GPipe.
SCHEDULE_ALIASES = {"standard": "gpipe"}
#: Schedules with ``v`` chunks per device (``n_v``); the others have one chunk (``n_v = 1``).
CHUNKED_SCHEDULES = ("interleaved", "breadth-first")
#: The pipeline of each method when no schedule is given, by ``layered`` (sec:methodology: the baseline
#: and the partitioned approach use the standard pipeline, the improved method the modular one).
METHOD_SCHEDULES = {False: "gpipe", True: "modular"}
#: What the evaluator reads of a schedule (generated per schedule as ``"<term>:<schedule>"``):
#: the bubble; the checkpoint memory over the paper's (peak micro-batches held over ``n_mu``); the
#: pipeline intensity (eq:pipeline_intensity_base over the chunks per device); the gradient-reduction
#: window over the modular pipeline's; that window as ``n_mu`` grows (positive: layered accumulation); and the
#: window itself, the share of the step's compute that can hide the reduction (``data_overlap_fraction``).
SCHEDULE_TERMS = ("bubble", "checkpoint_share", "pipeline_intensity", "data_window", "layered_window", "data_overlap")
#: Arguments of the schedule functions: :data:`ARGUMENTS` and ``v``, the chunks per device (``--n-v``).
SCHEDULE_ARGUMENTS = (*ARGUMENTS, "v")


def parse_schedule(value: str) -> str:
    """A schedule of :data:`SCHEDULES` from its name or alias (case-insensitive), or one clear error."""
    text = str(value).strip().lower()
    text = SCHEDULE_ALIASES.get(text, text)
    if text not in SCHEDULES:
        names = ", ".join((*SCHEDULES, *(f"{a} (= {n})" for a, n in SCHEDULE_ALIASES.items())))
        raise UserInputError(f"unknown schedule {value!r}; expected one of {names}")
    return text


def default_schedule(layered: bool) -> str:
    """The schedule the paper's method uses when none is given (:data:`METHOD_SCHEDULES`)."""
    return METHOD_SCHEDULES[bool(layered)]


def evaluation_map() -> dict[str, Any]:
    """The evaluator as data: which derivation each overhead reads in each case, over which link, with
    which overlap rule.  A code generator (the in-browser calculator) can emit the evaluator from this
    and the sympy expressions of :func:`lgacc.model.formulas.derivation` without retyping its logic."""
    return {
        "arguments": ARGUMENTS,
        "overheads": OVERHEADS,
        "capped": CAPPED_OVERHEADS,
        "data": {
            "link": "infiniband",
            "cases": {
                f"layered={k[0]},partitioned={k[1]},pipelined={k[2]}": {
                    "derivation": key,
                    "rule": "overlapped (eq:overlap_condition)" if ov else "not overlapped (eq:overhead_condition)",
                    "physical": kind,
                }
                for k, (key, ov, kind) in DATA_TRANSFERS.items()
            },
            "absent_when": "n_b == 1",
            "network": {
                "per-gpu": "the paper's count: every byte through the GPU's own link, threshold nu_infiniband",
                "ring": "g = peers(n_b, n_a (n_l n_a when the pipeline is on NVLink), gpus_per_node); threshold "
                        "threshold(nu_infiniband, nu_nvlink, n_b, g) in place of nu_infiniband; the PCIe rule counts "
                        "card_share(n_b, g) of the bytes (lgacc.model.formulas.ring)",
                "functions": {name: list(args) for name, args in RING_ARGUMENTS.items()},
            },
        },
        "pipeline": {
            "link": {"inter-node": "infiniband", "intra-node": "nvlink if n_l n_a <= gpus_per_node else infiniband"},
            "cases": {f"layered={k}": {"derivation": key, "physical": kind} for k, (key, kind) in PIPELINE_TRANSFERS.items()},
            "rule": {"extra-micro-batches": "overlapped iff overlap and n_mu >= n_l (1 + nu_net / nu_l)",
                     "always": "overlapped iff overlap", "never": "not overlapped"},
            "absent_when": "n_l == 1",
        },
        "tensor": {
            "derivation": "tensor_intensity",
            "link": {"node": "nvlink if n_a <= gpus_per_node else infiniband", "inter-node": "infiniband"},
            "rule": "not overlapped (eq:overhead_condition)",
            "absent_when": "n_a == 1",
        },
        "state_offload": {"cases": {f"layered={k[0]},partitioned={k[1]}": v for k, v in STATE_OFFLOAD.items()},
                          "link": "cpu_gpu", "rule": "overlapped (eq:overlap_condition)", "physical": "state_offload",
                          "absent_when": "not offload"},
        "checkpoint_offload": {"derivation": "checkpoint_offload_intensity", "link": "cpu_gpu",
                               "rule": "overlapped (eq:overlap_condition)", "physical": "checkpoint_offload",
                               "absent_when": "not offload"},
        "pcie": {"link": "pcie", "intensity": "1 / sum of 1 / nu over the offload, data, and off-node pipeline and "
                 "tensor transfers", "rule": "overlapped (eq:overlap_condition), paper form in both conventions",
                 "absent_when": "not offload"},
        "bubble": {"cases": {f"layered={k}": v for k, v in BUBBLE.items()}, "absent_when": "n_l == 1"},
        "schedules": {
            "names": SCHEDULES,
            "aliases": dict(SCHEDULE_ALIASES),
            "chunked": CHUNKED_SCHEDULES,
            "default": {f"layered={k}": v for k, v in METHOD_SCHEDULES.items()},
            "arguments": SCHEDULE_ARGUMENTS,
            "functions": {name: {term: f"{term}:{name}" for term in SCHEDULE_TERMS} for name in SCHEDULES},
            "applies_when": "a schedule is given and n_l > 1 (else the method's own terms above)",
            "rules": {
                "bubble": "the schedule's bubble replaces the method's",
                "checkpoint": "checkpoint memory times checkpoint_share",
                "pipeline": "nu_l = pipeline_intensity; overlap rule and link as above (physical kind pipeline_base "
                            "for one chunk per device, pipeline_improved otherwise)",
                "data": "layered = layered_window > 0 replaces the method's layered in the data and state offload "
                        "cases; a layered schedule's data intensity is multiplied by data_window; a replicated "
                        "state under a schedule that is not layered costs the lesser of the paper's not-overlapped "
                        "rule and the reduction overlapped with the data_overlap share of the step (intensity "
                        "b d_s / n_b times data_overlap; none at d_l = n_l)",
                "feasible": "n_l v divides d_l under divisible_layers; interleaved with v > 1 needs n_l to divide n_mu",
            },
        },
    }


def _derivation_keys() -> dict[str, str]:
    keys = {key: key for key, _, _ in DATA_TRANSFERS.values()}
    keys |= {key: key for key, _ in PIPELINE_TRANSFERS.values()}
    keys |= {key: key for key in STATE_OFFLOAD.values()}
    keys |= {"tensor_intensity": "tensor_intensity", "checkpoint_offload_intensity": "checkpoint_offload_intensity"}
    keys |= {key: key for key in BUBBLE.values()}
    return keys


# --- generated numeric code ------------------------------------------------------------------

#: The files whose text defines the generated expressions: change one and the code is rebuilt.
_SOURCES = (
    PACKAGE / "model" / "evaluator" / "mapping.py",
    PACKAGE / "model" / "symbols.py",
    *sorted((PACKAGE / "model" / "formulas").glob("*.py")),
)


def expressions(form: str):
    """The sympy expressions of ``form`` that :func:`functions` is generated from and the calculator prints
    (imports sympy): ``({name: (args, expr)}, constants)``."""
    from .. import symbols
    from ..formulas import compute, derivation, memory
    from ..formulas.overlap import PHYSICAL_KINDS, physical_passes

    args = tuple(getattr(symbols, name) for name in ARGUMENTS)
    exprs = {}
    for name in _derivation_keys():
        d = derivation(name)
        exprs[name] = d.exact if form == "exact" else d.paper
    exprs["state"] = memory.state_memory(False)
    exprs["state_part"] = memory.state_memory(True)
    exprs["checkpoint_memory"] = memory.checkpoint_memory()
    exprs["buffers"] = memory.buffer_memory()
    exprs["activations"] = memory.activation_memory()
    exprs["flops_per_batch"] = compute.batch_flops() if form == "exact" else derivation("compute_per_batch").details["printed"]
    physical = {}
    for kind in PHYSICAL_KINDS:
        rows = []
        for i, (_, fraction, relative) in enumerate(physical_passes(kind)):
            exprs[f"physical:{kind}:{i}"] = fraction
            rows.append((f"physical:{kind}:{i}", float(relative)))
        physical[kind] = rows
    return {name: (args, expr) for name, expr in exprs.items()}, {"physical": physical}


@cache
def _generated(form: str) -> dict[str, Any]:
    if form not in FORMS:
        raise UserInputError(f"form={form!r} must be one of {', '.join(FORMS)}")
    return GENERATED[f"evaluate_{form}"].namespace()


def schedule_expressions(form: str):
    """The schedule terms of ``form`` as sympy expressions, that :func:`schedule_functions` is generated from
    (imports sympy): ``({"<term>:<schedule>": (args, expr)}, {})``."""
    import sympy

    from .. import symbols
    from ..formulas.schedules import evaluator_terms, v

    def pairwise(e):  # Min(a, b, ...) as nested Piecewise: the generated module imports numpy only
        first, *rest = e.args
        for other in rest:
            first = sympy.Piecewise((first, first <= other), (other, True))
        return first

    args = (*(getattr(symbols, name) for name in ARGUMENTS), v)
    exprs = {}
    for name in SCHEDULES:
        for term, (exact, paper) in evaluator_terms(name).items():
            expr = exact if form == "exact" else paper
            exprs[f"{term}:{name}"] = (args, expr.replace(lambda e: isinstance(e, sympy.Min), pairwise))
    return exprs, {}


@cache
def _generated_schedules(form: str) -> dict[str, Any]:
    if form not in FORMS:
        raise UserInputError(f"form={form!r} must be one of {', '.join(FORMS)}")
    return GENERATED[f"schedules_{form}"].namespace()


def schedule_functions(form: str) -> dict[str, Any]:
    """``{"<term>:<schedule>": f(*SCHEDULE_ARGUMENTS)}`` for every schedule and :data:`SCHEDULE_TERMS`."""
    return _generated_schedules(form)["FUNCTIONS"]


def functions(form: str) -> dict[str, Any]:
    return _generated(form)["FUNCTIONS"]


def _ring_expressions():
    from ..formulas.ring import evaluator_functions

    return evaluator_functions(), {}


@cache
def _generated_ring() -> dict[str, Any]:
    return GENERATED["dp_ring"].namespace()


def ring_functions() -> dict[str, Any]:
    """The numeric code of the assumption ``dp_network="ring"`` (:func:`lgacc.model.formulas.ring.evaluator_functions`):
    ``peers(n_b, n_inner, G)``, ``card_share(n_b, g)``, ``threshold(nu_infiniband, nu_nvlink, n_b, g)``."""
    return _generated_ring()["FUNCTIONS"]


#: The committed numeric code of the evaluator (``lgacc/model/generated/<stem>.py``), by stem.
GENERATED = {
    **{f"evaluate_{form}": _codegen.Generated(f"evaluate-{form}", f"lgacc.model.generated.evaluate_{form}", _SOURCES,
                                             lambda form=form: expressions(form)) for form in FORMS},
    **{f"schedules_{form}": _codegen.Generated(f"schedules-{form}", f"lgacc.model.generated.schedules_{form}",
                                              _SOURCES, lambda form=form: schedule_expressions(form)) for form in FORMS},
    "dp_ring": _codegen.Generated("dp-ring", "lgacc.model.generated.dp_ring", _SOURCES, _ring_expressions),
}


def physical_functions(form: str) -> dict[str, tuple[tuple[Any, float], ...]]:
    """Per overlapped kind, ``((fraction(args...), relative), ...)`` from :func:`physical_passes`."""
    namespace = _generated(form)
    return {kind: tuple((namespace["FUNCTIONS"][name], relative) for name, relative in rows)
            for kind, rows in namespace["CONSTANTS"]["physical"].items()}
