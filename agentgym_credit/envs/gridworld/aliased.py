"""``AliasedGridEnv`` (``credit/AliasedGrid-v0``): fetch a key, open a door; the key is never shown.

The aliased-observation synthetic task. The true state is ``(position, carrying the key)`` but the
text depends on the position only: the key rack reads the same before and after the key is taken,
and the admissible actions are the same too (``"take key"`` with the key in hand, or ``"open door"``
without it, are valid steps that change nothing). So ``obs_key`` groups steps with and without the
key together (aliasing) while ``state_key`` keeps them apart; every cell visited before and after the
pick-up is an aliased observation.
"""

from __future__ import annotations

from agentgym_credit.envs.gridworld.grid import GridLayoutEnv, grid_text
from agentgym_credit.envs.gridworld.layout import Cell, Layout, exits, slip_moves
from agentgym_credit.envs.gridworld.model import TabularModel
from agentgym_credit.envs.gridworld.tabular import build_model

_ESCAPED = "escaped"
_FELL = "fell"


class AliasedGridEnv(GridLayoutEnv):
    """Take the key at the key rack (``"take key"``), then ``"open door"`` at the door to win.

    Same layout parameters as :class:`~agentgym_credit.envs.gridworld.grid.GridWorldEnv`
    (``size``, ``wall_density``, ``n_traps``, ``slip``, ``max_steps``, ``n_tasks``, ``task_seed``);
    opening the door with the key is the only success (``goal_reward``), a pit ends the episode with
    ``trap_reward``. The observation never says whether the key is carried.

    >>> env = AliasedGridEnv(size=4, n_tasks=2)
    >>> obs, info = env.reset(seed=0, options={"task": 0})
    >>> info["state_key"].endswith("key=0")
    True
    """

    _salt = 2
    _n_special = 1

    def __init__(
        self,
        size: int = 5,
        wall_density: float = 0.15,
        n_traps: int = 0,
        slip: float = 0.0,
        max_steps: int = 60,
        n_tasks: int = 100,
        goal_reward: float = 1.0,
        trap_reward: float = 0.0,
        step_cost: float = 0.0,
        task_seed: int = 0,
        render_mode: str | None = None,
        invalid_action_reward: float = 0.0,
    ):
        super().__init__(size=size, wall_density=wall_density, n_traps=n_traps, slip=slip, max_steps=max_steps,
                         n_tasks=n_tasks, goal_reward=goal_reward, trap_reward=trap_reward, step_cost=step_cost,
                         task_seed=task_seed, render_mode=render_mode, invalid_action_reward=invalid_action_reward)

    def _task_prefix(self) -> str:
        return "aliased"

    def layout(self, task: int | str) -> Layout:
        """The generated layout of a task: ``goal`` is the door, ``special[0]`` the key rack."""
        return super().layout(task)

    def _build(self, task_index: int) -> tuple[TabularModel, str, list[bool], list]:
        lay = self.layout(task_index)
        rack, door = lay.special[0], lay.goal
        State = tuple[Cell, bool] | str

        def actions(s: State) -> list[str]:
            if isinstance(s, str):
                return []
            cell = s[0]
            acts = [f"go {d}" for d in exits(lay, cell)]
            if cell == rack:
                acts.append("take key")
            if cell == door:
                acts.append("open door")
            return acts

        def transition(s: State, action: str) -> list[tuple[float, State, float, bool]]:
            cell, key = s  # type: ignore[misc]
            if action == "take key":
                return [(1.0, (cell, True), 0.0 - self.step_cost, False)]
            if action == "open door":
                if key:
                    return [(1.0, _ESCAPED, self.goal_reward, True)]
                return [(1.0, s, 0.0 - self.step_cost, False)]
            out = []
            for p, nxt in slip_moves(lay, cell, action[3:], self.slip):
                if nxt in lay.traps:
                    out.append((p, _FELL, self.trap_reward, True))
                else:
                    out.append((p, (nxt, key), 0.0 - self.step_cost, False))
            return out

        def key(s: State) -> str:
            return s if isinstance(s, str) else f"pos={s[0][0]},{s[0][1]};key={int(s[1])}"

        def observe(s: State) -> str:
            if s == _ESCAPED:
                return "You unlock the door and step outside. You win!"
            if s == _FELL:
                return "You fall into a pit."
            cell = s[0]  # type: ignore[index]
            text = grid_text(lay, cell, door, "door")
            if cell == rack:
                text += " There is a key rack here."
            if cell == door:
                text += " There is a locked door here."
            return text

        model, order = build_model((lay.start, False), actions, transition, key, observe, self.max_steps)
        r, c = rack
        goal = f"Take the key from the key rack at row {r + 1}, column {c + 1}, then open the door."
        return model, goal, [s == _ESCAPED for s in order], order


__all__ = ["AliasedGridEnv"]
