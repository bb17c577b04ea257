"""Random argument vectors for every subcommand, called in-process, must keep the contract
of :func:`fuzzing.check_contract`; a handful of real subprocesses check it end to end."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from fuzzing import FIXTURES, ROOT, call_cli, check_contract, fuzz_settings, mostly, record
from hypothesis import given
from hypothesis import strategies as st

WILD_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12)
WILD_INT = st.one_of(
    st.integers(-3, 70).map(str),
    st.integers(-(2**70), 2**70).map(str),
    st.sampled_from(["0", "9223372036854775807", "9223372036854775808", "4.0", "1e3", " 4", "", "nan", "0x10", "+4",
                     "1_000", "٤", "4611686018427387904"]),
    WILD_TEXT,
)
WILD_FLOAT = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(1e-3, 1e3).map(repr),
    st.sampled_from(["0", "-0.0", "1e-320", "1e308", "1e309", "inf", "-inf", "nan", "0.25", "1", "", "x", "5e-324"]),
    WILD_TEXT,
)
HARDWARE = mostly(
    st.sampled_from(["a100-80gb", "h100-sxm", "gb200-nvl72", str(FIXTURES / "small-memory-gpu.yaml"),
                     str(FIXTURES / "slow-network-cluster.yaml")]),
    st.one_of(st.sampled_from(["a100-40gb", "", "A100-80GB", "data/hardware/a100-80gb", "/", "/nonexistent.yaml", ".",
                     "tests/fixtures/hardware", "a100-80gb.yaml", "x" * 300 + ".yaml"]),
              WILD_TEXT),
)
FORMAT = mostly(st.sampled_from(["json", "json", "table"]), st.sampled_from(["csv", "JSON", ""]))
MODEL = mostly(
    st.sampled_from(["X160", "X8", "X64", "X2", "GPT-3", "BERT", "T-NLG", "Megatron-LM"]),
    st.one_of(st.sampled_from(["X3", "X0", "X-2", "x160", "X", "X1e3"]), st.integers(-4, 400).map(lambda x: f"X{x}"),
              WILD_TEXT),
)
METHOD = mostly(st.sampled_from(["baseline", "partitioned", "improved", "Improved"]), st.one_of(st.just("fastest"), WILD_TEXT))
PARALLELISM = mostly(
    st.sampled_from(["data", "pipe", "tensor", "data+pipe", "data+tensor", "pipe+tensor", "3d"]),
    st.one_of(st.sampled_from(["4d", "", "data+data"]), WILD_TEXT),
)
SMALL_COUNT = mostly(st.integers(1, 64).map(str), WILD_INT)
MAYBE_FLOAT = mostly(st.floats(0.01, 1).map(repr), WILD_FLOAT)


@st.composite
def argv_for(draw, command: str, options: dict, flags: tuple = (), required: tuple = (), positional=None,
             always: tuple = ()):
    """An argument vector: each option present or not, valid or wild, in a random order;
    sometimes a stray token."""
    parts: list[list[str]] = []
    if positional is not None:
        parts.append([draw(positional)])
    for name, values in options.items():
        present = draw(st.booleans()) if name not in required else (name in always or draw(st.integers(0, 9)) > 0)
        if present:
            parts.append([name, draw(values)])
    for flag in flags:
        if draw(st.integers(0, 3)) == 0:
            parts.append([flag])
    if draw(st.integers(0, 30)) == 0:
        parts.append([draw(st.sampled_from(["--bogus", "-x", "extra", "--format", "--n-b=3", "--"]))])
    order = draw(st.permutations(range(len(parts))))
    argv = [command]
    for index in order:
        argv += parts[index]
    return argv

SCHEDULE = mostly(st.sampled_from(["gpipe", "1f1b", "interleaved", "breadth-first", "zero-bubble", "modular", "standard"]),
                  st.one_of(st.sampled_from(["Modular", "", "zb"]), WILD_TEXT))
N_V = mostly(st.sampled_from(["1", "1", "1", "2", "3"]), WILD_INT)


EVALUATE = argv_for(
    "evaluate",
    {"--model": MODEL, "--method": METHOD, "--n-b": SMALL_COUNT, "--n-l": SMALL_COUNT, "--n-a": SMALL_COUNT,
     "--n-mu": SMALL_COUNT, "--b-mu": SMALL_COUNT, "--hardware": HARDWARE, "--max-overhead": MAYBE_FLOAT,
     "--steps": mostly(st.integers(1, 10**6).map(str), WILD_INT), "--form": mostly(st.sampled_from(["paper", "exact"]), st.just("approx")),
     "--format": FORMAT, "--schedule": SCHEDULE, "--n-v": N_V},
    flags=("--offload", "--partitioned", "--no-partitioned"),
    required=("--model", "--method", "--n-b"),
)
OPTIMIZE = argv_for(
    "optimize",
    {"--model": MODEL, "--method": METHOD, "--parallelism": PARALLELISM, "--hardware": HARDWARE,
     "--max-gpus": mostly(st.integers(1, 10**5).map(str), WILD_INT), "--target-days": mostly(st.floats(1, 1000).map(repr), WILD_FLOAT),
     "--max-overhead": MAYBE_FLOAT, "--format": FORMAT, "--schedule": SCHEDULE, "--n-v": N_V},
    flags=("--no-offload", "--no-partition"),
    required=("--model", "--method", "--parallelism"),
)
DURATION = mostly(st.one_of(st.integers(0, 5).map(str), st.floats(0, 10).map(repr)),
                  st.sampled_from(["-1", "nan", "inf", "x", "", "0.5", "1e-300"]))
SIMULATE = argv_for(
    "simulate",
    {"--schedule": mostly(st.sampled_from(["standard", "modular"]), st.sampled_from(["diagonal", ""])),
     "--n-l": mostly(st.integers(1, 8).map(str), WILD_INT), "--n-mu": mostly(st.integers(1, 8).map(str), WILD_INT),
     "--d-l": mostly(st.sampled_from([1, 2, 4, 8, 16]).map(str), WILD_INT), "--n-b": mostly(st.integers(1, 4).map(str), WILD_INT),
     "--state": mostly(st.sampled_from(["replicated", "partitioned", "offloaded"]), st.just("sharded")),
     "--forward": DURATION, "--backward": DURATION, "--send": DURATION, "--restore": DURATION, "--reduce": DURATION,
     "--format": FORMAT},
    flags=("--no-recompute",),
    required=("--schedule", "--n-l", "--n-mu", "--d-l"),
)
SCHEDULES = ("gpipe", "1f1b", "interleaved", "breadth-first", "zero-bubble", "modular")
ODD = st.sampled_from([1, 3, 5, 7, 9, 2, 4, 6])


@st.composite
def schedule_argv(draw):
    """The six schedules with odd (and some even) n_l, n_mu, n_v and a d_l that is usually a
    multiple of n_l n_v: the simulators themselves run, not only the argument checks."""
    schedule = draw(st.sampled_from(SCHEDULES))
    n_l, n_mu = draw(ODD), draw(st.one_of(ODD, st.integers(1, 24)))
    virtual = schedule in ("interleaved", "breadth-first")
    n_v = draw(ODD) if virtual or draw(st.integers(0, 7)) == 0 else 1
    d_l = n_l * n_v * draw(st.integers(1, 3)) if draw(st.integers(0, 5)) else draw(st.integers(1, 40))
    if schedule == "interleaved" and draw(st.integers(0, 3)):
        n_mu = n_l * draw(st.integers(1, 3))  # interleaving needs n_mu a multiple of n_l, mostly given
    argv = ["simulate", "--schedule", schedule, "--n-l", str(n_l), "--n-mu", str(n_mu), "--d-l", str(d_l),
            "--format", draw(st.sampled_from(["json", "json", "table"]))]
    if n_v != 1 or draw(st.booleans()):
        argv += ["--n-v", str(n_v)]
    options = {"--n-b": mostly(st.integers(1, 3).map(str), WILD_INT),
               "--state": mostly(st.sampled_from(["replicated", "partitioned", "offloaded"]), st.just("sharded")),
               "--send": DURATION, "--reduce": DURATION, "--restore": DURATION,
               "--forward": mostly(st.floats(0.1, 10).map(repr), DURATION),
               "--transfer-bytes": mostly(st.integers(1, 10**9).map(str), WILD_FLOAT)}
    for name, values in options.items():
        if draw(st.integers(0, 2)) == 0:
            argv += [name, draw(values)]
    if "partitioned" in argv and "--n-b" not in argv and draw(st.booleans()):
        argv += ["--n-b", str(draw(st.integers(2, 3)))]  # a partitioned state needs n_b >= 2
    if draw(st.integers(0, 3)) == 0:
        argv.append("--no-recompute")
    return argv


FAST_LABELS = ["table:hardware_bandwidth", "table:x_model", "table:mixed_buffering", "fig:gradient_accumulation",
               "fig:gradient_accumulation_partitioned"]


def _reproduce(tmp: str):
    out = mostly(st.sampled_from([f"{tmp}/f.svg", f"{tmp}/f.png", f"{tmp}/f.pdf", f"{tmp}/new/sub/f.svg", f"{tmp}/f.SVG"]),
                 st.sampled_from([f"{tmp}/f.txt", f"{tmp}/f", f"{tmp}", "/proc/none/f.svg"]), wild_share=3)
    return argv_for(
        "reproduce",
        {"--hardware": HARDWARE, "--format": FORMAT, "--out": out},
        flags=("--compare",),
        positional=mostly(st.sampled_from(FAST_LABELS), st.one_of(st.sampled_from(["table:nope", "fig:", "claims ", ""]), WILD_TEXT)),
    )


# Scorecard runs every artifact (~15 s): only its argument errors are fuzzed here;
# test_reliability runs it whole on the small-memory fixture.
SCORECARD_HARDWARE = st.one_of(st.sampled_from(["a100-40gb", "", "/nonexistent.yaml", "."]),
                               WILD_TEXT.filter(lambda t: t not in {"a100-80gb", "b200", "h100-sxm", "h200-sxm", "gb200-nvl72"}))
SCORECARD = argv_for(
    "scorecard",
    {"--hardware": SCORECARD_HARDWARE, "--format": FORMAT},
    required=("--hardware",),
    always=("--hardware",),
)


# Sensitivity runs searches per assumption value (seconds each): only its argument errors are
# fuzzed here, each vector naming at least one unknown assumption or a bad spec;
# test_reliability runs one assumption whole on the small-memory fixture.
ASSUMPTIONS = ("convention", "critical_batch_scale", "depth_factor", "divisibility", "ethernet_bandwidth_gib_per_s", "gb",
               "gpus_per_node", "max_overhead", "overlap_efficiency", "pipeline_overlap")


@st.composite
def sensitivity_argv(draw):
    wild_name = st.one_of(st.sampled_from(["GB", "gb ", "", "divisible_layers", "all"]),
                          WILD_TEXT).filter(lambda t: t not in ASSUMPTIONS)
    names = draw(st.lists(st.one_of(st.sampled_from(ASSUMPTIONS), wild_name), max_size=3))
    bad_spec = draw(st.booleans())
    if not bad_spec and all(name in ASSUMPTIONS for name in names):
        names.append(draw(wild_name))
    argv = ["sensitivity"]
    for name in draw(st.permutations(names)):
        argv += ["--assumption", name]
    argv += ["--hardware", draw(SCORECARD_HARDWARE) if bad_spec else "a100-80gb"]
    if draw(st.booleans()):
        argv.append("--conclusions")
    return argv + ["--format", draw(FORMAT)]


def _fuzz(argv):
    code, out, err, _ = call_cli(argv)
    record(f"cli {argv[0]}", f"exit {code}")
    check_contract(argv, code, out, err)


@fuzz_settings("evaluate")
@given(EVALUATE)
def test_fuzz_evaluate(argv):
    _fuzz(argv)


@fuzz_settings("optimize")
@given(OPTIMIZE)
def test_fuzz_optimize(argv):
    _fuzz(argv)


@fuzz_settings("simulate")
@given(SIMULATE)
def test_fuzz_simulate(argv):
    _fuzz(argv)


@fuzz_settings("schedules")
@given(schedule_argv())
def test_fuzz_simulate_six_schedules(argv):
    code, out, err, _ = call_cli(argv)
    record("cli simulate six schedules", f"exit {code}")
    check_contract(argv, code, out, err)
    if code == 0 and "json" in argv:
        result = json.loads(out)
        assert result["schedule"] == argv[2] or (argv[2], result["schedule"]) == ("standard", "gpipe"), result
        bubble = result["bubble_overhead"]
        assert bubble is not None and 0 <= bubble < math.inf, result
        assert result["step_time"] >= result["bubble_free_step_time"] * (1 - 1e-9), result


@fuzz_settings("reproduce")
@given(st.data())
def test_fuzz_reproduce(tmp_path, data):
    _fuzz(data.draw(_reproduce(str(tmp_path))))


@fuzz_settings("scorecard")
@given(SCORECARD)
def test_fuzz_scorecard_arguments(argv):
    _fuzz(argv)


@fuzz_settings("sensitivity")
@given(sensitivity_argv())
def test_fuzz_sensitivity_arguments(argv):
    _fuzz(argv)


SWEEPS = FIXTURES.parent / "sweeps"


@st.composite
def codesign_argv(draw):
    """Tiny sweeps (or wild files), serial or with wild worker counts and scheduler addresses that never
    start a cluster: a valid count other than 1 is not drawn, nor a well-formed address."""
    argv = ["codesign", "--sweep", draw(mostly(st.sampled_from([str(SWEEPS / "tiny.yaml"), str(SWEEPS / "cheapest.yaml")]),
                                               st.one_of(st.sampled_from(["/nonexistent.yaml", "/", "/dev/null", "",
                                                                          str(FIXTURES / "small-memory-gpu.yaml")]),
                                                         WILD_TEXT)))]
    argv += ["--workers", draw(mostly(st.just("1"), st.sampled_from(["0", "-1", "x", "", "1e3", "9223372036854775808"])))]
    if draw(st.booleans()):
        argv += ["--scheduler", draw(st.sampled_from(["", "localhost", "tcp://", "tcp://h:0", "tcp://h:99999", "a b:1"]))]
    return argv + ["--format", draw(mostly(st.sampled_from(["json", "table"]), st.sampled_from(["parquet", "csv", ""])))]


@fuzz_settings("codesign")
@given(codesign_argv())
def test_fuzz_codesign_arguments(argv):
    _fuzz(argv)


# End to end: a real process, its real stderr.
SUBPROCESS_CASES = [
    (["evaluate", "--model", "X160", "--method", "improved", "--n-b", "9223372036854775808"], 2),
    (["reproduce", "table:hardware_bandwidth", "--hardware", "/nonexistent.yaml"], 2),
    (["evaluate", "--model", "X160", "--method", "improved", "--n-b", "8", "--format", "json"], 0),
]


@pytest.mark.parametrize("argv, expected", SUBPROCESS_CASES, ids=lambda v: " ".join(v) if isinstance(v, list) else str(v))
def test_subprocess_contract(tmp_path, argv, expected):
    completed = subprocess.run([sys.executable, "-m", "lgacc", *argv], capture_output=True, text=True, timeout=60,
                               cwd=tmp_path, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert completed.returncode == expected, completed.stderr
    check_contract(argv, completed.returncode, completed.stdout, completed.stderr)
    if expected == 0:
        json.loads(completed.stdout)


#: Subcommands with a fuzz test here (validate's is in test_fuzz_files); a new one must join them.
FUZZED_COMMANDS = {"codesign", "evaluate", "optimize", "simulate", "reproduce", "scorecard", "sensitivity",
                   "validate"}


def test_every_subcommand_is_fuzzed():
    import pkgutil

    from lgacc import commands

    shipped = {m.name for m in pkgutil.iter_modules(commands.__path__) if not m.name.startswith("_")}
    assert shipped == FUZZED_COMMANDS
