"""A generator of ALFWorld-style PDDL games for the six ALFWorld task types, each checked solvable.

What lives here:

- :data:`TASK_TYPES` — the six ALFWorld task types (pick & place, examine in light, clean, heat, cool,
  pick two), in ALFWorld's order (its ids 1..6).
- :data:`ROOMS` — four room kinds (kitchen, bathroom, bedroom, living room) with the receptacles they hold
  (how many of each) and the small objects found in them, calibrated per kind on the real games
  (:mod:`~agentgym_credit.envs.alfworld.rooms`).
- :func:`generate_problem` — one PDDL problem text for a task type from a seed (deterministic: the same
  seed gives the same text in every process), with the task sentence and the task parameters.
- :func:`generate_game` — the same as a playable game dict (installed domain and grammar, the problem,
  ``solvable``), after the oracle expert's commands, played on the engine, won it (a proof of
  solvability); otherwise the next sub-seed is tried.
- :func:`combo_is_held_out` — the held-out (task type, object, receptacle) combinations of the
  ``eval_out`` split; :func:`combo_can_be_generated` — whether some room can pose a combination.
- :data:`LAMP_TYPES` — the lamps a ``look_at_obj_in_light`` task can name (desk and floor lamps).

Rooms are sized like ALFWorld's floor plans (``benchmarks/envs/alfworld_rooms_layouts.md``: fitted on the dev
floor plans plus ALFWorld's scene layouts, scored on held-out scenes; ``benchmarks/envs/alfworld_games.md`` per
task type; ``benchmarks/envs/alfworld_rooms.md``: the dev-only fit before issue 45): one size per room
drives every receptacle count and the object count, several instances per object kind, and every real
(task type, object, target) combination poseable.

The vocabulary (which receptacle can hold which object, which objects can be heated, cooled, cleaned,
toggled) is read from the installed ``alfworld.gen.constants`` so the problems speak the engine's
language; the rooms and the placement rule are ours. A problem has the same shape as a real ALFWorld
one: ``objectType``/``receptacleType`` facts, ``canContain`` between types, one location per receptacle,
objects ``inReceptacle`` and ``objectAtLocation``, closed openable receptacles, the agent in the middle
of the room, and the goal formula of the task type.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentgym_credit.envs.alfworld.rooms import ROOMS, RoomKind, sample_room
from agentgym_credit.keys import stable_hash

TASK_TYPES: tuple[str, ...] = (
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
)
"""ALFWorld's task types, in ALFWorld's id order (1..6)."""

OPENABLE = ("Cabinet", "Drawer", "Fridge", "Microwave", "Safe")
"""Receptacles that start closed and must be opened (ALFWorld's openable receptacle classes)."""

SURFACES_FOR_LAMP = ("Desk", "SideTable", "Dresser")
LAMP_TYPES = ("DeskLamp", "FloorLamp")
"""Lamps a ``look_at_obj_in_light`` task can name (the real games use both)."""


@functools.cache
def _vocab() -> dict[str, Any]:
    """The engine's vocabulary from the installed ``alfworld.gen.constants`` (sorted: no set order)."""
    import alfworld.gen.constants as c

    static = set(c.RECEPTACLES) - set(c.MOVABLE_RECEPTACLES)
    return {
        "otypes": sorted(o for o in set(c.OBJECTS) - static if not o.endswith("Sliced")),
        "rtypes": sorted(static),
        "can_contain": {r: sorted(v) for r, v in c.VAL_RECEPTACLE_OBJECTS.items()},
        "heatable": sorted(c.VAL_ACTION_OBJECTS["Heatable"]),
        "coolable": sorted(c.VAL_ACTION_OBJECTS["Coolable"]),
        "cleanable": sorted(c.VAL_ACTION_OBJECTS["Cleanable"]),
        "sliceable": sorted(c.VAL_ACTION_OBJECTS["Sliceable"]),
        "receptacle_objects": sorted(c.MOVABLE_RECEPTACLES),
        "templates": _templates(),
    }


def _templates() -> dict[str, list[str]]:
    import alfworld.gen.goal_library as glib

    return {t: list(glib.gdict[t]["templates"]) for t in TASK_TYPES}


def combo_can_be_generated(task_type: str, obj: str, target: str) -> bool:
    """Whether some room can pose ``(task_type, obj, target)`` (names in any case, e.g. ``mug``)."""
    v = _vocab()
    obj, target = obj.lower(), target.lower()
    for kind in _room_kinds_for(task_type):
        room = ROOMS[kind]
        recep_kinds = sorted(r for r, (_, hi) in room.receptacles.items() if hi > 0)
        if task_type == "look_at_obj_in_light" and "SideTable" not in recep_kinds:
            recep_kinds.append("SideTable")
        if any(o.lower() == obj and r.lower() == target for o, r in _eligible_targets(task_type, room, recep_kinds, v)):
            return True
    return False


def combo_is_held_out(task_type: str, obj: str, recep: str) -> bool:
    """True for the ~20 % of (task type, object, receptacle/lamp) combinations kept for ``eval_out``."""
    return stable_hash(f"alfworld-combo:{task_type}:{obj}:{recep}") % 5 == 0


@dataclass
class GeneratedProblem:
    """A generated problem: PDDL text, task sentence, the task's parameters and the room it is set in."""

    task_type: str
    problem: str
    task: str
    params: dict[str, str]
    room: str
    seed: int
    objects: dict[str, str] = field(default_factory=dict)


def room_kinds_for(task_type: str) -> tuple[str, ...]:
    """The room kinds the generator sets ``task_type`` in (repeated kinds are drawn more often)."""
    return _room_kinds_for(task_type)


def _room_kinds_for(task_type: str) -> tuple[str, ...]:
    if task_type in ("pick_heat_then_place_in_recep", "pick_cool_then_place_in_recep"):
        return ("kitchen",)
    if task_type == "pick_clean_then_place_in_recep":  # mostly dishes at the kitchen sink, as in ALFWorld
        return ("kitchen", "kitchen", "kitchen", "bathroom")
    if task_type == "look_at_obj_in_light":
        return ("bedroom", "livingroom")
    return tuple(ROOMS)


def _goal(task_type: str, obj: str, recep: str) -> str:
    ot, rt = f"{obj}Type", f"{recep}Type"
    if task_type == "look_at_obj_in_light":
        return (
            "(and (exists (?ot - object ?r - receptacle ?a - agent ?l - location) (and "
            f"(objectType ?ot {rt}) (toggleable ?ot) (isToggled ?ot) (receptacleAtLocation ?r ?l) "
            "(atLocation ?a ?l) (inReceptacle ?ot ?r))) "
            f"(exists (?o - object ?a - agent) (and (objectType ?o {ot}) (holds ?a ?o))))"
        )
    if task_type == "pick_two_obj_and_place":
        return (
            "(and (exists (?r - receptacle) (exists (?o1 - object) (and "
            f"(objectType ?o1 {ot}) (receptacleType ?r {rt}) (inReceptacle ?o1 ?r) "
            "(exists (?o2 - object) (and (not (= ?o1 ?o2)) "
            f"(objectType ?o2 {ot}) (receptacleType ?r {rt}) (inReceptacle ?o2 ?r)))))))"
        )
    extra = {
        "pick_and_place_simple": "",
        "pick_clean_then_place_in_recep": "(cleanable ?o) (isClean ?o) ",
        "pick_heat_then_place_in_recep": "(heatable ?o) (isHot ?o) ",
        "pick_cool_then_place_in_recep": "(coolable ?o) (isCool ?o) ",
    }[task_type]
    return (
        "(and (exists (?r - receptacle) (exists (?o - object) (and "
        f"{extra}(objectType ?o {ot}) (receptacleType ?r {rt}) (inReceptacle ?o ?r)))))"
    )


def _eligible_targets(task_type: str, room: RoomKind, recep_kinds: list[str], v: dict) -> list[tuple[str, str]]:
    """(object, receptacle-or-lamp) pairs this room can pose for the task type."""
    objs = list(room.objects)
    if task_type == "pick_clean_then_place_in_recep":
        objs = [o for o in objs if o in v["cleanable"]]
    elif task_type == "pick_heat_then_place_in_recep":
        objs = [o for o in objs if o in v["heatable"]]
    elif task_type == "pick_cool_then_place_in_recep":
        objs = [o for o in objs if o in v["coolable"]]
    if task_type == "look_at_obj_in_light":
        return [(o, lamp) for o in objs for lamp in LAMP_TYPES]
    pairs = []
    for o in objs:  # the station itself may be the target (cool a cup, then put it in the microwave)
        holders = [r for r in recep_kinds if o in v["can_contain"].get(r, ())]
        # at least one other receptacle must be able to hold the object at the start
        for r in holders:
            if any(o in v["can_contain"].get(h, ()) for h in recep_kinds if h != r):
                pairs.append((o, r))
    return pairs


def _mangle(kind: str, index: int, salt: int) -> str:
    """An ALFWorld-style id (``Mug_bar_...``); basins keep ALFWorld's ``Sink|...|SinkBasin`` form."""
    coords = f"_bar__plus_{index:02d}_dot_{salt % 100:02d}"
    if kind.endswith("Basin"):
        base = kind[: -len("Basin")]
        return f"{base}{coords}_bar_{kind}"
    return f"{kind}{coords}"


def generate_problem(task_type: str, seed: int, held_out: bool | None = None, *,
                     rooms: Mapping[str, RoomKind] | None = None, kind: str | None = None) -> GeneratedProblem:
    """One ALFWorld-style problem for ``task_type`` from ``seed`` (not yet checked solvable).

    ``held_out`` restricts the target (object, receptacle) combination to the ``eval_out`` set (True),
    to its complement (False) or not at all (None). ``rooms`` replaces :data:`ROOMS` (the room kinds a
    leave-one-floor-plan-out fold fitted) and ``kind`` sets the room kind instead of drawing it.
    """
    if task_type not in TASK_TYPES:
        raise ValueError(f"unknown task type {task_type!r}; expected one of {TASK_TYPES}")
    rooms = ROOMS if rooms is None else rooms
    if kind is not None and kind not in rooms:
        raise ValueError(f"unknown room kind {kind!r}; expected one of {sorted(rooms)}")
    if kind is not None and kind not in _room_kinds_for(task_type):
        raise ValueError(f"no {kind} can pose {task_type} (the generator sets it in {sorted(set(_room_kinds_for(task_type)))})")
    v = _vocab()
    rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, TASK_TYPES.index(task_type)])
    for _ in range(200):
        kinds = _room_kinds_for(task_type) if kind is None else (kind,)
        room = rooms[kinds[int(rng.integers(len(kinds)))]]
        counts, n_objects = sample_room(room, rng)
        if task_type == "look_at_obj_in_light" and not any(counts.get(s, 0) for s in SURFACES_FOR_LAMP):
            counts["SideTable"] = 1
        recep_kinds = sorted(r for r, n in counts.items() if n > 0)
        pairs = _eligible_targets(task_type, room, recep_kinds, v)
        if held_out is not None:
            pairs = [p for p in pairs if combo_is_held_out(task_type, *p) == held_out]
        if pairs:
            break
    else:
        raise ValueError(f"no {kind or 'room'} can pose {task_type} with held_out={held_out}")
    obj, target = pairs[int(rng.integers(len(pairs)))]

    salt = int(rng.integers(1 << 30))
    receptacles: list[tuple[str, str]] = []  # (id, kind)
    for kind in recep_kinds:
        for i in range(counts[kind]):
            receptacles.append((_mangle(kind, i + 1, salt + len(receptacles)), kind))
    locations = {rid: f"loc_bar_{i + 1}_bar_{(salt >> 3) % 97}" for i, (rid, _) in enumerate(receptacles)}
    start = f"loc_bar_0_bar_{(salt >> 3) % 97}"

    # objects: the target (two or more for pick two), distractors of other kinds, a desk lamp for light
    n_target = int(rng.integers(2, 4)) if task_type == "pick_two_obj_and_place" else int(rng.integers(1, 3))
    others = [o for o in room.objects if o != obj]
    n_other = n_objects - n_target
    chosen = [obj] * n_target + [others[int(i)] for i in rng.integers(len(others), size=n_other)]
    objects: list[tuple[str, str, str]] = []  # (id, kind, receptacle id)
    goal_recep = None if task_type == "look_at_obj_in_light" else target
    for k, kind in enumerate(chosen):
        holders = [rid for rid, rk in receptacles if kind in v["can_contain"].get(rk, ())]
        if kind == obj and goal_recep is not None:
            holders = [rid for rid, rk in receptacles if kind in v["can_contain"].get(rk, ()) and rk != goal_recep]
        if not holders:
            continue
        rid = holders[int(rng.integers(len(holders)))]
        objects.append((_mangle(kind, k + 1, salt + 7 * k), kind, rid))
    if task_type == "look_at_obj_in_light":
        surfaces = [rid for rid, rk in receptacles if rk in SURFACES_FOR_LAMP]
        lamp_at = surfaces[int(rng.integers(len(surfaces)))]
        objects.append((_mangle(target, 1, salt), target, lamp_at))

    lines = [f"(define (problem generated_{task_type}_{seed})", "(:domain alfred)", "(:objects", "agent1 - agent"]
    lines += [f"{t}Type - otype" for t in v["otypes"]]
    lines += [f"{t}Type - rtype" for t in v["rtypes"]]
    lines += [f"{oid} - object" for oid, _, _ in objects]
    lines += [f"{rid} - receptacle" for rid, _ in receptacles]
    lines += [f"{loc} - location" for loc in [start, *locations.values()]]
    lines += [")", "(:init"]
    lines.append(f"(atLocation agent1 {start})")
    for rid, kind in receptacles:
        lines.append(f"(receptacleType {rid} {kind}Type)")
        lines.append(f"(receptacleAtLocation {rid} {locations[rid]})")
        if kind in OPENABLE:
            lines.append(f"(openable {rid})")
    for kind in recep_kinds:
        for ot in v["can_contain"].get(kind, ()):
            if ot in v["otypes"]:
                lines.append(f"(canContain {kind}Type {ot}Type)")
    for oid, kind, rid in objects:
        lines.append(f"(objectType {oid} {kind}Type)")
        lines.append(f"(inReceptacle {oid} {rid})")
        lines.append(f"(objectAtLocation {oid} {locations[rid]})")
        if kind in LAMP_TYPES:
            lines.append(f"(toggleable {oid})")
            continue
        lines.append(f"(pickupable {oid})")
        for prop in ("cleanable", "heatable", "coolable", "sliceable"):
            if kind in v[prop]:
                lines.append(f"({prop} {oid})")
        if kind in v["receptacle_objects"]:
            lines.append(f"(isReceptacleObject {oid})")
    lines += [")", f"(:goal {_goal(task_type, obj, target)})", ")"]

    templates = v["templates"][task_type]
    template = templates[int(rng.integers(len(templates)))]
    sentence = template.format(obj=obj.lower(), recep=target.lower(), toggle=target.lower(), mrecep="")
    params = {"object_target": obj, "parent_target": "" if goal_recep is None else target,
              "toggle_target": target if goal_recep is None else ""}
    return GeneratedProblem(task_type, "\n".join(lines) + "\n", f"Your task is to: {sentence}.", params,
                            room.name, int(seed), {oid: kind for oid, kind, _ in objects})


def problem_to_game(p: GeneratedProblem) -> dict[str, Any]:
    """A game dict (installed domain and grammar carrying the problem's task sentence)."""
    from agentgym_credit.envs.alfworld.logic import grammar_with_task, installed_logic

    return {
        "pddl_domain": installed_logic()[0],
        "grammar": grammar_with_task(p.task),
        "pddl_problem": p.problem,
        "solvable": True,
        "task_type": p.task_type,
        "pddl_params": p.params,
        "room": p.room,
        "seed": p.seed,
    }


def check_solvable(game: dict[str, Any], engine: Any = None, max_steps: int = 60) -> list[str] | None:
    """The oracle expert's winning command list when played on the engine, else ``None``.

    Every command must be admissible when played, so a returned list is a proof that the game can be won.
    """
    return play_oracle(game, engine, max_steps)[0]


def play_oracle(game: dict[str, Any], engine: Any = None, max_steps: int = 60) -> tuple[list[str] | None, int]:
    """``(winning command list or None, number of admissible commands at the start)``: the oracle expert
    played on the engine, as :func:`check_solvable` (which returns the first part)."""
    from agentgym_credit.envs.alfworld.engine import make_engine
    from agentgym_credit.envs.alfworld.expert import oracle_action, task_spec

    engine = engine or make_engine(fast=True, facts=True)
    spec = task_spec(game["task_type"], game["pddl_problem"])
    engine.load(game)
    state = engine.reset()
    n_start = len(state["admissible_commands"])
    plan: list[str] = []
    while not state["won"] and len(plan) < max_steps:
        cmd = oracle_action(spec, state["facts"])
        if cmd is None or cmd not in state["admissible_commands"]:
            return None, n_start
        plan.append(cmd)
        state, _, _ = engine.step(cmd)
    return (plan if state["won"] and plan else None), n_start


@functools.lru_cache(maxsize=64)
def generate_game(task_type: str, seed: int, held_out: bool | None = None) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A solvable game for ``task_type`` from ``seed``, and the planner's winning plan.

    Sub-seeds ``seed, seed + 1_000_003, ...`` are tried until the oracle expert wins the game on the
    engine (in practice the first one). Memoized per process; do not mutate the returned dict.
    """
    for attempt in range(20):
        problem = generate_problem(task_type, int(seed) + attempt * 1_000_003, held_out)
        game = problem_to_game(problem)
        game["seed"] = int(seed)
        plan = check_solvable(game)
        if plan is not None:
            return game, tuple(plan)
    raise RuntimeError(f"no solvable {task_type} game from seed {seed} after 20 attempts")  # pragma: no cover


__all__ = [
    "TASK_TYPES",
    "ROOMS",
    "play_oracle",
    "RoomKind",
    "OPENABLE",
    "GeneratedProblem",
    "generate_problem",
    "problem_to_game",
    "check_solvable",
    "generate_game",
    "combo_is_held_out",
    "room_kinds_for",
    "combo_can_be_generated",
    "LAMP_TYPES",
]
