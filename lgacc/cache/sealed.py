"""Cache entries that carry the digest of their content, checked before anything is read from them.

Every file the package keeps on disk (generated code, results, executed notebooks) is *sealed*: a first
line ``# lgacc-cache <kind> key=<key> sha256=<digest>`` then the content, the digest being the
SHA-256 of the content's bytes.  :func:`unseal` gives the content back only when the line is the one
expected (the kind, the key the file is named by) and the digest matches: a byte changed, a file cut
short, one renamed from another key or written by an older layout reads as absent, and the caller
computes the entry again and replaces it.  Nothing here raises on a bad file.

Writes are atomic (a temporary file in the same directory, then :func:`os.replace`): a concurrent
reader sees the old entry or the new one, never half of one.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

__all__ = ["seal", "unseal", "read_sealed", "write_sealed"]

_PREFIX = "# lgacc-cache "


def _digest(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def seal(kind: str, key: str, content: str) -> str:
    """``content`` with its header line: the kind, the key and the SHA-256 of the content."""
    return f"{_PREFIX}{kind} key={key} sha256={_digest(content)}\n{content}"


def unseal(text: str, kind: str, key: str) -> str | None:
    """The content of a sealed ``text`` of this ``kind`` and ``key``, or ``None`` if anything disagrees."""
    header, newline, content = text.partition("\n")
    if not newline or not header.startswith(_PREFIX):
        return None
    if header[len(_PREFIX):].split(" ") != [kind, f"key={key}", f"sha256={_digest(content)}"]:
        return None
    return content


def read_sealed(path: Path, kind: str, key: str) -> str | None:
    """The verified content of the entry at ``path``; ``None`` when missing, unreadable or not matching."""
    try:
        text = Path(path).read_bytes().decode("utf-8")  # no newline translation: the digest sees the bytes
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return unseal(text, kind, key)


def write_sealed(path: Path, kind: str, key: str, content: str) -> bool:
    """Write the sealed entry atomically; ``False`` (nothing written) where the location is read-only."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, scratch = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                handle.write(seal(kind, key, content))
            os.replace(scratch, path)
        except BaseException:
            Path(scratch).unlink(missing_ok=True)
            raise
        return True
    except OSError:
        return False
