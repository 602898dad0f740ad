"""A watchdog for jericho's Z-machine: a state nobody vouches for runs in a forked child first.

Field checks (:mod:`~agentgym_credit.envs.alfworld.zmachine`) prove a Z-machine state has the shape the
interpreter makes; they cannot prove its dynamic memory (game data) is one the game can reach. Random bytes in
it hung jericho for minutes or segfaulted it (issue 43 D2), and in-process (the sync backend, a trainer's own
process) neither can be interrupted: a C loop ignores Python signals, a segfault ends the process. So a state
this process did not make itself is *probed* before it is set: a forked child (copy-on-write: the parent's
interpreter is not touched) sets it, plays every command given one step from it, then a rollout of
:data:`PROBE_STEPS` steps cycling through them, and exits. The parent bounds the child's *CPU time* by
:data:`PROBE_CPU_SECONDS` (a hang spins the interpreter at 100% CPU; a clean probe uses a few tens of ms), so a
busy machine, which delays the child without it using CPU, causes no false refusal; :data:`PROBE_WALL_SECONDS`
of wall time is a backstop for a child that uses no CPU at all (blocked):

- the child exits cleanly: the state is vouched for (remembered: a second restore of it is not probed);
- it halted (jericho's "Emulator halted due to runtime error."), crashed (a signal) or ran past either bound
  (killed): :class:`~agentgym_credit.errors.SnapshotError` — the caller's process never ran it.

Bound: a hostile snapshot is refused once its child has spun :data:`PROBE_CPU_SECONDS` of CPU (about that in wall
time on an idle machine, plus the fork and a poll of :data:`POLL_SECONDS`); the caller's interpreter runs
only states it made itself or that played :data:`PROBE_STEPS` + one step per command cleanly in a child. What
the probe cannot see (a state that hangs only after more steps than that, or on a command it did not try) is
caught on the step that halts (``EngineHalted``, the engine rebuilt), not on a hang or crash in-process.

In a *disposable* process — a worker of the subprocess or Ray backend, whose death the collector handles by
replacing it and re-running its trajectory — the guard is a **watchdog** instead (``set_guard("watchdog")``,
done by :class:`~agentgym_credit.wrappers.workers.EnvWorker` in worker processes): no fork, the state is set in
the worker itself while a watchdog thread ends the process if the interpreter does not return within
:data:`PROBE_CPU_SECONDS` of the process's CPU time (a restore; wall backstop :data:`PROBE_WALL_SECONDS`) or
:data:`STEP_SECONDS` of wall time (a step); a crash ends it anyway. Either way a hang
lasts at most those seconds and the caller's process (the trainer's) survives.

What lives here: :func:`probe`, :func:`watch`, :func:`vouch`, :func:`vouched`, :func:`set_guard` (``"probe"``,
``"watchdog"`` or ``"off"``: off only for states from a trusted source), :data:`PROBE_CPU_SECONDS`,
:data:`PROBE_WALL_SECONDS`, :data:`POLL_SECONDS`, :data:`GUARD_SECONDS`,
:data:`STEP_SECONDS`, :data:`PROBE_STEPS`, :data:`VOUCHED_SIZE`, :data:`WATCHDOG_EXIT`.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from agentgym_credit.errors import SnapshotError

GUARD_SECONDS = 2.0
"""A probe's wall-time bound where its child's CPU time cannot be read (no ``/proc``)."""

PROBE_CPU_SECONDS = 0.5
"""CPU time (user + system) a probe's child may use before its state is refused as a hang (a clean probe uses a
few tens of ms; a hang spins at 100% CPU)."""

PROBE_WALL_SECONDS = 30.0
"""Wall-time backstop of a probe, for a child that does not use CPU (blocked); generous, since on a loaded
machine a clean child can wait long for a CPU. Where the child's CPU time cannot be read (no ``/proc``), the
probe falls back to :data:`GUARD_SECONDS` of wall time."""

POLL_SECONDS = 0.02
"""How often a probe reads its child's CPU time."""

STEP_SECONDS = 8.0
"""Longest a step may take in a disposable worker before the watchdog ends the process (a step takes ms)."""

WATCHDOG_EXIT = 86
"""Exit code of a worker process the watchdog ended."""

PROBE_STEPS = 16
"""Steps of the probe's rollout after one step of each command."""

VOUCHED_SIZE = 4096
"""States (by digest) this process made or probed, restored without a probe (oldest forgotten first)."""

_VOUCHED: OrderedDict[bytes, None] = OrderedDict()
_MODES = ("probe", "watchdog", "off")
_MODE = ["probe"]


def set_guard(mode: str | bool) -> str:
    """This process's guard: ``"probe"`` (default; ``True``), ``"watchdog"`` (a disposable worker process) or
    ``"off"`` (``False``); returns the previous one."""
    mode = {True: "probe", False: "off"}.get(mode, mode) if isinstance(mode, bool) else mode
    if mode not in _MODES:
        raise ValueError(f"guard must be one of {_MODES}, got {mode!r}")
    old, _MODE[0] = _MODE[0], mode
    return old


class _Watchdog:
    """One daemon thread that ends the process when a watched call passes its deadline (ctypes calls release
    the GIL, so it runs while jericho loops)."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.deadline: float | None = None
        self.cpu_deadline: float | None = None  # in time.process_time() (the whole process's CPU time)
        self.what = ""
        self.thread: threading.Thread | None = None

    def run(self) -> None:
        with self.cond:
            while True:
                if self.deadline is None:
                    self.cond.wait()
                    continue
                left = self.deadline - time.monotonic()
                spun = self.cpu_deadline is not None and time.process_time() >= self.cpu_deadline
                if left <= 0 or spun:
                    why = "its CPU limit" if spun else "its limit"
                    os.write(2, f"agentgym_credit zguard: {self.what} did not return within {why}; ending this "
                                "worker process (the collector replaces it)\n".encode())
                    os._exit(WATCHDOG_EXIT)
                self.cond.wait(left if self.cpu_deadline is None else min(left, POLL_SECONDS))


_DOG = _Watchdog()


class watch:
    """``with watch(seconds, what):`` — in ``"watchdog"`` mode, end the process if the block runs longer than
    ``seconds`` of wall time or uses ``cpu`` seconds of the process's CPU time; else nothing. Without ``seconds``
    (a restore): :data:`PROBE_CPU_SECONDS` of CPU, :data:`PROBE_WALL_SECONDS` of wall time."""

    __slots__ = ("seconds", "cpu", "what", "armed")

    def __init__(self, seconds: float | None = None, what: str = "the game", cpu: float | None = None) -> None:
        self.seconds = PROBE_WALL_SECONDS if seconds is None else seconds
        self.cpu = PROBE_CPU_SECONDS if seconds is None and cpu is None else cpu
        self.what, self.armed = what, False

    def __enter__(self) -> None:
        if _MODE[0] != "watchdog":
            return
        with _DOG.cond:
            if _DOG.thread is None or not _DOG.thread.is_alive():
                _DOG.thread = threading.Thread(target=_DOG.run, name="agc-zguard", daemon=True)
                _DOG.thread.start()
            _DOG.deadline, _DOG.what, self.armed = time.monotonic() + self.seconds, self.what, True
            _DOG.cpu_deadline = None if self.cpu is None else time.process_time() + self.cpu
            _DOG.cond.notify()

    def __exit__(self, *exc: object) -> None:
        if self.armed:
            with _DOG.cond:
                _DOG.deadline = _DOG.cpu_deadline = None
                _DOG.cond.notify()


def vouch(digest: bytes) -> None:
    """Remember a state this process made (or probed) as safe to set without a probe."""
    _VOUCHED[digest] = None
    _VOUCHED.move_to_end(digest)
    while len(_VOUCHED) > VOUCHED_SIZE:
        _VOUCHED.popitem(last=False)


def vouched(digest: bytes) -> bool:
    """Whether the state with this digest needs no probe (made or probed here, or the guard is not ``"probe"``)."""
    return _MODE[0] != "probe" or digest in _VOUCHED


def _child(frotz: Any, state: tuple, lead: bytes, commands: Sequence[bytes]) -> int:
    lib = frotz.frotz_lib
    frotz.set_state(state)
    if lead:
        lib.step(lead)
    if lib.halted() > 0:
        return 3
    state = frotz.get_state()
    for cmd in commands:
        frotz.set_state(state)
        lib.step(cmd)
        if lib.halted() > 0:
            return 3
    frotz.set_state(state)
    for k in range(PROBE_STEPS):
        lib.step(commands[k % len(commands)])
        if lib.halted() > 0:
            return 3
    return 0


def probe(frotz: Any, state: tuple, lead: str, commands: Sequence[str], timeout: float | None = None,
          cpu: float | None = None) -> None:
    """Set ``state`` (a ``FrotzEnv.get_state`` tuple) in a forked child, play ``lead`` (when not empty), then
    ``commands`` (module docstring); ``SnapshotError`` if it halts, crashes, uses more than ``cpu`` seconds of CPU
    (default :data:`PROBE_CPU_SECONDS`) or runs past ``timeout`` seconds of wall time (default
    :data:`PROBE_WALL_SECONDS`)."""
    cmds = [c.encode("utf-8")[:190] + b"\n" for c in commands] or [b"look\n"]
    first = lead.encode("utf-8")[:190] + b"\n" if lead else b""
    limit = PROBE_WALL_SECONDS if timeout is None else float(timeout)
    cpu_limit = PROBE_CPU_SECONDS if cpu is None else float(cpu)
    pid = os.fork()
    if pid == 0:  # the child: C calls only, no cleanup, never returns
        code = 4
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            code = _child(frotz, state, first, cmds)
        finally:
            os._exit(code)
    try:
        status, why = _wait(pid, limit, cpu_limit)
    except BaseException:  # e.g. the sync backend's SIGALRM timeout while waiting: no child left behind
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        raise
    if status is None:
        raise SnapshotError(f"TextWorld snapshot: the game did not answer within {why} in a probe (a hang; refused "
                            "before it ran in this process)")
    if os.WIFSIGNALED(status):
        raise SnapshotError(f"TextWorld snapshot: the game crashed in a probe (signal {os.WTERMSIG(status)}; refused "
                            "before it ran in this process)")
    code = os.WEXITSTATUS(status)
    if code == 3:
        raise SnapshotError("TextWorld snapshot: the game halted on a runtime error in a probe (refused before it "
                            "ran in this process)")
    if code != 0:
        raise SnapshotError(f"TextWorld snapshot: the probe failed (exit code {code})")


def _cpu_seconds(pid: int) -> float | None:
    """The process's CPU time so far (user + system, from ``/proc``), or ``None`` where it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICKS
    except (OSError, IndexError, ValueError):
        return None


try:
    _TICKS = float(os.sysconf("SC_CLK_TCK"))
except (AttributeError, ValueError, OSError):
    _TICKS = 100.0


def _wait(pid: int, limit: float, cpu_limit: float) -> tuple[int | None, str]:
    """``(wait status, "")`` of the child, or ``(None, which bound)`` after killing it when it used ``cpu_limit``
    seconds of CPU or ran ``limit`` seconds of wall time (:data:`GUARD_SECONDS` where its CPU time is unreadable)."""
    start = time.monotonic()
    fd = None
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pass
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return status, ""
            used, wall = _cpu_seconds(pid), time.monotonic() - start
            why = ""
            if used is not None and used >= cpu_limit:
                why = f"{cpu_limit:g} s of CPU"
            elif wall >= (limit if used is not None else min(limit, GUARD_SECONDS)):
                why = f"{wall:.3g} s"
            if why:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return None, why
            if fd is not None:
                select.select([fd], [], [], POLL_SECONDS)
            else:
                time.sleep(POLL_SECONDS)
    finally:
        if fd is not None:
            os.close(fd)


__all__ = ["GUARD_SECONDS", "POLL_SECONDS", "PROBE_CPU_SECONDS", "PROBE_STEPS", "PROBE_WALL_SECONDS", "STEP_SECONDS",
           "VOUCHED_SIZE", "WATCHDOG_EXIT", "probe", "set_guard", "vouch", "vouched", "watch"]
