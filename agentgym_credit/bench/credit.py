"""``agentgym-credit bench credit``: credit accuracy of every estimator against the exact A^π.

For each synthetic task family × behaviour policy × group size N × seed the benchmark

1. collects grouped rollouts with the real :class:`~agentgym_credit.wrappers.GroupedRolloutCollector`
   (``trajectories`` rollouts per run, i.e. ``trajectories // N`` groups of N, one task instance per
   group) driven by the behaviour policy through
   :func:`~agentgym_credit.credit.policies.as_collector_policy`;
2. computes every estimator on ``batch.steps`` (:func:`estimator_signals`);
3. computes the oracle's true A^π = Q^π − V^π for the very same rows (:func:`true_advantages`:
   exact dynamic programming on the env's ``TabularModel``, on (state, history window, t) for
   window policies);
4. scores each signal against A^π (:mod:`agentgym_credit.bench.metrics`), and the systematic error
   (bias) of the step-level terms in reward units, per HGPO level too.

HGPO runs twice: on the collector's ``history_keys`` (contexts of ``state_key``, Markov: the true
state already holds the cue or the carried key) and on contexts of what the agent SEES
(:func:`obs_history_keys`: level k = fingerprint of the last k+1 ``obs_key`` hashes, as an LLM
agent's implementation groups). The ``[obs]`` signals measure HGPO's claim that deeper
observation histories disambiguate aliased observations.

``--quick`` runs the same functions on fewer rollouts and seeds. Outputs (``--out``, default
``benchmarks/``): ``credit_accuracy.md`` (tables + findings), ``credit_accuracy.csv`` (summary with
95% t-intervals over seeds), ``credit_accuracy_runs.csv`` (one row per run and signal),
``credit_accuracy_bias.csv``, and PNG plots of accuracy vs N.

What lives here: :data:`TASKS`, :data:`POLICIES`, :class:`ProductPolicy`, :class:`CreditBenchConfig`,
:func:`collect_run`, :func:`true_advantages`, :func:`obs_history_keys`, :func:`obs_keyed`,
:func:`mixed_share`, :func:`estimator_signals`, :func:`bias_signals`,
:func:`run_benchmark`, :func:`summarize`, :func:`findings`, :func:`write_report`, :func:`main`.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import agentgym_credit  # noqa: F401  (registers the credit/* envs)
from agentgym_credit.bench import metrics as M
from agentgym_credit.bench import report as R
from agentgym_credit.credit import advantages, gigpo_step, step_returns
from agentgym_credit.credit.oracle import PolicyValues, Window, episode_windows, evaluate_policy
from agentgym_credit.credit.policies import (
    BehaviourPolicy,
    NoisyOptimalPolicy,
    PolicyBase,
    RevisitAvoidingPolicy,
    UniformPolicy,
    as_collector_policy,
)
from agentgym_credit.credit.steps import StepArrays
from agentgym_credit.envs.gridworld.model import TabularModel
from agentgym_credit.keys import _M0, _M1, MISSING, WINDOW_SEED
from agentgym_credit.wrappers.collector import GroupedRolloutCollector
from agentgym_credit.wrappers.rollout_batch import RolloutBatch

# -- tasks and behaviour policies ----------------------------------------------------------------


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

# -- signals -------------------------------------------------------------------------------------

SIGNALS: dict[str, str] = {
    "grpo": "episode: GRPO A^E (mean/std over the group's returns), same value on every step",
    "rloo": "episode: RLOO leave-one-out baseline",
    "drgrpo": "episode: Dr.GRPO (mean baseline, no std)",
    "gigpo[state]·A^S": "step term: GiGPO anchor-state advantage, state_key anchors",
    "gigpo[obs]·A^S": "step term: GiGPO anchor-state advantage, obs_key anchors (reference code)",
    "hgpo·A^H": "step term: HGPO hierarchy blend, weights (k+1)^1, levels over state_key history",
    "hgpo_precision·A^H": "step term: precision-weighted hierarchy blend (beyond the papers), state_key history",
    "hgpo[obs]·A^H": "step term: HGPO hierarchy blend over observation history (level k = last k+1 obs_key)",
    "hgpo_precision[obs]·A^H": "step term: precision-weighted blend over observation history",
    "gigpo[state]": "full: A^E + A^S (state_key anchors)",
    "gigpo[obs]": "full: A^E + A^S (obs_key anchors)",
    "hgpo": "full: A^E + A^H (state_key history)",
    "hgpo[obs]": "full: A^E + A^H (observation history)",
    "mc": "no baseline: discounted return R_t",
    "gae(true V)": "reference ceiling: GAE(λ=0.95) with the oracle's exact V^π as critic",
}
"""Every signal compared with A^π, and what it is."""

STEP_TERMS = ("gigpo[state]·A^S", "gigpo[obs]·A^S", "hgpo·A^H", "hgpo_precision·A^H", "hgpo[obs]·A^H",
              "hgpo_precision[obs]·A^H")
EPISODE_TERMS = ("grpo", "rloo", "drgrpo")
METRICS = ("pearson", "spearman", "sign_acc", "rmse", "nonzero")
METRIC_TITLES = {
    "pearson": "Pearson r", "spearman": "Spearman ρ", "sign_acc": "sign accuracy (decisive)",
    "rmse": "scaled RMSE", "nonzero": "nonzero fraction",
}


def _mix(h: np.ndarray, x: np.ndarray) -> np.ndarray:
    """:func:`~agentgym_credit.keys.mix64` elementwise on uint64 arrays (numpy wraps mod 2**64)."""
    z = h * np.uint64(_M0) + x
    z = (z ^ (z >> np.uint64(32))) * np.uint64(_M1)
    z = z ^ (z >> np.uint64(29))
    return np.where(z == 0, np.uint64(1), z)


def obs_history_keys(steps: StepArrays, depth: int | None = None) -> np.ndarray:
    """HGPO contexts over observations: ``[n, depth+1]`` uint64, level k = C_k = (o_{t-k}, ..., o_t).

    Entry k of a row is :func:`~agentgym_credit.keys.window_fingerprint` of the ``obs_key`` hashes of
    its trajectory's rows t-k..t, or :data:`~agentgym_credit.keys.MISSING` when t < k (or a row of
    that window is absent): the fingerprint :class:`~agentgym_credit.wrappers.HistoryFingerprint`
    computes with ``key="obs_key"``, rebuilt here from the rows (vectorized: one fold step per level).
    ``depth`` defaults to that of ``steps.history_keys``.
    """
    depth = steps.num_levels - 1 if depth is None else int(depth)
    if depth < 0:
        raise ValueError(f"depth must be >= 0, got {depth}")
    n = len(steps.t)
    order = np.lexsort((steps.t, steps.traj_id))
    o = np.asarray(steps.obs_key, dtype=np.uint64)[order]
    tr, t = np.asarray(steps.traj_id)[order], np.asarray(steps.t)[order]
    follows = np.zeros(n, dtype=bool)  # row i continues row i-1 of the same trajectory
    follows[1:] = (tr[1:] == tr[:-1]) & (t[1:] == t[:-1] + 1)
    out = np.zeros((n, depth + 1), dtype=np.uint64)
    cur = _mix(np.full(n, WINDOW_SEED, dtype=np.uint64), o)
    out[:, 0] = cur
    for k in range(1, depth + 1):
        prev = np.zeros(n, dtype=np.uint64)
        prev[1:] = cur[:-1]  # level k-1 of the previous row, extended by this row's observation
        ok = follows & (prev != np.uint64(MISSING))
        cur = np.where(ok, _mix(prev, o), np.uint64(MISSING))
        out[:, k] = cur
    res = np.empty_like(out)
    res[order] = out
    return res


def obs_keyed(steps: StepArrays) -> StepArrays:
    """``steps`` with ``history_keys`` replaced by :func:`obs_history_keys` (same depth)."""
    return replace(steps, history_keys=obs_history_keys(steps))


def mixed_share(steps: StepArrays, k: int) -> float:
    """Share of rows in a level-k group (size >= 2) whose group holds more than one ``state_key``.

    The aliasing left at level k: 0 when every level-k context pins the true state. NaN without
    any level-k group.
    """
    key = steps.history_keys[:, k]
    live = key != np.uint64(MISSING)
    g = np.asarray(steps.group_id, dtype=np.uint64)[live]
    pair = np.stack([g, key[live]], axis=1)
    _, inv, counts = np.unique(pair, axis=0, return_inverse=True, return_counts=True)
    inv = inv.ravel()
    triple = np.stack([inv.astype(np.uint64), np.asarray(steps.state_key, dtype=np.uint64)[live]], axis=1)
    uniq = np.unique(triple, axis=0)
    states_per_group = np.bincount(uniq[:, 0].astype(np.int64), minlength=len(counts))
    grouped = counts[inv] >= 2
    if not grouped.any():
        return float("nan")
    return float(np.mean(states_per_group[inv][grouped] > 1))


def estimator_signals(steps: StepArrays, gamma: float, true_v: np.ndarray | None = None,
                      obs_steps: StepArrays | None = None) -> dict[str, np.ndarray]:
    """Every signal of :data:`SIGNALS` on ``steps`` (default options, std normalization).

    ``obs_steps`` (default :func:`obs_keyed` of ``steps``) feeds the ``[obs]`` HGPO signals.
    """
    obs = obs_keyed(steps) if obs_steps is None else obs_steps
    out = {
        "grpo": advantages("grpo", steps),
        "rloo": advantages("rloo", steps),
        "drgrpo": advantages("drgrpo", steps),
        "gigpo[state]·A^S": gigpo_step(steps, gamma=gamma, anchor="state_key"),
        "gigpo[obs]·A^S": gigpo_step(steps, gamma=gamma, anchor="obs_key"),
        "hgpo·A^H": advantages("hgpo", steps, gamma=gamma),
        "hgpo_precision·A^H": advantages("hgpo_precision", steps, gamma=gamma),
        "hgpo[obs]·A^H": advantages("hgpo", obs, gamma=gamma),
        "hgpo_precision[obs]·A^H": advantages("hgpo_precision", obs, gamma=gamma),
        "gigpo[state]": advantages("gigpo", steps, gamma=gamma, anchor="state_key"),
        "gigpo[obs]": advantages("gigpo", steps, gamma=gamma, anchor="obs_key"),
        "hgpo": advantages("hgpo", steps, gamma=gamma, episode=True),
        "hgpo[obs]": advantages("hgpo", obs, gamma=gamma, episode=True),
        "mc": advantages("mc", steps, gamma=gamma),
    }
    if true_v is not None:
        out["gae(true V)"] = advantages("gae", replace(steps, value=true_v), gamma=gamma, lam=0.95)
    return out


def bias_signals(steps: StepArrays, gamma: float, obs_steps: StepArrays | None = None) -> dict[str, np.ndarray]:
    """Step-level terms in reward units (F_norm = 1), HGPO's levels A_k one by one.

    Levels over state_key history are ``A_k``, over observation history (``obs_steps``, default
    :func:`obs_keyed` of ``steps``) ``A_k[obs]``. Rows where a level has no group of size >= 2 hold
    0 for that level (no signal), as the estimators give; :func:`run_benchmark` scores each level on
    the rows where it exists.
    """
    obs = obs_keyed(steps) if obs_steps is None else obs_steps
    out = {
        "gigpo[state]·A^S": gigpo_step(steps, gamma=gamma, anchor="state_key", step_norm="mean"),
        "gigpo[obs]·A^S": gigpo_step(steps, gamma=gamma, anchor="obs_key", step_norm="mean"),
        "hgpo·A^H": advantages("hgpo", steps, gamma=gamma, norm="mean"),
        "hgpo_precision·A^H": advantages("hgpo_precision", steps, gamma=gamma, norm="mean"),
        "hgpo[obs]·A^H": advantages("hgpo", obs, gamma=gamma, norm="mean"),
        "hgpo_precision[obs]·A^H": advantages("hgpo_precision", obs, gamma=gamma, norm="mean"),
    }
    for k in range(steps.num_levels):
        a_k, has, m = level_term(steps, k, gamma, with_size=True)
        out[f"A_{k}"] = a_k
        out[f"A_{k}:has"] = has.astype(np.float64)
        # diagnostic: R_t minus the mean of the OTHER members (A_k · m/(m−1)), no own-return shrinkage
        out[f"A_{k} loo"] = a_k * np.where(has, m / np.maximum(m - 1, 1), 0.0)
        out[f"A_{k} loo:has"] = out[f"A_{k}:has"]
    for k in range(obs.num_levels):
        a_k, has = level_term(obs, k, gamma)
        out[f"A_{k}[obs]"] = a_k
        out[f"A_{k}[obs]:has"] = has.astype(np.float64)
    return out


def level_term(steps: StepArrays, k: int, gamma: float, with_size: bool = False) -> tuple[np.ndarray, ...]:
    """HGPO's level-k advantage A_k = R_t − mean over G_k (F_norm = 1) alone, and where G_k exists.

    With ``with_size=True`` also returns the size m of each row's level-k group (1 = no group).

    Computed with GiGPO's step term on ``history_keys[:, k]`` as the anchor key: the same grouping
    (pairs (group_id, key)) and the same return. Rows without a level-k context (t < k, key
    :data:`~agentgym_credit.keys.MISSING`) get a key of their own, so they stay singletons (0).
    """
    keys = steps.history_keys[:, k].copy()
    missing = keys == np.uint64(MISSING)
    keys[missing] = np.uint64(1 << 63) + np.flatnonzero(missing).astype(np.uint64)
    a_k = gigpo_step(replace(steps, state_key=keys), gamma=gamma, anchor="state_key", step_norm="mean")
    pair = np.stack([steps.group_id.astype(np.uint64), keys], axis=1)
    _, inv, counts = np.unique(pair, axis=0, return_inverse=True, return_counts=True)
    size = np.where(missing, 1, counts[inv.ravel()])
    has = size >= 2
    if with_size:
        return np.asarray(a_k, dtype=np.float64), has, size
    return np.asarray(a_k, dtype=np.float64), has


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
        raise RuntimeError(f"{int(batch.traj.failed.sum())} rollouts failed: {batch.traj.error[:3]}")
    return batch


@dataclass
class Truth:
    """Exact A^π, Q^π, V^π per row of a batch, and the bias cell of each row."""

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


def true_advantages(batch: RolloutBatch, gt: GroundTruth, spec: PolicySpec) -> Truth:
    """A^π of every recorded row from the oracle (rows of ``batch`` are in (traj_id, t) order).

    The window of each row is rebuilt from the trajectory's own states and actions; the bias cell
    of a row is its (task instance, augmented state, action).
    """
    n = len(batch)
    adv, q, v = np.empty(n), np.empty(n), np.empty(n)
    cells = np.empty(n, dtype=np.int64)
    state_cells = np.empty(n, dtype=np.int64)
    cell_ids: dict[tuple, int] = {}
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
            cells[r] = cell_ids.setdefault((task_id, int(si), w, int(ai)), len(cell_ids))
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
    out: Path = Path("benchmarks")
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
        for t in self.tasks:
            if t not in TASKS:
                raise ValueError(f"unknown task {t!r}; choose from {sorted(TASKS)}")
        for p in self.policies:
            if p not in POLICIES:
                raise ValueError(f"unknown policy {p!r}; choose from {sorted(POLICIES)}")
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
    """Raw results: one row per (run, signal), one per (task, policy, N, bias signal), run info."""

    runs: list[dict[str, Any]] = field(default_factory=list)
    bias: list[dict[str, Any]] = field(default_factory=list)
    info: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0


def run_benchmark(cfg: CreditBenchConfig) -> BenchResult:
    """Run every (task, policy, N, seed); score every signal against the oracle."""
    cfg.validate()
    res = BenchResult()
    t_start = time.perf_counter()
    combos = [(t, p, n) for t in cfg.tasks for p in cfg.policies for n in cfg.group_sizes]
    bar = R.progress(range(len(combos) * cfg.seeds), total=len(combos) * cfg.seeds, desc="bench credit",
                     enable=cfg.progress)
    truths = {t: GroundTruth(TASKS[t], cfg.gamma) for t in cfg.tasks}
    for task, pol, n in combos:
        gt, spec = truths[task], POLICIES[pol]
        pooled_true, pooled_cell, pooled_sig = [], [], defaultdict(list)
        for seed in range(cfg.seeds):
            next(bar, None)
            t0 = time.perf_counter()
            batch = collect_run(gt, spec, n, cfg.trajectories // n, seed, cfg.history_depth, cfg.instances)
            steps = batch.steps
            obs = obs_keyed(steps)
            truth = true_advantages(batch, gt, spec)
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
            # E[R_t - Q^π | step] = 0, so subtracting it leaves each row's expected error unchanged and
            # removes the return noise: what remains is the baseline's error V^π - b̂ (see write_report)
            noise = np.asarray(step_returns(steps, cfg.gamma)) - truth.q
            for name, est in bias_signals(steps, cfg.gamma, obs_steps=obs).items():
                pooled_sig[name].append(est if name.endswith(":has") else est - noise)
        true_all = np.concatenate(pooled_true)
        # cells are numbered per run; make them global over seeds by offsetting
        cells, off = [], 0
        for c in pooled_cell:
            cells.append(c + off)
            off += int(c.max()) + 1 if len(c) else 0
        cell_all = np.concatenate(cells)
        bsig = {k: np.concatenate(v) for k, v in pooled_sig.items()}
        for name, est in bsig.items():
            if name.endswith(":has"):
                continue
            has = bsig.get(f"{name}:has")
            mask = np.ones(len(est), bool) if has is None else has > 0
            res.bias.append({
                "task": task, "policy": pol, "N": n, "signal": name,
                "bias": M.cell_bias(est[mask], true_all[mask], cell_all[mask], cfg.bias_min_count),
                "coverage": float(mask.mean()),
                "rows": int(mask.sum()),
            })
    for _ in bar:
        pass
    res.seconds = time.perf_counter() - t_start
    return res


# -- summaries -----------------------------------------------------------------------------------


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


def _nanmean(values: Sequence[float]) -> float:
    """Mean of the finite values; NaN (no warning) when there are none."""
    v = np.asarray(list(values), dtype=np.float64)
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else float("nan")


def _trend(values: Sequence[float]) -> str:
    """"rises" / "falls" from the first to the last finite value ("is flat" or "is undefined" otherwise)."""
    v = [x for x in values if math.isfinite(x)]
    if len(v) < 2:
        return "is undefined"
    return "rises" if v[-1] > v[0] else "falls" if v[-1] < v[0] else "is flat"


def _pct(x: float) -> str:
    """``x`` as a whole percentage, "–" when not finite."""
    return f"{x:.0%}" if math.isfinite(x) else "–"


def _index(summary: Sequence[dict[str, Any]]) -> dict[tuple, dict[str, Any]]:
    return {(r["task"], r["policy"], int(r["N"]), r["signal"]): r for r in summary}


def _obs_findings(cfg: CreditBenchConfig, S: dict, B: dict, info: Sequence[dict[str, Any]],
                  cmp_cells: Callable[..., tuple]) -> list[str]:
    """Findings lines: HGPO over observation history vs GiGPO on obs anchors, on the aliased tasks."""
    lines: list[str] = []
    ns, pols, depth = cfg.group_sizes, cfg.policies, cfg.history_depth

    def bias_cmp(ts, a, b):
        wins, ratios, ba, bb = 0, [], [], []
        for t in ts:
            for p in pols:
                for n in ns:
                    ra, rb = B.get((t, p, n, a)), B.get((t, p, n, b))
                    if ra is None or rb is None or not (math.isfinite(ra["bias"]) and math.isfinite(rb["bias"])):
                        continue
                    wins += ra["bias"] < rb["bias"]
                    ba.append(ra["bias"])
                    bb.append(rb["bias"])
                    if rb["bias"] > 0:
                        ratios.append(ra["bias"] / rb["bias"])
        return wins, len(ba), _nanmean(ratios), _nanmean(ba), _nanmean(bb)

    def mean_bias(ts, sig):
        return _nanmean([B[(t, p, n, sig)]["bias"] for t in ts for p in pols for n in ns if (t, p, n, sig) in B])

    def mean_pearson(ts, sig):
        return _nanmean([S[(t, p, n, sig)]["pearson"] for t in ts for p in pols for n in ns if (t, p, n, sig) in S])

    head = [t for t in ("aliased", "cue") if t in cfg.tasks]
    if head:
        bw, bt, ratio, bh, bg = bias_cmp(head, "hgpo[obs]·A^H", "gigpo[obs]·A^S")
        pw, pt, _, pm = cmp_cells(head, pols, ns, "hgpo[obs]·A^H", "gigpo[obs]·A^S")
        qw, qt, qratio, _, _ = bias_cmp(head, "hgpo_precision[obs]·A^H", "gigpo[obs]·A^S")
        if bt or pt:
            verdict = ("holds in every cell" if bw == bt and pw == pt else
                       "holds for bias in most cells, not everywhere" if bw > bt / 2 else
                       "does NOT hold for bias in most cells")
            if math.isfinite(ratio) and 0.9 <= ratio <= 1.1:
                verdict += f" — and the difference is small (mean bias ratio {ratio:.2f})"
            lines.append(
                f"- **{'/'.join(head)} tasks, obs-keyed: HGPO over observation history vs GiGPO on obs anchors** "
                f"(every policy, N ∈ {list(ns)}, K = {depth}; level k groups rows with equal (o_{{t-k}}, ..., o_t)): "
                f"HGPO's claim {verdict}. Bias: `hgpo[obs]·A^H` is lower than `gigpo[obs]·A^S` in {bw}/{bt} cells, "
                f"mean ratio bias(hgpo[obs])/bias(gigpo[obs]) = {ratio:.2f} (mean {bh:.4f} vs {bg:.4f} reward "
                f"units); Pearson r: higher in {pw}/{pt} cells, mean margin {np.mean(pm) if pm else float('nan'):+.3f} "
                f"({mean_pearson(head, 'hgpo[obs]·A^H'):.3f} vs {mean_pearson(head, 'gigpo[obs]·A^S'):.3f}). "
                f"Precision-weighted (`hgpo_precision[obs]·A^H`): lower bias in {qw}/{qt} cells, mean ratio "
                f"{qratio:.2f}. Reference without aliasing: `gigpo[state]·A^S` bias "
                f"{mean_bias(head, 'gigpo[state]·A^S'):.4f}, Pearson {mean_pearson(head, 'gigpo[state]·A^S'):.3f}.")
    for t in cfg.tasks:
        if TASKS[t].fully_observed:
            continue
        runs = [r for r in info if r["task"] == t]
        mixed = [_nanmean([r.get(f"obs_mixed_{k}", float("nan")) for r in runs]) for k in range(depth + 1)]
        lv = []
        for k in range(depth + 1):
            vals = [B[(t, p, n, f"A_{k}[obs]")] for p in pols for n in ns if (t, p, n, f"A_{k}[obs]") in B]
            cov = float(np.mean([r["coverage"] for r in vals])) if vals else float("nan")
            lv.append((_nanmean([r["bias"] for r in vals]), cov))
        bw, bt, ratio, bh, bg = bias_cmp([t], "hgpo[obs]·A^H", "gigpo[obs]·A^S")
        pw, pt, _, pm = cmp_cells([t], pols, ns, "hgpo[obs]·A^H", "gigpo[obs]·A^S")
        if not bt:
            continue
        unmix, trend = _trend(mixed), _trend([b for b, _ in lv])
        lines.append(
            f"  - {t}: share of grouped rows whose observation group mixes different true states, level 0..{depth}: "
            + " → ".join(_pct(m) for m in mixed)
            + f" (it {unmix} with depth). Per-level bias over observation history: "
            + ", ".join(f"A_{k}[obs] {b:.4f} ({c:.0%} of rows)" for k, (b, c) in enumerate(lv))
            + f" — it {trend} with depth. `hgpo[obs]·A^H` vs `gigpo[obs]·A^S`: bias lower in {bw}/{bt} cells "
            f"(mean ratio {ratio:.2f}; {bh:.4f} vs {bg:.4f}), Pearson higher in {pw}/{pt} "
            f"(mean margin {np.mean(pm) if pm else float('nan'):+.3f}); `gigpo[state]·A^S` bias "
            f"{mean_bias([t], 'gigpo[state]·A^S'):.4f}, state-history `hgpo·A^H` {mean_bias([t], 'hgpo·A^H'):.4f}.")
    return lines


def findings(cfg: CreditBenchConfig, summary: Sequence[dict[str, Any]], bias: Sequence[dict[str, Any]],
             info: Sequence[dict[str, Any]] = ()) -> list[str]:
    """The predictions of the papers, checked on this run's numbers (markdown bullet lines)."""
    S = _index(summary)
    B = {(r["task"], r["policy"], int(r["N"]), r["signal"]): r for r in bias}
    lines: list[str] = []
    ns4 = [n for n in cfg.group_sizes if n >= 4]

    def cmp_cells(tasks, pols, ns, a, b, metric="pearson"):
        wins, total, worst, margins = 0, 0, None, []
        for t in tasks:
            for p in pols:
                for n in ns:
                    ra, rb = S.get((t, p, n, a)), S.get((t, p, n, b))
                    if ra is None or rb is None or not (math.isfinite(ra[metric]) and math.isfinite(rb[metric])):
                        continue
                    d = ra[metric] - rb[metric]
                    total += 1
                    wins += d > 0
                    margins.append(d)
                    if worst is None or d < worst[0]:
                        worst = (d, t, p, n, ra[metric], rb[metric])
        return wins, total, worst, margins

    # 1. GiGPO step term vs GRPO episode advantage on fully observed tasks, N >= 4
    full = [t for t in cfg.tasks if TASKS[t].fully_observed]
    w, tot, worst, margins = cmp_cells(full, cfg.policies, ns4, "gigpo[state]·A^S", "grpo")
    if tot:
        verdict = "holds" if w == tot else "does NOT hold everywhere"
        line = (f"- **GiGPO step term vs GRPO episode advantage (fully observed: {', '.join(full)}; N ≥ 4):** "
                f"prediction {verdict}: Pearson r of A^S exceeds GRPO's in {w}/{tot} (task, policy, N) cells, "
                f"mean margin {np.mean(margins):+.3f}.")
        if worst is not None and worst[0] <= 0:
            d, t, p, n, ra, rb = worst
            line += f" Worst cell: {t}, {p}, N={n}: A^S r = {ra:.3f} vs GRPO r = {rb:.3f}."
        lines.append(line)
    for t in cfg.tasks:
        if t in full:
            continue
        w, tot, _, margins = cmp_cells([t], cfg.policies, ns4, "gigpo[state]·A^S", "grpo")
        if tot:
            lines.append(f"- {t} (not fully observed, outside the prediction): A^S beats GRPO's episode advantage in "
                         f"{w}/{tot} cells at N ≥ 4 (mean Pearson margin {np.mean(margins):+.3f}).")
    for t in cfg.tasks:
        for p in cfg.policies:
            g = [S[(t, p, n, "grpo")]["nonzero"] for n in ns4 if (t, p, n, "grpo") in S]
            a = [S[(t, p, n, "gigpo[state]·A^S")]["nonzero"] for n in ns4 if (t, p, n, "gigpo[state]·A^S") in S]
            if g and a and np.mean(g) < 0.05:
                lines.append(f"- {t} / {p}: every rollout of a group gets the same return, so GRPO's advantage is 0 on "
                             f"{1 - np.mean(g):.0%} of steps (undiscounted R(τ) ignores how fast the goal is reached), "
                             f"while A^S (discounted R_t) is nonzero on {np.mean(a):.0%}.")
    # 2. aliased task: state_key vs obs_key anchors
    if "aliased" in cfg.tasks:
        w, tot, worst, margins = cmp_cells(["aliased"], cfg.policies, cfg.group_sizes, "gigpo[state]·A^S",
                                           "gigpo[obs]·A^S")
        w2, tot2, _, m2 = cmp_cells(["aliased"], cfg.policies, cfg.group_sizes, "gigpo[state]", "gigpo[obs]")
        if tot:
            verdict = "holds" if w == tot else "does NOT hold everywhere"
            line = (f"- **Aliased task, state_key vs obs_key anchors:** prediction {verdict}: the step term with "
                    f"state_key anchors correlates better in {w}/{tot} cells (mean Pearson margin "
                    f"{np.mean(margins):+.3f}); full GiGPO advantage: {w2}/{tot2} (mean margin {np.mean(m2):+.3f}).")
            if worst is not None and worst[0] <= 0:
                d, t, p, n, ra, rb = worst
                line += f" Worst cell: {p}, N={n}: state r = {ra:.3f} vs obs r = {rb:.3f}."
            nz = {k: np.mean([S[("aliased", p, n, k)]["nonzero"] for p in cfg.policies for n in cfg.group_sizes
                              if ("aliased", p, n, k) in S]) for k in ("gigpo[state]·A^S", "gigpo[obs]·A^S")}
            bs = {k: _nanmean([B[("aliased", p, n, k)]["bias"] for p in cfg.policies for n in cfg.group_sizes
                                 if ("aliased", p, n, k) in B]) for k in nz}
            line += (f" Why: obs_key anchors pool the with-key and without-key states, so more steps find a group "
                     f"(nonzero share {nz['gigpo[obs]·A^S']:.0%} vs {nz['gigpo[state]·A^S']:.0%} with state_key) "
                     f"at the price of bias (mean {bs['gigpo[obs]·A^S']:.4f} vs {bs['gigpo[state]·A^S']:.4f} in "
                     "reward units); correlation weighs both.")
            lines.append(line)
    # 3. history-window policies: HGPO bias vs GiGPO bias
    wins, tot, rows = 0, 0, []
    for t in cfg.tasks:
        for p in cfg.policies:
            if POLICIES[p].kind != "window":
                continue
            for n in cfg.group_sizes:
                h, g = B.get((t, p, n, "hgpo·A^H")), B.get((t, p, n, "gigpo[state]·A^S"))
                if h is None or g is None or not (math.isfinite(h["bias"]) and math.isfinite(g["bias"])):
                    continue
                tot += 1
                wins += h["bias"] < g["bias"]
                rows.append((t, p, n, h["bias"], g["bias"]))
    if tot:
        verdict = "holds" if wins == tot else "does NOT hold everywhere"
        ratio = np.mean([h / g for *_, h, g in rows if g > 0]) if any(g > 0 for *_, g in rows) else float("nan")
        line = (f"- **History-window policies, bias vs A^π (reward units):** prediction {verdict}: HGPO's A^H "
                f"(levels over state_key history, `hgpo·A^H`) has lower bias than GiGPO's A^S (state anchors) in "
                f"{wins}/{tot} (task, policy, N) cells; mean ratio bias(HGPO)/bias(GiGPO) = {ratio:.2f}. "
                "state_key is Markov (it already holds the cue and the carried key), so deeper state contexts can "
                "only help through the behaviour policy's window; the observation-keyed comparison is below.")
        bad = [r for r in rows if r[3] >= r[4]]
        if bad:
            t, p, n, h, g = max(bad, key=lambda r: r[3] - r[4])
            line += f" Largest exception: {t}, {p}, N={n}: {h:.4f} vs {g:.4f}."
        lines.append(line)
        wpols = [p for p in cfg.policies if POLICIES[p].kind == "window"]
        for t in cfg.tasks:
            spread = [r["v_history_spread"] for r in info if r["task"] == t and r["policy"] in wpols
                      and math.isfinite(r.get("v_history_spread", float("nan")))]
            lv, bk = [], []
            for k in range(cfg.history_depth + 1):
                vals = [B[(t, p, n, f"A_{k}")] for p in wpols for n in cfg.group_sizes if (t, p, n, f"A_{k}") in B]
                b = float(_nanmean([r["bias"] for r in vals]))
                cov = float(np.mean([r["coverage"] for r in vals] or [np.nan]))
                bk.append(b)
                lv.append(f"A_{k} {b:.4f} ({cov:.0%} of rows)")
            loo = []
            for k in range(cfg.history_depth + 1):
                vals = [B[(t, p, n, f"A_{k} loo")] for p in wpols for n in cfg.group_sizes
                        if (t, p, n, f"A_{k} loo") in B]
                loo.append(float(_nanmean([r["bias"] for r in vals])))
            if spread:
                trend, loo_trend = _trend(bk), _trend(loo)
                fin = [i for i in range(len(bk)) if math.isfinite(bk[i]) and math.isfinite(loo[i])]
                lines.append(
                    f"  - {t}: at a fixed (state, t) the true V^π varies with the history window by "
                    f"{np.mean(spread):.4f} (RMS over rows): the most a history-aware baseline could remove, "
                    f"{np.mean(spread) / bk[0]:.2f}× the bias A_0 (= GiGPO's A^S) already has. Per-level "
                    f"bias (mean over window policies and N): {', '.join(lv)} — it {trend} with depth. With the "
                    "step's own return taken out of the group mean (A_k·m/(m−1), a diagnostic), it "
                    f"{loo_trend}: " + ", ".join(f"A_{k} {b:.4f}" for k, b in enumerate(loo)) + ". "
                    + "Each level is scored on its own rows (those with a level-k group), so levels differ in "
                    "rows as well as in baseline. "
                    + ("So the deeper levels' extra bias is the 1/m weight of the step's own return in their "
                       "smaller groups, which pulls A_k toward 0." if trend == "rises" and loo_trend == "falls" else
                       "The own-return weight of smaller groups explains part of the deeper levels' extra bias, "
                       "not all of it." if trend == "rises" and fin
                       and loo[fin[-1]] - loo[fin[0]] < bk[fin[-1]] - bk[fin[0]] else
                       "The own-return weight of smaller groups does not explain the trend."))
    # 4. observation-keyed HGPO (contexts of what the agent sees) vs GiGPO on obs anchors
    lines += _obs_findings(cfg, S, B, info, cmp_cells)
    # 5. the ceiling and the sparsity of step terms
    ceil = [S[k]["pearson"] for k in S if k[3] == "gae(true V)" and math.isfinite(S[k]["pearson"])]
    if ceil:
        lines.append(f"- **Reference ceiling:** GAE with the exact V^π reaches mean Pearson r = {np.mean(ceil):.3f} "
                     "over all cells; the group estimators have no critic and must be read against it.")
    for n in cfg.group_sizes:
        nz = [S[k]["nonzero"] for k in S if k[3] == "gigpo[state]·A^S" and k[2] == n]
        if nz:
            lines.append(f"- GiGPO's A^S (state anchors) is nonzero on {np.mean(nz):.0%} of steps at N={n} "
                         "(mean over tasks and policies): singleton and all-equal anchor groups give no step signal.")
    return lines


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
    paths = []
    show = ("grpo", *STEP_TERMS, "gigpo[state]", "hgpo", "gae(true V)")
    for metric in ("pearson", "sign_acc"):
        panels: dict[str, dict[str, R.Line]] = {}
        for t in cfg.tasks:
            for p in cfg.policies:
                lines = {}
                for sig in show:
                    rs = [S.get((t, p, n, sig)) for n in cfg.group_sizes]
                    if all(r is not None for r in rs):
                        lines[sig] = (list(cfg.group_sizes), [r[metric] for r in rs], [r[f"{metric}_ci"] for r in rs])
                panels[f"{t} / {p}"] = lines
        paths.append(R.plot_panels(out / f"{cfg.name}_{metric}.png", panels, "group size N",
                                   METRIC_TITLES[metric], ncols=len(cfg.policies), logx=True,
                                   suptitle=f"{METRIC_TITLES[metric]} vs A^π (mean ± 95% CI over {cfg.seeds} seeds)"))
    return paths


def _bias_cell(r: dict[str, Any] | None, signal: str) -> str:
    """A bias table cell: the bias, and for a single HGPO level the share of rows it covers."""
    if r is None:
        return "–"
    if signal.startswith("A_"):
        return f"{R.fmt_num(r['bias'], 4)} ({r['coverage']:.0%})"
    return R.fmt_num(r["bias"], 4)


def write_report(cfg: CreditBenchConfig, res: BenchResult) -> dict[str, Path]:
    """Write the markdown report, the CSVs and the plots under ``cfg.out``; return their paths."""
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    summary = summarize(res.runs)
    S = _index(summary)
    paths = {
        "summary_csv": R.write_csv(out / f"{cfg.name}.csv", summary),
        "runs_csv": R.write_csv(out / f"{cfg.name}_runs.csv", res.runs),
        "bias_csv": R.write_csv(out / f"{cfg.name}_bias.csv", res.bias),
        "info_csv": R.write_csv(out / f"{cfg.name}_info.csv", res.info),
    }
    plots = _plots(cfg, S, out)
    paths.update({p.stem: p for p in plots})
    md: list[str] = [f"# Credit accuracy against the exact A^π{' (--quick)' if cfg.quick else ''}", ""]
    md += [R.machine_lines(cfg.command), "",
           f"Wall time {res.seconds:.1f} s. Sizes: {cfg.trajectories} rollouts per run (= {cfg.trajectories}/N "
           f"groups of N; group g plays one of {cfg.instances} task instances per family), {cfg.seeds} seeds, N ∈ {list(cfg.group_sizes)}, "
           f"γ = {cfg.gamma}, HGPO history depth K = {cfg.history_depth}.", ""]
    md += ["## What is measured", "",
           "Every signal below is computed on `batch.steps` of rollouts collected by `GroupedRolloutCollector` "
           "under a known behaviour policy, and compared row by row with the oracle's exact "
           "A^π(s_t, a_t) = Q^π − V^π (same γ; for history-window policies on the augmented state "
           "(s_t, window, t)). The comparison is kept clean by scoring separately:", "",
           "- **episode terms** (GRPO/RLOO/Dr.GRPO): one value per trajectory, broadcast to its steps;",
           "- **step terms** (GiGPO's A^S, HGPO's A^H) alone, without the episode term;",
           "- **full advantages** (A^E + A^S, A^E + A^H), what a trainer would use;",
           "- references: plain R_t (no baseline) and GAE with the exact V^π (a perfect critic: the ceiling).", "",
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
           "exactly here, so the row keeps its expected error and loses most of its variance); then per "
           "cell (task instance, augmented state, action) the mean error with its remaining sampling "
           f"noise removed, pooled over seeds, RMS over cells with ≥ {cfg.bias_min_count} rows; each HGPO "
           "level A_k is scored on the rows where its group exists.", ""]
    md += ["Signals:", ""] + [f"- `{k}` — {v}" for k, v in SIGNALS.items()] + [""]
    md += ["Policies:", ""] + [f"- `{p}` — {POLICIES[p].kind}-based, {POLICIES[p].strength}" for p in cfg.policies]
    md += ["", "Tasks:", ""] + [f"- `{t}` ({TASKS[t].env_id}) — {TASKS[t].kind}" for t in cfg.tasks] + [""]
    md += ["## Findings", ""] + findings(cfg, summary, res.bias, res.info) + [""]
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
    for metric, sigs in (("pearson", ("grpo", *STEP_TERMS, "gigpo[state]", "hgpo", "hgpo[obs]", "gae(true V)")),
                         ("sign_acc", ("grpo", *STEP_TERMS, "gigpo[state]", "gae(true V)"))):
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
    md += ["Level columns: bias of A_k on the rows where level k has a group of ≥ 2 (share of rows).", "",
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
    md += ["Raw data: " + ", ".join(f"`{paths[k].name}`" for k in ("summary_csv", "runs_csv", "bias_csv", "info_csv")), ""]
    md_path = out / f"{cfg.name}.md"
    md_path.write_text("\n".join(md))
    paths["markdown"] = md_path
    return paths


def print_summary(cfg: CreditBenchConfig, res: BenchResult, file=sys.stdout) -> None:
    """A short table: mean Pearson r per task and signal at each N (averaged over policies)."""
    S = summarize(res.runs)
    sigs = ("grpo", *STEP_TERMS, "gae(true V)")
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
    p.add_argument("--out", type=Path, default=Path("benchmarks"), help="output folder (default benchmarks/)")
    p.add_argument("--name", default="credit_accuracy", help="file name stem of the outputs")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def config_from_args(args: argparse.Namespace, argv: Sequence[str]) -> CreditBenchConfig:
    kw: dict[str, Any] = {"out": args.out, "name": args.name, "progress": not args.no_progress,
                          "command": "agentgym-credit bench credit " + " ".join(argv)}
    for attr, key in (("seeds", "seeds"), ("trajectories", "trajectories"), ("instances", "instances"), ("depth", "history_depth"),
                      ("threshold", "threshold")):
        if getattr(args, attr) is not None:
            kw[key] = getattr(args, attr)
    if args.tasks:
        kw["tasks"] = tuple(args.tasks)
    if args.policies:
        kw["policies"] = tuple(args.policies)
    if args.group_sizes:
        kw["group_sizes"] = tuple(args.group_sizes)
    return CreditBenchConfig.quick_config(**kw) if args.quick else CreditBenchConfig(**kw)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``agentgym-credit bench credit``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    cfg = config_from_args(args, argv)
    try:
        cfg.validate()
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
    "TASKS",
    "POLICIES",
    "SIGNALS",
    "TaskSpec",
    "PolicySpec",
    "ProductPolicy",
    "CreditBenchConfig",
    "BenchResult",
    "GroundTruth",
    "Truth",
    "collect_run",
    "true_advantages",
    "estimator_signals",
    "bias_signals",
    "level_term",
    "obs_history_keys",
    "obs_keyed",
    "mixed_share",
    "run_benchmark",
    "summarize",
    "findings",
    "write_report",
    "print_summary",
    "build_parser",
    "main",
]
