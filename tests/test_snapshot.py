"""Snapshots of the synthetic envs and of ``HistoryFingerprint`` (get_state / set_state), and the
snapshot part of ``check_credit_env`` (check 9)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import agentgym_credit  # noqa: F401
from agentgym_credit.envs.gridworld.grid import GridWorldEnv
from agentgym_credit.errors import ContractViolation, ResetNeeded, SnapshotError, SnapshotUnsupported
from agentgym_credit.testing import check_credit_env
from agentgym_credit.wrappers.history import HistoryFingerprint

SYNTHETIC = ["credit/GridWorld-v0", "credit/AliasedGrid-v0", "credit/CueCorridor-v0", "credit/Household-v0"]
SLIPPY = {"size": 5, "slip": 0.3, "n_tasks": 4, "max_steps": 30}


def _run(env: gym.Env, n: int, seed: int = 0) -> tuple[list[str], list[tuple]]:
    """``n`` steps of a seeded random admissible policy: the actions and what each step gave."""
    rng = np.random.default_rng(seed)
    info = env.unwrapped._last_info
    actions, seen = [], []
    for _ in range(n):
        adm = info["admissible_actions"]
        if not adm:
            break
        a = adm[int(rng.integers(len(adm)))]
        obs, r, term, trunc, info = env.step(a)
        actions.append(a)
        seen.append((obs, r, term, trunc, info["state_key"], info["obs_key"], tuple(info["admissible_actions"]),
                     info["won"], info.get("history_keys", np.zeros(0)).tolist()))
        if term or trunc:
            break
    return actions, seen


def _replay(env: gym.Env, actions: list[str]) -> list[tuple]:
    out = []
    for a in actions:
        obs, r, term, trunc, info = env.step(a)
        out.append((obs, r, term, trunc, info["state_key"], info["obs_key"], tuple(info["admissible_actions"]),
                    info["won"], info.get("history_keys", np.zeros(0)).tolist()))
        if term or trunc:
            break
    return out


@pytest.mark.parametrize("env_id", SYNTHETIC)
def test_check_credit_env_checks_snapshots(env_id):
    report = check_credit_env(gym.make(env_id))
    assert any(c.startswith("snapshots restore the run") for c in report.checked), report.checked
    assert any(c.startswith("bad snapshots are SnapshotError") for c in report.checked)
    assert not any("snapshot" in s for s in report.skipped)


@pytest.mark.parametrize("env_id,kwargs", [("credit/GridWorld-v0", SLIPPY), ("credit/Household-v0", {}),
                                           ("credit/CueCorridor-v0", {}), ("credit/AliasedGrid-v0", {})])
def test_restore_into_another_instance_repeats_the_run(env_id, kwargs):
    """Restore in a fresh env made with the same arguments: same observations, rewards, keys and
    terminations, slip draws included (the RNG travels with the snapshot)."""
    a = gym.make(env_id, **kwargs)
    a.reset(seed=3)
    _run(a, 2, seed=1)
    snap = a.unwrapped.get_state()
    actions, ref = _run(a, 25, seed=2)
    b = gym.make(env_id, **kwargs)
    obs, info = b.unwrapped.set_state(snap)
    assert obs == a.unwrapped.set_state(snap)[0]
    assert _replay(b.unwrapped, actions) == ref


def test_slip_outcomes_follow_the_restored_rng():
    """With slip, the same action from the same state differs between draws; after a restore the draws repeat."""
    env = gym.make("credit/GridWorld-v0", **SLIPPY).unwrapped
    env.reset(seed=0)
    snap = env.get_state()
    runs = []
    for _ in range(2):
        env.set_state(snap)
        runs.append(_replay(env, ["go north", "go east", "go south", "go west"] * 3)[:8])
    assert runs[0] == runs[1]
    others = []
    for seed in range(5):  # other draws: the run changes (slip = 0.3)
        env.set_state(snap)
        env.np_random = np.random.default_rng(seed)
        others.append(_replay(env, ["go north", "go east", "go south", "go west"] * 3)[:8])
    assert any(o != runs[0] for o in others)


def test_snapshot_from_another_configuration_or_env_is_refused():
    a = GridWorldEnv(size=5)
    a.reset(seed=0)
    snap = a.get_state()
    for other in (GridWorldEnv(size=6), GridWorldEnv(size=5, task_seed=1), GridWorldEnv(size=5, slip=0.1),
                  GridWorldEnv(size=5, max_steps=49)):
        with pytest.raises(SnapshotError, match="another configuration"):
            other.set_state(snap)
    with pytest.raises(SnapshotError, match="taken from GridWorldEnv"):
        gym.make("credit/Household-v0").unwrapped.set_state(snap)
    GridWorldEnv(size=5).set_state(snap)  # the same arguments: accepted


def test_refused_snapshot_leaves_the_env_needing_a_reset():
    """The old episode must not silently go on after a refused restore (it did: the check ran before
    the env was marked as needing a reset)."""
    env = GridWorldEnv(size=5)
    env.reset(seed=0)
    snap = env.get_state()
    env.reset(seed=1)
    with pytest.raises(SnapshotError, match="corrupted"):
        env.set_state(snap[:-3] + b"X" + snap[-2:])
    with pytest.raises(ResetNeeded):
        env.step("go north")
    env.reset(seed=1)
    with pytest.raises(SnapshotError, match="another configuration"):
        GridWorldEnv(size=6).set_state(snap)
    other = GridWorldEnv(size=6)
    other.reset(seed=0)
    with pytest.raises(SnapshotError):
        other.set_state(snap)
    with pytest.raises(ResetNeeded):
        other.step("go north")


def test_get_state_needs_a_running_episode():
    env = GridWorldEnv(size=5, max_steps=1)
    with pytest.raises(ResetNeeded):
        env.get_state()
    env.reset(seed=0)
    env.step("look")
    with pytest.raises(ResetNeeded):
        env.get_state()


def test_bad_payload_is_a_snapshot_error():
    from agentgym_credit.envs import snapshot as S

    env = GridWorldEnv(size=5)
    env.reset(seed=0)
    doc = S.inspect_snapshot(env.get_state())
    for payload in ({"task": 10**6, "s": 0, "t": 0, "valid": True, "reset": True},
                    {"task": 0, "s": -1, "t": 0, "valid": True, "reset": True},
                    {"task": 0, "s": 0}, "junk", {"task": "0", "s": 0, "t": 0, "valid": True, "reset": True}):
        forged = S.pack(doc["env"], doc["config"], doc["rng"], payload)
        with pytest.raises(SnapshotError):
            GridWorldEnv(size=5).set_state(forged)


class _ForgetfulGrid(GridWorldEnv):
    """A broken snapshot implementation: the step count is not restored (truncation comes late)."""

    def _restore_snapshot(self, payload):
        obs, info = super()._restore_snapshot(payload)
        self._t = 0
        return obs, info


class _NoSnapshotGrid(GridWorldEnv):
    def _snapshot_config(self):
        raise SnapshotUnsupported("this engine cannot copy its state")


def test_checker_catches_a_snapshot_that_misses_state():
    with pytest.raises(ContractViolation, match="after set_state"):
        check_credit_env(_ForgetfulGrid(size=4, max_steps=6, n_traps=0))


def test_checker_skips_envs_without_snapshots():
    report = check_credit_env(_NoSnapshotGrid(size=4))
    assert any("snapshots: this engine cannot copy its state" in s for s in report.skipped)


@pytest.mark.parametrize("include_actions", [False, True])
def test_history_window_travels_with_the_snapshot(include_actions):
    """After a restore (in a fresh wrapper and env), history_keys continue as in the original run."""
    a = HistoryFingerprint(gym.make("credit/Household-v0"), depth=3, include_actions=include_actions)
    a.reset(seed=2)
    _run(a, 5, seed=0)
    keys_at = a.unwrapped._last_info
    snap = a.get_state()
    actions, ref = _run(a, 12, seed=1)
    b = HistoryFingerprint(gym.make("credit/Household-v0"), depth=3, include_actions=include_actions)
    obs, info = b.set_state(snap)  # gym.make's OrderEnforcing: stepping right away is allowed
    assert info["history_t"] == 5 and info["state_key"] == keys_at["state_key"]
    assert _replay(b, actions) == ref
    # the level-k keys really depend on the window: a wrapper restored from the env's bytes alone
    # (a fresh window) would give other keys
    c = HistoryFingerprint(gym.make("credit/Household-v0"), depth=3, include_actions=include_actions)
    c.reset(seed=2)
    c.unwrapped.set_state(a.get_state()[a.get_state().index(b"agc-snapshot/2\n", 20):])
    assert _replay(c, actions) != ref


def test_history_snapshot_is_refused_with_another_window_or_corrupted():
    a = HistoryFingerprint(gym.make("credit/GridWorld-v0"), depth=3)
    a.reset(seed=0)
    snap = a.get_state()
    with pytest.raises(SnapshotError, match="another configuration"):
        HistoryFingerprint(gym.make("credit/GridWorld-v0"), depth=2).set_state(snap)
    with pytest.raises(SnapshotError, match="another configuration"):
        HistoryFingerprint(gym.make("credit/GridWorld-v0"), depth=3, include_actions=True).set_state(snap)
    with pytest.raises(SnapshotError, match="not a HistoryFingerprint snapshot"):
        a.set_state(a.unwrapped.get_state())
    i = snap.index(b"carry") + 10
    with pytest.raises(SnapshotError, match="corrupted or forged"):
        a.set_state(snap[:i] + bytes([snap[i] ^ 1]) + snap[i + 1:])
    with pytest.raises(SnapshotError, match="corrupted"):
        a.set_state(snap[:-3] + b"Z" + snap[-2:])


def test_memoized_config_follows_the_live_values():
    a = GridWorldEnv(size=5)
    a.reset(seed=0)
    snap = a.get_state()
    b = GridWorldEnv(size=5)
    b.set_state(snap)  # memoizes b's configuration
    b.max_steps = 49  # changed after construction: another configuration now
    with pytest.raises(SnapshotError, match="another configuration"):
        b.set_state(snap)
    b.max_steps = 50
    b.set_state(snap)


def test_the_json_depth_check_is_the_recursive_definition():
    """``_depth_ok`` (containers only visited) answers as the plain definition on random JSON values."""
    import random

    from agentgym_credit.envs.snapshot import _depth_ok

    def plain(x, depth):
        if isinstance(x, dict):
            return depth > 0 and all(plain(v, depth - 1) for v in x.values())
        if isinstance(x, list):
            return depth > 0 and all(plain(v, depth - 1) for v in x)
        return True

    rng = random.Random(0)

    def value(level):
        r = rng.random()
        if level > 12 or r < 0.3:
            return rng.choice([1, "a", None, 2.5, True])
        if r < 0.65:
            return [value(level + 1) for _ in range(rng.randrange(4))]
        return {str(i): value(level + 1) for i in range(rng.randrange(4))}

    answers = set()
    for _ in range(500):
        x = value(0)
        for depth in range(0, 15, 2):
            assert _depth_ok(x, depth) == plain(x, depth)
            answers.add(plain(x, depth))
    assert answers == {True, False}
