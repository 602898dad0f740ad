"""Collector speed: overhead over a bare loop, and worker scaling on a slow env.

``python -m agentgym_credit.bench.speed.collector_speed`` writes ``benchmarks/speed/collector_speed.md``.

What lives here:

- :class:`SlowEnv`: a chain env that sleeps ``delay`` seconds (5 ms) in every step — a stand-in
  for a slow engine such as ALFWorld, where parallel workers should pay off.
- :func:`bare_loop`: the hand-written loop a user would write instead of the collector — the same
  env stack (``gym.make`` + :class:`HistoryFingerprint`), one batched policy call per step, the same
  per-step record (texts, reward, done, terminated, action_valid, hashed keys, history keys,
  admissible actions; each trajectory's final keys), key hashes memoized.
- :func:`collector_rate` / :func:`bare_rate`: steps per second, best of ``repeats`` interleaved runs.
- :func:`main`: runs (1) bare loop vs ``backend="sync"`` on GridWorld with a trivial policy
  (goal: overhead <= 10%), (2) ``subprocess`` and ``ray`` with 1 and 2 workers on
  :class:`SlowEnv` (goal: 2 workers >= 1.7x one), and writes the markdown report.
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import sys
import time
from itertools import chain
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from agentgym_credit.envs.base import CreditEnv
from agentgym_credit.wrappers.collector import GroupedRolloutCollector, group_seed
from agentgym_credit.wrappers.history import HistoryFingerprint
from agentgym_credit.wrappers.workers import HashMemo, copy_rng

GRID_ID = "credit/GridWorld-v0"
_BARE_MEMO = HashMemo()  # the bare loop memoizes key hashes as the collector's workers do (its own memo)


class SlowEnv(CreditEnv):
    """A chain that never ends by itself; every step sleeps ``delay`` seconds (no CPU used)."""

    def __init__(self, delay: float = 0.005, length: int = 10):
        super().__init__()
        self.delay, self.length = float(delay), int(length)

    def _obs(self) -> tuple[str, dict[str, Any]]:
        info = {"state_key": f"pos={self.pos}", "admissible_actions": ["forward", "back"],
                "task_id": "slow", "won": False}
        return f"You are at {self.pos}.", info

    def _reset_impl(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        self.pos = 0
        return self._obs()

    def _step_impl(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        time.sleep(self.delay)
        self.pos = (self.pos + (1 if action == "forward" else -1)) % self.length
        obs, info = self._obs()
        return obs, 0.0, False, False, info


def first_action(obs: list[str], infos: list[dict[str, Any]]) -> list[str]:
    """The trivial policy: the first admissible action."""
    return [i["admissible_actions"][0] for i in infos]


def bare_loop(envs: list[gym.Env], seeds: list[int], group_size: int, max_steps: int,
              narrow: bool = False) -> dict[str, Any]:
    """The loop a user would write by hand to get grouped rollouts ready for ``credit.advantages``.

    Envs ``i*group_size .. (i+1)*group_size-1`` form group ``i``: reset with the group's seed, then
    each copy's RNG reseeded (:func:`copy_rng`) so that copies diverge; one batched policy call per
    step; one record per step, appended to its env's list; numpy columns at the end: every
    ``StepArrays`` field ``credit.advantages`` reads from a rollout (``valid``, and ``terminated`` /
    ``final_state_key`` / ``final_obs_key`` for the graph estimators' bootstrap) and the admissible
    actions the policy chose from — the env-derived columns of a ``RolloutBatch``, equal to the
    collector's (``tests/test_collector_speed.py``). It is written as lean as the collector's own
    loop, so that the comparison measures what the collector adds: key hashes memoized (a
    :class:`HashMemo` of its own), no sort (rows are kept per env), ids and ``t`` from the lengths,
    history keys joined by one ``np.concatenate``.

    ``narrow=True`` records only what the earlier bare loop did (texts, reward, done, hashed keys, history
    keys: no ``terminated``, ``valid``, admissible actions or final keys), the baseline of the ``<= 1.2x``
    bare-loop ratio.
    """
    key_hash = _BARE_MEMO
    obs, infos = [], []
    for i, env in enumerate(envs):
        o, info = env.reset(seed=seeds[i // group_size])
        env.unwrapped.np_random = copy_rng(seeds[i // group_size], i % group_size)
        obs.append(o)
        infos.append(info)
    rows_of: list[list[tuple]] = [[] for _ in envs]
    final = [(0, 0)] * len(envs)
    active = list(range(len(envs)))
    t = 0
    while active:
        actions = first_action([obs[i] for i in active], [infos[i] for i in active])
        still = []
        for i, a in zip(active, actions):
            o, r, term, trunc, info = envs[i].step(a)
            prev = infos[i]
            done = term or trunc or t + 1 >= max_steps
            if narrow:
                rows_of[i].append((r, done, key_hash[prev["state_key"]], key_hash[prev["obs_key"]],
                                   prev["history_keys"], obs[i], a))
            else:
                rows_of[i].append((r, done, term, info["action_valid"], key_hash[prev["state_key"]],
                                   key_hash[prev["obs_key"]], prev["history_keys"], prev["admissible_actions"],
                                   obs[i], a))
            obs[i], infos[i] = o, info
            if narrow:
                if not done:
                    still.append(i)
            elif done:  # the keys of the state reached, which the graph estimators bootstrap from
                final[i] = (key_hash[info["state_key"]], key_hash[info["obs_key"]])
            else:
                still.append(i)
        active = still
        t += 1
    lengths = np.array([len(rows) for rows in rows_of], dtype=np.int64)
    traj = np.repeat(np.arange(len(envs), dtype=np.int64), lengths)
    if narrow:
        rew, done, sk, ok, hk, ob, ac = zip(*chain.from_iterable(rows_of))
        return {"group_id": traj // group_size, "traj_id": traj,
                "t": np.arange(len(traj), dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths),
                "reward": np.array(rew, dtype=np.float64), "done": np.array(done, dtype=bool),
                "state_key": np.array(sk, dtype=np.uint64), "obs_key": np.array(ok, dtype=np.uint64),
                "history_keys": np.concatenate(hk).reshape(len(traj), -1), "observation": list(ob),
                "action": list(ac)}
    rew, done, term, valid, sk, ok, hk, adm, ob, ac = zip(*chain.from_iterable(rows_of))
    fsk, fok = zip(*final)
    return {
        "group_id": traj // group_size, "traj_id": traj,
        "t": np.arange(len(traj), dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths),
        "reward": np.array(rew, dtype=np.float64), "done": np.array(done, dtype=bool),
        "terminated": np.array(term, dtype=bool), "valid": np.array(valid, dtype=bool),
        "state_key": np.array(sk, dtype=np.uint64), "obs_key": np.array(ok, dtype=np.uint64),
        "history_keys": np.concatenate(hk).reshape(len(traj), -1),
        "final_state_key": np.array(fsk, dtype=np.uint64), "final_obs_key": np.array(fok, dtype=np.uint64),
        "observation": list(ob), "action": list(ac), "admissible_actions": list(adm),
    }


def _now() -> float:
    """CPU time of this process: the single-process comparison is not skewed by other jobs' load."""
    return time.process_time()


def bare_rate(env_id: str, env_kwargs: dict, groups: int, group_size: int, max_steps: int, history_depth: int,
              envs_cache: dict, narrow: bool = False) -> float:
    if "envs" not in envs_cache:
        import agentgym_credit  # noqa: F401

        envs_cache["envs"] = [HistoryFingerprint(gym.make(env_id, **env_kwargs), depth=history_depth)
                              for _ in range(groups * group_size)]
    seeds = [group_seed(0, g) for g in range(groups)]
    t0 = _now()
    n = len(bare_loop(envs_cache["envs"], seeds, group_size, max_steps, narrow=narrow)["t"])
    return n / (_now() - t0)


def collector_rate(col: GroupedRolloutCollector, groups: int, clock=time.perf_counter) -> float:
    seeds = [group_seed(0, g) for g in range(groups)]  # outside the clock, as in bare_rate
    t0 = clock()
    batch = col.collect(first_action, tasks=groups, seeds=seeds)
    return len(batch) / (clock() - t0)


def _rates(fns: dict[str, Any], repeats: int) -> dict[str, list[float]]:
    """Rates of each function over ``repeats`` interleaved rounds, after one warm-up round.

    The order within a round alternates (no function always runs first, after the other's garbage)
    and a full garbage collection precedes every run, outside its clock.
    """
    names = list(fns)
    rates: dict[str, list[float]] = {k: [] for k in names}
    for r in range(repeats + 1):
        for name in names if r % 2 else names[::-1]:
            gc.collect()
            rate = fns[name]()
            if r:
                rates[name].append(rate)
    return rates


def _best(fns: dict[str, Any], repeats: int) -> dict[str, float]:
    """Best rate of each function over ``repeats`` interleaved rounds (see :func:`_rates`)."""
    return {k: max(v) for k, v in _rates(fns, repeats).items()}


def overhead_rows(groups: int, group_size: int, max_steps: int, repeats: int) -> list[list[str]]:
    kw = {"size": 6, "slip": 0.1}
    depth = 4
    cache: dict = {}
    col = GroupedRolloutCollector(GRID_ID, group_size, env_kwargs=kw, max_steps=max_steps, history_depth=depth,
                                  progress=False)
    rates = _rates({
        "bare": lambda: bare_rate(GRID_ID, kw, groups, group_size, max_steps, depth, cache),
        "narrow": lambda: bare_rate(GRID_ID, kw, groups, group_size, max_steps, depth, cache, narrow=True),
        "sync": lambda: collector_rate(col, groups, clock=_now),
    }, repeats)
    col.close()
    best = {k: max(v) for k, v in rates.items()}
    over = best["bare"] / best["sync"] - 1.0  # extra time per step, relative to the bare loop
    extra_us = 1e6 / best["sync"] - 1e6 / best["bare"]
    # the same ratio within each round (the two runs made back to back), then its median over rounds
    q1, paired, q3 = np.percentile([b / c - 1.0 for b, c in zip(rates["bare"], rates["sync"])], [25, 50, 75])
    verdict = "meets" if max(over, paired) <= 0.10 else "misses"
    ratio = best["narrow"] / best["sync"]  # collector time per step / narrow loop time per step
    nq = np.percentile([n / c for n, c in zip(rates["narrow"], rates["sync"])], [25, 50, 75])
    nverdict = "meets" if max(ratio, nq[1]) <= 1.2 else "misses"
    return [
        ["bare hand-written loop", f"{best['bare']:,.0f}", f"{1e6 / best['bare']:.1f}", "1.00", "", ""],
        ["narrow bare loop (the earlier record: texts, reward, done, keys)", f"{best['narrow']:,.0f}",
         f"{1e6 / best['narrow']:.1f}", f"{best['narrow'] / best['bare']:.2f}",
         f"collector {ratio:.2f}x its time per step",
         f"{nq[1]:.2f}x (quartiles {nq[0]:.2f}x / {nq[2]:.2f}x; {nverdict} the <= 1.2x bare-loop ratio goal)"],
        ["collector, backend=sync", f"{best['sync']:,.0f}", f"{1e6 / best['sync']:.1f}",
         f"{best['sync'] / best['bare']:.2f}", f"{100 * over:+.1f}% time ({extra_us:+.2f} µs/step)",
         f"{100 * paired:+.1f}% (quartiles {100 * q1:+.1f}% / {100 * q3:+.1f}%; {verdict} the <= 10% goal)"],
    ]


def scaling_rows(backend: str, groups: int, group_size: int, steps: int, delay: float, repeats: int
                 ) -> list[list[str]]:
    factory = functools.partial(SlowEnv, delay=delay)
    # the slow env sleeps, so a Ray actor asks for half a CPU: both collectors (3 actors) fit on 2 cores
    extra = {"ray_options": {"num_cpus": 0.5}} if backend == "ray" else {}
    cols = {w: GroupedRolloutCollector(factory, group_size, backend=backend, num_workers=w, max_steps=steps,
                                       history_depth=2, progress=False, **extra) for w in (1, 2)}
    try:
        best = _best({w: functools.partial(collector_rate, c, groups) for w, c in cols.items()}, repeats)
    finally:
        for c in cols.values():
            c.close()
    ratio = best[2] / best[1]
    return [
        [backend, "1", f"{best[1]:,.0f}", "1.00", ""],
        [backend, "2", f"{best[2]:,.0f}", f"{ratio:.2f}", f"{'meets' if ratio >= 1.7 else 'misses'} the >= 1.7x goal"],
    ]


def main(argv: list[str] | None = None) -> Path:
    """Run the benchmark and write the markdown report; return its path."""
    from agentgym_credit.bench.stats.report import machine_lines, markdown_table, write_atomic

    p = argparse.ArgumentParser(prog="python -m agentgym_credit.bench.speed.collector_speed", description=__doc__.split("\n")[0])
    p.add_argument("--out", default="benchmarks/speed/collector_speed.md")
    p.add_argument("--groups", type=int, default=16, help="groups per collect call (GridWorld part)")
    p.add_argument("--group-size", type=int, default=8)
    p.add_argument("--max-steps", type=int, default=50)
    p.add_argument("--slow-groups", type=int, default=2)
    p.add_argument("--slow-steps", type=int, default=25, help="steps per trajectory on the slow env")
    p.add_argument("--delay", type=float, default=0.005, help="seconds slept per step by the slow env")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--backends", default="subprocess,ray")
    p.add_argument("--note", default=None, help="a line for the report: e.g. the prediction written before the run")
    args = p.parse_args(argv)

    load_before = os.getloadavg()
    t0 = time.perf_counter()
    over_rounds = 8 * args.repeats
    over = overhead_rows(args.groups, args.group_size, args.max_steps, over_rounds)
    scale: list[list[str]] = []
    notes: list[str] = []
    for backend in [b for b in args.backends.split(",") if b]:
        if backend == "ray":
            try:
                import ray
            except ImportError:
                notes.append("Ray is not installed: its rows are missing.")
                continue
            if not ray.is_initialized():
                ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        scale += scaling_rows(backend, args.slow_groups, args.group_size, args.slow_steps, args.delay, args.repeats)
    load_after = os.getloadavg()
    used = sys.argv[1:] if argv is None else list(argv)
    cmd = " ".join(["python -m agentgym_credit.bench.speed.collector_speed", *used])
    text = "\n".join([
        "# Collector speed",
        "",
        machine_lines(cmd),
        "",
        f"Load average (1/5/15 min) before: {load_before[0]:.2f} / {load_before[1]:.2f} / {load_before[2]:.2f}, "
        f"after: {load_after[0]:.2f} / {load_after[1]:.2f} / {load_after[2]:.2f} — the machine is shared with "
        "other jobs, so absolute rates are noisy; each figure is the best of "
        f"{args.repeats} interleaved runs ({over_rounds} for the overhead part) after a warm-up, and the "
        "ratios compare runs made side by side. "
        f"Total time {time.perf_counter() - t0:.0f} s.",
        "",
        *([f"Note: {args.note}", ""] if args.note else []),
        f"## Collector overhead (GridWorld, {args.groups} groups x {args.group_size}, trivial policy)",
        "",
        "`credit/GridWorld-v0` (size 6, slip 0.1), policy = first admissible action, episodes end by the env "
        f"or at {args.max_steps} steps. The bare loop uses the same env stack (`gym.make` + "
        "`HistoryFingerprint(depth=4)`), one batched policy call per step, and records the same per-step "
        "data (texts, reward, done, terminated, action_valid, hashed state/obs keys, history keys, admissible "
        "actions, and each trajectory's final state/obs keys: the env-derived columns of a `RolloutBatch` and "
        "every rollout input of `credit.advantages`, checked equal to the collector's by "
        "`tests/test_collector_speed.py`; until 2026-12-01 it recorded only texts, reward, done and keys, so "
        "the collector's newer columns counted as overhead; that earlier loop is the `narrow` row, against which "
        "the goal is the collector at <= 1.2x its time per step) and turns it into numpy columns; "
        "both memoize key hashes (`HashMemo`, each its own). The collector's time includes building the "
        "`RolloutBatch`. Rates are steps per CPU-second of this process (`time.process_time`), which other "
        f"jobs' load disturbs less than wall time; {over_rounds} rounds after a warm-up, each running both loops "
        "back to back (order alternating, a full garbage collection before each run). Overhead = extra time "
        "per step relative to the bare loop: from the best run of each, and the median over rounds of the "
        "ratio within a round (its quartiles show the spread); the goal counts as met only if both are <= 10%.",
        "",
        markdown_table(["loop", "steps/s (best)", "µs/step", "rate vs bare", "overhead, best runs",
                        "overhead, median of rounds"], over, align="lrrrll"),
        "",
        "What the extra time buys, per step: each env's errors caught and recorded, `info[\"rollout\"]` ids "
        "for the policy (a fresh dict per step), the policy's output checked, the results passed through the "
        "worker interface (one tuple per step, read back by the collector), the `state_index`, task and "
        "extras columns, and the trajectory table. It is a fixed cost per step, so its share shrinks as "
        "the env gets slower: it is under 10% of any loop whose bare step costs more than ten times it (here "
        f"the whole bare GridWorld step, env included, takes {over[0][2]} µs; real text engines are far "
        "slower than this synthetic grid).",
        "",
        f"## Worker scaling (SlowEnv: {1000 * args.delay:g} ms sleep per step, {args.slow_groups} groups x "
        f"{args.group_size}, {args.slow_steps} steps each)",
        "",
        "One round trip per worker per step; with 2 workers each one steps half of the envs.",
        "",
        markdown_table(["backend", "workers", "steps/s", "vs 1 worker", "goal"], scale, align="lrrrl")
        if scale else "(no backend ran)",
        "",
        *notes,
    ])
    out = write_atomic(args.out, text.rstrip() + "\n")
    print(text)
    return out


if __name__ == "__main__":
    main()


__all__ = ["SlowEnv", "bare_loop", "bare_rate", "collector_rate", "first_action", "main"]
