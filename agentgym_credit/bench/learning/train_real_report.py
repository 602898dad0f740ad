"""Statistics and report of ``bench train_real`` (:mod:`.train_real`).

Per env: the learning-rate sweep and each arm's pick (flagged when at the grid's edge), the start (held-out
success before any update), final and mean held-out success per arm (sampled and greedy, mean and 95% t
interval over seeds), env steps to a target, paired comparisons over seeds (the primary family with Holm's
correction over it alone; the rest exploratory, uncorrected), and the learning curves with 95% bands.

Outputs: ``<out>/<name>.md`` (the report, sections replaced in place so predictions written before the run
stay), ``<name>.csv`` (one row per checkpoint of every fresh-seed run), ``<name>_sweep.csv``, ``<name>.png``.

What lives here: :func:`on_grid`, :func:`grid_checkpoints`, :func:`steps_to_target`, :func:`run_summary`,
:func:`compare`, :func:`write_report`, :func:`read_result`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_credit.bench.learning.real_config import REAL_ENVS, RealResult, RealTrainConfig
from agentgym_credit.bench.learning.train_real_checks import checks_section, compare
from agentgym_credit.bench.stats import metrics as M
from agentgym_credit.bench.stats import report as R
from agentgym_credit.plotting import try_plot_panels

EXPLORATORY = (("graph[state]", "gigpo[state]"), ("gigpo[state]", "grpo"), ("graph[obs]", "verl-agent"))
"""The comparisons the issue names; exploratory (uncorrected) unless given as the primary family."""


def _runs(rows: Sequence[dict[str, Any]]) -> dict[tuple[str, str, int], list[dict[str, Any]]]:
    out: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault((r["env"], r["arm"], int(r["seed"])), []).append(r)
    for v in out.values():
        v.sort(key=lambda r: r["env_steps"])
    return out


def on_grid(rows: Sequence[dict[str, Any]], marks: np.ndarray, key: str = "success") -> np.ndarray:
    """A run's ``key`` at each mark: the last checkpoint at or before it (runs cross marks a little late)."""
    x = np.array([r["env_steps"] for r in rows], dtype=np.float64)
    y = np.array([r[key] for r in rows], dtype=np.float64)
    idx = np.searchsorted(x, marks + 0.5 * (marks[1] - marks[0] if len(marks) > 1 else 0), side="right") - 1
    return y[np.clip(idx, 0, len(y) - 1)]


def steps_to_target(rows: Sequence[dict[str, Any]], target: float, budget: int,
                    key: str = "success") -> tuple[float, bool]:
    """Env steps at the first checkpoint with ``key`` (held-out sampled success by default) >= ``target``;
    ``(budget, False)`` when never reached (censored at the budget: a conservative tie-ward value)."""
    for r in rows:
        if r.get(key, float("nan")) >= target:
            return float(r["env_steps"]), True
    return float(budget), False


def grid_checkpoints(rows: Sequence[dict[str, Any]], marks: np.ndarray) -> list[dict[str, Any]] | None:
    """Per mark of the budget grid after the start, the checkpoint recorded when the run passed it (the first
    at or after the mark; one batch passing two marks serves both). Checkpoints past the budget's own one
    (``--min-updates`` forcing more updates) are left out, so every run gets the same set; ``None`` when the
    run never reached the budget."""
    x = np.array([r["env_steps"] for r in rows], dtype=np.float64)
    idx = np.searchsorted(x, np.asarray(marks[1:], dtype=np.float64), side="left")
    return None if not len(idx) or idx[-1] >= len(rows) else [rows[i] for i in idx]


def run_summary(cfg: RealTrainConfig, rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per run: start, final, mean over checkpoints (AUC) of held-out success, steps to target.

    ``auc_trained`` (the registered measure) averages every checkpoint after the start, including one past the
    budget where ``--min-updates`` forced more updates; ``auc_trained_grid`` (a sensitivity check added after
    issue 41's outside review) averages the budget grid's checkpoints alone (:func:`grid_checkpoints`);
    ``past_budget`` counts the checkpoints after the grid's last."""
    out = []
    marks = cfg.checkpoint_steps()
    for (env, arm, seed), rs in _runs(rows).items():
        grid = grid_checkpoints(rs, marks)
        tgt = cfg.target.get(env)
        steps, hit = steps_to_target(rs, tgt, cfg.budget_steps, cfg.target_measure) if tgt is not None else (float("nan"), False)
        out.append({"env": env, "arm": arm, "seed": seed, "lr": rs[0]["lr"], "start": rs[0]["success"],
                    "start_greedy": rs[0]["success_greedy"], "final": rs[-1]["success"],
                    "final_greedy": rs[-1]["success_greedy"],
                    "start_trained": rs[0].get("success_trained", float("nan")),
                    "final_trained": rs[-1].get("success_trained", float("nan")),
                    "auc_trained": float(np.mean([r.get("success_trained", float("nan")) for r in rs[1:]] or [np.nan])),
                    "auc_trained_grid": (float(np.mean([r.get("success_trained", float("nan")) for r in grid]))
                                         if grid else float("nan")),
                    "past_budget": sum(r["env_steps"] > grid[-1]["env_steps"] for r in rs) if grid else 0,
                    "auc": float(np.mean([r["success"] for r in rs[1:]]
                                                                                    or [rs[0]["success"]])),
                    "steps": steps, "reached": hit, "env_steps": rs[-1]["env_steps"]})
    return out


def _ci(values: Sequence[float]) -> str:
    m, h, _ = M.mean_ci(np.asarray(values, dtype=np.float64))
    return R.fmt_ci(m, h)


def _env_section(cfg: RealTrainConfig, res: RealResult, env: str, runs: list[dict[str, Any]]) -> str:

    mine = [r for r in runs if r["env"] == env]
    if not mine:
        return ""
    arms = [a for a in cfg.arms if any(r["arm"] == a for r in mine)]
    lines = [f"### {env}: {REAL_ENVS[env].describe}", ""]
    if res.sweep:
        rates = sorted({r["lr"] for r in res.sweep})
        key = "auc" if cfg.pick_measure == "success" else "auc_trained"
        what = "held-out" if key == "auc" else "training-instance"
        tab = []
        for a in arms:
            pick = res.picked.get(f"{env}|{a}")
            sc = [np.mean([r.get(key, np.nan) for r in res.sweep if (r["env"], r["arm"], r["lr"]) == (env, a, lr)] or [np.nan])
                  for lr in rates]
            edge = " (grid edge)" if pick in (rates[0], rates[-1]) else ""
            tab.append([a, *(R.fmt_num(s) for s in sc), f"{pick:g}{edge}"])
        lines += [f"Learning-rate sweep (mean {what} sampled success over checkpoints, the pick's measure; "
                  f"{len({r['seed'] for r in res.sweep})} separate seed(s)):", "",
                  R.markdown_table(["arm", *(f"lr {lr:g}" for lr in rates), "picked"], tab), ""]
    tab = []
    for a in arms:
        rs = [r for r in mine if r["arm"] == a]
        reach = f"{sum(r['reached'] for r in rs)}/{len(rs)}" if env in cfg.target else "-"
        tab.append([a, f"{rs[0]['lr']:g}", len(rs), _ci([r["start"] for r in rs]), _ci([r["final"] for r in rs]),
                    _ci([r["auc"] for r in rs]), _ci([r["final_greedy"] for r in rs]),
                    _ci([r["start_trained"] for r in rs]), _ci([r["final_trained"] for r in rs]),
                    _ci([r["steps"] for r in rs]) if env in cfg.target else "-", reach])
    tgt = cfg.target.get(env)
    why = (f"; the prior's expert bonus is {cfg.expert_bonus:g}, and the sampled policy is the one that learns and is "
           "measured" if cfg.expert_bonus > 0 else "; the prior has no expert bonus: it reads only the text")
    lines += [f"Held-out success (sampled unless said; mean and 95% interval over seeds). Start = before any "
              f"update (greedy start {_ci([r['start_greedy'] for r in mine])}{why})."
              + (f" Target for steps: {cfg.target_measure} >= {tgt:g} (censored at the budget)." if tgt else ""), "",
              R.markdown_table(["arm", "lr", "seeds", "start", "final", "mean over checkpoints", "final greedy",
                                "trained goals: start", "trained goals: final", "env steps to target", "reached"],
                               tab), ""]
    best = max(arms, key=lambda a: np.mean([r["final"] for r in mine if r["arm"] == a]))
    start = float(np.mean([r["start"] for r in mine]))
    fin = float(np.mean([r["final"] for r in mine if r["arm"] == best]))
    lines += [best_arm_line(best, fin, start), ""]
    return "\n".join(lines)


def best_arm_line(best: str, final: float, start: float) -> str:
    """The best arm's final sampled success against the start, and the '>= 2x the start' goal.

    At a start of 0 the ratio is undefined and any final success would pass '>= 2x', so the goal is said
    to be undefined there rather than met."""
    head = f"Best arm by final sampled success: **{best}**, {final:.3f} vs start {start:.3f}"
    if start <= 0:
        return head + " (the start is 0, so the ratio and the goal >= 2x are undefined here)."
    return head + f" ({final / start:.2f}x; goal >= 2x: {'met' if final >= 2 * start else 'not met'})."


def _family_table(cfg: RealTrainConfig, summary: list[dict[str, Any]], prim: list[tuple[str, ...]], m: str) -> str:
    """The primary family on measure ``m``, Holm over it alone."""
    steps = m == "steps"
    fam = [compare(summary, e, a, b, m) for e in cfg.envs for a, b in prim]
    fam = [c for c in fam if c["n"]]
    for c, v in zip(fam, M.holm_verdicts([-c["diff"] if steps else c["diff"] for c in fam], [c["p"] for c in fam])):
        c["holm"] = v
    rows = [[c["env"], f"{c['a']} − {c['b']}", c["n"], R.fmt_ci(c["diff"], c["ci"], 0 if steps else 3),
             R.fmt_num(c["relative"]), R.fmt_num(c["p"]), c["holm"]] for c in fam]
    return R.markdown_table(["env", "comparison", "seeds", "diff", "relative", "p", "Holm"], rows)


def _grid_sensitivity(cfg: RealTrainConfig, summary: list[dict[str, Any]], prim: list[tuple[str, ...]]) -> list[str]:
    """Beside a family on ``auc_trained``: the same family on ``auc_trained_grid`` and how many runs of each arm
    got a checkpoint past the budget (empty when none did: then the two measures are the same)."""
    arms = [a for a in cfg.arms if any(a in p for p in prim)]
    extra = {a: (sum(r["past_budget"] > 0 for r in summary if r["arm"] == a),
                 sum(r["arm"] == a for r in summary)) for a in arms}
    if not any(k for k, _ in extra.values()):
        return []
    counts = ", ".join(f"{a} {k}/{n}" for a, (k, n) in extra.items())
    return [f"Sensitivity check, added after the run (issue 41's outside review; not pre-registered, the registered "
            f"measure is the table above): `auc_trained` averages every checkpoint after the start, and "
            f"`--min-updates` adds one past the {cfg.budget_steps}-step budget to some runs (runs with one: "
            f"{counts}), so arms can be averaged over different checkpoint sets. `auc_trained_grid` averages the "
            f"{cfg.checkpoints} budget-grid checkpoints alone (per mark, the one recorded when the run passed it), "
            f"the same set for every run; Holm over this family alone:", "",
            _family_table(cfg, summary, prim, "auc_trained_grid"), ""]


def _comparison_section(cfg: RealTrainConfig, summary: list[dict[str, Any]]) -> str:
    prim = [tuple(p.split(":", 1)) for p in cfg.primary]
    out = []
    if prim:
        m = cfg.primary_measure
        what = ("env steps to target; negative = a needs fewer; 'win' = a needs fewer" if m == "steps" else
                f"{m}; positive = a higher; 'win' = a higher")
        out += [f"Primary family ({what}; a − b paired over seeds; Holm over this family alone):", "",
                _family_table(cfg, summary, prim, m), ""]
        if m == "auc_trained":
            out += _grid_sensitivity(cfg, summary, prim)
    rows = []
    for e in cfg.envs:
        for a, b in EXPLORATORY:
            for m in ("final", "auc", "final_trained", "auc_trained"):
                c = compare(summary, e, a, b, m)
                if c["n"]:
                    rows.append([e, f"{a} − {b}", m, c["n"], R.fmt_ci(c["diff"], c["ci"]), R.fmt_num(c["p"]),
                                 M.verdict(c["diff"], c["ci"])])
    if rows:
        out += ["Named comparisons (exploratory: 95% intervals over seeds, no correction; final/auc on held-out instances, *_trained on the fixed training-instance episodes; sampled policy):", "",
                R.markdown_table(["env", "comparison", "measure", "seeds", "diff", "p", "interval says"], rows), ""]
    return "\n".join(out)


def curves_plot(cfg: RealTrainConfig, res: RealResult, path: Path) -> Path | None:
    marks = cfg.checkpoint_steps()
    panels: dict[str, dict[str, Any]] = {}
    runs = _runs(res.rows)
    for env in cfg.envs:
        for key, what in (("success", "held-out, sampled"), ("success_trained", "training instances, sampled"),
                          ("success_greedy", "held-out, greedy")):
            lines = {}
            for a in cfg.arms:
                ys = np.array([on_grid(rs, marks, key) for (e, x, _), rs in runs.items() if (e, x) == (env, a)])
                if not len(ys):
                    continue
                ci = [M.mean_ci(ys[:, j]) for j in range(ys.shape[1])]
                lines[a] = (marks.tolist(), [c[0] for c in ci], [0.0 if not math.isfinite(c[1]) else c[1] for c in ci])
            if lines:
                panels[f"{env}: success ({what})"] = lines
    if not panels:
        return None
    return try_plot_panels(path, panels, xlabel="env steps", ylabel="success (mean, 95% CI over seeds)", ncols=2)


_REWARD_WORDS = {"verl-agent": "verl-agent's reward (10 at a win, else 0)",
                 "env": "the env's own reward (WebShop: the partial score of any purchase)"}


def _step_words(cfg: RealTrainConfig) -> str:
    policy = ("the neural text policy (torch)" if cfg.policy == "neural" else "the text policy") + "; "
    if cfg.step == "kl":
        return policy + ("each update's step size set by line search so that the mean KL(π_old‖π_new) over the "
                         "batch's rows hits the arm's 'lr' column (matched policy change per update)")
    return policy + f"advantages divided by their batch RMS ({cfg.adv_scale}), one step at the arm's rate"


def runs_seconds(rows: Sequence[dict[str, Any]]) -> tuple[int, float]:
    """How many runs ``rows`` hold and their own times summed (a run's rows are in order: its last holds its
    time; a missing, blank or non-finite time counts as none)."""
    last: dict[tuple[Any, Any, Any], float] = {}
    for r in rows:
        try:
            v = float(r.get("seconds", "nan"))
        except (TypeError, ValueError):
            v = float("nan")
        last[(r["env"], r["arm"], r["seed"])] = v if math.isfinite(v) else 0.0
    return len(last), float(sum(last.values()))


def _run_time_words(res: RealResult) -> str:
    """The runs' own times summed, when they differ from this call's wall time (runs resumed from their files,
    or run in parallel): a resumed study's render otherwise reports only the seconds it took to read them."""
    n, total = runs_seconds(res.rows)
    if not n or abs(total - res.seconds) < max(1.0, 0.01 * total):
        return ""
    own = "the run's own time" if n == 1 else f"the {n} runs' own times summed"
    return f" for this call; {own} {total:.0f} s"


def write_report(cfg: RealTrainConfig, res: RealResult) -> list[Path]:
    cfg.out.mkdir(parents=True, exist_ok=True)
    base = cfg.out / cfg.name
    paths = [R.write_csv(base.with_suffix(".csv"), res.rows)]
    if res.sweep:
        paths.append(R.write_csv(cfg.out / f"{cfg.name}_sweep.csv", res.sweep))
    R.write_atomic(cfg.out / f"{cfg.name}_meta.json", json.dumps(
        {"picked": res.picked, "seconds": res.seconds, "run_seconds": runs_seconds(res.rows)[1],
         "load": list(res.load)}, indent=1) + "\n")
    png = curves_plot(cfg, res, base.with_suffix(".png"))
    summary = run_summary(cfg, res.rows)
    body = [f"## Results: {cfg.phase}", "", R.machine_lines(cfg.command), "",
            f"Wall time {res.seconds:.0f} s{_run_time_words(res)}; 1-min load average {res.load[0]:.1f} at the start, "
            f"{res.load[1]:.1f} at the end (2 cores shared with other jobs). Budget {cfg.budget_steps} env steps per run; "
            f"{cfg.groups} groups x N = {cfg.group_size} per update; {cfg.train_tasks} training instances per seed; "
            f"held-out evaluation at {cfg.checkpoints + 1} checkpoints; prior expert bonus {cfg.expert_bonus:g}, "
            f"learned parts {', '.join(cfg.parts)}; {_step_words(cfg)}; at least {cfg.min_updates} updates per run; "
            f"advantages computed from {_REWARD_WORDS[cfg.reward]}.", ""]
    measure = "auc_trained" if cfg.primary_measure == "steps" else cfg.primary_measure
    prim = [tuple(p.split(":", 1)) for p in cfg.primary]
    for env in cfg.envs:
        body.append(_env_section(cfg, res, env, summary))
        body.append(checks_section(res.rows, summary, env, cfg.arms, measure, prim, cfg.phase))
    body.append(_comparison_section(cfg, summary))
    if png is not None:
        body += [f"![learning curves]({png.name})", ""]
    paths.append(R.write_section(base.with_suffix(".md"), f"results-{cfg.phase}", "\n".join(body),
                                 preamble=f"# bench train_real: {cfg.name}\n\n"))
    if png is not None:
        paths.append(png)
    return paths


def read_result(csv_path: Path) -> RealResult:
    """The rows (and sweep, picks) of an earlier run, for re-rendering."""
    res = RealResult(rows=R.read_csv(csv_path))
    sweep = csv_path.with_name(csv_path.stem + "_sweep.csv")
    if sweep.exists():
        res.sweep = R.read_csv(sweep)
    meta = csv_path.with_name(csv_path.stem + "_meta.json")
    if meta.exists():
        m = json.loads(meta.read_text())
        res.picked, res.seconds, res.load = dict(m["picked"]), float(m["seconds"]), tuple(m["load"])
    return res


__all__ = ["EXPLORATORY", "on_grid", "grid_checkpoints", "steps_to_target", "run_summary", "compare", "curves_plot",
           "write_report", "read_result"]
