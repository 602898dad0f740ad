"""The subprocess backend's started spare worker (issue 43): a lost worker's place goes to a process that has
already started and never served a caller; the lost one is killed; no process outlives ``close``."""

from __future__ import annotations

import os
import signal

import pytest
from test_collector_envs import FaultyEnv, alive

from agentgym_credit.wrappers import GroupedRolloutCollector
from agentgym_credit.wrappers.backends import SubprocessBackend
from agentgym_credit.wrappers.workers import EnvFailure, EnvWorker

RESET = ("reset", [0], [(0, {"task": "ok"}, 0)])


def _backend(**kw) -> SubprocessBackend:
    return SubprocessBackend(FaultyEnv, 2, False, num_workers=1, timeout=60.0, **kw)


def _kill_and_run(be: SubprocessBackend) -> list:
    victim = be.worker_pids()[0]
    os.kill(victim, signal.SIGKILL)
    return be.run([RESET])[0]


def test_a_lost_worker_is_replaced_by_the_spare_that_had_started():
    be = _backend()
    seen = set()
    try:
        assert be.run([RESET])[0][0].__class__ is not EnvFailure
        victim, (spare,) = be.worker_pids()[0], be.spare_pids()
        seen |= {victim, spare}
        assert spare != victim and alive(spare)
        lost = _kill_and_run(be)
        assert lost[0].__class__ is EnvFailure and lost[0].lost
        # the spare took the lost worker's place; the next spare starts once the replacement has answered
        assert be.worker_pids() == [spare] and not alive(victim) and be.spare_pids() == []
        assert be.run([RESET])[0][0].__class__ is not EnvFailure  # served by the former spare
        (fresh,) = be.spare_pids()
        seen.add(fresh)
        assert fresh not in (spare, victim) and alive(fresh) and be.restarts == 1
        _kill_and_run(be)
        assert be.worker_pids() == [fresh] and be.restarts == 2
        be.run([RESET])
        seen |= set(be.spare_pids())
    finally:
        be.close()
    assert len(seen) == 4 and not any(alive(p) for p in seen)


def test_a_spare_that_died_while_idle_or_has_an_old_key_never_serves():
    be = _backend()
    try:
        (spare,) = be.spare_pids()
        os.kill(spare, signal.SIGKILL)
        be._spares[0][0].join(30)  # reaped: it is dead, not a zombie
        assert be.ensure_alive() == 0  # no worker replaced: a spare is not a worker
        (again,) = be.spare_pids()
        assert again != spare and alive(again)
        _kill_and_run(be)
        assert be.worker_pids() == [again]
        # a new snapshot key: the spare started with the old one is dropped, never made a worker
        be.run([RESET])
        (old,) = be.spare_pids()
        assert be.use_key(os.urandom(32))
        assert old not in be.worker_pids() and not alive(old)
        assert be.run([RESET])[0][0].__class__ is not EnvFailure
        (new,) = be.spare_pids()
        assert new != old and be.restarts == 1
    finally:
        be.close()


def test_no_spares_starts_a_replacement_on_demand_and_bad_counts_are_refused():
    col = GroupedRolloutCollector(FaultyEnv, group_size=2, backend="subprocess", num_workers=1, spare_workers=0,
                                  progress=False)
    be = col.backend
    try:
        assert be.spare_pids() == []
        victim = be.worker_pids()[0]
        _kill_and_run(be)
        assert be.worker_pids()[0] != victim and be.spare_pids() == []
        assert be.run([RESET])[0][0].__class__ is not EnvFailure
    finally:
        col.close()
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="spare_workers"):
            _backend(spare_workers=bad)


def test_a_spare_makes_the_env_its_first_slot_uses_and_no_other():
    made, closed = [], []

    def factory():
        env = FaultyEnv()
        env.close = lambda: closed.append(env)
        made.append(env)
        return env

    worker = EnvWorker(factory, 2, False)
    worker.premake()
    worker.premake()  # one env ahead, not two
    assert len(made) == 1
    assert worker.run(RESET)[0].__class__ is not EnvFailure and len(made) == 1
    assert worker.envs[0].unwrapped is made[0]
    worker.run(("reset", [1], [(0, {"task": "ok"}, 0)]))
    assert len(made) == 2
    worker.premake()
    worker.close()  # the made-ahead env is closed with the others
    assert len(made) == 3 and closed == [made[0], made[1], made[2]]
