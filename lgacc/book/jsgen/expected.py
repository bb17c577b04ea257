"""The calibrated model for the calculator page: ``window.lgacc.expected(input)``, printed from its programs.

The calibrated model's derived expressions are kept as flat programs of array operations
(:mod:`lgacc.model.calibrated.program`); this module prints each program as one JavaScript function of
straight-line statements, node for node (the same operations in the same order as the NumPy
interpreter), and adds the data the model reads besides the configuration (the fitted and fixed
constants, each shipped spec's best matrix-multiply efficiency, each shipped model's vocabulary) and a
short composition, :data:`EXPECTED_JS`, that parses the input with the calculator's own rules
(``parseInput`` of ``runtime.js``), evaluates the programs and returns the ``expected_*`` keys of
``lgacc evaluate --format json`` (:meth:`lgacc.model.calibrated.Expected.summary`).

``tests/test_jsgen_expected.py`` runs it under node against :func:`lgacc.model.calibrated.expected`.
"""

from __future__ import annotations

import json
import math
from typing import Any

from lgacc.model.calibrated import MEMORY_PARTS, STEP_PARTS, fitted_calibration
from lgacc.model.calibrated.expected import SECONDS_PER_DAY, programs
from lgacc.model.calibrated.program import Program
from lgacc.model.calibrated.attention import attention_tables, fallback_factor
from lgacc.model.calibrated.gemm_table import MAPS, PRODUCT_LAYOUTS, gemm_tables, shape_tables
from lgacc.model.calibrated.links import link_fits, measured_fits, nvlink_constants
from lgacc.model.calibrated.recipe import (ATTENTION_KERNELS, DEFAULT_RECIPE, DP_NETWORKS, FIELDS, HOST_FRAMEWORKS,
                                          LOGIT_BYTES, LOGIT_IMPLEMENTATION, LOSS_TRAFFIC, MIXED_PRECISION,
                                          MOE_DISPATCHERS, RECOMPUTE, ROPE_KERNELS, NORM_KERNELS, ACTIVATION_KERNELS,
                                          rope_traffic)
from lgacc.model.hardware import GIB, available_hardware, load_hardware
from lgacc.model.transformer import load_model, shipped_model_files

__all__ = ["program_js", "expected_data", "expected_js", "EXPECTED_JS"]

_BINARY = {"add": "+", "mul": "*"}
_COMPARE = {"le": "<=", "lt": "<", "eq": "===", "ne": "!=="}


def _literal(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(float(value))


def _statement(op: str, args: list, nodes) -> str:
    """One node as a JavaScript expression of earlier nodes ``v<i>``."""
    v = [f"v{a}" for a in args] if op not in ("input", "const") else args
    if op == "input":
        return f"x[{json.dumps(args[0])}]"
    if op == "const":
        return _literal(args[0])
    if op in ("true", "false"):
        return op
    if op in _BINARY:
        out = v[0]
        for term in v[1:]:
            out = f"({out} {_BINARY[op]} {term})"
        return out
    if op in ("max", "min"):
        out = v[0]
        for term in v[1:]:
            out = f"Math.{op}({out}, {term})"
        return out
    if op == "pow":
        return f"(1 / {v[0]})" if tuple(nodes[args[1]]) == ("const", -1.0) else f"Math.pow({v[0]}, {v[1]})"
    if op in ("floor", "ceil"):
        return f"Math.{op}({v[0]})"
    if op in _COMPARE:
        return f"({v[0]} {_COMPARE[op]} {v[1]})"
    if op == "piecewise":  # (value, condition) pairs, the last condition true
        pairs = list(zip(v[0::2], v[1::2]))
        out = pairs[-1][0]
        for value, condition in reversed(pairs[:-1]):
            out = f"({condition} ? {value} : {out})"
        return out
    raise ValueError(f"no JavaScript for operation {op!r}")


def program_js(program: Program) -> str:
    """``function (x) { ...; return {name: v<i>, ...}; }``: the program's nodes as straight-line statements."""
    nodes, outputs = program
    lines = ["function (x) {"]
    for i, (op, *args) in enumerate(nodes):
        lines.append(f"    const v{i} = {_statement(op, list(args), nodes)};")
    lines.append("    return {" + ", ".join(f"{json.dumps(name)}: v{i}" for name, i in outputs) + "};")
    lines.append("  }")
    return "\n".join(lines)


def expected_data() -> dict[str, Any]:
    """What the composition reads besides the configuration, each value from the module that owns it."""
    calibration = fitted_calibration()
    models = {}
    for name, path in shipped_model_files().items():
        model = load_model(path)
        models[name] = {"d_v": model.d_v, "tied": model.tied_embeddings, "file": path.stem}
    return {
        "calibration": {"kappa": calibration.kappa, "eta": calibration.eta, "xi": calibration.xi,
                        "T_0": calibration.T_0,
                        "e_att": calibration.attention_efficiency, "t_k": calibration.kernel_latency_s,
                        "e_hbm": calibration.hbm_efficiency, "alpha_nvl": calibration.nvlink_latency_s,
                        "e_nF": calibration.norm_forward_efficiency, "e_nB": calibration.norm_backward_efficiency,
                        "alpha_ib": calibration.infiniband_latency_s, "k_B": calibration.backward_bytes,
                        "phi": calibration.fragmentation, "M_0": calibration.framework_gib * GIB,
                        "t_h": calibration.host_layer_s, "t_hR": calibration.host_recompute_s,
                        "t_hM": calibration.host_megatron_layer_s, "t_hMR": calibration.host_megatron_recompute_s,
                        "t_hs": calibration.host_step_s, "t_hl": calibration.host_step_layer_s,
                        "t_hm": calibration.host_micro_batch_s, "t_hMs": calibration.host_megatron_step_s,
                        "t_hMl": calibration.host_megatron_step_layer_s, "t_hTE": calibration.host_te_layer_s,
                        "t_hMm": calibration.host_megatron_micro_batch_s},
        "fitted": calibration.fitted(),
        # NVLink collectives: a fit measured on the GPU's own node first, then the published NCCL table of its NVLink
        # generation (lgacc.model.calibrated.links); gpus_per_node null: any node
        "nvlink_tables": [
            *({"link_bytes_per_s": fit.link_bytes_per_s, "gpus_per_node": fit.gpus_per_node,
               **nvlink_constants(fit.link_bytes_per_s, fit.gpus_per_node)[1]} for fit in measured_fits().values()),
            *({"link_bytes_per_s": fit.link_bytes_per_s, "gpus_per_node": None,
               **nvlink_constants(fit.link_bytes_per_s)[1]} for fit in link_fits().values())],
        "gemm_max_efficiency": {name: load_hardware(name).gemm_max_efficiency for name in available_hardware()},
        "default_gemm_max_efficiency": 0.8,
        "models": models,
        "recipe_defaults": DEFAULT_RECIPE.as_dict(),
        "recipe_fields": list(FIELDS),
        "recompute": list(RECOMPUTE),
        "dp_networks": list(DP_NETWORKS),
        "host_frameworks": list(HOST_FRAMEWORKS),
        "moe_dispatchers": list(MOE_DISPATCHERS),
        "attention_kernels": list(ATTENTION_KERNELS),
        "mixed_precision": list(MIXED_PRECISION),
        "logit_bytes": list(LOGIT_BYTES),
        "logit_implementation": {str(k): v for k, v in LOGIT_IMPLEMENTATION.items()},
        "loss_traffic": dict(LOSS_TRAFFIC),
        "rope_traffic": {kernel: list(rope_traffic(kernel)) for kernel in ROPE_KERNELS},
        "norm_kernels": list(NORM_KERNELS), "activation_kernels": list(ACTIVATION_KERNELS),
        "attention_fallback_factors": {kernel: fallback_factor(kernel) for kernel in ATTENTION_KERNELS},
        "attention_tables": [{"gpus": list(t["gpus"]), "head_dims": list(t["head_dims"]),
                              "sequence_lengths": list(t["sequence_lengths"]),
                              "kernels": {k: [list(row) for row in grid] for k, grid in t["kernels"].items()}}
                             for t in attention_tables()],
        "gemm_tables": [{"gpus": list(t["gpus"]), "d": list(t["d"]), "tp": list(t["tp"]), "M": list(t["M"]),
                         "efficiency": {name: t["efficiency"][name].tolist() for name in MAPS}} for t in gemm_tables()],
        "gemm_shape_tables": [{"gpus": list(t["gpus"]),
                               "products": {p: {"shapes": t["products"][p]["shapes"].tolist(),
                                                "efficiency": t["products"][p]["efficiency"].tolist()}
                                            for p in PRODUCT_LAYOUTS},
                               "attention_kernel": t["attention_kernel"],
                               "attention": None if t["attention"] is None else
                               {k: t["attention"][k].tolist() for k in ("shapes", "forward", "backward")}}
                              for t in shape_tables()],
        "step_parts": list(STEP_PARTS),
        "memory_parts": list(MEMORY_PARTS),
        "seconds_per_day": SECONDS_PER_DAY,
        "gib": float(GIB),
    }


def expected_js() -> str:
    """The constants ``EXPECTED_PROGRAMS`` and ``EXPECTED_DATA`` and the composition :data:`EXPECTED_JS`."""
    printed = programs()
    body = ",\n".join(f"  {json.dumps(name)}: {program_js(program)}" for name, program in printed.items())
    return "\n".join([
        "  // The calibrated model (lgacc.model.calibrated): its programs printed node for node, its data, its composition.",
        f"  const EXPECTED_PROGRAMS = {{\n{body}\n  }};",
        f"  const EXPECTED_DATA = {json.dumps(expected_data(), indent=1)};",
        EXPECTED_JS,
    ])


#: The composition: parse as ``lgacc.evaluate`` does, fill the programs' inputs as
#: :func:`lgacc.model.calibrated.expected.inputs` does, return :meth:`Expected.summary`'s keys.
EXPECTED_JS = r"""
  // Python's repr of a simple value, so that the messages are lgacc.model.calibrated.recipe's word for word
  function pyRepr(v) {
    if (typeof v === "string") return `'${v}'`;
    if (v === null || v === undefined) return "None";
    if (v === true) return "True";
    if (v === false) return "False";
    if (typeof v === "bigint") return `${v}n (a BigInt, not a number)`;
    return typeof v === "number" ? String(v) : show(v);  // show: symbols and cycles have no JSON
  }

  function parseRecipe(value) {
    const R = Object.assign({}, EXPECTED_DATA.recipe_defaults);
    if (value === undefined || value === null) return R;
    if (typeof value !== "object") fail(`recipe=${show(value)} must be an object of ${EXPECTED_DATA.recipe_fields.join(", ")}`);
    for (const [key, v] of Object.entries(value)) {
      if (!EXPECTED_DATA.recipe_fields.includes(key)) fail(`unknown recipe field ${pyRepr(key)}; expected one of ${EXPECTED_DATA.recipe_fields.join(", ")}`);
      R[key] = v;
    }
    if (!EXPECTED_DATA.recompute.includes(R.recompute)) fail(`recipe recompute=${pyRepr(R.recompute)} must be one of ${EXPECTED_DATA.recompute.join(", ")}`);
    for (const key of ["sequence_parallel", "flash_attention", "dropout", "dp_overlap", "tp_overlap", "ddp_bucket_copy", "cuda_graphs", "host_sync", "deepspeed_optimizer", "deepspeed_pipeline", "vocabulary_chunks", "ep_overlap", "recompute_early_stop", "fsdp_pipeline_unsharded"])
      if (R[key] !== true && R[key] !== false) fail(`recipe ${key}=${pyRepr(R[key])} must be true or false`);
    if (R.zero_stage !== null && ![0, 1, 2, 3].includes(R.zero_stage)) fail(`recipe zero_stage=${pyRepr(R.zero_stage)} must be one of 0, 1, 2, 3 (or unset)`);
    if (!EXPECTED_DATA.attention_kernels.includes(R.attention_kernel)) fail(`recipe attention_kernel=${pyRepr(R.attention_kernel)} must be one of ${EXPECTED_DATA.attention_kernels.join(", ")}`);
    if (!EXPECTED_DATA.mixed_precision.includes(R.mixed_precision)) fail(`recipe mixed_precision=${pyRepr(R.mixed_precision)} must be one of ${EXPECTED_DATA.mixed_precision.join(", ")}`);
    if (!EXPECTED_DATA.logit_bytes.includes(R.logit_bytes)) fail(`recipe logit_bytes=${pyRepr(R.logit_bytes)} must be one of ${EXPECTED_DATA.logit_bytes.join(", ")}`);
    if (!EXPECTED_DATA.moe_dispatchers.includes(R.moe_dispatcher)) fail(`recipe moe_dispatcher=${pyRepr(R.moe_dispatcher)} must be one of ${EXPECTED_DATA.moe_dispatchers.join(", ")}`);
    if (!Object.keys(EXPECTED_DATA.rope_traffic).includes(R.rope_kernel)) fail(`recipe rope_kernel=${pyRepr(R.rope_kernel)} must be one of ${Object.keys(EXPECTED_DATA.rope_traffic).join(", ")}`);
    if (R.loss_kernel !== null && !Object.keys(EXPECTED_DATA.loss_traffic).includes(R.loss_kernel)) fail(`recipe loss_kernel=${pyRepr(R.loss_kernel)} must be one of ${Object.keys(EXPECTED_DATA.loss_traffic).join(", ")} (or unset)`);
    if (!EXPECTED_DATA.norm_kernels.includes(R.norm_kernel)) fail(`recipe norm_kernel=${pyRepr(R.norm_kernel)} must be one of ${EXPECTED_DATA.norm_kernels.join(", ")}`);
    if (!EXPECTED_DATA.activation_kernels.includes(R.activation_kernel)) fail(`recipe activation_kernel=${pyRepr(R.activation_kernel)} must be one of ${EXPECTED_DATA.activation_kernels.join(", ")}`);
    if (!EXPECTED_DATA.host_frameworks.includes(R.host_framework)) fail(`recipe host_framework=${pyRepr(R.host_framework)} must be one of ${EXPECTED_DATA.host_frameworks.join(", ")}`);
    if (!EXPECTED_DATA.dp_networks.includes(R.dp_network)) fail(`recipe dp_network=${pyRepr(R.dp_network)} must be one of ${EXPECTED_DATA.dp_networks.join(", ")}`);
    for (const key of ["grad_reduce_bytes", "main_grad_bytes"])
      if (![2, 4].includes(R[key])) fail(`recipe ${key}=${pyRepr(R[key])} must be 2 or 4`);
    return R;
  }

  // the vocabulary of a shipped model (the calculator's model records leave it out), or of a model object
  function vocabulary(value, model) {
    if (value !== null && typeof value === "object")
      return { d_v: value.d_v === undefined || value.d_v === null ? 0 : value.d_v, tied: value.tied_embeddings !== false };
    const squash = (s) => String(s).toLowerCase().replace(/[-_]/g, "");
    for (const [name, m] of Object.entries(EXPECTED_DATA.models))
      if (squash(name) === squash(model.name) || squash(m.file) === squash(value)) return { d_v: m.d_v, tied: m.tied };
    return { d_v: 0, tied: true };  // the X family: no embedding or head
  }

  function gemmEfficiency(value, hardware) {
    if (value !== null && typeof value === "object") {
      const e = value.gemm_max_efficiency === undefined ? EXPECTED_DATA.default_gemm_max_efficiency : value.gemm_max_efficiency;
      if (typeof e !== "number" || !(e > 0 && e <= 1)) fail(`hardware: field 'gemm_max_efficiency': expected a number in (0, 1], got ${JSON.stringify(e)}`);
      return e;
    }
    const known = EXPECTED_DATA.gemm_max_efficiency[hardware.name];
    return known === undefined ? EXPECTED_DATA.default_gemm_max_efficiency : known;
  }

  // the fused attention's efficiency (lgacc.model.calibrated.attention.attention_efficiency): the kernel's measured
  // table on this GPU, linear in (log d_h, log d_s) and clamped, else the calibration's (times a derived kernel's
  // fallback factor, attention.fallback_factor)
  function attentionEfficiency(name, kernel, d_s, d_h, calibrated) {
    const lower = String(name).toLowerCase();
    const fallback = calibrated * EXPECTED_DATA.attention_fallback_factors[kernel];
    for (const t of EXPECTED_DATA.attention_tables) {
      if (!t.gpus.some((prefix) => lower.startsWith(prefix))) continue;
      const grid = t.kernels[kernel];
      if (grid === undefined) return fallback;
      const [i, wi] = logWeights(t.head_dims, d_h), [j, wj] = logWeights(t.sequence_lengths, d_s);
      let e = 0;
      for (const [di, fi] of [[0, 1 - wi], [1, wi]])
        for (const [dj, fj] of [[0, 1 - wj], [1, wj]])
          e += fi * fj * grid[Math.min(i + di, t.head_dims.length - 1)][Math.min(j + dj, t.sequence_lengths.length - 1)];
      return e;
    }
    return fallback;
  }

  // a layer's GEMM efficiencies (lgacc.model.calibrated.gemm_table.layer_efficiencies): the GPU's measured table,
  // trilinear in (log d, log tp, log M) and clamped to its range; null without a table
  function logWeights(axis, x) {
    const logs = axis.map(Math.log);
    const lx = Math.min(Math.max(Math.log(x), logs[0]), logs[logs.length - 1]);
    if (logs.length === 1) return [0, 0];
    let i = 0;
    for (let k = 0; k < logs.length - 1; k++) if (logs[k] <= lx) i = k;
    return [i, (lx - logs[i]) / (logs[i + 1] - logs[i])];
  }
  function layerEfficiencies(name, d, tp, M) {
    const lower = String(name).toLowerCase();
    for (const t of EXPECTED_DATA.gemm_tables) {
      if (!t.gpus.some((prefix) => lower.startsWith(prefix))) continue;
      const [i, wi] = logWeights(t.d, d), [j, wj] = logWeights(t.tp, tp), [k, wk] = logWeights(t.M, M);
      const out = {};
      for (const [map, cube] of Object.entries(t.efficiency)) {
        let e = 0;
        for (const [di, fi] of [[0, 1 - wi], [1, wi]])
          for (const [dj, fj] of [[0, 1 - wj], [1, wj]])
            for (const [dk, fk] of [[0, 1 - wk], [1, wk]])
              e += fi * fj * fk * cube[Math.min(i + di, t.d.length - 1)][Math.min(j + dj, t.tp.length - 1)][Math.min(k + dk, t.M.length - 1)];
        out[map] = e;
      }
      return out;
    }
    return null;
  }
  // a GPU without a grid: its shape table (lgacc.model.calibrated.gemm_table.model_layer_efficiencies), each
  // product the nearest entry of its layout in (log m, log k, log n), a map 3 / (1/e_f + 1/e_i + 1/e_w)
  function productEfficiency(entries, m, k, n) {
    const query = [Math.log(m), Math.log(k), Math.log(n)];
    const distances = entries.shapes.map((shape) => Math.abs(query[0] - Math.log(shape[0]))
      + Math.abs(query[1] - Math.log(shape[1])) + Math.abs(query[2] - Math.log(shape[2])));
    const least = Math.min(...distances);
    return entries.efficiency[distances.findIndex((distance) => distance <= least + 1e-9)];  // a tie: the first
  }
  // attention by shape where the GPU's shape table times the recipe's kernel and no attention table holds it
  // (lgacc.model.calibrated.gemm_table.shape_attention_efficiency): the nearest entry in logs; null otherwise
  function shapeAttentionEfficiency(name, kernel, m, tp) {
    const lower = String(name).toLowerCase();
    const measured = EXPECTED_DATA.attention_tables.find((t) => t.gpus.some((prefix) => lower.startsWith(prefix)));
    if (measured !== undefined && measured.kernels[kernel] !== undefined) return null;  // the attention table's
    for (const t of EXPECTED_DATA.gemm_shape_tables) {
      if (!t.gpus.some((prefix) => lower.startsWith(prefix))) continue;
      if (t.attention === null || t.attention_kernel !== kernel) return null;
      const query = [m.d_s, m.d_a / tp, Math.ceil(m.d_kv / tp), m.d_h, m.d_h].map(Math.log);
      const distances = t.attention.shapes.map((shape) => shape.reduce((sum, x, i) => sum + Math.abs(query[i] - Math.log(x)), 0));
      const least = Math.min(...distances);
      const i = distances.findIndex((distance) => distance <= least + 1e-9);
      return 3.5 / (1 / t.attention.forward[i] + 2.5 / t.attention.backward[i]);
    }
    return null;
  }
  function modelLayerEfficiencies(name, m, tp, T) {
    const grid = layerEfficiencies(name, m.d_m, tp, T);
    if (grid !== null) return grid;
    const lower = String(name).toLowerCase();
    for (const t of EXPECTED_DATA.gemm_shape_tables) {
      if (!t.gpus.some((prefix) => lower.startsWith(prefix))) continue;
      const h_q = m.d_a * m.d_h / tp, h_kv = Math.ceil(m.d_kv / tp) * m.d_h;
      const widths = { qkv: [h_q + 2 * h_kv, m.d_m], proj: [m.d_m, h_q],
                       fc1: [(1 + (m.gated ? 1 : 0)) * m.d_I / tp, m.d_m], fc2: [m.d_m, m.d_I / tp] };
      const out = {};
      for (const [map, [N, K]] of Object.entries(widths)) {
        const p = t.products;
        out[map] = 3 / (1 / productEfficiency(p.forward, T, K, N) + 1 / productEfficiency(p.input_gradient, T, N, K)
                        + 1 / productEfficiency(p.weight_gradient, N, T, K));
      }
      return out;
    }
    return null;
  }

  function expected(input) {
    if (input === null || typeof input !== "object") fail("input must be an object with keys model, hardware, method, n_b, ...");
    const { recipe: recipeInput, ...rest } = input;
    const q = parseInput(rest);
    refuseSparseCase(q, "calibrated");  // lgacc evaluate computes the calibrated model's sparse extension
    const R = parseRecipe(recipeInput);
    const c = q.c, hw = q.hardware, m = q.model;
    const layered = DATA.methods[c.method].layered;
    const partitioned = c.partitioned === null ? DATA.methods[c.method].default_partitioned : c.partitioned;
    const zero = R.zero_stage === null ? (partitioned ? 3 : 0) : R.zero_stage;
    const schedule = c.schedule === null || c.schedule === undefined ? DATA.schedules.default[String(layered)] : c.schedule;
    const vocab = vocabulary(rest.model, m);
    const x = Object.assign({
      d_s: m.d_s, d_m: m.d_m, d_l: m.d_l, d_a: m.d_a, d_h: m.d_h, d_kv: m.d_kv, d_I: m.d_I, d_v: vocab.d_v,
      gated: m.gated ? 1 : 0, tied: vocab.tied ? 1 : 0,
      // Transformer.rotary_width: the queries' and keys' heads, latent attention's rotary parts only
      d_R: !m.rotary ? 0 : m.latent ? (m.d_a + 1) * m.qk_rope_head_dim : (m.d_a + m.d_kv) * m.d_h,
      n_b: c.n_b, n_l: c.n_l, n_a: c.n_a, n_mu: c.n_mu, b_mu: c.b_mu, v: c.n_v === undefined ? 1 : c.n_v,
      c: hw.peak_flop_per_s, beta_hbm: hw.gpu_memory_bandwidth_bytes_per_s, beta_nvl: hw.nvlink_bandwidth_bytes_per_s / 2,
      beta_ib: hw.infiniband_bandwidth_bytes_per_s / 2, G: hw.gpus_per_node, e_max: gemmEfficiency(rest.hardware, hw),
      r_full: R.recompute === "full" ? 1 : R.recompute === "alternate" ? 0.5 : 0, r_sel: R.recompute === "selective" ? 1 : 0,
      r_op: R.recompute === "op" ? 1 : 0, r_stop: R.recompute_early_stop ? 1 : 0, sp: R.sequence_parallel ? 1 : 0, fa: R.flash_attention ? 1 : 0,
      drop: R.dropout ? 1 : 0, z_1: zero >= 1 ? 1 : 0, z_2: zero >= 2 ? 1 : 0, z_3: zero >= 3 ? 1 : 0,
      gamma_G: R.grad_reduce_bytes, gamma_M: R.main_grad_bytes, ov_dp: R.dp_overlap ? 1 : 0, ov_tp: R.tp_overlap ? 1 : 0,
      pg: R.dp_network === "per-gpu" ? 1 : 0, improved: c.method === "improved" ? 1 : 0,
      amp: R.mixed_precision === "megatron" ? 0 : 1, keep_G: R.mixed_precision === "amp-zeroed" ? 1 : 0,
      g_L: R.logit_bytes, g_X: EXPECTED_DATA.loss_traffic[R.loss_kernel === null ? EXPECTED_DATA.logit_implementation[R.logit_bytes] : R.loss_kernel],
      g_R: EXPECTED_DATA.rope_traffic[R.rope_kernel][0], n_R: EXPECTED_DATA.rope_traffic[R.rope_kernel][1],
      e_N: R.norm_kernel === "eager" ? 1 : 0, e_A: R.activation_kernel === "eager" ? 1 : 0,
      ddp_copy: R.ddp_bucket_copy ? 1 : 0, s_h: R.host_sync ? 1 : 0, ds_opt: R.deepspeed_optimizer ? 1 : 0,
      ds_pipe: R.deepspeed_pipeline ? 1 : 0, vc: R.vocabulary_chunks ? 1 : 0, fsdp_pp: R.fsdp_pipeline_unsharded ? 1 : 0,
    }, EXPECTED_DATA.calibration);
    const nvlink = EXPECTED_DATA.nvlink_tables.find((t) => Math.abs(t.link_bytes_per_s - hw.nvlink_bandwidth_bytes_per_s / 2) <= 1e-6 * t.link_bytes_per_s
      && (t.gpus_per_node === null || t.gpus_per_node === hw.gpus_per_node));
    x.eta_nvl = nvlink ? nvlink.eta_nvl : x.eta;
    x.alpha_nvl = nvlink ? nvlink.alpha_nvl : x.alpha_nvl;
    x.delta_nvl = nvlink ? nvlink.delta_nvl : 0;
    if (R.cuda_graphs) { x.t_h = 0; x.t_hR = 0; x.t_hs = 0; x.t_hl = 0; x.t_hm = 0; }  // a captured graph: no host floor (lgacc.model.calibrated.host)
    else if (R.host_framework === "megatron" || R.host_framework === "megatron_te") {  // Megatron-Core's terms (and TE's layer), measured (expected.megatron_host_inputs)
      x.t_h += x.t_hM + (R.host_framework === "megatron_te" ? x.t_hTE : 0);
      x.t_hR = x.t_hMR; x.t_hs = x.t_hMs; x.t_hl = x.t_hMl; x.t_hm = x.t_hMm;
    }
    x.e_att = attentionEfficiency(hw.name, R.attention_kernel, m.d_s, m.d_h, EXPECTED_DATA.calibration.e_att);
    const measuredAttention = shapeAttentionEfficiency(hw.name, R.attention_kernel, m, c.n_a);
    if (measuredAttention !== null) x.e_att = measuredAttention;
    const measured = modelLayerEfficiencies(hw.name, m, c.n_a, c.b_mu * m.d_s);
    x.g_tab = measured === null ? 0 : 1;
    for (const map of ["qkv", "proj", "fc1", "fc2"]) x[`e_${map}`] = measured === null ? 1 : measured[map];
    Object.assign(x, EXPECTED_PROGRAMS[`schedule:${schedule}`](x));
    const r = EXPECTED_PROGRAMS.main(x);
    const GIB = EXPECTED_DATA.gib;
    const b = c.n_b * c.n_mu * c.b_mu;
    const b_c = m.critical_batch * q.A.critical_batch_scale;
    const memory = { total: r.memory_total / GIB };
    for (const part of EXPECTED_DATA.memory_parts) memory[part] = r[`memory_${part}`] / GIB;
    const breakdown = {};
    for (const part of EXPECTED_DATA.step_parts) breakdown[part] = r[part];
    const days = q.steps * (b_c / b) * r.step / EXPECTED_DATA.seconds_per_day;
    const run = runKeys(q.run, m, c.n_b * c.n_l * c.n_a, isFinite(days) ? days : null, "expected_");
    return {
      expected_step_time_s: r.step,
      expected_time_days: run.expected_time_days,
      expected_gpu_hours: run.expected_gpu_hours,
      expected_cost: run.expected_cost,
      expected_memory_gib: memory,
      expected_step_breakdown_s: breakdown,
      expected_memory_fits: r.memory_total <= hw.memory_bytes,
      expected_recipe: Object.assign({}, R, { zero_stage: zero, schedule }),
      expected_calibration: Object.assign({}, EXPECTED_DATA.fitted),
    };
  }
"""
