"""The ALFWorld text engine (TextWorld's PDDL back end), stock and fast, behind one small interface.

What lives here:

- :func:`require_engine` — import ``textworld``, ``alfworld`` and ``fast_downward`` or raise
  :class:`~agentgym_credit.errors.DependencyNotInstalled` naming the ``alfworld`` extra.
- :func:`installed_logic` — the PDDL domain and grammar shipped inside the installed ``alfworld`` wheel
  (``alfworld/data/alfred.pddl`` and ``alfred.twl2``; nothing is downloaded).
- :func:`upgrade_game` — bring a game of any ALFWorld generation (e.g. ``json_2.1.1``, whose bundled
  grammar says ``put X in/on Y``) to the installed engine: the installed domain and grammar, the game's own
  problem and its own task sentence. This is what ALFWorld's own tooling does when it regenerates games.
- :func:`make_engine` — a loaded TextWorld environment, either the stock ``PddlEnv`` or
  :class:`~agentgym_credit.envs.alfworld.fast.FastPddlEnv`, wrapped in ALFWorld's own demangler so object
  names read ``"mug 1"``.
- :func:`expert_plan` — the engine's own planner (Fast Downward) from the current state.

Both engines say exactly the same thing on the same commands (see ``tests/test_alfworld_fast.py``).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import Any

from agentgym_credit.errors import DependencyNotInstalled

TASK_RULE_RE = re.compile(r'"task"\s*:\s*\[\s*\{\s*"rhs"\s*:\s*"((?:[^"\\]|\\.)*)"')
"""The task sentence inside a game's grammar (``"task": [{"rhs": "Your task is to: ..."}]``)."""

_INSTALLED_TASK = "Your task is to: UNKNOWN GOAL."


def require_engine() -> None:
    """Import the engine's packages once, or say which extra installs them."""
    try:
        import fast_downward  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise DependencyNotInstalled("fast-downward-textworld", "alfworld") from exc
    try:
        import textworld  # noqa: F401
        import textworld.envs.pddl  # noqa: F401
    except ImportError as exc:  # pragma: no cover
        raise DependencyNotInstalled("textworld", "alfworld") from exc
    try:
        import alfworld.info  # noqa: F401
    except ImportError as exc:  # pragma: no cover
        raise DependencyNotInstalled("alfworld (pip install --no-deps alfworld==0.4.2)", "alfworld") from exc


@functools.lru_cache(maxsize=1)
def installed_logic() -> tuple[str, str]:
    """``(pddl_domain, grammar)`` of the installed ``alfworld`` package."""
    require_engine()
    from alfworld.info import ALFRED_PDDL_PATH, ALFRED_TWL2_PATH

    with open(ALFRED_PDDL_PATH) as f:
        domain = f.read()
    with open(ALFRED_TWL2_PATH) as f:
        grammar = f.read()
    if _INSTALLED_TASK not in grammar:  # pragma: no cover - guards a future alfworld release
        raise RuntimeError(f"installed alfworld grammar has no {_INSTALLED_TASK!r} rule to fill in")
    return domain, grammar


def task_sentence(grammar: str) -> str:
    """The task sentence a game's grammar carries (``"Your task is to: ..."``)."""
    m = TASK_RULE_RE.search(grammar)
    if m is None:
        raise ValueError("game grammar has no 'task' rule")
    return json.loads(f'"{m.group(1)}"')


def upgrade_game(game: Mapping[str, Any]) -> dict[str, Any]:
    """A game dict (``pddl_domain``, ``grammar``, ``pddl_problem``) on the installed domain and grammar.

    The game's own task sentence is kept (it is the only game-specific part of the grammar); the domain
    and grammar are replaced by the installed ones, which gives the current command set
    (``move X to Y``, ``You arrive at desk 1.``) whatever generation the file came from.
    """
    domain, grammar = installed_logic()
    sentence = task_sentence(str(game["grammar"]))
    out = dict(game)
    out["pddl_domain"] = domain
    out["grammar"] = grammar.replace(_INSTALLED_TASK, json.dumps(sentence)[1:-1])
    return out


def make_engine(fast: bool = True, facts: bool = True) -> Any:
    """An unloaded TextWorld env for ALFWorld games (``load(game_dict)``, ``reset()``, ``step(cmd)``).

    ``fast=False`` is textworld's own ``PddlEnv``; ``fast=True`` is :class:`FastPddlEnv`, which says the
    same thing, character by character, in a fraction of the time.
    """
    require_engine()
    import textworld
    from alfworld.agents.environment.alfred_tw_env import AlfredDemangler

    infos = textworld.EnvInfos(won=True, admissible_commands=True, facts=facts)
    if fast:
        from agentgym_credit.envs.alfworld.fast import FastPddlEnv

        base = FastPddlEnv(infos)
    else:
        from textworld.envs.pddl import PddlEnv

        base = PddlEnv(infos)
    return AlfredDemangler(base, shuffle=False)


def expert_plan(engine: Any) -> list[str]:
    """The engine's planner (Fast Downward) from the engine's current state, as admissible commands.

    Empty when the goal is reached or unreachable.
    """
    inner = engine.unwrapped
    return list(inner._pddl_state.replan(inner._entity_infos))


__all__ = [
    "require_engine",
    "installed_logic",
    "task_sentence",
    "upgrade_game",
    "make_engine",
    "expert_plan",
    "TASK_RULE_RE",
]
