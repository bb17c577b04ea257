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
    SCALING_ASSUMPTIONS,
    fastest_row,
    scenario_hardware,
)
from lgacc.search import cheapest, fastest

from .grading import Alternative, Demonstration, Outcome
from .limits import limit_calculator, memory_limit_years, tensor_16_from_cap, years_at

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
#: "Smaller scales" read nearer the trillion-parameter example: one decade below X160.
NEAR_SCALE_PARAMETERS = 1e11

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


def _printed_time_of(row: tuple[str, str, int]) -> float:
    """The printed time (days) of one row of table:smaller_cluster, ``(parallelism, method, target months)``: an input
    of the alternative reading "the target is what the paper's rows of that group take"."""
    from ..printed import paper_table, parse_printed

    table = paper_table("table:smaller_cluster")
    match = table[(table.parallelism == row[0]) & (table.method == row[1]) & (table.target_months.astype(int) == row[2])]
    return float(parse_printed(str(match.time.iloc[0])).value)


def _cluster_for(days: float, options: tuple[tuple[str, str], ...], label: str,
                 printed_row: tuple[str, str, int]) -> Callable[[Hardware], Outcome]:
    def fewest(hardware: Hardware, target: float):
        found = []
        for method, parallelism in options:
            r = cheapest(x_model(TRILLION_X), hardware, method, parallelism, target, explain=False)
            if r.evaluation is not None:
                found.append((r.evaluation.n_gpu, method, parallelism, r))
        return min(found, key=lambda item: item[0]) if found else None

    def calculate(hardware: Hardware) -> Outcome:
        best = fewest(hardware, days)
        if best is None:
            return Outcome(None, f"no configuration of X160 trains in {days:.4g} d on this hardware")
        n, method, parallelism, r = best
        printed_days = _printed_time_of(printed_row)
        alt = fewest(hardware, printed_days)
        alternative = Alternative(
            f"target = {printed_days:g} d, the printed time of the paper's {printed_row[0]} / {printed_row[1]} row "
            f"for {label}", None if alt is None else float(alt[0]),
            "" if alt is None else f"{alt[1]} {alt[2]} ({_describe(alt[3])})")
        return Outcome(float(n), f"fewest GPUs training X160 in {label} ({days:.4g} d) among "
                       f"{', '.join(f'{m} {p}' for m, p in options)}: {method} {parallelism} ({_describe(r)})",
                       alternative)
    return calculate


def _halving(hardware: Hardware) -> Outcome:
    outcome = _speedup(hardware)
    return Outcome(outcome.value, outcome.how)


def _memory_fraction(hardware: Hardware) -> Outcome:
    r = _fastest(hardware, "improved")
    if r.evaluation is None:
        return _no_result("X160 (improved)", r)
    return Outcome(r.evaluation.memory.total / hardware.memory_bytes,
                   f"the fastest improved configuration's {r.evaluation.memory.total / GIB:.3g} GB over the GPU's "
                   f"{hardware.memory_bytes / GIB:g} GB")


def _finetune(hardware: Hardware) -> Outcome:
    flops = total_flops(steps=FINE_TUNING_STEPS)
    return Outcome(flops / hardware.peak_flop_per_s / SECONDS_PER_DAY,
                   f"8 b_c d_s p x {FINE_TUNING_STEPS} steps for X160 at peak {hardware.peak_flop_per_s:.3g} flop/s (perfect efficiency)")


# --- scaling analysis: lgacc.paper.claims.limits ----------------------------------------------------------


def _x_for_parameters(p: float) -> int:
    """The first X model (x even, so that d_a = x/2 heads) with at least ``p`` parameters (bisection)."""
    low, high = 1, 2  # in halves of x
    while float(x_model(2 * high).p) < p:
        low, high = high, 2 * high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if float(x_model(2 * middle).p) < p else (low, middle)
    return 2 * high


# --- Ethernet ----------------------------------------------------------------------------------------------


#: Readings of the Ethernet claims, each a switch of the scaling reading (fig:scaling_Ethernet is a scaling
#: figure): any number of layers per stage, pipeline transfers overlapped without extra micro-batches, pipeline
#: stages sharing a node over NVLink, and all of them at once (the most favourable).
ETHERNET_SWITCHES: tuple[dict, ...] = (
    {"divisible_layers": False},
    {"pipeline_overlap": "always"},
    {"pipeline_placement": "intra-node"},
    {"pipeline_placement": "intra-node", "divisible_layers": False},
    {"pipeline_overlap": "always", "divisible_layers": False},
)
#: The Ethernet share the most favourable reading needs for the paper's slowdown is looked for up to this factor.
ETHERNET_FACTOR_LIMIT = 64.0


def _switch_name(switches: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in switches.items())


def _with_assumptions(name: str, compute: Callable, **switches) -> Alternative:
    """The alternative under the named switches of the scaling reading, or a note why it gave nothing."""
    try:
        return Alternative(name, float(compute(SCALING_ASSUMPTIONS.replace(**switches))))
    except Exception as error:  # an alternative that cannot run is reported, not raised
        return Alternative(name, None, f"{type(error).__name__}: {error}")


def _slowdown(hardware: Hardware, assumptions, partitioned: bool | None = None, ethernet: Hardware | None = None) -> float:
    """X160's improved time over Ethernet (``ethernet``: the scenario's spec) over its time over InfiniBand, minus one."""
    eth = ethernet or scenario_hardware(hardware, "ethernet")
    over = fastest(x_model(TRILLION_X), eth, "improved", "3d", explain=False, assumptions=assumptions, partitioned=partitioned)
    ib = _fastest(hardware, "improved", assumptions=assumptions)
    return over.evaluation.time_days / ib.evaluation.time_days - 1


def _ethernet_needed(hardware: Hardware, assumptions, partitioned: bool, target: float) -> str:
    """The Ethernet share at which the most favourable reading slows X160 by ``target`` (bisection on the factor)."""
    spec = scenario_hardware(hardware, "ethernet")
    base = hardware.ethernet_bandwidth_bytes_per_s

    def slowdown(factor: float) -> float:
        faster = hardware.replace(ethernet_bandwidth_bytes_per_s=base * factor)
        return _slowdown(hardware, assumptions, partitioned, scenario_hardware(faster, "ethernet"))
    low, high = 1.0, 2.0
    while slowdown(high) > target:
        low, high = high, high * 2
        if high > ETHERNET_FACTOR_LIMIT:
            return ""
    for _ in range(8):
        middle = math.sqrt(low * high)
        low, high = (middle, high) if slowdown(middle) > target else (low, middle)
    return (f"the paper's {100 * target:.0f} % needs about {high:.2g} times the spec's Ethernet share per GPU even then "
            f"(an intensity threshold of {spec.threshold('infiniband') / high:.3g} flop/B instead of "
            f"{spec.threshold('infiniband'):.3g})")


def _ethernet_slowdown(hardware: Hardware) -> Outcome:
    ib, eth = _fastest(hardware, "improved", assumptions=SCALING_ASSUMPTIONS), \
        _fastest(hardware, "improved", "ethernet", assumptions=SCALING_ASSUMPTIONS)
    if ib.evaluation is None or eth.evaluation is None:
        return _no_result("X160 (improved)", ib if ib.evaluation is None else eth)
    slowdown = eth.evaluation.time_days / ib.evaluation.time_days - 1
    how = (f"X160 improved: {eth.evaluation.time_days:.3g} d over Ethernet ({_describe(eth)}) against "
           f"{ib.evaluation.time_days:.3g} d over InfiniBand ({_describe(ib)})")
    tried = tuple(_with_assumptions(_switch_name(sw), lambda a: _slowdown(hardware, a), **sw) for sw in ETHERNET_SWITCHES)
    favourable = SCALING_ASSUMPTIONS.replace(**ETHERNET_SWITCHES[-1])
    without = Alternative("no state partition (the dotted line), " + _switch_name(ETHERNET_SWITCHES[-1]),
                          _slowdown(hardware, favourable, partitioned=False))
    demonstration = Demonstration(
        "Over Ethernet the gradient reduction of X160 needs a longer pipeline (or a larger micro-batch) to hide it, and "
        "the longer pipeline's bubble slows training beyond the paper's figure under every reading of its rules",
        tried + (without,), _ethernet_needed(hardware, favourable, False, 0.04))
    return Outcome(slowdown, how, tried, demonstration)


def _baseline_over_improved(hardware: Hardware, p: float) -> tuple[float, int, dict, dict] | None:
    """Baseline time over improved time over Ethernet for the first X model of ``p`` parameters (scaling reading)."""
    spec = scenario_hardware(hardware, "ethernet")
    x = _x_for_parameters(p)
    base, impr = (fastest_row(x, spec, method, "ethernet") for method in ("baseline", "improved"))
    if not (base["feasible"] and impr["feasible"]):
        return None
    return base["time_days"] / impr["time_days"], x, base, impr


def _ethernet_small_scale(hardware: Hardware) -> Outcome:
    found = _baseline_over_improved(hardware, SMALL_SCALE_PARAMETERS)
    if found is None:
        return Outcome(None, f"the {SMALL_SCALE_PARAMETERS:.0e}-parameter model is not feasible over Ethernet for both methods")
    ratio, x, base, impr = found
    model = x_model(x)
    switched = tuple(_with_assumptions(
        _switch_name(sw),
        lambda a: _fastest(hardware, "baseline", "ethernet", model, assumptions=a).evaluation.time_days
        / _fastest(hardware, "improved", "ethernet", model, assumptions=a).evaluation.time_days, **sw)
        for sw in ETHERNET_SWITCHES)
    decade = _baseline_over_improved(hardware, NEAR_SCALE_PARAMETERS)
    near = Alternative(f"'smaller scales' read as one decade below X{TRILLION_X} ({NEAR_SCALE_PARAMETERS:.0e} parameters)",
                       None if decade is None else decade[0],
                       "" if decade is None else f"X{decade[1]}: baseline {decade[2]['time_days']:.3g} d, improved "
                                                 f"{decade[3]['time_days']:.3g} d")
    return Outcome(ratio,
                   f"X{x}, the first X model of {SMALL_SCALE_PARAMETERS:.0e} parameters (a small scale of fig:scaling_Ethernet), "
                   f"over Ethernet: baseline {base['time_days']:.3g} d (n_b={base['n_b']:g}, n_l={base['n_l']:g}, "
                   f"n_a={base['n_a']:g}: its gradient reduction is only capped), improved {impr['time_days']:.3g} d "
                   f"(n_b={impr['n_b']:g}, n_l={impr['n_l']:g}, n_a={impr['n_a']:g}, n_mu={impr['n_mu']:g}: its reduction "
                   "must be hidden)", switched + (near,))


def _ethernet_unpartitioned_small(hardware: Hardware) -> Outcome:
    """One claim for the sentence "For the smallest models, the partition can be avoided to further reduce the training
    time (dotted line)": avoiding it is faster at a small scale; where else it is, the ``how`` says."""
    spec = scenario_hardware(hardware, "ethernet")
    x = _x_for_parameters(SMALL_SCALE_PARAMETERS)
    part, plain = (fastest_row(x, spec, method, "ethernet") for method in ("improved", NOT_PARTITIONED))
    if not (part["feasible"] and plain["feasible"]):
        return Outcome(None, f"X{x} is not feasible over Ethernet with and without partition")
    big = {m: fastest_row(TRILLION_X, spec, m, "ethernet") for m in ("improved", NOT_PARTITIONED)}
    also = ""
    if big["improved"]["feasible"] and big[NOT_PARTITIONED]["feasible"]:
        ratio = big[NOT_PARTITIONED]["time_days"] / big["improved"]["time_days"]
        also = (f"; at X{TRILLION_X}, not among the smallest models, the ratio is {ratio:.3g}"
                + (" (avoiding the partition helps there too, by a smaller margin)" if ratio < 1 else ""))
    return Outcome(plain["time_days"] / part["time_days"],
                   f"X{x}, the first X model of {SMALL_SCALE_PARAMETERS:.0e} parameters, over Ethernet: improved without "
                   f"partition {plain['time_days']:.4g} d (n_l={plain['n_l']:g}, n_a={plain['n_a']:g}), with partition "
                   f"{part['time_days']:.4g} d (n_l={part['n_l']:g}, n_a={part['n_a']:g})" + also)


def _bert_minutes(hardware: Hardware) -> Outcome:
    r = _fastest(hardware, "improved", model=named_model("BERT"))
    if r.evaluation is None:
        return _no_result("BERT (improved)", r)
    return Outcome(r.evaluation.time_days * 24 * 60,
                   f"fastest improved 3d configuration of BERT-large at its critical batch, {DEFAULT_STEPS:,} steps ({_describe(r)})")


CALCULATORS: dict[str, Callable[[Hardware], Outcome]] = {
    "improved_halves_min_time": _halving,
    "improved_memory_tiny_fraction": _memory_fraction,
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
    "tensor_16_above": tensor_16_from_cap,
    "x160_parameters": _x160_parameters,
    "x160_critical_batch": _x160_critical_batch,
    "x160_total_flops": _x160_flops,
    "x160_exaflop_days": _x160_exaflop_days,
    "x160_gpu_days": _x160_gpu_days,
    "improved_min_memory": _improved_min_memory,
    "memory_17_times_less": _memory_ratio,
    "nearly_40000_gpus": _largest_cluster,
    "one_month_cluster": _cluster_for(ONE_MONTH_DAYS, (("improved", "3d"), ("baseline", "3d"), ("partitioned", "data + tensor")),
                                      "one month", ("3d", "Improved", 1)),
    "six_month_cluster": _cluster_for(SIX_MONTHS_DAYS, (("improved", "3d"), ("improved", "data + pipe"), ("baseline", "pipe + tensor"),
                                                        ("partitioned", "data + tensor")), "six months", ("3d", "Improved", 6)),
    "memory_limit_80gb": limit_calculator("feasible", "limited", "p", demonstrate=True),
    "offload_needed_above": limit_calculator("offload", "limited", "p"),
    "memory_limit_train_years": memory_limit_years,
    "one_month_limit": limit_calculator("time", "limited", "p", ONE_MONTH_DAYS),
    "one_month_memory": limit_calculator("time", "limited", "memory", ONE_MONTH_DAYS),
    "one_year_limit": limit_calculator("time", "limited", "p", ONE_YEAR_DAYS),
    "one_year_memory": limit_calculator("time", "limited", "memory", ONE_YEAR_DAYS),
    "unlimited_node_memory_limit": limit_calculator("feasible", "unlimited", "p"),
    "unlimited_node_one_month": limit_calculator("time", "unlimited", "p", ONE_MONTH_DAYS, demonstrate=True),
    "unlimited_node_one_year": limit_calculator("time", "unlimited", "p", ONE_YEAR_DAYS, demonstrate=True),
    "ethernet_x160_slowdown": _ethernet_slowdown,
    "ethernet_improved_beats_baseline_small": _ethernet_small_scale,
    "ethernet_unpartitioned_faster_small": _ethernet_unpartitioned_small,
    "bert_minutes": _bert_minutes,
    "finetune_gpu_days": _finetune,
    "fifty_trillion_at_least_a_year": years_at(5e13),
    "quadrillion_decades": years_at(1e15, demonstrate=True),
}
