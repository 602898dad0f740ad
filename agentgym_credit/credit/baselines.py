"""Reference estimators outside the GRPO family: Monte-Carlo returns and GAE.

What lives here:

- :func:`mc`: the discounted return R_t = sum_{k>=t} gamma^(k-t) r_k, no baseline;
- :func:`gae`: generalized advantage estimation from ``steps.value`` (PPO's estimator).

GAE: delta_t = r_t + gamma * V_{t+1} - V_t, A_t = delta_t + gamma * lam * A_{t+1}, inside each
trajectory. At a trajectory's last recorded row V_{t+1} = 0, whether it ended (``done``) or was cut
off: :class:`StepArrays` holds no value for the state after the last row, so a truncated trajectory
is treated as ending there. Both use the vectorized segmented scan of
:mod:`agentgym_credit.credit.returns` and its invalid-action penalty rule (non-propagated: p_t is
added to row t's own return or advantage only).
"""

from __future__ import annotations

import numpy as np

from agentgym_credit.credit import checks
from agentgym_credit.credit.returns import discounted_scan, penalty, step_returns
from agentgym_credit.credit.steps import StepArrays
from agentgym_credit.errors import StepArraysError


def mc(steps: StepArrays, *, gamma: float = 0.95, invalid_penalty: float = 0.0,
       propagate_penalty: bool = False) -> np.ndarray:
    """Monte-Carlo discounted return per row (float64, input order)."""
    checks.as_steps(steps)
    gamma = checks.unit_interval("gamma", gamma)
    invalid_penalty = checks.finite("invalid_penalty", invalid_penalty)
    return step_returns(steps, gamma, invalid_penalty, propagate_penalty)


def gae(steps: StepArrays, *, gamma: float = 0.95, lam: float = 0.95, invalid_penalty: float = 0.0,
        propagate_penalty: bool = False) -> np.ndarray:
    """GAE(gamma, lam) advantage per row from ``steps.value`` (float64, input order)."""
    checks.as_steps(steps)
    gamma = checks.unit_interval("gamma", gamma)
    lam = checks.unit_interval("lam", lam)
    invalid_penalty = checks.finite("invalid_penalty", invalid_penalty)
    if steps.value is None:
        raise StepArraysError("gae needs a value estimate per step: build StepArrays with value=...")
    if steps.n == 0:
        return np.zeros(0)
    lay = steps.layout
    p = penalty(steps, invalid_penalty)
    r = steps.reward + p if propagate_penalty else steps.reward
    vs = steps.value[lay.order]
    v_next = np.zeros(steps.n)
    v_next[:-1] = vs[1:]
    v_next[lay.first + lay.lengths - 1] = 0.0
    delta = np.empty(steps.n)
    delta[lay.order] = r[lay.order] + gamma * v_next - vs
    adv = discounted_scan(steps, delta, gamma * lam)
    return adv if propagate_penalty else adv + p


__all__ = ["mc", "gae"]
