"""The resource model as a JavaScript module for the book's calculator page, printed from the derivations.

``python -m lgacc.book.jsgen OUT.js`` writes one self-contained script (no import, no
network) that defines ``window.lgacc`` (``globalThis.lgacc`` and
``module.exports`` under node):

* ``lgacc.evaluate(input)``: the object ``lgacc evaluate --format json`` prints;
* ``lgacc.details(input)``: the same with the memory limit, the critical batch
  and the intensities, for the page's memory bar;
* ``lgacc.fastest(input)``: the configuration ``lgacc optimize`` selects (its rules, its GPU
  budget ``max_gpus``, its schedules, and its reason word for word when nothing passes);
* ``lgacc.expected(input)``: the calibrated model's ``expected_*`` keys of ``lgacc evaluate --format
  json`` for the same input (and an optional ``recipe`` object), printed by :mod:`~lgacc.book.jsgen.expected`.

Nothing of the resource model is typed here.  One module per job:

* :mod:`~lgacc.book.jsgen.printer` prints, with sympy's JavaScript printer, every expression the
  evaluator's numeric code is generated from (the table of :mod:`lgacc.model.evaluator.mapping`
  itself, for both forms ``paper`` and ``exact``, in the evaluator's argument order
  :data:`ARGUMENTS`), the pipeline schedules' terms, the two overlap rules, and the
  model's parameter counts, critical batch and X family;
* :mod:`~lgacc.book.jsgen.records` gathers the data (JSON): the specs, the models, the units,
  the methods, the assumptions, the constants, the search's rules, the schedules and the
  evaluator's declarative map;
* :mod:`~lgacc.book.jsgen.bundle` assembles the script around the two hand-written runtimes,
  ``runtime.js`` (the composition: it dispatches on that data and combines the printed
  functions as :func:`lgacc.model.evaluator.evaluate_many` does) and ``search_runtime.js``
  (the search), JavaScript files of this package;
* :mod:`~lgacc.book.jsgen.command` is the command line;
* :mod:`~lgacc.book.jsgen.schedules` is the schedule explorer's script (``python -m lgacc.book.jsgen.schedules``):
  the simulator's timelines and measurements for a grid of schedules, precomputed (no simulator in JavaScript).

Names a reader types are looked up only among the calculator's own keys, a custom spec is checked as the spec loader
checks a file (the same range table), and a search stops with a message after about a second.

``tests/test_jsgen.py`` runs the script under node against the Python evaluator and search.
"""

import importlib

__all__ = ["ARGUMENTS", "expressions", "javascript_function", "data", "generate", "write", "main"]

#: Where each exported name lives, imported on first use: ``python -m lgacc.book.jsgen`` (and ``.schedules``) import
#: this package first, and sympy (the printer) and pandas (the records' equation numbers) are needed only when the
#: printed functions are not on disk already (:func:`.bundle.printed`).
_EXPORTS = {"ARGUMENTS": "printer", "expressions": "printer", "javascript_function": "printer", "data": "records",
            "generate": "bundle", "write": "bundle", "main": "command"}


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
