"""lgacc: a reproduction of *Layered gradient accumulation and modular pipeline
parallelism* (Lamy-Poirier, 2021).

The package derives the paper's resource model with sympy, evaluates and searches
training configurations numerically, simulates the training schedules, and
reproduces every table and figure of the paper under its LaTeX label.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("lgacc")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"

from .errors import UserInputError  # noqa: E402

__all__ = ["UserInputError", "__version__"]
