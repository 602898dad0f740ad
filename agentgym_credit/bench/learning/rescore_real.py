"""``agentgym-credit bench rescore_real``: score the policies a ``bench train_real`` study saved on more
held-out instances than its checkpoints did.

A learning study scores held-out success on a few fixed episodes per checkpoint (ALFWorld: 8 games per
seed), which is enough to compare arms paired over seeds but leaves the start value resting on one small,
fixed draw. This re-scores, after the study, each saved final policy (``<out>/<name>_policies/<env>/<arm>/
seed<S>.npz``) and the start policy (the same prior with its learned parts at zero) on one fixed set of
episodes: ``rollouts`` per instance of ``tasks`` (by default every held-out instance of the phase), reset seeds
and action draws fixed, the same for every policy (:func:`~.train_real.evaluate`). Only held-out instances
can be scored: a range outside the phase's held-out one is refused, so a training game is never reported
as unseen.

Each scored policy is kept in ``<out>/<name>_rescore_runs/`` (named by a digest of the policy file and the
episodes), so an interrupted rescoring resumes. Writes ``<name>_rescored.csv``, a section ``rescored`` in
``<name>_rescored.md`` and a plot.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_credit.bench.learning.real_config import PHASES, REAL_ENVS
from agentgym_credit.bench.stats import metrics as M
from agentgym_credit.bench.stats import report as R
from agentgym_credit.plotting import try_plot_panels
from agentgym_credit.truth.text_policy import TextPolicy

PAIRS = (("graph[state]", "gigpo[state]"), ("gigpo[state]", "grpo"), ("graph[obs]", "verl-agent"))
"""Arm pairs compared (paired over seeds) when both arms were saved: the learning study's named ones."""


@dataclass
class RescoreConfig:
    name: str = "training_alfworld_confirm"   # the study's ``--name``
    out: Path = Path("benchmarks/learning")
    env: str = "alfworld-gen"
    phase: str = "confirmation"
    tasks: tuple[int, int] | None = None       # held-out instances [lo, hi); None: the phase's all
    rollouts: int = 1
    greedy: bool = False
    jobs: int = 1
    progress: bool = True
    command: str = "agentgym-credit bench rescore_real"

    def task_ids(self) -> list[int]:
        lo, hi = self.tasks if self.tasks is not None else REAL_ENVS[self.env].eval_tasks[self.phase]
        return list(range(lo, hi))

    def validate(self) -> None:
        R.check_known("env", [self.env], sorted(REAL_ENVS))
        if self.phase not in PHASES:
            raise ValueError(f"phase must be one of {PHASES}, got {self.phase!r}")
        if self.rollouts < 1 or self.jobs < 1:
            raise ValueError(f"rollouts and jobs must be >= 1, got {self.rollouts} and {self.jobs}")
        lo, hi = REAL_ENVS[self.env].eval_tasks[self.phase]
        if self.tasks is not None:
            a, b = self.tasks
            if not (lo <= a < b <= hi):
                raise ValueError(f"tasks [{a}, {b}) must lie inside the {self.phase} held-out instances [{lo}, {hi}) "
                                 f"of {self.env}: anything else may be a training instance")


def policy_files(cfg: RescoreConfig) -> list[tuple[str, int, Path]]:
    """``(arm, seed, path)`` of every saved policy of the study's env, each checked to be one of it."""
    root = cfg.out / f"{cfg.name}_policies" / cfg.env
    found = []
    for path in sorted(root.glob("*/seed*.npz")):
        _, meta = TextPolicy.load(path)
        if meta.get("env") != cfg.env or meta.get("phase") != cfg.phase:
            raise ValueError(f"{path} holds a policy of env {meta.get('env')!r}, phase {meta.get('phase')!r}: "
                             f"not {cfg.env!r}, {cfg.phase!r}")
        found.append((str(meta["arm"]), int(meta["seed"]), path))
    if not found:
        raise ValueError(f"no saved policies under {root} (run `bench train_real --name {cfg.name}` first)")
    return found


def start_policy(path: Path) -> TextPolicy:
    """The policy before any update: the saved one's prior (same config), learned parts at zero."""
    pol, _ = TextPolicy.load(path)
    pol.w[:] = 0.0
    pol.residual.clear()
    return pol


def _score(job: tuple[str, int, str, bool, dict[str, Any]]) -> dict[str, Any]:
    import agentgym_credit  # noqa: F401  (registers credit/* in a fresh worker process)
    from agentgym_credit.bench.learning.train_real import evaluate
    from agentgym_credit.wrappers import GroupedRolloutCollector

    arm, seed, path_s, is_start, c = job
    path = Path(path_s)
    tasks = list(range(*c["tasks"]))
    digest = hashlib.blake2b(path.read_bytes() + json.dumps([is_start, c["tasks"], c["rollouts"], c["greedy"]]).encode(),
                             digest_size=8).hexdigest()
    keep = Path(c["keep"]) / f"{digest}.json"
    if keep.exists():
        try:
            row = json.loads(keep.read_text())
            if isinstance(row, dict) and "success" in row:
                return row
        except ValueError:
            pass  # a damaged file: score again
    pol = start_policy(path) if is_start else TextPolicy.load(path)[0]
    env = REAL_ENVS[c["env"]]
    col = GroupedRolloutCollector(env.factory, group_size=1, history_depth=0, seed=0, max_steps=env.max_steps,
                                  progress=False)
    t0 = time.process_time()
    try:
        success = evaluate(pol, col, tasks, c["rollouts"], c["greedy"], 0)
    finally:
        col.close()
    row = {"env": c["env"], "arm": "start" if is_start else arm, "seed": -1 if is_start else seed,
           "point": "start" if is_start else "final", "success": success, "episodes": len(tasks) * c["rollouts"],
           "cpu_seconds": time.process_time() - t0}
    R.write_atomic(keep, json.dumps(row))
    return row


def rescore(cfg: RescoreConfig) -> list[dict[str, Any]]:
    """One row per saved policy (``point="final"``) and one for the start policy (``arm="start"``)."""
    cfg.validate()
    files = policy_files(cfg)
    ids = cfg.task_ids()
    c = {"env": cfg.env, "tasks": (ids[0], ids[-1] + 1), "rollouts": cfg.rollouts, "greedy": cfg.greedy,
         "keep": str(cfg.out / f"{cfg.name}_rescore_runs" / cfg.env)}
    jobs = [("start", -1, str(files[0][2]), True, c)] + [(a, s, str(p), False, c) for a, s, p in files]
    if cfg.jobs > 1:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(cfg.jobs, mp_context=mp.get_context("spawn")) as ex:
            futs = [ex.submit(_score, j) for j in jobs]
            return [f.result() for f in R.progress(futs, total=len(futs), desc="rescore", enable=cfg.progress)]
    return [_score(j) for j in R.progress(jobs, total=len(jobs), desc="rescore", enable=cfg.progress)]


def summarize(rows: Sequence[dict[str, Any]]) -> tuple[float, dict[str, tuple[float, float, int]], list[dict[str, Any]]]:
    """The start's success; per arm ``(mean, 95% half-width, seeds)`` of the final success; per pair of
    :data:`PAIRS` both saved, ``a − b`` paired over seeds with its half-width, seeds, p and verdict."""
    start = next(float(r["success"]) for r in rows if r["point"] == "start")
    finals: dict[str, dict[int, float]] = {}
    for r in rows:
        if r["point"] == "final":
            finals.setdefault(str(r["arm"]), {})[int(r["seed"])] = float(r["success"])
    arms = {arm: M.mean_ci(np.array(list(by.values()))) for arm, by in finals.items()}
    pairs = []
    for a, b in PAIRS:
        if a in finals and b in finals:
            seeds = sorted(set(finals[a]) & set(finals[b]))
            d, h, n = M.paired_diff_ci(np.array([finals[a][s] for s in seeds]), np.array([finals[b][s] for s in seeds]))
            p = M.p_from_interval(d, h, n - 1) if n > 1 and math.isfinite(h) else float("nan")
            pairs.append({"a": a, "b": b, "diff": d, "ci": h, "n": n, "p": p, "verdict": M.verdict(d, h)})
    return start, arms, pairs


def write_report(cfg: RescoreConfig, rows: Sequence[dict[str, Any]], seconds: float) -> list[Path]:
    base = cfg.out / f"{cfg.name}_rescored"
    paths = [R.write_csv(base.with_suffix(".csv"), rows)]
    start, arms, pairs = summarize(rows)
    n_ep = rows[0]["episodes"]
    ids = cfg.task_ids()
    table = [[arm, n, R.fmt_num(start), R.fmt_ci(m, h), R.fmt_ci(m - start, h),
              R.fmt_num(m / start) if start > 0 else "-"] for arm, (m, h, n) in arms.items()]
    body = ["## Rescored on more held-out episodes", "", R.machine_lines(cfg.command), "",
            f"Wall time {seconds:.0f} s. Policies: `{cfg.name}_policies/{cfg.env}/` (the study's final ones) and the "
            f"start (the same prior, learned parts at zero). Episodes: {cfg.env} held-out instances {ids[0]}-{ids[-1]} "
            f"x {cfg.rollouts} {'greedy' if cfg.greedy else 'sampled'} = {n_ep} per policy, reset seeds and "
            "action draws fixed, the same for every policy (so the start has no interval).", "",
            R.markdown_table(["arm", "seeds", "start", "final", "final − start", "final / start"], table), ""]
    if pairs:
        body += ["Arms paired over seeds (final; 95% interval, no correction):", "",
                 R.markdown_table(["comparison", "seeds", "diff", "p", "interval says"],
                                  [[f"{q['a']} − {q['b']}", q["n"], R.fmt_ci(q["diff"], q["ci"]), R.fmt_num(q["p"]),
                                    q["verdict"]] for q in pairs]), ""]
    png = try_plot_panels(base.with_suffix(".png"), {
        f"{cfg.env}: held-out success, {n_ep} episodes a policy": {
            arm: ([0.0, 1.0], [start, m], [0.0, h if math.isfinite(h) else 0.0]) for arm, (m, h, _) in arms.items()}},
        xlabel="0 = start, 1 = end of training", ylabel="success (mean, 95% CI over seeds)", ncols=1)
    if png is not None:
        body += [f"![rescored]({png.name})", ""]
    paths.append(R.write_section(base.with_suffix(".md"), "rescored", "\n".join(body),
                                 preamble=f"# bench rescore_real: {cfg.name}\n\n"))
    if png is not None:
        paths.append(png)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    d = RescoreConfig()
    p = argparse.ArgumentParser(prog="agentgym-credit bench rescore_real",
                                description="Score a train_real study's saved policies on more held-out episodes.")
    p.add_argument("--name", default=d.name, help="the study's --name")
    p.add_argument("--out", type=Path, default=d.out, help="the study's --out")
    p.add_argument("--env", choices=sorted(REAL_ENVS), default=d.env)
    p.add_argument("--phase", choices=PHASES, default=d.phase)
    p.add_argument("--tasks", type=int, nargs=2, default=None, metavar=("LO", "HI"),
                   help="held-out instances [LO, HI) (default: the phase's all)")
    p.add_argument("--rollouts", type=int, default=d.rollouts, help="episodes per instance")
    p.add_argument("--greedy", action="store_true", help="the greedy policy (default: sampled)")
    p.add_argument("--jobs", type=int, default=d.jobs)
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    cfg = RescoreConfig(name=args.name, out=args.out, env=args.env, phase=args.phase,
                        tasks=tuple(args.tasks) if args.tasks else None, rollouts=args.rollouts, greedy=args.greedy,
                        jobs=args.jobs, progress=not args.no_progress,
                        command="agentgym-credit bench rescore_real " + " ".join(argv))
    t0 = time.perf_counter()
    try:
        rows = rescore(cfg)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    paths = write_report(cfg, rows, time.perf_counter() - t0)
    print(f"wrote {', '.join(str(x) for x in paths)}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())


__all__ = ["RescoreConfig", "PAIRS", "policy_files", "start_policy", "rescore", "summarize", "write_report", "main"]
