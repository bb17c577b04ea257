"""Cache entries that carry a keyed digest of their content, checked before anything is read from them.

Every file the package keeps on disk (results, executed notebooks, compiled programs) is *sealed*: a
first line ``# lgacc-cache <kind> key=<key> hmac=<digest>`` then the content, the digest being the
HMAC-SHA256 of the kind, the key and the content's bytes under a **per-user secret kept outside the cache
directory** (:func:`secret`): a cache copied from another user, or one that another account can write,
cannot make this user read a result it did not compute.  :func:`unseal` gives the content back only when
the line is the one expected (the kind, the key the file is named by) and the digest matches: a byte
changed, a file cut short, one renamed from another key, written by an older layout or under another
secret reads as absent, and the caller computes the entry again and replaces it.

Reading opens the entry with ``O_NOFOLLOW | O_NONBLOCK`` and reads it only when it is a regular file no
larger than the caller's bound: a symlink (to ``/dev/zero`` or elsewhere), a FIFO, a device or an
oversized file is skipped (and replaced by the next write).  Nothing here raises on a bad file.

Writes are atomic (a temporary file in the same directory, then :func:`os.replace`): a concurrent
reader sees the old entry or the new one, never half of one.  An entry served is marked used (its
modification time), and once a day a write into the cache directory prunes what has not been used for a
month (:mod:`.prune`), so orphaned entries of earlier package versions do not pile up.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import stat
from functools import lru_cache
from pathlib import Path

__all__ = ["seal", "unseal", "read_sealed", "write_sealed", "read_regular", "open_regular", "secret",
           "secret_path", "MAX_ENTRY_BYTES"]

_PREFIX = "# lgacc-cache "
#: The largest entry read back (bytes); a larger file is skipped and computed again.
MAX_ENTRY_BYTES = 256 * 1024 * 1024
_SECRET_BYTES = 32


def secret_path() -> Path:
    """``$LGACC_SECRET_FILE``, else ``$XDG_CONFIG_HOME/lgacc/secret``, else ``~/.config/lgacc/secret``."""
    explicit = os.environ.get("LGACC_SECRET_FILE")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg) if xdg else Path.home() / ".config"
    return base / "lgacc" / "secret"


def _private(path: Path) -> bool:
    """``path`` is this user's own file that no one else may read or write (a secret others can read or
    replace keys nothing)."""
    try:
        info = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    owner = getattr(os, "getuid", lambda: info.st_uid)()
    return stat.S_ISREG(info.st_mode) and info.st_uid == owner and not info.st_mode & 0o077


def _read_secret(path: Path) -> bytes | None:
    found = read_regular(path, 4096) if _private(path) else None
    return found.strip() if found is not None and len(found.strip()) >= 2 * _SECRET_BYTES else None


@lru_cache(maxsize=8)
def _secret_at(path: Path) -> bytes:
    found = _read_secret(path)
    if found is not None:
        return found
    import secrets  # imported here: a warm command that reads nothing from the cache never needs it

    fresh = secrets.token_hex(_SECRET_BYTES).encode()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(fresh + b"\n")
        return fresh
    except FileExistsError:  # created by a concurrent process (or a file no one should trust): read it if private
        found = _read_secret(path)
        if found is not None:
            return found
    except OSError:
        pass
    # no usable secret file (read-only home, a file others can read or write in its place): a secret for
    # this process only, so that entries written now are never trusted by another process
    return fresh


def secret() -> bytes:
    """The per-user secret the cache's digests are keyed by (created 0600 on first use)."""
    return _secret_at(secret_path())


def _digest(kind: str, key: str, content: str) -> str:
    message = f"{kind}\0{key}\0".encode() + content.encode("utf-8")
    return hmac.new(secret(), message, hashlib.sha256).hexdigest()


def seal(kind: str, key: str, content: str) -> str:
    """``content`` with its header line: the kind, the key and the keyed digest of the content."""
    return f"{_PREFIX}{kind} key={key} hmac={_digest(kind, key, content)}\n{content}"


def unseal(text: str, kind: str, key: str) -> str | None:
    """The content of a sealed ``text`` of this ``kind`` and ``key``, or ``None`` if anything disagrees."""
    header, newline, content = text.partition("\n")
    if not newline or not header.startswith(_PREFIX):
        return None
    fields = header[len(_PREFIX):].split(" ")
    if len(fields) != 3 or fields[:2] != [kind, f"key={key}"] or not fields[2].startswith("hmac="):
        return None
    if not hmac.compare_digest(fields[2][len("hmac="):], _digest(kind, key, content)):
        return None
    return content


def open_regular(path: Path, flags: int = os.O_RDONLY, mode: int = 0o600) -> int | None:
    """A descriptor of ``path`` opened without following a symlink and without blocking on a FIFO, when it
    is a regular file; ``None`` otherwise (missing, a link, a FIFO, a device, a directory, unreadable)."""
    try:
        fd = os.open(path, flags | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0), mode)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None
    except OSError:
        os.close(fd)
        return None
    return fd


def read_regular(path: Path, limit: int | None = None) -> bytes | None:
    """The bytes of ``path`` when it is a regular file (not through a symlink) of at most ``limit`` bytes
    (default :data:`MAX_ENTRY_BYTES`)."""
    limit = MAX_ENTRY_BYTES if limit is None else limit
    fd = open_regular(path)
    if fd is None:
        return None
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            return None
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        return None if total > limit else b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_sealed(path: Path, kind: str, key: str, limit: int | None = None) -> str | None:
    """The verified content of the entry at ``path``; ``None`` when missing, not a regular file, larger than
    ``limit``, unreadable or not matching."""
    data = read_regular(Path(path), limit)
    if data is None:
        return None
    try:
        text = data.decode("utf-8")  # no newline translation: the digest sees the bytes
    except UnicodeDecodeError:
        return None
    content = unseal(text, kind, key)
    if content is not None:
        from .prune import touch

        touch(Path(path))  # used now: pruning removes what has not been used for a month (.prune)
    return content


def write_sealed(path: Path, kind: str, key: str, content: str) -> bool:
    """Write the sealed entry atomically; ``False`` (nothing written) where the location is read-only."""
    import tempfile

    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, scratch = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                handle.write(seal(kind, key, content))
            os.replace(scratch, path)  # replaces a link, a FIFO or a bad file of that name, never writes through it
        except BaseException:
            Path(scratch).unlink(missing_ok=True)
            raise
    except OSError:
        return False
    _prune_after_write(path)
    return True


def _prune_after_write(path: Path) -> None:
    """Once a day, after a write into the cache directory, drop what it no longer uses (:mod:`.prune`)."""
    from .codegen import cache_dir
    from .prune import maybe_prune

    root = cache_dir()
    try:
        inside = path.resolve().is_relative_to(root.resolve())
    except OSError:
        return
    if inside:
        maybe_prune(root)
