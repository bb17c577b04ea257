"""Registry of the paper's tables and figures, keyed by their LaTeX labels.

Each artifact lives in its own module of :mod:`lgacc.paper.reproductions`, which
defines a module-level ``ARTIFACT`` (an :class:`Artifact`).  The registry finds
them by walking that package, so adding an artifact means adding one module.

``build(hardware, **parameters)`` returns a :class:`pandas.DataFrame` for a
table, a :class:`matplotlib.figure.Figure` for a figure, or a list of
dictionaries for claims.  ``compare(reproduced)``, when present, returns a
DataFrame that puts the paper's printed values beside the reproduced ones with
an ``agrees`` column per compared cell.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable

from lgacc.errors import UserInputError
from lgacc.model.hardware import DEFAULT_HARDWARE, Hardware, load_hardware

KINDS = ("table", "figure", "claims")


@dataclass(frozen=True)
class Artifact:
    """One table or figure of the paper and how to reproduce it."""

    label: str
    title: str
    kind: str
    build: Callable[..., Any]
    compare: Callable[[Any], Any] | None = None
    page: str = ""
    description: str = ""
    parameters: dict[str, str] = field(default_factory=dict)
    #: For an artifact the paper draws but prints no numbers for (the scheduling
    #: figures): ``check(hardware)`` returns measured-against-analytic rows with an
    #: ``agrees`` column, which the scorecard grades instead.
    check: Callable[[Hardware], Any] | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"artifact {self.label}: kind {self.kind!r} not in {KINDS}")

    def reproduce(self, hardware: str | Hardware = DEFAULT_HARDWARE, **parameters: Any) -> Any:
        """Build the artifact for ``hardware`` (a shipped name, a path or a :class:`Hardware`)."""
        return self.build(load_hardware(hardware), **parameters)


@lru_cache(maxsize=1)
def registry() -> dict[str, Artifact]:
    """All artifacts, keyed by label, in label order."""
    from . import reproductions

    found: dict[str, Artifact] = {}
    for module_info in pkgutil.iter_modules(reproductions.__path__):
        module = importlib.import_module(f"{reproductions.__name__}.{module_info.name}")
        artifact = getattr(module, "ARTIFACT", None)
        if artifact is None:
            continue
        if artifact.label in found:
            raise RuntimeError(f"two modules define artifact {artifact.label}")
        found[artifact.label] = artifact
    return dict(sorted(found.items()))


def _module_name(label: str) -> str:
    """The module a label's artifact lives in, by the package's naming rule:
    ``table:x_model`` in ``x_model``, ``fig:scaling_limited`` in ``fig_scaling_limited``."""
    kind, _, name = label.partition(":")
    return {"table": name, "fig": f"fig_{name}"}.get(kind, label) if name else label


def _artifact_of_module(label: str) -> Artifact | None:
    """Import only the module :func:`_module_name` names, so one reproduction does not
    import every other one (the figures' matplotlib, the simulator's sympy)."""
    from . import reproductions

    name = _module_name(label)
    if not name.isidentifier() or name.startswith("_"):
        return None
    if not any(info.name == name for info in pkgutil.iter_modules(reproductions.__path__)):
        return None
    artifact = getattr(importlib.import_module(f"{reproductions.__name__}.{name}"), "ARTIFACT", None)
    return artifact if artifact is not None and artifact.label == label else None


def get_artifact(label: str) -> Artifact:
    """The artifact for ``label``, or a clear error listing the known labels."""
    artifact = _artifact_of_module(str(label))
    if artifact is not None:
        return artifact
    artifacts = registry()
    if label not in artifacts:
        raise UserInputError(f"unknown artifact {label!r}; known labels: {', '.join(artifacts)}")
    return artifacts[label]


def reproduce(label: str, hardware: str | Hardware = DEFAULT_HARDWARE, **parameters: Any) -> Any:
    """Reproduce the artifact ``label`` for ``hardware``."""
    return get_artifact(label).reproduce(hardware, **parameters)


def agreement(comparison) -> tuple[int, int]:
    """(cells that agree, cells compared) over the ``... agrees`` columns of a comparison.

    A missing flag (NaN or None) marks a cell the paper does not print, which is
    not compared.  A cell flagged ``... echoed_input`` is an input the table shows
    again (a model's dimension, the spec's own bandwidth), not a result: it is not
    counted (:func:`lgacc.paper.cells.tally` counts it apart).
    """
    from .cells import tally

    counted = tally(comparison)
    return counted.agree, counted.graded
