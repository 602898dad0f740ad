"""ALFWorld env throughput of ONE verl agent-loop worker, by env pool (``env_pool`` / ``env_workers``).

verl runs every agent loop of a worker on one asyncio event loop; this drives the same env handles the agent
loop uses (:func:`agentgym_credit.integrations.verl.env_pool.env_handle`) from ``--concurrent`` trajectories at
once, each: reset (a generated game, one seed per trajectory), then ``--steps`` random admissible actions. No
LLM: it measures what the env side of a worker can deliver. Writes a markdown table::

    nice python examples/verl/bench_env_pool.py --out benchmarks/verl_env_pool.md
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import sys
import time
from pathlib import Path

from agentgym_credit.integrations.verl import env_pool


async def _trajectory(cfg: dict, seed: int, steps: int, rng: random.Random, log: dict) -> None:
    env = env_pool.env_handle(cfg)
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


async def _run(cfg: dict, concurrent: int, steps: int, seed0: int) -> dict:
    log = {"reset_s": [], "steps": 0}
    rng = random.Random(seed0)
    t0 = time.perf_counter()
    await asyncio.gather(*[_trajectory(cfg, seed0 + i, steps, random.Random(rng.random()), log)
                           for i in range(concurrent)])
    log["wall_s"] = time.perf_counter() - t0
    return log


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--concurrent", type=int, default=8, help="trajectories in flight on the worker")
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--pools", default="thread:1,process:2,process:4,thread:1,process:2,process:4",
                   help="pool specs, run in this order (repeat them to see the run-to-run spread)")
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--predict", default="", help="the prediction written before the run (recorded in the report)")
    a = p.parse_args()
    # every reset translates its game afresh (no on-disk PDDL->SAS cache shared between runs, set before any pool
    # process starts, so they inherit it): the same work for every pool and every repeat
    os.environ["AGENTGYM_CREDIT_SAS_CACHE"] = "0"
    load_before = os.getloadavg()
    rows = []
    for k, spec in enumerate(a.pools.split(",")):
        kind, size = spec.split(":")
        cfg = {"env_id": "credit/ALFWorld-v0", "env_kwargs": {}, "history_depth": 4, "env_pool": kind,
               "env_workers": int(size)}
        # warm up outside the timed run: the pool's processes (spawn, imports); then the same seeds for every pool
        asyncio.run(_run(cfg, int(size), 1, 10_000 + 100 * k))
        log = asyncio.run(_run(cfg, a.concurrent, a.steps, 1000))
        resets = sorted(log["reset_s"])
        rows.append((spec, a.concurrent, log["steps"], log["wall_s"], (a.concurrent + log["steps"]) / log["wall_s"],
                     resets[len(resets) // 2]))
        print(rows[-1], flush=True)
        env_pool.shutdown()
    load_after = os.getloadavg()
    lines = [
        "# verl agent loop: ALFWorld env throughput per agent-loop worker",
        "",
        f"Command: `{' '.join(['python', *sys.argv])}`. Machine: {platform.machine()}, {os.cpu_count()} CPU cores "
        f"({platform.processor() or 'cpu'}), Python {platform.python_version()}; load average before "
        f"{load_before[0]:.1f} / after {load_after[0]:.1f} (the machine is shared: parallel speed-ups are capped "
        "by the free cores, not by the pool).",
        "",
        f"One worker's event loop drives {a.concurrent} ALFWorld trajectories (generated games, one seed each) at "
        f"once: reset, then up to {a.steps} random admissible actions. `calls/s` = (resets + steps) / wall time; "
        "`reset` = median reset latency seen by a trajectory (includes queueing behind the other calls).",
        "",
        "| env pool | trajectories | steps | wall s | calls/s | median reset s |",
        "|---|---|---|---|---|---|",
        *[f"| {s} | {c} | {n} | {w:.1f} | {r:.2f} | {m:.2f} |" for s, c, n, w, r, m in rows],
        "",
        "`thread:1` is the agent loop's previous behaviour (one env thread per worker). Each pool is warmed up "
        "first (one trajectory per worker process, not timed); every run plays the same seeds with the on-disk "
        "translation cache off (`AGENTGYM_CREDIT_SAS_CACHE=0`).",
        "",
        f"Prediction before the run: {a.predict}" if a.predict else "",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        a.out.write_text(text)


if __name__ == "__main__":
    main()
