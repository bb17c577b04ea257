"""Model files (``--model PATH``) and run folders (``lgacc validate --runs``) from random
mutations of the shipped ones: each loads into a consistent model (or set of runs), or is
rejected by one line naming the file; the CLI keeps the contract of :func:`fuzzing.check_contract`."""

from __future__ import annotations

import math

import yaml
from fuzzing import ROOT, call_cli, check_contract, fuzz_settings, record, time_limit
from hypothesis import given
from hypothesis import strategies as st

from lgacc.errors import MAX_INT64, UserInputError
from lgacc.model.transformer import OPTIONAL_KEYS, REQUIRED_KEYS, Transformer, load_model

MODEL_DIR = ROOT / "data" / "models"
RUN_DIR = ROOT / "data" / "validation"
SHIPPED_MODELS = {path.name: path.read_text() for path in sorted(MODEL_DIR.glob("*.yaml"))}
SHIPPED_RUNS = {path.name: path.read_text() for path in sorted(RUN_DIR.glob("*.yaml"))}

SCALAR = st.one_of(
    st.integers(-(2**70), 2**70),
    st.integers(1, 70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, 2, 3, 7, 8, 4.0, 2.5, 1e-320, 1e300, True, False, None, "not stated", "full", "none",
                     "a100-80gb", "X8", "gpt-3", "/nonexistent.yaml", "megatron"]),
    st.text(max_size=8),
)
VALUE = st.one_of(SCALAR, st.lists(SCALAR, max_size=2), st.dictionaries(st.text(max_size=4), SCALAR, max_size=2))
#: Values written into the text as they are, for YAML's own surprises.
RAW = st.sampled_from(["1:20", "010", "0x10", "yes", "~", ".inf", ".nan", "8e9", "1_000", "&a 4", "*a", "[1, 2]",
                       "{a: 1}", "'8'", "!!python/object:os.system", "2021-01-01", "1.0e+300", "!!float 8", "|\n  text"])
MODEL_KEYS = sorted(REQUIRED_KEYS + OPTIONAL_KEYS + ("width", "n_l"))


def _mutate(draw, mapping: dict, keys: list[str], times: tuple[int, int] = (1, 3)) -> dict:
    for _ in range(draw(st.integers(*times))):
        action = draw(st.sampled_from(["set", "set", "delete", "add"]))
        if action == "delete" and mapping:
            mapping.pop(draw(st.sampled_from(sorted(mapping, key=str))), None)
        else:
            mapping[draw(st.sampled_from(keys))] = draw(VALUE)
    return mapping


def _noisy(draw, text: str) -> bytes:
    """``text`` with a line's value replaced by a raw YAML value, a line repeated or dropped, or stray bytes."""
    lines = text.splitlines()
    for _ in range(draw(st.integers(1, 2))):
        index = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["raw value", "raw value", "duplicate", "drop", "bytes"]))
        if action == "raw value" and ":" in lines[index]:
            lines[index] = lines[index].split(":", 1)[0] + ": " + draw(RAW)
        elif action == "duplicate":
            lines.append(lines[index])
        elif action == "drop":
            del lines[index]
        else:
            lines[index] += draw(st.text(max_size=3))
    data = "\n".join(lines).encode("utf-8", "surrogatepass") + b"\n"
    if draw(st.integers(0, 5)) == 0:
        cut = draw(st.integers(0, len(data)))
        data = data[:cut] + draw(st.binary(min_size=1, max_size=3)) + data[cut:]
    return data


def _dump(mapping) -> bytes | None:
    try:
        return yaml.safe_dump(mapping, allow_unicode=True).encode("utf-8", "surrogatepass")
    except (yaml.YAMLError, UnicodeEncodeError):
        return None


# --- model files --------------------------------------------------------------------------------


@st.composite
def model_file(draw) -> bytes | None:
    text = SHIPPED_MODELS[draw(st.sampled_from(sorted(SHIPPED_MODELS)))]
    if draw(st.booleans()):
        return _noisy(draw, text)
    return _dump(_mutate(draw, yaml.safe_load(text), MODEL_KEYS))


def _check_model(path) -> None:
    """A consistent Transformer, or one UserInputError line naming the file."""
    try:
        with time_limit():
            model = load_model(str(path))
    except UserInputError as error:
        message = str(error)
        assert "\n" not in message and "model file" in message and str(path) in message, message
        record("model file", "rejected")
        return
    assert isinstance(model, Transformer) and isinstance(model.name, str) and model.name.strip()
    for field in ("d_l", "d_m", "d_a", "d_h", "d_s", "d_I", "d_kv"):
        value = getattr(model, field)
        assert type(value) is int and 1 <= value <= MAX_INT64, (field, value)
    assert type(model.d_v) is int and 0 <= model.d_v <= MAX_INT64
    # issue #36: a query width of its own (decoupled heads) or latent attention lifts d_m = d_a d_h
    assert (model.d_m == model.d_a * model.d_h or model.decoupled_heads or model.latent_attention) \
        and model.d_a % model.d_kv == 0
    assert model.p > 0
    record("model file", "loaded")


@fuzz_settings("model_files")
@given(data=model_file(), through_cli=st.integers(0, 2))
def test_fuzz_model_files(tmp_path, data, through_cli):
    if data is None:
        return
    path = tmp_path / "model.yaml"
    path.write_bytes(data)
    _check_model(path)
    if through_cli == 0:  # a third of the files: evaluate with --model PATH
        argv = ["evaluate", "--model", str(path), "--method", "improved", "--n-b", "8", "--n-mu", "2", "--format", "json"]
        code, out, err, _ = call_cli(argv)
        record("cli evaluate --model PATH", f"exit {code}")
        check_contract(argv, code, out, err)


# --- run folders for lgacc validate -------------------------------------------------------------

TOP_KEYS = ["publication", "hardware", "cluster", "flop_formula", "runs", "title"]
RUN_KEYS = ["id", "citation", "model", "n_gpu", "tensor_parallel", "pipeline_parallel", "batch_size", "micro_batch_size",
            "sequence_length", "recomputation", "interleaved_schedule", "reported"]
REPORTED = st.dictionaries(st.sampled_from(["iteration_time_s", "tflops_per_gpu", "other"]),
                           st.one_of(st.floats(1e-3, 1e3), SCALAR), max_size=2)


@st.composite
def run_folder(draw) -> dict[str, bytes | None]:
    """File name -> content: one shipped run file mutated, sometimes beside an intact one."""
    names = sorted(SHIPPED_RUNS)
    name = draw(st.sampled_from(names))
    files: dict[str, bytes | None] = {}
    if draw(st.booleans()):
        other = draw(st.sampled_from([n for n in names if n != name]))
        files[other] = SHIPPED_RUNS[other].encode()
    if draw(st.integers(0, 3)) == 0:
        files[name] = _noisy(draw, SHIPPED_RUNS[name])
        return files
    top = yaml.safe_load(SHIPPED_RUNS[name])
    where = draw(st.sampled_from(["top", "run", "run", "reported", "cluster"]))
    if where == "top":
        _mutate(draw, top, TOP_KEYS, (1, 2))
    else:
        run = top["runs"][draw(st.integers(0, len(top["runs"]) - 1))]
        if where == "run":
            _mutate(draw, run, RUN_KEYS, (1, 2))
        elif where == "reported":
            run["reported"] = draw(REPORTED)
        else:
            top["cluster"] = draw(st.one_of(VALUE, st.dictionaries(
                st.sampled_from(["gpus_per_node", "infiniband_gb_per_s"]), st.one_of(st.integers(1, 16), SCALAR), max_size=2)))
    files[name] = _dump(top)
    return files


@fuzz_settings("run_files")
@given(files=run_folder(), fmt=st.sampled_from(["json", "json", "table"]))
def test_fuzz_validate_run_folders(tmp_path, files, fmt):
    if any(data is None for data in files.values()):
        return
    folder = tmp_path / "runs"
    folder.mkdir(exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    for name, data in files.items():
        (folder / name).write_bytes(data)
    argv = ["validate", "--runs", str(folder), "--format", fmt]
    code, out, err, _ = call_cli(argv)
    record("cli validate --runs", f"exit {code}")
    check_contract(argv, code, out, err)
    if code == 0 and fmt == "json":
        import json

        for row in json.loads(out)["runs"]:
            assert row["measured_step_s"] > 0 and math.isfinite(row["measured_step_s"]), row
            assert row["predicted_physical_s"] > 0 and math.isfinite(row["predicted_physical_s"]), row
