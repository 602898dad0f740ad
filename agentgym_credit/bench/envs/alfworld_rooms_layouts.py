"""ALFWorld room sizes fitted to the scene layouts of the fit scenes plus the dev games, checked on held-out
scenes per room kind (issue 45).

What lives here: :func:`layout_rows` (every scene the alfworld package ships a layout for: room kind, fit or
held out by :func:`~agentgym_credit.bench.envs.alfworld_layouts.split`, layout units, and the real PDDL counts
where the scene is a dev floor plan), :func:`estimator_check` (the layout-to-PDDL estimate scored with each dev
floor plan left out of its calibration), :func:`fit_values` / :func:`fit_rooms_on_layouts` (the room kinds
fitted on the fit scenes: a dev floor plan by its games' real counts, any other fit scene by its estimate),
:func:`held_out_rows` (the held-out scenes' estimated counts, admissible commands included) and :func:`main`
(``python -m agentgym_credit.bench.envs.alfworld_rooms_layouts``, writes
``benchmarks/envs/alfworld_rooms_layouts.md``): for the current generator and for the refitted rooms,
generated games per room kind are measured like the real ones (:func:`~.alfworld_rooms.measure`) and their
medians compared with the held-out scenes' (one value a scene) by :func:`~.alfworld_rooms.verdicts`.

Admissible commands of a held-out scene: a layout has no game to play, so they are its estimated receptacles
plus the room kind's median (admissible at the start - receptacles) over the dev games that load (the start's
commands are one ``go to`` per receptacle and a few fixed ones); generated games are played. Expert steps
have no held-out reference (they are reported for the generated games only). Only the dev games
(``../shared/data/alfworld/dev``) and the package's layouts are read; eval/ never.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from agentgym_credit.bench.envs.alfworld_games import ROOM_KINDS, TOLERANCE
from agentgym_credit.bench.envs.alfworld_layouts import (
    HELD_OUT_DIGITS,
    VALID_UNSEEN,
    base_counts,
    calibrate,
    estimate,
    read_layout,
    scene_kind,
    scenes,
    split,
)
from agentgym_credit.bench.envs.alfworld_rooms import (
    _generated,
    _plan_values,
    _room_lines,
    _score,
    _table,
    fit_rooms,
    verdicts,
)
from agentgym_credit.bench.stats.report import write_atomic
from agentgym_credit.envs.alfworld.rooms import ROOMS, SHAPES, RoomKind, fit_room_kind

_SIZE = ("receptacles", "objects")
GENERATOR_RULE = "spread"
"""The fit rule of the generator's ROOMS (chosen before the held-out run for range coverage: ``median`` left
the living room at most 17 receptacles where the fit scenes reach 35; see the predictions file)."""


def small_objects() -> list[str]:
    """The small-object types the generator places (every room kind's), counted in a layout's objects."""
    return sorted({o for r in SHAPES.values() for o in r.objects})


def dev_plan_counts(games: list[dict[str, Any]]) -> dict[int, dict[str, float]]:
    """Per dev floor plan: the median of its games' PDDL ``receptacles`` and ``objects``."""
    by: dict[int, list[dict[str, Any]]] = {}
    for g in games:
        by.setdefault(g["plan"], []).append(g)
    return {p: {m: statistics.median(g[m] for g in v) for m in _SIZE} for p, v in by.items()}


def layout_rows(dev: dict[int, dict[str, float]], directory: Path | None = None) -> list[dict[str, Any]]:
    """One row a scene: ``scene``, ``kind``, ``split``, ``base`` (layout units) and ``real`` (a dev plan's
    PDDL counts, else None)."""
    small = small_objects()
    all_scenes = scenes(directory)
    missing = sorted(set(dev) - set(all_scenes))
    if missing:
        raise FileNotFoundError(f"dev floor plans {missing} have no layout in the alfworld package")
    sp = split(all_scenes, dev)
    return [{"scene": s, "kind": scene_kind(s), "split": sp[s], "real": dev.get(s),
             "base": base_counts(read_layout(s, directory), small)} for s in all_scenes]


def _cal(rows: list[dict[str, Any]], skip: int | None = None) -> dict[str, dict[str, float]]:
    return calibrate([(r["kind"], r["real"], r["base"]) for r in rows if r["real"] and r["scene"] != skip])


def estimator_check(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every dev floor plan estimated from its layout with the calibration fitted on the other dev plans:
    ``scene``, ``kind``, and per measure the real count, the estimate and their ratio."""
    out = []
    for r in rows:
        if not r["real"]:
            continue
        est = estimate(r["kind"], r["base"], _cal(rows, skip=r["scene"]))
        out.append({"scene": r["scene"], "kind": r["kind"],
                    **{m: (r["real"][m], est[m], est[m] / r["real"][m]) for m in _SIZE}})
    return out


def fit_values(rows: list[dict[str, Any]]) -> dict[str, dict[str, list[float]]]:
    """Per room kind: the fit scenes' ``receptacles`` and ``objects`` (a dev plan's real counts, any other
    fit scene's estimate), one value a scene."""
    cal = _cal(rows)
    out: dict[str, dict[str, list[float]]] = {k: {m: [] for m in _SIZE} for k in ROOM_KINDS}
    for r in rows:
        if r["split"] == "fit":
            vals = r["real"] or estimate(r["kind"], r["base"], cal)
            for m in _SIZE:
                out[r["kind"]][m].append(vals[m])
    return out


def fit_rooms_on_layouts(rows: list[dict[str, Any]], rule: str = GENERATOR_RULE) -> dict[str, RoomKind]:
    """:data:`~agentgym_credit.envs.alfworld.rooms.SHAPES` fitted (``rule``) on :func:`fit_values`."""
    vals = fit_values(rows)
    return {k: fit_room_kind(SHAPES[k], vals[k]["receptacles"], vals[k]["objects"], rule) for k in SHAPES}


def admissible_offsets(real: list[dict[str, Any]]) -> dict[str, float]:
    """Per room kind: the median over its dev floor plans of (admissible at the start - receptacles)."""
    rows = [{**g, "extra": g["admissible"] - g["receptacles"]} for g in real if g["admissible"] is not None]
    return {k: statistics.median(_plan_values([g for g in rows if g["room"] == k], "extra")) for k in ROOM_KINDS}


def held_out_rows(rows: list[dict[str, Any]], offsets: dict[str, float]) -> list[dict[str, Any]]:
    """The held-out scenes as real rows for :func:`~.alfworld_rooms.verdicts`: estimated counts, admissible =
    receptacles + the kind's offset, no expert steps."""
    cal = _cal(rows)
    out = []
    for r in rows:
        if r["split"] == "held_out":
            est = estimate(r["kind"], r["base"], cal)
            out.append({"room": r["kind"], "plan": r["scene"], **est,
                        "admissible": est["receptacles"] + offsets[r["kind"]], "expert_steps": None})
    return out


def _task_types(kind: str) -> list[str]:
    from agentgym_credit.envs.alfworld.generator import TASK_TYPES, room_kinds_for

    return [t for t in TASK_TYPES if kind in room_kinds_for(t)]


def generated_games(rooms: dict[str, RoomKind], n: int, engine: Any, salt: int) -> list[dict[str, Any]]:
    """``n`` generated games a room kind (its task types in turn), measured; each won by the oracle when
    one of five seeds gives a winnable game (``expert_steps`` None otherwise)."""
    out = []
    for kind in ROOM_KINDS:
        types = _task_types(kind)
        for m in range(n):
            ref = {"game": f"layouts-{kind}", "task_type": types[m % len(types)], "room": kind, "plan": -1}
            out += _generated(rooms, ref, 1, engine, salt=salt * 100_000 + m)
    return out


def drawn_rooms(rooms: dict[str, RoomKind], n: int, played: list[dict[str, Any]], salt: int) -> list[dict[str, Any]]:
    """``n`` generated problems a room kind (its task types in turn), measured by their PDDL counts alone (no
    play, so many are cheap); admissible = receptacles + the median (admissible - receptacles) of the kind's
    ``played`` games of the same rooms."""
    from agentgym_credit.bench.envs.alfworld_games import problem_counts
    from agentgym_credit.envs.alfworld.generator import generate_problem

    out = []
    for kind in ROOM_KINDS:
        extra = statistics.median(g["admissible"] - g["receptacles"] for g in played
                                  if g["room"] == kind and g["admissible"] is not None)
        types = _task_types(kind)
        for m in range(n):
            p = generate_problem(types[m % len(types)], salt * 1_000_000 + m, rooms=rooms, kind=kind)
            c = problem_counts(p.problem)
            out.append({"room": kind, "plan": -1, **c, "admissible": c["receptacles"] + extra, "expert_steps": None})
    return out


def _estimator_lines(check: list[dict[str, Any]]) -> list[str]:
    lines = ["| dev floor plan | room | receptacles real / estimated (ratio) | objects real / estimated (ratio) |",
             "|---:|---|---|---|"]
    for c in check:
        cells = [f"{c[m][0]:g} / {c[m][1]:g} ({c[m][2]:.2f}{'' if abs(c[m][2] - 1) <= TOLERANCE else ' ✗'})"
                 for m in _SIZE]
        lines.append(f"| {c['scene']} | {c['kind']} | {cells[0]} | {cells[1]} |")
    for m in _SIZE:
        n_in = sum(abs(c[m][2] - 1) <= TOLERANCE for c in check)
        lines.append(f"\n{m}: {n_in}/{len(check)} dev plans estimated within {TOLERANCE:.0%}.")
    return lines


def _split_lines(rows: list[dict[str, Any]], fit: dict[str, dict[str, list[float]]]) -> list[str]:
    lines = []
    for k in ROOM_KINDS:
        held = [r["scene"] for r in rows if r["kind"] == k and r["split"] == "held_out"]
        fit_s = [r for r in rows if r["kind"] == k and r["split"] == "fit"]
        rv = fit[k]["receptacles"]
        lines.append(f"- {k}: fit {len(fit_s)} scenes ({sum(1 for r in fit_s if r['real'])} dev floor plans), "
                     f"receptacles median {statistics.median(rv):g} [{min(rv):g}-{max(rv):g}]; held out "
                     f"{', '.join(map(str, held))}")
    return lines


def _unseen_lines(rows: list[dict[str, Any]], held: list[dict[str, Any]], gen: list[dict[str, Any]]) -> list[str]:
    lines = ["| scene | room | estimated receptacles | generated receptacles below it | estimated admissible | "
             "generated admissible below it |", "|---:|---|---:|---:|---:|---:|"]
    for h in held:
        if h["plan"] not in VALID_UNSEEN:
            continue
        mine = [g for g in gen if g["room"] == h["room"]]
        cells = []
        for m in ("receptacles", "admissible"):
            vals = [g[m] for g in mine if g[m] is not None]
            below = sum(v < h[m] for v in vals) / max(len(vals), 1)
            cells += [f"{h[m]:g}", f"{below:.0%}"]
        lines.append(f"| {h['plan']} | {h['room']} | " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m agentgym_credit.bench.envs.alfworld_rooms_layouts",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--per-kind", type=int, default=24, help="generated games per room kind and generator")
    ap.add_argument("--drawn", type=int, default=400, help="generated problems per room kind measured unplayed")
    ap.add_argument("--out", default="benchmarks/envs/alfworld_rooms_layouts.md")
    argv = sys.argv[1:] if argv is None else list(argv)
    args = ap.parse_args(argv)
    if args.per_kind < 1 or args.drawn < 1:
        ap.error("--per-kind and --drawn must be >= 1")
    from agentgym_credit.bench.envs.alfworld_rooms import real_games
    from agentgym_credit.envs.alfworld.engine import make_engine

    engine = make_engine(fast=True, facts=True)
    load0, t0 = os.getloadavg()[0], time.perf_counter()
    try:
        real = real_games(engine)
        rows = layout_rows(dev_plan_counts(real))
    except FileNotFoundError as e:
        print(e, file=sys.stderr)
        return 1
    print(f"alfworld_rooms_layouts: {len(rows)} scenes, {len(real)} dev games; generating", flush=True)
    offsets = admissible_offsets(real)
    held = held_out_rows(rows, offsets)
    fits = {rule: fit_rooms_on_layouts(rows, rule) for rule in ("median", "spread")}
    dev_only = fit_rooms(real, "median")  # the generator's ROOMS before issue 45
    results = {}
    for name, rooms, salt in (("dev-only", dev_only, 1), ("median", fits["median"], 2), ("spread", fits["spread"], 3)):
        gen = generated_games(rooms, args.per_kind, engine, salt)
        drawn = drawn_rooms(rooms, args.drawn, gen, salt)
        results[name] = (verdicts(held, gen), gen, verdicts(held, drawn), drawn)
        print(f"alfworld_rooms_layouts: {name} done, {time.perf_counter() - t0:.0f} s", flush=True)
    cmd = "python -m agentgym_credit.bench.envs.alfworld_rooms_layouts" + (" " + " ".join(argv) if argv else "")
    lines = [
        "# ALFWorld room sizes fitted to the scene layouts, checked on held-out scenes",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: `{platform.platform()}`, Python {platform.python_version()}, {os.cpu_count()} CPUs, load average "
        f"{load0:.1f} before / {os.getloadavg()[0]:.1f} after (shared); {time.perf_counter() - t0:.0f} s.",
        "",
        f"Scenes: the {len(rows)} ALFRED scene layouts of the installed alfworld package (`gen/layouts`) and the "
        f"{len(real)} dev games ({len({g['plan'] for g in real})} floor plans; eval/ never read). Held out (rule "
        f"fixed before any fit, `benchmarks/envs/alfworld_rooms_layouts.predictions.md`): ALFRED valid_unseen "
        f"{', '.join(map(str, VALID_UNSEEN))} and every scene ending in {' or '.join(map(str, HELD_OUT_DIGITS))}, "
        "dev floor plans excepted. A fit scene counts by its dev games' PDDL counts when it is a dev floor plan, "
        "else by its layout estimate; a held-out scene by its layout estimate (layout units scaled per room kind "
        "by the dev plans' median real/layout ratio), its admissible commands = estimated receptacles + the "
        "kind's median (admissible - receptacles) over the dev games: "
        + ", ".join(f"{k} {offsets[k]:g}" for k in ROOM_KINDS) + ". Generated: "
        f"{args.per_kind} games a room kind and generator, measured by playing (PDDL counts, admissible after "
        f"reset, oracle expert steps on the fast engine). A cell: generated median / held-out scenes' median, "
        f"✗ when off by more than {TOLERANCE:.0%}.",
        "",
        "## Split and fit data (receptacles: the values the fit used)",
        "",
        *_split_lines(rows, fit_values(rows)),
        "",
        "## The layout estimate, each dev floor plan left out of its calibration",
        "",
        *_estimator_lines(estimator_check(rows)),
        "",
    ]
    for name, (vs, gen, drawn, _) in results.items():
        title = ("rule `median` on the dev floor plans alone (the generator's ROOMS before issue 45)"
                 if name == "dev-only" else f"rule `{name}` on the fit scenes + dev floor plans"
                 + (" (the generator's ROOMS)" if name == GENERATOR_RULE and fits[name] == ROOMS else ""))
        won = sum(g["expert_steps"] is not None for g in gen)
        steps = {k: statistics.median([g["expert_steps"] for g in gen if g["room"] == k and g["expert_steps"]] or [0])
                 for k in ROOM_KINDS}
        lines += [f"## {title}", "", *_table(vs), "",
                  f"Medians within {TOLERANCE:.0%}: {_score(vs)[0]}/{len(vs)} (receptacles and admissible: "
                  f"{sum(v['within'] for v in vs if v['measure'] != 'objects')}/"
                  f"{sum(1 for v in vs if v['measure'] != 'objects')}). Oracle expert won {won}/{len(gen)} "
                  "generated games; median expert steps " + ", ".join(f"{k} {steps[k]:g}" for k in ROOM_KINDS)
                  + ".", "",
                  f"The same rooms, {args.drawn} generated problems a room kind measured by PDDL counts alone "
                  "(admissible = receptacles + the played games' offset): the played sample's median is noisy at "
                  f"{args.per_kind} games.", "", *_table(drawn), "",
                  f"Medians within {TOLERANCE:.0%}: {_score(drawn)[0]}/{len(drawn)} (receptacles and admissible: "
                  f"{sum(v['within'] for v in drawn if v['measure'] != 'objects')}/"
                  f"{sum(1 for v in drawn if v['measure'] != 'objects')}).", ""]
    lines += [f"## ALFWorld's held-back scenes (valid_unseen) among the {args.drawn} drawn rooms a kind of rule "
              "`spread`", "",
              *_unseen_lines(rows, held, results["spread"][3]), "",
              f"Rule `{GENERATOR_RULE}` fitted on the fit scenes + dev floor plans (written into "
              "`agentgym_credit/envs/alfworld/rooms.py` as ROOMS; `tests/test_alfworld_layouts.py` refits and "
              "compares):", "", *_room_lines(fits[GENERATOR_RULE], skew=True), ""]
    write_atomic(args.out, "\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["GENERATOR_RULE", "admissible_offsets", "dev_plan_counts", "drawn_rooms", "estimator_check", "fit_rooms_on_layouts", "fit_values",
           "generated_games", "held_out_rows", "layout_rows", "main", "small_objects"]
