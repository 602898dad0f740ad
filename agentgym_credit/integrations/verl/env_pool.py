"""Where the agent loop's env calls run: a pool of env processes (default) or threads, sized by config.

What lives here:

- :func:`env_handle`: one trajectory's env, from the row settings ``env_pool`` (``"process"`` or ``"thread"``) and
  ``env_workers`` (the pool size, per agent-loop worker process);
- :class:`ProcessEnv`, :class:`ThreadEnv`: the two handles, one interface: ``await call("reset_slot" |
  "step_slot", *args)``, ``await category(env_id, info)``, ``await close()``.

verl runs every agent loop of a worker on one asyncio event loop. Env calls leave that loop for a pool:

- ``"process"``: ``env_workers`` single-process executors (``spawn``), created on first use; a trajectory's env
  lives in one of them (the rollouts of one group in the same one, so an env that memoizes what it built for a
  seed, as ALFWorld does its games, builds it once per group), as one slot of that process's
  :class:`~agentgym_credit.wrappers.workers.EnvWorker`, so its calls always reach its own env. Pure-Python
  engines (ALFWorld's text engine) hold the GIL, so only processes run them in parallel;
- ``"thread"``: ``env_workers`` threads in this process, each trajectory with its own ``EnvWorker``. Envs on an
  engine that is not thread-safe (ALFWorld and TextWorld: TextWorld's parser) take that engine's lock on every
  call (:data:`agentgym_credit.envs.base.ENGINE_LOCKS`), so their threads take turns: safe, but one env call at a
  time per process; use ``"process"`` to run them in parallel. Measured before the lock: 16 of 16 threads failed
  (``IndexError`` in TextWorld's parser); with it 0 (``tests/test_env_thread_safety.py``).

Keys are computed by the collector's own ``EnvWorker`` in both cases, so they equal those of a
``GroupedRolloutCollector`` batch. Throughput measured per worker: ``benchmarks/speed/verl_env_pool.md``.
"""

from __future__ import annotations

import asyncio
import itertools
import multiprocessing as mp
import threading
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any

# the process side runs from a module outside this package: a spawned process imports its module's package
from agentgym_credit.wrappers.slot_calls import goal_category, slot_call
from agentgym_credit.wrappers.workers import EnvFactory, EnvWorker

_POOLS: dict[tuple[str, int], list[Executor]] = {}
_LOCK = threading.Lock()
_SLOTS = itertools.count()
_TURN = itertools.count()
_GROUPS: dict[tuple[Any, ...], int] = {}


def _pool(kind: str, size: int) -> list[Executor]:
    with _LOCK:
        if (kind, size) not in _POOLS:
            if kind == "process":
                ctx = mp.get_context("spawn")
                _POOLS[(kind, size)] = [ProcessPoolExecutor(1, mp_context=ctx) for _ in range(size)]
            else:
                _POOLS[(kind, size)] = [ThreadPoolExecutor(size, thread_name_prefix="agc-env")]
        return _POOLS[(kind, size)]


def shutdown() -> None:
    """Stop every pool of this process (they are re-created on next use)."""
    with _LOCK:
        for pools in _POOLS.values():
            for ex in pools:
                ex.shutdown(wait=True, cancel_futures=True)
        _POOLS.clear()


class ProcessEnv:
    """A trajectory's env in one process of the pool (module docstring)."""

    def __init__(self, cfg: dict[str, Any]):
        pools = _pool("process", int(cfg["env_workers"]))
        # the rollouts of one group (same env, seed, task) share a process, hence its memo of built games;
        # new groups go to the processes in turn
        group = (str(cfg["env_id"]), repr(sorted(cfg["env_kwargs"].items())), cfg.get("seed"), repr(cfg.get("task")))
        with _LOCK:
            if group not in _GROUPS:
                if len(_GROUPS) >= 4096:  # only the recent groups matter (a training step's)
                    _GROUPS.clear()
                _GROUPS[group] = next(_TURN)
            self.ex = pools[_GROUPS[group] % len(pools)]
        self.key = (str(cfg["env_id"]), tuple(sorted(cfg["env_kwargs"].items())), int(cfg["history_depth"]))
        self.slot = next(_SLOTS)

    async def call(self, method: str, *args: Any) -> Any:
        return await asyncio.wrap_future(self.ex.submit(slot_call, self.key, method, self.slot, *args))

    async def category(self, env_id: str, info: dict[str, Any]) -> str:
        if info.get("task_type"):
            return str(info["task_type"])
        return await self.call("category") if "WebShop" in env_id else ""

    async def close(self) -> None:
        try:
            await self.call("close")
        except Exception:  # a broken pool is reported by the next call, not by cleanup
            pass


class ThreadEnv:
    """A trajectory's own ``EnvWorker`` in this process, called on the thread pool (module docstring)."""

    def __init__(self, cfg: dict[str, Any]):
        self.ex = _pool("thread", int(cfg["env_workers"]))[0]
        self.worker = EnvWorker(EnvFactory(str(cfg["env_id"]), tuple(sorted(cfg["env_kwargs"].items()))),
                                history_depth=int(cfg["history_depth"]))

    async def call(self, method: str, *args: Any) -> Any:
        fn = getattr(self.worker, method)
        return await asyncio.get_running_loop().run_in_executor(self.ex, fn, 0, *args)

    async def category(self, env_id: str, info: dict[str, Any]) -> str:
        if info.get("task_type"):
            return str(info["task_type"])
        if "WebShop" not in env_id:
            return ""
        return await asyncio.get_running_loop().run_in_executor(self.ex, goal_category, self.worker, 0)

    async def close(self) -> None:
        self.worker.close()


def env_handle(cfg: dict[str, Any]) -> ProcessEnv | ThreadEnv:
    """The env handle of one trajectory under the row settings ``cfg`` (``env_pool``, ``env_workers``...)."""
    return ProcessEnv(cfg) if cfg["env_pool"] == "process" else ThreadEnv(cfg)


__all__ = ["env_handle", "ProcessEnv", "ThreadEnv", "shutdown"]
