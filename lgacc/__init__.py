"""lgacc: a reproduction of *Layered gradient accumulation and modular pipeline
parallelism* (Lamy-Poirier, 2021).

The package derives the paper's resource model with sympy, evaluates and searches
training configurations numerically, simulates the training schedules, and
reproduces every table and figure of the paper under its LaTeX label.

Package map.  The folders are the layers, bottom to top: a module imports only from its own
layer or the layers below, and no two files import each other, directly or around a circle
(``tests/test_package_map.py`` checks both, and that this map lists every module).  Why these
layers: the resource model is the paper's appendix and knows nothing of searches or pages; the
search and the schedule simulator use it; the scaling analysis runs the search over the X family;
the paper's grading compares all of these with the printed numbers; the studies re-read the
paper's conclusions under other assumptions, hardware and measured runs; the book and the
command line only present.

==================================  =====================================================================
module                              job
==================================  =====================================================================
**foundations**                     what every layer may use
``errors``                          :class:`UserInputError`, the positive-integer validator
``units``                           calendar units (a Julian year, a twelfth of it as a month)
``paths``                           where the package, the repository root and ``data/`` are
``yamlfile``                        the hardened YAML reader of spec files (size, encoding, one-line
                                    errors)
``cache/``                          what is kept on disk between processes, data only: ``codegen``
                                    (prints numeric code from the derivations into the package,
                                    checks it is current), ``results`` (results that take seconds,
                                    keyed by input values, sources and data/), ``jsondata`` (the
                                    data-only JSON results are kept in), ``sealed`` (every entry with
                                    an HMAC of its content under a per-user secret, read only from
                                    regular files, checked on load), ``prune`` (what has not been
                                    used for a month, then the oldest beyond 2 GiB, removed)
**model/**                          the resource model: the paper's appendix, as numbers
``model/symbols``                   the paper's notation as sympy symbols, the glossary
``model/formulas/``                 sympy derivations, one per equation label (``eq:...`` literally):
                                    ``derivation`` (the :class:`Derivation` record), ``model``,
                                    ``compute``, ``tensors``, ``buffering``, ``memory``, ``network``,
                                    ``bubble``, ``schedules``, ``overlap`` (paper vs physical cost of an
                                    overlapped transfer), ``ring`` (data-parallel bytes per link of a
                                    node: ring and hierarchical collectives), ``printed`` (the printed
                                    LaTeX forms parsed), ``sparse`` (mixture-of-experts counts)
``model/generated/``                 the numeric code printed from the derivations, committed, one module
                                    per set of expressions (written by ``model/regenerate``)
``model/regenerate``                ``python -m lgacc.model.regenerate [--check]``: print the generated
                                    modules again
``model/transformer``               :class:`Transformer`, the X family, named models, the critical batch
``model/hardware/``                 GPU specs: ``links`` (the links, byte units), ``checks`` (what a
                                    value may be: ranges, errors), ``spec`` (:class:`Hardware`, its
                                    thresholds), ``files`` (YAML spec files, names and paths)
``model/config``                    :class:`Method`, :class:`TrainingConfig`
``model/assumptions``               every open choice of the paper as a switch
``model/evaluator/``                configurations -> overheads, time, memory, feasibility: ``mapping``
                                    (the evaluator as data, the overlap rules, generated code),
                                    ``inputs`` (the input rules), ``context`` (one call's arrays and
                                    derived terms), ``memory`` (the memory terms), ``overheads`` (one
                                    function per overhead family), ``rules`` (the feasibility rules),
                                    ``result`` (:class:`Evaluation`, its JSON, the broken rules in
                                    words), ``evaluate`` (:func:`evaluate_many`, :func:`evaluate`),
                                    ``sparse`` (experts, context parallelism, FP8),
                                    ``recomputation`` (the work each recomputation mode counts)
``model/calibrated/``               the calibrated model beside the ideal one (expected step time and
                                    memory of real runs): ``symbols``, ``shapes``, ``gemm`` (GEMM
                                    efficiency), ``kernels`` (memory-bound kernels),
                                    ``memory_bound`` (their measured shares of the bandwidth), ``collectives``,
                                    ``step`` (physical composition), ``memory`` (framework memory),
                                    ``recipe``, ``parameters`` (fitted and fixed), ``links`` (alpha-beta
                                    from a published NCCL benchmark), ``attention`` (fused
                                    attention from a measured table), ``gemm_table``
                                    (layer GEMMs from a measured table), ``lookup`` (reading
                                    a measured grid between its points), ``host`` (an eager
                                    framework's host floor, measured), ``program`` (the
                                    expressions as data), ``store`` (kept on disk, verified),
                                    ``expected`` (evaluation), ``sparse`` (experts, context, FP8),
                                    ``dispatch`` (the experts' token permutations, measured),
                                    ``device_memory`` (NCCL's buffers beyond the allocation)
**schedule/**                       event simulation of the training schedules: ``operations``,
                                    ``programs``, ``lowering``, ``builders``, ``engine``, ``measure``,
                                    ``analytic``, ``gantt``, ``report``, ``summary`` (one step as
                                    ``lgacc simulate`` prints it, with its timeline)
**search/**                         the paper's selection rules as a search: ``parallelism``,
                                    ``request``, ``rules``, ``bounds`` (the degrees and budgets that
                                    keep a search's arrays bounded), ``candidates``, ``core`` (fastest
                                    / cheapest), ``explain``, ``result``, ``reference`` (the
                                    exhaustive enumerator the tests compare the search with), ``calibrated``
                                    (the candidates ranked by the calibrated model's expected time),
                                    ``sparse`` (the search over n_e and n_c)
**scaling/**                        the scaling analysis over the X family: ``grid`` (models,
                                    scenarios, one row per model, the paper's scaling reading),
                                    ``sweeps`` (the figures' data), ``limits`` (the size limits of the
                                    prose claims, read along the curves), ``bounds`` (floors no
                                    configuration beats under the paper's rules)
**paper/**                          the paper and its grading
``paper/printed``                   the paper's printed values (data/paper) and the rule for "agrees"
``paper/equations``                 the paper's equation numbers, by LaTeX's numbering rule
``paper/cells``                     which printed cells are computed and which are inputs echoed back
``paper/claims/``                   the prose claims: ``grading`` (the printed claims, the rules, the
                                    result types), ``limits`` (the scaling analysis' calculators),
                                    ``calculators`` (one per claim), ``reading`` (the one paper reading,
                                    its switches, the reading matrix's columns), ``registry`` (every
                                    claim computed under every column, graded under the paper reading,
                                    kept on disk; the one source of a claim's verdict), ``words``
                                    (a reading in a reader's words)
``paper/prose_numbers``             every number of the paper's prose: graded by a claim or excused
``paper/artifacts``                 one builder per paper label, compared with ``data/paper``
``paper/reproductions/``            one module per table or figure, each defining ``ARTIFACT``
``paper/scorecard``                 grades of every table, figure and claim
``paper/differences``               every printed table cell the defaults do not reproduce, and why
``paper/findings``                  the front page's findings and readable values (pure formatting)
``paper/inconsistencies``           the paper's internal inconsistencies and their effect on its cells
``paper/assumption_effects``        the printed cells and claims each assumption switch moves
**studies/**                        the paper's conclusions re-read elsewhere
``studies/sensitivity/``            the headline results with each assumption moved alone: ``grid``
                                    (what moves), ``compute`` (the searches), ``conclusions`` (holds /
                                    weakens / reverses), ``presentation`` (tables, chart)
``studies/today``                   the paper's conclusions graded on today's GPUs
``studies/sparse``                  the paper's sparse-model outlook computed (experts, the 25 % cap)
``studies/calibrated_headline``     the trillion-parameter headline re-graded under the calibrated model
``studies/composition``             the paper's product of overheads against a physical sum, on faster
                                    GPUs
``studies/validation/``             both models against measured training runs (data/validation):
                                    ``runs`` (the files, each run's reading of what its source does not
                                    state), ``measured``, ``ideal`` (the bound), ``calibrated`` (fit,
                                    leave one publication out), ``onefactor``, ``tables``, ``figures``,
                                    ``fit`` (the fit kept as data), ``chapter`` (the chapter's sentences),
                                    ``peers`` (side by side with SimuMax, Calculon), ``peer_terms``
                                    (term by term beside SimuMax), ``recipe_effects``, ``what_if`` (the
                                    held-out errors at NCCL's stated InfiniBand share), ``markdown`` (a
                                    chapter table's cells as Markdown)
``studies/gpu_measured``            the calibrated model's kernel constants and one-GPU training
                                    steps against an H100's measurements (data/calibrated/measured)
``studies/zero``                    the paper's verdict on ZeRO (partitioned vs baseline and improved)
                                    re-graded per data-parallel network reading; more columns plug in
``studies/codesign/``               the hardware co-design sweep (``lgacc codesign``): ``sweep`` (the
                                    sweep file, checked), ``designs`` (numbered designs, their
                                    hardware), ``evaluate`` (one chunk, pure), ``store`` (finished
                                    chunks on disk), ``runner`` (serial and Dask), ``implications``
                                    (the paper's four hardware statements graded, the Pareto front),
                                    ``figures`` (the chapter's figures)
**book/**                           the book's machinery
``book/notebook/``                  formatting for the notebooks: ``display``, ``formats``,
                                    ``typeset``, ``tables``, ``downloads``, ``figures``,
                                    ``comparisons``, ``claims``, ``hardware``, ``readings``,
                                    ``gpu_measured``
``book/frontpage``                  the front page's first screen: what holds and why, in at most
                                    eight sentences and one figure, every number a library call
``book/run``                        the notebook runner (``python -m lgacc.book.run``)
``book/notebookcache``              executed notebooks kept for later builds (those that see the
                                    hardware keyed by the spec file's bytes)
``book/warmkernel``                 each page's kernel forked from a worker that imported what the
                                    notebooks import (a normal kernel on any start-up problem)
``book/htmlbuild``                  the HTML phase starts from the previous build when made from the
                                    same configuration, extensions and versions (Sphinx writes what changed)
``book/jsgen/``                     the resource model and the search as JavaScript for the calculator
                                    page: ``printer``, ``records``, ``bundle``, ``command``, ``expected``
                                    (the calibrated model, printed from its programs); the
                                    schedule explorer's timelines: ``schedules``
**command line**                    the ``lgacc`` command (nothing imports it)
``commands/``                       one module per subcommand (imports only the subcommand it runs)
``cli``                             the parser, one-line errors, exit codes
==================================  =====================================================================
"""



def __getattr__(name: str):
    """``__version__``, looked up on first use (importlib.metadata costs a warm call a twentieth of a second)."""
    if name != "__version__":
        raise AttributeError(f"module 'lgacc' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("lgacc")
    except PackageNotFoundError:  # running from a source tree that is not installed
        found = "0.0.0"
    globals()["__version__"] = found
    return found

from lgacc.errors import UserInputError  # noqa: E402

__all__ = ["UserInputError", "__version__"]
