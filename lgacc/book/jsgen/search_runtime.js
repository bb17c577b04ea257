  const PARALLELISMS = DATA.search.parallelisms;
  const TOLERANCE = DATA.search.tolerance;
  const OVERLAPPED = DATA.search.overlapped;
  const SEARCH_RULES = DATA.search.rules;

  const pyBool = (v) => (v ? "True" : "False");
  // The page's search stops after this long (seconds), or once it lists this many candidates (memory): a model whose
  // search space is too large for a page gets a message instead of a frozen tab; lgacc optimize searches it in full.
  const SEARCH_TIME_LIMIT_S = 1;
  const SEARCH_MAX_CANDIDATES = 2000000;

  // A clock for one search: tick() stops it, with a message naming the model, once its time is spent.
  function searchClock(limitS, model, bc, progress) {
    const now = () => (typeof performance !== "undefined" ? performance.now() : Date.now());
    const deadline = now() + 1000 * limitS;
    let calls = 0;
    const stop = (why) => {
      const e = new InputError(`search stopped ${why} with ${progress()}: the search space of ${model.name} `
        + `(d_l=${model.d_l}, d_a=${model.d_a}, critical batch ${fmtG(bc, 4)}) is too large for this page; `
        + "lgacc optimize searches it in full");
      e.stopped = true;
      throw e;
    };
    const tick = (force) => {
      if ((++calls & 255) !== 0 && !force) return;
      if (now() > deadline) stop(`after ${fmtG(limitS)} s`);
    };
    return { tick, stop };
  }

  // lgacc.search.fastest: the candidates of lgacc.search.candidates, the masks of lgacc.search.rules,
  // its preference order, and lgacc.search.explain.infeasible_reason when nothing passes.
  // time_limit_s (default SEARCH_TIME_LIMIT_S) bounds the time it may take.
  function fastest(input) {
    if (!isRecord(input)) fail("search input must be an object with keys model, hardware, method, parallelism, ...");
    const base = { ...input, n_b: 1, n_l: 1, n_a: 1, n_mu: 1, b_mu: 1, offload: false };
    const parallelismName = input.parallelism === undefined ? "3d" : input.parallelism;
    delete base.parallelism; delete base.allow_offload; delete base.max_gpus; delete base.time_limit_s;
    const allowed = own(PARALLELISMS, parallelismName);
    if (!allowed) fail(`unknown parallelism ${show(parallelismName)}; expected one of ${Object.keys(PARALLELISMS).join(", ")}`, "parallelism");
    const [useData, usePipe, useTensor] = allowed;
    const allowOffload = input.allow_offload === undefined ? true : flag("search", "allow_offload", input.allow_offload, false);
    const limitS = input.time_limit_s === undefined ? SEARCH_TIME_LIMIT_S : input.time_limit_s;
    if (typeof limitS !== "number" || !(limitS > 0) || !isFinite(limitS)) fail(`time_limit_s=${show(limitS)} must be a positive number of seconds`, "time_limit_s");
    const q = parseInput(base);
    refuseSparseCase(q, "search");  // lgacc optimize explores n_e and n_c; this search does not
    const { model, hardware, A, method, maxOverhead, steps } = q;
    let evaluated = 0, listed = 0;
    function range(lo, hi) { const out = []; for (let i = lo; i <= hi; i++) { tick(); out.push(i); } return out; }
    const form = "paper";  // lgacc optimize evaluates the paper's printed forms
    const partitioned = q.c.partitioned;
    const { schedule, n_v } = q.c;
    // lgacc.search.request.SearchRequest.create: the chunks must fit the model
    if (n_v > model.d_l) fail(`n_v=${n_v} exceeds the ${model.name} layer count d_l=${model.d_l} (a chunk needs at least one layer)`, "n_v");
    if (A.divisible_layers && model.d_l % n_v) fail(`n_v=${n_v} does not divide the ${model.name} layer count d_l=${model.d_l}: no pipeline holds whole chunks (assumption divisible_layers)`, "n_v");
    // interleaved with chunks runs the micro-batches in rounds of n_l (lgacc.search.core._rounds)
    const rounds = schedule === "interleaved" && n_v > 1;
    const part = partitioned === null ? method.default_partitioned : partitioned;
    const noPipeline = part && !method.layered;
    const baselineLike = !method.layered && !part;
    const bc = model.critical_batch * A.critical_batch_scale;
    const B = Math.floor(bc);
    const clock = searchClock(limitS, model, bc, () => `${evaluated} configurations evaluated and ${listed} listed`);
    const tick = clock.tick;
    let maxGpus = null;
    if (input.max_gpus !== undefined && input.max_gpus !== null && input.max_gpus !== "") {
      if (typeof input.max_gpus !== "number" || !Number.isInteger(input.max_gpus) || input.max_gpus < 1)
        fail(`max_gpus=${show(input.max_gpus)} must be a positive integer`, "max_gpus");
      // lgacc.search.request: more GPUs than the largest configuration can use changes nothing
      maxGpus = Math.min(input.max_gpus, Math.max(1, B) * model.d_l * 2 * model.d_a);
    }
    const layersAllowed = (n_l) => !A.divisible_layers || model.d_l % n_l === 0;
    const headsAllowed = (n_a) => (!A.heads_cap || n_a <= model.d_a)
      && (!A.divisible_heads || model.d_a % n_a === 0 || (n_a > model.d_a && n_a % model.d_a === 0));
    const withinBudget = (n) => maxGpus === null || n <= maxGpus;
    const n_ls = (usePipe && !noPipeline ? range(1, model.d_l) : [1]).filter((n) => layersAllowed(n) && withinBudget(n));
    const offloads = allowOffload && A.memory_limit !== "output" ? [false, true] : [false];
    const run = (c) => { tick(true); return compose(model, hardware, method, { method: q.c.method, partitioned, schedule, n_v, ...c }, A,
                                                    maxOverhead, steps, form); };
    // lgacc.search.candidates.tensor_cap: the largest n_a within the overhead cap (NVLink in the node, InfiniBand beyond)
    const tensorCap = () => {
      const LIMIT = 2 ** 40;
      const ok = (n_a) => run({ n_b: 1, n_l: 1, n_a, n_mu: 1, b_mu: 1, offload: false }).overheads.tensor <= maxOverhead;
      const largest = (low, high) => {
        let good = low, step = 1;
        while (good + step <= high && ok(good + step)) { good += step; step *= 2; }
        let bad = Math.min(good + step, high + 1);
        while (bad - good > 1) { const mid = Math.floor((good + bad) / 2); if (ok(mid)) good = mid; else bad = mid; }
        return good;
      };
      const node = Math.min(hardware.gpus_per_node, LIMIT);
      return node < LIMIT && ok(node + 1) ? largest(node + 1, LIMIT) : largest(1, node);
    };
    let topHeads = useTensor && !A.heads_cap ? Math.max(model.d_a, tensorCap()) : model.d_a;
    if (maxGpus !== null) topHeads = Math.min(topHeads, maxGpus);
    const n_as = (useTensor ? range(1, topHeads) : [1]).filter((n) => headsAllowed(n) && withinBudget(n));
    const free = (r, n_l) => OVERLAPPED.every((k) => r.overheads[k] <= TOLERANCE)
      && (r.overheads.data <= TOLERANCE || (baselineLike && n_l > 1));
    // lgacc.search.rules.request_masks, in the order of RULES: those that need no evaluation, then the others
    // (with a schedule, lgacc.search.core._masks: its own rules join structure, micro-batches and critical batch)
    const plainMasks = (c) => {
      const b = c.n_b * c.n_mu * c.b_mu;
      const scheduleOk = scheduleAllows(model, A, schedule, n_v, c.n_l, c.n_mu);
      const step = c.n_l > 1 ? c.n_l : 1;
      return {
        "structure": (c.n_b === 1 || useData) && c.n_l <= model.d_l && layersAllowed(c.n_l) && headsAllowed(c.n_a) && scheduleOk,
        "critical batch": rounds ? b <= B && c.n_b * (c.n_mu + step) * c.b_mu > B : b <= bc && b + c.n_b * c.b_mu > bc,
        "micro-batches": c.n_mu >= c.n_l && (!rounds || scheduleOk),
        "GPU budget": withinBudget(c.n_b * c.n_l * c.n_a),
      };
    };
    const evaluatedMasks = (c, r) => ({
      "memory": r.ok.ok_memory,
      "overhead cap": r.ok.ok_overheads,
      "bottleneck": free(r, c.n_l),
      "offload": !c.offload || (r.total > hardware.memory_bytes && allowOffload),
    });
    const all = (m) => Object.values(m).every(Boolean);

    // micro-batch caps (lgacc.search.candidates.micro_batch_caps): smallest bottleneck-free probe at n_mu = n_l
    const probeSet = new Set(range(1, 16));
    for (let k = 5; k <= Math.max(5, B.toString(2).length); k++) probeSet.add(2 ** k);
    probeSet.add(B);
    const probes = [...probeSet].filter((p) => p <= B).sort((x, y) => x - y);
    // (n_b, n_mu) with n_mu = floor(K / n_b), K = floor(B / b_mu), and n_b the largest for its n_mu (lgacc.search.candidates.levels)
    const levelCache = new Map();
    const levels = (b_mu) => {
      if (!levelCache.has(b_mu)) {
        const K = Math.floor(B / b_mu);
        const nbs = new Set();
        for (let root = 1; root * root <= K; root++) { tick(); nbs.add(root); nbs.add(Math.floor(K / root)); }
        const rows = [];
        for (const n_b of [...nbs].sort((x, y) => x - y)) {
          const n_mu = Math.floor(K / n_b);
          if (n_b === Math.floor(K / n_mu)) rows.push([n_b, n_mu]);
        }
        levelCache.set(b_mu, rows);
      }
      return levelCache.get(b_mu);
    };
    // the lattice just below the critical batch (lgacc.search.candidates.lattice), within the GPU budget
    const lattice = (n_l, n_a, bmuMax) => {
      let rows = [];
      for (let b_mu = 1; b_mu <= Math.min(bmuMax, B); b_mu++) for (const [n_b, n_mu] of levels(b_mu)) { tick(); rows.push([n_b, n_mu, b_mu]); }
      if (maxGpus !== null) {
        const cap = Math.floor(maxGpus / (n_l * n_a));
        if (cap < 1) return [];
        rows = rows.filter(([n_b]) => n_b <= cap);
        for (let b_mu = 1; b_mu <= bmuMax; b_mu++) {
          tick();
          const K = Math.floor(B / b_mu);
          if (K >= 1 && K > cap && Math.floor(K / Math.max(Math.floor(K / cap), 1)) !== cap) rows.push([cap, Math.floor(K / cap), b_mu]);
        }
      }
      return rows.filter(([, n_mu]) => n_mu >= n_l);
    };
    const candidates = [];
    for (const n_l of n_ls) for (const n_a of n_as) for (const offload of offloads) {
      let cap = 0;
      for (const p of [...probes.filter((v) => v < Math.floor(B / n_l)), Math.floor(B / n_l)]) {
        if (p < 1) break;
        let n_b = Math.max(1, Math.floor(B / (p * n_l)));
        if (maxGpus !== null) n_b = Math.max(1, Math.min(n_b, Math.floor(maxGpus / (n_l * n_a))));
        const r = run({ n_b, n_l, n_a, n_mu: Math.floor(B / (p * n_b)), b_mu: p, offload });
        evaluated++;
        if (free(r, n_l)) { cap = p; break; }  // probes ascend: the first free one is the smallest
      }
      for (const [n_b, n_mu, b_mu] of lattice(n_l, n_a, cap)) {
        // rounds of n_l: n_mu rounded down to a multiple of n_l (lgacc.search.core._schedule_candidates)
        tick();
        if (++listed > SEARCH_MAX_CANDIDATES) clock.stop(`at ${SEARCH_MAX_CANDIDATES} candidates`);
        candidates.push({ n_b, n_l, n_a, n_mu: rounds && n_l > 1 ? n_l * Math.floor(n_mu / n_l) : n_mu, b_mu, offload });
      }
    }
    if (candidates.length === 0) {
      return { feasible: false, evaluated, warnings: q.warnings,
               reasons: ["critical batch: no configuration of this parallelism fits below the critical batch"] };
    }
    const better = (x, y) => {
      // lgacc.search.rules.preference_keys: (highest n_l for the baseline with a pipeline), time, n_gpu, b_mu, offload, -n_a
      const kx = [], ky = [];
      if (baselineLike && usePipe) { kx.push(-x.c.n_l); ky.push(-y.c.n_l); }
      kx.push(x.r.time_days, x.r.n_gpu, x.c.b_mu, x.c.offload ? 1 : 0, -x.c.n_a);
      ky.push(y.r.time_days, y.r.n_gpu, y.c.b_mu, y.c.offload ? 1 : 0, -y.c.n_a);
      for (let i = 0; i < kx.length; i++) { if (kx[i] < ky[i]) return true; if (kx[i] > ky[i]) return false; }
      return false;
    };
    // Visit by decreasing GPU count (the baseline with a pipeline: by decreasing n_l first) and stop once
    // perfect efficiency on that many GPUs cannot beat the best time (lgacc.search.core._branch_and_bound):
    // time x efficiency x n_gpu is the same for every configuration (the paper's fixed token count).
    const byLayers = baselineLike && usePipe;
    const gpus = (c) => c.n_b * c.n_l * c.n_a;
    const order = candidates.map((c, i) => i);  // a stable sort: ties keep the candidates' order
    order.sort((i, j) => {
      const x = candidates[i], y = candidates[j];
      return (byLayers && x.n_l !== y.n_l ? y.n_l - x.n_l : gpus(y) - gpus(x)) || i - j;
    });
    let best = null, gpuDays = null, level = null;
    for (const i of order) {
      tick();
      const c = candidates[i];
      if (byLayers && c.n_l !== level) { if (best !== null) break; level = c.n_l; }
      if (best !== null && gpuDays !== null && gpuDays / gpus(c) > best.r.time_days * (1 + 1e-12)) {
        if (byLayers) continue; else break;
      }
      if (!all(plainMasks(c))) continue;  // its evaluation could not make it valid
      const r = run(c);
      evaluated++;
      if (gpuDays === null) gpuDays = r.time_days * r.efficiency * r.n_gpu;
      if (!all(evaluatedMasks(c, r))) continue;
      const entry = { c, r };
      if (best === null || better(entry, best)) best = entry;
    }
    const chosenInput = (c) => {
      const chosen = { ...base, ...c, partitioned };
      if (chosen.partitioned === null) delete chosen.partitioned;
      delete chosen.form;
      return chosen;
    };
    if (best === null) {
      return { feasible: false, evaluated, warnings: q.warnings,
               reasons: [infeasibleReason(candidates, plainMasks, evaluatedMasks, run, chosenInput, tick)] };
    }
    return { ...evaluate(chosenInput(best.c)), n_b: best.c.n_b, n_l: best.c.n_l, n_a: best.c.n_a, n_mu: best.c.n_mu,
             b_mu: best.c.b_mu, offload: best.c.offload, evaluated };
  }

  // lgacc.search.explain.infeasible_reason: the rule that removed the last candidates, with the evaluator's
  // reasons for the fastest candidate alive before it.
  function infeasibleReason(candidates, plainMasks, evaluatedMasks, run, chosenInput, tick) {
    let alive = candidates.map((c) => { tick(); return { c, m: plainMasks(c) }; });
    let evaluatedAll = false;
    for (const name of Object.keys(SEARCH_RULES)) {
      if (!(name in alive[0].m) && !evaluatedAll) {  // the survivors of the plain rules, evaluated once
        for (const row of alive) { row.r = run(row.c); Object.assign(row.m, evaluatedMasks(row.c, row.r)); }
        evaluatedAll = true;
      }
      const survivors = alive.filter((row) => row.m[name]);
      if (survivors.length === 0) {
        if (alive.length === 0) break;
        for (const row of alive) if (row.r === undefined) row.r = run(row.c);
        let nearest = alive[0];
        for (const row of alive) if (row.r.time_days < nearest.r.time_days) nearest = row;
        const c = nearest.c;
        const summary = evaluate(chosenInput(c));
        let detail = summary.reasons.join("; ");
        if (!detail) {
          detail = Object.entries(summary.overheads)
            .filter(([k, v]) => (OVERLAPPED.includes(k) || k === "data") && v > TOLERANCE)
            .map(([k, v]) => `${k} overhead ${fmtG(v, 3)}`).join(", ");
        }
        let text = `${name}: ${SEARCH_RULES[name]}`;
        if (detail) text += ` (e.g. n_b=${c.n_b}, n_l=${c.n_l}, n_a=${c.n_a}, n_mu=${c.n_mu}, b_mu=${c.b_mu}, offload=${pyBool(c.offload)}: ${detail})`;
        return text;
      }
      alive = survivors;
    }
    return "structure: no configuration of this parallelism fits the model";
  }
