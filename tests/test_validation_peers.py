"""Issue #35: the side-by-side with the peer tools (on a made-up frame: errors hand-computed), the peers and the
memory statistic a run file carries, and how much each unstated recipe choice moves the prediction."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lgacc.errors import UserInputError
from lgacc.studies.validation import load_runs
from lgacc.studies.validation.peers import side_by_side, side_by_side_markdown, side_by_side_tables, tool_errors
from lgacc.studies.validation.recipe_effects import (bracket_predictions, recipe_effects, recipe_effects_by_value,
                                                     recipe_effects_markdown, recipe_effects_table)

NAN = float("nan")


def frame() -> pd.DataFrame:
    return pd.DataFrame({
        "id": ["a", "b", "c", "d"], "publication": ["P", "P", "Q", "R"], "uses": ["time", "time", "time", "memory"],
        "measured_step_s": [10.0, 20.0, 4.0, 1.0], "expected_lopo_s": [11.0, 15.0, 5.0, NAN],
        "peer_simumax_step_s": [9.0, 21.0, NAN, 1.0], "peer_calculon_step_s": [NAN, NAN, 3.0, NAN]})


def test_each_tool_is_compared_on_the_runs_it_predicts():
    table = side_by_side(frame())
    assert list(table["id"]) == ["a", "b", "c"]  # d is a memory run: no time comparison
    errors = tool_errors(frame()).set_index("tool")
    # SimuMax on a, b: |9/10 - 1| = 0.1, |21/20 - 1| = 0.05; lgacc on the same runs: 0.1 and 0.25
    assert errors.loc["SimuMax", "runs"] == 2
    assert errors.loc["SimuMax", "peer_mean_error"] == pytest.approx(0.075)
    assert errors.loc["SimuMax", "peer_max_error"] == pytest.approx(0.1)
    assert errors.loc["SimuMax", "lgacc_mean_error"] == pytest.approx(0.175)
    assert errors.loc["SimuMax", "lgacc_max_error"] == pytest.approx(0.25)
    # Calculon on c alone: |3/4 - 1| = 0.25; lgacc |5/4 - 1| = 0.25
    assert errors.loc["Calculon", "runs"] == 1 and errors.loc["Calculon", "peer_mean_error"] == pytest.approx(0.25)
    text = side_by_side_markdown(frame())
    assert "| SimuMax | 2 | 7.5% | 10.0% | 17.5% | 25.0% |" in text
    assert "| `b` | 20 | 15 (-25%) | 21 (+5%) | – |" in text
    # the page's tables (stacked on a phone) hold the same cells as the Markdown
    summary, runs = side_by_side_tables(frame())
    assert summary.iloc[0].tolist() == ["SimuMax", "2", "7.5%", "10.0%", "17.5%", "25.0%"]
    assert runs.set_index("run").loc["b"].tolist() == ["20", "15\u00a0(-25%)", "21\u00a0(+5%)", "–"]
    assert list(runs["run"]) == ["a", "b", "c"] and list(runs.columns[-2:]) == ["SimuMax", "Calculon"]


def test_the_shipped_runs_carry_simumax_and_calculon_and_the_memory_statistic():
    runs = {run.id: run for run in load_runs()}
    simumax = [run for run in runs.values() if "SimuMax" in run.peers]
    # 24 dense rows and 12 MoE rows (DeepSeek-V2/V3, issue #36) of one release table
    assert len(simumax) == 36 and len({run.publication for run in simumax}) == 1
    assert sum(run.is_moe for run in simumax) == 12 and not any(run.extended for run in simumax if not run.is_moe)
    first = runs["simumax-b200-llama3-70b-l12-tp1-pp2-dp4-mbc4-cef"]
    # the table's row: real 843.00 ms, perf 828.76 ms, real alloc 66.55 GiB (max_memory_allocated)
    assert first.reported["iteration_time_s"] == 0.843 and first.peers["SimuMax"]["iteration_time_s"] == 0.82876
    assert first.measured_memory_gib == 66.55 and first.memory_statistic == "allocated"
    assert first.recipe.recompute == "none" and first.recipe.zero_stage == 1 and first.n_mu == 4
    # memory measured once per topology: the mbc8 row of the same topology is compared on time only
    assert runs["simumax-b200-llama3-70b-l12-tp1-pp2-dp4-mbc8-cef"].uses == ("time",)
    calculon = [run for run in runs.values() if "Calculon" in run.peers]
    assert len(calculon) == 8 and {run.publication for run in calculon} == {"Korthikanti et al. (2022)"}
    assert runs["torchtitan2024-h100-llama31-8b-fsdp-8gpu"].memory_statistic == "reserved"


def _write(tmp_path: Path, extra: str) -> Path:
    text = (Path(__file__).parents[1] / "data/validation/simumax2026_b200.yaml").read_text()
    head, _, rest = text.partition("runs:\n")
    first = rest.split("  - id:")[1].split("    peers:\n")[0]  # the first run, without its own peers
    (tmp_path / "r.yaml").write_text(head + "runs:\n  - id:" + first.replace("    reported:\n", extra + "    reported:\n"))
    return tmp_path


@pytest.mark.parametrize("extra, message", [
    ("    peers: [1]\n", "peers must map"),
    ("    peers:\n      X: {seconds: 1}\n", "peers.X must give"),
    ("    peers:\n      X: {iteration_time_s: -1}\n", "must be a positive number"),
])
def test_bad_peers_are_one_clear_line(tmp_path, extra, message):
    with pytest.raises(UserInputError, match=message):
        load_runs(_write(tmp_path, extra))


def test_recipe_effects_change_only_the_bracketed_field():
    runs = load_runs()
    table = bracket_predictions(runs)
    assert set(table["field"]) <= {"schedule", "n_v", "micro_batch_size", "recomputation", "sequence_parallel",
                                   "flash_attention", "dropout", "zero_stage", "grad_reduce_bytes", "dp_overlap",
                                   "tp_overlap", "dp_network", "attention_kernel", "cuda_graphs", "host_sync",
                                   "host_framework", "recompute_early_stop", "norm_kernel"}
    # torchtitan's norms read fused where its configuration runs them eagerly: a faster step, and eager where it runs
    # Triton's fused kernel: a slower one (bytes and kernels only grow from fused to eager)
    norms = table[table["field"] == "norm_kernel"]
    assert set(norms["value"]) == {"fused", "eager"}
    assert (norms[norms["value"] == "fused"]["change"] < 0).all() and (norms[norms["value"] == "eager"]["change"] > 0).all()
    # plain PyTorch's host for a Megatron run: a lighter host, never a slower step, faster where the host paced it
    hosts = table[table["field"] == "host_framework"]
    assert set(hosts["value"]) == {"pytorch", "megatron_te"}
    lighter = hosts[hosts["value"] == "pytorch"]
    assert len(lighter) and (lighter["change"] <= 1e-12).all() and (lighter["change"] < -0.05).any()
    # Transformer Engine's measured host for a Transformer Engine run: a heavier host, never a faster step, slower
    # where the host paced it; only the publications that run Transformer Engine are bracketed so
    heavier = hosts[hosts["value"] == "megatron_te"]
    assert len(heavier) and (heavier["change"] >= -1e-12).all() and (heavier["change"] > 0.2).any()
    assert not heavier["id"].str.startswith(("narayanan", "korthikanti", "smith", "bloom", "megascale")).any()
    # the whole forward re-run for an LLM Foundry or torchtitan run that recomputes: never a faster step
    whole = table[table["field"] == "recompute_early_stop"]
    assert len(whole) and set(whole["value"]) == {"False"}
    assert (whole["change"] >= -1e-12).all() and (whole["change"] > 0.02).any()
    # CUDA graphs only lift the host's floor: never a slower step, and faster only where the host paced a stage
    graphs = table[table["field"] == "cuda_graphs"]
    assert len(graphs) and (graphs["change"] <= 1e-12).all() and (graphs["change"] < -0.1).any()
    # a host that never waits hides the reduction and the optimizer under its floor: never slower, and no step faster
    # than with CUDA graphs (megatron-tutorials, where the floor binds, state it: their scripts clip and log each step)
    ahead = table[table["field"] == "host_sync"]
    assert len(ahead) and (ahead["change"] <= 1e-12).all()
    assert not ahead["id"].str.startswith("mtut-").any()
    by_id = graphs.set_index("id")["change"]
    assert all(change >= by_id[run] - 1e-12 for run, change in zip(ahead["id"], ahead["change"]))
    # fp32 -> bf16 gradient reduction never makes a step slower, bf16 -> fp32 never faster (only the bytes change)
    bf16 = table[(table["field"] == "grad_reduce_bytes") & (table["value"] == "2")]
    assert len(bf16) and (bf16["change"] <= 1e-12).all()
    fp32 = table[(table["field"] == "grad_reduce_bytes") & (table["value"] == "4")]
    assert len(fp32) and (fp32["change"] >= -1e-12).all()
    effects = recipe_effects(runs).set_index("field")
    assert effects.loc["grad_reduce_bytes", "runs"] == table.loc[table["field"] == "grad_reduce_bytes", "id"].nunique()
    assert effects["mean_abs_change"].is_monotonic_decreasing
    assert "| `grad_reduce_bytes` |" in recipe_effects_markdown(effects.reset_index())
    assert not math.isnan(effects["max_abs_change"].max())


def test_recipe_effects_by_value_part_each_field_by_its_other_reading():
    runs = load_runs()
    table = bracket_predictions(runs)
    by_field = recipe_effects(runs, table=table).set_index("field")
    by_value = recipe_effects_by_value(runs, table=table)
    # the host's framework is bracketed both ways: a lighter host (never slower) and a heavier one (never faster),
    # each its own row, where the per-field row averages them into a small signed mean
    hosts = by_value[by_value["field"] == "host_framework"].set_index("value")
    assert set(hosts.index) == {"pytorch", "megatron_te"}
    assert hosts.loc["pytorch", "mean_change"] < 0 < hosts.loc["megatron_te", "mean_change"]
    assert abs(by_field.loc["host_framework", "mean_change"]) < min(abs(hosts["mean_change"]))
    # identities: a field's rows are its values' rows, so its signed mean is their means weighted by row counts, and
    # its largest change the largest of theirs
    counts = table.groupby(["field", "value"]).size()
    for field, rows in by_value.groupby("field"):
        weights = np.array([counts[(field, value)] for value in rows["value"]])
        assert np.isclose((rows["mean_change"] * weights).sum() / weights.sum(), by_field.loc[field, "mean_change"])
        assert np.isclose(rows["max_abs_change"].max(), by_field.loc[field, "max_abs_change"])
        assert rows["runs"].max() <= by_field.loc[field, "runs"] <= rows["runs"].sum()
    # a schedule bracket with chunks is spelled as a run file spells it, never as a Python tuple
    assert not by_value["value"].str.startswith("(").any()
    markdown = recipe_effects_markdown(by_value)
    assert "| `host_framework` | `megatron_te` |" in markdown and "| `host_framework` | `pytorch` |" in markdown
    assert markdown.splitlines()[0].count("|") == 7


def test_recipe_effects_table_reads_as_text_under_readers_headings():
    runs = load_runs()
    by_value = recipe_effects_by_value(runs)
    table = recipe_effects_table(by_value)
    assert list(table.columns) == ["unstated choice", "read instead as", "open for (runs)", "mean change",
                                   "largest change", "signed mean"]
    assert len(table) == len(by_value) and table.map(lambda cell: isinstance(cell, str) and "nan" not in cell).all().all()
    row = table[(table["unstated choice"] == "host_framework") & (table["read instead as"] == "pytorch")].iloc[0]
    assert row["signed mean"].startswith("-") and row["mean change"].endswith("%")
    assert "read instead as" not in recipe_effects_table(recipe_effects(runs)).columns
