"""``agentgym-credit bench grouping``: GiGPO anchors when exact keys do not repeat, against the exact A^π.

For each task family (aliased, cue, household) × text perturbation (off / on,
:class:`~agentgym_credit.wrappers.perturbation.TextPerturbation`) × group size N × seed, the benchmark
collects grouped rollouts under one behaviour policy with the real collector (the machinery of
``bench credit``: :mod:`agentgym_credit.bench.exact.credit_run`), builds every anchor of :data:`ANCHORS` on
the same rows and scores GiGPO's step term A^S on each against the oracle's A^π:

- ``grouped``: share of rows in an anchor group of >= 2 rows;
- ``mixed``: share of grouped rows whose group mixes true states (``state_key``) — the issue's
  "purity" (0 = pure); ``mixed_value``: share whose group mixes rows of different V^π / Q^π
  (different policy-equivalence classes: what makes a baseline wrong);
- ``nonzero``: share of rows with a nonzero A^S; ``pearson``: Pearson r of A^S (mean/std norm)
  with A^π over all rows, per run (mean and 95% t-interval over seeds);
- ``bias``: cluster-robust bias (:func:`~agentgym_credit.bench.stats.metrics.cluster_robust_bias`;
  clusters = rollout groups, cells = (instance, augmented state, action, t)) of A^S in reward
  units (F_norm = 1) on the grouped rows, pooled over seeds, with the return noise R_t − Q^π
  removed as in ``bench credit``.

Perturbation does not change the rollouts (the policy acts on the true state with its own seeded
generator), only the texts: the ``state_key`` and oracle rows are the same with and without it.
Outputs (``--out``; default ``benchmarks/exact/`` for the full run from the repository root, else
``./agc-bench/``): ``grouping.md`` (tables, predictions and their verdicts), ``grouping.csv``
(summary), ``grouping_runs.csv`` (one row per run and anchor), ``grouping_pearson.png``.

What lives here: :data:`ANCHORS`, :data:`PREDICTIONS`, :class:`GroupingBenchConfig`,
:func:`collect`, :func:`stationary_values`, :func:`oracle_keys`, :func:`anchor_table`, :func:`group_purity`,
:func:`run_benchmark`, :func:`summarize`, :func:`write_report`, :func:`main`.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_credit.bench.exact.credit import check_out, default_out
from agentgym_credit.bench.exact.credit_run import (
    POLICIES,
    TASKS,
    GroundTruth,
    PolicySpec,
    _PerTrajectoryPolicy,
    collect_run,
    true_advantages,
)
from agentgym_credit.bench.exact.grouping_compare import comparisons
from agentgym_credit.bench.stats import metrics as M
from agentgym_credit.bench.stats import report as R
from agentgym_credit.credit import gigpo_step, step_returns
from agentgym_credit.credit.anchor_groups import anchor_keys
from agentgym_credit.credit.embedding_anchors import bag_of_words_embedding
from agentgym_credit.credit.equivalence import policy_equivalence_keys
from agentgym_credit.credit.grouping import pair_groups
from agentgym_credit.credit.oracle import PolicyValues, evaluate_policy
from agentgym_credit.credit.policies import PolicyBase
from agentgym_credit.credit.steps import StepArrays
from agentgym_credit.credit.windows import BehaviourPolicy, Window, episode_windows
from agentgym_credit.envs.gridworld.model import TabularModel
from agentgym_credit.wrappers.collector import GroupedRolloutCollector
from agentgym_credit.wrappers.perturbation import PerturbedEnvFactory
from agentgym_credit.wrappers.rollout_batch import RolloutBatch

ORACLE_DECIMALS = 6
"""Decimals to which the oracle anchor compares V^π and Q^π (exact DP values, rounding noise aside)."""


@dataclass(frozen=True)
class AnchorSpec:
    """One anchor of the comparison: GiGPO options on steps carrying ``obs_text``/``embedding``/``anchor_key``."""

    name: str
    what: str
    options: tuple[tuple[str, Any], ...]
    embedding_k: int = 0  # > 0: steps.embedding = bag of words of the last k observations


ANCHORS: dict[str, AnchorSpec] = {a.name: a for a in (
    AnchorSpec("state_key", "true environment state (exact key; the best case of a real key)",
               (("anchor", "state_key"),)),
    AnchorSpec("obs_key", "exact observation text (the reference implementation's default)", (("anchor", "obs_key"),)),
    AnchorSpec("sim≥0.95", "near-duplicate text: indel similarity ≥ 0.95, connected components",
               (("anchor", "similarity"), ("threshold", 0.95))),
    AnchorSpec("sim≥0.8", "near-duplicate text: indel similarity ≥ 0.8, connected components",
               (("anchor", "similarity"), ("threshold", 0.8))),
    AnchorSpec("verl-agent", "verl-agent's rule: difflib ratio ≥ 0.95, leader clustering",
               (("anchor", "similarity"), ("threshold", 0.95), ("sim_metric", "difflib"), ("linkage", "leader"))),
    AnchorSpec("bow1≥0.9", "embedding: bag of words of the current observation, cosine ≥ 0.9, components",
               (("anchor", "embedding"), ("threshold", 0.9)), embedding_k=1),
    AnchorSpec("bow2≥0.9", "embedding: bag of words of the last 2 observations, cosine ≥ 0.9, components",
               (("anchor", "embedding"), ("threshold", 0.9)), embedding_k=2),
    AnchorSpec("oracle", "upper bound: policy-equivalent states, same V^π and Q^π by action (stationary "
               "values, see oracle_keys)",
               (("anchor", "anchor_key"),)),
)}
"""The anchors compared, by name (see each ``what``)."""

GROUPING_METRICS = ("grouped", "mixed", "mixed_value", "nonzero", "pearson")


# -- predictions, written before the first full run and checked by it -----------------------------

def _cells(S: dict, anchor: str, perturb: bool, metric: str) -> dict[tuple[str, int], float]:
    return {(k[0], k[2]): v[metric] for k, v in S.items() if k[3] == anchor and k[1] == perturb}


def _p_obs_collapse(S):
    a, b = _cells(S, "obs_key", False, "nonzero"), _cells(S, "obs_key", True, "nonzero")
    bad = [f"{t} N={n}: {b[(t, n)]:.2f} vs {a[(t, n)]:.2f}" for t, n in a if b[(t, n)] > 0.3 * a[(t, n)]]
    return not bad, "; ".join(bad) or "every cell below 30%"


def _p_sim_collapse(S):
    a, b = _cells(S, "sim≥0.95", False, "nonzero"), _cells(S, "sim≥0.95", True, "nonzero")
    bad = [f"{t} N={n}: {b[(t, n)]:.2f} vs {a[(t, n)]:.2f}" for t, n in a if b[(t, n)] > 0.5 * a[(t, n)]]
    return not bad, "; ".join(bad) or "every cell below half"


def _p_bow_keeps(S):
    a, b = _cells(S, "bow1≥0.9", False, "nonzero"), _cells(S, "bow1≥0.9", True, "nonzero")
    bad = [f"{t} N={n}: {b[(t, n)]:.2f} vs {a[(t, n)]:.2f}" for t, n in a if b[(t, n)] < 0.7 * a[(t, n)]]
    return not bad, "; ".join(bad) or "every cell at 70% or more"


def _p_sim_mixes_aliased(S):
    a, b = _cells(S, "sim≥0.95", False, "mixed"), _cells(S, "obs_key", False, "mixed")
    bad = [f"N={n}: {a[(t, n)]:.2f} vs {b[(t, n)]:.2f}" for t, n in a if t == "aliased" and not a[(t, n)] > b[(t, n)]]
    return not bad, "; ".join(bad) or "higher in every N"


def _p_oracle_best(S):
    bad = []
    for p in (False, True):
        o, s = _cells(S, "oracle", p, "pearson"), _cells(S, "state_key", p, "pearson")
        bad += [f"{t} N={n}{' pert' if p else ''}: {o[k]:.3f} < {s[k]:.3f}" for k in o
                for t, n in [k] if o[k] < s[k] - 1e-9]
    return not bad, "; ".join(bad) or "oracle ≥ state_key in every cell"


def _p_state_unchanged(S):
    a, b = _cells(S, "state_key", False, "pearson"), _cells(S, "state_key", True, "pearson")
    bad = [f"{t} N={n}" for t, n in a if abs(a[(t, n)] - b[(t, n)]) > 1e-12]
    return not bad, "; ".join(bad) or "identical in every cell"


def _p_rises_with_n(S):
    bad = []
    for (anchor, p) in {(k[3], k[1]) for k in S}:
        c = _cells(S, anchor, p, "pearson")
        for t in {k[0] for k in c}:
            ns = sorted(n for tt, n in c if tt == t)
            if len(ns) >= 2 and not c[(t, ns[-1])] > c[(t, ns[0])]:
                bad.append(f"{anchor}/{t}{' pert' if p else ''}")
    return not bad, "; ".join(sorted(bad)) or "rises in every (anchor, task)"


PREDICTIONS: tuple[tuple[str, Callable[[dict], tuple[bool, str]]], ...] = (
    ("With perturbation, obs_key's nonzero share falls below 30% of its unperturbed value in every (task, N): "
     "exact texts stop repeating.", _p_obs_collapse),
    ("With perturbation, sim≥0.95's nonzero share falls below half of its unperturbed value in every (task, N): "
     "reordered sentences are far apart in edit distance.", _p_sim_collapse),
    ("With perturbation, bow1≥0.9 keeps at least 70% of its unperturbed nonzero share in every (task, N): "
     "a bag of words ignores order.", _p_bow_keeps),
    ("Without perturbation, sim≥0.95 mixes true states more than obs_key on aliased at every N "
     "(neighbouring cells' texts differ by one digit).", _p_sim_mixes_aliased),
    ("The oracle anchor's Pearson r is at least state_key's in every cell.", _p_oracle_best),
    ("state_key's numbers are identical with and without perturbation (same rollouts).", _p_state_unchanged),
    ("Every anchor's Pearson r is higher at the largest N than at the smallest, on every task.", _p_rises_with_n),
)
"""(statement, check(summary index) -> (held, evidence)); written before the first full run."""


# -- collection, truth and anchors -----------------------------------------------------------------


def collect(gt: GroundTruth, spec: PolicySpec, n: int, groups: int, seed: int, perturb: bool,
            instances: int | None) -> RolloutBatch:
    """:func:`~agentgym_credit.bench.exact.credit_run.collect_run`, with the texts perturbed when asked.

    The perturbed run uses the same tasks, reset seeds and policy seeds, so the same rollouts.
    """
    if not perturb:
        return collect_run(gt, spec, n, groups, seed, 1, instances)
    horizon = max(int(gt.model(t).horizon or 100) for t in gt.task_ids(1, 0))
    factory = PerturbedEnvFactory(gt.task.env_id, seed=seed, env_kwargs=dict(gt.task.env_kwargs))
    col = GroupedRolloutCollector(factory, group_size=n, max_steps=horizon, history_depth=1, progress=False, seed=seed)
    policy = _PerTrajectoryPolicy(lambda tid: (gt.policy(spec, tid), gt.model(tid)), seed)
    try:
        batch = col.collect(policy, tasks=gt.task_ids(groups, offset=seed * groups, pool=instances),
                            seeds=[seed * 100_003 + g for g in range(groups)])
    finally:
        col.close()
    if batch.traj.failed.any():
        raise RuntimeError(batch.failure_summary())
    return batch


class _SameDecisions(PolicyBase):
    """The behaviour policy as it acts on ``model`` at t = 0, asked about another model of the same states.

    The benchmark's policies are stationary (they ask their parts at t = 0, :class:`ProductPolicy`), so
    this is the very policy that collected the rollouts, evaluated on the model without its horizon.
    """

    def __init__(self, policy: BehaviourPolicy, model: TabularModel):
        self.policy, self.model = policy, model
        self.window = int(getattr(policy, "window", 0))

    def probs(self, model: TabularModel, s: int, window: Window, t: int | None) -> np.ndarray:
        return self.policy.probs(self.model, s, window, None if self.model.horizon is None else 0)


def stationary_values(gt: GroundTruth, spec: PolicySpec, task_id: str,
                      cache: dict[tuple[str, str], PolicyValues]) -> PolicyValues:
    """V^π, Q^π of the behaviour policy on the task's model without its horizon (cached per task and policy)."""
    key = (spec.name, task_id)
    if key not in cache:
        model = gt.model(task_id)
        cache[key] = evaluate_policy(replace(model, horizon=None), _SameDecisions(gt.policy(spec, task_id), model),
                                     gamma=gt.gamma)
    return cache[key]


def oracle_keys(batch: RolloutBatch, gt: GroundTruth, spec: PolicySpec,
                cache: dict[tuple[str, str], PolicyValues] | None = None) -> np.ndarray:
    """:func:`~agentgym_credit.credit.equivalence.policy_equivalence_keys` of every row of ``batch``.

    On the stationary values (:func:`stationary_values`): at the task's finite horizon V^π also
    depends on t, in the last digits far from the horizon, and equality at each t would split every
    state by time; without the horizon, two rows are equivalent when their (augmented) states are,
    whatever the step.
    """
    cache = {} if cache is None else cache
    out = np.empty(len(batch), dtype=np.uint64)
    starts = np.flatnonzero(np.diff(batch.traj_id, prepend=-1) != 0)  # batch rows come in (traj_id, t) order
    for rows in np.split(np.arange(len(batch)), starts[1:]):
        task_id = batch.task_id[rows[0]]
        model, vals = gt.model(task_id), stationary_values(gt, spec, task_id, cache)
        s = batch.state_index[rows]
        a = [model.action_index(int(si), batch.action[r]) for si, r in zip(s, rows)]
        wins = episode_windows(s.tolist(), a, vals.window_size)
        out[rows] = policy_equivalence_keys(vals, s, None, wins, decimals=ORACLE_DECIMALS)
    return out


def anchor_table(batch: RolloutBatch, steps: StepArrays, okeys: np.ndarray, anchors: Sequence[str]
                 ) -> dict[str, StepArrays]:
    """Per anchor, ``steps`` with the columns its GiGPO options read (rows = ``batch``'s, no failures)."""
    base = replace(steps, obs_text=list(batch.observation), anchor_key=okeys)
    out = {}
    for name in anchors:
        k = ANCHORS[name].embedding_k
        out[name] = base if k == 0 else replace(
            base, embedding=bag_of_words_embedding(batch.observation, batch.traj_id, batch.t, k=k))
    return out


def group_purity(group_id: np.ndarray, key: np.ndarray, label: np.ndarray) -> tuple[float, float]:
    """``(grouped, mixed)``: share of rows in (group_id, key) groups of >= 2, and share of those whose
    group holds more than one distinct ``label`` (NaN without a group)."""
    g = pair_groups(group_id, key)
    if g.num_groups == 0:
        return 0.0, float("nan")
    pairs = np.unique(np.stack([g.member_code.astype(np.uint64), np.asarray(label, np.uint64)[g.members]], 1), axis=0)
    labels_per_group = np.bincount(pairs[:, 0].astype(np.int64), minlength=g.num_groups)
    return len(g.members) / len(group_id), float(np.mean(labels_per_group[g.member_code] > 1))


# -- the benchmark ---------------------------------------------------------------------------------


@dataclass
class GroupingBenchConfig:
    """What to run; ``trajectories`` rollouts per run are split into ``trajectories // N`` groups."""

    tasks: tuple[str, ...] = ("aliased", "cue", "household")
    policy: str = "softQ*(T=0.3)"
    anchors: tuple[str, ...] = tuple(ANCHORS)
    group_sizes: tuple[int, ...] = (2, 4, 8, 16)
    perturb: tuple[bool, ...] = (False, True)
    seeds: int = 4
    trajectories: int = 128
    instances: int = 6
    gamma: float = 0.95
    bias_min_count: int = 5
    out: Path = Path("agc-bench")
    name: str = "grouping"
    progress: bool = True
    command: str = "agentgym-credit bench grouping"
    quick: bool = False

    def validate(self) -> None:
        R.check_known("task", self.tasks, sorted(TASKS))
        R.check_known("policy", [self.policy], sorted(POLICIES))
        R.check_known("anchor", self.anchors, list(ANCHORS))
        if not self.group_sizes or min(self.group_sizes) < 2 or self.trajectories < max(self.group_sizes):
            raise ValueError(f"group sizes must be >= 2 and <= trajectories, got {self.group_sizes}")
        if self.seeds < 1 or self.instances < 1:
            raise ValueError("seeds and instances must be >= 1")


@dataclass
class GroupingResult:
    """One row per (run, anchor) and one per (task, perturb, N, anchor) with the pooled bias."""

    runs: list[dict[str, Any]] = field(default_factory=list)
    bias: list[dict[str, Any]] = field(default_factory=list)
    parts: dict[tuple, M.BiasParts] = field(default_factory=dict)  # (task, perturb, N, anchor) -> pooled-bias parts
    seconds: float = 0.0


def run_benchmark(cfg: GroupingBenchConfig) -> GroupingResult:
    """Every (task, perturb, N, seed): collect once, score every anchor (module docstring)."""
    cfg.validate()
    res = GroupingResult()
    t0 = time.perf_counter()
    spec = POLICIES[cfg.policy]
    combos = [(t, p, n) for t in cfg.tasks for p in cfg.perturb for n in cfg.group_sizes]
    bar = R.progress(range(len(combos) * cfg.seeds), total=len(combos) * cfg.seeds, desc="bench grouping",
                     enable=cfg.progress)
    truths = {t: GroundTruth(TASKS[t], cfg.gamma) for t in cfg.tasks}
    stationary: dict[str, dict] = {t: {} for t in cfg.tasks}
    for task, perturb, n in combos:
        gt = truths[task]
        pooled: dict[str, list[np.ndarray]] = defaultdict(list)
        cell_ids: dict[tuple, int] = {}
        for seed in range(cfg.seeds):
            next(bar, None)
            batch = collect(gt, spec, n, cfg.trajectories // n, seed, perturb, cfg.instances)
            steps = batch.steps
            truth = true_advantages(batch, gt, spec, cell_ids)
            okeys = oracle_keys(batch, gt, spec, stationary[task])
            noise = np.asarray(step_returns(steps, cfg.gamma)) - truth.q
            pooled["true"].append(truth.adv)
            pooled["cell"].append(truth.cell)
            pooled["cluster"].append(np.int64(seed) * (1 << 32) + steps.group_id)
            for name, st in anchor_table(batch, steps, okeys, cfg.anchors).items():
                t1 = time.perf_counter()
                keys = anchor_keys(st, **dict(ANCHORS[name].options))
                secs = time.perf_counter() - t1
                keyed = replace(steps, anchor_key=keys)  # GiGPO on these keys = GiGPO on the named anchor
                a_s = gigpo_step(keyed, gamma=cfg.gamma, anchor="anchor_key")
                grouped, mixed = group_purity(steps.group_id, keys, steps.state_key)
                _, mixed_value = group_purity(steps.group_id, keys, okeys)
                res.runs.append({"task": task, "perturb": perturb, "N": n, "seed": seed, "anchor": name,
                                 "rows": steps.n, "grouped": grouped, "mixed": mixed, "mixed_value": mixed_value,
                                 "nonzero": M.nonzero_fraction(a_s), "pearson": M.pearson(a_s, truth.adv),
                                 "seconds": secs})
                raw = gigpo_step(keyed, gamma=cfg.gamma, anchor="anchor_key", step_norm="mean")
                pooled[name].append(raw - noise)
                pooled[f"{name}:grouped"].append(pair_groups(steps.group_id, keys).code >= 0)
        true_all, cell_all, clu_all = (np.concatenate(pooled[k]) for k in ("true", "cell", "cluster"))
        for name in cfg.anchors:
            est, mask = np.concatenate(pooled[name]), np.concatenate(pooled[f"{name}:grouped"])
            parts = M.bias_parts(est[mask] - true_all[mask], clu_all[mask], cell_all[mask], cfg.bias_min_count)
            res.parts[(task, perturb, n, name)] = parts
            bias, half = M.pooled_bias([parts]) if mask.any() else (float("nan"),) * 2
            res.bias.append({"task": task, "perturb": perturb, "N": n, "anchor": name, "bias": bias,
                             "bias_ci": half, "rows": int(mask.sum())})
    for _ in bar:
        pass
    res.seconds = time.perf_counter() - t0
    return res


def summarize(res: GroupingResult) -> list[dict[str, Any]]:
    """Mean and 95% t-interval over seeds of every metric, with the pooled bias, per cell and anchor."""
    groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for r in res.runs:
        groups[(r["task"], r["perturb"], int(r["N"]), r["anchor"])].append(r)
    bias = {(b["task"], b["perturb"], int(b["N"]), b["anchor"]): b for b in res.bias}
    out = []
    for key, rows in groups.items():
        row: dict[str, Any] = dict(zip(("task", "perturb", "N", "anchor"), key))
        for m in GROUPING_METRICS:
            mean, half, _ = M.mean_ci(np.array([r[m] for r in rows], dtype=float))
            row[m], row[f"{m}_ci"] = mean, half
        b = bias.get(key, {})
        row["bias"], row["bias_ci"] = b.get("bias", float("nan")), b.get("bias_ci", float("nan"))
        row["seconds"] = float(np.mean([r["seconds"] for r in rows]))
        out.append(row)
    return out


def _index(summary: Sequence[dict[str, Any]]) -> dict[tuple, dict[str, Any]]:
    return {(r["task"], bool(r["perturb"]), int(r["N"]), r["anchor"]): r for r in summary}


# -- the report ------------------------------------------------------------------------------------


def _table(cfg: GroupingBenchConfig, S: dict, task: str, perturb: bool) -> str:
    rows = []
    for n in cfg.group_sizes:
        for a in cfg.anchors:
            r = S.get((task, perturb, n, a))
            if r is None:
                continue
            rows.append([str(n), a, R.fmt_num(r["grouped"], 2), _pct(r["mixed"]), _pct(r["mixed_value"]),
                         R.fmt_num(r["nonzero"], 2), R.fmt_ci(r["pearson"], r["pearson_ci"], 3),
                         R.fmt_ci(r["bias"], r["bias_ci"], 3), f"{1e3 * r['seconds']:.1f}"])
    return R.markdown_table(["N", "anchor", "grouped", "mixed states", "mixed values", "nonzero", "Pearson r",
                             "bias (grouped rows)", "grouping ms"], rows, align="ll" + "r" * 7)


def _pct(x: float) -> str:
    return "–" if x is None or not np.isfinite(x) else f"{x:.0%}"


def _plot(cfg: GroupingBenchConfig, S: dict, path: Path) -> Path | None:
    from agentgym_credit.plotting import try_plot_panels

    panels = {}
    for t in cfg.tasks:
        for p in cfg.perturb:
            lines = {}
            for a in cfg.anchors:
                rs = [S.get((t, p, n, a)) for n in cfg.group_sizes]
                if all(r is not None for r in rs):
                    lines[a] = (list(cfg.group_sizes), [r["pearson"] for r in rs], [r["pearson_ci"] for r in rs])
            panels[f"{t}{' + perturbed text' if p else ''}"] = lines
    return try_plot_panels(path, panels, xlabel="group size N", ylabel="Pearson r of A^S vs A^π", ncols=len(cfg.perturb),
                           logx=True, suptitle=f"GiGPO step term by anchor (mean ± 95% CI over {cfg.seeds} seeds)")


def write_report(cfg: GroupingBenchConfig, res: GroupingResult, load: str = "unknown") -> dict[str, Path]:
    """Write ``{name}.md``, ``{name}.csv``, ``{name}_runs.csv`` and ``{name}_pearson.png`` under ``cfg.out``."""
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    summary = summarize(res)
    S = _index(summary)
    paths = {"summary_csv": R.write_csv(out / f"{cfg.name}.csv", summary),
             "runs_csv": R.write_csv(out / f"{cfg.name}_runs.csv", res.runs)}
    png = _plot(cfg, S, out / f"{cfg.name}_pearson.png")
    if png is not None:
        paths["plot"] = png
    md = [f"# Grouping beyond exact keys: GiGPO anchors against the exact A^π{' (--quick)' if cfg.quick else ''}", "",
          R.machine_lines(cfg.command), "",
          f"Machine load (1-minute load average): {load}. Wall time {res.seconds:.1f} s. Policy `{cfg.policy}`; "
          f"{cfg.trajectories} rollouts per run (= {cfg.trajectories}/N groups of N, task instances cycling over "
          f"{cfg.instances}), {cfg.seeds} seeds, γ = {cfg.gamma}.", "",
          "## What is measured", "",
          "GiGPO's step term A^S = (R_t − mean over the anchor group) / std on the same rows under every anchor, "
          "against the oracle's exact A^π. `grouped`: share of rows in an anchor group of ≥ 2 rows. "
          "`mixed states`: share of grouped rows whose group holds more than one true state (`state_key`; "
          "0% = pure). `mixed values`: share whose group holds rows of different V^π/Q^π (the oracle's "
          "policy-equivalence classes; what biases the baseline). `nonzero`: share of rows with A^S ≠ 0. "
          "`Pearson r`: per run, mean ± 95% t-interval over seeds. `bias`: cluster-robust bias of A^S in reward "
          "units (F_norm = 1) on the grouped rows, pooled over seeds (clusters = rollout groups, cells = "
          "(instance, augmented state, action, t)), ± its 95% jackknife half-width; return noise R_t − Q^π "
          "removed as in `bench credit`. `grouping ms`: time to build the anchor keys of one run.", "",
          "Text perturbation (`TextPerturbation`): each known phrase of an observation is paraphrased with "
          "probability 0.7 and its sentences are shuffled with probability 0.5, on every step; the state, "
          "actions and rewards are untouched, and the rollouts are the same as without it.", "",
          "Anchors:", ""] + [f"- `{a}` — {ANCHORS[a].what}" for a in cfg.anchors] + [""]
    md += ["## Predictions (written before the first full run) and what the run says", ""]
    for text, check in PREDICTIONS:
        try:
            held, ev = check(S)
            verdict = "**held**" if held else "**failed**"
        except (KeyError, ZeroDivisionError) as e:  # a subset run lacks the cells a prediction needs
            verdict, ev = "not checked", f"cells missing in this run ({e})"
        md.append(f"- {text} — {verdict} ({ev})")
    md += ["", "## Comparisons with state_key (Holm-corrected tallies, pooled bias)", ""] + comparisons(cfg, res)
    md += ["", f"![pearson]({cfg.name}_pearson.png)", ""]
    for t in cfg.tasks:
        for p in cfg.perturb:
            md += [f"## {t}{', perturbed text' if p else ''}", "", _table(cfg, S, t, p), ""]
    md += ["Raw data: " + ", ".join(f"`{paths[k].name}`" for k in ("summary_csv", "runs_csv")), ""]
    paths["markdown"] = R.write_atomic(out / f"{cfg.name}.md", "\n".join(md))
    return paths


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="agentgym-credit bench grouping",
                                description="GiGPO anchors (exact keys, similarity, embedding, oracle) vs the exact A^π.")
    p.add_argument("--quick", action="store_true", help="CI sizes: N 2 and 8, 2 seeds, 32 rollouts per run")
    p.add_argument("--seeds", type=int, default=None, help="seeds per cell (default 4)")
    p.add_argument("--trajectories", type=int, default=None, help="rollouts per run (default 128)")
    p.add_argument("--tasks", nargs="+", default=None, choices=sorted(TASKS), help="task families")
    p.add_argument("--policy", default=None, choices=list(POLICIES), help="behaviour policy (default softQ*(T=0.3))")
    p.add_argument("--anchors", nargs="+", default=None, choices=list(ANCHORS), help="anchors to compare")
    p.add_argument("--group-sizes", nargs="+", type=int, default=None, help="N values (default 2 4 8 16)")
    p.add_argument("--out", type=Path, default=None,
                   help="output folder (default: benchmarks/exact/ for a full run from the repository root, else ./agc-bench/)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``agentgym-credit bench grouping``."""
    import os

    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    kw: dict[str, Any] = {"progress": not args.no_progress, "quick": args.quick,
                          "command": ("agentgym-credit bench grouping " + " ".join(argv)).strip(),
                          "out": args.out if args.out is not None else default_out(args.quick)}
    if args.quick:
        kw.update(group_sizes=(2, 8), seeds=2, trajectories=32, instances=2)
    kw |= R.given_options(args, ("seeds", "trajectories", "policy"), ("tasks", "anchors", "group_sizes"))
    cfg = GroupingBenchConfig(**kw)
    try:
        cfg.validate()
        check_out(cfg)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    before = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    res = run_benchmark(cfg)
    after = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    paths = write_report(cfg, res, load=f"{before:.1f} before, {after:.1f} after, {os.cpu_count()} CPUs")
    print(f"wrote {', '.join(str(p) for p in paths.values())} in {res.seconds:.1f} s")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())


__all__ = [
    "ANCHORS",
    "AnchorSpec",
    "PREDICTIONS",
    "GroupingBenchConfig",
    "GroupingResult",
    "collect",
    "stationary_values",
    "oracle_keys",
    "anchor_table",
    "group_purity",
    "run_benchmark",
    "summarize",
    "write_report",
    "build_parser",
    "main",
]
