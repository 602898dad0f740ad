"""``agentgym-credit bench credit``: credit accuracy of every estimator against the exact A^π.

For each synthetic task family × behaviour policy × group size N × seed the benchmark

1. collects grouped rollouts with the real :class:`~agentgym_credit.wrappers.GroupedRolloutCollector`
   (``trajectories`` rollouts per run, i.e. ``trajectories // N`` groups of N, one task instance per
   group) driven by the behaviour policy (:mod:`.credit_run`);
2. computes every estimator on ``batch.steps`` (:mod:`.credit_signals`);
3. computes the oracle's true A^π = Q^π − V^π for the very same rows (exact dynamic programming on
   the env's ``TabularModel``, on (state, history window, t) for window policies);
4. scores each signal against A^π (:mod:`agentgym_credit.bench.stats.metrics`): per-run accuracy with
   intervals over seeds, and the cluster-robust bias (rollout group = cluster) of the step terms,
   per HGPO level too; findings count wins only where a paired interval excludes 0
   (:mod:`.credit_findings`).

HGPO runs twice: on the collector's ``history_keys`` (contexts of ``state_key``) and on contexts of
what the agent SEES (``[obs]`` signals: level k = the last k+1 ``obs_key`` hashes).

Outputs (``--out``; default ``benchmarks/exact/`` for the full run from the repository root, ``./agc-bench/``
for ``--quick`` and runs from elsewhere — ``--quick`` never writes over the committed reports):
``credit_accuracy.md`` (tables + findings), ``credit_accuracy.csv`` (summary with 95% t-intervals over
seeds), ``credit_accuracy_runs.csv`` (one row per run and signal), ``credit_accuracy_bias.csv``,
``credit_accuracy_bias_pairs.csv``, and PNG plots of accuracy vs N (skipped with a message when
matplotlib is missing).

What lives here: :func:`write_report`, :func:`print_summary`, :func:`default_out`, :func:`check_out`,
:func:`build_parser`, :func:`main`; everything of :mod:`.credit_run`, :mod:`.credit_signals` and
:func:`.credit_findings.findings` is re-exported (``from agentgym_credit.bench.exact.credit import TASKS``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_credit.bench.exact.credit_calibration import simulate_pooled_bias
from agentgym_credit.bench.exact.credit_findings import (
    Evidence,
    _nanmean,
    _pct,
    calibration_lines,
    findings,
    prediction_lines,
)
from agentgym_credit.bench.exact.credit_run import (
    BIAS_PAIRS,
    POLICIES,
    TASKS,
    BenchResult,
    CreditBenchConfig,
    GroundTruth,
    PolicySpec,
    ProductPolicy,
    TaskSpec,
    Truth,
    collect_run,
    run_benchmark,
    summarize,
    true_advantages,
)
from agentgym_credit.bench.exact.credit_signals import (
    EPISODE_TERMS,
    GRAPH_ESTIMATORS,
    METRIC_TITLES,
    METRICS,
    REFERENCES,
    SIGNALS,
    STEP_TERMS,
    bias_signals,
    estimator_signals,
    level_term,
    mixed_share,
    obs_history_keys,
    obs_keyed,
)
from agentgym_credit.bench.stats import report as R


def _table_for_metric(cfg: CreditBenchConfig, S: dict, task: str, metric: str, signals: Sequence[str]) -> str:
    rows = []
    for p in cfg.policies:
        for n in cfg.group_sizes:
            cells = [p, str(n)]
            for sig in signals:
                r = S.get((task, p, n, sig))
                cells.append("–" if r is None else R.fmt_ci(r[metric], r[f"{metric}_ci"], 2))
            rows.append(cells)
    return R.markdown_table(["policy", "N", *signals], rows, align="ll" + "r" * len(signals))


def _plots(cfg: CreditBenchConfig, S: dict, out: Path) -> list[Path]:
    """The PNG plots of accuracy vs N; none (with a message on stderr) when matplotlib is missing."""
    try:
        return _draw_plots(cfg, S, out)
    except ImportError as e:  # DependencyNotInstalled is an ImportError
        print(f"bench credit: plots skipped, the report and CSVs are written without them ({e})", file=sys.stderr)
        return []


PLOTTED = ("grpo", "gigpo[state]", "gigpo[obs]", "hgpo", "hgpo[obs]", *GRAPH_ESTIMATORS)
"""The full estimators the plots compare (every one README ranks; the step terms and references are in the tables)."""


def _draw_plots(cfg: CreditBenchConfig, S: dict, out: Path) -> list[Path]:
    """One dot plot per metric: a panel per (family, policy), a row per estimator, a dot with its 95% CI per N."""
    from agentgym_credit.plotting import plot_dots

    paths = []
    for metric in ("pearson", "sign_acc"):
        panels: dict[str, dict[str, dict[str, tuple[float, float]]]] = {}
        for t in cfg.tasks:
            for p in cfg.policies:
                panel = {sig: {f"N={n}": (S[(t, p, n, sig)][metric], S[(t, p, n, sig)][f"{metric}_ci"])
                               for n in cfg.group_sizes if (t, p, n, sig) in S}
                         for sig in PLOTTED}
                panels[f"{t} / {p}"] = {sig: dots for sig, dots in panel.items() if dots}
        paths.append(plot_dots(out / f"{cfg.name}_{metric}.png", panels, METRIC_TITLES[metric],
                               ncols=len(cfg.policies), legend_title="group size",
                               suptitle=f"{METRIC_TITLES[metric]} vs A^π per estimator (mean ± 95% CI over "
                                        f"{cfg.seeds} seeds; the perfect-critic references are in the report)"))
    return paths


def replot(csv_path: Path, name: str = "credit_accuracy") -> list[Path]:
    """Redraw the plots of a finished run from its summary CSV (``<name>.csv``), beside it: the same numbers,
    today's plotting (``bench credit --replot benchmarks/exact/credit_accuracy.csv``)."""
    rows = R.read_csv(csv_path)
    if not rows:
        raise ValueError(f"{csv_path}: no rows to plot")
    S = {(r["task"], r["policy"], int(r["N"]), r["signal"]): r for r in rows}
    cfg = CreditBenchConfig(tasks=tuple(dict.fromkeys(r["task"] for r in rows)),
                            policies=tuple(dict.fromkeys(r["policy"] for r in rows)),
                            group_sizes=tuple(sorted({int(r["N"]) for r in rows})), seeds=int(rows[0]["seeds"]),
                            out=Path(csv_path).parent, name=name)
    return _draw_plots(cfg, S, Path(csv_path).parent)


def _load_text(res: BenchResult) -> str:
    """" (machine load ...)" from the run's 1-minute load averages; other jobs share the CPUs."""
    if res.load is None:
        return ""
    return f" (1-minute load average {res.load[0]:.1f} at the start, {res.load[1]:.1f} at the end, on {os.cpu_count()} CPUs)"


def _bias_cell(r: dict[str, Any] | None, signal: str) -> str:
    """A bias table cell: the bias ± its 95% interval, and for a single HGPO level the share of rows it covers."""
    if r is None:
        return "–"
    cell = R.fmt_ci(r["bias"], r.get("bias_ci", float("nan")), 3)
    return f"{cell} ({r['coverage']:.0%})" if signal.startswith("A_") else cell


def write_report(cfg: CreditBenchConfig, res: BenchResult) -> dict[str, Path]:
    """Write the markdown report, the CSVs and the plots under ``cfg.out``; return their paths."""
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    summary = summarize(res.runs)
    S = {(r["task"], r["policy"], int(r["N"]), r["signal"]): r for r in summary}
    paths = {
        "summary_csv": R.write_csv(out / f"{cfg.name}.csv", summary),
        "runs_csv": R.write_csv(out / f"{cfg.name}_runs.csv", res.runs),
        "bias_csv": R.write_csv(out / f"{cfg.name}_bias.csv", res.bias),
        "bias_pairs_csv": R.write_csv(out / f"{cfg.name}_bias_pairs.csv", res.bias_pairs),
        "info_csv": R.write_csv(out / f"{cfg.name}_info.csv", res.info),
    }
    plots = _plots(cfg, S, out)
    paths.update({p.stem: p for p in plots})
    md: list[str] = [f"# Credit accuracy against the exact A^π{' (--quick)' if cfg.quick else ''}", ""]
    md += [R.machine_lines(cfg.command), "",
           f"Wall time {res.seconds:.1f} s{_load_text(res)}. Sizes: {cfg.trajectories} rollouts per run (= {cfg.trajectories}/N "
           f"groups of N; group g plays one of {cfg.instances} task instances per family), {cfg.seeds} seeds, N ∈ {list(cfg.group_sizes)}, "
           f"γ = {cfg.gamma}, HGPO history depth K = {cfg.history_depth}.", ""]
    sizes = sorted(cfg.seeds * (cfg.trajectories // n) for n in cfg.group_sizes)
    calib = simulate_pooled_bias(blocks=len(cfg.policies) * len(cfg.group_sizes), clusters=max(2, sizes[len(sizes) // 2]),
                                 rows=8, replicates=100 if cfg.quick else 200)
    md += ["## Summary", ""] + prediction_lines(Evidence.from_result(cfg, res), cfg) + calibration_lines(calib) + [""]
    md += ["## What is measured", "",
           "Every signal below is computed on `batch.steps` of rollouts collected by `GroupedRolloutCollector` "
           "under a known behaviour policy, and compared row by row with the oracle's exact "
           "A^π(s_t, a_t) = Q^π − V^π (same γ; for history-window policies on the augmented state "
           "(s_t, window, t)). The comparison is kept clean by scoring separately:", "",
           "- **episode terms** (GRPO/RLOO/Dr.GRPO): one value per trajectory, broadcast to its steps;",
           "- **step terms** (GiGPO's A^S, HGPO's A^H) alone, without the episode term;",
           "- **full advantages** (A^E + A^S, A^E + A^H), what a trainer would use;",
           "- references: plain R_t (no baseline), and two perfect critics with the oracle's exact V^π: TD(0) "
           "(λ = 0; its expectation given the step is A^π, so only the next reward and transition add noise) and "
           "GAE(λ = 0.95), the λ users run (it adds the return noise of later steps). Neither is a bound on what "
           "a group estimator can reach; they show what an exact critic gives at each λ.", "",
           "HGPO runs on two kinds of context. `hgpo·A^H` uses the collector's `history_keys`: windows of "
           "`state_key`, which is Markov here (it already holds the cue and the carried key), so deeper levels "
           "can only help through the behaviour policy's window. The `[obs]` signals rebuild the levels from "
           "what the agent sees, level k = fingerprint of (o_{t-k}, ..., o_t) over the trajectory's `obs_key` "
           "sequence (missing when t < k), as an LLM agent's implementation groups; on the aliased tasks level 0 "
           "then mixes true states and deeper levels may tell them apart (HGPO's claim).", "",
           f"Metrics per run: Pearson r, Spearman ρ, **sign accuracy on decisive steps** (|A^π| > "
           f"{cfg.threshold}; a zero estimate counts 0.5), **scaled RMSE** (RMSE after the best c ≥ 0 "
           "rescaling, divided by RMS(A^π): 1 = no better than 0), and the **nonzero fraction**. "
           "Intervals are 95% Student-t over seeds. **Bias** is the systematic error in reward units "
           "(F_norm = 1): per row the error Â − A^π minus the zero-mean return noise R_t − Q^π (known "
           "exactly here, so the row keeps its expected error and loses most of its variance). Rows of one "
           "rollout group share its baselines, so their errors are correlated: per cell (task instance, "
           "augmented state, action, t; one cell across seeds) bias² is estimated from pairs of rows in "
           "DIFFERENT rollout groups only, (S² − Σ_g S_g²) / (n² − Σ_g n_g²) with S_g the error sum of group g "
           "in the cell — exactly unbiased however the noise is shared inside a group — then pooled over cells "
           f"with ≥ {cfg.bias_min_count} rows weighted by rows, bias = sqrt(max(0, pooled bias²)) "
           "(`metrics.cluster_robust_bias`; a test checks an estimator unbiased by construction scores ~0 "
           "within its interval). ± is a 95% delete-one-rollout-group jackknife interval; a bias whose "
           "interval reaches 0 is not distinguishable from none. Each HGPO "
           "level A_k is scored on the rows where its group exists. A bias quoted over several cells pools their "
           "signed bias² into one estimate with one jackknife over all their rollout groups (never a mean of "
           "per-cell biases clipped at 0), and every tally of wins/losses is Holm-corrected over its cells.", ""]
    md += ["Signals:", ""] + [f"- `{k}` — {v}" for k, v in SIGNALS.items()] + [""]
    md += ["Policies:", ""] + [f"- `{p}` — {POLICIES[p].kind}-based, {POLICIES[p].strength}" for p in cfg.policies]
    md += ["", "Tasks:", ""] + [f"- `{t}` ({TASKS[t].env_id}) — {TASKS[t].kind}" for t in cfg.tasks] + [""]
    md += ["## Findings", ""] + findings(cfg, res, calib) + [""]
    md += ["## Behaviour of the policies", ""]
    info_rows = []
    for t in cfg.tasks:
        for p in cfg.policies:
            inf = [r for r in res.info if r["task"] == t and r["policy"] == p]
            info_rows.append([t, p, R.fmt_num(np.mean([r["success"] for r in inf]), 2),
                              R.fmt_num(np.mean([r["steps"] / r["trajectories"] for r in inf]), 1),
                              R.fmt_num(np.mean([r["decisive"] for r in inf]), 2),
                              R.fmt_num(np.mean([r["true_adv_std"] for r in inf]), 3)])
    md += [R.markdown_table(["task", "policy", "success", "steps/episode", "decisive share", "std A^π"],
                            info_rows, align="llrrrr"), ""]
    graphs = tuple(g for g in GRAPH_ESTIMATORS if any(r["signal"] == g for r in res.runs))
    for metric, sigs in (("pearson", ("grpo", *STEP_TERMS, "gigpo[state]", "hgpo", "hgpo[obs]", *graphs, *REFERENCES)),
                         ("sign_acc", ("grpo", *STEP_TERMS, "gigpo[state]", *REFERENCES))):
        md += [f"## {METRIC_TITLES[metric]} vs A^π", "", f"![{metric}]({cfg.name}_{metric}.png)", ""]
        for t in cfg.tasks:
            md += [f"### {t}", "", _table_for_metric(cfg, S, t, metric, sigs), ""]
    md += ["## All metrics at the largest N", ""]
    nmax = max(cfg.group_sizes)
    rows = []
    for t in cfg.tasks:
        for sig in SIGNALS:
            rs = [S.get((t, p, nmax, sig)) for p in cfg.policies]
            rs = [r for r in rs if r is not None]
            if rs:
                rows.append([t, sig] + [R.fmt_num(_nanmean([r[m] for r in rs]), 3) for m in METRICS])
    md += [f"Mean over policies, N = {nmax}.", "",
           R.markdown_table(["task", "signal", *[METRIC_TITLES[m] for m in METRICS]], rows, align="ll" + "r" * 5), ""]
    md += ["## Bias vs A^π (reward units), per HGPO level (state_key history)", ""]
    level_names = [f"A_{k}" for k in range(cfg.history_depth + 1)]
    bcols = ["gigpo[state]·A^S", "gigpo[obs]·A^S", "hgpo·A^H", "hgpo_precision·A^H", *level_names]
    B = {(r["task"], r["policy"], int(r["N"]), r["signal"]): r for r in res.bias}
    brow = []
    for t in cfg.tasks:
        for p in cfg.policies:
            for n in cfg.group_sizes:
                cells = [t, p, str(n)]
                cells += [_bias_cell(B.get((t, p, n, sig)), sig) for sig in bcols]
                brow.append(cells)
    md += ["Bias ± 95% interval (cluster-robust, see above). Level columns: bias of A_k on the rows where level k "
           "has a group of ≥ 2 (share of rows).", "",
           R.markdown_table(["task", "policy", "N", *bcols], brow, align="lll" + "r" * len(bcols)), ""]
    md += ["## Bias vs A^π over observation history (obs-keyed HGPO levels)", "",
           "HGPO's levels rebuilt from each trajectory's obs_key sequence (level k = fingerprint of "
           "(o_{t-k}, ..., o_t)). Level columns: bias of A_k[obs] on the rows where it has a group of ≥ 2 "
           "(share of rows). `mixed_k`: share of those rows whose level-k group holds more than one true "
           "state (mean over seeds).", ""]
    ocols = ["gigpo[obs]·A^S", "hgpo[obs]·A^H", "hgpo_precision[obs]·A^H",
             *[f"A_{k}[obs]" for k in range(cfg.history_depth + 1)]]
    mcols = [f"mixed_{k}" for k in range(cfg.history_depth + 1)]
    orow = []
    for t in cfg.tasks:
        if TASKS[t].fully_observed:
            continue
        for p in cfg.policies:
            for n in cfg.group_sizes:
                cells = [t, p, str(n)]
                cells += [_bias_cell(B.get((t, p, n, sig)), sig) for sig in ocols]
                inf = [r for r in res.info if r["task"] == t and r["policy"] == p and int(r["N"]) == n]
                cells += [_pct(_nanmean([r.get(f"obs_mixed_{k}", float("nan")) for r in inf]))
                          for k in range(cfg.history_depth + 1)]
                orow.append(cells)
    if orow:
        md += [R.markdown_table(["task", "policy", "N", *ocols, *mcols], orow,
                                align="lll" + "r" * (len(ocols) + len(mcols))), ""]
    md += ["Raw data: " + ", ".join(f"`{paths[k].name}`" for k in ("summary_csv", "runs_csv", "bias_csv",
                                                                  "bias_pairs_csv", "info_csv")), ""]
    paths["markdown"] = R.write_atomic(out / f"{cfg.name}.md", "\n".join(md))
    return paths


def print_summary(cfg: CreditBenchConfig, res: BenchResult, file=sys.stdout) -> None:
    """A short table: mean Pearson r per task and estimator at each N (averaged over policies)."""
    S = summarize(res.runs)
    present = {r["signal"] for r in S}
    sigs = tuple(s for s in (*PLOTTED, *REFERENCES) if s in present)
    rows = []
    for t in cfg.tasks:
        for n in cfg.group_sizes:
            cells = [t, str(n)]
            for sig in sigs:
                v = [r["pearson"] for r in S if r["task"] == t and r["N"] == n and r["signal"] == sig]
                cells.append(R.fmt_num(float(np.mean(v)), 3) if v else "–")
            rows.append(cells)
    print("Pearson r vs A^π (mean over policies):", file=file)
    print(R.markdown_table(["task", "N", *sigs], rows), file=file)


def repo_root() -> Path | None:
    """The source checkout this package runs from (it holds pyproject.toml and benchmarks/), if any."""
    root = Path(__file__).resolve().parents[3]  # agentgym_credit/bench/exact/credit.py -> the checkout
    return root if (root / "pyproject.toml").is_file() and (root / "benchmarks").is_dir() else None


def default_out(quick: bool, cwd: Path | None = None, room: str = "exact") -> Path:
    """``benchmarks/<room>`` for a full run started at the repository root, ``agc-bench`` otherwise.

    The committed reports in ``benchmarks/`` are written only by the full run (README's command);
    ``--quick`` runs and runs from any other folder write to ``./agc-bench/``.
    """
    cwd = Path.cwd() if cwd is None else Path(cwd)
    root = repo_root()
    if not quick and root is not None and cwd.resolve() == root:
        return Path("benchmarks") / room
    return Path("agc-bench")


def check_out(cfg: CreditBenchConfig) -> None:
    """Refuse to write a ``--quick`` report anywhere inside the committed ``benchmarks/`` of the repository."""
    root = repo_root()
    committed = (root / "benchmarks").resolve() if root is not None else None
    out = Path(cfg.out).resolve()
    if cfg.quick and committed is not None and (out == committed or committed in out.parents):
        raise ValueError(f"--quick would overwrite the committed full reports in {out}; "
                         "use another --out (default ./agc-bench/)")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="agentgym-credit bench credit",
                                description="Credit accuracy of GRPO/GiGPO/HGPO against the exact A^π on synthetic tasks.")
    p.add_argument("--quick", action="store_true", help="CI sizes (< 1 min): fewer policies, rollouts and seeds")
    p.add_argument("--seeds", type=int, default=None, help="seeds per cell (default 4; quick 2)")
    p.add_argument("--trajectories", type=int, default=None, help="rollouts per run (default 128; quick 32)")
    p.add_argument("--instances", type=int, default=None, help="task instances per family (default 6; quick 2)")
    p.add_argument("--tasks", nargs="+", default=None, choices=sorted(TASKS), help="task families")
    p.add_argument("--policies", nargs="+", default=None, choices=list(POLICIES), help="behaviour policies")
    p.add_argument("--group-sizes", nargs="+", type=int, default=None, help="N values (default 2 4 8 16)")
    p.add_argument("--depth", type=int, default=None, help="HGPO history depth K (default 3)")
    p.add_argument("--threshold", type=float, default=None, help="decisive |A^π| threshold (default 0.05)")
    p.add_argument("--out", type=Path, default=None,
                   help="output folder (default: benchmarks/exact/ for a full run from the repository root, "
                        "./agc-bench/ for --quick or anywhere else)")
    p.add_argument("--name", default="credit_accuracy", help="file name stem of the outputs")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--replot", type=Path, default=None, metavar="CSV",
                   help="only redraw the plots of a finished run from its summary CSV (beside it; no run)")
    return p


def config_from_args(args: argparse.Namespace, argv: Sequence[str]) -> CreditBenchConfig:
    out = default_out(args.quick) if args.out is None else args.out
    kw: dict[str, Any] = {"out": out, "name": args.name, "progress": not args.no_progress,
                          "command": " ".join(["agentgym-credit bench credit", *argv])}
    kw |= R.given_options(args, ("seeds", "trajectories", "instances", "depth", "threshold"),
                          ("tasks", "policies", "group_sizes"), renamed={"depth": "history_depth"})
    return CreditBenchConfig.quick_config(**kw) if args.quick else CreditBenchConfig(**kw)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``agentgym-credit bench credit``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    if args.replot is not None:
        try:
            paths = replot(args.replot, args.name)
        except (OSError, ValueError, KeyError) as e:
            print(f"error: --replot {args.replot}: {e!r}", file=sys.stderr)
            return 2
        print(f"redrew {', '.join(str(p) for p in paths)}")
        return 0
    cfg = config_from_args(args, argv)
    try:
        cfg.validate()
        check_out(cfg)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    res = run_benchmark(cfg)
    paths = write_report(cfg, res)
    print_summary(cfg, res)
    print(f"wrote {', '.join(str(p) for p in paths.values())} in {res.seconds:.1f} s")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())


__all__ = [
    # defined here
    "write_report", "print_summary", "replot", "default_out", "check_out", "build_parser", "main",
    # re-exported from credit_findings, credit_run and credit_signals
    "findings",
    "TASKS", "POLICIES", "BIAS_PAIRS", "TaskSpec", "PolicySpec", "ProductPolicy", "CreditBenchConfig",
    "BenchResult", "GroundTruth", "Truth", "collect_run", "true_advantages", "run_benchmark", "summarize",
    "SIGNALS", "STEP_TERMS", "EPISODE_TERMS", "REFERENCES", "METRICS", "METRIC_TITLES", "estimator_signals",
    "bias_signals", "level_term", "obs_history_keys", "obs_keyed", "mixed_share",
]
