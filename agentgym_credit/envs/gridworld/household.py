"""``HouseholdEnv`` (``credit/Household-v0``): a small ALFWorld-like household with an exact model.

A room of receptacles (cabinets, drawers and a fridge that open and close; countertops, shelves,
tables and a sinkbasin that do not), a few objects, and one goal in ALFWorld's task families:
``pick_and_place`` ("put a mug in shelf 1"), ``pick_clean_then_place`` ("put a clean mug in shelf
1", clean it with the sinkbasin first) and ``pick_cool_then_place`` (cool it with the fridge).
Commands are ALFWorld's: ``go to cabinet 2``, ``open cabinet 2``, ``close cabinet 2``,
``take mug 1 from cabinet 2``, ``put mug 1 in/on shelf 1``, ``clean mug 1 with sinkbasin 1``,
``cool mug 1 with fridge 1``, ``look``, ``inventory``.

The whole reachable state space of a task is enumerated at reset (breadth first, cached per task):
a few hundred to a few thousand states with the defaults. The state is a fact set (where the agent
is, which receptacles are open, where each object is, what is held, whether the goal object is
clean/cool); ``state_key`` is that set sorted. Observations are functions of the state in ALFWorld's
words ("You arrive at cabinet 2. The cabinet 2 is open. In it, you see a mug 1."). As in ALFWorld
the text shows only the receptacle in front of the agent and what it carries — not what lies in
other receptacles, which ones are open elsewhere, nor whether an object is clean or cool — so the
task is partially observed: many states share one text (``obs_key`` aliasing; about 13 states per
distinct observation for the median default task).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from agentgym_credit.envs.gridworld.model import TabularModel
from agentgym_credit.envs.gridworld.tabular import TabularTextEnv, build_model, canonical_action

TASK_TYPES: tuple[str, ...] = ("pick_and_place", "pick_clean_then_place", "pick_cool_then_place")
"""Goal families (ALFWorld's names)."""

OPENABLE_KINDS: tuple[str, ...] = ("cabinet", "drawer")
PLAIN_KINDS: tuple[str, ...] = ("countertop", "shelf", "diningtable", "sidetable")
MAX_OPENABLE = 3
"""At most this many receptacles open and close (the fridge included): 2**k factor in the states."""
OBJECT_KINDS: tuple[str, ...] = ("mug", "apple", "plate", "bowl", "cup", "potato", "tomato", "spoon", "egg", "pan")

_PUT = re.compile(r"^put (.+?) (?:in/on|in|on|into|onto) (.+)$")


@dataclass(frozen=True)
class HouseholdTask:
    """One generated task: receptacles (``openable`` flags), objects and where they start, the goal."""

    kind: str
    receptacles: tuple[str, ...]
    openable: tuple[bool, ...]
    objects: tuple[str, ...]
    start: tuple[int, ...]
    target_object: int
    target_receptacle: int

    @property
    def flag(self) -> str | None:
        """``"clean"``, ``"cool"`` or ``None``: what the goal object must be."""
        return {"pick_clean_then_place": "clean", "pick_cool_then_place": "cool"}.get(self.kind)

    @property
    def goal(self) -> str:
        typ = self.objects[self.target_object].rsplit(" ", 1)[0]
        noun = f"{self.flag} {typ}" if self.flag else typ
        article = "an" if noun[0] in "aeiou" else "a"
        return f"put {article} {noun} in {self.receptacles[self.target_receptacle]}."


def state_facts(task: HouseholdTask, state: tuple) -> list[str]:
    """The facts of a state ``(location, open bitmask, object places, goal flag)`` (any order)."""
    loc, opened, where, flag = state
    recs = task.receptacles
    facts = [f"at {recs[loc] if loc >= 0 else 'middle of room'}"]
    facts += [f"open {recs[j]}" for j in range(len(recs)) if opened >> j & 1]
    facts += [f"holding {o}" if w == -1 else f"in {o} {recs[w]}" for o, w in zip(task.objects, where)]
    if flag:
        facts.append(f"{task.flag} {task.objects[task.target_object]}")
    return facts


def fact_key(facts: list[str]) -> str:
    """Canonical ``state_key`` of a fact set: sorted, ``"; "``-joined (independent of fact order)."""
    return "; ".join(sorted(facts))


def _listing(items: list[str]) -> str:
    """ALFWorld's enumeration: ``a mug 1``, ``a mug 1, and a apple 1``, ``nothing``."""
    if not items:
        return "nothing"
    words = [f"a {x}" for x in items]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + ", and " + words[-1]


class HouseholdEnv(TabularTextEnv):
    """ALFWorld-style household task with an exact model (see module docstring).

    Parameters: ``n_receptacles`` (>= 3, including a sinkbasin / fridge when the goal needs one),
    ``n_objects`` (>= 1; the goal object plus distractors), ``task_types`` (subset of
    :data:`TASK_TYPES`), ``max_steps``, ``n_tasks`` generated from ``task_seed``; ``goal_reward`` when the
    goal holds (terminal), ``-step_cost`` per other step. The number of states grows like
    ``(n_receptacles + 1) * 2**openable * (n_receptacles + 1)**n_objects``; a task with more than
    ``max_states`` reachable states raises ``ValueError`` at its first reset. With
    ``show_status=True`` a cleaned/cooled goal object is named so ("a mug 1 (clean)"); by default it
    is not, as in ALFWorld. ``"put mug 1 in shelf 1"`` and ``"put mug 1 on shelf 1"`` are
    accepted for ALFWorld's ``"put mug 1 in/on shelf 1"``.

    >>> env = HouseholdEnv(n_tasks=3)
    >>> obs, info = env.reset(seed=0, options={"task": 0})
    >>> obs.startswith("-= Welcome to TextWorld, ALFRED! =-")
    True
    >>> "look" in info["admissible_actions"]
    True
    """

    def __init__(
        self,
        n_receptacles: int = 5,
        n_objects: int = 2,
        task_types: tuple[str, ...] | list[str] = TASK_TYPES,
        max_steps: int = 30,
        n_tasks: int = 50,
        goal_reward: float = 1.0,
        step_cost: float = 0.0,
        max_states: int = 20_000,
        show_status: bool = False,
        task_seed: int = 0,
        render_mode: str | None = None,
        invalid_action_reward: float = 0.0,
    ):
        super().__init__(n_tasks=n_tasks, max_steps=max_steps, goal_reward=goal_reward, step_cost=step_cost,
                         task_seed=task_seed, render_mode=render_mode, invalid_action_reward=invalid_action_reward)
        if int(n_receptacles) < 3:
            raise ValueError(f"n_receptacles must be >= 3, got {n_receptacles}")
        if not 1 <= int(n_objects) <= len(OBJECT_KINDS):
            raise ValueError(f"n_objects must be in [1, {len(OBJECT_KINDS)}], got {n_objects}")
        types = tuple(task_types)
        bad = [t for t in types if t not in TASK_TYPES]
        if not types or bad:
            raise ValueError(f"task_types must be a non-empty subset of {TASK_TYPES}, got {list(types)}")
        self.n_receptacles = int(n_receptacles)
        self.n_objects = int(n_objects)
        self.task_types = types
        self.max_states = int(max_states)
        self.show_status = bool(show_status)

    def _task_prefix(self) -> str:
        return "household"

    def _params(self) -> tuple:
        return (self.n_receptacles, self.n_objects, self.task_types, self.max_states, self.show_status)

    def task(self, task: int | str) -> HouseholdTask:
        """The generated task (receptacles, objects, goal) of a task index or id."""
        i = self.task_index(task)
        rng = np.random.default_rng([self.task_seed, i, 4])
        kind = self.task_types[int(rng.integers(len(self.task_types)))]
        kinds: list[tuple[str, bool]] = []
        if kind == "pick_clean_then_place":
            kinds.append(("sinkbasin", False))
        if kind == "pick_cool_then_place":
            kinds.append(("fridge", True))
        # at least one place to put things that is neither the sink nor the fridge
        kinds.append((PLAIN_KINDS[int(rng.integers(len(PLAIN_KINDS)))], False))
        pool = [(k, True) for k in OPENABLE_KINDS] + [(k, False) for k in PLAIN_KINDS]
        while len(kinds) < self.n_receptacles:
            k, op = pool[int(rng.integers(len(pool)))]
            if op and sum(o for _, o in kinds) >= MAX_OPENABLE:  # keeps the state space small
                k, op = PLAIN_KINDS[int(rng.integers(len(PLAIN_KINDS)))], False
            kinds.append((k, op))
        counts: dict[str, int] = {}
        named: list[tuple[str, bool]] = []
        for k, op in kinds:
            counts[k] = counts.get(k, 0) + 1
            named.append((f"{k} {counts[k]}", op))
        named.sort()
        recs = tuple(n for n, _ in named)
        openable = tuple(op for _, op in named)
        objs = tuple(f"{OBJECT_KINDS[int(k)]} 1"
                     for k in rng.choice(len(OBJECT_KINDS), size=self.n_objects, replace=False))
        places = [j for j, r in enumerate(recs) if not r.startswith(("sinkbasin", "fridge"))]
        target_rec = places[int(rng.integers(len(places)))]
        start = [int(rng.integers(len(recs))) for _ in objs]
        while start[0] == target_rec:
            start[0] = int(rng.integers(len(recs)))
        return HouseholdTask(kind, recs, openable, objs, tuple(start), 0, target_rec)

    def _canonical(self, action: str) -> str:
        text = canonical_action(action)
        m = _PUT.match(text)
        return f"put {m.group(1)} in/on {m.group(2)}" if m else text

    def _build(self, task_index: int) -> tuple[TabularModel, str, list[bool], list]:
        tk = self.task(task_index)
        recs, objs = tk.receptacles, tk.objects
        rec_index = {r: j for j, r in enumerate(recs)}
        obj_index = {o: j for j, o in enumerate(objs)}
        step_r = 0.0 - self.step_cost
        # state: (location (-1 = middle of the room), open bitmask, object places (-1 = held), flag)
        start = (-1, 0, tk.start, False)

        def done(s) -> bool:
            _, _, where, flag = s
            return where[tk.target_object] == tk.target_receptacle and (flag or tk.flag is None)

        def visible(s, j: int) -> bool:
            return not tk.openable[j] or bool(s[1] >> j & 1)

        def held(s) -> int:
            return next((k for k, w in enumerate(s[2]) if w == -1), -1)

        def actions(s) -> list[str]:
            if done(s):
                return []
            loc = s[0]
            acts = [f"go to {r}" for j, r in enumerate(recs) if j != loc]
            if loc >= 0:
                r = recs[loc]
                if tk.openable[loc]:
                    acts.append(f"close {r}" if s[1] >> loc & 1 else f"open {r}")
                h = held(s)
                if visible(s, loc):
                    if h < 0:
                        acts += [f"take {o} from {r}" for k, o in enumerate(objs) if s[2][k] == loc]
                    else:
                        acts.append(f"put {objs[h]} in/on {r}")
                if h >= 0 and r.startswith("sinkbasin"):
                    acts.append(f"clean {objs[h]} with {r}")
                if h >= 0 and r.startswith("fridge"):
                    acts.append(f"cool {objs[h]} with {r}")
            return acts + ["inventory", "look"]

        def transition(s, action: str):
            loc, opened, where, flag = s
            verb, _, rest = action.partition(" ")
            if verb == "go":
                ns = (rec_index[rest[3:]], opened, where, flag)
            elif verb == "open":
                ns = (loc, opened | 1 << loc, where, flag)
            elif verb == "close":
                ns = (loc, opened & ~(1 << loc), where, flag)
            elif verb == "take":
                k = obj_index[rest.split(" from ")[0]]
                ns = (loc, opened, where[:k] + (-1,) + where[k + 1:], flag)
            elif verb == "put":
                k = obj_index[rest.split(" in/on ")[0]]
                ns = (loc, opened, where[:k] + (loc,) + where[k + 1:], flag)
            elif verb in ("clean", "cool"):
                k = obj_index[rest.split(" with ")[0]]
                # only the goal's own treatment of the goal object is a change of state that matters
                ns = (loc, opened, where, flag or (verb == tk.flag and k == tk.target_object))
            else:  # look, inventory
                ns = s
            if done(ns):
                return [(1.0, ns, self.goal_reward, True)]
            return [(1.0, ns, step_r, False)]

        def key(s) -> str:
            return fact_key(state_facts(tk, s))

        def name(s, k: int) -> str:
            shown = self.show_status and s[3] and k == tk.target_object
            return f"{objs[k]} ({tk.flag})" if shown else objs[k]

        def observe(s) -> str:
            loc, opened, where, _ = s
            if loc < 0:
                text = ("-= Welcome to TextWorld, ALFRED! =-\n\nYou are in the middle of a room. Looking quickly "
                        f"around you, you see {_listing(list(recs))}.\n\nYour task is to: {tk.goal}")
            else:
                r = recs[loc]
                inside = _listing([name(s, k) for k, w in enumerate(where) if w == loc])
                if not tk.openable[loc]:
                    text = f"You arrive at {r}. On the {r}, you see {inside}."
                elif opened >> loc & 1:
                    text = f"You arrive at {r}. The {r} is open. In it, you see {inside}."
                else:
                    text = f"You arrive at {r}. The {r} is closed."
            h = held(s)
            if h >= 0:
                text += f" You are carrying: a {name(s, h)}."
            if done(s):
                text += " You have completed the task. You won!"
            return text

        model, order = build_model(start, actions, transition, key, observe, self.max_steps,
                                   max_states=self.max_states)
        return model, tk.goal, [done(s) for s in order], order

    def equivalent_state_keys(self, rng: np.random.Generator, n: int) -> list[str]:
        """``state_key`` of ``n`` renderings of the current state with its facts in shuffled order.

        The contract checker's surface-noise hook: all must equal ``info["state_key"]``.
        """
        c = self._task
        if c is None:
            raise AttributeError("equivalent_state_keys is defined after reset()")
        facts = state_facts(self.task(c.task_id), c.states[self._s])
        return [fact_key([facts[int(i)] for i in rng.permutation(len(facts))]) for _ in range(n)]


__all__ = ["HouseholdEnv", "HouseholdTask", "TASK_TYPES", "state_facts", "fact_key"]
