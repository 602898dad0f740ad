"""A TextWorld game's quest tracking as snapshot data (issue 45: a foreign snapshot's first restore).

What lives here:

- :func:`dump` — the quest progressions of a game progression (what textworld tracks with expert infos on: each
  event's triggered/untriggerable flags, policy and dependency tree, each quest's completions) as one JSON text, or
  ``None`` when the game tracks no quest (or an action of a tree cannot be named: the restore then replays);
- :func:`readable` — whether a progression's quests have textworld 1.7's fields (what is stored and set);
- :func:`load` — the inverse, every field checked (a :class:`~agentgym_credit.errors.SnapshotError` otherwise):
  textworld 1.7's ``QuestProgression`` objects as the played game had them.

Why. A restore in another process re-applied the snapshot's logic actions with quest tracking on, so it paid
textworld's policy tracking (flatten a tree, search for a shorter policy, remove, push) once per logged action
and event: 2.8-6.5x a step (benchmarks/speed/textworld_restore.md). The tracking is path dependent (a detour
pushes reverse actions into the trees; the final state alone does not give the plan), so its state is carried:
the replay applies the actions to the facts only, then sets these progressions.

What is stored holds no action text. Each action is named by how the played game came by it: an action or the
condition of one of the game's own events (``["e", quest, 0 win | 1 fail, event, k]``, ``k`` = the event's action
count for its condition), a logged action (``["l", i]``: the snapshot's own action log, checked by the replay),
or the reverse (``["r", j]``: ``kb.get_reverse_action``) or inverse (``["i", j]``: ``Action.inverse``) of an
earlier entry ``j`` — what ``ActionDependencyTree.remove`` pushes. So every action is built by this process from
the game file and the checked log; a forged entry can only name actions the game's logic makes.

A tree is stored flat (no nesting for the JSON depth limit): its elements as ``[action, parent element]`` (the
element's ``parent`` as textworld set it when it was pushed, which ordering walks; parents listed first) and
its nodes as ``[element, parent node]`` in order (roots have ``-1``; a child listed after its parent, children
in their order). Each child's action must be one its parent's action depends on (what ``push`` requires), and
an unfinished event of an unfinished, non-repeatable quest must not be triggering in the restored state (the
played game would have marked it): anything else is refused. The snapshot's seal authenticates the rest.
"""

from __future__ import annotations

import json
from typing import Any

from agentgym_credit.errors import SnapshotError

MAX_ENTRIES = 1 << 14
"""Most actions, elements or nodes a stored progression may hold (each; ours hold tens)."""

_QUEST_FIELDS = {"quest", "kb", "nb_completions", "win_events", "fail_events"}
_EVENT_FIELDS = {"_kb", "event", "_triggered", "_untriggerable", "_policy", "_tree"}


def _err(why: str) -> SnapshotError:
    return SnapshotError(f"TextWorld snapshot payload: quests: {why}")


def readable(progression: Any) -> bool:
    """The quest progressions have textworld 1.7's fields (another version's are not stored: a restore replays)."""
    return all(set(vars(qp)) == _QUEST_FIELDS and all(set(vars(e)) == _EVENT_FIELDS
                                                      for e in (*qp.win_events, *qp.fail_events))
               for qp in progression.quest_progressions)


class _Namer:
    """Names each action by how the game came by it (module doc); appends to ``table``."""

    def __init__(self, game: Any, logged: list[Any]) -> None:
        self.kb, self.table, self.index = game.kb, [], {}
        self.base: dict[Any, list] = {}
        for qi, quest in enumerate(game.quests):
            for w, events in enumerate((quest.win_events, quest.fail_events)):
                for ei, event in enumerate(events):
                    for k, action in enumerate((*event.actions, event.condition)):
                        self.base.setdefault(action, ["e", qi, w, ei, k])
        for i, action in enumerate(logged):
            self.base.setdefault(action, ["l", i])
        self.by_sets: dict[tuple, list[Any]] = {}
        for action in self.base:
            self.by_sets.setdefault((action._pre_set, action._post_set), []).append(action)

    def _add(self, action: Any, ref: list) -> int:
        self.index[action] = len(self.table)
        self.table.append(ref)
        return self.index[action]

    def name(self, action: Any) -> int | None:
        """The table index of ``action`` (added with what it derives from), or ``None`` when none is found."""
        found = self.index.get(action)
        if found is not None:
            return found
        ref = self.base.get(action)
        if ref is not None:
            return self._add(action, ref)
        # a reverse or inverse swaps pre- and postconditions: look two steps back among the game's own actions
        sets = (action._pre_set, action._post_set)
        for start in (*self.by_sets.get(sets[::-1], ()), *self.by_sets.get(sets, ())):
            chain = self._chain(start, action, 3)
            if chain is not None:
                j = self.name(start)
                for kind, made in chain:
                    j = self.index.get(made) if made in self.index else self._add(made, [kind, j])
                return j
        return None

    def _chain(self, start: Any, goal: Any, depth: int) -> list | None:
        """Steps ``[(kind, action), ...]`` from ``start`` to ``goal`` by reverses/inverses, at most ``depth``."""
        frontier = [(start, [])]
        for _ in range(depth):
            nxt = []
            for action, path in frontier:
                for kind, made in (("r", self.kb.get_reverse_action(action)), ("i", action.inverse())):
                    if made is None:
                        continue
                    if made == goal:
                        return [*path, (kind, made)]
                    nxt.append((made, [*path, (kind, made)]))
            frontier = nxt
        return None


def _tree_data(tree: Any, namer: _Namer) -> list | None:
    elements: list[list[int]] = []
    ids: dict[int, int] = {}

    def element(e: Any) -> int | None:
        chain = []
        while e is not None and id(e) not in ids:
            chain.append(e)
            e = e.parent
        for e in reversed(chain):  # parents first
            a = namer.name(e.value)
            if a is None:
                return None
            ids[id(e)] = len(elements)
            elements.append([a, -1 if e.parent is None else ids[id(e.parent)]])
        return ids[id(chain[0])] if chain else ids[id(e)]

    nodes: list[list[int]] = []
    stack = [(root, -1) for root in reversed(tree.roots)]
    while stack:
        node, parent = stack.pop()
        e = element(node.element)
        if e is None:
            return None
        nodes.append([e, parent])
        me = len(nodes) - 1
        stack.extend((child, me) for child in reversed(node.children))
    return [elements, nodes]


def dump(progression: Any, logged: list[Any]) -> str | None:
    """The quest progressions of ``progression`` (textworld's ``GameProgression``) as JSON text; ``logged``: the
    logic actions applied since reset (the snapshot's action log). ``None`` when it tracks no quest, when the
    progressions are not textworld 1.7's, or when an action of a tree cannot be named (the restore then replays
    the log with tracking on, as before)."""
    if not progression.tracking_quests or not readable(progression):
        return None
    namer = _Namer(progression.game, logged)
    quests = []
    for qp in progression.quest_progressions:
        groups = []
        for events in (qp.win_events, qp.fail_events):
            group = []
            for e in events:
                policy = [namer.name(a) for a in e._policy]
                tree = _tree_data(e._tree, namer)
                if tree is None or None in policy:
                    return None
                group.append([e._triggered, e._untriggerable, policy, *tree])
            groups.append(group)
        quests.append([qp.nb_completions, *groups])
    return json.dumps({"actions": namer.table, "quests": quests}, separators=(",", ":"))


def _nat(value: Any, below: int, what: str) -> int:
    if value.__class__ is not int or not 0 <= value < below:
        raise _err(f"{what} must be an int in [0, {below}), got {value!r:.40}")
    return value


def _list(value: Any, what: str, size: int | None = None) -> list:
    if value.__class__ is not list or len(value) > MAX_ENTRIES or (size is not None and len(value) != size):
        n = f"{size} items" if size is not None else f"at most {MAX_ENTRIES} items"
        raise _err(f"{what} must be a list of {n}")
    return value


def _root(parent: Any) -> bool:
    return parent.__class__ is int and parent == -1


def _actions(refs: Any, game: Any, logged: list[Any]) -> list[Any]:
    """Each table entry built here from the game and the checked log (module doc)."""
    out: list[Any] = []
    for ref in _list(refs, "actions"):
        if ref.__class__ is not list or not ref or ref[0] not in ("e", "l", "r", "i"):
            raise _err(f"an action must be ['e', quest, 0|1, event, k], ['l', i], ['r', j] or ['i', j], got {ref!r:.60}")
        kind = ref[0]
        if kind == "e":
            _list(ref, "an event action", 5)
            quest = game.quests[_nat(ref[1], len(game.quests), "quest")]
            events = (quest.win_events, quest.fail_events)[_nat(ref[2], 2, "win|fail")]
            event = events[_nat(ref[3], len(events), "event")]
            k = _nat(ref[4], len(event.actions) + 1, "event action")
            out.append(event.actions[k] if k < len(event.actions) else event.condition)
        elif kind == "l":
            out.append(logged[_nat(_list(ref, "a logged action", 2)[1], len(logged), "logged action")])
        else:
            source = out[_nat(_list(ref, "a reverse or inverse", 2)[1], len(out), "earlier action")]
            made = game.kb.get_reverse_action(source) if kind == "r" else source.inverse()
            if made is None:
                raise _err(f"{source.name} has no reverse action in this game's logic")
            out.append(made)
    return out


def _tree(data: Any, kb: Any, actions: list[Any]) -> Any:
    from textworld.generator.dependency_tree import DependencyTree
    from textworld.generator.game import ActionDependencyTree, ActionDependencyTreeElement

    elements_data, nodes_data = _list(data[0], "tree elements"), _list(data[1], "tree nodes")
    elements = []
    for item in elements_data:
        a, parent = _list(item, "a tree element", 2)
        element = ActionDependencyTreeElement(actions[_nat(a, len(actions), "element action")])
        if not _root(parent):
            element.parent = elements[_nat(parent, len(elements), "element parent")]
        elements.append(element)
    tree = ActionDependencyTree(kb=kb, element_type=ActionDependencyTreeElement)
    nodes = []
    for item in nodes_data:
        e, parent = _list(item, "a tree node", 2)
        node = DependencyTree._Node(elements[_nat(e, len(elements), "node element")])
        if _root(parent):
            tree.roots.append(node)
        else:
            node.parent = nodes[_nat(parent, len(nodes), "node parent")]
            if not node.parent.element.depends_on(node.element):
                raise _err(f"{node.parent.element} does not depend on its child {node.element}")
            node.parent.children.append(node)
        nodes.append(node)
    tree._update()
    return tree


def load(text: str, game: Any, logged: list[Any], state: Any) -> list[Any]:
    """The quest progressions :func:`dump` stored, built for ``game`` (the env's own ``Game``) after the logged
    actions ``logged`` brought the facts to ``state``; every field checked (``SnapshotError``)."""
    from textworld.generator.game import EventProgression, QuestProgression

    from agentgym_credit.envs import snapshot as S

    data = S.load_json(text, "TextWorld snapshot payload: quests")
    if data.__class__ is not dict or set(data) != {"actions", "quests"}:
        raise _err("must be an object with exactly the fields actions, quests")
    actions = _actions(data["actions"], game, logged)
    quests = _list(data["quests"], "quests", len(game.quests))
    out = []
    for quest, item in zip(game.quests, quests):
        nb, wins, fails = _list(item, "a quest", 3)
        qp = object.__new__(QuestProgression)
        qp.quest, qp.kb, qp.nb_completions = quest, game.kb, _nat(nb, len(logged) + 2, "completions")
        qp.win_events, qp.fail_events = [], []
        for events, group, into in ((quest.win_events, wins, qp.win_events), (quest.fail_events, fails, qp.fail_events)):
            for event, ev in zip(events, _list(group, "events", len(events))):
                triggered, untriggerable, policy, *tree = _list(ev, "an event", 5)
                if triggered.__class__ is not bool or untriggerable.__class__ is not bool:
                    raise _err("an event's triggered and untriggerable must be true or false")
                ep = object.__new__(EventProgression)
                ep._kb, ep.event, ep._triggered, ep._untriggerable = game.kb, event, triggered, untriggerable
                ep._policy = tuple(actions[_nat(a, len(actions), "policy action")] for a in _list(policy, "a policy"))
                ep._tree = _tree(tree, game.kb, actions)
                into.append(ep)
        if not qp.done and not quest.repeatable:
            for ep in (*qp.win_events, *qp.fail_events):
                if not ep.done and ep.event.is_triggering(state):
                    raise _err("an unfinished event is triggering in the restored state (a played game marks it)")
        out.append(qp)
    return out


__all__ = ["MAX_ENTRIES", "dump", "load", "readable"]
