"""Running ``bench credit``: tasks, behaviour policies, rollouts, the oracle's truth, raw results.

- :data:`TASKS` / :class:`TaskSpec`: the synthetic task families; :data:`POLICIES` /
  :class:`PolicySpec`: the behaviour policies; :class:`ProductPolicy`: π ∝ Π π_i.
- :class:`GroundTruth`: models, policies and exact values per (task instance, policy), cached.
- :func:`collect_run`: grouped rollouts under a behaviour policy (the real collector).
- :class:`Truth` / :func:`true_advantages`: exact A^π, Q^π, V^π of every recorded row, and the
  bias cell of each row (instance, augmented state, action, t).
- :class:`CreditBenchConfig`, :class:`BenchResult`, :func:`run_benchmark`: the whole run;
  :data:`BIAS_PAIRS`: the step terms whose biases are compared pairwise.
- :func:`summarize`: mean and 95% t-interval over seeds per (task, policy, N, signal, metric).
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import agentgym_credit  # noqa: F401  (registers the credit/* envs)
from agentgym_credit.bench.exact.credit_signals import (
    METRICS,
    bias_signals,
    estimator_signals,
    mixed_share,
    obs_keyed,
)
from agentgym_credit.bench.stats import metrics as M
from agentgym_credit.bench.stats import report as R
from agentgym_credit.credit import step_returns
from agentgym_credit.credit.oracle import PolicyValues, Window, episode_windows, evaluate_policy
from agentgym_credit.credit.policies import (
    BehaviourPolicy,
    NoisyOptimalPolicy,
    PolicyBase,
    RevisitAvoidingPolicy,
    UniformPolicy,
    as_collector_policy,
)
from agentgym_credit.envs.gridworld.model import TabularModel
from agentgym_credit.wrappers.collector import GroupedRolloutCollector
from agentgym_credit.wrappers.rollout_batch import RolloutBatch


@dataclass(frozen=True)
class TaskSpec:
    """A synthetic task family: env id, ``gym.make`` kwargs, and what kind of credit problem it is."""

    name: str
    env_id: str
    kind: str
    env_kwargs: tuple[tuple[str, Any], ...] = ()
    fully_observed: bool = False


TASKS: dict[str, TaskSpec] = {
    t.name: t
    for t in (
        TaskSpec("grid", "credit/GridWorld-v0", "fully observed (obs = state), loops, pits", fully_observed=True),
        TaskSpec("aliased", "credit/AliasedGrid-v0", "aliased: key carried is not shown (obs ≠ state)"),
        TaskSpec("cue", "credit/CueCorridor-v0", "history-dependent: a cue seen once decides the last door"),
        TaskSpec("household", "credit/Household-v0",
                 "ALFWorld-like household; clean/cool flags and closed receptacles are not shown (aliased)"),
    )
}
"""Task families of the benchmark (see each env's docstring)."""


class ProductPolicy(PolicyBase):
    """π(a) ∝ Π_i π_i(a): e.g. soft-optimal moves that also avoid recently seen states.

    The window is the largest of the parts' windows (each part reads the tail it needs). The parts
    are asked at ``t = 0`` whatever the step (a stationary policy: with a finite horizon a soft-Q*
    part then uses Q*_0, the values far from the horizon), so the oracle evaluates it with one
    policy table instead of one per time step. Falls back to uniform if the product vanishes.
    """

    time_invariant = True

    def __init__(self, *parts: BehaviourPolicy):
        if not parts:
            raise ValueError("ProductPolicy needs at least one policy")
        self.parts = parts
        self.window = max(int(getattr(p, "window", 0)) for p in parts)

    def probs(self, model: TabularModel, s: int, window: Window, t: int | None) -> np.ndarray:
        k = len(model.actions[s])
        t0 = None if model.horizon is None else 0
        p = np.ones(k)
        for part in self.parts:
            w = int(getattr(part, "window", 0))
            p = p * np.asarray(part.probs(model, s, tuple(window)[-w:] if w > 0 else (), t0), dtype=np.float64)
        total = p.sum()
        return p / total if total > 1e-300 else np.full(k, 1.0 / k)

    def __repr__(self) -> str:
        return "ProductPolicy(" + ", ".join(map(repr, self.parts)) + ")"


@dataclass(frozen=True)
class PolicySpec:
    """A behaviour policy family: ``build(gamma)`` gives a fresh policy (one per task instance)."""

    name: str
    kind: str  # "state" or "window"
    strength: str
    build: Callable[[float], BehaviourPolicy]


POLICIES: dict[str, PolicySpec] = {
    p.name: p
    for p in (
        PolicySpec("uniform", "state", "near-random", lambda g: UniformPolicy()),
        PolicySpec("softQ*(T=0.3)", "state", "medium", lambda g: ProductPolicy(NoisyOptimalPolicy(0.3, gamma=g))),
        PolicySpec("softQ*(T=0.03)", "state", "near-optimal",
                   lambda g: ProductPolicy(NoisyOptimalPolicy(0.03, gamma=g))),
        PolicySpec("revisit-avoid(W=2)", "window", "near-random",
                   lambda g: RevisitAvoidingPolicy(window=2, factor=0.1)),
        PolicySpec("softQ*(T=0.3)×revisit(W=2)", "window", "medium",
                   lambda g: ProductPolicy(NoisyOptimalPolicy(0.3, gamma=g),
                                           RevisitAvoidingPolicy(window=2, factor=0.1))),
    )
}
"""Behaviour policies: state-based and history-window, from near-random to near-optimal.

``softQ*(T)`` is softmax(Q*_0 / T) (stationary, see :class:`ProductPolicy`); ``revisit(W=2)``
down-weights moves back into the last two states (:class:`RevisitAvoidingPolicy`, factor 0.1).
"""

# -- collection and ground truth -----------------------------------------------------------------


class _PerTrajectoryPolicy:
    """Batched policy that gives each trajectory its own collector adapter of its task's model.

    The collector passes only the active episodes, so list positions shift as episodes end; each
    trajectory (``info["rollout"]["traj_id"]``) therefore gets its own
    :class:`~agentgym_credit.credit.policies.CollectorPolicy` (windows and step counters stay its
    own), bound to the model of its task instance and seeded from ``(seed, traj_id)``.
    """

    def __init__(self, policy_for: Callable[[str], tuple[BehaviourPolicy, TabularModel]], seed: int):
        self.policy_for = policy_for
        self.seed = int(seed)
        self._adapters: dict[int, Any] = {}

    def __call__(self, observations: Sequence[str], infos: Sequence[dict[str, Any]]) -> list[str]:
        out = []
        for obs, info in zip(observations, infos):
            tid = int(info["rollout"]["traj_id"])
            ad = self._adapters.get(tid)
            if ad is None:
                pol, model = self.policy_for(str(info["task_id"]))
                ad = as_collector_policy(pol, model, seed=self.seed * 1_000_003 + tid)
                self._adapters[tid] = ad
            out.append(ad([obs], [info])[0])
        return out


class GroundTruth:
    """Models, behaviour policies and exact values per (task instance, policy), computed once."""

    def __init__(self, task: TaskSpec, gamma: float):
        self.task = task
        self.gamma = gamma
        self.env = gym.make(task.env_id, **dict(task.env_kwargs)).unwrapped
        self._policies: dict[tuple[str, str], BehaviourPolicy] = {}
        self._values: dict[tuple[str, str], PolicyValues] = {}
        self.oracle_seconds = 0.0

    def model(self, task_id: str) -> TabularModel:
        return self.env.model_for(task_id)

    def policy(self, spec: PolicySpec, task_id: str) -> BehaviourPolicy:
        key = (spec.name, task_id)
        if key not in self._policies:
            self._policies[key] = spec.build(self.gamma)
        return self._policies[key]

    def values(self, spec: PolicySpec, task_id: str) -> PolicyValues:
        key = (spec.name, task_id)
        if key not in self._values:
            t0 = time.perf_counter()
            self._values[key] = evaluate_policy(self.model(task_id), self.policy(spec, task_id), gamma=self.gamma)
            self.oracle_seconds += time.perf_counter() - t0
        return self._values[key]

    def task_ids(self, n: int, offset: int, pool: int | None = None) -> list[str]:
        """``n`` task ids cycling through the first ``pool`` instances, starting at ``offset``."""
        ids = self.env.task_ids()
        ids = ids[:pool] if pool else ids
        return [ids[(offset + i) % len(ids)] for i in range(n)]


def collect_run(gt: GroundTruth, spec: PolicySpec, n: int, groups: int, seed: int, history_depth: int,
                instances: int | None = None) -> RolloutBatch:
    """``groups`` groups of ``n`` rollouts under the behaviour policy.

    Group g plays task instance ``(seed * groups + g) mod instances`` (the first ``instances`` tasks
    of the env), so the oracle runs once per instance and policy however many groups there are.
    """
    horizon = max(int(gt.model(t).horizon or 100) for t in gt.task_ids(1, 0))
    collector = GroupedRolloutCollector(
        gt.task.env_id, group_size=n, max_steps=horizon, history_depth=history_depth, progress=False,
        seed=seed, env_kwargs=dict(gt.task.env_kwargs),
    )
    tasks = gt.task_ids(groups, offset=seed * groups, pool=instances)
    policy = _PerTrajectoryPolicy(lambda tid: (gt.policy(spec, tid), gt.model(tid)), seed)
    try:
        batch = collector.collect(policy, tasks=tasks, seeds=[seed * 100_003 + g for g in range(groups)])
    finally:
        collector.close()
    if batch.traj.failed.any():
        raise RuntimeError(batch.failure_summary())
    return batch


@dataclass
class Truth:
    """Exact A^π, Q^π, V^π per row of a batch, the bias cell of each row, and its (state, t) cell."""

    adv: np.ndarray
    q: np.ndarray
    v: np.ndarray
    cell: np.ndarray
    state_cell: np.ndarray

    def history_spread(self) -> float:
        """RMS over rows of V^π(s_t, window_t, t) minus its mean over the rows with the same (s_t, t).

        The part of the true value that the state (and time) alone does not explain: what a
        history-aware baseline (HGPO's deeper levels) could remove from a state-anchored one
        (GiGPO). Zero for state-based policies.
        """
        _, inv, counts = np.unique(self.state_cell, return_inverse=True, return_counts=True)
        mean = np.bincount(inv, weights=self.v) / counts
        return float(np.sqrt(np.mean((self.v - mean[inv]) ** 2))) if len(self.v) else float("nan")


def true_advantages(batch: RolloutBatch, gt: GroundTruth, spec: PolicySpec,
                    cell_ids: dict[tuple, int] | None = None) -> Truth:
    """A^π of every recorded row from the oracle (rows of ``batch`` are in (traj_id, t) order).

    The window of each row is rebuilt from the trajectory's own states and actions; the bias cell
    of a row is its (task instance, augmented state, action, t): with a finite horizon A^π depends
    on t. Pass the same ``cell_ids`` dict for several batches (the seeds of one benchmark cell) to
    number their cells consistently, so one (instance, state, action, t) is one cell across seeds.
    """
    n = len(batch)
    adv, q, v = np.empty(n), np.empty(n), np.empty(n)
    cells = np.empty(n, dtype=np.int64)
    state_cells = np.empty(n, dtype=np.int64)
    cell_ids = {} if cell_ids is None else cell_ids
    state_ids: dict[tuple, int] = {}
    order = np.lexsort((batch.t, batch.traj_id))
    trajs = batch.traj_id[order]
    bounds = np.flatnonzero(np.r_[True, trajs[1:] != trajs[:-1], True])
    for b0, b1 in zip(bounds[:-1], bounds[1:]):
        rows = order[b0:b1]
        task_id = batch.task_id[rows[0]]
        model = gt.model(task_id)
        vals = gt.values(spec, task_id)
        s = batch.state_index[rows]
        if np.any(s < 0):
            raise RuntimeError(f"{gt.task.env_id} did not report info['state_index']")
        a = np.array([model.action_index(int(si), batch.action[r]) for si, r in zip(s, rows)])
        wins = episode_windows(s.tolist(), a.tolist(), vals.window_size)
        A, Q, V = vals.advantages_for_steps(s, a, batch.t[rows], wins, return_values=True)
        adv[rows], q[rows], v[rows] = A, Q, V
        for r, si, ai, w in zip(rows, s, a, wins):
            cells[r] = cell_ids.setdefault((task_id, int(si), w, int(ai), int(batch.t[r])), len(cell_ids))
            state_cells[r] = state_ids.setdefault((task_id, int(si), int(batch.t[r])), len(state_ids))
    return Truth(adv, q, v, cells, state_cells)


# -- the benchmark -------------------------------------------------------------------------------


@dataclass
class CreditBenchConfig:
    """What to run. ``trajectories`` rollouts per run are split into ``trajectories // N`` groups."""

    tasks: tuple[str, ...] = tuple(TASKS)
    policies: tuple[str, ...] = tuple(POLICIES)
    group_sizes: tuple[int, ...] = (2, 4, 8, 16)
    seeds: int = 4
    trajectories: int = 128
    instances: int = 6
    gamma: float = 0.95
    history_depth: int = 3
    threshold: float = M.DECISIVE_THRESHOLD
    bias_min_count: int = 5
    out: Path = Path("agc-bench")
    name: str = "credit_accuracy"
    progress: bool = True
    command: str = "agentgym-credit bench credit"
    quick: bool = False

    @classmethod
    def quick_config(cls, **kw: Any) -> CreditBenchConfig:
        """The ``--quick`` sizes: every task, N and signal, fewer policies, rollouts and seeds."""
        base = dict(policies=("uniform", "softQ*(T=0.3)", "softQ*(T=0.3)×revisit(W=2)"), seeds=2,
                    trajectories=32, instances=2, quick=True)
        base.update(kw)
        return cls(**base)

    def validate(self) -> None:
        R.check_known("task", self.tasks, sorted(TASKS))
        R.check_known("policy", self.policies, sorted(POLICIES))
        if not self.group_sizes or min(self.group_sizes) < 2:
            raise ValueError(f"group sizes must be >= 2, got {self.group_sizes}")
        if self.trajectories < max(self.group_sizes):
            raise ValueError(f"trajectories ({self.trajectories}) must be >= the largest N ({max(self.group_sizes)})")
        if self.instances < 1:
            raise ValueError("instances must be >= 1")
        if self.seeds < 1:
            raise ValueError("seeds must be >= 1")
        if self.history_depth < 1:
            raise ValueError("history_depth must be >= 1 (HGPO needs levels above the state)")


@dataclass
class BenchResult:
    """Raw results: one row per (run, signal); per (task, policy, N): one per bias signal, one per
    compared pair of :data:`BIAS_PAIRS` (``verdict`` "win" = ``a`` has the lower bias, interval
    excluding 0, uncorrected; ``p`` its two-sided p-value for the findings' Holm correction); run info;
    ``parts``: the :class:`~agentgym_credit.bench.stats.metrics.BiasParts` of every bias signal and cell, from
    which the findings pool summaries over cells with one jackknife (not written to CSV)."""

    runs: list[dict[str, Any]] = field(default_factory=list)
    bias: list[dict[str, Any]] = field(default_factory=list)
    bias_pairs: list[dict[str, Any]] = field(default_factory=list)
    info: list[dict[str, Any]] = field(default_factory=list)
    parts: dict[tuple, M.BiasParts] = field(default_factory=dict)  # (task, policy, N, signal) -> pooled-bias parts
    seconds: float = 0.0
    load: tuple[float, float] | None = None  # 1-minute load average at the start and at the end


BIAS_PAIRS: tuple[tuple[str, str], ...] = (
    ("hgpo·A^H", "gigpo[state]·A^S"),
    ("gigpo[obs]·A^S", "gigpo[state]·A^S"),
    ("hgpo[obs]·A^H", "gigpo[obs]·A^S"),
    ("hgpo_precision[obs]·A^H", "gigpo[obs]·A^S"),
    ("gigpo[state]·A^S loo", "gigpo[state]·A^S"),
    ("hgpo·A^H loo", "hgpo·A^H"),
)
"""Step terms whose biases the findings compare, (a, b): a paired interval of bias²(a) − bias²(b)."""


def _clusters(seed: int, group_id: np.ndarray) -> np.ndarray:
    """The cluster of each row: its rollout group in its seed (rows of a group share its baselines)."""
    return np.int64(seed) * (1 << 32) + np.asarray(group_id, dtype=np.int64)


def run_benchmark(cfg: CreditBenchConfig) -> BenchResult:
    """Run every (task, policy, N, seed); score every signal against the oracle.

    Per run: the accuracy metrics of every signal (:data:`~.credit_signals.SIGNALS`). Pooled over
    the seeds of a (task, policy, N): the cluster-robust bias of every step term and HGPO level
    (:func:`~agentgym_credit.bench.stats.metrics.cluster_robust_bias`, clusters = rollout groups, cells =
    (instance, augmented state, action, t)) and the paired bias comparisons of :data:`BIAS_PAIRS`.
    """
    cfg.validate()
    res = BenchResult()
    load0 = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    t_start = time.perf_counter()
    combos = [(t, p, n) for t in cfg.tasks for p in cfg.policies for n in cfg.group_sizes]
    bar = R.progress(range(len(combos) * cfg.seeds), total=len(combos) * cfg.seeds, desc="bench credit",
                     enable=cfg.progress)
    truths = {t: GroundTruth(TASKS[t], cfg.gamma) for t in cfg.tasks}
    for task, pol, n in combos:
        gt, spec = truths[task], POLICIES[pol]
        pooled_true, pooled_cell, pooled_cluster, pooled_sig = [], [], [], defaultdict(list)
        cell_ids: dict[tuple, int] = {}  # one numbering over the seeds: a cell is the same state in every seed
        for seed in range(cfg.seeds):
            next(bar, None)
            t0 = time.perf_counter()
            batch = collect_run(gt, spec, n, cfg.trajectories // n, seed, cfg.history_depth, cfg.instances)
            steps = batch.steps
            obs = obs_keyed(steps)
            truth = true_advantages(batch, gt, spec, cell_ids)
            sig = estimator_signals(steps, cfg.gamma, truth.v, obs_steps=obs)
            for name, est in sig.items():
                row = {"task": task, "policy": pol, "N": n, "seed": seed, "signal": name}
                row.update(M.accuracy_metrics(est, truth.adv, cfg.threshold))
                res.runs.append(row)
            res.info.append({
                "task": task, "policy": pol, "N": n, "seed": seed, "steps": len(batch),
                "trajectories": batch.num_trajectories, "groups": batch.num_groups,
                "success": batch.success_rate, "decisive": float(np.mean(np.abs(truth.adv) > cfg.threshold)),
                "true_adv_std": float(truth.adv.std()), "v_history_spread": truth.history_spread(),
                **{f"obs_mixed_{k}": mixed_share(obs, k) for k in range(obs.num_levels)},
                "seconds": time.perf_counter() - t0,
            })
            pooled_true.append(truth.adv)
            pooled_cell.append(truth.cell)
            pooled_cluster.append(_clusters(seed, steps.group_id))
            # E[R_t - Q^π | step] = 0, so subtracting it leaves each row's expected error unchanged and
            # removes the return noise: what remains is the baseline's error V^π - b̂ (see the report)
            noise = np.asarray(step_returns(steps, cfg.gamma)) - truth.q
            for name, est in bias_signals(steps, cfg.gamma, obs_steps=obs).items():
                pooled_sig[name].append(est if name.endswith(":has") else est - noise)
        true_all = np.concatenate(pooled_true)
        cell_all = np.concatenate(pooled_cell)
        cluster_all = np.concatenate(pooled_cluster)
        bsig = {k: np.concatenate(v) for k, v in pooled_sig.items()}
        for name, est in bsig.items():
            if name.endswith(":has"):
                continue
            has = bsig.get(f"{name}:has")
            mask = np.ones(len(est), bool) if has is None else has > 0
            parts = M.bias_parts(est[mask] - true_all[mask], cluster_all[mask], cell_all[mask], cfg.bias_min_count)
            res.parts[(task, pol, n, name)] = parts
            bias, half = M.pooled_bias([parts])
            res.bias.append({
                "task": task, "policy": pol, "N": n, "signal": name, "bias": bias, "bias_ci": half,
                "coverage": float(mask.mean()), "rows": int(mask.sum()),
                "clusters": int(len(np.unique(cluster_all[mask]))),
            })
        for a, b in BIAS_PAIRS:
            pa, pb = res.parts.get((task, pol, n, a)), res.parts.get((task, pol, n, b))
            if pa is not None and pb is not None:
                d, h = M.pooled_bias_squared_difference([pa], [pb])
                df = int(np.union1d(pa.labels[pa.touched], pb.labels[pb.touched]).size) - 1
                res.bias_pairs.append({"task": task, "policy": pol, "N": n, "a": a, "b": b,
                                       "bias2_diff": d, "bias2_diff_ci": h, "df": df,
                                       "p": M.p_from_interval(d, h, df), "verdict": M.verdict(-d, h)})
    for _ in bar:
        pass
    res.seconds = time.perf_counter() - t_start
    res.load = (load0, os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan"))
    return res


def summarize(runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mean and 95% t-interval over seeds for every (task, policy, N, signal, metric)."""
    groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for r in runs:
        groups[(r["task"], r["policy"], int(r["N"]), r["signal"])].append(r)
    out = []
    for (task, pol, n, sig), rows in groups.items():
        row: dict[str, Any] = {"task": task, "policy": pol, "N": n, "signal": sig, "seeds": len(rows)}
        for m in METRICS:
            mean, half, k = M.mean_ci(np.array([float(r[m]) for r in rows]))
            row[m] = mean
            row[f"{m}_ci"] = half
        out.append(row)
    return out


__all__ = [
    "TASKS",
    "POLICIES",
    "BIAS_PAIRS",
    "TaskSpec",
    "PolicySpec",
    "ProductPolicy",
    "GroundTruth",
    "collect_run",
    "Truth",
    "true_advantages",
    "CreditBenchConfig",
    "BenchResult",
    "run_benchmark",
    "summarize",
]
