"""Subcommands of ``lgacc``; each module defines ``register(subparsers)``.

:data:`SUMMARIES` holds each command's one-line help, which ``lgacc --help`` lists: the overview is built from
it without importing the commands' modules (pandas, matplotlib, sympy), and each module's ``register`` reads its
own line from here.
"""

#: Each subcommand's one-line help, by name (the module ``lgacc.commands.<name>`` registers the command).
SUMMARIES = {
    "codesign": "the search over many hardware designs (a sweep file), serially or on Dask",
    "evaluate": "evaluate one training configuration: efficiency, time, memory per GPU, feasibility",
    "optimize": "search the fastest configuration (or the cheapest meeting --target-days) under the paper's rules",
    "reproduce": "reproduce a table or figure of the paper by its LaTeX label",
    "scorecard": "how each table and figure of the paper is reproduced",
    "sensitivity": "how the headline results move when each of the paper's assumptions moves",
    "simulate": "simulate one step of a pipeline schedule and measure its bubble, memory and overlap",
    "validate": "compare both models with the measured step times and memory of published training runs",
}
