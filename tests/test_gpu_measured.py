"""The H100 measurements kept as data (issue #35 item 7) and what the study reads from them: the tables hold what
benchmarks/gpu/measure.py says they hold, and each is checked against facts that do not come from the study's code
(flops of a shape, bytes of a copy, the GPU's datasheet, the optimizer's bytes per parameter)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from lgacc.model.hardware import load_hardware
from lgacc.studies.gpu_measured import (HostMeasurement, assumed_against_measured, device_beyond_pool,
                                        host_floor_against_measured,
                                        host_measurements, host_time, measurements, read_host_measurement,
                                        read_measurement, training_against_calibrated)

FOLDERS = measurements()


def test_a_measurement_is_kept_with_the_command_that_made_it():
    assert FOLDERS, "no folder under data/calibrated/measured/"
    for folder in FOLDERS:
        env = json.loads((folder / "environment.json").read_text())
        assert env["device"] == "cuda" and "H100" in env["gpu"] and env["torch"]
        readme = (folder.parent / "README.md").read_text()
        assert "benchmarks/gpu/measure.py" in readme and folder.name in readme


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_each_table_is_consistent_with_its_own_definition(folder):
    m = read_measurement(folder)
    hw = load_hardware(m.hardware)
    gemm = m.table("gemm")
    assert (gemm["flops"] == 2.0 * gemm["M"] * gemm["N"] * gemm["K"]).all()
    tflops = gemm["flops"] / gemm["seconds"] / 1e12
    assert ((tflops - gemm["tflops"]).abs() <= 0.006 + 1e-3 * tflops).all()
    bf16 = gemm[gemm["precision"] == "bf16"]
    assert (bf16["flops"] / bf16["seconds"] < hw.peak_flop_per_s).all()  # no product beats the datasheet's peak
    fp8 = gemm[gemm["precision"] == "fp8"]
    assert (fp8["flops"] / fp8["seconds"] < hw.peak_fp8_flop_per_s).all()
    copy = m.table("bandwidth")
    assert (copy.loc[copy["operation"] == "copy", "bytes_moved"] == 2 * copy.loc[copy["operation"] == "copy", "bytes_per_tensor"]).all()
    large = copy[copy["bytes_per_tensor"] >= 256 * 2 ** 20]  # past the 50 MB L2: HBM, under its datasheet rate
    assert (large["bytes_moved"] / large["seconds"] < hw.gpu_memory_bandwidth_bytes_per_s).all()
    attention = m.table("attention")
    pairs = attention.pivot_table(index=["backend", "seq", "head_dim"], columns="pass", values="flops")
    assert (pairs["forward+backward"] == 3.5 * pairs["forward"]).all()  # the backward pass is 2.5 forwards
    training = m.table("training")
    assert (training["peak_reserved_bytes"] >= training["peak_allocated_bytes"]).all()
    assert (training["peak_allocated_bytes"] > training["static_allocated_bytes"]).all()


def _gpt_parameters(d, layers, seq, vocab):
    """A hand count of benchmarks/gpu/measure.py's GPT: per block two LayerNorms (4 d), QKV (3 d^2 + 3 d), the
    projection (d^2 + d), the MLP (8 d^2 + 5 d); token and position embeddings, a final LayerNorm, an untied head."""
    return layers * (12 * d * d + 13 * d) + vocab * d + seq * d + 2 * d + vocab * d


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_the_training_rows_are_the_models_they_name(folder):
    training = read_measurement(folder).table("training")
    for _, row in training.iterrows():
        assert row["parameters"] == _gpt_parameters(row["d_m"], row["d_l"], row["d_s"], row["vocab"])
        # between steps: fp32 weights and AdamW's two fp32 moments, 12 bytes per parameter, and a little more
        # (the allocator's rounding, the token tensors): never less, at most 3 % more
        assert 12 <= row["static_allocated_bytes"] / row["parameters"] <= 12 * 1.03
    # full recomputation keeps less at its peak than none, at the same sizes
    paired = training.pivot_table(index=["d_m", "d_s", "b_mu"], columns="recompute", values="above_static_bytes")
    assert (paired["full"] < paired["none"]).all()


def test_the_comparison_reads_the_model_and_the_spec_not_itself():
    m = read_measurement(FOLDERS[-1])
    frame = assumed_against_measured(m)
    hw = load_hardware(m.hardware)
    best = frame[frame["quantity"].str.startswith("best bf16")].iloc[0]
    assert best["assumed"] == hw.gemm_max_efficiency
    gemm = m.table("gemm")
    bf16 = gemm[gemm["precision"] == "bf16"]
    assert best["measured"] == pytest.approx((bf16["flops"] / bf16["seconds"]).max() / 989.0e12)  # the datasheet's peak
    assert (frame["ratio"] == frame["measured"] / frame["assumed"]).all()
    assert frame["measured"].notna().all() and (frame["measured"] > 0).all()


def test_the_training_comparison_has_one_row_per_step_and_both_models_memory_in_gib():
    m = read_measurement(FOLDERS[-1])
    frame = training_against_calibrated(m)
    training = m.table("training")
    assert len(frame) == len(training)
    assert frame["measured_allocated_gib"].tolist() == pytest.approx((training["peak_allocated_bytes"] / 2 ** 30).tolist())
    assert (frame["expected_memory_gib"] > 0).all() and (frame["expected_step_s"] > 0).all()
    # the expected memory grows with the micro-batch at fixed model and sequence
    big = frame[(frame["d_s"] == 2048) & (frame["recompute"] == "none")].sort_values("b_mu")
    for _, group in big.groupby("d_m"):
        assert group["expected_memory_gib"].is_monotonic_increasing


def test_a_folder_without_its_tables_is_one_clear_error(tmp_path):
    from lgacc.errors import UserInputError

    with pytest.raises(UserInputError, match="gemm.csv"):
        read_measurement(tmp_path)


@pytest.mark.parametrize("folder", [f for f in FOLDERS if (f / "gemm_layers.csv").is_file()], ids=lambda p: p.name)
def test_the_layer_gemm_table_holds_each_layers_three_products_of_its_own_shape(folder):
    table = pd.read_csv(folder / "gemm_layers.csv")
    units = {"qkv": (3, 1), "proj": (1, 1), "fc1": (4, 1), "fc2": (1, 4)}  # a GPT layer's linear maps, in units of d
    for _, row in table.iterrows():
        n, k = units[row["layer"]][0] * row["d"], units[row["layer"]][1] * row["d"]
        n, k = (n // row["tp"], k) if row["layer"] in ("qkv", "fc1") else (n, k // row["tp"])
        assert (row["N"], row["K"]) == (n, k)
        assert row["flops"] == 2.0 * row["M"] * n * k
    counts = table.groupby(["d", "tp", "M", "layer"])["product"].apply(sorted)
    assert all(c == ["forward", "input_gradient", "weight_gradient"] for c in counts)
    assert (table["flops"] / table["seconds"] < load_hardware("h100-sxm").peak_flop_per_s).all()


def test_a_table_the_model_reads_is_not_graded_against_itself():
    """Since the calibrated model reads the H100 layer table (data/calibrated/gemm_tables.yaml), the comparison
    leaves the layer GEMMs out on H100: a check of the model against its own input could not fail."""
    from lgacc.studies.gpu_measured import reads_the_layer_table

    m = read_measurement(FOLDERS[-1])
    quantities = " ".join(assumed_against_measured(m)["quantity"])
    assert reads_the_layer_table(m) == ("transformer layer" not in quantities)


# --- host time and device memory (benchmarks/gpu/measure_host.py) --------------------------------------------------

HOST_FOLDERS = host_measurements()


def test_host_measurements_are_kept_with_the_command_that_made_them():
    assert HOST_FOLDERS, "no host measurement under data/calibrated/measured/"
    readme = (HOST_FOLDERS[0].parent / "README.md").read_text()
    for folder in HOST_FOLDERS:
        assert "benchmarks/gpu/measure_host.py" in readme and folder.name in readme
        assert json.loads((folder / "environment.json").read_text())["device"] == "cuda"


@pytest.mark.parametrize("folder", HOST_FOLDERS, ids=lambda p: p.name)
def test_host_rows_grow_with_layers_and_micro_batches(folder):
    host = read_host_measurement(folder).host
    tiny = host[host["d_m"] == 64]
    for _, group in tiny.groupby("n_mu"):  # more layers launch more kernels
        assert group.sort_values("d_l")["kernels_per_step"].is_monotonic_increasing
    for _, group in tiny.groupby("d_l"):  # more micro-batches launch more kernels
        assert group.sort_values("n_mu")["kernels_per_step"].is_monotonic_increasing


@pytest.mark.parametrize("folder", HOST_FOLDERS, ids=lambda p: p.name)
def test_a_profilers_kernel_counts_are_linear_in_layers_and_micro_batches(folder):
    """A step launches the same kernels for each layer of each micro-batch: the fitted counts are whole numbers
    (the profiler counts whole kernels) and reproduce every row."""
    fit = host_time(read_host_measurement(folder))
    for count in (fit.kernels_per_layer, fit.kernels_per_micro_batch):
        assert abs(count - round(count)) < 0.01 and count > 0
    assert 1e-6 < fit.seconds_per_kernel < 1e-3


def test_the_host_fit_recovers_known_coefficients():
    """Brute force: steps generated from known times per step, per layer and step, per micro-batch and per layer
    and micro-batch are fitted back to those times."""
    rows = [{"d_m": 64, "d_l": layers, "d_s": 64, "b_mu": 1, "n_mu": n_mu, "vocab": 1024,
             "step_seconds": 3e-3 + 2e-4 * layers + n_mu * (1e-3 + 2e-3 * layers),
             "kernels_per_step": 5 + 7 * layers + n_mu * (30 + 60 * layers)}
            for layers in (1, 2, 4, 8) for n_mu in (1, 2, 4)]
    m = HostMeasurement(Path("x"), "h100-sxm", pd.DataFrame(rows), pd.DataFrame())
    fit = host_time(m)
    assert fit.per_step_s == pytest.approx(3e-3) and fit.per_layer_step_s == pytest.approx(2e-4)
    assert fit.per_micro_batch_s == pytest.approx(1e-3) and fit.per_layer_s == pytest.approx(2e-3)
    assert (fit.kernels_per_layer, fit.kernels_per_micro_batch) == (pytest.approx(60), pytest.approx(30))
    assert fit.max_relative_residual < 1e-9


@pytest.mark.parametrize("folder", HOST_FOLDERS, ids=lambda p: p.name)
def test_the_device_holds_the_pool_and_more(folder):
    memory = read_host_measurement(folder).device_memory.dropna(subset=["device_used_bytes"])
    assert (memory["device_used_bytes"] >= memory["reserved_bytes"]).all()
    assert (memory["reserved_bytes"] >= memory["allocated_bytes"]).all()
    beyond = device_beyond_pool(read_host_measurement(folder))
    first = memory.iloc[0]
    assert beyond["beyond_pool_bytes"].iloc[0] == first["device_used_bytes"] - first["reserved_bytes"]
    # a CUDA context on an H100 holds hundreds of MiB, never gigabytes beyond what a step allocates
    assert (beyond["beyond_pool_bytes"] > 100 * 2 ** 20).all() and (beyond["beyond_pool_bytes"] < 4 * 2 ** 30).all()


def test_the_host_floor_is_checked_against_steps_it_was_not_read_from():
    """The floor's four terms, fitted to the host script's steps at width 64, against the kernel script's whole steps
    at width 1,024 (another day): hand-computed for one row, and the check can fail (it is not the identity)."""
    from lgacc.model.calibrated.host import host_terms

    check = host_floor_against_measured()
    # training.csv of 2026-11-26: width 1,024, 8 layers, one micro-batch of 1 x 4,096 tokens, no recomputation, 22.39 ms
    row = check[(check["d_s"] == 4096) & (check["b_mu"] == 1)].iloc[0]
    assert row["measured_s"] == pytest.approx(0.02239)
    t = host_terms("pytorch")
    assert row["floor_s"] == pytest.approx(t["step_s"] + 8 * t["step_layer_s"] + t["micro_batch_s"] + 8 * t["layer_s"])
    assert row["ratio"] == pytest.approx(row["floor_s"] / row["measured_s"])
    assert len(check) == 3 and not (check["ratio"] == 1).all()  # the three host-bound rows: 4 x 1024, 2 x 2048, 1 x 4096
    assert ((check["ratio"] - 1).abs() < 0.1).all()  # an eager step of 8 layers is its host's: within 10 %


# --- Megatron-Core's host (benchmarks/gpu/measure_megatron_host.py) ---------------------------------------------------

def test_megatron_host_tables_are_kept_with_the_command_and_their_environment():
    from lgacc.model.calibrated.host import MEGATRON_HOST_FILES

    readme = (HOST_FOLDERS[0].parent / "README.md").read_text()
    assert "benchmarks/gpu/measure_megatron_host.py" in readme
    for path in MEGATRON_HOST_FILES:
        assert path.is_file() and path.name in readme
        environment = json.loads((path.parent / "environment_megatron.json").read_text())
        assert environment["device"] == "cuda" and environment["megatron_core"] == "0.16.1"


def test_megatron_host_times_read_every_table_and_fit_or_difference_each_spec(tmp_path):
    """Brute force: known times per step, micro-batch and layer come back from a full table (the four-term fit) and
    from a quick one (2 x 2 steps: their difference); the kernels likewise."""
    from lgacc.studies.gpu_measured import megatron_host_times

    def rows(spec, experts, layers, micro, per_layer, kernels):
        return [{"spec": spec, "layers": d_l, "micro_batches": n_mu, "tokens": 64, "width": 64,
                 "experts": experts, "topk": 2 if experts else None,
                 "step_seconds": 4e-3 + n_mu * (2e-3 + d_l * per_layer), "kernels": 9 + n_mu * (20 + d_l * kernels)}
                for d_l in layers for n_mu in micro]

    pd.DataFrame(rows("local", None, (2, 4, 8), (1, 2, 4), 3e-3, 64)).to_csv(tmp_path / "megatron_host.csv",
                                                                              index=False)
    pd.DataFrame(rows("local_moe", 16, (2, 4), (1, 2), 9e-3, 300)).to_csv(tmp_path / "megatron_host_e16.csv",
                                                                           index=False)
    measurement = HostMeasurement(tmp_path, "h100-sxm", pd.DataFrame(), pd.DataFrame())
    dense, experts = megatron_host_times(measurement)
    assert (dense.table, dense.spec, dense.experts, dense.rows) == ("megatron_host.csv", "local", 0, 9)
    assert dense.per_layer_s == pytest.approx(3e-3) and dense.per_micro_batch_s == pytest.approx(2e-3)
    assert dense.per_step_s == pytest.approx(4e-3) and dense.kernels_per_layer == pytest.approx(64)
    assert (experts.spec, experts.experts, experts.topk, experts.rows) == ("local_moe", 16, 2, 4)
    assert experts.per_layer_s == pytest.approx(9e-3) and experts.per_step_s is None
    assert experts.kernels_per_layer == pytest.approx(300)


def test_the_shipped_megatron_layer_costs_the_host_more_than_plain_pytorchs_on_every_lease():
    from lgacc.studies.gpu_measured import megatron_host_times

    measurement = read_host_measurement(HOST_FOLDERS[-1])
    plain = host_time(measurement).per_layer_s
    fits = megatron_host_times(measurement)
    dense = [f for f in fits if f.spec == "local" and f.per_step_s is not None]
    assert len(dense) == 3 and all(f.per_layer_s > plain for f in dense)
    # more experts, more of the host: each routed expert is one more small product per layer
    experts = sorted((f for f in fits if f.experts), key=lambda f: f.experts)
    assert [f.experts for f in experts] == [8, 128]
    assert dense[0].per_layer_s < experts[0].per_layer_s < experts[1].per_layer_s


def test_megatron_widths_are_set_beside_the_calibrated_step_of_the_same_configuration(tmp_path):
    from lgacc.model.calibrated.parameters import fitted_calibration
    from lgacc.studies.gpu_measured import megatron_widths_against_calibrated

    frame = megatron_widths_against_calibrated(read_host_measurement(HOST_FOLDERS[-1]))
    assert "megatron_widths.csv" in (HOST_FOLDERS[-1].parent / "README.md").read_text()
    assert len(frame) == 10 and set(frame["width"]) == {64, 256, 1024, 2048, 4096}
    assert (frame["ratio"] == frame["expected_s"] / frame["measured_s"]).all()
    # the composition the model uses, measured: each step at least the larger of the host's time (the narrowest
    # width's step, the same kernels) and the device's busy time, and less than their sum where both are large
    assert (frame["measured_s"] >= frame["composed_s"] * 0.99).all()
    wide = frame[frame["width"] >= 1024]
    narrowest = frame[frame["width"] == 64].set_index("n_mu")["measured_s"]
    assert (wide["measured_s"] < wide["n_mu"].map(narrowest) + wide["busy_s"]).all()
    # the narrowest rows wait on Megatron-Core's host: no shorter than 8 layers' floor per micro-batch, by hand
    cal = fitted_calibration()
    narrow = frame[frame["width"] == 64]
    floor = narrow["n_mu"] * 8 * (cal.host_layer_s + cal.host_megatron_layer_s)
    assert (narrow["host_s"] > 0).all() and (narrow["expected_s"] >= floor).all()
    # a folder without the table: an empty frame, not an error
    assert megatron_widths_against_calibrated(HostMeasurement(tmp_path, "h100-sxm", pd.DataFrame(),
                                                              pd.DataFrame())).empty


def test_the_attention_the_model_reads_is_shown_beside_the_published_figures():
    import math

    from lgacc.studies.gpu_measured import attention_read_by_model

    frame = attention_read_by_model("h100-sxm")

    def cell(kernel, head_dim, source, n):
        row = frame[(frame["kernel"] == kernel) & (frame["head_dim"] == head_dim) & (frame["source"] == source)]
        assert len(row) == 1
        return float(row[n].iloc[0])

    # attention.csv of 2026-11-27: cuDNN, head size 96, 2,048 tokens, 473520144384 flops in 1.416446 ms
    assert cell("cudnn", 96, "measured", 2048) == pytest.approx(473520144384.0 / 1.416446e-03 / 989e12)
    # FlashAttention-3's paper, cuDNN at 2k: 617 TFLOP/s forward, 465 backward (2.5 times the forward's flops)
    assert cell("cudnn", 128, "published", 2048) == pytest.approx(3.5 / (989 / 617 + 2.5 * 989 / 465))
    assert math.isnan(cell("cudnn", 128, "published", 32768))  # beyond the figure's lengths: not extrapolated
    assert set(frame["head_dim"]) == {64, 96, 128}
    assert set(frame.loc[frame["kernel"] == "triton", "source"]) == {"fa2 measured, slowed"}
    assert attention_read_by_model("a100-80gb").empty  # no measured table: nothing shown as read


def test_the_later_gemm_lease_adds_its_widths_and_checks_the_first():
    from lgacc.studies.gpu_measured import gemm_lease_check

    check = gemm_lease_check("h100-sxm")
    assert check["widths"] == [1536, 1600, 1920, 2304, 2880, 3072, 6144, 7168, 10240]
    assert check["points"] == 4 * 3 * 4  # width 1,024 again: 4 splits x 3 token counts x 4 maps
    assert check["low"] <= check["median"] <= check["high"]
    assert 0.9 < check["median"] < 1.1  # the same kind of GPU, software and clocks
    assert gemm_lease_check("a100-80gb") is None


def test_the_memory_bound_kernels_are_shown_beside_the_shares_the_model_reads():
    from lgacc.studies.gpu_measured import MEMORY_BOUND_FILE, memory_bound_against_assumed

    frame = memory_bound_against_assumed().set_index(["kernel", "pass"])
    assert set(frame.index) == {("layer_norm", "forward"), ("layer_norm", "backward"), ("gelu", "forward"),
                                ("gelu", "backward"), ("dropout", "forward"), ("dropout", "backward"), ("add", "forward")}
    # memory_bound.csv: the layer norm's backward at 16,384 x 1,024 moved at least 3 x 16,777,216 values x 2 bytes
    # (read dy and x, write dx) in 0.1197860 ms: 0.251 of the H100 SXM's 3.35 TB/s, the lowest of its 8 cases
    assert frame.loc[("layer_norm", "backward"), "low"] == pytest.approx(100663296 / 1.197860e-04 / 3.35e12)
    assert (frame["cases"] == 8).all() and (frame["low"] <= frame["median"]).all()
    assert (frame["median"] <= frame["high"]).all() and (frame["high"] < 1).all()
    # the model reads the layer norm's two medians (by hand: the middle two of its 8 forward shares, sorted, are
    # 0.575 and 0.616 of memory_bound.csv's rounded column); every other kernel streams at hbm_efficiency 0.9
    norm = frame.loc[[("layer_norm", "forward"), ("layer_norm", "backward")]]
    assert (norm["assumed"] == norm["median"]).all() and norm["read"].all()
    assert 0.58 < norm.loc[("layer_norm", "forward"), "median"] < 0.60
    others = frame[~frame["read"]]
    assert len(others) == 5 and (others["assumed"] == 0.9).all()
    assert "measure_memory_bound.py" in (MEMORY_BOUND_FILE.parent.parent / "README.md").read_text()


def test_recomputation_stops_early_on_our_own_steps():
    # benchmarks/gpu/measure.py recomputes with torch.utils.checkpoint(use_reentrant=False) under torch 2.11: where the
    # GPU sets the pace, the measured ratio of a recomputed step over the plain one (training.csv: 0.24658 / 0.20627
    # = 1.195 at width 4,096, 2,048 x 8 tokens) lies nearer the model's that stops before each layer's last product
    # than the model's that re-runs the whole forward
    from lgacc.studies.gpu_measured import measurements, read_measurement, recomputation_against_measured

    frame = recomputation_against_measured(read_measurement(measurements()[0]))
    row = frame[(frame["d_m"] == 4096) & (frame["d_s"] == 2048) & (frame["b_mu"] == 8)].iloc[0]
    assert row["measured"] == pytest.approx(0.24658 / 0.20627)
    paced = frame[frame["device_paced"]]
    assert len(paced) >= 5
    stop = (paced["early_stop"] / paced["measured"] - 1).abs()
    whole = (paced["whole_forward"] / paced["measured"] - 1).abs()
    assert stop.mean() < whole.mean() and (stop < whole).sum() > len(paced) / 2
    # stopping early is cheaper, never dearer; a step without recomputation does not move
    assert (frame["early_stop"] <= frame["whole_forward"] + 1e-12).all()
