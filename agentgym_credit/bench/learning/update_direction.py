"""``agentgym-credit bench update_direction``: which way one REINFORCE update moves the text policy, per arm and reward.

The question: when an arm's learning curve on a real env goes *down* (``training_webshop*.md``: success fell
below its start), is the credit estimator to blame, or what it was asked to learn? This script takes the
start policy of ``bench train_real`` (:class:`~agentgym_credit.truth.text_policy.TextPolicy`, the stated prior
only), collects ``batches`` training batches (``groups`` x N episodes of training instances, the collector and
seeds of ``bench train_real``), and for every arm and reward rule (:data:`~.real_config.REWARDS`) takes the
same single update ``θ' = θ + lr · Σ_i Â_i ∇ log π(a_i|s_i) / #trajectories`` (advantages divided by their
batch RMS, as in training) on a copy of the policy. It reports the mean change of the probability of the env
expert's command,

    Δp = mean over rows of ( π_θ'(expert | s) − π_θ(expert | s) ),

on the batch's own states and on a *fresh* batch of the same instances (what the next rollouts meet). The
expert command is the move towards success (its greedy policy wins the episode), so Δp > 0 is an update
towards success. Reference arms check the metric before it is read:

- **null**: the arm's advantages replaced by i.i.d. random signs of the same RMS (no information); its Δp is
  the drift a directionless update of this size has;
- **known effect**: ``imitate``, advantage +1 on rows where the expert command was taken and −1 elsewhere
  (centred, RMS-scaled): an update that must raise Δp; ``imitate-path`` the same on the rows whose trajectory
  has followed the expert so far (0 after it left the path).

Output: ``<out>/<name>.md`` and ``.csv`` (one row per env, batch, arm and reward rule).
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_credit.bench.exact.credit_signals import bench_advantages
from agentgym_credit.bench.learning.matched_step import REFERENCES, ExpertMarking, reference_advantages
from agentgym_credit.bench.learning.real_config import ARMS, REAL_ENVS, REWARDS, check_names
from agentgym_credit.bench.learning.train_real import arm_call, train_instances, training_reward
from agentgym_credit.bench.learning.train_tabular import scale_advantages
from agentgym_credit.bench.stats import metrics as M
from agentgym_credit.bench.stats import report as R
from agentgym_credit.trainer.checkpoint import atomic_write_text
from agentgym_credit.truth.text_policy import Decision, TextActor, TextPolicy
from agentgym_credit.wrappers.collector import GroupedRolloutCollector


@dataclass
class DirectionConfig:
    envs: tuple[str, ...] = ("webshop",)
    arms: tuple[str, ...] = tuple(ARMS)
    rewards: tuple[str, ...] = REWARDS
    batches: int = 8
    groups: int = 8
    group_size: int = 8
    train_tasks: int = 64
    lr: float = 0.3
    gamma: float = 0.95
    expert_bonus: float = 1.5
    seed: int = 0
    out: Path = Path("benchmarks/learning")
    name: str = "update_direction"
    progress: bool = True
    command: str = "agentgym-credit bench update_direction"

    def validate(self) -> None:
        check_names(self.envs, self.arms, dilute=False)
        R.check_known("reward", self.rewards, REWARDS)
        for k in ("batches", "groups", "train_tasks"):
            if getattr(self, k) < 1:
                raise ValueError(f"{k} must be >= 1")
        if self.group_size < 2:
            raise ValueError("group_size must be >= 2")
        if not np.isfinite(self.lr) or self.lr <= 0:
            raise ValueError(f"lr must be positive, got {self.lr}")


def expert_shift(before: TextPolicy, after: TextPolicy, rows: Sequence[dict[str, Any]]) -> float:
    """Mean over rows with an expert command of π_after(expert|s) − π_before(expert|s). The rows hold the
    decision ``before`` made (its probabilities, features and residual keys), so π_after follows from the
    parameter change alone."""
    dw = after.w - before.w
    shifts = []
    for row in rows:
        d: Decision = row["decision"]
        k = row["expert_idx"]
        if k < 0:
            continue
        ends = np.cumsum(d.counts)
        starts = ends - d.counts
        dlogit = np.array([dw[d.feats[s:e]].sum() for s, e in zip(starts, ends)])
        dlogit += np.array([after.residual.get(key, 0.0) - before.residual.get(key, 0.0) for key in d.rkeys])
        logit = np.log(np.maximum(d.probs, 1e-300)) + dlogit
        q = np.exp(logit - logit.max())
        shifts.append(q[k] / q.sum() - d.probs[k])
    return float(np.mean(shifts)) if shifts else float("nan")


def run(cfg: DirectionConfig) -> list[dict[str, Any]]:
    cfg.validate()
    import agentgym_credit  # noqa: F401  (registers credit/*)

    out: list[dict[str, Any]] = []
    todo = [(e, b) for e in cfg.envs for b in range(cfg.batches)]
    cols: dict[str, GroupedRolloutCollector] = {}
    try:
        for env_name, b in R.progress(todo, total=len(todo), desc="update_direction", enable=cfg.progress):
            env = REAL_ENVS[env_name]
            if env_name not in cols:
                cols[env_name] = GroupedRolloutCollector(env.factory, group_size=cfg.group_size, history_depth=3,
                                                         seed=cfg.seed, max_steps=env.max_steps, progress=False)
            col = cols[env_name]
            pol = TextPolicy(cfg.expert_bonus, name="start")
            rng = np.random.default_rng([cfg.seed, b])
            ids = train_instances(env, "exploration", cfg.train_tasks, cfg.seed)
            tasks = [ids[i] for i in rng.choice(len(ids), size=min(cfg.groups, len(ids)), replace=False)]
            batch = col.collect(ExpertMarking(TextActor(pol, rng)), tasks=tasks)
            fresh = col.collect(ExpertMarking(TextActor(pol, rng)), tasks=tasks)
            rows = [e for e, keep in zip(batch.extras, batch.row_mask()) if keep]
            frows = [e for e, keep in zip(fresh.extras, fresh.row_mask()) if keep]
            n_traj = max(len(np.unique(batch.steps.traj_id)), 1)
            for reward in cfg.rewards:
                steps = replace(batch.steps, reward=training_reward(batch, reward))
                for arm in (*REFERENCES, *cfg.arms):
                    if arm in REFERENCES:
                        if reward != cfg.rewards[0]:
                            continue  # the references do not read the reward
                        adv = reference_advantages(arm, rows, rng, batch.steps)
                    else:
                        name, opts = arm_call(arm, cfg.gamma)
                        adv = bench_advantages(name, steps, **opts)
                    adv = scale_advantages(np.asarray(adv, dtype=np.float64), "rms")
                    after = copy.deepcopy(pol)
                    after.update([r["decision"] for r in rows], adv / n_traj, cfg.lr)
                    out.append({"env": env_name, "batch": b, "arm": arm,
                                "reward": "-" if arm in REFERENCES else reward,
                                "success": batch.success_rate, "rows": len(rows),
                                "shift_batch": expert_shift(pol, after, rows),
                                "shift_fresh": expert_shift(pol, after, frows)})
    finally:
        for c in cols.values():
            c.close()
    return out


def write_report(cfg: DirectionConfig, rows: Sequence[dict[str, Any]], seconds: float,
                 load: tuple[float, float]) -> list[Path]:
    lines = [f"# bench update_direction: {cfg.name}", "",
             "Which way one REINFORCE update of the start text policy moves the probability of the env expert's "
             "command (module `agentgym_credit/bench/learning/update_direction.py`; Δp > 0: towards success). "
             "Mean and 95% interval over batches; `null` = noise advantages of the same size (the drift of a "
             "directionless update), `imitate` = +1 on expert choices (the known effect).", "",
             R.machine_lines(cfg.command), "",
             f"Wall time {seconds:.0f} s; 1-min load average {load[0]:.1f} at the start, {load[1]:.1f} at the end. "
             f"{cfg.batches} batches of {cfg.groups} groups x N = {cfg.group_size} per env; lr {cfg.lr:g}; "
             f"γ {cfg.gamma:g}; prior expert bonus {cfg.expert_bonus:g}.", ""]
    for env in cfg.envs:
        mine = [r for r in rows if r["env"] == env]
        if not mine:
            continue
        succ = np.mean([r["success"] for r in mine if r["arm"] == "null"])
        lines += [f"## {env}: {REAL_ENVS[env].describe}", "",
                  f"Start-policy success on these batches: {succ:.3f}.", ""]
        tab = []
        for arm in (*REFERENCES, *cfg.arms):
            for reward in ("-", *cfg.rewards):
                rs = [r for r in mine if r["arm"] == arm and r["reward"] == reward]
                if not rs:
                    continue
                cells = []
                for k in ("shift_batch", "shift_fresh"):
                    m, h, _ = M.mean_ci([r[k] for r in rs])
                    cells.append(f"{m:+.4f} ± {h:.4f}")
                tab.append([arm, reward, len(rs), *cells])
        lines += [R.markdown_table(["arm", "reward", "batches", "Δp(expert), same states", "Δp(expert), fresh batch"],
                                   tab), ""]
    cfg.out.mkdir(parents=True, exist_ok=True)
    md = atomic_write_text(cfg.out / f"{cfg.name}.md", "\n".join(lines) + "\n")
    return [md, R.write_csv(cfg.out / f"{cfg.name}.csv", list(rows))]


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    d = DirectionConfig()
    p = argparse.ArgumentParser(prog="agentgym-credit bench update_direction",
                                description="Which way one update moves the text policy, per arm and reward rule.")
    p.add_argument("--envs", nargs="+", choices=sorted(REAL_ENVS), default=list(d.envs))
    p.add_argument("--arms", nargs="+", choices=list(ARMS), default=list(d.arms))
    p.add_argument("--rewards", nargs="+", choices=REWARDS, default=list(d.rewards))
    p.add_argument("--batches", type=int, default=d.batches)
    p.add_argument("--groups", type=int, default=d.groups)
    p.add_argument("--group-size", type=int, default=d.group_size)
    p.add_argument("--lr", type=float, default=d.lr)
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--out", type=Path, default=d.out)
    p.add_argument("--name", default=d.name)
    p.add_argument("--no-progress", action="store_true")
    a = p.parse_args(argv)
    cfg = DirectionConfig(envs=tuple(a.envs), arms=tuple(a.arms), rewards=tuple(a.rewards), batches=a.batches,
                          groups=a.groups, group_size=a.group_size, lr=a.lr, seed=a.seed, out=a.out, name=a.name,
                          progress=not a.no_progress,
                          command="agentgym-credit bench update_direction " + " ".join(argv))
    try:
        cfg.validate()
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    load0, t0 = os.getloadavg()[0], time.perf_counter()
    rows = run(cfg)
    paths = write_report(cfg, rows, time.perf_counter() - t0, (load0, os.getloadavg()[0]))
    print(f"wrote {', '.join(str(x) for x in paths)}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())


__all__ = ["DirectionConfig", "REFERENCES", "expert_shift", "reference_advantages", "run", "write_report", "main"]
