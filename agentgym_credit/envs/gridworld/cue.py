"""``CueCorridorEnv`` (``credit/CueCorridor-v0``): a light seen once decides the door at the end.

The history-dependent synthetic task (a text T-maze). The first step east flashes one of two
coloured lights (a random outcome, so rollouts of one task from one start state see both colours);
the corridor behind it and the junction at its end read the same whatever the colour, and the right
door at the junction depends on it. The colour is part of ``state_key`` but not of the corridor or
junction text, so only a policy (or a credit estimator) that looks back far enough tells the two
apart. The corridor allows moves back west, so states are revisited; the entrance door closes
behind the light, so the cue is seen exactly once.
"""

from __future__ import annotations

import numpy as np

from agentgym_credit.envs.gridworld.model import TabularModel
from agentgym_credit.envs.gridworld.tabular import TabularTextEnv, build_model

COLORS: tuple[str, ...] = ("red", "blue", "green", "yellow", "white", "purple")
"""Light colours a task draws its two cues from."""

_START, _WON, _LOST = "start", "won", "lost"


class CueCorridorEnv(TabularTextEnv):
    """Walk east through the corridor and take the door that the light's colour points to.

    Parameters: ``length`` (corridor cells from the light to the junction, >= 1), ``cue_prob``
    (probability of the first colour), ``max_steps``, ``n_tasks`` (each task draws two colours and
    which one means north), ``task_seed``; ``goal_reward`` for the right door, ``trap_reward`` for the
    wrong one (both terminal), ``-step_cost`` per other step. The rule ("red means north") is told in
    the first observation and in ``info["goal"]``.

    >>> env = CueCorridorEnv(length=3, n_tasks=2)
    >>> obs, info = env.reset(seed=0, options={"task": 0})
    >>> info["admissible_actions"]
    ['go east']
    """

    def __init__(
        self,
        length: int = 4,
        cue_prob: float = 0.5,
        max_steps: int = 30,
        n_tasks: int = 20,
        goal_reward: float = 1.0,
        trap_reward: float = 0.0,
        step_cost: float = 0.0,
        task_seed: int = 0,
        render_mode: str | None = None,
        invalid_action_reward: float = 0.0,
    ):
        super().__init__(n_tasks=n_tasks, max_steps=max_steps, goal_reward=goal_reward, trap_reward=trap_reward,
                         step_cost=step_cost, task_seed=task_seed, render_mode=render_mode,
                         invalid_action_reward=invalid_action_reward)
        if int(length) < 1:
            raise ValueError(f"length must be >= 1, got {length}")
        if not 0.0 < cue_prob < 1.0:
            raise ValueError(f"cue_prob must be in (0, 1) so both cues occur, got {cue_prob}")
        self.length = int(length)
        self.cue_prob = float(cue_prob)

    def _task_prefix(self) -> str:
        return "cue"

    def _params(self) -> tuple:
        return (self.length, self.cue_prob)

    def cues(self, task: int | str) -> tuple[str, str, str]:
        """``(first colour, second colour, door of the first colour)`` of a task."""
        rng = np.random.default_rng([self.task_seed, self.task_index(task), 3])
        a, b = (COLORS[int(k)] for k in rng.choice(len(COLORS), size=2, replace=False))
        return a, b, ("north", "south")[int(rng.integers(2))]

    def _build(self, task_index: int) -> tuple[TabularModel, str, list[bool], list]:
        first, second, door_first = self.cues(task_index)
        door = {first: door_first, second: "south" if door_first == "north" else "north"}
        n = self.length
        rule = f"A {first} light means the {door[first]} door; a {second} light means the {door[second]} door."
        step_r = 0.0 - self.step_cost

        def actions(s) -> list[str]:
            if s in (_WON, _LOST):
                return []
            if s == _START or s[0] == "cue":
                return ["go east"]
            k = s[1]
            if k == n:
                return ["go north", "go south", "go west"] if n > 1 else ["go north", "go south"]
            return ["go east", "go west"] if k > 1 else ["go east"]

        def transition(s, action: str):
            if s == _START:
                return [(self.cue_prob, ("cue", first), step_r, False),
                        (1.0 - self.cue_prob, ("cue", second), step_r, False)]
            if s[0] == "cue":
                return [(1.0, ("hall", 1, s[1]), step_r, False)]
            _, k, color = s
            d = action[3:]
            if d == "east":
                return [(1.0, ("hall", k + 1, color), step_r, False)]
            if d == "west":
                return [(1.0, ("hall", k - 1, color), step_r, False)]
            if d == door[color]:
                return [(1.0, _WON, self.goal_reward, True)]
            return [(1.0, _LOST, self.trap_reward, True)]

        def key(s) -> str:
            if isinstance(s, str):
                return s
            if s[0] == "cue":
                return f"light;cue={s[1]}"
            return f"pos={s[1]};cue={s[2]}"

        def observe(s) -> str:
            if s == _START:
                return (f"You stand at the west end of a dark corridor. A lamp hangs above you. {rule} "
                        "Exits: east.")
            if s == _WON:
                return "You open the right door and find the way out. You win!"
            if s == _LOST:
                return "You open the wrong door. It was a trap."
            if s[0] == "cue":
                return f"A {s[1]} light flashes as you step in. The door closes behind you. Exits: east."
            k = s[1]
            exits = ", ".join(a[3:] for a in actions(s))
            if k == n:
                return (f"You reach a junction {k} steps into the corridor. A door leads north and another "
                        f"south. Exits: {exits}.")
            steps = "1 step" if k == 1 else f"{k} steps"
            return f"You are in the corridor, {steps} from the light. Exits: {exits}."

        model, order = build_model(_START, actions, transition, key, observe, self.max_steps)
        return model, f"Reach the exit. {rule}", [s == _WON for s in order], order


__all__ = ["CueCorridorEnv", "COLORS"]
