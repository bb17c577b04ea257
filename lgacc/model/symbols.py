"""The paper's notation as sympy symbols, each with a one-line meaning and unit.

Every derivation in :mod:`lgacc.model.formulas` is written in these symbols, so the
code reads like the paper.  :data:`NOTATION` lists them in the order of the
book's glossary page (:func:`glossary`).

All symbols are declared positive, which lets sympy simplify ratios and powers
without case splits; integers (counts) are not declared integer, as nothing in
the derivations needs it.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

__all__ = [
    "Notation",
    "NOTATION",
    "glossary",
    "notation",
    "symbol",
    # model
    "d_s", "d_m", "d_l", "d_a", "d_h", "d_I", "n_I", "p", "p_l", "m_0", "b_c", "K_c",
    # training configuration
    "b", "b_mu", "n_mu", "n_b", "n_l", "n_a", "n_gpu",
    # hardware
    "c_gpu", "m_gpu", "beta", "nu", "epsilon",
    # generic intensity symbols
    "nu_op", "nu_net",
]


@dataclass(frozen=True)
class Notation:
    """One symbol of the paper: its name in code, LaTeX, meaning and unit."""

    name: str
    symbol: sympy.Symbol
    latex: str
    meaning: str
    unit: str
    group: str


def _sym(name: str, latex: str) -> sympy.Symbol:
    return sympy.Symbol(latex, positive=True)


_ENTRIES: list[Notation] = []


def _define(name: str, latex: str, meaning: str, unit: str, group: str) -> sympy.Symbol:
    sym = _sym(name, latex)
    _ENTRIES.append(Notation(name, sym, latex, meaning, unit, group))
    return sym


# --- model (sec:methodology "Model", appendix sec:transformer_scaling) ---
d_s = _define("d_s", "d_s", "sequence length", "tokens per sample", "model")
d_m = _define("d_m", "d_m", "layer width (hidden size), d_m = d_a d_h", "values", "model")
d_l = _define("d_l", "d_l", "number of transformer layers", "layers", "model")
d_a = _define("d_a", "d_a", "number of attention heads", "heads", "model")
d_h = _define("d_h", "d_h", "attention head size", "values", "model")
d_I = _define("d_I", "d_I", "feed-forward intermediate size, d_I = n_I d_m", "values", "model")
n_I = _define("n_I", "n_I", "intermediate size factor (4 throughout the paper)", "dimensionless", "model")
p = _define("p", "p", "number of parameters of the transformer (no embedding, no head)", "parameters", "model")
p_l = _define("p_l", "p_l", "number of parameters of one transformer layer", "parameters", "model")
m_0 = _define("m_0", "m_0", "layer-activation memory per token of one layer (reconstructed)", "bytes per token", "model")
b_c = _define("b_c", "b_c", "critical batch size (eq:critical_batch)", "samples", "model")
K_c = _define("K_c", "K_c", "critical-batch constant: b_c d_s = K_c p^(1/3)", "tokens per parameter^(1/3)", "model")

# --- training configuration (sec:distributed) ---
b = _define("b", "b", "batch size", "samples", "configuration")
b_mu = _define("b_mu", r"b_\mu", "micro-batch size, b_mu = b / (n_b n_mu)", "samples", "configuration")
n_mu = _define("n_mu", r"n_\mu", "number of sequential micro-batches per batch", "micro-batches", "configuration")
n_b = _define("n_b", "n_b", "data-parallel degree", "GPUs", "configuration")
n_l = _define("n_l", "n_l", "pipeline-parallel degree", "GPUs", "configuration")
n_a = _define("n_a", "n_a", "tensor-parallel degree", "GPUs", "configuration")
n_gpu = _define("n_gpu", r"n_\text{gpu}", "number of GPUs, n_gpu = n_b n_l n_a", "GPUs", "configuration")

# --- hardware (appendix sec:hardware) ---
c_gpu = _define("c_gpu", r"c_\text{gpu}", "peak half-precision compute of one GPU", "flop/s", "hardware")
m_gpu = _define("m_gpu", r"m_\text{gpu}", "memory of one GPU", "bytes", "hardware")
epsilon = _define("epsilon", r"\epsilon", "maximum relative overhead allowed (25 % in the paper)", "dimensionless", "hardware")
nu_op = _define("nu_op", r"\nu_{op}", "arithmetic intensity of an operation (flops per byte moved)", "flop/byte", "hardware")
nu_net = _define("nu_net", r"\nu_{net}", "arithmetic-intensity threshold of a link, c_gpu / bandwidth", "flop/byte", "hardware")

_LINK_NAMES = {
    "gpu_memory": "GPU memory",
    "nvlink": "NVLink",
    "pcie": "PCI-express",
    "infiniband": "InfiniBand",
    "cpu_gpu": "CPU-GPU",
    "ethernet": "Ethernet",
    "nvme": "NVMe disk",
    "hdd": "hard drive",
}
#: Bandwidth of each link (table:hardware_bandwidth), keyed like :data:`lgacc.model.hardware.LINKS`.
beta: dict[str, sympy.Symbol] = {}
#: Threshold c_gpu / beta of each link (eq:overlap_condition).
nu: dict[str, sympy.Symbol] = {}
for _key, _title in _LINK_NAMES.items():
    _tex = _key.replace("_", r"\_")
    beta[_key] = _define(
        f"beta_{_key}", rf"\beta_\text{{{_tex}}}", f"{_title} bandwidth (input + output, CPU-GPU one direction)",
        "bytes/s", "hardware",
    )
    nu[_key] = _define(
        f"nu_{_key}", rf"\nu_\text{{{_tex}}}", f"{_title} intensity threshold c_gpu / beta", "flop/byte", "hardware"
    )

#: Every symbol of the paper, in glossary order.
NOTATION: tuple[Notation, ...] = tuple(_ENTRIES)
_BY_NAME = {entry.name: entry for entry in NOTATION}


def notation(name: str) -> Notation:
    """The entry for ``name`` (``"d_m"``, ``"beta_nvlink"``, ...)."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown symbol {name!r}; known: {', '.join(_BY_NAME)}") from None


def symbol(name: str) -> sympy.Symbol:
    """The sympy symbol for ``name``."""
    return notation(name).symbol


def glossary() -> "pd.DataFrame":
    """The glossary as a table: symbol (LaTeX), code name, meaning, unit, group."""
    import pandas as pd  # only for this table: the symbols themselves need no pandas

    return pd.DataFrame(
        [
            {"symbol": f"${e.latex}$", "name": e.name, "meaning": e.meaning, "unit": e.unit, "group": e.group}
            for e in NOTATION
        ]
    )
