"""The collector's fast paths give exactly what the plain code would: memoized key hashes, rows
recorded as steps return, history keys joined in one piece (sync backend; fast)."""

from __future__ import annotations

import functools

import gymnasium as gym
import numpy as np
import pytest
from test_collector_envs import ChainEnv

from agentgym_credit.keys import stable_hash
from agentgym_credit.wrappers import CollectionFailed, GroupedRolloutCollector
from agentgym_credit.wrappers.recording import history_matrix
from agentgym_credit.wrappers.workers import HashMemo


def test_hash_memo_equals_stable_hash_and_stays_bounded():
    memo = HashMemo()
    memo.max_size = 4
    keys = [f"pos={i}" for i in range(10)] + [b"raw", "pos=3", "x" * (HashMemo.max_len + 1)]
    assert [memo[k] for k in keys] == [stable_hash(k) for k in keys]
    assert len(memo) <= 4 and "x" * (HashMemo.max_len + 1) not in memo
    with pytest.raises(TypeError, match="keys must be str or bytes"):
        memo[3]  # noqa: B018


class _ListObsKeyEnv(gym.Env):
    """Every info complete, but step 1's ``obs_key`` is a list (unhashable, and not a key)."""

    observation_space = action_space = gym.spaces.Text(8)

    def _info(self, obs_key):
        return {"state_key": "s", "obs_key": obs_key, "admissible_actions": ["go"], "task_id": "t", "won": False}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return "start", self._info("start")

    def step(self, action):
        return "next", 0.0, False, False, self._info(["not", "a", "key"])


def test_unhashable_key_fails_its_trajectory_with_the_clear_error():
    col = GroupedRolloutCollector(_ListObsKeyEnv, 2, max_steps=3, progress=False)
    with pytest.raises(CollectionFailed, match="keys must be str or bytes, got list") as err:
        col.collect(lambda obs, infos: ["go"] * len(obs), tasks=1)
    batch = err.value.batch
    assert batch.traj.failed.all() and len(batch) == 0
    assert all("keys must be str or bytes, got list" in e for e in batch.traj.error)


def test_rows_record_what_the_policy_saw():
    seen: dict[tuple[int, int], tuple] = {}

    def policy(obs, infos):
        for o, i in zip(obs, infos):
            r = i["rollout"]
            seen[r["traj_id"], r["t"]] = (o, i["history_keys"].copy(), i["state_index"], stable_hash(i["state_key"]))
        return ["right" if (i["rollout"]["t"] + i["rollout"]["copy"]) % 3 else "left" for i in infos]

    col = GroupedRolloutCollector(functools.partial(ChainEnv, n=3, slip=0.2), 3, max_steps=8, history_depth=2,
                                  progress=False)
    batch = col.collect(policy, tasks=2)
    assert len(seen) == len(batch) > 0
    for k, (tr, t) in enumerate(zip(batch.traj_id.tolist(), batch.t.tolist())):
        o, hk, si, sk = seen[tr, t]
        assert batch.observation[k] == o and batch.state_index[k] == si and batch.state_key[k] == sk
        assert np.array_equal(batch.history_keys[k], hk)


def test_history_matrix_converts_other_arrays_like_astype():
    rows = [np.array([1, 2, 3], dtype=np.uint64), np.array([4, 5, 6], dtype=np.int64)]
    out = history_matrix(rows, 2, 3)
    assert out.dtype == np.uint64 and out.tolist() == [[1, 2, 3], [4, 5, 6]]
    fast = [np.array([7, 8], dtype=np.uint64), np.array([9, 10], dtype=np.uint64)]
    joined = history_matrix(fast, 2, 2)
    fast[0][0] = 0  # the matrix is a fresh array
    assert joined.tolist() == [[7, 8], [9, 10]]
    assert history_matrix([], 0, 3).shape == (0, 3)


def test_progress_bar_closes_with_the_final_figures():
    pytest.importorskip("tqdm")
    from agentgym_credit.wrappers.progress import RolloutProgress

    bar = RolloutProgress(2)
    bar.update(0, 0)  # the first update sets the postfix; later ones within 0.25 s are throttled
    bar.update(2, 10)
    tq = bar._bar
    bar.close()
    assert "steps=10" in tq.postfix
