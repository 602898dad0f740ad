"""``agentgym-credit bench credit_confirm``: the pre-registered comparison of credit estimators against
Monte-Carlo A^π on ALFWorld and WebShop, its exploration, and the recomputation from saved rows.

Per env: groups of N = 8 rollouts of the behaviour policy (:data:`TRAINEE`, a stand-in for an agent in
training: history-dependent, mixed success inside a group), ``rows_per_group`` scored rows per group with
the common-random-numbers truth (:func:`~agentgym_credit.truth.crn.estimate_crn`), every estimator of
:func:`estimators` on the same rows. Groups run in chunks; after each chunk every scored row so far is
saved (``<out>/credit_confirm_<stage>_rows.parquet``: env, cell, group, row, truth, its SE, every
estimator's advantage — :mod:`.confirm_stats`), so a run stopped early keeps what it finished, and
``--recompute FILE`` gives every table and p-value from that file alone.

Stages (fixed before any run; :data:`STAGES`): ``explore`` (seed 0, ALFWorld generated games 0-11,
WebShop train goals 0-63) for effects, costs and the truth's precision; ``confirm`` (seed 1, fresh games
100-399 and goals 200-499) for the pre-registered primary family. ``--compare-truth`` also runs the
independent-strata truth (:func:`~agentgym_credit.truth.montecarlo.estimate`, K = 6 + 6 rest: the earlier
bench's) on the same rows: the precision-per-env-step comparison.

Cluster: ``--backend ray --workers W`` runs the collection and every continuation on Ray actors (a running
cluster: ``ray start --head`` on one machine, ``ray start --address=<head>:6379`` on the others, then
``RAY_ADDRESS=<head>:6379 agentgym-credit bench credit_confirm --backend ray --workers 64``); every row
draws from its own generator, so the saved rows are the same on sync, subprocess and Ray.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_credit.bench.montecarlo import confirm_stats as S
from agentgym_credit.bench.montecarlo.config import DEV_GAMES, ENVS
from agentgym_credit.bench.montecarlo.credit_real import estimator_table, pick_rows
from agentgym_credit.bench.stats.report import check_known
from agentgym_credit.credit import advantages, step_returns
from agentgym_credit.credit.steps import StepArrays
from agentgym_credit.truth.crn import CRNConfig, estimate_crn
from agentgym_credit.truth.montecarlo import MCConfig, estimate
from agentgym_credit.truth.policies import RolloutPolicy, SnapshotPolicy, TraineeStandIn
from agentgym_credit.truth.text_only import TEXT_ONLY
from agentgym_credit.wrappers.collector import GroupedRolloutCollector

TRAINEE: dict[str, TraineeStandIn] = {
    "alfworld": TraineeStandIn(epsilon=0.1, lapse=0.75, commit=0.8),
    "webshop": TraineeStandIn(epsilon=0.1, lapse=0.5, commit=0.8),
}
"""The behaviour policy per env family (lapse rates set on the exploration's games for 30-70% success:
measured 0.65 on ALFWorld generated games 0-11 and 0.41 on WebShop goals 0-23, 4 rollouts each)."""


@dataclass(frozen=True)
class Stage:
    """Seed and task ids of a stage (exploration and confirmation never share games, goals or seeds)."""

    seed: int
    tasks: dict[str, tuple[int, ...]]
    policy: str = "trainee"  # "trainee" (:data:`TRAINEE`) or "text-only" (:data:`TEXT_ONLY_POLICY`)
    names: dict[str, str] = field(default_factory=dict)  # text-only: env family -> TEXT_ONLY name, if not the default


STAGES: dict[str, Stage] = {
    "explore": Stage(0, {"alfworld-gen": tuple(range(12)), "webshop": tuple(range(64))}),
    "confirm": Stage(1, {"alfworld-gen": tuple(range(100, 400)), "webshop": tuple(range(200, 500))}),
    "textonly": Stage(2, {"alfworld-dev": tuple(range(DEV_GAMES)), "webshop": tuple(range(24, 500))}, "text-only"),
    "textonly_alfworld": Stage(3, {"alfworld-dev": tuple(range(DEV_GAMES))}, "text-only",
                               {"alfworld": "text-imitation-alfworld"}),
}
"""``textonly`` (issue 41.4): a behaviour policy that sees text only, on the real ALFWorld dev games (the 19
playable ones, :data:`~.config.DEV_GAMES`; group g plays game g mod 19) and the WebShop train goals its weights
were not set on (goals 0-23 were). ``textonly_alfworld``: the same ALFWorld dev games under the learned
text-only policy ``text-imitation-alfworld`` (it imitated the expert on dev games 0-11:
:mod:`.text_imitation`), fresh seed 3."""

TEXT_ONLY_POLICY: dict[str, str] = {"alfworld": "text-scorer-alfworld", "webshop": "text-scorer-webshop"}
"""The text-only behaviour policy per env family (:data:`~agentgym_credit.truth.text_only.TEXT_ONLY`)."""


def behaviour(stage: Stage, env_name: str) -> SnapshotPolicy:
    """The stage's behaviour policy on ``env_name``."""
    if stage.policy == "text-only":
        fam = family(env_name)
        return TEXT_ONLY[stage.names.get(fam, TEXT_ONLY_POLICY[fam])]
    return TRAINEE[family(env_name)]


def estimators(gamma: float) -> dict[str, Callable[[StepArrays], np.ndarray]]:
    """Name -> default advantages: the earlier bench's estimators plus ``graph[obs]`` (graph credit on
    ``obs_key`` with its defaults) and ``verl-agent`` (GiGPO as verl-agent computes it)."""
    out = {k: f for k, (f, _) in estimator_table(gamma).items()}
    out["graph[obs]"] = lambda s: advantages("graph", s, gamma=gamma, key="obs_key")
    out["verl-agent"] = lambda s: advantages("verl-agent", s, gamma=gamma)
    return out


@dataclass
class ConfirmConfig:
    """What :func:`run` runs."""

    stage: str = "confirm"
    envs: tuple[str, ...] = ("alfworld-gen", "webshop")
    groups: dict[str, int] = field(default_factory=lambda: {"alfworld-gen": 80, "alfworld-dev": 100, "webshop": 90})
    rows_per_group: dict[str, int] = field(default_factory=lambda: {"alfworld-gen": 2, "alfworld-dev": 2, "webshop": 4})
    chunk: dict[str, int] = field(default_factory=lambda: {"alfworld-gen": 4, "alfworld-dev": 4, "webshop": 15})
    start: dict[str, int] = field(default_factory=dict)  # first group index per env (a pilot's groups left out)
    n: int = 8
    k: int = 8
    extra: float = 1.0
    gamma: float = 0.95
    history_depth: int = 3
    compare_truth: bool = False
    backend: str = "subprocess"
    workers: int = 2
    slots: int = 16
    deadline: float | None = None  # time.time() after which no new chunk starts
    resume: bool = False  # keep the rows already in rows_path and run only the groups they lack
    out: Path = Path("benchmarks/montecarlo")
    progress: bool = True

    def validate(self) -> None:
        check_known("stage", [self.stage], sorted(STAGES))
        for e in self.envs:
            if e not in STAGES[self.stage].tasks:
                raise ValueError(f"env {e!r} is not in stage {self.stage!r}; choose from {sorted(STAGES[self.stage].tasks)}")
        if self.n < 2:
            raise ValueError(f"n must be >= 2, got {self.n}")

    def check_tasks(self) -> None:
        """Before any chunk: reset each env on the last task its planned groups play (a ``ValueError`` naming the
        task if it cannot), so a stage listing a task its env lacks stops here, not hours in."""
        for e in self.envs:
            tasks, first = STAGES[self.stage].tasks[e], self.start.get(e, 0)
            last = max(tasks[g % len(tasks)] for g in range(first, first + max(1, self.groups.get(e, 1))))
            env = ENVS[e].factory()
            try:
                env.reset(seed=0, options={"task": last})
            except (ValueError, TypeError) as err:
                raise ValueError(f"stage {self.stage!r}, env {e!r}: task {last!r} cannot be played: {err}") from err
            finally:
                env.close()

    @property
    def rows_path(self) -> Path:
        return self.out / f"credit_confirm_{self.stage}_rows.parquet"


def _log(cfg: ConfirmConfig, msg: str) -> None:
    if cfg.progress:
        print(f"[credit_confirm {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def family(env: str) -> str:
    return "alfworld" if env.startswith("alfworld") else env


def group_seeds(seed: int, count: int) -> list[int]:
    """The seed of each group (the first ``count`` of one fixed stream: a chunked run gets the same ones)."""
    return [int(x) for x in np.random.SeedSequence([seed, 32]).generate_state(count, np.uint32)]


def run_chunk(cfg: ConfirmConfig, env_name: str, first: int, count: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Groups ``first .. first + count − 1`` of ``env_name``: collect, truth, every estimator; the rows and
    the chunk's costs."""
    env, stage = ENVS[env_name], STAGES[cfg.stage]
    pol = behaviour(stage, env_name)
    tasks = [stage.tasks[env_name][g % len(stage.tasks[env_name])] for g in range(first, first + count)]
    seeds = group_seeds(stage.seed, first + count)[first:]
    t0 = time.perf_counter()
    with GroupedRolloutCollector(env.factory, group_size=cfg.n, backend=cfg.backend, num_workers=cfg.workers,
                                 max_steps=env.max_steps, history_depth=cfg.history_depth, progress=False,
                                 seed=stage.seed) as col:
        batch = col.collect(RolloutPolicy(pol, seed=stage.seed), tasks=tasks, seeds=seeds)
        if batch.traj.failed.any():
            raise RuntimeError(f"{env_name}: {batch.failure_summary()}")
        t1 = time.perf_counter()
        rows = pick_rows(batch, cfg.n, cfg.rows_per_group[env_name] * count, stage.seed * 100003 + first)
        truth = estimate_crn(col.backend, batch, rows, pol,
                             CRNConfig(k=cfg.k, extra=cfg.extra, gamma=cfg.gamma, max_steps=env.max_steps,
                                       slots=cfg.slots, seed=stage.seed))
        t2 = time.perf_counter()
        old = None
        if cfg.compare_truth:
            old = estimate(col.backend, batch, rows, pol, MCConfig(k=6, k_rest=6, top=1, gamma=cfg.gamma,
                                                                   max_steps=env.max_steps, slots=cfg.slots,
                                                                   seed=stage.seed))
        t3 = time.perf_counter()
    steps = batch.steps
    ret = np.asarray(step_returns(steps, cfg.gamma))[rows]
    ests = {name: np.asarray(f(steps), dtype=np.float64)[rows] for name, f in estimators(cfg.gamma).items()}
    seed_at = {s: first + i for i, s in enumerate(seeds)}  # the group's index in the stage, from its seed
    gid = {int(batch.group_id[r]): seed_at[int(batch.traj.seed[batch.traj_id[r]])] for r in range(len(batch))}
    won = batch.traj.won[batch.traj_id[rows]]
    out = []
    for i, r in enumerate(rows):
        rec = {"env": env_name, "cell": f"{env_name}/{pol.name}", "policy": pol.name, "stage": cfg.stage,
               "group": gid[int(batch.group_id[r])], "task": str(batch.task_id[r]),
               "copy": int(batch.traj.copy[batch.traj_id[r]]), "t": int(batch.t[r]), "row": int(r),
               "truth": float(truth.adv[i]), "truth_se": float(truth.adv_se[i]),
               "truth_half": float(truth.adv_half[i]), "truth_steps": int(truth.env_steps[i]),
               "won": bool(won[i]), "return_t": float(ret[i])}
        if old is not None:
            rec.update({"truth_old": float(old.adv[i]), "truth_old_se": float(old.adv_se[i]),
                        "truth_old_steps": int(old.env_steps[i])})
        rec.update({S.ADV + k: float(v[i]) for k, v in ests.items()})
        out.append(rec)
    wonm = batch.traj.won.reshape(count, cfg.n) if len(batch.traj.won) == count * cfg.n else None
    info = {"env": env_name, "first": first, "groups": count, "rows": len(rows), "collect_steps": len(batch),
            "truth_steps": int(truth.env_steps.sum()), "replay_steps": truth.replay_steps,
            "old_truth_steps": int(old.env_steps.sum()) if old is not None else 0,
            "collect_s": t1 - t0, "truth_s": t2 - t1, "old_truth_s": t3 - t2, "seconds": time.perf_counter() - t0,
            "success": float(batch.traj.won.mean()),
            "mixed_groups": int(np.sum((wonm.sum(1) > 0) & (wonm.sum(1) < cfg.n))) if wonm is not None else -1}
    return out, info


def saved_groups(cfg: ConfirmConfig) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """``--resume``: the rows already in ``cfg.rows_path`` (none if it does not exist) and, per env of ``cfg``,
    how many of its planned groups they hold. A :class:`~.confirm_stats.RowsFileError` if the file holds
    another stage's rows or its groups are not the first ones of the plan (groups ``start .. start + d − 1``,
    as a run writes them), so a resumed run never mixes plans."""
    if not cfg.rows_path.exists():
        return [], {}
    import pyarrow.parquet as pq

    try:
        rows = pq.read_table(cfg.rows_path).to_pylist()
    except Exception as e:  # noqa: BLE001 (pyarrow raises several kinds on a bad file)
        raise S.RowsFileError(f"cannot resume from {str(cfg.rows_path)!r}: {e}") from e
    stages = {r.get("stage") for r in rows}
    if stages - {cfg.stage}:
        raise S.RowsFileError(f"{str(cfg.rows_path)!r} holds rows of stage(s) {sorted(map(str, stages))}, "
                              f"not only {cfg.stage!r}")
    done = {}
    for e in {str(r["env"]) for r in rows}:
        got, first = sorted({int(r["group"]) for r in rows if r["env"] == e}), cfg.start.get(e, 0)
        if got != list(range(first, first + len(got))):
            raise S.RowsFileError(f"{str(cfg.rows_path)!r}: {e}'s saved groups {got[0]}-{got[-1]} ({len(got)}) are "
                                  f"not groups {first}.. of this plan (--start)")
        done[e] = len(got)
    return rows, done


def run(cfg: ConfirmConfig) -> dict[str, Any]:
    """Every env of ``cfg`` in chunks (rows saved after each chunk); stops starting chunks at ``deadline``;
    with ``cfg.resume`` it keeps the saved rows and runs only the planned groups they lack."""
    cfg.validate()
    rows, already = saved_groups(cfg) if cfg.resume else ([], {})
    infos: list[dict[str, Any]] = []
    t0 = time.time()
    load0 = os.getloadavg()[0]
    for e in cfg.envs:
        total, step, first = cfg.groups[e], cfg.chunk.get(e, 4), cfg.start.get(e, 0)
        done = min(already.get(e, 0), total)
        if done:
            _log(cfg, f"{e}: resuming after {done} saved groups")
        while done < total:
            if cfg.deadline is not None and time.time() > cfg.deadline:
                _log(cfg, f"{e}: deadline reached after {done} of {total} groups")
                break
            count = min(step, total - done)
            r, info = run_chunk(cfg, e, first + done, count)
            rows += r
            infos.append(info)
            done += count
            S.save_rows(cfg.rows_path, rows)
            per = sum(i["seconds"] for i in infos if i["env"] == e) / sum(i["groups"] for i in infos if i["env"] == e)
            _log(cfg, f"{e}: {done}/{total} groups ({100 * done / total:.0f}%), {per:.1f} s per group, "
                 f"ETA {per * (total - done) / 60:.1f} min; success {info['success']:.2f}, "
                 f"mixed groups {info['mixed_groups']}/{count}")
    return {"rows": rows, "chunks": infos, "seconds": time.time() - t0, "load": (load0, os.getloadavg()[0]),
            "policies": {e: repr(behaviour(STAGES[cfg.stage], e)) for e in cfg.envs}}


def synthetic_check(rows: int = 300, seed: int = 0) -> list[dict[str, Any]]:
    """Both truths against the exact oracle on synthetic tasks, on the same rows (softmax-Q* at T = 0.3 on
    GridWorld and AliasedGrid, uniform on AliasedGrid; 4 groups of 4): coverage of the 95% intervals, and
    precision per env step as 1 / (mean squared error against the exact A^π × env steps) and as
    1 / (mean se² × env steps)."""
    import gymnasium as gym

    from agentgym_credit.credit.oracle import evaluate_policy
    from agentgym_credit.credit.policies import NoisyOptimalPolicy, UniformPolicy
    from agentgym_credit.truth.policies import TabularPolicy

    out = []
    for env_id, policy in (("credit/GridWorld-v0", NoisyOptimalPolicy(0.3)),
                           ("credit/AliasedGrid-v0", NoisyOptimalPolicy(0.3)), ("credit/AliasedGrid-v0", UniformPolicy())):
        base = gym.make(env_id).unwrapped
        tasks = base.task_ids()[:4]
        models = {t: base.model_for(t) for t in tasks}
        tp = TabularPolicy(policy, models.__getitem__)
        with GroupedRolloutCollector(env_id, group_size=4, max_steps=int(models[tasks[0]].horizon or 100),
                                     progress=False, seed=seed) as col:
            batch = col.collect(RolloutPolicy(tp, seed=seed), tasks=tasks, seeds=[seed * 100 + g for g in range(4)])
            pick = np.random.default_rng([seed, 1]).choice(len(batch), size=min(rows, len(batch)), replace=False)
            old = estimate(col.backend, batch, pick, tp, MCConfig(k=8, k_rest=8, top=1, gamma=0.95, seed=seed))
            new = estimate_crn(col.backend, batch, pick, tp, CRNConfig(k=8, gamma=0.95, seed=seed))
        vals = {t: evaluate_policy(m, policy, gamma=0.95) for t, m in models.items()}
        exact = np.array([float(vals[batch.task_id[r]].advantages_for_steps(
            [int(batch.state_index[r])], [models[batch.task_id[r]].action_index(int(batch.state_index[r]), batch.action[r])],
            [int(batch.t[r])])[0]) for r in pick])
        rec: dict[str, Any] = {"task": env_id, "policy": repr(policy), "rows": len(pick)}
        for name, t in (("strata", old), ("crn", new)):
            rec[f"{name}_coverage"] = float(t.covers(exact).mean())
            rec[f"{name}_mse"] = float(np.mean((t.adv - exact) ** 2))
            rec[f"{name}_se2"] = float(np.mean(t.adv_se**2))
            rec[f"{name}_steps"] = int(t.env_steps.sum())
        rec["gain_mse"] = (rec["strata_mse"] * rec["strata_steps"]) / (rec["crn_mse"] * rec["crn_steps"])
        rec["gain_se"] = (rec["strata_se2"] * rec["strata_steps"]) / (rec["crn_se2"] * rec["crn_steps"])
        out.append(rec)
    return out


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="agentgym-credit bench credit_confirm", description=__doc__.splitlines()[0])
    p.add_argument("--stage", choices=sorted(STAGES), default="confirm")
    p.add_argument("--envs", nargs="+", default=None)
    p.add_argument("--groups", nargs="+", default=None, metavar="ENV=G", help="groups per env, e.g. webshop=90")
    p.add_argument("--rows-per-group", nargs="+", default=None, metavar="ENV=R")
    p.add_argument("--start", nargs="+", default=None, metavar="ENV=G",
                   help="first group index per env (leave out a pilot's groups 0..G-1)")
    p.add_argument("--compare-truth", action="store_true", help="also the independent-strata truth on the same rows")
    p.add_argument("--backend", choices=("sync", "subprocess", "ray"), default=None)
    p.add_argument("--workers", type=int, default=None)
    p.add_argument("--minutes", type=float, default=None, help="start no new chunk after this many minutes")
    p.add_argument("--out", type=Path, default=Path("benchmarks/montecarlo"))
    p.add_argument("--resume", action="store_true", help="keep the rows already saved in OUT for this stage and "
                   "run only the planned groups they lack (a stopped run goes on where it stopped)")
    p.add_argument("--recompute", nargs="+", type=Path, default=None, metavar="ROWS",
                   help="print every table and p-value from saved rows file(s) alone, run nothing")
    p.add_argument("--robustness-into", type=Path, default=None, metavar="MD",
                   help="with --recompute: also write the primary family's robustness section and the groups "
                   "needed at its observed effects into report MD")
    p.add_argument("--report-into", type=Path, default=None, metavar="MD",
                   help="with --recompute: write a whole report from the rows alone (a run that stopped before its "
                   "report: setup with --note, cells, primary family, robustness, observed-effect power, accuracy)")
    p.add_argument("--note", nargs="*", default=(), help="setup lines of --report-into (what ran, what was cut)")
    p.add_argument("--synthetic-check", action="store_true", help="only the two truths against the exact oracle "
                   "on synthetic tasks (coverage, precision per env step): credit_truth_precision.md")
    p.add_argument("--boot", type=int, default=400, help="bootstrap replicates of the comparisons")
    p.add_argument("--no-progress", action="store_true")
    return p


def _pairs(items: Sequence[str] | None, cast: Callable[[str], Any] = int) -> dict[str, Any]:
    out = {}
    for it in items or ():
        k, _, v = it.partition("=")
        if not v:
            raise ValueError(f"expected ENV=VALUE, got {it!r}")
        out[k] = cast(v)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``agentgym-credit bench credit_confirm`` (the report: :mod:`.confirm_report`)."""
    from agentgym_credit.bench.montecarlo import confirm_report as CR

    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    if args.recompute:
        try:
            res = S.recompute(args.recompute, boot=args.boot)
        except S.RowsFileError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        print(CR.recompute_text(res, S.load_rows(args.recompute)))
        if args.report_into is not None:
            shown = argv[:argv.index("--note")] + ["--note", "…"] if "--note" in argv else argv  # notes: in the setup
            CR.write_from_rows(args.report_into, args.recompute, res, "agentgym-credit bench credit_confirm "
                               + " ".join(shown), args.note)
        elif args.robustness_into is not None:
            CR.write_robustness(args.robustness_into, res["primary"],
                                "agentgym-credit bench credit_confirm " + " ".join(argv))
        return 0
    if args.synthetic_check:
        t0 = time.time()
        path = CR.write_synthetic(args.out / "credit_truth_precision.md", synthetic_check(),
                                  "agentgym-credit bench credit_confirm " + " ".join(argv), time.time() - t0)
        print(f"wrote {path}")
        return 0
    cfg = ConfirmConfig(stage=args.stage, out=args.out, progress=not args.no_progress,
                        compare_truth=args.compare_truth, resume=args.resume)
    if args.envs is None and args.stage in STAGES:
        cfg.envs = tuple(e for e in cfg.envs if e in STAGES[args.stage].tasks) or tuple(STAGES[args.stage].tasks)
    try:
        if args.envs:
            cfg.envs = tuple(args.envs)
        cfg.groups.update(_pairs(args.groups))
        cfg.rows_per_group.update(_pairs(args.rows_per_group))
        cfg.start.update(_pairs(args.start))
        cfg.validate()
        cfg.check_tasks()
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.backend:
        cfg.backend = args.backend
    if args.workers:
        cfg.workers = args.workers
    if args.minutes is not None:
        cfg.deadline = time.time() + 60 * args.minutes
    res = run(cfg)
    if not res["chunks"]:  # --resume with every planned group saved, or a deadline before the first chunk
        print(f"nothing ran: {cfg.rows_path} keeps its rows and its report is left as it is")
        return 0
    path = CR.write_report(cfg, res, "agentgym-credit bench credit_confirm " + " ".join(argv))
    print(f"wrote {cfg.rows_path} and {path} in {res['seconds']:.0f} s (load {os.getloadavg()[0]:.1f})")
    return 0


__all__ = ["TRAINEE", "STAGES", "Stage", "ConfirmConfig", "estimators", "group_seeds", "run_chunk", "saved_groups", "run",
           "build_parser", "main"]

if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
