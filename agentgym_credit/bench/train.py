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

Outputs (``--out``, default ``benchmarks/``): ``training.md`` (what predicts learning, steps to
target and exact final success with paired intervals and Holm's correction, per-task findings),
``training.csv`` (one row per iteration of every fresh-seed run), ``training_sweep.csv`` (the learning-rate
sweep), ``training_credit.csv`` (credit metrics at fixed policies), ``training.png`` (success and credit accuracy along training, mean and 95% band).

What lives here: :data:`TRAIN_TASKS`, :data:`ESTIMATORS`, :data:`BRANCH_ARMS`, :data:`TASK_DEFAULTS`,
:func:`default_estimators`, :class:`TrainBenchConfig`, :func:`estimator_call`, :func:`train_one`,
:func:`run_benchmark`, :func:`main`. Summaries: :mod:`.train_stats`; the report: :mod:`.train_report`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import agentgym_credit  # noqa: F401  (registers the credit/* envs)
from agentgym_credit.bench import report as R
from agentgym_credit.bench.credit import TASKS, TaskSpec
from agentgym_credit.bench.credit_gradient import CREDIT_METRICS, credit_snapshot
from agentgym_credit.bench.credit_signals import bench_advantages
from agentgym_credit.bench.train_policy import ActingPolicy, BowPolicy, HashedBow, need_torch, ppo_update
from agentgym_credit.bench.train_tabular import (
    SCALES,
    SuccessOracle,
    TabularActor,
    TabularSoftmax,
    policy_gradient,
    scale_advantages,
)
from agentgym_credit.credit import ESTIMATORS as REGISTERED
from agentgym_credit.credit import estimator_options
from agentgym_credit.errors import DependencyNotInstalled
from agentgym_credit.wrappers.collector import GroupedRolloutCollector

TRAIN_TASKS: dict[str, TaskSpec] = {
    **TASKS,
    "household-small": TaskSpec("household-small", "credit/Household-v0",
                                "household with 4 receptacles (pick / clean / cool and place)",
                                env_kwargs=(("n_receptacles", 4),)),
}
"""Task families the training benchmark accepts: the credit benchmark's, plus a smaller household."""

TASK_DEFAULTS: dict[str, tuple[int, float]] = {
    "household-small": (40_000, 0.7),
    "household": (60_000, 0.5),
    "aliased": (30_000, 0.8),
    "cue": (12_000, 0.9),
    "grid": (30_000, 0.6),
}
"""Per task: (env-step budget, target exact success) of the tabular arm (``--budget-steps``/``--target``
override them for every task)."""

_KEYED = {"state": "state_key", "obs": "obs_key"}


def _graph_entries() -> dict[str, tuple[str, dict[str, Any]]]:
    """Graph-family estimators, for whichever are registered: keyed on obs_key (and ``graph`` on state_key)."""
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for name in ("graph", "graphgpo", "gagpo"):
        if name not in REGISTERED:
            continue
        opts = estimator_options(name)
        opt = next((o for o in ("key", "anchor", "node_key") if o in opts), None)
        if opt is None:
            out[name] = (name, {})
            continue
        for short, key in _KEYED.items():
            if short == "state" and name != "graph":
                continue
            out[f"{name}[{short}]"] = (name, {opt: key})
    return out


ESTIMATORS: dict[str, tuple[str, dict[str, Any]]] = {
    "grpo": ("grpo", {}),
    "gigpo[state]": ("gigpo", {"anchor": "state_key"}),
    "gigpo[obs]": ("gigpo", {"anchor": "obs_key"}),
    "hgpo": ("hgpo", {}),
    "hgpo+episode": ("hgpo", {"episode": True}),
    "hgpo_precision": ("hgpo_precision", {}),
    "gigpo[state]+branch": ("gigpo", {"anchor": "state_key"}),
    **_graph_entries(),
    "graph_q[obs]": ("graph_q", {"key": "obs_key"}),  # lam 'auto': 1 on obs_key (no bootstrap)
    "graph_q[obs]+lam.5": ("graph_q", {"key": "obs_key", "lam": 0.5}),
    "graph_q[obs]+events.5": ("graph_q", {"key": "obs_key", "lam": 0.5, "loops": "events"}),
    # graph's obs_key default before loops='events': a loop counter, leaning on the unsplit graph
    "graph[obs]+split": ("graph", {"key": "obs_key", "loops": "split", "backoff": 4.0}),
    # history level 1 over observations, (o_{t-1}, o_t): what the agent sees (the collector's history keys
    # are over the true state; bench_advantages rebuilds them from obs_key)
    "graph_q[oh1]+lam.5": ("graph_q", {"key": "history", "level": 1, "lam": 0.5, "history_from": "obs_key"}),
    "graph[oh1]": ("graph", {"key": "history", "level": 1, "lam": 0.5, "loops": "none", "history_from": "obs_key"}),
}
"""Label -> (registered estimator, options); everything else is each estimator's default. HGPO's
default has no episode term (as the reference code); ``hgpo+episode`` adds A^E."""

BRANCH_ARMS: dict[str, str] = {"gigpo[state]+branch": "uncertainty"}
"""Labels trained on rollout trees (label -> selection rule): N/2 roots per group plus branches from
their true states with a budget of N/2 root lengths (:mod:`agentgym_credit.wrappers.branching`);
``env_steps`` counts every branch step. Used by the ``bow`` arm."""


def default_estimators() -> tuple[str, ...]:
    """What a run without ``--estimators`` trains: GRPO, GiGPO (both keys), HGPO with and without its
    episode term, and every registered graph estimator."""
    return ("grpo", "gigpo[state]", "gigpo[obs]", "hgpo", "hgpo+episode",
            *(k for k in ESTIMATORS if k.split("[")[0] in ("graph", "graph_q", "graphgpo", "gagpo") and "+" not in k))


@dataclass
class TrainBenchConfig:
    """Sizes of the training comparison (see the module docstring)."""

    tasks: tuple[str, ...] = ("household-small", "aliased", "cue")
    estimators: tuple[str, ...] = field(default_factory=default_estimators)
    policy: str = "tabular"
    seeds: int = 10
    seed_base: int = 0
    sweep_seeds: int = 2
    lrs: tuple[float, ...] = (4.0, 8.0, 16.0, 32.0)
    budget_steps: int | None = None
    target: float | None = None
    groups: int = 8
    group_size: int = 8
    train_tasks: int = 8
    checkpoints: int = 20
    credit_points: int = 5
    adv_scale: str = "rms"
    gamma: float = 0.95
    history_depth: int = 3
    fixed_seeds: int = 10
    out: Path = Path("benchmarks")
    name: str = "training"
    progress: bool = True
    command: str = "agentgym-credit bench train"
    quick: bool = False
    # a confirmatory run: labels whose steps to target vs their GiGPO partner (same key) form the primary
    # family, Holm-corrected on its own and stated before the run; predictions / their check as markdown files
    primary: tuple[str, ...] = ()
    predictions: Path | None = None
    checked: Path | None = None
    # the bow arm only
    eval_tasks: int = 10
    eval_rollouts: int = 4
    epochs: int = 2
    minibatch: int = 256
    clip: float = 0.2
    entropy_coef: float = 0.01
    buckets: int = 1 << 12
    dim: int = 32

    @classmethod
    def quick_config(cls, **kw: Any) -> TrainBenchConfig:
        """``--quick``: every task and estimator, tiny budgets and 2 seeds (a smoke test, not a result)."""
        base: dict[str, Any] = dict(seeds=2, sweep_seeds=1, lrs=(8.0, 32.0), budget_steps=3_000, groups=4,
                                    group_size=4, train_tasks=4, checkpoints=4, credit_points=2, fixed_seeds=2,
                                    quick=True)
        base.update(kw)
        return cls(**base)

    def validate(self) -> None:
        for t in self.tasks:
            if t not in TRAIN_TASKS:
                raise ValueError(f"unknown task {t!r}; choose from {sorted(TRAIN_TASKS)}")
        for e in self.estimators:
            if e not in ESTIMATORS:
                raise ValueError(f"unknown estimator {e!r}; choose from {list(ESTIMATORS)}")
        if self.policy not in ("tabular", "bow"):
            raise ValueError(f"policy must be 'tabular' or 'bow', got {self.policy!r}")
        if self.policy == "tabular" and any(e in BRANCH_ARMS for e in self.estimators):
            raise ValueError(f"the branch arms {sorted(BRANCH_ARMS)} run with --policy bow only")
        for name in ("seeds", "sweep_seeds", "groups", "train_tasks", "checkpoints", "credit_points", "epochs",
                     "minibatch", "fixed_seeds"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.seed_base < 0:
            raise ValueError("seed_base must be >= 0")
        for e in self.primary:
            if e not in self.estimators:
                raise ValueError(f"primary estimator {e!r} is not among the estimators run")
        if self.group_size < 2:
            raise ValueError("group_size must be >= 2 (group baselines need two rollouts)")
        if not self.lrs or min(self.lrs) <= 0:
            raise ValueError(f"lrs must be positive learning rates, got {self.lrs}")
        if self.target is not None and not 0 < self.target <= 1:
            raise ValueError("target success must be in (0, 1]")
        if self.budget_steps is not None and self.budget_steps < 1:
            raise ValueError("budget_steps must be >= 1")
        if self.adv_scale not in SCALES:
            raise ValueError(f"adv_scale must be one of {SCALES}, got {self.adv_scale!r}")

    def budget_for(self, task: str) -> int:
        return int(self.budget_steps if self.budget_steps is not None else TASK_DEFAULTS.get(task, (40_000, 0.5))[0])

    def target_for(self, task: str) -> float:
        return float(self.target if self.target is not None else TASK_DEFAULTS.get(task, (40_000, 0.5))[1])

    def checkpoint_steps(self, task: str) -> np.ndarray:
        """The env-step grid on which curves are compared: 0, budget/checkpoints, ..., budget."""
        return np.linspace(0, self.budget_for(task), self.checkpoints + 1).round().astype(np.int64)


def estimator_call(label: str, gamma: float) -> tuple[str, dict[str, Any]]:
    """(registered name, options) of a label, with the benchmark's γ where the estimator takes one."""
    name, opts = ESTIMATORS[label]
    opts = dict(opts)
    if "gamma" in estimator_options(name):
        opts["gamma"] = gamma
    return name, opts


def task_instances(task: str, n: int, seed: int) -> tuple[Any, list[str]]:
    """The env (unwrapped) and ``n`` task instances drawn for ``seed`` (the same for every estimator)."""
    spec = TRAIN_TASKS[task]
    env = gym.make(spec.env_id, **dict(spec.env_kwargs)).unwrapped
    ids = env.task_ids()
    if len(ids) < n:
        raise ValueError(f"{spec.env_id} has {len(ids)} task instances, fewer than train_tasks = {n}")
    pick = np.random.default_rng(10_007 + seed).choice(len(ids), size=n, replace=False)
    return env, [ids[i] for i in sorted(pick)]


def _collector(task: str, cfg: TrainBenchConfig, seed: int, horizon: int) -> GroupedRolloutCollector:
    spec = TRAIN_TASKS[task]
    return GroupedRolloutCollector(spec.env_id, group_size=cfg.group_size, history_depth=cfg.history_depth,
                                   max_steps=horizon, progress=False, seed=seed, env_kwargs=dict(spec.env_kwargs))


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
    col = _collector(task, cfg, seed, horizon)
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
        from agentgym_credit.bench.train_text import train_one_text

        return train_one_text(task, label, seed, lr, cfg)
    return train_one_tabular(task, label, seed, lr, cfg, credit)


@dataclass
class TrainResult:
    rows: list[dict[str, Any]] = field(default_factory=list)  # the fresh-seed runs at the picked rates
    sweep: list[dict[str, Any]] = field(default_factory=list)  # one row per (task, estimator, lr, seed)
    fixed: list[dict[str, Any]] = field(default_factory=list)  # credit metrics at fixed policies
    seconds: float = 0.0
    load: tuple[float, float] | None = None
    note: str = ""  # how the run was made when it is not one plain command (e.g. rows rerun and merged)


def _auc(rows: Sequence[dict[str, Any]], marks: np.ndarray) -> float:
    from agentgym_credit.bench.train_stats import on_grid

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
        from agentgym_credit.bench.train_stats import fixed_policy_credit

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
                   help="output folder (default benchmarks/; ./agc-bench/ for --quick, never over the committed report)")
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
    out = args.out if args.out is not None else Path("agc-bench" if args.quick else "benchmarks")
    kw: dict[str, Any] = {"out": out, "name": args.name, "progress": not args.no_progress,
                          "command": "agentgym-credit bench train " + " ".join(argv)}
    for k in ("seeds", "seed_base", "sweep_seeds", "budget_steps", "target", "groups", "group_size", "adv_scale",
              "policy", "predictions", "checked"):
        if getattr(args, k) is not None:
            kw[k] = getattr(args, k)
    for k in ("tasks", "estimators", "lrs", "primary"):
        if getattr(args, k):
            kw[k] = tuple(getattr(args, k))
    cfg = TrainBenchConfig.quick_config(**kw) if args.quick else TrainBenchConfig(**kw)
    return cfg, args


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``agentgym-credit bench train``."""
    from agentgym_credit.bench.train_report import print_summary, read_result, write_report

    argv = list(sys.argv[1:] if argv is None else argv)
    cfg, args = config_from_args(argv)
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
    "train_one",
    "train_one_tabular",
    "tabular_setup",
    "collect_tabular",
    "run_benchmark",
    "build_parser",
    "main",
]
