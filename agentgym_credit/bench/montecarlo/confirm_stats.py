"""Statistics of ``bench credit_confirm`` from its saved rows alone: tables, the primary family, power.

What lives here:

- :data:`PRIMARY` — the pre-registered primary comparisons (per env: four; on two envs: a family of 8);
- :func:`save_rows` / :func:`load_rows` — every scored row as Parquet (env, cell, group, row, truth, its SE,
  every estimator's advantage), written atomically, read back with its columns checked
  (:class:`~agentgym_credit.errors.CreditError` subclass :class:`RowsFileError` on a bad file);
- :func:`accuracy_table` — Pearson r of every estimator with the truth per cell (group-bootstrap interval);
- :func:`primary_family` — the primary comparisons with Holm over the family, each p on G − 1 degrees of
  freedom and against the normal; comparisons identical by construction removed first (:func:`dedupe`); each
  also under the robustness lenses of :func:`~agentgym_credit.bench.montecarlo.paired.robustness` (jackknife
  SE, drop-one-row influence, Spearman), Holm-corrected per lens;
- :func:`precision_table` — the common-random-numbers truth's precision per env step against the
  independent strata's on the same rows (when the rows carry both);
- :func:`power_plan` — groups per cell for 80% power at the Holm thresholds from an exploration's effects;
- :func:`recompute` — all of the above from a rows file: what ``bench credit_confirm --recompute`` prints.

**Which reference distribution.** A comparison's t = (r(a) − r(b)) / SE, SE the standard deviation of the
paired group-bootstrap replicates (G rollout groups are the clusters). The decisions use Student-t on G − 1
degrees of freedom: the SE is estimated from G clusters, and the t reference widens the threshold for few
clusters (with G = 8, p < 0.05 needs |t| > 2.36, not 1.96) — conservative when G is small, the same as the
normal from G ≈ 60 on (at G = 80, Holm's first threshold 0.05/8 needs |t| > 2.82 against 2.73). The normal
p (``p_normal``) is reported beside it.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np

from agentgym_credit.bench.montecarlo.paired import holm_family, holm_robust, paired_difference, robustness
from agentgym_credit.errors import CreditError

PRIMARY: tuple[tuple[str, str], ...] = (
    ("graph", "gigpo[state]"),
    ("graph", "grpo"),
    ("gigpo[state]", "grpo"),
    ("graph[obs]", "verl-agent"),
)
"""The primary comparisons (a, b), each on every env of the study: Pearson r(a) − r(b) with the truth."""

REQUIRED = ("env", "cell", "policy", "group", "row", "truth", "truth_se")
ADV = "adv:"  # prefix of the estimator columns


class RowsFileError(CreditError, ValueError):
    """A rows file that is not what :func:`save_rows` writes (missing columns, wrong types, no rows)."""


def save_rows(path: str | os.PathLike, rows: list[dict[str, Any]]) -> Path:
    """Write the scored rows (one dict each: :data:`REQUIRED` keys, ``adv:<estimator>`` columns) as Parquet,
    atomically (a temporary file in the same folder, then ``os.replace``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    cols = list(dict.fromkeys(k for r in rows for k in r))
    table = pa.table({c: [r.get(c) for r in rows] for c in cols})
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def load_rows(paths: str | os.PathLike | Sequence[str | os.PathLike]) -> dict[str, np.ndarray]:
    """Columns of one or more rows files (concatenated), checked: the :data:`REQUIRED` columns, at least one
    ``adv:`` column, finite truth and SE."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    try:
        table = pa.concat_tables([pq.read_table(p) for p in paths], promote_options="default")
    except (OSError, pa.ArrowException) as e:
        raise RowsFileError(f"cannot read the rows file(s) {[str(p) for p in paths]}: {e}") from e
    missing = [c for c in REQUIRED if c not in table.column_names]
    if missing or not any(c.startswith(ADV) for c in table.column_names) or table.num_rows == 0:
        raise RowsFileError(f"{[str(p) for p in paths]} is not a credit_confirm rows file: missing columns "
                            f"{missing or 'adv:<estimator>'} or no rows")
    out = {c: table.column(c).to_numpy(zero_copy_only=False) for c in table.column_names}
    for c in ("truth", "truth_se"):
        out[c] = np.asarray(out[c], dtype=np.float64)
        if not np.isfinite(out[c]).all():
            raise RowsFileError(f"column {c!r} has non-finite values")
    return out


def _select(cols: dict[str, np.ndarray], mask: np.ndarray) -> dict[str, np.ndarray]:
    return {k: v[mask] for k, v in cols.items()}


def reliability(truth: np.ndarray, se: np.ndarray) -> float:
    """1 − mean(se²) / var(truth): the share of the truth's spread over rows that is not Monte-Carlo noise."""
    var = float(np.var(truth, ddof=1)) if len(truth) > 1 else 0.0
    return float(1.0 - np.mean(se**2) / var) if var > 0 else float("nan")


def accuracy_table(cols: dict[str, np.ndarray], boot: int = 400) -> list[dict[str, Any]]:
    """Per cell and estimator: Pearson r with the truth and its 95% group-bootstrap interval (the
    r(a) − r(zero) comparison of :func:`paired_difference`, so the numbers match the primary family's)."""
    out = []
    zero = np.zeros(len(cols["truth"]))
    for cell in sorted(set(cols["cell"].tolist())):
        m = cols["cell"] == cell
        sub = _select(cols, m)
        base = {"cell": cell, "env": str(sub["env"][0]), "policy": str(sub["policy"][0]), "rows": int(m.sum()),
                "groups": len(np.unique(sub["group"])), "reliability": reliability(sub["truth"], sub["truth_se"])}
        for c in sorted(k for k in cols if k.startswith(ADV)):
            d = paired_difference(sub[c], zero[m], sub["truth"], sub["group"], boot=boot)
            out.append({**base, "estimator": c[len(ADV):], "pearson": d["diff"], "lo": d["diff_lo"],
                        "hi": d["diff_hi"]})
    return out


def dedupe(comps: list[dict[str, Any]], cols: dict[str, np.ndarray]) -> tuple[list[dict[str, Any]], list[str]]:
    """Drop comparisons identical by construction: a and b equal on every row of the cell (the comparison
    is 0 by construction), or the same (a, b) advantages as an earlier comparison of the family (e.g. two
    estimators that reduce to one another there). Returns (kept, a line per dropped one)."""
    kept, dropped, seen = [], [], {}
    for c in comps:
        m = cols["cell"] == c["cell"]
        a, b = np.asarray(cols[ADV + c["a"]][m], float), np.asarray(cols[ADV + c["b"]][m], float)
        if np.allclose(a, b, rtol=0, atol=1e-12):
            dropped.append(f"{c['a']} vs {c['b']} on {c['cell']}: identical advantages on every row")
            continue
        key = (c["cell"], a.round(12).tobytes(), b.round(12).tobytes())
        if key in seen:
            dropped.append(f"{c['a']} vs {c['b']} on {c['cell']}: the same comparison as {seen[key]}")
            continue
        seen[key] = f"{c['a']} vs {c['b']}"
        kept.append(c)
    return kept, dropped


def primary_family(cols: dict[str, np.ndarray], pairs: Sequence[tuple[str, str]] = PRIMARY, boot: int = 400,
                   alpha: float = 0.05) -> tuple[list[dict[str, Any]], list[str]]:
    """The primary comparisons on every cell of ``cols``, deduplicated, Holm-corrected over the family."""
    comps = [{"cell": cell, "a": a, "b": b} for cell in sorted(set(cols["cell"].tolist())) for a, b in pairs
             if ADV + a in cols and ADV + b in cols]
    comps, dropped = dedupe(comps, cols)
    out = []
    for c in comps:
        m = cols["cell"] == c["cell"]
        args = (cols[ADV + c["a"]][m], cols[ADV + c["b"]][m], cols["truth"][m], cols["group"][m])
        rec = {**c, "env": str(cols["env"][m][0]), **paired_difference(*args, boot=boot),
               **robustness(*args, boot=boot)}
        for k in ("drop_row", "drop_max_at"):  # positions in the cell -> the rows file's (group, row)
            i = rec[k]
            rec[k] = f"group {cols['group'][m][i]} row {cols['row'][m][i]}" if i >= 0 else "–"
        out.append(rec)
    holm_robust(holm_family(out, alpha), alpha)
    for i, r in enumerate(sorted(out, key=lambda r: r["p"])):  # Holm's threshold at each one's rank
        r["holm_threshold"] = alpha / (len(out) - i)
    return out, dropped


def t_quantile(p: float, df: float) -> float:
    """Student-t quantile at probability ``p`` (Cornish-Fisher expansion of the normal's; within 0.5% from
    df = 5 on for the tails used here).

    >>> round(t_quantile(0.975, 10), 2), round(t_quantile(0.99875, 1e9), 3)
    (2.23, 3.023)
    """
    z = NormalDist().inv_cdf(p)
    v = max(float(df), 1.0)
    return z + (z**3 + z) / (4 * v) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2) + \
        (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3)


def power(effect: float, se1: float, groups: int, alpha: float) -> float:
    """Power of the two-sided t test (G − 1 df) at ``alpha`` for a true difference ``effect`` whose SE with
    one group would be ``se1`` (SE = se1 / sqrt(G)): P(|t| > t_crit) under the normal approximation."""
    if groups < 2 or not se1 > 0:
        return float("nan")
    crit = t_quantile(1 - alpha / 2, groups - 1)
    delta = abs(effect) / (se1 / math.sqrt(groups))
    n = NormalDist()
    return n.cdf(delta - crit) + n.cdf(-delta - crit)


def groups_for_power(effect: float, se1: float, alpha: float, target: float = 0.8, cap: int = 100000) -> int:
    """The fewest groups with :func:`power` ≥ ``target`` (``cap`` if the effect is 0 or too small)."""
    if not (se1 > 0 and abs(effect) > 0):
        return cap
    hi = 2
    while hi < cap and power(effect, se1, hi, alpha) < target:  # doubling, then bisection
        hi = min(cap, hi * 2)
    if hi >= cap and power(effect, se1, cap, alpha) < target:
        return cap
    lo = max(2, hi // 2)
    while lo < hi:
        mid = (lo + hi) // 2
        if power(effect, se1, mid, alpha) >= target:
            hi = mid
        else:
            lo = mid + 1
    return hi


def power_plan(comps: list[dict[str, Any]], family: int, alpha: float = 0.05, target: float = 0.8) -> list[dict[str, Any]]:
    """Per comparison of an exploration: the effect (its r difference), the one-group SE (se · sqrt(G)) and
    the groups a cell needs for ``target`` power at Holm's first (strictest) threshold ``alpha / family``
    — enough for every step of Holm — and at its last (``alpha``)."""
    out = []
    for c in comps:
        se1 = float(c["se"]) * math.sqrt(int(c["groups"]))
        out.append({"cell": c["cell"], "env": c["env"], "a": c["a"], "b": c["b"], "effect": float(c["diff"]),
                    "se1": se1, "groups_explored": int(c["groups"]),
                    "groups_needed": groups_for_power(c["diff"], se1, alpha / family, target),
                    "groups_needed_last_step": groups_for_power(c["diff"], se1, alpha, target)})
    return out


def precision_table(cols: dict[str, np.ndarray]) -> list[dict[str, Any]]:
    """Per cell, on rows that have both truths: mean se², env steps per row, and the precision per env step
    of the common-random-numbers truth over the independent strata's: (se²_old · steps_old) / (se²_new ·
    steps_new) (> 1: the new truth is cheaper at the same precision)."""
    if "truth_old" not in cols:
        return []
    out = []
    for cell in sorted(set(cols["cell"].tolist())):
        m = (cols["cell"] == cell) & np.isfinite(np.asarray(cols["truth_old"], dtype=float))
        if not m.any():
            continue
        se_new, se_old = np.asarray(cols["truth_se"][m], float), np.asarray(cols["truth_old_se"][m], float)
        st_new, st_old = np.asarray(cols["truth_steps"][m], float), np.asarray(cols["truth_old_steps"][m], float)
        new, old = float(np.mean(se_new**2) * st_new.mean()), float(np.mean(se_old**2) * st_old.mean())
        out.append({"cell": cell, "rows": int(m.sum()), "se2_new": float(np.mean(se_new**2)),
                    "se2_old": float(np.mean(se_old**2)), "steps_new": float(st_new.mean()),
                    "steps_old": float(st_old.mean()), "gain": old / new if new > 0 else float("nan"),
                    "reliability_new": reliability(cols["truth"][m], se_new),
                    "reliability_old": reliability(np.asarray(cols["truth_old"][m], float), se_old),
                    "r_new_old": float(np.corrcoef(cols["truth"][m], np.asarray(cols["truth_old"][m], float))[0, 1])})
    return out


def recompute(paths: str | os.PathLike | Sequence[str | os.PathLike], boot: int = 400) -> dict[str, Any]:
    """Every table and p-value of the study from its rows file(s) alone."""
    cols = load_rows(paths)
    fam, dropped = primary_family(cols, boot=boot)
    return {"estimators": accuracy_table(cols, boot=boot), "primary": fam, "dropped": dropped,
            "cells": sorted(set(cols["cell"].tolist())), "rows": len(cols["truth"])}


__all__ = ["PRIMARY", "RowsFileError", "save_rows", "load_rows", "reliability", "accuracy_table", "dedupe",
           "primary_family", "precision_table", "t_quantile", "power", "groups_for_power", "power_plan", "recompute"]
