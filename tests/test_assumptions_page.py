"""The assumptions page lists every switch of lgacc.model.assumptions.Assumptions with its default."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lgacc.model.assumptions import FIELDS, Assumptions

PAGE = Path(__file__).resolve().parents[1] / "book" / "assumptions.md"


def _switch_rows() -> dict[str, str]:
    text = PAGE.read_text()
    section = text.split("## Switches", 1)[1].split("\n## ", 1)[0]
    return {m.group(1): m.group(2).strip() for m in re.finditer(r"^\| `(\w+)` \| ([^|]+)\|", section, re.M)}


def test_every_switch_is_listed_with_its_default():
    rows = _switch_rows()
    assert set(rows) == set(FIELDS)
    defaults = Assumptions()
    for name, default in rows.items():
        assert default.lower() == str(getattr(defaults, name)).lower(), name


def test_the_page_points_to_the_computed_effects():
    assert "{ref}`claims-switches`" in PAGE.read_text()
    assert "(claims-switches)=" in (PAGE.parents[1] / "notebooks" / "claims.ipynb").read_text()


def _section(heading: str) -> str:
    return PAGE.read_text().split(f"## {heading}", 1)[1].split("\n## ", 1)[0]


def test_the_hardware_implications_thresholds_are_the_chapters():
    """Issue #33 item 4: each threshold of the Hardware implications chapter on the page with the value its
    code grades with (change a constant and this fails until the page says so)."""
    from lgacc.studies.codesign import implications

    rows = dict(re.findall(r"`([A-Z_]+)` = ([0-9.]+)", _section("Hardware implications (beyond the paper)")))
    names = {name for name in implications.__all__ if name.isupper() and isinstance(getattr(implications, name), float)}
    assert set(rows) == names == {"BOTTLENECK", "KEY_SPEEDUP", "NOT_IMPORTANT", "SMALL_MEMORY_GIB"}
    for name, value in rows.items():
        assert float(value) == getattr(implications, name), name


def test_the_split_links_readings_are_the_sweeps():
    """Every value ``split_links`` accepts, and only those, is a row; the default is the one the page says."""
    from lgacc.studies.codesign.sweep import SPLIT_LINKS

    rows = re.findall(r"^- `split_links` = `(\w+)`(.*)$", _section("Hardware implications (beyond the paper)"), re.M)
    assert [value for value, _ in rows] == list(SPLIT_LINKS)
    assert "the default" in dict(rows)["divided"] and "the default" not in dict(rows)["kept"]


def test_the_sparse_extension_names_its_fixed_choices():
    """The four choices of the sparse extension the page names, each checked against what the code does."""
    from lgacc.model.transformer import Transformer, critical_batch_size

    rows = dict(re.findall(r"^- \*\*([^*]+)\*\*(?: \([^)]*\))?: \*([^*]+)\*\.",
                           _section("Sparse models, context parallelism and FP8 (beyond the paper)"), re.M))
    assert rows == {"Expert all-to-all": "not overlapped", "All-to-all values": "bf16",
                    "Critical batch": "from the active parameters", "FP8 matmul rate": "measured"}
    # the calibrated model's FP8 rate: the speed-up measured on the GPU where there is one (the H100 chip's, between
    # 1 and the vendor's 2), none elsewhere (the spec's FP8 peak)
    from lgacc.model.calibrated.gemm_table import fp8_speedup
    from lgacc.model.hardware import load_hardware

    h100 = load_hardware("h100-sxm")
    assert 1 < fp8_speedup(h100.name) < h100.peak_fp8_flop_per_s / h100.peak_flop_per_s
    assert fp8_speedup(load_hardware("b200").name) is None
    # the critical batch of a mixture of experts is its active weights' (eq:critical_batch, b_c ∝ N^(1/3), by hand):
    # with every expert's weights it would be larger by the cube root of total over active layer weights
    from lgacc.model.transformer import critical_batch_constant

    sparse = Transformer(name="moe", d_l=8, d_m=1024, d_a=8, d_h=128, d_s=2048, n_I=4, experts=8,
                         experts_per_token=2, d_e=2048)
    assert sparse.p_active_leading < sparse.p_leading
    assert critical_batch_size(sparse) == pytest.approx(
        critical_batch_constant() * sparse.p_active_leading ** (1 / 3) / sparse.d_s, rel=1e-12)
