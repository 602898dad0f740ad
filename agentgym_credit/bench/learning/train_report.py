"""The report of ``bench train``: ``training.md``, its CSVs and ``training.png``.

What lives here: :data:`PREDICTIONS` (written before the committed run), :func:`findings`,
:func:`write_report`, :func:`read_result` (re-render from the CSVs), :func:`print_summary`,
:func:`plot_training` (success and credit accuracy along training, mean and 95% band per estimator).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_credit.bench.learning import train_stats as TS
from agentgym_credit.bench.learning.config import ESTIMATORS, TrainBenchConfig, TrainResult
from agentgym_credit.bench.learning.credit_gradient import CREDIT_METRICS
from agentgym_credit.bench.stats import metrics as M
from agentgym_credit.bench.stats import report as R

PREDICTIONS = (
    "Written before the committed run (tabular softmax policy, exact success, step size matched):",
    "- Step-level credit (GiGPO, either key) reaches the target in fewer env steps than GRPO on every task, by "
    "10-30%; the paired interval excludes 0 after Holm on aliased and household-small, maybe not on cue "
    "(a short task where GRPO's episode signal already points the right way).",
    "- HGPO does not beat GiGPO[state] beyond noise; HGPO with its episode term learns at least as fast as without.",
    "- A graph estimator keyed on obs_key, if registered, has the highest Pearson along training but does not "
    "beat GiGPO[obs] in env steps to target on household-small (hidden-state actions are self-loops in the "
    "observation graph).",
    "- Of the credit metrics, the gradient cosine and the |A^π|-weighted sign accuracy rank estimators by "
    "learning speed better than row-averaged Pearson (higher Spearman across estimators).",
)
"""The predictions stated in the report, fixed before the run that produced the committed numbers."""

METRIC_NAMES = {"pearson": "Pearson r", "sign_acc": "sign accuracy", "wsign_acc": "|A^π|-weighted sign accuracy",
                "grad_cos": "gradient cosine"}
EPISODE_LEVEL = ("grpo", "drgrpo", "rloo")


def step_level(estimators: Sequence[str]) -> list[str]:
    """The labels that credit single steps: everything but the episode-level ones (GiGPO, HGPO, graph family)."""
    return [e for e in estimators if e.split("[")[0].split("+")[0] not in EPISODE_LEVEL]


def _c(d: dict[str, Any], key: str, digits: int) -> str:
    return R.fmt_ci(d[key], d.get(f"{key}_ci", float("nan")), digits)


def _cmp(C: dict, task: str, a: str, b: str, measure: str) -> dict[str, Any] | None:
    return C.get((task, a, b, measure))


def _phrase(c: dict[str, Any], unit: str, digits: int) -> str:
    verdict = {"win": "better, surviving Holm", "loss": "worse, surviving Holm", "tie": "no difference after Holm"}
    rel = f", {c['relative']:+.0%}" if math.isfinite(c["relative"]) else ""
    return (f"{c['diff']:+.{digits}f}{unit} ± {c['ci']:.{digits}f}{rel} (p = {c['p']:.3g}, {verdict[c['holm']]})"
            if math.isfinite(c["p"]) else f"{c['diff']:+.{digits}f}{unit} (no interval)")


def findings(cfg: TrainBenchConfig, summary: Sequence[dict[str, Any]], comps: Sequence[dict[str, Any]],
             rows: Sequence[dict[str, Any]] = ()) -> list[str]:
    """One paragraph per task: did step-level credit help, by how much; graph[obs] vs GiGPO[obs], and where
    it is not ahead, how its credit accuracy moved along training against GiGPO[obs]'s."""
    C = {(c["task"], c["a"], c["b"], c["measure"]): c for c in comps}
    S = {(r["task"], r["estimator"]): r for r in summary}
    lines = []
    for task in cfg.tasks:
        for e in [x for x in cfg.estimators if x.endswith("+branch")]:
            b = e[:-len("+branch")]
            c, f = C.get((task, e, b, "steps_censored")), C.get((task, e, b, "final"))
            if c is not None and f is not None:
                lines.append(f"- **{task}: `{e}` (rollout trees) vs `{b}` (flat groups)**, env steps to target "
                             f"{_phrase(c, '', 0)}; final success {_phrase(f, '', 3)}.")
        if (task, "grpo") not in S:
            continue
        steps = [(e, C[(task, e, "grpo", "steps_censored")]) for e in step_level(cfg.estimators)
                 if (task, e, "grpo", "steps_censored") in C]
        if steps:
            e, c = min(steps, key=lambda x: x[1]["diff"])
            wins = [x for x, cc in steps if cc["holm"] == "win"]
            f = C[(task, e, "grpo", "final")]
            helped = (("yes" if wins else "not beyond noise") if c["diff"] < 0
                      else "no (no step-level estimator reached the target sooner than GRPO)")
            lines.append(
                f"- **{task}: did step-level credit help? {helped}.** Best step-level estimator `{e}` vs GRPO, "
                f"env steps to {cfg.target_for(task):.0%} exact success: {_phrase(c, '', 0)}; exact final success "
                f"{_phrase(f, '', 3)}. Step-level estimators ahead of GRPO after Holm: "
                f"{', '.join(f'`{w}`' for w in wins) or 'none'}.")
        for g in [x for x in cfg.estimators if x.split("[")[0] in TS.GRAPH_FAMILY]:
            partner = TS.gigpo_partner(g)
            visible = partner == "gigpo[obs]"
            c = C.get((task, g, partner, "steps_censored"))
            if c is None:
                continue
            f = C[(task, g, partner, "final")]
            goal = "met" if c.get("primary", c["holm"]) == "win" else "NOT met"
            prim = ({"win": "; primary family: fewer steps, surviving Holm over it",
                     "loss": "; primary family: more steps, surviving Holm over it",
                     "tie": "; primary family: no difference after Holm over it"}[c["primary"]]
                    if "primary" in c else "")
            lines.append(f"- {task}: `{g}` vs `{partner}`, env steps to target {_phrase(c, '', 0)}{prim}; final "
                         f"{_phrase(f, '', 3)}" + (f" — the goal (fewer env steps than GiGPO on what the agent "
                                                   f"sees) {goal} here." if visible else "."))
            if visible and goal != "met" and rows:
                parts = []
                for m in ("pearson", "grad_cos"):
                    a0, a1 = TS.credit_start_later(rows, task, g, m)
                    b0, b1 = TS.credit_start_later(rows, task, "gigpo[obs]", m)
                    parts.append(f"{METRIC_NAMES[m]} {a0:.2f} → {a1:.2f} (GiGPO[obs] {b0:.2f} → {b1:.2f})")
                lines.append(f"  - What limits `{g}` here: its credit accuracy at the uniform start vs averaged over "
                             f"the later points of its own training: " + "; ".join(parts) + ".")
        h = C.get((task, "hgpo", "gigpo[state]", "steps_censored"))
        if h is not None:
            lines.append(f"- {task}: HGPO vs GiGPO[state], env steps to target {_phrase(h, '', 0)}.")
        ep = C.get((task, "hgpo+episode", "hgpo", "steps_censored"))
        if ep is not None:
            lines.append(f"- {task}: HGPO with vs without its episode term, env steps to target {_phrase(ep, '', 0)}.")
    return lines


def predicts_lines(cfg: TrainBenchConfig, ranks: Sequence[dict[str, Any]]) -> list[str]:
    """The lead: which credit metric's ranking of the estimators matches their learning speed."""
    if not ranks:
        return ["No credit metrics (the bow arm has no exact A^π)."]
    cols = ("along_training", *TS.FIXED_POLICIES)
    mean = {(m, col): float(np.nanmean([r[col] for r in ranks if r["metric"] == m] or [np.nan]))
            for m in CREDIT_METRICS for col in cols}
    best = max(CREDIT_METRICS, key=lambda m: -2 if math.isnan(mean[(m, "along_training")]) else mean[(m, "along_training")])
    n = max(r["estimators"] for r in ranks)
    if n < 3:  # a Spearman rho needs 3 items: say so instead of printing "+nan" as a best predictor
        return [f"- **Best predictor along training: not measured** (a rank correlation across estimators needs at "
                f"least 3 per task; this run has {n}). The credit metrics of each estimator are in the tables below."]
    lines = [f"Spearman rank correlation, across the {n} estimators of each task, between a credit metric and "
             "learning speed (area under the exact success curve of the fresh-seed runs). With this few estimators "
             f"a single correlation is noisy (|ρ| < {_rho_crit(n):.2f} is not distinguishable from 0 at 5%). Along "
             "training each estimator is scored on its own policies (a fast learner soon sees batches that all "
             "succeed, where every credit is 0); at the fixed policies every estimator is scored on the same "
             "batches.", "",
             f"- **Best predictor along training: {METRIC_NAMES[best]}** (mean ρ over tasks "
             f"{mean[(best, 'along_training')]:+.2f}); "
             + "; ".join(f"{METRIC_NAMES[m]} {mean[(m, 'along_training')]:+.2f}" for m in CREDIT_METRICS if m != best)
             + ".",
             "- At the fixed policies (one batch each, the same batch for every estimator): "
             + "; ".join(f"{pol}: " + ", ".join(f"{METRIC_NAMES[m]} {mean[(m, pol)]:+.2f}" for m in CREDIT_METRICS)
                         for pol in TS.FIXED_POLICIES) + ".", ""]
    rows = [[r["task"], METRIC_NAMES[r["metric"]], *(R.fmt_num(r[c], 2) for c in cols)] for r in ranks]
    lines.append(R.markdown_table(["task", "metric", "ρ along training", *(f"ρ at {p}" for p in TS.FIXED_POLICIES)],
                                  rows, align="ll" + "r" * len(cols)))
    return lines


def summary_lines(cfg: TrainBenchConfig, predicts: Sequence[str], summary: Sequence[dict[str, Any]],
                  comps: Sequence[dict[str, Any]]) -> list[str]:
    """The ``## Summary`` README copies: the best predictor of learning, then one line per task: did
    step-level credit help (best step-level estimator vs GRPO), and graph estimators on obs_key vs GiGPO[obs]."""
    C = {(c["task"], c["a"], c["b"], c["measure"]): c for c in comps}
    S = {(r["task"], r["estimator"]): r for r in summary}
    out = [ln for ln in predicts if ln.startswith("- **Best predictor")]
    tag = {"win": "Holm: fewer steps", "loss": "Holm: more steps", "tie": "no difference after Holm"}
    for task in cfg.tasks:
        steps = [(e, C[(task, e, "grpo", "steps_censored")]) for e in step_level(cfg.estimators)
                 if (task, e, "grpo", "steps_censored") in C]
        head = (f"- **{task}** (target {cfg.target_for(task):.0%} exact success, {cfg.budget_for(task):,} env steps, "
                f"{next(r['seeds'] for (t, _), r in S.items() if t == task)} seeds):")
        if steps:
            e, c = min(steps, key=lambda x: x[1]["diff"])
            g, b = S[(task, e)], S[(task, "grpo")]
            line = (f"{head} best step-level `{e}` vs GRPO {c['diff']:+.0f} ± {c['ci']:.0f} env steps to "
                    f"target ({c['relative']:+.0%}, {tag[c['holm']]}); final success {g['final']:.3f} vs {b['final']:.3f}.")
        else:  # no GRPO arm: the line is the obs-key comparison alone (when there is one)
            line = head
        graphs = [x for x in cfg.estimators if x.split("[")[0] in TS.GRAPH_FAMILY and TS.gigpo_partner(x) == "gigpo[obs]"]
        parts = []
        for x in graphs:
            cc = C.get((task, x, "gigpo[obs]", "steps_censored"))
            if cc is not None:
                prim = f"; primary family: {tag[cc['primary']]}" if "primary" in cc else ""
                parts.append(f"`{x}` {cc['relative']:+.0%} ({tag[cc['holm']]}{prim}, final {S[(task, x)]['final']:.3f})")
        if parts and (task, "gigpo[obs]") in S:
            line += (f" On agent-visible keys, env steps to target vs GiGPO[obs] (final {S[(task, 'gigpo[obs]')]['final']:.3f}): "
                     + "; ".join(parts) + ".")
        elif not steps:
            continue
        out.append(line)
    return out


def _rho_crit(n: int) -> float:
    """Approximate two-sided 5% critical |Spearman ρ| for n items (t approximation)."""
    if n < 4:
        return float("nan")
    t = M.t_quantile_975(n - 2)
    return t / math.sqrt(n - 2 + t * t)


def plot_training(path: Path, cfg: TrainBenchConfig, rows: Sequence[dict[str, Any]]) -> Path | None:
    """Top row: exact success vs env steps; bottom row: Pearson vs exact A^π of the current policy along
    training; mean and 95% band over seeds per estimator."""
    try:
        from agentgym_credit.plotting import pyplot, series_styles

        plt = pyplot()
    except ImportError as e:
        print(f"plot skipped ({path.name}): {e}")
        return None
    runs = TS._runs(rows)
    has_credit = any(math.isfinite(float(r.get("pearson", float("nan")))) for r in rows)
    nrow = 2 if has_credit else 1
    fig, axes = plt.subplots(nrow, len(cfg.tasks), figsize=(4.6 * len(cfg.tasks), 3.3 * nrow + 0.8), squeeze=False)
    handles = {}
    styles = series_styles(len(cfg.estimators))
    for j, task in enumerate(cfg.tasks):
        marks = cfg.checkpoint_steps(task)
        for i, label in enumerate(cfg.estimators):
            rs = [v for (t, e, _), v in runs.items() if t == task and e == label]
            if not rs:
                continue
            color, marker = styles[i]["color"], styles[i]["marker"]
            curves = np.array([TS.on_grid(r, marks) for r in rs])
            m, h = _band(curves)
            (ln,) = axes[0, j].plot(marks, m, color=color, marker=marker, ms=4, lw=1.4, label=label)
            axes[0, j].fill_between(marks, m - h, m + h, color=color, alpha=0.15, lw=0)
            handles.setdefault(label, ln)
            if has_credit:
                pts = [[r for r in TS._sorted(run) if math.isfinite(float(r.get("pearson", float("nan"))))]
                       for run in rs]
                k = min(len(p) for p in pts)
                if k:
                    x = np.mean([[p[i].get("credit_at", p[i]["env_steps"]) for i in range(k)] for p in pts], axis=0)
                    pm, ph = _band(np.array([[p[i]["pearson"] for i in range(k)] for p in pts]))
                    axes[1, j].plot(x, pm, color=color, lw=1.4, marker=marker, ms=4)
                    axes[1, j].fill_between(x, pm - ph, pm + ph, color=color, alpha=0.15, lw=0)
        axes[0, j].set_title(f"{task}: exact success", fontsize=9)
        axes[0, j].axhline(cfg.target_for(task), color="grey", ls=":", lw=1)
        axes[0, j].set_ylim(-0.02, 1.02)
        if has_credit:
            axes[1, j].set_title(f"{task}: Pearson(Â, exact A^π of the current policy)", fontsize=9)
            axes[1, j].set_ylim(-0.2, 1.0)
        for ax in axes[:, j]:
            ax.set_xlabel("environment steps", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(alpha=0.3)
    fig.legend(list(handles.values()), list(handles), loc="lower center", ncol=min(len(handles), 5), fontsize=8,
               frameon=False)
    seeds = max((len({s for (t, _, s) in runs if t == task}) for task in cfg.tasks), default=0)
    fig.suptitle(f"bench train: mean and 95% band over {seeds} seeds, step size matched", fontsize=10)
    fig.tight_layout(rect=(0, 0.08, 1, 0.96))
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _band(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    m = np.nanmean(a, axis=0)
    n = a.shape[0]
    if n < 2:
        return m, np.zeros_like(m)
    return m, M.t_quantile_975(n - 1) * np.nanstd(a, axis=0, ddof=1) / math.sqrt(n)


def _edge_note(cfg: TrainBenchConfig, summary: Sequence[dict[str, Any]]) -> str:
    """How many picks sit at an end of the swept grid (where a rate outside it might have done better)."""
    if len(cfg.lrs) < 2 or not summary:
        return ""
    hi = [f"{r['task']}/{r['estimator']}" for r in summary if float(r["lr"]) == max(cfg.lrs)]
    lo = [f"{r['task']}/{r['estimator']}" for r in summary if float(r["lr"]) == min(cfg.lrs)]
    return (f" Picks at the top of the grid: {len(hi)} of {len(summary)}; at the bottom: {len(lo)}"
            + (f" ({', '.join(lo)})" if lo else "") + " — a rate outside the grid might do better for those.")


def _rounded(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: (round(v, 6) if isinstance(v, float) and math.isfinite(v) else v) for k, v in r.items()} for r in rows]


def write_report(cfg: TrainBenchConfig, res: TrainResult) -> dict[str, Path]:
    """``{name}.md``, ``{name}.csv`` (every iteration), ``{name}_sweep.csv``, ``{name}_credit.csv`` and
    ``{name}.png`` under ``cfg.out``."""

    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"csv": R.write_csv(out / f"{cfg.name}.csv", _rounded(res.rows))}
    if res.sweep:
        paths["sweep_csv"] = R.write_csv(out / f"{cfg.name}_sweep.csv", _rounded(res.sweep))
    if res.fixed:
        paths["credit_csv"] = R.write_csv(out / f"{cfg.name}_credit.csv", _rounded(res.fixed))
    png = plot_training(out / f"{cfg.name}.png", cfg, res.rows)
    runs = TS.run_table(cfg, res.rows)
    summary = TS.summary_rows(cfg, runs)
    comps = TS.comparisons(cfg, runs)
    ranks = TS.rank_correlations(cfg, summary, res.fixed) if res.fixed else []
    load = (f" Load (1-minute average) {res.load[0]:.1f} at the start, {res.load[1]:.1f} at the end, on "
            f"{os.cpu_count()} CPUs." if res.load and all(math.isfinite(x) for x in res.load) else "")
    tab = cfg.policy == "tabular"
    predicts, found = predicts_lines(cfg, ranks), findings(cfg, summary, comps, res.rows)
    md = [f"# Training with each credit estimator{' (--quick: a smoke test, not a result)' if cfg.quick else ''}", "",
          R.machine_lines(cfg.command), "", f"Wall time {res.seconds:.0f} s.{load}", "",
          *([f"Note: {res.note}", ""] if res.note else []),
          "## Summary", "", *summary_lines(cfg, predicts, summary, comps), "",
          "## What predicts learning", "", *predicts, "",
          *primary_lines(cfg, comps),
          "## Predictions", "", *(_text(cfg.predictions) or PREDICTIONS), "",
          *(["## Predictions checked", "", *_text(cfg.checked), ""] if cfg.checked else []),
          "## Findings", "",
          f"Paired over {cfg.seeds} seeds (each seed: the same task instances and env seeds for every estimator); "
          f"intervals are 95% t-intervals of the paired difference; a difference counts only if it survives Holm's "
          f"correction over all {len(comps)} comparisons of this report (α = 0.05).", "",
          *found, "",
          "## Setup", "",
          (f"- Policy: a softmax table over each task instance's TRUE states (logits per state and admissible "
           f"action, all 0 at the start = uniform); one plain policy-gradient step per batch, θ += lr · "
           f"(1/#trajectories) Σ Â ∇log π. Success is the **exact** probability of winning under the current "
           f"policy, from the env's model, averaged over the {cfg.train_tasks} task instances a seed trains on "
           f"(drawn per seed; a table does not generalize, so there is no held-out set)."
           if tab else
           f"- Policy: bag-of-words torch scorer, PPO-clip ({cfg.epochs} epochs), success sampled on "
           f"{cfg.eval_tasks} held-out instances × {cfg.eval_rollouts} episodes."),
          f"- Each iteration: {cfg.groups} task instances × N = {cfg.group_size} rollouts with "
          f"`GroupedRolloutCollector`; advantages from `agentgym_credit.credit.advantages` on `batch.steps` "
          f"(γ = {cfg.gamma}, history depth K = {cfg.history_depth}, otherwise each estimator's defaults).",
          (f"- Step size matched: advantages rescaled per batch (`adv_scale={cfg.adv_scale}`), and each "
           f"estimator's learning rate picked from {list(cfg.lrs)} by the mean area under its success curve on "
           f"{cfg.sweep_seeds} sweep seeds (1000..); the report uses {cfg.seeds} fresh seeds ({cfg.seed_base}..) at "
           "the picked rate." + _edge_note(cfg, summary) if len(cfg.lrs) > 1 else
           f"- Step size: advantages rescaled per batch (`adv_scale={cfg.adv_scale}`) and one learning rate, "
           f"{cfg.lrs[0]:g}, for every estimator (no sweep); {cfg.seeds} seeds ({cfg.seed_base}..)."),
          "- Budgets in env steps: " + ", ".join(f"{t} {cfg.budget_for(t):,} steps, target {cfg.target_for(t):.0%}"
                                                 for t in cfg.tasks)
          + ". Curves compare on a grid of env steps (the policy after the last update within each grid point); "
          "steps to target = env steps of the first update at or above it, censored at the budget.",
          *([] if not tab else [
          "- Credit metrics (exact, vs A^π of the policy that collected the batch, on the rows the update uses) at "
          f"{cfg.credit_points} points along training and at fixed policies ({', '.join(TS.FIXED_POLICIES)}; "
          f"{cfg.fixed_seeds} batches each): Pearson, sign accuracy, |A^π|-weighted sign accuracy, and the cosine "
          "between Σ Â ∇log π and Σ A^π ∇log π for this softmax table (`agentgym_credit.bench.learning.credit_gradient`)."]),
          "- Estimators: " + ", ".join(f"`{k}` = {ESTIMATORS[k][0]} {ESTIMATORS[k][1] or ''}".rstrip()
                                       for k in cfg.estimators), ""]
    if png is not None:
        md += [f"![training]({png.name})", ""]
    md += ["## Steps to target and exact final success", "",
           R.markdown_table(["task", "estimator", "lr", "reached", "env steps to target (censored)", "final success",
                             "AUC", "Pearson along training", "grad cosine"],
                            [[r["task"], r["estimator"], R.fmt_num(r["lr"], 3), f"{r['reached']}/{r['seeds']}",
                              _c(r, "steps_censored", 0), _c(r, "final", 3), _c(r, "auc", 3), _c(r, "pearson", 2),
                              _c(r, "grad_cos", 2)] for r in summary], align="lllrrrrrr"), "",
           "## Paired comparisons (a − b over seeds, Holm over the whole table)", "",
           R.markdown_table(["task", "a", "b", "measure", "a − b", "relative", "p", "Holm"],
                            [[c["task"], c["a"], c["b"], TS.COMPARED[c["measure"]],
                              R.fmt_ci(c["diff"], c["ci"], 0 if c["measure"] == "steps_censored" else 3),
                              "–" if not math.isfinite(c["relative"]) else f"{c['relative']:+.0%}",
                              R.fmt_num(c["p"], 3), c["holm"]] for c in comps], align="llllrrrl"), ""]
    if res.fixed:
        fs = TS.fixed_summary(cfg, res.fixed)
        md += ["## Credit metrics at fixed policies", "",
               R.markdown_table(["task", "policy", "estimator", *(METRIC_NAMES[m] for m in CREDIT_METRICS)],
                                [[f["task"], f["policy"], f["estimator"], *(_c(f, m, 2) for m in CREDIT_METRICS)]
                                 for f in fs], align="lll" + "r" * len(CREDIT_METRICS)), ""]
        hid = [f for f in fs if "hidden_share" in f and f["policy"] == "uniform" and math.isfinite(f["hidden_share"])
               and f["hidden_share"] > 0]
        if hid:
            md += ["### Actions that change only hidden state (uniform policy)", "",
                   "Rows whose action changes the true state but not the observation key (\"take key\" when the "
                   "key carried is not shown, \"cool X\"): a self-loop in any graph over obs_key. Advantages "
                   "rescaled as in training (RMS 1 per batch); A^π is exact.", "",
                   R.markdown_table(["task", "estimator", "share of rows", "|A^π|-weighted sign accuracy",
                                     "mean Â there", "mean A^π there"],
                                    [[f["task"], f["estimator"], f"{f['hidden_share']:.1%}",
                                      _c(f, "hidden_wsign_acc", 2), _c(f, "hidden_adv", 2), _c(f, "hidden_true", 3)]
                                     for f in hid], align="llrrrr"), ""]
    md += [f"Raw data: `{paths['csv'].name}` (every iteration of the fresh-seed runs)"
           + (f", `{cfg.name}_sweep.csv`" if res.sweep else "") + (f", `{cfg.name}_credit.csv`" if res.fixed else "")
           + ".", ""]
    paths["markdown"] = R.write_atomic(out / f"{cfg.name}.md", "\n".join(md))
    if png is not None:
        paths["png"] = png
    return paths


def _text(path: Path | None) -> list[str]:
    """The lines of a markdown file given on the command line (none without one)."""
    return Path(path).read_text().rstrip().splitlines() if path else []


def primary_lines(cfg: TrainBenchConfig, comps: Sequence[dict[str, Any]]) -> list[str]:
    """The primary family of a confirmatory run (``cfg.primary``), Holm-corrected on its own."""
    fam = [c for c in comps if "primary" in c]
    if not fam:
        return []
    verdict = {"win": "fewer env steps, surviving Holm", "loss": "more env steps, surviving Holm",
               "tie": "no difference after Holm"}
    out = ["## Primary comparisons", "",
           f"Stated before the run: env steps to target of {', '.join(f'`{e}`' for e in cfg.primary)} against GiGPO on "
           f"the same key, on {', '.join(cfg.tasks)}; Holm's correction over these {len(fam)} comparisons alone "
           f"(α = 0.05), paired over {cfg.seeds} fresh seeds ({cfg.seed_base}..).", ""]
    for c in fam:
        rel = f", {c['relative']:+.0%}" if math.isfinite(c["relative"]) else ""
        out.append(f"- {c['task']}: `{c['a']}` − `{c['b']}` = {c['diff']:+.0f} ± {c['ci']:.0f} env steps{rel} "
                   f"(p = {c['p']:.3g}): **{verdict[c['primary']]}**.")
    return out + [""]


def read_result(csv_path: Path) -> TrainResult:
    """A :class:`~agentgym_credit.bench.learning.config.TrainResult` from the CSVs of an earlier run."""

    rows = R.read_csv(csv_path)  # seeds, iterations and env steps come back as ints
    side = {k: csv_path.with_name(csv_path.stem + f"_{k}.csv") for k in ("sweep", "credit")}
    res = TrainResult(rows=rows, sweep=R.read_csv(side["sweep"]) if side["sweep"].exists() else [],
                      fixed=R.read_csv(side["credit"]) if side["credit"].exists() else [])
    runs = TS._runs(rows)
    res.seconds = float(sum(max(float(r["seconds"]) for r in v) for v in runs.values()))
    md = csv_path.with_suffix(".md")
    found = re.search(r"^Wall time (\d+) s\.(?: Load \(1-minute average\) ([\d.]+) at the start, ([\d.]+) at the end)?",
                      md.read_text(), re.M) if md.exists() else None
    note = re.search(r"^Note: (.+)$", md.read_text(), re.M) if md.exists() else None
    if note:
        res.note = note.group(1)
    if found:  # the run's own wall time and load, not the sum over the fresh-seed runs
        res.seconds = float(found.group(1))
        if found.group(2):
            res.load = (float(found.group(2)), float(found.group(3)))
    return res


def print_summary(cfg: TrainBenchConfig, res: TrainResult) -> None:
    summary = TS.summary_rows(cfg, TS.run_table(cfg, res.rows))
    print(R.markdown_table(["task", "estimator", "lr", "reached", "censored steps to target", "final success"],
                           [[r["task"], r["estimator"], R.fmt_num(r["lr"], 3), f"{r['reached']}/{r['seeds']}",
                             R.fmt_num(r["steps_censored"], 0), R.fmt_num(r["final"], 3)] for r in summary]))


__all__ = ["PREDICTIONS", "METRIC_NAMES", "findings", "primary_lines", "predicts_lines", "summary_lines", "plot_training", "write_report",
           "read_result", "print_summary"]
