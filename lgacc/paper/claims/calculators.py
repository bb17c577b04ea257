"""Calculators of the paper's prose claims (``data/paper/claims.yaml``), one per claim id.

Each calculator takes the hardware and a :class:`~lgacc.paper.claims.reading.PaperReading` (one value of
every switch) and returns an :class:`~lgacc.paper.claims.Outcome` (value in the claim's unit and how,
and for the claims no reading reaches a :class:`~lgacc.paper.claims.Demonstration`).  A calculator
computes under the reading it is given and no other: the readings are the matrix's columns
(:mod:`lgacc.paper.claims.registry`), never the calculator's choice.  :data:`READS` names the
switches each calculator reads (a column that moves none of them repeats the paper reading's cell).  The numbers
come from the derivations (:mod:`lgacc.model.formulas`), the search (:mod:`lgacc.search`)
and the scaling sweeps (:mod:`lgacc.scaling`); none is typed in from the paper.
A calculator that cannot compute on the given hardware (X160 infeasible on a
4 GiB GPU, say) returns ``None`` and a sentence saying why; it never raises.
"""

from __future__ import annotations

import math
from functools import lru_cache
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
from .limits import SCALING_READS, SEARCH_READS, limit_calculator, memory_limit_years, tensor_16_from_cap, tensor_onset_claim, years_at
from .reading import PAPER_READING, PaperReading

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

__all__ = ["CALCULATORS", "READS", "TRILLION_X", "total_flops"]


#: Months per year, for the time words in months ("above three months").
MONTHS_PER_YEAR = 12
#: Bytes per parameter of a half-precision gradient ("storing its intermediate activations and gradients").
GRADIENT_BYTES = HALF


def _critical_batch(model, reading: PaperReading) -> float:
    """b_c as computed, or rounded to the three digits the paper prints (the reading's ``critical_batch``)."""
    value = model.critical_batch
    return float(f"{value:.3g}") if reading.critical_batch == "printed" else value


def total_flops(x: int = TRILLION_X, steps: int = DEFAULT_STEPS, reading: PaperReading = PAPER_READING) -> float:
    """Flops of ``steps`` batches at the critical batch: the derivation ``compute_per_batch`` (8 b d_s p)."""
    model = x_model(x)
    expr = derivation("compute_per_batch").paper
    values = {b: _critical_batch(model, reading), d_s: model.d_s, d_m: model.d_m, d_l: model.d_l, d_a: model.d_a,
              n_I: model.n_I}
    return float(expr.subs(values)) * steps


def _no_result(what: str, result) -> Outcome:
    binding = "; ".join(getattr(result, "binding", ()) or ())
    return Outcome(None, f"{what} has no feasible configuration on this hardware" + (f" ({binding[:200]})" if binding else ""))


# --- introduction ----------------------------------------------------------------------------------


def _gpt3_flops(reading: PaperReading) -> float:
    """GPT-3's training flops: flops per token and parameter (the reading's) x parameters x tokens."""
    return reading.flops_per_token * named_model("GPT-3").p * GPT3_TOKENS


def _gpt3_state(hardware: Hardware, reading: PaperReading) -> Outcome:
    state = ADAM_BYTES_PER_PARAMETER * named_model("GPT-3").p
    unit = 1e12 if reading.gb == "GB" else 2**40
    return Outcome(state / unit, f"{ADAM_BYTES_PER_PARAMETER} bytes per parameter (fp32 weights, Adam moments) x "
                   f"{named_model('GPT-3').p:.4g} parameters = {state / 1e12:.3g} TB ({state / 2**40:.3g} TiB)")


def _gpt3_petaflop_days(hardware: Hardware, reading: PaperReading) -> Outcome:
    return Outcome(_gpt3_flops(reading) / (1e15 * SECONDS_PER_DAY),
                   f"{reading.flops_per_token} flops per token and parameter x GPT-3's p x {GPT3_TOKENS:.3g} tokens")


def _gpt3_years(hardware: Hardware, reading: PaperReading) -> Outcome:
    return Outcome(_gpt3_flops(reading) / hardware.peak_flop_per_s / (SECONDS_PER_DAY * ONE_YEAR_DAYS),
                   f"GPT-3 training flops ({reading.flops_per_token} per token and parameter) / "
                   f"{hardware.peak_flop_per_s:.3g} flop/s")


def _gpt3_more_terabytes(hardware: Hardware, reading: PaperReading) -> Outcome:
    """"storing its intermediate activations and gradients takes several more terabytes": GPT-3's activation
    checkpoints (one half-precision layer output per layer and token, derivation checkpoint_memory) at its
    critical batch, and its half-precision gradients."""
    model = named_model("GPT-3")
    checkpoints = float(derivation("checkpoint_memory").details["all checkpoints (every device)"].subs(
        {b: model.critical_batch, d_l: model.d_l, d_m: model.d_m, d_s: model.d_s}))
    gradients = GRADIENT_BYTES * model.p
    unit = 1e12 if reading.gb == "GB" else 2**40
    return Outcome((checkpoints + gradients) / unit,
                   f"activation checkpoints 2 b d_l d_m d_s = {checkpoints / 1e12:.3g} TB at b = {model.critical_batch:.4g} "
                   f"plus half-precision gradients {gradients / 1e12:.3g} TB")


def _dozens_of_times(hardware: Hardware, reading: PaperReading) -> Outcome:
    """"This is dozens of times more memory than available on the largest GPU": GPT-3's training state, activation
    checkpoints and gradients over the GPU's memory."""
    state = ADAM_BYTES_PER_PARAMETER * named_model("GPT-3").p
    more = _gpt3_more_terabytes(hardware, reading).value * (1e12 if reading.gb == "GB" else 2**40)
    memory = reading.gpu_memory(hardware)
    return Outcome((state + more) / memory, f"GPT-3's state {state / 1e12:.3g} TB and activations and gradients "
                   f"{more / 1e12:.3g} TB over {memory / 1e9:.3g} GB of GPU memory")


def _fastest(hardware: Hardware, method: str, scenario: str = "limited", model=None,
             reading: PaperReading = PAPER_READING, parallelism: str = "3d", **kwargs):
    spec = scenario_hardware(reading.hardware(hardware), scenario)
    assumptions = kwargs.pop("assumptions", reading.assumptions())
    return _fastest_search(model or x_model(TRILLION_X), spec, method, parallelism, assumptions,
                           tuple(sorted(kwargs.items())))


@lru_cache(maxsize=256)
def _fastest_search(model, spec: Hardware, method: str, parallelism: str, assumptions, options: tuple):
    """One search, shared by the claims that read it under the same reading (a dozen read X160's fastest improved
    configuration): the search is a pure function of its arguments, its result a frozen dataclass."""
    return fastest(model, spec, method, parallelism, explain=False, assumptions=assumptions, **dict(options))


def _describe(result, reading: PaperReading = PAPER_READING) -> str:
    c, e = result.config, result.evaluation
    return (f"n_b={c.n_b}, n_l={c.n_l}, n_a={c.n_a}, n_mu={c.n_mu}, b_mu={c.b_mu}: {e.n_gpu} GPUs at "
            f"efficiency {e.efficiency:.2f}, {e.time_days:.3g} d, {e.memory.total / reading.gb_bytes:.3g} GB")


def _x160_time(method: str) -> Callable[[Hardware, PaperReading], Outcome]:
    def calculate(hardware: Hardware, reading: PaperReading) -> Outcome:
        r = _fastest(hardware, method, reading=reading)
        if r.evaluation is None:
            return _no_result(f"X160 ({method})", r)
        return Outcome(r.evaluation.time_days, f"fastest {method} 3d configuration of X160 ({_describe(r, reading)})")
    return calculate


def _speedup(hardware: Hardware, reading: PaperReading) -> Outcome:
    base, impr = _fastest(hardware, "baseline", reading=reading), _fastest(hardware, "improved", reading=reading)
    if base.evaluation is None or impr.evaluation is None:
        return _no_result("X160", base if base.evaluation is None else impr)
    return Outcome(base.evaluation.time_days / impr.evaluation.time_days,
                   f"X160 fastest baseline time {base.evaluation.time_days:.3g} d over fastest improved "
                   f"{impr.evaluation.time_days:.3g} d (the trillion-parameter scale)")


def _above_three_months(hardware: Hardware, reading: PaperReading) -> Outcome:
    """"It also out-performs the baseline in the absence of tensor parallelism, but the training time remains above
    three months": the fastest improved configuration of X160 without tensor parallelism (data + pipe)."""
    r = _fastest(hardware, "improved", reading=reading, parallelism="data + pipe")
    if r.evaluation is None:
        return _no_result("X160 (improved, data + pipe)", r)
    months = r.evaluation.time_days / (ONE_YEAR_DAYS / MONTHS_PER_YEAR)
    return Outcome(months, f"fastest improved data + pipe configuration of X160 ({_describe(r, reading)}): "
                   f"{r.evaluation.time_days:.3g} d = {months:.3g} months of {ONE_YEAR_DAYS / MONTHS_PER_YEAR:.4g} d")


# --- overview ----------------------------------------------------------------------------------------


def _a100_threshold(hardware: Hardware, reading: PaperReading) -> Outcome:
    from lgacc.model.assumptions import apply_to_hardware

    read = apply_to_hardware(hardware, reading.assumptions())
    value = read.peak_flop_per_s / read.gpu_memory_bandwidth_bytes_per_s
    return Outcome(value, f"peak {read.peak_flop_per_s:.3g} flop/s over GPU memory bandwidth "
                   f"{read.gpu_memory_bandwidth_bytes_per_s:.4g} B/s (the spec's GB/s read as {reading.gb}/s)")


def _binary_addition(hardware: Hardware, reading: PaperReading) -> Outcome:
    flops, moved = 1, 3 * HALF  # one addition; two fp16 operands read, one written
    return Outcome(flops / moved, "one flop per element over three half-precision values moved (two read, one written)")


def _matmul_intensity(hardware: Hardware, reading: PaperReading) -> Outcome:
    n = 1024
    flops, moved = 2 * n**3, 3 * n**2 * HALF
    return Outcome(flops / moved, f"2 n^3 flops over 3 n^2 half-precision values (two inputs, one output), n = {n}")


def _partition_traffic(hardware: Hardware, reading: PaperReading) -> Outcome:
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


def _recomputation_increase(hardware: Hardware, reading: PaperReading) -> Outcome:
    """"The method comes at the cost of a 33% increase in computation": the step with recomputation (derivation
    compute_per_batch, 4 forward passes) over the step without (3)."""
    details = derivation("compute_per_batch").details
    forward = details["forward per batch"]
    with_recompute = derivation("compute_per_batch").exact
    ratio = float((with_recompute / (3 * forward)).simplify())
    return Outcome(ratio - 1, "compute_per_batch (forward, backward = 2 forwards, recomputation) over the same step "
                   f"without the recomputed forward: {ratio:.4g}")


def _partition_intensity_lower(hardware: Hardware, reading: PaperReading) -> Outcome:
    """"This is only 33% lower than without the partition": eq:data_intensity_base_partition against
    eq:data_intensity_base."""
    ratio = float((derivation("data_intensity_base_partition").paper / derivation("data_intensity_base").paper).simplify())
    return Outcome(1 - ratio, f"eq:data_intensity_base_partition / eq:data_intensity_base = {ratio:.4g}")


def _params_per_gpu(bytes_per_parameter: int, what: str) -> Callable[[Hardware, PaperReading], Outcome]:
    def calculate(hardware: Hardware, reading: PaperReading) -> Outcome:
        memory = reading.gpu_memory(hardware)
        return Outcome(memory / bytes_per_parameter,
                       f"{memory:.4g} bytes of GPU memory (the spec's 80 read as {reading.gb}) over "
                       f"{bytes_per_parameter} bytes per parameter ({what})")
    return calculate


# --- trillion parameter example ----------------------------------------------------------------------


def _x160_parameters(hardware: Hardware, reading: PaperReading) -> Outcome:
    m = x_model(TRILLION_X)
    return Outcome(float(m.p), f"p of X160 from its dimensions (d_l = {m.d_l}, d_m = {m.d_m}, n_I = {m.n_I})")


def _x160_critical_batch(hardware: Hardware, reading: PaperReading) -> Outcome:
    m = x_model(TRILLION_X)
    return Outcome(m.critical_batch, "b_c = K_c p^(1/3) / d_s, calibrated on GPT-3 at 3.2 M tokens (appendix)")


def _x160_flops(hardware: Hardware, reading: PaperReading) -> Outcome:
    m = x_model(TRILLION_X)
    return Outcome(total_flops(reading=reading), f"8 b_c d_s p (derivation compute_per_batch) for X160 at b_c = "
                   f"{_critical_batch(m, reading):.1f}, d_s = {m.d_s}, times {DEFAULT_STEPS:,} steps")


def _x160_exaflop_days(hardware: Hardware, reading: PaperReading) -> Outcome:
    return Outcome(total_flops(reading=reading) / (1e18 * SECONDS_PER_DAY), "X160 total flops / (1e18 flop/s x 86400 s)")


def _x160_gpu_days(hardware: Hardware, reading: PaperReading) -> Outcome:
    return Outcome(total_flops(reading=reading) / (hardware.peak_flop_per_s * SECONDS_PER_DAY),
                   f"X160 total flops / ({hardware.peak_flop_per_s:.3g} flop/s peak x 86400 s), at perfect efficiency")


def _improved_min_memory(hardware: Hardware, reading: PaperReading) -> Outcome:
    r = _fastest(hardware, "improved", reading=reading)
    if r.evaluation is None:
        return _no_result("X160 (improved)", r)
    return Outcome(r.evaluation.memory.total / reading.gb_bytes,
                   f"total memory per GPU of the fastest improved 3d configuration of X160 ({_describe(r, reading)})")


def _memory_ratio(hardware: Hardware, reading: PaperReading) -> Outcome:
    r = _fastest(hardware, "improved", reading=reading)
    if r.evaluation is None:
        return _no_result("X160 (improved)", r)
    return Outcome(reading.gpu_memory(hardware) / r.evaluation.memory.total,
                   f"GPU memory over the fastest improved configuration's {r.evaluation.memory.total / reading.gb_bytes:.3g} GB")


def _largest_cluster(hardware: Hardware, reading: PaperReading) -> Outcome:
    r = _fastest(hardware, "improved", reading=reading)
    if r.evaluation is None:
        return _no_result("X160 (improved)", r)
    return Outcome(float(r.evaluation.n_gpu), f"GPUs of the fastest improved 3d configuration of X160 ({_describe(r, reading)})")


def _printed_time_of(row: tuple[str, str, int]) -> float:
    """The printed time (days) of one row of table:smaller_cluster, ``(parallelism, method, target months)``: an input
    of the reading ``cluster_target='printed'`` ("the target is what the paper's rows of that group take")."""
    from ..printed import paper_table, parse_printed

    table = paper_table("table:smaller_cluster")
    match = table[(table.parallelism == row[0]) & (table.method == row[1]) & (table.target_months.astype(int) == row[2])]
    return float(parse_printed(str(match.time.iloc[0])).value)


def _cluster_for(days: float, options: tuple[tuple[str, str], ...], label: str,
                 printed_row: tuple[str, str, int]) -> Callable[[Hardware, PaperReading], Outcome]:
    def calculate(hardware: Hardware, reading: PaperReading) -> Outcome:
        target = _printed_time_of(printed_row) if reading.cluster_target == "printed" else days
        spec = reading.hardware(hardware)
        found = []
        for method, parallelism in options:
            r = cheapest(x_model(TRILLION_X), spec, method, parallelism, target, explain=False,
                         assumptions=reading.assumptions())
            if r.evaluation is not None:
                found.append((r.evaluation.n_gpu, method, parallelism, r))
        if not found:
            return Outcome(None, f"no configuration of X160 trains in {target:.4g} d on this hardware")
        n, method, parallelism, r = min(found, key=lambda item: item[0])
        return Outcome(float(n), f"fewest GPUs training X160 in {label} ({target:.4g} d) among "
                       f"{', '.join(f'{m} {p}' for m, p in options)}: {method} {parallelism} ({_describe(r, reading)})")
    return calculate


def _memory_fraction(hardware: Hardware, reading: PaperReading) -> Outcome:
    r = _fastest(hardware, "improved", reading=reading)
    if r.evaluation is None:
        return _no_result("X160 (improved)", r)
    memory = reading.gpu_memory(hardware)
    return Outcome(r.evaluation.memory.total / memory,
                   f"the fastest improved configuration's {r.evaluation.memory.total / reading.gb_bytes:.3g} GB over the GPU's "
                   f"{memory / reading.gb_bytes:g} GB")


def _finetune(hardware: Hardware, reading: PaperReading) -> Outcome:
    flops = total_flops(steps=FINE_TUNING_STEPS, reading=reading)
    return Outcome(flops / hardware.peak_flop_per_s / SECONDS_PER_DAY,
                   f"8 b_c d_s p x {FINE_TUNING_STEPS} steps for X160 at peak {hardware.peak_flop_per_s:.3g} flop/s (perfect efficiency)")


def _inference_seconds(hardware: Hardware, reading: PaperReading) -> Outcome:
    """"This sets a lower bound of several seconds per trillion parameters": one forward pass of one sequence of
    X160 (2 d_s p flops, half precision at peak) on the largest tensor-parallel group, one node, per trillion
    parameters."""
    m = x_model(TRILLION_X)
    seconds = FORWARD_FLOPS * m.d_s * float(m.p) / (hardware.gpus_per_node * hardware.peak_flop_per_s)
    return Outcome(seconds / (float(m.p) / 1e12),
                   f"2 d_s p flops of one X160 sequence (d_s = {m.d_s}) on {hardware.gpus_per_node} GPUs at peak: "
                   f"{seconds:.3g} s for {float(m.p) / 1e12:.3g} trillion parameters")


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


#: The Ethernet share the most favourable reading needs for the paper's slowdown is looked for up to this factor.
ETHERNET_FACTOR_LIMIT = 64.0
#: The most favourable reading of the Ethernet claims (a column of the matrix), which the demonstration extends
#: with no state partition (the dotted line).
FAVOURABLE_ETHERNET = {"pipeline_overlap": "always", "divisible_layers": False}


def _slowdown(hardware: Hardware, reading: PaperReading, partitioned: bool | None = None,
              ethernet: Hardware | None = None) -> float:
    """X160's improved time over Ethernet (``ethernet``: the scenario's spec) over its time over InfiniBand, minus one."""
    eth = ethernet or scenario_hardware(reading.hardware(hardware), "ethernet")
    over = fastest(x_model(TRILLION_X), eth, "improved", "3d", explain=False, assumptions=reading.assumptions(),
                   partitioned=partitioned)
    ib = _fastest(hardware, "improved", reading=reading)
    return over.evaluation.time_days / ib.evaluation.time_days - 1


def _ethernet_needed(hardware: Hardware, reading: PaperReading, partitioned: bool, target: float) -> str:
    """The Ethernet share at which the most favourable reading slows X160 by ``target`` (bisection on the factor)."""
    spec = scenario_hardware(hardware, "ethernet")
    base = hardware.ethernet_bandwidth_bytes_per_s

    def slowdown(factor: float) -> float:
        faster = hardware.replace(ethernet_bandwidth_bytes_per_s=base * factor)
        return _slowdown(hardware, reading, partitioned, scenario_hardware(faster, "ethernet"))
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


def _ethernet_slowdown(hardware: Hardware, reading: PaperReading) -> Outcome:
    ib, eth = _fastest(hardware, "improved", reading=reading), _fastest(hardware, "improved", "ethernet", reading=reading)
    if ib.evaluation is None or eth.evaluation is None:
        return _no_result("X160 (improved)", ib if ib.evaluation is None else eth)
    slowdown = eth.evaluation.time_days / ib.evaluation.time_days - 1
    how = (f"X160 improved: {eth.evaluation.time_days:.3g} d over Ethernet ({_describe(eth, reading)}) against "
           f"{ib.evaluation.time_days:.3g} d over InfiniBand ({_describe(ib, reading)})")
    demonstration = None
    if reading == PAPER_READING:
        favourable = PAPER_READING.replace(**FAVOURABLE_ETHERNET)
        name = ", ".join(f"{k}={v!r}" for k, v in FAVOURABLE_ETHERNET.items())
        without = Alternative(f"no state partition (the dotted line), {name}", _slowdown(hardware, favourable, partitioned=False))
        demonstration = Demonstration(
            "Over Ethernet the gradient reduction of X160 needs a longer pipeline (or a larger micro-batch) to hide it, "
            "and the longer pipeline's bubble slows training beyond the paper's figure under every reading of its "
            "rules (every column of the reading matrix, and the most favourable one without the state partition)",
            (without,), _ethernet_needed(hardware, favourable, False, 0.04))
    return Outcome(slowdown, how, demonstration=demonstration)


def _ethernet_small_scale(hardware: Hardware, reading: PaperReading) -> Outcome:
    spec = scenario_hardware(reading.hardware(hardware), "ethernet")
    x = _x_for_parameters(SMALL_SCALE_PARAMETERS)
    base, impr = (fastest_row(x, spec, method, "ethernet", assumptions=reading.assumptions())
                  for method in ("baseline", "improved"))
    if not (base["feasible"] and impr["feasible"]):
        return Outcome(None, f"the {SMALL_SCALE_PARAMETERS:.0e}-parameter model is not feasible over Ethernet for both methods")
    return Outcome(base["time_days"] / impr["time_days"],
                   f"X{x}, the first X model of {SMALL_SCALE_PARAMETERS:.0e} parameters (a small scale of fig:scaling_Ethernet), "
                   f"over Ethernet: baseline {base['time_days']:.3g} d (n_b={base['n_b']:g}, n_l={base['n_l']:g}, "
                   f"n_a={base['n_a']:g}: its gradient reduction is only capped), improved {impr['time_days']:.3g} d "
                   f"(n_b={impr['n_b']:g}, n_l={impr['n_l']:g}, n_a={impr['n_a']:g}, n_mu={impr['n_mu']:g}: its reduction "
                   "must be hidden)")


def _ethernet_unpartitioned_small(hardware: Hardware, reading: PaperReading) -> Outcome:
    """One claim for the sentence "For the smallest models, the partition can be avoided to further reduce the training
    time (dotted line)": avoiding it is faster at a small scale; where else it is, the ``how`` says."""
    spec = scenario_hardware(reading.hardware(hardware), "ethernet")
    assumptions = reading.assumptions()
    x = _x_for_parameters(SMALL_SCALE_PARAMETERS)
    part, plain = (fastest_row(x, spec, method, "ethernet", assumptions=assumptions) for method in ("improved", NOT_PARTITIONED))
    if not (part["feasible"] and plain["feasible"]):
        return Outcome(None, f"X{x} is not feasible over Ethernet with and without partition")
    big = {m: fastest_row(TRILLION_X, spec, m, "ethernet", assumptions=assumptions) for m in ("improved", NOT_PARTITIONED)}
    also = ""
    if big["improved"]["feasible"] and big[NOT_PARTITIONED]["feasible"]:
        ratio = big[NOT_PARTITIONED]["time_days"] / big["improved"]["time_days"]
        also = (f"; at X{TRILLION_X}, not among the smallest models, the ratio is {ratio:.3g}"
                + (" (avoiding the partition helps there too, by a smaller margin)" if ratio < 1 else ""))
    return Outcome(plain["time_days"] / part["time_days"],
                   f"X{x}, the first X model of {SMALL_SCALE_PARAMETERS:.0e} parameters, over Ethernet: improved without "
                   f"partition {plain['time_days']:.4g} d (n_l={plain['n_l']:g}, n_a={plain['n_a']:g}), with partition "
                   f"{part['time_days']:.4g} d (n_l={part['n_l']:g}, n_a={part['n_a']:g})" + also)


def _bert_minutes(hardware: Hardware, reading: PaperReading) -> Outcome:
    r = _fastest(hardware, "improved", model=named_model("BERT"), reading=reading)
    if r.evaluation is None:
        return _no_result("BERT (improved)", r)
    return Outcome(r.evaluation.time_days * 24 * 60,
                   f"fastest improved 3d configuration of BERT-large at its critical batch, {DEFAULT_STEPS:,} steps ({_describe(r, reading)})")


CALCULATORS: dict[str, Callable[[Hardware, PaperReading], Outcome]] = {
    "improved_halves_min_time": _speedup,
    "improved_memory_tiny_fraction": _memory_fraction,
    "gpt3_state_tb": _gpt3_state,
    "gpt3_more_terabytes": _gpt3_more_terabytes,
    "gpt3_dozens_of_gpus_memory": _dozens_of_times,
    "gpt3_petaflop_days": _gpt3_petaflop_days,
    "gpt3_years_one_gpu": _gpt3_years,
    "baseline_min_time_1t": _x160_time("baseline"),
    "improved_min_time_1t": _x160_time("improved"),
    "improved_speedup_over_baseline": _speedup,
    "a100_intensity_threshold": _a100_threshold,
    "binary_addition_intensity": _binary_addition,
    "matmul_1024_intensity": _matmul_intensity,
    "partition_network_increase": _partition_traffic,
    "recomputation_33_percent": _recomputation_increase,
    "partition_intensity_33_percent_lower": _partition_intensity_lower,
    "params_fp32_80gb": _params_per_gpu(4, "fp32 weights only"),
    "params_adam_80gb": _params_per_gpu(ADAM_BYTES_PER_PARAMETER, "fp32 weights and two Adam moments"),
    "tensor_16_above": tensor_16_from_cap,
    "tensor_over_infiniband_above": tensor_onset_claim,
    "x160_parameters": _x160_parameters,
    "x160_critical_batch": _x160_critical_batch,
    "x160_total_flops": _x160_flops,
    "x160_exaflop_days": _x160_exaflop_days,
    "x160_gpu_days": _x160_gpu_days,
    "without_tensor_above_three_months": _above_three_months,
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
    "inference_seconds_per_trillion": _inference_seconds,
    "fifty_trillion_at_least_a_year": years_at(5e13),
    "quadrillion_decades": years_at(1e15, demonstrate=True),
}

_FLOPS = frozenset({"critical_batch"})
_GB = frozenset({"gb"})
#: The switches of :class:`~lgacc.paper.claims.reading.PaperReading` each calculator reads; a claim not listed
#: reads none (a formula of the paper, a model's dimensions). A column of the matrix that moves none of a claim's
#: switches repeats its paper-reading cell.
READS: dict[str, frozenset[str]] = {
    "improved_halves_min_time": SEARCH_READS, "improved_memory_tiny_fraction": SEARCH_READS,
    "gpt3_state_tb": _GB, "gpt3_more_terabytes": _GB, "gpt3_dozens_of_gpus_memory": _GB,
    "gpt3_petaflop_days": frozenset({"flops_per_token"}), "gpt3_years_one_gpu": frozenset({"flops_per_token"}),
    "baseline_min_time_1t": SEARCH_READS, "improved_min_time_1t": SEARCH_READS, "improved_speedup_over_baseline": SEARCH_READS,
    "a100_intensity_threshold": _GB, "params_fp32_80gb": _GB, "params_adam_80gb": _GB,
    "tensor_16_above": SEARCH_READS, "tensor_over_infiniband_above": SEARCH_READS,
    "x160_total_flops": _FLOPS, "x160_exaflop_days": _FLOPS, "x160_gpu_days": _FLOPS, "finetune_gpu_days": _FLOPS,
    "without_tensor_above_three_months": SEARCH_READS,
    "improved_min_memory": SEARCH_READS, "memory_17_times_less": SEARCH_READS, "nearly_40000_gpus": SEARCH_READS,
    "one_month_cluster": SEARCH_READS | {"cluster_target"}, "six_month_cluster": SEARCH_READS | {"cluster_target"},
    **{claim: SCALING_READS for claim in ("memory_limit_80gb", "offload_needed_above", "memory_limit_train_years",
                                          "one_month_limit", "one_month_memory", "one_year_limit", "one_year_memory",
                                          "unlimited_node_memory_limit", "unlimited_node_one_month",
                                          "unlimited_node_one_year", "fifty_trillion_at_least_a_year",
                                          "quadrillion_decades")},
    "ethernet_x160_slowdown": SEARCH_READS, "ethernet_improved_beats_baseline_small": SEARCH_READS,
    "ethernet_unpartitioned_faster_small": SEARCH_READS, "bert_minutes": SEARCH_READS,
}
