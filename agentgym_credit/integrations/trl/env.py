"""``credit/*`` envs as TRL ``environment_factory`` environments, and the task dataset that feeds them.

TRL's ``GRPOTrainer(environment_factory=...)`` builds one environment instance per rollout, calls
``reset(**row)`` with the dataset row (the returned text is appended to the user message), exposes
every public method but ``reset``/``get_reward`` as a tool, and scores a finished rollout with
``get_reward()``. Here:

- :class:`CreditToolEnv`: one ``credit/*`` env (wrapped in
  :class:`~agentgym_credit.wrappers.HistoryFingerprint`) with a single tool, ``act(action)``, that plays
  one action and returns the next observation. Every step is kept as a :class:`StepRecord` (state key
  of the state the action was taken in, ``obs_key``, history keys, reward, done) and every ``act``
  call in :attr:`CreditToolEnv.calls`: what the step-level credit needs;
- :class:`CreditEnvFactory`: ``CreditEnvFactory("credit/GridWorld-v0", env_kwargs=...)`` is the
  ``environment_factory``; a non-``credit/*`` id is a ``ValueError`` here, before any training;
  ``observation="compact"`` and ``max_result_chars`` bound what each tool result adds to the conversation
  (:data:`OBSERVATIONS`; the only context bound that TRL 1.16 trains on as it samples, see
  :mod:`agentgym_credit.integrations.trl.trainer`);
- :func:`task_dataset`: one conversational row per (task, reset seed). TRL's sampler repeats each row
  ``num_generations`` times in a row, so the generations of one prompt reset with the same task and the
  same seed: one group sharing one initial state (the trainer checks it).

An episode ends when the env terminates or truncates (``act`` then only answers that the episode is
over), or when the policy ends its turn without calling ``act``: the trainer then plays the env's
own invalid no-op (the empty action) once as the closing step, so that ending the episode early is a
step with the env's invalid-action reward, at the state where the policy stopped (see
:mod:`agentgym_credit.integrations.trl.trainer`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from agentgym_credit.envs.registration import ENVS
from agentgym_credit.errors import ResetNeeded
from agentgym_credit.keys import stable_hash
from agentgym_credit.wrappers.history import HistoryFingerprint

TOOL_NAME = "act"
"""The one tool a :class:`CreditToolEnv` exposes to the policy."""

EPISODE_OVER = "The episode is over."
"""How every tool result that ends (or follows the end of) an episode ends; the trainer stops generating for a
rollout whose last tool result ends with it."""

DEFAULT_INSTRUCTION = (
    "You are an agent in a text environment. Each turn, call the `act` tool with exactly one action, "
    "written as one of the admissible actions. Keep acting until the episode is over."
)


@dataclass(frozen=True)
class StepRecord:
    """One env step played through the tool (or the closing no-op).

    ``state_key``/``obs_key``/``history_keys`` are the hashed keys of the state the action was taken
    in (as in the collector's rows); ``closing`` marks the no-op the trainer plays when the policy
    ended its turn without calling ``act``.
    """

    t: int
    action: str
    reward: float
    terminated: bool
    truncated: bool
    state_key: int
    obs_key: int
    history_keys: tuple[int, ...]
    action_valid: bool
    won: bool
    closing: bool = False

    @property
    def done(self) -> bool:
        """The episode ended with this step."""
        return self.terminated or self.truncated or self.closing


def credit_env_id(env_id: str) -> str:
    """``env_id`` without a ``module:`` prefix, checked to be a registered ``credit/*`` env."""
    if not isinstance(env_id, str):
        raise TypeError(f"env_id must be a str such as 'credit/GridWorld-v0', got {type(env_id).__name__}")
    name = env_id.split(":", 1)[-1]
    known = [e.id for e in ENVS]
    if name not in known:
        raise ValueError(
            f"{env_id!r} is not a credit/* env: the TRL bridge needs the credit env contract (state_key, "
            f"obs_key, admissible_actions in info). Registered: {', '.join(known)}"
        )
    return name


class CreditToolEnv:
    """A ``credit/*`` env for TRL's ``environment_factory``: ``reset``, one tool ``act``, ``get_reward``.

    Public attributes (not methods, so TRL does not expose them as tools): ``records`` (the steps of
    the current episode), ``calls`` (one entry per ``act`` call: the index of the step it played in
    ``records``, or ``None`` when the episode was already over), ``initial_state_key``, ``task``,
    ``seed``, ``finished``.
    """

    def __init__(self, env_id: str, env_kwargs: dict[str, Any] | None = None, history_depth: int = 2, *,
                 observation: str = "full", max_result_chars: int | None = None):
        import agentgym_credit  # noqa: F401  (registers the credit/ namespace)

        self.env_id = credit_env_id(env_id)
        self.observation, self.max_result_chars = _check_rendering(observation, max_result_chars)
        self._shown: list[str] | None = None  # the admissible actions the policy last saw listed
        self._env = HistoryFingerprint(gym.make(self.env_id, **(env_kwargs or {})), depth=int(history_depth))
        self.records: list[StepRecord] = []
        self.calls: list[int | None] = []
        self.initial_state_key: int | None = None
        self.task: Any = None
        self.seed: int | None = None
        self.finished = False
        self._info: dict[str, Any] | None = None

    def reset(self, *, seed: int | None = None, task: Any = None, **row: Any) -> str:
        """Reset with the row's ``task`` and reset ``seed``; return the first observation (TRL appends it
        to the user message). ``seed`` is required: the generations of one prompt must share one initial
        state. Other row columns (``prompt``...) are ignored."""
        if seed is None:
            raise ValueError("CreditToolEnv.reset needs the row's reset 'seed' (build the dataset with "
                             "task_dataset), so that the generations of one prompt share one initial state")
        options = None if task is None else {"task": task}
        obs, info = self._env.reset(seed=int(seed), options=options)
        self.records, self.calls = [], []
        self.task, self.seed, self.finished = task, int(seed), False
        self._info = info
        self._shown = None
        self.initial_state_key = stable_hash(info["state_key"])
        goal = info.get("goal")
        head = f"Goal: {goal}\n" if goal else ""
        return "\n\n" + head + self._render(obs, info, None, first=True)

    def act(self, action: str) -> str:
        """Play one action in the environment and return what happens next.

        Args:
            action: The action to play, written as one of the admissible actions.

        Returns:
            The next observation with the admissible actions, or a note that the episode is over.
        """
        if self._info is None:
            raise ResetNeeded("act called before reset")
        if self.finished:
            self.calls.append(None)
            return f"This action was not played. {EPISODE_OVER}"
        self.calls.append(len(self.records))
        return self._play(str(action), closing=False)

    def get_reward(self) -> float:
        """The episode return: the sum of the rewards of every step played (0.0 for none)."""
        return float(sum(r.reward for r in self.records))

    def _close(self) -> None:
        """End a running episode with the env's invalid no-op (the policy stopped without acting)."""
        if self._info is None:
            raise ResetNeeded("_close called before reset")
        if not self.finished:
            self._play("", closing=True)

    def _play(self, action: str, *, closing: bool) -> str:
        info = self._info
        obs, reward, terminated, truncated, nxt = self._env.step(action)
        self.records.append(StepRecord(
            t=len(self.records), action=action, reward=float(reward), terminated=bool(terminated),
            truncated=bool(truncated), state_key=stable_hash(info["state_key"]),
            obs_key=stable_hash(info["obs_key"]), history_keys=tuple(int(h) for h in info["history_keys"]),
            action_valid=bool(nxt.get("action_valid", True)), won=bool(nxt.get("won", False)),
            closing=closing,
        ))
        self._info = nxt
        self.finished = bool(terminated or truncated or closing)
        return self._render(obs, nxt, (terminated, truncated))

    def _render(self, obs: str, info: dict[str, Any], ended: tuple[bool, bool] | None, first: bool = False) -> str:
        """The text the policy sees: the observation, then the admissible actions, or the episode's end.

        ``observation="compact"`` (not the first observation): the admissible actions only where they changed
        since the policy last saw them listed (``Admissible actions: as before.``; or what was added and removed,
        when that is shorter than the list). ``max_result_chars``: the text before the end-of-episode line is cut
        to that many characters (``[...]`` marks the cut); the end line is always kept whole."""
        if ended is not None and (ended[0] or ended[1]):
            why = "you won" if info.get("won") else ("step limit reached" if ended[1] and not ended[0] else "lost")
            return f"{self._cap(obs)}\nResult: {why}. {EPISODE_OVER}"
        acts = [str(a) for a in (info.get("admissible_actions") or [])]
        shown, self._shown = self._shown, list(acts)
        if not acts:
            return self._cap(obs)
        text = f"{obs}\nAdmissible actions: {'; '.join(acts)}"
        if self.observation == "compact" and not first and shown is not None:
            added = [a for a in acts if a not in set(shown)]
            removed = [a for a in shown if a not in set(acts)]
            if not added and not removed:
                text = f"{obs}\nAdmissible actions: as before."
            elif len(added) + len(removed) < len(acts):
                parts = ([f"now also {'; '.join(added)}"] if added else []) + (
                    [f"no longer {'; '.join(removed)}"] if removed else [])
                text = f"{obs}\nAdmissible actions: as before, {', '.join(parts)}."
        return self._cap(text)

    def _cap(self, text: str) -> str:
        cap = self.max_result_chars
        if cap is None or len(text) <= cap:
            return text
        return text[: max(cap - len(_CUT), 0)] + _CUT


OBSERVATIONS = ("full", "compact")
"""How a :class:`CreditToolEnv` renders a tool result: ``"full"`` (the observation and every admissible action,
each turn) or ``"compact"`` (the admissible actions only where they changed: each result carries what is new)."""

_CUT = " [...]"


def _check_rendering(observation: str, max_result_chars: int | None) -> tuple[str, int | None]:
    if observation not in OBSERVATIONS:
        raise ValueError(f"observation must be one of {', '.join(map(repr, OBSERVATIONS))}, got {observation!r}")
    if max_result_chars is not None and (isinstance(max_result_chars, bool) or int(max_result_chars) < len(_CUT) + 1):
        raise ValueError(f"max_result_chars must be None or an int >= {len(_CUT) + 1}, got {max_result_chars!r}")
    return observation, None if max_result_chars is None else int(max_result_chars)


class CreditEnvFactory:
    """``environment_factory`` for ``GRPOTrainer``: each call builds a fresh :class:`CreditToolEnv`.

    >>> factory = CreditEnvFactory("credit/GridWorld-v0", env_kwargs={"size": 4})
    >>> env = factory()
    >>> env.reset(seed=0, task=0).startswith("\\n\\nGoal:")
    True
    >>> CreditEnvFactory("CartPole-v1")
    Traceback (most recent call last):
    ...
    ValueError: 'CartPole-v1' is not a credit/* env: ...
    """

    def __init__(self, env_id: str, *, env_kwargs: dict[str, Any] | None = None, history_depth: int = 2,
                 observation: str = "full", max_result_chars: int | None = None):
        self.env_id = credit_env_id(env_id)
        self.env_kwargs = dict(env_kwargs or {})
        if int(history_depth) < 0:
            raise ValueError(f"history_depth must be >= 0, got {history_depth}")
        self.history_depth = int(history_depth)
        self.observation, self.max_result_chars = _check_rendering(observation, max_result_chars)

    def __call__(self) -> CreditToolEnv:
        return CreditToolEnv(self.env_id, self.env_kwargs, self.history_depth, observation=self.observation,
                             max_result_chars=self.max_result_chars)

    def __repr__(self) -> str:
        extra = "" if (self.observation, self.max_result_chars) == ("full", None) else (
            f", observation={self.observation!r}, max_result_chars={self.max_result_chars!r}")
        return (f"CreditEnvFactory({self.env_id!r}, env_kwargs={self.env_kwargs!r}, "
                f"history_depth={self.history_depth}{extra})")


def task_dataset(env_id: str, tasks: int | Sequence[Any], *, seeds: Sequence[int] | None = None, seed: int = 0,
                 instruction: str = DEFAULT_INSTRUCTION) -> Any:
    """A ``datasets.Dataset`` with one row per task: ``prompt`` (one user message), ``task``, ``seed``.

    ``tasks``: a count (tasks ``0..n-1``) or the task ids/indices themselves. ``seeds``: the reset seed
    of each task (default ``seed + i``). TRL's ``RepeatSampler`` yields each row ``num_generations``
    times in a row, so every generation of a prompt resets the env with the same task and seed: one
    group, one initial state. Do not list a prompt several times yourself (that makes several groups).
    """
    from datasets import Dataset

    credit_env_id(env_id)
    task_list = list(range(int(tasks))) if isinstance(tasks, int) else list(tasks)
    if not task_list:
        raise ValueError("task_dataset needs at least one task")
    seed_list = [int(seed) + i for i in range(len(task_list))] if seeds is None else [int(s) for s in seeds]
    if len(seed_list) != len(task_list):
        raise ValueError(f"got {len(seed_list)} seeds for {len(task_list)} tasks")
    prompt = [{"role": "user", "content": str(instruction)}]
    return Dataset.from_dict({"prompt": [prompt] * len(task_list), "task": task_list, "seed": seed_list})


__all__ = ["CreditEnvFactory", "CreditToolEnv", "DEFAULT_INSTRUCTION", "EPISODE_OVER", "OBSERVATIONS", "StepRecord",
           "TOOL_NAME",
           "credit_env_id", "task_dataset"]
