"""How robust are the paper's conclusions?  Its headline results under each assumption moved alone.

The paper makes several choices once: the critical-batch constant ``K_c`` of
``eq:critical_batch`` (calibrated on GPT-3 at 3.2 M tokens), a 16-GPU node, the
25 % overhead cap of ``eq:overhead_condition``, perfect overlap, "GB" read as
GiB, whole layers per pipeline stage and whole heads per tensor-parallel
device, a 25 Gb/s Ethernet share and the X family's depth-to-width ratio.
Each :class:`Dimension` moves one of them over a range of values (the paper's
value included) and leaves the others at the paper's value.

For every value, :func:`headline` computes the paper's headline results with the
search (:func:`lgacc.search.fastest`, "3d" parallelism), never with a formula
retyped here:

* the fastest X160 configuration of the baseline and of the improved method
  (time and GPU count, ``table:parallel_methods_comparison``) and their ratio,
  the improved-over-baseline speed-up ("at least twice as fast", sec:intro);
* the improved method's memory per GPU there ("4.72 GB, 17 times less than the
  memory available", sec:trillion_parameter);
* the largest model the improved method trains within one month and one year
  (sec:scaling_analysis), found by bisection over the X family with the search
  (:func:`time_limit`), interpolated like :func:`lgacc.scaling.time_limit`;
* the slowdown of X160 when InfiniBand is replaced by the Ethernet share
  (sec:slow_network, "Ethernet is enough").

The switches are those of :class:`lgacc.assumptions.Assumptions` (the fidelity
options of the evaluator and the search), the hardware spec
(:meth:`lgacc.hardware.Hardware.replace`), the search's ``max_overhead`` and the
shape of the model family (:func:`family_model`).  :data:`CONCLUSIONS` then
classifies each result against the paper's printed claim (``data/paper/claims.yaml``):
*holds*, *weakens* or *reverses* (:func:`verdicts`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from functools import cache
from typing import Any, Callable, Iterable, Mapping, Sequence

from .assumptions import Assumptions
from .claims import ABOUT_FACTOR, printed_claims
from .errors import UserInputError
from .equations import equation_name
from .evaluate import DEFAULT_MAX_OVERHEAD
from .hardware import DEFAULT_HARDWARE, GIB, Hardware, load_hardware
from .models import Transformer, x_model
from .scaling import ONE_MONTH_DAYS, ONE_YEAR_DAYS, nice_x, scenario_hardware, sweep_xs
from .search import fastest
from .resultcache import cached

__all__ = [
    "TRILLION_X",
    "Setting",
    "Dimension",
    "Headline",
    "SensitivityRow",
    "Limit",
    "Conclusion",
    "CONCLUSIONS",
    "VERDICTS",
    "family_model",
    "dimensions",
    "headline",
    "sensitivity_rows",
    "time_limit",
    "classify",
    "verdicts",
]

#: The trillion-parameter example of sec:trillion_parameter.
TRILLION_X = 160
#: The search's parallelism for every headline result: the paper's fastest configurations are "3d".
PARALLELISM = "3d"


# --- one point of the grid ----------------------------------------------------------------------


@dataclass(frozen=True)
class Setting:
    """Every assumption the headline results depend on, at one value each.

    ``hardware`` is the spec the InfiniBand results use; ``ethernet_bytes_per_s``
    the Ethernet share per GPU of the Ethernet scenario (``None``: the spec's),
    kept apart so that moving it leaves the other results' searches identical.
    ``depth_factor`` reshapes the model family at constant parameter count
    (:func:`family_model`).
    """

    hardware: Hardware
    assumptions: Assumptions = field(default_factory=Assumptions)
    max_overhead: float = DEFAULT_MAX_OVERHEAD
    depth_factor: float = 1.0
    ethernet_bytes_per_s: float | None = None

    def __post_init__(self) -> None:
        if self.ethernet_bytes_per_s == self.hardware.ethernet_bandwidth_bytes_per_s:
            object.__setattr__(self, "ethernet_bytes_per_s", None)  # one spelling of the spec's own share

    def model(self, x: int) -> Transformer:
        return family_model(x, self.depth_factor)

    def ethernet_hardware(self) -> Hardware:
        """The spec of sec:slow_network: the Ethernet share instead of InfiniBand."""
        spec = self.hardware
        if self.ethernet_bytes_per_s is not None:
            spec = spec.replace(ethernet_bandwidth_bytes_per_s=self.ethernet_bytes_per_s)
        return scenario_hardware(spec, "ethernet")

    def gpu_memory_bytes(self) -> float:
        """The GPU memory the evaluator sees (the ``gb`` switch rescales the spec's)."""
        from .assumptions import apply_to_hardware

        return apply_to_hardware(self.hardware, self.assumptions).memory_bytes


def family_model(x: int, depth_factor: float = 1.0) -> Transformer:
    """X_[x], or the same-size model ``depth_factor`` times deeper and ``sqrt(depth_factor)`` times narrower.

    ``p ≈ (4 + 2 n_I) d_m^2 d_l`` is unchanged when ``d_l`` is multiplied by ``r`` and
    ``d_m`` divided by ``sqrt(r)``.  The head count ``d_a = x/2`` and the sequence
    length ``d_s = 16 x`` are kept, so the tensor-parallel degrees and the critical
    batch ``b_c ∝ p^(1/3) / d_s`` stay those of X_[x]; only the head size
    ``d_h = 2x / sqrt(r)`` and the depth move (both rounded to whole numbers).
    ``r = 1`` is X_[x] itself.
    """
    if not (isinstance(depth_factor, (int, float)) and depth_factor > 0 and math.isfinite(depth_factor)):
        raise UserInputError(f"depth factor {depth_factor!r} must be a positive number")
    base = x_model(x)
    if depth_factor == 1:
        return base
    d_l = max(1, round(base.d_l * depth_factor))
    d_h = max(1, round(base.d_h / math.sqrt(depth_factor)))
    return Transformer(
        name=f"X{x} (depth x{depth_factor:g})", d_l=d_l, d_m=base.d_a * d_h, d_a=base.d_a, d_h=d_h,
        d_s=base.d_s, n_I=base.n_I, source=f"X{x} reshaped: d_l x {depth_factor:g}, d_h / sqrt({depth_factor:g})",
    )


# --- the assumptions moved ----------------------------------------------------------------------


@dataclass(frozen=True)
class Dimension:
    """One assumption and the values it takes; ``apply(setting, value)`` moves it alone."""

    name: str
    title: str
    values: tuple[Any, ...]
    default: Any
    apply: Callable[[Setting, Any], Setting]
    label: Callable[[Any], str]
    why: str
    ordered: bool = True

    def setting(self, base: Setting, value: Any) -> Setting:
        return self.apply(base, value)


def _replace_assumptions(**changes) -> Callable[[Setting, Any], Setting]:
    def apply(setting: Setting, value: Any) -> Setting:
        resolved = {k: (value if v is None else v(value)) for k, v in changes.items()}
        return _setting_replace(setting, assumptions=setting.assumptions.replace(**resolved))

    return apply


def _setting_replace(setting: Setting, **changes) -> Setting:
    values = {f.name: getattr(setting, f.name) for f in fields(setting)}
    values.update(changes)
    return Setting(**values)


#: The divisibility switches of :class:`Assumptions`, by the value shown.
DIVISIBILITY = {
    "both": (True, True),
    "layers free": (False, True),
    "heads free": (True, False),
    "neither": (False, False),
}


def _times(value: float) -> str:
    return f"×{value:g}"


def dimensions(hardware: Hardware | str = DEFAULT_HARDWARE) -> tuple[Dimension, ...]:
    """The assumptions moved, each with its range; the spec's own node size and Ethernet share are included."""
    spec = load_hardware(hardware)
    nodes = tuple(sorted({4, 8, 16, 32, 72, spec.gpus_per_node}))
    ethernet = spec.ethernet_bandwidth_bytes_per_s
    return (
        Dimension(
            "critical_batch_scale", "Critical-batch constant K_c", (0.25, 0.5, 1.0, 2.0, 4.0, 8.0), 1.0,
            _replace_assumptions(critical_batch_scale=None), _times,
            "eq:critical_batch calibrates K_c on GPT-3 at 3.2 M tokens; Kaplan et al.'s own fit of B_crit is "
            "several times larger at the same loss",
        ),
        Dimension(
            "gpus_per_node", "GPUs per NVLink node", nodes, spec.gpus_per_node,
            lambda s, n: _setting_replace(s, hardware=s.hardware.replace(gpus_per_node=n)),
            lambda n: f"{n} GPUs",
            "the paper assumes 16-GPU HGX nodes; DGX/HGX A100 nodes have 8, NVL72 racks 72",
        ),
        Dimension(
            "max_overhead", f"Overhead cap ({equation_name('eq:overhead_condition')})", (0.10, 0.15, 0.25, 0.35, 0.50),
            DEFAULT_MAX_OVERHEAD, lambda s, v: _setting_replace(s, max_overhead=v), lambda v: f"{v:.0%}",
            "the paper caps each non-overlapped overhead at 25 %",
        ),
        Dimension(
            "overlap_efficiency", "Overlap efficiency", (0.5, 0.7, 0.9, 1.0), 1.0,
            _replace_assumptions(overlap_efficiency=None), _times,
            "the paper assumes perfect overlap; the factor multiplies the bandwidth of every overlapped transfer",
        ),
        Dimension(
            "gb", "Reading of the paper's 'GB'", ("GiB", "GB"), "GiB",
            _replace_assumptions(gb=None), str,
            "the tables come out as printed with GiB; decimal GB rescales every bandwidth and the GPU memory",
            ordered=False,
        ),
        Dimension(
            "divisibility", "Divisibility of layers and heads", tuple(DIVISIBILITY), "both",
            _replace_assumptions(divisible_layers=lambda v: DIVISIBILITY[v][0],
                                 divisible_heads=lambda v: DIVISIBILITY[v][1]),
            lambda v: {"both": "n_l | d_l, n_a | d_a", "layers free": "n_a | d_a only",
                       "heads free": "n_l | d_l only", "neither": "no divisibility"}[v],
            "the paper is silent; its configurations split whole layers and whole heads",
            ordered=False,
        ),
        Dimension(
            "ethernet_bandwidth_gib_per_s", "Ethernet share per GPU",
            tuple(ethernet * f / GIB for f in (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)), ethernet / GIB,
            lambda s, v: _setting_replace(s, ethernet_bytes_per_s=v * GIB),
            lambda v: f"{v:g} GB/s",
            "sec:slow_network assumes a 400 Gb/s node link shared by 16 GPUs (25 Gb/s each way per GPU)",
        ),
        Dimension(
            "depth_factor", "Depth of the X family at the same size", (1 / 16, 1 / 4, 1.0, 4.0, 16.0), 1.0,
            lambda s, r: _setting_replace(s, depth_factor=r),
            lambda r: "X family" if r == 1 else (f"{r:g}× deeper" if r > 1 else f"{1 / r:g}× shallower"),
            "the paper picks d_l = sqrt(d_m) ('the exact configuration makes little difference')",
        ),
        Dimension(
            "convention", "How an overlapped transfer's overhead counts", ("paper", "physical"), "paper",
            _replace_assumptions(convention=None), str,
            "eq:overhead_condition states the overhead relative to the overlapped operation; 'physical' counts "
            "the non-overlapped time relative to the whole step",
            ordered=False,
        ),
        Dimension(
            "pipeline_overlap", "When pipeline transfers overlap", ("extra-micro-batches", "always", "never"),
            "extra-micro-batches", _replace_assumptions(pipeline_overlap=None), str,
            "the paper overlaps them with 'a small number of extra micro-batches'",
            ordered=False,
        ),
    )


# --- results -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Limit:
    """The largest model trained within ``days``: ``p``, bracketed by two searched models.

    ``bound`` is ``"time"`` when the first model above the limit is feasible but too
    slow (``p`` log-log interpolated at ``days``, as :func:`lgacc.scaling.time_limit`),
    ``"memory"`` when it has no feasible configuration (``p`` the geometric mean).
    """

    days: float
    p: float
    p_low: float
    p_high: float
    x_low: int
    x_high: int
    bound: str
    memory_gib: float


@dataclass(frozen=True)
class Headline:
    """The paper's headline results under one :class:`Setting` (``nan``, or ``None`` for a count, where infeasible)."""

    baseline_time_days: float
    baseline_n_gpu: int | None
    improved_time_days: float
    improved_n_gpu: int | None
    speedup: float
    min_memory_gib: float
    min_memory_share: float
    one_month_limit_p: float
    one_month_bound: str
    one_year_limit_p: float
    one_year_bound: str
    ethernet_slowdown: float


RESULT_KEYS = tuple(f.name for f in fields(Headline))


@dataclass(frozen=True)
class SensitivityRow:
    """One value of one assumption and the headline results there (the command's JSON object)."""

    assumption: str
    value: Any
    label: str
    is_paper_default: bool
    headline: Headline

    def as_dict(self) -> dict[str, Any]:
        out = {"assumption": self.assumption, "value": self.value, "label": self.label,
               "is_paper_default": self.is_paper_default}
        out.update(asdict(self.headline))
        return out


class _Searches:
    """Memo of the searches of one run, keyed by everything a search depends on."""

    def __init__(self) -> None:
        self.results: dict[tuple, Any] = {}

    def fastest(self, setting: Setting, x: int, method: str, hardware: Hardware | None = None):
        spec = setting.hardware if hardware is None else hardware
        key = (x, method, spec, setting.assumptions, setting.max_overhead, setting.depth_factor)
        if key not in self.results:
            self.results[key] = fastest(setting.model(x), spec, method, PARALLELISM, max_overhead=setting.max_overhead,
                                        explain=False, assumptions=setting.assumptions)
        return self.results[key]

    def row(self, setting: Setting, x: int) -> tuple[bool, float, float, float]:
        """``(feasible, time_days, p, memory_gib)`` of the improved method's fastest configuration of model ``x``."""
        result = self.fastest(setting, x, "improved")
        p = float(setting.model(x).p)
        if result.evaluation is None:
            return False, math.nan, p, math.nan
        e = result.evaluation
        return True, e.time_days, p, e.memory.total / GIB


def limit_ladder() -> tuple[int, ...]:
    """The models a limit is searched on: the scaling sweep's grid and every grid value between its points.

    A value ``x`` is on the grid when :func:`lgacc.scaling.nice_x` keeps it, so the
    ladder is the refinement :func:`lgacc.scaling.time_limit` visits between two
    grid points, over the whole range.
    """
    xs = sweep_xs()
    return tuple(x for x in range(xs[0], xs[-1] + 1, 2) if nice_x(x) == x)


def _bisect(condition: Callable[[int], bool], ladder: Sequence[int], hint: int = 0) -> int | None:
    """The last index of ``ladder`` where ``condition`` holds, assuming it holds up to some index then fails.

    Gallops from ``hint`` (the answer under another setting, usually close), then
    bisects: a few searches instead of the whole sweep.  ``None`` when it fails at
    the first value; ``len(ladder) - 1`` when it holds at the last.
    """
    n = len(ladder)
    hint = min(max(hint, 0), n - 1)
    if condition(ladder[hint]):
        low, step = hint, 1
        high = hint + step
        while high < n and condition(ladder[high]):
            low, step = high, step * 2
            high = low + step
        high = min(high, n)
    else:
        high, step = hint, 1
        low = hint - step
        while low >= 0 and not condition(ladder[low]):
            high, step = low, step * 2
            low = high - step
        if low < 0:
            if not condition(ladder[0]):
                return None
            low = 0
    while high - low > 1:
        middle = (low + high) // 2
        if condition(ladder[middle]):
            low = middle
        else:
            high = middle
    return low


def time_limit(days: float, setting: Setting, searches: _Searches | None = None, hint: int = 0) -> tuple[Limit | None, int]:
    """The largest model the improved method trains within ``days`` under ``setting``, and its ladder index.

    ``None`` when even the smallest model takes longer or the largest ladder model is
    still within ``days``.
    """
    searches = _Searches() if searches is None else searches
    ladder = limit_ladder()

    def within(x: int) -> bool:
        feasible, time_days, _, _ = searches.row(setting, x)
        return feasible and time_days <= days

    index = _bisect(within, ladder, hint)
    if index is None or index == len(ladder) - 1:
        return None, hint
    x_low, x_high = ladder[index], ladder[index + 1]
    _, t_low, p_low, m_low = searches.row(setting, x_low)
    feasible, t_high, p_high, m_high = searches.row(setting, x_high)
    if feasible:
        t = (math.log(days) - math.log(t_low)) / (math.log(t_high) - math.log(t_low))
        p = math.exp(math.log(p_low) + t * (math.log(p_high) - math.log(p_low)))
        memory = math.exp(math.log(m_low) + t * (math.log(m_high) - math.log(m_low)))
        bound = "time"
    else:
        p, memory, bound = math.sqrt(p_low * p_high), m_low, "memory"
    return Limit(days, p, p_low, p_high, x_low, x_high, bound, memory), index


def headline(setting: Setting, searches: _Searches | None = None, hints: Mapping[float, int] | None = None) -> tuple[Headline, dict[float, int]]:
    """The headline results under ``setting`` (and the ladder indices of its limits, hints for the next)."""
    searches = _Searches() if searches is None else searches
    hints = dict(hints or {})
    base = searches.fastest(setting, TRILLION_X, "baseline")
    impr = searches.fastest(setting, TRILLION_X, "improved")
    eth = searches.fastest(setting, TRILLION_X, "improved", setting.ethernet_hardware())
    nan = math.nan
    b_time = base.evaluation.time_days if base.feasible else nan
    i_time = impr.evaluation.time_days if impr.feasible else nan
    memory = gpu_resident_bytes(impr.evaluation) if impr.feasible else nan
    e_time = eth.evaluation.time_days if eth.feasible else nan
    limits = {}
    for days in (ONE_MONTH_DAYS, ONE_YEAR_DAYS):
        limits[days], hints[days] = time_limit(days, setting, searches, hints.get(days, 0))
    month, year = limits[ONE_MONTH_DAYS], limits[ONE_YEAR_DAYS]
    return Headline(
        baseline_time_days=b_time,
        baseline_n_gpu=int(base.evaluation.n_gpu) if base.feasible else None,
        improved_time_days=i_time,
        improved_n_gpu=int(impr.evaluation.n_gpu) if impr.feasible else None,
        speedup=(b_time / i_time) if impr.feasible and base.feasible else (math.inf if impr.feasible else nan),
        min_memory_gib=memory / GIB,
        min_memory_share=memory / setting.gpu_memory_bytes(),
        one_month_limit_p=month.p if month else nan,
        one_month_bound=month.bound if month else "",
        one_year_limit_p=year.p if year else nan,
        one_year_bound=year.bound if year else "",
        ethernet_slowdown=e_time / i_time - 1,
    ), hints


def gpu_resident_bytes(evaluation) -> float:
    """The memory that stays on the GPU: everything, or without the state and checkpoints when they are offloaded.

    The paper's 4.72 GB is the whole memory of a configuration that does not offload;
    on a small GPU the search offloads, and the share of the GPU's memory that matters
    is then the non-offloadable part the ``memory`` rule checks.
    """
    memory = evaluation.memory
    return memory.non_offloadable if evaluation.config.offload else memory.total


def sensitivity_rows(
    hardware: Hardware | str = DEFAULT_HARDWARE,
    names: Iterable[str] | None = None,
    *,
    progress: bool = False,
) -> list[SensitivityRow]:
    """Every value of every assumption (or of ``names``), each moved alone, with its headline results.

    Kept on disk (:mod:`lgacc.resultcache`): the command, the book's chapter and the tests ask for
    the same grid of a spec."""
    spec = load_hardware(hardware)
    key = None if names is None else tuple(names)
    return cached("sensitivity", (spec, key), lambda: _sensitivity_rows(spec, key, progress))


def _sensitivity_rows(spec: Hardware, names: tuple[str, ...] | None, progress: bool) -> list[SensitivityRow]:
    base = Setting(spec)
    chosen = dimensions(spec)
    if names is not None:
        wanted = list(names)
        known = {d.name for d in chosen}
        unknown = [n for n in wanted if n not in known]
        if unknown:
            raise UserInputError(f"unknown assumption {unknown[0]!r}; expected one of {', '.join(sorted(known))}")
        chosen = tuple(d for d in chosen if d.name in wanted)
    searches = _Searches()
    _, hints = headline(base, searches)
    pairs = [(d, v) for d in chosen for v in d.values]
    if progress:
        from tqdm.auto import tqdm

        pairs = tqdm(pairs, desc="sensitivity", unit="setting")
    rows = []
    for dimension, value in pairs:
        result, _ = headline(dimension.setting(base, value), searches, hints)
        rows.append(SensitivityRow(dimension.name, value, dimension.label(value), value == dimension.default, result))
    return rows


# --- conclusions ---------------------------------------------------------------------------------

#: Verdicts, from best to worst.
VERDICTS = ("holds", "weakens", "reverses")
#: A time this factor off the printed one is the other method's: the improved method in two weeks
#: is the baseline's printed time, the baseline in one week the improved method's.
REVERSAL_FACTOR = 2.0


@dataclass(frozen=True)
class Conclusion:
    """A headline conclusion, the result it rests on and the printed claim it is judged against.

    ``short`` is its name in a table's header.

    ``kind``: ``"at least"`` (holds down to the printed value over :data:`ABOUT_FACTOR`,
    reverses at or below ``reverse_at``), ``"at most"`` (holds up to the printed value
    times the factor, reverses above ``reverse_at``), ``"about"`` (holds within the
    factor either way, reverses below ``reverse_at`` when given, or when ``bound_key``
    says memory, not time, sets the limit; weakens otherwise).  ``reverse_at`` takes
    the printed value and the GPU's memory in GB.
    """

    key: str
    statement: str
    result: str
    claim: str
    kind: str
    reverse_at: Callable[[float, Setting | None], float] | None = None
    bound_key: str | None = None
    reversal: str = ""
    short: str = ""


@cache
def _printed_values() -> dict[str, float]:
    return {c.id: c.paper for c in printed_claims()}


def _printed(claim: str) -> float:
    """The printed number a conclusion is judged against (``data/paper/claims.yaml``)."""
    return _printed_values()[claim]


CONCLUSIONS: tuple[Conclusion, ...] = (
    Conclusion("speedup", "The improved method is at least twice as fast as the baseline on X160",
               "speedup", "improved_speedup_over_baseline", "at least", lambda printed, _: 1.0,
               reversal="the baseline is as fast or faster", short="speed-up ≥ 2"),
    Conclusion("improved_week", "X160 trains in about a week with the improved method",
               "improved_time_days", "improved_min_time_1t", "at most", lambda printed, _: REVERSAL_FACTOR * printed,
               reversal="it takes more than two weeks", short="improved ≈ 1 week"),
    Conclusion("baseline_two_weeks", "X160 takes about two weeks with the baseline",
               "baseline_time_days", "baseline_min_time_1t", "about", lambda printed, _: printed / REVERSAL_FACTOR,
               reversal="the baseline trains it within a week", short="baseline ≈ 2 weeks"),
    Conclusion("memory", "Memory is not the limit: the improved method needs a small fraction of the GPU's memory",
               "min_memory_gib", "improved_min_memory", "at most", lambda printed, gpu_gib: gpu_gib,
               reversal="it no longer fits in the GPU", short="memory ≪ GPU"),
    Conclusion("one_month", "About 4.5 T parameters train within a month",
               "one_month_limit_p", "one_month_limit", "about", bound_key="one_month_bound",
               reversal="memory, not the training time, sets the limit", short="1 month ≈ 4.5 T"),
    Conclusion("one_year", "About 50 T parameters train within a year",
               "one_year_limit_p", "one_year_limit", "about", bound_key="one_year_bound",
               reversal="memory, not the training time, sets the limit", short="1 year ≈ 50 T"),
    # Ethernet is "enough" while its slowdown stays within the overhead the paper accepts anywhere else.
    Conclusion("ethernet", "Ethernet is enough: X160 slows down by only about 4 % over Ethernet",
               "ethernet_slowdown", "ethernet_x160_slowdown", "at most", lambda printed, _: DEFAULT_MAX_OVERHEAD,
               reversal="the slowdown exceeds the 25 % overhead cap", short="Ethernet ≈ 4 %"),
)


def classify(conclusion: Conclusion, row: Mapping[str, Any], gpu_memory_gib: float) -> str:
    """``holds``, ``weakens`` or ``reverses`` for one row's results."""
    value = row[conclusion.result]
    printed = _printed(conclusion.claim)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "reverses"
    if conclusion.kind == "at least":
        if value >= printed / ABOUT_FACTOR:
            return "holds"
        return "weakens" if value > conclusion.reverse_at(printed, gpu_memory_gib) else "reverses"
    if conclusion.kind == "at most":
        if value <= printed * ABOUT_FACTOR:
            return "holds"
        return "weakens" if value <= conclusion.reverse_at(printed, gpu_memory_gib) else "reverses"
    if conclusion.bound_key and row.get(conclusion.bound_key) == "memory":
        return "reverses"
    if conclusion.reverse_at is not None and value < conclusion.reverse_at(printed, gpu_memory_gib):
        return "reverses"
    return "holds" if max(value / printed, printed / value) <= ABOUT_FACTOR else "weakens"


def verdicts(rows: Sequence[SensitivityRow], hardware: Hardware | str = DEFAULT_HARDWARE) -> list[dict[str, Any]]:
    """Per conclusion and assumption: the verdict at each value, the worst one, and where it flips.

    ``flips`` lists, walking away from the paper's value in each direction (in the
    order of the values), every change of verdict: the value ``to`` where the new
    verdict starts and the value ``from`` just before it, so that the threshold lies
    between them.  For an unordered assumption (a choice), each value whose verdict
    differs from the paper's.
    """
    spec = load_hardware(hardware)
    by_dimension: dict[str, list[SensitivityRow]] = {}
    for row in rows:
        by_dimension.setdefault(row.assumption, []).append(row)
    titles = {d.name: d for d in dimensions(spec)}
    out = []
    for conclusion in CONCLUSIONS:
        for name, group in by_dimension.items():
            gpu_gib = {id(r): _gpu_memory_gib(spec, titles[name], r.value) for r in group}
            classes = [classify(conclusion, r.as_dict(), gpu_gib[id(r)]) for r in group]
            worst = max(classes, key=VERDICTS.index)
            default = next((i for i, r in enumerate(group) if r.is_paper_default), 0)
            flips = []
            if titles[name].ordered:
                for direction in (-1, 1):
                    i = default
                    while 0 <= i + direction < len(group):
                        j = i + direction
                        if classes[j] != classes[i]:
                            flips.append({"verdict": classes[j], "from": group[i].value, "to": group[j].value,
                                          "from_label": group[i].label, "to_label": group[j].label})
                        i = j
            else:
                for r, c in zip(group, classes):
                    if c != classes[default]:
                        flips.append({"verdict": c, "from": group[default].value, "to": r.value,
                                      "from_label": group[default].label, "to_label": r.label})
            out.append({
                "conclusion": conclusion.key, "statement": conclusion.statement, "assumption": name,
                "title": titles[name].title, "verdict": worst, "at_default": classes[default],
                "verdicts": dict(zip([r.label for r in group], classes)), "flips": flips,
            })
    return out


def _gpu_memory_gib(spec: Hardware, dimension: Dimension, value: Any) -> float:
    return dimension.setting(Setting(spec), value).gpu_memory_bytes() / GIB


# --- views for the book and the command ----------------------------------------------------------

#: Results drawn in the tornado chart, with their titles and whether a log scale suits them.
TORNADO_RESULTS: tuple[tuple[str, str, bool], ...] = (
    ("speedup", "Speed-up of the improved method over the baseline (X160)", False),
    ("improved_time_days", "X160 time, improved method (days)", True),
    ("baseline_time_days", "X160 time, baseline (days)", True),
    ("min_memory_gib", "Improved method's memory per GPU, X160 (GB)", True),
    ("one_month_limit_p", "Largest model trained in one month (parameters)", True),
    ("one_year_limit_p", "Largest model trained in one year (parameters)", True),
)


def rows_frame(rows: Sequence[SensitivityRow]):
    """The rows as a DataFrame (the command's JSON objects)."""
    import pandas as pd

    return pd.DataFrame([row.as_dict() for row in rows])


def swings(rows: Sequence[SensitivityRow], result: str) -> list[dict[str, Any]]:
    """Per assumption, the lowest and highest value of ``result`` over its range and where they occur.

    Sorted by the size of the swing (ratio of highest to lowest), largest first; a
    range with an infeasible value has an infinite swing.
    """
    groups: dict[str, list[SensitivityRow]] = {}
    for row in rows:
        groups.setdefault(row.assumption, []).append(row)
    out = []
    for name, group in groups.items():
        values = [getattr(r.headline, result) for r in group]
        finite = [(v, r) for v, r in zip(values, group) if v is not None and math.isfinite(v)]
        default = next(getattr(r.headline, result) for r in group if r.is_paper_default)
        if not finite:
            continue
        (low, low_row), (high, high_row) = min(finite, key=lambda t: t[0]), max(finite, key=lambda t: t[0])
        missing = len(finite) < len(group)
        swing = math.inf if missing else (high / low if low > 0 else (1.0 if high == low else math.inf))
        out.append({"assumption": name, "default": default, "low": low, "low_label": low_row.label,
                    "high": high, "high_label": high_row.label, "swing": swing, "infeasible": missing})
    return sorted(out, key=lambda s: -s["swing"] if math.isfinite(s["swing"]) else -math.inf)


def tornado_figure(rows: Sequence[SensitivityRow], results: Sequence[tuple[str, str, bool]] = TORNADO_RESULTS):
    """One tornado panel per result: each assumption's range of the result around the paper's value.

    Only the assumptions that move the result are drawn (:func:`unmoved` lists the others).
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    titles = {d.name: d.title for d in dimensions()}
    columns = 1  # one panel a line: the book's text column is narrow
    lines = math.ceil(len(results) / columns)
    figure, axes = plt.subplots(lines, columns, figsize=(8.5, 2.7 * lines), squeeze=False)
    for ax, (key, title, log) in zip(axes.flat, results):
        found = [s for s in swings(rows, key) if s["swing"] > 1 + _UNMOVED]
        found.reverse()
        default = next(getattr(r.headline, key) for r in rows if r.is_paper_default)
        default = math.nan if default is None else default
        if not found:
            ax.text(0.5, 0.5, "no assumption moves it" if math.isfinite(default) else "infeasible at the paper's values",
                    transform=ax.transAxes, ha="center", va="center", fontsize=9)
        for i, s in enumerate(found):
            low, high = s["low"], s["high"]
            ax.barh(i, high - low, left=low, color="#c44e52" if s["infeasible"] else "#4c72b0", height=0.6)
            ax.annotate(s["low_label"], (low, i), xytext=(-4, 0), textcoords="offset points", ha="right",
                        va="center", fontsize=8)
            ax.annotate(s["high_label"], (high, i), xytext=(4, 0), textcoords="offset points", ha="left",
                        va="center", fontsize=8)
        if math.isfinite(default):
            ax.axvline(default, color="black", linewidth=1)
        ax.set_yticks(range(len(found)))
        ax.set_yticklabels([titles.get(s["assumption"], s["assumption"]) for s in found], fontsize=8)
        ax.set_ylim(-0.6, max(len(found), 1) - 0.4)
        ends = [v for v in [default] + [s["low"] for s in found] + [s["high"] for s in found] if math.isfinite(v)]
        if not ends:
            ax.set_title(title, fontsize=10)
            continue
        lo, hi = min(ends), max(ends)
        if log and lo > 0:
            ax.set_xscale("log")
            span = max(hi / lo, 1.0001)
            ax.set_xlim(lo / span ** 0.5, hi * span ** 0.45)
            ax.xaxis.set_minor_formatter(NullFormatter())
        else:
            span = max(hi - lo, 1e-9)
            ax.set_xlim(lo - 0.5 * span, hi + 0.4 * span)
        ax.tick_params(axis="x", labelsize=8)
        ax.set_title(title, fontsize=10)
    for ax in axes.flat[len(results):]:
        ax.axis("off")
    figure.tight_layout()
    return figure


#: A relative change below this is no change (floating-point noise of identical searches).
_UNMOVED = 1e-9


def unmoved(rows: Sequence[SensitivityRow], result: str) -> list[str]:
    """The assumptions whose whole range leaves ``result`` unchanged."""
    return [s["assumption"] for s in swings(rows, result) if s["swing"] <= 1 + _UNMOVED]


def verdict_cell(record: Mapping[str, Any]) -> str:
    """The verdict at the paper's value and each change over the range (``weakens between 16 GPUs and 8 GPUs``)."""
    parts = [f"{f['verdict']} with {f['to_label']}" if not _ordered(record["assumption"])
             else f"{f['verdict']} between {f['from_label']} and {f['to_label']}" for f in record["flips"]]
    return "; ".join([f"{record['at_default']} at the paper's value"] + parts)


def _ordered(name: str) -> bool:
    return {d.name: d.ordered for d in dimensions()}.get(name, True)


def verdict_table(records: Sequence[Mapping[str, Any]]):
    """Assumptions down, conclusions across: the worst verdict over each range (cells of :func:`verdicts`)."""
    import pandas as pd

    titles = {d.name: d.title for d in dimensions()}
    shorts = {c.key: c.short or c.key for c in CONCLUSIONS}
    table: dict[str, dict[str, str]] = {}
    for r in records:
        table.setdefault(titles.get(r["assumption"], r["assumption"]), {})[shorts[r["conclusion"]]] = r["verdict"]
    return pd.DataFrame.from_dict(table, orient="index")


def conclusion_sentences(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """One sentence per conclusion, written from the verdicts: where it stands and which values change it."""
    titles = {d.name: d.title for d in dimensions()}
    out = []
    for conclusion in CONCLUSIONS:
        mine = [r for r in records if r["conclusion"] == conclusion.key]
        if not mine:
            continue
        at_default = mine[0]["at_default"]
        buckets: dict[str, list[str]] = {v: [] for v in VERDICTS}
        for r in mine:
            for verdict in VERDICTS:
                hits = [f for f in r["flips"] if f["verdict"] == verdict and verdict != at_default]
                if hits:
                    where = ", ".join(f"{f['to_label']}" if not _ordered(r["assumption"])
                                      else f"{f['to_label']} (flips between {f['from_label']} and {f['to_label']})"
                                      for f in hits)
                    buckets[verdict].append(f"{titles[r['assumption']]}: {where}")
        sentence = f"**{conclusion.statement}.** With every assumption at the paper's value it *{at_default}*."
        if buckets["reverses"]:
            sentence += f" It reverses ({conclusion.reversal}) with " + "; ".join(buckets["reverses"]) + "."
        if buckets["weakens"]:
            sentence += " It weakens with " + "; ".join(buckets["weakens"]) + "."
        if buckets["holds"]:
            sentence += " It holds with " + "; ".join(buckets["holds"]) + "."
        if not any(buckets.values()):
            sentence += " No assumption in the ranges here changes that."
        out.append(sentence)
    return out


def rank(rows: Sequence[SensitivityRow], result: str, assumption: str) -> int | None:
    """Where ``assumption`` ranks (1 = moves ``result`` most) among the assumptions, ``None`` if never feasible."""
    order = [s["assumption"] for s in swings(rows, result)]
    return order.index(assumption) + 1 if assumption in order else None


#: Columns of the compact view: result key -> (header, format).
COMPACT_COLUMNS: dict[str, tuple[str, str]] = {
    "baseline_time_days": ("baseline d", "{:.3g}"),
    "baseline_n_gpu": ("baseline GPUs", "{:.0f}"),
    "improved_time_days": ("improved d", "{:.3g}"),
    "improved_n_gpu": ("improved GPUs", "{:.0f}"),
    "speedup": ("speed-up", "{:.2f}"),
    "min_memory_gib": ("memory GB", "{:.3g}"),
    "one_month_limit_p": ("1-month T", "{:.3g}"),
    "one_year_limit_p": ("1-year T", "{:.3g}"),
    "ethernet_slowdown": ("Ethernet slowdown", "{:.0%}"),
}


def compact_frame(rows: Sequence[SensitivityRow]):
    """The rows as text for reading: one line per value, the paper's value starred, limits in T parameters."""
    import pandas as pd

    out = []
    for row in rows:
        line = {"assumption": row.assumption, "value": row.label + (" *" if row.is_paper_default else "")}
        for key, (header, fmt) in COMPACT_COLUMNS.items():
            value = getattr(row.headline, key)
            if key.endswith("_p") and value is not None:
                value = value / 1e12
            line[header] = "—" if value is None or value != value else fmt.format(value)
        out.append(line)
    return pd.DataFrame(out)
