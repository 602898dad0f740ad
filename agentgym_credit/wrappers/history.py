"""``HistoryFingerprint``: HGPO's historical contexts as stable 64-bit fingerprints.

For step t with states s_0..s_t the level-k context is C_k(t) = (s_{t-k}, ..., s_t), k = 0..K.
The wrapper adds to ``info``:

- ``history_keys``: ``np.ndarray[uint64]`` of shape ``[K+1]``; entry k is the fingerprint of
  C_k(t), or :data:`~agentgym_credit.keys.MISSING` (0) when t < k (no padding: a missing level is
  marked, never faked);
- ``history_key_full``: fingerprint of the whole history (s_0, ..., s_t);
- ``history_t``: t, the number of steps taken in this episode.

With ``include_actions=True`` a context also holds the actions between its states,
C_k(t) = (s_{t-k}, a_{t-k}, ..., a_{t-1}, s_t). Level 0 is always the current state alone, so it
equals GiGPO's anchor group under either option. A rejected action (``action_valid=False``) still
counts as a step: the state repeats in the window, as it does in the trajectory.
"""

from __future__ import annotations

from collections import deque
from hashlib import blake2b
from typing import Any

import gymnasium as gym
import numpy as np

from agentgym_credit.keys import MISSING, stable_hash

_KEY_HASHES: dict[object, int] = {}
_KEY_CACHE_MAX = 1 << 17
_WINDOWS: dict[tuple, np.ndarray] = {}
_WINDOW_CACHE_MAX = 1 << 16
_SEQ = b"seq:"


def _key_hash(key: str | bytes) -> int:
    """``stable_hash`` memoized: state keys repeat a lot, BLAKE2b on every step is the wrapper's cost."""
    h = _KEY_HASHES.get(key)
    if h is None:
        h = stable_hash(key)
        if len(_KEY_HASHES) >= _KEY_CACHE_MAX:
            _KEY_HASHES.clear()
        _KEY_HASHES[key] = h
    return h


class HistoryFingerprint(gym.Wrapper[str, str, str, str]):
    """Add ``history_keys`` (levels 0..K) and ``history_key_full`` to ``info``.

    The fingerprints of a window of recent states (and actions) are memoized (shared by all
    wrappers of a process, bounded), so a step mostly costs one dictionary lookup plus one hash for
    ``history_key_full``.

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
        self._states: deque[int] = deque(maxlen=self.depth + 1)
        self._actions: deque[int] = deque(maxlen=max(self.depth, 1))
        self._full = 0
        self._t = 0

    def _levels(self, states: list[int], actions: list[int]) -> np.ndarray:
        """Fingerprints of C_0..C_K for a window of state (and action) hashes.

        Every context is a suffix of the window's sequence ``s, (a, s)*``, so the window is packed
        once and each level hashes a suffix of it: ``hash_sequence(C_k)`` without re-packing.
        """
        out = np.full(self.depth + 1, MISSING, dtype=np.uint64)
        n = len(states)
        if self.include_actions and n > 1:
            seq = [states[0]]
            for a, s in zip(actions[len(actions) - (n - 1):], states[1:]):
                seq.extend((a, s))
            stride = 16
        else:
            seq, stride = states, 8
        buf = b"".join(h.to_bytes(8, "little") for h in seq)
        end = len(buf)
        for k in range(min(self.depth + 1, n)):
            digest = blake2b(_SEQ + buf[end - 8 - stride * k:], digest_size=8).digest()
            out[k] = int.from_bytes(digest, "little") or 1
        return out

    def _annotate(self, info: dict[str, Any]) -> dict[str, Any]:
        if self.include_actions:
            ck = (self.depth, tuple(self._states), tuple(self._actions))
        else:
            ck = (self.depth, tuple(self._states))
        out = _WINDOWS.get(ck)
        if out is None:
            out = self._levels(list(self._states), list(self._actions))
            if len(_WINDOWS) >= _WINDOW_CACHE_MAX:
                _WINDOWS.clear()
            _WINDOWS[ck] = out
        info["history_keys"] = out.copy()
        info["history_key_full"] = self._full
        info["history_t"] = self._t
        return info

    def _chain(self, h: int) -> None:
        # hash_sequence([self._full, h]) == stable_hash(b"seq:" + both as 8 bytes), inlined: it runs every step.
        buf = _SEQ + self._full.to_bytes(8, "little") + h.to_bytes(8, "little")
        self._full = int.from_bytes(blake2b(buf, digest_size=8).digest(), "little") or 1

    def _push_state(self, info: dict[str, Any]) -> None:
        s = _key_hash(info[self.key])
        self._states.append(s)
        self._chain(s)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        self._states.clear()
        self._actions.clear()
        self._full, self._t = stable_hash(b"history-start"), 0
        self._push_state(info)
        return obs, self._annotate(info)

    def step(self, action: str):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._t += 1
        if self.include_actions:
            a = _key_hash(action if isinstance(action, (str, bytes)) else repr(action))
            self._actions.append(a)
            self._chain(a)
        self._push_state(info)
        return obs, reward, terminated, truncated, self._annotate(info)


__all__ = ["HistoryFingerprint"]
