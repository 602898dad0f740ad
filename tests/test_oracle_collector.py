"""End to end: the collector runs a reference policy through the adapter; the oracle scores every row."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import agentgym_credit  # noqa: F401
from agentgym_credit.credit.oracle import episode_windows, evaluate_policy
from agentgym_credit.credit.policies import RevisitAvoidingPolicy, as_collector_policy
from agentgym_credit.wrappers import GroupedRolloutCollector


def test_collector_rows_get_exact_advantages():
    env = gym.make("credit/GridWorld-v0").unwrapped
    task = env.task_ids()[3]
    model = env.model_for(task)
    pol = RevisitAvoidingPolicy(window=2, factor=0.2)
    vals = evaluate_policy(model, pol, gamma=0.95)
    adapter = as_collector_policy(pol, model, seed=0, with_extras=True)
    collector = GroupedRolloutCollector("credit/GridWorld-v0", group_size=4, max_steps=model.horizon,
                                        progress=False, seed=0)
    try:
        batch = collector.collect(adapter, tasks=[task, task])
    finally:
        collector.close()
    a = np.array([e["action_index"] for e in batch.extras])
    windows = [tuple(map(tuple, e["window"])) for e in batch.extras]
    assert [model.actions[s][i] for s, i in zip(batch.state_index, a)] == list(batch.action)
    # the adapter's windows are the trajectories' own (state, action) tails
    for tid in np.unique(batch.traj_id):
        rows = np.flatnonzero(batch.traj_id == tid)
        rows = rows[np.argsort(batch.t[rows])]
        assert [windows[r] for r in rows] == episode_windows(batch.state_index[rows].tolist(), a[rows].tolist(), 2)
    adv = vals.advantages_for_steps(batch.state_index, a, batch.t, windows)
    assert np.all(np.isfinite(adv)) and len(adv) == len(batch)
    assert np.any(adv > 0) and np.any(adv < 0)
