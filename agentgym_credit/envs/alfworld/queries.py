"""Grammar queries of one frozen state, answered once: what :class:`~.fast.FastPddlEnv` asks while it derives a
state's admissible commands.

Deriving the commands of one state asks the state the same conjunctive queries many times (a rule's condition
under the same bindings, for each of ~25 commands), and textworld 1.7 answers every one from scratch:
``State._all_applicable_assignments`` sorts the facts of each signature it visits (``sorted`` on
``Proposition.__lt__``, a Python comparison: a third of a training run's time on the dev games, issue 41). While
nothing changes the facts, both answers are fixed, so:

- :class:`QueryState` (mixed into :class:`~.fast.FastPddlState`) — ``frozen()`` opens a window in which the state
  promises not to change; inside it each signature's facts are sorted once and each ``(query, bindings)`` is
  answered once (:meth:`QueryState.any_assignment`, :meth:`QueryState.assignments`). The window is closed on exit,
  and outside one every call computes afresh, so nothing cached can outlive the facts it came from (a snapshot
  restore that swaps ``_facts`` happens outside any window).
- :func:`derived_commands` — the per-game memo of state-dependent command derivations (keyed by the exact set of
  facts), which :class:`~.fast.FastPddlEnv` reads for a state met again.
- :func:`prop_key` — the sort key that orders propositions exactly as ``Proposition.__lt__`` does
  (``(name, arguments)``, each argument a ``Variable`` compared by ``(name, type)``), with C-level tuple
  comparisons. Facts of one signature are a set, so no two share a key and the order is the same list.

The search itself is textworld's (same preconditions in the same order over the same sorted facts), so the
assignments come out in the same order; the differential test ``tests/test_alfworld_fast.py`` holds the engine
to the stock one, and ``tests/test_alfworld_queries.py`` holds each answer to textworld's own.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator, Mapping
from typing import Any

from textworld.logic import Rule, Signature


@functools.cache
def parse_query(expr: str) -> Rule:
    """``Rule.parse_conjunctive_query`` memoized (rules are read-only here)."""
    return Rule.parse_conjunctive_query(expr)


ENABLED = True
"""Off: the engine's exact memos of issue 41 are all off — every query goes to textworld's own code, a reset reads
its initial facts from the task and the library (``fast.py``), fact strings are built afresh (``statekeys.py``)
and a state key lists the static facts again (``env.py``): the reference path of the equality tests and of
``python -m agentgym_credit.bench.speed.train_real_speed``."""

STATE_MEMOS = True
"""Off (with :data:`ENABLED` on): the per-game memos of :mod:`.statememo` (issue 41's second step: applicable
actions and commands per operator set, static templates' commands per game, the expert per state) are off —
the engine of the first step, which the equality tests and ``train_real_speed`` compare against."""


DERIVED_GAMES = 32
"""Games whose per-state command memo :func:`derived_commands` keeps (least recently loaded dropped)."""
DERIVED_STATES = 4096
"""States one game's memo holds before it is emptied (a bound on memory, not on correctness)."""
_derived: dict[bytes, dict] = {}


def derived_commands(game: bytes) -> dict:
    """The memo of one game (``game``: a digest of its domain, grammar and problem texts) of state-dependent
    command derivations: ``frozenset(facts) -> {(template, bindings): (derived template, command)}``."""
    memo = _derived.pop(game, None)
    if memo is None:
        memo = {}
    _derived[game] = memo  # most recently used last
    while len(_derived) > DERIVED_GAMES:
        del _derived[next(iter(_derived))]
    return memo


def prop_key(prop: Any) -> tuple:
    """Sort key of a ``Proposition`` equal in order to ``Proposition.__lt__`` (see the module docstring)."""
    return prop.name, tuple((v.name, v.type) for v in prop.arguments)


class QueryState:
    """Mixin for a textworld ``State``: per-window memos of sorted facts and query answers."""

    _sorted_memo: dict | None = None
    _query_memo: dict | None = None
    static_memo: dict | None = None
    """Answers of static queries, shared by every state of one loaded task (set by the env, see ``static``)."""
    static: frozenset = frozenset()
    """Predicates of the loaded task that nothing changes (:func:`static_predicates`)."""

    @contextlib.contextmanager
    def frozen(self) -> Iterator[None]:
        """A window in which the caller does not change the facts; queries inside it are answered once."""
        outer = (self._sorted_memo, self._query_memo)
        if outer[0] is None and ENABLED:
            self._sorted_memo, self._query_memo = {}, {}
        try:
            yield
        finally:
            self._sorted_memo, self._query_memo = outer

    def sorted_facts(self, signature: Signature) -> list:
        """``sorted(self.facts_with_signature(signature))``, once per window."""
        memo = self._sorted_memo
        if memo is not None:
            hit = memo.get(signature)
            if hit is not None:
                return hit
        out = sorted(self.facts_with_signature(signature), key=prop_key)
        if memo is not None:
            memo[signature] = out
        return out

    def _all_applicable_assignments(self, rule: Any, mapping: dict, used_vars: set, new_phs_by_depth: list,
                                    depth: int) -> Iterator[Mapping]:
        """textworld 1.7's recursion over a rule's preconditions, reading :meth:`sorted_facts`."""
        if not ENABLED:
            yield from super()._all_applicable_assignments(rule, mapping, used_vars, new_phs_by_depth, depth)
            return
        new_phs = new_phs_by_depth[depth]
        if depth >= len(rule.preconditions):
            yield from self._all_assignments(new_phs, mapping, used_vars, False)
            return
        pred = rule.preconditions[depth]
        types = [self._logic.types.get(t) for t in pred.signature.types]
        for subtypes in self._logic.types.multi_subtypes(types):
            for prop in self.sorted_facts(Signature(pred.signature.name, [t.name for t in subtypes])):
                for ph, var in zip(pred.parameters, prop.arguments):
                    existing = mapping.get(ph)
                    if existing is None:
                        if var in used_vars:
                            break
                        mapping[ph] = var
                        used_vars.add(var)
                    elif existing != var:
                        break
                else:
                    yield from self._all_applicable_assignments(rule, mapping, used_vars, new_phs_by_depth, depth + 1)
                for ph in new_phs:  # undo this fact's bindings before the next one
                    used_vars.discard(mapping.pop(ph, None))

    def any_assignment(self, query: str, mapping: Mapping) -> bool:
        """Whether the conjunctive ``query`` has an assignment extending ``mapping`` (memoized in a window)."""
        return self._memoized("any", query, mapping)

    def assignments(self, query: str, mapping: Mapping) -> list[dict]:
        """Every assignment of ``query`` extending ``mapping``, in textworld's order (memoized in a window;
        the caller must not mutate the dicts)."""
        return self._memoized("all", query, mapping)

    def _memoized(self, kind: str, query: str, mapping: Mapping) -> Any:
        memo, key = self._query_memo, (kind, query, tuple(mapping.items()))
        if ENABLED and self.static_memo is not None and is_static(query, self.static):
            memo = self.static_memo
        if memo is not None:
            hit = memo.get(key)
            if hit is not None:
                return hit
        out = _answer(self, kind, query, mapping)
        if memo is not None:
            memo[key] = out
        return out


def static_predicates(task: Any) -> frozenset:
    """Predicates of a Fast Downward task (the translator's normalized PDDL task) that no action's effect and no
    axiom can change: their facts are the problem's initial ones in every state of the task."""
    changed = {eff.literal.predicate for action in task.actions for eff in action.effects}
    changed |= {axiom.name for axiom in getattr(task, "axioms", ())}
    return frozenset(p.name for p in task.predicates if p.name not in changed)


@functools.lru_cache(maxsize=4096)
def is_static(query: str, static: frozenset) -> bool:
    """Whether ``query``'s answers are the same in every state of a task with these static predicates: each
    precondition's predicate (``not_P`` as ``P``) is static, and every placeholder occurs in a precondition
    (a free one would range over the state's variables, which change with its facts)."""
    rule = parse_query(query)
    bound = {ph for pred in rule.preconditions for ph in pred.parameters}
    return bool(rule.preconditions) and all(ph in bound for ph in rule.placeholders) and all(
        pred.signature.name.removeprefix("not_") in static for pred in rule.preconditions)


def _answer(state: Any, kind: str, query: str, mapping: Mapping) -> Any:
    found = state.all_assignments(parse_query(query), mapping)
    return any(True for _ in found) if kind == "any" else [dict(m) for m in found]


def any_assignment(state: Any, query: str, mapping: Mapping) -> bool:
    """:meth:`QueryState.any_assignment` for any textworld state (a plain one computes it afresh)."""
    if isinstance(state, QueryState):
        return state.any_assignment(query, mapping)
    return _answer(state, "any", query, mapping)


def assignments(state: Any, query: str, mapping: Mapping) -> list[dict]:
    """:meth:`QueryState.assignments` for any textworld state (a plain one computes it afresh)."""
    if isinstance(state, QueryState):
        return state.assignments(query, mapping)
    return _answer(state, "all", query, mapping)


__all__ = ["STATE_MEMOS", "DERIVED_GAMES", "DERIVED_STATES", "derived_commands", "QueryState", "ENABLED", "any_assignment", "assignments", "is_static", "parse_query", "prop_key", "static_predicates"]
