"""Fuzz over the input classes of the reliability issue #28: extreme numbers on the command line and in the
Python API, pipeline durations and byte counts, figure file names, deep model files, and damaged cache
entries.  The property is the suite's (:mod:`fuzzing`): a result, or exit 2 and one line; never an internal
error, never over 10 s.  For the caches: a changed byte never changes an answer.

Each test runs a few dozen derandomized cases on small models, a few seconds each.
"""

from __future__ import annotations

import json
import math

import pytest
from fuzzing import call_cli, check_contract, fuzz_settings, mostly, record, time_limit
from hypothesis import given
from hypothesis import strategies as st

from lgacc.errors import UserInputError

#: Number texts at and beyond the edges: what a float, an int64 and argparse make of them.
EDGE_TEXTS = st.sampled_from([
    "-1e308", "1e308", "1e309", "-inf", "inf", "nan", "-nan", "1e-320", "5e-324", "0", "-0", "-0.0", "-5", "-.5",
    "1" + "0" * 400, "-1" + "0" * 30, "9223372036854775807", "9223372036854775808", "4611686018427387904",
    "0x10", "1_000", "", " ", "1e", "２",
])
NUMBER_TEXTS = st.one_of(
    EDGE_TEXTS,
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-(10**30), 10**30).map(str),
)


def _run(argv, name):
    code, out, err, _ = call_cli(argv)
    check_contract(argv, code, out, err)
    assert "internal error" not in err, (argv, err)
    record(name, f"exit {code}")
    return code, out, err


OPTIONS = st.sampled_from([
    ("evaluate", "--max-overhead"), ("evaluate", "--n-a"), ("evaluate", "--n-b"), ("evaluate", "--n-mu"),
    ("evaluate", "--b-mu"), ("evaluate", "--steps"), ("optimize", "--max-overhead"), ("optimize", "--target-days"),
    ("optimize", "--max-gpus"), ("evaluate", "--assume critical_batch_scale"), ("optimize", "--assume critical_batch_scale"),
    ("evaluate", "--assume overlap_efficiency"), ("optimize", "--assume overlap_efficiency"),
])


@fuzz_settings("edge_numbers")
@given(option=OPTIONS, value=NUMBER_TEXTS, x=st.sampled_from([2, 8, 40]))
def test_fuzz_edge_numbers_on_the_command_line(option, value, x):
    command, flag = option
    argv = [command, "--model", f"X{x}", "--method", "improved"]
    argv += ["--n-b", "2"] if command == "evaluate" else ["--parallelism", "3d"]
    if flag.startswith("--assume"):
        argv += ["--assume", f"{flag.split()[1]}={value}"]
    else:
        argv += [flag, value]
    argv += ["--format", "json"]
    code, out, err = _run(argv, "edge numbers")
    if code == 0:  # a result is finite where it is a number
        data = json.loads(out)
        assert data["time_days"] is None or math.isfinite(data["time_days"])


#: Durations: mostly usable (a float from a thousandth to a thousand, or a small integer), else an edge.
DURATIONS = mostly(st.one_of(st.floats(min_value=1e-3, max_value=1e3).map(repr), st.integers(1, 5).map(str)),
                   st.one_of(st.sampled_from(["0", "1e-16", "1e-9", "1e9", "1e10", "-1", "inf", "nan", "5e-324"]),
                             st.floats(min_value=0, max_value=1e9).map(repr)), wild_share=6)
BYTES = mostly(st.integers(0, 2**40).map(str), NUMBER_TEXTS, wild_share=4)


@fuzz_settings("edge_durations")
@given(forward=DURATIONS, backward=DURATIONS, restore=DURATIONS, send=DURATIONS, reduce=DURATIONS,
       transfer=BYTES, schedule=st.sampled_from(["gpipe", "modular", "1f1b"]),
       state=st.sampled_from(["replicated", "partitioned", "offloaded"]))
def test_fuzz_pipeline_durations_and_bytes(forward, backward, restore, send, reduce, transfer, schedule, state):
    argv = ["simulate", "--schedule", schedule, "--n-l", "2", "--n-mu", "2", "--d-l", "4", "--n-b", "2",
            "--state", state, "--forward", forward, "--backward", backward, "--restore", restore, "--send", send,
            "--reduce", reduce, "--transfer-bytes", transfer, "--format", "json"]
    code, out, _ = _run(argv, "durations and bytes")
    if code == 0:
        data = json.loads(out)
        assert data["pipeline_bytes_per_step"] >= 0 and math.isfinite(data["step_time"]) and data["step_time"] > 0
        assert all(0 <= f <= 1 for f in data["busy_fraction_per_device"])


FILE_NAMES = st.one_of(
    st.sampled_from(["", " ", ".", "/", "a" * 300 + ".svg", "d/" * 3 + "f.svg", "f.SVG", "f.txt", "f", "/dev/null/f.svg",
                     "x/" + "b" * 256 + "/f.svg", "f.svg/", "-f.svg", "é.png", "f.pdf"]),
    st.text(min_size=0, max_size=40).map(lambda t: t.replace("\x00", "")),
    st.text(min_size=1, max_size=20).map(lambda t: t.replace("\x00", "").replace("/", "") + ".svg"),
)


@fuzz_settings("figure_names")
@given(name=FILE_NAMES)
def test_fuzz_figure_file_names(name, tmp_path_factory, monkeypatch):
    """``--out``'s checks and writing (:func:`lgacc.commands._output.save_figure`) on an empty figure: the
    command's own path, without drawing a page's figure per case."""
    from matplotlib.figure import Figure

    from lgacc.commands._output import save_figure

    monkeypatch.chdir(tmp_path_factory.mktemp("figures"))
    try:
        with time_limit():
            path = save_figure(Figure(figsize=(1, 1)), name)
    except UserInputError as error:
        assert "\n" not in str(error) and "--out" in str(error)
        record("figure file names", "rejected")
        return
    assert path.is_file() and path.suffix.lower() in (".svg", ".png", ".pdf")
    record("figure file names", "written")


@fuzz_settings("deep_models")
@given(d_l=mostly(st.integers(1, 64), st.one_of(st.integers(1, 2**63 - 1), st.sampled_from([2**40, 2**62, 2**63 - 1])),
                  wild_share=3),
       d_v=mostly(st.just(0), st.integers(0, 2**63 - 1)),
       method=st.sampled_from(["partitioned", "improved", "baseline"]),
       parallelism=st.sampled_from(["data", "data+pipe", "pipe+tensor"]))
def test_fuzz_deep_model_files(d_l, d_v, method, parallelism, tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "deep.yaml"
    path.write_text(f"d_l: {d_l}\nd_m: 256\nd_a: 4\nd_h: 64\nd_s: 256\nd_v: {d_v}\n")
    _run(["optimize", "--model", str(path), "--method", method, "--parallelism", parallelism, "--format", "json"],
         "deep model files")


HOSTILE = st.one_of(
    st.integers(-(10**500), 10**500), st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.none(),
    st.text(max_size=5), st.sampled_from([10**400, -(10**400), 2**63, 2**62, 1e308, 5e-324]),
)


@fuzz_settings("api_edges")
@given(keyword=st.sampled_from(["max_overhead", "target_days", "max_gpus", "critical_batch_scale", "overlap_efficiency",
                                "steps"]),
       value=HOSTILE, search=st.sampled_from(["evaluate", "fastest", "cheapest"]))
def test_fuzz_api_edges(keyword, value, search):
    from lgacc.model.assumptions import Assumptions
    from lgacc.model.config import TrainingConfig
    from lgacc.model.evaluator import evaluate
    from lgacc.search import cheapest, fastest

    def call():
        options = {}
        if keyword in ("critical_batch_scale", "overlap_efficiency"):
            options["assumptions"] = Assumptions().replace(**{keyword: value})
        elif keyword != "target_days" and not (keyword == "steps" and search != "evaluate") \
                and not (keyword == "max_gpus" and search == "evaluate"):
            options[keyword] = value
        if search == "evaluate":
            return evaluate("X8", "a100-80gb", TrainingConfig("improved", n_b=2), **options)
        if search == "fastest":
            return fastest("X8", "a100-80gb", "improved", "3d", **options)
        return cheapest("X8", "a100-80gb", "improved", "3d", value if keyword == "target_days" else 30, **options)

    try:
        with time_limit():
            result = call()
    except UserInputError as error:
        assert "\n" not in str(error)
        record("api edges", "rejected")
        return
    record("api edges", "accepted")
    evaluation = getattr(result, "evaluation", result)
    if evaluation is not None:
        assert math.isfinite(evaluation.time_days)


# --- a changed byte never changes an answer -----------------------------------------------------------


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


def _mutate(data: bytes, position: int, byte: int, cut: bool) -> bytes:
    position %= max(len(data), 1)
    return data[:position] if cut else data[:position] + bytes([byte]) + data[position + 1:]


@fuzz_settings("damaged_caches")
@given(position=st.integers(0, 10**6), byte=st.integers(0, 255), cut=st.booleans(),
       kind=st.sampled_from(["results", "programs", "notebook"]))
def test_fuzz_a_changed_byte_never_changes_an_answer(position, byte, cut, kind, cache_dir, monkeypatch):
    monkeypatch.setenv("LGACC_CACHE_DIR", str(cache_dir))
    monkeypatch.delenv("LGACC_RESULT_CACHE", raising=False)
    if kind == "results":
        from lgacc.cache import results

        value = {"days": 3600.0, "rows": [(1, 2.5, "x")], "nan": math.nan}
        results.cached("fuzz", "inputs", lambda: value)
        (entry,) = (cache_dir / "results").glob("fuzz-*.json")
        original = entry.read_bytes()
        entry.write_bytes(_mutate(original, position, byte, cut))
        served = results.cached("fuzz", "inputs", lambda: value)
        assert served["days"] == 3600.0 and served["rows"] == [(1, 2.5, "x")] and math.isnan(served["nan"])
        assert entry.read_bytes() == original or entry.read_bytes() == _mutate(original, position, byte, cut)
    elif kind == "programs":  # the calibrated model's compiled programs, kept as data when not committed
        from lgacc.model.calibrated import store

        source = cache_dir / "derivation.py"
        source.write_text("programs\n")
        programs = {"main": ((("input", "x"), ("const", 2.0), ("mul", 0, 1)), (("y", 2),))}
        build = lambda: store.load_or_build("fuzz", [source], lambda: programs)  # noqa: E731
        assert build() == programs
        (entry,) = cache_dir.glob("fuzz-*.json")
        entry.write_bytes(_mutate(entry.read_bytes(), position, byte, cut))
        assert build() == programs
    else:
        from lgacc.book import notebookcache

        executed = cache_dir / "executed.ipynb"
        notebook = {"cells": [{"cell_type": "code", "source": "print(1)", "outputs": [], "metadata": {}}],
                    "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
        executed.write_text(json.dumps(notebook))
        kept = cache_dir / "notebooks" / "page-00ff.kept"
        notebookcache.keep(executed, kept)
        original = kept.read_bytes()
        kept.write_bytes(_mutate(original, position, byte, cut))
        restored = cache_dir / "restored.ipynb"
        restored.unlink(missing_ok=True)
        if notebookcache.restore(kept, restored):
            assert json.loads(restored.read_text()) == notebook
        else:
            assert not restored.exists()
    record("damaged caches", kind)
