"""Per-game memos of what :class:`~.fast.FastPddlEnv` and :class:`~.env.ALFWorldEnv` compute at every state
(issue 41, second step): the applicable actions with their commands, the commands of templates that only read
a game's static facts, and the expert oracle's answer.

Why: a training run on the dev games replays the same 12 games every update, 4 rollouts of a group start from
one state, and an agent walking between receptacles meets the same applicable-operator sets over and over; yet
every step rebuilt textworld's ``Action`` objects for every applicable operator, derived each ``go to`` command
from the grammar again, and rebuilt the expert's fact indexes. Each memo below stores only a value that is a
pure function of its key:

- :func:`static_template` — whether a command template's derivation reads the state only through queries on
  the game's static predicates (:func:`~.queries.is_static`; its non-terminals' conditions and right-hand
  sides likewise, ``{expr}`` lookups that do not name ``context`` or ``self``): its command is then a function
  of ``(template, bindings)`` within one game (same entity infos, same static facts), kept in
  :attr:`GameMemo.commands` for every later state and load of the game. On the installed grammar every
  template is static (``go to`` lists ``receptacleatlocation``, a static predicate).
- :func:`applicable` — the applicable actions, their commands and the sorted admissible commands of a state,
  keyed by the applicable operators' ids and effect counts that the Fast Downward library reports for the state
  (the operators, their order and their names are the library's; with every template static the commands follow
  from them). The library state is read, not the Python fact sets, so the key is exact; it is stored only
  when every action's template is static.
- :func:`assessed` — the expert's ``(command, dead end)`` (:func:`~.expert.assess`), keyed by the game, the task
  spec, the state's sorted dynamic fact strings (those ``state_key`` digests: every fact the oracle reads
  that an action can change) and the admissible commands; the oracle's static facts are the game's.

Games are the digests of their domain, grammar and problem texts (:func:`game_memo`, least recently loaded
dropped past :data:`GAMES`); a game's memo of states is emptied when it reaches :data:`STATES` (a bound on
memory, not on correctness). :data:`~.queries.STATE_MEMOS` off (or :data:`~.queries.ENABLED` off) is the path
before this change; ``tests/test_alfworld_statememo.py`` holds transcripts and a training run's rows to it.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field
from typing import Any

import fast_downward
import textworld.envs.pddl.textgen as _textgen
from textworld.envs.pddl.textgen import (
    ConditionalSymbol,
    EvalSymbol,
    ListSymbol,
    NonterminalSymbol,
    TerminalSymbol,
)

from agentgym_credit.envs.alfworld import queries

GAMES = 32
"""Games whose memos a process keeps (least recently loaded dropped)."""
STATES = 4096
"""Entries of one game's state memos (applicable sets, expert answers) before they are emptied."""


def enabled() -> bool:
    """Whether this module's memos are on (both switches of :mod:`.queries`)."""
    return queries.ENABLED and queries.STATE_MEMOS


@dataclass
class GameMemo:
    """What one game's states share (see the module docstring)."""

    commands: dict = field(default_factory=dict)
    """``(template, bindings) -> (derived template, command)`` of static templates."""
    templates: dict = field(default_factory=dict)
    """``template -> bool``: :func:`static_template` for this game's grammar and static predicates."""
    applicable: dict = field(default_factory=dict)
    """``((operator id, effect count), ...) -> (operators, actions, commands, admissible)``."""
    shared: dict = field(default_factory=dict)
    """The operator and action objects the entries of :attr:`applicable` share (never mutated once stored)."""
    expert: dict = field(default_factory=dict)
    """``(spec, dynamic facts, admissible) -> (command, dead end)``."""


_GAMES: dict[bytes, GameMemo] = {}


def game_memo(game: bytes) -> GameMemo:
    """The memo of one game (``game``: the digest of its domain, grammar and problem texts)."""
    memo = _GAMES.pop(game, None) or GameMemo()
    _GAMES[game] = memo  # most recently used last
    while len(_GAMES) > GAMES:
        del _GAMES[next(iter(_GAMES))]
    return memo


def clear() -> None:
    """Forget every game's memo (a benchmark's runs start equal)."""
    _GAMES.clear()


@functools.cache
def parse_symbols(text: str) -> tuple:
    """Parsed grammar symbols of a template string (never mutate them)."""
    return tuple(_textgen._parse_and_convert(text, rule_name="symbols"))


@functools.cache
def _reads_only_names(expr: str) -> bool:
    try:
        tree = ast.parse(expr.strip(), "<grammar>", "eval")
    except SyntaxError:
        return False
    return not any(isinstance(n, ast.Name) and n.id in ("context", "self") for n in ast.walk(tree))


def static_template(template: str, rules: dict, static: frozenset) -> bool:
    """Whether deriving ``template`` reads the state only through static queries (see the module docstring)."""
    seen: set[str] = set()

    def ok(symbols: Any) -> bool:
        for s in symbols:
            kind = type(s)
            if kind is TerminalSymbol:
                continue
            if kind is EvalSymbol:
                if not _reads_only_names(s.expression):
                    return False
            elif kind is ConditionalSymbol:
                if (s.given and not queries.is_static(s.given, static)) or not ok([s.expression]):
                    return False
            elif kind is ListSymbol:
                if not ok([s.symbol]) or not ok([NonterminalSymbol(n) for n in
                                                 ("list_separator", "list_last_separator", "list_empty")]):
                    return False
            elif kind is NonterminalSymbol:
                name = str(s)
                if name in seen:
                    continue
                seen.add(name)
                found = rules.get(name)
                if not found or any((r.condition and not queries.is_static(r.condition, static)) or not ok(r.rhs)
                                    for r in found):
                    return False
            else:
                return False
        return True

    return ok(parse_symbols(template))


def _operator_ids(state: Any) -> tuple[tuple[int, int], ...]:
    """``(id, effect count)`` of the library's applicable operators in its order (what ``all_applicable_actions``
    reads; the count is what ``apply`` passes back, and a conditional effect could make it differ by state)."""
    lib = state.downward_lib
    operators = (fast_downward.Operator * lib.get_applicable_operators_count())()
    lib.get_applicable_operators(operators)
    return tuple((op.id, op.nb_effect_atoms) for op in operators)


def _own(op: Any) -> Any:
    """A copy of a library operator that does not keep its whole array of applicable operators alive."""
    return fast_downward.Operator(op.id, op._name, op.nb_effect_atoms)


def applicable(env: Any, facts: list) -> tuple[list, list[str], list[str]]:
    """``(actions, commands, admissible)`` of ``env``'s current state (``env``: a loaded ``FastPddlEnv``)."""
    state = env._pddl_state
    memo = env._game_memo if enabled() else None
    key = None
    if memo is not None:
        key = _operator_ids(state)
        hit = memo.applicable.get(key)
        if hit is not None:
            state._operators = hit[0]  # never mutated: textworld replaces the dict, it does not edit it
            return list(hit[1]), list(hit[2]), list(hit[3])
    actions = list(state.all_applicable_actions())
    static = memo is not None and all(is_static_template(env, a.command_template) for a in actions)
    with state.frozen():  # nothing here changes the facts: each query is answered once
        commands = env._commands(actions, facts)  # (replaces each action's template by its derivation)
    admissible = sorted(set(commands))
    if static:  # stored with one operator and one action object per operator id and effect count (memory)
        if len(memo.applicable) >= STATES:
            memo.applicable.clear()
        shared = memo.shared
        operators = {i: shared.get((i, op.nb_effect_atoms)) or shared.setdefault((i, op.nb_effect_atoms), _own(op))
                     for i, op in state._operators.items()}
        kept = tuple(shared.setdefault(("action", a.id), a) for a in actions)
        memo.applicable[key] = (operators, kept, tuple(commands), tuple(admissible))
    return actions, commands, admissible


def is_static_template(env: Any, template: str) -> bool:
    """:func:`static_template` of ``env``'s game, memoized per game (``False`` with the memos off)."""
    memo = env._game_memo if enabled() else None
    if memo is None:
        return False
    out = memo.templates.get(template)
    if out is None:
        out = memo.templates[template] = static_template(template, env._logic.grammar._rules, env._static[0])
    return out


TASKS = 24
"""Problems whose translation (:func:`translated`) a process keeps in memory, least recently used dropped: the
dev games' confirmation plays 19 games, more than ``fast.translate``'s own 16 (which re-parsed a problem's PDDL
on every load past them). Each costs ~1 MB: at 64, tests/test_alfworld_reliability.py's 60 new games grew RSS
by 42.7 MiB against its 20 MiB bound."""
_TASKS: dict[tuple[str, str], Any] = {}


def translated(translate: Any, domain: str, problem: str) -> Any:
    """``translate(domain, problem, False)`` (a pure function of the two texts, see ``fast.translate``), kept for
    :data:`TASKS` problems with the memos on."""
    if not enabled():
        return translate(domain, problem, False)
    key = (domain, problem)
    out = _TASKS.pop(key, None)
    if out is None:
        out = translate(domain, problem, False)
    _TASKS[key] = out  # most recently used last
    while len(_TASKS) > TASKS:
        del _TASKS[next(iter(_TASKS))]
    return out


def readable_facts(known: dict, readable: Any, facts: list) -> list:
    """``[readable(f) for f in facts]``, read from ``readable``'s memo ``known`` in one pass when every fact is in
    it (the same objects, in the same order)."""
    if enabled():
        try:
            return list(map(known.__getitem__, facts))
        except KeyError:
            pass
    return [readable(f) for f in facts]


def assessed(memo: GameMemo | None, spec: Any, dynamic: tuple[str, ...], facts: Any,
             admissible: Any) -> tuple[str | None, str | None]:
    """:func:`~.expert.assess` of a state, memoized in ``memo`` (``None``: computed afresh)."""
    from agentgym_credit.envs.alfworld.expert import assess

    if memo is None or not enabled():
        return assess(spec, facts, admissible)
    key = (spec, dynamic, None if admissible is None else tuple(admissible))
    out = memo.expert.get(key)
    if out is None:
        if len(memo.expert) >= STATES:
            memo.expert.clear()
        out = memo.expert[key] = assess(spec, facts, admissible)
    return out


__all__ = ["GAMES", "STATES", "GameMemo", "applicable", "assessed", "clear", "enabled", "game_memo",
           "is_static_template", "parse_symbols", "readable_facts", "static_template", "translated", "TASKS"]
