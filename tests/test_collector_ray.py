"""The Ray backend on a real local cluster (``ray.init(num_cpus=2)``, started once for the module)."""

from __future__ import annotations

import functools
import os
import signal
import time

import pytest
from test_collector import SLIPPY_GRID, assert_same_batch
from test_collector_envs import (
    ChainEnv,
    FaultyEnv,
    SlowToStart,
    assert_only_faulty_failed,
    chain_policy,
    hash_policy,
)

from agentgym_credit.wrappers import GroupedRolloutCollector

ray = pytest.importorskip("ray", reason="the ray backend needs `pip install -e '.[ray]'`")


def killing_policy(victim: int, killed: list, pause: float = 0.0):
    """``chain_policy`` that SIGKILLs process ``victim`` once, at step 2 (recorded in ``killed``), then sleeps
    ``pause`` seconds."""

    def policy(obs, infos):
        if infos[0]["rollout"]["t"] == 2 and not killed:
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)
            time.sleep(pause)
        return chain_policy(obs, infos)

    return policy


def test_ray_matches_sync(ray_cluster):
    kw = dict(env="credit/GridWorld-v0", env_kwargs=SLIPPY_GRID, group_size=4, max_steps=20, seed=11,
              progress=False)
    sync = GroupedRolloutCollector(**kw).collect(hash_policy, tasks=[0, 1, 2])
    with GroupedRolloutCollector(backend="ray", num_workers=2, **kw) as col:
        remote = col.collect(hash_policy, tasks=[0, 1, 2])
    assert_same_batch(sync, remote)


def test_ray_dead_actor_is_replaced(ray_cluster):
    col = GroupedRolloutCollector(functools.partial(ChainEnv, n=50), group_size=2, backend="ray", num_workers=2,
                                  max_steps=5, progress=False, timeout=60)
    try:
        victim = col.worker_pids()[1]
        policy = killing_policy(victim, [], pause=0.1)
        batch = col.collect(policy, tasks=2)
        tt = batch.traj
        on_victim = tt.traj_id % 2 == 1
        # re-run on the replacement actor from their own seeds: complete groups, the retry recorded
        assert not tt.failed.any() and (tt.length == 5).all()
        assert (tt.retries[on_victim] == 1).all() and (tt.retries[~on_victim] == 0).all()
        assert victim not in col.worker_pids()
        # an actor that died while idle is replaced before the next collect starts
        idle = col.worker_pids()[0]
        os.kill(idle, signal.SIGKILL)
        time.sleep(1.0)
        again = col.collect(chain_policy, tasks=2)
        assert not again.traj.failed.any() and not again.traj.retries.any()
        assert idle not in col.worker_pids()
        assert not col.collect(chain_policy, tasks=2).traj.failed.any()
    finally:
        col.close()


def test_ray_env_interrupt_and_unsendable_info_fail_only_their_trajectories(ray_cluster):
    """The same faults as on the subprocess backend, the same results (a RayTaskError aborted the collect)."""
    col = GroupedRolloutCollector(FaultyEnv, group_size=2, backend="ray", num_workers=2, max_steps=4,
                                  progress=False, timeout=60)
    try:
        with pytest.warns(UserWarning):
            batch = col.collect(chain_policy, tasks=["ok", "interrupt", "unsendable", "ok2"])
        assert not col.collect(chain_policy, tasks=2).traj.failed.any()
    finally:
        col.close()
    assert_only_faulty_failed(batch)


def test_ray_rejects_more_workers_than_the_cluster_has_cpus(ray_cluster):
    col = GroupedRolloutCollector(ChainEnv, group_size=2, backend="ray", num_workers=3, progress=False)
    with pytest.raises(ValueError, match="need 3 CPUs; the cluster has 2"):
        col.collect(chain_policy, tasks=1)


def test_a_replacement_actors_start_up_is_not_a_round_trip(ray_cluster, tmp_path):
    """A replacement actor's start-up is waited for up to ``start_timeout``, as the subprocess backend waits for its
    workers: before, it counted against the next round trip's ``timeout``, so an actor that took 6 s to start
    failed its retried trajectories at ``timeout=3`` (and its replacement did the same); 15 s at 5 s here."""
    marker = tmp_path / "slow"
    col = GroupedRolloutCollector(SlowToStart(str(marker), 15.0), group_size=2, backend="ray", num_workers=2,
                                  max_steps=5, progress=False, timeout=5.0, max_retries=1)
    try:
        victim = col.worker_pids()[1]
        marker.touch()  # actors made from now on take 15 s to start
        killed = []
        policy = killing_policy(victim, killed)
        tt = col.collect(policy, tasks=2).traj
        assert killed and not tt.failed.any(), list(tt.error)
        assert (tt.retries[tt.traj_id % 2 == 1] == 1).all() and col._backend.restarts == 1
    finally:
        marker.unlink(missing_ok=True)
        col.close()


def test_a_replacement_that_does_not_start_is_a_named_error(ray_cluster, tmp_path):
    """A replacement actor gets ``start_timeout`` to start, like the first actors, and the same ``RuntimeError``
    after it (never a round-trip timeout blamed on an actor that never started, never an endless wait)."""
    from agentgym_credit.wrappers.backends import RayBackend

    marker = tmp_path / "slow"
    be = RayBackend(SlowToStart(str(marker), 60.0), 4, False, num_workers=1, timeout=5.0)
    try:
        victim = be.worker_pids()[0]
        be.start_timeout = 2.0  # the first actor had the default 120 s, however busy the machine
        marker.touch()
        os.kill(victim, signal.SIGKILL)
        with pytest.raises(RuntimeError, match=r"1 of 1 Ray env workers did not start within 2 s"):
            be.ensure_alive()
    finally:
        marker.unlink(missing_ok=True)
        be.close()


def test_a_lost_worker_whose_replacement_does_not_start_ends_the_collect(ray_cluster, tmp_path):
    """The round-trip path: a worker lost mid-collect is replaced; when the replacement does not start within
    ``start_timeout`` the next round trip raises the named error, the collector closes the backend (no group seeds
    used), and the next collect starts afresh."""
    marker = tmp_path / "slow"
    col = GroupedRolloutCollector(SlowToStart(str(marker), 60.0), group_size=2, backend="ray", num_workers=2,
                                  max_steps=5, progress=False, timeout=60)
    try:
        victim = col.worker_pids()[1]
        col.backend.start_timeout = 2.0
        marker.touch()
        killed = []
        policy = killing_policy(victim, killed)
        with pytest.raises(RuntimeError, match=r"1 of 1 Ray env workers did not start within 2 s"):
            col.collect(policy, tasks=2)
        assert killed and col._backend is None and col.groups_collected == 0
        marker.unlink()
        assert not col.collect(chain_policy, tasks=2).traj.failed.any()
    finally:
        marker.unlink(missing_ok=True)
        col.close()
