"""HGPO (arXiv 2602.22817) and a precision-weighted variant: step credit over a hierarchy of contexts.

What lives here:

- :class:`Level` / :func:`levels_of`: per level k, the rows in groups of size >= 2 with their group's
  size, mean, variance and normalized advantage A_k (sparse: only grouped rows are stored);
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
(k+2)^alpha / sum (``weights="reference"``, as DESIGN.md records the public reference code's weights;
the authors' code at CazeroZ/hgpo@aa64927 weighs level k by k+1, i.e. ``"paper"``: see
:mod:`~agentgym_credit.credit.presets`); alpha = 1 by default. A^H = sum_k w_k A_k, and 0 when no level counts. With K = 0 and
``history_keys[:, 0] == state_key``, A^H equals GiGPO's step term (up to ``zero_tol``).

**hgpo_precision weights.** For row i let E be its levels with a group of size n_k >= 2, with group
mean mu_k and sample variance s2_k (ddof=1; ``std`` only changes A_k); c = min E (coarsest) and f = max E (finest, least biased).

- shrunk variance: v_k = ((n_k - 1) s2_k + nu * s2_c) / (n_k - 1 + nu), nu = ``prior_strength``
  (default 2): a small fine group borrows the coarse group's spread instead of trusting its own;
- variance of the level-k baseline: v_k / n_k;
- squared bias relative to the finest level, corrected for the noise of the difference:
  b2_k = max(0, (mu_k - mu_f)^2 - v_f * |1/n_f - 1/n_k|) (0 at k = f);
- w_k = 1 / (v_k / n_k + b2_k + eps^2), normalized over E; A = sum_{k in E} w_k A_k.

Small fine groups (large v_k / n_k) shrink toward coarser levels; coarse levels whose mean
disagrees with the finest one (large b2_k) lose weight. Unlike ``hgpo`` it keeps levels where A_k is
0: a precise level saying "this step is average" is evidence too.

**Leave own return out** (both, ``loo=True``, off by default as in the paper and the reference
code): every level's baseline is the mean of the OTHER members of the row's group, A_k = m/(m−1) ·
(R_t − mean_{G_k}) / F_norm (with the row's own return in the mean, the expected A_k is shrunk by
(m−1)/m, an error of −A/m that grows at deeper levels where groups are smaller); the episode term,
when on, likewise. The weights' "counts" test is unchanged (a scaled deviation is zero exactly when
the unscaled one is).

**Episode term** (both, off by default as in the reference code): ``episode=True`` returns
A^E + omega * A^H with A^E from :func:`agentgym_credit.credit.episode.episode_advantage`
(``episode_norm``, ``episode_baseline``); HGPO with K = 0 and ``episode=True`` is GiGPO.
``depth`` uses only levels 0..depth (default: all of ``history_keys``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from agentgym_credit.credit import checks
from agentgym_credit.credit.episode import BASELINES, episode_advantage
from agentgym_credit.credit.grouping import NORMS, STDS, group_mean_std, pair_groups
from agentgym_credit.credit.returns import step_returns
from agentgym_credit.credit.steps import StepArrays
from agentgym_credit.errors import NoHistoryWarning
from agentgym_credit.keys import MISSING

WEIGHTS = ("paper", "reference")


@dataclass(frozen=True)
class Level:
    """The rows of one level that sit in a group of size >= 2, with their group's statistics.

    Arrays aligned with ``rows``: ``size`` (group size), ``mean`` and ``var`` (group mean and
    sample variance of the returns), ``dev`` (R_t - mean, 0 in all-equal groups) and ``adv`` (A_k).
    Rows of singleton groups and rows without this level are absent (their A_k is 0).
    """

    k: int
    rows: np.ndarray
    size: np.ndarray
    mean: np.ndarray
    var: np.ndarray
    dev: np.ndarray
    adv: np.ndarray


def levels_of(steps: StepArrays, ret: np.ndarray, levels: int, norm: str, std: str, eps: float,
              loo: bool = False) -> list[Level]:
    """Group every level k < ``levels`` by (group_id, history_keys[:, k]); one :class:`Level` each.

    ``loo=True``: ``dev`` and ``adv`` measure R_t against the mean of the OTHER members of the group
    (m/(m−1) times the deviation from the whole group's mean); ``mean`` stays the group's mean.
    """
    out = []
    for k in range(levels):
        key = steps.history_keys[:, k]
        g = pair_groups(steps.group_id, key, mask=key != np.uint64(MISSING))
        if g.num_groups == 0:
            continue
        mu, sd_s, const = group_mean_std(ret, g, ddof=1)
        m = g.members
        c = g.member_code
        d = ret[m] - mu[c]
        d[const[c]] = 0.0
        if loo:
            d *= g.size[c] / (g.size[c] - 1.0)
        if norm == "mean":
            adv = d
        else:
            sd = sd_s if std == "sample" else sd_s * np.sqrt((g.size - 1) / g.size)
            adv = d / (sd[c] + eps)
        out.append(Level(k, m, g.size[c], mu[c], (sd_s**2)[c], d, adv))
    return out


def _common(steps, gamma, norm, std, eps, depth, invalid_penalty, propagate_penalty):
    checks.as_steps(steps)
    gamma = checks.unit_interval("gamma", gamma)
    checks.choice("norm", norm, NORMS)
    checks.choice("std", std, STDS)
    eps = checks.positive("eps", eps, allow_zero=True)
    invalid_penalty = checks.finite("invalid_penalty", invalid_penalty)
    levels = steps.num_levels
    if levels == 1:
        warnings.warn(NoHistoryWarning(
            "hgpo: the step arrays have one history level (no history_keys), so the hierarchy has one level and "
            "HGPO's step term is GiGPO's; pass history_keys (e.g. from the HistoryFingerprint wrapper's "
            "info['history_keys']) for HGPO proper"), stacklevel=4)
    if depth is not None:
        if not 0 <= int(depth) < levels:
            raise ValueError(f"depth must lie in 0..{levels - 1} (history_keys has {levels} levels); got {depth}")
        levels = int(depth) + 1
    ret = step_returns(steps, gamma, invalid_penalty, propagate_penalty)
    return ret, levels, eps


def _with_episode(steps, a_h, episode, omega, episode_norm, episode_baseline, std, eps, invalid_penalty,
                  propagate_penalty, loo=False):
    # the episode options are checked even when the term is off: a typo is never silently ignored
    checks.choice("episode_baseline", episode_baseline, BASELINES)
    checks.choice("episode_norm", episode_norm, NORMS)
    omega = checks.finite("omega", omega)
    if not episode:
        return a_h
    a_e = episode_advantage(steps, norm=episode_norm, std=std, eps=eps, episode_baseline=episode_baseline,
                            invalid_penalty=invalid_penalty, propagate_penalty=propagate_penalty, loo=loo)
    return a_e + omega * a_h


def hgpo(steps: StepArrays, *, gamma: float = 0.95, alpha: float = 1.0, weights: str = "paper",
         norm: str = "mean_std", std: str = "sample", eps: float = 1e-6, zero_tol: float = 1e-9,
         depth: int | None = None, episode: bool = False, omega: float = 1.0, episode_norm: str = "mean_std",
         episode_baseline: str = "trajectory", invalid_penalty: float = 0.0,
         propagate_penalty: bool = False, loo: bool = False) -> np.ndarray:
    """HGPO advantage per row (float64, input order); see the module docstring."""
    checks.choice("weights", weights, WEIGHTS)
    alpha = checks.finite("alpha", alpha)
    zero_tol = checks.positive("zero_tol", zero_tol, allow_zero=True)
    ret, levels, eps = _common(steps, gamma, norm, std, eps, depth, invalid_penalty, propagate_penalty)
    if steps.n == 0:
        return np.zeros(0)
    num = np.zeros(steps.n)
    den = np.zeros(steps.n)
    for lv in levels_of(steps, ret, levels, norm, std, eps, loo):
        w = float(lv.k + (1 if weights == "paper" else 2)) ** alpha
        counts = np.abs(lv.dev) > zero_tol
        r = lv.rows[counts]
        num[r] += w * lv.adv[counts]
        den[r] += w
    a_h = np.divide(num, den, out=np.zeros(steps.n), where=den > 0)
    return _with_episode(steps, a_h, episode, omega, episode_norm, episode_baseline, std, eps,
                         invalid_penalty, propagate_penalty, loo)


def hgpo_precision(steps: StepArrays, *, gamma: float = 0.95, prior_strength: float = 2.0,
                   norm: str = "mean_std", std: str = "sample", eps: float = 1e-6, depth: int | None = None,
                   episode: bool = False, omega: float = 1.0, episode_norm: str = "mean_std",
                   episode_baseline: str = "trajectory", invalid_penalty: float = 0.0,
                   propagate_penalty: bool = False, loo: bool = False) -> np.ndarray:
    """Precision-weighted hierarchy blend per row (float64, input order); see the module docstring."""
    nu = checks.positive("prior_strength", prior_strength, allow_zero=True)
    ret, levels, eps = _common(steps, gamma, norm, std, eps, depth, invalid_penalty, propagate_penalty)
    n = steps.n
    if n == 0:
        return np.zeros(0)
    lvs = levels_of(steps, ret, levels, norm, std, eps, loo)
    # coarsest level of each row (its variance s2_c) and finest level (n_f, mu_f, s2_f)
    s2c = np.full(n, np.nan)
    nf, muf, s2f = np.ones(n), np.zeros(n), np.zeros(n)
    for lv in lvs:
        first = np.isnan(s2c[lv.rows])
        s2c[lv.rows[first]] = lv.var[first]
        nf[lv.rows], muf[lv.rows], s2f[lv.rows] = lv.size, lv.mean, lv.var
    num = np.zeros(n)
    den = np.zeros(n)
    for lv in lvs:
        r = lv.rows
        nk = lv.size.astype(np.float64)
        sc = s2c[r]
        v = ((nk - 1.0) * lv.var + nu * sc) / (nk - 1.0 + nu)
        vf = ((nf[r] - 1.0) * s2f[r] + nu * sc) / (nf[r] - 1.0 + nu)
        b2 = np.maximum(0.0, (lv.mean - muf[r]) ** 2 - vf * np.abs(1.0 / nf[r] - 1.0 / nk))
        w = 1.0 / (v / nk + b2 + eps * eps + 1e-300)
        num[r] += w * lv.adv
        den[r] += w
    a_p = np.divide(num, den, out=np.zeros(n), where=den > 0)
    return _with_episode(steps, a_p, episode, omega, episode_norm, episode_baseline, std, eps,
                         invalid_penalty, propagate_penalty, loo)


__all__ = ["WEIGHTS", "Level", "levels_of", "hgpo", "hgpo_precision"]
