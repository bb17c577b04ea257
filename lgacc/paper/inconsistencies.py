"""The paper's internal inconsistencies, each with its effect on the printed results, computed.

Two places where the paper's formulas and its argument disagree, and the package follows the reading its
printed numbers need; for each, what the other reading does to the printed cells (re-evaluating the
paper's own printed configurations, :func:`lgacc.paper.reproductions.parallel_methods_check.comparison_rows`):

* **tensor-parallel bytes in one direction** (``eq:tensor_intensity``): ``24 b d_s d_m (n_a - 1) / (n_b n_a)``
  bytes per layer are what each device *sends* in six ring all-reduces, but they are compared with the NVLink
  bandwidth *in + out* (600 GB/s, ``table:hardware_bandwidth``), as if half the traffic were free: counted the
  way the data-parallel traffic is (both directions against in + out), the tensor overhead doubles;
* **the extra micro-batches** (sec:resource_usage, pipeline parallel): the text asks for "approximately
  ``nu_l / nu_net n_mu``" extra micro-batches to overlap the pipeline transfers, while the argument (a transfer
  is hidden when the extra compute covers it) needs ``nu_net / nu_l n_mu``; for large models ``nu_l / nu_net``
  is far above one, so the printed count exceeds any batch, the transfers are never overlapped, and the
  pipeline overhead ``nu_net / nu_l`` is paid (``pipeline_overlap="never"``).

The prose claims the paper's own rules cannot reach (verdict ``paper inconsistent``) are listed from
:mod:`lgacc.paper.claims`, each with its demonstration.
"""

from __future__ import annotations

from dataclasses import dataclass

from lgacc.model.assumptions import Assumptions
from lgacc.model.evaluator import evaluate
from lgacc.model.hardware import Hardware, load_hardware
from lgacc.model.transformer import TRILLION_X, x_model

from .printed import PAPER_HARDWARE, format_like, load_paper, parse_printed

__all__ = ["CellShift", "tensor_direction_effects", "extra_micro_batch_effects", "inconsistencies_markdown"]

LABEL = "table:parallel_methods_comparison"


@dataclass(frozen=True)
class CellShift:
    """One printed cell under the paper's reading (as reproduced) and under the other one."""

    row: str
    cell: str
    printed: str
    paper_reading: float
    other_reading: float

    def agrees(self, value: float) -> bool:
        return parse_printed(self.printed, 2 if self.cell == "time" else None).agrees(value)


def _shifts(hardware: Hardware, other_hardware: Hardware, assumptions: Assumptions, only) -> list[CellShift]:
    from .reproductions.parallel_methods_check import comparison_rows

    model = x_model(TRILLION_X)
    printed = {(r["parallelism"], r["method"]): r for r in load_paper(LABEL)["rows"]}
    out = []
    for row in comparison_rows():
        if not only(row.config):
            continue
        base = evaluate(model, hardware, row.config)
        other = evaluate(model, other_hardware, row.config, assumptions=assumptions)
        cells = printed[(row.parallelism, row.method)]
        name = f"{row.parallelism} / {row.method}"
        out.append(CellShift(name, "efficiency", cells["efficiency"], base.efficiency, other.efficiency))
        out.append(CellShift(name, "time", cells["time"], base.time_days, other.time_days))
    return out


def tensor_direction_effects(hardware: Hardware | str = PAPER_HARDWARE) -> list[CellShift]:
    """The rows with tensor parallelism, with the tensor bytes counted in both directions (the NVLink bandwidth
    halved: only the tensor all-reduces use it in these rows)."""
    spec = load_hardware(hardware)
    halved = spec.replace(nvlink_bandwidth_bytes_per_s=spec.nvlink_bandwidth_bytes_per_s / 2)
    return _shifts(spec, halved, Assumptions(), lambda c: c.n_a > 1)


def extra_micro_batch_effects(hardware: Hardware | str = PAPER_HARDWARE) -> list[CellShift]:
    """The rows with a pipeline and extra micro-batches, with the printed count of extra micro-batches (never
    reached: the pipeline transfers are not overlapped)."""
    spec = load_hardware(hardware)
    return _shifts(spec, spec, Assumptions(pipeline_overlap="never"), lambda c: c.n_l > 1 and c.n_mu > c.n_l)


def _shift_lines(shifts: list[CellShift]) -> list[str]:
    lines = ["| row | cell | printed | as the package reads it | the other reading |", "|---|---|---|---|---|"]
    for s in shifts:
        def shown(value: float) -> str:
            return format_like(value, s.printed) + ("" if s.agrees(value) else " ✗")
        lines.append(f"| {s.row} | {s.cell} | {s.printed} | {shown(s.paper_reading)} | {shown(s.other_reading)} |")
    return lines + [""]


def inconsistencies_markdown(hardware: Hardware | str = PAPER_HARDWARE, claims: list[dict] | None = None) -> str:
    """The assumptions page's list: each inconsistency, the reading the package follows, and the printed cells
    the other reading moves; then the claims graded ``paper inconsistent`` with their demonstrations."""
    spec = load_hardware(hardware)
    tensor = tensor_direction_effects(spec)
    extra = extra_micro_batch_effects(spec)
    moved = lambda shifts: sum(not s.agrees(s.other_reading) for s in shifts)  # noqa: E731
    lines = [
        f"Computed on **{spec.name}** from the printed configurations of `{LABEL}` (✗: the value does not round to "
        "the printed one).", "",
        "**1. Tensor-parallel bytes counted in one direction.** `eq:tensor_intensity` counts "
        "$24\\,b d_s d_m (n_a-1)/(n_b n_a)$ bytes per layer, what each device sends in six ring all-reduces, and "
        "compares them with the NVLink bandwidth in + out (600 GB/s), where the data-parallel count compares the "
        "bytes of both directions with the same in + out bandwidth. The package follows the printed formula; "
        f"counted like the data-parallel traffic, the tensor overhead doubles, and {moved(tensor)} of these "
        f"{len(tensor)} printed cells no longer come out:", "",
        *_shift_lines(tensor),
        "**2. The extra micro-batches.** The text asks for \"approximately $\\tfrac{\\nu_l}{\\nu_{net}} n_\\mu$\" "
        "extra micro-batches to overlap the pipeline transfers; the argument (the extra compute must cover the "
        "transfer) needs $\\tfrac{\\nu_{net}}{\\nu_l} n_\\mu$, which the package uses "
        "(`pipeline_overlap=\"extra-micro-batches\"`: $n_\\mu \\ge n_l (1 + \\nu_{net}/\\nu_l)$). Read as printed, "
        "$\\nu_l/\\nu_{net}$ is far above one for these models, no batch holds that many micro-batches, the "
        f"transfers are never overlapped (`pipeline_overlap=\"never\"`), and {moved(extra)} of these {len(extra)} "
        "printed cells no longer come out:", "",
        *_shift_lines(extra),
    ]
    inconsistent = [r for r in (claims or []) if r.get("verdict") == "paper inconsistent"]
    if inconsistent:
        lines += ["**3. Numbers the paper's own rules do not reach** (verdict *paper inconsistent* on the "
                  "{doc}`claims page </generated/claims>`, each with the most favourable readings computed):", ""]
        lines += [f"- `{r['id']}` — *{r['printed']}*: {r['explanation']}." for r in inconsistent]
        lines.append("")
    return "\n".join(lines)
