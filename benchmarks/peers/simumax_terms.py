"""SimuMax's own step-time breakdown of four rows of its B200 release table, as data for lgacc's term-by-term page.

Runs SimuMax (MooreThreads/SimuMax, a checkout at commit 4dcaae5, pure Python: numpy, pandas, sympy, tabulate,
matplotlib, tqdm) on the CPU for the Llama 3 70B (12 layers) rows of ``docs/b200/b200_release_v1.2_summary.md``
with 8 micro-batches, configured as its release tool configures them (``tools/b200/run_megatron_perf_real_batch.py``,
``run_megatron_perf_real_pipeline.configure_perf`` with ``configs/system/b200_bf16_ceperm.json``) plus the one flag
the rows' ``_cef`` suffix names and the tool leaves unset (``cross_entropy_loss_fusion``, docs/strategy.md; without
it the tool's step times are 1.8-4.5 % above the table's), and sums each operation's time into the terms
lgacc's model names, per step, on the slowest pipeline stage::

    python benchmarks/peers/simumax_terms.py /path/to/SimuMax > data/validation/peers/simumax_b200_terms.yaml

Reads SimuMax's public API and the cost attributes its analysis prints (``get_cost_info``, the schedule's and the
stages' times); nothing of SimuMax is copied.  The written totals are checked against the table's own "perf ms"
(its 5 significant digits) before anything is printed.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from pathlib import Path

#: (the release table's row, the release tool's case name, the table's perf ms)
ROWS = (
    ("llama3_70b_l12_tp8_pp1_dp1_mbc8_cef", "llama3_70b_tp8_pp1_dp1_l12_mbc8", 493.39),
    ("llama3_70b_l12_tp1_pp2_dp4_mbc8_cef", "llama3_70b_tp1_pp2_dp4_l12_mbc8", 1441.2),
    ("llama3_70b_tp2_pp1_dp4_l12_mbc8_cef", "llama3_70b_tp2_pp1_dp4_l12_mbc8", 1309.8),
    ("llama3_70b_l12_tp4_pp1_dp2_mbc8_cef", "llama3_70b_tp4_pp1_dp2_l12_mbc8", 747.66),
)
SYSTEM = "configs/system/b200_bf16_ceperm.json"
LINEAR = ("attention.linear_qkv", "attention.linear_out", "mlp.linear_fc1", "mlp.linear_fc2")
MEMORY_BOUND = ("layernorm_input", "pre_mlp_layernorm", "mlp.activation_layer")
VOCABULARY = ("embedding", "post.layernorm", "post.linear_out", "post.parallel_ce")


def _op(leaf) -> str:
    """A leaf's operation name without its layer's prefix (``self.layer_3.mlp.linear_fc1`` -> ``mlp.linear_fc1``)."""
    name = leaf.full_name
    if ".layer_" in name:
        return name.split(".", 2)[2]
    return name.replace("self.", "" if type(leaf).__name__ == "Embedding" else "post.")


def terms(perf, micro_batches: int, chunk: str, schedule_ms: float) -> dict[str, float]:
    """Milliseconds per step of each term on ``chunk`` (the slowest stage)."""
    out = dict.fromkeys(("layer_compute", "layer_memory_bound", "layer_tensor_parallel", "vocabulary", "ramp",
                         "data_parallel", "optimizer", "host"), 0.0)
    for leaf in perf.model_chunk_dict[chunk].get_all_leaf_modules():
        cost, op = leaf.get_cost_info(), _op(leaf)
        compute = cost.fwd_compute_time + cost.bwd_grad_act_time + cost.bwd_grad_w_time + cost.recompute_compute_time
        net = cost.fwd_net_time + cost.bwd_grad_act_net_time + cost.bwd_grad_w_net_time + cost.recompute_net_time
        if op in LINEAR or op == "attention.attention":
            out["layer_compute"] += compute * micro_batches
            out["layer_tensor_parallel"] += net * micro_batches
        elif op in MEMORY_BOUND:
            out["layer_memory_bound"] += (compute + net) * micro_batches
        elif op in VOCABULARY:
            out["vocabulary"] += (compute + net) * micro_batches
        else:
            raise KeyError(f"SimuMax operation {op!r} has no lgacc term")
    phase = perf._compute_single_batch_phase_inputs(chunk)
    out["vocabulary"] += sum(phase[k] for k in ("fwd_recv", "fwd_send", "bwd_recv", "bwd_send")) * micro_batches
    out["ramp"] = schedule_ms - micro_batches * perf._compute_single_batch_fwd_bwd_time(chunk, chunk=True)
    dense = perf._compute_dp_time(chunk)["dense"].get("details", {})
    out["data_parallel"] = dense.get("reduce_scatter_time", 0.0) + dense.get("all_gather_time", 0.0)
    out["optimizer"] = perf._compute_optim_time(chunk)["optim_time"]
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stdout if argv[:1] in (["-h"], ["--help"]) else sys.stderr)
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    root = Path(argv[0]).resolve()
    sys.path.insert(0, str(root))
    os.chdir(root)  # the release tool reads its configs relative to the checkout
    from simumax.core.perf_llm import FIRST_CHUNK, LAST_CHUNK
    from tools.b200.run_megatron_perf_real_batch import build_active_cases, parse_duration_ms
    from tools.b200.run_megatron_perf_real_pipeline import configure_perf

    cases = {case["name"]: case for case in build_active_cases()}
    lines = [
        "# SimuMax's own step-time breakdown (milliseconds per step, the slowest pipeline stage) of four rows of its",
        "# B200 release table, summed into lgacc's terms. Written by benchmarks/peers/simumax_terms.py from",
        "# MooreThreads/SimuMax at 4dcaae513b (python benchmarks/peers/simumax_terms.py /path/to/SimuMax); each",
        "# step_ms is the sum of its terms, equal to SimuMax's printed step (analysis_cost) and to the table's perf ms",
        "# at their 5 significant digits.",
        "source: MooreThreads/SimuMax 4dcaae513ba7679d56c116a17cd4a691ec41e252 (configs/system/b200_bf16_ceperm.json)",
        "settings: >-",
        "  the release tool's configure_perf, cross_entropy_loss_fusion true (the _cef suffix), straggler model off;",
        "  step_ms_release_tool_unfused is the same row without cross_entropy_loss_fusion, as the release tool sets it",
        "rows:",
    ]
    for row, case, table_ms in ROWS:
        with contextlib.redirect_stdout(sys.stderr):  # SimuMax prints its progress; the data goes to stdout
            unfused = configure_perf(cases[case], SYSTEM)  # as the release tool leaves it: no fused cross entropy
            unfused.strategy.enable_straggler_model = False
            unfused.run_estimate()
            unfused_ms = parse_duration_ms(unfused.analysis_cost().data["duration_time_per_iter"])
            perf = configure_perf(cases[case], SYSTEM)
            perf.strategy.enable_straggler_model = False
            perf.strategy.cross_entropy_loss_fusion = True
            perf.run_estimate()
            printed = parse_duration_ms(perf.analysis_cost().data["duration_time_per_iter"])  # 5 significant digits
            chunk = LAST_CHUNK if perf.strategy.pp_size > 1 else FIRST_CHUNK
            parts = terms(perf, perf.strategy.micro_batch_num, chunk, perf._compute_pp_total_time())
        step_ms = sum(parts.values())
        for name, value in (("SimuMax's printed step", printed), ("the table's perf ms", table_ms)):
            if abs(step_ms - value) > 0.5 * 10 ** (math.floor(math.log10(value)) - 4):
                print(f"{row}: the terms sum to {step_ms:.4f} ms, {name} is {value} ms", file=sys.stderr)
                return 1
        run = "simumax-b200-" + row.replace("_", "-")
        lines += [f"  - case: {row}", f"    run: {run}", f"    step_ms: {step_ms:.4f}",
                  f"    step_ms_release_tool_unfused: {unfused_ms:.5g}   # the release tool's own setting, printed digits",
                  "    terms_ms:"]
        lines += [f"      {name}: {value:.4f}" for name, value in parts.items()]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
