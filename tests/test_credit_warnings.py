"""Named warnings where the numbers are right but surely not what was meant (issue 42)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from agentgym_credit.credit import ESTIMATORS, StepArrays, advantages
from agentgym_credit.errors import CreditWarning, NoHistoryWarning, NoRewardVarianceWarning


def _batch(rewards_per_traj: list[list[float]], group_of_traj: list[int], levels: int = 1) -> StepArrays:
    rows = [(g, i, t, r, t == len(rs) - 1) for i, (g, rs) in enumerate(zip(group_of_traj, rewards_per_traj))
            for t, r in enumerate(rs)]
    g, tr, t, r, d = (np.array(c) for c in zip(*rows))
    key = (t % 3).astype(np.uint64) + 1
    hist = None if levels == 1 else np.stack([key + np.uint64(k * 10) for k in range(levels)], axis=1)
    return StepArrays(group_id=g, traj_id=tr, t=t, reward=r.astype(float), done=d, state_key=key, obs_key=key,
                      history_keys=hist)


def test_a_batch_without_reward_signal_warns_by_name_and_every_estimator_gives_zeros():
    never_wins = _batch([[0, 0, 0], [0, 0], [0, 0, 0, 0], [0]], [0, 0, 1, 1], levels=2)
    for name in ("grpo", "gigpo", "hgpo", "graph"):
        with pytest.warns(NoRewardVarianceWarning, match="no reward signal in any of the batch's 2 groups"):
            adv = advantages(name, never_wins)
        assert np.all(adv == 0), name
    assert issubclass(NoRewardVarianceWarning, CreditWarning) and issubclass(CreditWarning, UserWarning)


def test_one_group_with_signal_or_returns_that_differ_do_not_warn():
    one_wins = _batch([[0, 0, 1], [0, 0], [0, 0, 0], [0]], [0, 0, 1, 1], levels=2)
    step_cost = _batch([[-1, -1, -1], [-1], [-1, -1], [-1, -1]], [0, 0, 1, 1], levels=2)  # lengths differ
    for batch in (one_wins, step_cost):
        with warnings.catch_warnings():
            warnings.simplefilter("error", CreditWarning)
            for name in ("grpo", "gigpo", "hgpo"):
                advantages(name, batch)
    assert "hgpo" in ESTIMATORS


def test_hgpo_without_history_keys_warns_that_it_is_gigpos_step_term():
    batch = _batch([[0, 0, 1], [0, 0], [0, 1, 0], [0]], [0, 0, 1, 1])
    with pytest.warns(NoHistoryWarning, match="one history level"):
        advantages("hgpo", batch)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoHistoryWarning)
        advantages("hgpo", _batch([[0, 0, 1], [0, 0], [0, 1, 0], [0]], [0, 0, 1, 1], levels=3))
        advantages("gigpo", batch)
