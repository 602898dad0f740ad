"""``agentgym-credit bench train_real``: the CPU text policy trained on ALFWorld and WebShop with each credit estimator.

The policy is :class:`~agentgym_credit.truth.text_policy.TextPolicy`: a **stated prior** (a bonus
``expert_bonus`` on the env expert's command and the goal-word overlap, standing in for what a pretrained agent
knows; at 1.5 the sampled policy starts at 10-13% on the held-out WebShop goals and 30% on the held-out
generated ALFWorld games in the benchmarks/learning/training_*.md runs) plus **learned** parts that see only text (a
linear layer over hashed
(observation/goal, action) features that carries across games, and a residual per (obs_key, action)). For each
env, arm and seed, :func:`train_one_real` runs the same loop: collect ``groups × N`` rollouts of training task
instances with the real :class:`~agentgym_credit.wrappers.GroupedRolloutCollector`, compute the arm's
advantages on ``batch.steps``, divide them by their RMS over the batch (matched step size), take one REINFORCE
step ``θ += lr · Σ_i Â_i ∇log π(a_i|s_i) / #trajectories``, until ``budget_steps`` env steps (equal for every
arm). At ``checkpoints`` env-step marks it scores the policy on **fixed held-out task instances** (never
trained on; the same episodes, reset seeds and sampling seeds for every arm) and on fixed episodes of the
seed's **training instances** (``success_trained``: what the per-(obs_key, action) residual can learn; the
same instances for every arm of a seed): success of the sampling policy
and (at the first and last checkpoint only, to save env steps) of the greedy one. Each arm's learning rate is picked from ``lrs`` on ``sweep_seeds`` separate seeds (by
the mean held-out sampled success over the checkpoints; the report flags a pick at the grid's edge), then
run on ``seeds`` fresh seeds. Each finished run's rows are kept (:func:`run_file`), so a study that is
stopped resumes where it was. The final policy of every run is saved (``<out>/<name>_policies/<env>/<arm>/
seed<k>.npz``) so the Monte-Carlo truth can be scored under it later.

Task instances: every env has an exploration and a confirmation phase with disjoint training pools and
evaluation instances (``--phase``); a confirmatory run takes fresh seeds (``--seed-base``) and the other
phase's instances. Runs go to a pool of processes (``--jobs``) or to a Ray cluster (``--ray auto`` or an
address: each run is one Ray task; ``ray start --head`` on the head node, ``ray start --address=...`` on
the others, then the same command with ``--ray auto``).

What lives here: :func:`train_one_real`, :func:`evaluate`, :func:`run_benchmark`, :func:`main`. The statistics and the
report: :mod:`.train_real_report`. The configuration (:data:`REAL_ENVS`, :data:`ARMS`, :class:`RealEnv`,
:class:`RealTrainConfig`, :class:`RealResult`) is in :mod:`.real_config`, re-exported here.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_credit.bench.exact.credit_signals import bench_advantages
from agentgym_credit.bench.learning.matched_step import (
    STEPS,
    ExpertMarking,
    dilute,
    dilute_share,
    is_reference,
    reference_advantages,
    text_step,
)
from agentgym_credit.bench.learning.neural_policy import NeuralTextPolicy, actor_for
from agentgym_credit.bench.learning.real_config import (
    ARMS,
    PHASES,
    POLICIES,
    REAL_ENVS,
    REFERENCES,
    REWARDS,
    RealEnv,
    RealResult,
    RealTrainConfig,
)
from agentgym_credit.bench.learning.train_tabular import marks_passed, scale_advantages
from agentgym_credit.bench.stats import report as R
from agentgym_credit.credit import estimator_options
from agentgym_credit.truth.text_policy import PARTS, TextPolicy
from agentgym_credit.wrappers.collector import GroupedRolloutCollector


def arm_call(label: str, gamma: float) -> tuple[str, dict[str, Any]]:
    name, opts = ARMS[label]
    opts = dict(opts)
    if "gamma" in estimator_options(name):
        opts["gamma"] = gamma
    return name, opts


def train_instances(env: RealEnv, phase: str, n: int, seed: int) -> list[int]:
    """``n`` training instances of one seed, drawn from the phase's pool (the same for every arm)."""
    lo, hi = env.train_pool[phase]
    pick = np.random.default_rng([31, seed]).choice(hi - lo, size=min(n, hi - lo), replace=False)
    return sorted(int(lo + i) for i in pick)


def evaluate(policy: TextPolicy | NeuralTextPolicy, col: GroupedRolloutCollector, tasks: Sequence[int], rollouts: int,
             greedy: bool, seed: int) -> float:
    """Success on fixed episodes: ``rollouts`` per task, reset seeds and (sampled) action draws fixed by
    ``seed`` alone, so every arm and checkpoint meets the same episodes."""
    tasks = [t for t in tasks for _ in range(rollouts)]
    batch = col.collect(actor_for(policy, np.random.default_rng([7, seed]), greedy=greedy), tasks=tasks,
                        seeds=[20_000 + i for i in range(len(tasks))])
    return float(batch.success_rate)


def training_reward(batch: Any, rule: str) -> np.ndarray:
    """The per-row reward of ``batch.steps`` the advantages are computed from, under ``rule``
    (:data:`REWARDS`): ``"env"`` is the env's own; ``"verl-agent"`` is 10 on the step that ends a won
    episode and 0 elsewhere (WebShop's partial score of a wrong purchase earns nothing)."""
    if rule not in REWARDS:
        raise ValueError(f"reward must be one of {REWARDS}, got {rule!r}")
    m = batch.row_mask()
    if rule == "env":
        return np.asarray(batch.reward[m], dtype=np.float64)
    won = np.asarray(batch.traj.won, dtype=bool)[batch.traj_id[m]]
    return np.where(batch.done[m] & won, 10.0, 0.0)


def policy_path(cfg: RealTrainConfig, env: str, arm: str, seed: int) -> Path:
    safe = arm.replace("[", "_").replace("]", "")
    return cfg.out / f"{cfg.name}_policies" / env / safe / f"seed{seed}.npz"


def make_policy(cfg: RealTrainConfig, name: str, seed: int) -> TextPolicy | NeuralTextPolicy:
    """The start policy of one run: the text policy or the neural one (both start at the stated prior)."""
    if cfg.policy == "neural":
        return NeuralTextPolicy(cfg.expert_bonus, cfg.overlap_weight, seed=seed, name=name)
    return TextPolicy(cfg.expert_bonus, cfg.overlap_weight, cfg.buckets, cfg.parts, name=name)


def policy_step(pol: TextPolicy | NeuralTextPolicy, decisions: Sequence[Any], weights: np.ndarray, rate: float,
                step: str) -> tuple[float, float]:
    """One update; ``rate`` is the learning rate (``step="rms"``) or the KL target (``"kl"``). Returns the step
    size taken and the achieved mean KL(π_old‖π_new) over the batch's rows."""
    kw = {"kl_target": rate} if step == "kl" else {"lr": rate}
    if isinstance(pol, NeuralTextPolicy):
        return pol.step(decisions, weights, **kw)
    return text_step(pol, decisions, weights, **kw)


def arm_advantages(arm: str, steps: Any, rows: Sequence[dict[str, Any]], gamma: float,
                   rng: np.random.Generator) -> np.ndarray:
    """The arm's advantages on ``steps`` (a reference arm's from the rows' decisions; ``grpo-dilute[q]``:
    the ``grpo`` arm's with a share ``q`` of the groups permuted by ``rng``, see :func:`dilute`)."""
    if arm in REFERENCES:
        return reference_advantages(arm, rows, rng, steps)
    if (q := dilute_share(arm)) is not None:
        return dilute(arm_advantages("grpo", steps, rows, gamma, rng), steps, q, rng)
    name, opts = arm_call(arm, gamma)
    return bench_advantages(name, steps, **opts)


def train_one_real(env_name: str, arm: str, seed: int, lr: float, cfg: RealTrainConfig,
                   save: bool = True) -> list[dict[str, Any]]:
    """One run; one row per checkpoint (env steps, held-out success sampled and greedy, training success, and
    the updates since the last checkpoint: how many, their achieved KL each (``kls``) and mean step size)."""
    import agentgym_credit  # noqa: F401  (registers credit/* in a fresh worker process)

    env = REAL_ENVS[env_name]
    pol = make_policy(cfg, f"{env_name}/{arm}/{seed}", seed)
    rng, ref_rng = np.random.default_rng([seed, 1]), np.random.default_rng([seed, 2])
    ids = train_instances(env, cfg.phase, cfg.train_tasks, seed)
    lo, hi = env.eval_tasks[cfg.phase]
    eval_ids = list(range(lo, hi))[:cfg.eval_limit]
    mk = dict(max_steps=env.max_steps, progress=False)
    col = GroupedRolloutCollector(env.factory, group_size=cfg.group_size, history_depth=cfg.history_depth,
                                  seed=seed, **mk)
    ecol = GroupedRolloutCollector(env.factory, group_size=1, history_depth=0, seed=0, **mk)
    marks = cfg.checkpoint_steps()
    rows: list[dict[str, Any]] = []
    env_steps, it, nxt, t0, c0 = 0, 0, 1, time.perf_counter(), time.process_time()
    train_succ: list[float] = []
    kls: list[float] = []
    sizes: list[float] = []

    def record() -> None:
        rows.append({"env": env_name, "arm": arm, "seed": seed, "lr": lr, "phase": cfg.phase, "iteration": it,
                     "env_steps": env_steps,
                     "success": evaluate(pol, ecol, eval_ids, cfg.eval_rollouts, False, 0),
                     "success_greedy": (evaluate(pol, ecol, eval_ids, 1, True, 0)
                                        if env_steps == 0 or env_steps >= cfg.budget_steps else float("nan")),
                     "success_trained": (evaluate(pol, ecol, ids, cfg.train_eval_rollouts, False, 1)
                                         if cfg.train_eval_rollouts else float("nan")),
                     "train_success": float(np.mean(train_succ)) if train_succ else float("nan"),
                     "updates": len(kls), "kl": float(np.mean(kls)) if kls else float("nan"),
                     "kls": ";".join(f"{k:.5g}" for k in kls),
                     "step_size": float(np.mean(sizes)) if sizes else float("nan"),
                     "seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0})
        train_succ.clear()
        kls.clear()
        sizes.clear()

    try:
        record()
        while env_steps < cfg.budget_steps or it < cfg.min_updates:
            it += 1
            tasks = [ids[i] for i in rng.choice(len(ids), size=min(cfg.groups, len(ids)), replace=False)]
            batch = col.collect(ExpertMarking(actor_for(pol, rng)), tasks=tasks)
            env_steps += len(batch)
            train_succ.append(batch.success_rate)
            steps = replace(batch.steps, reward=training_reward(batch, cfg.reward))
            ex = [e for e, keep in zip(batch.extras, batch.row_mask()) if keep]
            adv = scale_advantages(arm_advantages(arm, steps, ex, cfg.gamma, ref_rng), cfg.adv_scale)
            n_traj = max(len(np.unique(steps.traj_id)), 1)
            size, kl = policy_step(pol, [e["decision"] for e in ex], adv / n_traj, lr, cfg.step)
            kls.append(kl)
            sizes.append(size)
            if (ahead := marks_passed(marks, nxt, env_steps)) > nxt:
                nxt = ahead
                record()
        if kls:
            record()  # updates past the budget (min_updates): the final policy is scored too
    finally:
        col.close()
        ecol.close()
    if save:
        pol.save(policy_path(cfg, env_name, arm, seed),
                 meta={"env": env_name, "arm": arm, "seed": seed, "lr": lr, "phase": cfg.phase,
                       "env_steps": env_steps, "expert_bonus": cfg.expert_bonus})
    return rows


_NOT_IN_RUN = ("envs", "arms", "seeds", "seed_base", "sweep_seeds", "lrs", "jobs", "ray", "save_policies", "out",
               "name", "progress", "command", "target", "target_measure", "primary", "primary_measure", "predictions",
               "pick_measure")
"""Config fields that do not change what one (env, arm, seed, lr) run computes."""


def run_file(cfg: RealTrainConfig, env: str, arm: str, seed: int, lr: float) -> Path:
    """Where one run's rows are kept (``<out>/<name>_runs/``; a digest of the settings that decide the run in
    the name), so an interrupted study resumes and a larger one reuses finished runs."""
    import hashlib
    import json

    d = {k: v for k, v in asdict(cfg).items() if k not in _NOT_IN_RUN}
    if d.get("reward") == "env":
        del d["reward"]  # runs from before the reward rule was a setting trained on the env's reward
    for k, old in (("policy", "text"), ("step", "rms"), ("min_updates", 0)):
        if d.get(k) == old:
            del d[k]  # runs from before these were settings keep their files
    tag = hashlib.blake2b(json.dumps(d, sort_keys=True, default=str).encode(), digest_size=6).hexdigest()
    safe = arm.replace("[", "_").replace("]", "")
    return cfg.out / f"{cfg.name}_runs" / env / safe / f"seed{seed}_lr{lr:g}_{tag}.json"


def _run(job: tuple[str, str, int, float, dict[str, Any], bool]) -> list[dict[str, Any]]:
    import json

    env, arm, seed, lr, cfg_d, save = job
    cfg = RealTrainConfig(**{**cfg_d, "out": Path(cfg_d["out"])})
    path = run_file(cfg, env, arm, seed, lr)
    if path.exists():
        try:
            rows = json.loads(path.read_text())
            if isinstance(rows, list) and rows and all(isinstance(r, dict) for r in rows):
                return rows
        except ValueError:
            pass  # a damaged file: run again
    rows = train_one_real(env, arm, seed, lr, cfg, save)
    R.write_atomic(path, json.dumps(rows))
    return rows


def run_jobs(cfg: RealTrainConfig, jobs: Sequence[tuple[str, str, int, float, bool]], desc: str
             ) -> list[list[dict[str, Any]]]:
    """Run ``(env, arm, seed, lr, save)`` jobs in order of the input: in this process (``jobs=1``), a
    pool of ``cfg.jobs`` spawned processes, or one Ray task each (``cfg.ray``)."""
    cfg_d = {k: v for k, v in asdict(cfg).items()}
    cfg_d["out"] = str(cfg.out)
    payload = [(e, a, s, lr, cfg_d, save) for e, a, s, lr, save in jobs]
    if cfg.ray:
        try:
            import ray
        except ImportError as e:
            from agentgym_credit.errors import DependencyNotInstalled

            raise DependencyNotInstalled("ray", "ray") from e
        if not ray.is_initialized():
            ray.init(address=cfg.ray, ignore_reinit_error=True, log_to_driver=False)
        remote = ray.remote(num_cpus=1)(_run)
        refs = [remote.remote(p) for p in payload]
        return [ray.get(r) for r in R.progress(refs, total=len(refs), desc=desc, enable=cfg.progress)]
    if cfg.jobs > 1:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(cfg.jobs, mp_context=mp.get_context("spawn")) as ex:
            futs = [ex.submit(_run, p) for p in payload]
            return [f.result() for f in R.progress(futs, total=len(futs), desc=desc, enable=cfg.progress)]
    return [_run(p) for p in R.progress(payload, total=len(payload), desc=desc, enable=cfg.progress)]


def pick_rates(cfg: RealTrainConfig, sweep: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Per env and arm, the rate with the highest mean sampled success over the sweep checkpoints: held-out
    (``pick_measure="success"``) or on the fixed training-instance episodes (``"success_trained"``)."""
    key = "auc" if cfg.pick_measure == "success" else "auc_trained"
    out = {}
    for e in cfg.envs:
        for a in cfg.arms:
            score = {lr: np.mean([r[key] for r in sweep if (r["env"], r["arm"], r["lr"]) == (e, a, lr)] or [-1.0])
                     for lr in cfg.lrs}
            out[f"{e}|{a}"] = max(cfg.lrs, key=lambda lr: score[lr])
    return out


def run_benchmark(cfg: RealTrainConfig) -> RealResult:
    """Learning-rate sweep on seeds 1000+ (skipped with one rate), then ``seeds`` fresh seeds at each pick."""
    cfg.validate()
    res = RealResult(load=(os.getloadavg()[0], float("nan")))
    t0 = time.perf_counter()
    if len(cfg.lrs) > 1 and cfg.sweep_seeds > 0:
        jobs = [(e, a, 1000 + s, lr, False) for e in cfg.envs for a in cfg.arms for lr in cfg.lrs
                for s in range(cfg.sweep_seeds)]
        for (e, a, s, lr, _), rows in zip(jobs, run_jobs(cfg, jobs, "train_real: lr sweep")):
            res.sweep.append({"env": e, "arm": a, "lr": lr, "seed": s,
                              "auc": float(np.mean([r["success"] for r in rows])), "final": rows[-1]["success"],
                              "auc_trained": float(np.mean([r["success_trained"] for r in rows])),
                              "final_trained": rows[-1]["success_trained"]})
        res.picked = pick_rates(cfg, res.sweep)
    else:
        res.picked = {f"{e}|{a}": cfg.lrs[0] for e in cfg.envs for a in cfg.arms}
    return _fresh_runs(cfg, res, t0)


def _fresh_runs(cfg: RealTrainConfig, res: RealResult, t0: float) -> RealResult:
    jobs = [(e, a, s, res.picked[f"{e}|{a}"], cfg.save_policies) for e in cfg.envs
            for s in range(cfg.seed_base, cfg.seed_base + cfg.seeds) for a in cfg.arms]
    for rows in run_jobs(cfg, jobs, "train_real"):
        res.rows.extend(rows)
    res.seconds = time.perf_counter() - t0
    res.load = (res.load[0], os.getloadavg()[0])
    return res


def finished_runs(cfg: RealTrainConfig, picks: dict[str, float] | None = None) -> tuple[RealResult, list[str]]:
    """The rows of the study's runs that are already finished (its run files), running nothing, and the
    runs still missing (``env/arm/seed``): a stopped study's report, before it is resumed."""
    import json

    res = RealResult(load=(os.getloadavg()[0], os.getloadavg()[0]))
    res.picked = {f"{e}|{a}": (picks or {}).get(f"{e}/{a}", (picks or {}).get(a, cfg.lrs[0]))
                  for e in cfg.envs for a in cfg.arms}
    missing = []
    for e in cfg.envs:
        for s in range(cfg.seed_base, cfg.seed_base + cfg.seeds):
            for a in cfg.arms:
                path = run_file(cfg, e, a, s, res.picked[f"{e}|{a}"])
                if path.exists():
                    res.rows.extend(json.loads(path.read_text()))
                else:
                    missing.append(f"{e}/{a}/{s}")
    from agentgym_credit.bench.learning.train_real_report import runs_seconds

    res.seconds = runs_seconds(res.rows)[1]  # the finished runs' times summed (they ran one after another)
    return res, missing


def _arm(label: str) -> str:
    """argparse type of ``--arms``: a known estimator or reference arm, else a clear error."""
    try:
        if label in ARMS or is_reference(label):
            return label
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    raise argparse.ArgumentTypeError(f"unknown arm {label!r}; choose from {[*ARMS, *REFERENCES, 'grpo-dilute[q]']}")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="agentgym-credit bench train_real",
                                description="Train the CPU text policy on ALFWorld / WebShop with each credit estimator.")
    d = RealTrainConfig()
    p.add_argument("--quick", action="store_true", help="tiny budgets, 2 seeds, WebShop (a smoke test)")
    p.add_argument("--envs", nargs="+", choices=sorted(REAL_ENVS), default=None)
    p.add_argument("--arms", nargs="+", type=_arm, default=None,
                   help=f"estimator arms ({', '.join(ARMS)}); 'null' (random-sign advantages), 'imitate', "
                        "'imitate-path' (expert imitation) and 'grpo-dilute[q]' (GRPO with a share q of each "
                        "update's groups given no information) check the metric")
    p.add_argument("--policy", choices=POLICIES, default=None, help="text (numpy, default) or neural (torch, CPU)")
    p.add_argument("--step", choices=STEPS, default=None,
                   help="rms: --lrs are rates on RMS-scaled advantages (default); kl: --lrs are the mean "
                        "KL(pi_old||pi_new) each update must reach (line search on the step size)")
    p.add_argument("--min-updates", type=int, default=None, help="at least this many updates per run")
    p.add_argument("--phase", choices=PHASES, default=None,
                   help="which task instances: exploration (default) or the fresh confirmation ones")
    p.add_argument("--seeds", type=int, default=None, help=f"fresh seeds per arm (default {d.seeds})")
    p.add_argument("--seed-base", type=int, default=None, help="first fresh seed (default 0)")
    p.add_argument("--sweep-seeds", type=int, default=None, help=f"seeds per rate in the sweep (default {d.sweep_seeds})")
    p.add_argument("--lrs", type=float, nargs="+", default=None, help=f"rates swept (default {d.lrs}; one: no sweep)")
    p.add_argument("--lr-picks", nargs="+", default=None, metavar="[ENV/]ARM=LR",
                   help="fixed rates per arm, or per env and arm (e.g. picked in an exploration run): no sweep")
    p.add_argument("--budget-steps", type=int, default=None, help=f"env steps per run (default {d.budget_steps})")
    p.add_argument("--groups", type=int, default=None)
    p.add_argument("--group-size", type=int, default=None)
    p.add_argument("--train-tasks", type=int, default=None)
    p.add_argument("--eval-rollouts", type=int, default=None, help="sampled episodes per held-out instance")
    p.add_argument("--checkpoints", type=int, default=None)
    p.add_argument("--eval-limit", type=int, default=None, help="at most this many held-out instances (default: all)")
    p.add_argument("--train-eval-rollouts", type=int, default=None,
                   help="fixed sampled episodes per training instance at each checkpoint (default 2; 0: none)")
    p.add_argument("--expert-bonus", type=float, default=None, help=f"the prior's bonus (default {d.expert_bonus})")
    p.add_argument("--parts", nargs="+", choices=PARTS, default=None, help="learned parts (default linear residual; match adds goal-match features)")
    p.add_argument("--jobs", type=int, default=None, help="runs in parallel processes on this machine")
    p.add_argument("--ray", default=None, metavar="ADDRESS", help="run each training run as a Ray task ('auto')")
    p.add_argument("--target", nargs="+", default=None, metavar="ENV=SUCCESS",
                   help="held-out sampled success whose env steps are compared (state it before the run)")
    p.add_argument("--target-measure", choices=("success", "success_trained"), default=None,
                   help="what --target is on: held-out (default) or the fixed training-instance episodes")
    p.add_argument("--primary", nargs="+", default=None, metavar="A:B",
                   help="primary comparisons (env steps to target, A vs B, per env), Holm over this family alone")
    p.add_argument("--primary-measure", default=None,
                   choices=("steps", "auc_trained", "final_trained", "auc", "final"),
                   help="what the primary family compares (default steps to --target)")
    p.add_argument("--reward", choices=REWARDS, default=None,
                   help="what the arms learn from: verl-agent's 10-per-win (default) or the env's own reward")
    p.add_argument("--pick-measure", choices=("success", "success_trained"), default=None,
                   help="what the lr sweep maximizes: held-out success (default) or the training-instance episodes")
    p.add_argument("--predictions", type=Path, default=None, help="markdown file with the predictions, written before")
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--name", default=None)
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--no-save", action="store_true", help="do not save the learned policies")
    p.add_argument("--from-csv", type=Path, default=None, help="re-render the report from its CSV (no training)")
    p.add_argument("--finished-only", action="store_true",
                   help="report the study's finished runs only (its run files), running nothing; lists the missing")
    return p


def _pairs(items: Sequence[str] | None, what: str) -> dict[str, float]:
    out = {}
    for it in items or ():
        k, sep, v = it.partition("=")
        if not sep:
            raise ValueError(f"{what} takes NAME=VALUE, got {it!r}")
        out[k] = float(v)
    return out


def config_from_args(argv: Sequence[str]) -> tuple[RealTrainConfig, argparse.Namespace]:
    args = build_parser().parse_args(list(argv))
    kw: dict[str, Any] = {"progress": not args.no_progress, "save_policies": not args.no_save,
                          "command": "agentgym-credit bench train_real " + " ".join(argv)}
    if args.quick:
        kw.update(seeds=2, sweep_seeds=0, lrs=(0.3,), budget_steps=2_000, groups=4, group_size=4, train_tasks=8,
                  checkpoints=2, eval_rollouts=1, eval_limit=20, out=Path("agc-bench"))
    kw |= R.given_options(args, ("policy", "step", "min_updates", "phase", "seeds", "seed_base", "sweep_seeds",
                                 "budget_steps", "groups", "group_size", "train_tasks", "eval_rollouts", "checkpoints",
                                 "expert_bonus", "jobs", "ray", "predictions", "out", "name", "target_measure",
                                 "train_eval_rollouts", "eval_limit", "primary_measure", "pick_measure", "reward"),
                          ("envs", "arms", "lrs", "parts", "primary"))
    kw["target"] = _pairs(args.target, "--target")
    return RealTrainConfig(**kw), args


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``agentgym-credit bench train_real``."""
    from agentgym_credit.bench.learning.train_real_report import read_result, write_report

    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        cfg, args = config_from_args(argv)
        if args.from_csv is not None:  # the recorded run's options first, this call's after them (they win)
            cfg, args = config_from_args(R.recorded_options(args.from_csv.with_suffix(".md")) + argv)
        picks = _pairs(args.lr_picks, "--lr-picks")
        for k in picks:
            e, _, a = k.rpartition("/")
            if (a not in ARMS and not is_reference(a)) or (e and e not in REAL_ENVS):
                raise ValueError(f"--lr-picks: unknown env or arm in {k!r}")
        cfg.validate()
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.from_csv is not None:
        res = read_result(args.from_csv)
        cfg = replace(cfg, envs=tuple(dict.fromkeys(r["env"] for r in res.rows)),
                      arms=tuple(dict.fromkeys(r["arm"] for r in res.rows)),
                      command=R.read_command(args.from_csv.with_suffix(".md")) or cfg.command)
    elif args.finished_only:
        res, todo = finished_runs(cfg, picks)
        n_done = len({(r["env"], r["arm"], r["seed"]) for r in res.rows})
        paths = write_report(cfg, res)
        note = (f"## Study state\n\nStopped before it finished: {n_done} runs finished, {len(todo)} missing "
                f"({', '.join(todo) or 'none'}). The tables above hold the finished runs only (paired comparisons "
                f"over the seeds both arms finished); 'Wall time' is the finished runs' times summed. The same "
                f"command without `--finished-only` resumes the study (finished runs are kept).\n")
        R.write_section(next(p for p in paths if p.suffix == ".md"), f"state-{cfg.phase}", note)
        print(f"finished {n_done} runs; missing {len(todo)}: {' '.join(todo)}")
        return 0
    elif picks:
        missing = [f"{e}/{a}" for e in cfg.envs for a in cfg.arms if f"{e}/{a}" not in picks and a not in picks]
        if missing:
            print(f"error: --lr-picks lacks {missing}", file=sys.stderr)
            return 2
        res = run_picked(cfg, picks)
    else:
        res = run_benchmark(cfg)
    paths = write_report(cfg, res)
    md = next(p for p in paths if p.suffix == ".md")
    if args.from_csv is None and f"<!-- state-{cfg.phase}:start -->" in md.read_text():  # ran every run: now complete
        n = len({(r["env"], r["arm"], r["seed"]) for r in res.rows})
        R.write_section(md, f"state-{cfg.phase}", f"## Study state\n\nComplete: all {n} runs finished (earlier "
                        f"renders of this report held the finished runs only, with `--finished-only`).\n")
    print(f"wrote {', '.join(str(p) for p in paths)} in {res.seconds:.1f} s")
    return 0


def run_picked(cfg: RealTrainConfig, picks: dict[str, float]) -> RealResult:
    """The fresh-seed runs at given rates (a confirmatory run uses the exploration's picks)."""
    cfg.validate()
    res = RealResult(load=(os.getloadavg()[0], float("nan")))
    res.picked = {f"{e}|{a}": picks.get(f"{e}/{a}", picks.get(a)) for e in cfg.envs for a in cfg.arms}
    return _fresh_runs(cfg, res, time.perf_counter())


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())


__all__ = ["RealEnv", "REAL_ENVS", "ARMS", "PHASES", "RealTrainConfig", "RealResult", "arm_call", "make_policy",
           "policy_step", "arm_advantages",
           "train_instances", "training_reward", "evaluate", "policy_path", "run_file", "train_one_real", "run_jobs", "pick_rates",
           "run_benchmark", "run_picked", "finished_runs", "build_parser", "config_from_args", "main"]
