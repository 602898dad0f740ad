"""RolloutBatch: StepArrays view, readable trajectories, Parquet round trip, concatenation, group stats."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from test_collector_envs import ChainEnv, FaultyEnv, chain_policy, hash_policy

from agentgym_credit import credit
from agentgym_credit.wrappers import GroupedRolloutCollector, RolloutBatch

pa = pytest.importorskip("pyarrow", reason="Parquet needs `pip install -e '.[data]'`")


def _policy_with_extras(obs, infos):
    acts = hash_policy(obs, infos)
    return [{"action": a if i["rollout"]["t"] != 1 else "dance", "logprob": -0.25 * i["rollout"]["t"],
             "token_ids": np.arange(i["rollout"]["t"] + 1)} for a, i in zip(acts, infos)]


@pytest.fixture(scope="module")
def batch() -> RolloutBatch:
    col = GroupedRolloutCollector(functools.partial(FaultyEnv, n=3, slip=0.2), group_size=4, max_steps=8,
                                  history_depth=2, progress=False, seed=5)
    with pytest.warns(UserWarning):
        return col.collect(_policy_with_extras, tasks=["a", "bad-reset", "bad-step", "b"])


def test_steps_feed_the_estimators(batch):
    steps = batch.steps
    assert steps.n == int((~batch.traj.failed[batch.traj_id]).sum())
    assert np.array_equal(steps.valid, batch.action_valid[~batch.traj.failed[batch.traj_id]])
    assert not batch.action_valid[batch.t == 1].any()  # "dance" is a no-op the env rejects
    adv = credit.advantages("gigpo", steps)
    assert adv.shape == (steps.n,) and np.all(np.isfinite(adv))
    stats = batch.group_stats()
    assert stats.n_steps == steps.n and stats.n_trajectories == int((~batch.traj.failed).sum())


def test_trajectories_are_readable(batch):
    trajs = list(batch.trajectories())
    assert len(trajs) == batch.num_trajectories == 16
    tr = trajs[0]
    assert len(tr) == batch.traj.length[0] and tr.actions[1] == "dance"
    assert tr.extras[0]["logprob"] == 0.0 and tr.ret == pytest.approx(sum(tr.rewards))
    assert "trajectory 0 (group 0, copy 0, task 'a')" in str(tr)
    bad = trajs[4]
    assert bad.failed and len(bad) == 0 and "FAILED: reset failed" in str(bad)


def test_parquet_round_trip(batch, tmp_path):
    path = tmp_path / "batch.parquet"
    batch.save(path)
    back = RolloutBatch.load(path)
    for name in ("group_id", "traj_id", "t", "reward", "done", "terminated", "truncated", "action_valid",
                 "state_key", "obs_key", "history_keys", "state_index"):
        a, b = getattr(batch, name), getattr(back, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert back.observation == batch.observation and back.action == batch.action
    assert back.task_id == batch.task_id
    assert back.traj.to_dict() == batch.traj.to_dict()
    assert back.extras[3] == {"logprob": -0.25 * batch.t[3], "token_ids": list(range(batch.t[3] + 1))}
    assert back.meta["seed"] == 5
    # other tools read the step table directly
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    assert table.num_rows == len(batch) and "extra.token_ids" in table.column_names
    assert table.column("failed").to_pylist() == batch.traj.failed[batch.traj_id].tolist()


def test_load_rejects_foreign_files(tmp_path):
    import pyarrow.parquet as pq

    path = tmp_path / "other.parquet"
    pq.write_table(pa.table({"x": [1, 2]}), path)
    with pytest.raises(ValueError, match="not written by RolloutBatch.save"):
        RolloutBatch.load(path)


def test_unstorable_extra_is_a_clear_error(tmp_path):
    col = GroupedRolloutCollector(ChainEnv, group_size=2, max_steps=2, progress=False)
    b = col.collect(lambda obs, infos: [{"action": "right", "blob": object()} for _ in obs], tasks=1)
    with pytest.raises(TypeError, match="policy extra 'blob'"):
        b.save(tmp_path / "x.parquet")


def test_concat_renumbers_groups_and_trajectories(batch):
    col = GroupedRolloutCollector(ChainEnv, group_size=2, max_steps=4, history_depth=2, progress=False)
    other = col.collect(chain_policy, tasks=3)
    both = RolloutBatch.concat([batch, other])
    assert both.num_groups == 4 + 3 and both.num_trajectories == 16 + 6 and len(both) == len(batch) + len(other)
    assert both.traj.traj_id.tolist() == list(range(22))
    assert both.traj.group_id[16:].tolist() == [4, 4, 5, 5, 6, 6]
    assert np.array_equal(both.group_id[len(batch):], other.group_id + 4)
    assert both.failed_groups.tolist() == batch.failed_groups.tolist()
    assert both.steps.n == batch.steps.n + other.steps.n
    shallow = GroupedRolloutCollector(ChainEnv, group_size=2, history_depth=0, progress=False)
    with pytest.raises(ValueError, match="history depths"):
        RolloutBatch.concat([batch, shallow.collect(chain_policy, tasks=1)])
