"""Paired comparisons of two estimators against Monte-Carlo truth, and how robust their verdicts are.

Shared by ``bench credit_real`` (:mod:`.credit_real`) and ``bench credit_confirm`` (:mod:`.confirm_stats`), so
every report of either gets the same checks:

- :func:`paired_difference` — Pearson r(a) − r(b) with the truth, a paired group-bootstrap interval and p;
- :func:`holm_family` — Holm's correction over a family of those;
- :func:`robustness` — the same comparison under three other lenses (issue 41.4): a **jackknife** SE
  (leave-one-group-out) beside the bootstrap's, the **drop-one-row influence** (the largest change of the
  difference when one scored row is left out, and the comparison recomputed without the row that moves it
  most toward 0), and **Spearman** (rank correlation) beside Pearson; :func:`holm_robust` applies Holm
  to each lens over the same family and records whether every verdict agrees with the bootstrap's;
- :func:`robust_md` — the table of all of it for a report.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from agentgym_credit.bench.stats import metrics as M
from agentgym_credit.bench.stats import report as R


@np.errstate(invalid="ignore", divide="ignore")
def _r(e: np.ndarray, t: np.ndarray) -> float:
    x = float(np.corrcoef(e, t)[0, 1]) if len(t) > 2 and e.std() > 1e-12 and t.std() > 1e-12 else 0.0
    return x if math.isfinite(x) else 0.0  # no spread left once rounded (float32 estimates): no correlation


_BOOT = [400]

PAIRS: tuple[tuple[str, str], ...] = (
    ("gigpo[state]·A^S", "grpo"),
    ("gigpo[state]", "grpo"),
    ("gigpo[obs]", "gigpo[state]"),
    ("gigpo[sim≥0.95 difflib]", "gigpo[obs]"),
    ("hgpo·A^H", "gigpo[state]·A^S"),
    ("hgpo", "gigpo[state]"),
    ("graph", "gigpo[state]"),
    ("graphgpo", "gigpo[obs]"),
    ("gagpo", "gigpo[state]"),
)
"""Paired comparisons the findings rest on: Pearson r(a) − r(b) on the same rows and bootstrap resamples."""


def paired_difference(a: np.ndarray, b: np.ndarray, truth: np.ndarray, clusters: np.ndarray,
                      boot: int | None = None) -> dict[str, Any]:
    """r(a, truth) − r(b, truth) with a 95% paired group-bootstrap interval (percentile) and a p-value.

    ``verdict`` (uncorrected) is "a" / "b" when the percentile interval excludes 0 (that estimator is the
    more accurate), else "tie". ``se`` is the standard deviation of the bootstrap replicates and ``p``
    the two-sided p-value of ``diff`` = 0 from ``t = diff / se`` against a Student-t with G − 1 degrees
    of freedom (G = rollout groups, the bootstrap's clusters; :func:`~agentgym_credit.bench.stats.metrics.
    p_from_interval`): a normal approximation from the bootstrap SE, made conservative for few clusters
    (with 8 groups, p < 0.05 needs |t| > 2.36, where the percentile interval excludes 0 near |t| > 1.96).
    A p-value resolves far below 1/B, which a count of bootstrap replicates on one side of 0 cannot
    (Holm over ~100 comparisons asks p < 0.0005). ``se`` = 0 (equal inputs) gives p = 1 when ``diff``
    is 0. ``p_normal`` is the same t against the standard normal (the reference a large G tends to).
    ``boot`` replicates (default: the run's ``bootstrap``). :func:`holm_family` corrects a family of these.
    """

    a, b, truth = (np.asarray(x, dtype=np.float64) for x in (a, b, truth))
    d = _r(a, truth) - _r(b, truth)
    gids = np.unique(clusters)
    members = [np.flatnonzero(clusters == g) for g in gids]
    rng = np.random.default_rng(321)
    reps = []
    for _ in range(_BOOT[0] if boot is None else int(boot)):
        ix = np.concatenate([members[p] for p in rng.integers(len(gids), size=len(gids))])
        reps.append(_r(a[ix], truth[ix]) - _r(b[ix], truth[ix]))
    lo, hi = np.percentile(reps, [2.5, 97.5])
    se = float(np.std(reps, ddof=1)) if len(reps) > 1 else float("nan")
    df = len(gids) - 1
    p = M.p_from_interval(d, M.t_quantile_975(df) * se, df) if df >= 1 and math.isfinite(se) else float("nan")
    p_norm = math.erfc(abs(d / se) / math.sqrt(2)) if math.isfinite(se) and se > 0 else (1.0 if d == 0 else 0.0)
    return {"diff": d, "diff_lo": float(lo), "diff_hi": float(hi), "se": se, "groups": len(gids), "p": p,
            "p_normal": p_norm, "verdict": "a" if lo > 0 else "b" if hi < 0 else "tie"}


def holm_family(pairs: list[dict[str, Any]], alpha: float = 0.05) -> list[dict[str, Any]]:
    """Holm's step-down correction (family-wise error <= ``alpha``) over every comparison in ``pairs``
    (:func:`~agentgym_credit.bench.stats.metrics.holm_verdicts`): each gets ``holm`` ("a" / "b" / "tie") and
    ``family`` (the number of comparisons corrected over). ``verdict`` (uncorrected) is kept."""
    v = M.holm_verdicts([p["diff"] for p in pairs], [p["p"] for p in pairs], alpha)
    m = sum(1 for p in pairs if math.isfinite(p["p"]))
    for p, x in zip(pairs, v):
        p["holm"] = {"win": "a", "loss": "b"}.get(x, "tie")
        p["family"] = m
    return pairs


def loo_pearson(e: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Pearson r(e, t) with each row left out in turn (exact, O(n)); 0 where a side has no spread left.

    >>> x = np.array([0.0, 1.0, 2.0, 10.0]); y = np.array([0.0, 1.0, 2.0, -5.0])
    >>> loo_pearson(x, y).round(3).tolist()
    [-0.973, -0.891, -0.97, 1.0]
    """
    e, t = np.asarray(e, dtype=np.float64), np.asarray(t, dtype=np.float64)
    n = len(e)
    if n < 4:
        return np.zeros(n)
    e, t = e - e.mean(), t - t.mean()
    m = n - 1
    se, st = e.sum() - e, t.sum() - t  # sums without row i
    sxy = (e * t).sum() - e * t - se * st / m
    sxx = (e * e).sum() - e * e - se * se / m
    syy = (t * t).sum() - t * t - st * st / m
    ok = (sxx > 1e-20 * max(float((e * e).sum()), 1e-300)) & (syy > 1e-20 * max(float((t * t).sum()), 1e-300))
    out = np.zeros(n)
    out[ok] = sxy[ok] / np.sqrt(sxx[ok] * syy[ok])
    return np.clip(out, -1.0, 1.0)


def _t_p(diff: float, se: float, df: int) -> float:
    if df < 1 or not math.isfinite(se):
        return float("nan")
    if se <= 0:
        return 1.0 if diff == 0 else 0.0
    return M.p_from_interval(diff, M.t_quantile_975(df) * se, df)


def jackknife(a: np.ndarray, b: np.ndarray, truth: np.ndarray, clusters: np.ndarray) -> tuple[float, np.ndarray]:
    """Leave-one-group-out jackknife SE of r(a) − r(b): ``sqrt((G − 1)/G · Σ (d_g − mean d)²)`` over the G
    replicates ``d_g`` that leave group g out; and the replicates."""
    a, b, truth = (np.asarray(x, dtype=np.float64) for x in (a, b, truth))
    clusters = np.asarray(clusters)
    gids = np.unique(clusters)
    reps = np.array([_r(a[k], truth[k]) - _r(b[k], truth[k]) for k in (clusters != g for g in gids)])
    if len(gids) < 2:
        return float("nan"), reps
    return float(math.sqrt((len(gids) - 1) / len(gids) * np.sum((reps - reps.mean()) ** 2))), reps


def robustness(a: np.ndarray, b: np.ndarray, truth: np.ndarray, clusters: np.ndarray,
               boot: int | None = None) -> dict[str, Any]:
    """The comparison r(a) − r(b) under the other lenses (module docstring):

    - ``se_jk``, ``p_jk``: jackknife SE and its p (Student-t, G − 1 df, as the bootstrap's);
    - ``drop_max``: the largest change of the difference when one row is left out (signed), ``drop_max_at``
      its row (position in the inputs); ``drop_row``: the row whose removal moves the difference most toward
      0, and ``diff_drop``, ``se_drop``, ``p_drop``: the comparison recomputed (bootstrap) without it;
    - ``spearman_diff`` [``spearman_lo``, ``spearman_hi``], ``p_spearman``: the same paired group bootstrap on
      ranks (ranks taken once over all rows, not within each replicate).
    """
    a, b, truth = (np.asarray(x, dtype=np.float64) for x in (a, b, truth))
    clusters = np.asarray(clusters)
    d = _r(a, truth) - _r(b, truth)
    df = len(np.unique(clusters)) - 1
    se_jk, _ = jackknife(a, b, truth, clusters)
    change = (loo_pearson(a, truth) - loo_pearson(b, truth)) - d
    out: dict[str, Any] = {"se_jk": se_jk, "p_jk": _t_p(d, se_jk, df)}
    if len(change) >= 4:
        i = int(np.argmax(np.abs(change)))
        j = int(np.argmax(-np.sign(d) * change)) if d != 0 else i
        keep = np.ones(len(a), dtype=bool)
        keep[j] = False
        pd = paired_difference(a[keep], b[keep], truth[keep], clusters[keep], boot=boot)
        out.update({"drop_max": float(change[i]), "drop_max_at": i, "drop_row": j, "diff_drop": pd["diff"],
                    "se_drop": pd["se"], "p_drop": pd["p"]})
    else:
        out.update({"drop_max": float("nan"), "drop_max_at": -1, "drop_row": -1, "diff_drop": d,
                    "se_drop": float("nan"), "p_drop": float("nan")})
    ra, rb, rt = M.rankdata(a.round(12)), M.rankdata(b.round(12)), M.rankdata(truth)
    sp = paired_difference(ra, rb, rt, clusters, boot=boot)
    out.update({"spearman_diff": sp["diff"], "spearman_lo": sp["diff_lo"], "spearman_hi": sp["diff_hi"],
                "p_spearman": sp["p"]})
    return out


LENSES: tuple[tuple[str, str, str], ...] = (("jk", "diff", "p_jk"), ("drop", "diff_drop", "p_drop"),
                                            ("spearman", "spearman_diff", "p_spearman"))
"""(name, difference key, p key) of each lens :func:`holm_robust` corrects."""


def holm_robust(pairs: list[dict[str, Any]], alpha: float = 0.05) -> list[dict[str, Any]]:
    """Holm over the family for each lens of :func:`robustness` (the pairs already carry ``holm`` from
    :func:`holm_family`): ``holm_jk``, ``holm_drop``, ``holm_spearman`` ("a" / "b" / "tie") and ``robust``
    (True when all three agree with the bootstrap's Holm verdict). Pairs without the lens' keys are left out."""
    for name, dkey, pkey in LENSES:
        have = [p for p in pairs if pkey in p]
        v = M.holm_verdicts([p[dkey] for p in have], [p[pkey] for p in have], alpha)
        for p, x in zip(have, v):
            p[f"holm_{name}"] = {"win": "a", "loss": "b"}.get(x, "tie")
    for p in pairs:
        if all(f"holm_{n}" in p for n, _, _ in LENSES):
            p["robust"] = all(p[f"holm_{n}"] == p.get("holm", "tie") for n, _, _ in LENSES)
    return pairs


def _v(p: dict[str, Any], key: str) -> str:
    return {"a": p["a"], "b": p["b"]}.get(p.get(key, "tie"), "tie")


def p_text(p: float) -> str:
    """A p-value for a table: 4 decimals, scientific below 1e-4, "–" when unknown."""
    if not math.isfinite(p):
        return "–"
    return f"{p:.4f}" if p >= 1e-4 else f"{p:.0e}"


def robust_md(pairs: list[dict[str, Any]], label: Any = None) -> str:
    """The robustness table of a family (one row per comparison with :func:`robustness`' keys) and a summary
    line; ``label(pair)`` names the comparison's cell (default: its ``env``, ``policy`` and ``N`` where present)."""
    rows = [p for p in pairs if "p_jk" in p]
    if not rows:
        return "No comparison carries the robustness checks."
    lab = label or (lambda p: " / ".join(str(p[k]) for k in ("env", "policy", "N") if k in p))
    body = [[lab(p), f"{p['a']} − {p['b']}", f"{p['diff']:+.3f}", f"{p['se']:.3f} / {p['se_jk']:.3f}",
             f"{p_text(p['p'])} / {p_text(p['p_jk'])}", f"{_v(p, 'holm')} / {_v(p, 'holm_jk')}",
             f"{p['drop_max']:+.3f}", f"{p['diff_drop']:+.3f} (p {p_text(p['p_drop'])})", _v(p, "holm_drop"),
             f"{p['spearman_diff']:+.3f} [{p['spearman_lo']:+.3f}, {p['spearman_hi']:+.3f}]", _v(p, "holm_spearman"),
             "yes" if p.get("robust") else "no"] for p in rows]
    table = R.markdown_table(["cell", "comparison", "Pearson r(a) − r(b)", "SE bootstrap / jackknife",
                              "p bootstrap / jackknife", "Holm bootstrap / jackknife",
                              "largest change, one row dropped", "without the row most toward 0",
                              "Holm, that row dropped", "Spearman ρ(a) − ρ(b) [95% CI]", "Holm, Spearman",
                              "all verdicts agree"], body)
    decided = [p for p in rows if p.get("holm", "tie") != "tie"]
    flips = [p for p in rows if not p.get("robust")]
    return (table + f"\n\n{len(decided)} of {len(rows)} comparisons are decided by Holm on the bootstrap; "
            f"{len(flips)} change verdict under at least one lens (jackknife SE, the most supportive row dropped, "
            "Spearman). Each lens is Holm-corrected over the same family. Spearman's interval is the paired group "
            "bootstrap on ranks taken once over all rows.")


__all__ = ["p_text", "PAIRS", "paired_difference", "holm_family", "loo_pearson", "jackknife", "robustness", "LENSES",
           "holm_robust", "robust_md"]
