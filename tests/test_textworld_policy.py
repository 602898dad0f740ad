"""TextWorld's quest policy tracking restated for less work (issue 45): the same plan as textworld's own at every
step, and after a foreign snapshot's restore the same plan as without the restore."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("textworld")
pytest.importorskip("jericho")

from textworld.generator.dependency_tree import DependencyTree  # noqa: E402
from textworld.generator.game import ActionDependencyTree, EventProgression  # noqa: E402
from textworld.logic import State  # noqa: E402

from agentgym_credit.envs import snapshot as S  # noqa: E402
from agentgym_credit.envs.alfworld import textworld_policy as P  # noqa: E402
from agentgym_credit.envs.alfworld import textworld_snapshots as T  # noqa: E402
from agentgym_credit.envs.alfworld import zguard  # noqa: E402
from agentgym_credit.envs.alfworld.textworld_env import TextWorldEnv  # noqa: E402

CHALLENGES = ["tw-simple", "tw-cooking", "tw-coin_collector"]
STEPS = 24


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("twcache")


def _env(challenge, cache):
    return TextWorldEnv(challenge=challenge, num_games=1, cache_dir=str(cache), expert=True, max_steps=4 * STEPS)


def _plans(env) -> tuple:
    """The game's plan and every event's own policy and tree, as textworld tracks them."""
    progression = T.wrappers(env._env)["tracker"]._game_progression
    events = [e for q in progression.quest_progressions for e in (*q.win_events, *q.fail_events)]
    return (tuple(env._state["policy_commands"] or ()), env._last_info.get("expert_action"),
            [(e._policy, e._triggered, e._untriggerable, [n.element.value for n in e._tree]) for e in events])


def _walk(env, seed: int) -> list[tuple]:
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed, options={"task": 0})
    out = [_plans(env)]
    for _ in range(STEPS):
        acts = info["admissible_actions"]
        obs, r, term, trunc, info = env.step(acts[int(rng.integers(len(acts)))])
        out.append(_plans(env))
        if term or trunc:
            break
    return out


@pytest.mark.slow  # compiles a game per challenge (seconds each on a loaded machine)
@pytest.mark.parametrize("challenge", CHALLENGES)
def test_the_restated_tracking_gives_textworlds_own_plan_at_every_step(challenge, cache, monkeypatch):
    env = _env(challenge, cache)
    try:
        env.reset(seed=0, options={"task": 0})
        assert P.install() and P.ORIGINAL  # textworld 1.7, the version this package pins
        fast = [_walk(env, seed) for seed in range(2)]
        for name in ("flatten", "remove"):
            monkeypatch.setattr(ActionDependencyTree, name, P.ORIGINAL[name])
        monkeypatch.setattr(EventProgression, "compress_policy", P.ORIGINAL["compress_policy"])
        for name in ("_update", "__iter__"):
            monkeypatch.setattr(DependencyTree, name, P.ORIGINAL[name])
        own = [_walk(env, seed) for seed in range(2)]
    finally:
        env.close()
    assert fast == own
    assert len({p[0] for walk in own for p in walk}) > 1  # the plan changed along the walks


@pytest.mark.slow
@pytest.mark.parametrize("challenge", CHALLENGES)
def test_a_foreign_restore_gives_the_plan_of_the_game_played(challenge, cache, monkeypatch):
    env, other = _env(challenge, cache), _env(challenge, cache)
    copies = []
    real = State.is_sequence_applicable
    monkeypatch.setattr(State, "is_sequence_applicable", lambda self, a: copies.append(1) or real(self, a))
    try:
        rng = np.random.default_rng(5)
        obs, info = env.reset(seed=5, options={"task": 0})
        other.reset(seed=5, options={"task": 0})
        for _ in range(STEPS):
            acts = info["admissible_actions"]
            obs, r, term, trunc, info = env.step(acts[int(rng.integers(len(acts)))])
            if term or trunc:
                break
            snap = env.get_state()
            T._MEMO.clear()
            T._AFTER.clear()
            S.clear_memo()
            zguard._VOUCHED.clear()  # as in another process
            P._FLAT.clear()
            P._NO_SHORTER.clear()
            P._REVERSE.clear()
            o2, i2 = other.set_state(snap)
            assert (o2, i2["expert_action"], i2["state_key"]) == (obs, info["expert_action"], info["state_key"])
            assert _plans(other) == _plans(env)
    finally:
        env.close()
        other.close()
    assert copies == []  # no candidate policy is checked on a copy of every fact of the state
