"""Issue #35, memory: the measured peak-memory runs and the statistic each one is (allocated, reserved, device),
checked against what their sources print; the ordering rule the comparison states, on a made-up frame."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pytest

from lgacc.errors import UserInputError
from lgacc.studies.validation import load_runs
from lgacc.studies.validation.runs import MEMORY_STATISTICS
from lgacc.studies.validation.tables import _reserved_beside_allocated

PROBES = "BigScience tr11 topology probes (2022)"


@pytest.fixture(scope="module")
def runs():
    return load_runs()


def _cells(citation: str) -> list[str]:
    """The cells of the markdown table row a citation quotes (after its last colon)."""
    row = citation[citation.index("|"):]
    return [cell.strip() for cell in row.strip().strip("|").split("|")]


def test_each_bigscience_probe_is_the_table_row_it_quotes(runs):
    probes = [run for run in runs if run.publication == PROBES]
    assert len(probes) >= 35 and all(run.uses == ("memory",) for run in probes)
    for run in probes:
        cells = _cells(run.citation)
        # Mem is printed in whole GB (nvidia-smi MiB / 1024): the run carries it unchanged
        (mem,) = [cell for cell in cells if cell.endswith("GB")]
        assert float(mem[:-2]) == run.measured_memory_gib, run.id
        # the degrees and the micro-batch are consecutive cells (TP, PP, MBS), after the nodes (or GPUs) and the size
        first = int(cells[0])
        assert run.n_gpu in (first, 8 * first), run.id
        joined = "|".join(cells)
        assert f"|{run.n_a}|{run.n_l}|{run.b_mu}|" in joined, run.id
        heading = run.citation[:run.citation.index("|")]
        assert str(run.b) in cells or f"GBS={run.b}" in heading, run.id
        # the heading states NHIDDEN and NLAYERS of the model (the single-node table prints the layers in a column)
        assert f"NHIDDEN={run.model.d_m}" in heading, run.id
        if "Max possible TFLOPs" in heading:
            assert cells[2] == str(run.model.d_l), run.id
        else:
            assert f"NLAYERS={run.model.d_l}" in heading, run.id
        # the rule the file states: even stages (the first holds d_l / n_l layers and the embedding), no saturated card
        assert run.model.d_l % run.n_l == 0 and run.measured_memory_gib < 80
        assert run.memory_statistic == "device" and run.model.d_v == 250880
        assert run.precision == "bf16" and run.recipe.grad_reduce_bytes == 2  # fp16: two-byte gradients


def test_the_statistics_are_told_apart(runs):
    measured = [run for run in runs if run.measured_memory_gib is not None]
    assert {run.memory_statistic for run in measured} <= set(MEMORY_STATISTICS)
    by = {}
    for run in measured:
        by.setdefault(run.memory_statistic, set()).add(run.publication)
    # SimuMax: max_memory_allocated; torchtitan: max_reserved; nvidia-smi / gpustat: device
    assert by["allocated"] >= {"SimuMax B200 release v1.2 (2026)", "ColossalAI-Pytorch-lightning benchmarks (2022)"}
    assert by["device"] >= {PROBES, "vuiseng9/megatron-tutorials (2025-2026)"}
    assert by["reserved"] >= {"torchtitan performance docs (2024)"}


def _first_probe_with(folder: Path, old: str, new: str) -> None:
    """``folder/r.yaml``: the BigScience probes' file with its first run only, ``old`` replaced by ``new`` in it."""
    text = (Path(__file__).parents[1] / "data/validation/bigscience2022_probes.yaml").read_text()
    head, _, rest = text.partition("runs:\n")
    first = rest.split("  - id:")[1]
    (folder / "r.yaml").write_text(head + "runs:\n  - id:" + first.replace(old, new))


def test_an_unknown_statistic_is_one_clear_line(tmp_path):
    _first_probe_with(tmp_path, "memory_statistic: device", "memory_statistic: nvml")
    with pytest.raises(UserInputError, match="memory_statistic='nvml' must be one of allocated, reserved, device"):
        load_runs(tmp_path)


def test_reserved_beside_allocated_by_hand():
    nan = math.nan
    frame = pd.DataFrame({
        "publication": ["P", "P", "Q"], "memory_statistic": ["allocated", "allocated", "device"],
        "measured_memory_gib": [10.0, 20.0, 30.0], "measured_memory_reserved_gib": [12.0, 21.0, nan],
        "expected_memory_gib": [11.0, 19.0, 25.0]})
    frame["memory_ratio"] = frame["expected_memory_gib"] / frame["measured_memory_gib"]
    out = _reserved_beside_allocated(frame)
    assert out["runs"] == 2 and out["publications"] == 1
    # against allocated: |11/10 - 1| = 0.1, |19/20 - 1| = 0.05; against reserved: |11/12 - 1|, |19/21 - 1|
    assert out["mean_error_vs_allocated"] == pytest.approx(0.075)
    assert out["mean_error_vs_reserved"] == pytest.approx((1 / 12 + 2 / 21) / 2)
    assert out["max_error_vs_reserved"] == pytest.approx(2 / 21)
    assert out["below_reserved"] == 2
    assert out["measured_reserved_over_allocated"] == pytest.approx((1.2 + 1.05) / 2)
    assert _reserved_beside_allocated(frame.iloc[2:]) == {"runs": 0}


def test_the_headline_names_its_rule_and_each_statistic_reads_as_the_rule_says():
    from lgacc.studies.validation import frame_for, summary

    numbers = summary(frame_for())
    rule = numbers["memory_rule"]
    assert numbers["memory_predicts"] == "allocated" and "pool/allocation ratio" in rule and "NCCL" in rule
    by = numbers["memory_by_statistic"]
    # each statistic compared with its own prediction: no longer a lower bound that reads low on every run, and each
    # reads nearer its measurement than the allocated prediction alone did (device 15.4 %, reserved 11.8 % before)
    for statistic in ("reserved", "device"):
        assert by[statistic]["below_measured"] <= by[statistic]["runs"]
        assert by[statistic]["mean_error"] < 0.115
    # where a source gives both, the pool is larger than the allocation
    both = numbers["memory_reserved_beside_allocated"]
    assert both["runs"] >= 32 and both["publications"] >= 2 and both["measured_reserved_over_allocated"] > 1
    # on SimuMax's Megatron-LM runs the prediction is nearer the allocation it predicts than the pool; the H100
    # steps (plain PyTorch), with the framework memory the two cuBLAS workspaces (64 MiB) where 65-69 MiB was
    # measured beyond the state, read within 4 % of their allocation
    frame = frame_for()
    frame = frame[frame["measured_memory_gib"].notna() & ~frame["extended"].astype(bool)]
    simumax = _reserved_beside_allocated(frame[frame["publication"] == "SimuMax B200 release v1.2 (2026)"])
    assert simumax["runs"] == 8 and simumax["mean_error_vs_allocated"] < simumax["mean_error_vs_reserved"]
    h100 = frame[frame["publication"] == "lgacc H100 training-step measurements (2026)"]
    assert len(h100) == 24 and (abs(h100["memory_ratio"] - 1) < 0.04).all()
    assert re.fullmatch(r"[a-z ]+", " ".join(by))


def test_the_chapter_tells_the_statistics_apart():
    from lgacc.model.calibrated import fitted_calibration
    from lgacc.studies.validation.chapter import memory_sentence

    numbers = {"memory_by_statistic": {
        "allocated": {"runs": 8, "publications": 1, "mean_error": 0.025, "max_error": 0.07, "mean_signed": -0.005,
                      "below_measured": 5},
        "device": {"runs": 78, "publications": 2, "mean_error": 0.095, "max_error": 0.347, "mean_signed": -0.084,
                   "below_measured": 73}},
        "memory_reserved_beside_allocated": {"runs": 8, "measured_reserved_over_allocated": 1.04,
                                             "mean_error_vs_allocated": 0.025, "mean_error_vs_reserved": 0.043}}
    text = memory_sentence(fitted_calibration(), numbers)
    assert "none fitted" in text and "*device* memory" in text and "NCCL" in text and "64 MiB" in text
    assert "device: 78 runs of 2 sources, 9.5% mean, 34.7% worst (-8.4% on average; below the measurement on 73)" in text
    assert "the pool is 4.0% larger than the allocation on average" in text
    assert "2.5% from the allocation, 4.3% from the pool" in text
    # without the summary, only what the model predicts
    assert "Measured" not in memory_sentence(fitted_calibration())


MEASURED_CONTEXT = Path(__file__).resolve().parents[1] / "data/calibrated/measured/h100-sxm-2026-11-27/device_memory.csv"


def test_a_device_reading_is_compared_with_the_pool_plus_the_cuda_context_and_nccl():
    from lgacc.studies.validation import frame_for

    frame = frame_for()
    memory = frame[frame["measured_memory_gib"].notna()].set_index("id")
    device = memory["memory_statistic"] == "device"
    added = memory["expected_memory_device_gib"] - memory["expected_memory_reserved_gib"] - memory["memory_nccl_gib"]
    # pytorch/pytorch#86509: 666,632,192 bytes loading every module at start (CUDA 11); megatron-tutorials ran CUDA 13,
    # whose context after training steps this package measured (data/calibrated/measured/h100-sxm-2026-11-27)
    eager = memory.index.str.startswith("bigscience-probe")
    lazy = memory.index.str.startswith("mtut-")
    assert eager.sum() >= 35 and lazy.sum() >= 35
    assert added[eager].to_numpy() == pytest.approx(666_632_192 / 2**30)
    measured = pd.read_csv(MEASURED_CONTEXT)
    after_training = measured[measured["stage"].str.contains("training steps")]
    beyond = (after_training["device_used_bytes"] - after_training["reserved_bytes"]).max()
    assert added[lazy].to_numpy() == pytest.approx(beyond / 2**30)
    assert (memory.loc[~device, "memory_context_gib"] == 0).all()
    # each statistic against its own prediction: allocated as it is, reserved and device from the pool on
    compared = memory["expected_memory_compared_gib"]
    allocated = memory["memory_statistic"].isin(["allocated", "not stated"])
    assert (compared[allocated] == memory.loc[allocated, "expected_memory_gib"]).all()
    reserved = memory["memory_statistic"] == "reserved"
    assert compared[reserved].to_numpy() == pytest.approx(
        (memory["expected_memory_gib"] * memory["memory_pool_ratio"])[reserved].to_numpy())
    assert compared[device].to_numpy() == pytest.approx(memory.loc[device, "expected_memory_device_gib"].to_numpy())
    ratio = compared / memory["measured_memory_gib"]
    assert memory["memory_ratio"].to_numpy() == pytest.approx(ratio.to_numpy())
    # BigScience's probes at TP 4, PP 12, DP 8: a tensor, a pipeline, a data-parallel and the world communicator,
    # and DeepSpeed's PipelineEngine's slice, model-parallel and tied-embedding groups: 7 x 32 channels x 10 MiB =
    # 2.1875 GiB; megatron-tutorials on one GPU: none
    probe = memory[eager & (memory["n_a"] == 4) & (memory["n_l"] == 12) & (memory["n_b"] == 8)]
    assert len(probe) and (probe["memory_nccl_gib"] == 2.1875).all()
    single = memory[lazy & (memory["n_gpu"] == 1)]
    assert len(single) and (single["memory_nccl_gib"] == 0).all()


def test_nccl_buffers_are_its_documented_defaults():
    from lgacc.model.calibrated.device_memory import (NCCL_CONNECTION_BYTES, NCCL_PROTOCOL_BYTES,
                                                      nccl_buffer_bytes, nccl_communicators)

    # by hand: Simple 4 MiB (NCCL_BUFFSIZE's default, 4194304); LL 8 x 512 x 8 x 16 = 524,288; LL128
    # 120 x 640 x 8 x 8 = 4,915,200; together 9,633,792 bytes, rounded up to 2 MiB: 10,485,760, the allocation
    # NCCL's log shows per channel and peer on 8 H100s (NVIDIA/nccl#1685)
    assert NCCL_PROTOCOL_BYTES == {"simple": 4_194_304, "ll": 524_288, "ll128": 4_915_200}
    assert sum(NCCL_PROTOCOL_BYTES.values()) == 9_633_792 and NCCL_CONNECTION_BYTES == 10_485_760
    # one GPU, or degrees of one: no communicator; one parallel dimension: it is the world group
    assert nccl_communicators(1, 1, 1) == 0 and nccl_buffer_bytes(1, 1, 1) == 0
    assert nccl_communicators(8, 1, 1) == nccl_communicators(1, 1, 64) == 1
    assert nccl_buffer_bytes(1, 1, 8) == 32 * 10_485_760 == 335_544_320
    # two dimensions: each, and the world beside them; three: four
    assert nccl_communicators(2, 4, 1) == 3 and nccl_communicators(8, 12, 4) == 4
    assert nccl_buffer_bytes(8, 12, 4) == 4 * 32 * 10 * 2**20 == 1.25 * 2**30
    assert nccl_communicators(2, 2, 2, n_c=2, n_e=2) == 6
    # DeepSpeed's PipelineEngine on the first stage of TP 8, PP 12, DP 4: Megatron-LM's tensor group, the data,
    # pipeline and world groups (4), and the engine's slice, model-parallel and tied-embedding groups: 7 communicators
    assert nccl_communicators(8, 12, 4, deepspeed_pipeline=True) == 7
    assert nccl_buffer_bytes(8, 12, 4, deepspeed_pipeline=True) == 7 * 335_544_320
    # one stage of TP 8: the model-parallel group's start-up all-reduce only (no stage output to partition, nothing
    # tied across stages); a pipeline without tensor parallelism: the model-parallel and tied groups
    assert nccl_communicators(8, 1, 1, deepspeed_pipeline=True) == 2
    assert nccl_communicators(1, 48, 8, deepspeed_pipeline=True) == 3 + 2
    # one GPU: nothing
    assert nccl_communicators(1, 1, 1, deepspeed_pipeline=True) == 0


def test_the_pool_ratio_leaves_the_run_s_publication_out(runs):
    from lgacc.studies.validation import frame_for

    frame = frame_for().set_index("id")
    both = [run for run in runs if run.memory_statistic == "allocated" and not run.extended
            and "memory_reserved_gib_per_gpu" in run.reported]
    ratio = {run.id: run.reported["memory_reserved_gib_per_gpu"] / run.measured_memory_gib for run in both}
    h100 = [run.id for run in both if run.publication == "lgacc H100 training-step measurements (2026)"]
    simumax = [run.id for run in both if run.publication == "SimuMax B200 release v1.2 (2026)"]
    assert len(h100) == 24 and len(simumax) == 8 and len(both) == 32
    # SimuMax's runs take the H100 steps' ratio, read here from the measurement's own CSV (peak reserved over peak
    # allocated), and the H100 steps take SimuMax's; a source that measured neither takes all 32
    csv = pd.read_csv(Path(__file__).parents[1] / "data/calibrated/measured/h100-sxm-2026-11-26/training.csv")
    from_csv = float((csv["peak_reserved_bytes"] / csv["peak_allocated_bytes"]).mean())
    assert frame.loc[simumax, "memory_pool_ratio"].to_numpy() == pytest.approx(from_csv, rel=2e-3)
    assert frame.loc[h100, "memory_pool_ratio"].to_numpy() == pytest.approx(
        sum(ratio[i] for i in simumax) / len(simumax))
    torchtitan = frame[frame["memory_statistic"] == "reserved"]
    assert torchtitan["memory_pool_ratio"].to_numpy() == pytest.approx(sum(ratio.values()) / len(ratio))
    # a frame whose runs hold no source with both statistics: no free blocks are assumed (ratio 1)
    from lgacc.studies.validation.tables import pool_ratios

    alone = frame.reset_index()
    alone = alone[alone["publication"] == "torchtitan performance docs (2024)"]
    assert (pool_ratios(alone) == 1).all()


def test_the_framework_memory_is_two_hopper_cublas_workspaces():
    from lgacc.model.calibrated.parameters import PRIORS

    assert PRIORS.framework_gib * 2**30 == 2 * 32 * 2**20
    # beside what this package's H100 steps allocated beyond their 12 bytes a parameter before the first step
    csv = pd.read_csv(Path(__file__).parents[1] / "data/calibrated/measured/h100-sxm-2026-11-26/training.csv")
    beyond = (csv["static_allocated_bytes"] - 12 * csv["parameters"]) / 2**20
    assert beyond.min() > 64 and beyond.max() < 70


def test_an_unknown_module_loading_is_one_clear_line(tmp_path):
    _first_probe_with(tmp_path, "cuda_module_loading: eager", "cuda_module_loading: sometimes")
    with pytest.raises(UserInputError, match="cuda_module_loading='sometimes' must be one of eager, lazy, lazy-cuda13"):
        load_runs(tmp_path)


def test_each_lightning_run_is_the_readme_row_it_quotes(runs):
    rows = [run for run in runs if run.publication == "ColossalAI-Pytorch-lightning benchmarks (2022)"]
    assert len(rows) == 3 and all(run.memory_statistic == "allocated" and run.uses == ("memory",) for run in rows)
    for run in rows:
        cells = _cells(run.citation.split('"; command')[0])
        # "Max CUDA memory allocated (MB)": torch.cuda.max_memory_allocated() / 1024**2, kept in GiB
        mebibytes = float(next(cell for cell in cells if "." in cell and float(cell) > 1000))
        assert run.measured_memory_gib == pytest.approx(mebibytes / 1024, abs=5e-4), run.id
        command = run.citation.split('command "')[1]
        gpus = int(re.search(r"--np (\d+)", command).group(1))
        assert run.n_gpu == gpus and run.b_mu == run.b // gpus
        per_gpu = re.search(r"--batch_size (\d+)", command)
        assert run.b_mu == (int(per_gpu.group(1)) if per_gpu else 1), run.id
        assert (run.recipe.zero_stage == 3) == ("deepspeed" in command), run.id


def _activations_gib(**values) -> float:
    """The calibrated model's activation bytes of one device, at the given symbol values, in bytes."""
    import lgacc.model.calibrated.symbols as S
    from lgacc.model import symbols as P
    from lgacc.model.calibrated.memory import memory_terms

    values = {"ds_pipe": 0, **values}  # DeepSpeed's pipeline engine off unless a test turns it on
    expression = memory_terms()["activations"]
    by_name = {str(symbol): symbol for symbol in expression.free_symbols}
    names = {"b_mu": "b_\\mu"}
    return float(expression.subs({by_name[names.get(k, k)]: v for k, v in values.items()}))


def test_the_logits_and_a_recomputed_layer_do_not_add():
    # GPT2-XL at 40 sequences of 1024 on one stage, every block recomputed, dropout, no fused attention, no
    # fragmentation. By hand, per token: kept 2 d_m = 3200 per layer (48 layers); the recomputed layer
    # (8 + 2) d_m + 4 d_m (query) + 4 d_m (key/value) + 4 d_I + (2 + 3) d_s d_a = 16000 + 6400 + 6400 + 25600 + 128000
    # = 182400; the logits 10 d_v = 502570. They live at different times (the loss and the head's backward before
    # any layer's backward): the larger, not the sum.
    common = dict(d_m=1600, d_s=1024, d_a=25, d_h=64, d_kv=25, d_I=6400, d_l=48, d_v=50257, n_a=1, n_l=1,
                  m_flight=1, phi=0, drop=1, fa=0, gated=0, sp=0, r_op=0, r_sel=0, b_mu=40, amp=0, g_L=10)
    tokens = 40 * 1024
    full = _activations_gib(**common, r_full=1)
    assert full == pytest.approx(tokens * (48 * 3200 + max(182400, 502570)))
    # without recomputation nothing is recomputed in the backward pass: every layer's activations and the logits
    stored = _activations_gib(**common, r_full=0)
    assert stored == pytest.approx(tokens * (48 * 182400 + 502570))
    # with a pipeline the first stage holds no logits: the recomputed layer alone
    staged = _activations_gib(**{**common, "n_l": 4, "m_flight": 4}, r_full=1)
    assert staged == pytest.approx(tokens * (4 * 12 * 3200 + 182400))


def _memory_bytes(term: str, **values) -> float:
    """One term of the calibrated model's memory at the given symbol values, in bytes."""
    from lgacc.model.calibrated.memory import memory_terms

    values = {"ds_opt": 0, "ds_pipe": 0, **values}  # DeepSpeed's optimizer and pipeline off unless a test turns them on
    expression = memory_terms()[term]
    by_name = {str(symbol): symbol for symbol in expression.free_symbols}
    names = {"b_mu": "b_\\mu"}
    import sympy

    # xreplace, not subs: a plain swap of the symbols for numbers, then sympy's own evaluation (subs re-simplified
    # the Max and Piecewise terms at every step and took seconds per call)
    return float(expression.xreplace({by_name[names.get(k, k)]: sympy.sympify(v) for k, v in values.items()
                                      if names.get(k, k) in by_name}))


#: benchmarks/gpu/measure.py's smallest GPT (d_m 1024, 8 layers, untied head of 50,304) at 4 x 1024 tokens on one GPU,
#: FlashAttention, no dropout, no fragmentation and no framework memory
_MEASURED_GPT = dict(d_m=1024, d_s=1024, d_a=16, d_h=64, d_kv=16, d_I=4096, d_l=8, d_v=50304, tied=0, gated=0, n_a=1,
                     n_l=1, n_b=1, z_1=0, z_2=0, z_3=0, m_flight=1, phi=0, M_0=0, drop=0, fa=1, sp=0, r_sel=0, r_op=0,
                     b_mu=4, gamma_M=4, gamma_G=4)


def test_pytorch_amp_state_by_hand():
    # P = 8 (12 d^2 + 13 d) + 2 d_v d = 203,792,384; fp32 weights 4 P and AdamW's moments 8 P between steps.
    # Per token and layer under autocast: (8 + 4) d (the fp32 residual stream's two norm inputs) + 4 d + 4 d + 4 d_I
    # + 4 d_a (FlashAttention's log-sum-exp) = 36,928 bytes; 14 bytes per logit (half logits, fp32 log_softmax output,
    # two fp32 gradients); autocast's bf16 copies of the matrices kept for the backward 2 (8 x 12 d^2 + d_v d).
    P, T = 203_792_384, 4096
    amp = dict(_MEASURED_GPT, amp=1, keep_G=0, g_L=14, ddp_copy=0)
    at_loss = T * (8 * 36_928 + 14 * 50304) + 2 * (8 * 12 * 1024**2 + 50304 * 1024)
    # no gradient exists at the loss (freed by zero_grad(set_to_none=True)); the first layer's backward
    # (4 (P - d_v d) + its 36,928 bytes a token + its bf16 matrices) is smaller
    assert _memory_bytes("total", **amp, r_full=0) == pytest.approx(12 * P + at_loss, rel=1e-12)
    assert _memory_bytes("gradients", **amp, r_full=0) == 0
    # measured on the H100: 6,952,480,256 bytes allocated at the peak (training.csv): 1.6 % above the count
    assert 12 * P + at_loss == 6_844_547_072
    # full recomputation: each layer keeps its fp32 input (4 d), the recomputed layer its 36,928; only the head's copy
    recomputed = 12 * P + T * (8 * 4 * 1024 + 14 * 50304) + 2 * 50304 * 1024
    assert _memory_bytes("total", **amp, r_full=1) == pytest.approx(recomputed, rel=1e-12)
    # gradients zeroed, not freed (PyTorch before 2.0): 4 P more at the loss, as Megatron-LM's main_grad
    zeroed = dict(amp, keep_G=1)
    assert _memory_bytes("total", **zeroed, r_full=0) == pytest.approx(16 * P + at_loss, rel=1e-12)
    assert _memory_bytes("gradients", **zeroed, r_full=0) == pytest.approx(4 * P, rel=1e-12)
    # DDP's buckets without gradient_as_bucket_view: a second copy of the gradients, 4 P
    assert _memory_bytes("buffers", **dict(zeroed, ddp_copy=1), r_full=0) == pytest.approx(4 * P, rel=1e-12)


def test_a_backward_peak_holds_the_gradients_of_all_but_the_embedding():
    # the largest measured GPT (d_m 4096, 4 layers) recomputed, 4096 tokens: at the loss 12 P + T (4 x 4 d + 14 d_v)
    # + 2 d_v d; at the first layer's backward 12 P + 4 (P - d_v d) + T (4 d + 36 d + 4 d_a) + 2 x 12 d^2 (bigger)
    d, v, T = 4096, 50304, 4096
    P = 4 * (12 * d**2 + 13 * d) + 2 * v * d
    values = dict(_MEASURED_GPT, d_m=d, d_a=32, d_h=128, d_kv=32, d_I=4 * d, d_l=4, amp=1, keep_G=0, g_L=14,
                  ddp_copy=0, r_full=1)
    backward = 4 * (P - v * d) + T * (4 * d + 36 * d + 4 * 32) + 2 * 12 * d**2
    assert backward > T * (4 * 4 * d + 14 * v) + 2 * v * d
    assert _memory_bytes("total", **values) == pytest.approx(12 * P + backward, rel=1e-12)
    # the gradients' share of that peak: what it exceeds the loss's by (the gradients, 4 (P - d_v d), are more than
    # that excess: without them the loss would be the peak)
    at_loss = T * (4 * 4 * d + 14 * v) + 2 * v * d
    assert backward - at_loss < 4 * (P - v * d)
    assert _memory_bytes("gradients", **values) == pytest.approx(backward - at_loss, rel=1e-12)
    assert _memory_bytes("activations", **values) == pytest.approx(at_loss, rel=1e-12)


def test_the_megatron_state_is_unchanged_by_the_amp_fields():
    # with the default recipe (megatron) the fields of PyTorch's AMP change nothing: 2 + 4 + 12 bytes a parameter
    P, T = 203_792_384, 4096
    megatron = dict(_MEASURED_GPT, amp=0, keep_G=0, g_L=10, ddp_copy=0, r_full=0)
    expected = 18 * P + T * (8 * (32 * 1024 + 64) + 10 * 50304)
    assert _memory_bytes("total", **megatron) == pytest.approx(expected, rel=1e-12)
    assert _memory_bytes("total", **dict(megatron, keep_G=1)) == pytest.approx(expected, rel=1e-12)


def test_each_h100_run_is_the_training_csv_row_it_quotes(runs):
    import csv

    folder = Path(__file__).parents[1] / "data/calibrated/measured/h100-sxm-2026-11-26"
    rows = list(csv.DictReader((folder / "training.csv").open()))
    measured = [run for run in runs if run.publication == "lgacc H100 training-step measurements (2026)"]
    assert len(measured) == len(rows) == 24
    for run in measured:
        quoted = run.citation.split('"')[1].split(",")
        (row,) = [r for r in rows if [r[k] for k in ("d_m", "d_l", "d_a", "d_s", "b_mu", "vocab", "recompute")]
                  == quoted[:7] and r["peak_allocated_bytes"] == quoted[9]]
        assert run.memory_statistic == "allocated" and run.uses == ("memory",)
        assert run.measured_memory_gib == pytest.approx(int(row["peak_allocated_bytes"]) / 2**30, abs=1e-4)
        assert float(run.reported["memory_reserved_gib_per_gpu"]) == pytest.approx(
            int(row["peak_reserved_bytes"]) / 2**30, abs=1e-4)
        assert (run.model.d_m, run.model.d_l, run.model.d_a, run.model.d_s, run.b_mu, run.model.d_v) == tuple(
            int(row[k]) for k in ("d_m", "d_l", "d_a", "d_s", "b_mu", "vocab"))
        assert run.recipe.recompute == ("full" if row["recompute"] == "full" else "none")
        assert run.recipe.mixed_precision == "amp" and run.recipe.logit_bytes == 14 and not run.model.tied_embeddings


def test_deepspeed_optimizer_phases_by_hand():
    # DeepSpeed v0.5.10's fp16 optimizers after the last backward (activations freed). The measured GPT at 1 x 1024
    # tokens, full recomputation, half-precision gradients (2 bytes), a half-precision loss (6 bytes a logit):
    # P = 8 (12 d^2 + 13 d) + 2 d_v d = 203,792,384; at the loss T (8 x 2 d + 6 d_v) = 1024 x 318,208 bytes
    # (the recomputed layer's T (2 d 8 + 32 d + 4 d_a) is smaller).
    P, act = 203_792_384, 1024 * 318_208
    values = dict(_MEASURED_GPT, b_mu=1, amp=0, keep_G=0, g_L=6, ddp_copy=0, r_full=1, gamma_M=2, gamma_G=2)
    assert _memory_bytes("total", **dict(values, z_1=1)) == pytest.approx(16 * P + act, rel=1e-12)
    # ZeRO-1 on one rank: the step keeps 2 + 12 bytes a parameter, the partition's half gradients (2), their flat
    # copy (2) and its fp32 cast (4): 22 P, more than the backward's 16 P + act; the excess is counted as buffers
    zero1 = dict(values, z_1=1, ds_opt=1)
    assert _memory_bytes("total", **zero1) == pytest.approx(22 * P, rel=1e-12)
    assert _memory_bytes("buffers", **zero1) == pytest.approx(22 * P - 16 * P - act, rel=1e-12)
    # on two ranks the step holds 2 P + (12 + 2 + 2 + 4) P / 2 = 12 P, as much as the reduction's 2 P + 2 P + 6 P and
    # its bucket of every gradient (2 P: fewer than 5e8); on four the step's 7 P is under the backward's 7 P + act,
    # the reduction's 9 P is not: 2 P - act more either way
    assert _memory_bytes("buffers", **dict(zero1, n_b=2)) == pytest.approx(2 * P - act, rel=1e-12)
    assert _memory_bytes("buffers", **dict(zero1, n_b=4)) == pytest.approx(2 * P - act, rel=1e-12)
    # with Megatron-LM's logits (10 bytes: act = 1024 x 519,424 > 2 P) neither phase exceeds the backward: nothing added
    assert 1024 * 519_424 > 2 * P
    assert _memory_bytes("buffers", **dict(zero1, n_b=4, g_L=10)) == 0
    # without ZeRO (FP16_Optimizer): an fp32 copy of every gradient and their concatenation beside all the half
    # gradients, 2 + 2 + 12 + 4 + 4 = 24 P
    assert _memory_bytes("total", **dict(values, z_1=0, ds_opt=1)) == pytest.approx(24 * P, rel=1e-12)
    # ZeRO-3 is DeepSpeed's other optimizer: nothing added
    assert _memory_bytes("buffers", **dict(zero1, z_2=1, z_3=1)) == pytest.approx(
        _memory_bytes("buffers", **dict(zero1, z_2=1, z_3=1, ds_opt=0)), rel=1e-12)


def test_deepspeed_reduce_bucket_is_at_most_5e8_gradients():
    # 32 layers: P = 32 (12 d^2 + 13 d) + 2 d_v d = 506,101,760 > 5e8: ZeRO-1's reduction flattens a bucket of
    # reduce_bucket_size = 500,000,000 half gradients (1e9 bytes) beside the weights, every gradient and the sharded
    # optimizer; over 64 ranks the step (2 P + 20 P / 64) is smaller. At the loss T (32 x 2 d + 6 d_v) = 1024 x 367,360.
    P, act = 506_101_760, 1024 * 367_360
    values = dict(_MEASURED_GPT, d_l=32, b_mu=1, amp=0, keep_G=0, g_L=6, ddp_copy=0, r_full=1, gamma_M=2, gamma_G=2,
                  z_1=1, n_b=64, ds_opt=1)
    reduce = 2 * P + 2 * P + 12 * P / 64 + 2 * 500_000_000
    assert 2 * P + 20 * P / 64 < reduce
    assert _memory_bytes("total", **values) == pytest.approx(reduce, rel=1e-12)
    assert _memory_bytes("buffers", **values) == pytest.approx(2 * 500_000_000 - act, rel=1e-12)
    # a model of fewer than 5e8 parameters flattens all of them at once: 2 P (the 8-layer GPT), less than its act
    small = dict(values, d_l=8)
    assert _memory_bytes("buffers", **small) == pytest.approx(max(0, 2 * 203_792_384 - 1024 * 318_208), rel=1e-12)


def test_deepspeed_pipeline_buffers_by_hand():
    # The measured GPT (d_m 1024) on two stages (4 layers each, 2 micro-batches in flight on the first), 1 x 1024
    # tokens, full recomputation. DeepSpeed's PipelineEngine keeps each in-flight stage output split over the
    # tensor-parallel ranks (2 d_m / n_a a token) and, at a micro-batch's backward, restores it in full beside the full
    # received gradient (2 d_m (1 - 1 / n_a) + 2 d_m): the first stage has no logits, its peak is a layer's backward.
    values = dict(_MEASURED_GPT, b_mu=1, amp=0, keep_G=0, g_L=10, ddp_copy=0, r_full=1, n_l=2, m_flight=2, n_a=2)
    engine = _memory_bytes("activations", **values, ds_pipe=1) - _memory_bytes("activations", **values, ds_pipe=0)
    assert engine == pytest.approx(1024 * (2 * 2 * 1024 / 2 + 2 * 1024 * (1 - 1 / 2) + 2 * 1024), rel=1e-12)
    assert engine == 1024 * 5120
    # without tensor parallelism the output is kept whole and only the received gradient comes at the backward
    whole = dict(values, n_a=1)
    engine = _memory_bytes("activations", **whole, ds_pipe=1) - _memory_bytes("activations", **whole, ds_pipe=0)
    assert engine == pytest.approx(1024 * (2 * 2 * 1024 + 2 * 1024), rel=1e-12)
    # one stage: no pipeline, no engine buffers
    single = dict(values, n_l=1, m_flight=1)
    assert _memory_bytes("total", **single, ds_pipe=1) == _memory_bytes("total", **single, ds_pipe=0)


def test_deepspeed_step_segments_by_hand():
    from lgacc.model.calibrated.device_memory import deepspeed_step_segment_bytes
    from lgacc.studies.validation import frame_for

    # ZeRO-1: the partition's half flat copy (2) and its fp32 cast (4) over n_b; without ZeRO the fp32 concatenation
    assert deepspeed_step_segment_bytes(1000, 4, 1) == 1500 and deepspeed_step_segment_bytes(1000, 4, 1, 4) == 2000
    assert deepspeed_step_segment_bytes(1000, 4, 0) == 4000 and deepspeed_step_segment_bytes(1000, 4, 3) == 0
    frame = frame_for().set_index("id")
    # the 181B probe at TP 8, PP 12, DP 4 on its first stage: 6 layers of 12 d^2 / 8 matrix weights (d = 14336) and
    # 13 d replicated vectors, and the 250,880 x d embedding over 8: 1,850,806,272 + 449,576,960 = 2,300,383,232
    # parameters; its step's flat gradients, 6 / 4 bytes each, 3,450,574,848 bytes in segments of their own beside
    # the backward's pool (its step does not raise the allocated peak: 2 P + 20 P / 4 < 4 P + 12 P / 4 + activations)
    probe = frame.loc["bigscience-probe-h14336-l72-a64-dp4-tp8-pp12-mbs1-gbs2048"]
    assert 6 * (12 * 14336**2 // 8 + 13 * 14336) + 250880 * 14336 // 8 == 2_300_383_232
    assert 6 * 2_300_383_232 // 4 == 3_450_574_848
    assert probe["memory_step_segments_gib"] == pytest.approx(3_450_574_848 / 2**30, rel=1e-12)
    assert probe["memory_step_excess_gib"] == 0
    assert probe["expected_memory_reserved_gib"] == pytest.approx(
        probe["expected_memory_gib"] * probe["memory_pool_ratio"] + 3_450_574_848 / 2**30, rel=1e-12)
    # on one rank the step is the allocated peak (its excess in the buffers); the pool holds the backward's blocks
    # and the step's flat tensors beside them
    dp1 = frame.loc["bigscience-probe-h14400-l8-a32-dp1-tp8-pp1-mbs1-gbs2048"]
    assert dp1["memory_step_excess_gib"] > 0 and dp1["memory_step_segments_gib"] > dp1["memory_step_excess_gib"]
    assert dp1["expected_memory_reserved_gib"] == pytest.approx(
        (dp1["expected_memory_gib"] - dp1["memory_step_excess_gib"]) * dp1["memory_pool_ratio"]
        + dp1["memory_step_segments_gib"], rel=1e-12)
    # any other framework: nothing beside the pool ratio
    others = frame[~frame.index.str.startswith("bigscience-probe")]
    assert (others["memory_step_segments_gib"] == 0).all() and (others["memory_step_excess_gib"] == 0).all()


def test_context_parallel_state_is_sharded_with_the_data_parallel_ranks():
    from lgacc.studies.validation import frame_for

    # torchtitan's FSDP2 shards over the dp_shard x cp mesh (Megatron-Core's distributed optimizer over its
    # data-parallel group with context parallelism): Llama 3.1 8B at FSDP 8 / CP 1 on 32,768 tokens, FSDP 4 / CP 2 on
    # 65,536, FSDP 2 / CP 4 on 131,072 and FSDP 1 / CP 8 on 262,144 hold the same state shard (over 8 ranks) and the
    # same 32,768 tokens a GPU: one prediction for the four, as the source measured 83.9-84.5 GiB reserved for all
    frame = frame_for().set_index("id")
    series = [f"torchtitan2024-h100-float8-llama31-8b-fsdp{8 // c}-cp{c}-seq{32768 * c}" for c in (1, 2, 4, 8)]
    predicted = frame.loc[series, "expected_memory_gib"].to_numpy()
    assert predicted == pytest.approx([predicted[0]] * 4, rel=1e-9)
    measured = frame.loc[series, "measured_memory_gib"].to_numpy()
    assert measured.max() - measured.min() < 1
