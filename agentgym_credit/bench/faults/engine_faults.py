"""Fault figures: sealed hostile TextWorld snapshots that target jericho's interpreter, on every backend.

The field checks (:mod:`~agentgym_credit.bench.faults.snapshot_faults`) stop what has the wrong shape; these
cases have the right shape and hostile content — random bytes in the dynamic memory, a pc moved off the point
where the game waits for input, changed stack words and frame return addresses — which hung jericho for
minutes or segfaulted it (issue 43 D1/D2). Each case is sealed with the process's own key (a bug, a leaked
key, an insider), restored through a collector backend's ``restore`` batch and, when accepted, played 5 steps.

Per case: the outcome (``refused``: ``SnapshotError``; ``played``: accepted and 5 steps played; ``halted``:
an accepted state whose step raised ``EngineHalted``; ``lost``: the worker died or hung and was replaced;
``caller crashed``: the measuring process died), the seconds until the answer and the caller's extra peak RSS.
Every backend runs in a child interpreter (the "caller"), so a crash of the caller is counted, not fatal.

What lives here: :func:`sweep_cases`, :func:`run_sweep`, :func:`main` (``python -m
agentgym_credit.bench.faults.engine_faults``: writes ``benchmarks/faults/engine_guard.md``).
"""

from __future__ import annotations

import argparse
import base64
import json
import subprocess
import sys
import zlib
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

HANG_SECONDS = 10.0
"""A case answered later than this is counted as a hang (issue 43's goal: none)."""

RAM_SHARES = (0.2, 0.03, 0.005, 0.001)
"""Shares of the dynamic memory's bytes made random (header kept; games change at most 4.6%)."""


def _words(game: dict[str, Any]) -> np.ndarray:
    return np.frombuffer(zlib.decompress(base64.b64decode(game["stack"])), dtype=np.uint16).copy()


def _frames(stack: np.ndarray, fp: int, count: int) -> list[int]:
    """Word positions of the stack's frames, innermost first (as frotz lays them out)."""
    out, p = [], fp
    for _ in range(count):
        if p + 4 > len(stack):
            break
        out.append(p)
        p = int(stack[p + 1]) + 1
    return out


def _packed(data: bytes) -> str:
    return base64.b64encode(zlib.compress(data)).decode("ascii")


def sweep_cases(game: dict[str, Any], per_kind: int, seed: int = 0) -> dict[str, Any]:
    """Hostile variants of a TextWorld snapshot's ``game`` part with a valid shape: name -> a function making it.
    ``per_kind`` variants of each kind: random dynamic memory at each of :data:`RAM_SHARES`, a moved pc, a
    random stack word in use, a moved frame return address."""
    rng = np.random.default_rng(seed)
    xor = np.frombuffer(zlib.decompress(base64.b64decode(game["ram"])), dtype=np.uint8)
    stack = _words(game)
    regs = game["regs"]
    frames = _frames(stack, regs[2], regs[3])
    cases: dict[str, Any] = {}
    for share in RAM_SHARES:
        for k in range(per_kind):
            seed = int(rng.integers(1 << 31))

            def ram(share=share, s=seed):
                r = np.random.default_rng(s)
                x = xor.copy()
                at = 64 + r.choice(len(x) - 64, max(1, int(share * (len(x) - 64))), replace=False)
                x[at] = r.integers(0, 256, len(at), dtype=np.uint8)
                return {**game, "ram": _packed(x.tobytes())}
            cases[f"RAM {share:.1%} random #{k}"] = ram
    moves = [d for d in range(-per_kind // 2 - 1, per_kind // 2 + 2) if d][:per_kind]
    for d in moves:
        cases[f"pc {d:+d}"] = lambda d=d: {**game, "regs": [regs[0] + d, *regs[1:]]}
    for k in range(per_kind):
        seed = int(rng.integers(1 << 31))

        def word(s=seed):
            r = np.random.default_rng(s)
            st = stack.copy()
            st[int(r.integers(regs[1], len(st)))] = int(r.integers(1 << 16))
            return {**game, "stack": _packed(st.tobytes())}
        cases[f"stack word #{k}"] = word
        if frames:
            seed = int(rng.integers(1 << 31))

            def ret(s=seed):
                r = np.random.default_rng(s)
                st = stack.copy()
                p = frames[int(r.integers(len(frames)))]
                addr = ((int(st[p + 3]) << 9) | int(st[p + 2])) + int(r.choice([-3, -2, -1, 1, 2, 3]))
                st[p + 2], st[p + 3] = addr & 0x1FF, addr >> 9
                return {**game, "stack": _packed(st.tobytes())}
            cases[f"frame return #{k}"] = ret
    return cases


_CHILD = r"""
import json, sys, time
kw, backend, per_kind, seed = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
from agentgym_credit.bench.faults.engine_faults import sweep_cases
from agentgym_credit.bench.faults.snapshot_faults import seal_payload
from agentgym_credit.wrappers.backends import SubprocessBackend, SyncBackend
from agentgym_credit.wrappers.history import HistoryFingerprint
from agentgym_credit.wrappers.workers import EnvFactory, EnvFailure
import gymnasium as gym
factory = EnvFactory("credit/TextWorld-v0", tuple(sorted(kw.items())))
env = HistoryFingerprint(factory(), depth=2)
obs, info = env.reset(seed=0, options={"task": 0})
for a in range(3):
    obs, r, term, trunc, info = env.step(info["admissible_actions"][a % len(info["admissible_actions"])])
whole = env.get_state()
head, _, rest = whole.partition(b"\n")
n = int(head.split(b" ")[1])
prefix = whole[: len(whole) - len(rest) + n]
payload = env.unwrapped._snapshot_payload()
cases = sweep_cases(payload["game"], per_kind, seed)
kind = SyncBackend if backend == "sync" else SubprocessBackend
be = kind(factory, 2, False, num_workers=1, timeout=30.0)
def mib(field):
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith(field)) / 1024
def run(batch):
    return be.run([batch])[0][0]
for name, make in cases.items():
    snap = prefix + seal_payload(env, {**payload, "game": make()})
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    before, t0 = mib("VmRSS:"), time.perf_counter()
    res = run(("restore", [0], [(snap, 0, 0)]))
    row = {"case": name, "seconds": time.perf_counter() - t0, "mib": mib("VmHWM:") - before}
    if res.__class__ is EnvFailure:
        row["outcome"] = "lost" if res.lost else "refused" if "SnapshotError" in res.error else "error"
        row["error"] = res.error.strip().splitlines()[-1][:100]
    else:
        row["outcome"], row["error"] = "played", ""
        for k in range(5):
            t1 = time.perf_counter()
            res = run(("step", [0], [res[4]["admissible_actions"][k % len(res[4]["admissible_actions"])]]))
            row["seconds"] = max(row["seconds"], time.perf_counter() - t1)
            if res.__class__ is EnvFailure:
                row["outcome"] = "lost" if res.lost else "halted" if "EngineHalted" in res.error else "error"
                row["error"] = res.error.strip().splitlines()[-1][:100]
                break
            if res[2] or res[3]:
                break
    print("ROW " + json.dumps(row), flush=True)
res = run(("restore", [0], [(whole, 0, 0)]))
print("GENUINE " + json.dumps(res.__class__ is not EnvFailure and res[0] == obs), flush=True)
be.close()
"""


def run_sweep(kw: dict[str, Any], backend: str, per_kind: int, seed: int = 0, timeout: float = 1800) -> dict[str, Any]:
    """The sweep's cases for env arguments ``kw`` on ``backend`` (``sync`` or ``subprocess``) in a child
    interpreter: ``{"rows", "returncode", "genuine", "stderr"}`` (a caller crash ends the rows early)."""
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(kw), backend, str(per_kind), str(seed)],
                              capture_output=True, text=True, timeout=timeout)
        out, rc, err = done.stdout, done.returncode, done.stderr
    except subprocess.TimeoutExpired as exc:
        out, rc, err = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else exc.stdout or "", None, "timeout"
    rows = [json.loads(line[4:]) for line in out.splitlines() if line.startswith("ROW ")]
    genuine = [json.loads(line[8:]) for line in out.splitlines() if line.startswith("GENUINE ")]
    return {"rows": rows, "returncode": rc, "genuine": bool(genuine and genuine[0]), "stderr": (err or "")[-1500:]}


def _section(results: dict[tuple[str, str], dict[str, Any]], cmd: str, prediction: str) -> str:
    from agentgym_credit.bench.stats.report import machine_lines, markdown_table

    lines = ["# Hostile TextWorld snapshots against the interpreter (issue 43 D1/D2)", "",
             (__doc__ or "").split("\n\n")[1].replace("\n", " "), "", machine_lines(cmd), "",
             f"Prediction (before the run): {prediction}", ""]
    table, total, hangs, crashes, worst_s, worst_m = [], Counter(), 0, 0, 0.0, 0.0
    for (challenge, backend), res in results.items():
        counts = Counter(r["outcome"] for r in res["rows"])
        total.update(counts)
        crashed = res["returncode"] != 0
        crashes += crashed
        slow = [r for r in res["rows"] if r["seconds"] > HANG_SECONDS]
        hangs += len(slow)
        refused = [r for r in res["rows"] if r["outcome"] == "refused"]
        s = max((r["seconds"] for r in refused), default=0.0)
        m = max((r["mib"] for r in refused), default=0.0)
        worst_s, worst_m = max(worst_s, s), max(worst_m, m)
        table.append([challenge, backend, len(res["rows"]), counts["refused"], counts["played"], counts["halted"],
                      counts["lost"], counts["error"], len(slow), "yes" if crashed else "no", f"{s:.2f}", f"{m:.1f}",
                      res["genuine"]])
    lines += [markdown_table(["challenge", "backend", "cases", "refused", "played 5 steps", "halted (EngineHalted)",
                              "worker lost", "other error", f"over {HANG_SECONDS:g} s", "caller crashed",
                              "slowest refusal s", "largest extra MiB", "genuine restores after"], table), ""]
    n = sum(total.values())
    lines += [f"Totals: {n} hostile snapshots; {dict(total)}; answers over {HANG_SECONDS:g} s: {hangs}; caller "
              f"crashes: {crashes}. Slowest refusal {worst_s:.2f} s (on sync a hang is refused when the probe's "
              f"child has used `PROBE_CPU_SECONDS` of CPU; on subprocess the watchdog ends the worker at the same "
              f"CPU bound, and a case re-run on the replacement also waits for its start), largest extra peak RSS of the caller {worst_m:.1f} MiB.", "",
              f"Goal: 0 answers over {HANG_SECONDS:g} s and 0 caller crashes over >= 200 cases on every backend: "
              f"**{'met' if hangs == 0 and crashes == 0 and n >= 200 else 'not met'}**.", ""]
    for (challenge, backend), res in results.items():
        lines += [f"## {challenge}, {backend}", "",
                  markdown_table(["case", "outcome", "s", "extra MiB", "error"],
                                 [[r["case"], r["outcome"], f"{r['seconds']:.3f}", f"{r['mib']:.1f}",
                                   r["error"].replace("|", "/")[:90]] for r in res["rows"]]), ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    import os

    from agentgym_credit.bench.stats.report import write_section

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--challenges", nargs="+", default=["tw-simple", "tw-cooking", "tw-coin_collector"])
    ap.add_argument("--backends", nargs="+", default=["sync", "subprocess"])
    ap.add_argument("--per-kind", type=int, default=5, help="variants of each kind (7 kinds)")
    ap.add_argument("--prediction", default="(none given)")
    ap.add_argument("--out", default="benchmarks/faults/engine_guard.md")
    args = ap.parse_args(argv)
    results = {}
    load0 = os.getloadavg()[0]
    for ch in args.challenges:
        for backend in args.backends:
            res = results[(ch, backend)] = run_sweep({"challenge": ch, "num_games": 1, "max_steps": 50}, backend,
                                                     args.per_kind)
            print(ch, backend, "rc", res["returncode"], dict(Counter(r["outcome"] for r in res["rows"])),
                  res["stderr"][-300:] if res["returncode"] else "", flush=True)
    cmd = "python -m agentgym_credit.bench.faults.engine_faults " + " ".join(argv if argv is not None else sys.argv[1:])
    load = f"Load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end, on {os.cpu_count()} CPUs (shared with other jobs)."
    write_section(args.out, "engine-guard", _section(results, cmd.strip(), args.prediction).replace(
        "\n\nPrediction", f"\n\n{load}\n\nPrediction", 1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["HANG_SECONDS", "RAM_SHARES", "main", "run_sweep", "sweep_cases"]
