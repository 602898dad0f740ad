"""A TextWorld snapshot carries its quest progressions (issue 45, envs/alfworld/textworld_quests.py): a restore in
another process tracks no quest action by action, and gives the same trees, plan, observations, admissible
commands and rewards as the game played, also after a detour lengthened the plan; a bad progression is a
SnapshotError, never a crash deep inside."""

from __future__ import annotations

import base64
import json
import zlib

import numpy as np
import pytest

pytest.importorskip("textworld")
pytest.importorskip("jericho")

from textworld.generator.game import EventProgression, QuestProgression  # noqa: E402

from agentgym_credit.envs import snapshot as S  # noqa: E402
from agentgym_credit.envs.alfworld import textworld_policy as P  # noqa: E402
from agentgym_credit.envs.alfworld import textworld_snapshots as T  # noqa: E402
from agentgym_credit.envs.alfworld import zguard  # noqa: E402
from agentgym_credit.envs.alfworld.textworld_env import TextWorldEnv  # noqa: E402
from agentgym_credit.errors import SnapshotError  # noqa: E402

STEPS = 10


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("twcache")


def _env(challenge, cache, expert=True):
    return TextWorldEnv(challenge=challenge, num_games=1, cache_dir=str(cache), expert=expert, max_steps=8 * STEPS)


def _forget() -> None:
    """What another process has not seen: the memos, the vouched states and the policy caches."""
    T._MEMO.clear()
    T._AFTER.clear()
    S.clear_memo()
    zguard._VOUCHED.clear()
    P._FLAT.clear()
    P._NO_SHORTER.clear()
    P._REVERSE.clear()


def _tree(tree) -> list:
    """A tree exactly: each node's action, its element's parent chain (what ordering walks), its children."""
    def chain(e):
        out = []
        while e is not None:
            out.append(e.value)
            e = e.parent
        return out

    def node(n):
        return (chain(n.element), [node(c) for c in n.children])

    return [node(r) for r in tree.roots]


def _quests(env) -> list:
    progression = T.wrappers(env._env)["tracker"]._game_progression
    return [(q.nb_completions, [(e._triggered, e._untriggerable, e._policy, _tree(e._tree))
                                for e in (*q.win_events, *q.fail_events)]) for q in progression.quest_progressions]


def _next(env, picks) -> list:
    out, info = [], env._last_info
    for p in picks:
        acts = info["admissible_actions"]
        obs, r, term, trunc, info = env.step(acts[p % len(acts)])
        out.append((obs, r, term, info["admissible_actions"], info["expert_action"], env._state["policy_commands"]))
        if term or trunc:
            break
    return out


def _walk_and_restore(challenge, cache, seed, monkeypatch) -> tuple[list, int]:
    """Steps half the expert's, half random; after each, the snapshot restored as in another process into a second env, which then plays
    the next 2 steps as the first one does. Returns the plan lengths along the walk and the quest updates the
    restores made."""
    env, other = _env(challenge, cache), _env(challenge, cache)
    updates = []
    for cls in (QuestProgression, EventProgression):
        real = cls.update
        monkeypatch.setattr(cls, "update", lambda self, *a, _r=real, **k: updates.append(1) or _r(self, *a, **k))
    rng = np.random.default_rng(seed)
    lengths, restore_updates = [], 0
    try:
        obs, info = env.reset(seed=seed, options={"task": 0})
        other.reset(seed=seed, options={"task": 0})
        for _ in range(STEPS):
            acts = info["admissible_actions"]  # the expert's action or, as often, a random one (detours)
            moves = [a for a in acts if not a.startswith(("examine", "look", "inventory"))] or acts
            pick = info["expert_action"] if rng.random() < 0.5 else moves[int(rng.integers(len(moves)))]
            obs, r, term, trunc, info = env.step(pick)
            if term or trunc:
                break
            lengths.append(len(env._state["policy_commands"] or ()))
            snap = env.get_state()
            _forget()
            del updates[:]
            o2, i2 = other.set_state(snap)
            restore_updates += len(updates)
            assert (o2, i2["admissible_actions"], i2["expert_action"], i2["state_key"]) == (
                obs, info["admissible_actions"], info["expert_action"], info["state_key"])
            assert other._state["policy_commands"] == env._state["policy_commands"]
            assert _quests(other) == _quests(env)
            picks = [int(x) for x in rng.integers(1 << 30, size=2)]
            assert _next(other, picks) == _next(env, picks)
            env.set_state(snap)  # back to the walk (an own restore)
    finally:
        env.close()
        other.close()
    return lengths, restore_updates


def test_a_foreign_restore_tracks_no_quest_and_equals_the_played_game(cache, monkeypatch):
    lengths, restore_updates = _walk_and_restore("tw-simple", cache, 3, monkeypatch)
    assert restore_updates == 0  # the old replay updated every quest once per logged action
    assert len(lengths) >= 6 and any(b > a for a, b in zip(lengths, lengths[1:]))  # a detour lengthened the plan


@pytest.mark.slow  # compiles two more games
@pytest.mark.parametrize("challenge, seed", [("tw-cooking", 1), ("tw-coin_collector", 2), ("tw-simple", 7)])
def test_a_foreign_restore_equals_the_played_game_on_every_challenge(challenge, seed, cache, monkeypatch):
    lengths, restore_updates = _walk_and_restore(challenge, cache, seed, monkeypatch)
    assert restore_updates == 0 and len(lengths) >= 5


def _played(cache):
    env = _env("tw-simple", cache)
    obs, info = env.reset(seed=4, options={"task": 0})
    rng = np.random.default_rng(4)
    for _ in range(10):
        obs, r, term, trunc, info = env.step(info["admissible_actions"][int(rng.integers(len(info["admissible_actions"])))])
    return env


def _restore(env, game, quests) -> None:
    text = json.dumps(quests) if not isinstance(quests, str) else quests
    bad = {**game, "quests": base64.b64encode(zlib.compress(text.encode())).decode()}
    _forget()
    T.restore(env._env, bad, reset_state=lambda: env._opening_of()[1])


def test_a_bad_progression_is_a_snapshot_error(cache):
    env = _played(cache)
    try:
        game = env._snapshot_payload()["game"]
        good = json.loads(zlib.decompress(base64.b64decode(game["quests"])))
        _restore(env, game, good)  # the stored one restores
        n = len(good["actions"])
        trigger = next(i for i, a in enumerate(good["actions"]) if a[0] == "e" and a[1:] == [0, 0, 0, a[4]]
                       and a[4] == max(b[4] for b in good["actions"] if b[:4] == ["e", 0, 0, 0]))
        cases = [
            ("not json", "not valid JSON"),
            ([], "exactly the fields"),
            ({**good, "actions": [["x", 0]]}, "an action must be"),
            ({**good, "actions": [["e", 99, 0, 0, 0]]}, "quest must be an int"),
            ({**good, "actions": [["l", 10**6]]}, "logged action must be"),
            ({**good, "actions": [["r", 0]]}, "earlier action must be"),
            ({**good, "actions": [*good["actions"], ["r", trigger]]}, "has no reverse action"),
            ({**good, "quests": good["quests"][:-1]}, "quests must be a list of"),
            ({**good, "quests": [[10**6, *q[1:]] for q in good["quests"]]}, "completions must be"),
            ({**good, "quests": [[q[0], [[1, *e[1:]] for e in q[1]], q[2]] for q in good["quests"]]}, "true or false"),
            ({**good, "quests": [[q[0], [[*e[:3], [[n + 5, -1]], [[0, -1]]] for e in q[1]], q[2]]
                                 for q in good["quests"]]}, "element action must be"),
            ({**good, "quests": [[q[0], [[*e[:3], [[0, 3]], [[0, -1]]] for e in q[1]], q[2]]
                                 for q in good["quests"]]}, "element parent must be"),
            ({**good, "quests": [[q[0], [[*e[:3], [[trigger, -1], [trigger, -1]], [[0, -1], [1, 0]]] for e in q[1]],
                                  q[2]] for q in good["quests"]]}, "does not depend on its child"),
            # every win event marked untriggerable: the replayed game is lost, the interpreter's is not
            ({**good, "quests": [[q[0], [[e[0], True, *e[2:]] for e in q[1]], q[2]] for q in good["quests"]]},
             "disagrees with the game"),
        ]
        for bad, message in cases:
            with pytest.raises(SnapshotError, match=message):
                _restore(env, game, bad)
    finally:
        env.close()


def _paths(x, path=()):
    """Every leaf and list of ``x`` with its path."""
    yield path, x
    if isinstance(x, list):
        for i, v in enumerate(x):
            yield from _paths(v, (*path, i))
    elif isinstance(x, dict):
        for k, v in x.items():
            yield from _paths(v, (*path, k))


def _set(x, path, value):
    if not path:
        return value
    if isinstance(x, dict):
        return {**x, path[0]: _set(x[path[0]], path[1:], value)}
    return [_set(v, path[1:], value) if i == path[0] else v for i, v in enumerate(x)]


def test_any_changed_field_restores_or_is_a_snapshot_error(cache):
    """Every field of a stored progression replaced by each of a few wrong values (a sample of the paths): the
    restore either succeeds or raises SnapshotError, never another exception."""
    env = _played(cache)
    try:
        game = env._snapshot_payload()["game"]
        good = json.loads(zlib.decompress(base64.b64decode(game["quests"])))
        paths = [p for p, _ in _paths(good) if p]
        rng = np.random.default_rng(0)
        refused = 0
        for i in rng.choice(len(paths), size=min(20, len(paths)), replace=False):
            for value in (-1, 1, 10**9, None, True, "e", [], [0, -1]):
                try:
                    _restore(env, game, _set(good, paths[i], value))
                except SnapshotError:
                    refused += 1
        assert refused > 0
    finally:
        env.close()


def test_expert_off_stores_no_progression_and_refuses_one(cache):
    env, off = _env("tw-simple", cache), _env("tw-simple", cache, expert=False)
    try:
        env.reset(seed=0, options={"task": 0})
        env.step(env._last_info["admissible_actions"][0])
        off.reset(seed=0, options={"task": 0})
        off.step(off._last_info["admissible_actions"][0])
        assert off._snapshot_payload()["game"]["quests"] is None
        game = env._snapshot_payload()["game"]
        assert game["quests"] is not None
        with pytest.raises(SnapshotError, match="tracks none"):
            _forget()
            T.restore(off._env, game, reset_state=lambda: off._opening_of()[1])
    finally:
        env.close()
        off.close()


def test_a_snapshot_from_before_quests_were_stored_restores_by_tracking_them(cache):
    """The format before this change (no ``quests`` field) still restores: the replay tracks the quests itself."""
    env = _played(cache)
    try:
        game = env._snapshot_payload()["game"]
        plan = env._state["policy_commands"]
        old = {k: v for k, v in game.items() if k != "quests"}
        _forget()
        state, _, _ = T.restore(env._env, old, reset_state=lambda: env._opening_of()[1])
        assert state["policy_commands"] == plan
    finally:
        env.close()


def test_stored_quests_are_ignored_where_textworld_keeps_other_fields(cache, monkeypatch):
    """A textworld whose progressions are not 1.7's (``readable`` false) restores by tracking the quests itself."""
    from agentgym_credit.envs.alfworld import textworld_quests as Q

    env = _played(cache)
    try:
        game = env._snapshot_payload()["game"]
        plan = env._state["policy_commands"]
        monkeypatch.setattr(Q, "readable", lambda progression: False)
        updates = []
        real = QuestProgression.update
        monkeypatch.setattr(QuestProgression, "update", lambda self, *a, **k: updates.append(1) or real(self, *a, **k))
        _forget()
        state, _, _ = T.restore(env._env, game, reset_state=lambda: env._opening_of()[1])
        assert state["policy_commands"] == plan and updates
    finally:
        env.close()
