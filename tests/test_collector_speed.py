"""The collector-overhead benchmark compares equal work: its bare loop records what the collector records."""

import gymnasium as gym
import numpy as np

import agentgym_credit  # noqa: F401
from agentgym_credit.bench.speed.collector_speed import GRID_ID, bare_loop, first_action
from agentgym_credit.wrappers.collector import GroupedRolloutCollector, group_seed
from agentgym_credit.wrappers.history import HistoryFingerprint


def test_bare_loop_records_the_collectors_columns():
    groups, n, max_steps, kw = 3, 4, 12, {"size": 5, "slip": 0.3}
    seeds = [group_seed(0, g) for g in range(groups)]
    envs = [HistoryFingerprint(gym.make(GRID_ID, **kw), depth=3) for _ in range(groups * n)]
    bare = bare_loop(envs, seeds, n, max_steps)
    with GroupedRolloutCollector(GRID_ID, n, env_kwargs=kw, max_steps=max_steps, history_depth=3,
                                 progress=False) as col:
        batch = col.collect(first_action, tasks=groups, seeds=seeds)
    assert len(batch) == len(bare["t"]) > groups * n  # a few steps per trajectory, some cut off
    assert batch.terminated.any() and (batch.done & ~batch.terminated).any()
    for name in ("group_id", "traj_id", "t", "reward", "done", "terminated", "state_key", "obs_key",
                 "history_keys"):
        np.testing.assert_array_equal(getattr(batch, name), bare[name], err_msg=name)
    np.testing.assert_array_equal(batch.action_valid, bare["valid"])
    np.testing.assert_array_equal(batch.traj.final_state_key, bare["final_state_key"])
    np.testing.assert_array_equal(batch.traj.final_obs_key, bare["final_obs_key"])
    assert batch.observation == bare["observation"] and batch.action == bare["action"]
    assert batch.admissible_actions == bare["admissible_actions"]


def test_history_matrix_fast_path_takes_only_native_uint64_rows():
    from agentgym_credit.wrappers.recording import history_matrix

    rows = [np.array([1, 2], dtype=np.uint64), np.array([3, 4], dtype=np.uint64)]
    out = history_matrix(rows, 2, 2)
    assert out.flags.writeable and out.tolist() == [[1, 2], [3, 4]]
    out[0, 0] = 9  # writable, and not a view of the rows
    assert rows[0][0] == 1
    strided = [np.arange(6, dtype=np.uint64)[::3], np.arange(6, dtype=np.uint64)[1::3]]  # not contiguous
    assert history_matrix(strided, 2, 2).tolist() == [[0, 3], [1, 4]]
    swapped = [np.array([1, 2], dtype=">u8"), np.array([3, 4], dtype=np.uint64)]  # same size, other byte order
    assert history_matrix(swapped, 2, 2).tolist() == [[1, 2], [3, 4]]
    floats = [np.array([1.0, 2.0]), np.array([3, 4], dtype=np.uint64)]  # same size, not integers
    assert history_matrix(floats, 2, 2).tolist() == [[1, 2], [3, 4]]


def test_narrow_bare_loop_is_the_earlier_record_of_the_same_rollouts():
    """The baseline of the <= 1.2x bare-loop ratio: the same rollouts, only texts, reward, done and keys."""
    groups, n, max_steps, kw = 2, 3, 10, {"size": 5, "slip": 0.3}
    seeds = [group_seed(0, g) for g in range(groups)]
    make = lambda: [HistoryFingerprint(gym.make(GRID_ID, **kw), depth=3) for _ in range(groups * n)]  # noqa: E731
    full, narrow = bare_loop(make(), seeds, n, max_steps), bare_loop(make(), seeds, n, max_steps, narrow=True)
    assert set(narrow) == {"group_id", "traj_id", "t", "reward", "done", "state_key", "obs_key", "history_keys",
                           "observation", "action"}
    for name, col in narrow.items():
        np.testing.assert_array_equal(np.asarray(col), np.asarray(full[name]), err_msg=name)
