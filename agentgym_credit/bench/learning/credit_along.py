"""Score many credit estimators on the batches of ONE learning run, against the exact A^π of each batch's policy.

``bench train`` scores each estimator along its own training, which mixes two things: how accurate its
credit is and which policies its own learning visits. Here one *driver* estimator trains the tabular
policy (:mod:`.train_tabular`, the same loop as :func:`~agentgym_credit.bench.learning.train.train_one_tabular`)
and at ``points`` moments of the run every *candidate* is computed on the very same batch and scored
with :func:`~agentgym_credit.bench.learning.credit_gradient.credit_snapshot` (Pearson, sign accuracy,
|A^π|-weighted sign accuracy, gradient cosine). Candidates are ``(label, registered name, options)``.

Used for ``benchmarks/learning/training_graph_obs.md`` (why ``graph`` keyed on ``obs_key`` loses its accuracy as
the policy sharpens): ``python -m agentgym_credit.bench.learning.credit_along``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from agentgym_credit.bench.exact.credit_signals import bench_advantages
from agentgym_credit.bench.learning.config import TrainBenchConfig, estimator_call, make_collector
from agentgym_credit.bench.learning.credit_gradient import credit_snapshot, exact_advantages
from agentgym_credit.bench.learning.train import collect_tabular, tabular_setup
from agentgym_credit.bench.learning.train_tabular import marks_passed, policy_gradient, scale_advantages

Candidate = tuple[str, str, dict[str, Any]]


def score_along(task: str, driver: str, lr: float, seed: int, candidates: Sequence[Candidate], points: int = 6,
                cfg: TrainBenchConfig | None = None) -> list[dict[str, Any]]:
    """One run trained by the ``bench train`` label ``driver``; a row per (point, candidate)."""
    cfg = cfg or TrainBenchConfig()
    ids, policy, oracle, horizon = tabular_setup(task, cfg, seed)
    name, opts = estimator_call(driver, cfg.gamma)
    rng = np.random.default_rng(seed)
    budget = cfg.budget_for(task)
    marks = np.linspace(0, budget, points + 1)[:-1]
    col = make_collector(task, cfg, seed, horizon)
    out: list[dict[str, Any]] = []
    env_steps, it, nxt = 0, 0, 0
    try:
        while env_steps < budget:
            it += 1
            batch, steps, extras = collect_tabular(col, policy, ids, rng, cfg, seed * 1_000_003 + it)
            tk = [e["task"] for e in extras]
            s = np.fromiter((e["s"] for e in extras), dtype=np.int64, count=len(extras))
            a = np.fromiter((e["a"] for e in extras), dtype=np.int64, count=len(extras))
            if (ahead := marks_passed(marks, nxt, env_steps)) > nxt:
                nxt = ahead
                true = exact_advantages(policy, tk, s, a, steps.t, cfg.gamma)
                succ = oracle.mean_success()
                for label, cname, copts in candidates:
                    copts = dict(copts)
                    copts.setdefault("gamma", cfg.gamma)
                    adv = bench_advantages(cname, steps, **copts)
                    out.append({"task": task, "driver": driver, "seed": seed, "point": nxt - 1,
                                "env_steps": env_steps, "success": succ, "candidate": label,
                                **credit_snapshot(policy, extras, steps.t, adv, cfg.gamma, true=true)})
            adv = scale_advantages(bench_advantages(name, steps, **opts), cfg.adv_scale)
            n_traj = max(len(np.unique(steps.traj_id)), 1)
            policy.step(policy_gradient(policy, tk, s, a, adv / n_traj), lr)
            env_steps += len(batch)
    finally:
        col.close()
    return out


def main(argv: Sequence[str] | None = None) -> int:  # pragma: no cover - the report's driver
    import argparse

    import pandas as pd

    p = argparse.ArgumentParser(prog="python -m agentgym_credit.bench.learning.credit_along")
    p.add_argument("--tasks", nargs="+", default=["aliased", "household-small"])
    p.add_argument("--driver", default="gigpo[obs]")
    p.add_argument("--lrs", nargs="+", type=float, default=[32.0, 16.0], help="one per task")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--points", type=int, default=6)
    p.add_argument("--out", default=None, help="CSV of every (task, seed, point, candidate) row")
    args = p.parse_args(list(sys.argv[1:] if argv is None else argv))
    rows = []
    for task, lr in zip(args.tasks, args.lrs):
        for seed in range(args.seeds):
            rows += score_along(task, args.driver, lr, seed, CANDIDATES, args.points)
    df = pd.DataFrame(rows)
    if args.out:
        df.to_csv(args.out, index=False)
    late = df[df.point >= 1]
    print(late.groupby(["task", "candidate"], sort=False)[["pearson", "sign_acc", "wsign_acc", "grad_cos"]]
          .mean().round(3).to_string())
    return 0


OBS = {"key": "obs_key"}
OH = {"key": "history", "history_from": "obs_key"}
CANDIDATES: list[Candidate] = [
    ("gigpo[obs]", "gigpo", {"anchor": "obs_key"}),
    ("graph[obs]", "graph", OBS),
    ("graph[obs] lam.5", "graph", {**OBS, "lam": 0.5}),
    ("graph[obs] lam.8", "graph", {**OBS, "lam": 0.8}),
    ("graph[obs] lam1", "graph", {**OBS, "lam": 1.0}),
    ("graph[obs] +ep", "graph", {**OBS, "episode": 1.0}),
    ("graph[obs] shrink0", "graph", {**OBS, "shrink": 0.0}),
    ("graph[obs] loops none", "graph", {**OBS, "loops": "none"}),
    ("graph[oh1]", "graph", {**OH, "level": 1}),
    ("graph[oh2]", "graph", {**OH, "level": 2}),
    ("graph[oh3]", "graph", {**OH, "level": 3}),
    ("graph[oh3] lam.5", "graph", {**OH, "level": 3, "lam": 0.5}),
    ("graph_q[obs] lam0", "graph_q", {**OBS, "lam": 0.0}),
    ("graph_q[obs] lam.5", "graph_q", {**OBS, "lam": 0.5}),
    ("graph_q[obs] lam.8", "graph_q", {**OBS, "lam": 0.8}),
    ("graph_q[obs] lam1", "graph_q", {**OBS, "lam": 1.0}),
    ("graph_q[oh3->obs] lam.5", "graph_q", {**OH, "level": 3, "center_key": "obs_key", "lam": 0.5}),
    ("graph_q[oh3] lam0", "graph_q", {**OH, "level": 3, "lam": 0.0}),
    ("graph_q[obs] lam.5 +ep", "graph_q", {**OBS, "lam": 0.5, "episode": 1.0}),
]
"""What ``main`` scores (labels as in the report)."""


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())


__all__ = ["Candidate", "CANDIDATES", "score_along", "main"]
