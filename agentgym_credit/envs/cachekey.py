"""The secret that authenticates this package's on-disk caches (entries written by another hand are misses).

A cache folder is shared, copied and left in ``~/.cache`` where other programs can write; a checksum
anyone can recompute only catches damage. Every cache entry this package writes (ALFWorld translations,
the WebShop search index, compiled TextWorld games) therefore carries a tag keyed with a per-user secret
that is kept *outside* the cache folders, and an entry whose tag does not verify is a warned miss that is
rebuilt — never used.

What lives here:

- :func:`cache_key` — the secret: ``$AGENTGYM_CREDIT_CACHE_KEY`` (text, at least 16 characters; set the
  same value on machines that share a cache folder), else 32 random bytes kept in
  ``$AGENTGYM_CREDIT_CACHE_KEY_FILE`` (default ``~/.config/agentgym_credit/cache.key``, created on first
  use with mode 0600; where it cannot be written, a random key for this process only; a key file that is
  not a regular file — a FIFO does not block —, is writable by its group or every user, belongs to another
  user, is a dangling symlink, or holds no key (or a weak one, :func:`weak_key_reason`) is ignored with a
  :class:`CacheKeyWarning` naming the fix, and this process uses a key of its own; one readable by others
  or reached through a symlink is used with a warning); ``$AGENTGYM_CREDIT_CACHE_KEY`` that is weak is a
  ``ValueError``;
- :func:`cache_tag` — the hex tag of some bytes under that key, for one kind of entry;
- :func:`tag_matches` — constant-time check of a stored tag.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import os
import secrets
import stat
import warnings
from collections.abc import Iterable
from pathlib import Path

KEY_ENV = "AGENTGYM_CREDIT_CACHE_KEY"
KEY_FILE_ENV = "AGENTGYM_CREDIT_CACHE_KEY_FILE"


def key_file() -> Path:
    """Where the cache key is kept (outside every cache folder)."""
    value = os.environ.get(KEY_FILE_ENV)
    if value:
        return Path(value).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "agentgym_credit" / "cache.key"


MIN_DISTINCT = 8
"""Fewest distinct characters (bytes) a key may have: ``secrets.token_hex(16)`` has 8 or more except with a
chance of about 4e-8; ``abcdabcdabcdabcd`` has 4."""


def weak_key_reason(raw: bytes, min_len: int = 16) -> str | None:
    """Why the key ``raw`` (bytes; text encoded) is trivially weak, or ``None``: shorter than ``min_len`` bytes,
    fewer than :data:`MIN_DISTINCT` distinct bytes, or one block repeated (``abcdabcd...``). Applied to every way
    a key arrives: the environment variables, raw bytes given to ``set_snapshot_key``, the cache key file."""
    if len(raw) < min_len:
        return f"has {len(raw)} bytes, needs at least {min_len} bytes"
    if len(set(raw)) < MIN_DISTINCT:
        return f"uses only {len(set(raw))} distinct characters (at least {MIN_DISTINCT}; trivially guessable)"
    for p in range(1, len(raw) // 2 + 1):
        if raw[p:] == raw[:-p]:
            return f"repeats a block of {p} characters (trivially guessable)"
    return None


class CacheKeyWarning(UserWarning):
    """The cache key file was ignored (not a regular file, writable by others, or not a key): this process
    uses a key of its own, so cache entries it writes verify only in it. The message says what to fix."""


_MAX_KEY_FILE = 4096


def _read(path: Path) -> bytes | None:
    """The key in ``path``; ``None`` when there is no file. Opened without blocking (a FIFO at the path must
    not hang the process) and checked on the open file: a non-regular file, one writable by other users,
    or one that does not hold at least 16 hex-encoded bytes is ignored with a :class:`CacheKeyWarning`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        if os.path.islink(path):  # a dangling link: no file, and none can be written in its place
            return _ignored(path, f"is a symlink to a missing file ({os.readlink(path)!r}); remove it to have a key "
                            "written, or point it at the shared key")
        return None
    except OSError as exc:
        return _ignored(path, f"cannot be opened ({exc.strerror})")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return _ignored(path, "is not a regular file")
        if st.st_mode & 0o002:
            return _ignored(path, "is writable by every user (anyone could plant a key); chmod 600 it")
        if st.st_mode & 0o020:
            return _ignored(path, "is writable by its group (they could plant a key); chmod 600 it")
        if st.st_uid != os.getuid():
            return _ignored(path, "belongs to another user (they could plant a key); use a file of your own")
        data = os.read(fd, _MAX_KEY_FILE + 1)
    finally:
        os.close(fd)
    try:
        raw = bytes.fromhex(data.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        raw = b""
    if len(data) > _MAX_KEY_FILE or weak_key_reason(raw) is not None:
        return _ignored(path, "does not hold a key (at least 16 hex-encoded random bytes); delete it to have one "
                        "written")
    if st.st_mode & 0o044:
        _warn(path, "is readable by other users (they can forge cache entries); chmod 600 it")
    if os.path.islink(path):
        _warn(path, f"is a symlink (to {os.readlink(path)!r}): whoever can change the link chooses the key; keep the "
              "key in a regular file")
    return raw


def _warn(path: Path, why: str) -> None:
    warnings.warn(f"cache key file {str(path)!r} {why}; it is used", CacheKeyWarning, stacklevel=4)


def _ignored(path: Path, why: str) -> bytes:
    warnings.warn(f"cache key file {str(path)!r} {why}; this process uses a key of its own (cache entries it "
                  "writes verify only in it)", CacheKeyWarning, stacklevel=4)
    return _PROCESS_KEY


_PROCESS_KEY = secrets.token_bytes(32)


@functools.cache
def cache_key() -> bytes:
    """The cache secret (see the module docstring); read once per process."""
    text = os.environ.get(KEY_ENV)
    if text:
        why = weak_key_reason(text.encode())
        if why is not None:
            raise ValueError(f"${KEY_ENV} {why}; use a random one, e.g. secrets.token_hex(16)")
        return hashlib.blake2b(text.encode(), digest_size=32, person=b"agc-cache").digest()
    path = key_file()
    found = _read(path)
    if found is not None:
        return found
    new = secrets.token_bytes(32)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(new.hex() + "\n")
        try:
            os.link(tmp, path)  # atomic, and never replaces a key another process wrote first
        finally:
            os.unlink(tmp)
    except FileExistsError:
        pass
    except OSError:
        return new  # no writable config folder: entries written now verify only in this process
    return _read(path) or new


def cache_tag(kind: str, parts: Iterable[bytes]) -> str:
    """Hex tag (keyed BLAKE2b-256) of ``parts`` for entries of ``kind`` (a tag of one kind never verifies
    as another's)."""
    h = hashlib.blake2b(key=cache_key(), digest_size=32, person=kind.encode()[:16])
    for part in parts:
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


def tag_matches(stored: str | bytes, kind: str, parts: Iterable[bytes]) -> bool:
    """Whether ``stored`` is :func:`cache_tag` of ``parts`` (constant time)."""
    if isinstance(stored, str):
        stored = stored.encode("ascii", "replace")
    return hmac.compare_digest(stored, cache_tag(kind, parts).encode())


__all__ = ["MIN_DISTINCT", "weak_key_reason", "CacheKeyWarning", "KEY_ENV", "KEY_FILE_ENV", "cache_key", "cache_tag", "key_file", "tag_matches"]
