"""Scaling over the X_[x] family: the sweeps behind the scaling figures (:mod:`~lgacc.scaling.sweeps`)
and the size limits they set (:mod:`~lgacc.scaling.limits`).

``lgacc.scaling`` exports both modules' ``__all__``, so ``from lgacc.scaling import X`` keeps working.
"""

from . import limits, sweeps
from .limits import *  # noqa: F401,F403
from .sweeps import *  # noqa: F401,F403

__all__ = [*sweeps.__all__, *limits.__all__]
