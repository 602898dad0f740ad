"""``agentgym-credit bench branching``: flat groups vs rollout trees at an equal env-step budget, scored
against the exact A^π.

For each synthetic task family × behaviour policy × seed, on the same task instances and reset seeds:

- **flat**: groups of ``n`` (default 4) independent rollouts;
- **tree:<rule>**: groups of ``roots`` (default 2) rollouts plus branches restored from the roots'
  true states (:mod:`agentgym_credit.wrappers.branching`, ``budget_trajectories = n - roots``: the
  extra env steps are ``n - roots`` times the group's mean root length, so both arms spend about
  the same env steps; the measured ratio is reported), one arm per selection rule;
- **tree:<rule>+pool**: the same with the groups' budgets pooled (``BranchConfig(pool=True)``: the
  run's branches go to the best-scoring nodes of any group).

Every arm runs the real :class:`~agentgym_credit.wrappers.GroupedRolloutCollector`; the behaviour
policy is sampled by :class:`TreePolicy` (a branch continues its parent's history window, so
window policies stay the policy the oracle evaluates); the oracle (:mod:`agentgym_credit.credit.oracle`)
gives A^π of every recorded row at its true (state, window, env step). Scored per run:

- ``signal``: share of rows with a nonzero GiGPO step term A^S (state anchors): the "step signal";
- ``pearson``: Pearson of GiGPO's A^E + A^S with A^π, and ``pearson_AS`` of A^S alone;
- ``pearson_tree``: Tree-GRPO's advantage (the ``tree`` estimator) with A^π (equals GRPO on flat);
- ``bias_AS``: the cluster-robust bias of A^S vs A^π (:func:`~agentgym_credit.bench.stats.metrics.
  cluster_robust_bias`, clusters = rollout groups/trees, cells = (instance, state, window, action, t));
- ``steps``: env steps per group.

Cells report mean ± 95% t-interval over seeds; tree-vs-flat differences are paired over seeds, and a
win or loss is claimed only when the paired interval excludes 0. Outputs: ``branching.md``,
``branching.csv`` (summary), ``branching_runs.csv`` (one row per run and arm), ``branching_signal.png``
and ``branching_pearson.png``.

What lives here: :class:`BranchBenchConfig`, :class:`TreePolicy`, :func:`run_arm`, :func:`run_benchmark`,
:func:`write_report`, :func:`main`.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_credit.bench.exact.credit import POLICIES, TASKS, GroundTruth, PolicySpec
from agentgym_credit.bench.stats import metrics as M
from agentgym_credit.bench.stats import report as R
from agentgym_credit.credit import advantages
from agentgym_credit.credit.anchor_groups import gigpo_step
from agentgym_credit.credit.windows import episode_windows, push_window
from agentgym_credit.wrappers.branching import RULES, BranchConfig
from agentgym_credit.wrappers.collector import GroupedRolloutCollector
from agentgym_credit.wrappers.rollout_batch import RolloutBatch

DEFAULT_POLICIES = ("uniform", "softQ*(T=0.3)", "revisit-avoid(W=2)")


@dataclass
class BranchBenchConfig:
    """What ``bench branching`` runs (see the module docstring)."""

    tasks: tuple[str, ...] = tuple(TASKS)
    policies: tuple[str, ...] = DEFAULT_POLICIES
    n: int = 4
    roots: int = 2
    rules: tuple[str, ...] = RULES
    pooled: tuple[str, ...] = ("uncertainty",)
    groups: int = 16
    seeds: int = 5
    instances: int = 8
    gamma: float = 0.95
    width: int = 2
    out: Path = field(default_factory=lambda: Path("benchmarks/exact"))
    name: str = "branching"

    def validate(self) -> None:
        bad = [t for t in self.tasks if t not in TASKS] + [p for p in self.policies if p not in POLICIES]
        bad += [r for r in (*self.rules, *self.pooled) if r not in RULES]
        if bad:
            raise ValueError(f"unknown tasks/policies/rules {bad}; tasks {list(TASKS)}, policies {list(POLICIES)}, "
                             f"rules {list(RULES)}")
        if not 1 <= self.roots < self.n:
            raise ValueError(f"roots must be in [1, n), got roots={self.roots}, n={self.n}")
        if self.groups < 1 or self.seeds < 1 or self.instances < 1:
            raise ValueError("groups, seeds and instances must be >= 1")


class TreePolicy:
    """Batched behaviour policy for trees: each trajectory keeps its whole root-to-leaf history
    ``[(state_index, action_index), ...]``; a branch starts from its parent's history up to the
    branch point (``info["rollout"]["parent"]``/``["start_t"]``), so a window policy sees the true
    window; actions are drawn with a generator seeded from ``(seed, group, copy)`` at the env step ``t``,
    so a tree's roots are exactly copies 0.. of the flat arm's group (same env RNG too): the arms are
    paired."""

    def __init__(self, gt: GroundTruth, spec: PolicySpec, seed: int):
        self.gt, self.spec, self.seed = gt, spec, int(seed)
        self.history: dict[int, list[tuple[int, int]]] = {}
        self.rngs: dict[int, np.random.Generator] = {}

    def __call__(self, observations: Sequence[str], infos: Sequence[dict[str, Any]]) -> list[str]:
        out = []
        for info in infos:
            roll = info["rollout"]
            j, t = int(roll["traj_id"]), int(roll["t"])
            if j not in self.history:
                parent = roll.get("parent")
                self.history[j] = [] if parent is None else list(self.history[int(parent)][:int(roll["start_t"])])
                self.rngs[j] = np.random.default_rng([self.seed, int(roll["group_id"]), int(roll["copy"])])
            hist = self.history[j]
            task = str(info["task_id"])
            model, pol = self.gt.model(task), self.gt.policy(self.spec, task)
            w = int(getattr(pol, "window", 0))
            window: tuple = ()
            for s_a in hist[-w:] if w else ():
                window = push_window(window, s_a[0], s_a[1], w)
            s = int(info["state_index"])
            a = pol.sample(model, s, window, None if model.horizon is None else t, self.rngs[j])
            hist.append((s, a))
            out.append(model.actions[s][a])
        return out


def _truth(batch: RolloutBatch, gt: GroundTruth, spec: PolicySpec) -> tuple[np.ndarray, np.ndarray]:
    """A^π of every row (at its root-to-leaf window and env step) and its bias cell."""
    n = len(batch)
    adv = np.empty(n)
    cells = np.empty(n, dtype=np.int64)
    ids: dict[tuple, int] = {}
    tt = batch.traj
    full: dict[int, tuple[list[int], list[int]]] = {}
    start = np.zeros(len(tt), dtype=np.int64)
    bounds = np.searchsorted(batch.traj_id, np.arange(len(tt) + 1))
    for j in range(len(tt)):  # parents come before their branches
        rows = np.arange(bounds[j], bounds[j + 1])
        task = tt.task_id[j]
        model, vals = gt.model(task), gt.values(spec, task)
        s = batch.state_index[rows]
        a = [model.action_index(int(si), batch.action[r]) for si, r in zip(s, rows)]
        p = int(tt.parent[j])
        if p >= 0:
            start[j] = start[p] + tt.branch_t[j]
            ps, pa = full[p]
            k = int(tt.branch_t[j])
            fs, fa = ps[:k] + s.tolist(), pa[:k] + a
        else:
            fs, fa = s.tolist(), a
        full[j] = (fs, fa)
        wins = episode_windows(fs, fa, vals.window_size)[len(fs) - len(rows):]
        t_abs = start[j] + batch.t[rows]
        adv[rows] = vals.advantages_for_steps(s, np.array(a, dtype=np.int64), t_abs, wins)
        for r, si, ai, w, ta in zip(rows, s, a, wins, t_abs):
            cells[r] = ids.setdefault((task, int(si), w, int(ai), int(ta)), len(ids))
    return adv, cells


def run_arm(gt: GroundTruth, spec: PolicySpec, cfg: BranchBenchConfig, seed: int, rule: str | None
            ) -> dict[str, Any]:
    """One run: collect (flat if ``rule`` is None, else a tree arm; ``"<rule>+pool"`` pools the groups'
    budgets), score against A^π."""
    horizon = int(gt.model(gt.task_ids(1, 0)[0]).horizon or 100)
    n = cfg.n if rule is None else cfg.roots
    pool = rule is not None and rule.endswith("+pool")
    branch = None if rule is None else BranchConfig(
        budget_trajectories=float(cfg.n - cfg.roots), rule=rule.removesuffix("+pool"), width=cfg.width,
        gamma=cfg.gamma, seed=seed, pool=pool)
    col = GroupedRolloutCollector(gt.task.env_id, group_size=n, max_steps=horizon, history_depth=0, progress=False,
                                  seed=seed, env_kwargs=dict(gt.task.env_kwargs))
    tasks = gt.task_ids(cfg.groups, offset=seed * cfg.groups, pool=cfg.instances)
    try:
        batch = col.collect(TreePolicy(gt, spec, seed), tasks=tasks,
                            seeds=[seed * 100_003 + g for g in range(cfg.groups)], branch=branch)
    finally:
        col.close()
    if batch.traj.failed.any():
        raise RuntimeError(batch.failure_summary())
    true, cells = _truth(batch, gt, spec)
    steps = batch.steps
    a_s = gigpo_step(steps, gamma=cfg.gamma)
    full = advantages("gigpo", steps, gamma=cfg.gamma)
    bias, bias_ci = M.cluster_robust_bias(a_s, true, batch.group_id, cells)
    pair = batch.group_id.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) ^ batch.state_key
    _, inv, counts = np.unique(pair, return_inverse=True, return_counts=True)
    singleton = float(np.mean(counts[inv] == 1)) if len(batch) else float("nan")
    return {
        "signal": M.nonzero_fraction(a_s), "pearson": M.pearson(full, true), "pearson_AS": M.pearson(a_s, true),
        "pearson_tree": M.pearson(advantages("tree", steps), true), "bias_AS": bias, "bias_AS_ci": bias_ci,
        "singleton": singleton, "steps": len(batch) / cfg.groups, "leaves": batch.num_trajectories / cfg.groups,
        "success": batch.success_rate,
    }


def arms(cfg: BranchBenchConfig) -> list[str]:
    """Arm names: ``flat``, ``tree:<rule>`` per rule, ``tree:<rule>+pool`` per pooled rule."""
    return ["flat", *(f"tree:{r}" for r in cfg.rules), *(f"tree:{r}+pool" for r in cfg.pooled)]


def run_benchmark(cfg: BranchBenchConfig, progress: bool = True) -> list[dict[str, Any]]:
    """Every run, one dict per (task, policy, seed, arm)."""
    cfg.validate()
    jobs = [(t, p, s) for t in cfg.tasks for p in cfg.policies for s in range(cfg.seeds)]
    gts = {t: GroundTruth(TASKS[t], cfg.gamma) for t in cfg.tasks}
    runs = []
    for t, p, s in R.progress(jobs, total=len(jobs), desc="bench branching", enable=progress):
        for arm in arms(cfg):
            t0 = time.perf_counter()
            r = run_arm(gts[t], POLICIES[p], cfg, s, None if arm == "flat" else arm.split(":", 1)[1])
            runs.append({"task": t, "policy": p, "seed": s, "arm": arm, **r, "seconds": time.perf_counter() - t0})
    return runs


METRICS = ("signal", "singleton", "pearson", "pearson_AS", "pearson_tree", "bias_AS", "steps", "leaves", "success")


def summarize(cfg: BranchBenchConfig, runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (task, policy, arm): mean ± 95% interval over seeds of every metric, and paired differences
    of each tree arm against flat (same seeds) with their verdicts: ``v_*`` Holm-corrected per (arm, metric)
    over the (task, policy) cells, ``v_*_raw`` each cell's interval alone, ``p_*`` the two-sided p-values."""
    idx = {(r["task"], r["policy"], r["arm"], r["seed"]): r for r in runs}
    out = []
    for t in cfg.tasks:
        for p in cfg.policies:
            for arm in arms(cfg):
                row: dict[str, Any] = {"task": t, "policy": p, "arm": arm}
                mine = [idx[(t, p, arm, s)] for s in range(cfg.seeds)]
                flat = [idx[(t, p, "flat", s)] for s in range(cfg.seeds)]
                for m in METRICS:
                    row[m], row[f"{m}_ci"], _ = M.mean_ci(np.array([r[m] for r in mine]))
                row["steps_ratio"] = row["steps"] / np.mean([r["steps"] for r in flat])
                if arm != "flat":
                    for m in ("signal", "pearson", "pearson_AS", "bias_AS"):
                        d, h, k = M.paired_diff_ci(np.array([r[m] for r in mine]), np.array([r[m] for r in flat]))
                        v = M.verdict(d, h)
                        if m == "bias_AS":  # lower bias is better
                            v = {"win": "loss", "loss": "win"}.get(v, v)
                        row[f"d_{m}"], row[f"d_{m}_ci"], row[f"v_{m}_raw"] = d, h, v
                        row[f"p_{m}"] = M.p_from_interval(d, h, k - 1)
                out.append(row)
    # the verdicts: Holm-corrected per (arm, metric) over its (task, policy) cells
    for arm in arms(cfg):
        rs = [r for r in out if r["arm"] == arm and arm != "flat"]
        for m in ("signal", "pearson", "pearson_AS", "bias_AS"):
            if not rs:
                continue
            sign = -1.0 if m == "bias_AS" else 1.0
            for r, v in zip(rs, M.holm_verdicts([sign * r[f"d_{m}"] for r in rs], [r[f"p_{m}"] for r in rs])):
                r[f"v_{m}"] = v
    return out


def _check_pearson_survives(cfg: BranchBenchConfig, S: Sequence[dict[str, Any]]) -> tuple[bool, str]:
    wins = {a: sum(r["v_pearson"] == "win" for r in S if r["arm"] == a) for a in arms(cfg) if a != "flat"}
    return all(w >= 5 for w in wins.values()), ", ".join(f"{a} {w}" for a, w in wins.items())


def _check_signal_shrinks(cfg: BranchBenchConfig, S: Sequence[dict[str, Any]]) -> tuple[bool, str]:
    wins = {a: sum(r["v_signal"] == "win" for r in S if r["arm"] == a) for a in arms(cfg) if a.endswith("+pool")}
    return all(w <= 3 for w in wins.values()), ", ".join(f"{a} {w}" for a, w in wins.items()) or "no pooled arm"


PREDICTIONS = (
    ("With Holm's correction over the task × policy cells, at least 5 of the tree arms' GiGPO-Pearson wins over "
     "flat survive in every arm (7-9 of 12 uncorrected before).", _check_pearson_survives),
    ("The pooled arm's step-signal wins over flat (5 of 12 uncorrected before) fall to 3 or fewer.",
     _check_signal_shrinks),
)
"""Predictions committed before the first run with Holm-corrected verdicts, each with its check."""


def _findings(cfg: BranchBenchConfig, S: Sequence[dict[str, Any]]) -> list[str]:
    lines = []
    for text, check in PREDICTIONS:
        held, why = check(cfg, S)
        lines.append(f"- Prediction (committed before the first run with Holm-corrected verdicts): {text} — "
                     f"{'**held**' if held else '**failed**'} (Holm-corrected wins per arm: {why}).")
    flat = [r for r in S if r["arm"] == "flat"]
    lines.append(f"- flat N={cfg.n}: step signal (A^S nonzero) on {np.mean([r['signal'] for r in flat]):.0%} of "
                 f"steps (mean over {len(flat)} task × policy cells).")
    for rule in (*cfg.rules, *(f"{r}+pool" for r in cfg.pooled)):
        rs = [r for r in S if r["arm"] == f"tree:{rule}"]
        sig = np.mean([r["signal"] for r in rs])
        wins = {m: sum(r[f"v_{m}"] == "win" for r in rs) for m in ("signal", "pearson", "pearson_AS", "bias_AS")}
        losses = {m: sum(r[f"v_{m}"] == "loss" for r in rs) for m in ("pearson", "pearson_AS", "bias_AS")}
        raw = {m: (sum(r[f"v_{m}_raw"] == "win" for r in rs), sum(r[f"v_{m}_raw"] == "loss" for r in rs))
               for m in ("pearson", "pearson_AS")}
        ratio = np.mean([r["steps_ratio"] for r in rs])
        lines.append(
            f"- tree:{rule} ({cfg.roots} roots + branches, env steps {ratio:.2f}× flat): step signal on {sig:.0%} of "
            f"steps ({'meets' if sig >= 0.8 else 'misses'} the 80% goal; higher than flat in {wins['signal']}/{len(rs)} "
            f"cells after Holm's correction); GiGPO Pearson vs A^π higher in {wins['pearson']}/{len(rs)} cells, "
            f"lower in {losses['pearson']}; A^S Pearson higher in {wins['pearson_AS']}, lower in "
            f"{losses['pearson_AS']}; A^S bias lower in {wins['bias_AS']}, higher in {losses['bias_AS']} "
            f"(paired over {cfg.seeds} seeds, Holm-corrected over the {len(rs)} cells of each comparison; "
            f"uncorrected: Pearson higher in {raw['pearson'][0]}, lower in {raw['pearson'][1]}; A^S Pearson "
            f"higher in {raw['pearson_AS'][0]}, lower in {raw['pearson_AS'][1]}).")
    sing = np.mean([r["singleton"] for r in flat])
    lines.append(f"- Where the step signal is missing: in flat groups {sing:.0%} of rows sit in a singleton anchor "
                 f"group and {1 - np.mean([r['signal'] for r in flat]) - sing:.0%} in a group whose returns are all "
                 "equal (every rollout through that state failed, or all took equally long).")
    short = [r for r in S if r["arm"] != "flat" and r["signal"] < 0.8]
    if short:
        worst = sorted(short, key=lambda r: r["signal"])[:4]
        lines.append("- Lowest step-signal cells (tree arms): " + "; ".join(
            f"{r['task']}/{r['policy']}/{r['arm']} {r['signal']:.0%} (success {r['success']:.0%})"
            for r in worst) + ". A branch only gives a step signal where the returns of its anchor group differ: "
            "where every rollout of a task fails (or every one succeeds) the group is all-equal and A^S stays 0.")
    return lines


def write_report(cfg: BranchBenchConfig, runs: Sequence[dict[str, Any]], command: str, load: str,
                 seconds: float) -> dict[str, Path]:
    """``branching.md``, the CSVs and the PNGs under ``cfg.out``."""
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    S = summarize(cfg, runs)
    paths = {"runs": R.write_csv(out / f"{cfg.name}_runs.csv", list(runs)),
             "csv": R.write_csv(out / f"{cfg.name}.csv", S)}
    head = ["task", "policy", "arm", "env steps / group (× flat)", "leaves / group", "success", "step signal",
            "singleton rows", "Pearson gigpo", "Pearson A^S", "Pearson tree", "A^S bias"]
    rows = []
    for r in S:
        mark = "" if r["arm"] == "flat" else {"win": " ▲", "loss": " ▼", "tie": ""}
        rows.append([r["task"], r["policy"], r["arm"], f"{r['steps']:.1f} ({r['steps_ratio']:.2f}×)",
                     f"{r['leaves']:.1f}", f"{r['success']:.0%}",
                     R.fmt_ci(r["signal"], r["signal_ci"], 2) + (mark and mark[r["v_signal"]]), f"{r['singleton']:.0%}",
                     R.fmt_ci(r["pearson"], r["pearson_ci"], 2) + (mark and mark[r["v_pearson"]]),
                     R.fmt_ci(r["pearson_AS"], r["pearson_AS_ci"], 2) + (mark and mark[r["v_pearson_AS"]]),
                     R.fmt_ci(r["pearson_tree"], r["pearson_tree_ci"], 2),
                     R.fmt_ci(r["bias_AS"], r["bias_AS_ci"], 3) + (mark and mark[r["v_bias_AS"]])])
    md = [
        "# Branching from true states vs flat groups, at equal env-step budget",
        "",
        f"Flat groups of N={cfg.n} vs {cfg.roots} roots + branches restored from the roots' true states "
        f"(budget: {cfg.n - cfg.roots}× the group's mean root length in extra env steps), one arm per selection "
        f"rule; {cfg.groups} groups per run over {cfg.instances} task instances, {cfg.seeds} seeds, γ={cfg.gamma}. "
        "Scored against the oracle's exact A^π on the very same rows (see `agentgym_credit/bench/exact/branching.py`).",
        "",
        R.machine_lines(command),
        "",
        f"Load: {load}. Wall time {seconds / 60:.1f} min.",
        "",
        "## Findings",
        "",
        *_findings(cfg, S),
        "",
        "## Table",
        "",
        "Mean ± 95% interval over seeds. ▲/▼: the tree arm is better/worse than flat (paired over seeds, "
        "Holm-corrected over the cells of each arm and metric; for the bias lower is better). Step signal = share of rows with a nonzero GiGPO A^S "
        "(state anchors). Pearson tree = the `tree` estimator (Tree-GRPO; equals GRPO on flat groups).",
        "",
        R.markdown_table(head, rows, align="lll" + "r" * (len(head) - 3)),
        "",
    ]
    paths["md"] = R.write_atomic(out / f"{cfg.name}.md", "\n".join(md))
    paths.update(_plots(cfg, S, out))
    return paths


def _plots(cfg: BranchBenchConfig, S: Sequence[dict[str, Any]], out: Path) -> dict[str, Path]:
    from agentgym_credit.plotting import try_plot_panels

    got = {}
    x = list(range(len(arms(cfg))))
    for metric, title in (("signal", "share of steps with a step signal"), ("pearson", "Pearson(GiGPO, A^π)")):
        panels = {}
        for t in cfg.tasks:
            lines = {}
            for p in cfg.policies:
                rs = [next(r for r in S if r["task"] == t and r["policy"] == p and r["arm"] == a) for a in arms(cfg)]
                lines[p] = (x, [r[metric] for r in rs], [r[f"{metric}_ci"] for r in rs])
            panels[t] = lines
        path = try_plot_panels(out / f"{cfg.name}_{metric}.png", panels,
                               xlabel="arm: " + ", ".join(f"{i}={a}" for i, a in enumerate(arms(cfg))),
                               ylabel=title, ncols=len(cfg.tasks),
                               suptitle=f"{title}: flat N={cfg.n} vs trees at equal env steps (95% CI over seeds)")
        if path is not None:
            got[f"png_{metric}"] = path
    return got


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="agentgym-credit bench branching", description=__doc__.split("\n\n")[0])
    p.add_argument("--tasks", nargs="+", default=list(BranchBenchConfig.tasks), choices=list(TASKS))
    p.add_argument("--policies", nargs="+", default=list(DEFAULT_POLICIES), choices=list(POLICIES))
    p.add_argument("--rules", nargs="+", default=list(RULES), choices=list(RULES))
    p.add_argument("--pooled", nargs="*", default=["uncertainty"], choices=list(RULES),
                   help="rules also run with the groups' budgets pooled (default: uncertainty)")
    p.add_argument("--n", type=int, default=4, help="flat group size (default 4)")
    p.add_argument("--roots", type=int, default=2, help="root trajectories of a tree (default 2)")
    p.add_argument("--groups", type=int, default=16, help="groups per run (default 16)")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--instances", type=int, default=8, help="task instances the groups cycle through")
    p.add_argument("--out", type=Path, default=Path("benchmarks/exact"))
    p.add_argument("--quick", action="store_true", help="2 tasks, 1 policy, 2 seeds, 4 groups (a smoke run)")
    p.add_argument("--no-progress", action="store_true")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    cfg = BranchBenchConfig(tasks=tuple(args.tasks), policies=tuple(args.policies), rules=tuple(args.rules),
                            pooled=tuple(args.pooled),
                            n=args.n, roots=args.roots, groups=args.groups, seeds=args.seeds,
                            instances=args.instances, out=args.out)
    if args.quick:
        cfg.tasks, cfg.policies, cfg.seeds, cfg.groups = cfg.tasks[:2], cfg.policies[:1], 2, 4
    cfg.validate()
    import os

    load0 = os.getloadavg()
    t0 = time.perf_counter()
    runs = run_benchmark(cfg, progress=not args.no_progress)
    seconds = time.perf_counter() - t0
    load1 = os.getloadavg()
    load = (f"1-min load average {load0[0]:.1f} at the start, {load1[0]:.1f} at the end "
            f"({os.cpu_count()} CPUs; other engineers' jobs share the machine)")
    paths = write_report(cfg, runs, "agentgym-credit bench branching " + " ".join(argv), load, seconds)
    print("\n".join(_findings(cfg, summarize(cfg, runs))))
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0


__all__ = ["BranchBenchConfig", "TreePolicy", "run_arm", "run_benchmark", "summarize", "write_report", "main",
           "arms", "DEFAULT_POLICIES"]


if __name__ == "__main__":
    raise SystemExit(main())
