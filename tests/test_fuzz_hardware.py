"""Hardware specs from random mutations of the shipped ones: each loads into sane SI values,
or is rejected by one HardwareSpecError line naming the file; the CLI keeps its contract."""

from __future__ import annotations

import math
import warnings

import yaml
from fuzzing import call_cli, check_contract, fuzz_settings, record, time_limit
from hypothesis import given
from hypothesis import strategies as st

from lgacc.model.hardware import DATA_DIR, RANGES, Hardware, HardwareSpecError, available_hardware, load_hardware

SHIPPED = {name: (DATA_DIR / f"{name}.yaml").read_text() for name in available_hardware()}
KEYS = sorted({line.split(":", 1)[0] for text in SHIPPED.values() for line in text.splitlines()
               if line and line[0].isalpha() and ":" in line} | {"kernel_efficiency", "memory_gb", "memory_bytes",
                                                                  "nvlink_bandwidth_bytes_per_s", "peak_tflop_per_s"})

SCALAR = st.one_of(
    st.integers(-(2**80), 2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, 4, 312, 1e-320, 5e-324, 1e300, 1.0e+12, 0.5, 1.5, True, False, None]),
    st.text(max_size=10),
)
VALUE = st.one_of(SCALAR, st.lists(SCALAR, max_size=3), st.dictionaries(st.text(max_size=4), SCALAR, max_size=2))
RAW = st.sampled_from(["1:20", "010", "0x10", "0o17", "yes", "~", ".inf", "-.inf", ".nan", "312e12", "1_000", "&a 4",
                       "*a", "[1, 2]", "{a: 1}", "'80'", "!!binary aGk=", "!!python/object:os.system", "2021-01-01",
                       "1.0e+300", "4.9e-324", "!!float 80", '"\\xff"', "|\n  text", ">-\n  folded"])


def _check(path) -> None:
    """The property for one spec file."""
    try:
        with time_limit(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            hardware = load_hardware(path)
    except HardwareSpecError as error:
        message = str(error)
        assert "\n" not in message and str(path) in message, message
        record("hardware spec", "rejected")
        return
    assert isinstance(hardware, Hardware)
    for field, r in RANGES.items():
        value = getattr(hardware, field)
        assert math.isfinite(value) and r.low <= value <= r.high, (field, value)
    record("hardware spec", "loaded")


@st.composite
def mutated_mapping(draw):
    spec = yaml.safe_load(SHIPPED[draw(st.sampled_from(sorted(SHIPPED)))])
    for _ in range(draw(st.integers(1, 4))):
        action = draw(st.sampled_from(["set", "set", "delete", "add"]))
        key = draw(st.sampled_from(KEYS if action != "delete" else sorted(spec) or KEYS))
        if action == "delete":
            spec.pop(key, None)
        else:
            spec[key] = draw(VALUE)
    return spec


@fuzz_settings("spec_mutations")
@given(spec=mutated_mapping())
def test_fuzz_mutated_spec_mappings(tmp_path, spec):
    path = tmp_path / "spec.yaml"
    try:
        path.write_text(yaml.safe_dump(spec, allow_unicode=True))
    except yaml.YAMLError:
        return
    _check(path)


@st.composite
def noisy_text(draw):
    lines = SHIPPED[draw(st.sampled_from(sorted(SHIPPED)))].splitlines()
    for _ in range(draw(st.integers(1, 3))):
        index = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["raw value", "duplicate", "bytes", "drop", "indent"]))
        if action == "raw value" and ":" in lines[index]:
            lines[index] = lines[index].split(":", 1)[0] + ": " + draw(RAW)
        elif action == "duplicate":
            lines.append(lines[index])
        elif action == "drop":
            del lines[index]
        elif action == "indent":
            lines[index] = "  " + lines[index]
        else:
            lines[index] += draw(st.text(max_size=4))
    data = "\n".join(lines).encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 4)) == 0:
        cut = draw(st.integers(0, len(data)))
        data = data[:cut] + draw(st.binary(min_size=1, max_size=4)) + data[cut:]
    return data


@fuzz_settings("spec_text_noise")
@given(data=noisy_text())
def test_fuzz_spec_text_noise(tmp_path, data):
    path = tmp_path / "spec.yaml"
    path.write_bytes(data)
    _check(path)
    if data.endswith(b"\n") or len(data) % 10 == 0:  # about a tenth: the same file through the CLI
        argv = ["reproduce", "table:hardware_bandwidth", "--hardware", str(path), "--format", "json"]
        code, out, err, _ = call_cli(argv)
        check_contract(argv, code, out, err)
