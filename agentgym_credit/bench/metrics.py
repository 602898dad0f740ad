"""Credit-accuracy metrics: how well an estimator's per-step advantages agree with the true A^π.

Every function takes two 1-D float arrays of equal length — ``est`` (an estimator's advantage per
step) and ``true`` (the oracle's A^π for the very same steps) — and returns a float. All of them
are vectorized numpy; none needs scipy.

- :func:`pearson`, :func:`spearman`: linear and rank correlation. A constant input carries no
  information about the order of the steps, so its correlation is defined as ``0.0`` (not NaN).
- :func:`sign_accuracy`: on *decisive* steps (``|true| > threshold``), the fraction whose sign
  the estimator gets right; a zero estimate is a coin flip and scores ``0.5``.
- :func:`scaled_rmse`: RMSE after the best non-negative rescaling ``c·est`` of the estimate,
  divided by the RMS of ``true``. 0 = perfect up to scale, 1 = no better than predicting 0.
- :func:`nonzero_fraction`: fraction of steps with a nonzero signal.
- :func:`cell_bias`: the systematic error E[est − true | cell] (noise of the sampled returns
  removed), pooled over cells (e.g. the oracle's (state, window, action)) as a weighted RMS.
- :func:`mean_ci`: mean and Student-t confidence half-width over seeds.
- :func:`rankdata`: average ranks with ties (the Spearman building block).
- :func:`accuracy_metrics`: all of the per-run metrics at once, as a dict.
"""

from __future__ import annotations

import math

import numpy as np

DECISIVE_THRESHOLD: float = 0.05
"""Default ``|A^π|`` above which a step is decisive (rewards of the synthetic tasks are O(1))."""

ZERO_TOL: float = 1e-9
"""An advantage with ``|a| <= ZERO_TOL`` counts as zero (no signal)."""

# two-sided 95% Student-t quantiles t_{0.975, df} for df = 1..30
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)


def _pair(est: np.ndarray, true: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    e = np.asarray(est, dtype=np.float64).ravel()
    a = np.asarray(true, dtype=np.float64).ravel()
    if e.shape != a.shape:
        raise ValueError(f"est and true must have the same length, got {e.size} and {a.size}")
    if not (np.all(np.isfinite(e)) and np.all(np.isfinite(a))):
        raise ValueError("est and true must be finite")
    return e, a


def pearson(est: np.ndarray, true: np.ndarray) -> float:
    """Pearson correlation; ``0.0`` when either side is constant or there are < 2 steps."""
    e, a = _pair(est, true)
    if e.size < 2:
        return 0.0
    e, a = e - e.mean(), a - a.mean()
    den = math.sqrt(float(e @ e) * float(a @ a))
    if den <= 1e-300 or float(e @ e) <= ZERO_TOL**2 * e.size or float(a @ a) <= ZERO_TOL**2 * a.size:
        return 0.0
    return float(np.clip((e @ a) / den, -1.0, 1.0))


def rankdata(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n with ties given their average rank (as ``scipy.stats.rankdata``)."""
    x = np.asarray(x, dtype=np.float64).ravel()
    n = x.size
    if n == 0:
        return np.zeros(0)
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    new = np.r_[True, xs[1:] != xs[:-1]]
    tie_id = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    ends = np.r_[starts[1:], n]
    avg = (starts + ends + 1) / 2.0  # mean of positions start+1..end (1-based)
    ranks = np.empty(n)
    ranks[order] = avg[tie_id]
    return ranks


def spearman(est: np.ndarray, true: np.ndarray) -> float:
    """Spearman rank correlation (Pearson of average ranks); ``0.0`` for a constant side."""
    e, a = _pair(est, true)
    # round tiny numerical noise so that "equal" advantages tie
    return pearson(rankdata(np.round(e, 12)), rankdata(np.round(a, 12)))


def sign_accuracy(est: np.ndarray, true: np.ndarray, threshold: float = DECISIVE_THRESHOLD) -> float:
    """Share of decisive steps (``|true| > threshold``) whose sign ``est`` gets right.

    A zero estimate scores 0.5 (a tie broken at random). NaN when no step is decisive.
    """
    e, a = _pair(est, true)
    if threshold < 0:
        raise ValueError(f"threshold must be >= 0, got {threshold}")
    dec = np.abs(a) > threshold
    if not np.any(dec):
        return float("nan")
    e, a = e[dec], a[dec]
    score = np.where(np.abs(e) <= ZERO_TOL, 0.5, (np.sign(e) == np.sign(a)).astype(np.float64))
    return float(score.mean())


def scaled_rmse(est: np.ndarray, true: np.ndarray) -> float:
    """min over c >= 0 of RMS(c·est − true) / RMS(true), in [0, 1]; NaN when ``true`` is all zero."""
    e, a = _pair(est, true)
    aa = float(a @ a)
    if aa <= 0.0:
        return float("nan")
    ee = float(e @ e)
    c = max(0.0, float(e @ a) / ee) if ee > 0 else 0.0
    r = c * e - a
    return float(min(1.0, math.sqrt(float(r @ r) / aa)))


def nonzero_fraction(est: np.ndarray) -> float:
    """Fraction of steps whose advantage is nonzero (``|a| > ZERO_TOL``)."""
    e = np.asarray(est, dtype=np.float64).ravel()
    return float(np.mean(np.abs(e) > ZERO_TOL)) if e.size else 0.0


def cell_bias(est: np.ndarray, true: np.ndarray, cells: np.ndarray, min_count: int = 5) -> float:
    """Root-mean-square over cells of the systematic error ``E[est − true | cell]``, weighted by size.

    ``cells`` labels each step (e.g. the oracle's (task, augmented state, action)). Within a cell
    the mean error ``ē`` still carries the noise of the sampled returns, ``E[ē²] = bias² + σ²/n``,
    so each cell contributes the unbiased ``ē² − s²/n`` (``s²`` the sample variance of its errors),
    clipped at 0 after pooling. Cells with fewer than ``min_count`` (>= 2) steps are left out; NaN
    when none is left. Compare estimators in reward units only (no std normalization).
    """
    e, a = _pair(est, true)
    c = np.asarray(cells).ravel()
    if c.shape != e.shape:
        raise ValueError("cells must label every step")
    if min_count < 2:
        raise ValueError(f"min_count must be >= 2 (a variance is needed), got {min_count}")
    _, inv, counts = np.unique(c, return_inverse=True, return_counts=True)
    err = e - a
    mean = np.bincount(inv, weights=err) / counts
    sq = np.bincount(inv, weights=(err - mean[inv]) ** 2)
    keep = counts >= min_count
    if not np.any(keep):
        return float("nan")
    n = counts[keep]
    var_of_mean = sq[keep] / (n - 1) / n
    w = n / n.sum()
    return float(math.sqrt(max(0.0, float(w @ (mean[keep] ** 2 - var_of_mean)))))


def t_quantile_975(df: int) -> float:
    """Two-sided 95% Student-t quantile for ``df`` degrees of freedom (table, then expansion)."""
    if df < 1:
        raise ValueError("df must be >= 1")
    if df <= len(_T975):
        return _T975[df - 1]
    z = 1.959964
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def mean_ci(values: np.ndarray) -> tuple[float, float, int]:
    """``(mean, half_width, n)`` of the finite values: a 95% Student-t interval over seeds.

    Half-width is NaN with fewer than 2 finite values; mean is NaN with none.
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    v = v[np.isfinite(v)]
    n = int(v.size)
    if n == 0:
        return float("nan"), float("nan"), 0
    m = float(v.mean())
    if n < 2:
        return m, float("nan"), n
    return m, t_quantile_975(n - 1) * float(v.std(ddof=1)) / math.sqrt(n), n


def accuracy_metrics(est: np.ndarray, true: np.ndarray, threshold: float = DECISIVE_THRESHOLD) -> dict[str, float]:
    """Pearson, Spearman, sign accuracy, scaled RMSE and nonzero fraction of one run."""
    return {
        "pearson": pearson(est, true),
        "spearman": spearman(est, true),
        "sign_acc": sign_accuracy(est, true, threshold),
        "rmse": scaled_rmse(est, true),
        "nonzero": nonzero_fraction(est),
    }


__all__ = [
    "DECISIVE_THRESHOLD",
    "ZERO_TOL",
    "pearson",
    "spearman",
    "rankdata",
    "sign_accuracy",
    "scaled_rmse",
    "nonzero_fraction",
    "cell_bias",
    "t_quantile_975",
    "mean_ci",
    "accuracy_metrics",
]
