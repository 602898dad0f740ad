"""Generated ALFWorld games vs the real dev games: how rich are they, per room kind and per task type?

What lives here: :func:`room_of` (the room kind of a game: ALFWorld's floor plan number for a real game,
the generator's record for a generated one), :func:`game_stats` (objects, receptacles, admissible
commands at the start and expert steps of one game) and :func:`main` (``python -m
agentgym_credit.bench.envs.alfworld_games``), which measures every solvable dev game
(``../shared/data/alfworld/dev``) and ``--generated`` generated games of each task type, and writes
``benchmarks/envs/alfworld_games.md``: per room kind and per task type, each measure's median, 10th-90th
percentiles and range, generated vs real, the ratio of medians, whether the generated range covers the
real one, and which real (task type, object, target) combinations the generator can pose. Every
generated game was won by the expert on the engine before use (that is how
:func:`~agentgym_credit.envs.alfworld.generator.generate_game` accepts a game).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import sys
from typing import Any

from agentgym_credit.bench.stats.report import progress, write_atomic
from agentgym_credit.envs.alfworld.generator import TASK_TYPES

MEASURES = ("objects", "receptacles", "admissible", "expert_steps")
ROOM_KINDS = ("kitchen", "livingroom", "bedroom", "bathroom")
"""ALFWorld's room kinds, in the order of its floor plans (1-30, 201-230, 301-330, 401-430)."""
TOLERANCE = 0.25
"""How far a generated median may be from the real one (as a ratio) for a cell to count as matched."""
_IN = re.compile(r"\(inReceptacle (\S+) (\S+)\)", re.I)
_REC = re.compile(r"^\s*(\S+) - receptacle\s*$", re.M)
_FLOOR_PLAN = re.compile(r"-(\d+)(?:/|$)")


def room_of(game_id: str, game: dict[str, Any]) -> str:
    """Room kind of a game: the generator's ``room``, else from the real game's floor plan number
    (``...-Cabinet-413/trial_...``: 1-99 kitchen, 2xx living room, 3xx bedroom, 4xx bathroom)."""
    if game.get("room"):
        return str(game["room"])
    m = _FLOOR_PLAN.search(game_id.split("/")[0])
    kind = {0: "kitchen", 2: "livingroom", 3: "bedroom", 4: "bathroom"}.get(int(m.group(1)) // 100) if m else None
    if kind is None:
        raise ValueError(f"cannot tell the room of game {game_id!r} (no ALFWorld floor plan number)")
    return kind


def problem_counts(problem: str) -> dict[str, int]:
    """``objects`` placed in a receptacle at the start and ``receptacles`` declared, of a PDDL problem."""
    head = problem[: problem.index("(:init")]
    init = problem[problem.index("(:init"): problem.index("(:goal")]
    return {"objects": len({o for o, _ in _IN.findall(init)}), "receptacles": len(_REC.findall(head))}


def game_stats(env: Any, task: int) -> dict[str, Any]:
    """Measures of game ``task`` of an ``ALFWorldEnv(expert=True)``: plays the expert to the end."""
    obs, info = env.reset(seed=0, options={"task": task})
    game = env.game.load()
    out = {
        "task_type": info["task_type"],
        "room": room_of(env.game.game_id, game),
        **problem_counts(game["pddl_problem"]),
        "admissible": len(info["admissible_actions"]),
    }
    steps = 0
    while info["expert_action"] is not None and steps < 100:
        obs, r, term, trunc, info = env.step(info["expert_action"])
        steps += 1
        if term or trunc:
            break
    out["expert_steps"] = steps
    out["won"] = bool(info["won"])
    spec = env._spec
    out["combo"] = (info["task_type"], spec.obj, spec.target)
    return out


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def _cell(xs: list[float], spread: bool) -> str:
    if not xs:
        return "-"
    mid = f"{statistics.median(xs):g}"
    if spread and len(xs) >= 5:
        mid += f" ({_pct(xs, 0.1):g}-{_pct(xs, 0.9):g})"
    return f"{mid} [{min(xs):g}-{max(xs):g}]"


def compare(real: list[dict], gen: list[dict], measure: str) -> dict[str, Any]:
    """One measure, real vs generated: ratio of medians, within :data:`TOLERANCE`, range covered."""
    rv, gv = [x[measure] for x in real], [x[measure] for x in gen]
    if not rv or not gv:
        return {"real": _cell(rv, False), "gen": _cell(gv, True), "ratio": float("nan"), "within": None, "covers": None}
    ratio = statistics.median(gv) / statistics.median(rv) if statistics.median(rv) else float("nan")
    return {"real": _cell(rv, False), "gen": _cell(gv, True), "ratio": ratio,
            "within": abs(ratio - 1.0) <= TOLERANCE, "covers": min(gv) <= min(rv) and max(gv) >= max(rv)}


def _table(groups: list[str], key: str, real: list[dict], gen: list[dict]) -> tuple[list[str], list[dict]]:
    head = " | ".join(f"{m} real | {m} gen | ratio" for m in MEASURES)
    rows = [f"| {key} | games real / gen | {head} |", "|---|---|" + "---|---|---|" * len(MEASURES)]
    verdicts = []
    for grp in groups:
        r = [g for g in real if grp in ("all", g[key])]
        g = [x for x in gen if grp in ("all", x[key])]
        cells = [grp, f"{len(r)} / {len(g)}"]
        for m in MEASURES:
            c = compare(r, g, m)
            mark = "" if c["within"] is None else ("" if c["within"] else " ✗") + ("" if c["covers"] else " ⊉")
            cells += [c["real"], c["gen"], f"{c['ratio']:.2f}{mark}"]
            if grp != "all" and c["within"] is not None:
                verdicts.append({"group": grp, "measure": m, **c})
        rows.append("| " + " | ".join(cells) + " |")
    return rows, verdicts


def _mix(games: list[dict], task_type: str) -> str:
    rooms = [g["room"] for g in games if g["task_type"] == task_type]
    return ", ".join(f"{r} {rooms.count(r)}" for r in ROOM_KINDS if r in rooms) or "-"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m agentgym_credit.bench.envs.alfworld_games", description=__doc__.split("\n")[0])
    ap.add_argument("--generated", type=int, default=20, help="generated games per task type")
    ap.add_argument("--out", default="benchmarks/envs/alfworld_games.md")
    argv = sys.argv[1:] if argv is None else list(argv)  # recorded in the report as run
    args = ap.parse_args(argv)

    from agentgym_credit.envs.alfworld.env import ALFWorldEnv
    from agentgym_credit.envs.alfworld.games import dev_data_dir
    from agentgym_credit.envs.alfworld.generator import combo_can_be_generated

    if dev_data_dir() is None:
        print("no dev games at ../shared/data/alfworld/dev: nothing to compare with", file=sys.stderr)
        return 1
    load_before = os.getloadavg()
    real_env = ALFWorldEnv(source="dev", expert=True, max_steps=200)
    real = [game_stats(real_env, i) for i in progress(range(len(real_env.games)), desc="real")]
    gen_env = ALFWorldEnv(expert=True, max_steps=200, num_games=args.generated * len(TASK_TYPES))
    gen = [game_stats(gen_env, i) for i in progress(range(len(gen_env.games)), desc="generated")]

    room_rows, room_verdicts = _table([*ROOM_KINDS, "all"], "room", real, gen)
    type_rows, type_verdicts = _table([*TASK_TYPES, "all"], "task_type", real, gen)
    within = sum(v["within"] for v in room_verdicts)
    covers = sum(v["covers"] for v in room_verdicts)
    misses = [f"{v['group']} {v['measure']} ({v['ratio']:.2f}{'' if v['covers'] else ', range not covered'})"
              for v in room_verdicts if not (v["within"] and v["covers"])]
    combos = sorted({g["combo"] for g in real})
    missing = [c for c in combos if not combo_can_be_generated(*c)]
    won = sum(g["won"] for g in gen)
    cmd = "python -m agentgym_credit.bench.envs.alfworld_games" + ("" if not argv else " " + " ".join(argv))
    lines = [
        "# ALFWorld games: generated vs real (dev), per room kind and task type",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: `{platform.platform()}`, Python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"load average {load_before[0]:.1f} before / {os.getloadavg()[0]:.1f} after (shared).",
        "",
        "Per game: `objects` placed in a receptacle at the start (what the agent can see, take and move; the",
        "problem also declares fixed scene parts such as windows and light switches, left out), `receptacles`",
        "declared in the problem (the furniture the agent can go to), `admissible` commands at the start, `expert_steps` to win",
        "(the env's fact-oracle expert). Real cells: median [min-max]; generated cells: median (10th-90th",
        "percentile) [min-max]; `ratio` = generated median / real median, marked ✗ when off by more than",
        f"{TOLERANCE:.0%} and ⊉ when the generated range does not cover the real one. Room kind of a real game:",
        "its floor plan number (1-30 kitchen, 201-230 living room, 301-330 bedroom, 401-430 bathroom).",
        f"Real: every solvable dev game ({len(real)}; few per room kind: a median of 1-4 games is a weak",
        f"target); generated: the first {args.generated} train games of each task type ({len(gen)}).",
        "",
        "## Per room kind",
        "",
        *room_rows,
        "",
        f"Per room kind (4 kinds x {len(MEASURES)} measures = {len(room_verdicts)} cells): medians within "
        f"{TOLERANCE:.0%} in {within}/{len(room_verdicts)}, real range covered in {covers}/{len(room_verdicts)}"
        + (f"; short: {'; '.join(misses)}." if misses else "."),
        "",
        "## Per task type",
        "",
        *type_rows,
        "",
        f"Per task type: medians within {TOLERANCE:.0%} in {sum(v['within'] for v in type_verdicts)}/{len(type_verdicts)}, "
        f"real range covered in {sum(v['covers'] for v in type_verdicts)}/{len(type_verdicts)}. Rooms the games of each "
        "task type are set in, real / generated (a task type's sizes follow its rooms):",
        "",
        *(f"- {tt}: {_mix(real, tt)} / {_mix(gen, tt)}" for tt in TASK_TYPES),
        "",
        f"Generated games won by the expert: {won}/{len(gen)} (each was also won on the engine before use).",
        f"Real (task type, object, target) combinations in the dev games: {len(combos)}; not generatable: "
        + (", ".join("/".join(c) for c in missing) if missing else "none") + ".",
        "",
    ]
    write_atomic(args.out, "\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["main", "game_stats", "problem_counts", "room_of", "compare", "MEASURES", "ROOM_KINDS", "TOLERANCE"]
