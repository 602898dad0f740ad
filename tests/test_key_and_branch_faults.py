"""Issue 34 items 4 and 6: one snapshot key per collector's workers (a change applies to the next collect, all
workers together; a replacement worker gets the collector's key); a weak snapshot key refused by name at first
use, never at import; junk, world-writable and FIFO cache-key files; branch trajectories re-run after a worker
death like root trajectories, with the no-kill result; Ray's worker_pids after a kill."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentgym_credit.bench.faults.reliability import GRID, hash_policy, same_rollouts
from agentgym_credit.envs import snapshot as S
from agentgym_credit.wrappers import GroupedRolloutCollector
from agentgym_credit.wrappers.branching import BranchConfig

REPO = Path(__file__).resolve().parents[1]
BRANCH = BranchConfig(budget_trajectories=1.0, seed=1)


def _collector(backend: str, **kw):
    return GroupedRolloutCollector("credit/GridWorld-v0", env_kwargs=GRID, group_size=4, max_steps=30,
                                   backend=backend, num_workers=2, progress=False, seed=5, timeout=60,
                                   max_retries=3, **kw)


def _killing_policy(col, state: dict, when, change_key: bool = False):
    def policy(obs, infos):
        if state["killed"] < state["kills"] and any(when(i["rollout"]) for i in infos):
            if change_key and not state.get("changed"):
                S.set_snapshot_key(None)  # mid-collect: must not reach this collect's workers
                state["changed"] = True
            victim = col.backend.worker_pids()[state["killed"] % 2]
            os.kill(victim, signal.SIGKILL)
            time.sleep(0.05)
            state["killed"] += 1
        return hash_policy(obs, infos)
    return policy


@pytest.fixture(scope="module")
def no_kill():
    col = _collector("sync")
    batch = col.collect(hash_policy, tasks=3, branch=BRANCH)
    col.close()
    return batch


def _on_branch(r) -> bool:
    return "parent" in r and r["t"] == r["start_t"] + 2


def test_branch_trajectories_are_rerun_after_a_worker_death(no_kill):
    """Two workers killed while branches play: before, their branch trajectories failed (3 of 6 here) and
    the batch differed from the no-kill run; now they are re-run from their snapshots."""
    col = _collector("subprocess")
    state = {"killed": 0, "kills": 2}
    try:
        batch = col.collect(_killing_policy(col, state, _on_branch), tasks=3, branch=BRANCH)
    finally:
        col.close()
    assert state["killed"] == 2
    assert not batch.traj.failed.any() and batch.traj.retries[batch.traj.parent >= 0].sum() >= 2
    assert same_rollouts(no_kill, batch)


def test_a_key_change_mid_collect_reaches_no_worker_until_the_next_collect(no_kill):
    """The key changes while the roots play and a worker dies then: its replacement gets the collector's key
    (before: the new one, and branches restored on it failed); the next collect moves every worker to it."""
    old = S.snapshot_key()
    col = _collector("subprocess")
    state = {"killed": 0, "kills": 1}
    try:
        batch = col.collect(_killing_policy(col, state, lambda r: "parent" not in r and r["t"] == 3, change_key=True),
                            tasks=3, branch=BRANCH)
        assert state.get("changed") and state["killed"] == 1
        assert not batch.traj.failed.any() and same_rollouts(no_kill, batch)
        before = set(col.worker_pids())
        again = col.collect(hash_policy, tasks=3, branch=BRANCH)
        assert not again.traj.failed.any()
        assert not before & set(col.worker_pids())  # all restarted together with the new key
    finally:
        col.close()
        S.set_snapshot_key(old)


_WEAK = """
import os, sys
import agentgym_credit  # must never fail because of the key
from agentgym_credit.errors import SnapshotKeyError
import gymnasium as gym
env = gym.make("credit/GridWorld-v0")
env.reset(seed=0)
try:
    env.unwrapped.get_state()
except SnapshotKeyError as exc:
    print("REFUSED", exc)
else:
    print("ACCEPTED")
"""


@pytest.mark.parametrize("key, verdict", [("short", "REFUSED"), ("a" * 16, "REFUSED"), ("abababababababababab", "REFUSED"),
                                          ("a-proper key of 24 chars", "ACCEPTED")])
def test_a_weak_env_key_is_refused_at_first_use_not_at_import(key, verdict):
    done = subprocess.run([sys.executable, "-c", _WEAK], capture_output=True, text=True, cwd=REPO, timeout=120,
                          env={**os.environ, S.KEY_ENV: key})
    assert done.returncode == 0, done.stderr[-1500:]
    assert done.stdout.startswith(verdict), done.stdout


_CACHE_KEY = """
import warnings, sys
from agentgym_credit.envs import cachekey
with warnings.catch_warnings(record=True) as got:
    warnings.simplefilter("always")
    key = cachekey.cache_key()
print(len(key), [str(w.message) for w in got if issubclass(w.category, cachekey.CacheKeyWarning)])
"""


def _cache_key_child(path: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "AGENTGYM_CREDIT_CACHE_KEY"}
    return subprocess.run([sys.executable, "-c", _CACHE_KEY], capture_output=True, text=True, cwd=REPO, timeout=60,
                          env={**env, "AGENTGYM_CREDIT_CACHE_KEY_FILE": str(path)})


@pytest.mark.parametrize("kind, message", [("fifo", "not a regular file"), ("world", "writable by every user"),
                                           ("junk", "does not hold a key")])
def test_bad_cache_key_files_are_named_and_never_block(tmp_path, kind, message):
    path = tmp_path / "cache.key"
    if kind == "fifo":
        os.mkfifo(path)  # opening it for reading blocked the process before
    else:
        path.write_text("not a key\n" if kind == "junk" else os.urandom(32).hex() + "\n")
        if kind == "world":
            path.chmod(0o666)
            assert path.stat().st_mode & stat.S_IWOTH
    done = _cache_key_child(path)
    assert done.returncode == 0, done.stderr[-1500:]
    assert "32 [" in done.stdout and message in done.stdout


@pytest.mark.slow
def test_ray_worker_pids_after_a_kill():
    ray = pytest.importorskip("ray")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        col = GroupedRolloutCollector("credit/GridWorld-v0", env_kwargs=GRID, group_size=2, max_steps=5,
                                      backend="ray", num_workers=2, progress=False, ray_options={"num_cpus": 0.25},
                                      timeout=60)
    except BaseException:
        if started:
            ray.shutdown()
        raise
    try:
        victim = col.worker_pids()[0]
        os.kill(victim, signal.SIGKILL)
        time.sleep(1.0)
        pids = col.worker_pids()  # raised ActorDiedError before
        assert len(pids) == 2 and victim not in pids
    finally:
        col.close()
        if started:  # leave no cluster running for the rest of the session (torn down at exit otherwise)
            ray.shutdown()


def test_a_webshop_query_over_the_limit_is_an_invalid_no_op_without_search(monkeypatch):
    """Issue 34 item 2: an 8 MB query (max_action_length raised) took > 20 s of search; now any query over
    MAX_QUERY_CHARS is refused at the env's action parsing, before the search runs."""
    from agentgym_credit.envs.webshop.env import MAX_QUERY_CHARS, WebShopEnv, shared_catalog

    env = WebShopEnv(catalog=shared_catalog(100), split="test", cache_dir=False)
    env.max_action_length = 10**8
    obs0, _ = env.reset(seed=0)
    searched = []
    real = env._search
    monkeypatch.setattr(env, "_search", lambda q: searched.append(q) or real(q))
    obs, r, term, trunc, info = env.step("search[" + "red shirt " * 800_000 + "]")
    assert not info["action_valid"] and "MAX_QUERY_CHARS" in info["invalid_reason"] and obs == obs0
    assert searched == []
    obs, r, term, trunc, info = env.step("search[" + "x" * MAX_QUERY_CHARS + "]")
    assert info["action_valid"] and len(searched) == 1


def test_a_key_change_mid_collect_on_the_sync_backend_waits_for_the_next_collect(no_kill):
    """Issue 43 D10: on the sync backend a key change while the roots played failed 3 of 18 branch trajectories
    (their snapshots were sealed under the old key); the collect keeps its key, the next one takes the new key."""
    old = S.snapshot_key()
    col = _collector("sync")
    state = {}

    def policy(obs, infos):
        if not state and any("parent" not in i["rollout"] and i["rollout"]["t"] == 3 for i in infos):
            S.set_snapshot_key(None)
            state["changed"] = S.snapshot_key()
        return hash_policy(obs, infos)

    try:
        batch = col.collect(policy, tasks=3, branch=BRANCH)
        assert state and S.snapshot_key() == state["changed"]  # the process keeps the key it set
        assert not batch.traj.failed.any() and same_rollouts(no_kill, batch)
        again = col.collect(hash_policy, tasks=3, branch=BRANCH)
        assert not again.traj.failed.any()
    finally:
        col.close()
        S.set_snapshot_key(old)
