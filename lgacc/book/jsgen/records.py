"""The calculator's data (JSON, not code): specs, models, units, methods, assumptions, constants, the search's
rules and the evaluator's declarative map.

:func:`data` is every value the runtimes (``runtime.js``, ``search_runtime.js``) read:
the shipped hardware specs (read by :func:`lgacc.model.hardware.load_hardware`, SI units)
and the book's own, the named models, the spec units, the methods, the assumptions'
defaults and choices, the evaluator's constants, the search's parallelisms and
bottleneck constants and rules (:mod:`lgacc.search.rules`), the schedules' names,
aliases and defaults, the evaluator's map from (method, partition, pipeline) to
derivation keys (:mod:`lgacc.model.evaluator.mapping`), the spec loader's range table
(:data:`lgacc.model.hardware.RANGES`, so that the page refuses and warns as the loader does) and, per
spec file, the unit each quantity is given in and the file's comment on it (where the value comes
from).  Nothing here is typed in: each value is read from the module or file that owns it.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from lgacc.model import evaluator as evaluator
from lgacc.model import transformer as models_module
from lgacc.model.assumptions import CHOICES, DEFAULT_ASSUMPTIONS, FIELDS, GIB_TO_GB
from lgacc.model.config import PRECISIONS, Method
from lgacc.model.evaluator.recomputation import PAPER_RECOMPUTE
from lgacc.model.evaluator.sparse import SPARSE_OVERHEADS
from lgacc.model.evaluator import mapping as evaluation_map
from lgacc.model.hardware import (
    DEFAULT_HARDWARE,
    GIB,
    LINKS,
    QUANTITIES,
    RANGES,
    TEXT_FIELDS,
    allowed_keys,
    available_hardware,
    hardware_path,
    is_path,
    load_hardware,
)
from lgacc.paper.equations import equation_anchor, equation_name, equation_numbers
from lgacc.search import Parallelism
from lgacc.search import rules as search_rules

__all__ = ["data"]

#: The dense defaults of the model files' sparse fields (:data:`lgacc.model.transformer.SPARSE_KEYS`).
SPARSE_DEFAULTS = {key: models_module.Transformer.__dataclass_fields__[key].default for key in models_module.SPARSE_KEYS}


def _hardware_record(hardware) -> dict[str, Any]:
    keys = ("name", "description", "peak_flop_per_s", "memory_bytes", *(f for f in QUANTITIES if f.endswith("_bytes_per_s")),
            "gpus_per_node")
    record = {key: getattr(hardware, key) for key in keys}
    if hardware.peak_fp8_flop_per_s is not None:  # the dense FP8 peak (issue #36): the page names it, and refuses fp8 without it
        record["peak_fp8_flop_per_s"] = hardware.peak_fp8_flop_per_s
    if getattr(hardware, "kernel_efficiency", None) is not None:  # lgacc.model.evaluator.kernel_efficiency reads it when a spec has it
        record["kernel_efficiency"] = hardware.kernel_efficiency
    return record


def _model_record(model, stem: str) -> dict[str, Any]:
    keys = ("name", "d_l", "d_m", "d_a", "d_h", "d_s", "d_I", "gated", "d_kv", "rotary")
    # the sparse fields (issue #36) a model file sets to other than their dense defaults: the page refuses such a
    # model with one line (runtime.js, makeModel) rather than evaluate it as dense with every expert active
    sparse = {key: getattr(model, key) for key in models_module.SPARSE_KEYS
              if getattr(model, key) != SPARSE_DEFAULTS[key]}
    return {key: getattr(model, key) for key in keys} | sparse | {"file": stem}


#: ``key: value  # comment`` in a spec file: the comment says where the value comes from.
_COMMENTED = re.compile(r"^([a-z_]+)\s*:[^#\n]*#\s*(.+?)\s*$")


def _spec_file_notes(name_or_path: str) -> dict[str, Any]:
    """What the page says about each field of a spec file: its ``source``, the key each quantity is given under (so the
    field shows the file's own unit: 100 GB/s, not 93.13 GiB/s) and the file's comment on that line, if any."""
    path = Path(name_or_path) if is_path(name_or_path) else hardware_path(name_or_path)
    hardware = load_hardware(name_or_path)
    text = path.read_text(encoding="utf-8")
    comments = {match[1]: match[2] for line in text.splitlines() if (match := _COMMENTED.match(line))}
    keys = {}
    for field, (stem, units) in QUANTITIES.items():
        keys[field] = next((f"{stem}_{unit}" for unit in units if re.search(rf"^{stem}_{unit}\s*:", text, re.M)), None)
    keys["gpus_per_node"] = "gpus_per_node"
    link_names = dict(hardware.link_names)
    return {"source": hardware.source, "keys": keys, "comments": {k: v for k, v in comments.items() if k in keys.values()},
            "link_names": link_names}


def _search_data() -> dict[str, Any]:
    """The search's parallelisms (which dimensions each allows) and bottleneck rule constants."""
    return {
        "parallelisms": {p.value: [p.data, p.pipe, p.tensor] for p in Parallelism},
        "overlapped": tuple(search_rules.OVERLAPPED),
        "tolerance": float(search_rules.TOLERANCE),
        "rules": dict(search_rules.RULES),
    }


def _book_hardware(book_hardware: str | None) -> tuple[str, dict[str, Any]]:
    """The page's preselected spec (the book's ``HARDWARE``) by its key, and the specs the page offers:
    the shipped ones, and the book's own spec file when it is not one of them."""
    specs = {name: _hardware_record(load_hardware(name)) for name in available_hardware()}
    if book_hardware is None:
        return DEFAULT_HARDWARE, specs
    record = _hardware_record(load_hardware(book_hardware))
    for name, shipped in specs.items():
        if shipped == record:
            return name, specs
    key = record["name"] if record["name"] not in specs else f"{record['name']} ({Path(book_hardware).name})"
    specs[key] = record | {"name": key}
    return key, specs


def data(physical: dict[str, dict[str, list[tuple[str, float]]]], book_hardware: str | None = None) -> dict[str, Any]:
    """Everything the composition reads that is data, not code; ``physical`` is, per form, the physical passes
    :func:`lgacc.book.jsgen.printer.expressions` gives; ``book_hardware`` (the book's ``HARDWARE``, a shipped name or a
    spec file) is the page's preselected spec."""
    page_hardware, specs = _book_hardware(book_hardware)
    notes = {name: _spec_file_notes(name) for name in available_hardware()}
    if page_hardware not in notes:  # the book's own spec file
        notes[page_hardware] = _spec_file_notes(book_hardware)
    m = evaluation_map
    described = m.evaluation_map()
    return {
        "arguments": m.ARGUMENTS,
        "overheads": m.OVERHEADS,
        "capped": m.CAPPED_OVERHEADS,
        "forms": m.FORMS,
        "constants": {
            "DEFAULT_STEPS": evaluator.DEFAULT_STEPS,
            "DEFAULT_MAX_OVERHEAD": evaluator.DEFAULT_MAX_OVERHEAD,
            "SECONDS_PER_DAY": evaluator.SECONDS_PER_DAY,
            "GIB": GIB,
            "GIB_TO_GB": GIB_TO_GB,
            "K_c": models_module.critical_batch_constant(),
            # the smallest normal double: a spec value below it is refused as subnormal (lgacc.model.hardware.checks)
            "FLOAT_MIN": sys.float_info.min,
            # the recomputation the ideal time counts by default (the only one the page computes: no --recompute)
            "PAPER_RECOMPUTE": PAPER_RECOMPUTE,
        },
        "methods": {m.value: {"layered": m.layered, "default_partitioned": m.default_partitioned} for m in Method},
        "maps": {
            "data": [{"layered": k[0], "partitioned": k[1], "pipelined": k[2], "derivation": v[0], "overlapped": v[1],
                      "physical": v[2]} for k, v in m.DATA_TRANSFERS.items()],
            "pipeline": [{"layered": k, "derivation": v[0], "physical": v[1]} for k, v in m.PIPELINE_TRANSFERS.items()],
            "state_offload": [{"layered": k[0], "partitioned": k[1], "derivation": v} for k, v in m.STATE_OFFLOAD.items()],
            "bubble": [{"layered": k, "derivation": v} for k, v in m.BUBBLE.items()],
            "tensor": described["tensor"]["derivation"],
            "checkpoint_offload": described["checkpoint_offload"]["derivation"],
        },
        "physical": physical,
        "hardware": specs,
        # lgacc evaluate's default spec; the page preselects the book's own
        "default_hardware": DEFAULT_HARDWARE,
        "page_hardware": page_hardware,
        "hardware_keys": allowed_keys(),
        "hardware_notes": notes,
        # the spec loader's accepted and usual ranges, in SI units (lgacc.model.hardware.checks.RANGES): one table
        "ranges": {field: r._asdict() for field, r in RANGES.items()},
        "text_fields": list(TEXT_FIELDS),
        "links": {link.key: {"name": link.name, "description": link.description} for link in LINKS},
        "spec_units": {field: {"stem": stem, "units": dict(units)} for field, (stem, units) in QUANTITIES.items()},
        "models": {name: _model_record(models_module.load_model(str(path)), path.stem)
                   for name, path in models_module.shipped_model_files().items()},
        "model_keys": [*models_module.REQUIRED_KEYS, *models_module.OPTIONAL_KEYS],
        # the sparse fields and their dense defaults: any other value is refused with one line (issue #36)
        "sparse_defaults": SPARSE_DEFAULTS,
        "sparse_overheads": list(SPARSE_OVERHEADS),
        "precisions": list(PRECISIONS),
        # how the book cites an equation label of a reason: "Eq. (N)", linked to its derivation
        "equations": {label: {"name": equation_name(label), "anchor": equation_anchor(label)}
                      for label in equation_numbers()},
        "schedules": {
            "names": evaluation_map.SCHEDULES,
            "aliases": dict(evaluation_map.SCHEDULE_ALIASES),
            "chunked": evaluation_map.CHUNKED_SCHEDULES,
            "default": {json.dumps(layered): name for layered, name in evaluation_map.METHOD_SCHEDULES.items()},
        },
        "search": _search_data(),
        "assumptions": {
            "defaults": {name: getattr(DEFAULT_ASSUMPTIONS, name) for name in FIELDS},
            "choices": dict(CHOICES),
            "meanings": {name: meaning for name, (meaning, _) in FIELDS.items()},
        },
    }
