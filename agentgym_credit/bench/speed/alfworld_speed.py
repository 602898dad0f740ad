"""ALFWorld engine speed: stock TextWorld PDDL engine vs this package's fast engine, side by side.

What lives here: :func:`main` (``python -m agentgym_credit.bench.speed.alfworld_speed``), which

- plays the same command sequences (an oracle-expert episode, then random admissible and junk commands)
  on both engines for every solvable dev game (``../shared/data/alfworld/dev``, if present) and for
  generated games of all six task types;
- checks the two transcripts are identical at every step (observation, admissible commands, facts,
  score, done, won) — the full differential sweep; the unit test samples a few games;
- times ``load`` (cold, and with the translation found in the on-disk cache), ``reset`` and ``step`` of
  each engine in the same run and writes the table with the ratios to ``benchmarks/speed/alfworld_speed.md``
  (with the machine and the exact command);
- times ``get_state``/``set_state`` of ``ALFWorldEnv`` against a step (under 10 % of a step).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from typing import Any

from agentgym_credit.bench.stats.report import progress, write_atomic
from agentgym_credit.envs.alfworld import fast as fast_mod
from agentgym_credit.envs.alfworld.engine import make_engine, upgrade_game
from agentgym_credit.envs.alfworld.expert import oracle_action, task_spec
from agentgym_credit.envs.alfworld.games import dev_data_dir
from agentgym_credit.envs.alfworld.generator import TASK_TYPES, generate_game

JUNK = ("jump", "take everything", "go to the moon", "open")


def _same(a: Any, b: Any) -> bool:
    return (
        a["feedback"] == b["feedback"]
        and a["admissible_commands"] == b["admissible_commands"]
        and [str(f) for f in a["facts"]] == [str(f) for f in b["facts"]]
        and a["won"] == b["won"]
    )


def _commands(data: dict, task_type: str, n_random: int, seed: int) -> list[str]:
    """An oracle-expert episode, then (after a reset) random admissible/junk commands: played on the fast engine."""
    eng = make_engine(fast=True)
    eng.load(data)
    st = eng.reset()
    spec = task_spec(task_type, data["pddl_problem"])
    cmds: list[str] = []
    while not st["won"] and len(cmds) < 40:
        cmd = oracle_action(spec, st["facts"]) or "look"
        cmds.append(cmd)
        st, _, _ = eng.step(cmd)
    cmds.append("<reset>")
    st = eng.reset()
    rng = random.Random(seed)
    for _ in range(n_random):
        cmd = rng.choice(JUNK) if rng.random() < 0.1 else rng.choice(st["admissible_commands"])
        cmds.append(cmd)
        st, _, done = eng.step(cmd)
        if done:
            cmds.append("<reset>")
            st = eng.reset()
    return cmds


def _run(fast: bool, data: dict, cmds: list[str], n_resets: int) -> tuple[dict[str, list[float]], list[Any]]:
    eng = make_engine(fast=fast)
    times: dict[str, list[float]] = {"load": [], "reset": [], "step": []}
    t = time.perf_counter()
    eng.load(data)
    times["load"].append(time.perf_counter() - t)
    for _ in range(n_resets):
        t = time.perf_counter()
        st = eng.reset()
        times["reset"].append(time.perf_counter() - t)
    transcript = [st]
    for cmd in cmds:
        if cmd == "<reset>":
            st = eng.reset()
        else:
            t = time.perf_counter()
            st, score, done = eng.step(cmd)
            times["step"].append(time.perf_counter() - t)
        transcript.append(st)
    return times, transcript


def _cold() -> None:
    fast_mod.translate.cache_clear()
    fast_mod.parse_logic.cache_clear()


def _row(name: str, n_games: int, stock: dict, fast: dict, steps: int, same: str) -> str:
    def ms(xs):
        return 1000 * statistics.mean(xs)

    cells = [name, str(n_games), str(steps), same]
    for k in ("load", "reset", "step"):
        s, f = ms(stock[k]), ms(fast[k])
        cells += [f"{s:.1f}", f"{f:.1f}", f"{s / f:.1f}x"]
        if k == "load":
            d = ms(fast["load_disk"])
            cells += [f"{d:.1f}", f"{s / d:.1f}x"]
    return "| " + " | ".join(cells) + " |"


def _snapshot_costs(env: Any, n_games: int, steps: int) -> dict[str, list[float]]:
    """Per random step of ``env`` (an ``ALFWorldEnv``): step, ``get_state``, ``set_state`` (in this process)
    and ``set_state`` from a snapshot this process has not seen (the memo emptied: what another process does)."""
    from agentgym_credit.envs.alfworld import snapshots

    times: dict[str, list[float]] = {"step": [], "get": [], "set": [], "replay": []}
    rng = random.Random(0)
    for g in range(n_games):
        obs, info = env.reset(seed=g, options={"task": g % len(env.games)})
        for _ in range(steps):
            t = time.perf_counter()
            obs, r, term, trunc, info = env.step(rng.choice(info["admissible_actions"]))
            times["step"].append(time.perf_counter() - t)
            if term or trunc:
                break
            t = time.perf_counter()
            snap = env.get_state()
            times["get"].append(time.perf_counter() - t)
            t = time.perf_counter()
            obs, info = env.set_state(snap)
            times["set"].append(time.perf_counter() - t)
        saved = dict(snapshots._MEMO)
        snapshots._MEMO.clear()
        t = time.perf_counter()
        env.set_state(snap)
        times["replay"].append(time.perf_counter() - t)
        snapshots._MEMO.update(saved)
    return times


def _snapshot_rows(dev_games: int, gen_games: int, steps: int) -> list[str]:
    from agentgym_credit.envs.alfworld.env import ALFWorldEnv

    envs = []
    if dev_data_dir() is not None and dev_games > 0:
        envs.append(("real (dev)", ALFWorldEnv(source="dev", expert=True, max_steps=200), dev_games))
    envs.append(("generated", ALFWorldEnv(expert=True, max_steps=200), gen_games))
    rows = []
    for name, env, n in progress(envs, desc="snapshots"):
        ts = _snapshot_costs(env, n, steps)
        step, get, set_, replay = (1000 * statistics.median(ts[k]) for k in ("step", "get", "set", "replay"))
        rows.append(f"| {name} | {n} | {len(ts['get'])} | {step:.2f} | {get:.3f} | {set_:.3f} "
                    f"| {100 * (get + set_) / step:.1f} % | {1000 * statistics.mean(ts['replay']):.1f} |")
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m agentgym_credit.bench.speed.alfworld_speed", description=__doc__.split("\n")[0])
    ap.add_argument("--dev-games", type=int, default=0, help="dev games to use (0 = all solvable ones)")
    ap.add_argument("--generated", type=int, default=6, help="generated games (task types in turn)")
    ap.add_argument("--random-steps", type=int, default=30, help="random commands per game after the expert episode")
    ap.add_argument("--resets", type=int, default=3, help="timed resets per game and engine")
    ap.add_argument("--snapshot-steps", type=int, default=25, help="random steps per game in the snapshot timing")
    ap.add_argument("--out", default="benchmarks/speed/alfworld_speed.md")
    argv = sys.argv[1:] if argv is None else list(argv)  # recorded in the report as run
    args = ap.parse_args(argv)

    suites: list[tuple[str, list[tuple[str, str, dict]]]] = []
    dev = dev_data_dir()
    if dev is not None:
        games = []
        for g in sorted(dev.glob("*/*/game.tw-pddl")):
            raw = json.loads(g.read_text())
            if raw.get("solvable"):
                tt = json.loads((g.parent / "traj_data.json").read_text())["task_type"]
                games.append((g.parent.parent.name, tt, upgrade_game(raw)))
        suites.append(("real (dev)", games[: args.dev_games or None]))
    gen = []
    for i in range(args.generated):
        tt = TASK_TYPES[i % len(TASK_TYPES)]
        gen.append((f"gen-{tt}-{i}", tt, generate_game(tt, 1000 + i)[0]))
    suites.append(("generated", gen))

    rows, mismatches, total_steps = [], [], 0
    sas_dir = tempfile.mkdtemp(prefix="alfworld_sas_")  # a private, initially empty on-disk SAS cache
    try:
        for name, games in suites:
            agg_s: dict[str, list[float]] = {"load": [], "reset": [], "step": []}
            agg_f: dict[str, list[float]] = {"load": [], "reset": [], "step": [], "load_disk": []}
            n_steps, n_same = 0, 0
            for gid, tt, data in progress(games, desc=name):
                os.environ["AGENTGYM_CREDIT_SAS_CACHE"] = "0"
                cmds = _commands(data, tt, args.random_steps, seed=len(gid))
                ts, tr_s = _run(False, data, cmds, args.resets)
                _cold()  # a cold load: no translation or logic of this game cached in memory or on disk
                os.environ["AGENTGYM_CREDIT_SAS_CACHE"] = sas_dir
                tf, tr_f = _run(True, data, cmds, args.resets)
                _cold()  # a new process that finds the translation on disk
                t = time.perf_counter()
                make_engine(fast=True).load(data)
                agg_f["load_disk"].append(time.perf_counter() - t)
                for k in agg_s:
                    agg_s[k] += ts[k]
                    agg_f[k] += tf[k]
                ok = len(tr_s) == len(tr_f) and all(_same(a, b) for a, b in zip(tr_s, tr_f))
                n_same += ok
                if not ok:
                    mismatches.append(gid)
                n_steps += len(ts["step"])
            total_steps += n_steps
            rows.append(_row(name, len(games), agg_s, agg_f, n_steps, f"{n_same}/{len(games)}"))
    finally:
        shutil.rmtree(sas_dir, ignore_errors=True)
        os.environ.pop("AGENTGYM_CREDIT_SAS_CACHE", None)

    snap_rows = _snapshot_rows(len(suites[0][1]) if dev is not None else 0, args.generated, args.snapshot_steps)
    load = os.getloadavg()[0]
    cmd = "python -m agentgym_credit.bench.speed.alfworld_speed" + ("" if not argv else " " + " ".join(argv))
    lines = [
        "# ALFWorld engine speed: stock TextWorld PDDL engine vs fast engine",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: `{platform.platform()}`, Python {platform.python_version()}, {os.cpu_count()} CPUs "
        "(shared with other jobs while this ran).",
        "",
        "Both engines play the same commands on the same game dicts in the same run: per game an oracle-expert",
        f"episode, then {args.random_steps} random admissible commands (10 % junk), resetting when an episode ends.",
        "Times are means in milliseconds; `load` includes parsing the game and translating PDDL to SAS;",
        "the stock engine re-translates on every `reset`, the fast one reuses the translation. `load fast` is cold:",
        "nothing of the game is cached in memory or on disk (only the installed grammar's parse is kept",
        "process-wide); `load fast, SAS on disk` is a later process that finds the game's translation in the",
        "on-disk cache (`AGENTGYM_CREDIT_SAS_CACHE`). The fast engine also translates the planner's task only",
        "when the planner is asked (the stock engine always does, at every load and reset).",
        "`identical` counts games whose full transcripts (observation, admissible commands, facts in order,",
        "score, done, won) are equal character by character at every step.",
        "",
        "| games | n | steps | identical | load stock | load fast | ratio | load fast, SAS on disk | ratio "
        "| reset stock | reset fast | ratio | step stock | step fast | ratio |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"Steps compared: {total_steps}; games with any difference: {len(mismatches)}"
        + (f" ({', '.join(mismatches)})" if mismatches else "") + ".",
        "",
        "## Snapshots (`env.unwrapped.get_state()` / `set_state()`, fast engine)",
        "",
        f"`ALFWorldEnv(expert=True)`, up to {args.snapshot_steps} random admissible steps per game; after each",
        "step a snapshot is taken and restored at once (medians in ms; the share is (get + set) / step, target",
        "under 10 %). `set, other process` is the mean cost of restoring a game's last snapshot with this",
        "process's memo emptied, as another process does: replaying the snapshot's commands from reset.",
        f"Load average at the end of the run: {load:.1f}.",
        "",
        "| games | n | snapshots | step | get_state | set_state | share of a step | set, other process |",
        "|---|---|---|---|---|---|---|---|",
        *snap_rows,
        "",
    ]
    write_atomic(args.out, "\n".join(lines))
    print("\n".join(lines))
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["main"]
