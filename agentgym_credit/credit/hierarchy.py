"""HGPO (arXiv 2602.22817) and a precision-weighted variant: step credit over a hierarchy of contexts.

What lives here:

- :func:`level_table`: per row and per level k, the group size, mean, variance and normalized
  advantage A_k of its level-k group;
- :func:`hgpo`: A^H = sum_k w_k A_k with w_k from (k+1)^alpha or (k+2)^alpha;
- :func:`hgpo_precision`: the same per-level advantages blended by estimated precision (beyond the
  papers; its value is measured by the credit benchmark, not assumed).

**Levels.** Level k (0..K) groups the rows of one ``group_id`` whose ``history_keys[:, k]`` (the
fingerprint of C_k(t) = (s_{t-k}..s_t)) are equal; rows holding :data:`~agentgym_credit.keys.MISSING`
(t < k) have no level-k group (no padding). Each level is grouped by the pair (group_id, key) with
one bucket count and one sort of the candidate rows (:mod:`agentgym_credit.credit.grouping`); no
loop per step or per group, only a loop over the K+1 levels. Per level,
A_k = (R_t - mean_{G_k} R) / F_norm with the discounted step return R_t (gamma, penalty as in
:mod:`agentgym_credit.credit.returns`), for groups of size >= 2; ``norm`` "mean_std"
(F_norm = std + eps, ``std`` sample or population) or "mean" (F_norm = 1); all-equal groups give 0.

**hgpo weights.** A level *counts* for a row when its group has size >= 2 and the row's deviation
|R_t - mean_{G_k}| exceeds ``zero_tol`` (1e-9; it absorbs floating-point rounding so that a return
equal to its group mean counts as zero). Over the counting levels,
w_k = (k+1)^alpha / sum (``weights="paper"``, default, as in the HGPO paper) or
(k+2)^alpha / sum (``weights="reference"``, the public reference code's weights); alpha = 1 by
default. A^H = sum_k w_k A_k, and 0 when no level counts. With K = 0 and
``history_keys[:, 0] == state_key``, A^H is exactly GiGPO's step term.

**hgpo_precision weights.** For row i let E be its levels with a group of size n_k >= 2, with group
mean mu_k and sample variance s2_k; c = min E (coarsest) and f = max E (finest, least biased).

- shrunk variance: v_k = ((n_k - 1) s2_k + nu * s2_c) / (n_k - 1 + nu), nu = ``prior_strength``
  (default 2): a small fine group borrows the coarse group's spread instead of trusting its own;
- variance of the level-k baseline: v_k / n_k;
- squared bias relative to the finest level, corrected for the noise of the difference:
  b2_k = max(0, (mu_k - mu_f)^2 - v_f * |1/n_f - 1/n_k|) (0 at k = f);
- w_k = 1 / (v_k / n_k + b2_k + eps^2), normalized over E; A = sum_{k in E} w_k A_k.

Small fine groups (large v_k / n_k) shrink toward coarser levels; coarse levels whose mean
disagrees with the finest one (large b2_k) lose weight. Unlike ``hgpo`` it keeps levels where A_k is
0: a precise level saying "this step is average" is evidence too.

**Episode term** (both, off by default as in the reference code): ``episode=True`` returns
A^E + omega * A^H with A^E from :func:`agentgym_credit.credit.episode.episode_advantage`
(``episode_norm``, ``episode_baseline``); HGPO with K = 0 and ``episode=True`` is GiGPO.
``depth`` uses only levels 0..depth (default: all of ``history_keys``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agentgym_credit.credit import checks
from agentgym_credit.credit.episode import BASELINES, episode_advantage
from agentgym_credit.credit.grouping import NORMS, STDS, group_mean_std, pair_groups
from agentgym_credit.credit.returns import step_returns
from agentgym_credit.credit.steps import StepArrays
from agentgym_credit.keys import MISSING

WEIGHTS = ("paper", "reference")


@dataclass(frozen=True)
class LevelTable:
    """Per-row, per-level statistics, arrays of shape [n, L] (L = number of levels used).

    ``size``: group size (0 where the row has no group of size >= 2); ``mean`` / ``var``: group mean
    and sample variance of the returns; ``dev``: R_t - mean (0 in all-equal groups); ``adv``: A_k.
    """

    size: np.ndarray
    mean: np.ndarray
    var: np.ndarray
    dev: np.ndarray
    adv: np.ndarray


def level_table(steps: StepArrays, ret: np.ndarray, levels: int, norm: str, std: str, eps: float) -> LevelTable:
    """Group every level k < ``levels`` by (group_id, history_keys[:, k]) and fill a :class:`LevelTable`."""
    n = steps.n
    shape = (n, levels)
    size = np.zeros(shape, dtype=np.int64)
    mean, var, dev, adv = (np.zeros(shape) for _ in range(4))
    for k in range(levels):
        key = steps.history_keys[:, k]
        g = pair_groups(steps.group_id, key, mask=key != np.uint64(MISSING))
        if g.num_groups == 0:
            continue
        mu, sd_s, const = group_mean_std(ret, g, ddof=1)
        m = g.members
        c = g.code[m]
        d = ret[m] - mu[c]
        d[const[c]] = 0.0
        size[m, k] = g.size[c]
        mean[m, k] = mu[c]
        var[m, k] = sd_s[c] ** 2
        dev[m, k] = d
        if norm == "mean":
            adv[m, k] = d
        else:
            sd = sd_s if std == "sample" else sd_s * np.sqrt((g.size - 1) / g.size)
            adv[m, k] = d / (sd[c] + eps)
    return LevelTable(size, mean, var, dev, adv)


def _common(steps, gamma, norm, std, eps, depth, invalid_penalty, propagate_penalty):
    checks.as_steps(steps)
    gamma = checks.unit_interval("gamma", gamma)
    checks.choice("norm", norm, NORMS)
    checks.choice("std", std, STDS)
    eps = checks.positive("eps", eps, allow_zero=True)
    invalid_penalty = checks.finite("invalid_penalty", invalid_penalty)
    levels = steps.num_levels
    if depth is not None:
        if not 0 <= int(depth) < levels:
            raise ValueError(f"depth must lie in 0..{levels - 1} (history_keys has {levels} levels); got {depth}")
        levels = int(depth) + 1
    ret = step_returns(steps, gamma, invalid_penalty, propagate_penalty)
    return ret, levels, eps


def _with_episode(steps, a_h, episode, omega, episode_norm, episode_baseline, std, eps, invalid_penalty,
                  propagate_penalty):
    if not episode:
        return a_h
    checks.choice("episode_baseline", episode_baseline, BASELINES)
    omega = checks.finite("omega", omega)
    a_e = episode_advantage(steps, norm=episode_norm, std=std, eps=eps, episode_baseline=episode_baseline,
                            invalid_penalty=invalid_penalty, propagate_penalty=propagate_penalty)
    return a_e + omega * a_h


def hgpo(steps: StepArrays, *, gamma: float = 0.95, alpha: float = 1.0, weights: str = "paper",
         norm: str = "mean_std", std: str = "sample", eps: float = 1e-6, zero_tol: float = 1e-9,
         depth: int | None = None, episode: bool = False, omega: float = 1.0, episode_norm: str = "mean_std",
         episode_baseline: str = "trajectory", invalid_penalty: float = 0.0,
         propagate_penalty: bool = False) -> np.ndarray:
    """HGPO advantage per row (float64, input order); see the module docstring."""
    checks.choice("weights", weights, WEIGHTS)
    alpha = checks.finite("alpha", alpha)
    zero_tol = checks.positive("zero_tol", zero_tol, allow_zero=True)
    ret, levels, eps = _common(steps, gamma, norm, std, eps, depth, invalid_penalty, propagate_penalty)
    if steps.n == 0:
        return np.zeros(0)
    tab = level_table(steps, ret, levels, norm, std, eps)
    base = np.arange(levels, dtype=np.float64) + (1.0 if weights == "paper" else 2.0)
    w = np.where((tab.size >= 2) & (np.abs(tab.dev) > zero_tol), base ** alpha, 0.0)
    total = w.sum(axis=1)
    num = (w * tab.adv).sum(axis=1)
    a_h = np.divide(num, total, out=np.zeros(steps.n), where=total > 0)
    return _with_episode(steps, a_h, episode, omega, episode_norm, episode_baseline, std, eps,
                         invalid_penalty, propagate_penalty)


def hgpo_precision(steps: StepArrays, *, gamma: float = 0.95, prior_strength: float = 2.0,
                   norm: str = "mean_std", std: str = "sample", eps: float = 1e-6, depth: int | None = None,
                   episode: bool = False, omega: float = 1.0, episode_norm: str = "mean_std",
                   episode_baseline: str = "trajectory", invalid_penalty: float = 0.0,
                   propagate_penalty: bool = False) -> np.ndarray:
    """Precision-weighted hierarchy blend per row (float64, input order); see the module docstring."""
    nu = checks.positive("prior_strength", prior_strength, allow_zero=True)
    ret, levels, eps = _common(steps, gamma, norm, std, eps, depth, invalid_penalty, propagate_penalty)
    n = steps.n
    if n == 0:
        return np.zeros(0)
    tab = level_table(steps, ret, levels, norm, std, eps)
    elig = tab.size >= 2
    rows = np.arange(n)
    any_e = elig.any(axis=1)
    lv = np.arange(levels)
    coarse = np.where(elig, lv, levels).min(axis=1)
    fine = np.where(elig, lv, -1).max(axis=1)
    coarse = np.where(any_e, coarse, 0)
    fine = np.where(any_e, fine, 0)
    nk = np.maximum(tab.size, 1).astype(np.float64)
    s2c = tab.var[rows, coarse][:, None]
    v = ((nk - 1.0) * tab.var + nu * s2c) / np.maximum(nk - 1.0 + nu, 1e-300)
    nf = nk[rows, fine][:, None]
    vf = v[rows, fine][:, None]
    muf = tab.mean[rows, fine][:, None]
    b2 = np.maximum(0.0, (tab.mean - muf) ** 2 - vf * np.abs(1.0 / nf - 1.0 / nk))
    b2[rows, fine] = 0.0
    w = np.where(elig, 1.0 / (v / nk + b2 + eps * eps + 1e-300), 0.0)
    total = w.sum(axis=1)
    a_p = np.divide((w * tab.adv).sum(axis=1), total, out=np.zeros(n), where=total > 0)
    return _with_episode(steps, a_p, episode, omega, episode_norm, episode_baseline, std, eps,
                         invalid_penalty, propagate_penalty)


__all__ = ["WEIGHTS", "LevelTable", "level_table", "hgpo", "hgpo_precision"]
