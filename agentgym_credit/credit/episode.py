"""Episode-level (outcome) advantages: GRPO, Dr.GRPO (mean only) and RLOO.

What lives here:

- :func:`episode_advantage`: A^E of every row, the episode term GiGPO and HGPO reuse;
- :func:`grpo`: A^E(tau_i) = (R(tau_i) - mean_j R(tau_j)) / F_norm inside each group;
- :func:`drgrpo`: GRPO with F_norm = 1 (``norm="mean"``, Dr.GRPO);
- :func:`rloo`: R(tau_i) minus the mean of the other N-1 returns of its group.

R(tau) = sum_t r_t, the undiscounted episode return, as in the GiGPO paper's episode term. Every row
(step) of a trajectory gets its trajectory's advantage.

``episode_baseline`` says what the group mean and std are taken over:

- ``"trajectory"`` (default, the papers): one value R(tau) per trajectory, N values per group;
- ``"step"`` (the GiGPO reference implementation's default): every step row of the group enters the
  mean and std with its trajectory's R(tau) (plus its own p_t, see
  :mod:`agentgym_credit.credit.returns`), so longer trajectories weigh more.

``norm="mean_std"``: F_norm = std + ``eps``, ``std="sample"`` (ddof=1, as ``torch.std`` in the
reference code, default) or ``"population"`` (ddof=0); ``norm="mean"``: F_norm = 1. A group with a
single member, or whose values are all equal, gives 0.

``loo=True`` (off by default, as in the papers) takes each value's own return out of its baseline:
x_i − mean of the OTHER m − 1 values of its group = m/(m−1) · (x_i − mean_G), divided by the same
F_norm (the group's std). Including x_i shrinks every deviation by (m−1)/m, a systematic −A/m error
in the expected advantage (the baseline depends on the row's own action); ``loo=True`` removes it.
With ``norm="mean"`` and trajectory baselines it is RLOO. RLOO: A = N/(N-1) * A^E(mean) exactly; it is
defined over trajectories only, so a non-propagated penalty does not enter it.
"""

from __future__ import annotations

import numpy as np

from agentgym_credit.credit import checks
from agentgym_credit.credit.grouping import (
    NORMS,
    STDS,
    PairGroups,
    group_mean_std,
    normalized_deviation,
    pair_groups,
)
from agentgym_credit.credit.returns import episode_returns, penalty, trajectory_returns
from agentgym_credit.credit.steps import StepArrays

BASELINES = ("trajectory", "step")


def loo_scale(values: np.ndarray, groups: PairGroups) -> np.ndarray:
    """``values`` with each grouped row's entry times m/(m−1) (m its group size): the deviation from
    the mean of the OTHER members instead of the whole group's mean (``loo=True``)."""
    out = np.array(values, dtype=np.float64, copy=True)
    if groups.num_groups:
        m = groups.size[groups.member_code].astype(np.float64)
        out[groups.members] *= m / (m - 1.0)
    return out


def _to_rows(steps: StepArrays, per_traj: np.ndarray) -> np.ndarray:
    lay = steps.layout
    out = np.empty(steps.n)
    out[lay.order] = per_traj[lay.seg]
    return out


def episode_advantage(steps: StepArrays, *, norm: str = "mean_std", std: str = "sample", eps: float = 1e-6,
                      episode_baseline: str = "trajectory", invalid_penalty: float = 0.0,
                      propagate_penalty: bool = False, loo: bool = False) -> np.ndarray:
    """A^E per row, float64 in input order (see the module docstring for every option)."""
    checks.as_steps(steps)
    checks.choice("norm", norm, NORMS)
    checks.choice("std", std, STDS)
    checks.choice("episode_baseline", episode_baseline, BASELINES)
    eps = checks.positive("eps", eps, allow_zero=True)
    invalid_penalty = checks.finite("invalid_penalty", invalid_penalty)
    if steps.n == 0:
        return np.zeros(0)
    if episode_baseline == "trajectory":
        v = trajectory_returns(steps, invalid_penalty, propagate_penalty)
        g = pair_groups(steps.layout.group_of_traj, np.zeros(len(v), dtype=np.uint64))
        a = normalized_deviation(v, g, norm, std, eps)
        return _to_rows(steps, loo_scale(a, g) if loo else a)
    v = episode_returns(steps, invalid_penalty, propagate_penalty)
    if not propagate_penalty:
        v = v + penalty(steps, invalid_penalty)
    g = pair_groups(steps.group_id, np.zeros(steps.n, dtype=np.uint64))
    a = normalized_deviation(v, g, norm, std, eps)
    return loo_scale(a, g) if loo else a


def grpo(steps: StepArrays, *, norm: str = "mean_std", std: str = "sample", eps: float = 1e-6,
         episode_baseline: str = "trajectory", invalid_penalty: float = 0.0,
         propagate_penalty: bool = False, loo: bool = False) -> np.ndarray:
    """GRPO episode-level advantage per row (float64, input order)."""
    return episode_advantage(steps, norm=norm, std=std, eps=eps, episode_baseline=episode_baseline,
                             invalid_penalty=invalid_penalty, propagate_penalty=propagate_penalty, loo=loo)


def drgrpo(steps: StepArrays, *, episode_baseline: str = "trajectory", invalid_penalty: float = 0.0,
           propagate_penalty: bool = False) -> np.ndarray:
    """Dr.GRPO: GRPO without the std division (``norm="mean"``)."""
    return episode_advantage(steps, norm="mean", episode_baseline=episode_baseline,
                             invalid_penalty=invalid_penalty, propagate_penalty=propagate_penalty)


def rloo(steps: StepArrays, *, invalid_penalty: float = 0.0, propagate_penalty: bool = False) -> np.ndarray:
    """RLOO: R(tau_i) - mean of the other trajectories' returns in the group (0 for N = 1)."""
    checks.as_steps(steps)
    invalid_penalty = checks.finite("invalid_penalty", invalid_penalty)
    if steps.n == 0:
        return np.zeros(0)
    v = trajectory_returns(steps, invalid_penalty, propagate_penalty)
    g = pair_groups(steps.layout.group_of_traj, np.zeros(len(v), dtype=np.uint64))
    adv = np.zeros(len(v))
    if g.num_groups:
        _, _, const = group_mean_std(v, g, ddof=0)
        m = g.members
        c = g.member_code
        total = np.bincount(c, weights=v[m], minlength=g.num_groups)
        a = v[m] - (total[c] - v[m]) / (g.size[c] - 1)
        a[const[c]] = 0.0
        adv[m] = a
    return _to_rows(steps, adv)


__all__ = ["BASELINES", "loo_scale", "episode_advantage", "grpo", "drgrpo", "rloo"]
