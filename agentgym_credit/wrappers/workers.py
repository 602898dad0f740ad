"""Env workers: what runs the envs of one process, whatever the backend.

What lives here:

- :class:`EnvFactory`: a picklable ``gym.make(env_id, **kwargs)`` (an env id becomes one of these).
- :class:`EnvWorker`: owns a set of env *slots* and runs one :data:`Batch` per call — ``reset``,
  ``step`` or ``restore`` (branching: ``set_state`` of a snapshot taken anywhere, then a fresh RNG)
  for some of its slots — catching each env's exceptions so that one broken env fails only its own
  trajectory. Every env is wrapped in :class:`HistoryFingerprint`. A batch with the option
  ``{"snapshot": True}`` appends to each result the snapshot of the state it left the env in
  (``HistoryFingerprint.get_state()`` bytes; ``None`` once the episode ended; the error text if the
  env cannot snapshot), which the collector keeps to branch from. In a worker process
  (``contain_interrupts=True``) an env's own ``KeyboardInterrupt`` fails only its slot too, and native engines run
  under a watchdog that ends the process on a hang (:mod:`~agentgym_credit.envs.alfworld.zguard`).
- :class:`EnvFailure`: the result of a command that raised, or whose worker died or hung (``lost``:
  the trajectory is not at fault and the collector may re-run it).
- :class:`HashMemo`: ``stable_hash`` memoized (a dict whose missing keys hash themselves); the
  workers hash every ``state_key``/``obs_key`` through one, since keys repeat heavily.
- :func:`copy_rng`: the RNG copy ``c`` of a group continues with.

The backends that drive workers (in process, ``multiprocessing``, Ray) are in
:mod:`~agentgym_credit.wrappers.backends`. Seeding happens in :meth:`EnvWorker.reset_slot` (see the
collector's docstring for the scheme), so every backend gives identical results.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from agentgym_credit.envs.alfworld import zguard
from agentgym_credit.envs.snapshot import set_snapshot_key
from agentgym_credit.keys import stable_hash
from agentgym_credit.wrappers.history import HistoryFingerprint

Batch = tuple  # ("reset", slots, [(seed, options, copy), ...]) | ("step", slots, [action, ...])
#               | ("restore", slots, [(snapshot, seed, copy), ...]), optionally + ({"snapshot": True},)
"""One message to a worker: a command kind, the slots, one argument per slot, and optional options."""

StepResult = tuple  # (obs, reward, terminated, truncated, info, state_hash, obs_hash[, snapshot])
"""What a successful ``reset``/``step``/``restore`` returns (reward/terminated/truncated are 0/False on
reset and restore); the snapshot comes last when the batch asked for it."""


@dataclass(frozen=True)
class EnvFailure:
    """A command that did not produce a step: the env raised (``lost=False``), or its worker died or did
    not answer in time (``lost=True``: the env state is gone through no fault of the trajectory)."""

    error: str
    lost: bool = False


@dataclass(frozen=True)
class EnvFactory:
    """Picklable ``gym.make(env_id, **kwargs)``; imports :mod:`agentgym_credit` so ``credit/*`` ids exist."""

    env_id: str
    kwargs: tuple[tuple[str, Any], ...] = ()

    def __call__(self) -> gym.Env:
        import agentgym_credit  # noqa: F401  (registers the credit/ namespace in a fresh process)

        return gym.make(self.env_id, **dict(self.kwargs))


class HashMemo(dict):
    """``stable_hash`` memoized per process: keys repeat a lot, and BLAKE2b per key is a worker's main cost.

    ``memo[key] == stable_hash(key)``; keys up to :attr:`max_len` characters are kept, at most
    :attr:`max_size` of them (the memo is cleared when full), so memory stays bounded (~50 MB).
    """

    max_size = 1 << 16
    max_len = 512

    def __missing__(self, key: str | bytes) -> int:
        h = stable_hash(key)
        if len(key) <= self.max_len:
            if len(self) >= self.max_size:
                self.clear()
            self[key] = h
        return h


_KEY_MEMO = HashMemo()
"""The workers' memo (one per process)."""


def copy_rng(seed: int, copy: int) -> np.random.Generator:
    """The RNG that copy ``copy`` of a group continues with after ``reset(seed=seed)``."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([int(seed), int(copy)])))


class WorkerTimeout(Exception):
    """Raised inside an env when its worker's round trip ran past the timeout (the sync backend's alarm):
    the trajectory is lost through no fault of its own, like one whose worker process hung."""


def _failure(e: BaseException) -> EnvFailure:
    """The :class:`EnvFailure` of an exception raised by an env (``lost`` for a :class:`WorkerTimeout`)."""
    return EnvFailure(_format_error(e), lost=isinstance(e, WorkerTimeout))


def exit_reason(code: int | None) -> str:
    """Why a worker process ended, from its exit code: the signal that killed it by name, or the engine watchdog."""
    if code is None:
        return "exit code unknown"
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name} ({-code})"
        except ValueError:
            return f"killed by signal {-code}"
    if code == zguard.WATCHDOG_EXIT:
        return (f"exit code {code}: ended by the native-engine watchdog, a jericho call ran past its bound (a step: "
                f"{zguard.STEP_SECONDS:g} s; a restore: {zguard.PROBE_CPU_SECONDS:g} s of CPU); its stderr names the call")
    return f"exit code {code}"


def _format_error(e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    where = f" (at {tb[-1].filename}:{tb[-1].lineno} in {tb[-1].name})" if tb else ""
    return f"{type(e).__name__}: {e}{where}"


class EnvWorker:
    """Envs of a set of slots, driven by :data:`Batch` messages (runs in any process).

    ``reset_slot`` calls ``env.reset(seed=seed, options=options)`` — every copy of a group gets
    the same seed and so the same initial state — then replaces the env's ``np_random`` with
    :func:`copy_rng(seed, copy) <copy_rng>` so that the copies diverge in their stochastic
    transitions (slip), reproducibly and independently of the backend.
    An env that raises is closed and dropped; the slot gets a fresh env on its next reset.
    ``snapshot_key`` (worker processes: the parent's :func:`~agentgym_credit.envs.snapshot.snapshot_key`)
    makes this process sign and check snapshots with that key, so they restore in any worker.
    """

    def __init__(self, factory: Callable[[], gym.Env], history_depth: int = 4, include_actions: bool = False,
                 contain_interrupts: bool = False, snapshot_key: bytes | None = None):
        if snapshot_key is not None:  # a worker process signs and checks snapshots with its parent's key
            set_snapshot_key(snapshot_key)
        if contain_interrupts:  # a disposable worker process: native engines run under a watchdog, no fork probe
            zguard.set_guard("watchdog")
        self.factory = factory
        self.history_depth = int(history_depth)
        self.include_actions = bool(include_actions)
        self.envs: dict[int, gym.Env] = {}
        # in a worker process an env's KeyboardInterrupt (or SystemExit) is the env's fault, not Ctrl-C
        self._catch: type[BaseException] = BaseException if contain_interrupts else Exception
        self._last: tuple[list[int], list[Any]] = ([], [])
        self._premade: gym.Env | None = None  # made ahead by premake, for the next new slot

    def premake(self) -> None:
        """Make the env the next new slot will use now (an idle spare worker process loads the env's imports before
        it is given work); a factory that fails here is called again, and fails, at that slot's first use."""
        if self._premade is None:
            try:
                self._premade = self.factory()
            except Exception:
                self._premade = None

    def _env(self, slot: int) -> gym.Env:
        env = self.envs.get(slot)
        if env is None:
            made, self._premade = self._premade, None
            env = HistoryFingerprint(made if made is not None else self.factory(), depth=self.history_depth,
                                     include_actions=self.include_actions)
            self.envs[slot] = env
        return env

    def _drop(self, slot: int) -> None:
        env = self.envs.pop(slot, None)
        if env is not None:
            try:
                env.close()
            except Exception:  # a broken env may fail to close too; it is gone either way
                pass

    def reset_slot(self, slot: int, seed: int, options: dict[str, Any], copy: int) -> StepResult:
        env = self._env(slot)
        obs, info = env.reset(seed=int(seed), options=options)
        env.unwrapped.np_random = copy_rng(seed, copy)
        sk, ok = info["state_key"], info["obs_key"]
        try:
            hs, ho = _KEY_MEMO[sk], _KEY_MEMO[ok]
        except TypeError:  # an unhashable key: stable_hash gives the clear error
            hs, ho = stable_hash(sk), stable_hash(ok)
        return (obs, 0.0, False, False, info, hs, ho)

    def restore_slot(self, slot: int, snapshot: bytes, seed: int, copy: int) -> StepResult:
        """``set_state(snapshot)`` (env and history window), then the RNG :func:`copy_rng(seed, copy)
        <copy_rng>`: a branch continues from the snapshot's state with transition noise of its own."""
        env = self._env(slot)
        obs, info = env.set_state(snapshot)
        env.unwrapped.np_random = copy_rng(seed, copy)
        sk, ok = info["state_key"], info["obs_key"]
        return (obs, 0.0, False, False, info, _KEY_MEMO[sk], _KEY_MEMO[ok])

    def step_slot(self, slot: int, action: str) -> StepResult:
        return self._step_many([slot], [action], fail=False)[0]

    def run(self, batch: Batch) -> list[StepResult | EnvFailure]:
        """Execute one batch, one result per slot, in order."""
        kind, slots, args = batch[:3]
        snap = len(batch) > 3 and bool(batch[3].get("snapshot"))
        if kind == "step":
            out = self._step_many(slots, args)
        elif kind in ("reset", "restore"):
            call = self.reset_slot if kind == "reset" else self.restore_slot
            out = []
            for slot, arg in zip(slots, args):
                try:
                    out.append(call(slot, *arg))
                except self._catch as e:
                    self._drop(slot)
                    out.append(_failure(e))
        else:
            raise ValueError(f"unknown command {kind!r}")
        if snap:
            out = [r if r.__class__ is EnvFailure else (*r, self._snapshot(slot, r)) for slot, r in zip(slots, out)]
        self._last = (slots, out)
        return out

    def last_results_sendable(self, dumps: Callable[[Any], bytes] = pickle.dumps) -> list[StepResult | EnvFailure]:
        """The last batch's results with each one that ``dumps`` cannot serialize replaced by an
        :class:`EnvFailure` (and its env dropped: its trajectory cannot go on without that step)."""
        slots, results = self._last
        out: list[StepResult | EnvFailure] = []
        for slot, r in zip(slots, results):
            try:
                dumps(r)
                out.append(r)
            except Exception as e:
                self._drop(slot)
                out.append(EnvFailure(f"result could not be sent back from the worker: {_format_error(e)}"))
        return out

    def last_results_sendable_by_ray(self) -> list[StepResult | EnvFailure]:
        """:meth:`last_results_sendable` with Ray's serializer (called in a Ray actor)."""
        from ray import cloudpickle

        return self.last_results_sendable(cloudpickle.dumps)

    def _snapshot(self, slot: int, result: StepResult) -> bytes | str | None:
        """The slot's snapshot after ``result`` (``None`` if the episode ended, the error text if the env
        cannot snapshot: the collector then says so instead of branching)."""
        if result[2] or result[3]:
            return None
        try:
            return self.envs[slot].get_state()
        except Exception as e:
            return _format_error(e)

    def _step_many(self, slots: list[int], actions: list[Any], fail: bool = True) -> list[StepResult | EnvFailure]:
        """Step each slot once: the hot loop, so everything it touches is a local name.

        With ``fail`` an env that raises is dropped and gives an :class:`EnvFailure`; without, the
        exception propagates. Keys hash through :data:`_KEY_MEMO` (same values as ``stable_hash``).
        """
        envs = self.envs
        memo = _KEY_MEMO
        out: list[StepResult | EnvFailure] = []
        append = out.append
        for slot, action in zip(slots, actions):
            try:
                try:
                    env = envs[slot]
                except KeyError:
                    env = self._env(slot)
                obs, reward, terminated, truncated, info = env.step(action)
                sk, ok = info["state_key"], info["obs_key"]
                try:
                    hs, ho = memo[sk], memo[ok]
                except TypeError:  # an unhashable key: stable_hash gives the clear error
                    hs, ho = stable_hash(sk), stable_hash(ok)
                append((obs, float(reward), bool(terminated), bool(truncated), info, hs, ho))
            except self._catch as e:
                if not fail:
                    raise
                self._drop(slot)
                append(_failure(e))
        return out

    def pid(self) -> int:
        return os.getpid()

    def close(self) -> None:
        for slot in list(self.envs):
            self._drop(slot)
        made, self._premade = self._premade, None
        if made is not None:
            with contextlib.suppress(Exception):
                made.close()


__all__ = [
    "EnvFactory",
    "EnvWorker",
    "EnvFailure",
    "exit_reason",
    "WorkerTimeout",
    "Batch",
    "StepResult",
    "copy_rng",
    "HashMemo",
]
