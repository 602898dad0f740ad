"""The ``credit/`` namespace: every env id, its entry point and a one-line description.

``register_all()`` runs on ``import agentgym_credit``; ``gym.make("agentgym_credit:credit/...")``
imports the package first, so it works without the import too.

Entry points name the **package** where its ``__init__`` imports the env's module (``gridworld``, ``toytext``,
``webshop``), never that module: gymnasium imports an entry point with ``importlib.import_module``, which takes the
module's import lock *before* importing its parent package, so two threads making two envs of one package on a cold
start deadlocked (Python breaks the cycle with ``_DeadlockError`` or hands one thread a partially initialized
module: measured, one thread of 16 in 2 of 4 cold starts; ``tests/test_env_thread_safety.py``). Importing the package
itself takes its lock first, and every thread waits on that one lock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym


@dataclass(frozen=True)
class EnvSpecEntry:
    id: str
    entry_point: str
    description: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    max_episode_steps: int | None = None
    needs_extra: str | None = None


ENVS: tuple[EnvSpecEntry, ...] = (
    EnvSpecEntry(
        "credit/GridWorld-v0",
        "agentgym_credit.envs.gridworld:GridWorldEnv",
        "Text gridworld with walls, loops, optional traps and slip; exact tabular model.",
    ),
    EnvSpecEntry(
        "credit/AliasedGrid-v0",
        "agentgym_credit.envs.gridworld:AliasedGridEnv",
        "Gridworld where what you carry is not shown: identical text for different true states.",
    ),
    EnvSpecEntry(
        "credit/CueCorridor-v0",
        "agentgym_credit.envs.gridworld:CueCorridorEnv",
        "A cue seen early decides the right action at a later state that looks the same (history-dependent).",
    ),
    EnvSpecEntry(
        "credit/GradedGrid-v0",
        "agentgym_credit.envs.gridworld:GradedGridEnv",
        "Slippery gridworld with graded outcomes (goal 1.0, side exit 0.4) and a one-time coin; exact model.",
    ),
    EnvSpecEntry(
        "credit/Household-v0",
        "agentgym_credit.envs.gridworld:HouseholdEnv",
        "Small ALFWorld-like household (go to / open / take / put / clean / cool / heat / use); exact tabular model.",
    ),
    EnvSpecEntry(
        "credit/TrapChain-v0",
        "agentgym_credit.envs.gridworld:TrapChainEnv",
        "Stepping stones: slippery steps, a risky jump into water (trap), a bridge that falls behind you, step cost.",
    ),
    EnvSpecEntry(
        "credit/LongCorridor-v0",
        "agentgym_credit.envs.gridworld:LongCorridorEnv",
        "A 40-48 cell corridor (long horizon) with stalling moves and gamble chutes; exact model.",
    ),
    EnvSpecEntry(
        "credit/KeyCorridor-v0",
        "agentgym_credit.envs.gridworld:HiddenCorridorEnv",
        "Corridor whose door needs a key picked up on arrival at the far end; the text never shows it.",
        kwargs={"mechanism": "key"},
    ),
    EnvSpecEntry(
        "credit/LeverRoom-v0",
        "agentgym_credit.envs.gridworld:HiddenCorridorEnv",
        "Corridor whose door needs a lever pulled elsewhere (a trapdoor moves you); the text never shows it.",
        kwargs={"mechanism": "lever"},
    ),
    EnvSpecEntry(
        "credit/LateCoin-v0",
        "agentgym_credit.envs.gridworld:LateCoinEnv",
        "Pick a door; a chest 16 steps later pays 1 with the door's probability (noisy reward paid late).",
    ),
    EnvSpecEntry(
        "credit/FrozenLake4x4-v0",
        "agentgym_credit.envs.toytext:FrozenLakeTextEnv",
        "Gymnasium's FrozenLake 4x4, slippery, as a text env; its own P as the exact model.",
        kwargs={"size": 4},
    ),
    EnvSpecEntry(
        "credit/FrozenLake8x8-v0",
        "agentgym_credit.envs.toytext:FrozenLakeTextEnv",
        "Gymnasium's FrozenLake 8x8, slippery, as a text env; its own P as the exact model.",
        kwargs={"size": 8},
    ),
    EnvSpecEntry(
        "credit/CliffWalking-v0",
        "agentgym_credit.envs.toytext:CliffWalkingTextEnv",
        "Gymnasium's CliffWalking (-1 a step, -100 for the cliff) as a text env; its own P as the exact model.",
    ),
    EnvSpecEntry(
        "credit/Taxi-v0",
        "agentgym_credit.envs.toytext:TaxiTextEnv",
        "Gymnasium's Taxi as a text env; the text hides that the passenger is aboard (partial obs_key).",
    ),
    EnvSpecEntry(
        "credit/ALFWorld-v0",
        "agentgym_credit.envs.alfworld.env:ALFWorldEnv",
        "The real ALFWorld text engine (TextWorld PDDL): real or generated household games.",
        needs_extra="alfworld",
    ),
    EnvSpecEntry(
        "credit/TextWorld-v0",
        "agentgym_credit.envs.alfworld.textworld_env:TextWorldEnv",
        "TextWorld's own generated games (tw-simple, tw-cooking, tw-coin_collector), cached offline.",
        needs_extra="alfworld",
    ),
    EnvSpecEntry(
        "credit/WebShop-v0",
        "agentgym_credit.envs.webshop:WebShopEnv",
        "WebShop text shopping env with its reward function, generated catalog and BM25 search.",
        needs_extra="webshop",
    ),
)


def register_all() -> None:
    """Register every ``credit/*`` id with gymnasium (idempotent)."""
    for e in ENVS:
        if e.id in gym.registry:
            continue
        gym.register(
            id=e.id,
            entry_point=e.entry_point,
            kwargs=dict(e.kwargs),
            max_episode_steps=e.max_episode_steps,
            disable_env_checker=False,
            order_enforce=False,  # CreditEnv enforces reset-before-step itself, raising our ResetNeeded
        )


def registered_ids() -> list[str]:
    """All ``credit/*`` ids."""
    return [e.id for e in ENVS]


__all__ = ["ENVS", "EnvSpecEntry", "register_all", "registered_ids"]
