"""The configuration behind each printed row of ``table:smaller_cluster``, decoded from the row's own cells.

The table prints ``b, n_a, n_gpu``, the offloadable and non-offloadable memory, the efficiency and the time of
hand-picked examples ("it is also far more flexible, as shown for example in the last two entries").  Its
configuration follows from the cells that describe it, never from the efficiency or the time it is graded on:

1. ``n_b n_l = n_gpu / n_a`` and ``b = n_b n_mu b_mu`` with ``n_mu >= n_l`` and ``n_l <= d_l``, the dimensions
   the parallelism column allows (:func:`candidate_configurations`);
2. offload exactly when the memory needs it (the paper's "offload ... when needed"): the total above the
   GPU's memory;
3. the printed memory at its printed digits: the offloadable memory (state ``12 p / (n_l n_a)`` without the
   partition, ``12 p / n_gpu`` with it, plus the checkpoints ``2 b d_s d_m d_l / n_gpu``) fixes ``n_l`` for the
   baseline, the non-offloadable memory (buffers ``6 p_l / n_a`` and activations ``b_mu d_s m_0 / n_a``) fixes
   ``b_mu``;
4. where several remain (with the partition the memory does not see ``n_l``), the paper's own selection rules
   decide: a configuration within its rules (the overhead cap, no bottleneck), then "the highest possible
   pipeline parallelism" for the baseline and "we maximize ``n_b``" otherwise.

Each decoding keeps its candidates and which step left which, so the page shows the computation.  The
decoding reads the paper's numbers, so it runs on the paper's hardware; the decoded configuration is then
evaluated on any.
"""

from __future__ import annotations

from dataclasses import dataclass

from lgacc.model.config import Method, TrainingConfig
from lgacc.model.evaluator import Evaluation, evaluate
from lgacc.model.hardware import Hardware, load_hardware
from lgacc.model.transformer import TRILLION_X, Transformer, x_model

from ..printed import PAPER_HARDWARE, load_paper, parse_printed

__all__ = ["Decoding", "candidate_configurations", "decode_row", "decode_table"]

LABEL = "table:smaller_cluster"
#: The memory cells a decoding reads (the efficiency and time are what it is graded on).
MEMORY_CELLS = ("offloadable", "non_offloadable")


def candidate_configurations(
    method: str, parallelism: str, b: int, n_a: int, n_gpu: int, d_l: int, *, offload: bool = False
) -> list[TrainingConfig]:
    """Every configuration with the printed ``b, n_a, n_gpu`` and the printed parallelism:
    ``n_b n_l = n_gpu / n_a``, ``b = n_b n_mu b_mu``, ``n_mu >= n_l``, ``n_l <= d_l``."""
    if n_gpu % n_a:
        return []
    product = n_gpu // n_a
    out = []
    for n_l in range(1, min(product, d_l) + 1):
        if product % n_l:
            continue
        n_b = product // n_l
        uses_data, uses_pipe = n_b > 1, n_l > 1
        if parallelism in ("Data + tensor", "Data") and (n_l != 1 or not uses_data):
            continue
        if parallelism == "Pipe + tensor" and (n_b != 1 or not uses_pipe):
            continue
        if parallelism in ("3d", "Data + pipe") and not (uses_data and uses_pipe):
            continue
        if b % n_b:
            continue
        per_instance = b // n_b
        for b_mu in range(1, per_instance + 1):
            if per_instance % b_mu:
                continue
            n_mu = per_instance // b_mu
            if n_mu < n_l:
                continue
            out.append(TrainingConfig(Method(method.lower()), n_b=n_b, n_l=n_l, n_a=n_a, n_mu=n_mu, b_mu=b_mu,
                                      offload=offload))
    return out


@dataclass(frozen=True)
class Decoding:
    """One printed row decoded: the configuration, and the computation that chose it.

    ``candidates``: how many configurations have the row's ``b, n_a, n_gpu`` and parallelism; ``offload_ok``:
    how many of them offload exactly when needed; ``memory_ok``: the configurations that also give the printed
    memory (with their evaluation on the paper's hardware); ``memory_matched``: whether any did (if none, the
    configuration with the nearest memory is kept and the memory cells show it); ``rule``: how the last choice
    among ``memory_ok`` was made (the only one; or within the paper's rules, the most ``n_l`` for the baseline
    and the most ``n_b`` otherwise).
    """

    parallelism: str
    method: str
    config: TrainingConfig
    candidates: int
    offload_ok: int
    memory_ok: tuple[tuple[TrainingConfig, Evaluation], ...]
    memory_matched: bool
    rule: str

    @property
    def summary(self) -> str:
        c = self.config
        return (f"n_b={c.n_b} n_l={c.n_l} n_a={c.n_a} n_mu={c.n_mu} b_mu={c.b_mu}" + (" offload" if c.offload else ""))


def _memory_distance(printed: dict, evaluation: Evaluation) -> float:
    gib = evaluation.memory.in_gib()
    return sum(abs(gib[cell] / parse_printed(printed[cell]).value - 1) for cell in MEMORY_CELLS)


def _preference(method: str, config: TrainingConfig, evaluation: Evaluation) -> tuple:
    """The paper's selection rules as a sort key: within its rules first, then the most pipeline stages for the
    baseline ("the highest possible pipeline parallelism") and the most data-parallel instances otherwise ("we
    maximize n_b"), then the smaller micro-batch."""
    order = -config.n_l if method == "Baseline" else -config.n_b
    return (not evaluation.feasible, order, config.b_mu)


def decode_row(printed: dict, model: Transformer | None = None, hardware: Hardware | str = PAPER_HARDWARE) -> Decoding:
    """The configuration of one printed row of ``table:smaller_cluster`` (see the module's steps)."""
    model = model or x_model(TRILLION_X)
    spec = load_hardware(hardware)
    method = str(printed["method"])
    every = [config for offload in (False, True) for config in candidate_configurations(
        method, printed["parallelism"], int(printed["b"]), int(printed["n_a"]), int(printed["n_gpu"]), model.d_l,
        offload=offload)]
    if not every:
        raise ValueError(f"no configuration has the printed b, n_a, n_gpu of {printed}")
    evaluated = [(config, evaluate(model, spec, config)) for config in every]
    needed = [(c, e) for c, e in evaluated if c.offload == (e.memory.total > spec.memory_bytes)]
    pool = needed or evaluated
    matching = [(c, e) for c, e in pool
                if all(parse_printed(printed[cell]).agrees(e.memory.in_gib()[cell]) for cell in MEMORY_CELLS)]
    chosen_from = matching or [min(pool, key=lambda ce: _memory_distance(printed, ce[1]))]
    config, evaluation = min(chosen_from, key=lambda ce: _preference(method, ce[0], ce[1]))
    if len(chosen_from) == 1:
        rule = "the only one" if matching else "none has the printed memory: the nearest"
    else:
        rule = "within the rules, most " + ("n_l" if method == "Baseline" else "n_b")
    return Decoding(printed["parallelism"], method, config, len(every), len(needed), tuple(matching),
                    bool(matching), rule)


def decode_table(model: Transformer | None = None) -> list[Decoding]:
    """Every printed row of ``table:smaller_cluster`` decoded, in the table's order."""
    return [decode_row(printed, model) for printed in load_paper(LABEL)["rows"]]
