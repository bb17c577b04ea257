"""A hardened YAML reader for the package's spec files (hardware, models).

``load_yaml_mapping(path, owner)`` returns the file's top-level mapping, or
raises :class:`lgacc.errors.UserInputError` in one line naming the file and
the rule it breaks.  Compared with ``yaml.safe_load`` it

* reads at most :data:`MAX_BYTES` (1 MB) and only UTF-8 text;
* turns every OS error (missing, unreadable, a folder) into that one line, and reads only
  regular files (``/dev/zero`` or a FIFO would never end);
* rejects anchors and aliases (an "alias bomb" of a few lines expands to
  gigabytes), duplicate keys (YAML would silently keep the last), and nesting
  deeper than :data:`MAX_DEPTH` (Python's recursion limit otherwise);
* resolves plain scalars with the YAML 1.2 core schema instead of YAML 1.1:
  ``1:20`` stays a string (YAML 1.1 reads the sexagesimal 80), ``010`` is ten
  (not octal eight), ``yes``/``on`` stay strings, ``312e12`` is a number and
  dates stay strings.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

import yaml

from lgacc.errors import UserInputError

__all__ = ["MAX_BYTES", "MAX_DEPTH", "SpecFileError", "load_yaml_mapping", "parse_yaml_mapping", "file_problem"]

#: Largest spec file read, in bytes: a spec is a few dozen lines.
MAX_BYTES = 1_000_000
#: Deepest nesting of mappings and lists accepted.
MAX_DEPTH = 32


class SpecFileError(UserInputError):
    """A spec file that cannot be read as a YAML mapping; the message names the file."""


def _rejected(event, depth: int) -> str | None:
    """Why the node ``event`` opens at nesting ``depth`` (its parents' count) is refused, or ``None``: an alias, an
    anchor, or nesting deeper than :data:`MAX_DEPTH` (one rule for both readers below)."""
    if isinstance(event, yaml.AliasEvent):
        return f"alias *{event.anchor} is not allowed (anchors and aliases are rejected)"
    if getattr(event, "anchor", None) is not None:
        return f"anchor &{event.anchor} is not allowed (anchors and aliases are rejected)"
    if depth + 1 > MAX_DEPTH:
        return f"nesting deeper than {MAX_DEPTH} levels is not allowed"
    return None


class _NoDuplicateKeys:
    """A constructor that refuses a mapping's key given twice (YAML would silently keep the last)."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, Any] = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                except TypeError:  # unhashable key: the base class reports it
                    break
                if duplicate:
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping", node.start_mark,
                        f"duplicate key {key!r} (first given {seen[key]})", key_node.start_mark,
                    )
                seen[key] = f"on line {key_node.start_mark.line + 1}"
        return super().construct_mapping(node, deep=deep)


class _StrictLoader(_NoDuplicateKeys, yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core scalars, no aliases, no duplicate keys, bounded depth (pure Python)."""

    _depth = 0

    def compose_node(self, parent, index):
        event = self.peek_event()
        problem = _rejected(event, self._depth)
        if problem:
            raise yaml.composer.ComposerError(None, None, problem, event.start_mark)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


#: libyaml's parser and composer (C, about eight times faster: every run file, model and table of ``data/`` is
#: read through here) with the same constructors and resolvers; ``None`` where PyYAML was built without it.
_FastLoader = (type("_FastLoader", (_NoDuplicateKeys, yaml.CSafeLoader), {"__doc__": "libyaml-backed _StrictLoader"})
               if getattr(yaml, "__with_libyaml__", False) else None)


def _screen(text: str) -> None:
    """Refuse aliases, anchors and deep nesting from libyaml's flat event stream, before anything is composed:
    its composer recurses in C, where a document nested a million deep must never arrive."""
    depth = 0
    try:
        for event in yaml.parse(text, Loader=yaml.CSafeLoader):
            if isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent, yaml.CollectionStartEvent)):
                problem = _rejected(event, depth)
                if problem:
                    raise yaml.composer.ComposerError(None, None, problem, event.start_mark)
                if isinstance(event, yaml.CollectionStartEvent):
                    depth += 1
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.MarkedYAMLError as error:
        # libyaml looks ahead for a flow collection's key and stops at its own limit (1000) before the first
        # event: the same rule, named as this module names it
        if "nesting depth" in str(error.problem):
            raise yaml.composer.ComposerError(None, None, f"nesting deeper than {MAX_DEPTH} levels is not allowed",
                                              error.problem_mark) from None
        raise


# YAML 1.2 core schema for plain scalars (https://yaml.org/spec/1.2.2/#1032-tag-resolution).
_StrictLoader.yaml_implicit_resolvers = {}
_CORE = [
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", list("~nN") + [""]),
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", list("-+0123456789")),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        list("-+.0123456789"),
    ),
]
for _tag, _pattern, _first in _CORE:
    _StrictLoader.add_implicit_resolver(_tag, re.compile(_pattern), _first)


def _construct_int(loader, node):
    text = loader.construct_scalar(node)
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)


def _construct_float(loader, node):
    text = loader.construct_scalar(node).lower()
    if text == ".nan":  # a number, for the field's own rule to refuse by name
        return float("nan")
    if text.endswith("inf"):
        return float("-inf") if text.startswith("-") else float("inf")
    return float(text)


_StrictLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_StrictLoader.add_constructor("tag:yaml.org,2002:float", _construct_float)
if _FastLoader is not None:  # the same schema: one table of resolvers and constructors for both readers
    _FastLoader.yaml_implicit_resolvers = _StrictLoader.yaml_implicit_resolvers
    _FastLoader.yaml_constructors = _StrictLoader.yaml_constructors


def parse_yaml_mapping(text: str, origin: str) -> dict:
    """Parse ``text`` (already decoded) as one YAML mapping; an empty document is ``{}``."""
    try:
        if _FastLoader is None:
            data = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - _StrictLoader is a SafeLoader
        else:
            _screen(text)
            data = yaml.load(text, Loader=_FastLoader)  # noqa: S506 - _FastLoader is a CSafeLoader
    except yaml.MarkedYAMLError as error:
        raise SpecFileError(f"{origin}: not valid YAML: {_marked(error)}") from None
    except yaml.YAMLError as error:
        raise SpecFileError(f"{origin}: not valid YAML: {_one_line(error)}") from None
    except (RecursionError, ValueError, OverflowError) as error:
        raise SpecFileError(f"{origin}: not valid YAML: {type(error).__name__}: {_one_line(error)}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SpecFileError(f"{origin}: must be a mapping of 'key: value' lines at the top level, got {type(data).__name__}")
    return data


def load_yaml_mapping(path: str | Path, owner: str = "spec file") -> dict:
    """The top-level mapping of the YAML file ``path``, read under the rules of this module.

    ``owner`` names what the file is (``"hardware spec"``) in the error message.
    """
    origin = f"{owner} {str(path)!r}"
    try:
        problem = file_problem(Path(path))
        if problem is None:
            # not blocking: a FIFO put in the file's place after the check must not hang the reader
            with open(path, "rb", opener=_nonblocking) as handle:
                if stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                    raw = handle.read(MAX_BYTES + 1)
                else:
                    problem = NOT_REGULAR
    except FileNotFoundError:
        raise SpecFileError(f"{origin}: no such file") from None
    except IsADirectoryError:
        raise SpecFileError(f"{origin}: is a folder, expected a YAML file") from None
    except PermissionError:
        raise SpecFileError(f"{origin}: permission denied (the file must be readable)") from None
    except (OSError, ValueError) as error:  # ENAMETOOLONG, a NUL byte in the name, ...
        reason = getattr(error, "strerror", None) or str(error)
        raise SpecFileError(f"{origin}: cannot be read: {reason}") from None
    if problem:
        raise SpecFileError(f"{origin}: {problem}")
    if len(raw) > MAX_BYTES:
        raise SpecFileError(f"{origin}: larger than {MAX_BYTES:,} bytes; a spec file is a few dozen lines")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SpecFileError(
            f"{origin}: not UTF-8 text (byte 0x{raw[error.start]:02x} at offset {error.start}); save the file as UTF-8"
        ) from None
    return parse_yaml_mapping(text.removeprefix("\ufeff"), origin)


def _nonblocking(path, flags: int) -> int:
    return os.open(path, flags | getattr(os, "O_NONBLOCK", 0))


#: Why a device, a FIFO or a socket is not read as a spec (reading /dev/zero never ends, a FIFO waits).
NOT_REGULAR = "is not a regular file (a device, a FIFO or a socket); expected a YAML file"


def file_problem(path: Path) -> str | None:
    """Why ``path`` cannot be a spec file (missing, a folder, not a regular file), or ``None``; OS errors
    other than a missing file propagate."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "no such file"
    except NotADirectoryError:
        return "no such file (a folder on its path is a file)"
    if stat.S_ISDIR(mode):
        return "is a folder, expected a YAML file"
    if not stat.S_ISREG(mode):
        return NOT_REGULAR
    return None


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())


def _marked(error: yaml.MarkedYAMLError) -> str:
    """``line L, column C: problem``: PyYAML's own text repeats the source around the mark."""
    mark = error.problem_mark or error.context_mark
    problem = error.problem or error.context or "syntax error"
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return _one_line(f"{where}{problem}")
