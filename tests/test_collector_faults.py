"""Collector faults: env errors, dead workers, bad policy output, Ctrl-C — never a hang, never lost data."""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from test_collector_envs import ChainEnv, FaultyEnv, alive, chain_policy

from agentgym_credit.wrappers import CollectionFailed, GroupedRolloutCollector

LONG_CHAIN = functools.partial(ChainEnv, n=50)


@pytest.fixture(scope="module")
def sub_collector():
    col = GroupedRolloutCollector(FaultyEnv, group_size=4, backend="subprocess", num_workers=2, max_steps=5,
                                  progress=False, timeout=60)
    yield col
    col.close()


@pytest.mark.parametrize("backend", ["sync", "subprocess"])
def test_env_errors_fail_only_their_trajectories(backend, sub_collector):
    col = sub_collector if backend == "subprocess" else GroupedRolloutCollector(
        FaultyEnv, group_size=4, max_steps=5, progress=False)
    with pytest.warns(UserWarning, match="trajectories failed"):
        batch = col.collect(chain_policy, tasks=["ok", "bad-reset", "bad-step", "ok2"])
    tt = batch.traj
    g_reset, g_step = tt.group_id == 1, tt.group_id == 2
    assert tt.failed[g_reset].all() and all("boom in reset" in e for e in np.array(tt.error)[g_reset])
    assert (tt.length[g_reset] == 0).all()
    step_failed = tt.failed & g_step
    assert 0 < step_failed.sum() < 4  # only the copies whose RNG said so
    assert all(e.startswith("step 1 failed: RuntimeError: boom in step") for e in np.array(tt.error)[step_failed])
    assert (tt.length[step_failed] == 1).all()  # the row before the failure is kept
    assert not tt.failed[(tt.group_id == 0) | (tt.group_id == 3)].any()
    assert (tt.length[tt.group_id == 0] == 5).all()
    assert batch.failed_groups.tolist() == [1, 2]
    # .steps leaves failed trajectories out, "group" drops whole flagged groups, "keep" marks them invalid
    assert set(batch.steps.traj_id.tolist()) == set(np.flatnonzero(~tt.failed).tolist())
    assert set(batch.to_steps(failed="group").group_id.tolist()) == {0, 3}
    kept = batch.to_steps(failed="keep")
    assert kept.n == len(batch) and not kept.done[np.isin(kept.traj_id, np.flatnonzero(step_failed))].any()
    # the broken envs were rebuilt: the next call is clean
    again = col.collect(chain_policy, tasks=["ok"])
    assert not again.traj.failed.any()


def test_policy_wrong_count_raises_and_collector_stays_usable(sub_collector):
    with pytest.raises(ValueError, match="policy returned 3 actions for 8 observations"):
        sub_collector.collect(lambda obs, infos: ["right"] * 3, tasks=2)
    with pytest.raises(TypeError, match="got str"):
        sub_collector.collect(lambda obs, infos: "right", tasks=2)
    assert not sub_collector.collect(chain_policy, tasks=2).traj.failed.any()


def test_policy_non_string_fails_only_that_trajectory():
    def policy(obs, infos):
        acts = chain_policy(obs, infos)
        return [7 if i["rollout"]["traj_id"] == 1 else ({"logprob": 0.0} if i["rollout"]["traj_id"] == 2 else a)
                for a, i in zip(acts, infos)]

    col = GroupedRolloutCollector(ChainEnv, group_size=4, max_steps=5, progress=False)
    with pytest.warns(UserWarning):
        batch = col.collect(policy, tasks=1)
    assert batch.traj.failed.tolist() == [False, True, True, False]
    assert "policy returned int 7" in batch.traj.error[1]
    assert "without an 'action' key" in batch.traj.error[2]
    assert batch.traj.length.tolist() == [5, 0, 0, 5]


def test_killed_worker_is_replaced_and_collection_continues(sub_collector):
    victim = sub_collector.worker_pids()[0]

    def policy(obs, infos):
        if infos[0]["rollout"]["t"] == 2 and alive(victim):
            os.kill(victim, signal.SIGKILL)
            time.sleep(0.05)
        return chain_policy(obs, infos)

    batch = sub_collector.collect(policy, tasks=["ok", "ok2"])
    tt = batch.traj
    on_victim = tt.traj_id % 2 == 0  # slot i lives on worker i % 2
    # re-run on the replacement worker from their own seeds: complete groups, the retry recorded
    assert not tt.failed.any() and (tt.length == 5).all()
    assert (tt.retries[on_victim] == 1).all() and (tt.retries[~on_victim] == 0).all()
    pids = sub_collector.worker_pids()
    assert victim not in pids and all(alive(p) for p in pids)
    assert not sub_collector.collect(chain_policy, tasks=2).traj.failed.any()


def test_keyboard_interrupt_from_policy_stops_workers():
    col = GroupedRolloutCollector(LONG_CHAIN, group_size=2, backend="subprocess", num_workers=2, progress=False)
    pids = col.worker_pids()

    def policy(obs, infos):
        if infos[0]["rollout"]["t"] == 3:
            raise KeyboardInterrupt
        return chain_policy(obs, infos)

    with pytest.raises(KeyboardInterrupt):
        col.collect(policy, tasks=2)
    assert not any(alive(p) for p in pids)


def test_sigint_during_collection_leaves_no_orphans(tmp_path):
    tests_dir = Path(__file__).resolve().parent
    script = tmp_path / "collect.py"
    script.write_text(textwrap.dedent(f"""
        import functools, sys
        sys.path.insert(0, {str(tests_dir)!r})
        from test_collector_envs import ChainEnv, chain_policy
        from agentgym_credit.wrappers import GroupedRolloutCollector
        calls = 0
        def policy(obs, infos):  # says when collection is under way (a fixed sleep raced a loaded machine)
            global calls
            calls += 1
            if calls == 20:
                print("COLLECTING", flush=True)
            return chain_policy(obs, infos)
        if __name__ == "__main__":
            col = GroupedRolloutCollector(functools.partial(ChainEnv, n=10**6), group_size=2,
                                          backend="subprocess", num_workers=2, max_steps=10**7, progress=False)
            print("PIDS", *col.worker_pids(), flush=True)
            try:
                col.collect(policy, tasks=2)
            except KeyboardInterrupt:
                print("INTERRUPTED", flush=True)
                raise
    """))
    # SIGINT's default action in the child: a runner that started the suite in the background (``cmd &``, nohup)
    # hands it an ignored SIGINT, and Python then installs no KeyboardInterrupt handler (the test hung 300 s)
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        line = proc.stdout.readline()
        assert line.startswith("PIDS"), proc.stderr.read()
        pids = [int(x) for x in line.split()[1:]]
        assert proc.stdout.readline().startswith("COLLECTING"), proc.stderr.read()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=300)  # no timing assumption: only a hang fails
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "INTERRUPTED" in out and "KeyboardInterrupt" in err
    assert proc.returncode != 0
    deadline = time.monotonic() + 120
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in pids)


def test_hung_worker_times_out_and_is_replaced():
    col = GroupedRolloutCollector(FaultyEnv, group_size=2, backend="subprocess", num_workers=2, max_steps=4,
                                  progress=False, timeout=3.0,  # generous for a loaded CI machine; the hang is 60 s
                                  max_retries=0)  # a deterministic hang: re-runs would hang again
    try:
        pids = col.worker_pids()
        with pytest.raises(CollectionFailed, match="all 2 trajectories failed for the same reason") as err:
            col.collect(chain_policy, tasks=["hang"])
        batch = err.value.batch
        assert batch.traj.failed.all()
        assert all("did not answer within 3 s" in e for e in batch.traj.error)
        assert not set(pids) & set(col.worker_pids())
        assert not col.collect(chain_policy, tasks=["ok"]).traj.failed.any()
    finally:
        col.close()
    assert not any(alive(p) for p in pids)


def test_unpicklable_factory_is_a_clear_error():
    col = GroupedRolloutCollector(lambda: ChainEnv(), group_size=2, backend="subprocess", progress=False)
    with pytest.raises(TypeError, match="must be picklable"):
        col.collect(chain_policy, tasks=1)
