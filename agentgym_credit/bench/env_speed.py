"""Env speed benchmark: steps per second of the synthetic envs, bare and under ``HistoryFingerprint``.

``python -m agentgym_credit.bench.env_speed`` writes ``benchmarks/env_speed.md``. Each env is made
with ``gym.make`` (default parameters, as a user gets it) and stepped in one process with random
admissible actions; bare and wrapped (``HistoryFingerprint(depth=4)``) runs alternate, ``--repeats``
times each, and the table reports the median throughput of each, the median ratio of back-to-back
pairs and the wrapper's cost per step. Every task's model is built before timing (model build time is reported on its own).

- :func:`measure` — steps/second of one env for a fixed action stream;
- :func:`run` — the whole table as a list of dict rows;
- :func:`main` — command line entry point.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import agentgym_credit  # noqa: F401  (registers credit/*)
from agentgym_credit.bench.report import machine_lines, markdown_table, progress
from agentgym_credit.wrappers.history import HistoryFingerprint

SYNTHETIC_IDS: tuple[str, ...] = (
    "credit/GridWorld-v0",
    "credit/AliasedGrid-v0",
    "credit/CueCorridor-v0",
    "credit/Household-v0",
)


def measure(env: gym.Env, n_steps: int, seed: int = 0) -> float:
    """Steps per second over ``n_steps`` random admissible actions (resets included, as in rollouts)."""
    u = np.random.default_rng(seed).random(n_steps).tolist()
    _, info = env.reset(seed=seed)
    t0 = time.perf_counter()
    for x in u:
        acts = info["admissible_actions"]
        _, _, term, trunc, info = env.step(acts[int(x * len(acts))])
        if term or trunc:
            _, info = env.reset()
    return n_steps / (time.perf_counter() - t0)


def _build_all(env: gym.Env) -> tuple[float, float]:
    """Build every task's model; return (mean seconds per task, mean number of states)."""
    base = env.unwrapped
    t0 = time.perf_counter()
    sizes = [base.model_for(i).n_states for i in range(base.n_tasks)]
    return (time.perf_counter() - t0) / base.n_tasks, float(np.mean(sizes))


def run(env_ids: Sequence[str] = SYNTHETIC_IDS, n_steps: int = 50_000, repeats: int = 3,
        depth: int = 4, show_progress: bool = True) -> list[dict[str, Any]]:
    """Bare vs ``HistoryFingerprint(depth)`` throughput of each env (median of ``repeats`` runs)."""
    rows = []
    for env_id in progress(env_ids, total=len(env_ids), desc="envs", enable=show_progress):
        bare_env = gym.make(env_id)
        build_s, n_states = _build_all(bare_env)
        wrapped_env = HistoryFingerprint(gym.make(env_id), depth=depth)
        measure(bare_env, 2_000)  # warm caches
        measure(wrapped_env, 2_000)
        bare, wrapped = [], []
        for r in range(repeats):
            bare.append(measure(bare_env, n_steps, seed=r))
            wrapped.append(measure(wrapped_env, n_steps, seed=r))
        b, w = statistics.median(bare), statistics.median(wrapped)
        rows.append({
            "env": env_id,
            "tasks": bare_env.unwrapped.n_tasks,
            "states_per_task": n_states,
            "build_ms_per_task": 1e3 * build_s,
            "bare_steps_per_s": b,
            "wrapped_steps_per_s": w,
            "ratio": statistics.median(x / y for x, y in zip(wrapped, bare)),
            "wrapper_us_per_step": 1e6 * (1 / w - 1 / b),
        })
        bare_env.close()
        wrapped_env.close()
    return rows


def _load() -> str:
    try:
        return ", ".join(f"{x:.1f}" for x in os.getloadavg())
    except (AttributeError, OSError):  # not on every platform
        return "unknown"


def to_markdown(rows: list[dict[str, Any]], command: str, n_steps: int, repeats: int, depth: int,
                load: str = "") -> str:
    table = markdown_table(
        ["env", "tasks", "states/task", "model build ms/task", "bare steps/s",
         f"HistoryFingerprint(K={depth}) steps/s", "ratio wrapped/bare", "wrapper µs/step"],
        [[r["env"], r["tasks"], f"{r['states_per_task']:.0f}", f"{r['build_ms_per_task']:.1f}",
          f"{r['bare_steps_per_s']:,.0f}", f"{r['wrapped_steps_per_s']:,.0f}", f"{r['ratio']:.2f}",
          f"{r['wrapper_us_per_step']:.1f}"] for r in rows],
    )
    return "\n".join([
        "# Synthetic env speed",
        "",
        machine_lines(command),
        "",
        f"Single process, `gym.make(env_id)` with default parameters, random admissible actions, "
        f"{n_steps:,} steps per run (resets included), median of {repeats} alternating bare/wrapped runs. "
        "Models of all tasks are built before timing (build time in its own column). "
        "Ratio = median over repeats of wrapped / bare throughput of back-to-back runs; "
        "wrapper µs/step = 1/wrapped − 1/bare (medians).",
        f"System load average (1, 5, 15 min) before the run: {load or 'unknown'} — on a shared machine the "
        "absolute numbers move with it; the ratios less so.",
        "",
        table,
        "",
    ])


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m agentgym_credit.bench.env_speed", description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=50_000, help="steps per timed run")
    p.add_argument("--repeats", type=int, default=3, help="timed runs per env and mode (median reported)")
    p.add_argument("--depth", type=int, default=4, help="HistoryFingerprint depth K")
    p.add_argument("--envs", nargs="+", default=list(SYNTHETIC_IDS), help="env ids to time")
    p.add_argument("--out", default="benchmarks/env_speed.md", help="markdown file to write")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    if args.steps < 1 or args.repeats < 1:
        p.error("--steps and --repeats must be >= 1")
    load = _load()
    rows = run(args.envs, args.steps, args.repeats, args.depth, show_progress=not args.no_progress)
    command = "python -m agentgym_credit.bench.env_speed" + (" " + " ".join(argv) if argv else "")
    if argv is None and len(sys.argv) > 1:
        command = "python -m agentgym_credit.bench.env_speed " + " ".join(sys.argv[1:])
    md = to_markdown(rows, command, args.steps, args.repeats, args.depth, load)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["SYNTHETIC_IDS", "measure", "run", "to_markdown", "main"]
