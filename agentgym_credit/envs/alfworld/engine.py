"""The ALFWorld text engine (TextWorld's PDDL back end), stock and fast, behind one small interface.

What lives here:

- :func:`require_engine`, :func:`installed_logic`, :func:`task_sentence` — re-exported from
  :mod:`~agentgym_credit.envs.alfworld.logic` (what this module and ``fast`` share).
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

from collections.abc import Mapping
from typing import Any

from agentgym_credit.envs.alfworld.logic import (
    TASK_RULE_RE,
    grammar_with_task,
    installed_logic,
    require_engine,
    task_sentence,
)


def upgrade_game(game: Mapping[str, Any]) -> dict[str, Any]:
    """A game dict (``pddl_domain``, ``grammar``, ``pddl_problem``) on the installed domain and grammar.

    The game's own task sentence is kept (it is the only game-specific part of the grammar); the domain
    and grammar are replaced by the installed ones, which gives the current command set
    (``move X to Y``, ``You arrive at desk 1.``) whatever generation the file came from.
    """
    sentence = task_sentence(str(game["grammar"]))
    out = dict(game)
    out["pddl_domain"] = installed_logic()[0]
    out["grammar"] = grammar_with_task(sentence)
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
        base = _stock_env_keeping_argv(infos)
    return AlfredDemangler(base, shuffle=False)


def _stock_env_keeping_argv(infos: Any) -> Any:
    """textworld's own ``PddlEnv`` whose ``load``/``reset`` keep ``sys.argv`` (its Fast Downward translation
    overwrote the host program's ``sys.argv`` with ``['translate.py', 'domain', 'task']``)."""
    from textworld.envs.pddl import PddlEnv

    from agentgym_credit.envs.alfworld.fast import saved_argv

    class StockPddlEnv(PddlEnv):
        def load(self, *args: Any, **kwargs: Any) -> Any:
            with saved_argv():
                return super().load(*args, **kwargs)

        def reset(self, *args: Any, **kwargs: Any) -> Any:
            with saved_argv():
                return super().reset(*args, **kwargs)

    return StockPddlEnv(infos)


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
