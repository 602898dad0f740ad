"""A fast oracle expert for ALFWorld games: the next command from the engine's true facts.

What lives here:

- :class:`TaskSpec` and :func:`task_spec` — task type, target object type and receptacle (or lamp) type,
  read from a game's PDDL ``:goal`` (works for real and generated games alike, no ``traj_data`` needed);
- :func:`oracle_action` — the next command of a short plan computed from the current facts: drop a
  wrong object, fetch a target object (open its receptacle if closed), clean / heat / cool it at the
  sink basin / microwave / fridge, put it into the goal receptacle (the same one twice for pick two),
  or take it to the desk lamp and use the lamp;
- :func:`assess` — the same command and, when there is none, why the goal can no longer be reached
  (a dead end); :func:`dead_end` — only the why.

Dead ends. Every command the oracle would need exists unless the game has become unwinnable: the agent
holds an object no receptacle of the game can hold (a real game can let it pick up such a thing — a
teddy bear on a bed, a paper towel roll; the hand then stays full for good, since ALFWorld has no
``drop``), or no object of the target type is left to take. In both cases no plan reaches the goal
(checked against the engine's planner in ``tests/test_alfworld_dead_end.py``).

Why not the engine's planner: Fast Downward finds optimal plans but takes tens of seconds on large
kitchens (measured on the dev games); the oracle is a few list scans per step. The env falls back to
the planner if the oracle's command is ever not admissible.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agentgym_credit.envs.alfworld.statekeys import fact_args

_GOAL_OBJ = re.compile(r"\(objectType \?(\w+) (\w+)Type\)", re.I)
_GOAL_REC = re.compile(r"\(receptacleType \?\w+ (\w+)Type\)", re.I)

_NEEDS = {
    "pick_clean_then_place_in_recep": ("isclean", "clean", ("sinkbasintype",)),
    "pick_heat_then_place_in_recep": ("ishot", "heat", ("microwavetype",)),
    "pick_cool_then_place_in_recep": ("iscool", "cool", ("fridgetype",)),
}


@dataclass(frozen=True)
class TaskSpec:
    """What a game asks: task type, object type, and receptacle type (lamp type for light tasks)."""

    task_type: str
    obj: str
    target: str


def task_spec(task_type: str, pddl_problem: str) -> TaskSpec:
    """Read the target types from the problem's goal formula (lower case, without ``Type``)."""
    goal = pddl_problem[pddl_problem.index("(:goal"):]
    objs = _GOAL_OBJ.findall(goal)
    if task_type == "look_at_obj_in_light":
        lamp = next(t for v, t in objs if v.lower() == "ot")
        obj = next(t for v, t in objs if v.lower() != "ot")
        return TaskSpec(task_type, obj.lower(), lamp.lower())
    rec = _GOAL_REC.findall(goal)
    return TaskSpec(task_type, objs[0][1].lower(), rec[0].lower())


_READ = frozenset({"objecttype", "receptacletype", "receptacleatlocation", "inreceptacle", "atlocation", "holds",
                   "openable", "opened", "cancontain", "isclean", "ishot", "iscool"})


class _Facts:
    """Indexes of the fact kinds the oracle reads.

    Every list is sorted: the engine lists facts in an order that depends on the process (string hash
    seed, which process wrote the translation cache), and an object the game places in two receptacles
    must resolve to the same one in every process.
    """

    def __init__(self, facts: Any):
        by: dict[str, list[tuple[str, ...]]] = {}
        for f in facts:
            if f.name in _READ:
                by.setdefault(f.name, []).append(fact_args(f))
        self.by = {k: sorted(v) for k, v in by.items()}
        self.otype = {a: t for a, t in self.by.get("objecttype", [])}
        self.rtype = {a: t for a, t in self.by.get("receptacletype", [])}
        self.rloc = {r: loc for r, loc in self.by.get("receptacleatlocation", [])}
        self.inrec: dict[str, str] = {}
        for o, r in self.by.get("inreceptacle", []):
            self.inrec.setdefault(o, r)  # the first in sorted order when a game lists two
        self.agent_loc = self.by.get("atlocation", [("", "")])[0][1]
        self.held = [o for _, o in self.by.get("holds", [])]
        self.openable = {a for (a,) in self.by.get("openable", [])}
        self.opened = {a for (a,) in self.by.get("opened", [])}
        self.can_contain = set(self.by.get("cancontain", []))

    def has(self, pred: str, *args: str) -> bool:
        return tuple(args) in self.by.get(pred, [])


def _reach(f: _Facts, recep: str) -> str | None:
    """The command that brings the agent to ``recep`` and opens it, or ``None`` when already there."""
    if f.rloc.get(recep) != f.agent_loc:
        return f"go to {recep}"
    if recep in f.openable and recep not in f.opened:
        return f"open {recep}"
    return None


def _put_down(f: _Facts, held: str, admissible: Any) -> tuple[str | None, str | None]:
    """Put a wrong object down: where the engine allows it here, else at the first receptacle that can hold
    it; a dead end when no receptacle of the game can hold it."""
    prefix = f"move {held} to "
    if admissible is not None:
        here = sorted(c for c in admissible if c.startswith(prefix))
        if here:
            return here[0], None
    kind = f.otype.get(held)
    holders = sorted(r for r, t in f.rtype.items() if (t, kind) in f.can_contain)
    if not holders:
        return None, f"holding {held}, which no receptacle of the game can hold (the hand can never be emptied)"
    at_here = [r for r in holders if f.rloc.get(r) == f.agent_loc]
    target = (at_here or holders)[0]
    return _reach(f, target) or f"{prefix}{target}", None


def oracle_action(spec: TaskSpec, facts: Any, admissible: Any = None) -> str | None:
    """The oracle's next command from the true facts, or ``None`` when it has nothing to propose.

    ``admissible`` (the engine's admissible commands, optional) lets it put a wrong object down where the
    engine accepts it; without it, at the first receptacle that can hold that kind of object.
    """
    return assess(spec, facts, admissible)[0]


def dead_end(spec: TaskSpec, facts: Any) -> str | None:
    """Why the goal can no longer be reached from these facts, or ``None`` (see the module docstring)."""
    return assess(spec, facts)[1]


def assess(spec: TaskSpec, facts: Any, admissible: Any = None) -> tuple[str | None, str | None]:
    """``(command, dead_end)``: the oracle's next command (as :func:`oracle_action`) and, when it has
    none, why no plan reaches the goal any more (``None`` for both once the goal holds)."""
    return _assess(spec, _Facts(facts), admissible)


def _assess(spec: TaskSpec, f: _Facts, admissible: Any) -> tuple[str | None, str | None]:
    want_o, want_r = spec.obj + "type", spec.target + "type"
    targets = sorted(r for r, t in f.rtype.items() if t == want_r)
    goal_r = targets[0] if targets else None
    if spec.task_type == "pick_two_obj_and_place":
        filled = [r for r in targets if any(f.otype.get(o) == want_o and rr == r for o, rr in f.inrec.items())]
        goal_r = filled[0] if filled else goal_r
    held = f.held[0] if f.held else None

    if held is not None and f.otype.get(held) != want_o:
        return _put_down(f, held, admissible)

    if held is not None:
        if spec.task_type == "look_at_obj_in_light":
            lamps = sorted(o for o, t in f.otype.items() if t == want_r and o in f.inrec)
            if not lamps:
                return None, f"no {spec.target} in the game"
            step = _reach(f, f.inrec[lamps[0]])
            return step or f"use {lamps[0]}", None
        need = _NEEDS.get(spec.task_type)
        if need is not None and not f.has(need[0], held):
            stations = sorted(r for r, t in f.rtype.items() if t in need[2])
            if not stations:
                return None, f"no receptacle to {need[1]} {held} with"
            step = _reach(f, stations[0])
            return step or f"{need[1]} {held} with {stations[0]}", None
        if goal_r is None:
            return None, f"no {spec.target} in the game"
        if (want_r, want_o) not in f.can_contain:
            return None, f"holding {held}, which no {spec.target} can hold"
        return _reach(f, goal_r) or f"move {held} to {goal_r}", None

    done = {o for o, r in f.inrec.items() if r == goal_r} if spec.task_type != "look_at_obj_in_light" else set()
    if spec.task_type != "pick_two_obj_and_place":
        done = set()
    candidates = sorted(o for o, t in f.otype.items() if t == want_o and o in f.inrec and o not in done)
    if not candidates:
        return None, f"no {spec.obj} left to take"
    here = [o for o in candidates if f.rloc.get(f.inrec[o]) == f.agent_loc]
    obj = (here or candidates)[0]
    src = f.inrec[obj]
    return _reach(f, src) or f"take {obj} from {src}", None


__all__ = ["TaskSpec", "task_spec", "oracle_action", "assess", "dead_end"]
