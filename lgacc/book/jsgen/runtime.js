  class InputError extends Error {}
  InputError.prototype.name = "InputError";
  // ``field``: the input key at fault (a spec's key, such as memory_gib), for the page to mark its field.
  function fail(message, field) {
    const error = new InputError(message);
    if (field !== undefined) error.field = field;
    throw error;
  }

  // A name typed by a reader is looked up only among a table's own keys: "constructor", "toString" or "__proto__"
  // name nothing of ours (obj[name] would find Object.prototype's).
  const own = (table, key) => (typeof key === "string" && Object.hasOwn(table, key) ? table[key] : undefined);
  const isRecord = (value) => value !== null && typeof value === "object" && !Array.isArray(value);
  // Any value in a message: JSON where it has one (BigInt, cycles and symbols have none).
  function show(value) {
    if (typeof value === "number") return String(value);  // NaN and Infinity as such (JSON would say null)
    try {
      const text = JSON.stringify(value);
      if (text !== undefined) return text.length > 80 ? text.slice(0, 77) + "..." : text;
    } catch (error) { /* below */ }
    try { return String(value).slice(0, 80); } catch (error) { return `a ${typeof value}`; }
  }

  // Python's format(x, ".<n>g") and format(x, "g") for the reasons' numbers (exact ties round to even, as Python does).
  function fmtG(x, n) {
    if (n === undefined) n = 6;
    if (!isFinite(x)) return x > 0 ? "inf" : x < 0 ? "-inf" : "nan";
    if (x === 0) return "0";
    const sign = x < 0 ? "-" : "";
    const a = Math.abs(x);
    let [mant, e] = a.toExponential(n - 1).split("e");
    const [longMant, longE] = a.toExponential(Math.min(100, n + 24)).split("e");
    const digits = longMant.replace(".", "");
    if (digits[n] === "5" && /^0*$/.test(digits.slice(n + 1)) && Number(digits[n - 1]) % 2 === 0) {
      mant = digits[0] + (n > 1 ? "." + digits.slice(1, n) : "");  // a tie: keep the even digit
      e = longE;
    }
    const exp = Number(e);
    let text;
    if (exp < -4 || exp >= n) {
      if (mant.includes(".")) mant = mant.replace(/0+$/, "").replace(/\.$/, "");
      const digitsE = String(Math.abs(exp));
      text = mant + "e" + (exp < 0 ? "-" : "+") + (digitsE.length < 2 ? "0" + digitsE : digitsE);
    } else {
      const m = mant.replace(".", "");
      text = exp >= 0 ? m.slice(0, exp + 1).padEnd(exp + 1, "0") + "." + m.slice(exp + 1) : "0." + "0".repeat(-exp - 1) + m;
      if (text.includes(".")) text = text.replace(/0+$/, "").replace(/\.$/, "");
    }
    return sign + text;
  }

  // Python's format(x, ".<d>f"): exact ties round to even.
  function fmtF(x, d) {
    const text = x.toFixed(d);
    const long = Math.abs(x).toFixed(Math.min(100, d + 25));
    const point = long.indexOf(".");
    const last = d === 0 ? long[point - 1] : long[point + d];
    if (long[point + d + 1] === "5" && /^0*$/.test(long.slice(point + d + 2)) && Number(last) % 2 === 0) {
      return (x < 0 ? "-" : "") + long.slice(0, d === 0 ? point : point + d + 1);
    }
    return text;
  }

  // A count: a whole number from 1 to 2**53 - 1, the integers a double holds exactly. A typed integer beyond them
  // is quoted as typed (9007199254740993 would otherwise read as ...992).
  function positiveInt(owner, field, value) {
    let v = value;
    if (v === undefined || v === null || (typeof v === "string" && v.trim() === "")) fail(`${owner}: ${field} is missing; expected a positive integer`, field);
    if (typeof v === "string" && /^\s*\d+\s*$/.test(v)) {
      if (BigInt(v.trim()) > BigInt(Number.MAX_SAFE_INTEGER)) fail(`${owner}: ${field}=${v.trim()} exceeds the largest supported count 2**53 - 1 = ${Number.MAX_SAFE_INTEGER}`, field);
      v = Number(v);
    }
    if (typeof v !== "number" || !Number.isInteger(v)) fail(`${owner}: ${field}=${show(value)} must be a positive integer`, field);
    if (v < 1) fail(`${owner}: ${field}=${v} must be a positive integer (>= 1)`, field);
    if (v > Number.MAX_SAFE_INTEGER) fail(`${owner}: ${field}=${show(value)} exceeds the largest supported count 2**53 - 1 = ${Number.MAX_SAFE_INTEGER} (a larger number is not exact in a double)`, field);
    return v;
  }

  function flag(owner, field, value, allowNull) {
    if (value === undefined || (allowNull && value === null)) return allowNull ? null : false;
    if (value === true || value === false) return value;
    fail(`${owner}: ${field}=${show(value)} must be true or false${allowNull ? " or unset" : ""}`, field);
  }

  // lgacc.model.transformer.Transformer: d_I from n_I (default 4 d_m), d_kv key/value heads (default d_a), gated feed-forward;
  // n_I becomes the equivalent factor of the paper's printed forms, (layer weights / d_m^2 - 4) / 2.
  function makeModel(dims) {
    if (typeof dims.name !== "string" || dims.name.trim() === "") fail(`model ${show(dims.name)}: name must be a non-empty string`, "name");
    const owner = `model ${JSON.stringify(dims.name)}`;
    // the keys of a model file (lgacc.model.transformer): the vocabulary and the published counts do not enter the evaluation
    const known = new Set([...DATA.model_keys, "file"]);
    for (const key of Object.keys(dims)) if (!known.has(key)) fail(`${owner}: unknown key ${show(key)}; allowed keys are ${DATA.model_keys.join(", ")}`, key);
    if (dims.d_v !== undefined && dims.d_v !== null && dims.d_v !== 0 && !(Number.isSafeInteger(dims.d_v) && dims.d_v > 0))
      fail(`${owner}: d_v=${show(dims.d_v)} must be a whole number >= 0 (0: vocabulary not counted)`, "d_v");
    if (dims.tied_embeddings !== undefined) flag(owner, "tied_embeddings", dims.tied_embeddings, false);
    const m = { name: dims.name };
    for (const field of ["d_l", "d_a", "d_h", "d_s"]) m[field] = positiveInt(owner, field, dims[field]);
    sparseFields(owner, dims, m);
    m.d_m = dims.d_m === undefined || dims.d_m === "" ? m.d_a * m.d_h : positiveInt(owner, "d_m", dims.d_m);
    if (m.d_m !== m.d_a * m.d_h && !(m.decoupled_heads || m.latent)) fail(`${owner}: d_m=${m.d_m} must equal d_a * d_h = ${m.d_a} * ${m.d_h} = ${m.d_a * m.d_h}`, "d_m");
    m.gated = flag(owner, "gated", dims.gated, false);
    m.rotary = flag(owner, "rotary", dims.rotary, false);
    m.d_kv = dims.d_kv === undefined || dims.d_kv === null ? m.d_a : positiveInt(owner, "d_kv", dims.d_kv);
    if (m.d_a % m.d_kv) fail(`${owner}: d_a=${m.d_a} must be divisible by d_kv=${m.d_kv} (key/value heads)`, "d_kv");
    const hasNI = dims.n_I !== undefined && dims.n_I !== null && dims.n_I !== "";
    const hasDI = dims.d_I !== undefined && dims.d_I !== null && dims.d_I !== "";
    if (hasNI) {
      const nI = positiveInt(owner, "n_I", dims.n_I);
      if (hasDI && positiveInt(owner, "d_I", dims.d_I) !== nI * m.d_m) fail(`${owner}: d_I=${show(dims.d_I)} and n_I=${nI} disagree (d_I = n_I d_m); give one`, "d_I");
      m.d_I = nI * m.d_m;
    } else {
      m.d_I = hasDI ? positiveInt(owner, "d_I", dims.d_I) : 4 * m.d_m;
    }
    if (!Number.isSafeInteger(m.d_I)) fail(`${owner}: d_I = n_I d_m = ${fmtG(m.d_I, 4)} exceeds the largest supported count 2**53 - 1`, "d_I");
    const suffix = m.gated ? "_gated" : "";
    if (m.extended) {
      // lgacc.model.transformer.Transformer's counts of the sparse extension (SPARSE, printed from its sympy)
      m.p_leading = Math.round(sparseCount(m, "weights"));
      m.p = m.p_leading + Math.round(sparseCount(m, "vectors"));
      m.layer_weights = m.p_leading / m.d_l;
      m.p_l = m.p / m.d_l;
      if (!(isFinite(m.p) && m.p < 2 ** 53)) fail(`${owner}: the parameter or flop counts of these dimensions are beyond the supported range (below 2**53 in a double)`);
    } else {
      m.layer_weights = MODEL[`layer_weights${suffix}`](m.d_m, m.d_h, m.d_kv, m.d_I);
      m.p_l = MODEL[`p_l${suffix}`](m.d_m, m.d_h, m.d_kv, m.d_I);
      m.p = m.d_l * m.p_l;
      m.p_leading = m.d_l * m.layer_weights;
    }
    m.n_I = (m.layer_weights / (m.d_m * m.d_m) - 4) / 2;
    activeModel(m);
    m.critical_batch = MODEL.critical_batch(DATA.constants.K_c, m.p_active_leading, m.d_s);
    if (!(isFinite(m.p) && isFinite(m.critical_batch) && m.critical_batch > 0))
      fail(`${owner}: ${fmtG(m.p, 4)} parameters are beyond the range the page computes in (doubles up to 1.8e+308)`);
    return m;
  }

  // The sparse extension of issue #36 (experts, multi-head latent attention, no biases or norm bias), as
  // lgacc.model.transformer.Transformer checks and counts it: the counts are SPARSE's (printed from the same sympy as
  // lgacc/model/generated/sparse_models.py); only the glue between them (p_active, p_held) is written here.
  const LATENT = ["q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"];
  function sparseFields(owner, dims, m) {
    const given = (key) => dims[key] !== undefined && dims[key] !== null && dims[key] !== "";
    for (const key of ["decoupled_heads", "linear_biases", "layer_norm"])
      m[key] = given(key) ? flag(owner, key, dims[key], false) : DATA.sparse_defaults[key];
    for (const key of ["experts", "experts_per_token", "shared_experts", "dense_layers"]) {
      const v = given(key) ? dims[key] : 0;
      if (v === 0 || v === "0") m[key] = 0;
      else if (typeof v === "boolean" || !(typeof v === "number" || typeof v === "string")) fail(`${owner}: ${key}=${show(v)} must be a whole number >= 0`, key);
      else m[key] = positiveInt(owner, key, v);
    }
    m.d_e = given("d_e") ? dims.d_e : null;
    if (m.experts) {
      if (!(1 <= m.experts_per_token && m.experts_per_token <= m.experts))
        fail(`${owner}: experts_per_token=${m.experts_per_token} must be between 1 and experts=${m.experts} (top-k routing)`, "experts_per_token");
      if (m.d_e === null) fail(`${owner}: d_e (a routed expert's width) is required with experts=${m.experts}`, "d_e");
      m.d_e = positiveInt(owner, "d_e", m.d_e);
      if (m.dense_layers >= m.d_l) fail(`${owner}: dense_layers=${m.dense_layers} must be below d_l=${m.d_l} (at least one MoE layer)`, "dense_layers");
    } else {
      for (const key of ["experts_per_token", "shared_experts", "dense_layers", "d_e"])
        if (m[key] !== 0 && m[key] !== null) fail(`${owner}: ${key}=${show(m[key])} needs experts > 0 (experts: 0 is a dense model)`, key);
    }
    const latent = LATENT.filter(given);
    if (latent.length && latent.length < LATENT.length) {
      const missing = LATENT.find((key) => !given(key));
      fail(`${owner}: ${missing} is missing; latent attention needs all of ${LATENT.join(", ")}`, missing);
    }
    for (const key of LATENT) m[key] = latent.length ? positiveInt(owner, key, dims[key]) : null;
    m.latent = latent.length > 0;
    m.sparse = m.experts > 0;
    m.extended = m.sparse || m.latent || m.decoupled_heads || !m.linear_biases || !m.layer_norm;
  }
  const pyTruth = (v) => (v ? "True" : "False");
  // lgacc.model.transformer.Transformer._sparse_args, with k, n_e and n_c as given
  function sparseArgs(m, k, n_e, n_c) {
    return [m.d_m, m.d_a, m.d_h, m.d_kv, m.d_I, m.d_l, m.d_s, m.experts, k, m.d_e || 1, m.shared_experts,
      m.sparse ? m.dense_layers : m.d_l, ...LATENT.map((key) => m[key] || 1), n_e, n_c];
  }
  function sparseCount(m, what, n_e) {
    const tag = [m.gated, m.latent, m.linear_biases, m.layer_norm].map(pyTruth).join(":");
    return SPARSE[`${what}:${tag}`](...sparseArgs(m, m.experts_per_token, n_e === undefined ? 1 : n_e, 1));
  }
  // p_active_leading, p_active, p_held(n_e) and the active model's feed-forward factor, as Transformer's properties
  // and lgacc.model.evaluator.sparse._active_n_I compute them.
  function activeModel(m) {
    m.moe_layers = m.sparse ? m.d_l - m.dense_layers : 0;
    if (!m.sparse) {
      m.p_active_leading = m.p_leading;
      m.p_active = m.p;
      m.n_I_active = m.n_I;
      m.p_held = () => m.p;
      return;
    }
    m.p_active_leading = Math.round(sparseCount(m, "active"));
    const oneExpertVectors = m.linear_biases ? (m.gated ? 2 : 1) * m.d_e + m.d_m : 0;
    const unused = m.moe_layers * (m.experts - m.experts_per_token) * oneExpertVectors;
    m.p_active = m.p - (m.p_leading - m.p_active_leading) - unused;
    m.n_I_active = (m.p_active_leading / m.d_l / m.d_m ** 2 - 4) / 2;
    const routedVectors = m.moe_layers * m.experts * oneExpertVectors;
    m.p_held = (n_e) => sparseCount(m, "held", n_e) + (m.p - m.p_leading) - routedVectors * (1 - 1 / n_e);
  }
  // Transformer.expert_bytes_per_token and context_bytes_per_token (0 at n_e = 1, n_c = 1).
  const expertBytes = (m, n_e) => SPARSE[`expert_bytes:${pyTruth(m.latent)}`](...sparseArgs(m, m.sparse ? m.experts_per_token : 0, n_e, 1));
  const contextBytes = (m, n_c) => SPARSE[`context_bytes:${pyTruth(m.latent)}`](...sparseArgs(m, m.experts_per_token, 1, n_c));

  // The calibrated model and the search do not compute the sparse extension here: they refuse it in one line.
  const UNSUPPORTED = "not computed here for experts/context/FP8";
  function refuseSparseCase(q, what) {
    const m = q.model, c = q.c;
    let text = null, field;
    if (m.extended) { text = m.sparse ? `${m.name} is a mixture of experts (experts: ${m.experts}, top-${m.experts_per_token})` : `${m.name} is counted by the sparse extension`; field = "model"; }
    else if (c.n_c > 1) { text = `n_c=${c.n_c} (context parallelism)`; field = "n_c"; }
    else if (c.precision !== "bf16") { text = `precision ${c.precision}`; field = "precision"; }
    if (text === null) return;
    const error = new InputError(`${what}: ${UNSUPPORTED} (${text}); lgacc ${what === "calibrated" ? "evaluate" : "optimize"} computes it`);
    error.field = field;
    error.unsupported = true;
    throw error;
  }

  // --n-e, --n-c, --precision (issue #36): the rules lgacc evaluate states (lgacc.model.evaluator.sparse.sparse_setup,
  // Hardware.at_precision); compose then evaluates the sparse extension as evaluate_many does.
  function parseSparseInput(input, model, hardware) {
    const owner = "training configuration";
    const n_e = positiveInt(owner, "n_e", input.n_e === undefined ? 1 : input.n_e);
    const n_c = positiveInt(owner, "n_c", input.n_c === undefined ? 1 : input.n_c);
    const precision = input.precision === undefined ? "bf16" : input.precision;
    if (!DATA.precisions.includes(precision)) fail(`unknown precision ${typeof precision === "string" ? `'${precision}'` : show(precision)}; expected one of ${DATA.precisions.join(", ")}`, "precision");
    // lgacc.model.evaluator.sparse.sparse_setup and Hardware.at_precision: the rules a dense model meets first
    if (n_e > 1 && !model.sparse) fail(`${owner}: n_e=${n_e} needs a model with experts; ${model.name} is dense (experts: 0)`, "n_e");
    if (precision === "fp8" && hardware.peak_fp8_flop_per_s === undefined)
      fail(`${hardware.name}: field 'peak_fp8_flop_per_s': precision fp8 needs the vendor's dense FP8 peak, which this spec does not give`, "precision");
    return { n_e, n_c, precision };
  }

  function parseModel(value) {
    if (isRecord(value)) {
      const dims = { ...value };  // spread: an own "__proto__" key stays data
      if (dims.name === undefined) dims.name = "custom";
      return makeModel(dims);
    }
    if (value !== undefined && value !== null && typeof value !== "string")
      fail(`model ${show(value)}: expected X<x>, a shipped model's name, or an object of dimensions`, "model");
    const text = String(value === undefined || value === null ? "" : value).trim();
    const match = /^x_?\[?(\d+)\]?$/i.exec(text);
    if (match) {
      if (BigInt(match[1]) > BigInt(Number.MAX_SAFE_INTEGER)) fail(`X family: x=${match[1]} exceeds the largest supported count 2**53 - 1`, "model");
      const x = Number(match[1]);
      if (x < 1) fail(`X family: x=${x} must be a positive integer (>= 1)`, "model");
      if (x % 2) fail(`X family: x=${x} must be even, so that d_a = x/2 is a whole number of heads`, "model");
      return makeModel({ name: `X${x}`, ...MODEL.x_family(x) });
    }
    const squash = (s) => s.toLowerCase().replace(/[-_]/g, "");
    for (const [name, dims] of Object.entries(DATA.models)) {
      if (squash(name) === squash(text) || squash(dims.file) === squash(text)) {
        const copy = { ...dims };
        delete copy.file;
        return makeModel(copy);
      }
    }
    const number = /^x_?\[?([-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)\]?$/i.exec(text);
    if (number) fail(`X family: x=${number[1]} must be a positive integer (>= 1)`, "model");  // X-10 as X0: the family's rule
    fail(`unknown model ${JSON.stringify(text)}; expected X<x> with an even x (e.g. X160), one of ${Object.keys(DATA.models).join(", ")}, or an object of dimensions`, "model");
  }

  // Python's repr of a number as a spec file gives it: an integer as itself, a float in its shortest form (1e-05, 4.0).
  function pyRepr(x) {
    if (typeof x !== "number") return show(x);
    if (Number.isNaN(x)) return "nan";
    if (!isFinite(x)) return x > 0 ? "inf" : "-inf";
    if (Number.isInteger(x) && Math.abs(x) < 1e16) return String(x);
    const [mant, e] = x.toExponential().split("e");
    const exp = Number(e);
    if (exp < -4 || exp >= 16) return `${mant}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
    const text = String(x);
    return text.includes(".") ? text : text + ".0";
  }
  const PY_TYPES = { string: "str", boolean: "bool", bigint: "int", number: "float" };
  const pyType = (v) => (v === null ? "NoneType" : Array.isArray(v) ? "list" : typeof v === "object" ? "dict" : PY_TYPES[typeof v] || typeof v);

  // lgacc.model.hardware.checks.as_positive_number: a finite positive number (an integer where integer).
  function positiveNumber(origin, key, value, integer) {
    const kind = integer ? "a positive integer" : "a positive number";
    if (typeof value !== "number") {
      const hint = typeof value === "string" ? " (write a plain number in the unit the key names, e.g. peak_flop_per_s: 312.0e+12)" : "";
      const text = typeof value === "string" ? `'${value.slice(0, 80)}'` : typeof value === "boolean" ? (value ? "True" : "False")
        : value === null ? "None" : show(value);
      fail(`${origin}: field '${key}': expected ${kind}, got ${pyType(value)} ${text}${hint}`, key);
    }
    if (!isFinite(value) || value <= 0) fail(`${origin}: field '${key}': expected ${kind} (> 0 and finite), got ${pyRepr(value)}`, key);
    if (integer && !Number.isInteger(value)) fail(`${origin}: field '${key}': expected ${kind}, got ${pyRepr(value)}`, key);
    return value;
  }

  // lgacc.model.hardware.checks.check_range on the same table (DATA.ranges, printed from its RANGES): an error outside the
  // accepted range, a warning (pushed on `warnings`, in the loader's words) outside the usual one.
  function checkRange(origin, key, field, si, given, warnings) {
    const r = DATA.ranges[field];
    const asSi = given === fmtG(si) ? "" : ` = ${fmtG(si, 4)} ${r.unit}`;
    if (!isFinite(si) || si > r.high)
      fail(`${origin}: field '${key}': ${given}${asSi} is above the largest accepted value ${fmtG(r.high, 4)} ${r.unit}; check the unit`, key);
    if (si < r.low || (si === r.low && !r.low_inclusive)) {
      const bound = r.low_inclusive ? "smallest accepted value" : "exclusive lower bound";
      const peak = DATA.ranges.peak_flop_per_s;
      let hint = "";
      if (field === "peak_flop_per_s" && peak.usual_low <= si * 1e12 && si * 1e12 <= peak.usual_high)
        hint = Number.isInteger(si) ? ` (in Tflop/s? write ${fmtG(si)}.0e+12)` : ` (in Tflop/s? write ${fmtG(si * 1e12, 4)})`;
      fail(`${origin}: field '${key}': ${given}${asSi} is below the ${bound} ${fmtG(r.low, 4)} ${r.unit}; check the unit${hint}`, key);
    }
    if (warnings && !(r.usual_low <= si && si <= r.usual_high)) {
      const side = si < r.usual_low ? "below" : "above";
      const bound = side === "below" ? r.usual_low : r.usual_high;
      warnings.push(`${origin}: field '${key}': ${given}${asSi} is ${side} the usual ${fmtG(bound, 4)} ${r.unit}; accepted, but check the unit`);
    }
  }

  // A hardware spec: a shipped name, or an object with the spec's keys (each quantity once, in one unit), checked as
  // lgacc.model.hardware.hardware_from_mapping checks a spec file, in its order; its warnings go to `warnings`.
  function parseHardware(value, warnings) {
    if (value === undefined || value === null || value === "") value = DATA.default_hardware;
    if (typeof value === "string") {
      const hw = own(DATA.hardware, value.trim());
      if (!hw) fail(`hardware ${JSON.stringify(value)}: no such hardware; known names are ${Object.keys(DATA.hardware).join(", ")}`, "hardware");
      return { ...hw };
    }
    if (!isRecord(value)) fail(`hardware ${show(value)}: expected a shipped name or an object of the spec's keys`, "hardware");
    const name = typeof value.name === "string" && value.name.trim() !== "" ? value.name.trim() : "custom";
    const origin = `hardware ${JSON.stringify(name)}`;
    const allowed = new Set(DATA.hardware_keys);  // the keys lgacc.model.hardware accepts in a spec file
    for (const key of Object.keys(value)) {
      if (!allowed.has(key)) fail(`${origin}: field '${key.slice(0, 80)}': unknown key; allowed keys are: ${DATA.hardware_keys.join(", ")}`, key);
    }
    const hw = { name, description: "" };
    for (const field of DATA.text_fields) {  // optional here (the page's own spec has no source), non-empty text if given
      if (!Object.hasOwn(value, field) || value[field] === undefined) continue;
      if (typeof value[field] !== "string" || value[field].trim() === "") fail(`${origin}: field '${field}': expected a non-empty string, got ${show(value[field])}`, field);
      hw[field] = value[field].trim();
    }
    hw.name = name;
    const present = (key) => Object.hasOwn(value, key) && value[key] !== undefined;
    for (const [field, spec] of Object.entries(DATA.spec_units)) {
      const units = Object.keys(spec.units);
      const given = units.filter((unit) => present(`${spec.stem}_${unit}`));
      const choices = units.map((u) => `${spec.stem}_${u}`).join(" or ");
      if (given.length === 0) fail(`${origin}: field '${choices}': missing; expected a positive number`, `${spec.stem}_${units[units.length - 1]}`);
      if (given.length > 1) fail(`${origin}: field '${spec.stem}_${given[0]}': given more than once (${given.map((u) => `${spec.stem}_${u}`).join(", ")}); keep one`, `${spec.stem}_${given[0]}`);
      const key = `${spec.stem}_${given[0]}`;
      const number = positiveNumber(origin, key, value[key], false);
      const si = number * spec.units[given[0]];
      checkRange(origin, key, field, si, fmtG(number), warnings);
      hw[field] = si;
    }
    if (!present("gpus_per_node")) fail(`${origin}: field 'gpus_per_node': missing; expected a positive integer`, "gpus_per_node");
    hw.gpus_per_node = positiveNumber(origin, "gpus_per_node", value.gpus_per_node, true);
    checkRange(origin, "gpus_per_node", "gpus_per_node", hw.gpus_per_node, BigInt(hw.gpus_per_node).toString(), warnings);
    // optional: the share of the peak the kernels reach (lgacc.model.evaluator.kernel_efficiency reads it)
    if (present("kernel_efficiency")) {
      const k = positiveNumber(origin, "kernel_efficiency", value.kernel_efficiency, false);
      checkRange(origin, "kernel_efficiency", "kernel_efficiency", k, fmtG(k), warnings);
      if (k < DATA.constants.FLOAT_MIN) fail(`${origin}: field 'kernel_efficiency': ${pyRepr(k)} is subnormal; expected a positive number`, "kernel_efficiency");
      hw.kernel_efficiency = k;
    }
    // optional: the dense FP8 peak (lgacc.model.hardware.checks: a positive number in the peak's accepted range, no warning)
    if (present("peak_fp8_flop_per_s")) {
      const p8 = positiveNumber(origin, "peak_fp8_flop_per_s", value.peak_fp8_flop_per_s, false);
      checkRange(origin, "peak_fp8_flop_per_s", "peak_flop_per_s", p8, fmtG(p8), []);
      hw.peak_fp8_flop_per_s = p8;
    }
    if (hw.gpus_per_node > Number.MAX_SAFE_INTEGER)  // the loader takes up to 2**62; a double is exact only to 2**53
      fail(`${origin}: field 'gpus_per_node': ${pyRepr(hw.gpus_per_node)} exceeds the largest supported count 2**53 - 1 = ${Number.MAX_SAFE_INTEGER} (a larger number is not exact in a double)`, "gpus_per_node");
    return hw;
  }

  function parseAssumptions(value) {
    const A = { ...DATA.assumptions.defaults };
    if (value === undefined || value === null) return A;
    if (!isRecord(value)) fail(`assumptions=${show(value)} must be an object of assumption names and values`, "assumptions");
    for (const [key, v] of Object.entries(value)) {
      if (v === undefined) continue;  // not given (JSON has no undefined)
      if (!Object.hasOwn(A, key)) fail(`unknown assumption ${show(key)}; expected one of ${Object.keys(A).join(", ")}`, key);
      const choices = own(DATA.assumptions.choices, key);
      if (choices && !choices.includes(v)) fail(`assumption ${key}=${show(v)} must be one of ${choices.join(", ")}`, key);
      if (typeof A[key] === "boolean" && typeof v !== "boolean") fail(`assumption ${key}=${show(v)} must be true or false`, key);
      if (typeof A[key] === "number" && !(typeof v === "number" && v > 0 && isFinite(v) && (key !== "overlap_efficiency" || (v <= 1 && v >= 1e-6))))
        fail(`assumption ${key}=${show(v)} must be ${key === "overlap_efficiency" ? "in [1e-06, 1] (a smaller factor makes an overlapped transfer over a million times slower: its overhead would be unbounded)" : "positive and finite"}`, key);
      A[key] = v;
    }
    return A;
  }

  // assumption gb="GB": the spec's numbers read as decimal GB (lgacc.model.assumptions.apply_to_hardware).
  function applyToHardware(hw, A) {
    if (A.gb === "GiB") return hw;
    const out = { ...hw };
    for (const field of Object.keys(DATA.spec_units)) if (field !== "peak_flop_per_s") out[field] = hw[field] * DATA.constants.GIB_TO_GB;
    return out;
  }
  const threshold = (hw, link) => hw.peak_flop_per_s / hw[`${link}_bandwidth_bytes_per_s`];
  const pick = (rows, where) => rows.find((row) => Object.keys(where).every((k) => row[k] === where[k]));

  const INPUT_KEYS = ["model", "hardware", "method", "n_b", "n_l", "n_a", "n_mu", "b_mu", "offload", "partitioned",
                      "schedule", "n_v", "max_overhead", "steps", "form", "assumptions", "tokens", "global_batch",
                      "price_per_gpu_hour", "n_e", "n_c", "precision"];

  // A positive finite number or unset (the run's token budget, the price of a GPU-hour): --tokens and --gpu-hour-price.
  function positiveOrUnset(field, value, what) {
    if (value === undefined || value === null) return null;
    if (typeof value !== "number" || !(value > 0) || !isFinite(value)) fail(`${field}=${show(value)} must be a positive number (${what})`, field);
    return value;
  }

  // The user's run (lgacc.commands._run): a token budget (default: the paper's steps at the critical batch) at a
  // global batch of sequences of d_s tokens (default: the configuration's batch b). The time scales with the tokens:
  // tokens / (b d_s) steps of the configuration.
  function parseRun(input, model, A, c, steps) {
    const b_c = model.critical_batch * A.critical_batch_scale;
    const paper = steps * b_c * model.d_s;
    const tokens = positiveOrUnset("tokens", input.tokens, "the training tokens");
    const global_batch = input.global_batch === undefined || input.global_batch === null ? c.n_b * c.n_mu * c.b_mu
      : positiveInt("options", "global_batch", input.global_batch);
    const price = positiveOrUnset("price_per_gpu_hour", input.price_per_gpu_hour, "the price of one GPU-hour");
    return { tokens: tokens === null ? paper : tokens, scale: tokens === null ? 1 : tokens / paper, global_batch, price };
  }
  // The run's keys of ``lgacc evaluate --format json`` for a time in days (``prefix`` "expected_" for the calibrated model).
  function runKeys(run, model, n_gpu, time_days, prefix) {
    const days = time_days === null ? null : finite(time_days * run.scale);
    const hours = days === null ? null : finite(days * 24 * n_gpu);
    const out = {};
    if (prefix === "") Object.assign(out, { tokens: run.tokens, global_batch: run.global_batch, sequence_length: model.d_s,
                                             run_steps: run.tokens / (run.global_batch * model.d_s) });
    out[`${prefix}time_days`] = days;
    out[`${prefix}gpu_hours`] = hours;
    out[`${prefix}cost`] = run.price === null || hours === null ? null : finite(hours * run.price);
    return out;
  }

  function parseInput(input) {
    if (!isRecord(input)) fail("input must be an object with keys model, hardware, method, n_b, ...");
    const known = new Set(INPUT_KEYS);
    for (const key of Object.keys(input)) if (!known.has(key)) fail(`unknown input key ${show(key)}; expected one of ${INPUT_KEYS.join(", ")}`, key);
    const model = parseModel(input.model);
    const A = parseAssumptions(input.assumptions);
    const warnings = [];  // the spec loader's warnings: possible but unusual values (check the unit)
    const hardware = applyToHardware(parseHardware(input.hardware, warnings), A);
    const methodName = typeof input.method === "string" ? input.method.trim().toLowerCase() : "";
    const method = own(DATA.methods, methodName);
    if (input.method === undefined) fail(`method is required; expected one of ${Object.keys(DATA.methods).join(", ")}`, "method");
    if (!method) fail(`unknown method ${show(input.method)}; expected one of ${Object.keys(DATA.methods).join(", ")}`, "method");
    const owner = "training configuration";
    const c = { method: methodName };
    if (input.n_b === undefined) fail(`${owner}: n_b is required (data-parallel degree)`, "n_b");
    for (const field of ["n_b", "n_l", "n_a", "n_mu", "b_mu"]) c[field] = positiveInt(owner, field, input[field] === undefined ? 1 : input[field]);
    c.offload = flag(owner, "offload", input.offload, false);
    c.partitioned = flag(owner, "partitioned", input.partitioned, true);
    const maxOverhead = input.max_overhead === undefined ? DATA.constants.DEFAULT_MAX_OVERHEAD : input.max_overhead;
    if (typeof maxOverhead !== "number" || !(maxOverhead > 0) || !isFinite(maxOverhead))
      fail(`max_overhead=${show(maxOverhead)} must be a positive number (eq:overhead_condition's epsilon)`, "max_overhead");
    const steps = input.steps === undefined ? DATA.constants.DEFAULT_STEPS : positiveInt("options", "steps", input.steps);
    const form = input.form === undefined ? "paper" : input.form;
    if (!DATA.forms.includes(form)) fail(`form=${show(form)} must be one of ${DATA.forms.join(", ")}`, "form");
    if (c.n_l > model.d_l) fail(`${owner}: n_l=${c.n_l} exceeds the ${model.name} layer count d_l=${model.d_l} (a pipeline stage needs at least one layer)`, "n_l");
    if (A.heads_cap && c.n_a > model.d_a) fail(`${owner}: n_a=${c.n_a} exceeds the ${model.name} head count d_a=${model.d_a} (tensor parallelism splits the attention heads)`, "n_a");
    Object.assign(c, parseSchedule(input.schedule, input.n_v));
    if (c.n_l > 1 && c.n_l * c.n_v > model.d_l)
      fail(`${owner}: n_l n_v = ${c.n_l} x ${c.n_v} = ${c.n_l * c.n_v} exceeds the ${model.name} layer count d_l=${model.d_l} (a chunk of the ${c.schedule} schedule needs at least one layer)`, "n_v");
    for (const [name, v] of [["the batch b = n_b n_mu b_mu", c.n_b * c.n_mu * c.b_mu], ["the GPU count n_gpu = n_b n_l n_a", c.n_b * c.n_l * c.n_a]])
      if (v >= 2 ** 53) fail(`${name} = ${fmtG(v, 3)} is beyond the supported range (below 2**53)`);
    // the batch limit and the token count scale with it: a count a double holds exactly
    const b_c = model.critical_batch * A.critical_batch_scale;
    if (!(b_c < 2 ** 53))
      fail(`the critical batch b_c = ${fmtG(b_c, 4)} of ${model.name} (critical_batch_scale=${fmtG(A.critical_batch_scale)}) is beyond the supported range (below 2**53)`, "critical_batch_scale");
    Object.assign(c, parseSparseInput(input, model, hardware));
    const run = parseRun(input, model, A, c, steps);
    return { model, hardware, A, method, c, maxOverhead, steps, form, warnings, run };
  }

  // lgacc.model.evaluator.check_schedule: a schedule's name or alias (null: the method's own pipeline) and its chunks n_v.
  function parseSchedule(value, n_v) {
    const S = DATA.schedules;
    let schedule = null;
    if (value !== undefined && value !== null && value !== "") {
      if (typeof value !== "string") fail(`schedule=${show(value)} must be a schedule's name (or unset: the method's own pipeline)`, "schedule");
      let text = value.trim().toLowerCase();
      text = own(S.aliases, text) || text;
      if (!S.names.includes(text)) {
        const names = [...S.names, ...Object.entries(S.aliases).map(([a, n]) => `${a} (= ${n})`)].join(", ");
        fail(`unknown schedule ${JSON.stringify(String(value))}; expected one of ${names}`, "schedule");
      }
      schedule = text;
    }
    let v = n_v === undefined || n_v === null || n_v === "" ? 1 : n_v;
    if (typeof v === "string" && /^\s*\d+\s*$/.test(v)) {
      if (BigInt(v.trim()) > BigInt(Number.MAX_SAFE_INTEGER)) fail(`n_v=${v.trim()} exceeds the largest supported count 2**53 - 1`, "n_v");
      v = Number(v);
    }
    if (typeof v === "boolean") fail(`n_v=${v ? "True" : "False"} must be a positive integer, not a boolean`, "n_v");
    if (typeof v !== "number" || !Number.isInteger(v)) fail(`n_v must be positive integers, got ${show(n_v)}`, "n_v");
    if (v < 1) fail(`n_v must be positive integers (>= 1), got ${v}`, "n_v");
    if (v > Number.MAX_SAFE_INTEGER) fail(`n_v=${show(n_v)} exceeds the largest supported count 2**53 - 1`, "n_v");
    if (!S.chunked.includes(schedule) && v !== 1) {
      const which = schedule === null ? "no schedule is given" : `schedule ${schedule} has one chunk per device`;
      fail(`n_v=${v}: ${which}; n_v (chunks per device) applies to ${S.chunked.join(" and ")} only`, "n_v");
    }
    return { schedule, n_v: v };
  }

  // ok_schedule of lgacc.model.evaluator.evaluate_many: the schedule's chunks hold whole layers; interleaved with
  // chunks runs the micro-batches in rounds of n_l.
  function scheduleAllows(model, A, sched, n_v, n_l, n_mu) {
    if (sched === null || n_l === 1) return true;
    const chunks = n_l * n_v;
    return chunks <= model.d_l && (!A.divisible_layers || model.d_l % chunks === 0)
      && (sched !== "interleaved" || n_v === 1 || n_mu % n_l === 0);
  }

  // lgacc.model.evaluator.overheads.data_network: "per-gpu" (the paper) or "ring" (DP_NETWORK, lgacc.model.formulas.ring).
  function dataNetwork(hw, A, n_b, inner, nu_ib, nu_nvlink) {
    if (A.dp_network !== "ring") return { threshold: nu_ib, card_share: 1.0 };
    const g = DP_NETWORK.peers(n_b, inner, hw.gpus_per_node);
    return { threshold: DP_NETWORK.threshold(nu_ib, nu_nvlink, n_b, g), card_share: DP_NETWORK.card_share(n_b, g) };
  }

  // One configuration, as lgacc.model.evaluator.evaluate_many computes it.
  function compose(model, hwGiven, method, c, A, maxOverhead, steps, form) {
    const f = FUNCTIONS[form];
    // lgacc.model.evaluator.sparse.sparse_setup: FP8 computes at the spec's dense FP8 peak (Hardware.at_precision)
    const n_e = c.n_e === undefined ? 1 : c.n_e, n_c = c.n_c === undefined ? 1 : c.n_c;
    const hw = c.precision === "fp8" ? { ...hwGiven, peak_flop_per_s: hwGiven.peak_fp8_flop_per_s } : hwGiven;
    const sched = c.schedule === undefined ? null : c.schedule;
    const n_v = c.n_v === undefined ? 1 : c.n_v;
    const pipelined = c.n_l > 1;
    const part = c.partitioned === null ? method.default_partitioned : c.partitioned;
    const off = c.offload;
    const { n_b, n_l, n_a, n_mu, b_mu } = c;
    const b = n_b * n_mu * b_mu;
    const n_gpu = n_b * n_l * n_a;  // the compute terms' GPUs; the configuration's count is n_gpu n_c
    const overlap = n_mu > n_l;
    // the three shapes of lgacc.model.evaluator.sparse: the compute terms read the active model on its sequence
    // shard, the state the parameters a GPU holds, the partitioned state the whole model (over n_c below)
    const p_active = model.p_active;
    const held = model.p_held(n_e);
    const args = [model.d_s / n_c, model.d_m, model.d_l, model.d_a, model.n_I_active, p_active, p_active / model.d_l, b, n_b, n_l, n_a, n_mu];
    const stateArgs = [model.d_s, model.d_m, model.d_l, model.d_a, model.n_I, held, held / model.d_l, b, n_b, n_l, n_a, n_mu];
    const baseArgs = [model.d_s, model.d_m, model.d_l, model.d_a, model.n_I, model.p, model.p_l, b, n_b, n_l, n_a, n_mu];
    const call = (name) => f[name](...args);
    const data_scale = p_active / held;
    // the schedule's terms (lgacc.model.evaluator.mapping.SCHEDULE_TERMS), read only where n_l > 1
    const term = (name) => SCHEDULE_FUNCTIONS[form][`${name}:${sched}`](...args, n_v);
    // a schedule whose reduction window spans every micro-batch accumulates layer by layer
    const layered = sched !== null && pipelined ? term("layered_window") > 0 : method.layered;
    const physical = A.convention === "physical";
    const loss = 1.0 / A.overlap_efficiency;
    const overlapped = (kind, ratio) => {
      if (!physical) return RULES.overlapped(ratio);
      let total = 0;
      for (const [name, relative] of DATA.physical[form][kind]) total = total + call(name) * RULES.overlapped(ratio * relative);
      return total;
    };
    const nu_ib = threshold(hw, "infiniband");
    const nu_nvlink = threshold(hw, "nvlink");

    const state = part ? f.state_part(...baseArgs) / n_c : f.state(...stateArgs);
    const checkpoint = call("checkpoint_memory") * (sched !== null && pipelined ? term("checkpoint_share") : 1.0);
    const buffers = f.buffers(...stateArgs);
    const activations = call("activations");
    const offloadable = state + checkpoint;
    const non_offloadable = buffers + activations;

    const bubble = !pipelined ? 0.0 : sched === null ? call(pick(DATA.maps.bubble, { layered }).derivation) : term("bubble");

    const tensor_on_ib = A.tensor_placement === "node" ? n_a > hw.gpus_per_node : true;
    const tensor_link = tensor_on_ib ? nu_ib : nu_nvlink;
    const nu_tensor = n_a > 1 ? call(DATA.maps.tensor) : Infinity;
    const tensor = n_a > 1 ? RULES.not_overlapped(tensor_link / nu_tensor) : 0.0;

    const pipe_on_nvlink = A.pipeline_placement === "intra-node" ? n_l * n_a <= hw.gpus_per_node : false;
    const pipe_link = pipe_on_nvlink ? nu_nvlink : nu_ib;
    // physical passes: the standard pipeline's for one chunk per device, else the modular one's
    const pipeCase = pick(DATA.maps.pipeline, { layered: sched === null ? layered : sched === "modular" || n_v > 1 });
    const nu_pipe = !pipelined ? Infinity : sched === null ? call(pipeCase.derivation) : term("pipeline_intensity");
    const ratio_pipe = pipe_link / nu_pipe;
    let pipe_overlapped = false;
    if (A.pipeline_overlap === "extra-micro-batches") pipe_overlapped = overlap && n_mu >= n_l * (1 + ratio_pipe * loss);
    else if (A.pipeline_overlap === "always") pipe_overlapped = overlap;
    const pipeline = n_l > 1
      ? (pipe_overlapped ? overlapped(pipeCase.physical, ratio_pipe * loss) : RULES.not_overlapped(ratio_pipe)) : 0.0;

    const dataCase = pick(DATA.maps.data, { layered, partitioned: part, pipelined: n_l > 1 });
    // a layered schedule hides the reduction behind its window, relative to the modular pipeline's
    const window = sched !== null && pipelined && layered ? term("data_window") : 1.0;
    const nu_data = n_b > 1 ? call(dataCase.derivation) * data_scale * window : Infinity;
    // assumption dp_network: the threshold the paper's per-GPU nu_b meets, the share of its bytes through the card
    const dp = dataNetwork(hw, A, n_b, n_a * (pipe_on_nvlink ? n_l : 1), nu_ib, nu_nvlink);
    const ratio_data = dp.threshold / nu_data;
    let data = dataCase.overlapped ? overlapped(dataCase.physical, ratio_data * loss) : RULES.not_overlapped(ratio_data);
    if (sched !== null && pipelined && !layered && !part) {
      // a replicated state under a schedule that does not hide the reduction behind every micro-batch: the
      // paper's not-overlapped rule, or its own window (none when d_l = n_l) if that costs less
      const own = term("data_overlap");
      if (own > 0) data = Math.min(data, overlapped("data_base", ratio_data * loss / own));
    }
    if (!(n_b > 1)) data = 0.0;

    const nu_cpu = threshold(hw, "cpu_gpu") * loss;
    const nu_state = off ? call(pick(DATA.maps.state_offload, { layered, partitioned: part }).derivation) : Infinity;
    const nu_checkpoint = off ? call(DATA.maps.checkpoint_offload) : Infinity;
    const state_offload = off ? overlapped("state_offload", nu_cpu / nu_state) : 0.0;
    const checkpoint_offload = off ? overlapped("checkpoint_offload", nu_cpu / nu_checkpoint) : 0.0;
    // The node's PCIe link carries the offload and every transfer that leaves the node.
    let inverse = 1 / nu_state + 1 / nu_checkpoint + dp.card_share / nu_data + (pipe_on_nvlink ? 0.0 : 1 / nu_pipe);
    inverse = inverse + (tensor_on_ib ? 1 / nu_tensor : 0.0);
    const nu_pcie = 1 / inverse;
    const pcie = off ? RULES.overlapped(threshold(hw, "pcie") * loss / nu_pcie) : 0.0;

    const overheads = { bubble, tensor, pipeline, data, state_offload, checkpoint_offload, pcie };

    // lgacc.model.evaluator.sparse.expert_overhead and context_overhead: the link a group spans (NVLink within a node)
    const link = (group) => (group > hw.gpus_per_node ? nu_ib : nu_nvlink);
    let expert = 0.0, nu_expert = Infinity, context = 0.0, nu_context = Infinity;
    if (model.sparse && n_e > 1) {
      nu_expert = 8.0 * p_active / (model.moe_layers * expertBytes(model, n_e));
      expert = link(n_e * n_a) / nu_expert;
    }
    if (n_c > 1) {
      nu_context = (8.0 * p_active / model.d_l) / contextBytes(model, n_c);
      context = Math.max(0.0, link(n_c * n_a) * loss / nu_context - 1);
    }
    const sparse_overheads = { expert, context };
    let efficiency = 1.0;
    for (const name of DATA.overheads) efficiency = efficiency / (1 + overheads[name]);
    for (const name of DATA.sparse_overheads) efficiency = efficiency / (1 + sparse_overheads[name]);

    const b_c = model.critical_batch * A.critical_batch_scale;
    const kernel = hw.kernel_efficiency === undefined ? 1.0 : hw.kernel_efficiency;
    const flop_rate = n_gpu * hw.peak_flop_per_s * kernel * efficiency;
    const flops = f.flops_per_batch(args[0], args[1], args[2], args[3], args[4], args[5], args[6], b_c, n_b, n_l, n_a, n_mu);
    const time_days = steps * flops / flop_rate / DATA.constants.SECONDS_PER_DAY;
    const step_time_s = call("flops_per_batch") / flop_rate;

    const limit = hw.memory_bytes;
    const ok = {
      ok_batch: b <= b_c,
      ok_micro_batches: n_l === 1 || n_mu >= n_l,
      ok_layers: n_l <= model.d_l,
      ok_layers_divide: !A.divisible_layers || model.d_l % n_l === 0,
      ok_heads: !A.heads_cap || n_a <= model.d_a,
      ok_heads_divide: !A.divisible_heads || model.d_a % n_a === 0 || (n_a > model.d_a && n_a % model.d_a === 0),
      // memory_limit "output": memory is reported, not a rule (lgacc.model.evaluator.rules)
      ok_memory: A.memory_limit === "output" || (off ? non_offloadable <= limit : offloadable + non_offloadable <= limit),
      ok_overheads: DATA.capped.every((name) => overheads[name] <= maxOverhead) && expert <= maxOverhead && context <= maxOverhead,
      ok_schedule: scheduleAllows(model, A, sched, n_v, n_l, n_mu),
      // lgacc.model.evaluator.evaluate._sparse_feasibility
      ok_experts: Math.max(model.experts, 1) % n_e === 0 && (n_b * n_c) % n_e === 0,
      ok_context: model.d_s % n_c === 0,
      ok_sparse_offload: !(off && (model.sparse || n_c > 1)),
    };
    return {
      b, n_gpu: n_gpu * n_c, n_e, n_c, sparse_overheads, expert_share: expert / (1 + expert),
      expert_intensity: nu_expert, context_intensity: nu_context, efficiency, time_days, step_time_s, state, checkpoint, buffers, activations, offloadable, non_offloadable,
      total: offloadable + non_offloadable, overheads, ok, feasible: Object.values(ok).every(Boolean), critical_batch: b_c,
      intensities: { data: nu_data, pipeline: nu_pipe, tensor: nu_tensor, state_offload: nu_state,
                     checkpoint_offload: nu_checkpoint, pcie: off ? nu_pcie : Infinity },
    };
  }

  // lgacc.model.evaluator.result.infeasibility_reasons, word for word.
  function reasons(model, hw, c, r, maxOverhead) {
    const out = [];
    const GIB = DATA.constants.GIB;
    if (!r.ok.ok_schedule) {
      if (model.d_l % (c.n_l * c.n_v)) out.push(`n_l n_v = ${c.n_l} x ${c.n_v} does not divide d_l=${model.d_l}: each of the ${c.schedule} schedule's chunks holds whole layers (assumption divisible_layers)`);
      else out.push(`n_mu=${c.n_mu} is not a multiple of n_l=${c.n_l}: the interleaved schedule with n_v=${c.n_v} runs the micro-batches in rounds of n_l`);
    }
    if (!r.ok.ok_batch) out.push(`batch b=${r.b} exceeds the critical batch b_c=${fmtF(r.critical_batch, 1)} (eq:critical_batch)`);
    if (!r.ok.ok_micro_batches) out.push(`n_mu=${c.n_mu} < n_l=${c.n_l}: the pipeline needs at least one micro-batch per stage`);
    if (!r.ok.ok_layers_divide) out.push(`n_l=${c.n_l} does not divide d_l=${model.d_l}: a pipeline stage holds whole layers (assumption divisible_layers)`);
    if (!r.ok.ok_heads) out.push(`n_a=${c.n_a} exceeds the head count d_a=${model.d_a}: tensor parallelism splits the heads (assumption heads_cap)`);
    if (!r.ok.ok_heads_divide) out.push(`n_a=${c.n_a} does not split the d_a=${model.d_a} heads evenly (assumption divisible_heads)`);
    if (!r.ok.ok_memory) {
      const limit = hw.memory_bytes / GIB;
      if (c.offload) out.push(`non-offloadable memory ${fmtG(r.non_offloadable / GIB, 3)} GiB exceeds the GPU's ${fmtG(limit)} GiB`);
      else out.push(`memory ${fmtG(r.total / GIB, 3)} GiB exceeds the GPU's ${fmtG(limit)} GiB without offload`);
    }
    const all = { ...r.overheads, ...r.sparse_overheads };
    for (const name of [...DATA.capped, ...DATA.sparse_overheads]) {
      if (!isFinite(all[name])) out.push(`${name} overhead is unbounded (larger than a float holds) and exceeds the maximum ${fmtG(maxOverhead)} (eq:overhead_condition)`);
      else if (all[name] > maxOverhead) out.push(`${name} overhead ${fmtG(all[name], 3)} exceeds the maximum ${fmtG(maxOverhead)} (eq:overhead_condition)`);
    }
    if (!r.ok.ok_experts) out.push(`n_e=${c.n_e} must divide the experts (${model.experts}) and n_b n_c = ${c.n_b * c.n_c} (expert parallelism folds into the data- and context-parallel ranks)`);
    if (!r.ok.ok_context) out.push(`n_c=${c.n_c} does not divide the sequence d_s=${model.d_s} (context parallelism)`);
    if (!r.ok.ok_sparse_offload) out.push("offload is not modelled with experts or context parallelism");
    return out;
  }

  const finite = (x) => (isFinite(x) ? x : null);
  const method_layered = (c) => own(DATA.methods, c.method).layered;

  function summary(model, hw, c, r, maxOverhead, warnings) {
    const GIB = DATA.constants.GIB;
    const why = reasons(model, hw, c, r, maxOverhead);
    const overheads = {};
    for (const name of DATA.overheads) overheads[name] = finite(r.overheads[name]);
    const s = {
      b: r.b, n_gpu: r.n_gpu, efficiency: finite(r.efficiency), time_days: finite(r.time_days),
      step_time_s: finite(r.step_time_s),
      memory_gib: {
        state: r.state / GIB, checkpoint: r.checkpoint / GIB, buffers: r.buffers / GIB, activations: r.activations / GIB,
        offloadable: r.offloadable / GIB, non_offloadable: r.non_offloadable / GIB,
      },
      overheads, feasible: r.feasible && why.length === 0, reasons: why,
      schedule: c.schedule === null || c.schedule === undefined ? own(DATA.schedules.default, String(method_layered(c))) : c.schedule,
      n_v: c.n_v === undefined ? 1 : c.n_v,
      n_e: r.n_e, n_c: r.n_c, precision: c.precision,
      sparse_overheads: Object.fromEntries(DATA.sparse_overheads.map((name) => [name, finite(r.sparse_overheads[name])])),
      all_to_all_share: finite(r.expert_share), recompute: DATA.constants.PAPER_RECOMPUTE,
      warnings: warnings === undefined ? [] : [...warnings],
    };
    checkNumbers(model, r, s);
    return s;
  }

  // No result is NaN, and none shows an infinite memory or a feasible configuration without a time: numbers that leave
  // the range of a double (a model of 1e200 parameters) are refused in one line instead.
  function checkNumbers(model, r, s) {
    const numbers = [r.efficiency, r.time_days, r.step_time_s, ...Object.values(r.overheads), ...Object.values(s.memory_gib)];
    const beyond = `${model.name}: its numbers leave the range of a double (up to 1.8e+308) on this configuration`;
    if (numbers.some(Number.isNaN)) fail(`${beyond} (a result is not a number)`);
    if (!Object.values(s.memory_gib).every(isFinite)) fail(`${beyond} (the memory per GPU is infinite)`);
    if (s.feasible && !(s.efficiency > 0 && s.time_days !== null && s.step_time_s !== null)) fail(`${beyond} (the training time is not finite)`);
  }

  function details(input) {
    const q = parseInput(input);
    const r = compose(q.model, q.hardware, q.method, q.c, q.A, q.maxOverhead, q.steps, q.form);
    const s = summary(q.model, q.hardware, q.c, r, q.maxOverhead, q.warnings);
    Object.assign(s, runKeys(q.run, q.model, s.n_gpu, s.time_days, ""));
    return {
      summary: s, raw: r, model: q.model, hardware: q.hardware, run: q.run,
      config: q.c, memory_limit_gib: q.hardware.memory_bytes / DATA.constants.GIB, critical_batch: r.critical_batch,
      max_overhead: q.maxOverhead,
    };
  }

  function evaluate(input) { return details(input).summary; }
