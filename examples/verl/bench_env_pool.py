"""ALFWorld env throughput of ONE verl agent-loop worker, by env pool (``env_pool`` / ``env_workers``).

verl runs every agent loop of a worker on one asyncio event loop; this drives the same env handles the agent
loop uses (:func:`agentgym_credit.integrations.verl.env_pool.env_handle`) from ``--concurrent`` trajectories at
once, each: reset (a generated game, one seed per trajectory), then ``--steps`` random admissible actions. No
LLM: it measures what the env side of a worker can deliver. Writes a markdown table::

    nice python examples/verl/bench_env_pool.py --out benchmarks/speed/verl_env_pool.md
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import subprocess
import sys
import time
from pathlib import Path

from agentgym_credit.integrations.verl import env_pool


async def _trajectory(cfg: dict, seed: int, steps: int, rng: random.Random, log: dict) -> None:
    env = env_pool.env_handle({**cfg, "seed": seed, "task": None})  # as the agent loop: the row's seed and task
    try:
        t0 = time.perf_counter()
        obs, *_rest = await env.call("reset_slot", seed, {}, 0)
        info = _rest[3]
        log["reset_s"].append(time.perf_counter() - t0)
        for _ in range(steps):
            res = await env.call("step_slot", rng.choice(info["admissible_actions"]))
            log["steps"] += 1
            _, _, term, trunc, info, _, _ = res
            if term or trunc:
                break
    finally:
        await env.close()


async def _run(cfg: dict, concurrent: int, steps: int, seed0: int, n: int = 1) -> dict:
    """``concurrent`` trajectories, ``n`` per game (a verl group: its N rollouts reset the same seed)."""
    log = {"reset_s": [], "steps": 0}
    rng = random.Random(seed0)
    t0 = time.perf_counter()
    await asyncio.gather(*[_trajectory(cfg, seed0 + i // n, steps, random.Random(rng.random()), log)
                           for i in range(concurrent)])
    log["wall_s"] = time.perf_counter() - t0
    return log


def _one(spec: str, concurrent: int, steps: int, n: int, seed0: int) -> tuple:
    """One timed run of pool ``spec`` in this (fresh) process: warm-up on other seeds, then the timed games."""
    kind, size = spec.split(":")
    cfg = {"env_id": "credit/ALFWorld-v0", "env_kwargs": {}, "history_depth": 4, "env_pool": kind,
           "env_workers": int(size)}
    asyncio.run(_run(cfg, int(size), 1, 90_000, 1))  # the pool's processes (spawn, imports), not timed
    log = asyncio.run(_run(cfg, concurrent, steps, seed0, n))
    env_pool.shutdown()
    resets = sorted(log["reset_s"])
    return spec, concurrent, log["steps"], log["wall_s"], (concurrent + log["steps"]) / log["wall_s"], \
        resets[len(resets) // 2]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--concurrent", type=int, default=8, help="trajectories in flight on the worker")
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--n", type=int, default=4, help="rollouts per game (verl's rollout.n): they share a seed")
    p.add_argument("--seed", type=int, default=1000, help="first game seed (the same games for every run)")
    p.add_argument("--pools", default="thread:1,process:2,process:4,thread:1,process:2,process:4",
                   help="pool specs, run in this order (repeat them to see the run-to-run spread)")
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--predict", default="", help="the prediction written before the run (recorded in the report)")
    p.add_argument("--one", default=None, help=argparse.SUPPRESS)
    a = p.parse_args()
    # every run translates its games afresh (no on-disk PDDL->SAS cache; inherited by the pool's processes)
    os.environ["AGENTGYM_CREDIT_SAS_CACHE"] = "0"
    if a.one:
        print(json.dumps(_one(a.one, a.concurrent, a.steps, a.n, a.seed)))
        return
    load_before = os.getloadavg()
    rows = []
    for spec in a.pools.split(","):  # each run in a fresh process: no run reuses games another one built
        out = subprocess.run([sys.executable, __file__, "--one", spec, "--concurrent", str(a.concurrent),
                              "--steps", str(a.steps), "--n", str(a.n), "--seed", str(a.seed)],
                             capture_output=True, text=True, check=True)
        rows.append(tuple(json.loads(out.stdout.strip().splitlines()[-1])))
        print(rows[-1], flush=True)
    load_after = os.getloadavg()
    lines = [
        "# verl agent loop: ALFWorld env throughput per agent-loop worker",
        "",
        f"Command: `{' '.join(['python', *sys.argv])}`. Machine: {platform.machine()}, {os.cpu_count()} CPU cores, "
        f"Python {platform.python_version()}; load average before {load_before[0]:.1f} / after {load_after[0]:.1f} "
        "(the machine is shared with other sessions: parallel speed-ups are capped by the free cores).",
        "",
        f"One worker's event loop drives {a.concurrent} ALFWorld trajectories at once ({a.concurrent // a.n} "
        f"generated games x {a.n} rollouts, as verl's groups: the rollouts of a game reset the same seed): reset, "
        f"then up to {a.steps} random admissible actions. Every run is a fresh process playing the same games, "
        "with the on-disk translation cache off (`AGENTGYM_CREDIT_SAS_CACHE=0`) and a warm-up on other seeds "
        "(not timed). `calls/s` = (resets + steps) / wall time; `reset` = median reset latency seen by a "
        "trajectory (queueing included).",
        "",
        "| env pool | trajectories | steps | wall s | calls/s | median reset s |",
        "|---|---|---|---|---|---|",
        *[f"| {s} | {c} | {n} | {w:.1f} | {r:.2f} | {m:.2f} |" for s, c, n, w, r, m in rows],
        "",
        "`thread:1` is the agent loop's previous behaviour (one env thread per worker); `process:K` runs K env "
        "processes and sends the rollouts of one game to one process (it builds the game once).",
        "",
        f"Prediction before the run: {a.predict}" if a.predict else "",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        a.out.write_text(text)


if __name__ == "__main__":
    main()
