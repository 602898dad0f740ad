"""Checks of ``bench train_real``'s learning metric, and the power plan of a confirmation.

:func:`compare` (the paired comparison over seeds every table uses) lives here, below the report.

Rendered into the study's report (:mod:`.train_real_report`):

- :func:`kl_table`: the policy change each arm bought per update (achieved mean KL(π_old‖π_new) over the
  batch's rows, from the ``kls`` of every checkpoint row): updates per run, the share of updates that changed
  nothing (every group all-fail or all-win: zero advantages), and the KL of the others (mean and 95% interval
  over seeds; min and max over all updates);
- :func:`aa_coverage`: the null case of the paired comparison: every arm against *itself* on re-paired seeds
  (run i of one random half against run j of the other: the true difference is 0), the share of 95%
  intervals that hold 0 (should be near 0.95) and the share called a win or loss (near 0.05);
- :func:`reference_rows`: the reference arms against the estimators: ``null`` (random-sign advantages) should
  not beat anything, ``imitate`` (the known effect) should beat ``grpo``;
- :func:`power_plan`: from an exploration's per-seed summaries, the seeds a confirmation needs per comparison
  so that a relative effect ``rel`` of the second arm's mean is found with power ``power`` by the paired
  t-test at the Bonferroni level ``α/m`` (Holm's first step, the hardest), and the power at a given number of
  seeds — normal approximation with the exploration's SD of the paired differences, stated as such.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from agentgym_credit.bench.learning.matched_step import dilute_share
from agentgym_credit.bench.stats import metrics as M
from agentgym_credit.bench.stats import report as R


def compare(runs: Sequence[dict[str, Any]], env: str, a: str, b: str, measure: str) -> dict[str, Any]:
    """Paired difference ``a − b`` over seeds of one measure, its 95% interval and two-sided p."""
    by = {(r["arm"], r["seed"]): r[measure] for r in runs if r["env"] == env}
    seeds = sorted({s for (x, s) in by if x == a} & {s for (x, s) in by if x == b})
    x = np.array([by[(a, s)] for s in seeds], dtype=np.float64)
    y = np.array([by[(b, s)] for s in seeds], dtype=np.float64)
    d, h, n = M.paired_diff_ci(x, y) if seeds else (float("nan"), float("nan"), 0)
    base = float(np.mean(y)) if seeds else float("nan")
    return {"env": env, "a": a, "b": b, "measure": measure, "diff": d, "ci": h, "n": n,
            "relative": d / base if base else float("nan"),
            "p": M.p_from_interval(d, h, n - 1) if n > 1 and math.isfinite(h) else float("nan")}


def _kls(r: dict[str, Any]) -> list[float]:
    s = r.get("kls", "")
    if isinstance(s, (int, float)):  # a CSV cell read back as a number: one update's KL, or nan / empty
        return [] if np.isnan(s) else [float(s)]
    if s in ("", None):
        return []
    return [float(x) for x in str(s).split(";") if x]


def kl_table(rows: Sequence[dict[str, Any]], env: str, arms: Sequence[str]) -> str:
    """Markdown table of the policy change per update, per arm (empty when the rows hold none)."""
    tab = []
    for a in arms:
        per_seed: dict[int, list[float]] = {}
        for r in rows:
            if r["env"] == env and r["arm"] == a:
                per_seed.setdefault(int(r["seed"]), []).extend(_kls(r))
        every = [k for v in per_seed.values() for k in v]
        if not every:
            continue
        moved = [k for k in every if k > 0]
        tab.append([a, R.fmt_ci(*M.mean_ci([len(v) for v in per_seed.values()])[:2], 1),
                    R.fmt_num(1 - len(moved) / len(every)),
                    R.fmt_ci(*M.mean_ci([np.mean([k for k in v if k > 0] or [np.nan]) for v in per_seed.values()])[:2], 4),
                    f"{min(moved):.4f} / {max(moved):.4f}" if moved else "-"])
    if not tab:
        return ""
    return R.markdown_table(["arm", "updates per run", "share of updates with zero advantages",
                             "achieved KL per update (mean over non-zero updates)", "min / max KL"], tab)


def aa_coverage(summary: Sequence[dict[str, Any]], env: str, arms: Sequence[str], measure: str,
                reps: int = 200, seed: int = 0) -> tuple[float, float, int]:
    """``(coverage, false-call rate, comparisons)`` of the 95% paired interval when an arm meets itself on
    re-paired seeds (:mod:`module docstring <.train_real_checks>`)."""
    rng = np.random.default_rng(seed)
    hold, calls, n = 0, 0, 0
    for a in arms:
        v = np.array([r[measure] for r in summary if r["env"] == env and r["arm"] == a], dtype=np.float64)
        v = v[np.isfinite(v)]
        if len(v) < 4:
            continue
        for _ in range(reps):
            p = rng.permutation(len(v))
            h = len(v) // 2
            d, w, _k = M.paired_diff_ci(v[p[:h]], v[p[h:2 * h]])
            if not math.isfinite(w):
                continue
            n += 1
            hold += abs(d) <= w
            calls += M.verdict(d, w) != "tie"
    return (hold / n if n else float("nan")), (calls / n if n else float("nan")), n


def reference_rows(summary: Sequence[dict[str, Any]], env: str, arms: Sequence[str], measure: str
                   ) -> list[list[Any]]:
    """Table rows: ``null`` − each estimator arm (expected: never a win), each imitation arm − ``grpo``
    and − ``null`` (a win) and ``grpo`` − each ``grpo-dilute[q]`` with ``q`` > 0 (a win: the calibrated dose)."""
    out = []
    imitations = ("imitate", "imitate-path")
    doses = [a for a in arms if (dilute_share(a) or 0.0) > 0]
    pairs = [("null", a) for a in arms if a not in ("null", *imitations, *doses)]
    pairs += [(i, b) for i in imitations for b in ("grpo", "null")]
    pairs += [("grpo", d) for d in doses]
    for a, b in pairs:
        if a not in arms or b not in arms:
            continue
        c = compare(summary, env, a, b, measure)
        if c["n"]:
            want = "win" if a in imitations or b in doses else "not a win"
            out.append([f"{a} − {b}", c["n"], R.fmt_ci(c["diff"], c["ci"]), R.fmt_num(c["p"]),
                        M.verdict(c["diff"], c["ci"]), want])
    return out


def _z(q: float) -> float:
    """Standard normal quantile."""
    from statistics import NormalDist

    return NormalDist().inv_cdf(q)


def power_plan(summary: Sequence[dict[str, Any]], env: str, pairs: Sequence[tuple[str, str]], measure: str,
               rel: float = 0.15, m: int = 4, power: float = 0.8, alpha: float = 0.05, at: int = 20
               ) -> list[dict[str, Any]]:
    """Per comparison ``a − b``: the exploration's mean difference and SD of the paired differences, the
    effect to find (``rel`` × mean of ``b``), seeds needed, and the power at ``at`` seeds."""
    from statistics import NormalDist

    za = _z(1 - alpha / (2 * m))
    out = []
    for a, b in pairs:
        by = {(r["arm"], int(r["seed"])): r[measure] for r in summary if r["env"] == env}
        seeds = sorted({s for (x, s) in by if x == a} & {s for (x, s) in by if x == b})
        if len(seeds) < 3:
            continue
        d = np.array([by[(a, s)] - by[(b, s)] for s in seeds], dtype=np.float64)
        base = float(np.mean([by[(b, s)] for s in seeds]))
        sd = float(d.std(ddof=1))
        delta = abs(rel * base)
        need = math.ceil(((za + _z(power)) * sd / delta) ** 2) if delta > 0 and sd > 0 else float("nan")
        pw = NormalDist().cdf(delta / (sd / math.sqrt(at)) - za) if sd > 0 and delta > 0 else float("nan")
        out.append({"env": env, "a": a, "b": b, "seeds": len(seeds), "diff": float(d.mean()), "sd": sd,
                    "base": base, "effect": delta, "need": need, "power_at": pw, "at": at})
    return out


def checks_section(rows: Sequence[dict[str, Any]], summary: Sequence[dict[str, Any]], env: str,
                   arms: Sequence[str], measure: str, primary: Sequence[tuple[str, str]], phase: str) -> str:
    """The report's section of the checks above for one env (empty when nothing applies)."""
    out = []
    kt = kl_table(rows, env, arms)
    if kt:
        out += ["Policy change per update (achieved mean KL(π_old‖π_new) over the batch's rows; an update whose "
                "advantages are all zero changes nothing):", "", kt, ""]
    cov, calls, n = aa_coverage(summary, env, arms, measure)
    if n:
        out += [f"Null case (A/A): each arm against itself on randomly re-paired seeds ({measure}, {n} comparisons): "
                f"95% intervals hold 0 in {cov:.3f} of them (nominal 0.95); called a win or loss in {calls:.3f} "
                "(nominal 0.05).", ""]
    ref = reference_rows(summary, env, arms, measure)
    if ref:
        out += [f"Reference arms ({measure}; uncorrected 95% intervals): `null` = random-sign advantages (no "
                "information), `imitate` = +1 on the expert's command (the known effect), `imitate-path` = the same "
                "on the rows whose trajectory has followed the expert so far, 0 after it left the path; "
                "`grpo-dilute[q]` = GRPO with a share q of each update's groups given no information (trajectories' "
                "advantages permuted within the group), the calibrated known effect.", "",
                R.markdown_table(["comparison", "seeds", "diff", "p", "interval says", "expected"], ref), ""]
    if phase == "exploration" and primary:
        plan = power_plan(summary, env, primary, measure)
        if plan:
            tab = [[f"{p['a']} − {p['b']}", p["seeds"], R.fmt_num(p["diff"]), R.fmt_num(p["sd"]),
                    R.fmt_num(p["effect"]), p["need"], R.fmt_num(p["power_at"])] for p in plan]
            out += [f"Power plan for a confirmation ({measure}; paired t at Holm's hardest level α/m = 0.05/4; "
                    "effect = 15% of the second arm's exploration mean; normal approximation with the "
                    "exploration's SD of paired differences):", "",
                    R.markdown_table(["comparison", "seeds", "diff", "SD of paired diff", "effect to find",
                                      "seeds for power 0.8", "power at 20 seeds"], tab), ""]
    return "\n".join(out)


__all__ = ["compare", "kl_table", "aa_coverage", "reference_rows", "power_plan", "checks_section"]
