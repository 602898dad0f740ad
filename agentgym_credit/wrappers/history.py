"""``HistoryFingerprint``: HGPO's historical contexts as stable 64-bit fingerprints.

For step t with states s_0..s_t the level-k context is C_k(t) = (s_{t-k}, ..., s_t), k = 0..K.
The wrapper adds to ``info``:

- ``history_keys``: a new ``np.ndarray[uint64]`` of shape ``[K+1]`` every step; entry k is the
  fingerprint of C_k(t), or :data:`~agentgym_credit.keys.MISSING` (0) when t < k (no padding: a
  missing level is marked, never faked);
- ``history_key_full``: fingerprint of the whole history (s_0, ..., s_t);
- ``history_t``: t, the number of steps taken in this episode.

With ``include_actions=True`` a context also holds the actions between its states,
C_k(t) = (s_{t-k}, a_{t-k}, ..., a_{t-1}, s_t). Level 0 is always the current state alone, so it
equals GiGPO's anchor group under either option. A rejected action (``action_valid=False``) still
counts as a step: the state repeats in the window, as it does in the trajectory.

A fingerprint is :func:`~agentgym_credit.keys.window_fingerprint` of the context's element hashes
(:func:`~agentgym_credit.keys.stable_hash` of each state key and action text), in order. It is a
function of the window's contents only: the same window gives the same key whatever came before
it, in every process. Because the fingerprint is a left fold of :func:`~agentgym_credit.keys.mix64`,
the level-k key at t is the level-(k-1) key at t-1 with s_t (after a_{t-1}) mixed in, so a step costs
K + 1 integer mixes (2(K + 1) with actions) however long the episode; ``history_key_full`` is the
same fold over the whole history (it equals the level-t key while t <= K).

**Snapshots.** :meth:`HistoryFingerprint.get_state` wraps the env's own snapshot
(``env.unwrapped.get_state()``) with the wrapper's window (the carried fingerprints, the last step's
levels and ``t``), behind its own checksum (:mod:`agentgym_credit.envs.snapshot`);
:meth:`HistoryFingerprint.set_state` restores both, so the steps after a restore get the same
``history_keys`` as the original run's. A snapshot taken with another ``depth``/``include_actions``/
``key`` is refused (``SnapshotError``). Gymnasium's ``OrderEnforcing`` between the wrapper and the env
and ``PassiveEnvChecker`` are told that the env is running (a restored env is a running episode).

- :class:`HistoryFingerprint` — the wrapper.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from agentgym_credit.envs import snapshot as _snapshot
from agentgym_credit.errors import SnapshotError
from agentgym_credit.keys import _M0, _M1, _MASK64, MISSING, WINDOW_SEED, mix64, stable_hash

_MEMO_MAX = 1 << 17
_STATES: dict[object, tuple[int, int]] = {}
_ACTIONS: dict[object, int] = {}
_U64 = np.dtype(np.uint64)


def _state_hashes(key: str | bytes) -> tuple[int, int]:
    """``(stable_hash(key), mix64(WINDOW_SEED, that))``, memoized (states repeat; BLAKE2b is the cost)."""
    try:
        return _STATES[key]
    except KeyError:
        pass
    h = stable_hash(key)
    if len(_STATES) >= _MEMO_MAX:
        _STATES.clear()
    out = _STATES[key] = (h, mix64(WINDOW_SEED, h))
    return out


def _action_hash(action: Any) -> int:
    """``stable_hash`` of the action text (``repr`` of a non-text action), memoized."""
    key = action if isinstance(action, (str, bytes)) else repr(action)
    try:
        return _ACTIONS[key]
    except KeyError:
        pass
    if len(_ACTIONS) >= _MEMO_MAX:
        _ACTIONS.clear()
    h = _ACTIONS[key] = stable_hash(key)
    return h


def _roll(prev: list[int], x: int) -> list[int]:
    """``[mix64(p, x) if p else MISSING for p in prev]`` with ``mix64`` inlined (mixes the action in)."""
    out = []
    for z in prev:
        if z:
            z = (z * _M0 + x) & _MASK64
            z = ((z ^ (z >> 32)) * _M1) & _MASK64
            out.append((z ^ (z >> 29)) or 1)
        else:
            out.append(MISSING)
    return out


class HistoryFingerprint(gym.Wrapper[str, str, str, str]):
    """Add ``history_keys`` (levels 0..K), ``history_key_full`` and ``history_t`` to ``info``.

    Keeps the full fingerprint and levels 0..K-1 of the last step and extends each by the new
    state (after the action, with ``include_actions``): K + 1 :func:`~agentgym_credit.keys.mix64`
    per step, plus a lookup of the state key's hash in a process-wide bounded memo.

    >>> import gymnasium as gym, agentgym_credit
    >>> env = HistoryFingerprint(gym.make("credit/GridWorld-v0"), depth=2)
    >>> _, info = env.reset(seed=0)
    >>> info["history_keys"].tolist()[1:]  # t = 0: levels 1 and 2 do not exist yet
    [0, 0]
    """

    def __init__(self, env: gym.Env, depth: int = 4, include_actions: bool = False, key: str = "state_key"):
        super().__init__(env)
        if depth < 0:
            raise ValueError(f"depth must be >= 0, got {depth}")
        self.depth = int(depth)
        self.include_actions = bool(include_actions)
        self.key = key
        # [level 0, ..., level K-1, history_key_full] of the last step: what the next step extends.
        self._carry: list[int] = [MISSING] * (self.depth + 1)
        self._levels = np.zeros(self.depth + 1, dtype=_U64)
        self._t = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        h0 = _state_hashes(info[self.key])[1]  # the window (s_0) alone
        levels = [h0] + [MISSING] * self.depth
        info["history_keys"] = self._levels = np.array(levels, dtype=_U64)
        levels[-1] = h0
        self._carry = levels
        self._t = 0
        info["history_key_full"] = h0
        info["history_t"] = 0
        return obs, info

    def step(self, action: str):
        obs, reward, terminated, truncated, info = self.env.step(action)
        key = info[self.key]
        try:
            h, h0 = _STATES[key]
        except KeyError:
            h, h0 = _state_hashes(key)
        carry = _roll(self._carry, _action_hash(action)) if self.include_actions else self._carry
        new = [h0]  # level 0: the state alone
        for z in carry:  # _roll(carry, h), inlined: this loop is the wrapper's main cost
            if z:
                z = (z * _M0 + h) & _MASK64
                z = ((z ^ (z >> 32)) * _M1) & _MASK64
                new.append((z ^ (z >> 29)) or 1)
            else:
                new.append(MISSING)
        full = new.pop()
        info["history_keys"] = np.array(new, dtype=_U64)  # levels 0..K
        new[-1] = full  # level K is not carried
        self._carry = new
        self._t = t = self._t + 1
        info["history_key_full"] = full
        info["history_t"] = t
        self._levels = info["history_keys"]
        return obs, reward, terminated, truncated, info

    # -- snapshots ----------------------------------------------------------------------------------
    def _window_config(self) -> str:
        memo = self.__dict__.get("_window_fp")
        if memo is None:  # memoized: the fingerprint costs more than the rest of a snapshot
            memo = self._window_fp = _snapshot.ConfigMemo()
        return memo({"depth": self.depth, "include_actions": self.include_actions, "key": self.key})

    def get_state(self) -> bytes:
        """The env's snapshot with this wrapper's window (bytes; see the module docstring)."""
        inner = self.env.unwrapped.get_state()
        window = {"carry": [int(z) for z in self._carry], "levels": [int(z) for z in self._levels],
                  "t": int(self._t)}
        meta = _snapshot.pack(type(self).__name__, self._window_config(), None, window)
        return _HEADER + b" " + str(len(meta)).encode() + b"\n" + meta + inner

    def set_state(self, snapshot: bytes) -> tuple[str, dict[str, Any]]:
        """Restore a :meth:`get_state` snapshot (env and window); returns the restored step's ``(obs, info)``
        with its ``history_keys``, ``history_key_full`` and ``history_t``."""
        if not isinstance(snapshot, (bytes, bytearray, memoryview)):
            raise SnapshotError(f"a snapshot is the bytes get_state() returned, got {type(snapshot).__name__}")
        head, sep, rest = bytes(snapshot).partition(b"\n")
        parts = head.split(b" ")
        if not sep or len(parts) != 2 or parts[0] != _HEADER or not parts[1].isdigit():
            raise SnapshotError("not a HistoryFingerprint snapshot (take it with the wrapper's get_state(); "
                                "env.unwrapped.set_state takes the env's own)")
        if len(parts[1]) > 9 or int(parts[1]) > len(rest):  # digits counted first: int() of 4,301+ digits raises ValueError
            raise SnapshotError(f"HistoryFingerprint snapshot: its window length {parts[1][:20].decode()!r} is longer "
                                "than the snapshot")
        n = int(parts[1])
        _, window = _snapshot.unpack(rest[:n], type(self).__name__, self._window_config())
        w = _snapshot.fields(window, "HistoryFingerprint", {"carry", "levels", "t"})
        t = _snapshot.nat(w["t"], "history step")
        if w["carry"].__class__ is not list or w["levels"].__class__ is not list or not (
                len(w["carry"]) == len(w["levels"]) == self.depth + 1):
            raise SnapshotError("HistoryFingerprint snapshot window has the wrong number of levels")
        carry = [_snapshot.nat(z, "history fingerprint", 2**64) for z in w["carry"]]
        levels = [_snapshot.nat(z, "history fingerprint", 2**64) for z in w["levels"]]
        obs, info = self.env.unwrapped.set_state(rest[n:])
        _mark_reset(self.env, obs, info)
        self._carry, self._levels, self._t = carry, np.array(levels, dtype=_U64), t
        info["history_keys"] = self._levels.copy()
        info["history_key_full"] = carry[-1]
        info["history_t"] = t
        return obs, info


_HEADER = b"agc-history/1"


def _mark_reset(env: gym.Env, obs: str, info: dict[str, Any]) -> None:
    """Tell gymnasium's wrappers in ``env``'s chain that the env is running: ``OrderEnforcing`` that it
    has been reset, a ``PassiveEnvChecker`` that has not checked a step yet that the restored step is
    the data its first step check compares with."""
    while isinstance(env, gym.Wrapper):
        if isinstance(env, gym.wrappers.OrderEnforcing):
            env._has_reset = True
        elif isinstance(env, gym.wrappers.PassiveEnvChecker) and not env.checked_step:
            env._previous_data = (obs, info)
        env = env.env


__all__ = ["HistoryFingerprint"]
