"""Small ``CreditEnv`` test envs for the collector tests (importable by spawned workers and Ray actors).

- ``ChainEnv``: walk right along a chain to the end; ``slip`` flips a move (drawn from ``np_random``).
- ``FaultyEnv``: a ``ChainEnv`` that raises in ``reset`` for task ``"bad-reset"`` and, for task
  ``"bad-step"``, in ``step`` 2 of the copies whose post-reset RNG draws below 0.5; task ``"hang"``
  sleeps for a minute in ``step`` 2; task ``"interrupt"`` raises ``KeyboardInterrupt`` in ``step`` 2;
  task ``"unsendable"`` puts a lock (which no process boundary can carry) in ``info`` at ``step`` 2.
- ``DriftEnv``: ignores the reset seed (a per-process counter picks the start), so copies disagree.
- ``chain_policy`` / ``hash_policy``: deterministic batched policies.
- ``alive(pid)``: whether a process exists; ``assert_only_faulty_failed(batch)``: the trajectories of
  the ``"interrupt"`` and ``"unsendable"`` tasks failed (with their errors), every other one did not.
"""

from __future__ import annotations

import itertools
import os
import threading
import time

import numpy as np

from agentgym_credit.envs.base import CreditEnv
from agentgym_credit.keys import stable_hash


class ChainEnv(CreditEnv):
    def __init__(self, n: int = 5, slip: float = 0.0):
        super().__init__()
        self.n, self.slip = n, slip

    def _reset_impl(self, options):
        self.pos = 0
        self.task = str(options.get("task", "chain"))
        return self._obs()

    def _obs(self):
        info = {"state_key": f"pos={self.pos}", "admissible_actions": ["left", "right"], "task_id": self.task,
                "won": self.pos == self.n, "state_index": self.pos}
        return f"You are at {self.pos} of {self.n}.", info

    def _step_impl(self, action):
        if action not in ("left", "right"):
            obs, info = self._obs()
            info["action_valid"] = False
            return obs, 0.0, False, False, info
        d = 1 if action == "right" else -1
        if self.slip and self.np_random.random() < self.slip:
            d = -d
        self.pos = max(0, self.pos + d)
        obs, info = self._obs()
        won = self.pos == self.n
        return obs, float(won), won, False, info


class SlowToStart:
    """A ``ChainEnv(n)`` factory whose unpickling sleeps ``seconds`` while the file ``marker`` exists: a Ray actor
    made with it as an argument then takes that long to start (its arguments are unpickled at creation)."""

    def __init__(self, marker: str, seconds: float, n: int = 50):
        self.marker, self.seconds, self.n = marker, seconds, n

    def __call__(self) -> ChainEnv:
        return ChainEnv(n=self.n)

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        if os.path.exists(self.marker):
            time.sleep(self.seconds)


class FaultyEnv(ChainEnv):
    def _reset_impl(self, options):
        if options.get("task") == "bad-reset":
            raise RuntimeError("boom in reset")
        self.t = 0
        return super()._reset_impl(options)

    def _step_impl(self, action):
        self.t += 1
        if self.task == "bad-step" and self.t == 2 and self.np_random.random() < 0.5:
            raise RuntimeError("boom in step")
        if self.task == "hang" and self.t == 2:
            time.sleep(60)
        if self.task == "interrupt" and self.t == 2:
            raise KeyboardInterrupt("env raised KeyboardInterrupt")
        out = super()._step_impl(action)
        if self.task == "unsendable" and self.t == 2:
            out[4]["blob"] = threading.Lock()
        return out


_counter = itertools.count()


class DriftEnv(ChainEnv):
    def _reset_impl(self, options):
        obs, info = super()._reset_impl(options)
        self.pos = next(_counter) % 3
        return self._obs()


def chain_policy(obs, infos):
    """Right twice, then left, forever: episodes of a slip-free chain take a while."""
    return ["left" if i["rollout"]["t"] % 3 == 2 else "right" for i in infos]


def hash_policy(obs, infos):
    """A pseudo-random but deterministic choice among the admissible actions."""
    out = []
    for o, i in zip(obs, infos):
        acts = i["admissible_actions"]
        out.append(acts[stable_hash(f"{o}|{i['rollout']['traj_id']}|{i['rollout']['t']}") % len(acts)])
    return out


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def assert_only_faulty_failed(batch) -> None:
    tt = batch.traj
    bad = np.isin(np.array(tt.task_id), ["interrupt", "unsendable"])
    assert tt.failed[bad].all() and not tt.failed[~bad].any() and not tt.retries.any()
    errors = dict(zip(tt.task_id, tt.error))
    assert "KeyboardInterrupt" in errors["interrupt"] and "could not be sent back" in errors["unsendable"]
