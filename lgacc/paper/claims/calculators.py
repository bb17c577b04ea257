"""Calculators of the paper's prose claims (``data/paper/claims.yaml``), one per claim id.

Each calculator takes the hardware and returns an :class:`~lgacc.paper.claims.Outcome`
(value in the claim's unit, how, and optionally an :class:`~lgacc.paper.claims.Alternative`:
a named assumption under which the same computation is repeated).  The numbers
come from the derivations (:mod:`lgacc.model.formulas`), the search (:mod:`lgacc.search`)
and the scaling sweeps (:mod:`lgacc.scaling`); none is typed in from the paper.
A calculator that cannot compute on the given hardware (X160 infeasible on a
4 GiB GPU, say) returns ``None`` and a sentence saying why; it never raises.
"""

from __future__ import annotations

import math
from typing import Callable

from lgacc.model.evaluator import DEFAULT_STEPS, SECONDS_PER_DAY
from lgacc.model.formulas import derivation
from lgacc.model.formulas.memory import ADAM_BYTES_PER_PARAMETER, HALF
from lgacc.model.hardware import GB, GIB, Hardware
from lgacc.model.symbols import b, d_a, d_l, d_m, d_s, n_I
from lgacc.model.transformer import (  # TRILLION_X: the example of sec:trillion_parameter
    TRILLION_X,
    named_model,
    x_model,
)
from lgacc.scaling import (
    NOT_PARTITIONED,
    ONE_MONTH_DAYS,
    ONE_YEAR_DAYS,
    fastest_row,
    feasibility_limit,
    offload_limit,
    scenario_hardware,
    time_limit,
)
from lgacc.search import cheapest, fastest

from .grading import Alternative, Outcome

#: Tokens GPT-3 was trained on (Brown et al. 2020, an input of the introduction's numbers, not a result).
GPT3_TOKENS = 300e9
#: Flops per token and parameter of a forward pass (two per multiply-add).
FORWARD_FLOPS = 2
#: Fine-tuning steps of the discussion's example.
FINE_TUNING_STEPS = 1000
#: One month and six months as the calendar's twelfth and half of a year (table:smaller_cluster's targets).
SIX_MONTHS_DAYS = ONE_YEAR_DAYS / 2
#: "Smaller scales" of sec:slow_network: ten billion parameters, two decades below X160 on fig:scaling_Ethernet.
SMALL_SCALE_PARAMETERS = 1e10

__all__ = ["CALCULATORS", "TRILLION_X", "total_flops"]


def total_flops(x: int = TRILLION_X, steps: int = DEFAULT_STEPS) -> float:
    """Flops of ``steps`` batches at the critical batch: the derivation ``compute_per_batch`` (8 b d_s p)."""
    model = x_model(x)
    expr = derivation("compute_per_batch").paper
    values = {b: model.critical_batch, d_s: model.d_s, d_m: model.d_m, d_l: model.d_l, d_a: model.d_a, n_I: model.n_I}
    return float(expr.subs(values)) * steps


def _no_result(what: str, result) -> Outcome:
    binding = "; ".join(getattr(result, "binding", ()) or ())
    return Outcome(None, f"{what} has no feasible configuration on this hardware" + (f" ({binding[:200]})" if binding else ""))


# --- introduction ----------------------------------------------------------------------------------


def _gpt3_flops(passes_per_forward: float) -> float:
    """GPT-3's training flops: passes x 2 flops per token and parameter x parameters x tokens."""
    return passes_per_forward * FORWARD_FLOPS * named_model("GPT-3").p * GPT3_TOKENS


#: The paper's step counts 4 forward-pass equivalents (forward, backward = 2, recomputation).
_WITH_RECOMPUTATION = 4
_WITHOUT_RECOMPUTATION = 3
_NO_RECOMPUTE = "no activation recomputation (6 flops per token and parameter, as GPT-3 was counted)"


def _gpt3_state(hardware: Hardware) -> Outcome:
    state = ADAM_BYTES_PER_PARAMETER * named_model("GPT-3").p
    return Outcome(state / 1e12, f"{ADAM_BYTES_PER_PARAMETER} bytes per parameter (fp32 weights, Adam moments) x "
                   f"{named_model('GPT-3').p:.4g} parameters = {state / 1e12:.3g} TB ({state / 2**40:.3g} TiB)")


def _gpt3_petaflop_days(hardware: Hardware) -> Outcome:
    def pfd(passes):
        return _gpt3_flops(passes) / (1e15 * SECONDS_PER_DAY)
    return Outcome(pfd(_WITH_RECOMPUTATION),
                   f"8 flops per token and parameter (the paper's step with recomputation) x GPT-3's p x {GPT3_TOKENS:.3g} tokens",
                   Alternative(_NO_RECOMPUTE, pfd(_WITHOUT_RECOMPUTATION)))


def _gpt3_years(hardware: Hardware) -> Outcome:
    def years(passes):
        return _gpt3_flops(passes) / hardware.peak_flop_per_s / (SECONDS_PER_DAY * ONE_YEAR_DAYS)
    return Outcome(years(_WITH_RECOMPUTATION), f"GPT-3 training flops (with recomputation) / {hardware.peak_flop_per_s:.3g} flop/s",
                   Alternative(_NO_RECOMPUTE, years(_WITHOUT_RECOMPUTATION)))


def _fastest(hardware: Hardware, method: str, scenario: str = "limited", model=None, **kwargs):
    return fastest(model or x_model(TRILLION_X), scenario_hardware(hardware, scenario), method, "3d", explain=False, **kwargs)


def _describe(result) -> str:
    c, e = result.config, result.evaluation
    return (f"n_b={c.n_b}, n_l={c.n_l}, n_a={c.n_a}, n_mu={c.n_mu}, b_mu={c.b_mu}: {e.n_gpu} GPUs at "
            f"efficiency {e.efficiency:.2f}, {e.time_days:.3g} d, {e.memory.total / GIB:.3g} GB")


def _x160_time(method: str) -> Callable[[Hardware], Outcome]:
    def calculate(hardware: Hardware) -> Outcome:
        r = _fastest(hardware, method)
        if r.evaluation is None:
            return _no_result(f"X160 ({method})", r)
        return Outcome(r.evaluation.time_days, f"fastest {method} 3d configuration of X160 ({_describe(r)})")
    return calculate


def _speedup(hardware: Hardware) -> Outcome:
    base, impr = _fastest(hardware, "baseline"), _fastest(hardware, "improved")
    if base.evaluation is None or impr.evaluation is None:
        return _no_result("X160", base if base.evaluation is None else impr)
    return Outcome(base.evaluation.time_days / impr.evaluation.time_days,
                   f"X160 fastest baseline time {base.evaluation.time_days:.3g} d over fastest improved "
                   f"{impr.evaluation.time_days:.3g} d (the trillion-parameter scale)")


# --- overview ----------------------------------------------------------------------------------------


def _a100_threshold(hardware: Hardware) -> Outcome:
    bandwidth = hardware.gpu_memory_bandwidth_bytes_per_s
    value = hardware.peak_flop_per_s / bandwidth
    decimal = hardware.peak_flop_per_s / (bandwidth / GIB * GB)
    return Outcome(value, f"peak {hardware.peak_flop_per_s:.3g} flop/s over GPU memory bandwidth {bandwidth:.4g} B/s "
                   "(the spec's GB/s read as GiB/s)",
                   Alternative("gb='GB' (the spec's 2039 GB/s read as 10^9 B/s)", decimal))


def _binary_addition(hardware: Hardware) -> Outcome:
    flops, moved = 1, 3 * HALF  # one addition; two fp16 operands read, one written
    return Outcome(flops / moved, "one flop per element over three half-precision values moved (two read, one written)")


def _matmul_intensity(hardware: Hardware) -> Outcome:
    n = 1024
    flops, moved = 2 * n**3, 3 * n**2 * HALF
    return Outcome(flops / moved, f"2 n^3 flops over 3 n^2 half-precision values (two inputs, one output), n = {n}")


def _partition_traffic(hardware: Hardware) -> Outcome:
    # Ring collectives of the full gradient size S over n_b devices, counted in units of one all-gather:
    # without partition an all-reduce (reduce-scatter + all-gather); with it, an all-gather of the weights
    # in the forward pass, another in the backward pass (they were dropped) and a reduce-scatter.
    import sympy

    from lgacc.model.formulas.network import all_gather_bytes, all_reduce_bytes_per_direction, reduce_scatter_bytes
    S, n = sympy.symbols("S n", positive=True)
    plain = 2 * all_reduce_bytes_per_direction(S, n)
    partitioned = 2 * all_gather_bytes(S, n) + reduce_scatter_bytes(S, n)
    ratio = sympy.simplify(partitioned / plain)
    return Outcome(float(ratio) - 1, f"(2 all-gathers + 1 reduce-scatter) / all-reduce = {ratio} (formulas.network, ring collectives)")


def _params_per_gpu(bytes_per_parameter: int, what: str) -> Callable[[Hardware], Outcome]:
    def calculate(hardware: Hardware) -> Outcome:
        memory = hardware.memory_bytes
        return Outcome(memory / bytes_per_parameter,
                       f"{memory / GIB:g} GiB of GPU memory over {bytes_per_parameter} bytes per parameter ({what})",
                       Alternative("gb='GB' (the paper's 80 GB read as 80 x 10^9 bytes)", memory / GIB * GB / bytes_per_parameter))
    return calculate


def _smallest_with_16_heads(hardware: Hardware) -> Outcome:
    rows = [fastest_row(x, scenario_hardware(hardware, "limited"), "improved", "limited") for x in range(16, 161, 8)]
    for previous, row in zip(rows, rows[1:]):
        if row["feasible"] and row["n_a"] >= 16 and not (previous["feasible"] and previous["n_a"] >= 16):
            p = math.sqrt(previous["p"] * row["p"])
            return Outcome(p, f"the fastest improved 3d configuration uses n_a = {int(previous['n_a'])} at "
                           f"{previous['model']} ({previous['p']:.3g}) and 16 from {row['model']} ({row['p']:.3g}); geometric mean")
    return Outcome(None, "no model between X16 and X160 switches to n_a = 16 on this hardware")


# --- trillion parameter example ----------------------------------------------------------------------


def _x160_parameters(hardware: Hardware) -> Outcome:
    m = x_model(TRILLION_X)
    return Outcome(float(m.p), f"p of X160 from its dimensions (d_l = {m.d_l}, d_m = {m.d_m}, n_I = {m.n_I})")


def _x160_critical_batch(hardware: Hardware) -> Outcome:
    m = x_model(TRILLION_X)
    return Outcome(m.critical_batch, "b_c = K_c p^(1/3) / d_s, calibrated on GPT-3 at 3.2 M tokens (appendix)")


def _x160_flops(hardware: Hardware) -> Outcome:
    m = x_model(TRILLION_X)
    value = total_flops()
    printed_b_c = float(f"{m.critical_batch:.3g}")
    return Outcome(value, f"8 b_c d_s p (derivation compute_per_batch) for X160 at b_c = {m.critical_batch:.1f}, "
                   f"d_s = {m.d_s}, times {DEFAULT_STEPS:,} steps",
                   Alternative(f"b_c rounded to {printed_b_c:g} as the paper prints it", value * printed_b_c / m.critical_batch))


def _x160_exaflop_days(hardware: Hardware) -> Outcome:
    return Outcome(total_flops() / (1e18 * SECONDS_PER_DAY), "X160 total flops / (1e18 flop/s x 86400 s)")


def _x160_gpu_days(hardware: Hardware) -> Outcome:
    return Outcome(total_flops() / (hardware.peak_flop_per_s * SECONDS_PER_DAY),
                   f"X160 total flops / ({hardware.peak_flop_per_s:.3g} flop/s peak x 86400 s), at perfect efficiency")


def _improved_min_memory(hardware: Hardware) -> Outcome:
    r = _fastest(hardware, "improved")
    if r.evaluation is None:
        return _no_result("X160 (improved)", r)
    return Outcome(r.evaluation.memory.total / GIB, f"total memory per GPU of the fastest improved 3d configuration of X160 ({_describe(r)})")


def _memory_ratio(hardware: Hardware) -> Outcome:
    r = _fastest(hardware, "improved")
    if r.evaluation is None:
        return _no_result("X160 (improved)", r)
    return Outcome(hardware.memory_bytes / r.evaluation.memory.total,
                   f"GPU memory over the fastest improved configuration's {r.evaluation.memory.total / GIB:.3g} GB")


def _largest_cluster(hardware: Hardware) -> Outcome:
    r = _fastest(hardware, "improved")
    if r.evaluation is None:
        return _no_result("X160 (improved)", r)
    return Outcome(float(r.evaluation.n_gpu), f"GPUs of the fastest improved 3d configuration of X160 ({_describe(r)})")


def _cluster_for(days: float, options: tuple[tuple[str, str], ...], label: str) -> Callable[[Hardware], Outcome]:
    def calculate(hardware: Hardware) -> Outcome:
        found = []
        for method, parallelism in options:
            r = cheapest(x_model(TRILLION_X), hardware, method, parallelism, days, explain=False)
            if r.evaluation is not None:
                found.append((r.evaluation.n_gpu, method, parallelism, r))
        if not found:
            return Outcome(None, f"no configuration of X160 trains in {days:.4g} d on this hardware")
        n, method, parallelism, r = min(found, key=lambda item: item[0])
        return Outcome(float(n), f"fewest GPUs training X160 in {label} ({days:.4g} d) among "
                       f"{', '.join(f'{m} {p}' for m, p in options)}: {method} {parallelism} ({_describe(r)})")
    return calculate


def _finetune(hardware: Hardware) -> Outcome:
    flops = total_flops(steps=FINE_TUNING_STEPS)
    return Outcome(flops / hardware.peak_flop_per_s / SECONDS_PER_DAY,
                   f"8 b_c d_s p x {FINE_TUNING_STEPS} steps for X160 at peak {hardware.peak_flop_per_s:.3g} flop/s (perfect efficiency)")


# --- scaling analysis ----------------------------------------------------------------------------------


#: Switches tried on a differing scaling limit, each a named reading where the paper is silent
#: (lgacc.model.assumptions); only those that run in seconds, so the book stays fast.  The slower
#: divisibility switches are studied on the assumptions page.
LIMIT_SWITCHES: tuple[dict, ...] = (
    {"heads_cap": False},
    {"gb": "GB"},
    {"pipeline_overlap": "always"},
)
#: A feasibility limit also tries any n_a <= d_a (not only divisors of d_a); galloping from the default
#: limit keeps it to a few searches.
FEASIBILITY_SWITCHES: tuple[dict, ...] = LIMIT_SWITCHES + ({"divisible_heads": False},)
#: The time limits search few, mid-sized models, so they also try the divisibility rules: any n_a <= d_a
#: (not only divisors of d_a), and any n_a up to 2 d_a.  (The unlimited feasibility limit under the
#: last one searches every n_a up to 2000 of models near X1000, minutes, too slow for the book.)
TIME_LIMIT_SWITCHES: tuple[dict, ...] = LIMIT_SWITCHES + (
    {"divisible_heads": False},
    {"divisible_heads": False, "heads_cap": False},
)


def _switch_name(switches: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in switches.items())


def _limit(kind: str, hardware: Hardware, scenario: str, days: float | None, assumptions=None, hint=None):
    from lgacc.model.assumptions import DEFAULT_ASSUMPTIONS

    a = assumptions or DEFAULT_ASSUMPTIONS
    # a switched reading finds its grid pair by bisection (feasibility and time grow with the model)
    monotone = assumptions is not None
    if kind == "feasible":
        return feasibility_limit(hardware, scenario, assumptions=a, monotone=monotone, hint=hint)
    if kind == "offload":
        return offload_limit(hardware, scenario, assumptions=a, monotone=monotone, hint=hint)
    return time_limit(days, hardware, scenario, assumptions=a, monotone=monotone, hint=hint)


def _limit_calculator(kind: str, scenario: str, quantity: str, days: float | None = None,
                      switches: tuple[dict, ...] = ()):
    def read(limit):
        if limit is None:
            raise ValueError("no limit on the sweep grid")
        return limit.p if quantity == "p" else limit.memory_gib

    def calculate(hardware: Hardware) -> Outcome:
        limit = _limit(kind, hardware, scenario, days)
        if limit is None:
            return Outcome(None, f"no limit found on the sweep grid of the {scenario} scenario")
        alternatives = tuple(
            _with_assumptions(_switch_name(sw), lambda a: read(_limit(kind, hardware, scenario, days, a, limit.x_low)), **sw)
            for sw in switches
        )
        return Outcome(read(limit), f"improved method, {scenario} scenario: {limit.how}", alternatives or None)

    return calculate


def _memory_limit_years(hardware: Hardware) -> Outcome:
    limit = feasibility_limit(hardware, "limited")
    if limit is None:
        return Outcome(None, "no memory limit found on the sweep grid")
    row = fastest_row(limit.x_low, scenario_hardware(hardware, "limited"), "improved", "limited")
    return Outcome(row["time_days"] / ONE_YEAR_DAYS, f"{row['model']}, the largest model that fits, trains in "
                   f"{row['time_days']:.4g} d with the fastest improved configuration")


def _x_for_parameters(p: float) -> int:
    """The first X model (x even, so that d_a = x/2 heads) with at least ``p`` parameters (bisection)."""
    low, high = 1, 2  # in halves of x
    while float(x_model(2 * high).p) < p:
        low, high = high, 2 * high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if float(x_model(2 * middle).p) < p else (low, middle)
    return 2 * high


def _years_at(p: float) -> Callable[[Hardware], Outcome]:
    def calculate(hardware: Hardware) -> Outcome:
        x = _x_for_parameters(p)
        row = fastest_row(x, scenario_hardware(hardware, "limited"), "improved", "limited")
        if not row["feasible"]:
            return Outcome(None, f"X{x} ({row['p']:.3g} parameters) has no feasible configuration: {row['reason'][:200]}")
        return Outcome(row["time_days"] / ONE_YEAR_DAYS, f"X{x} ({row['p']:.3g} parameters, the first X model at or above "
                       f"{p:.3g}): fastest improved 3d configuration trains in {row['time_days']:.4g} d")
    return calculate


# --- Ethernet ----------------------------------------------------------------------------------------------


def _ethernet_slowdown(hardware: Hardware) -> Outcome:
    ib, eth = _fastest(hardware, "improved"), _fastest(hardware, "improved", "ethernet")
    if ib.evaluation is None or eth.evaluation is None:
        return _no_result("X160 (improved)", ib if ib.evaluation is None else eth)
    slowdown = eth.evaluation.time_days / ib.evaluation.time_days - 1
    how = (f"X160 improved: {eth.evaluation.time_days:.3g} d over Ethernet ({_describe(eth)}) against "
           f"{ib.evaluation.time_days:.3g} d over InfiniBand ({_describe(ib)})")
    def slowdown_under(a):
        return (_fastest(hardware, "improved", "ethernet", assumptions=a).evaluation.time_days
                / _fastest(hardware, "improved", assumptions=a).evaluation.time_days - 1)
    return Outcome(slowdown, how, tuple(_with_assumptions(_switch_name(sw), slowdown_under, **sw) for sw in ETHERNET_SWITCHES))


#: Readings tried on the Ethernet claims: pipeline stages sharing a node over NVLink, with and without
#: whole layers per stage, and the pipeline overlapped without extra micro-batches.
ETHERNET_SWITCHES: tuple[dict, ...] = (
    {"pipeline_placement": "intra-node", "divisible_layers": False},
    {"pipeline_placement": "intra-node"},
    {"pipeline_overlap": "always"},
)


def _with_assumptions(name: str, compute: Callable, **switches) -> Alternative:
    """The alternative under the named switches, or a note that the evaluator does not offer them yet."""
    try:
        from lgacc.model.assumptions import Assumptions  # published by the evaluator's owner
    except ImportError:
        return Alternative(name, None, "the evaluator does not offer this switch yet")
    try:
        return Alternative(name, float(compute(Assumptions(**switches))))
    except Exception as error:  # an alternative that cannot run is reported, not raised
        return Alternative(name, None, f"{type(error).__name__}: {error}")


def _ethernet_small_scale(hardware: Hardware) -> Outcome:
    spec = scenario_hardware(hardware, "ethernet")
    x = _x_for_parameters(SMALL_SCALE_PARAMETERS)
    base, impr = (fastest_row(x, spec, method, "ethernet") for method in ("baseline", "improved"))
    if not (base["feasible"] and impr["feasible"]):
        return Outcome(None, f"X{x} is not feasible over Ethernet for both methods")
    model = x_model(x)
    return Outcome(base["time_days"] / impr["time_days"],
                   f"X{x}, the first X model of {SMALL_SCALE_PARAMETERS:.0e} parameters (a small scale of fig:scaling_Ethernet), over Ethernet: baseline {base['time_days']:.3g} d, improved "
                   f"{impr['time_days']:.3g} d (n_b={impr['n_b']:g}, n_l={impr['n_l']:g}, n_a={impr['n_a']:g}, n_mu={impr['n_mu']:g})",
                   tuple(_with_assumptions(
                       _switch_name(sw),
                       lambda a: _fastest(hardware, "baseline", "ethernet", model, assumptions=a).evaluation.time_days
                       / _fastest(hardware, "improved", "ethernet", model, assumptions=a).evaluation.time_days, **sw)
                       for sw in ETHERNET_SWITCHES))


def _ethernet_unpartitioned(hardware: Hardware) -> Outcome:
    spec = scenario_hardware(hardware, "ethernet")
    part, plain = (fastest_row(TRILLION_X, spec, method, "ethernet") for method in ("improved", NOT_PARTITIONED))
    if not (part["feasible"] and plain["feasible"]):
        return Outcome(None, "X160 is not feasible over Ethernet with and without partition")
    return Outcome(plain["time_days"] / part["time_days"],
                   f"X160 over Ethernet: improved without partition {plain['time_days']:.4g} d, with partition {part['time_days']:.4g} d")


def _ethernet_unpartitioned_small(hardware: Hardware) -> Outcome:
    spec = scenario_hardware(hardware, "ethernet")
    x = _x_for_parameters(SMALL_SCALE_PARAMETERS)
    part, plain = (fastest_row(x, spec, method, "ethernet") for method in ("improved", NOT_PARTITIONED))
    if not (part["feasible"] and plain["feasible"]):
        return Outcome(None, f"X{x} is not feasible over Ethernet with and without partition")
    return Outcome(plain["time_days"] / part["time_days"],
                   f"X{x}, the first X model of {SMALL_SCALE_PARAMETERS:.0e} parameters, over Ethernet: improved without "
                   f"partition {plain['time_days']:.4g} d (n_l={plain['n_l']:g}, n_a={plain['n_a']:g}), with partition "
                   f"{part['time_days']:.4g} d (n_l={part['n_l']:g}, n_a={part['n_a']:g})")


def _bert_minutes(hardware: Hardware) -> Outcome:
    r = _fastest(hardware, "improved", model=named_model("BERT"))
    if r.evaluation is None:
        return _no_result("BERT (improved)", r)
    return Outcome(r.evaluation.time_days * 24 * 60,
                   f"fastest improved 3d configuration of BERT-large at its critical batch, {DEFAULT_STEPS:,} steps ({_describe(r)})")


CALCULATORS: dict[str, Callable[[Hardware], Outcome]] = {
    "gpt3_state_tb": _gpt3_state,
    "gpt3_petaflop_days": _gpt3_petaflop_days,
    "gpt3_years_one_gpu": _gpt3_years,
    "baseline_min_time_1t": _x160_time("baseline"),
    "improved_min_time_1t": _x160_time("improved"),
    "improved_speedup_over_baseline": _speedup,
    "a100_intensity_threshold": _a100_threshold,
    "binary_addition_intensity": _binary_addition,
    "matmul_1024_intensity": _matmul_intensity,
    "partition_network_increase": _partition_traffic,
    "params_fp32_80gb": _params_per_gpu(4, "fp32 weights only"),
    "params_adam_80gb": _params_per_gpu(ADAM_BYTES_PER_PARAMETER, "fp32 weights and two Adam moments"),
    "tensor_16_above": _smallest_with_16_heads,
    "x160_parameters": _x160_parameters,
    "x160_critical_batch": _x160_critical_batch,
    "x160_total_flops": _x160_flops,
    "x160_exaflop_days": _x160_exaflop_days,
    "x160_gpu_days": _x160_gpu_days,
    "improved_min_memory": _improved_min_memory,
    "memory_17_times_less": _memory_ratio,
    "nearly_40000_gpus": _largest_cluster,
    "one_month_cluster": _cluster_for(ONE_MONTH_DAYS, (("improved", "3d"), ("baseline", "3d"), ("partitioned", "data + tensor")), "one month"),
    "six_month_cluster": _cluster_for(SIX_MONTHS_DAYS, (("improved", "3d"), ("improved", "data + pipe"), ("baseline", "pipe + tensor"),
                                                        ("partitioned", "data + tensor")), "six months"),
    "memory_limit_80gb": _limit_calculator("feasible", "limited", "p", switches=FEASIBILITY_SWITCHES),
    "offload_needed_above": _limit_calculator("offload", "limited", "p", switches=FEASIBILITY_SWITCHES),
    "memory_limit_train_years": _memory_limit_years,
    "one_month_limit": _limit_calculator("time", "limited", "p", ONE_MONTH_DAYS),
    "one_month_memory": _limit_calculator("time", "limited", "memory", ONE_MONTH_DAYS),
    "one_year_limit": _limit_calculator("time", "limited", "p", ONE_YEAR_DAYS, switches=TIME_LIMIT_SWITCHES),
    "one_year_memory": _limit_calculator("time", "limited", "memory", ONE_YEAR_DAYS, switches=TIME_LIMIT_SWITCHES),
    "unlimited_node_memory_limit": _limit_calculator("feasible", "unlimited", "p", switches=FEASIBILITY_SWITCHES),
    "unlimited_node_one_month": _limit_calculator("time", "unlimited", "p", ONE_MONTH_DAYS, switches=TIME_LIMIT_SWITCHES),
    "unlimited_node_one_year": _limit_calculator("time", "unlimited", "p", ONE_YEAR_DAYS, switches=TIME_LIMIT_SWITCHES),
    "ethernet_x160_slowdown": _ethernet_slowdown,
    "ethernet_improved_beats_baseline_small": _ethernet_small_scale,
    "ethernet_unpartitioned_only_smallest": _ethernet_unpartitioned,
    "ethernet_unpartitioned_faster_small": _ethernet_unpartitioned_small,
    "bert_minutes": _bert_minutes,
    "finetune_gpu_days": _finetune,
    "fifty_trillion_at_least_a_year": _years_at(5e13),
    "quadrillion_decades": _years_at(1e15),
}
