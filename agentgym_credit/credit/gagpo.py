"""GAGPO (arXiv 2605.13217): GAE on a non-parametric grouped value proxy, normalized per group.

The paper publishes no code; its three stages are (i) group the rollouts' steps by identical
environment state, (ii) a grouped value proxy from the rollouts and TD/GAE-style advantages
propagated backward in time, (iii) group-wise advantage normalization (and an action-level
importance ratio in the PPO update, which is the trainer's business, not the estimator's). The
details below are this project's choices where the paper's text does not pin them down:

- **Grouping**: rows of one rollout group (``group_id``) with equal ``key`` (``state_key`` by
  default: "identical environment states"; ``obs_key`` or a ``history`` level for agent-visible
  keys), across trajectories and time steps, as GiGPO's anchor groups.
- **Value proxy**: V(s) = mean of the discounted step returns R_t = sum_k gamma^k r_{t+k} of the
  rows in s's group (a state met once has its own return). V after a trajectory's last row is 0
  (ended or cut off: the proxy has no value for an unrecorded state).
- **Advantage**: delta_t = r_t + gamma V(s_{t+1}) - V(s_t), A_t = delta_t + gamma lam A_{t+1}
  (``gamma`` = 0.95, ``lam`` = 0.95 as GAE's usual setting).
- **Normalization**: (A_t - mean) / (std + eps) over all step rows of the rollout group
  (``norm="mean_std"``, sample std), ``"mean"`` subtracts only, ``"none"`` keeps raw GAE.

The invalid-action penalty follows :mod:`~agentgym_credit.credit.returns`. Cost: GiGPO's grouping
plus two segmented scans.
"""

from __future__ import annotations

import numpy as np

from agentgym_credit.credit import checks
from agentgym_credit.credit.graph_model import base_keys, scan, walk
from agentgym_credit.credit.grouping import STDS, group_mean_std, pair_groups
from agentgym_credit.credit.returns import penalty
from agentgym_credit.credit.steps import StepArrays

GAGPO_NORMS = ("mean_std", "mean", "none")


def gagpo(steps: StepArrays, *, gamma: float = 0.95, lam: float = 0.95, key: str = "state_key", level: int = 0,
          norm: str = "mean_std", std: str = "sample", eps: float = 1e-6, invalid_penalty: float = 0.0,
          propagate_penalty: bool = False) -> np.ndarray:
    """GAGPO advantage per row (float64, input order); see the module docstring."""
    checks.as_steps(steps)
    gamma = checks.unit_interval("gamma", gamma)
    lam = checks.unit_interval("lam", lam)
    checks.choice("key", key, ("state_key", "obs_key", "history"))
    checks.choice("norm", norm, GAGPO_NORMS)
    checks.choice("std", std, STDS)
    eps = checks.positive("eps", eps, allow_zero=True)
    invalid_penalty = checks.finite("invalid_penalty", invalid_penalty)
    keys = base_keys(steps, key, level)
    n = steps.n
    if n == 0:
        return np.zeros(0)
    w = walk(steps)
    p = penalty(steps, invalid_penalty)
    r_in = steps.reward + p if propagate_penalty else steps.reward
    r = r_in[w.order]
    ret = np.empty(n)
    ret[w.order] = scan(r, w.last, gamma, w.max_length)
    groups = pair_groups(steps.group_id, keys)
    v = ret.copy()  # singleton states: their own return
    if groups.num_groups:
        mean, _, _ = group_mean_std(ret, groups, ddof=0)
        v[groups.members] = mean[groups.member_code]
    vs = v[w.order]
    v_next = np.zeros(n)
    v_next[:-1] = vs[1:]
    v_next[w.last] = 0.0
    adv = np.empty(n)
    adv[w.order] = scan(r + gamma * v_next - vs, w.last, gamma * lam, w.max_length)
    if not propagate_penalty:
        adv += p
    if norm == "none":
        return adv
    gid = np.unique(steps.group_id, return_inverse=True)[1]
    cnt = np.bincount(gid)
    mean = np.bincount(gid, weights=adv) / cnt
    dev = adv - mean[gid]
    if norm == "mean":
        return dev
    ddof = 1 if std == "sample" else 0
    var = np.bincount(gid, weights=dev * dev) / np.maximum(cnt - ddof, 1)
    sd = np.sqrt(var)
    out = dev / (sd[gid] + eps)
    out[(cnt - ddof <= 0)[gid]] = 0.0
    return out


__all__ = ["gagpo", "GAGPO_NORMS"]
