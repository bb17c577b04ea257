"""lgacc: a reproduction of *Layered gradient accumulation and modular pipeline
parallelism* (Lamy-Poirier, 2021).

The package derives the paper's resource model with sympy, evaluates and searches
training configurations numerically, simulates the training schedules, and
reproduces every table and figure of the paper under its LaTeX label.

Package map: each module, its one job, and what it may import (a module imports
only modules above it in this list; nothing imports ``commands`` or ``cli``).

=============================  ==================================================================  =====================================
module                         job                                                                 may import
=============================  ==================================================================  =====================================
``errors``                     :class:`UserInputError`, the positive-integer validator              --
``units``                      calendar units (a Julian year, a twelfth of it as a month)          --
``symbols``                    the paper's notation as sympy symbols, the glossary                 sympy (pandas only for the glossary)
``formulas/``                  sympy derivations, one per equation label (``eq:...`` literally)    symbols
``formulas/overlap``           paper vs physical cost of an overlapped transfer (sympy)             formulas
``formulas/printed``           the paper's printed LaTeX forms parsed into sympy                   symbols, data/paper
``equations``                  the paper's equation numbers, by LaTeX's numbering rule             data/paper
``_codegen``                   generated numeric code cached on disk, keyed by the sources          sympy only when (re)building
``resultcache``                slow results kept on disk, keyed by inputs, sources and data/        _codegen (its cache directory)
``hardware``                   :class:`Hardware` specs from YAML, thresholds                        errors
``models``                     :class:`Transformer`, named models, the critical batch               _codegen, errors (formulas to rebuild)
``config``                     :class:`Method`, :class:`TrainingConfig`                             errors
``assumptions``                every open choice of the paper as a switch                          errors
``evaluation_map``             the evaluator as data; the overlap rules; generated numeric code     _codegen, errors (formulas to rebuild)
``evaluate``                   one or many configurations -> overheads, time, memory, feasibility  the above (generated code, no sympy)
``search/``                    rules, candidates, fastest / cheapest, explanations                 evaluate and the above
``search_reference``           the exhaustive enumerator the tests compare the search with          search (public names only)
``schedule/``                  event simulation of the training schedules                          formulas, config
``validation``                 the model against measured training runs (data/validation)          evaluate, models
``scaling``, ``claims``        sweeps over the X family; the paper's prose claims                  search, evaluate, resultcache
``today``                      the paper's conclusions graded on today's GPUs                       search, models, hardware, resultcache
``sensitivity``                the headline results with each assumption moved alone               search, assumptions, resultcache
``artifacts``, ``reproductions/``  one builder per paper label, compared with ``data/paper``       everything above
``scorecard``, ``findings``    grades; the front page's findings                                   artifacts
``notebook``, ``run``          formatting for the book; the notebook runner                        artifacts
``commands/``, ``cli``         the ``lgacc`` command line (imports only the subcommand it runs)    everything
=============================  ==================================================================  =====================================
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("lgacc")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"

from .errors import UserInputError  # noqa: E402

__all__ = ["UserInputError", "__version__"]
