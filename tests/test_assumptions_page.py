"""The assumptions page lists every switch of lgacc.model.assumptions.Assumptions with its default."""

from __future__ import annotations

import re
from pathlib import Path

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
