"""``HistoryFingerprint`` (rolled forward for speed) gives exactly the fingerprints of its definition.

The reference below recomputes C_k(t) from the whole recorded trajectory with the public
``stable_hash`` / ``window_fingerprint``, window by window, as the module docstring defines them.
"""

from __future__ import annotations

import numpy as np
import pytest

from agentgym_credit.envs.gridworld import CueCorridorEnv, GridWorldEnv
from agentgym_credit.keys import MISSING, stable_hash, window_fingerprint
from agentgym_credit.wrappers.history import HistoryFingerprint


def _reference(states: list[str], actions: list[str], depth: int, include_actions: bool):
    hs = [stable_hash(s) for s in states]
    ha = [stable_hash(a) for a in actions]
    t = len(hs) - 1
    levels = []
    for k in range(depth + 1):
        if k > t:
            levels.append(MISSING)
            continue
        seq = [hs[t - k]]
        for j in range(t - k, t):
            if include_actions:
                seq.append(ha[j])
            seq.append(hs[j + 1])
        levels.append(window_fingerprint(seq))
    whole = [hs[0]]
    for j in range(t):
        whole += [ha[j], hs[j + 1]] if include_actions else [hs[j + 1]]
    return levels, window_fingerprint(whole)


@pytest.mark.parametrize("include_actions", [False, True])
@pytest.mark.parametrize("depth", [0, 1, 3])
def test_fingerprints_match_the_definition(depth, include_actions):
    rng = np.random.default_rng(depth)
    for make in (lambda: GridWorldEnv(size=4, n_tasks=2, max_steps=25), lambda: CueCorridorEnv(n_tasks=2)):
        env = HistoryFingerprint(make(), depth=depth, include_actions=include_actions)
        for ep in range(4):
            _, info = env.reset(seed=ep)
            states, actions = [info["state_key"]], []
            done = False
            while True:
                levels, full = _reference(states, actions, depth, include_actions)
                assert info["history_keys"].dtype == np.uint64
                assert info["history_keys"].tolist() == levels
                assert info["history_key_full"] == full
                assert info["history_t"] == len(actions)
                if done:
                    break
                acts = info["admissible_actions"] + ["bogus"]
                a = acts[int(rng.integers(len(acts)))]
                _, _, term, trunc, info = env.step(a)
                states.append(info["state_key"])
                actions.append(a)
                done = term or trunc


def test_returned_arrays_are_not_shared():
    env = HistoryFingerprint(GridWorldEnv(size=4, n_tasks=1), depth=2)
    _, info = env.reset(seed=0)
    info["history_keys"][:] = 5
    _, info2 = env.reset(seed=0)
    assert info2["history_keys"].tolist()[1:] == [MISSING, MISSING]


def test_state_hash_cache_changes_no_value():
    """Clearing the process-wide state-hash memo mid-episode (as its bound does) gives the same keys."""
    from agentgym_credit.wrappers import history

    def run(clear: bool):
        env = HistoryFingerprint(GridWorldEnv(size=4, n_tasks=1), depth=2, include_actions=True)
        _, info = env.reset(seed=3)
        keys = [info["history_keys"].tolist()]
        for i in range(12):
            if clear:
                history._STATES.clear()
                history._ACTIONS.clear()
            _, _, term, trunc, info = env.step(info["admissible_actions"][i % len(info["admissible_actions"])])
            keys.append(info["history_keys"].tolist() + [info["history_key_full"]])
            if term or trunc:
                break
        return keys

    assert run(clear=False) == run(clear=True)
