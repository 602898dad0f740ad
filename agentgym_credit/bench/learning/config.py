"""Configuration of the learning benchmarks: what ``bench train`` and its parts share.

:class:`TrainBenchConfig` (sizes), :data:`TRAIN_TASKS`, :data:`TASK_DEFAULTS`, :data:`ESTIMATORS` (label ->
registered estimator and options), :data:`BRANCH_ARMS`, :func:`default_estimators`, :func:`estimator_call`,
:func:`task_instances`, :func:`make_collector` and :class:`TrainResult`. It lives below the entry point
(:mod:`.train`) and the parts it drives (``train_*``), so none of them imports back from the entry point.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import agentgym_credit  # noqa: F401  (registers the credit/* envs)
from agentgym_credit.bench.exact.credit_run import TASKS, TaskSpec
from agentgym_credit.bench.learning.train_tabular import SCALES
from agentgym_credit.bench.stats.report import check_known
from agentgym_credit.credit import ESTIMATORS as REGISTERED
from agentgym_credit.credit import estimator_options
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
    # graph's obs_key default before loops='events': a loop counter, leaning on the unsplit graph (and the
    # shrink of that time, 1; the default is 0.5 since benchmarks/exact/credit_tuning.md; no alias fallback, the obs_key
    # default since issue 29)
    "graph[obs]+split": ("graph", {"key": "obs_key", "loops": "split", "backoff": 4.0, "shrink": 1.0,
                                   "alias": "none"}),
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
    out: Path = Path("benchmarks/learning")
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
        check_known("task", self.tasks, sorted(TRAIN_TASKS))
        check_known("estimator", self.estimators, list(ESTIMATORS))
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


def make_collector(task: str, cfg: TrainBenchConfig, seed: int, horizon: int) -> GroupedRolloutCollector:
    """The collector of one run: ``cfg.group_size`` rollouts per group of ``task``'s env, ``horizon`` steps at most."""
    spec = TRAIN_TASKS[task]
    return GroupedRolloutCollector(spec.env_id, group_size=cfg.group_size, history_depth=cfg.history_depth,
                                   max_steps=horizon, progress=False, seed=seed, env_kwargs=dict(spec.env_kwargs))


@dataclass
class TrainResult:
    rows: list[dict[str, Any]] = field(default_factory=list)  # the fresh-seed runs at the picked rates
    sweep: list[dict[str, Any]] = field(default_factory=list)  # one row per (task, estimator, lr, seed)
    fixed: list[dict[str, Any]] = field(default_factory=list)  # credit metrics at fixed policies
    seconds: float = 0.0
    load: tuple[float, float] | None = None
    note: str = ""  # how the run was made when it is not one plain command (e.g. rows rerun and merged)


__all__ = ["TRAIN_TASKS", "TASK_DEFAULTS", "ESTIMATORS", "BRANCH_ARMS", "default_estimators", "TrainBenchConfig",
           "estimator_call", "task_instances", "make_collector", "TrainResult"]
