"""Hardware specs: units, thresholds of table:hardware_bandwidth, and bad specs."""

from __future__ import annotations

import dataclasses

import pytest

from lgacc.model.hardware import GB, GIB, LINK_KEYS, Hardware, HardwareSpecError, available_hardware, load_hardware
from lgacc.paper import paper_table, parse_printed
from lgacc.paper.artifacts import get_artifact


def test_a100_is_shipped_and_frozen():
    hardware = load_hardware("a100-80gb")
    assert "a100-80gb" in available_hardware()
    assert hardware.peak_flop_per_s == 312e12
    assert hardware.memory_bytes == 80 * GIB
    assert hardware.gpus_per_node == 16
    assert hardware.source
    with pytest.raises(dataclasses.FrozenInstanceError):
        hardware.peak_flop_per_s = 1.0


def test_every_threshold_reproduces_the_paper_to_printed_precision():
    artifact = get_artifact("table:hardware_bandwidth")
    comparison = artifact.compare(artifact.reproduce("a100-80gb"))
    flags = comparison[[c for c in comparison.columns if c.endswith("agrees")]]
    assert flags.shape == (8, 2)
    assert flags.to_numpy().all(), comparison.to_string()


def test_the_papers_gb_is_binary():
    """With decimal GB the printed thresholds are not reproduced; with GiB they all are."""
    hardware = load_hardware("a100-80gb")
    printed = paper_table("table:hardware_bandwidth").set_index("key")
    for key in LINK_KEYS:
        threshold = parse_printed(printed.loc[key, "threshold_flops_per_byte"])
        bandwidth_as_printed = float(printed.loc[key, "bandwidth_gb_s"])
        assert threshold.agrees(hardware.peak_flop_per_s / (bandwidth_as_printed * GIB))
        assert not threshold.agrees(hardware.peak_flop_per_s / (bandwidth_as_printed * GB))


def test_doubling_infiniband_changes_its_threshold_and_nothing_else(a100_spec, write_spec):
    base = load_hardware("a100-80gb")
    a100_spec["infiniband_bandwidth_gib_per_s"] *= 2
    faster = load_hardware(write_spec(a100_spec))
    for key in LINK_KEYS:
        if key == "infiniband":
            assert faster.threshold(key) == pytest.approx(base.threshold(key) / 2)
        else:
            assert faster.threshold(key) == base.threshold(key)


def test_units_in_keys_are_converted(a100_spec, write_spec):
    del a100_spec["nvlink_bandwidth_gib_per_s"]
    a100_spec["nvlink_bandwidth_gb_per_s"] = 600
    assert load_hardware(write_spec(a100_spec)).nvlink_bandwidth_bytes_per_s == 600e9


def _error(spec_path) -> HardwareSpecError:
    with pytest.raises(HardwareSpecError) as info:
        load_hardware(spec_path)
    return info.value


def test_missing_field_is_named(a100_spec, write_spec):
    del a100_spec["infiniband_bandwidth_gib_per_s"]
    path = write_spec(a100_spec)
    error = _error(path)
    assert str(path) in str(error)
    assert "infiniband_bandwidth" in error.field
    assert "missing" in str(error)


def test_unknown_key_is_named_with_the_allowed_keys(a100_spec, write_spec):
    a100_spec["infiniband_bandwith_gib_per_s"] = 50  # typo
    error = _error(write_spec(a100_spec))
    assert error.field == "infiniband_bandwith_gib_per_s"
    assert "unknown key" in str(error) and "infiniband_bandwidth_gib_per_s" in str(error)


@pytest.mark.parametrize("value", [0, -50, float("inf")])
def test_non_positive_or_infinite_bandwidth_is_rejected(a100_spec, write_spec, value):
    a100_spec["ethernet_bandwidth_gib_per_s"] = value
    error = _error(write_spec(a100_spec))
    assert error.field == "ethernet_bandwidth_gib_per_s"
    assert "> 0" in str(error)


def test_yaml_12_numbers_312e12_is_a_number(write_spec, a100_spec):
    """YAML 1.1 reads 312e12 as a string; the package's loader uses the YAML 1.2 core schema."""
    text = write_spec(a100_spec).read_text().replace("peak_flop_per_s: 312000000000000.0", "peak_flop_per_s: 312e12")
    assert "312e12" in text
    assert load_hardware(write_spec(text, "number.yaml")).peak_flop_per_s == 312e12


def test_string_where_a_number_belongs_says_how_to_write_it(write_spec, a100_spec):
    a100_spec["peak_flop_per_s"] = "312 Tflop/s"
    error = _error(write_spec(a100_spec))
    assert error.field == "peak_flop_per_s"
    assert "str" in str(error) and "312.0e+12" in str(error)


def test_gpus_per_node_must_be_an_integer(a100_spec, write_spec):
    a100_spec["gpus_per_node"] = 7.5
    assert _error(write_spec(a100_spec)).field == "gpus_per_node"


def test_quantity_given_twice_is_rejected(a100_spec, write_spec):
    a100_spec["memory_gb"] = 80
    assert "more than once" in str(_error(write_spec(a100_spec)))


def test_unknown_name_lists_the_shipped_specs():
    error = _error("a100-40gb")
    assert "a100-80gb" in str(error)


def test_missing_file_and_bad_yaml(tmp_path, write_spec):
    assert "no such file" in str(_error(tmp_path / "nope.yaml"))
    assert "not valid YAML" in str(_error(write_spec("peak_flop_per_s: [1,", "broken.yaml")))


def test_replace_validates():
    hardware = load_hardware("a100-80gb")
    assert hardware.replace(gpus_per_node=72).gpus_per_node == 72
    with pytest.raises(HardwareSpecError):
        hardware.replace(nvlink_bandwidth_bytes_per_s=-1.0)


def test_every_shipped_spec_loads():
    for name in available_hardware():
        assert isinstance(load_hardware(name), Hardware)
