"""State keys from engine facts, shared by ``ALFWorldEnv`` and ``TextWorldEnv``.

What lives here: :func:`digest` (BLAKE2b-128 hex of a text), :func:`fact_str` (``name(arg, arg)``) and
:func:`shuffled_keys` (the key of ``n`` shuffled orderings of a fact list, for the contract's
surface-noise check: a canonical key must not depend on fact order).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any


def digest(text: str) -> str:
    """128-bit BLAKE2b hex digest (stable across processes)."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def fact_str(fact: Any) -> str:
    """``inreceptacle(mug 1, cabinet 2)`` for a TextWorld ``Proposition``."""
    return f"{fact.name}({', '.join(v.name.strip() for v in fact.arguments)})"


def shuffled_keys(key_of: Callable[[Sequence[Any]], str], facts: Sequence[Any], rng: Any, n: int) -> list[str]:
    """``key_of`` applied to ``n`` shuffled copies of ``facts``."""
    facts = list(facts)
    out = []
    for _ in range(n):
        rng.shuffle(facts)
        out.append(key_of(facts))
    return out


__all__ = ["digest", "fact_str", "shuffled_keys"]
