"""Report of ``bench credit_real``: CSV files, plots and ``credit_real.md`` (sections; the findings kept).

- :data:`PREDICTIONS`: what we expected, written before the first full run; :data:`PREDICTIONS_SEEDING`: before
  the rerun with per-row truth seeding; :data:`PREDICTIONS_HOLM`:
  before the rerun with Holm-corrected tallies and the best-action pairs;
- :func:`write_report`: ``credit_real.csv`` (one row per env, policy, N, estimator),
  ``credit_real_describe.csv``, ``credit_real_info.csv``, ``credit_real_synthetic.csv``,
  ``credit_real_pairs.csv`` (p-values, uncorrected and Holm verdicts), ``credit_real_best_pairs.csv``,
  ``credit_real_pearson.png``, and the generated sections (with every comparison's robustness:
  :func:`~agentgym_credit.bench.montecarlo.paired.robust_md`) of ``credit_real.md`` (a ``findings``
  section written by hand is left as it is); ``--scale 2`` names them ``credit_real_x2*``;
- :func:`tallies`: wins/losses per comparison and env family, Holm-corrected over the run's family;
- :func:`config_from_args` and :func:`finish`: the command line's options and its output; the entry point
  (:func:`.credit_real.main`) runs between them, so this module never imports the runner.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentgym_credit.bench.montecarlo.config import ENVS, POLICIES, RealConfig
from agentgym_credit.bench.montecarlo.paired import robust_md
from agentgym_credit.bench.stats import report as R

PREDICTIONS = """\
Written before the first full run:

1. The Monte-Carlo truth covers the exact oracle's A^π in 90-98% of the checked synthetic rows.
2. ALFWorld has many repeated states inside a group (few objects move; `look`/`inventory` and walking
   back return to a state), so GiGPO's step term carries real signal there: Pearson r of
   `gigpo[state]·A^S` with the truth above 0.3 at N = 8, well above GRPO's where most groups all
   succeed (GRPO's advantage is 0 in a group whose returns agree).
3. WebShop's states repeat less (a query and a page), the obs anchor aliases states (the same item
   page reached from different queries), and the episode term dominates: GRPO and GiGPO close.
4. HGPO's history levels help little with Markov behaviour policies (its deeper levels only thin
   the groups); `hgpo·A^H` within the intervals of `gigpo[state]·A^S`.
5. The graph estimators' gains on synthetic tasks shrink on real envs: within the intervals of
   `gigpo[state]` on both envs.
6. Every estimator's r rises from N = 4 to N = 8.
"""

PREDICTIONS_HOLM = """\
Written before the rerun with Holm-corrected tallies and best-action pairs (issue 21.2, 22), knowing
the uncorrected results of the two earlier runs (17 of 108 comparisons non-ties at the default size,
30 of 108 at twice the sample); family = every comparison of a run (108), p from the bootstrap SE on
G − 1 degrees of freedom:

H1. Default size (8 groups per ALFWorld cell, 24 on WebShop): at most 3 of the 108 comparisons
    survive Holm; none of the 12 HGPO-vs-GiGPO ones and at most 2 of the 24 graph/graphgpo-vs-GiGPO
    ones.
H2. Twice the sample (16 / 48 groups): 2-8 comparisons survive, most of them `gigpo[state]·A^S` or
    `gigpo[state]` − GRPO on ALFWorld under the ε-expert (where GRPO is exactly 0); at most 4 of
    the 24 graph-estimator comparisons; no HGPO comparison (neither a gain nor a loss).
H3. No comparison survives Holm *against* the graph estimators or for GRPO, in either run.
H4. Same state, different recent history, equal t: 0 pairs whose Monte-Carlo best action differs
    (the null: these policies are functions of the state and the step count); different t: at most
    1 in 10 compared pairs per cell.
H5. Same observation, different state: a resolved different best action in some compared pairs of
    at least one ALFWorld cell, but under 40% of the compared pairs of every cell (K = 6 resolves
    only large gaps, so this is a lower bound).
H6. The synthetic check and the A^π tables of `alfworld-dev` and `webshop` repeat the earlier runs'
    numbers (same seeds; the new figures do not touch them).
"""

PREDICTIONS_SEEDING = """\
Written before the rerun in which every scored row draws its tie-breaks and continuation seeds from a
generator of its own (before: drawn in the order rows were visited, which follows the workers holding
their snapshots, so the truth depended on the worker count). The collected batches and every estimator's
advantages are unchanged; only the truth's Monte-Carlo draws are new:

S1. Every A^π-based figure moves by Monte-Carlo noise only: each cell's Pearson r within its earlier
    interval, the synthetic coverage in 0.94-0.99, the reliabilities within ±0.1.
S2. Default size: at most 2 of the 108 comparisons survive Holm. Twice the sample: 1-4 survive, among them
    `graphgpo` − `gigpo[obs]` on WebShop under the softmax scorer; no HGPO comparison survives in either run.
"""


def _fmt(r: dict[str, Any], m: str, digits: int = 2) -> str:
    v, lo, hi = r.get(m), r.get(f"{m}_lo"), r.get(f"{m}_hi")
    if v is None or v != v:
        return "–"
    s = f"{v:.{digits}f}"
    if lo is not None and lo == lo and hi == hi:
        s += f" [{lo:.{digits}f}, {hi:.{digits}f}]"
    return s


def _table(rows: list[dict[str, Any]]) -> str:
    body = [[r["estimator"], str(r["N"]), _fmt(r, "pearson"), _fmt(r, "pearson_disatt"), _fmt(r, "sign_acc"),
             _fmt(r, "bias")] for r in rows]
    return R.markdown_table(["estimator", "N", "Pearson r", "r disattenuated", "sign acc. (resolved rows)",
                             "bias (reward units)"], body)


def _verdict(v: str) -> str:
    return {"a": "a", "b": "b"}.get(v, "tie")


def _p(p: float) -> str:
    if p != p:
        return "–"
    return f"{p:.4f}" if p >= 1e-4 else f"{p:.0e}"


def _pairs(rows: list[dict[str, Any]]) -> str:
    body = [[r["env"], r["policy"], str(r["N"]), r["a"], r["b"], f"{r['diff']:+.2f} [{r['diff_lo']:+.2f}, {r['diff_hi']:+.2f}]",
             _p(r.get("p", float("nan"))), _verdict(r["verdict"]), _verdict(r.get("holm", "tie"))] for r in rows]
    return R.markdown_table(["env", "policy", "N", "a", "b", "r(a) − r(b) [95% CI]", "p", "uncorrected",
                             "Holm"], body)


def env_family(env: str) -> str:
    """``alfworld`` for the ALFWorld envs, else the env's name (the findings answer per env family)."""
    return "alfworld" if env.startswith("alfworld") else env


def tallies(pairs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per comparison (a vs b) and env family: cells where a / b is the more accurate after Holm (over the
    run's whole family) and uncorrected, ties after Holm; the largest difference surviving Holm."""
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in pairs:
        k = (r["a"], r["b"], env_family(r["env"]))
        t = out.setdefault(k, {"a": k[0], "b": k[1], "env": k[2], "cells": 0, "holm_a": 0, "holm_b": 0, "ties": 0,
                               "raw_a": 0, "raw_b": 0, "family": r.get("family", 0), "best": None})
        t["cells"] += 1
        h = r.get("holm", "tie")
        t["holm_a"] += h == "a"
        t["holm_b"] += h == "b"
        t["ties"] += h == "tie"
        t["raw_a"] += r["verdict"] == "a"
        t["raw_b"] += r["verdict"] == "b"
        if h != "tie" and (t["best"] is None or abs(r["diff"]) > abs(t["best"]["diff"])):
            t["best"] = r
    return list(out.values())


def _tallies(pairs: list[dict[str, Any]]) -> str:
    body = []
    for t in tallies(pairs):
        b = t["best"]
        ex = (f"{b['diff']:+.2f} [{b['diff_lo']:+.2f}, {b['diff_hi']:+.2f}], p {_p(b['p'])} ({b['env']}, "
              f"{b['policy']}, N = {b['N']})") if b else "–"
        body.append([f"{t['a']} vs {t['b']}", t["env"], str(t["cells"]), f"{t['holm_a']} / {t['holm_b']} / {t['ties']}",
                     f"{t['raw_a']} / {t['raw_b']}", ex])
    return R.markdown_table(["a vs b", "env", "cells", "Holm: a / b / tie", "uncorrected: a / b",
                             "largest surviving Holm"], body)


def _synthetic(rows: list[dict[str, Any]]) -> str:
    body = [[r["task"], f"{r['covered']}/{r['rows']}", f"{r['coverage']:.2f} [{r['coverage_lo']:.2f}, "
             f"{r['coverage_hi']:.2f}]", f"{r['median_half_width']:.3f}", f"{r['exact_adv_sd']:.3f}",
             f"{r['pearson_mc_exact']:.2f}", f"{r['reliability']:.2f}", str(r["env_steps"])] for r in rows]
    k = sum(r["covered"] for r in rows)
    n = sum(r["rows"] for r in rows)
    head = R.markdown_table(["task", "covered", "coverage [95% Wilson]", "median CI half-width", "sd of exact A^π",
                             "r(MC, exact)", "reliability", "env steps"], body)
    return head + f"\n\nAll tasks: {k}/{n} = {k / max(n, 1):.3f} of the checked rows' 95% intervals hold the exact A^π."


def _describe(rows: list[dict[str, Any]], info: list[dict[str, Any]]) -> str:
    body = [[r["env"], r["policy"], str(r["N"]), f"{r['grouped_state']:.2f}", f"{r['grouped_obs']:.2f}",
             f"{r['revisit']:.2f}", f"{r['aliasing']:.2f}", f"{r['success']:.2f}"] for r in rows]
    t1 = R.markdown_table(["env", "policy", "N", "rows in ≥2 state groups", "rows in ≥2 obs groups", "revisit rate",
                           "aliasing (obs groups mixing states)", "success"], body)
    def pairs(i: dict[str, Any], kind: str) -> str:
        n = int(i.get(f"{kind}_compared", 0))
        if not n:
            return f"0 of {int(i.get(f'{kind}_pairs', 0))}"
        return f"{int(i[f'{kind}_best'])}/{n} (Q̂ {int(i[f'{kind}_q'])}/{n})"

    body2 = [[i["env"], i["policy"], str(i["rows_scored"]), f"{i['truth_reliability']:.2f}",
              f"{i['truth_half_width']:.3f}", f"{i['adv_sd']:.3f}", f"{i['resolved']:.2f}",
              f"{i['steps_per_row']:.0f}", str(i["mc_env_steps"] + i["replay_steps"]), str(i["collect_steps"]),
              f"{i['mc_seconds']:.0f}", pairs(i, "history"),
              f"{int(i.get('history_same_t_best', 0))}/{int(i.get('history_same_t', 0))}", pairs(i, "aliasing"),
              str(int(i.get("pair_env_steps", 0)))] for i in info]
    t2 = R.markdown_table(["env", "policy", "rows scored", "truth reliability", "median CI half-width", "sd of Â^π",
                           "rows resolved (CI excludes 0)", "env steps per row", "truth env steps",
                           "collect env steps", "truth s", "same state, other history: best differs",
                           "… at equal t (null)", "same obs, other state: best differs", "pair env steps"],
                          body2)
    t2 += ("\n\nBest-action pairs: two root rows of one task at the same `state_key` with different last-K-state "
           "windows (history), or at the same `obs_key` with different `state_key` (aliasing); at both rows the "
           "policy's two most likely actions that are candidates at both get K continuations each. \"best "
           "differs\" counts pairs whose Monte-Carlo best action differs with each row's gap resolved (> 1.96 "
           "combined SE), of the pairs compared; \"Q̂\" counts pairs where some common action's Q̂ differs "
           "beyond 1.96 combined SE. The behaviour policies are functions of the env state and the step count, "
           "so at one state Q^π can depend on the history only through t (the steps left before the time "
           "limit) — unless `state_key` leaves out something the future depends on: the pairs at equal t are "
           "that null check.")
    return t1 + "\n\n" + t2


def write_report(cfg: RealConfig, res: dict[str, Any], out: Path, stem: str = "credit_real") -> dict[str, Path]:
    """Write the CSV files, the plot and the generated sections of ``<stem>.md`` into ``out`` (every file
    is named ``<stem>…``: ``credit_real`` for the default run, ``credit_real_x2`` for ``--scale 2``)."""
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "csv": R.write_csv(out / f"{stem}.csv", res["results"]),
        "describe": R.write_csv(out / f"{stem}_describe.csv", res["describe"]),
        "info": R.write_csv(out / f"{stem}_info.csv", res["info"]),
        "synthetic": R.write_csv(out / f"{stem}_synthetic.csv", res["synthetic"]),
    }
    if res.get("pairs"):
        paths["pairs"] = R.write_csv(out / f"{stem}_pairs.csv", res["pairs"])
    if res.get("best_pairs"):
        paths["best_pairs"] = R.write_csv(out / f"{stem}_best_pairs.csv", res["best_pairs"])
    if res["results"]:
        p = _plot(out / f"{stem}_pearson.png", res["results"])
        if p is not None:
            paths["plot"] = p
    lo0, lo1 = res["load"]
    cpu = res.get("cpu_seconds")
    setup = [
        "# Credit accuracy on ALFWorld and WebShop against Monte-Carlo A^π",
        "",
        R.machine_lines(cfg.command),
        f"- load (1-min average): {lo0:.1f} at the start, {lo1:.1f} at the end; run with `nice` on 2 shared cores",
        f"- wall time: {res['seconds']:.0f} s"
        + (f"; CPU time {cpu:.0f} s (this process and its finished worker processes)" if cpu is not None else "")
        + f"; env steps: collect {sum(i['collect_steps'] for i in res['info'])}, "
        f"truth {sum(i['mc_env_steps'] + i['replay_steps'] for i in res['info'])} (continuations + replays), "
        f"best-action pairs {sum(int(i.get('pair_env_steps', 0)) for i in res['info'])}, "
        f"synthetic check {sum(r['env_steps'] for r in res['synthetic'])}",
        f"- sizes: N = {', '.join(map(str, cfg.sizes))}; groups {cfg.groups}; scored rows {cfg.scored}; "
        f"K = {cfg.k} continuations per evaluated action (the action taken and the policy's top {cfg.top}), "
        f"{cfg.k_rest} for the rest of π's mass; γ = {cfg.gamma}; backend {cfg.backend} × {cfg.workers}; "
        f"best-action pairs: up to {cfg.pairs} of each kind per cell",
        "- envs: " + "; ".join(f"`{e}`: {ENVS[e].what}" for e in cfg.envs),
        "- policies: " + ", ".join(f"`{p}` ({POLICIES[p]!r})" for p in cfg.policies),
        *(f"- skipped: {s}" for s in res.get("skipped", [])),
        *(f"- note: {s}" for s in res.get("notes", [])),
    ]
    md = out / f"{stem}.md"
    sections = [("setup", "\n".join(setup)), ("predictions", "## Predictions\n\n" + PREDICTIONS + "\n" + PREDICTIONS_HOLM + "\n"
                                                  + PREDICTIONS_SEEDING),
                ("synthetic", "## Sanity: Monte-Carlo truth against the exact oracle (synthetic tasks)\n\n"
                 + _synthetic(res["synthetic"]))]
    for e in cfg.envs:
        for p in cfg.policies:
            rows = [r for r in res["results"] if r["env"] == e and r["policy"] == p]
            if rows:
                sections.append((f"table-{e}-{p}", f"## {e} / {p}\n\n" + _table(rows)))
    if res.get("pairs"):
        fam = res["pairs"][0].get("family", len(res["pairs"]))
        sections.append(("tallies", "## Tallies (Holm-corrected)\n\n"
                         f"Every paired comparison of this run is one family of {fam} (all rows of the table below: "
                         "each comparison at each env, policy and N); Holm's step-down correction keeps the "
                         "family-wise error at 5% (`agentgym_credit.bench.stats.metrics.holm_verdicts`). p is two-sided, "
                         "from t = (r(a) − r(b)) / SE with SE the standard deviation of the paired group-bootstrap "
                         "replicates and a Student-t with G − 1 degrees of freedom (G = rollout groups: 8 or 16 on "
                         "ALFWorld, 24 or 48 on WebShop). \"uncorrected\" is the percentile interval's own verdict. "
                         "ALFWorld's two game sets are tallied together (`alfworld`).\n\n" + _tallies(res["pairs"])))
        sections.append(("robustness", "## Robustness of the verdicts\n\nEvery paired comparison again under three "
                         "other lenses (`agentgym_credit.bench.montecarlo.paired.robustness`): the leave-one-group-out "
                         "jackknife SE beside the group bootstrap's; the largest change of r(a) − r(b) when one scored "
                         "row is dropped, and the comparison recomputed without the row that moves it most toward 0; "
                         "Spearman beside Pearson. Holm over the same family for each.\n\n" + robust_md(res["pairs"])))
        sections.append(("pairs", "## Paired comparisons\n\nPearson r(a) − r(b) on the same scored rows, 95% paired "
                         "group bootstrap (percentile); p and the Holm column as in the tallies above; a verdict "
                         "names the more accurate estimator (a or b).\n\n" + _pairs(res["pairs"])))
    sections.append(("describe", "## What explains them\n\n" + _describe(res["describe"], res["info"])))
    for name, body in sections:
        R.write_section(md, name, body)
    paths["md"] = md
    return paths


def _plot(path: Path, results: list[dict[str, Any]]) -> Path | None:
    """One panel per (env, policy): each estimator's Pearson r with its 95% interval, N side by side."""
    from agentgym_credit.errors import DependencyNotInstalled
    from agentgym_credit.plotting import pyplot, series_styles

    try:
        plt = pyplot()
    except DependencyNotInstalled as e:
        print(f"plot skipped ({path.name}): {e}", file=sys.stderr)
        return None
    cells = list(dict.fromkeys((r["env"], r["policy"]) for r in results))
    names = list(dict.fromkeys(r["estimator"] for r in results))
    sizes = sorted({int(r["N"]) for r in results})
    styles = series_styles(len(sizes))
    ncols = 2
    nrows = -(-len(cells) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(11, 0.32 * len(names) * nrows + 1.2), squeeze=False)
    for ax, (env, pol) in zip(axes.ravel(), cells):
        for k, n in enumerate(sizes):
            rows = {r["estimator"]: r for r in results if r["env"] == env and r["policy"] == pol and int(r["N"]) == n}
            ys = [i + (k - (len(sizes) - 1) / 2) * 0.25 for i in range(len(names))]
            x = [rows[m]["pearson"] if m in rows else float("nan") for m in names]
            lo = [max(rows[m]["pearson"] - rows[m]["pearson_lo"], 0) if m in rows else 0 for m in names]
            hi = [max(rows[m]["pearson_hi"] - rows[m]["pearson"], 0) if m in rows else 0 for m in names]
            ax.errorbar(x, ys, xerr=[lo, hi], ls="none", ms=4, capsize=2, lw=1, label=f"N = {n}", **styles[k])
        ax.set_yticks(range(len(names)))
        ax.set_yticklabels(names, fontsize=7)
        ax.invert_yaxis()
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_title(f"{env} / {pol}", fontsize=9)
        ax.set_xlabel("Pearson r with Monte-Carlo A^π (95% group bootstrap)", fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
        ax.grid(axis="x", alpha=0.3)
    for ax in axes.ravel()[len(cells):]:
        ax.set_visible(False)
    axes.ravel()[0].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="agentgym-credit bench credit_real", description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a small run (under two minutes): synthetic check, ALFWorld generated, WebShop")
    p.add_argument("--out", type=Path, default=None, help="output folder (default benchmarks/montecarlo/ for a full run from "
                   "the repository root, else ./agc-bench)")
    p.add_argument("--envs", nargs="+", choices=sorted(ENVS), default=None)
    p.add_argument("--policies", nargs="+", choices=sorted(POLICIES), default=None)
    p.add_argument("--k", type=int, default=None, help="continuations per evaluated action")
    p.add_argument("--k-rest", type=int, default=None, help="continuations for the rest of the policy's mass")
    p.add_argument("--scale", type=float, default=1.0, help="multiply the scored rows and groups; the files are "
                   "then named credit_real_x<scale>* (credit_real_x2.md for 2)")
    p.add_argument("--backend", choices=("sync", "subprocess", "ray"), default=None)
    p.add_argument("--workers", type=int, default=None)
    p.add_argument("--no-progress", action="store_true")
    return p


def config_from_args(argv: Sequence[str] | None = None) -> tuple[RealConfig, argparse.Namespace] | int:
    """The run's :class:`~.config.RealConfig` and parsed options, or exit status 2 (with the reason on stderr)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    kw: dict[str, Any] = {"command": ("agentgym-credit bench credit_real " + " ".join(argv)).strip(),
                          "progress": not args.no_progress}
    kw |= R.given_options(args, ("k", "k_rest", "backend", "workers"), ("envs", "policies"))
    cfg = RealConfig.quick_config(**kw) if args.quick else RealConfig(**kw)
    if args.scale != 1.0:
        cfg.groups = {e: max(1, round(v * args.scale)) for e, v in cfg.groups.items()}
        cfg.scored = {e: max(2, round(v * args.scale)) for e, v in cfg.scored.items()}
    try:
        cfg.validate()
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return cfg, args


def finish(cfg: RealConfig, args: argparse.Namespace, res: dict[str, Any]) -> int:
    """Write the report of a finished run (where ``--out`` says, else ``benchmarks/montecarlo/`` for a full run from the
    repository root, else ``./agc-bench``) and say where; exit status 0."""
    out = args.out if args.out is not None else (
        Path("benchmarks/montecarlo") if not args.quick and Path("benchmarks").is_dir() and Path("pyproject.toml").exists()
        else Path("agc-bench"))
    stem = "credit_real" if args.scale == 1.0 else f"credit_real_x{args.scale:g}"
    paths = write_report(cfg, res, out, stem)
    print(f"wrote {', '.join(str(p) for p in paths.values())} in {res['seconds']:.1f} s "
          f"(load {os.getloadavg()[0]:.1f})")
    return 0


__all__ = ["PREDICTIONS", "PREDICTIONS_HOLM", "PREDICTIONS_SEEDING", "tallies", "env_family", "write_report", "build_parser", "config_from_args", "finish"]
