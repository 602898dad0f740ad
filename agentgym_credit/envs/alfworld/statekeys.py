"""State keys from engine facts, shared by ``ALFWorldEnv`` and ``TextWorldEnv``.

What lives here: :func:`digest` (BLAKE2b-128 hex of a text), :func:`fact_str` (``name(arg, arg)``),
:func:`fact_args` (the argument names) and
:func:`shuffled_keys` (the key of ``n`` shuffled orderings of a fact list, for the contract's
surface-noise check: a canonical key must not depend on fact order).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

from agentgym_credit.envs.alfworld import queries


def digest(text: str) -> str:
    """128-bit BLAKE2b hex digest (stable across processes)."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


FACT_MEMO = 100_000
"""Facts whose argument names and string a process keeps (emptied when full; a bound on memory only)."""
_ARGS: dict[Any, tuple[str, ...]] = {}
_STR: dict[Any, str] = {}


def fact_args(fact: Any) -> tuple[str, ...]:
    """The argument names of a TextWorld ``Proposition``, stripped: ``("mug 1", "cabinet 2")``. Memoized per fact
    (a proposition is an immutable value, hashed once; the engine meets the same facts at every step)."""
    out = _ARGS.get(fact) if queries.ENABLED else None
    if out is None:
        if not queries.ENABLED:
            return tuple(v.name.strip() for v in fact.arguments)
        if len(_ARGS) >= FACT_MEMO:
            _ARGS.clear()
        out = _ARGS[fact] = tuple(v.name.strip() for v in fact.arguments)
    return out


def fact_str(fact: Any) -> str:
    """``inreceptacle(mug 1, cabinet 2)`` for a TextWorld ``Proposition`` (memoized as :func:`fact_args`)."""
    out = _STR.get(fact) if queries.ENABLED else None
    if out is None:
        if not queries.ENABLED:
            return f"{fact.name}({', '.join(fact_args(fact))})"
        if len(_STR) >= FACT_MEMO:
            _STR.clear()
        out = _STR[fact] = f"{fact.name}({', '.join(fact_args(fact))})"
    return out


def shuffled_keys(key_of: Callable[[Sequence[Any]], str], facts: Sequence[Any], rng: Any, n: int) -> list[str]:
    """``key_of`` applied to ``n`` shuffled copies of ``facts``."""
    facts = list(facts)
    out = []
    for _ in range(n):
        rng.shuffle(facts)
        out.append(key_of(facts))
    return out


__all__ = ["FACT_MEMO", "digest", "fact_args", "fact_str", "shuffled_keys"]
