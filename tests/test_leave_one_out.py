"""Leave-own-return-out baselines (``loo=True``) of GiGPO, HGPO and the episode term.

With the row's own return in its group mean the expected advantage is shrunk by (m−1)/m: an
error of −A/m. The exact test enumerates every outcome of a one-step bandit group.
"""

import itertools

import numpy as np
import pytest

from agentgym_credit.credit import StepArrays, advantages, gigpo_step
from agentgym_credit.credit.episode import episode_advantage


def _bandit_group(actions, state=5):
    m = len(actions)
    return StepArrays.from_lists(group_id=[0] * m, traj_id=list(range(m)), t=[0] * m,
                                 reward=[float(a) for a in actions], done=[True] * m,
                                 state_key=[state] * m, obs_key=[state] * m)


def test_loo_step_term_is_return_minus_mean_of_the_others():
    s = _bandit_group([1, 0, 0, 1, 1])
    r = np.array([1.0, 0, 0, 1, 1])
    want = np.array([r[i] - np.delete(r, i).mean() for i in range(5)])
    np.testing.assert_allclose(gigpo_step(s, step_norm="mean", loo=True), want)
    np.testing.assert_allclose(gigpo_step(s, step_norm="mean"), r - r.mean())
    # std normalization: the same F_norm as without loo
    np.testing.assert_allclose(gigpo_step(s, loo=True), 5 / 4 * gigpo_step(s))


def test_loo_episode_term_with_mean_norm_is_rloo():
    s = _bandit_group([1, 0, 0, 1])
    np.testing.assert_allclose(episode_advantage(s, norm="mean", loo=True), advantages("rloo", s), atol=1e-7)
    np.testing.assert_allclose(advantages("grpo", s, norm="mean", loo=True), advantages("rloo", s), atol=1e-7)


def test_hgpo_depth0_loo_equals_gigpo_step_loo_and_episode_term_follows():
    s = _bandit_group([1, 0, 1, 1, 0, 0])
    np.testing.assert_allclose(advantages("hgpo", s, loo=True, gamma=0.95),
                               gigpo_step(s, gamma=0.95, loo=True), atol=1e-6)
    np.testing.assert_allclose(advantages("hgpo", s, loo=True, episode=True),
                               advantages("gigpo", s, loo=True), atol=1e-6)
    np.testing.assert_allclose(advantages("hgpo_precision", s, loo=True, norm="mean"),
                               gigpo_step(s, step_norm="mean", loo=True), atol=1e-6)


@pytest.mark.parametrize("m", [2, 3, 4])
def test_loo_removes_the_minus_a_over_m_error_exactly(m):
    # a one-step bandit, action 1 (reward 1) or 0 (reward 0) with probability 1/2: A^pi(1) = +0.5.
    # Average the advantage of action-1 rows over every equally likely group of m rows (exact).
    with_own, without_own = [], []
    for acts in itertools.product([0, 1], repeat=m):
        s = _bandit_group(acts)
        a_in = gigpo_step(s, step_norm="mean")
        a_out = gigpo_step(s, step_norm="mean", loo=True)
        for i, a in enumerate(acts):
            if a == 1:
                with_own.append(a_in[i])
                without_own.append(a_out[i])
    assert np.mean(without_own) == pytest.approx(0.5)  # unbiased for A^pi
    assert np.mean(with_own) == pytest.approx(0.5 * (m - 1) / m)  # shrunk: error -A/m


def test_loo_is_checked_by_the_registry_and_a_group_of_one_stays_zero():
    s = _bandit_group([1])
    assert np.all(advantages("gigpo", s, loo=True) == 0)
    with pytest.raises(TypeError, match="no option"):
        advantages("gigpo", s, leave_one_out=True)
