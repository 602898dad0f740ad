"""``agentgym-credit bench credit_real``: every estimator against Monte-Carlo A^π on ALFWorld and WebShop.

Per (env, behaviour policy): ``groups`` groups of N = max(``sizes``) rollouts are collected with
:class:`~agentgym_credit.truth.policies.RolloutPolicy` (the policy's distribution recorded with every
step); the smaller N are the first copies of each group (copies are i.i.d. given the group's seed, so
copies 0..N−1 are an N-rollout collect). ``scored`` rows of the smallest N's copies get the
Monte-Carlo truth (:func:`agentgym_credit.truth.montecarlo.estimate`, continuations on the collector's
backend); every estimator at every N is then scored on those same rows. The tree estimator gets
its own collect per N (the same roots, via the same seeds, plus ``N/2`` trajectories' worth of
branches: :class:`~agentgym_credit.wrappers.branching.BranchConfig`), so it spends 1.5x the env steps
(run on the sync backend: the seeding makes every backend give the same rollouts).

Metrics per (env, policy, N, estimator), each with a 95% group-bootstrap interval (clusters = rollout
groups): Pearson r with Â^π, the same r disattenuated for the truth's Monte-Carlo noise
(r / sqrt(reliability)), sign accuracy on the rows whose truth interval excludes 0, and the bias
E[est_raw − (R_t − V̂^π)] in reward units (``est_raw``: the estimator without std normalization; for
a step-level estimator it is V̂^π − b̂, how far its baseline sits below the true value). Descriptive
figures per (env, policy, N): share of rows in non-singleton anchor groups (state_key, obs_key),
revisit rate, aliasing rate; per (env, policy): truth reliability, and how often the Monte-Carlo best
action differs between two rows at one state reached with different histories, or at one observation
hiding different states (:func:`best_action_pairs`, the policy's two most likely actions evaluated at
both rows of each pair).

Paired comparisons (:data:`PAIRS`, every cell and N) carry a bootstrap p-value and, over the whole
run's table, Holm's correction (:func:`holm_family`); the uncorrected verdict is kept beside it.

:func:`run` does it all; :mod:`agentgym_credit.bench.montecarlo.credit_real_report` writes the CSV, plots and
``benchmarks/montecarlo/credit_real.md``; :func:`synthetic_coverage` is the check against the exact oracle.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from agentgym_credit.bench.exact.credit_signals import mixed_share, obs_keyed
from agentgym_credit.bench.montecarlo.config import ENVS, POLICIES, EnvSpec, RealConfig, dev_available
from agentgym_credit.bench.montecarlo.paired import (
    _BOOT,
    PAIRS,
    holm_family,
    holm_robust,
    paired_difference,
    robustness,
)
from agentgym_credit.credit import ESTIMATORS, advantages, estimator_options, gigpo_step, step_returns
from agentgym_credit.credit.steps import StepArrays
from agentgym_credit.truth.montecarlo import MCConfig, StepTruth, action_values, estimate, require_snapshots
from agentgym_credit.truth.policies import RolloutPolicy, SnapshotPolicy
from agentgym_credit.wrappers.branching import BranchConfig
from agentgym_credit.wrappers.collector import GroupedRolloutCollector


def estimator_table(gamma: float) -> dict[str, tuple[Callable[[StepArrays], np.ndarray], Callable[[StepArrays], np.ndarray]]]:
    """Name -> (default advantages, raw advantages in reward units) for every compared estimator.

    Includes the graph estimators (``graph``, ``graphgpo``, ``gagpo``) when they are registered.
    """
    sim = {"anchor": "similarity", "threshold": 0.95, "sim_metric": "difflib", "linkage": "leader"}

    def reg(name: str, **kw: Any):
        opts = estimator_options(name)
        kw = {k: v for k, v in {"gamma": gamma, **kw}.items() if k in opts}
        raw = dict(kw)
        for k in ("norm", "step_norm", "episode_norm"):
            if k in opts:
                raw[k] = "mean"
        return (lambda s: advantages(name, s, **kw)), (lambda s: advantages(name, s, **raw))

    def step_term(anchor: str):
        return (lambda s: gigpo_step(s, gamma=gamma, anchor=anchor)), \
               (lambda s: gigpo_step(s, gamma=gamma, anchor=anchor, step_norm="mean"))

    def hstep(obs: bool):
        f = (lambda s: obs_keyed(s)) if obs else (lambda s: s)
        return (lambda s: advantages("hgpo", f(s), gamma=gamma)), \
               (lambda s: advantages("hgpo", f(s), gamma=gamma, norm="mean"))

    out = {
        "grpo": reg("grpo"),
        "rloo": reg("rloo"),
        "gigpo[state]": reg("gigpo", anchor="state_key"),
        "gigpo[obs]": reg("gigpo", anchor="obs_key"),
        "gigpo[sim≥0.95 difflib]": reg("gigpo", **sim),
        "gigpo[state]·A^S": step_term("state_key"),
        "gigpo[obs]·A^S": step_term("obs_key"),
        "hgpo": reg("hgpo", episode=True),
        "hgpo·A^H": hstep(False),
        "hgpo[obs]·A^H": hstep(True),
    }
    for name in ("graph", "graphgpo", "gagpo"):
        if name in ESTIMATORS:
            out[name] = reg(name)
    return out


def _log(cfg: RealConfig, msg: str) -> None:
    if cfg.progress:
        print(f"[credit_real {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def _group_seeds(seed: int, groups: int) -> list[int]:
    return [int(x) for x in np.random.SeedSequence([seed, 22]).generate_state(groups, np.uint32)]


def pick_rows(batch: Any, n_copies: int, count: int, seed: int) -> np.ndarray:
    """``count`` root rows of copies ``< n_copies``, spread evenly over the groups (random within each)."""
    rng = np.random.default_rng([seed, 5])
    copy = batch.traj.copy[batch.traj_id]
    ok = (copy < n_copies) & (batch.traj.parent[batch.traj_id] < 0)
    gids = np.unique(batch.group_id[ok])
    per = {int(g): rng.permutation(np.flatnonzero(ok & (batch.group_id == g))).tolist() for g in gids}
    out: list[int] = []
    while len(out) < count and any(per.values()):
        for g in gids:
            if per[int(g)] and len(out) < count:
                out.append(per[int(g)].pop())
    return np.sort(np.array(out, dtype=np.int64))


def describe(steps: StepArrays) -> dict[str, float]:
    """Share of rows in non-singleton anchor groups (state_key, obs_key), revisit and aliasing rates."""
    out: dict[str, float] = {}
    g = np.asarray(steps.group_id, dtype=np.uint64)
    for name in ("state_key", "obs_key"):
        pair = np.stack([g, np.asarray(getattr(steps, name), dtype=np.uint64)], axis=1)
        _, inv, cnt = np.unique(pair, axis=0, return_inverse=True, return_counts=True)
        out[f"grouped_{name.split('_')[0]}"] = float(np.mean(cnt[inv.ravel()] >= 2)) if len(pair) else float("nan")
    lay = steps.layout
    seen: set[tuple[int, int]] = set()
    rev = np.zeros(steps.n, bool)
    for r in lay.order:  # rows in (trajectory, t) order
        key = (int(steps.traj_id[r]), int(steps.state_key[r]))
        rev[r] = key in seen
        seen.add(key)
    out["revisit"] = float(rev.mean()) if steps.n else float("nan")
    out["aliasing"] = mixed_share(obs_keyed(steps), 0)
    return out


def _top_actions(acts: Sequence[str], p: np.ndarray, n: int = 2) -> list[str]:
    """The ``n`` most likely actions of π (ties broken by the action's text, so two rows with the same
    distribution pick the same ones)."""
    order = sorted(range(len(acts)), key=lambda i: (-float(p[i]), acts[i]))
    return [acts[i] for i in order[:n]]


def find_pairs(batch: Any, kind: str, limit: int, seed: int) -> list[tuple[int, int]]:
    """Pairs of root rows of one task for the best-action comparisons, at most ``limit``:

    - ``"history"``: the same ``state_key`` reached with different recent histories (the deepest
      ``history_keys`` level: the last K states differ);
    - ``"aliasing"``: the same ``obs_key`` at different ``state_key`` (what the agent sees is the same,
      the state is not).

    Pairs that repeat a comparison (the same two history windows at a state; the same two states behind
    an observation) count once; the picks are spread over the anchors (round robin, random within).
    """
    if kind not in ("history", "aliasing"):
        raise ValueError(f"kind must be 'history' or 'aliasing', got {kind!r}")
    root = batch.traj.parent[batch.traj_id] < 0
    hist = np.asarray(batch.history_keys, dtype=np.uint64)[:, -1]
    by: dict[tuple[str, int], list[int]] = {}
    for r in np.flatnonzero(root):
        key = int(batch.state_key[r]) if kind == "history" else int(batch.obs_key[r])
        by.setdefault((str(batch.task_id[r]), key), []).append(int(r))
    rng = np.random.default_rng([seed, 41, int(kind == "history")])
    per: list[list[tuple[int, int]]] = []
    for anchor in sorted(by):
        idx = by[anchor]
        seen: dict[tuple[int, int], tuple[int, int]] = {}
        for a in range(len(idx)):
            for b in range(a + 1, len(idx)):
                i, j = idx[a], idx[b]
                x, y = (int(hist[i]), int(hist[j])) if kind == "history" else \
                    (int(batch.state_key[i]), int(batch.state_key[j]))
                if x != y:
                    seen.setdefault((min(x, y), max(x, y)), (i, j))
        if seen:
            cand = list(seen.values())
            per.append([cand[k] for k in rng.permutation(len(cand))])
    out: list[tuple[int, int]] = []
    order = rng.permutation(len(per)).tolist()
    while len(out) < limit and any(per):
        for k in order:
            if per[k] and len(out) < limit:
                out.append(per[k].pop())
    return out


def compare_best(qa: dict[str, tuple[float, float, int]], qb: dict[str, tuple[float, float, int]],
                 z: float = 1.96) -> dict[str, bool]:
    """Two rows' Q̂ over their common actions (action -> (Q̂, se, n)): ``q_differs`` when some action's Q̂
    differs beyond ``z`` combined standard errors; ``best_differs`` when the best action differs *and*
    each row's gap between the two best actions is resolved (> ``z`` combined standard errors: an
    argmax flipped by noise is not counted). Needs two common actions for ``best_differs``."""
    common = sorted(set(qa) & set(qb))
    q_diff = any(abs(qa[c][0] - qb[c][0]) > z * np.hypot(qa[c][1], qb[c][1]) for c in common)
    if len(common) < 2:
        return {"q_differs": bool(q_diff), "best_differs": False, "comparable": False}
    ba = max(common, key=lambda c: (qa[c][0], c))
    bb = max(common, key=lambda c: (qb[c][0], c))

    def gap(q: dict[str, tuple[float, float, int]], x: str, y: str) -> bool:
        return q[x][0] - q[y][0] > z * float(np.hypot(q[x][1], q[y][1]))

    return {"q_differs": bool(q_diff), "best_differs": bool(ba != bb and gap(qa, ba, bb) and gap(qb, bb, ba)),
            "comparable": True}


def best_action_pairs(backend: Any, batch: Any, policy: SnapshotPolicy, mc: MCConfig, limit: int, seed: int
                      ) -> dict[str, Any]:
    """How often the Monte-Carlo best action differs between two rows that share a state (different
    histories) or an observation (different states): :func:`find_pairs` of both kinds, the policy's two
    most likely actions at each row of a pair (those candidate at both rows) evaluated with ``mc.k``
    continuations each (:func:`~agentgym_credit.truth.montecarlo.action_values`), :func:`compare_best`.

    With these behaviour policies (functions of the env state and the step count) Q^π(s_t, a) depends on
    the history only through t (the steps left before the time limit) *if* ``state_key`` is the whole
    state: ``history_same_t_best`` then counts resolved differences that should not exist (a check of
    ``state_key``), ``history_best`` all of them. ``aliasing_best`` is the question behind HGPO: how
    often what the agent sees hides which action is best. Counts per kind (``<kind>_pairs`` found,
    ``_compared`` with two common actions, ``_q`` / ``_best`` differing), ``pair_env_steps``, and
    ``detail``: one dict per compared pair (rows, t, actions, Q̂ ± se at both rows, the verdicts).
    """
    pairs = {k: find_pairs(batch, k, limit, seed) for k in ("history", "aliasing")}
    plan: dict[tuple[str, int], list[str]] = {}

    def choose(dists: Any) -> dict[int, list[str]]:
        want: dict[int, list[str]] = {}
        for kind, ps in pairs.items():
            for n, (i, j) in enumerate(ps):
                (ai, pi), (aj, pj) = dists[i], dists[j]
                both = set(ai) & set(aj)
                c = [a for a in dict.fromkeys(_top_actions(ai, pi) + _top_actions(aj, pj)) if a in both]
                plan[kind, n] = c
                if len(c) >= 2:
                    for r in (i, j):
                        want.setdefault(r, []).extend(a for a in c if a not in want.get(r, []))
        return want

    rows = sorted({r for ps in pairs.values() for p in ps for r in p})
    q, steps, replay = action_values(backend, batch, rows, policy, choose, mc) if rows else ({}, 0, 0)
    out: dict[str, Any] = {"pair_env_steps": steps + replay}
    detail: list[dict[str, Any]] = []
    for kind, ps in pairs.items():
        res = []
        for n, (i, j) in enumerate(ps):
            c = plan.get((kind, n), [])
            if len(c) < 2:
                continue
            qa, qb = ({a: q[r][a] for a in c} for r in (i, j))
            res.append({**compare_best(qa, qb), "same_t": int(batch.t[i]) == int(batch.t[j])})
            detail.append({"kind": kind, "row_a": i, "row_b": j, "t_a": int(batch.t[i]), "t_b": int(batch.t[j]),
                           "task": str(batch.task_id[i]), "actions": " | ".join(c),
                           "q_a": " | ".join(f"{qa[x][0]:.3f}±{qa[x][1]:.3f}" for x in c),
                           "q_b": " | ".join(f"{qb[x][0]:.3f}±{qb[x][1]:.3f}" for x in c), **res[-1]})
        out[f"{kind}_pairs"] = len(ps)
        out[f"{kind}_compared"] = len(res)
        out[f"{kind}_q"] = sum(x["q_differs"] for x in res)
        out[f"{kind}_best"] = sum(x["best_differs"] for x in res)
        if kind == "history":
            out["history_same_t"] = sum(x["same_t"] for x in res)
            out["history_same_t_best"] = sum(x["best_differs"] and x["same_t"] for x in res)
    out["detail"] = detail
    return out


def _metrics(est: np.ndarray, raw: np.ndarray, truth: StepTruth, ret: np.ndarray, clusters: np.ndarray
             ) -> dict[str, float]:
    a = truth.adv
    se2 = truth.adv_se**2
    resolved = np.abs(a) > truth.adv_half

    @np.errstate(invalid="ignore", divide="ignore")
    def one(ix: np.ndarray) -> tuple[float, float, float, float]:
        e, t = est[ix], a[ix]
        r = float(np.corrcoef(e, t)[0, 1]) if len(ix) > 2 and e.std() > 1e-12 and t.std() > 1e-12 else 0.0
        var = float(np.var(t, ddof=1)) if len(ix) > 1 else 0.0
        rel = 1.0 - float(np.mean(se2[ix])) / var if var > 0 else float("nan")
        dis = float(r / np.sqrt(rel)) if rel > 0 else float("nan")
        m = resolved[ix]
        sgn = np.where(np.abs(e[m]) < 1e-9, 0.5, (np.sign(e[m]) == np.sign(t[m])).astype(float))
        bias = float(np.mean(raw[ix] - (ret[ix] - truth.v[ix])))
        return r, dis, float(sgn.mean()) if m.any() else float("nan"), bias

    base = one(np.arange(len(a)))
    gids = np.unique(clusters)
    members = [np.flatnonzero(clusters == g) for g in gids]
    rng = np.random.default_rng(123)
    reps = []
    for _ in range(_BOOT[0]):
        pick = rng.integers(len(gids), size=len(gids))
        reps.append(one(np.concatenate([members[p] for p in pick])))
    reps_a = np.array(reps, dtype=np.float64)
    out: dict[str, float] = {}
    for i, name in enumerate(("pearson", "pearson_disatt", "sign_acc", "bias")):
        lo, hi = np.nanpercentile(reps_a[:, i], [2.5, 97.5]) if np.isfinite(reps_a[:, i]).any() else (np.nan, np.nan)
        out[name], out[f"{name}_lo"], out[f"{name}_hi"] = base[i], float(lo), float(hi)
    out["resolved"] = float(resolved.mean())
    return out


def _tree_rows(tree_batch: Any, batch: Any, rows: np.ndarray) -> np.ndarray:
    """The tree batch's row of each scored row (same group, copy, t; roots only); -1 if absent."""
    tb = tree_batch
    key = {(int(tb.group_id[r]), int(tb.traj.copy[tb.traj_id[r]]), int(tb.t[r])): r
           for r in range(len(tb)) if tb.traj.parent[tb.traj_id[r]] < 0}
    out = np.array([key.get((int(batch.group_id[r]), int(batch.traj.copy[batch.traj_id[r]]), int(batch.t[r])), -1)
                    for r in rows], dtype=np.int64)
    ok = out >= 0
    if ok.any() and np.any(tb.state_key[out[ok]] != batch.state_key[rows[ok]]):
        raise RuntimeError("the tree collect's roots differ from the plain collect's (same seeds): the policy or env "
                           "is not reproducible")
    return out


def run_cell(cfg: RealConfig, env: EnvSpec, pol_name: str) -> dict[str, Any]:
    """One (env, policy): collect, Monte-Carlo truth, every estimator at every N (module docstring)."""
    t0 = time.perf_counter()
    pol = POLICIES[pol_name]
    groups = cfg.groups.get(env.name, 4)
    tasks = [env.tasks[i % len(env.tasks)] for i in range(groups)]
    seeds = _group_seeds(cfg.seed, groups)
    nmax, nmin = max(cfg.sizes), min(cfg.sizes)
    mk = dict(backend=cfg.backend, num_workers=cfg.workers, max_steps=env.max_steps,
              history_depth=cfg.history_depth, progress=False, seed=cfg.seed)
    rp = RolloutPolicy(pol, seed=cfg.seed)
    with GroupedRolloutCollector(env.factory, group_size=nmax, **mk) as col:
        batch = col.collect(rp, tasks=tasks, seeds=seeds)
        if batch.traj.failed.any():
            raise RuntimeError(f"{env.name}: {batch.failure_summary()}")
        rows = pick_rows(batch, nmin, cfg.scored.get(env.name, 24), cfg.seed)
        _log(cfg, f"{env.name} / {pol_name}: {len(batch)} steps collected, scoring {len(rows)} rows")
        t1 = time.perf_counter()
        mc = MCConfig(k=cfg.k, k_rest=cfg.k_rest, top=cfg.top, gamma=cfg.gamma, max_steps=env.max_steps,
                      slots=cfg.slots.get(env.name, 16), seed=cfg.seed)
        truth = estimate(col.backend, batch, rows, pol, mc)
        mc_seconds = time.perf_counter() - t1
        t2 = time.perf_counter()
        best = best_action_pairs(col.backend, batch, pol, mc, cfg.pairs, cfg.seed)
        best["pair_seconds"] = time.perf_counter() - t2
    best_pairs = [{"env": env.name, "policy": pol_name, **d} for d in best.pop("detail")]
    _log(cfg, f"{env.name} / {pol_name}: truth in {mc_seconds:.0f} s, {int(truth.env_steps.sum())} env steps; "
         f"best-action pairs in {best['pair_seconds']:.0f} s: history {best['history_best']}/"
         f"{best['history_compared']}, aliasing {best['aliasing_best']}/{best['aliasing_compared']}")
    collect_steps = len(batch)
    copy = batch.traj.copy[batch.traj_id]
    table = estimator_table(cfg.gamma)
    results, descr, pairs = [], [], []
    clusters = batch.group_id[rows]
    for n in cfg.sizes:
        mask = copy < n
        idx = np.cumsum(mask) - 1  # row of the full batch -> row of the N-subset
        steps = batch.steps.select(mask)
        sub_rows = idx[rows]
        ret = np.asarray(step_returns(steps, cfg.gamma))[sub_rows]
        descr.append({"env": env.name, "policy": pol_name, "N": n, **describe(steps),
                      "success": float(batch.traj.won[batch.traj.copy < n].mean())})
        ests = {}
        for name, (f, fraw) in table.items():
            est, raw = np.asarray(f(steps))[sub_rows], np.asarray(fraw(steps))[sub_rows]
            ests[name] = est
            results.append({"env": env.name, "policy": pol_name, "N": n, "estimator": name,
                            **_metrics(est, raw, truth, ret, clusters)})
        for a, b in PAIRS:
            if a in ests and b in ests:
                pairs.append({"env": env.name, "policy": pol_name, "N": n, "a": a, "b": b,
                              **paired_difference(ests[a], ests[b], truth.adv, clusters),
                              **robustness(ests[a], ests[b], truth.adv, clusters)})
        with GroupedRolloutCollector(env.factory, group_size=n, **{**mk, "backend": "sync"}) as tcol:
            tb = tcol.collect(rp, tasks=tasks, seeds=seeds,
                              branch=BranchConfig(budget_trajectories=n / 2, rule="uniform", gamma=cfg.gamma,
                                                  seed=cfg.seed))
        collect_steps += len(tb)
        trows = _tree_rows(tb, batch, rows)
        ok = trows >= 0
        tsteps = tb.steps
        tret = np.asarray(step_returns(tsteps, cfg.gamma))
        est, raw = advantages("tree", tsteps), advantages("tree", tsteps, norm="mean")
        sub = replace(truth, adv=truth.adv[ok], adv_se=truth.adv_se[ok], adv_half=truth.adv_half[ok], v=truth.v[ok])
        results.append({"env": env.name, "policy": pol_name, "N": n, "estimator": "tree (+N/2 branched)",
                        **_metrics(np.asarray(est)[trows[ok]], np.asarray(raw)[trows[ok]], sub, tret[trows[ok]],
                                   clusters[ok])})
    info = {"env": env.name, "policy": pol_name, "groups": groups, "rows_scored": len(rows),
            "truth_reliability": truth.reliability(), "truth_half_width": float(np.median(truth.adv_half)),
            "adv_sd": float(np.std(truth.adv)), "resolved": float(np.mean(np.abs(truth.adv) > truth.adv_half)),
            "mc_env_steps": int(truth.env_steps.sum()), "replay_steps": truth.replay_steps,
            "steps_per_row": float(truth.env_steps.mean()) if len(rows) else 0.0,
            "collect_steps": collect_steps, "mc_seconds": mc_seconds, "seconds": time.perf_counter() - t0,
            "success": float(batch.traj.won.mean()), "mean_length": float(batch.traj.length.mean()),
            **best}
    return {"results": results, "describe": descr, "info": info, "pairs": pairs, "best_pairs": best_pairs}


def synthetic_coverage(cfg: RealConfig) -> list[dict[str, Any]]:
    """The Monte-Carlo truth against the exact oracle on synthetic tasks: share of scored rows whose 95%
    interval holds the oracle's A^π (softmax-Q* policy, T = 0.3; ``synthetic_rows`` rows per task)."""
    import gymnasium as gym

    from agentgym_credit.credit.oracle import evaluate_policy
    from agentgym_credit.credit.policies import NoisyOptimalPolicy
    from agentgym_credit.truth.policies import TabularPolicy

    out = []
    for env_id in cfg.synthetic_tasks:
        t0 = time.perf_counter()
        base = gym.make(env_id).unwrapped
        tasks = base.task_ids()[:4]
        models: dict[str, Any] = {}

        def model(tid: str, _b: Any = base, _m: dict = models) -> Any:
            if tid not in _m:
                _m[tid] = _b.model_for(tid)
            return _m[tid]

        pol = NoisyOptimalPolicy(0.3, gamma=cfg.gamma)
        tp = TabularPolicy(pol, model, name="softQ*(T=0.3)")
        horizon = int(model(tasks[0]).horizon or 100)
        with GroupedRolloutCollector(env_id, group_size=4, max_steps=horizon, progress=False, seed=cfg.seed,
                                     history_depth=cfg.history_depth) as col:
            batch = col.collect(RolloutPolicy(tp, seed=cfg.seed), tasks=tasks, seeds=_group_seeds(cfg.seed + 1, 4))
            rows = pick_rows(batch, 4, cfg.synthetic_rows, cfg.seed)
            truth = estimate(col.backend, batch, rows, tp, MCConfig(k=8, k_rest=8, top=1, gamma=cfg.gamma, seed=cfg.seed))
        vals = {tid: evaluate_policy(model(tid), pol, gamma=cfg.gamma) for tid in set(batch.task_id[r] for r in rows)}
        exact = np.array([float(vals[batch.task_id[r]].advantages_for_steps(
            [int(batch.state_index[r])], [model(batch.task_id[r]).action_index(int(batch.state_index[r]), batch.action[r])],
            [int(batch.t[r])])[0]) for r in rows])
        cov = truth.covers(exact)
        k = int(cov.sum())
        lo, hi = _wilson(k, len(cov))
        out.append({"task": env_id, "rows": len(cov), "covered": k, "coverage": k / len(cov), "coverage_lo": lo,
                    "coverage_hi": hi, "median_half_width": float(np.median(truth.adv_half)),
                    "exact_adv_sd": float(exact.std()), "reliability": truth.reliability(),
                    "pearson_mc_exact": float(np.corrcoef(exact, truth.adv)[0, 1]) if exact.std() > 0 else float("nan"),
                    "env_steps": int(truth.env_steps.sum()), "seconds": time.perf_counter() - t0})
        _log(cfg, f"synthetic {env_id}: coverage {k}/{len(cov)}")
    return out


def _wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return float("nan"), float("nan")
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return float(c - h), float(c + h)


def cpu_seconds() -> float:
    """CPU time (user + system) of this process and of its finished, waited-for child processes (the
    subprocess backend's workers count once they are shut down)."""
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def run(cfg: RealConfig) -> dict[str, Any]:
    """Every (env, policy) of ``cfg`` plus the synthetic coverage check; raw results and timing."""
    cfg.validate()
    _BOOT[0] = cfg.bootstrap
    t0 = time.perf_counter()
    c0 = cpu_seconds()
    load0 = os.getloadavg()[0]
    res: dict[str, Any] = {"results": [], "describe": [], "info": [], "pairs": [], "best_pairs": [], "skipped": []}
    res["synthetic"] = synthetic_coverage(cfg)
    for e in cfg.envs:
        env = ENVS[e]
        if e == "alfworld-dev" and not dev_available():
            res["skipped"].append(f"{e}: ../shared/data/alfworld/dev is absent")
            continue
        require_snapshots(env.factory, e, {"task": env.tasks[0]})
        for p in cfg.policies:
            cell = run_cell(cfg, env, p)
            for k in ("results", "describe", "pairs", "best_pairs"):
                res[k] += cell[k]
            res["info"].append(cell["info"])
    holm_robust(holm_family(res["pairs"]))
    res["seconds"] = time.perf_counter() - t0
    res["cpu_seconds"] = cpu_seconds() - c0
    res["load"] = (load0, os.getloadavg()[0])
    res["estimators"] = sorted(estimator_table(cfg.gamma)) + ["tree (+N/2 branched)"]
    return res


__all__ = ["ENVS", "POLICIES", "PAIRS", "paired_difference", "holm_family", "EnvSpec", "RealConfig", "estimator_table",
           "pick_rows", "describe", "find_pairs", "compare_best", "best_action_pairs", "run_cell",
           "synthetic_coverage", "cpu_seconds", "run"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``agentgym-credit bench credit_real``: options (:func:`.credit_real_report.config_from_args`),
    :func:`run`, then the report (:func:`.credit_real_report.finish`)."""
    from agentgym_credit.bench.montecarlo import credit_real_report as report

    parsed = report.config_from_args(argv)
    if isinstance(parsed, int):
        return parsed
    cfg, args = parsed
    return report.finish(cfg, args, run(cfg))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
