"""``table:x_model``: the X_[x] family and some large transformers, with ``p`` and ``b_c``.

``p`` is the exact per-operation count (biases and layer norms included);
``b_c`` is eq:critical_batch with its constant derived from GPT-3 at 3.2 M
tokens.  ``b`` is the batch a named model was actually trained with (an input,
printed in parentheses by the paper).

Most printed cells are inputs echoed back, flagged ``echoed_input`` in the
comparison and not counted as reproduced (:mod:`lgacc.paper.cells`): the dimensions
(``d_s, d_a, d_h, d_m, d_l``: the X_[x] family's definition or a model's published
shape), the trained batches ``b``, and the critical batch of the calibration model
(GPT-3's ``b_c`` is 3.2 M tokens / ``d_s`` by construction of ``K_c``).  Only ``p``
and the other ``b_c`` are results.
"""

from __future__ import annotations

import math

import pandas as pd

from lgacc.model.assumptions import DEFAULT_ASSUMPTIONS, Assumptions, critical_batch
from lgacc.model.hardware import Hardware
from lgacc.model.transformer import CALIBRATION_MODEL, Transformer, named_model

from ..artifacts import Artifact
from ..cells import echoed
from ..printed import compare_cell, paper_table

__all__ = ["LABEL", "ROWS", "build", "compare", "differing_cells_explained", "ARTIFACT"]

LABEL = "table:x_model"

#: The models of the table, in the paper's order.
ROWS = ("X2", "BERT", "X32", "Megatron-LM", "X64", "T-NLG", "GPT-3", "X108", "X160")

COLUMNS = ("p", "b_c", "b", "d_s", "d_a", "d_h", "d_m", "d_l")
#: The derived columns, which the table prints to three significant digits (488, 301 M, 8.15 B, 2420);
#: the dimensions are exact integers and must match exactly.
DERIVED = ("p", "b_c")
TABLE_DIGITS = 3
#: Inputs the table shows again: the models' dimensions and trained batches (plus the calibration
#: model's ``b_c``, see :func:`is_echoed_input`).
ECHOED_COLUMNS = ("b", "d_s", "d_a", "d_h", "d_m", "d_l")


def is_echoed_input(model: str, column: str) -> bool:
    """Whether the cell ``(model, column)`` shows an input rather than a result: a dimension, a
    trained batch, or the critical batch of the model ``K_c`` is calibrated on (equal to the
    calibration batch by construction)."""
    return column in ECHOED_COLUMNS or (column == "b_c" and model == CALIBRATION_MODEL)

def _row(model: Transformer, assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> dict:
    return {
        "model": model.name,
        "p": model.p,
        "b_c": critical_batch(model, assumptions),
        "b": model.trained_batch,
        "d_s": model.d_s,
        "d_a": model.d_a,
        "d_h": model.d_h,
        "d_m": model.d_m,
        "d_l": model.d_l,
        "p_leading": model.p_leading,
    }


def build(hardware: Hardware | None = None, assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> pd.DataFrame:
    """One row per model: exact ``p``, critical batch ``b_c`` (samples), trained batch, dimensions.

    The hardware does not enter this table; it is accepted for the registry's contract.  Of the
    assumptions only ``critical_batch_scale`` does (it scales ``b_c``).
    """
    frame = pd.DataFrame([_row(named_model(name), assumptions) for name in ROWS])
    # keep trained batches as integers beside the missing ones (not a float column)
    frame["b"] = pd.Series([named_model(name).trained_batch for name in ROWS], dtype=object)
    return frame


def compare(reproduced: pd.DataFrame) -> pd.DataFrame:
    """The paper's printed cells beside the reproduced ones, one ``agrees`` flag per cell."""
    paper = paper_table(LABEL).set_index("model")
    rows = []
    for row in reproduced.itertuples(index=False):
        printed = paper.loc[row.model]
        out = {"model": row.model}
        for column in COLUMNS:
            text = printed[column]
            value = getattr(row, column)
            if text in ("", "None", "nan") and (value is None or (isinstance(value, float) and math.isnan(value))):
                continue
            if text in ("", "None", "nan") or value is None or (isinstance(value, float) and math.isnan(value)):
                out[f"{column} (paper)"] = text
                out[f"{column} (reproduced)"] = "" if value is None else str(value)
                out[f"{column} agrees"] = False
                out.update(echoed(column, is_echoed_input(row.model, column)))
                continue
            out.update(compare_cell(column, text, float(value), TABLE_DIGITS if column in DERIVED else None))
            out.update(echoed(column, is_echoed_input(row.model, column)))
        rows.append(out)
    return pd.DataFrame(rows)


ARTIFACT = Artifact(
    label=LABEL,
    title="X_[x] model configurations and large transformers",
    kind="table",
    build=build,
    compare=compare,
    page="x_model",
    description="Parameter count, critical batch size and dimensions of the X family and of BERT, Megatron-LM, T-NLG and GPT-3.",
)


def _printed(model: str, column: str) -> str:
    return str(paper_table(LABEL).set_index("model").loc[model, column])


def _shown(value: float, printed: str) -> str:
    """``value`` as the table prints its derived columns: three significant digits, the printed suffix."""
    return compare_cell("", printed, float(value), TABLE_DIGITS)[" (reproduced)"]


def differing_cells_explained() -> str:
    """Markdown: what the parameter counts and the critical-batch constant say about the cells that
    differ (BERT's and Megatron-LM's ``p``, X32's ``b_c``); every number computed here."""
    from lgacc.model.transformer import CALIBRATION_TOKENS, critical_batch_constant

    lines = []
    bert = named_model("BERT")
    printed = _printed("BERT", "p")
    counts = {"exact": bert.p, "without biases": bert.p_leading}
    shown = {name: _shown(value, printed) for name, value in counts.items()}
    lines.append(
        f"* **BERT, $p$**: {' and '.join(f'{value / 1e6:.1f} M {name}' for name, value in counts.items())} print as "
        f"{' and '.join(dict.fromkeys(shown.values()))}; the paper prints {printed}"
        + (": no count gives it." if printed not in shown.values() else "."))
    megatron = named_model("Megatron-LM")
    printed = _printed("Megatron-LM", "p")
    x2, x2_printed = named_model("X2"), _printed("X2", "p")
    which = [name for name, value in (("the exact count", x2.p), ("the count without biases", x2.p_leading))
             if _shown(value, x2_printed) == x2_printed]
    lines.append(
        f"* **Megatron-LM, $p$**: the exact count is {megatron.p / 1e9:.3f} B, which prints as "
        f"{_shown(megatron.p, printed)}; the count without biases, $(4 + 2n_I) d_m^2 d_l$, is "
        f"{megatron.p_leading / 1e9:.3f} B, which prints as {_shown(megatron.p_leading, printed)}; the paper prints "
        f"{printed}. Its X rows keep the biases: X<sub>2</sub>'s printed {x2_printed} is "
        + (" and ".join(which) if which else "neither count") + f" ({x2.p} exact, {x2.p_leading} without biases).")
    x32 = named_model("X32")
    printed = _printed("X32", "b_c")
    constant = critical_batch_constant()
    rounded = float(round(constant))
    derived = x32.critical_batch
    with_rounded = derived * rounded / constant  # b_c is proportional to the constant (eq:critical_batch)
    lines.append(
        f"* **X<sub>32</sub>, $b_c$**: the constant derived from {CALIBRATION_MODEL}'s {CALIBRATION_TOKENS / 1e6:g} M tokens is $K_c$ = {constant:.2f} and "
        f"gives {derived:.1f}, which prints as {_shown(derived, printed)}; the constant rounded to {rounded:.0f} gives "
        f"{with_rounded:.1f}, which prints as {_shown(with_rounded, printed)}; the paper prints {printed}.")
    return "\n".join(lines)
