"""``--recompute``, ``--sequence-parallel`` and ``--recipe KEY=VALUE``: the command line's view of
:class:`lgacc.model.calibrated.Recipe` (what the calibrated model reads beside the paper's configuration)."""

from __future__ import annotations

import argparse

from lgacc.model.calibrated import RECOMPUTE, Recipe
from lgacc.model.calibrated.recipe import FIELDS


def add_recipe_arguments(parser: argparse.ArgumentParser) -> None:
    """The calibrated model's recipe flags."""
    parser.add_argument("--recompute", choices=RECOMPUTE, default="full",
                        help="activation recomputation: the work the ideal step_time_s and time_days count and the "
                             "calibrated model's recipe (default: full, the paper's)")
    parser.add_argument("--sequence-parallel", action="store_true",
                        help="sequence parallelism in the calibrated model (norms and dropout split the tokens)")
    parser.add_argument("--recipe", action="append", default=[], metavar="KEY=VALUE",
                        help="another choice of the calibrated model (repeatable); KEY one of " + ", ".join(FIELDS))


def recipe_from_args(args: argparse.Namespace) -> Recipe:
    """The recipe of ``--recipe`` items, then ``--recompute`` and ``--sequence-parallel`` (which win)."""
    recipe = Recipe.from_strings(args.recipe)
    changes = {"recompute": args.recompute}
    if args.sequence_parallel:
        changes["sequence_parallel"] = True
    return recipe.replace(**changes)
