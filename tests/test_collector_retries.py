"""Collector faults contained (issue 15 items 5-7): lost trajectories re-run on a replacement worker from their
own seeds, a retry limit, retries recorded; aborted collects keep their group seeds; an idle dead worker is
replaced before the next collect; an env's own KeyboardInterrupt or unsendable info fails only its trajectory;
the sync backend enforces its timeout too."""

from __future__ import annotations

import os
import signal
import time
import warnings

import numpy as np
import pytest
from test_collector_envs import ChainEnv, FaultyEnv, alive, assert_only_faulty_failed, chain_policy

from agentgym_credit.wrappers import CollectionFailed, GroupedRolloutCollector


def _same_rows(a, b) -> None:
    for name in ("group_id", "traj_id", "t", "reward", "state_key", "obs_key", "done"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.action == b.action and a.observation == b.observation


@pytest.fixture(scope="module")
def sub_collector():
    col = GroupedRolloutCollector(FaultyEnv, group_size=4, backend="subprocess", num_workers=2, max_steps=5,
                                  progress=False, timeout=60, seed=3)
    yield col
    col.close()


def test_killed_worker_trajectories_are_rerun_from_their_own_seeds(sub_collector):
    sub_collector.worker_pids()
    victim = sub_collector.worker_pids()[0]
    start = sub_collector.groups_collected

    def policy(obs, infos):
        if infos[0]["rollout"]["t"] == 2 and alive(victim):
            os.kill(victim, signal.SIGKILL)
            time.sleep(0.05)
        return chain_policy(obs, infos)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # complete groups: nothing failed, nothing to warn about
        batch = sub_collector.collect(policy, tasks=["ok", "ok2"])
    tt = batch.traj
    on_victim = tt.traj_id % 2 == 0  # slot i lives on worker i % 2
    assert not tt.failed.any() and (tt.length == 5).all()
    assert (tt.retries[on_victim] == 1).all() and (tt.retries[~on_victim] == 0).all()
    clean = GroupedRolloutCollector(FaultyEnv, group_size=4, max_steps=5, progress=False, seed=3)
    clean.groups_collected = start
    _same_rows(batch, clean.collect(chain_policy, tasks=["ok", "ok2"]))  # same seeds, same trajectories
    assert victim not in sub_collector.worker_pids()


def test_a_worker_that_died_while_idle_is_replaced_before_the_next_collect(sub_collector):
    victim = sub_collector.worker_pids()[1]
    os.kill(victim, signal.SIGKILL)
    sub_collector._backend._procs[1].join(30)  # dead before the collect, however busy the machine
    batch = sub_collector.collect(chain_policy, tasks=2)
    assert not batch.traj.failed.any() and not batch.traj.retries.any()
    assert victim not in sub_collector.worker_pids()


def test_retries_stop_at_the_limit():
    col = GroupedRolloutCollector(FaultyEnv, group_size=2, backend="subprocess", num_workers=1, max_steps=4,
                                  progress=False, timeout=1.5, max_retries=1)
    try:
        with pytest.raises(CollectionFailed, match="did not answer within 1.5 s") as err:
            col.collect(chain_policy, tasks=["hang"])
        batch = err.value.batch
    finally:
        col.close()
    assert batch.traj.failed.all() and (batch.traj.retries == 1).all()
    assert all("did not answer within 1.5 s" in e for e in batch.traj.error)


@pytest.mark.parametrize("backend", ["sync", "subprocess"])
def test_an_aborted_collect_does_not_consume_group_seeds(backend):
    calls = []

    def failing(obs, infos):
        calls.append(1)
        if infos[0]["rollout"]["t"] == 1:
            raise RuntimeError("policy crashed")
        return chain_policy(obs, infos)

    col = GroupedRolloutCollector(ChainEnv, group_size=2, backend=backend, num_workers=1, max_steps=4,
                                  progress=False, seed=9)
    try:
        with pytest.raises(RuntimeError, match="policy crashed"):
            col.collect(failing, tasks=2)
        assert col.groups_collected == 0
        again = col.collect(chain_policy, tasks=2)
    finally:
        col.close()
    fresh = GroupedRolloutCollector(ChainEnv, group_size=2, max_steps=4, progress=False, seed=9)
    _same_rows(again, fresh.collect(chain_policy, tasks=2))
    assert np.array_equal(again.traj.seed, fresh.collect(chain_policy, tasks=2, seeds=list(again.traj.seed[::2])
                                                         ).traj.seed)


def test_env_interrupt_and_unsendable_info_fail_only_their_trajectories():
    col = GroupedRolloutCollector(FaultyEnv, group_size=2, backend="subprocess", num_workers=2, max_steps=4,
                                  progress=False, timeout=60)
    try:
        with pytest.warns(UserWarning):
            batch = col.collect(chain_policy, tasks=["ok", "interrupt", "unsendable", "ok2"])
        pids = col.worker_pids()
        assert not col.collect(chain_policy, tasks=2).traj.failed.any()
        assert col.worker_pids() == pids  # no worker died for it
    finally:
        col.close()
    assert_only_faulty_failed(batch)


def test_sync_backend_enforces_its_timeout():
    col = GroupedRolloutCollector(FaultyEnv, group_size=2, max_steps=4, progress=False, timeout=3.0, max_retries=0)
    t0 = time.monotonic()
    with pytest.warns(UserWarning):
        batch = col.collect(chain_policy, tasks=["hang", "ok"])
    assert time.monotonic() - t0 < 40  # the env sleeps 60 s per copy
    tt = batch.traj
    hung = np.array(tt.task_id) == "hang"
    assert tt.failed[hung].all() and not tt.failed[~hung].any()
    assert all("did not answer within 3 s" in e for e in np.array(tt.error)[hung])
    assert not col.collect(chain_policy, tasks=["ok"]).traj.failed.any()


def test_a_worker_killed_by_a_signal_names_the_signal():
    """A worker that dies leaves a named reason, not a bare exit code: the signal by name (here SIGSEGV, what a
    crashing native engine gives), and exit code 86 says the engine watchdog ended it and why."""
    from agentgym_credit.envs.alfworld import zguard
    from agentgym_credit.wrappers.workers import exit_reason

    col = GroupedRolloutCollector(ChainEnv, group_size=2, backend="subprocess", num_workers=1, max_steps=4,
                                  progress=False, max_retries=0, spare_workers=0)
    try:
        victim = col.worker_pids()[0]

        def policy(obs, infos):
            if infos[0]["rollout"]["t"] == 1 and alive(victim):
                os.kill(victim, signal.SIGSEGV)
            return chain_policy(obs, infos)

        with pytest.raises(CollectionFailed, match=r"died \(killed by signal SIGSEGV \(11\)[;)]") as err:
            col.collect(policy, tasks=1)
    finally:
        col.close()
    assert all("died (killed by signal SIGSEGV (11)" in e for e in err.value.batch.traj.error)
    assert exit_reason(zguard.WATCHDOG_EXIT).startswith("exit code 86: ended by the native-engine watchdog")
    assert exit_reason(3) == "exit code 3" and exit_reason(None) == "exit code unknown"
