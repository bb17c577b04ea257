"""Issue #34's Python API cases, fuzzed: any argument of ``evaluate``, ``evaluate_many``, ``fastest``,
``cheapest``, ``simulation``, ``Durations`` or ``TrainingConfig`` replaced by an odd value (numbers no float
holds, text where a number is meant, arrays, None, numpy scalars) gives a result or a one-line
``UserInputError``; text is never taken for a number."""

from __future__ import annotations

import numpy as np
from fuzzing import fuzz_settings, record, time_limit
from hypothesis import given
from hypothesis import strategies as st
from test_reliability_34 import BAD_VALUES, NUMERIC, _api_calls

from lgacc.errors import UserInputError

CALLS = _api_calls()
ODD = st.one_of(
    st.sampled_from(list(BAD_VALUES.values())),
    st.integers(-(2**1400), 2**1400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(width=32).map(np.float32),
    st.text(alphabet="0123456789.e-", max_size=6),
    st.lists(st.integers(1, 4), min_size=0, max_size=3).map(np.array),
)


@fuzz_settings("api_errors")
@given(name=st.sampled_from(sorted(CALLS)), value=ODD)
def test_fuzz_every_api_argument(name, value):
    try:
        with time_limit():
            CALLS[name](value)
    except UserInputError as error:
        assert "\n" not in str(error) and len(str(error)) < 600, str(error)[:300]
        record("api errors", "rejected")
        return
    assert not (name.split(".")[1] in NUMERIC and isinstance(value, (str, bytes))), (name, value)
    record("api errors", "accepted")
