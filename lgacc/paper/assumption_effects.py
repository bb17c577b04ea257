"""What each assumption switch moves: the printed table cells and prose claims it changes.

For every field of :class:`lgacc.model.assumptions.Assumptions`, moved away from its
paper-faithful default (:func:`switch_settings`), every table that depends on
the assumptions is rebuilt under the switch and compared with the paper again;
a printed cell *moves* when its reproduction, shown at the printed precision,
changes, or when its verdict (agrees or not) does (:func:`table_effects`).  The
tables are cheap to rebuild (a few searches each), so every switch is tried on
every table.

A switch about the network is also tried on the scaling figures it bears on (:data:`FIGURE_SWITCHES`,
:func:`figure_effects`): each series of the figure's sweep rebuilt under the switch, the models whose
shortest time moves counted, X160's time shown before and after.  A sweep is a search per model and
series, so only the switches listed there are tried.

The prose claims are not recomputed here (their scaling searches take tens of
seconds per switch): the claims study of :mod:`lgacc.paper.claims` already recomputes
each claim the defaults do not reproduce under the switches that bear on it, and
:func:`claim_effects` reads those rows (:func:`lgacc.paper.claims.switch_effects`) by
switch.  A claim the defaults reproduce is not recomputed under any switch.

:func:`effects_markdown` renders both for the assumptions page of the book
(``book/assumptions.md`` includes it from ``book/generated/``).
"""

from __future__ import annotations

import inspect
import math
import re
from dataclasses import asdict, dataclass
from typing import Any, Sequence

import pandas as pd

from lgacc.model.assumptions import _CHOICES, DEFAULT_ASSUMPTIONS, FIELDS, Assumptions
from lgacc.model.hardware import Hardware, load_hardware

from .artifacts import registry
from .cells import AGREES, flag_column, is_echoed, quantities

__all__ = ["MOVED_VALUES", "FIGURE_SWITCHES", "CellEffect", "ClaimEffect", "FigureEffect", "switch_settings",
           "table_effects", "claim_effects", "figure_effects", "effects_summary", "effects_markdown"]

#: Where a switch takes numbers rather than choices, the values it is moved to: a 10 % loss of
#: every overlapped transfer's bandwidth; the critical-batch constant halved and doubled.
MOVED_VALUES: dict[str, tuple[float, ...]] = {"overlap_efficiency": (0.9,), "critical_batch_scale": (0.5, 2.0)}

#: The switches also tried on scaling figures, and the figures, by their scenario of :mod:`lgacc.scaling`:
#: the data-parallel network on the paper's figure and on the Ethernet one (sec:slow_network).
FIGURE_SWITCHES: dict[tuple[str, Any], tuple[str, ...]] = {("dp_network", "ring"): ("limited", "ethernet")}
_FIGURE_LABELS = {"limited": "fig:scaling_limited", "unlimited": "fig:scaling_unlimited",
                  "ethernet": "fig:scaling_Ethernet"}
#: A shortest time moves when it changes by more than this relative amount (or its feasibility changes).
FIGURE_TOLERANCE = 1e-3
#: Switches no table's build reads (``scaling_grid`` is read by :mod:`lgacc.scaling` only): they move no printed
#: cell, so the tables are not rebuilt under them.
NOT_READ_BY_TABLES = ("scaling_grid",)

#: The columns that name a row of a comparison, in the order they are joined.
_ROW_KEYS = ("model", "name", "phase", "parallelism", "method", "target")


def switch_settings() -> list[tuple[str, Any]]:
    """``(field, value)`` for every switch away from the default, in the dataclass's order: a flag
    negated, every other choice of a choice, the :data:`MOVED_VALUES` of a number."""
    settings = []
    for name in FIELDS:
        default = getattr(DEFAULT_ASSUMPTIONS, name)
        if isinstance(default, bool):
            values: tuple[Any, ...] = (not default,)
        elif name in _CHOICES:
            values = tuple(choice for choice in _CHOICES[name] if choice != default)
        else:
            values = MOVED_VALUES[name]
        settings += [(name, value) for value in values]
    return settings


def setting_text(name: str, value: Any) -> str:
    """``gb=GB``, ``divisible_heads=false``, ``critical_batch_scale=2`` (as ``--assume`` takes it)."""
    shown = str(value).lower() if isinstance(value, bool) else (f"{value:g}" if isinstance(value, float) else str(value))
    return f"{name}={shown}"


@dataclass(frozen=True)
class CellEffect:
    """One printed cell that a switch moves."""

    switch: str
    value: str
    table: str
    row: str
    cell: str
    printed: str
    default: str
    switched: str
    default_agrees: bool
    switched_agrees: bool

    @property
    def verdict_changes(self) -> bool:
        return self.default_agrees != self.switched_agrees


def _takes_assumptions(build) -> bool:
    return "assumptions" in inspect.signature(build).parameters


def assumption_tables() -> list[str]:
    """The tables (with printed values) whose build takes the assumptions; the others depend on none."""
    return [label for label, a in registry().items()
            if a.kind == "table" and a.compare is not None and _takes_assumptions(a.build)]


def _row_name(row: pd.Series) -> str:
    return " / ".join(str(row[key]) for key in _ROW_KEYS if key in row.index)


def _text(value: Any) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def _moved_cells(label: str, name: str, value: Any, default: pd.DataFrame, switched: pd.DataFrame) -> list[CellEffect]:
    if len(default) != len(switched):
        raise ValueError(f"{label}: {len(default)} rows by default, {len(switched)} under {name}={value}")
    moved = []
    for (_, before), (_, after) in zip(default.iterrows(), switched.iterrows()):
        for quantity in quantities(default):
            agrees_before = before.get(flag_column(quantity, AGREES))
            if agrees_before is None or agrees_before != agrees_before or is_echoed(before, quantity):
                continue  # not printed, or an input shown again
            shown_before = _text(before.get(f"{quantity} (reproduced)"))
            shown_after = _text(after.get(f"{quantity} (reproduced)"))
            agrees_after = bool(after.get(flag_column(quantity, AGREES)))
            if shown_before != shown_after or bool(agrees_before) != agrees_after:
                moved.append(CellEffect(name, setting_text(name, value).split("=", 1)[1], label, _row_name(before),
                                        quantity, _text(before.get(f"{quantity} (paper)")), shown_before, shown_after,
                                        bool(agrees_before), agrees_after))
    return moved


def _build(artifact, spec: Hardware, assumptions: Assumptions, built: dict):
    """``artifact`` built under ``assumptions``, once per build function (two tables of one search share
    it); a build that can skip work the printed cells do not need (``alternative``) skips it."""
    key = (artifact.build, assumptions)
    if key not in built:
        options = {"alternative": False} if "alternative" in inspect.signature(artifact.build).parameters else {}
        built[key] = artifact.build(spec, assumptions=assumptions, **options)
    return built[key]


def table_effects(hardware: str | Hardware, settings: Sequence[tuple[str, Any]] | None = None) -> list[CellEffect]:
    """Every printed cell each switch of ``settings`` (default: :func:`switch_settings`) moves, over the
    tables of :func:`assumption_tables`; kept on disk per spec and sources (:mod:`lgacc.cache.results`)."""
    from lgacc.cache.results import cached

    spec = load_hardware(hardware)
    settings = tuple(switch_settings() if settings is None else settings)
    return list(cached("assumption_effects", (spec, settings), lambda: tuple(_table_effects(spec, settings))))


def _table_effects(spec: Hardware, settings: Sequence[tuple[str, Any]]) -> list[CellEffect]:
    artifacts = registry()
    labels = assumption_tables()
    built: dict = {}
    defaults = {label: artifacts[label].compare(_build(artifacts[label], spec, DEFAULT_ASSUMPTIONS, built))
                for label in labels}
    moved: list[CellEffect] = []
    for name, value in settings:
        if name in NOT_READ_BY_TABLES:
            continue
        assumptions = Assumptions().replace(**{name: value})
        for label in labels:
            artifact = artifacts[label]
            switched = artifact.compare(_build(artifact, spec, assumptions, built))
            moved += _moved_cells(label, name, value, defaults[label], switched)
        built = {key: frame for key, frame in built.items() if key[1] == DEFAULT_ASSUMPTIONS}
    return moved


@dataclass(frozen=True)
class ClaimEffect:
    """One prose claim a switch was tried on, from the claims study (``tried``: the switches as set
    there, possibly several together)."""

    switch: str
    value: str
    tried: str
    claim: str
    printed: str
    default: float | None
    switched: float | None
    moves: bool
    agrees: bool
    unit: str = ""


_SETTING = re.compile(r"\b(?P<name>[a-z_]+)\s*=\s*'?(?P<value>[^'\s,;)]+)")


def _value_text(name: str, text: str) -> str:
    """A value as the claims study spells it (``False``, ``'GB'``) in :func:`setting_text`'s spelling."""
    default = getattr(DEFAULT_ASSUMPTIONS, name)
    if isinstance(default, bool):
        return text.lower()
    if isinstance(default, float):
        try:
            return f"{float(text):g}"
        except ValueError:
            return text
    return text


def claim_effects(records: Sequence[dict]) -> list[ClaimEffect]:
    """The claims study's rows (:func:`lgacc.paper.claims.switch_effects` over ``records``) whose alternative
    sets switches of :class:`Assumptions`, one row per switch it sets; other named readings (a rounded
    constant, no recomputation) are left out."""
    from .claims import switch_effects

    units = {r["id"]: r.get("unit", "") for r in records}
    effects = []
    for row in switch_effects(records):
        tried = str(row["switch"])
        for match in _SETTING.finditer(tried.split(" (", 1)[0]):
            if match["name"] in FIELDS:
                effects.append(ClaimEffect(match["name"], _value_text(match["name"], match["value"]), tried, row["claim"],
                                           row["printed"], row["default"], row["switched"], bool(row["moves"]),
                                           bool(row["agrees"]), units.get(row["claim"], "")))
    return effects


def _claims_of(claims: Sequence[ClaimEffect], name: str, shown: str) -> list[ClaimEffect]:
    return [c for c in claims if (c.switch, c.value) == (name, shown)]


@dataclass(frozen=True)
class FigureEffect:
    """One series of a scaling figure under a switch: the models compared, those whose shortest time moves (or
    whose feasibility changes), the extreme ratios switched / default, and X160's time before and after."""

    switch: str
    value: str
    figure: str
    series: str
    models: int
    moved: int
    lowest_ratio: float
    highest_ratio: float
    x160_default_days: float
    x160_switched_days: float


def _series_effect(name: str, value: Any, scenario: str, series: str, before: pd.DataFrame,
                   after: pd.DataFrame) -> FigureEffect:
    from lgacc.model.transformer import TRILLION_X

    b = before[before.method == series].set_index("x")
    a = after[after.method == series].set_index("x").reindex(b.index)
    both = b.feasible.astype(bool) & a.feasible.astype(bool)
    ratio = (a.time_days / b.time_days)[both]
    moved = int((abs(ratio - 1) > FIGURE_TOLERANCE).sum() + (b.feasible.astype(bool) != a.feasible.astype(bool)).sum())

    def at_x160(frame: pd.DataFrame) -> float:
        return float(frame.time_days.get(TRILLION_X, math.nan)) if bool(frame.feasible.get(TRILLION_X, False)) else math.nan

    return FigureEffect(name, setting_text(name, value).split("=", 1)[1], _FIGURE_LABELS[scenario], series,
                        int(len(b)), moved, float(ratio.min()) if len(ratio) else math.nan,
                        float(ratio.max()) if len(ratio) else math.nan, at_x160(b), at_x160(a))


def figure_effects(hardware: str | Hardware, settings: Sequence[tuple[str, Any]] | None = None) -> list[FigureEffect]:
    """Every series of the scaling figures of :data:`FIGURE_SWITCHES` rebuilt under its switch (those of
    ``settings`` only, when given), against the figure's own sweep (both kept on disk by
    :func:`lgacc.scaling.scaling_sweep`)."""
    from lgacc.scaling import SCALING_ASSUMPTIONS, scaling_sweep

    spec = load_hardware(hardware)
    chosen = FIGURE_SWITCHES if settings is None else {k: v for k, v in FIGURE_SWITCHES.items() if k in set(settings)}
    effects = []
    for (name, value), scenarios in chosen.items():
        assumptions = SCALING_ASSUMPTIONS.replace(**{name: value})  # the figures' reading, one switch moved
        for scenario in scenarios:
            before = scaling_sweep(spec, scenario)
            after = scaling_sweep(spec, scenario, assumptions=assumptions)
            effects += [_series_effect(name, value, scenario, series, before, after)
                        for series in dict.fromkeys(before.method)]
    return effects


def _figure_markdown(figures: Sequence[FigureEffect]) -> list[str]:
    if not figures:
        return []
    from .findings import readable_value

    def days(value: float) -> str:
        return "—" if not math.isfinite(value) else readable_value(value, "days")

    lines = ["**Scaling figures.** A switch about the network is also tried on the figures it bears on: each series "
             "rebuilt under it; *moved* counts the models whose shortest time changes (or which become feasible or "
             "infeasible); the ratios are switched over default times.", ""]
    lines += _markdown_table(
        ["switch", "figure", "series", "models moved", "ratio range", "X160 default", "X160 switched"],
        [(f"`{f.switch}` = {f.value}", f"`{f.figure}`", f.series, f"{f.moved} of {f.models}",
          "—" if not math.isfinite(f.lowest_ratio) else f"{f.lowest_ratio:.2f}–{f.highest_ratio:.2f}",
          days(f.x160_default_days), days(f.x160_switched_days)) for f in figures],
    )
    return lines


def effects_summary(cells: Sequence[CellEffect], claims: Sequence[ClaimEffect],
                    settings: Sequence[tuple[str, Any]] | None = None) -> pd.DataFrame:
    """One row per switch setting: cells it moves, verdicts it changes (✓ to ✗ and ✗ to ✓), claims tried,
    moved and reproduced under it."""
    rows = []
    for name, value in (switch_settings() if settings is None else settings):
        shown = setting_text(name, value).split("=", 1)[1]
        mine = [c for c in cells if (c.switch, c.value) == (name, shown)]
        tried = _claims_of(claims, name, shown)
        rows.append({
            "switch": name, "value": shown,
            "cells_moved": len(mine),
            "cells_now_agree": sum(not c.default_agrees and c.switched_agrees for c in mine),
            "cells_now_differ": sum(c.default_agrees and not c.switched_agrees for c in mine),
            "claims_tried": len({c.claim for c in tried}),
            "claims_moved": len({c.claim for c in tried if c.moves}),
            "claims_now_agree": len({c.claim for c in tried if c.agrees}),
        })
    return pd.DataFrame(rows)


def _markdown_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    def clean(value: Any) -> str:
        return str(value).replace("|", "\\|")

    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(clean(v) for v in row) + " |" for row in rows), ""]


def _printed_plain(text: str) -> str:
    from .findings import printed_plain  # lazily, as readable_value below

    return printed_plain(text)


def _number(value: float | None, unit: str = "") -> str:
    """A claim's value as a reader reads it (``42.8 %``, ``122 trillion parameters``)."""
    from .findings import readable_value

    if value is None:
        return "—"
    # "122 trillion": the printed column already says "parameters", and the table must fit the text column
    if unit in ("fraction", "parameters"):
        return readable_value(value, unit).removesuffix(" parameters")
    return readable_value(value, unit).removesuffix(f" {unit}") if unit else readable_value(value, unit).strip()


def effects_markdown(cells: Sequence[CellEffect], claims: Sequence[ClaimEffect], hardware_name: str,
                     settings: Sequence[tuple[str, Any]] | None = None,
                     figures: Sequence[FigureEffect] = ()) -> str:
    """The assumptions page's section: a summary per switch, the scaling figures the network switches move
    (``figures``, :func:`figure_effects`), then per switch the cells and claims it moves."""
    settings = switch_settings() if settings is None else list(settings)
    summary = effects_summary(cells, claims, settings)
    tables = ", ".join(f"`{label}`" for label in assumption_tables())
    lines = [
        f"Computed for **{hardware_name}** by rebuilding {tables} under each switch, every other switch at its "
        "default, and comparing with the paper again. A printed cell *moves* when its reproduction at the printed "
        "precision or its verdict changes; inputs a table only shows again are left out. The claims are those the "
        "{ref}`claims page <claims-switches>` recomputes under a switch (only the claims the defaults do not "
        "reproduce are recomputed).",
        "",
    ]
    lines += _markdown_table(
        ["switch", "set to", "cells moved", "now ✓", "now ✗", "claims tried", "claims moved", "claims now ✓"],
        [(r.switch, r.value, r.cells_moved, r.cells_now_agree, r.cells_now_differ, r.claims_tried,
          r.claims_moved, r.claims_now_agree) for r in summary.itertuples()],
    )
    lines += _figure_markdown(figures)
    for name, value in settings:
        shown = setting_text(name, value).split("=", 1)[1]
        mine = [c for c in cells if (c.switch, c.value) == (name, shown)]
        tried = _claims_of(claims, name, shown)
        if not mine and not tried:
            continue
        lines += [f":::{{dropdown}} `{name}` = {shown}: {len(mine)} printed cell{'s' if len(mine) != 1 else ''}"
                  + (f", {len({c.claim for c in tried})} claim{'s' if len({c.claim for c in tried}) != 1 else ''} tried"
                   if tried else ""), ""]
        for table in dict.fromkeys(c.table for c in mine):  # one table per paper table, in order, to stay narrow
            lines += [f"`{table}`", ""]
            lines += _markdown_table(
                ["row", "cell", "printed", "default", "switched"],
                [(c.row, c.cell.replace("_", " "), _printed_plain(c.printed), c.default + ("" if c.default_agrees else " ✗"),
                  c.switched + ("" if c.switched_agrees else " ✗")) for c in mine if c.table == table],
            )
        if tried:
            lines += _markdown_table(
                ["claim", "tried as", "printed", "default", "switched"],
                [(c.claim.replace("_", " "), c.tried, _printed_plain(c.printed), _number(c.default, c.unit),
                  _number(c.switched, c.unit) + (" ✓" if c.agrees else " ✗") + ("" if c.moves else " (unmoved)"))
                 for c in tried],
            )
        lines += [":::", ""]
    untouched = [setting_text(n, v) for n, v in settings
                 if not any((c.switch, c.value) == (n, setting_text(n, v).split("=", 1)[1]) for c in cells)
                 and not _claims_of(claims, n, setting_text(n, v).split("=", 1)[1])]
    if untouched:
        lines += ["Moving no printed cell and tried on no claim: " + ", ".join(f"`{t}`" for t in untouched) + ".", ""]
    return "\n".join(lines)


def effects_records(cells: Sequence[CellEffect], claims: Sequence[ClaimEffect],
                    figures: Sequence[FigureEffect] = ()) -> dict[str, list[dict]]:
    """JSON-ready: ``{"cells": [...], "claims": [...], "figures": [...]}``."""
    return {"cells": [asdict(c) for c in cells], "claims": [asdict(c) for c in claims],
            "figures": [asdict(f) for f in figures]}
