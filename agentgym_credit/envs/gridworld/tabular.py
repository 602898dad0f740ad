"""``TabularTextEnv``: the shared engine of the synthetic text tasks (exact model, table lookups).

What lives here:

- :class:`TabularTextEnv` — a :class:`~agentgym_credit.envs.base.CreditEnv` whose dynamics ARE a
  :class:`~agentgym_credit.envs.gridworld.model.TabularModel`. A subclass only generates task
  instances (``_task_names`` and ``_build_model``); ``reset`` and ``step`` are shared. ``step`` reads
  the precomputed model (one dict lookup for the action, one outcome draw), so ``env.step`` and
  ``model.P`` cannot disagree: the env *is* the model.
- :func:`build_model` — breadth-first enumeration of a deterministic-or-stochastic transition
  function from an initial state into a ``TabularModel`` (used by every family).
- :func:`shortest_plan` — fewest certain steps from a state to a goal set (an expert);
- :func:`canonical_action` — the normalization applied to action text that is not an exact
  admissible string (case, surrounding and repeated whitespace).

Conventions shared by all synthetic envs:

- tasks are generated from ``(task_seed, task index)`` (``task_seed`` is a constructor parameter);
- the initial state depends only on the task (``options={"task": ...}``); reset's seed picks the task
  when none is given and seeds the transition noise (slip, cue), so a group of rollouts of one task
  starts from one state whatever seeds it uses;
- success ends the episode with ``goal_reward`` (1.0), a trap ends it with ``trap_reward`` (0.0),
  every other transition pays ``-step_cost`` (0.0); terminal states list no actions;
- an inadmissible or unparseable action is a no-op: state unchanged, reward
  ``invalid_action_reward``, ``info["action_valid"] = False``; it still counts towards ``max_steps``;
- ``max_steps`` truncates (``truncated=True``) and is mirrored in ``model.horizon``;
- ``info`` carries the contract keys plus ``state_index`` (row of ``model``) and ``goal`` (the task
  text); the reset ``info`` also has ``task_index``;
- snapshots (``get_state``/``set_state``, :mod:`agentgym_credit.envs.snapshot`): the configuration is
  the class name, ``_params()``, ``n_tasks``, ``max_steps``, the rewards and ``task_seed``; the
  payload is the task index, the state row, the step count and the restored step's
  ``action_valid`` (the transition noise lives in ``np_random``, which the base class saves).
"""

from __future__ import annotations

import re
from collections import OrderedDict, deque
from collections.abc import Callable, Collection, Hashable, Sequence
from itertools import accumulate
from typing import Any

import numpy as np

from agentgym_credit.envs import snapshot as _snapshot
from agentgym_credit.envs.base import CreditEnv, resolve_task
from agentgym_credit.envs.gridworld.model import TabularModel
from agentgym_credit.envs.snapshot import config_fingerprint
from agentgym_credit.errors import SnapshotError
from agentgym_credit.keys import normalize_text

_WS = re.compile(r"\s+")

Transition = Callable[[Hashable, str], list[tuple[float, Hashable, float, bool]]]
"""``f(state, action) -> [(prob, next_state, reward, terminated), ...]`` over hashable states."""


def canonical_action(text: str) -> str:
    """Lower case, stripped, single spaces: how free action text is matched to admissible strings."""
    return _WS.sub(" ", text).strip().lower()


def build_model(
    start: Hashable,
    actions: Callable[[Hashable], list[str]],
    transition: Transition,
    key: Callable[[Hashable], str],
    observe: Callable[[Hashable], str],
    horizon: int | None,
    initial: Sequence[tuple[float, Hashable]] | None = None,
    max_states: int | None = None,
) -> tuple[TabularModel, list[Hashable]]:
    """Enumerate every state reachable from ``start`` (or from ``initial``) into a ``TabularModel``.

    ``actions(s)`` is empty for terminal states. Outcomes that lead to the same next state are
    merged (probabilities summed) so ``P[s][a]`` lists each next state once. Returns the model and
    the state objects in index order. More than ``max_states`` reachable states is a ``ValueError``
    (an exact model that large is not what the synthetic tasks are for).
    """
    starts = list(initial) if initial is not None else [(1.0, start)]
    index: dict[Hashable, int] = {}
    order: list[Hashable] = []
    for _, s0 in starts:
        if s0 not in index:
            index[s0] = len(order)
            order.append(s0)
    acts: list[list[str]] = []
    table: list[list[list[tuple[float, int, float, bool]]]] = []
    i = 0
    while i < len(order):
        s = order[i]
        names = list(actions(s))
        rows: list[list[tuple[float, int, float, bool]]] = []
        for a in names:
            merged: dict[int, list] = {}
            for p, ns, r, term in transition(s, a):
                if p <= 0.0:
                    continue
                if ns not in index:
                    index[ns] = len(order)
                    order.append(ns)
                    if max_states is not None and len(order) > max_states:
                        raise ValueError(f"more than max_states={max_states} reachable states; "
                                         "make the task smaller")
                j = index[ns]
                if j in merged:
                    if merged[j][1] != r or merged[j][2] != term:
                        raise ValueError(f"state {s!r} action {a!r}: one next state with two rewards")
                    merged[j][0] += p
                else:
                    merged[j] = [p, float(r), bool(term)]
            rows.append([(float(p), j, r, t) for j, (p, r, t) in merged.items()])
        acts.append(names)
        table.append(rows)
        i += 1
    init = np.zeros(len(order))
    for p, s0 in starts:
        init[index[s0]] += p
    model = TabularModel(
        state_keys=[key(s) for s in order],
        actions=acts,
        P=table,
        initial=init,
        observations=[observe(s) for s in order],
        horizon=horizon,
    )
    return model, order


def shortest_plan(model: TabularModel, start: int, goals: Collection[int]) -> list[str]:
    """Fewest actions from state ``start`` to any of ``goals`` along certain (probability 1) outcomes.

    An expert for the synthetic tasks (demonstrations, tests, sanity checks of a layout); raises
    ``ValueError`` when no such path exists.
    """
    goals = set(goals)
    prev: dict[int, tuple[int, str] | None] = {start: None}
    queue = deque([start])
    while queue:
        s = queue.popleft()
        if s in goals:
            path = []
            step = prev[s]
            while step is not None:
                s, a = step
                path.append(a)
                step = prev[s]
            return path[::-1]
        for a, outs in zip(model.actions[s], model.P[s]):
            if len(outs) == 1 and outs[0][1] not in prev:
                prev[outs[0][1]] = (s, a)
                queue.append(outs[0][1])
    raise ValueError(f"no certain path from state {start} to any of {len(goals)} goal states")


class _Compiled:
    """A model flattened into the per-state tuples ``step`` reads (built once per task)."""

    __slots__ = ("model", "action_index", "cum", "outs", "obs_key", "task_id", "goal", "won", "states")

    def __init__(self, model: TabularModel, task_id: str, goal: str, won: Sequence[bool],
                 states: Sequence[Hashable]):
        self.model = model
        self.states = list(states)
        self.won = [bool(w) for w in won]
        if len(self.won) != model.n_states:
            raise ValueError("won needs one flag per state")
        self.task_id = task_id
        self.goal = goal
        self.action_index = [{a: i for i, a in enumerate(acts)} for acts in model.actions]
        self.outs = [[tuple(o) for o in row] for row in model.P]
        self.cum = [[list(accumulate(o[0] for o in outs)) for outs in row] for row in model.P]
        assert model.observations is not None
        self.obs_key = [normalize_text(o) for o in model.observations]


_CACHE: OrderedDict[Hashable, _Compiled] = OrderedDict()
_CACHE_SIZE = 512


class TabularTextEnv(CreditEnv):
    """Text env driven by an exact ``TabularModel`` of the current task (see module docstring).

    A subclass implements ``_task_prefix``, ``_params`` and ``_build``; ``won`` is true once the
    episode reaches a state the subclass flags as a goal state.
    """

    def __init__(
        self,
        *,
        n_tasks: int,
        max_steps: int,
        goal_reward: float = 1.0,
        trap_reward: float = 0.0,
        step_cost: float = 0.0,
        task_seed: int = 0,
        render_mode: str | None = None,
        invalid_action_reward: float = 0.0,
    ):
        super().__init__(render_mode=render_mode, invalid_action_reward=invalid_action_reward)
        if int(n_tasks) < 1:
            raise ValueError(f"n_tasks must be >= 1, got {n_tasks}")
        if int(max_steps) < 1:
            raise ValueError(f"max_steps must be >= 1, got {max_steps}")
        if int(task_seed) < 0:
            raise ValueError(f"task_seed must be >= 0, got {task_seed}")
        if step_cost < 0:
            raise ValueError(f"step_cost must be >= 0 (it is subtracted), got {step_cost}")
        self.n_tasks = int(n_tasks)
        self.max_steps = int(max_steps)
        self.goal_reward = float(goal_reward)
        self.trap_reward = float(trap_reward)
        self.step_cost = float(step_cost)
        self.task_seed = int(task_seed)
        self._task: _Compiled | None = None
        self._s = 0
        self._t = 0
        self._won = False
        self._view: str | None = None  # the text of a look/inventory/examine answer, else None

    # -- to implement ---------------------------------------------------------------------------
    def _task_prefix(self) -> str:
        """Task ids are ``f"{prefix}-{index}"``."""
        raise NotImplementedError

    def _params(self) -> tuple:
        """Everything the generated tasks depend on (the model cache key)."""
        raise NotImplementedError

    def _build(self, task_index: int) -> tuple[TabularModel, str, list[bool], list[Hashable]]:
        """Generate task ``task_index`` (deterministically): ``(model, goal text, won flag per state,
        state objects in index order)``."""
        raise NotImplementedError

    # -- tasks ----------------------------------------------------------------------------------
    def task_ids(self) -> list[str]:
        """Every task id of this env, in index order."""
        return [f"{self._task_prefix()}-{i}" for i in range(self.n_tasks)]

    def task_index(self, task: int | str) -> int:
        """Index of a task given as an ``int`` index or a ``str`` id (``"grid-7"`` or ``"7"``); see
        :func:`~agentgym_credit.envs.base.resolve_task`."""
        prefix = self._task_prefix() + "-"

        def lookup(name: str) -> int | None:
            rest = name[len(prefix):] if name.startswith(prefix) else ""
            return int(rest) if rest.isascii() and rest.isdigit() and int(rest) < self.n_tasks else None

        return resolve_task(task, self.n_tasks, lookup, example=f"{prefix}0")

    def _compiled(self, i: int) -> _Compiled:
        ck = (type(self).__name__, self._params(), self.max_steps, self.goal_reward, self.trap_reward,
              self.step_cost, self.task_seed, i)
        c = _CACHE.get(ck)
        if c is None:
            model, goal, won, states = self._build(i)
            c = _Compiled(model, f"{self._task_prefix()}-{i}", goal, won, states)
            _CACHE[ck] = c
            while len(_CACHE) > _CACHE_SIZE:
                _CACHE.popitem(last=False)
        else:
            _CACHE.move_to_end(ck)
        return c

    def won_states(self, task: int | str) -> list[int]:
        """Indices (rows of ``model_for(task)``) of the states that count as success."""
        return [i for i, w in enumerate(self._compiled(self.task_index(task)).won) if w]

    def model_for(self, task: int | str) -> TabularModel:
        """The exact model of any task (without resetting)."""
        return self._compiled(self.task_index(task)).model

    @property
    def model(self) -> TabularModel:
        """Exact model of the CURRENT task (set by ``reset``; shared between envs with the same
        parameters: treat it as read-only)."""
        if self._task is None:
            raise AttributeError("model is defined after reset(); or call model_for(task)")
        return self._task.model

    @property
    def state_index(self) -> int:
        """Row of ``model`` of the current state."""
        return self._s

    # -- the engine -----------------------------------------------------------------------------
    def _info(self, s: int, valid: bool) -> dict[str, Any]:
        c = self._task
        return {
            "state_key": c.model.state_keys[s],
            "obs_key": c.obs_key[s],
            "admissible_actions": list(c.model.actions[s]),
            "task_id": c.task_id,
            "won": self._won,
            "action_valid": valid,
            "state_index": s,
            "goal": c.goal,
        }

    def _reset_impl(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        task = options.get("task")
        i = int(self.np_random.integers(self.n_tasks)) if task is None else self.task_index(task)
        c = self._task = self._compiled(i)
        init = c.model.initial
        nz = np.flatnonzero(init)
        s = int(nz[0]) if len(nz) == 1 else int(self.np_random.choice(len(init), p=init))
        self._s, self._t, self._won, self._view = s, 0, c.won[s], None
        info = self._info(s, True)
        info["task_index"] = i
        return c.model.observations[s], info

    def _step_impl(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        c = self._task
        s = self._s
        self._t += 1
        truncated = self._t >= self.max_steps
        i = c.action_index[s].get(action)
        if i is None:
            i = c.action_index[s].get(self._canonical(action))
            if i is None:
                info = self._info(s, False)
                self._view = None
                return c.model.observations[s], self.invalid_action_reward, False, truncated, info
        outs = c.outs[s][i]
        if len(outs) == 1:
            _, ns, r, term = outs[0]
        else:
            u = self.np_random.random()
            cum = c.cum[s][i]
            k = 0
            while k < len(cum) - 1 and u >= cum[k]:
                k += 1
            _, ns, r, term = outs[k]
        self._s = ns
        self._won = c.won[ns]
        info = self._info(ns, True)
        view = None
        if c.model.actions[s][i] in self.information_actions and not term:
            view = self._memo_describe(c.task_id, ns, action)
        if view is None:
            self._view = None
            return c.model.observations[ns], r, term, truncated and not term, info
        self._view, info["obs_key"] = view
        self._view_action = action  # what a snapshot keeps: the answer is computed again on restore
        return self._view, r, term, truncated and not term, info

    def _canonical(self, action: str) -> str:
        """Map free text to an admissible string (subclasses add aliases)."""
        return canonical_action(action)

    information_actions: frozenset[str] = frozenset()
    """Admissible actions whose step shows :meth:`_describe`'s answer (Household: ``look``, ``inventory``;
    ``examine X`` is an alias of ``look``); other steps never call it."""

    def _memo_describe(self, task_id: str, s: int, action: str) -> tuple[str, str] | None:
        """``(text, obs_key)`` of :meth:`_describe`'s answer to the action text as played, or ``None``;
        memoized per (task, state, text): the answer is a function of them."""
        memo = self.__dict__.setdefault("_view_memo", {})
        key = (task_id, s, action)
        if key not in memo:
            if len(memo) >= 1 << 16:
                memo.clear()
            text = self._describe(s, canonical_action(action))
            memo[key] = None if text is None else (text, normalize_text(text))
        return memo[key]

    def _describe(self, s: int, action: str) -> str | None:
        """The answer to an information command (``look``, ``inventory``, ``examine X``) played in state
        ``s`` — shown instead of ``model.observations[s]`` — or ``None`` for other actions. Such commands
        do not change the state (``state_key`` stays), only what the step shows (``obs_key`` follows the
        text). Default: none."""
        return None

    # -- snapshots ------------------------------------------------------------------------------
    def _snapshot_config(self) -> Any:
        key = (type(self).__name__, self._params(), self.n_tasks, self.max_steps, self.goal_reward, self.trap_reward,
               self.step_cost, self.task_seed, self.invalid_action_reward)
        cached = self.__dict__.get("_snapshot_fp")
        if cached is None or cached[0] != key:  # memoized (checked against the live values every call)
            cfg = {"class": key[0], "params": _plain(key[1]), "n_tasks": key[2], "max_steps": key[3],
                   "goal_reward": key[4], "trap_reward": key[5], "step_cost": key[6], "task_seed": key[7],
                   "invalid_action_reward": key[8]}
            cached = self._snapshot_fp = (key, config_fingerprint(cfg))
        return cached[1]  # the configuration's fingerprint: plain data that differs when the configuration does

    def _snapshot_payload(self) -> Any:
        info = self._last_info
        return {"task": self.task_index(self._task.task_id), "s": int(self._s),
                "t": int(self._t), "valid": bool(info.get("action_valid", True)), "reset": "task_index" in info,
                "view": self._view_action if self._view is not None else None}

    def _restore_snapshot(self, payload: Any) -> tuple[str, dict[str, Any]]:
        """Every field checked (exact types and ranges; the state must still have actions); the observation,
        including a ``look``/``inventory`` answer, is computed again from the model, never read from the
        snapshot (which holds the command played, not its answer)."""
        name = type(self).__name__
        p = _snapshot.fields(payload, name, {"task", "s", "t", "valid", "reset", "view"})
        i = _snapshot.nat(p["task"], "task", self.n_tasks)
        c = self._compiled(i)
        s = _snapshot.nat(p["s"], "state", c.model.n_states)
        t = _snapshot.nat(p["t"], "step", self.max_steps)
        valid, at_reset = _snapshot.flag(p["valid"], "valid"), _snapshot.flag(p["reset"], "reset")
        action = _snapshot.text(p["view"], "information command", self.max_action_length, optional=True)
        if not c.model.actions[s] or (at_reset and (t != 0 or not valid or action is not None)):
            raise SnapshotError(f"{name} snapshot payload: state {s} at step {t} cannot be a running episode's")
        view = None
        self._task, self._s = c, s  # the answer of an information command reads them
        if action is not None:
            k = c.action_index[s].get(action)
            k = c.action_index[s].get(self._canonical(action)) if k is None else k
            answer = None
            if k is not None and c.model.actions[s][k] in self.information_actions and valid:
                answer = self._memo_describe(c.task_id, s, action)
            if answer is None:
                raise SnapshotError(f"{name} snapshot payload: {action[:80]!r} is no information command in state {s}")
            view = answer[0]
        self._task, self._s, self._t, self._won, self._view = c, s, t, c.won[s], view
        self._view_action = action
        info = self._info(s, valid)
        if at_reset:
            info["task_index"] = i
        if view is not None:
            info["obs_key"] = answer[1]
            return view, info
        return c.model.observations[s], info


def _plain(x: Any) -> Any:
    """Tuples (of tuples) as lists: the configuration as JSON data."""
    return [_plain(v) for v in x] if isinstance(x, (tuple, list)) else x


__all__ = ["TabularTextEnv", "build_model", "shortest_plan", "canonical_action", "Transition"]
