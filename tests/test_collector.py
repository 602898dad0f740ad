"""GroupedRolloutCollector: grouping, seeding, the batched policy contract, step limit, backends agree."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from test_collector_envs import ChainEnv, DriftEnv, chain_policy, hash_policy

from agentgym_credit.errors import GroupMismatchError
from agentgym_credit.keys import stable_hash
from agentgym_credit.wrappers import GroupedRolloutCollector, PolicyOutput, RolloutBatch
from agentgym_credit.wrappers.collector import group_seed
from agentgym_credit.wrappers.progress import RolloutProgress

SLIPPY_GRID = {"size": 5, "slip": 0.3, "n_tasks": 4, "max_steps": 30}


def _collector(**kw):
    kw.setdefault("progress", False)
    return GroupedRolloutCollector(**kw)


def test_groups_share_initial_state_and_rows_are_consistent():
    col = _collector(env=functools.partial(ChainEnv, n=4, slip=0.3), group_size=4, max_steps=12, history_depth=2)
    batch = col.collect(hash_policy, tasks=["a", "b", "c"])
    assert batch.num_groups == 3 and batch.num_trajectories == 12
    first = batch.t == 0
    assert np.all(batch.state_key[first] == stable_hash("pos=0"))
    assert batch.task_id[0] == "a" and set(batch.traj.task_id) == {"a", "b", "c"}
    # rows sorted by trajectory then t, lengths and returns match the trajectory table
    assert np.all(np.diff(batch.traj_id) >= 0)
    assert np.array_equal(np.bincount(batch.traj_id, minlength=12), batch.traj.length)
    assert np.allclose(np.bincount(batch.traj_id, weights=batch.reward, minlength=12), batch.traj.ret)
    assert batch.history_keys.shape == (len(batch), 3)
    assert np.all(batch.history_keys[batch.t < 2, 2] == 0) and np.all(batch.history_keys[batch.t >= 2, 2] != 0)
    assert batch.state_index.tolist()[:1] == [0]
    # every trajectory ends with done=True exactly once; won ones are terminated, others truncated at 12
    last = np.r_[batch.traj_id[1:] != batch.traj_id[:-1], True]
    assert np.array_equal(batch.done, last)
    assert np.all(batch.traj.won == batch.traj.terminated)
    assert np.all(batch.traj.length[batch.traj.truncated] == 12)
    steps = batch.steps
    assert steps.n == len(batch) and steps.num_levels == 3


def test_policy_called_once_per_step_for_the_whole_batch():
    calls = []

    def policy(obs, infos):
        calls.append(len(obs))
        assert all(isinstance(o, str) for o in obs)
        return chain_policy(obs, infos)

    col = _collector(env=functools.partial(ChainEnv, n=2), group_size=3, max_steps=20)
    batch = col.collect(policy, tasks=2)
    assert calls[0] == 6  # all copies of both groups in one call
    assert len(calls) == int(batch.traj.length.max())
    assert sum(calls) == len(batch)
    assert calls == sorted(calls, reverse=True)


def test_policy_output_conventions_record_extras():
    def policy(obs, infos):
        out = []
        for k, i in enumerate(infos):
            tid = i["rollout"]["traj_id"]
            if k % 3 == 0:
                out.append("right")
            elif k % 3 == 1:
                out.append({"action": "right", "logprob": -0.5, "token_ids": [tid, 7]})
            else:
                out.append(PolicyOutput("right", {"logprob": -1.0}))
        return out

    col = _collector(env=ChainEnv, group_size=3, max_steps=3)
    batch = col.collect(policy, tasks=1)
    assert batch.action == ["right"] * len(batch)
    by_traj = {int(tr): e for tr, t, e in zip(batch.traj_id, batch.t, batch.extras) if t == 0}
    assert by_traj[0] == {}
    assert by_traj[1] == {"logprob": -0.5, "token_ids": [1, 7]}
    assert by_traj[2] == {"logprob": -1.0}


def test_seeding_is_reproducible_and_copies_diverge():
    kw = dict(env="credit/GridWorld-v0", env_kwargs=SLIPPY_GRID, group_size=6, max_steps=15, seed=3)
    a = _collector(**kw).collect(hash_policy, tasks=[0, 1])
    b = _collector(**kw).collect(hash_policy, tasks=[0, 1])
    assert a.traj.seed.tolist() == [group_seed(3, 0)] * 6 + [group_seed(3, 1)] * 6
    assert np.array_equal(a.state_key, b.state_key) and a.action == b.action
    # same start in a group, but slip makes the copies' state sequences differ
    for g in range(2):
        seqs = {tuple(a.state_key[a.traj_id == tr]) for tr in np.flatnonzero(a.traj.group_id == g)}
        assert len({s[0] for s in seqs}) == 1 and len(seqs) > 1
    # a second collect call continues with new seeds; explicit seeds reproduce the first call
    col = _collector(**kw)
    col.collect(hash_policy, tasks=[0, 1])
    c = col.collect(hash_policy, tasks=[0, 1])
    assert c.traj.seed[0] == group_seed(3, 2)
    d = col.collect(hash_policy, tasks=[0, 1], seeds=[group_seed(3, 0), group_seed(3, 1)])
    assert np.array_equal(d.state_key, a.state_key)


def test_group_mismatch_names_the_task():
    col = _collector(env=DriftEnv, group_size=3)
    with pytest.raises(GroupMismatchError, match="task 'kitchen'"):
        col.collect(chain_policy, tasks=["kitchen"])


def test_step_limit_and_waves():
    col = _collector(env=functools.partial(ChainEnv, n=50), group_size=2, max_steps=4, max_active_groups=2)
    batch = col.collect(chain_policy, tasks=5)
    assert batch.num_groups == 5 and batch.traj.length.tolist() == [4] * 10
    assert batch.traj.truncated.all() and batch.truncated[batch.done].all()
    assert sorted(set(batch.group_id.tolist())) == [0, 1, 2, 3, 4]


def test_invalid_arguments_are_rejected():
    with pytest.raises(ValueError, match="backend"):
        GroupedRolloutCollector(ChainEnv, backend="threads")
    with pytest.raises(ValueError, match="group_size"):
        GroupedRolloutCollector(ChainEnv, group_size=0)
    with pytest.raises(TypeError, match="env must be"):
        GroupedRolloutCollector(3)
    with pytest.raises(ValueError, match="env_kwargs"):
        GroupedRolloutCollector(ChainEnv, env_kwargs={"n": 3})
    col = _collector(env=ChainEnv, group_size=2)
    with pytest.raises(ValueError, match="seeds"):
        col.collect(chain_policy, tasks=["a"], seeds=[1, 2])
    with pytest.raises(TypeError, match="tasks"):
        col.collect(chain_policy, tasks="a")


def test_sync_and_subprocess_give_identical_batches():
    kw = dict(env="credit/GridWorld-v0", env_kwargs=SLIPPY_GRID, group_size=4, max_steps=20, seed=11)
    sync = _collector(**kw).collect(hash_policy, tasks=[0, 1, 2])
    with _collector(backend="subprocess", num_workers=2, **kw) as col:
        sub = col.collect(hash_policy, tasks=[0, 1, 2])
    assert_same_batch(sync, sub)


def assert_same_batch(a: RolloutBatch, b: RolloutBatch) -> None:
    for name in ("group_id", "traj_id", "t", "reward", "done", "state_key", "obs_key", "history_keys",
                 "state_index", "action_valid"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.observation == b.observation and a.action == b.action and a.task_id == b.task_id
    assert a.traj.to_dict() == b.traj.to_dict()


def test_progress_bar_shows_trajectories_and_can_be_turned_off(capsys):
    pytest.importorskip("tqdm")
    GroupedRolloutCollector(ChainEnv, group_size=2, max_steps=3, progress=True).collect(chain_policy, tasks=2)
    err = capsys.readouterr().err
    assert "rollouts" in err and "/4" in err and "traj" in err
    bar = RolloutProgress(total=4, min_interval=0.0)
    bar.update(finished=2, steps=10)
    assert bar._bar.n == 2 and "steps=10" in bar._bar.postfix and "sps=" in bar._bar.postfix
    bar.close()
    capsys.readouterr()
    GroupedRolloutCollector(ChainEnv, group_size=2, max_steps=3, progress=False).collect(chain_policy, tasks=2)
    assert capsys.readouterr().err == ""
