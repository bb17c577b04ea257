"""The B200's GEMMs by shape from SimuMax's measured table (lgacc.model.calibrated.gemm_table's shape tables).

Facts checked against the JSON file itself, read here with ``json`` and keys typed by hand: an entry read back
is the file's value; one layer's map (Llama 3 70B's query/key/value at tensor-parallel 1, 4096 tokens) is the
harmonic mean of the three entries a person picks from the table; a shape between entries reads its nearest.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from lgacc.errors import UserInputError
from lgacc.model.calibrated.gemm_table import (GEMM_FILE, best_efficiency, model_layer_efficiencies,
                                               product_efficiency, shape_table_for, shape_tables)
from lgacc.model.transformer import Transformer

SIMUMAX = GEMM_FILE.parent / "simumax-b200-4dcaae5" / "b200_bf16_ceperm.json"
LLAMA_70B = Transformer("llama-70b-like", d_l=12, d_m=8192, d_a=64, d_h=128, d_kv=8, d_s=4096, d_I=28672,
                        gated=True, d_v=128256)


def _json_entry(key: str) -> float:
    return json.loads(SIMUMAX.read_text())["accelerator"]["op"]["matmul"]["accurate_efficient_factor"][key]


def test_an_entry_reads_back_as_the_json_value():
    table = shape_table_for("b200")
    key = "b=1, m=4096, k=8192, n=10240, layout=TN, accumulate=False, out_dtype=bf16"
    # the file's tflops (2250) is the B200's dense bf16 peak, so no rescaling
    assert json.loads(SIMUMAX.read_text())["accelerator"]["op"]["matmul"]["tflops"] == 2250.0
    assert float(product_efficiency(table, "forward", 4096, 8192, 10240)) == _json_entry(key)
    weight = "b=1, m=10240, k=4096, n=8192, layout=NT, accumulate=True, out_dtype=fp32"
    assert float(product_efficiency(table, "weight_gradient", 10240, 4096, 8192)) == _json_entry(weight)


def test_one_layer_gemm_mapped_by_hand():
    # Llama 3 70B at tensor-parallel 1, micro-batch 1 x 4096 tokens: query/key/value is (M, N, K) =
    # (4096, 8192 + 2 x 8 x 128, 8192) = (4096, 10240, 8192): forward TN (4096, 8192, 10240), input gradient
    # NN (4096, 10240, 8192), weight gradient NT accumulated in fp32 (10240, 4096, 8192)
    forward = _json_entry("b=1, m=4096, k=8192, n=10240, layout=TN, accumulate=False, out_dtype=bf16")
    data = _json_entry("b=1, m=4096, k=10240, n=8192, layout=NN, accumulate=False, out_dtype=bf16")
    weight = _json_entry("b=1, m=10240, k=4096, n=8192, layout=NT, accumulate=True, out_dtype=fp32")
    flops = 2 * 4096 * 10240 * 8192
    seconds = sum(flops / (e * 2250e12) for e in (forward, data, weight))
    read = model_layer_efficiencies("b200-simumax", LLAMA_70B, 1, 4096)
    assert float(read["qkv"]) == pytest.approx(3 * flops / (2250e12 * seconds), rel=1e-12)
    assert 0.57 < float(read["qkv"]) < 0.58


def test_a_shape_between_entries_reads_its_nearest():
    table = shape_table_for("b200")
    exact = float(product_efficiency(table, "forward", 4096, 8192, 10240))
    assert float(product_efficiency(table, "forward", 4000, 8000, 10000)) == exact
    many = product_efficiency(table, "forward", np.array([4096.0, 4000.0]), 8192, 10240)
    assert many.shape == (2,) and (many == exact).all()


def test_which_gpus_read_it():
    assert model_layer_efficiencies("B200", LLAMA_70B, 2, 4096) is not None
    assert model_layer_efficiencies("a100-80gb", LLAMA_70B, 2, 4096) is None
    # GB200 NVL72's GPU is the B200 chip: it reads the same entries (at its own peak, in the model's rate)
    gb200 = model_layer_efficiencies("gb200-nvl72", LLAMA_70B, 2, 4096)
    b200 = model_layer_efficiencies("b200", LLAMA_70B, 2, 4096)
    assert {name: float(e) for name, e in gb200.items()} == {name: float(e) for name, e in b200.items()}
    assert model_layer_efficiencies("gh200", LLAMA_70B, 2, 4096) is None  # a Hopper: not this table
    # an H100 reads its grid, not a shape table
    h100 = model_layer_efficiencies("h100-sxm", LLAMA_70B, 2, 4096)
    from lgacc.model.calibrated.gemm_table import layer_efficiencies
    assert float(h100["fc1"]) == float(layer_efficiencies("h100-sxm", 8192, 2, 4096)["fc1"])


def test_best_is_the_largest_entry_of_the_three_kinds():
    entries = json.loads(SIMUMAX.read_text())["accelerator"]["op"]["matmul"]["accurate_efficient_factor"]
    kinds = ("layout=TN, accumulate=False, out_dtype=bf16", "layout=NN, accumulate=False, out_dtype=bf16",
             "layout=NT, accumulate=True, out_dtype=fp32")
    largest = max(v for k, v in entries.items() if any(k.endswith(kind) for kind in kinds))
    assert best_efficiency("b200-simumax") == largest
    assert math.isclose(largest, 0.655, abs_tol=5e-4)  # the b200-simumax spec's gemm_max_efficiency reads it so


def test_a_bad_shape_file_is_one_line(tmp_path):
    from lgacc.model.calibrated.gemm_table import _read_shape_table
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"accelerator": {"op": {"matmul": {"tflops": 2250, "accurate_efficient_factor": {
        "b=1, m=1, k=1, n=1, layout=TN, accumulate=False, out_dtype=bf16": 1.5}}}}}))
    with pytest.raises(UserInputError, match="bad.json"):
        _read_shape_table(bad, "matmul", 2250e12)
    assert len(shape_tables()) == 1


def _group_entry(key: str) -> float:
    return json.loads(SIMUMAX.read_text())["accelerator"]["op"]["group_matmul"]["accurate_efficient_factor"][key]


def test_a_grouped_entry_reads_back_and_a_near_shape_reads_it():
    from lgacc.model.calibrated.gemm_table import grouped_efficiency
    table = shape_table_for("b200-simumax")
    key = ("ng=20, M=1232, N=3072, K=5120, dtype=bf16, out_dtype=bf16, main_grad_dtype=fp32, stage=bwd_grad_w, "
           "grad=True, accumulate=True, use_split_accumulator=True, single_output=False")
    assert grouped_efficiency(table, "bwd_grad_w", 20, 1232, 3072, 5120) == _group_entry(key)
    # DeepSeek-V2 (160 experts, 6 a token, d_e 1536 gated, d_m 5120) on 8 expert-parallel ranks, 4096 tokens:
    # 20 experts of 8 x 4096 x 6 / 160 = 1228.8 tokens each, the input product 2 x 1536 wide
    assert grouped_efficiency(table, "bwd_grad_w", 160 / 8, 1228.8, 3072, 5120) == _group_entry(key)


def test_the_experts_gemms_timed_by_hand():
    from lgacc.model.calibrated.sparse import _measured_expert_gemms, active_surrogate
    from lgacc.model.config import TrainingConfig
    from lgacc.model.hardware import load_hardware
    from lgacc.paths import DATA
    from lgacc.model.evaluator.inputs import as_model

    model = as_model(str(DATA / "validation" / "models" / "simumax-deepseek-v2-l4.yaml"))
    hw = load_hardware(str(DATA / "validation" / "hardware" / "b200-simumax.yaml"))
    config = TrainingConfig("baseline", n_b=1, n_e=8)
    grouped, _ = _measured_expert_gemms(model, active_surrogate(model), hw, config, 1.0, 2250e12, 0.0)
    stages = ("fwd", "bwd_grad_act", "bwd_grad_w")
    tail = {"fwd": "grad=False, accumulate=False, use_split_accumulator=False, single_output=True",
            "bwd_grad_act": "grad=True, accumulate=False, use_split_accumulator=True, single_output=False",
            "bwd_grad_w": "grad=True, accumulate=True, use_split_accumulator=True, single_output=False"}
    seconds = 0.0
    for N, K in ((3072, 5120), (5120, 1536)):
        flops = 2 * 4096 * 6 * N * K  # every routed token's products, however the experts split them
        for stage in stages:
            e = _group_entry(f"ng=20, M=1232, N={N}, K={K}, dtype=bf16, out_dtype=bf16, main_grad_dtype=fp32, "
                             f"stage={stage}, {tail[stage]}")
            seconds += flops / (e * 2250e12)
    assert grouped == pytest.approx(seconds, rel=1e-12)


def _attention_entry(op: str, key: str) -> float:
    return json.loads(SIMUMAX.read_text())["accelerator"]["op"][op]["accurate_efficient_factor"][key]


def test_attention_by_shape_hand_checked():
    from lgacc.model.calibrated.gemm_table import shape_attention_efficiency
    # Llama 3 70B at tensor-parallel 2: 32 query and 4 key/value heads on the GPU, head dimension 128, 4096 tokens;
    # SimuMax counts the unmasked 4 s^2 h d flops forward (2.5 times that backward), the model the executed half
    key = ("batch=1, seq_len=4096, head_num=32, kv_head_num=4, qk_head_dim=128, v_head_dim=128, "
           "qkv_contiguous=False")
    forward, backward = _attention_entry("sdp_fwd", key) / 2, _attention_entry("sdp_bwd", key) / 2
    want = 3.5 / (1 / forward + 2.5 / backward)
    got = shape_attention_efficiency("b200-simumax", "cudnn", 4096, 64, 128, 8, np.array([2.0]))
    assert float(got[0]) == pytest.approx(want, rel=1e-12)
    # the recipe's other kernel, and a GPU whose attention table holds the kernel, do not read it
    assert shape_attention_efficiency("b200", "fa2", 4096, 64, 128, 8, 2) is None
    assert shape_attention_efficiency("h100-sxm", "cudnn", 4096, 64, 128, 8, 2) is None


def test_a_gpu_reads_only_its_own_measured_table():
    """In a fresh process: finding the A100 (no table) reads none of the measured files, the B200 reads its shape
    table only, and every table still reads whole when asked for all."""
    import subprocess
    import sys

    code = ("from lgacc.model.calibrated import attention, gemm_table as g\n"
            "assert g.table_for('a100-80gb') is None and g.shape_table_for('a100-80gb') is None\n"
            "assert not attention.kernel_measured('a100-80gb', 'fa2')\n"
            "read = lambda: (g._gemm_table.cache_info().currsize, g._shape_table.cache_info().currsize,"
            " attention._measured_table.cache_info().currsize)\n"
            "assert read() == (0, 0, 0), read()\n"
            "assert g.shape_table_for('b200-simumax') is not None and g.table_for('b200-simumax') is None\n"
            "assert read() == (0, 1, 0), read()\n"
            "assert g.table_for('h100-sxm') is g.gemm_tables()[0] and len(g.shape_tables()) >= 1\n"
            "assert read()[:2] == (len(g.gemm_tables()), len(g.shape_tables())), read()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-800:]
