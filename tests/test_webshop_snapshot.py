"""WebShop snapshots (issue 14): restore-then-replay equality, another instance, foreign snapshots."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("rapidfuzz")

from agentgym_credit.bench.speed.webshop_speed import random_browse_action  # noqa: E402
from agentgym_credit.envs.webshop.env import WebShopEnv  # noqa: E402
from agentgym_credit.errors import ResetNeeded, SnapshotError  # noqa: E402


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("webshop-cache")


def _make(cache, **kw):
    args = {"num_products": 600, "split": "test", "cache_dir": cache, "observation_mode": "text_rich"}
    args.update(kw)
    return WebShopEnv(**args)


def _policy_actions(env, info, rng):
    """A random browsing action; Buy Now mostly becomes an invalid action, whose no-op state must survive
    a snapshot too."""
    return random_browse_action(env, info, rng, avoid_buy=0.7, instead="click[nonsense]")


def _play(env, actions):
    out = []
    for a in actions:
        obs, r, term, trunc, info = env.step(a)
        out.append((obs, r, term, trunc, info))
        if term or trunc:
            break
    return out


def _episode_with_snapshots(env, seed, task):
    """(snapshots taken before each step, the actions, the transitions) of one random episode."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed, options={"task": task})
    snaps, actions, steps = [], [], []
    while True:
        snaps.append((env.get_state(), obs, info))
        a = _policy_actions(env, info, rng)
        actions.append(a)
        obs, r, term, trunc, info = env.step(a)
        steps.append((obs, r, term, trunc, info))
        if term or trunc:
            return snaps, actions, steps


@pytest.mark.parametrize("mode", ["text", "text_rich"])
def test_restore_then_replay_equals_the_original_run(cache, mode):
    env = _make(cache, observation_mode=mode)
    other = _make(cache, observation_mode=mode)  # a second instance made with the same arguments
    for seed in range(6):
        snaps, actions, steps = _episode_with_snapshots(env, seed, task=seed)
        for k in range(0, len(snaps), 2):
            snap, obs_k, info_k = snaps[k]
            for target in (env, other):
                obs, info = target.set_state(snap)
                assert (obs, info) == (obs_k, info_k)  # the restored step's obs and info, exactly
                assert _play(target, actions[k:]) == steps[k:]


def test_restore_after_a_finished_episode_and_a_new_task(cache):
    env = _make(cache)
    snaps, actions, steps = _episode_with_snapshots(env, 3, task=7)
    env.reset(seed=99, options={"task": 1})
    for _ in range(3):
        env.step("search[anything at all]")
    obs, info = env.set_state(snaps[1][0])
    assert info["task_id"] == steps[0][4]["task_id"] and _play(env, actions[1:]) == steps[1:]


def test_random_draws_after_restore_are_the_same(cache):
    env = _make(cache)
    env.reset(seed=5)
    snap = env.get_state()
    a = env.np_random.random(3)
    env.set_state(snap)
    np.testing.assert_array_equal(env.np_random.random(3), a)


def test_foreign_and_corrupted_snapshots_are_refused(cache):
    env = _make(cache)
    env.reset(seed=0, options={"task": 2})
    env.step("search[shampoo]")
    snap = env.get_state()
    for other in (
        _make(cache, num_products=550),
        _make(cache, split="train"),
        _make(cache, catalog_seed=1),
        _make(cache, observation_mode="text"),
        _make(cache, reward_rules="master"),
    ):
        with pytest.raises(SnapshotError, match="configuration"):
            other.set_state(snap)
    bad = bytearray(snap)
    bad[-5] ^= 1
    with pytest.raises(SnapshotError, match="corrupted"):
        env.set_state(bytes(bad))
    with pytest.raises(SnapshotError):
        env.set_state("not bytes")
    env.reset(seed=0, options={"task": 0})
    env.step("click[buy now]")  # invalid on the search page: still running
    _, _, term, _, _ = env.step("search[x]")
    assert not term


def test_get_state_needs_a_running_episode(cache):
    env = _make(cache)
    with pytest.raises(ResetNeeded):
        env.get_state()


def test_restore_in_another_process(cache, tmp_path):
    import json
    import subprocess
    import sys

    env = _make(cache)
    snaps, actions, steps = _episode_with_snapshots(env, 11, task=4)
    (tmp_path / "snap.bin").write_bytes(snaps[1][0])
    (tmp_path / "actions.json").write_text(json.dumps(actions[1:]))
    from agentgym_credit.envs.snapshot import snapshot_key

    script = f"""
import json, sys
from agentgym_credit.envs.snapshot import set_snapshot_key
from agentgym_credit.envs.webshop.env import WebShopEnv
set_snapshot_key(bytes.fromhex({snapshot_key().hex()!r}))  # the parent's key: a snapshot restores only under it
env = WebShopEnv(num_products=600, split="test", cache_dir={str(cache)!r}, observation_mode="text_rich")
obs, info = env.set_state(open({str(tmp_path / "snap.bin")!r}, "rb").read())
out = [[obs, info["state_key"]]]
for a in json.load(open({str(tmp_path / "actions.json")!r})):
    obs, r, term, trunc, info = env.step(a)
    out.append([obs, r, term, trunc, info["state_key"], info["won"]])
json.dump(out, sys.stdout)
"""
    res = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    got = json.loads(res.stdout)
    assert got[0] == [snaps[1][1], snaps[1][2]["state_key"]]
    assert got[1:] == [[o, r, te, tr, i["state_key"], i["won"]] for o, r, te, tr, i in steps[1:]]


# -- the in-process memo (issue 24.5: get+set in one pass each) ---------------------------------------
def _mid_episode(env, seed=3, task=5, steps=4):
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed, options={"task": task})
    for _ in range(steps):
        obs, _, term, trunc, info = env.step(_policy_actions(env, info, rng))
        if term or trunc:
            obs, info = env.reset(seed=seed, options={"task": task})
    return obs, info


def test_memo_restore_equals_the_whole_way(cache, monkeypatch):
    from agentgym_credit.envs import snapshot as S

    env = _make(cache)
    for seed in range(4):
        snaps, actions, steps = _episode_with_snapshots(env, seed, task=seed)
        for k, (snap, obs_k, info_k) in enumerate(snaps):
            assert env.set_state(snap) == (obs_k, info_k)  # from the memo
            memo_run = _play(env, actions[k:])
            S.clear_memo()  # forgets the env's memo too: the next restore parses and checks the bytes
            calls: list[int] = []
            monkeypatch.setattr(env, "_restore_bytes",
                                lambda raw, f=env._restore_bytes, seen=calls: seen.append(1) or f(raw))
            assert env.set_state(snap) == (obs_k, info_k) and calls == [1]
            monkeypatch.undo()
            assert _play(env, actions[k:]) == memo_run == steps[k:]


def test_memo_is_not_a_way_around_the_key_or_the_binding(cache):
    from agentgym_credit.envs import snapshot as S

    env = _make(cache)
    _mid_episode(env)
    snap = env.get_state()
    for other in (_make(cache, max_steps=14), _make(cache, observation_mode="text")):
        with pytest.raises(SnapshotError, match="configuration"):
            other.set_state(snap)
    env.max_steps = 14  # a setting changed after the snapshot: it belongs to another configuration now
    with pytest.raises(SnapshotError, match="configuration"):
        env.set_state(snap)
    env.max_steps = 15
    env.set_state(snap)

    class OtherShop(WebShopEnv):  # overrides nothing, but is another env class
        pass

    with pytest.raises(SnapshotError, match="taken from WebShopEnv"):
        OtherShop(num_products=600, split="test", cache_dir=cache, observation_mode="text_rich").set_state(snap)
    key = S.snapshot_key()
    try:
        S.set_snapshot_key(None)  # a new key: every earlier snapshot is refused, remembered or not
        with pytest.raises(SnapshotError, match="corrupted or forged"):
            env.set_state(snap)
        _mid_episode(env)
        fresh = env.get_state()  # sealed under the new key (the MAC state under the old one is not reused)
        S.clear_memo()
        env.set_state(fresh)
    finally:
        S.set_snapshot_key(key)
    env.set_state(snap)


def test_memo_of_a_subclass_goes_through_its_restore(cache):
    from agentgym_credit.truth.experts import WebShopExpertEnv

    env = WebShopExpertEnv(num_products=600, split="test", cache_dir=cache)
    obs, info = _mid_episode(env)
    snap = env.get_state()
    env.step(info["expert_action"])
    got_obs, got_info = env.set_state(snap)
    assert (got_obs, got_info) == (obs, info) and "expert_action" in got_info
    with pytest.raises(SnapshotError, match="taken from WebShopExpertEnv"):
        _make(cache).set_state(snap)


def test_restored_info_is_a_fresh_dict(cache):
    env = _make(cache)
    _mid_episode(env)
    snap = env.get_state()
    obs, info = env.set_state(snap)
    info["admissible_actions"].append("click[mine]")
    info["extra"] = 1
    obs2, info2 = env.set_state(snap)
    assert "click[mine]" not in info2["admissible_actions"] and "extra" not in info2


def test_env_with_a_snapshot_head_pickles(cache):
    import pickle

    env = _make(cache)
    _mid_episode(env)
    snap = env.get_state()
    back = pickle.loads(pickle.dumps(env))
    assert back.get_state() == snap and back.set_state(snap) == env.set_state(snap)
