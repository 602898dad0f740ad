"""TextWorld's quest policy tracking, the same answers for less work (issue 45: a foreign snapshot's first restore).

What lives here:

- :func:`install` — put the functions below in place of textworld 1.7's own, process-wide (once; another textworld
  version keeps its own, a documented no-op);
- :func:`flatten` — ``ActionDependencyTree.flatten``, remembered per tree shape;
- :func:`compress_policy` — ``EventProgression.compress_policy``, its search for a shorter policy done on the
  facts the policy's actions name, each prefix applied once; a search that found nothing is remembered (per tree
  shape and those facts, and per event);
- :func:`remove` — ``ActionDependencyTree.remove``, the push of the reverse action skipped when no node needs what
  it adds;
- ``DependencyTree._update`` (a tree's remembered work dropped on every change) and ``DependencyTree.__iter__``
  (the same order without a generator per node);
- :data:`ORIGINAL` — textworld's own five (the tests check every answer against them).

Why. With expert infos on, textworld tracks each quest's winning policy: after every action each event
progression flattens its dependency tree (a copy of the tree, emptied leaf by leaf) and searches for a shorter
policy (every ``policy[:j] + policy[i:]``, each checked on a copy of *all* the state's facts). A restore in
another process re-applies the snapshot's actions (:func:`textworld_snapshots._replay`) and so pays this once per
action and event: 4-9x a step before (benchmarks/speed/textworld_restore.md), most of it here.

Same answers, by construction:

- ``flatten`` is a pure function of the tree's shape: its nodes, their elements (the ordering of leaves walks each
  element's ``parent``, set once when the element is pushed and never changed after; an element shared by two
  nodes counts once) and the knowledge base (reverse actions). The key holds the element objects themselves
  (hashed by identity, kept alive by the key), so two trees share an entry only when they are built of the same
  elements in the same shape: the result is the one textworld's own ``flatten`` computed for that shape.
- ``is_sequence_applicable`` only ever looks at facts that some action of the sequence names (preconditions
  removed and counted, postconditions added), so the search runs on the state's facts restricted to those the
  policy names; and ``policy[:j] + policy[i:]`` applies exactly when the prefix ``policy[:j]`` does and
  ``policy[i:]`` then applies to its result, so each prefix is applied once, and once a prefix fails every longer
  one does too. The candidates are tried in textworld's order and the first that applies is taken, its tree
  rebuilt as textworld does.
- The reverse action's push adds a node only under a node whose action needs a fact it adds; when no node's
  preconditions meet what it adds, textworld's push walks the tree, adds nothing and lists the same leaves again.
- Everything remembered about a tree is dropped by ``DependencyTree._update``, which every change of a tree ends
  with (push, remove, a new tree, a copy; textworld 1.7).
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import Any

FLAT_SIZE = 4096
"""Tree shapes whose flattened policy (and searches that found no shorter one) a process remembers."""

_FLAT: OrderedDict[tuple, tuple[Any, tuple, tuple]] = OrderedDict()
_NO_SHORTER: OrderedDict[tuple, Any] = OrderedDict()
_REVERSE: dict[tuple[int, Any], tuple[Any, Any]] = {}
_LAST: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Each event progression's last search that found nothing: its tree's record and the facts it saw."""

ORIGINAL: dict[str, Any] = {}
"""textworld's own ``flatten``, ``remove``, ``compress_policy`` and ``DependencyTree._update`` (filled by
:func:`install`)."""

_VERSIONS = ("1.7.",)
"""textworld versions whose functions were read and are restated here."""


def _shape(node: Any) -> tuple:
    return (node.element, tuple(_shape(child) for child in node.children))


def _remember(cache: OrderedDict, key: tuple, value: Any) -> None:
    cache[key] = value
    while len(cache) > FLAT_SIZE:
        cache.popitem(last=False)


def _flat(tree: Any, key: tuple) -> tuple[tuple, tuple]:
    """The flattened actions of ``tree`` (shape ``key``) and every fact they name."""
    kb = tree._kb
    hit = _FLAT.get(key)
    if hit is not None and hit[0] is kb:
        _FLAT.move_to_end(key)
        return hit[1], hit[2]
    actions = tuple(ORIGINAL["flatten"](tree))
    named = {fact for action in actions for fact in (*action.preconditions, *action.postconditions)}
    _remember(_FLAT, key, (kb, actions, tuple(named)))
    return actions, tuple(named)


def _key(tree: Any) -> tuple:
    return (id(tree._kb), tuple(_shape(root) for root in tree.roots))


def _record(tree: Any) -> dict:
    """What was worked out about ``tree`` as it is now: every change of a tree ends in ``DependencyTree._update``
    (push, remove, a new tree, a copy; textworld 1.7), which drops the record (:func:`_update`)."""
    rec = tree.__dict__.get("_agc")
    if rec is None:
        rec = tree.__dict__["_agc"] = {}
    return rec


def _update(tree: Any) -> None:
    """``DependencyTree._update`` (the leaves listed again after a change), then the tree's record dropped."""
    ORIGINAL["_update"](tree)
    tree.__dict__.pop("_agc", None)


def _nodes(tree: Any) -> Any:
    """``DependencyTree.__iter__``: each root's nodes, children before their parent and in order, listed before
    any is yielded (as textworld's ``yield from list(root)``), without a generator per node."""
    for root in tree.roots:
        out, stack = [], [(root, False)]
        while stack:
            node, done = stack.pop()
            if done:
                out.append(node)
            else:
                stack.append((node, True))
                stack.extend((child, False) for child in reversed(node.children))
        yield from out


def _flat_of(tree: Any) -> tuple[tuple, tuple, tuple]:
    """``tree``'s shape key, flattened actions and the facts they name grouped by signature, remembered."""
    rec = _record(tree)
    found = rec.get("flat")
    if found is None:
        key = _key(tree)
        actions, named = _flat(tree, key)
        groups: dict[Any, set] = {}
        for fact in named:
            groups.setdefault(fact.signature, set()).add(fact)
        found = rec["flat"] = (key, actions, tuple((sig, frozenset(fs)) for sig, fs in groups.items()))
    return found


def flatten(tree: Any) -> Any:
    """``ActionDependencyTree.flatten``: the actions of ``tree``, leaves first (an iterator, as textworld's)."""
    return iter(_flat_of(tree)[1])


def _applies(facts: set, actions: Any) -> bool:
    """``State.is_sequence_applicable`` on ``facts`` (a copy is changed, never ``facts``)."""
    facts = set(facts)
    for action in actions:
        old_len = len(facts)
        facts.difference_update(action.preconditions)
        if len(facts) != old_len - len(action.preconditions):
            return False
        facts.update(action.postconditions)
    return True


def _shorter(policy: tuple, prefix: set) -> tuple | None:
    """The first ``policy[:j] + policy[i:]`` (j ascending, i descending from the end, i > j) applicable to
    ``prefix`` (the state's facts that ``policy`` names), as textworld's ``_find_shorter_policy`` searches."""
    prefix = set(prefix)
    n = len(policy)
    for j in range(n):
        for i in range(n - 1, j, -1):
            if _applies(prefix, policy[i:]):
                return policy[:j] + policy[i:]
        action = policy[j]  # the next prefix: policy[:j + 1] applied once
        old_len = len(prefix)
        prefix.difference_update(action.preconditions)
        if len(prefix) != old_len - len(action.preconditions):
            return None  # every longer prefix starts with this one
        prefix.update(action.postconditions)
    return None


def compress_policy(self: Any, state: Any) -> bool:
    """``EventProgression.compress_policy``: shorten the event's policy while a shorter one applies in ``state``.
    A search that found nothing is remembered by the tree's shape and the state's facts that its policy names."""
    from textworld.generator.game import ActionDependencyTree, ActionDependencyTreeElement

    tree = self._tree
    rec = _record(tree)
    key, policy, groups = _flat_of(tree)
    facts = state._facts  # by signature (textworld 1.7)
    present = frozenset().union(*(fs.intersection(facts.get(sig, ())) for sig, fs in groups))
    last = _LAST.get(self)
    if last is not None and last[0] is rec and last[1] == present:  # the same tree, the same facts: nothing again
        return False
    seen = (key, present)
    if seen in _NO_SHORTER:
        _NO_SHORTER.move_to_end(seen)
        _LAST[self] = (rec, present)
        return False
    compressed = False
    while (shorter := _shorter(policy, present)) is not None:  # a subsequence names no fact its policy does not
        self._tree = ActionDependencyTree(kb=self._kb, element_type=ActionDependencyTreeElement)
        for action in shorter[::-1]:
            self._tree.push(action)
        compressed = True
        self._policy = policy = shorter
    if not compressed:
        _remember(_NO_SHORTER, seen, True)
        _LAST[self] = (rec, present)
    return compressed


def _needs(tree: Any) -> set:
    """Every precondition of the actions in ``tree``'s nodes (what a pushed action must add to be placed)."""
    rec = _record(tree)
    out = rec.get("needs")
    if out is None:
        out = rec["needs"] = set()
        stack = list(tree.roots)
        while stack:
            node = stack.pop()
            out |= node.element.value._pre_set
            stack.extend(node.children)
    return out


def _reverse(kb: Any, action: Any) -> Any:
    hit = _REVERSE.get((id(kb), action))
    if hit is None or hit[0] is not kb:
        if len(_REVERSE) > 4 * FLAT_SIZE:
            _REVERSE.clear()
        hit = _REVERSE[(id(kb), action)] = (kb, kb.get_reverse_action(action))
    return hit[1]


def remove(self: Any, action: Any) -> tuple[bool, Any]:
    """``ActionDependencyTree.remove``; the push of the reverse (or inverse) action is skipped when no node
    needs what it adds (textworld's push would walk the tree and add it nowhere)."""
    from textworld.generator.dependency_tree import DependencyTree

    changed = DependencyTree.remove(self, action)
    reverse_action = _reverse(self._kb, action)
    if self.empty:
        return changed, reverse_action
    undo = reverse_action if reverse_action is not None else action.inverse()
    pushed = bool(undo.added & _needs(self)) and self.push(undo)
    if reverse_action is not None:
        changed = pushed
    elif pushed:
        changed = True
    return changed, reverse_action


def install() -> bool:
    """Use :func:`flatten` and :func:`compress_policy` in textworld's classes (textworld 1.7; once per process);
    ``True`` when they are in place."""
    import textworld
    from textworld.generator.dependency_tree import DependencyTree
    from textworld.generator.game import ActionDependencyTree, EventProgression

    if ORIGINAL:
        return True
    if not str(textworld.__version__).startswith(_VERSIONS):
        return False
    ORIGINAL.update(flatten=ActionDependencyTree.flatten, remove=ActionDependencyTree.remove,
                    compress_policy=EventProgression.compress_policy, _update=DependencyTree._update,
                    __iter__=DependencyTree.__iter__)
    ActionDependencyTree.flatten, ActionDependencyTree.remove = flatten, remove
    DependencyTree._update, DependencyTree.__iter__ = _update, _nodes
    EventProgression.compress_policy = compress_policy
    return True


__all__ = ["FLAT_SIZE", "ORIGINAL", "compress_policy", "flatten", "install", "remove"]
