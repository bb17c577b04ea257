"""The calibrated model (lgacc.model.calibrated): its closed forms, its composition and its data.

Independent facts checked: the saturating efficiency curve and the equal times of a linear layer's three
GEMMs (sympy identities); Korthikanti et al.'s Table 2 activation memory and Megatron-LM's 18 and
6 + 12/d bytes per parameter, recovered from the general forms; the hierarchical data-parallel time
against the per-GPU ring and a hand value; a GEMM and a step time by hand; the flat program against
sympy's own evaluation of the same expressions; a damaged program file rebuilt; and the property the
issue asks for, that a faster GPU never gives a slower step (random configurations, every schedule,
method and recipe), with the issue's own example.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from lgacc.errors import UserInputError
from lgacc.model.calibrated import PRIORS, Calibration, Recipe, expected, expected_many
from lgacc.model.calibrated import symbols as S
from lgacc.model.calibrated.collectives import data_parallel_time, ring_time
from lgacc.model.calibrated.expected import evaluate_inputs, inputs
from lgacc.model.calibrated.gemm import gemm_time, linear_backward_is_twice_forward, saturating_efficiency
from lgacc.model.calibrated.memory import activation_bytes_per_token, memory_terms
from lgacc.model.config import TrainingConfig
from lgacc.model.formulas.model import d_kv, d_v
from lgacc.model.formulas.schedules import SCHEDULES
from lgacc.model.hardware import load_hardware
from lgacc.model.symbols import d_a, d_h, d_I, d_m, d_s, n_a, n_b
from lgacc.model.transformer import Transformer, x_model


def test_the_gemm_time_is_a_saturating_efficiency_curve():
    F, efficiency = saturating_efficiency()
    half = S.kappa * S.e_max * S.c * S.t_k
    assert sympy.simplify(efficiency - S.kappa * S.e_max * F / (F + half)) == 0
    # half the best efficiency at F = F_half, the best one for large GEMMs
    assert sympy.simplify(efficiency.subs(F, half) - S.kappa * S.e_max / 2) == 0
    assert sympy.limit(efficiency, F, sympy.oo) == S.kappa * S.e_max


def test_a_linear_layers_backward_is_twice_its_forward():
    M, N, K = sympy.symbols("M N K", positive=True)
    assert linear_backward_is_twice_forward(M, N, K)


def test_one_gemm_by_hand():
    # 4096 x 4096 x 4096 on an A100 at kappa e_max = 0.8: 2 * 4096^3 flops over 0.8 * 312e12, plus 3 us
    values = {S.kappa: 1, S.e_max: 0.8, S.c: 312e12, S.t_k: 3e-6, S.e_hbm: 0.9, S.beta_hbm: 2.039e12}
    seconds = float(gemm_time(4096, 4096, 4096).subs(values))
    assert seconds == pytest.approx(2 * 4096**3 / (0.8 * 312e12) + 3e-6, rel=1e-12)
    # a tall-skinny product is memory-bound: 2 (M K + K N + M N) bytes over 0.9 x 2039 GB/s
    seconds = float(gemm_time(65536, 8, 8).subs(values))
    assert seconds == pytest.approx(2 * (65536 * 8 + 64 + 65536 * 8) / (0.9 * 2.039e12) + 3e-6, rel=1e-12)


def test_korthikanti_table_2_activations():
    # s b h (10 + 24 / t + 5 a s / (h t)) bytes per layer (tensor parallelism, dropout, stored scores), and
    # 34 s b h / t with sequence parallelism and selective recomputation (Korthikanti et al. 2022, Table 2)
    t, h, a, s = sympy.symbols("t h a s", positive=True)
    gpt = {S.gated: 0, S.drop: 1, S.fa: 0, d_kv: a, d_a: a, d_h: h / a, d_m: h, d_I: 4 * h, n_a: t, d_s: s, S.amp: 0}
    per_token = activation_bytes_per_token()
    tensor = sum(per_token.values()).subs({**gpt, S.sp: 0})
    assert sympy.simplify(tensor.subs(sympy.ceiling(a / t), a / t) - h * (10 + 24 / t + 5 * a * s / (h * t))) == 0
    selective = (per_token["replicated"] + per_token["split"]).subs({**gpt, S.sp: 1})
    assert sympy.simplify(selective.subs(sympy.ceiling(a / t), a / t) - 34 * h / t) == 0
    # under PyTorch's autocast the residual stream is fp32: the two layer norms' inputs take 4 bytes, not 2 (+4 h)
    autocast = sum(per_token.values()).subs({**gpt, S.sp: 0, S.amp: 1})
    assert sympy.simplify(autocast.subs(sympy.ceiling(a / t), a / t) - h * (14 + 24 / t + 5 * a * s / (h * t))) == 0


@pytest.mark.parametrize("stage, bytes_per_parameter", [(0, 18), (1, 6 + 12 / 8), (2, 2 + 16 / 8), (3, 18 / 8)])
def test_training_state_bytes_per_parameter_by_zero_stage(stage, bytes_per_parameter):
    # Megatron-LM's estimator: 18 bytes per parameter (bf16 weights, fp32 gradients, fp32 master and Adam), 6 + 12/d
    # with the distributed optimizer; the paper's partition divides everything by d
    terms = memory_terms()
    state = terms["weights"] + terms["gradients"] + terms["optimizer"]
    indicators = {S.z_1: int(stage >= 1), S.z_2: int(stage >= 2), S.z_3: int(stage >= 3), S.gamma_M: 4, n_b: 8, S.amp: 0}
    per_parameter = sympy.simplify(state.subs(indicators) / (state.subs({**indicators, S.z_1: 0, S.z_2: 0, S.z_3: 0}) / 18))
    assert float(per_parameter) == pytest.approx(bytes_per_parameter)


def test_hierarchical_data_parallel_time():
    size, beta_ib, beta_nvl, eta = 4e9, 25e9, 300e9, 0.8
    common = {S.beta_ib: beta_ib, S.beta_nvl: beta_nvl, S.eta: eta, S.eta_nvl: eta, S.alpha_ib: 0, S.alpha_nvl: 0,
              n_b: 16, S.pg: 0}
    # the tensor group fills the node (g = 1): the paper's per-GPU ring, 2 (n - 1)/n S over the GPU's own link
    per_gpu = data_parallel_time(size, 2).subs({**common, S.G: 8, n_a: 8})
    assert float(per_gpu) == pytest.approx(float(ring_time(size, 16, 2, eta * beta_ib, 0)))
    # 8 data-parallel peers per node: an eighth of the volume leaves through each card, 7/8 crosses NVLink
    hierarchical = float(data_parallel_time(size, 2).subs({**common, S.G: 8, n_a: 1}))
    by_hand = 2 * 15 / 16 * size * max(1 / (8 * eta * beta_ib), 7 / (8 * eta * beta_nvl))
    assert hierarchical == pytest.approx(by_hand) and hierarchical == pytest.approx(float(per_gpu) / 8)
    # the per-GPU reading (a flat implementation): the paper's count whatever the node holds
    flat = float(data_parallel_time(size, 2).subs({**common, S.G: 8, n_a: 1, S.pg: 1}))
    assert flat == pytest.approx(float(per_gpu))


def test_a_data_parallel_group_inside_one_node_never_crosses_infiniband():
    size, beta_ib, beta_nvl, eta, alpha_nvl = 4e9, 25e9, 300e9, 0.8, 7e-6
    eta_nvl = 0.95  # the NVLink generation's own table (lgacc.model.calibrated.links.nvlink_constants)
    values = {S.beta_ib: beta_ib, S.beta_nvl: beta_nvl, S.eta: eta, S.eta_nvl: eta_nvl, S.alpha_ib: 1.0,
              S.alpha_nvl: alpha_nvl, S.delta_nvl: 2e-6, S.pg: 0, S.G: 8, n_a: 2}
    # 4 data-parallel peers and a tensor pair fill one 8-GPU node: one NVLink ring, by hand, at the NVLink latency
    # (its fixed part and 2 us for each of the 3 peers beyond the first)
    inside = float(data_parallel_time(size, 2).subs({**values, n_b: 4}))
    assert inside == pytest.approx(alpha_nvl + 3 * 2e-6 + 2 * 3 / 4 * size / (eta_nvl * beta_nvl))
    # twice as many peers span two nodes: the InfiniBand card of each peer is the slowest link again
    across = float(data_parallel_time(size, 2).subs({**values, n_b: 8}))
    assert across == pytest.approx(1.0 + 2 * 7 / 8 * size / (4 * eta * beta_ib))


def test_the_program_computes_what_sympy_computes():
    # the flat program (data, run with NumPy) against sympy's own evaluation of the expressions it came from
    from lgacc.model.calibrated.expected import inputs, programs
    from lgacc.model.calibrated.step import schedule_numbers, step_terms

    values = inputs("X32", "h100-sxm", "improved", n_b=8, n_l=4, n_a=4, n_mu=8, b_mu=2,
                    recipe=Recipe(sequence_parallel=True, tp_overlap=True), schedule="breadth-first", n_v=2,
                    calibration=PRIORS)
    by_name = {name: float(np.asarray(values[name])) for name in S.NAMES}
    numbers = {key: float(expr.subs({S.symbol(n): by_name[n] for n in ("n_l", "n_mu", "d_l", "v")}))
               for key, expr in schedule_numbers("breadth-first").items()}
    assert numbers == pytest.approx({k: by_name[k] for k in numbers})
    from lgacc.model.calibrated.program import run

    step = float(run(programs()["main"], by_name, ("step",))["step"])
    reference = float(step_terms()["step"].xreplace({symbol: sympy.Float(by_name[name], 30) for name, symbol, _, _ in S.TABLE}))
    assert step == pytest.approx(reference, rel=1e-12)


def test_a_damaged_program_file_is_rebuilt(tmp_path, monkeypatch):
    from lgacc.model.calibrated import store

    monkeypatch.setenv("LGACC_CACHE_DIR", str(tmp_path))
    built = []

    def build():
        built.append(1)
        return {"main": ((("input", "x"), ("const", 2.0), ("mul", 0, 1)), (("y", 2),))}

    source = tmp_path / "source.py"
    source.write_text("x = 1\n")
    first = store.load_or_build("test-programs", [source], build)
    assert store.load_or_build("test-programs", [source], build) == first and len(built) == 1
    path = next(tmp_path.glob("test-programs-*.json"))
    path.write_text(path.read_text().replace('"mul"', '"add"'))  # tampered: the keyed digest no longer matches
    assert store.load_or_build("test-programs", [source], build) == first and len(built) == 2


def test_expected_training_time_is_the_ideal_token_count_at_the_expected_throughput():
    config = TrainingConfig(method="baseline", n_b=16, n_l=4, n_a=8, n_mu=8, b_mu=1)
    found = expected("X64", "a100-80gb", config, steps=1000)
    b_c = x_model(64).critical_batch
    assert found.time_days == pytest.approx(1000 * b_c / config.b * found.step_time_s / 86_400, rel=1e-12)
    assert found.step_time_s == pytest.approx(sum(found.step_parts_s.values()), rel=1e-12)


def test_recipe_errors_are_one_line():
    for bad, message in ((dict(recompute="half"), "recompute='half'"), (dict(zero_stage=4), "zero_stage=4"),
                         (dict(grad_reduce_bytes=3), "grad_reduce_bytes=3"), (dict(dropout="yes"), "dropout='yes'")):
        with pytest.raises(UserInputError, match=message) as error:
            Recipe(**bad)
        assert "\n" not in str(error.value)
    with pytest.raises(UserInputError, match="colour"):
        Recipe.from_strings(["colour=red"])
    assert Recipe.from_strings(["zero_stage=1", "dp_overlap=no"]) == Recipe(zero_stage=1, dp_overlap=False)


# --- a faster GPU never gives a slower step -------------------------------------------------------------------

CONFIGURATIONS = st.fixed_dictionaries({
    "heads": st.sampled_from([8, 16, 32]), "head_size": st.sampled_from([64, 128]), "layers": st.sampled_from([8, 24, 48]),
    "sequence": st.sampled_from([512, 2048, 8192]), "gqa": st.booleans(), "gated": st.booleans(),
    "vocabulary": st.sampled_from([0, 32000]), "method": st.sampled_from(["baseline", "partitioned", "improved"]),
    "schedule": st.sampled_from(SCHEDULES), "n_v": st.sampled_from([1, 2, 4]), "n_l": st.sampled_from([1, 2, 8]),
    "n_a": st.sampled_from([1, 2, 8, 16]), "n_b": st.sampled_from([1, 4, 64]), "rounds": st.sampled_from([1, 3, 16]),
    "b_mu": st.sampled_from([1, 4]), "node": st.sampled_from([4, 8, 16]),
    "recompute": st.sampled_from(["full", "selective", "none", "op", "alternate"]), "sp": st.booleans(),
    "flash": st.booleans(), "network": st.sampled_from(["ring", "per-gpu"]),
    "dropout": st.booleans(), "zero": st.sampled_from([None, 0, 1, 2, 3]), "dp_overlap": st.booleans(),
    "tp_overlap": st.booleans(), "kappa": st.floats(0.5, 1.0), "eta": st.floats(0.5, 1.0), "T_0": st.floats(0, 0.1),
    "xi": st.floats(0, 1.0),  # issue #35: an overlap costs max(a, b) + xi min(a, b)
})


@settings(max_examples=60, deadline=None)
@given(CONFIGURATIONS)
def test_a_faster_gpu_never_gives_a_slower_step(k):
    model = Transformer("t", d_l=k["layers"], d_m=k["heads"] * k["head_size"], d_a=k["heads"], d_h=k["head_size"],
                        d_s=k["sequence"], d_kv=max(1, k["heads"] // 8) if k["gqa"] else k["heads"], gated=k["gated"],
                        d_v=k["vocabulary"], tied_embeddings=False)
    chunked = k["schedule"] in ("interleaved", "breadth-first")
    n_v = k["n_v"] if chunked and k["n_l"] * k["n_v"] <= k["layers"] else 1
    recipe = Recipe(recompute=k["recompute"], sequence_parallel=k["sp"], flash_attention=k["flash"], dropout=k["dropout"],
                    zero_stage=k["zero"], dp_overlap=k["dp_overlap"], tp_overlap=k["tp_overlap"], dp_network=k["network"])
    hardware = load_hardware("h100-sxm").replace(gpus_per_node=k["node"])
    values = inputs(model, hardware, k["method"], n_b=k["n_b"], n_l=k["n_l"], n_a=k["n_a"], n_mu=k["rounds"] * k["n_l"],
                    b_mu=k["b_mu"], recipe=recipe, schedule=k["schedule"], n_v=n_v,
                    calibration=Calibration(kappa=k["kappa"], eta=k["eta"], T_0=k["T_0"], xi=k["xi"]))
    values["c"] = np.geomspace(1e13, 1e17, 40)  # every input may be an array: one pass over the peaks
    steps = evaluate_inputs(values, critical_batch_size=1.0, compact=True)["step_time_s"]
    assert np.all(np.isfinite(steps)) and np.all(np.diff(steps) <= 1e-12 * steps[:-1]), steps


def test_the_issues_example_gets_faster_with_the_gpu():
    # issue #26: X160, improved, A100 links, peak raised from 312e12 to 3e15 and 1e16 flop/s gave 5.9 s -> 11 s -> 35 s
    # in the ideal model's product of overheads; the calibrated step only shrinks
    config = TrainingConfig(method="improved", n_b=483, n_l=5, n_a=16, n_mu=5, b_mu=1)
    hardware = load_hardware("a100-80gb")
    steps = [expected("X160", hardware.replace(peak_flop_per_s=peak), config).step_time_s for peak in (312e12, 3e15, 1e16)]
    assert steps[0] > steps[1] >= steps[2] > 0  # beyond 3e15 the partitioned state's gathers bound the step


def test_an_overlap_pays_xi_of_its_shorter_side():
    # issue #35: hand check of the composition's overlap rule, max(a, b) + xi min(a, b)
    from lgacc.model.calibrated.step import overlapped
    from lgacc.model.calibrated.symbols import symbol

    value = overlapped(3.0, 1.0).subs(symbol("xi"), 0.25)
    assert float(value) == 3.25
    assert float(overlapped(1.0, 3.0).subs(symbol("xi"), 0)) == 3.0


def _serial_buckets(window: float, collective: float, k: int) -> float:
    """Brute force: k equal buckets ready at window i / k, reduced one after the other; seconds after the window."""
    finish = 0.0
    for i in range(1, k + 1):
        finish = max(finish, window * i / k) + collective / k
    return finish - window


@pytest.mark.parametrize("window, collective, k", [(1.0, 3.0, 4), (2.0, 1.0, 4), (1.0, 1.0, 1), (0.3, 0.5, 21)])
def test_a_bucketed_reduction_exposes_its_last_bucket(window, collective, k):
    # issue #35: bucketed gradient reduction (Megatron-LM's buckets), against a serial simulation; by hand,
    # W = 1, t = 3, k = 4: 3/4 + 3/4 (3 - 1) = 2.25; W = 2, t = 1: the last bucket, 1/4
    from lgacc.model.calibrated.step import bucketed_exposure
    from lgacc.model.calibrated.symbols import symbol

    value = float(sympy.sympify(bucketed_exposure(window, collective, k)).subs(symbol("xi"), 0))
    assert value == pytest.approx(_serial_buckets(window, collective, k))
    assert float(sympy.sympify(bucketed_exposure(1.0, 3.0, 4)).subs(symbol("xi"), 0)) == pytest.approx(2.25)
    assert float(sympy.sympify(bucketed_exposure(2.0, 1.0, 4)).subs(symbol("xi"), 0)) == pytest.approx(0.25)


def test_megatrons_default_buckets_by_hand():
    # max(40e6, 1e6 n_b) parameters per bucket: 1.95e9 parameters over 96 ranks -> 96e6 -> 20.3 -> 21 buckets;
    # 1.5e9 over 8 ranks -> 40e6 -> 37.5 -> 38; 10e6 parameters -> one bucket
    from lgacc.model.calibrated.step import gradient_buckets

    assert int(gradient_buckets(1.95e9).subs(n_b, 96)) == 21
    assert int(gradient_buckets(1.5e9).subs(n_b, 8)) == 38
    assert int(gradient_buckets(10e6).subs(n_b, 8)) == 1


def test_an_early_stopped_recomputation_skips_the_layers_last_product_by_hand():
    # PyTorch's non-reentrant checkpoint (torch >= 2.1) stops re-running a layer once the backward's last saved tensor,
    # fc2's input, is packed again, before fc2 runs: the recomputation is the forward less fc2's product, the
    # residual add after it with its fixed time.  By hand, one GPU (no all-reduce), 2,048 tokens, d_m 1,024,
    # d_I 4,096, fc2 at its measured 0.5 of 1 Pflop/s (a table's efficiency holds the kernel's fixed time):
    # 2 x 2048 x 1024 x 4096 / 0.5e15 = 34.36 us; the add reads two and writes one 2-byte tensor,
    # 6 x 1024 x 2048 bytes at 0.9 x 3 TB/s = 4.66 us, + 3 us
    from lgacc.model.calibrated.step import layer_times

    recompute = layer_times()["recompute"]
    values = {S.d_m: 1024, S.d_I: 4096, S.d_s: 2048, S.b_mu: 1, S.n_a: 1, S.sp: 0, S.drop: 0, S.ov_tp: 0, S.g_tab: 1,
              S.kappa: 1, S.e_fc2: 0.5, S.c: 1e15, S.e_max: 0.8, S.e_hbm: 0.9, S.beta_hbm: 3e12, S.t_k: 3e-6}
    skipped = (recompute.subs(S.r_stop, 0) - recompute.subs(S.r_stop, 1)).subs(S.r_full, 1).subs(values)
    leftover = {symbol: 1 for symbol in skipped.free_symbols}  # the network's, multiplied by the absent all-reduce
    want = 2 * 2048 * 1024 * 4096 / 0.5e15 + 6 * 1024 * 2048 / (0.9 * 3e12) + 3e-6
    assert float(skipped.subs(leftover)) == pytest.approx(want)
    # every other layer recomputed (r_full 1/2) skips half as much; no recomputation, nothing
    half = (recompute.subs(S.r_stop, 0) - recompute.subs(S.r_stop, 1)).subs(S.r_full, 0.5).subs(values)
    assert float(half.subs({symbol: 1 for symbol in half.free_symbols})) == pytest.approx(want / 2)
    assert (recompute.subs(S.r_stop, 0) - recompute.subs(S.r_stop, 1)).subs(S.r_full, 0) == 0


def test_each_memory_bound_kernel_pays_the_fixed_time_per_kernel():
    # issue #35: a launch-bound layer; by hand, with FlashAttention 2 norms + 2 bias-dropout-adds + 1 activation
    # = 5 kernels forward and 5 backward, at t_k = 3 us: 30 us per layer and micro-batch; without it softmax and
    # dropout add 2 each way: 42 us
    from lgacc.model.calibrated.kernels import layer_forward_kernels
    from lgacc.model.calibrated.step import layer_times

    launch = layer_times()["launch"]
    plain = {S.d_R: 0, S.e_N: 0, S.e_A: 0}  # fused kernels, no rotary positions (test_calibrated_rope.py: 2 n_R more)
    assert int(layer_forward_kernels().subs(S.fa, 1).subs(plain)) == 5
    assert float(launch.subs({S.fa: 1, S.t_k: 3e-6, **plain})) == pytest.approx(30e-6)
    assert float(launch.subs({S.fa: 0, S.t_k: 3e-6, **plain})) == pytest.approx(42e-6)
    # Llama's rotation fused (one kernel for the queries, one for the keys) adds 2 each way: 42 us with FlashAttention
    assert float(launch.subs({S.fa: 1, S.t_k: 3e-6, S.d_R: 5120, S.n_R: 1, S.e_N: 0, S.e_A: 0})) == pytest.approx(42e-6)


def test_the_attention_efficiency_is_the_measured_kernel_by_head_size_and_sequence():
    import math

    from lgacc.errors import UserInputError
    from lgacc.model.calibrated import Recipe
    from lgacc.model.calibrated.attention import attention_efficiency, published_efficiency

    # data/calibrated/measured/h100-sxm-2026-11-27/attention.csv, cuDNN, head size 128: 2,048 tokens, forward and
    # backward 481036337152 flops (3.5 times the causal forward's) in 1.166490 ms; 4,096 tokens, 962072674304 flops
    # in 2.045849 ms; the share of the H100's 989 TFLOP/s
    at_2k = 481036337152.0 / 1.166490e-03 / 989e12
    at_4k = 962072674304.0 / 2.045849e-03 / 989e12
    assert attention_efficiency("h100-sxm", "cudnn", 2048, 0.55, d_h=128) == pytest.approx(at_2k)
    # between two lengths: linear in the logarithm of the length (3,000 lies 0.5503 of the way from 2k to 4k)
    w = math.log(3000 / 2048) / math.log(2)
    assert attention_efficiency("h100-sxm", "cudnn", 3000, 0.55, d_h=128) == pytest.approx((1 - w) * at_2k + w * at_4k)
    # head size 96: its own row (473520144384 flops in 1.416446 ms); 112 lies between 96 and 128 in logs
    at_96 = 473520144384.0 / 1.416446e-03 / 989e12
    v = math.log(112 / 96) / math.log(128 / 96)
    assert attention_efficiency("h100-sxm", "cudnn", 2048, 0.55, d_h=96) == pytest.approx(at_96)
    assert attention_efficiency("h100-sxm", "cudnn", 2048, 0.55, d_h=112) == pytest.approx((1 - v) * at_96 + v * at_2k)
    # clamped: below the shortest length (512: 120259084288 flops in 0.6248612 ms) and above the largest head size
    at_512 = 120259084288.0 / 6.248612e-04 / 989e12
    assert attention_efficiency("h100-sxm", "cudnn", 256, 0.55, d_h=256) == pytest.approx(at_512)
    # the smaller head runs slower at every length: the table's head sizes are not interchangeable
    for length in (512, 2048, 8192):
        assert attention_efficiency("h100-sxm", "cudnn", length, 0.55, d_h=64) < \
            attention_efficiency("h100-sxm", "cudnn", length, 0.55, d_h=128)
    # no measured kernels for the GPU: the calibration's own value
    assert attention_efficiency("a100-sxm-80gb", "cudnn", 2048, 0.55, d_h=128) == 0.55
    with pytest.raises(UserInputError, match="attention_kernel"):
        Recipe(attention_kernel="flash3")
    # FlashAttention-3's paper, H100, head size 128, 2k: FlashAttention-2 362 TFLOP/s forward, 291 backward; shown
    # beside the measured table, not read by the model
    assert published_efficiency("h100-sxm", "fa2", 3000) == pytest.approx(3.5 / (989 / 362 + 2.5 * 989 / 291))
    assert published_efficiency("a100-sxm-80gb", "fa2", 2048) is None
    # on H100 FlashAttention-2 is the slower kernel: the same configuration takes longer with it
    from lgacc.model.calibrated.expected import expected
    from lgacc.model.config import TrainingConfig

    config = TrainingConfig(method="baseline", n_b=8, n_l=1, n_a=8, n_mu=1, b_mu=1)
    fast = expected("X_160", "h100-sxm", config, recipe=Recipe(attention_kernel="cudnn")).step_time_s
    slow = expected("X_160", "h100-sxm", config, recipe=Recipe(attention_kernel="fa2")).step_time_s
    assert slow > fast
    same = expected("X_160", "a100-80gb", config, recipe=Recipe(attention_kernel="fa2")).step_time_s
    assert same == expected("X_160", "a100-80gb", config, recipe=Recipe(attention_kernel="cudnn")).step_time_s


def test_an_attention_table_with_a_hole_is_one_clear_line(tmp_path):
    from lgacc.errors import UserInputError
    from lgacc.model.calibrated import attention

    header = "backend,batch,heads,seq,head_dim,pass,flops,seconds,tflops\n"
    rows = "".join(f"flash,1,1,{s},64,{p},1e9,{t},0\n" for s in (1024, 2048)
                   for p, t in (("forward", 1e-5), ("forward+backward", 4e-5)))
    good = tmp_path / "good.csv"
    good.write_text(header + rows)
    table = {"gpus": ["x"], "peak_tflops": 1000, "file": str(good), "backends": {"flash": "fa2"}}
    read = attention._read_measured(table, {})
    assert read["kernels"]["fa2"] == ((pytest.approx(0.025), pytest.approx(0.025)),)  # 1e9 / 4e-5 / 1e15
    hole = tmp_path / "hole.csv"
    hole.write_text(header + rows.rsplit("flash", 1)[0])  # the last pair lost its backward
    with pytest.raises(UserInputError, match="every head size"):
        attention._read_measured({**table, "file": str(hole)}, {})
    with pytest.raises(UserInputError, match="backends"):
        attention._read_measured({**table, "backends": {"flash": "flash3"}}, {})


def test_the_triton_kernel_is_flashattention_2_slowed_as_dao_2023_states():
    from lgacc.model.calibrated import Recipe
    from lgacc.model.calibrated.attention import attention_efficiency, fallback_factor
    from lgacc.model.calibrated.expected import expected
    from lgacc.model.config import TrainingConfig

    # Dao (2023) sec. 4.1: FlashAttention-2 is 1.3-1.5 times faster than FlashAttention in Triton forward (1.4 taken)
    # and 2 times backward; on our H100 at 2k, head size 128, FlashAttention-2 ran the forward in 0.4877010 ms and
    # the pair (481036337152 flops) in 2.133728 ms: the backward the rest
    forward, pair = 4.877010e-04, 2.133728e-03
    by_hand = 481036337152.0 / (1.4 * forward + 2.0 * (pair - forward)) / 989e12
    assert attention_efficiency("h100-sxm", "triton", 2048, 0.55, d_h=128) == pytest.approx(by_hand)
    assert attention_efficiency("h100-sxm", "triton", 2048, 0.55, d_h=128) < \
        attention_efficiency("h100-sxm", "fa2", 2048, 0.55, d_h=128)
    # no table: both passes at the calibration's share, slowed alike: 3.5 units of work in 1.4 + 2.5 x 2 units of time
    assert fallback_factor("triton") == pytest.approx(3.5 / 6.4)
    assert fallback_factor("fa2") == fallback_factor("cudnn") == 1.0
    assert attention_efficiency("a100-sxm-80gb", "triton", 2048, 0.55, d_h=128) == pytest.approx(0.55 * 3.5 / 6.4)
    config = TrainingConfig(method="baseline", n_b=8, n_l=1, n_a=8, n_mu=1, b_mu=1)
    for gpu in ("h100-sxm", "a100-80gb"):
        fa2 = expected("X_160", gpu, config, recipe=Recipe(attention_kernel="fa2")).step_time_s
        assert expected("X_160", gpu, config, recipe=Recipe(attention_kernel="triton")).step_time_s > fa2


def test_the_h100_layer_gemms_read_the_measured_table():
    import math

    from lgacc.model.calibrated.gemm_table import layer_efficiencies

    # data/calibrated/measured/h100-sxm-2026-11-26/gemm_layers.csv, width 4096, split 2, 8192 tokens: fc1's three
    # products (2 x 8192 x 8192 x 4096 = 549.76 GFLOP each) took 822.7648, 779.2854 and 781.7973 us; the map's
    # efficiency is their flops over their summed time, over the H100 SXM's 989 TFLOP/s
    fc1 = 3 * 549755813888.0 / ((8.227648e-04 + 7.792854e-04 + 7.817973e-04) * 989e12)
    proj = 3 * 137438953472.0 / ((1.839958e-04 + 1.843610e-04 + 2.032015e-04) * 989e12)
    read = layer_efficiencies("h100-sxm", 4096, 2, 8192)
    assert float(read["fc1"]) == pytest.approx(fc1, rel=1e-9) and float(read["proj"]) == pytest.approx(proj, rel=1e-9)
    assert fc1 == pytest.approx(0.6995, abs=1e-4)
    # the same chip: H200 and H800 read the H100's table
    assert float(layer_efficiencies("h200-sxm", 4096, 2, 8192)["fc1"]) == pytest.approx(fc1, rel=1e-12)
    assert float(layer_efficiencies("H800", 4096, 2, 8192)["fc1"]) == pytest.approx(fc1, rel=1e-12)
    # linear in log d: half-way (in logs) to width 5120, whose fc1 took 1153.056, 1120.224 and 1166.432 us
    # for 858.99 GFLOP each, the mean of the two points
    fc1_5120 = 3 * 858993459200.0 / ((1.153056e-03 + 1.120224e-03 + 1.166432e-03) * 989e12)
    half_way = layer_efficiencies("h100-sxm", math.sqrt(4096 * 5120), 2, 8192)["fc1"]
    assert float(half_way) == pytest.approx((fc1 + fc1_5120) / 2, rel=1e-9)
    # beyond the table's range: the edge's value; arrays broadcast
    edge = layer_efficiencies("h100-sxm", 16384, 8, 32768)["qkv"]
    assert float(layer_efficiencies("h100-sxm", 65536, 16, 131072)["qkv"]) == pytest.approx(float(edge), rel=1e-12)
    many = layer_efficiencies("h100-sxm", 4096, np.array([1.0, 2.0, 4.0]), 8192)["fc1"]
    assert many.shape == (3,) and float(many[1]) == pytest.approx(fc1, rel=1e-9)
    # no table for the A100
    assert layer_efficiencies("a100-80gb", 4096, 2, 8192) is None


def test_a_layer_gemm_runs_at_kappa_times_its_table_efficiency_or_on_the_curve_without_a_table():
    from lgacc.model.calibrated.gemm import table_gemm_time

    M, N, K, e = sympy.symbols("M N K e", positive=True)
    timed = table_gemm_time(M, N, K, e)
    assert sympy.simplify(timed.subs(S.g_tab, 0) - gemm_time(M, N, K)) == 0
    assert sympy.simplify(timed.subs(S.g_tab, 1) - 2 * M * N * K / (S.kappa * e * S.c)) == 0
    # the model's inputs: an H100 layer of width 4096 at split 2 and 8192 tokens reads the table's point
    # (fc1 by hand as in the test above); an A100 has no table (g_tab = 0) and its step ignores the e_* inputs
    model = Transformer("custom", d_l=4, d_m=4096, d_a=32, d_h=128, d_s=8192, d_v=32000)
    h100 = inputs(model, "h100-sxm", "baseline", n_b=1, n_a=2, b_mu=1)
    fc1 = 3 * 549755813888.0 / ((8.227648e-04 + 7.792854e-04 + 7.817973e-04) * 989e12)
    assert h100["g_tab"] == 1.0 and float(h100["e_fc1"]) == pytest.approx(fc1, rel=1e-9)
    a100 = inputs(model, "a100-80gb", "baseline", n_b=1, n_a=2, b_mu=1)
    assert a100["g_tab"] == 0.0
    step = evaluate_inputs(a100, critical_batch_size=1)["step_time_s"]
    other = dict(a100, e_qkv=0.1, e_proj=0.1, e_fc1=0.1, e_fc2=0.1)
    assert float(evaluate_inputs(other, critical_batch_size=1)["step_time_s"]) == float(step)
    # on H100 the table counts: slower measured GEMMs, a slower step
    slower = dict(h100, e_qkv=h100["e_qkv"] / 2, e_proj=h100["e_proj"] / 2, e_fc1=h100["e_fc1"] / 2,
                  e_fc2=h100["e_fc2"] / 2)
    assert (float(evaluate_inputs(slower, critical_batch_size=1)["step_time_s"])
            > float(evaluate_inputs(h100, critical_batch_size=1)["step_time_s"]))


def test_a_gemm_table_with_a_hole_or_an_impossible_speed_is_one_clear_line(tmp_path):
    from lgacc.model.calibrated.gemm_table import _read_table

    header = "d,tp,M,layer,product,N,K,flops,seconds,tflops\n"
    rows = [f"1024,1,2048,{name},forward,1,1,1e9,1e-5,100\n" for name in ("qkv", "proj", "fc1", "fc2")]
    good = tmp_path / "good.csv"
    good.write_text(header + "".join(rows))
    assert _read_table([good], 1e15)["efficiency"]["fc1"][0, 0, 0] == pytest.approx(0.1)
    hole = tmp_path / "hole.csv"
    hole.write_text(header + "".join(rows[:3]) + "2048,1,2048,fc2,forward,1,1,1e9,1e-5,100\n")
    with pytest.raises(UserInputError, match="every"):
        _read_table([hole], 1e15)
    fast = tmp_path / "fast.csv"
    fast.write_text(header + "".join(rows))
    with pytest.raises(UserInputError, match=r"\(0, 1\]"):
        _read_table([fast], 1e13)  # 100 TFLOP/s on a 10 TFLOP/s GPU
    bad = tmp_path / "bad.csv"
    bad.write_text(header + rows[0].replace("forward", "backward"))
    with pytest.raises(UserInputError, match="product"):
        _read_table([bad], 1e15)


def test_a_later_lease_fills_the_gemm_grid_and_the_first_lease_keeps_its_points(tmp_path):
    from lgacc.model.calibrated.gemm_table import _read_table, gemm_tables

    header = "d,tp,M,layer,product,N,K,flops,seconds,tflops\n"

    def rows(d, seconds):
        return "".join(f"{d},1,2048,{name},forward,1,1,1e9,{seconds},0\n" for name in ("qkv", "proj", "fc1", "fc2"))

    first, later = tmp_path / "first.csv", tmp_path / "later.csv"
    first.write_text(header + rows(1024, 1e-5) + rows(4096, 1e-5))
    later.write_text(header + rows(1024, 2e-5) + rows(2048, 4e-5))  # 1024 again, slower: the lease's check
    table = _read_table([first, later], 1e15)
    assert table["d"] == (1024, 2048, 4096)
    # 1e9 flops in 1e-5 s over 1e15 flop/s: 0.1; the later lease's own 2048 point: 1e9 / 4e-5 / 1e15 = 0.025
    assert table["efficiency"]["qkv"][:, 0, 0] == pytest.approx([0.1, 0.025, 0.1])
    # the shipped H100 grid reads both leases: the later one's widths between the first one's
    h100 = next(t for t in gemm_tables() if "h100" in t["gpus"])
    assert len(h100["sources"]) == 2 and {1600, 3072, 6144}.issubset(h100["d"]) and 768 in h100["d"]


def test_no_interpolated_layer_gemm_beats_the_tables_best():
    from lgacc.model.calibrated.gemm_table import best_efficiency, layer_efficiencies

    best = best_efficiency("h100-sxm")
    d, tp, M = np.meshgrid(np.geomspace(500, 40000, 23), [1, 2, 3, 4, 6, 8, 16], np.geomspace(1000, 70000, 11))
    read = layer_efficiencies("h100-sxm", d, tp, M)
    assert max(float(value.max()) for value in read.values()) <= best + 1e-12
    assert 0.7 < best <= 1 and best_efficiency("a100-80gb") is None


def _edges_by_hand(weights: float, vocabulary: float, beta: float, hidden: bool) -> float:
    """FSDP's exposed collectives per micro-batch inside one 8-GPU node (one NVLink ring, 7/8 of a buffer each way):
    the root's and the first layer's gathers (2 bytes), the last layer's gather again unless the head's backward
    hides it, the first layer's and the root's fp32 reduce-scatters (4 bytes)."""
    ring = 7 / 8 / beta
    return ring * (2 * vocabulary + 2 * weights + (0 if hidden else 2 * weights) + 4 * weights + 4 * vocabulary)


def _edges(**values):
    from lgacc.model.calibrated.step import _zero3_edges

    base = {"d_m": 1024, "d_a": 8, "d_h": 128, "d_kv": 8, "d_I": 4096, "gated": 0, "tied": 1, "n_a": 1, "n_b": 8,
            "n_l": 1, "d_l": 4, "G": 8, "pg": 0, "beta_nvl": 100e9, "eta_nvl": 1.0, "alpha_nvl": 0, "delta_nvl": 0,
            "beta_ib": 25e9, "eta": 1.0, "alpha_ib": 0, "gamma_G": 4, "z_3": 1, "improved": 0, "lw": 1, "n_mu": 4, **values}
    expr = sympy.sympify(_zero3_edges()).xreplace({S.symbol(name): value for name, value in base.items()})
    assert not expr.free_symbols, expr.free_symbols
    return float(expr)


def test_fsdp_exposes_its_first_gathers_and_last_reduce_scatters_by_hand():
    # issue #35 (FSDP runs): 12 d^2 weights per layer (d = 1024), a tied 50 000 x 1024 vocabulary in the root unit
    weights, vocabulary, beta = 12 * 1024**2, 50_000 * 1024, 100e9
    # with a vocabulary the head's backward runs first and hides the last layer's gather
    assert _edges(d_v=50_000) == pytest.approx(_edges_by_hand(weights, vocabulary, beta, hidden=True))
    # an untied head on the one stage: the root holds two vocabulary matrices
    assert _edges(d_v=50_000, tied=0) == pytest.approx(_edges_by_hand(weights, 2 * vocabulary, beta, hidden=True))
    # no vocabulary: no root and no head; the last layer's gather at the backward's start is exposed
    assert _edges(d_v=0) == pytest.approx(_edges_by_hand(weights, 0, beta, hidden=False))
    assert _edges(d_v=0) == pytest.approx(7 / 8 * 8 * weights / beta)
    # layered accumulation gathers and reduces once per step: a quarter per micro-batch with 4 micro-batches
    assert _edges(d_v=0, improved=1) == pytest.approx(7 / 8 * 8 * weights / beta / 4)
    # a state that is not partitioned (no ZeRO-3) gathers nothing
    assert _edges(d_v=50_000, z_3=0) == 0


def _copies(**values):
    from lgacc.model.calibrated.step import _zero3_gradient_copies

    base = {"d_m": 1024, "d_a": 8, "d_h": 128, "d_kv": 8, "d_I": 4096, "gated": 0, "n_a": 1, "gamma_G": 4, "z_3": 1,
            "improved": 0, "lw": 1, "n_mu": 4, "e_hbm": 0.5, "beta_hbm": 2e12, **values}
    out = []
    for expr in _zero3_gradient_copies():
        expr = sympy.sympify(expr).xreplace({S.symbol(name): value for name, value in base.items()})
        assert not expr.free_symbols, expr.free_symbols
        out.append(float(expr))
    return tuple(out)


def test_fsdp_gradient_copies_by_hand():
    # issue #35 (FSDP runs): 12 d^2 = 12 582 912 weights per layer at 1 TB/s (half of 2 TB/s): the flat gradient's
    # concatenation reads and writes 2 bytes a weight (4 W); before an fp32 reduce-scatter the cast reads 2 and
    # writes 4, the pre-division reads and writes 4 (14 W)
    weights, rate = 12 * 1024**2, 1e12
    assert _copies() == pytest.approx((4 * weights / rate, 14 * weights / rate))
    # a half-precision reduction has no cast: the pre-division alone, 2 + 2 bytes
    assert _copies(gamma_G=2) == pytest.approx((4 * weights / rate, 4 * weights / rate))
    # two tensor-parallel ranks halve each device's weights; layered accumulation copies once per step
    assert _copies(n_a=2) == pytest.approx((2 * weights / rate, 7 * weights / rate))
    assert _copies(improved=1) == pytest.approx((weights / rate, 3.5 * weights / rate))
    # nothing without a partitioned state
    assert _copies(z_3=0) == (0.0, 0.0)


def test_the_norms_stream_at_their_measured_shares_by_hand():
    # one layer, 2,048 tokens of width 1,024 on one GPU, GELU 4x, no dropout, FlashAttention: the norms move
    # 2 x 4 x 1024 x 2048 = 16.8 MB, the two residual adds 2 x 6 x 1024 x 2048 = 25.2 MB and the GELU
    # 4 x 4096 x 2048 = 33.6 MB; at 3 TB/s, the norms at 0.6 forward and 0.4 backward, the rest at 0.9, the backward
    # moving 1.5 times the forward's bytes
    from lgacc.model.calibrated.kernels import layer_streaming_times

    values = {S.d_m: 1024, S.d_I: 4096, S.d_s: 2048, S.b_mu: 1, S.n_a: 1, S.sp: 0, S.drop: 0, S.gated: 0, S.fa: 1,
              S.beta_hbm: 3e12, S.e_hbm: 0.9, S.e_nF: 0.6, S.e_nB: 0.4, S.k_B: 1.5, S.d_R: 0,
              S.e_N: 0, S.e_A: 0}  # no rotary positions, fused norms and activation
    forward, backward = (float(sympy.sympify(t).subs(values)) for t in layer_streaming_times())
    norms, rest = 2 * 4 * 1024 * 2048, 2 * 6 * 1024 * 2048 + 4 * 4096 * 2048
    assert forward == pytest.approx(norms / (0.6 * 3e12) + rest / (0.9 * 3e12))
    assert backward == pytest.approx(1.5 * (norms / (0.4 * 3e12) + rest / (0.9 * 3e12)))
    # at the streaming share the norms are like any other kernel: the bytes over e_hbm, as before
    same = {**values, S.e_nF: 0.9, S.e_nB: 0.9}
    assert float(sympy.sympify(layer_streaming_times()[0]).subs(same)) == pytest.approx((norms + rest) / (0.9 * 3e12))


def test_the_memory_bound_table_is_read_or_refused_in_one_line(tmp_path):
    from lgacc.model.calibrated.memory_bound import kernel_shares, norm_shares

    table = tmp_path / "memory_bound.csv"
    header = "kernel,pass,tokens,width,bytes,seconds,hbm_share\n"
    # two sizes: 0.5 and 0.7 of the H100 SXM's 3.35 TB/s; the median is their mean
    table.write_text(header + f"layer_norm,forward,1,1,{0.5 * 3.35e12},1,0\nlayer_norm,forward,1,2,{0.7 * 3.35e12},1,0\n"
                     f"layer_norm,backward,1,1,{0.3 * 3.35e12},1,0\n")
    assert norm_shares(table) == pytest.approx((0.6, 0.3))
    table.write_text(header + "gelu,forward,1,1,1e9,1,0\n")
    with pytest.raises(UserInputError, match="no layer_norm forward rows"):
        norm_shares(table)
    bad = tmp_path / "bad.csv"
    bad.write_text(header + "layer_norm,forward,1,1,many,1,0\n")
    with pytest.raises(UserInputError, match="line 2: bytes and seconds must be numbers"):
        kernel_shares(bad)
    with pytest.raises(UserInputError, match="cannot be read"):
        kernel_shares(tmp_path / "absent.csv")


def test_the_losss_kernels_move_the_bytes_counted_from_their_code():
    # bytes per logit, forward and backward, each kernel's tensors read or written once:
    # Megatron-LM's vocab-parallel cross entropy on an fp32 copy (cross_entropy.py, core_r0.14.0):
    #   .float() 2 + 4, max 4, -= max 4 + 4, exp_ 4 + 4, sum 4, div_ 4 + 4; backward mul_ 4 + 4, cast back 4 + 2
    megatron = (2 + 4) + 4 + (4 + 4) + (4 + 4) + 4 + (4 + 4) + (4 + 4) + (4 + 2)
    # PyTorch's cross_entropy on fp32 logits: cast 6, log_softmax reads the row three times and writes it (16),
    # nll_loss's backward zero-fills and scatters (4), log_softmax's backward reads the gradient twice and the
    # output once and writes (16), the cast back 6
    pytorch = 6 + 16 + 4 + 16 + 6
    # the Megatron-LM loss in half precision: eight 2-byte passes forward, two backward
    half = 2 * (1 + 2 + 2 + 1 + 2) + 2 * 2
    from lgacc.model.calibrated.recipe import LOGIT_TRAFFIC

    assert LOGIT_TRAFFIC == {10: megatron, 12: pytorch, 14: pytorch, 16: pytorch, 6: half} == {10: 52, 12: 48, 14: 48, 16: 48, 6: 20}
    # the device's share of 4,096 tokens x 131,072 logits over 2 tensor-parallel ranks, at 52 bytes a logit
    from lgacc.model.calibrated.kernels import cross_entropy_bytes

    from lgacc.model.formulas.model import d_v

    values = {S.g_X: 52, S.b_mu: 2, S.d_s: 2048, S.n_a: 2, d_v: 131072}
    expr = cross_entropy_bytes()
    assert expr.free_symbols == set(values)
    assert float(expr.subs(values)) == pytest.approx(52 * 4096 * 131072 / 2)
