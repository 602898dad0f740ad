"""``GridWorldEnv`` (``credit/GridWorld-v0``): text navigation with walls, loops, traps and slip.

The fully observed synthetic task: the observation names the position, so ``obs_key`` and
``state_key`` group the same steps. Random walls leave loops, so states are revisited (as GiGPO's
anchor states assume). Layouts are generated from ``(task_seed, task index)`` and each is checked
solvable. The exact model of the current task is ``env.unwrapped.model``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agentgym_credit.envs.gridworld.layout import (
    DIRECTIONS,
    Cell,
    Layout,
    direction_word,
    exits,
    generate_layout,
    slip_moves,
)
from agentgym_credit.envs.gridworld.model import TabularModel
from agentgym_credit.envs.gridworld.tabular import TabularTextEnv, build_model


def grid_text(layout: Layout, cell: Cell, target: Cell, target_name: str) -> str:
    """Position, exits, adjacent pits and the direction of ``target`` in words (shared by grid envs)."""
    r, c = cell
    parts = [f"You are at row {r + 1}, column {c + 1}."]
    ex = exits(layout, cell)
    parts.append(f"Exits: {', '.join(ex)}." if ex else "There are no exits.")
    pits = [d for d, (dr, dc) in DIRECTIONS.items() if (r + dr, c + dc) in layout.traps]
    if pits:
        parts.append(f"There is a pit to the {' and '.join(pits)}.")
    if target != cell:
        parts.append(f"The {target_name} is to the {direction_word(cell, target)}.")
    return " ".join(parts)


class GridLayoutEnv(TabularTextEnv):
    """Base of the grid families: layout parameters, their checks, and seeded layout generation.

    ``layout(task)`` is generated from ``(task_seed, task index, family salt)`` with
    ``n_special`` extra cells; the first layout is generated at construction so bad parameters
    fail there, not at the first reset.
    """

    _salt = 1
    _n_special = 0

    def __init__(self, *, size: int, wall_density: float, n_traps: int, slip: float, **kwargs: Any):
        super().__init__(**kwargs)
        self.size = int(size)
        self.wall_density = float(wall_density)
        self.n_traps = int(n_traps)
        if not 0.0 <= slip < 1.0:
            raise ValueError(f"slip must be in [0, 1), got {slip}")
        self.slip = float(slip)
        self.layout(0)

    def _params(self) -> tuple:
        return (self.size, self.wall_density, self.n_traps, self.slip)

    def layout(self, task: int | str) -> Layout:
        """The generated layout of a task."""
        rng = np.random.default_rng([self.task_seed, self.task_index(task), self._salt])
        return generate_layout(rng, self.size, self.wall_density, self.n_traps, n_special=self._n_special)


class GridWorldEnv(GridLayoutEnv):
    """Reach the goal square by ``"go north"``/``"south"``/``"east"``/``"west"`` through the exits.

    Parameters: ``size`` (square side), ``wall_density`` (fraction of blocked cells), ``n_traps``
    (pits: terminal, ``trap_reward``), ``slip`` (a move goes to one of the two perpendicular
    directions with total probability ``slip``; a blocked slip stays put), ``max_steps``
    (truncation), ``n_tasks`` layouts generated from ``task_seed``; rewards ``goal_reward`` (1.0),
    ``trap_reward`` (0.0), ``-step_cost`` per other step (0.0). ``info["state_index"]`` is the
    row of ``env.unwrapped.model``.

    >>> env = GridWorldEnv(size=4, n_tasks=3)
    >>> obs, info = env.reset(seed=0, options={"task": 1})
    >>> info["task_id"], obs.startswith("You are at row")
    ('grid-1', True)
    >>> env.unwrapped.model.observations[info["state_index"]] == obs
    True
    """

    def __init__(
        self,
        size: int = 6,
        wall_density: float = 0.2,
        n_traps: int = 1,
        slip: float = 0.0,
        max_steps: int = 50,
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
        return "grid"

    def _build(self, task_index: int) -> tuple[TabularModel, str, list[bool], list]:
        lay = self.layout(task_index)
        terminal = lay.traps | {lay.goal}

        def actions(cell: Cell) -> list[str]:
            return [] if cell in terminal else [f"go {d}" for d in exits(lay, cell)]

        def transition(cell: Cell, action: str) -> list[tuple[float, Cell, float, bool]]:
            out = []
            for p, nxt in slip_moves(lay, cell, action[3:], self.slip):
                if nxt == lay.goal:
                    out.append((p, nxt, self.goal_reward, True))
                elif nxt in lay.traps:
                    out.append((p, nxt, self.trap_reward, True))
                else:
                    out.append((p, nxt, 0.0 - self.step_cost, False))
            return out

        def observe(cell: Cell) -> str:
            r, c = cell
            if cell == lay.goal:
                return f"You reach the goal at row {r + 1}, column {c + 1}. You win!"
            if cell in lay.traps:
                return f"You fall into a pit at row {r + 1}, column {c + 1}."
            return grid_text(lay, cell, lay.goal, "goal")

        model, order = build_model(lay.start, actions, transition, lambda cell: f"pos={cell[0]},{cell[1]}",
                                   observe, self.max_steps)
        gr, gc = lay.goal
        return model, f"Reach the goal at row {gr + 1}, column {gc + 1}.", [cell == lay.goal for cell in order], order


__all__ = ["GridWorldEnv", "GridLayoutEnv", "grid_text"]
