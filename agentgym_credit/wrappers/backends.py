"""The three execution backends of :class:`~agentgym_credit.wrappers.collector.GroupedRolloutCollector`.

What lives here:

- :class:`SyncBackend` (in process), :class:`SubprocessBackend` (``multiprocessing`` workers) and :class:`RayBackend`
  (Ray actors) — one protocol: ``run`` sends each :class:`~agentgym_credit.wrappers.workers.EnvWorker` one batch
  for its slots and gets all results back, **one round trip per worker per step**, with a timeout on every round
  trip. A worker that dies or times out is killed and replaced; its batch comes back as
  :class:`~agentgym_credit.wrappers.workers.EnvFailure` results with ``lost=True``. ``ensure_alive`` replaces
  workers that died while idle.
- :func:`make_backend`: pick a backend by name.

The same faults give the same results on every backend: in a worker process (subprocess, Ray) an env's own
``KeyboardInterrupt`` and a result that cannot cross the process boundary (an unpicklable ``info`` value) fail only
that slot. The sync backend enforces ``timeout`` with ``SIGALRM`` when it runs in the main thread of a Unix process
(interrupting the env's Python code; elsewhere it has no timeout), and an env's ``KeyboardInterrupt`` there is the
user's Ctrl-C and propagates.

Slot ``i`` lives on worker ``i % num_workers``. Worker processes sign and check env snapshots with
one key for the backend's lifetime: the parent's snapshot key (:func:`~agentgym_credit.envs.snapshot.snapshot_key`)
when the backend started, given to every worker it starts, replacements included, so a snapshot taken in one
worker restores in any other; :meth:`Backend.use_key` moves all of them to another key together (the
collector calls it before each collect).
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import pickle
import signal
import threading
import time
from collections.abc import Callable, Iterator
from multiprocessing.connection import wait as mp_wait
from typing import Any

import gymnasium as gym

from agentgym_credit.envs.snapshot import set_snapshot_key, snapshot_key
from agentgym_credit.errors import DependencyNotInstalled
from agentgym_credit.wrappers import workers as _workers
from agentgym_credit.wrappers.workers import Batch, EnvFailure, EnvWorker, StepResult, WorkerTimeout

MAIN_GUARD_EXIT = 78
"""Exit status of a worker that stopped because it was re-importing a main module without the guard."""

MAIN_GUARD_FIX = """\
the script that creates the collector has no `if __name__ == "__main__":` guard. Each worker process
starts by re-importing the main module (start method {method!r}), so the module-level code ran again in
the worker and tried to start workers of its own. Put the code that builds the collector and collects
under the guard:

    def main():
        col = GroupedRolloutCollector(..., backend="subprocess")
        batch = col.collect(policy, tasks=...)

    if __name__ == "__main__":
        main()
"""
"""The fix, shown both in the worker (stderr) and in the error the collector raises."""



def main_guard_missing() -> bool:
    """True when the main module is a script file whose top level has no ``if __name__ == "__main__":``."""
    import ast
    import sys

    path = getattr(sys.modules.get("__main__"), "__file__", None)
    if not path or not str(path).endswith(".py"):
        return False
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return False
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and len(node.test.comparators) == 1:
            sides = [node.test.left, node.test.comparators[0]]
            names = {n.id for n in sides if isinstance(n, ast.Name)}
            values = {n.value for n in sides if isinstance(n, ast.Constant)}
            if names == {"__name__"} and values == {"__main__"}:
                return False
    return True


def _reimporting_main() -> bool:
    """True inside a new ``spawn``/``forkserver`` process while it re-imports the parent's main module."""
    return bool(getattr(mp.current_process(), "_inheriting", False))


class Backend:
    """Common interface: ``run(per_worker_batches) -> per_worker_results``; ``close()``.

    ``batches[w]`` is worker ``w``'s :data:`Batch` or ``None`` (nothing to do this round).
    """

    num_workers: int = 1

    def run(self, batches: list[Batch | None]) -> list[list[StepResult | EnvFailure]]:
        raise NotImplementedError

    def worker_pids(self) -> list[int]:
        raise NotImplementedError

    def ensure_alive(self) -> int:
        """Replace workers that died while idle; returns how many were replaced."""
        return 0

    def use_key(self, key: bytes) -> bool:
        """Sign and check snapshots with ``key`` in every worker from now on (called by the collector before
        each collect with the process's key: a change applies to the next collect, all workers together);
        ``True`` if the workers were restarted for it. Until then every worker, a replacement included, keeps
        the key the backend's workers started with. In-process backends share the process's key as is."""
        if getattr(self, "_key", None) is None or key == self._key:
            return False
        self._key = key
        for w in range(self.num_workers):
            self._replace(w)
        self.restarts -= self.num_workers  # not faults
        return True

    def _replace(self, w: int) -> None:
        """Kill worker ``w`` and start another in its place (worker-process backends)."""
        raise NotImplementedError

    def session(self) -> contextlib.AbstractContextManager[None]:
        """Held by the collector around one ``collect`` (setup shared by its round trips)."""
        return contextlib.nullcontext()

    def close(self) -> None:
        pass


class SyncBackend(Backend):
    """All envs in the calling process (no copies, no pickling).

    ``timeout`` (seconds per round trip) is enforced with ``SIGALRM`` when ``run`` is called from the
    main thread of a Unix process: the env that is running when it fires gets an exception raised
    inside its Python code, and its trajectory fails like one whose worker did not answer (the alarm
    is re-armed for the next env). A hang in native code that does not return to Python, or a call
    from another thread (or Windows), is not interrupted: use the subprocess or Ray backend there.
    """

    def __init__(self, factory: Callable[[], gym.Env], history_depth: int, include_actions: bool,
                 timeout: float | None = None, **_: Any):
        self.num_workers = 1
        self.worker = EnvWorker(factory, history_depth, include_actions)
        self.timeout = None if timeout is None or timeout <= 0 or timeout == float("inf") else float(timeout)
        self._in_session = False
        self._key: bytes | None = None

    def use_key(self, key: bytes) -> bool:
        """Pin ``key`` for this backend's envs until the next collect: a key the process changes in the middle of a
        collect (the policy runs between rounds) reaches them only at the next one, as on the worker backends
        (before, snapshots sealed under the old key failed their branch trajectories, issue 43 D10)."""
        self._key = key
        return False

    def _run(self, batch: Batch) -> list[StepResult | EnvFailure]:
        key = self._key
        if key is None or key == snapshot_key():
            return self.worker.run(batch)
        changed = snapshot_key()
        set_snapshot_key(key)  # the collect's key while its envs run; the process's own again for the policy
        try:
            return self.worker.run(batch)
        finally:
            set_snapshot_key(changed)

    def _expired(self, signum: int, frame: Any) -> None:
        signal.setitimer(signal.ITIMER_REAL, self.timeout)  # the next env gets its own limit
        raise WorkerTimeout(f"env did not answer within {self.timeout:g} s (sync backend timeout; interrupted)")

    @contextlib.contextmanager
    def session(self) -> Iterator[None]:
        """Keep the alarm handler installed for a whole ``collect`` (installing it costs more than a
        round of a small env); each round then only arms and disarms the timer."""
        if self.timeout is None or not _can_alarm() or self._in_session:
            yield
            return
        previous = signal.signal(signal.SIGALRM, self._expired)
        self._in_session = True
        try:
            yield
        finally:
            self._in_session = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    def run(self, batches):
        if batches[0] is None:
            return [[]]
        if not self._in_session:
            with self.session():
                return self.run(batches) if self._in_session else [self._run(batches[0])]
        signal.setitimer(signal.ITIMER_REAL, self.timeout)
        try:
            return [self._run(batches[0])]
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)

    def worker_pids(self) -> list[int]:
        return [os.getpid()]

    def close(self) -> None:
        self.worker.close()


def _can_alarm() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def _subprocess_main(conn, factory, history_depth: int, include_actions: bool, key: bytes | None = None,
                     spare: bool = False) -> None:
    """Worker process loop: receive a command batch, send back its results; ``None`` stops it. A ``spare`` makes
    its first env while it waits (its imports loaded before it replaces a lost worker)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it stops us
    worker = EnvWorker(factory, history_depth, include_actions, contain_interrupts=True, snapshot_key=key)
    conn.send("ready")
    if spare:
        worker.premake()
    try:
        while True:
            try:
                msg = conn.recv()
            except (EOFError, OSError):
                break
            if msg is None:
                break
            results = worker.run(msg)
            try:
                conn.send(results)
            except Exception:  # e.g. an info value that cannot be pickled: fail only the results at fault
                conn.send(worker.last_results_sendable())
    finally:
        worker.close()
        conn.close()


class SubprocessBackend(Backend):
    """Env workers in ``multiprocessing`` processes (default start method ``spawn``).

    The factory must be picklable (a top-level function or class, a ``functools.partial`` of one,
    or an env id). Worker processes ignore SIGINT; the collector terminates them on Ctrl-C.
    A new worker says ``"ready"`` once it has started; that wait has its own limit,
    ``start_timeout`` (process start-up and imports), so ``timeout`` bounds only the round trips.

    ``spare_workers`` (default 1) processes are started with the workers and kept idle: a worker lost to a fault
    (died, timed out, ended by the engine watchdog) is replaced by a spare that has already started, so the next
    round does not wait for a process start-up and its imports (issue 43); another spare starts once every worker
    has answered a round. A spare has never served a caller, the lost worker is killed, so no
    worker serves a caller after a fault. A spare makes, while idle, the env its first slot will use (the env's
    imports loaded: most of a worker's start), so it costs one idle process holding one env made and not yet
    reset; ``spare_workers=0`` starts replacements on demand.

    A script that uses it needs the ``if __name__ == "__main__":`` guard around the code that collects: a
    ``spawn``/``forkserver`` worker re-imports the main module. Without it the worker stops while starting and
    the collector's error names the missing guard and shows the fix (:data:`MAIN_GUARD_FIX`).
    """

    def __init__(
        self,
        factory: Callable[[], gym.Env],
        history_depth: int,
        include_actions: bool,
        num_workers: int = 2,
        timeout: float = 300.0,
        start_method: str = "spawn",
        start_timeout: float = 120.0,
        spare_workers: int = 1,
        **_: Any,
    ):
        if _reimporting_main():  # a worker re-importing a script without the guard: stop it with a clear reason
            import sys

            print("agentgym-credit worker stopped: the main module has no `if __name__ == \"__main__\":` guard "
                  "(the collector's error shows the fix)", file=sys.stderr)
            raise SystemExit(MAIN_GUARD_EXIT)
        if num_workers < 1:
            raise ValueError(f"num_workers must be >= 1, got {num_workers}")
        if isinstance(spare_workers, bool) or not isinstance(spare_workers, int) or spare_workers < 0:
            raise ValueError(f"spare_workers must be an int >= 0, got {spare_workers!r}")
        try:
            pickle.dumps(factory)
        except Exception as e:
            raise TypeError(
                f"backend='subprocess' sends the env factory to new processes, so it must be picklable "
                f"(a module-level function or class, or functools.partial of one; not a lambda): {e}"
            ) from None
        self.num_workers = int(num_workers)
        self.timeout = float(timeout)
        self.start_timeout = float(start_timeout)
        self._args = (factory, int(history_depth), bool(include_actions))
        self._ctx = mp.get_context(start_method)
        self._key = snapshot_key()  # every worker of this backend, replacements too, until use_key
        self._ready: list[bool] = []
        self._procs: list[Any] = []
        self._conns: list[Any] = []
        self.restarts = 0
        self.spare_workers = spare_workers
        self._spares: list[tuple[Any, Any]] = []  # started, idle, never given a batch
        for _ in range(self.num_workers):
            p, c = self._start()
            self._procs.append(p)
            self._conns.append(c)
            self._ready.append(False)
        self._fill_spares()

    def _fill_spares(self) -> None:
        """Start spares until there are ``spare_workers`` (dead ones dropped first)."""
        for p, c in [s for s in self._spares if not s[0].is_alive()]:
            self._spares.remove((p, c))
            _kill(p, c)
        while len(self._spares) < self.spare_workers:
            self._spares.append(self._start(spare=True))

    def _take_spare(self):
        """A started spare, or a new process when there is none alive. The next spare starts at the end of the first
        round in which every worker has answered (:meth:`run`): not while the replacement takes up its work, when the
        two would compete for the CPUs."""
        for p, c in [s for s in self._spares if not s[0].is_alive()]:
            self._spares.remove((p, c))
            _kill(p, c)
        return self._spares.pop(0) if self._spares else self._start()

    def spare_pids(self) -> list[int]:
        """Process ids of the idle spares (:class:`SubprocessBackend`'s ``spare_workers``)."""
        return [p.pid for p, _ in self._spares]

    def use_key(self, key: bytes) -> bool:
        if key != self._key:  # the spares started with the old key: none of them may serve the new one
            for p, c in self._spares:
                _kill(p, c)
            self._spares = []
        return super().use_key(key)

    def _start(self, spare: bool = False):
        parent, child = self._ctx.Pipe(duplex=True)
        p = self._ctx.Process(target=_subprocess_main, args=(child, *self._args, self._key, spare), daemon=True,
                              name="agentgym-credit-env-worker")
        p.start()
        child.close()
        return p, parent

    def _replace(self, w: int) -> None:
        _kill(self._procs[w], self._conns[w])
        self._procs[w], self._conns[w] = self._take_spare()
        self._ready[w] = False
        self.restarts += 1

    def _await_ready(self, w: int) -> str | None:
        """Wait for worker ``w``'s start-up message; the error text if it never comes."""
        conn, proc = self._conns[w], self._procs[w]
        if conn in mp_wait([conn, proc.sentinel], timeout=self.start_timeout):
            try:
                if conn.recv() == "ready":
                    self._ready[w] = True
                    return None
            except (EOFError, OSError):
                pass
        proc.join(0.5)
        if proc.exitcode is None:
            return f"worker process {proc.pid} did not start within {self.start_timeout:g} s (killed)"
        method = self._ctx.get_start_method()
        # spawn stops such a worker with MAIN_GUARD_EXIT; under forkserver the server that re-imports the script
        # dies instead and the worker exits 1, so the script itself is checked for the guard
        if proc.exitcode == MAIN_GUARD_EXIT or (method == "forkserver" and proc.exitcode and main_guard_missing()):
            return f"worker process {proc.pid} died while starting: " + MAIN_GUARD_FIX.format(method=method)
        return f"worker process {proc.pid} died while starting ({_workers.exit_reason(proc.exitcode)})"

    def run(self, batches):
        sent: list[bool] = []
        results: list[list[StepResult | EnvFailure] | None] = [None] * self.num_workers
        errors: list[str | None] = [None] * self.num_workers
        for w, batch in enumerate(batches):
            if batch is None:
                results[w] = []
                sent.append(False)
                continue
            if not self._ready[w]:
                errors[w] = self._await_ready(w)
                if errors[w] is not None:
                    sent.append(False)
                    continue
            try:
                self._conns[w].send(batch)
                sent.append(True)
            except (BrokenPipeError, OSError) as e:
                self._procs[w].join(0.5)
                why = _workers.exit_reason(self._procs[w].exitcode)
                errors[w] = f"worker process {self._procs[w].pid} died ({why}; {type(e).__name__} on send)"
                sent.append(False)
        deadline = time.monotonic() + self.timeout
        for w in range(self.num_workers):
            if not sent[w]:
                continue
            conn, proc = self._conns[w], self._procs[w]
            ready = mp_wait([conn, proc.sentinel], timeout=max(0.0, deadline - time.monotonic()))
            if conn in ready:
                try:
                    results[w] = conn.recv()
                    continue
                except (EOFError, OSError):
                    pass
            if not ready:
                errors[w] = f"worker process {proc.pid} did not answer within {self.timeout:g} s (killed)"
            else:
                proc.join(0.5)
                errors[w] = f"worker process {proc.pid} died ({_workers.exit_reason(proc.exitcode)})"
        for w in range(self.num_workers):
            if errors[w] is not None:
                self._replace(w)
                results[w] = [EnvFailure(errors[w], lost=True)] * len(batches[w][1])
        if len(self._spares) < self.spare_workers and all(self._ready):
            self._fill_spares()
        return results  # type: ignore[return-value]

    def worker_pids(self) -> list[int]:
        return [p.pid for p in self._procs]

    def ensure_alive(self) -> int:
        dead = [w for w, p in enumerate(self._procs) if not p.is_alive()]
        for w in dead:
            self._replace(w)
        self._fill_spares()  # a spare that died while idle is started again (not a fault of any work)
        return len(dead)

    def close(self) -> None:
        every = [*zip(self._procs, self._conns), *self._spares]
        for _, c in every:
            try:
                c.send(None)
            except Exception:
                pass
        for p, c in every:
            p.join(1.0)
            _kill(p, c)
        self._procs, self._conns, self._spares = [], [], []


def _kill(proc, conn) -> None:
    if proc.is_alive():
        proc.terminate()
        proc.join(1.0)
    if proc.is_alive():
        proc.kill()
        proc.join(1.0)
    try:
        conn.close()
    except Exception:
        pass


class RayBackend(Backend):
    """Env workers as Ray actors (``ray.init()`` first to choose the cluster; a local one otherwise).

    ``ray_options`` go to ``.options(...)`` of each actor (default ``{"num_cpus": 1}``; an env that mostly waits
    can take less, e.g. ``{"num_cpus": 0.25}``). A cluster with fewer CPUs in total than the actors ask for is a
    ``ValueError`` at once; actors that do not start within ``start_timeout`` seconds (no free resources) are a
    ``RuntimeError``, never an endless wait. Replacements get the same limit and error, waited for together before
    the next round trip, so ``timeout`` bounds only round trips (a collect then raises, where a subprocess worker
    that does not start fails only its batch)."""

    def __init__(
        self,
        factory: Callable[[], gym.Env],
        history_depth: int,
        include_actions: bool,
        num_workers: int = 2,
        timeout: float = 300.0,
        ray_options: dict[str, Any] | None = None,
        start_timeout: float = 120.0,
        **_: Any,
    ):
        try:
            import ray
        except ImportError:
            raise DependencyNotInstalled("ray", "ray") from None
        if num_workers < 1:
            raise ValueError(f"num_workers must be >= 1, got {num_workers}")
        if not ray.is_initialized():
            ray.init()
        self._ray = ray
        self.num_workers = int(num_workers)
        self.timeout = float(timeout)
        self._args = (factory, int(history_depth), bool(include_actions))
        self._cls = ray.remote(EnvWorker)
        self._options = {"num_cpus": 1, **(ray_options or {})}
        self.start_timeout = float(start_timeout)
        need = float(self._options.get("num_cpus") or 0) * self.num_workers
        have = float(ray.cluster_resources().get("CPU", 0))
        if need > have:
            raise ValueError(f"{self.num_workers} Ray env workers with num_cpus={self._options['num_cpus']} need "
                             f"{need:g} CPUs; the cluster has {have:g}. Use fewer workers or "
                             "ray_options={'num_cpus': ...} with less")
        self.restarts = 0
        self._key = snapshot_key()  # every worker of this backend, replacements too, until use_key
        self._actors = [self._start() for _ in range(self.num_workers)]
        self._starting = {w: a.pid.remote() for w, a in enumerate(self._actors)}  # first answers not waited for
        self._await_started(close=True)

    def _await_started(self, close: bool = False) -> None:
        """Wait up to ``start_timeout`` for every actor started since the last wait, all together (a start-up is
        never part of a round trip's ``timeout``); a ``RuntimeError`` if any did not start (``close``: all stopped)."""
        pings, self._starting = list(self._starting.values()), {}
        _, pending = self._ray.wait(pings, num_returns=len(pings), timeout=self.start_timeout) if pings else ([], [])
        if pending:
            if close:
                self.close()
            raise RuntimeError(f"{len(pending)} of {len(pings)} Ray env workers did not start within "
                               f"{self.start_timeout:g} s (free resources: {self._ray.available_resources()}); other "
                               "actors may hold the CPUs they need")

    def _start(self):
        return self._cls.options(**self._options).remote(*self._args, contain_interrupts=True, snapshot_key=self._key)

    def _restart(self, w: int) -> None:
        """Replace actor ``w``; the next ``run`` (or this ``ensure_alive``) waits for it to start."""
        self._ray.kill(self._actors[w], no_restart=True)
        self._actors[w] = self._start()
        self._starting[w] = self._actors[w].pid.remote()  # a replaced replacement's ref is dropped
        self.restarts += 1

    _replace = _restart

    def run(self, batches):
        ray = self._ray
        self._await_started()  # replacements (a lost worker's, a new key's) start before the round trip is timed
        refs = [None if b is None else self._actors[w].run.remote(b) for w, b in enumerate(batches)]
        deadline = time.monotonic() + self.timeout
        results: list[list[StepResult | EnvFailure]] = []
        for w, ref in enumerate(refs):
            if ref is None:
                results.append([])
                continue
            left = lambda: max(0.0, deadline - time.monotonic())  # noqa: E731
            try:
                results.append(ray.get(ref, timeout=left()))
                continue
            except ray.exceptions.GetTimeoutError:
                err = f"Ray env worker {w} did not answer within {self.timeout:g} s (killed)"
            except ray.exceptions.RayActorError as e:
                err = f"Ray env worker {w} died ({type(e).__name__})"
            except ray.exceptions.RayTaskError:  # the results could not be sent back: fail only those at fault
                try:
                    results.append(ray.get(self._actors[w].last_results_sendable_by_ray.remote(), timeout=left()))
                    continue
                except (ray.exceptions.RayError, ray.exceptions.GetTimeoutError) as e:
                    err = f"Ray env worker {w} could not send its results back ({type(e).__name__})"
            self._restart(w)
            results.append([EnvFailure(err, lost=True)] * len(batches[w][1]))
        return results

    def ensure_alive(self) -> int:
        ray = self._ray
        self._await_started()  # an actor still starting (a new key's) is not pinged as if it were idle
        pings = [a.pid.remote() for a in self._actors]
        ready, _ = ray.wait(pings, num_returns=len(pings), timeout=min(self.timeout, 30.0))
        replaced = 0
        for w, ref in enumerate(pings):
            try:
                if ref in ready:
                    ray.get(ref)
                    continue
            except ray.exceptions.RayError:
                pass
            self._restart(w)
            replaced += 1
        self._await_started()
        return replaced

    def worker_pids(self) -> list[int]:
        """Process ids of the actors; a dead actor is replaced first (never ``ActorDiedError``)."""
        self.ensure_alive()
        return list(self._ray.get([a.pid.remote() for a in self._actors], timeout=self.timeout))

    def close(self) -> None:
        for a in self._actors:
            try:
                self._ray.kill(a, no_restart=True)
            except Exception:
                pass
        self._actors, self._starting = [], {}


BACKENDS: dict[str, type[Backend]] = {"sync": SyncBackend, "subprocess": SubprocessBackend, "ray": RayBackend}


def make_backend(name: str, factory: Callable[[], gym.Env], **kwargs: Any) -> Backend:
    """Instantiate the backend called ``name`` (``sync``, ``subprocess`` or ``ray``)."""
    if name not in BACKENDS:
        raise ValueError(f"backend must be one of {sorted(BACKENDS)}, got {name!r}")
    return BACKENDS[name](factory, **kwargs)


__all__ = ["Backend", "SyncBackend", "SubprocessBackend", "RayBackend", "BACKENDS", "make_backend"]
