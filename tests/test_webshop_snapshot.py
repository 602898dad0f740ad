"""WebShop snapshots (issue 14): restore-then-replay equality, another instance, foreign snapshots."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("rapidfuzz")

from agentgym_credit.bench.webshop_speed import random_browse_action  # noqa: E402
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
