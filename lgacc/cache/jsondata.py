"""The data-only JSON the result cache keeps values in: what a result may hold, and nothing that runs.

The schema (every value a cached result is made of, and how it is written):

=========================================  ============================================================
value                                      JSON
=========================================  ============================================================
``None``, ``bool``, ``int``, ``str``       themselves
finite ``float``                           itself (written with ``repr``: read back bit for bit)
``nan``, ``inf``, ``-inf``                 ``{"$": "float", "v": "nan"}``
``list``                                   a list
``tuple``, ``set``, ``frozenset``          ``{"$": "tuple", "v": [...]}`` (``"set"``, ``"frozenset"``)
``dict``                                   an object when its keys are strings not starting with
                                           ``$``, else ``{"$": "dict", "v": [[key, value], ...]}``
numpy scalar                               ``{"$": "np", "dtype": "float64", "v": value}``
numpy array (bool, numbers, text, objects)  ``{"$": "array", "dtype": ..., "shape": [...], "v": [...]}``
pandas ``DataFrame``, ``Series``, index    columns with their dtypes, the index, the name
the package's dataclasses and enums        ``{"$": "dataclass", "type": "lgacc.module.Class",
                                           "v": {attribute: value}}`` (``"enum"``: its value)
=========================================  ============================================================

Reading a file builds only these: a class is looked up by name among the dataclasses and enums
*defined in the lgacc package* (nothing else is imported or called), and an instance is rebuilt
attribute by attribute, as it was written, without running its constructor.  Anything else (an
unknown tag, a class outside the package, a missing field) raises :class:`ValueError`: the cache
treats the entry as damaged and computes it again.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import json
import math
import re
from typing import Any

import numpy as np

__all__ = ["dumps", "loads", "Unstorable"]

_TAG = "$"
_CLASS_NAME = re.compile(r"^lgacc(\.[A-Za-z_][A-Za-z0-9_]*)+$")


class Unstorable(TypeError):
    """A value outside the schema: it is computed and returned, not kept."""


def dumps(value: Any) -> str:
    """``value`` as the schema's JSON text (:class:`Unstorable` for anything outside it)."""
    return json.dumps(_encode(value), ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def loads(text: str) -> Any:
    """The value written by :func:`dumps` (:class:`ValueError` for anything outside the schema)."""
    try:
        return _decode(json.loads(text, parse_constant=_no_constant))
    except (KeyError, TypeError, IndexError, AttributeError, OverflowError) as error:
        raise ValueError(f"not a value of the result schema: {error}") from None


def _no_constant(name: str):
    raise ValueError(f"bare {name} is not JSON")


def _float(value: float):
    return value if math.isfinite(value) else {_TAG: "float", "v": repr(value)}


def _class_name(cls) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _encode(value: Any) -> Any:  # noqa: C901 - one branch per kind of the schema
    if value is None or isinstance(value, (bool, str)) and type(value) in (bool, str):
        return value
    if type(value) is int:
        return value
    if type(value) is float:
        return _float(value)
    if isinstance(value, np.generic):
        return {_TAG: "np", "dtype": value.dtype.str, "v": _encode(value.item())}
    if isinstance(value, enum.Enum):
        return {_TAG: "enum", "type": _package_class(type(value)), "v": _encode(value.value)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {_TAG: "dataclass", "type": _package_class(type(value)), "v": _attributes(value)}
    if type(value) is list:
        return [_encode(item) for item in value]
    if type(value) in (tuple, set, frozenset):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return {_TAG: type(value).__name__, "v": [_encode(item) for item in items]}
    if type(value) is dict:
        if all(type(k) is str and not k.startswith(_TAG) for k in value):
            return {k: _encode(v) for k, v in value.items()}
        return {_TAG: "dict", "v": [[_encode(k), _encode(v)] for k, v in value.items()]}
    if isinstance(value, np.ndarray):
        return _encode_array(value)
    encoded = _encode_pandas(value)
    if encoded is not None:
        return encoded
    raise Unstorable(f"{type(value).__module__}.{type(value).__qualname__} is not in the result schema")


def _package_class(cls) -> str:
    name = _class_name(cls)
    if not _CLASS_NAME.match(name):
        raise Unstorable(f"{name} is not a class of the lgacc package")
    return name


def _attributes(value) -> dict:
    """Every attribute of a dataclass instance (its fields and what ``__post_init__`` set beside them)."""
    names = [f.name for f in dataclasses.fields(value)]
    extra = [k for k in getattr(value, "__dict__", {}) if k not in names]
    return {name: _encode(getattr(value, name)) for name in [*names, *extra]}


def _encode_array(array: np.ndarray):
    if array.dtype.kind not in "biufUO":
        raise Unstorable(f"numpy arrays of dtype {array.dtype} are not in the result schema")
    dtype = "object" if array.dtype.kind == "O" else array.dtype.str
    return {_TAG: "array", "dtype": dtype, "shape": list(array.shape), "v": [_encode(v) for v in array.ravel().tolist()]}


def _encode_pandas(value):
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a dependency
        return None
    if isinstance(value, pd.DataFrame):
        return {_TAG: "frame", "columns": _encode_index(value.columns), "index": _encode_index(value.index),
                "data": [_encode_column(value.iloc[:, i]) for i in range(value.shape[1])]}
    if isinstance(value, pd.Series):
        return {_TAG: "series", "name": _encode(value.name), "index": _encode_index(value.index),
                "data": _encode_column(value)}
    if isinstance(value, pd.Index):
        return _encode_index(value)
    return None


#: pandas' own dtypes a column or an index may have besides numpy's, by name (pandas' text dtype).
PANDAS_DTYPES = ("str", "string")


def _encode_column(values) -> dict:
    """A column's (or an index's) values with its dtype: numpy's, or one of :data:`PANDAS_DTYPES`."""
    dtype = values.dtype
    if isinstance(dtype, np.dtype):
        return _encode_array(values.to_numpy())
    if str(dtype) not in PANDAS_DTYPES:
        raise Unstorable(f"pandas columns of dtype {dtype} are not in the result schema")
    encoded = _encode_array(values.to_numpy(dtype=object))
    encoded["pandas"] = str(dtype)
    return encoded


def _encode_index(index) -> dict:
    import pandas as pd

    if isinstance(index, pd.RangeIndex):
        return {_TAG: "range", "start": index.start, "stop": index.stop, "step": index.step, "name": _encode(index.name)}
    if isinstance(index, pd.MultiIndex):
        raise Unstorable("a pandas MultiIndex is not in the result schema")
    return {_TAG: "index", "v": _encode_column(index), "name": _encode(index.name)}


# --- reading ---------------------------------------------------------------------------------------


def _decode(data: Any) -> Any:
    if data is None or type(data) in (bool, int, float, str):
        return data
    if type(data) is list:
        return [_decode(item) for item in data]
    if type(data) is not dict:
        raise ValueError(f"unexpected JSON value {data!r}")
    if _TAG not in data:
        return {k: _decode(v) for k, v in data.items()}
    return _DECODERS[data[_TAG]](data)


def _decode_float(data):
    text = data["v"]
    if text not in ("nan", "inf", "-inf"):
        raise ValueError(f"float {text!r} is finite: written as a number")
    return float(text)


def _decode_np(data):
    dtype = np.dtype(data["dtype"])
    if dtype.kind not in "biufU":
        raise ValueError(f"numpy scalar of dtype {dtype} is not in the result schema")
    return dtype.type(_decode(data["v"]))


def _decode_array(data):
    values = [_decode(v) for v in data["v"]]
    shape = tuple(int(n) for n in data["shape"])
    if data["dtype"] == "object":
        array = np.empty(len(values), dtype=object)
        for i, item in enumerate(values):  # one by one: a list item stays one object
            array[i] = item
        return array.reshape(shape)
    dtype = np.dtype(data["dtype"])
    if dtype.kind not in "biufU":
        raise ValueError(f"numpy array of dtype {dtype} is not in the result schema")
    return np.array(values, dtype=dtype).reshape(shape)


def _package_type(name: str, kind: str):
    """The dataclass or enum ``name`` of the lgacc package: imported from the package only, checked to be one."""
    if type(name) is not str or not _CLASS_NAME.match(name):
        raise ValueError(f"{name!r} is not a class of the lgacc package")
    parts = name.split(".")
    for split in range(len(parts) - 1, 0, -1):
        module_name = ".".join(parts[:split])
        try:
            target = importlib.import_module(module_name)
        except ImportError:
            continue
        for attribute in parts[split:]:
            target = getattr(target, attribute)
        break
    else:
        raise ValueError(f"{name!r} is not a class of the lgacc package")
    ok = isinstance(target, type) and target.__module__ == module_name and (
        dataclasses.is_dataclass(target) if kind == "dataclass" else issubclass(target, enum.Enum))
    if not ok:
        raise ValueError(f"{name!r} is not a {kind} of the lgacc package")
    return target


def _decode_dataclass(data):
    cls = _package_type(data["type"], "dataclass")
    attributes = {k: _decode(v) for k, v in data["v"].items()}
    missing = [f.name for f in dataclasses.fields(cls) if f.name not in attributes]
    if missing:
        raise ValueError(f"{data['type']} without its field {missing[0]!r}")
    odd = [k for k in attributes if not k.isidentifier() or k.startswith("__")]
    if odd:
        raise ValueError(f"{data['type']} with the attribute {odd[0]!r}")
    value = object.__new__(cls)
    for name, attribute in attributes.items():
        object.__setattr__(value, name, attribute)
    return value


def _decode_column(data):
    """An array, or a pandas array of one of :data:`PANDAS_DTYPES`."""
    if "pandas" not in data:
        return _decode_array(data)
    import pandas as pd

    if data["pandas"] not in PANDAS_DTYPES or data["dtype"] != "object":
        raise ValueError(f"pandas dtype {data['pandas']!r} is not in the result schema")
    return pd.array(list(_decode_array(data)), dtype=data["pandas"])


def _decode_frame(data):
    import pandas as pd

    columns = _decode_index(data["columns"])
    arrays = [_decode_column(column) for column in data["data"]]
    if len(arrays) != len(columns):
        raise ValueError("a frame's columns and data disagree")
    frame = pd.DataFrame({i: array for i, array in enumerate(arrays)}, index=_decode_index(data["index"]))
    frame.columns = columns
    return frame


def _decode_series(data):
    import pandas as pd

    return pd.Series(_decode_column(data["data"]), index=_decode_index(data["index"]), name=_decode(data["name"]))


def _decode_index(data):
    import pandas as pd

    if data[_TAG] == "range":
        return pd.RangeIndex(int(data["start"]), int(data["stop"]), int(data["step"]), name=_decode(data["name"]))
    if data[_TAG] != "index":
        raise ValueError(f"{data[_TAG]!r} is not an index")
    return pd.Index(_decode_column(data["v"]), name=_decode(data["name"]))


_DECODERS = {
    "float": _decode_float,
    "tuple": lambda data: tuple(_decode(v) for v in data["v"]),
    "set": lambda data: set(_decode(v) for v in data["v"]),
    "frozenset": lambda data: frozenset(_decode(v) for v in data["v"]),
    "dict": lambda data: {_decode(k): _decode(v) for k, v in data["v"]},
    "np": _decode_np,
    "array": _decode_array,
    "enum": lambda data: _package_type(data["type"], "enum")(_decode(data["v"])),
    "dataclass": _decode_dataclass,
    "frame": _decode_frame,
    "series": _decode_series,
    "range": _decode_index,
    "index": _decode_index,
}
