"""Random arguments to the Python API: a result, or a UserInputError in one line; never an
obscure exception (AttributeError, TypeError from pathlib, UFuncTypeError, OverflowError)."""

from __future__ import annotations

import math
import warnings

import numpy as np
from fuzzing import FIXTURES, fuzz_settings, mostly, record, time_limit
from hypothesis import given
from hypothesis import strategies as st

from lgacc.errors import MAX_INT64, UserInputError, positive_int
from lgacc.model.hardware import Hardware, load_hardware

NUMPY_SCALARS = st.one_of(
    st.integers(-(2**63), 2**63 - 1).map(np.int64),
    st.integers(0, 255).map(np.uint8),
    st.floats(allow_nan=True, allow_infinity=True).map(np.float64),
    st.floats(width=32).map(np.float32),
    st.booleans().map(np.bool_),
)
ANYTHING = st.one_of(
    st.integers(-(2**80), 2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    NUMPY_SCALARS,
    st.booleans(),
    st.none(),
    st.text(max_size=8),
    st.binary(max_size=4),
    st.lists(st.integers(), max_size=2),
    st.complex_numbers(max_magnitude=10),
)


def _one_line_user_error(call):
    try:
        with time_limit():
            result = call()
    except UserInputError as error:
        assert "\n" not in str(error), str(error)
        return None
    return result


@fuzz_settings("api_counts")
@given(value=ANYTHING)
def test_fuzz_positive_int(value):
    result = _one_line_user_error(lambda: positive_int("fuzz", "n", value))
    record("api positive_int", "rejected" if result is None else "accepted")
    if result is not None:
        assert type(result) is int and 1 <= result <= MAX_INT64
        assert result == value and not isinstance(value, (bool, np.bool_))


HARDWARE_ARGS = st.one_of(
    ANYTHING, st.sampled_from(["a100-80gb", "h100-sxm", "gb200-nvl72"]),
    st.sampled_from(["a100-80gb", "b200", "A100-80GB", "a100-80gb ", "../data/hardware/a100-80gb.yaml", "/", ".", "",
                     str(FIXTURES / "small-memory-gpu.yaml"), str(FIXTURES), "data/hardware/a100-80gb.yaml",
                     "a100-80gb\x00", "~/x.yaml", "x" * 5000]),
)


@fuzz_settings("api_hardware")
@given(value=HARDWARE_ARGS)
def test_fuzz_load_hardware(value):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = _one_line_user_error(lambda: load_hardware(value))
    record("api load_hardware", "rejected" if result is None else "accepted")
    if result is not None:
        assert isinstance(result, Hardware) and math.isfinite(result.peak_flop_per_s)


COUNT = mostly(st.one_of(st.integers(1, 64), st.just(np.int64(8)), st.just(4.0)),
               st.sampled_from([0, -1, 2**63, 2**62, 4.5, True, "4", None]), wild_share=12)


@fuzz_settings("api_config")
@given(
    method=mostly(st.sampled_from(["baseline", "partitioned", "improved", "IMPROVED"]), ANYTHING),
    n_b=COUNT, n_l=COUNT, n_a=COUNT, n_mu=COUNT, b_mu=COUNT,
    offload=mostly(st.booleans(), ANYTHING, wild_share=12),
    partitioned=mostly(st.one_of(st.none(), st.booleans()), ANYTHING, wild_share=12),
    x=st.sampled_from([4, 8, 16, 64, 160]),
)
def test_fuzz_training_config_and_evaluate(method, n_b, n_l, n_a, n_mu, b_mu, offload, partitioned, x):
    from lgacc.model.config import TrainingConfig
    from lgacc.model.evaluator import evaluate
    from lgacc.model.transformer import x_model

    def call():
        config = TrainingConfig(method=method, n_b=n_b, n_l=n_l, n_a=n_a, n_mu=n_mu, b_mu=b_mu, offload=offload,
                                partitioned=partitioned)
        return evaluate(x_model(x), "a100-80gb", config)

    result = _one_line_user_error(call)
    record("api evaluate", "rejected" if result is None else "accepted")
    if result is not None:
        summary = result.summary()
        assert summary["b"] >= 1 and summary["n_gpu"] >= 1, summary
