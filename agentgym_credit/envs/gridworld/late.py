"""``credit/LateCoin-v0``: a choice whose noisy (Bernoulli) reward is paid many steps later (issue 41).

The kind of task where graph credit's terminal rows carry the reward's own noise: at the start you pick
one of ``n_doors`` doors (the decisive action), walk a hall of ``delay`` cells behind it (``"walk"``
moves on, ``"wait"`` stays: a real no-op that only costs discounting), and at the end ``"open chest"``
pays ``goal_reward`` with the door's probability and 0 otherwise (a Bernoulli reward paid ``delay`` steps
after the decision; ``"wait"`` is also allowed at the chest). Door probabilities are generated per task
(one better door, the others ``gap`` below it on average). ``show_choice=True`` names the door in the text;
``show_choice=False`` keeps it out of the text (``obs_key`` then aliases the halls of every door, while
``state_key`` carries the door). ``pre`` cells before the doors (``"walk"``/``"wait"``) move the decision
away from the start. An exact model, like every synthetic task.

>>> env = LateCoinEnv(n_tasks=2)
>>> obs, info = env.reset(seed=0, options={"task": 0})
>>> sorted(info["admissible_actions"])
['take door 1', 'take door 2']
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np

from agentgym_credit.envs.gridworld.model import TabularModel
from agentgym_credit.envs.gridworld.tabular import TabularTextEnv, build_model

_GOLD, _EMPTY = "gold", "empty"


class LateCoinEnv(TabularTextEnv):
    """Pick a door, walk ``delay`` cells, open a chest that pays with the door's probability (module docstring).

    States: ``("pre", i)`` before the doors (``i < pre``), ``("door", 0)`` at the doors, ``("hall", d, j)``
    ``j`` cells behind door ``d`` (``j = delay`` is the chest), and the terminal ``"gold"`` / ``"empty"``.
    Every step costs ``step_cost``; ``max_steps`` truncates."""

    def __init__(self, n_doors: int = 2, delay: int = 16, pre: int = 0, best: float = 0.7, gap: float = 0.4,
                 show_choice: bool = True, max_steps: int = 48, n_tasks: int = 100, goal_reward: float = 1.0,
                 step_cost: float = 0.0, task_seed: int = 0, render_mode: str | None = None,
                 invalid_action_reward: float = 0.0):
        if n_doors < 2 or delay < 1 or pre < 0:
            raise ValueError(f"need n_doors >= 2, delay >= 1, pre >= 0; got {n_doors}, {delay}, {pre}")
        if not (0.0 <= best <= 1.0 and gap >= 0.0):
            raise ValueError(f"need best in [0, 1] and gap >= 0; got best={best}, gap={gap}")
        self.n_doors, self.delay, self.pre = int(n_doors), int(delay), int(pre)
        self.best, self.gap, self.show_choice = float(best), float(gap), bool(show_choice)
        super().__init__(n_tasks=n_tasks, max_steps=max_steps, goal_reward=goal_reward, step_cost=step_cost,
                         task_seed=task_seed, render_mode=render_mode, invalid_action_reward=invalid_action_reward)

    def _params(self) -> tuple:
        return (self.n_doors, self.delay, self.pre, self.best, self.gap, self.show_choice)

    def _task_prefix(self) -> str:
        return "latecoin"

    def door_probs(self, task: int | str) -> list[float]:
        """Each door's chance that the chest holds gold (one door at ``best``, the others ``gap`` below on
        average, in a shuffled order)."""
        rng = np.random.default_rng([self.task_seed, self.task_index(task), 1041])
        p = [self.best] + [float(np.clip(self.best - self.gap * rng.uniform(0.5, 1.5), 0.0, 1.0))
                           for _ in range(self.n_doors - 1)]
        return [p[i] for i in rng.permutation(self.n_doors)]

    def _build(self, task_index: int) -> tuple[TabularModel, str, list[bool], list[Hashable]]:
        probs, delay, pre = self.door_probs(task_index), self.delay, self.pre
        cost = -self.step_cost

        def actions(s: Hashable) -> list[str]:
            if isinstance(s, str):
                return []
            if s[0] == "door":  # type: ignore[index]
                return [f"take door {d + 1}" for d in range(self.n_doors)]
            if s[0] == "hall" and s[2] == delay:  # type: ignore[index]
                return ["open chest", "wait"]
            return ["walk", "wait"]

        def transition(s: Hashable, action: str):
            if action == "wait":
                return [(1.0, s, cost, False)]
            if action == "open chest":
                p = probs[s[1]]  # type: ignore[index]
                return [(p, _GOLD, self.goal_reward, True), (1.0 - p, _EMPTY, 0.0, True)]
            if action.startswith("take door"):
                return [(1.0, ("hall", int(action.rsplit(" ", 1)[1]) - 1, 0), cost, False)]
            if s[0] == "pre":  # type: ignore[index]
                i = s[1] + 1  # type: ignore[index]
                return [(1.0, ("pre", i) if i < pre else ("door", 0), cost, False)]
            return [(1.0, ("hall", s[1], s[2] + 1), cost, False)]  # type: ignore[index]

        def key(s: Hashable) -> str:
            if isinstance(s, str):
                return s
            return ";".join(map(str, s))

        def observe(s: Hashable) -> str:
            if s == _GOLD:
                return "The chest holds gold. You win!"
            if s == _EMPTY:
                return "The chest is empty."
            if s[0] == "pre":  # type: ignore[index]
                return f"You walk towards a row of doors, {pre - s[1]} steps ahead."  # type: ignore[index]
            if s[0] == "door":  # type: ignore[index]
                return f"You stand before {self.n_doors} doors."
            d, j = s[1], s[2]  # type: ignore[index]
            where = f"the hall behind door {d + 1}" if self.show_choice else "a long hall"
            return f"You are in {where}, {delay - j} steps from a chest."

        start = ("pre", 0) if pre else ("door", 0)
        model, order = build_model(start, actions, transition, key, observe, self.max_steps)
        return model, "Pick a door and open the chest at the end of its hall.", [s == _GOLD for s in order], order


__all__ = ["LateCoinEnv"]
