"""Reference behaviour policies for tabular tasks, and an adapter that lets the collector run them.

What lives here:

- :class:`BehaviourPolicy` — the protocol the oracle (:mod:`agentgym_credit.credit.oracle`) evaluates:
  ``window`` (0 = state-based), ``time_invariant``, ``probs(model, s, window, t)`` over
  ``model.actions[s]``, and ``sample(model, s, window, t, rng)``;
- :class:`UniformPolicy` — uniform over admissible actions;
- :class:`NoisyOptimalPolicy` — softmax of Q*/temperature: near-random (large temperature) to
  near-optimal (small); ``temperature=0`` is greedy (uniform over ties);
- :class:`RevisitAvoidingPolicy` — history-window policy that down-weights actions leading back to
  states seen in its window (as an LLM agent with recent history in its prompt tends to);
- :class:`EpsilonMixture` — (1−ε)·policy + ε·uniform;
- :class:`CollectorPolicy` / :func:`as_collector_policy` — a batched ``policy(observations, infos)
  -> list[str]`` for :class:`~agentgym_credit.wrappers.GroupedRolloutCollector`-style loops.

Windows follow :data:`agentgym_credit.credit.oracle.Window`: the last ``W`` ``(state_index,
action_index)`` pairs before the current state. ``t`` is ``None`` for infinite-horizon models.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from agentgym_credit.credit.oracle import PolicyValues, Window, normalize_window, optimal_values, push_window
from agentgym_credit.envs.gridworld.model import TabularModel


@runtime_checkable
class BehaviourPolicy(Protocol):
    """What the oracle needs from a behaviour policy (see module docstring)."""

    window: int
    time_invariant: bool

    def probs(self, model: TabularModel, s: int, window: Window, t: int | None) -> np.ndarray: ...

    def sample(self, model: TabularModel, s: int, window: Window, t: int | None,
               rng: np.random.Generator) -> int: ...


class PolicyBase:
    """Shared ``sample`` for the reference policies; subclasses implement :meth:`probs`."""

    window: int = 0
    time_invariant: bool = True

    def probs(self, model: TabularModel, s: int, window: Window, t: int | None) -> np.ndarray:
        raise NotImplementedError

    def sample(self, model: TabularModel, s: int, window: Window, t: int | None,
               rng: np.random.Generator) -> int:
        """Draw an action index of ``model.actions[s]``."""
        p = self.probs(model, s, window, t)
        if len(p) == 0:
            raise ValueError(f"state {model.state_keys[s]!r} has no admissible action to sample")
        return int(rng.choice(len(p), p=p))


def _uniform(k: int) -> np.ndarray:
    return np.full(k, 1.0 / k) if k else np.zeros(0)


class UniformPolicy(PolicyBase):
    """Uniform over the admissible actions (state-based).

    >>> from agentgym_credit.envs.gridworld.model import TabularModel
    >>> m = TabularModel(["a"], [["x", "y"]], [[[(1.0, 0, 0.0, True)], [(1.0, 0, 0.0, True)]]], [1.0])
    >>> UniformPolicy().probs(m, 0, (), None).tolist()
    [0.5, 0.5]
    """

    def probs(self, model: TabularModel, s: int, window: Window, t: int | None) -> np.ndarray:
        return _uniform(len(model.actions[s]))

    def __repr__(self) -> str:
        return "UniformPolicy()"


class NoisyOptimalPolicy(PolicyBase):
    """Softmax of Q* / temperature (Q* from :func:`optimal_values` at ``gamma``).

    With a finite-horizon model Q* depends on ``t``, so this policy does too
    (``time_invariant=False``). Q* is computed once per model object and cached.
    """

    time_invariant = False

    def __init__(self, temperature: float, gamma: float = 0.95):
        if not temperature >= 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        self.temperature = float(temperature)
        self.gamma = float(gamma)
        self._cache: tuple[TabularModel, PolicyValues] | None = None

    def optimal(self, model: TabularModel) -> PolicyValues:
        """Q*/V* of ``model`` (cached)."""
        if self._cache is None or self._cache[0] is not model:
            self._cache = (model, optimal_values(model, self.gamma))
        return self._cache[1]

    def probs(self, model: TabularModel, s: int, window: Window, t: int | None) -> np.ndarray:
        k = len(model.actions[s])
        if k == 0:
            return np.zeros(0)
        q = self.optimal(model).q_values(s, 0 if t is None else t)
        if self.temperature == 0:
            best = q >= q.max() - 1e-12
            return best / best.sum()
        z = np.exp((q - q.max()) / self.temperature)
        return z / z.sum()

    def __repr__(self) -> str:
        return f"NoisyOptimalPolicy(temperature={self.temperature}, gamma={self.gamma})"


class RevisitAvoidingPolicy(PolicyBase):
    """History-window policy: weight ``1 − (1 − factor)·P(next state was seen)`` per action.

    "Seen" means the current state or a state in the window (the last ``window`` states). With
    ``factor=1`` this is uniform; with ``factor→0`` actions that surely lead back are never taken
    (if every action does, the policy is uniform).
    """

    def __init__(self, window: int = 2, factor: float = 0.1):
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        if not 0.0 <= factor <= 1.0:
            raise ValueError(f"factor must be in [0, 1], got {factor}")
        self.window = int(window)
        self.factor = float(factor)

    def probs(self, model: TabularModel, s: int, window: Window, t: int | None) -> np.ndarray:
        k = len(model.actions[s])
        seen = {s} | {ws for ws, _ in window}
        w = np.empty(k)
        for i, outcomes in enumerate(model.P[s]):
            back = sum(p for p, ns, _, term in outcomes if not term and ns in seen)
            w[i] = 1.0 - (1.0 - self.factor) * back
        total = w.sum()
        return w / total if total > 1e-12 else _uniform(k)

    def __repr__(self) -> str:
        return f"RevisitAvoidingPolicy(window={self.window}, factor={self.factor})"


class EpsilonMixture(PolicyBase):
    """``(1 − epsilon)·policy + epsilon·uniform``; inherits the policy's window and time dependence."""

    def __init__(self, policy: BehaviourPolicy, epsilon: float):
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1], got {epsilon}")
        self.policy = policy
        self.epsilon = float(epsilon)
        self.window = int(getattr(policy, "window", 0))
        self.time_invariant = bool(getattr(policy, "time_invariant", True))

    def probs(self, model: TabularModel, s: int, window: Window, t: int | None) -> np.ndarray:
        k = len(model.actions[s])
        base = np.asarray(self.policy.probs(model, s, window, t), dtype=np.float64)
        return (1.0 - self.epsilon) * base + self.epsilon * _uniform(k)

    def __repr__(self) -> str:
        return f"EpsilonMixture({self.policy!r}, epsilon={self.epsilon})"


class CollectorPolicy:
    """Batched text policy ``(observations, infos) -> actions`` that runs a :class:`BehaviourPolicy`.

    Entry ``i`` of each call is env slot ``i``. The adapter reads the true state from
    ``info["state_index"]`` (or ``model.index(info["state_key"])``), keeps each slot's window
    and step counter, and samples with its own seeded ``numpy`` Generator. A slot starts a new
    episode on its first call, when ``info["history_t"] == 0`` (the
    :class:`~agentgym_credit.wrappers.HistoryFingerprint` wrapper sets it), or after
    :meth:`reset` names it. ``last_steps[i]`` is ``(state_index, action_index, t, window)`` of
    slot ``i``'s latest decision — what :meth:`PolicyValues.advantages_for_steps` takes.
    """

    def __init__(self, policy: BehaviourPolicy, model: TabularModel, seed: int | None = 0):
        self.policy = policy
        self.model = model
        self.window_size = int(getattr(policy, "window", 0))
        self.rng = np.random.default_rng(seed)
        self._windows: dict[int, Window] = {}
        self._t: dict[int, int] = {}
        self.last_steps: dict[int, tuple[int, int, int, Window]] = {}

    def reset(self, env_index: int | Sequence[int] | None = None) -> None:
        """Mark env slot(s) as starting a new episode (all slots when ``None``)."""
        if env_index is None:
            self._windows.clear()
            self._t.clear()
            return
        for i in [env_index] if isinstance(env_index, int) else env_index:
            self._windows.pop(int(i), None)
            self._t.pop(int(i), None)

    def _state(self, info: dict[str, Any]) -> int:
        if "state_index" in info:
            return int(info["state_index"])
        return self.model.index(info["state_key"])

    def __call__(self, observations: Sequence[str], infos: Sequence[dict[str, Any]]) -> list[str]:
        if len(observations) != len(infos):
            raise ValueError(f"{len(observations)} observations but {len(infos)} infos")
        out: list[str] = []
        for i, info in enumerate(infos):
            s = self._state(info)
            ht = info.get("history_t")
            if i not in self._t or ht == 0:
                self._windows[i], self._t[i] = (), 0
            t = int(ht) if ht is not None else self._t[i]
            w = self._windows[i]
            horizon_t = None if self.model.horizon is None else t
            a = self.policy.sample(self.model, s, w, horizon_t, self.rng)
            self.last_steps[i] = (s, a, t, w)
            self._windows[i] = push_window(w, s, a, self.window_size)
            self._t[i] = t + 1
            out.append(self.model.actions[s][a])
        return out

    def window_of(self, env_index: int) -> Window:
        """Current window of a slot (``()`` if it has not started)."""
        return normalize_window(self._windows.get(env_index, ()), self.window_size)


def as_collector_policy(policy: BehaviourPolicy, model: TabularModel, seed: int | None = 0) -> CollectorPolicy:
    """Wrap a behaviour policy as a batched text policy (see :class:`CollectorPolicy`)."""
    return CollectorPolicy(policy, model, seed)


__all__ = [
    "BehaviourPolicy",
    "PolicyBase",
    "UniformPolicy",
    "NoisyOptimalPolicy",
    "RevisitAvoidingPolicy",
    "EpsilonMixture",
    "CollectorPolicy",
    "as_collector_policy",
]
