"""Issue 43: the probe bounds a foreign TextWorld state's child by CPU time, not wall time, so a hang is refused
in about :data:`~agentgym_credit.envs.alfworld.zguard.PROBE_CPU_SECONDS` while a child that is merely slow to get
a CPU (a loaded machine) is not refused; the same for a restore under a disposable worker's watchdog. A stand-in
interpreter (or a plain block of code) spins or waits on demand."""

from __future__ import annotations

import subprocess
import sys
import time
from types import SimpleNamespace

import pytest

from agentgym_credit.envs.alfworld import zguard
from agentgym_credit.errors import SnapshotError


def _frotz(on_set) -> SimpleNamespace:
    lib = SimpleNamespace(step=lambda cmd: None, halted=lambda: 0)
    return SimpleNamespace(frotz_lib=lib, set_state=on_set, get_state=lambda: ("state",))


def _spin(state) -> None:
    while True:
        pass


def test_a_spinning_child_is_refused_on_its_cpu_bound():
    """A hang spins the interpreter: refused when the child has used PROBE_CPU_SECONDS of CPU, long before the
    wall-time backstop (the message names the CPU bound, so this cannot pass on the backstop)."""
    with pytest.raises(SnapshotError, match=r"did not answer within 0\.5 s of CPU in a probe"):
        zguard.probe(_frotz(_spin), ("state",), "", ["look"])
    assert zguard.PROBE_CPU_SECONDS == 0.5 and zguard.PROBE_WALL_SECONDS > 10 * zguard.PROBE_CPU_SECONDS


def test_a_child_that_waits_without_cpu_is_not_refused():
    """What a loaded machine does to a clean probe: its child gets no CPU for a while (here it sleeps past the old
    2 s wall bound). It uses almost no CPU, so its state is accepted."""
    zguard.probe(_frotz(lambda state: time.sleep(2.5)), ("state",), "go north", ["look"])


def test_a_blocked_child_is_refused_on_the_wall_backstop():
    """A child that never uses CPU and never ends is refused when the wall-time backstop runs out."""
    with pytest.raises(SnapshotError, match=r"did not answer within [\d.]+ s in a probe"):
        zguard.probe(_frotz(lambda state: time.sleep(3600)), ("state",), "", ["look"], timeout=0.3)


def _worker(body: str) -> subprocess.CompletedProcess:
    code = "import time\nfrom agentgym_credit.envs.alfworld import zguard\nzguard.set_guard('watchdog')\n" + body
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_a_worker_restore_that_spins_is_ended_on_its_cpu_bound():
    """In a disposable worker a restore that spins ends the process when it has used PROBE_CPU_SECONDS of CPU (the
    message names the CPU limit, so this cannot pass on the wall backstop)."""
    done = _worker("with zguard.watch(what='a TextWorld restore'):\n    while True:\n        pass\n")
    assert done.returncode == zguard.WATCHDOG_EXIT, (done.returncode, done.stderr[-1000:])
    assert "a TextWorld restore did not return within its CPU limit" in done.stderr


def test_a_worker_restore_that_waits_without_cpu_is_not_ended():
    """A worker delayed by a loaded machine (here: a restore that sleeps past the old 2 s wall bound, using no CPU)
    is not ended."""
    done = _worker("with zguard.watch(what='a TextWorld restore'):\n    time.sleep(2.5)\nprint('returned')\n")
    assert done.returncode == 0 and "returned" in done.stdout, (done.returncode, done.stderr[-1000:])
