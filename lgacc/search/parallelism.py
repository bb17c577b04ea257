"""Which parallel dimensions a search may use, spelled as in ``table:parallel_methods_comparison``."""

from __future__ import annotations

import enum

from lgacc.errors import UserInputError

__all__ = ["Parallelism", "parse_parallelism"]


class Parallelism(str, enum.Enum):
    """Which parallel dimensions may exceed one, spelled as in ``table:parallel_methods_comparison``."""

    NONE = "None"
    DATA = "Data"
    DATA_PIPE = "Data + pipe"
    DATA_TENSOR = "Data + tensor"
    PIPE_TENSOR = "Pipe + tensor"
    THREE_D = "3d"

    @property
    def data(self) -> bool:
        return self in (Parallelism.DATA, Parallelism.DATA_PIPE, Parallelism.DATA_TENSOR, Parallelism.THREE_D)

    @property
    def pipe(self) -> bool:
        return self in (Parallelism.DATA_PIPE, Parallelism.PIPE_TENSOR, Parallelism.THREE_D)

    @property
    def tensor(self) -> bool:
        return self in (Parallelism.DATA_TENSOR, Parallelism.PIPE_TENSOR, Parallelism.THREE_D)


_PARALLELISM_KEYS = {"".join(ch for ch in p.value.lower() if ch.isalnum()): p for p in Parallelism}


def parse_parallelism(value: "Parallelism | str") -> Parallelism:
    """A :class:`Parallelism` from the paper's spelling or a loose one (``data+pipe``, ``3D``, ``none``)."""
    if isinstance(value, Parallelism):
        return value
    key = "".join(ch for ch in str(value).lower() if ch.isalnum())
    if key in _PARALLELISM_KEYS:
        return _PARALLELISM_KEYS[key]
    raise UserInputError(
        f"unknown parallelism {value!r}; expected one of {', '.join(repr(p.value) for p in Parallelism)}"
    )
