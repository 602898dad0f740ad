"""Stable 64-bit hashing of state keys, observation keys and history fingerprints.

Keys in ``info`` are ``str`` or ``bytes``; the collector hashes them to ``uint64`` with
:func:`stable_hash` (BLAKE2b, 8-byte digest, little-endian). The same key gives the same hash in
every process and run, unlike Python's salted ``hash``. ``0`` is reserved as :data:`MISSING`, the
marker of an absent history level, and is never returned by :func:`stable_hash` or :func:`mix64`.

History fingerprints fold :func:`mix64` over a window of such hashes (:func:`window_fingerprint`),
a few integer operations per element, so a wrapper can roll them forward in constant time per step.

- :data:`MISSING`, :func:`stable_hash`, :func:`hash_keys` — keys to ``uint64``;
- :data:`WINDOW_SEED`, :func:`mix64`, :func:`window_fingerprint` — fingerprints of hash windows;
- :func:`hash_sequence` — BLAKE2b of a packed hash sequence (an alternative sequence hash);
- :func:`normalize_text` — canonical observation text for ``obs_key``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

import numpy as np

MISSING: int = 0
"""uint64 marker of a missing key (e.g. history level k at a step t < k)."""

_WS = re.compile(r"\s+")

_MASK64 = (1 << 64) - 1
_M0 = 0x9E3779B97F4A7C15  # 2^64 / golden ratio (odd)
_M1 = 0xBF58476D1CE4E5B9  # splitmix64's first multiplier (odd)

WINDOW_SEED: int = 0x6A09E667F3BCC909
"""Start value of every :func:`window_fingerprint` fold (the first 64 bits of SHA-512's IV)."""


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


def mix64(h: int, x: int) -> int:
    """Mix a 64-bit hash ``x`` into a running 64-bit fingerprint ``h``; never :data:`MISSING`.

    ``z = (h * M0 + x) mod 2**64``, then one multiply-xorshift finalizer round: ``z ^= z >> 32``,
    ``z = z * M1 mod 2**64``, ``z ^= z >> 29`` (``M0`` = 2**64 / golden ratio, ``M1`` = splitmix64's
    first multiplier; a result of 0 becomes 1). Plain integer arithmetic, so the value is the same
    in every process and on every platform. Flipping one input bit flips ~32 of the 64 output bits
    on average. For a fixed ``h`` it is a bijection of ``x``, and for a fixed ``x`` a bijection of
    ``h`` (odd multipliers and xor-shifts are invertible mod 2**64), so two equally long windows
    that differ in a single element never get the same :func:`window_fingerprint`. One round, not
    splitmix64's two: it runs K + 1 times per environment step.
    """
    z = (h * _M0 + x) & _MASK64
    z = ((z ^ (z >> 32)) * _M1) & _MASK64
    return (z ^ (z >> 29)) or 1


def window_fingerprint(hashes: Iterable[int]) -> int:
    """Fingerprint of an ordered window of 64-bit hashes: ``mix64`` folded from :data:`WINDOW_SEED`.

    ``window_fingerprint([x0, ..., xn]) == mix64(window_fingerprint([x0, ..., xn-1]), xn)``, which is
    what lets :class:`~agentgym_credit.wrappers.history.HistoryFingerprint` extend each history level
    by one element per step. The empty window gives :data:`WINDOW_SEED`.
    """
    h = WINDOW_SEED
    for x in hashes:
        h = mix64(h, int(x))
    return h


def hash_keys(keys: Iterable[str | bytes]) -> np.ndarray:
    """Hash many keys to a ``uint64`` array."""
    return np.fromiter((stable_hash(k) for k in keys), dtype=np.uint64)


def normalize_text(text: str) -> str:
    """Canonical form of observation text for ``obs_key``: lower case, single spaces, stripped."""
    return _WS.sub(" ", text).strip().lower()


__all__ = [
    "MISSING",
    "WINDOW_SEED",
    "stable_hash",
    "mix64",
    "window_fingerprint",
    "hash_sequence",
    "hash_keys",
    "normalize_text",
]
