"""``TabularModel``: the exact model a synthetic env exposes as ``env.unwrapped.model``.

It is a superset of Gymnasium's tabular shape ``P[s][a] = [(prob, next_state, reward, terminated),
...]`` (FrozenLake, Taxi): states are indices ``0..n-1`` with canonical ``state_keys``; ``actions[s]``
lists the admissible action strings of state ``s`` and ``P[s][i]`` is the outcome list of action
``actions[s][i]``. ``observations[s]`` is the text shown in ``s`` (equal texts for different
states = aliasing). ``horizon`` is the env's step limit (truncation after that many steps) or
``None``. The ground-truth oracle (``agentgym_credit.credit.oracle``) reads this object.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

Outcome = tuple[float, int, float, bool]


@dataclass
class TabularModel:
    """Finite MDP with text actions (see module docstring)."""

    state_keys: list[str]
    actions: list[list[str]]
    P: list[list[list[Outcome]]]
    initial: np.ndarray
    observations: list[str] | None = None
    horizon: int | None = None
    _index: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.initial = np.asarray(self.initial, dtype=np.float64)
        self._index = {k: i for i, k in enumerate(self.state_keys)}
        if len(self._index) != len(self.state_keys):
            raise ValueError("state_keys must be unique")
        self.validate()

    @property
    def n_states(self) -> int:
        return len(self.state_keys)

    def index(self, state_key: str) -> int:
        """State index of a ``state_key`` (as found in ``info``)."""
        try:
            return self._index[state_key]
        except KeyError:
            raise KeyError(f"state_key {state_key!r} is not a state of this model") from None

    def action_index(self, s: int, action: str) -> int:
        """Index of an admissible action string in ``actions[s]``."""
        try:
            return self.actions[s].index(action)
        except ValueError:
            raise KeyError(f"{action!r} is not admissible in state {self.state_keys[s]!r}") from None

    def is_terminal(self, s: int) -> bool:
        """A state with no admissible action ends the episode."""
        return len(self.actions[s]) == 0

    def validate(self) -> None:
        n = self.n_states
        if len(self.actions) != n or len(self.P) != n:
            raise ValueError("actions and P need one entry per state")
        if self.initial.shape != (n,) or not np.isclose(self.initial.sum(), 1.0):
            raise ValueError("initial must be a distribution over the states")
        for s in range(n):
            if len(self.P[s]) != len(self.actions[s]):
                raise ValueError(f"state {s}: P has {len(self.P[s])} actions, actions lists {len(self.actions[s])}")
            for i, outs in enumerate(self.P[s]):
                total = sum(p for p, *_ in outs)
                # np.isclose(total, 1.0) spelled out: validate runs once per (state, action), np per call is slow
                if not abs(total - 1.0) <= 1e-8 + 1e-5 or any(not 0 <= ns < n for _, ns, _, _ in outs):
                    raise ValueError(f"state {s} action {self.actions[s][i]!r}: bad outcome list {outs}")

    @classmethod
    def from_gym_P(
        cls,
        P: Mapping[int, Mapping[int, Sequence[Outcome]]],
        initial: Sequence[float] | np.ndarray,
        action_names: Sequence[str] | None = None,
        horizon: int | None = None,
    ) -> TabularModel:
        """Wrap a Gymnasium toy-text ``P`` (e.g. ``FrozenLake``'s ``env.unwrapped.P``).

        Terminal states of such envs still list actions; a state reached only with
        ``terminated=True`` keeps them, and the oracle stops at ``terminated`` anyway.
        """
        states = sorted(P)
        acts = [[(action_names[a] if action_names else str(a)) for a in sorted(P[s])] for s in states]
        table = [[[(float(p), int(ns), float(r), bool(d)) for p, ns, r, d in P[s][a]] for a in sorted(P[s])]
                 for s in states]
        return cls([str(s) for s in states], acts, table, np.asarray(initial, dtype=np.float64), horizon=horizon)


__all__ = ["TabularModel", "Outcome"]
