"""Stable 64-bit hashing of state keys, observation keys and history fingerprints.

Keys in ``info`` are ``str`` or ``bytes``; the collector hashes them to ``uint64`` with
:func:`stable_hash` (BLAKE2b, 8-byte digest, little-endian). The same key gives the same hash in
every process and run, unlike Python's salted ``hash``. ``0`` is reserved as :data:`MISSING`, the
marker of an absent history level, and is never returned by :func:`stable_hash`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

import numpy as np

MISSING: int = 0
"""uint64 marker of a missing key (e.g. history level k at a step t < k)."""

_WS = re.compile(r"\s+")


def _to_bytes(key: str | bytes) -> bytes:
    if isinstance(key, bytes):
        return key
    if isinstance(key, str):
        return key.encode("utf-8", "surrogatepass")
    raise TypeError(f"keys must be str or bytes, got {type(key).__name__}")


def stable_hash(key: str | bytes) -> int:
    """64-bit BLAKE2b hash of a key, never :data:`MISSING`."""
    h = int.from_bytes(hashlib.blake2b(_to_bytes(key), digest_size=8).digest(), "little")
    return h or 1


def hash_sequence(hashes: Iterable[int]) -> int:
    """Stable hash of an ordered sequence of 64-bit hashes (a history window)."""
    buf = b"".join(int(h).to_bytes(8, "little") for h in hashes)
    return stable_hash(b"seq:" + buf)


def hash_keys(keys: Iterable[str | bytes]) -> np.ndarray:
    """Hash many keys to a ``uint64`` array."""
    return np.fromiter((stable_hash(k) for k in keys), dtype=np.uint64)


def normalize_text(text: str) -> str:
    """Canonical form of observation text for ``obs_key``: lower case, single spaces, stripped."""
    return _WS.sub(" ", text).strip().lower()


__all__ = ["MISSING", "stable_hash", "hash_sequence", "hash_keys", "normalize_text"]
