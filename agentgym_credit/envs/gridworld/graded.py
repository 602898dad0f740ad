"""``GradedGridEnv`` (``credit/GradedGrid-v0``): graded and intermediate rewards, slippery moves.

The synthetic task where the graph estimators differ (issue 20): a grid with

- a **coin** (``special[0]``): stepping on it the first time pays ``coin_reward`` (0.3) on the way
  (an intermediate reward; the coin is then gone, so the state is ``(cell, coin taken)``);
- a **side exit** (``special[1]``): the action ``"leave"`` there ends the episode with
  ``side_reward`` (0.4), a partial success (a graded outcome: "any return > 0 is the goal" is not the
  best goal here); the cell itself is passable, so it never blocks the way to the goal;
- the **goal**: ends it with ``goal_reward`` (1.0); pits end it with ``trap_reward`` (0.0);
- **slip** 0.2 by default (stochastic transitions: a move goes to a perpendicular direction with
  total probability ``slip``), ``-step_cost`` (0.01) on every other step.

Fully observed: the text names the cell and whether the coin is still there, so ``obs_key`` equals
``state_key`` up to naming. The exact model is ``env.unwrapped.model`` like every synthetic task.

>>> env = GradedGridEnv(size=4, n_tasks=2)
>>> obs, info = env.reset(seed=0, options={"task": 0})
>>> info["state_key"].endswith("coin=0")
True
"""

from __future__ import annotations

from agentgym_credit.envs.gridworld.grid import GridLayoutEnv, grid_text
from agentgym_credit.envs.gridworld.layout import Cell, Layout, exits, slip_moves
from agentgym_credit.envs.gridworld.model import TabularModel
from agentgym_credit.envs.gridworld.tabular import build_model

_GOAL, _SIDE, _FELL = "goal", "side-exit", "fell"


class GradedGridEnv(GridLayoutEnv):
    """Reach the goal (1.0) or ``"leave"`` by the side exit (0.4); a coin pays 0.3 once; moves slip.

    Same layout parameters as :class:`~agentgym_credit.envs.gridworld.grid.GridWorldEnv`; extra
    rewards ``coin_reward`` and ``side_reward``; ``slip`` defaults to 0.2 and ``step_cost`` to 0.01.
    ``won`` is true at the goal only.
    """

    _salt = 4
    _n_special = 2

    def __init__(
        self,
        size: int = 5,
        wall_density: float = 0.15,
        n_traps: int = 1,
        slip: float = 0.2,
        max_steps: int = 40,
        n_tasks: int = 100,
        goal_reward: float = 1.0,
        side_reward: float = 0.4,
        coin_reward: float = 0.3,
        trap_reward: float = 0.0,
        step_cost: float = 0.01,
        task_seed: int = 0,
        render_mode: str | None = None,
        invalid_action_reward: float = 0.0,
    ):
        self.side_reward = float(side_reward)
        self.coin_reward = float(coin_reward)
        super().__init__(size=size, wall_density=wall_density, n_traps=n_traps, slip=slip, max_steps=max_steps,
                         n_tasks=n_tasks, goal_reward=goal_reward, trap_reward=trap_reward, step_cost=step_cost,
                         task_seed=task_seed, render_mode=render_mode, invalid_action_reward=invalid_action_reward)

    def _params(self) -> tuple:
        return (*super()._params(), self.side_reward, self.coin_reward)

    def _task_prefix(self) -> str:
        return "graded"

    def layout(self, task: int | str) -> Layout:
        """The generated layout: ``special[0]`` the coin, ``special[1]`` the side exit."""
        return super().layout(task)

    def _build(self, task_index: int) -> tuple[TabularModel, str, list[bool], list]:
        lay = self.layout(task_index)
        coin, side = lay.special[0], lay.special[1]
        State = tuple[Cell, bool] | str

        def actions(s: State) -> list[str]:
            if isinstance(s, str):
                return []
            return [f"go {d}" for d in exits(lay, s[0])] + (["leave"] if s[0] == side else [])

        def arrive(p: float, nxt: Cell, taken: bool) -> tuple[float, State, float, bool]:
            if nxt == lay.goal:
                return (p, _GOAL, self.goal_reward, True)
            if nxt in lay.traps:
                return (p, _FELL, self.trap_reward, True)
            if nxt == coin and not taken:
                return (p, (nxt, True), self.coin_reward - self.step_cost, False)
            return (p, (nxt, taken), 0.0 - self.step_cost, False)

        def transition(s: State, action: str) -> list[tuple[float, State, float, bool]]:
            cell, taken = s  # type: ignore[misc]
            if action == "leave":
                return [(1.0, _SIDE, self.side_reward, True)]
            return [arrive(p, nxt, taken) for p, nxt in slip_moves(lay, cell, action[3:], self.slip)]

        def key(s: State) -> str:
            return s if isinstance(s, str) else f"pos={s[0][0]},{s[0][1]};coin={int(s[1])}"

        def observe(s: State) -> str:
            if s == _GOAL:
                return "You reach the goal. You win!"
            if s == _SIDE:
                return "You leave through the side exit."
            if s == _FELL:
                return "You fall into a pit."
            cell, taken = s  # type: ignore[misc]
            text = grid_text(lay, cell, lay.goal, "goal")
            if cell == side:
                text += " A side exit is here."
            r, c = coin
            return text + (" The coin is gone." if taken else f" A coin lies at row {r + 1}, column {c + 1}.")

        model, order = build_model((lay.start, False), actions, transition, key, observe, self.max_steps)
        gr, gc = lay.goal
        return model, f"Reach the goal at row {gr + 1}, column {gc + 1}.", [s == _GOAL for s in order], order


__all__ = ["GradedGridEnv"]
