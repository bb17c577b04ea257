"""Why each configuration of the trillion-parameter example wins, in sentences whose numbers are computed.

The book's trillion-parameter page explains, method by method, which rule binds the
configuration :func:`lgacc.search.fastest` picks for X_160 (``table:parallel_methods_comparison``):
the micro-batch a bottleneck allows, the data-parallel degree the critical batch leaves, the bubble,
the cost of tensor parallelism past the node, whether overlapping the pipeline transfers pays.
:func:`narrative_markdown` writes those paragraphs from the searches and from evaluations of the
neighbouring configurations; every number in it is computed, and a comparison ("beats", "costs
more") is worded from the numbers.  It is written for the paper's hardware, which the paragraphs
discuss (the page's tables follow the build's).
"""

from __future__ import annotations

import math
from dataclasses import replace

from lgacc.cache.results import cached
from lgacc.model.evaluator import evaluate
from lgacc.model.hardware import Hardware, load_hardware
from lgacc.model.transformer import TRILLION_X, x_model
from lgacc.search import fastest

from ..printed import PAPER_HARDWARE

__all__ = ["narrative_markdown"]


def _percent(fraction: float) -> str:
    """``0.0709`` -> ``7.1 %``; ``1.078`` -> ``108 %``."""
    return f"{100 * fraction:.2g} %" if fraction < 1 else f"{100 * fraction:.0f} %"


def narrative_markdown(hardware: Hardware | str = PAPER_HARDWARE) -> str:
    """Three paragraphs (baseline, partitioned, improved) on the configurations of X_160; kept on disk."""
    spec = load_hardware(hardware)
    return cached("trillion-narrative", spec, lambda: _narrative(spec))


def _narrative(spec: Hardware) -> str:
    model = x_model(TRILLION_X)
    b_c = model.critical_batch

    def best(method: str, parallelism: str):
        return fastest(model, spec, method, parallelism, explain=False)

    alone, data, pipe, three_d = (best("baseline", p) for p in ("None", "Data", "Data + pipe", "3d"))
    partitioned, improved = best("partitioned", "Data + tensor"), best("improved", "3d")
    missing = [name for name, r in (("baseline without parallelism", alone), ("data-parallel baseline", data),
                                    ("data + pipe baseline", pipe), ("3d baseline", three_d),
                                    ("data + tensor partitioned", partitioned), ("3d improved", improved))
               if not r.feasible]
    if missing:
        return (f"On {spec.name} the search finds no feasible configuration of X<sub>{TRILLION_X}</sub> for the "
                f"{', '.join(missing)}; these paragraphs are written for the paper's hardware, {PAPER_HARDWARE}.")
    paragraphs = []

    # -- baseline --------------------------------------------------------------------------------------
    c1, c2 = alone.config, data.config
    state_tib = data.evaluation.memory.in_gib()["state"] / 1024
    text = (f"**Baseline.** Without a pipeline, the whole training state lives in CPU memory and crosses the "
            f"CPU-GPU link once per micro-batch. Its intensity, $b_\\mu d_s$, needs $b_\\mu \\geq {c1.b_mu}$ on one GPU.")
    if c2.b_mu > c1.b_mu:
        text += (f" With data parallelism, the gradient reduction shares the node's PCIe link with those transfers, "
                 f"so $b_\\mu = {c2.b_mu}$.")
    text += (f" The critical batch, {b_c:.0f} samples, then allows $n_b = \\lfloor {b_c:.0f}/{c2.b_mu} \\rfloor = "
             f"{math.floor(b_c / c2.b_mu)}$ instances" + (f" (the search takes {c2.n_b})" if c2.n_b != math.floor(b_c / c2.b_mu) else "")
             + f", and the state ({state_tib:.3g} TiB per GPU) must be offloaded.")
    paragraphs.append(text)

    p, t = pipe.config, three_d.config
    bubbles = [(r.config.n_l - 1) / r.config.n_mu for r in (pipe, three_d)]
    equals = "d_l = " if t.n_l == model.d_l else ""
    text = (f"With a pipeline, the paper's rule takes the highest pipeline degree, $n_l = {equals}{t.n_l}$. "
            "Two limits then meet: the batch has to hold "
            "$n_\\mu \\geq n_l$ micro-batches (plus extra ones that overlap the pipeline transfers), and it has to "
            f"stay below the critical batch. Together they leave only {p.n_b} (Data + pipe) or {t.n_b} (3d) instances, "
            f"and the bubble $(n_l - 1)/n_\\mu$ ({bubbles[0]:.2f} and {bubbles[1]:.2f}) brings the efficiency down to "
            f"{pipe.evaluation.efficiency:.2f} and {three_d.evaluation.efficiency:.2f}.")
    if t.n_mu > t.n_l:  # the chosen 3d baseline overlaps the pipeline transfers: against one more instance without
        plain_n_mu = max(t.n_l, math.floor(b_c / ((t.n_b + 1) * t.b_mu)))
        plain = evaluate(model, spec, replace(t, n_b=t.n_b + 1, n_mu=plain_n_mu, overlap_pipeline=False))
        if plain.feasible:
            gain = plain.time_days / three_d.evaluation.time_days - 1
            verb = "beat" if gain > 0 else "lose to"
            text += (f" Overlapping the pipeline transfers: {t.n_b} instances of {t.n_mu} micro-batches {verb} "
                     f"{t.n_b + 1} of {plain_n_mu} without overlap by {_percent(abs(gain))}.")
    paragraphs.append(text)

    # -- partitioned -----------------------------------------------------------------------------------
    c = partitioned.config
    e = partitioned.evaluation
    text = (f"**Partitioned.** Partitioning removes the memory problem: the state drops to "
            f"{e.memory.in_gib()['state']:.2g} GiB per GPU with tensor parallelism. The price is the gradient "
            "reduction, whose forward all-gather repeats for every micro-batch. Its intensity is $b_\\mu d_s / 2$, "
            f"which needs $b_\\mu \\geq {c.b_mu}$ over InfiniBand, for {c.n_b} instances. Tensor parallelism over "
            f"the {c.n_a} GPUs of an NVLink node costs {_percent(e.overheads['tensor'])}.")
    wider = next((n for n in range(c.n_a + 1, model.d_a + 1) if model.d_a % n == 0), None)
    if wider is not None and wider > spec.gpus_per_node:
        cost = evaluate(model, spec, replace(c, n_a=wider)).overheads["tensor"]
        text += (f" A {wider}-way split would have to cross InfiniBand, where it would cost {_percent(cost)}, "
                 f"so $n_a = {c.n_a}$.")
    paragraphs.append(text)

    # -- improved --------------------------------------------------------------------------------------
    c = improved.config
    e = improved.evaluation
    text = ("**Improved.** Layered gradient accumulation reduces the gradients once per batch rather than once per "
            f"micro-batch, so $b_\\mu = {c.b_mu}$ suffices. The bottleneck moves to the number of micro-batches: the "
            f"intensity $n_\\mu d_s / 2$ needs $n_\\mu \\geq {c.n_mu}$. That gives {c.n_b} instances, and modular "
            f"pipeline parallelism can use all {c.n_mu} micro-batches as $n_l = {c.n_l}$ stages. Its bubble is only "
            f"$(n_l-1)/(n_\\mu d_l/n_l)$ = {_percent(e.overheads['bubble'])}.")
    fewer = math.floor(b_c / ((c.n_mu + 1) * c.b_mu))
    lost = 1 - fewer / c.n_b
    transfers = e.overheads["pipeline"]
    if transfers > 0:
        text += (f" An extra micro-batch to overlap the pipeline transfers would cost {_percent(lost)} of the instances "
                 f"({fewer} instead of {c.n_b}), against the {_percent(transfers)} those transfers cost when not "
                 "overlapped, so the search " + ("does not overlap" if lost > transfers else "overlaps")
                 + (". That is the paper's remark that overlapping is \"in general not preferable\" for the improved "
                    "method." if lost > transfers else "."))
    text += (f" The result is {e.n_gpu:,} GPUs at {e.efficiency:.2f} efficiency: {e.time_days:.2g} days.")
    paragraphs.append(text)
    return "\n\n".join(paragraphs)
