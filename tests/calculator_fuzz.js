/* A fuzz of the calculator's API (window.lgacc, or the module under node): names from Object.prototype, extreme
   numbers and wrong types in every input. Every call must give a result without NaN (a feasible one with a finite
   time, memory and efficiency) or throw an InputError with one line; anything else is a problem. Deterministic
   (seeded), and bounded: searches get a short time limit. Used by tests/test_jsgen.py (node) and
   tests/book/test_calculator.py (headless Chromium). */
(function (root) {
  "use strict";

  function fuzzCalculator(lgacc, seed, count) {
    let state = seed >>> 0;
    const random = () => {  // mulberry32
      state = (state + 0x6d2b79f5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const choice = (items) => items[Math.floor(random() * items.length)];
    const NAMES = ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf", "isPrototypeOf",
                   "propertyIsEnumerable", "toLocaleString", "__defineGetter__", "__lookupSetter__", "prototype", "length"];
    const NUMBERS = [0, -0, -1, 1, 2, 0.5, 1.5, 1e-320, 5e-324, 2.2250738585072014e-308, 1e-9, 1e9, 1e12, 1e21, 1e300,
                     1e308, -1e308, Infinity, -Infinity, NaN, 2 ** 53, 2 ** 53 + 2, 2 ** 62, 312, 80, 4096, 100000];
    const STRINGS = ["", " ", "abc", "312e12", "9007199254740993", "1e308", "NaN", "-1", "0x10", "X160", "X2000000",
                     "a100-80gb", "improved", "3d", "interleaved", "\u0000", "1f1b"];
    const OTHERS = [null, undefined, true, false, [], [1, 2], {}, { a: 1 }, Symbol("s"), BigInt(5),
                    JSON.parse('{"__proto__": {"d_l": 4}}'), Object.create(null)];
    const anyValue = () => {
      const pool = choice([NAMES, NUMBERS, STRINGS, OTHERS]);
      return choice(pool);
    };
    const SPEC = {
      name: "fuzzed", peak_flop_per_s: 312e12, memory_gib: 80, gpu_memory_bandwidth_gib_per_s: 2039,
      nvlink_bandwidth_gib_per_s: 600, pcie_bandwidth_gib_per_s: 63, infiniband_bandwidth_gib_per_s: 50,
      cpu_gpu_bandwidth_gib_per_s: 31.5, ethernet_bandwidth_gib_per_s: 6.25, nvme_bandwidth_gib_per_s: 3.2,
      hdd_bandwidth_gib_per_s: 0.1, gpus_per_node: 16,
    };
    const DIMS = { d_l: 8, d_a: 4, d_h: 16, d_s: 128 };
    const TOP = ["model", "hardware", "method", "n_b", "n_l", "n_a", "n_mu", "b_mu", "offload", "partitioned", "schedule",
                 "n_v", "max_overhead", "steps", "form", "assumptions"];
    const ASSUMED = Object.keys(lgacc.DATA.assumptions.defaults);
    function input(search) {
      const q = { model: choice(["X16", "X32", "BERT", { ...DIMS }]), hardware: choice(["a100-80gb", "h100-sxm", { ...SPEC }]),
                  method: choice(["baseline", "partitioned", "improved"]) };
      if (!search) Object.assign(q, { n_b: choice([1, 2, 8]), n_l: choice([1, 2, 4]), n_a: choice([1, 2]), n_mu: choice([1, 4, 8]), b_mu: 1 });
      else Object.assign(q, { parallelism: choice(["3d", "Data", "Data + pipe"]), time_limit_s: 0.2 });
      for (let i = choice([0, 1, 1, 1, 2, 3]); i > 0; i--) {
        const where = random();
        if (where < 0.35) {
          const key = choice([...TOP, ...(search ? ["parallelism", "max_gpus", "allow_offload", "time_limit_s"] : []), ...NAMES]);
          if (key === "time_limit_s") continue;  // bounded searches: the fuzz keeps its own limit
          Object.defineProperty(q, key, { value: anyValue(), enumerable: true, writable: true, configurable: true });
        } else if (where < 0.6) {
          q.hardware = { ...SPEC, ...(typeof q.hardware === "object" && q.hardware !== null ? q.hardware : {}) };
          const key = choice([...Object.keys(SPEC), "kernel_efficiency", "memory_gb", "source", ...NAMES]);
          Object.defineProperty(q.hardware, key, { value: choice([anyValue(), choice(NUMBERS)]), enumerable: true, writable: true, configurable: true });
        } else if (where < 0.8) {
          q.model = { ...DIMS };
          const key = choice(["d_l", "d_a", "d_h", "d_s", "d_m", "n_I", "d_I", "d_kv", "gated", "name", ...NAMES]);
          Object.defineProperty(q.model, key, { value: anyValue(), enumerable: true, writable: true, configurable: true });
        } else {
          const A = {};
          Object.defineProperty(A, choice([...ASSUMED, ...NAMES]), { value: anyValue(), enumerable: true, writable: true, configurable: true });
          q.assumptions = A;
        }
      }
      return q;
    }
    const problems = [];
    let results = 0, refused = 0, stopped = 0;
    const describe = (q) => { try { return JSON.stringify(q, (k, v) => (typeof v === "bigint" || typeof v === "symbol" ? String(v) : v)); } catch (e) { return String(q); } };
    const hasNaN = (value) => {
      if (typeof value === "number") return Number.isNaN(value);
      if (value && typeof value === "object") return Object.values(value).some(hasNaN);
      return false;
    };
    for (let i = 0; i < count; i++) {
      const search = random() < 0.08;
      const q = input(search);
      const call = search ? "fastest" : choice(["evaluate", "details", "evaluate"]);
      try {
        const out = lgacc[call](q);
        const s = call === "details" ? out.summary : out;
        results++;
        if (hasNaN(s)) problems.push([call, describe(q), "NaN in the result"]);
        if (s.feasible) {
          const memory = Object.values(s.memory_gib);
          if (!(s.efficiency > 0 && s.efficiency <= 1 && isFinite(s.time_days) && s.time_days > 0 && isFinite(s.step_time_s)
                && memory.every((m) => isFinite(m) && m >= 0)))
            problems.push([call, describe(q), `feasible with efficiency ${s.efficiency}, ${s.time_days} days`]);
        }
        if (!Array.isArray(s.warnings)) problems.push([call, describe(q), "no warnings list"]);
      } catch (error) {
        if (!(error instanceof lgacc.InputError)) problems.push([call, describe(q), `${error && error.name}: ${error && error.message}`]);
        else if (/\n/.test(error.message) || /undefined|\[object Object\]/.test(error.message))
          problems.push([call, describe(q), `unclear message: ${error.message}`]);
        else if (error.stopped) stopped++;
        else refused++;
      }
    }
    return { calls: count, results, refused, stopped, problems: problems.slice(0, 20), problemCount: problems.length };
  }

  root.fuzzCalculator = fuzzCalculator;
  if (typeof module === "object" && module.exports) module.exports = fuzzCalculator;
})(typeof window !== "undefined" ? window : globalThis);
