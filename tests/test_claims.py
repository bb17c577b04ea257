"""The prose claims: every id of data/paper/claims.yaml is reproduced with the five keys."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from lgacc.claim_calculators import CALCULATORS, total_flops
from lgacc.claims import claims_records, printed_claims
from lgacc.hardware import load_hardware
from lgacc.models import x_model


@pytest.fixture(scope="module")
def records():
    return {r["id"]: r for r in claims_records("a100-80gb")}


def test_every_printed_claim_has_a_calculator():
    assert {c.id for c in printed_claims()} <= set(CALCULATORS)


def test_records_have_the_five_keys_and_a_value(records):
    assert set(records) == {c.id for c in printed_claims()}
    for r in records.values():
        assert {"id", "paper", "reproduced", "unit", "agrees"} <= set(r)
        assert isinstance(r["reproduced"], float) and r["how"]


def test_model_only_claims_agree_or_are_explained(records):
    for key in ("x160_exaflop_days", "x160_gpu_days", "improved_min_memory"):
        assert records[key]["agrees"], records[key]
    flops = records["x160_total_flops"]
    # 8 b_c d_s p at the exact b_c; the paper rounds b_c to 2420 first
    assert flops["reproduced"] == pytest.approx(8 * x_model(160).critical_batch * 2560 * x_model(160).p_leading * 1e5)
    assert flops["agrees"] or "rounding" in flops["how"]


def test_gpu_days_follow_from_flops():
    hardware = load_hardware("a100-80gb")
    value, _ = CALCULATORS["x160_gpu_days"](hardware)
    assert value == pytest.approx(total_flops() / hardware.peak_flop_per_s / 86400)


def test_disagreements_say_why(records):
    for r in records.values():
        if not r["agrees"]:
            assert len(r["how"]) > 60, r


def test_cli_prints_json():
    out = subprocess.run([sys.executable, "-m", "lgacc", "reproduce", "claims", "--format", "json"],
                         capture_output=True, text=True, check=True).stdout
    rows = json.loads(out)
    assert {r["id"] for r in rows} == {c.id for c in printed_claims()}
