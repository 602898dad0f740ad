"""A faster TextWorld PDDL engine that says exactly what the stock engine says.

What lives here:

- :class:`FastGrammar` — derives text from a game's context-sensitive grammar like
  ``textworld.envs.pddl.textgen.ContextSensitiveGrammar.derive`` but without re-parsing: every template
  string and every conjunctive query is parsed once per process (pure functions of immutable strings,
  memoized), the parsed symbols are never mutated (the derivation stack carries ``(symbol, context)``
  pairs instead of writing ``symbol.context``), and contexts are shallow-copied only where a query binds
  new variables instead of deep-copied at every symbol.
- :func:`translate` — Fast Downward's PDDL -> SAS translation (the bulk of a load and of every stock
  reset), memoized per ``(domain, problem)`` text in memory and in an on-disk cache
  (:mod:`~agentgym_credit.envs.alfworld.sascache`: SAS text as checksummed data, never a pickle;
  ``AGENTGYM_CREDIT_SAS_CACHE=0`` turns it off); :func:`pddl2sas` keeps ``sys.argv``, which the
  translator overwrites, and :func:`parse_task` rebuilds the translator's task from the PDDL.
- :func:`acquire_lib` — one Fast Downward library per live engine, reused after it (no native memory
  growth per game); :func:`prune_mementos` bounds textworld's memo of logic objects.
- :class:`FastPddlState` — ``PddlState`` on :func:`translate`, whose planner task is translated only
  when the planner is asked.
- :func:`parse_logic` — the installed grammar is parsed once per process; a game on it differs only in
  its task sentence, which is all that is parsed per game.
- :class:`FastPddlEnv` — ``textworld.envs.pddl.PddlEnv`` with the above, and the admissible command of
  an action memoized when its command template cannot depend on the state (only literal text and
  ``{variable}`` lookups); a template that can depend on the state is memoized per *state* instead
  (:func:`derived_commands`: per game, keyed by the exact set of facts, which is all such a derivation
  reads besides the game's own constants), so a state met again — the next rollout of a group, the same
  evaluation episode at the next checkpoint — skips the grammar. Its queries are answered once per state
  (and once per game where static) by :mod:`.queries`; a reset re-adds the problem's initial facts (issue 41).
  Per game (:mod:`.statememo`): a template that reads only static facts is derived once per game, and a state's
  applicable actions and commands once per set of applicable operators.

Where the stock engine spends a step (cProfile, 40 random steps on a dev game): 97 % in grammar
derivation, of which ~60 % is TatSu re-parsing the same templates and queries and ~30 % deep copies of
derivation contexts. Nothing here changes *what* is derived:
the same rules are tried in the same order against the same state, so observations, admissible
commands, facts, rewards and ``won`` are identical (differential test: ``tests/test_alfworld_fast.py``;
timings: ``python -m agentgym_credit.bench.speed.alfworld_speed``).
"""

from __future__ import annotations

import ast
import contextlib
import ctypes
import functools
import itertools
import sys
import weakref
from collections import Counter, defaultdict
from typing import Any

import fast_downward
import textworld
from textworld.core import GameState
from textworld.envs.pddl import PddlEnv
from textworld.envs.pddl import logic as _pddl_logic
from textworld.envs.pddl.textgen import (
    ConditionalSymbol,
    CSGUnknownSymbolError,
    EvalSymbol,
    ListSymbol,
    NonterminalSymbol,
    TerminalSymbol,
)
from textworld.logic import Proposition, Variable
from textworld.utils import check_flag

from agentgym_credit.envs.alfworld import queries
from agentgym_credit.envs.alfworld.logic import INSTALLED_TASK, installed_logic, task_sentence
from agentgym_credit.envs.alfworld.queries import (  # noqa: F401  (_derived: the tests clear it)
    DERIVED_GAMES,
    DERIVED_STATES,
    QueryState,
    _derived,
    any_assignment,
    assignments,
    derived_commands,
    parse_query,
    static_predicates,
)
from agentgym_credit.envs.alfworld.sascache import (
    entry_key,
    entry_path,
    read_entry,
    sas_cache_dir,
    write_entry,
)
from agentgym_credit.envs.alfworld.statememo import (
    applicable,
    game_memo,
    is_static_template,
    parse_symbols,
    readable_facts,
    translated,
)

_EVAL_NODES = (ast.Expression, ast.Name, ast.Load, ast.Attribute, ast.Constant, ast.BinOp, ast.Add, ast.BoolOp,
               ast.Or, ast.And)


@functools.cache
def _compiled(expr: str):
    """A grammar's ``{expr}`` compiled, if it is only what grammars use — names, public attributes, strings, ``+``,
    ``or``/``and`` — else ``ValueError`` (never evaluated: a game file chose that text, issue 43 D7)."""
    try:
        tree = ast.parse(expr.strip(), "<grammar>", "eval")
    except SyntaxError:
        tree = None
    bad = tree is None or any(
        not isinstance(n, _EVAL_NODES) or (isinstance(n, ast.Attribute) and n.attr.startswith("_"))
        or (isinstance(n, ast.Name) and n.id.startswith("_")) or (isinstance(n, ast.Constant) and not isinstance(n.value, str))
        for n in ast.walk(tree))
    if bad:
        raise ValueError(f"grammar expression {{{expr[:80]}}} is not a name, attribute or string joined by + / or "
                         "(a game file's text is parsed, never evaluated)")
    return compile(tree, "<grammar>", "eval")


@functools.cache
def is_state_free(text: str) -> bool:
    """True when a template only holds literal text and ``{expr}`` lookups (no rules, no queries)."""
    return all(type(s) in (TerminalSymbol, EvalSymbol) for s in parse_symbols(text))


@functools.lru_cache(maxsize=16)
def _parse_logic_text(domain: str, grammar: str) -> _pddl_logic.GameLogic:
    return _pddl_logic.GameLogic(domain=domain, grammar=grammar)


@functools.lru_cache(maxsize=128)
def parse_logic(domain: str, grammar: str) -> _pddl_logic.GameLogic:
    """``GameLogic`` of a game, parsing each distinct grammar text once per process.

    Games on the installed grammar differ only in their ``task`` sentence: their logic is the installed
    one (parsed once) with the ``task`` rule's right-hand side parsed from the game's sentence, which is
    what a full parse of the game's grammar gives (checked by the differential test). Any other grammar
    is parsed in full.
    """
    inst_domain, inst_grammar = installed_logic()
    head, _, tail = inst_grammar.partition(INSTALLED_TASK)
    if domain != inst_domain or not (grammar.startswith(head) and grammar.endswith(tail)):
        return _parse_logic_text(domain, grammar)
    base = _parse_logic_text(inst_domain, inst_grammar)
    (task_rule,) = base.grammar._rules["task"]
    logic = _pddl_logic.GameLogic.__new__(_pddl_logic.GameLogic)
    logic.domain, logic.actions, logic.types = base.domain, base.actions, base.types
    logic.grammar = type(base.grammar)()
    logic.grammar._rules.update(base.grammar._rules)
    rhs = list(parse_symbols(task_sentence(grammar)))
    logic.grammar._rules["task"] = [type(task_rule)("task", rhs, task_rule.weight, task_rule.condition)]
    return logic


@functools.cache
def _version_tag() -> str:
    from importlib.metadata import version

    return f"{version('fast-downward-textworld')}|{version('textworld')}|{sys.version_info[:2]}|v2"


@contextlib.contextmanager
def saved_argv():
    """Keep ``sys.argv``: Fast Downward's translator overwrites it (its options module parses it)."""
    saved = sys.argv
    sys.argv = list(saved)
    try:
        yield
    finally:
        sys.argv = saved


def pddl2sas(domain: str, problem: str, optimize: bool) -> tuple[Any, str]:
    """``fast_downward.pddl2sas`` with ``sys.argv`` saved and restored around it."""
    with saved_argv():
        return fast_downward.pddl2sas(domain, problem, verbose=check_flag("TW_PDDL_DEBUG"), optimize=optimize)


def parse_task(domain: str, problem: str) -> Any:
    """The normalized PDDL task the translator builds before translating (parsing only: ~5 % of a
    translation), i.e. the ``task`` that :func:`pddl2sas` returns."""
    with saved_argv():
        sys.argv = ["translate.py", "domain", "task"]  # the translator's options module parses argv on import
        from fast_downward.translate import normalize
        from fast_downward.translate.pddl_parser import lisp_parser, parsing_functions

        with fast_downward.interface.CapturingStdout():  # the parser prints warnings on duplicate facts
            task = parsing_functions.parse_task(
                lisp_parser.parse_nested_list(domain.split("\n")), lisp_parser.parse_nested_list(problem.split("\n"))
            )
            normalize.normalize(task)
    return task


@functools.lru_cache(maxsize=16)
def translate(domain: str, problem: str, optimize: bool) -> tuple[Any, str]:
    """Fast Downward's PDDL -> SAS translation ``(task, sas)``, memoized in memory and on disk.

    A pure function of the two texts (the translator is deterministic), so a cached result is the
    result. ``task`` is ``None`` for ``optimize=True`` (only the planner's SAS text is used). The disk
    cache (:mod:`~agentgym_credit.envs.alfworld.sascache`) holds the SAS text only, as data; on a disk
    hit the task is rebuilt by :func:`parse_task`.
    """
    folder = sas_cache_dir()
    path = key = None
    if folder is not None:
        key = entry_key(_version_tag(), optimize, domain, problem)
        path = entry_path(folder, key)
        sas = read_entry(path, key)
        if sas is not None:
            return (None if optimize else parse_task(domain, problem)), sas
    task, sas = pddl2sas(domain, problem, optimize)
    if path is not None:
        write_entry(path, key, sas)
    return (None if optimize else task), sas


def _with_bindings(context: dict, mapping: dict) -> dict:
    """A new context whose variables/mapping extend ``context`` with a query's bindings."""
    infos = context["entity_infos"]
    variables = dict(context["variables"])
    variables.update({ph.name: infos[var.name] for ph, var in mapping.items()})
    new_mapping = dict(context["mapping"])
    new_mapping.update(mapping)
    return {
        "state": context["state"],
        "facts": context["facts"],
        "variables": variables,
        "mapping": new_mapping,
        "entity_infos": infos,
    }


class FastGrammar:
    """Derive text from a ``ContextSensitiveGrammar`` (same output as its ``derive``), memoizing parses."""

    def __init__(self, grammar: Any):
        self._rules = grammar._rules

    def _expand(self, symbol: Any, context: dict) -> list[tuple[Any, dict]]:
        """One derivation step of a non-terminal symbol: what replaces it, in order."""
        kind = type(symbol)
        if kind is NonterminalSymbol:
            rules = self._rules.get(str(symbol))
            if not rules:
                raise CSGUnknownSymbolError(symbol)
            state, mapping = context["state"], context["mapping"]
            chosen = None
            for rule in rules:
                if not rule.condition or any_assignment(state, rule.condition, mapping):
                    chosen = rule
                    break
            if chosen is None:  # the stock engine fails the same way (index into an empty list)
                raise IndexError("list index out of range")
            return [(s, context) for s in chosen.rhs]
        if kind is ConditionalSymbol:
            if symbol.given:
                contexts = [
                    _with_bindings(context, m) for m in assignments(context["state"], symbol.given, context["mapping"])
                ]
            else:
                contexts = [context]
            return [(symbol.expression, c) for c in contexts]
        if kind is EvalSymbol:
            local = {"self": symbol, "context": context}
            local.update(context["variables"])
            code = _compiled(symbol.expression)  # checked: names, attributes, strings, + and or only
            return [(TerminalSymbol(eval(code, {"__builtins__": {}}, local)), context)]
        if kind is ListSymbol:
            items = self._expand(symbol.symbol, context)
            if len(items) == 0:
                return [(NonterminalSymbol("list_empty"), context)]
            if len(items) == 1:
                return items
            sep, last = NonterminalSymbol("list_separator"), NonterminalSymbol("list_last_separator")
            out: list[tuple[Any, dict]] = []
            for i, item in enumerate(items[:-1]):
                if i:
                    out.append((sep, context))
                out.append(item)
            out.append((last, context))
            out.append(items[-1])
            return out
        raise NotImplementedError(f"Unknown symbol: {kind}")

    def derive(self, start: str, context: dict) -> str:
        """The text ``start`` derives to in ``context`` (state, variables, mapping, entity_infos)."""
        stack = [(s, context) for s in reversed(parse_symbols(start))]
        out: list[str] = []
        while stack:
            symbol, ctx = stack.pop()
            if type(symbol) is TerminalSymbol:
                out.append(str(symbol.symbol))
            else:
                stack.extend(reversed(self._expand(symbol, ctx)))
        return "".join(out)


class FastPddlState(QueryState, _pddl_logic.PddlState):
    """``PddlState`` with the PDDL -> SAS translation memoized per problem text."""

    def __init__(self, downward_lib: Any, pddl_problem: str, logic: Any, reload: bool = True,
                 initial: Any = None):  # noqa: D107
        # reload=False: the library already holds this problem's task; go back to its initial state (id 0)
        # instead of parsing the SAS again (the library keeps the states it has seen: snapshots of earlier
        # episodes of the game stay restorable by state id); ``initial``: the problem's initial facts and the
        # library's initial-state facts as an earlier load of this problem read them (``self.initial``), added
        # again in the same order instead of being read again (the problem text fixes them)
        # the stock PddlState skips State.__init__ too (its logic is not a textworld GameLogic)
        self._facts = defaultdict(set)
        self._vars_by_name = {}
        self._vars_by_type = defaultdict(set)
        self._var_counts = Counter()
        self._logic = logic
        self.downward_lib = downward_lib
        self.pddl_problem = pddl_problem
        self.task, self.sas = translated(translate, logic.domain, pddl_problem)
        self._replan_loaded = False  # the planner's SAS is translated on the first replan
        self._actions = {a.name: a for a in self.task.actions}
        self.name2type = {o.name: o.type_name for o in self.task.objects}
        for type_ in self.task.types:
            try:
                self._logic.types.add(textworld.logic.Type(type_.name, type_.supertype_names))
            except ValueError:
                pass
        if reload:
            self.downward_lib.load_sas(self.sas.encode("utf-8"))
        else:
            self.downward_lib.set_state_id(0)
        if initial is None or not queries.ENABLED:
            size = self.downward_lib.get_state_size()
            atoms = (_pddl_logic.Atom * size)()
            self.downward_lib.get_state(atoms)
            facts = [atom.get_fact(self.name2type) for atom in atoms]
            initial = (_initial_facts(self.task, self.name2type), [f for f in facts if not f.is_negation])
        self.initial = initial
        for part in initial:  # the same facts added in the same order: the same sets, iterated in the same order
            self.add_facts(part)


    @property
    def sas_replan(self) -> str:
        """The optimized SAS task the planner uses (translated on first use)."""
        return translate(self._logic.domain, self.pddl_problem, True)[1]

    def replan(self, infos: Any) -> list[str]:
        if not self._replan_loaded:
            self.downward_lib.load_sas_replan(self.sas_replan.encode("utf-8"))
            self._replan_loaded = True
        return super().replan(infos)


def _initial_facts(task: Any, name2type: dict[str, str]) -> list[Proposition]:
    """The problem's ``:init`` as propositions (equalities, costs and distances left out)."""
    conditions = fast_downward.translate.pddl.conditions
    fexpr = fast_downward.translate.pddl.f_expression
    out = []
    for atom in task.init:
        if isinstance(atom, conditions.Atom):
            if atom.predicate == "=":
                continue
            out.append(Proposition(atom.predicate, [Variable(a, name2type[a]) for a in atom.args]))
        elif isinstance(atom, fexpr.Assign):
            if atom.fluent.symbol == "total-cost":
                continue
            name = f"{atom.expression.value}"
            if str.isdigit(name):
                continue
            out.append(Proposition(name, [Variable(a, name2type[a]) for a in atom.fluent.args]))
    return out


MEMENTO_CACHE_LIMIT = 20_000
"""Entries of textworld's global memo of logic objects (``mementos``) past which a game load clears it."""


def prune_mementos(limit: int | None = None) -> None:
    """Clear textworld's process-wide memo of ``Proposition``/``Signature`` objects when it is large.

    textworld interns every proposition it ever builds in ``mementos.core._memento_cache`` and never lets
    go; each new game brings ~300 new ones (its object names), so a process that plays many games grew
    by ~0.1 MB a game from this alone. The memo only saves allocations: the objects compare and hash by
    value, so dropping it changes no result.
    """
    from mementos import core

    if len(core._memento_cache) > (MEMENTO_CACHE_LIMIT if limit is None else limit):
        core._memento_cache.clear()


_LIB_POOL: list[Any] = []
"""Loaded Fast Downward libraries no engine uses now (see :func:`acquire_lib`)."""


def acquire_lib(owner: Any) -> Any:
    """A Fast Downward library for ``owner``, given back to the pool when ``owner`` is garbage collected.

    ``fast_downward.load_lib()`` maps a fresh copy of ``libdownward.so`` (~1 MB of native memory that is
    never unmapped) and the stock engine calls it per engine, so a process that makes engines over and
    over (the generator's solvability check, envs made and dropped) grew without bound. Each library
    holds one loaded task at a time, so an engine owns its library while it lives; the pool hands it to
    the next engine afterwards: a process maps at most as many copies as it ever has live engines.
    """
    if _LIB_POOL:
        lib = _LIB_POOL.pop()
    else:
        lib = fast_downward.load_lib()
        lib.get_state_id.argtypes, lib.get_state_id.restype = [], ctypes.c_int
        lib.set_state_id.argtypes, lib.set_state_id.restype = [ctypes.c_int], None
    weakref.finalize(owner, _LIB_POOL.append, lib)
    return lib


_EPOCHS = itertools.count(1)
INITIAL_STATES = 64
"""Problems whose initial facts a process keeps (least recently loaded dropped), so a load or reset adds them
again instead of reading them from the task and the library (issue 41)."""
_INITIAL: dict[tuple[str, str], Any] = {}


class FastPddlEnv(PddlEnv):
    """``PddlEnv`` that derives text with :class:`FastGrammar` and memoizes parses and translations.

    Also kept for snapshots (:mod:`~agentgym_credit.envs.alfworld.snapshots`): ``epoch`` (a process-unique
    number of the task the library holds, new at every ``load``) and ``op_path`` (the planner operators
    applied since ``reset``, as ``(id, effect count)``). ``reset`` rewinds the library to the task's
    initial state instead of loading the task again.
    """

    def __init__(self, infos: Any = None):  # noqa: D107
        textworld.Environment.__init__(self, infos)  # the stock __init__ would map a new library copy
        self.downward_lib = acquire_lib(self)

    def load(self, filename_or_data: Any) -> None:
        if isinstance(filename_or_data, str):
            import json

            with open(filename_or_data) as f:
                data = json.load(f)
            self._game_file = filename_or_data
        else:
            data = filename_or_data
            self._game_file = None
        prune_mementos()
        self._game_data = data
        self.walkthrough = data.get("walkthrough", None)
        self._logic = parse_logic(data["pddl_domain"], data["grammar"])
        self._fast_grammar = FastGrammar(self._logic.grammar)
        self._templates = sorted({a.template for a in self._logic.actions.values()})
        key = (self._logic.domain, data["pddl_problem"])
        self._pddl_state = FastPddlState(self.downward_lib, key[1], self._logic, initial=_INITIAL.pop(key, None))
        self._initial = _INITIAL[key] = self._pddl_state.initial  # for reset and the next load of the problem
        while len(_INITIAL) > INITIAL_STATES:
            del _INITIAL[next(iter(_INITIAL))]
        self._static = (static_predicates(self._pddl_state.task), {})  # this task's static query answers
        self._pddl_state.static, self._pddl_state.static_memo = self._static
        self.epoch = next(_EPOCHS)  # what the library holds: this load's task
        self._entity_infos = self._get_entity_infos()
        self._command_cache: dict[tuple, str] = {}
        import hashlib

        digest = hashlib.blake2b(digest_size=16)
        for part in (data["pddl_domain"], data["grammar"], data["pddl_problem"]):
            digest.update(str(part).encode("utf-8", "surrogatepass") + b"\0")
        self.game_digest = digest.digest()
        self._derived, self._game_memo = derived_commands(self.game_digest), game_memo(self.game_digest)
        self._readable: dict[Proposition, Proposition] = {}

    def _context(self, facts: list, variables: dict, mapping: dict) -> dict:
        return {
            "state": self._pddl_state,
            "facts": facts,
            "variables": variables,
            "mapping": mapping,
            "entity_infos": self._entity_infos,
        }

    def _readable_fact(self, fact: Proposition) -> Proposition:
        out = self._readable.get(fact)
        if out is None:
            out = self._readable[fact] = self._get_human_readable_fact(fact)
        return out

    def _gather_infos(self) -> None:
        state = self.state
        state["command_templates"] = list(self._templates)
        state["won"] = self._pddl_state.check_goal()
        state["lost"] = False
        state["_entity_infos"] = dict(self._entity_infos)
        facts = list(self._pddl_state.facts)
        state["_facts"] = facts
        if self.request_infos.facts:
            state["facts"] = readable_facts(self._readable, self._readable_fact, facts)
        state["last_action"] = None
        state["_last_action"] = self._last_action
        state["_valid_actions"], state["_valid_commands"], state["admissible_commands"] = applicable(self, facts)
        if self.request_infos.moves:
            state["moves"] = self._moves
        if self.request_infos.policy_commands:
            state["policy_commands"] = self._pddl_state.replan(self._entity_infos)

    def _commands(self, actions: list, facts: list) -> list[str]:
        """The command of each applicable action, in order (memoized per action or per state, see the class)."""
        mapping = {k: info.name for k, info in self._entity_infos.items()}
        commands = []
        per_state = None  # this state's memo of state-dependent derivations (made on first use)
        for action in actions:
            template = action.command_template
            key = (template, tuple(sorted((ph.name, var.name) for ph, var in action.mapping.items())))
            if is_state_free(template):
                memo = self._command_cache
            elif is_static_template(self, template):  # reads only the game's static facts
                memo = self._game_memo.commands
            else:
                if per_state is None:
                    state_key = frozenset(facts)
                    per_state = self._derived.get(state_key)
                    if per_state is None:
                        if len(self._derived) >= DERIVED_STATES:
                            self._derived.clear()
                        per_state = self._derived[state_key] = {}
                memo = per_state
            cached = memo.get(key)
            if cached is not None:
                action.command_template, command = cached
                commands.append(command)
                continue
            variables = {ph.name: self._entity_infos[var.name] for ph, var in action.mapping.items()}
            context = self._context(facts, variables, dict(action.mapping))
            action.command_template = self._fast_grammar.derive(template, context)
            command = action.format_command(mapping)
            memo[key] = (action.command_template, command)
            commands.append(command)
        return commands

    def reset(self) -> GameState:
        self._pddl_state = FastPddlState(self.downward_lib, self._game_data["pddl_problem"], self._logic, reload=False,
                                         initial=self._initial)
        self._pddl_state.static, self._pddl_state.static_memo = self._static
        self.op_path: list[tuple[int, int]] = []
        self.prev_state = None
        self.state = GameState()
        self._last_action = None
        self._moves = 0
        context = self._context(list(self._pddl_state.facts), {}, {})
        self.state.feedback = self._fast_grammar.derive("#intro#", context)
        self.state.raw = self.state.feedback
        self._gather_infos()
        if "walkthrough" in self.request_infos.extras:
            self.state["extra.walkthrough"] = self.walkthrough or self._pddl_state.replan(self._entity_infos)
        return self.state

    def step(self, command: str):
        command = command.strip()
        self.prev_state = self.state
        self.state = GameState()
        self.state.last_command = command
        self._last_action = None
        try:  # same failure semantics as the stock engine: any ValueError means "nothing happens"
            idx = self.prev_state["_valid_commands"].index(command)
            self._last_action = self.prev_state["_valid_actions"][idx]
            self._pddl_state.apply(self._last_action)
            op = self._pddl_state._operators[self._last_action.id]
            self.op_path.append((int(op.id), int(op.nb_effect_atoms)))
            action = self._last_action
            variables = {ph.name: self._entity_infos[var.name] for ph, var in action.mapping.items()}
            context = self._context(list(self._pddl_state.facts), variables, dict(action.mapping))
            with self._pddl_state.frozen():
                self.state.feedback = self._fast_grammar.derive(action.feedback_rule, context)
            self._moves += 1
        except ValueError:
            self.state.feedback = "Nothing happens."
        self.state.raw = self.state.feedback
        self._gather_infos()
        if "walkthrough" in self.request_infos.extras:
            self.state["extra.walkthrough"] = self.prev_state["extra.walkthrough"]
        self.state["score"] = 1 if self.state["won"] else 0
        self.state["done"] = self.state["won"] or self.state["lost"]
        return self.state, self.state["score"], self.state["done"]


__all__ = [
    "DERIVED_GAMES",
    "DERIVED_STATES",
    "derived_commands",
    "FastGrammar",
    "FastPddlState",
    "FastPddlEnv",
    "parse_symbols",
    "parse_query",
    "parse_logic",
    "translate",
    "sas_cache_dir",
    "is_state_free",
    "pddl2sas",
    "parse_task",
    "acquire_lib",
    "prune_mementos",
    "MEMENTO_CACHE_LIMIT",
]
