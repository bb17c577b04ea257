"""lgacc: a reproduction of *Layered gradient accumulation and modular pipeline
parallelism* (Lamy-Poirier, 2021).

The package derives the paper's resource model with sympy, evaluates and searches
training configurations numerically, simulates the training schedules, and
reproduces every table and figure of the paper under its LaTeX label.

Package map: each module, its one job, and what it may import (a module imports
only modules above it in this list; nothing imports ``commands`` or ``cli``).

==================================  ====================================================================  ========================================
module                              job                                                                   may import
==================================  ====================================================================  ========================================
``errors``                          :class:`UserInputError`, the positive-integer validator               --
``units``                           calendar units (a Julian year, a twelfth of it as a month)            --
``yamlfile``                        the hardened YAML reader of spec files (size, encoding, one-line      errors
                                    errors)
``symbols``                         the paper's notation as sympy symbols, the glossary                   sympy (pandas only for the glossary)
``formulas/``                       sympy derivations, one per equation label (``eq:...`` literally)      symbols
``formulas/overlap``                paper vs physical cost of an overlapped transfer (sympy)              formulas
``formulas/printed``                the paper's printed LaTeX forms parsed into sympy                     symbols, data/paper
``equations``                       the paper's equation numbers, by LaTeX's numbering rule               data/paper
``paper``                           the paper's printed values (data/paper) and the rule for "agrees"     errors, units
``_codegen``                        generated numeric code cached on disk, keyed by the sources           sympy only when (re)building
``resultcache``                     slow results kept on disk, keyed by inputs, sources and data/         _codegen (its cache directory)
``hardware/``                       GPU specs: ``links`` (the links, byte units), ``checks`` (what a        errors, yamlfile
                                    value may be: ranges, errors), ``spec`` (:class:`Hardware`, its
                                    thresholds), ``files`` (YAML spec files, names and paths)
``models``                          :class:`Transformer`, named models, the critical batch                _codegen, errors, yamlfile (formulas to
                                                                                                          rebuild)
``config``                          :class:`Method`, :class:`TrainingConfig`                              errors
``assumptions``                     every open choice of the paper as a switch                            errors
``evaluation_map``                  the evaluator as data; the overlap rules; generated numeric code      _codegen, errors (formulas to rebuild)
``evaluate_inputs``                 the evaluator's input rules: counts, flags, options, schedule chunks  errors, assumptions, config, models,
                                                                                                          evaluation_map
``evaluation_result``               one configuration's result: :class:`Evaluation`, its JSON, the        assumptions, config, evaluation_map,
                                    sentence for each broken rule                                         hardware, models
``evaluate``                        one or many configurations -> overheads, time, memory, feasibility    the above (generated code, no sympy)
``search/``                         rules, candidates, fastest / cheapest, explanations                   evaluate and the above
``search_reference``                the exhaustive enumerator the tests compare the search with           search (public names only)
``schedule/``                       event simulation of the training schedules                            formulas, config
``validation``                      the model against measured training runs (data/validation)            evaluate, models, yamlfile
``scaling/``                        the scaling analysis over the X family: ``grid`` (models, scenarios,  search, evaluate, resultcache
                                    one row per model), ``sweeps`` (the figures' data), ``limits`` (the
                                    size limits of the prose claims)
``claims``, ``claim_calculators``   the paper's prose claims, one calculator each                         scaling, search, formulas, paper,
                                                                                                          resultcache
``today``                           the paper's conclusions graded on today's GPUs                        search, scaling, models, hardware,
                                                                                                          resultcache
``sensitivity/``                    the headline results with each assumption moved alone: ``grid``       search, scaling, claims, assumptions,
                                    (what moves), ``compute`` (the searches), ``conclusions`` (holds /    resultcache
                                    weakens / reverses), ``presentation`` (tables, chart)
``findings``                        the front page's findings and readable values (pure formatting)       --
``cells``                           which printed cells are computed and which are inputs echoed back     --
``artifacts``, ``reproductions/``   one builder per paper label, compared with ``data/paper``             everything above
``scorecard``                       grades of every table, figure and claim                               artifacts
``differences``                     every printed table cell the defaults do not reproduce, and why       artifacts, cells, resultcache
``assumption_effects``              the printed cells and claims each assumption switch moves             artifacts, assumptions, cells, claims,
                                                                                                          findings, resultcache
``notebookcache``                   executed notebooks that cannot see the hardware, kept for every       _codegen, resultcache
                                    build
``notebook/``, ``run``              formatting for the book (``display``, ``formats``, ``typeset``,         artifacts
                                    ``tables``, ``downloads``, ``figures``, ``comparisons``, ``claims``,
                                    ``hardware``); the notebook runner
``jsgen/``                          the resource model and the search as JavaScript for the calculator    formulas, evaluate, search, hardware,
                                    page: ``printer`` (sympy -> JavaScript functions), ``records`` (the   models, assumptions, equations
                                    data), ``bundle`` (the script around the hand-written
                                    ``runtime.js`` and ``search_runtime.js``), ``command``
``commands/``, ``cli``              the ``lgacc`` command line (imports only the subcommand it runs)      everything
==================================  ====================================================================  ========================================
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("lgacc")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"

from .errors import UserInputError  # noqa: E402

__all__ = ["UserInputError", "__version__"]
