"""``agentgym-credit bench train``: the same policy-gradient loop trained with each credit estimator.

On the synthetic tasks (default, ``--policy tabular``) the policy is a softmax table over each task
instance's true states (:mod:`.train_tabular`), so success is the **exact** probability of winning
under the current policy, computed from the env's model (no evaluation noise), and each update's
credit can be scored against the exact A^π of the current policy (:mod:`.credit_gradient`). For each
task, estimator and seed, :func:`train_one` runs: collect ``groups × N`` rollouts with the real
:class:`~agentgym_credit.wrappers.GroupedRolloutCollector`, compute the advantages with
:func:`agentgym_credit.credit.advantages` on ``batch.steps``, rescale them (``adv_scale``), take one
plain policy-gradient step θ += lr · (1/#trajectories) Σ_i Â_i ∇log π(a_i|s_i), until ``budget_steps`` env steps.

Step size is matched twice: each batch's advantages are divided by their RMS (``adv_scale="rms"``),
and each estimator's learning rate is picked from ``lrs`` on ``sweep_seeds`` seeds (by the area under
its exact success curve); the picked rate is then run on ``seeds`` fresh seeds, which the report uses.
``--policy bow`` trains the older bag-of-words torch policy with PPO-clip and held-out evaluation
(:mod:`.train_text`).

Outputs (``--out``, default ``benchmarks/learning/``): ``training.md`` (what predicts learning, steps to
target and exact final success with paired intervals and Holm's correction, per-task findings),
``training.csv`` (one row per iteration of every fresh-seed run), ``training_sweep.csv`` (the learning-rate
sweep), ``training_credit.csv`` (credit metrics at fixed policies), ``training.png`` (success and credit accuracy along training, mean and 95% band).

What lives here: :func:`train_one`, :func:`train_one_tabular`, :func:`run_benchmark`, :func:`main`; the
configuration (:class:`~.config.TrainBenchConfig`, :data:`~.config.TRAIN_TASKS`, :data:`~.config.ESTIMATORS`,
:data:`~.config.BRANCH_ARMS`, :func:`~.config.estimator_call`, ...) is in :mod:`.config`, re-exported here. Summaries: :mod:`.train_stats`; the report: :mod:`.train_report`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

import agentgym_credit  # noqa: F401  (registers the credit/* envs)
from agentgym_credit.bench.exact.credit_signals import bench_advantages
from agentgym_credit.bench.learning.config import (
    BRANCH_ARMS,
    ESTIMATORS,
    TASK_DEFAULTS,
    TRAIN_TASKS,
    TrainBenchConfig,
    TrainResult,
    default_estimators,
    estimator_call,
    make_collector,
    task_instances,
)
from agentgym_credit.bench.learning.credit_gradient import CREDIT_METRICS, credit_snapshot
from agentgym_credit.bench.learning.train_policy import (
    ActingPolicy,
    BowPolicy,
    HashedBow,
    need_torch,
    ppo_update,
)
from agentgym_credit.bench.learning.train_tabular import (
    SCALES,
    SuccessOracle,
    TabularActor,
    TabularSoftmax,
    policy_gradient,
    scale_advantages,
)
from agentgym_credit.bench.stats import report as R
from agentgym_credit.errors import DependencyNotInstalled
from agentgym_credit.wrappers.collector import GroupedRolloutCollector


def tabular_setup(task: str, cfg: TrainBenchConfig, seed: int) -> tuple[list[str], TabularSoftmax, SuccessOracle, int]:
    """(task instances, a uniform softmax table over their true states, its exact success oracle, the
    horizon) of one seed's tabular run."""
    env, ids = task_instances(task, cfg.train_tasks, seed)
    policy = TabularSoftmax({k: env.model_for(k) for k in ids})
    oracle = SuccessOracle(policy, {k: env.won_states(k) for k in ids})
    return ids, policy, oracle, max(int(m.horizon or 100) for m in policy.models.values())


def collect_tabular(col: GroupedRolloutCollector, policy: TabularSoftmax, ids: Sequence[str],
                    rng: np.random.Generator, cfg: TrainBenchConfig, actor_seed: int):
    """One iteration's batch: ``cfg.groups`` task instances drawn without replacement, N rollouts each by
    the table; returns ``(batch, batch.steps, the extras of the rows kept in steps)``."""
    tasks = [ids[i] for i in rng.choice(len(ids), size=min(cfg.groups, len(ids)), replace=False)]
    batch = col.collect(TabularActor(policy, actor_seed), tasks=tasks)
    return batch, batch.steps, [e for e, keep in zip(batch.extras, batch.row_mask()) if keep]


def train_one_tabular(task: str, label: str, seed: int, lr: float, cfg: TrainBenchConfig,
                      credit: bool = True) -> list[dict[str, Any]]:
    """One tabular run: a row per iteration (env steps, exact success), credit metrics at ``credit_points``."""
    ids, policy, oracle, horizon = tabular_setup(task, cfg, seed)
    name, opts = estimator_call(label, cfg.gamma)
    rng = np.random.default_rng(seed)
    budget = cfg.budget_for(task)
    credit_marks = np.linspace(0, budget, cfg.credit_points + 1)[:-1] if credit else np.zeros(0)
    col = make_collector(task, cfg, seed, horizon)
    rows: list[dict[str, Any]] = []
    env_steps, it, nxt, t0 = 0, 0, 0, time.perf_counter()
    nan = {k: float("nan") for k in CREDIT_METRICS}
    rows.append({"task": task, "estimator": label, "seed": seed, "lr": lr, "iteration": 0, "env_steps": 0,
                 "success": oracle.mean_success(), "seconds": 0.0, **nan, "credit_at": float("nan")})
    try:
        while env_steps < budget:
            it += 1
            batch, steps, extras = collect_tabular(col, policy, ids, rng, cfg, seed * 1_000_003 + it)
            adv = scale_advantages(bench_advantages(name, steps, **opts), cfg.adv_scale)
            stats: dict[str, float] = {**nan, "credit_at": float("nan")}
            if nxt < len(credit_marks) and env_steps >= credit_marks[nxt]:
                while nxt < len(credit_marks) and env_steps >= credit_marks[nxt]:
                    nxt += 1
                # scored against the policy that collected this batch, i.e. after `env_steps` steps
                stats = {**credit_snapshot(policy, extras, steps.t, adv, cfg.gamma), "credit_at": float(env_steps)}
            s = np.fromiter((e["s"] for e in extras), dtype=np.int64, count=len(extras))
            a = np.fromiter((e["a"] for e in extras), dtype=np.int64, count=len(extras))
            n_traj = max(len(np.unique(steps.traj_id)), 1)
            grads = policy_gradient(policy, [e["task"] for e in extras], s, a, adv / n_traj)
            policy.step(grads, lr)
            env_steps += len(batch)
            rows.append({"task": task, "estimator": label, "seed": seed, "lr": lr, "iteration": it,
                         "env_steps": env_steps, "success": oracle.mean_success(),
                         "seconds": time.perf_counter() - t0, **stats})
    finally:
        col.close()
    return rows


def train_one(task: str, label: str, seed: int, cfg: TrainBenchConfig, lr: float | None = None,
              credit: bool = True) -> list[dict[str, Any]]:
    """One run of ``cfg.policy``'s arm at learning rate ``lr`` (default: the first of ``cfg.lrs``)."""
    lr = float(cfg.lrs[0] if lr is None else lr)
    if cfg.policy == "bow":
        from agentgym_credit.bench.learning.train_text import train_one_text

        return train_one_text(task, label, seed, lr, cfg)
    return train_one_tabular(task, label, seed, lr, cfg, credit)


def _auc(rows: Sequence[dict[str, Any]], marks: np.ndarray) -> float:
    from agentgym_credit.bench.learning.train_stats import on_grid

    return float(np.mean(on_grid(rows, marks)))


def run_benchmark(cfg: TrainBenchConfig) -> TrainResult:
    """Learning-rate sweep (``sweep_seeds`` seeds from 1000), then ``seeds`` fresh seeds at each pick."""
    cfg.validate()
    if cfg.policy == "bow":
        need_torch()
    res = TrainResult(load=(os.getloadavg()[0], float("nan")))
    t0 = time.perf_counter()
    sweep = [(t, e, lr, 1000 + s) for t in cfg.tasks for e in cfg.estimators for lr in cfg.lrs
             for s in range(cfg.sweep_seeds)] if len(cfg.lrs) > 1 else []
    best: dict[tuple[str, str], float] = {}
    for task, label, lr, seed in R.progress(sweep, total=len(sweep), desc="bench train: lr sweep",
                                            enable=cfg.progress):
        rows = train_one(task, label, seed, cfg, lr, credit=False)
        res.sweep.append({"task": task, "estimator": label, "lr": lr, "seed": seed,
                          "auc": _auc(rows, cfg.checkpoint_steps(task)), "final": rows[-1]["success"]})
    for task in cfg.tasks:
        for label in cfg.estimators:
            scores = {lr: np.mean([r["auc"] for r in res.sweep if (r["task"], r["estimator"], r["lr"]) ==
                                   (task, label, lr)]) for lr in cfg.lrs}
            best[(task, label)] = max(cfg.lrs, key=lambda lr: scores.get(lr, -1.0)) if sweep else cfg.lrs[0]
    combos = [(t, e, s) for t in cfg.tasks for s in range(cfg.seed_base, cfg.seed_base + cfg.seeds)
              for e in cfg.estimators]
    for task, label, seed in R.progress(combos, total=len(combos), desc="bench train", enable=cfg.progress):
        res.rows.extend(train_one(task, label, seed, cfg, best[(task, label)]))
    if cfg.policy == "tabular":
        from agentgym_credit.bench.learning.train_stats import fixed_policy_credit

        res.fixed = fixed_policy_credit(cfg)
    res.seconds = time.perf_counter() - t0
    res.load = (res.load[0], os.getloadavg()[0])
    return res


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="agentgym-credit bench train",
                                description="Train one policy-gradient loop per credit estimator (exact success "
                                            "on the synthetic tasks).")
    p.add_argument("--quick", action="store_true", help="tiny budgets, 2 seeds (a smoke test, < 2 min)")
    p.add_argument("--policy", choices=("tabular", "bow"), default=None,
                   help="tabular softmax with exact success (default) or the bag-of-words torch policy")
    p.add_argument("--seeds", type=int, default=None, help="fresh seeds per estimator (default 10)")
    p.add_argument("--seed-base", type=int, default=None,
                   help="first fresh seed (default 0; a confirmatory run takes seeds no exploration has seen)")
    p.add_argument("--sweep-seeds", type=int, default=None, help="seeds per learning rate in the sweep (default 2)")
    p.add_argument("--lrs", type=float, nargs="+", default=None,
                   help="learning rates swept per estimator (one value: no sweep)")
    p.add_argument("--budget-steps", type=int, default=None, help="env steps per run (default: per task)")
    p.add_argument("--groups", type=int, default=None, help="task instances per iteration (default 8)")
    p.add_argument("--group-size", type=int, default=None, help="rollouts per group N (default 8)")
    p.add_argument("--adv-scale", choices=SCALES, default=None, help="advantage rescaling per batch (default rms)")
    p.add_argument("--tasks", nargs="+", choices=sorted(TRAIN_TASKS), default=None)
    p.add_argument("--estimators", nargs="+", choices=list(ESTIMATORS), default=None)
    p.add_argument("--target", type=float, default=None, help="target success (default: per task)")
    p.add_argument("--out", type=Path, default=None,
                   help="output folder (default benchmarks/learning/; ./agc-bench/ for --quick, never over the committed report)")
    p.add_argument("--name", default="training")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--from-csv", type=Path, default=None,
                   help="re-render the report from the CSVs written earlier (no training)")
    p.add_argument("--note", default=None, help="a line printed under the wall time (kept when re-rendering)")
    p.add_argument("--primary", nargs="+", default=None, choices=list(ESTIMATORS), metavar="LABEL",
                   help="primary comparisons: these labels vs GiGPO on the same key, env steps to target, Holm "
                        "over this family alone (state them before the run)")
    p.add_argument("--predictions", type=Path, default=None, help="markdown file: the predictions, written before the run")
    p.add_argument("--checked", type=Path, default=None,
                   help="markdown file: the predictions checked against the run (written after it)")
    return p


def config_from_args(argv: Sequence[str]) -> tuple[TrainBenchConfig, argparse.Namespace]:
    args = build_parser().parse_args(list(argv))
    out = args.out if args.out is not None else Path("agc-bench" if args.quick else "benchmarks/learning")
    kw: dict[str, Any] = {"out": out, "name": args.name, "progress": not args.no_progress,
                          "command": "agentgym-credit bench train " + " ".join(argv)}
    kw |= R.given_options(args, ("seeds", "seed_base", "sweep_seeds", "budget_steps", "target", "groups", "group_size",
                                 "adv_scale", "policy", "predictions", "checked"), ("tasks", "estimators", "lrs", "primary"))
    cfg = TrainBenchConfig.quick_config(**kw) if args.quick else TrainBenchConfig(**kw)
    return cfg, args


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``agentgym-credit bench train``."""
    from agentgym_credit.bench.learning.train_report import print_summary, read_result, write_report

    argv = list(sys.argv[1:] if argv is None else argv)
    cfg, args = config_from_args(argv)
    if args.from_csv is not None:  # the recorded run's options first, this call's after them (they win)
        cfg, args = config_from_args(R.recorded_options(args.from_csv.with_suffix(".md")) + argv)
    try:
        cfg.validate()
        if cfg.policy == "bow":
            need_torch()
    except (ValueError, DependencyNotInstalled) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.from_csv is not None:
        res = read_result(args.from_csv)
        ran = {k: tuple(dict.fromkeys(r[col] for r in res.rows)) for k, col in (("tasks", "task"),
                                                                               ("estimators", "estimator"))}
        cfg = replace(cfg, **{k: v for k, v in ran.items() if not getattr(args, k)})  # what the CSV holds
        cfg = replace(cfg, command=R.read_command(args.from_csv.with_suffix(".md")) or cfg.command)
    else:
        res = run_benchmark(cfg)
    if args.note is not None:
        res.note = args.note
    paths = write_report(cfg, res)
    print_summary(cfg, res)
    print(f"wrote {', '.join(str(p) for p in paths.values())} in {res.seconds:.1f} s")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())


__all__ = [
    "TRAIN_TASKS",
    "TASK_DEFAULTS",
    "ESTIMATORS",
    "BRANCH_ARMS",
    "default_estimators",
    "HashedBow",
    "BowPolicy",
    "ActingPolicy",
    "ppo_update",
    "TrainBenchConfig",
    "TrainResult",
    "estimator_call",
    "task_instances",
    "make_collector",
    "train_one",
    "train_one_tabular",
    "tabular_setup",
    "collect_tabular",
    "run_benchmark",
    "build_parser",
    "main",
]
