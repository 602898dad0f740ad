"""Fault figures: hostile TextWorld snapshots sealed with the right key, refused within a budget.

A snapshot's MAC stops strangers; it does not stop a bug in our own code, a leaked key or an insider. So
every case here is *sealed* with the process's own key (it passes the MAC) and must still be refused
with :class:`~agentgym_credit.errors.SnapshotError` before anything reaches jericho's C interpreter, in at
most :data:`BUDGET_SECONDS` and :data:`BUDGET_MIB` of extra peak memory, and the env must play on after.
Each run happens in a child interpreter, so a crash (a segfault in the native code) is counted instead of
ending the benchmark.

What lives here:

- :func:`textworld_cases` — the hostile ``game`` parts made from a good one: commands of 8 kB to 1 MB and
  with control characters, a narrative field carrying forged text or a forged win (the format has no text
  field), zip bombs in the RAM and the stack, random RAM and stack, bad registers (``pc=0``, ``sp=fp=0``,
  byte counts for word counts, a broken frame chain), a bad RNG and opcode, nested-list JSON bombs in the
  action log and as the whole payload;
- :func:`seal_payload` — an env's payload sealed as its own ``get_state`` would (for tests and this bench);
- :func:`run_child` — the cases played in a fresh interpreter: one row per case (refused, error, seconds,
  extra peak MiB) and whether the env played on;
- :func:`dynamic_ram_probe` — what the checks cannot catch: random dynamic memory under the story's header;
- :func:`main` (``python -m agentgym_credit.bench.faults.snapshot_faults``) — writes the ``snapshots``
  section of ``benchmarks/faults/reliability.md``.
"""

from __future__ import annotations

import argparse
import base64
import json
import subprocess
import sys
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

BUDGET_SECONDS = 1.0
"""Most wall time a refusal may take (issue 34)."""

BUDGET_MIB = 64
"""Most extra peak memory a refusal may take (issue 34)."""

COMMAND_SIZES = (8 * 2**10, 64 * 2**10, 2**20)
"""Command sizes tried (bytes): jericho's input buffer holds 198; a snapshot's command is capped at 190."""


def _bomb(size: int) -> str:
    """Base64 of zlib data that inflates to ``size`` zero bytes (built a MiB at a time)."""
    c = zlib.compressobj(9)
    chunk = bytes(2**20)
    parts = [c.compress(chunk) for _ in range(size // 2**20)]
    parts.append(c.flush())
    return base64.b64encode(b"".join(parts)).decode("ascii")


def _packed(data: bytes) -> str:
    return base64.b64encode(zlib.compress(data)).decode("ascii")


def textworld_cases(game: dict[str, Any], seed: int = 0) -> dict[str, Any]:
    """Hostile variants of a TextWorld snapshot's ``game`` part ``game``: name -> a function that makes
    that payload part (the large ones are made only when asked for)."""
    rng = np.random.default_rng(seed)
    ram_size = game["ram_size"]
    stack_size = len(zlib.decompress(base64.b64decode(game["stack"])))
    regs = game["regs"]
    tags = b"<score>\n0\n</score><moves>\n3\n</moves>\n"
    cases: dict[str, Any] = {}
    for n in COMMAND_SIZES:
        cases[f"command {n // 1024} kB"] = lambda n=n: {**game, "command": "a" * n}
    cases["command with NUL"] = lambda: {**game, "command": "go\0east"}
    cases["command with a newline"] = lambda: {**game, "command": "go east\nquit"}
    cases["forged text: narrative field"] = lambda: {**game, "narrative": base64.b64encode(tags + b"You win!").decode()}
    cases["forged win: narrative field"] = lambda: {**game, "narrative": base64.b64encode(tags + b"*** The End ***\n").decode()}
    cases["RAM zip bomb 64 MiB"] = lambda: {**game, "ram": _bomb(64 * 2**20)}
    cases["stack zip bomb 64 MiB"] = lambda: {**game, "stack": _bomb(64 * 2**20)}
    cases["RAM random"] = lambda: {**game, "ram": _packed(rng.integers(0, 256, ram_size, dtype=np.uint8).tobytes())}
    cases["RAM random under its own header"] = lambda: {**game, "ram": _packed(  # crashed or hung 7 of 12 before
        zlib.decompress(base64.b64decode(game["ram"]))[:64] + rng.integers(0, 256, ram_size - 64, dtype=np.uint8).tobytes())}
    cases["RAM one byte short"] = lambda: {**game, "ram": _packed(bytes(ram_size - 1))}
    cases["stack random"] = lambda: {**game, "stack": _packed(rng.integers(0, 256, stack_size, dtype=np.uint8).tobytes())}
    cases["stack zeros"] = lambda: {**game, "stack": _packed(bytes(stack_size))}
    cases["pc 0"] = lambda: {**game, "regs": [0, *regs[1:]]}
    cases["pc past the story"] = lambda: {**game, "regs": [2**24, *regs[1:]]}
    cases["sp fp 0"] = lambda: {**game, "regs": [regs[0], 0, 0, *regs[3:]]}
    cases["sp fp in bytes"] = lambda: {**game, "regs": [regs[0], 2 * regs[1], 2 * regs[2], *regs[3:]]}
    cases["frame count +1"] = lambda: {**game, "regs": [*regs[:3], regs[3] + 1, regs[4]]}
    cases["frame count 0"] = lambda: {**game, "regs": [*regs[:3], 0, regs[4]]}
    cases["opcode 300"] = lambda: {**game, "regs": [*regs[:4], 300]}
    cases["rng 2^70"] = lambda: {**game, "rng": [2**70, 0, 0]}
    cases["rng interval 2^40"] = lambda: {**game, "rng": [1, 2**40, 0]}
    cases["actions nested-list bomb"] = lambda: {**game, "actions": "[" * 40 + "]" * 40}
    cases["actions 4 MiB of lists"] = lambda: {**game, "actions": "[" + ",".join(["[[]]"] * (2**20 - 1)) + "]"}
    cases["actions 1 MiB of lists"] = lambda: {**game, "actions": "[" + ",".join(["[[]]"] * 200_000) + "]"}
    cases["payload 15 MiB of nested lists"] = lambda: {"__payload__": [[[[]]]] * (15 * 2**20 // 10)}
    return cases


def seal_payload(env: Any, payload: Any, key: bytes | None = None) -> bytes:
    """``payload`` sealed as ``env.get_state()`` seals its own (the process's key, the env's binding), or with
    another 32-byte ``key`` (a stranger's forgery)."""
    import hashlib

    from agentgym_credit.envs import snapshot as S

    u = env.unwrapped
    body = u._binding(u._snapshot_config()) + u._rng_bytes() + b"\nj" + json.dumps(payload).encode()
    mac = S.keyed_mac() if key is None else hashlib.blake2b(key=key, digest_size=S.TAG_SIZE)
    mac.update(body)  # no size cap here (seal's): the reader's cap is what is tested
    return S.magic() + mac.digest() + body


_CHILD = r"""
import json, sys, time
from agentgym_credit.bench.faults.snapshot_faults import seal_payload, textworld_cases
from agentgym_credit.envs.alfworld.textworld_env import TextWorldEnv
from agentgym_credit.errors import SnapshotError
kw, names = json.loads(sys.argv[1]), json.loads(sys.argv[2])
env = TextWorldEnv(**kw)
obs, info = env.reset(seed=0, options={"task": 0})
for a in range(3):
    obs, r, term, trunc, info = env.step(info["admissible_actions"][a % len(info["admissible_actions"])])
good = env.get_state()
payload = env.unwrapped._snapshot_payload()
cases = textworld_cases(payload["game"])
def mib(field):
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith(field)) / 1024
for name in names or list(cases):
    part = cases[name]()
    snap = seal_payload(env, part["__payload__"] if "__payload__" in part else {**payload, "game": part})
    del part
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # peak RSS (VmHWM) starts again from the current RSS
    before, t0 = mib("VmRSS:"), time.perf_counter()
    try:
        env.set_state(snap)
        row = {"case": name, "refused": False, "error": ""}
    except SnapshotError as exc:
        row = {"case": name, "refused": True, "error": str(exc)[:120]}
    except Exception as exc:
        row = {"case": name, "refused": False, "error": f"{type(exc).__name__}: {exc}"[:120]}
    row["seconds"], row["mib"] = time.perf_counter() - t0, mib("VmHWM:") - before
    if not row["refused"]:  # accepted: does the interpreter survive a step?
        env.step(env.unwrapped._last_info["admissible_actions"][0])
    del snap
    part = cases[name]()
    try:  # the same case from a stranger (another key): refused by the MAC before any field is read
        env.set_state(seal_payload(env, part["__payload__"] if "__payload__" in part else {**payload, "game": part},
                                   key=bytes(range(32))))
        row["unkeyed_refused"] = False
    except SnapshotError:
        row["unkeyed_refused"] = True
    del part
    print("ROW " + json.dumps(row), flush=True)
    env.set_state(good)
    env.step(env.unwrapped._last_info["admissible_actions"][0])
print("PLAYED ON", flush=True)
"""


def run_child(kw: dict[str, Any], names: Sequence[str] = (), timeout: float = 600) -> dict[str, Any]:
    """Play the cases (``names``: all when empty) in a fresh interpreter with the env arguments ``kw``;
    ``{"rows": [...], "returncode", "played_on", "stderr"}`` — a crash ends the rows early with a negative
    return code."""
    done = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(kw), json.dumps(list(names))],
                          capture_output=True, text=True, timeout=timeout)
    rows = [json.loads(line[4:]) for line in done.stdout.splitlines() if line.startswith("ROW ")]
    return {"rows": rows, "returncode": done.returncode, "played_on": "PLAYED ON" in done.stdout,
            "stderr": done.stderr[-2000:]}


_DYNAMIC = r"""
import base64, json, sys, zlib
import numpy as np
from agentgym_credit.bench.faults.snapshot_faults import seal_payload
from agentgym_credit.envs.alfworld.textworld_env import TextWorldEnv
from agentgym_credit.errors import SnapshotError
kw, seed, share = json.loads(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
env = TextWorldEnv(**kw)
obs, info = env.reset(seed=0, options={"task": 0})
for a in range(3):
    obs, r, term, trunc, info = env.step(info["admissible_actions"][a % len(info["admissible_actions"])])
payload = env.unwrapped._snapshot_payload()
g = payload["game"]
xor = np.frombuffer(zlib.decompress(base64.b64decode(g["ram"])), dtype=np.uint8).copy()
rng = np.random.default_rng(seed)
at = 64 + rng.choice(len(xor) - 64, int(share * (len(xor) - 64)), replace=False)  # header kept
xor[at] = rng.integers(0, 256, len(at), dtype=np.uint8)
try:
    obs, info = env.set_state(seal_payload(env, {**payload, "game": {**g, "ram": base64.b64encode(zlib.compress(xor.tobytes())).decode()}}))
except SnapshotError:
    print("REFUSED", flush=True)
    raise SystemExit(0)
print("ACCEPTED", flush=True)
from agentgym_credit.errors import EngineHalted
for k in range(5):
    try:
        obs, r, term, trunc, info = env.step(info["admissible_actions"][0])
    except EngineHalted:
        print("HALTED", flush=True)
        raise SystemExit(0)
    if term or trunc:
        break
print("STEPPED", flush=True)
"""


def dynamic_ram_probe(kw: dict[str, Any], seeds: int, share: float = 1.0, timeout: float = 60.0) -> dict[str, int]:
    """What the field checks cannot fully catch: sealed snapshots whose RAM keeps the story's header but has
    random bytes at a ``share`` of the dynamic memory's positions (game data to the checks; above
    :data:`~agentgym_credit.envs.alfworld.zmachine.MAX_CHANGED_FRACTION` changed it is refused). Each in a
    child, then 5 steps; counts of ``refused`` / ``ok`` (accepted, stepped) / ``halted`` (a step raised
    ``EngineHalted``) / ``crash`` / ``hang`` (no answer in ``timeout`` s)."""
    out = {"refused": 0, "ok": 0, "halted": 0, "crash": 0, "hang": 0}
    for seed in range(seeds):
        try:
            done = subprocess.run([sys.executable, "-c", _DYNAMIC, json.dumps(kw), str(seed), str(share)], capture_output=True,
                                  text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            out["hang"] += 1
            continue
        out["refused" if "REFUSED" in done.stdout else "ok" if "STEPPED" in done.stdout else
            "halted" if "HALTED" in done.stdout else "crash"] += 1
    return out


def _section(results: dict[str, dict[str, Any]], cmd: str) -> str:
    from agentgym_credit.bench.stats.report import machine_lines, markdown_table

    lines = ["## Hostile TextWorld snapshots (sealed with the key)", "",
             "Each case is a TextWorld snapshot whose `game` part was changed and then sealed with the process's "
             "own key (so it passes the MAC: a bug, a leaked key or an insider), restored in a child interpreter "
             f"(a crash is counted, not fatal); budget per refusal: {BUDGET_SECONDS:g} s wall and {BUDGET_MIB} MiB "
             "extra peak RSS. Each case is also sealed with another key (a stranger's forgery).", "",
             machine_lines(cmd), ""]
    for challenge, res in results.items():
        if challenge == "__dynamic__":
            continue
        rows = res["rows"]
        worst_s = max((r["seconds"] for r in rows), default=0.0)
        worst_m = max((r["mib"] for r in rows), default=0.0)
        accepted = [r["case"] for r in rows if not r["refused"]]
        over = [r["case"] for r in rows if r["seconds"] > BUDGET_SECONDS or r["mib"] > BUDGET_MIB]
        lines += [f"### {challenge}", "",
                  f"{len(rows)} cases, without the key refused {sum(r.get('unkeyed_refused', False) for r in rows)}"
                  f" of {len(rows)}; with the key: return code {res['returncode']} ({'no crash' if res['returncode'] == 0 else 'CRASH'}), "
                  f"accepted {len(accepted)} {accepted or ''}, over budget {len(over)} {over or ''}; slowest refusal "
                  f"{worst_s * 1000:.1f} ms, largest extra peak {worst_m:.1f} MiB; env played on after every case: "
                  f"{res['played_on']}.", "",
                  markdown_table(["case", "refused", "ms", "extra MiB", "error"],
                                 [[r["case"], r["refused"], f"{r['seconds'] * 1000:.1f}", f"{r['mib']:.1f}",
                                   r["error"].replace("|", "/")[:90]] for r in rows]), ""]
    probe = results.get("__dynamic__")
    if probe is not None:
        counts = "; ".join(f"{share:.0%} of the bytes random: {c}" for share, c in probe["counts"].items())
        lines += ["### Random dynamic memory under the story's header", "",
                  f"Sealed snapshots of {probe['challenge']} whose RAM keeps the story file's header but has random bytes "
                  "at a share of the dynamic memory's positions (to the field checks, game data; more than "
                  "MAX_CHANGED_FRACTION = 25% changed from the story is refused: games change at most 4.6% in 450 "
                  f"random steps), each in a child, then 5 steps: {counts}. `refused` includes states the forked probe "
                  "(`zguard`) saw halt, hang or crash; `crash`/`hang` count the child interpreter itself (the caller). "
                  "Per-case figures on the sync and subprocess backends: `benchmarks/faults/engine_guard.md`.", ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    from agentgym_credit.bench.faults.reliability import PREAMBLE
    from agentgym_credit.bench.stats.report import write_section

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--challenges", nargs="+", default=["tw-simple", "tw-cooking", "tw-coin_collector"])
    ap.add_argument("--dynamic-ram", type=int, default=12, help="children of the random-dynamic-memory probe")
    ap.add_argument("--out", default="benchmarks/faults/reliability.md")
    args = ap.parse_args(argv)
    results: dict[str, Any] = {}
    for ch in args.challenges:
        results[ch] = run_child({"challenge": ch, "num_games": 1, "max_steps": 50})
        r = results[ch]
        print(ch, "rc", r["returncode"], "accepted", [x["case"] for x in r["rows"] if not x["refused"]],
              "max s", max((x["seconds"] for x in r["rows"]), default=0), r["stderr"][-300:] if r["returncode"] else "")
    cases = dict(results)
    if args.dynamic_ram:
        kw = {"challenge": "tw-coin_collector", "num_games": 1, "max_steps": 50}
        results["__dynamic__"] = {"challenge": kw["challenge"], "counts": {
            share: dynamic_ram_probe(kw, args.dynamic_ram, share) for share in (1.0, 0.2, 0.03)}}
        print("dynamic RAM probe", results["__dynamic__"])
    cmd = "python -m agentgym_credit.bench.faults.snapshot_faults " + " ".join(argv or sys.argv[1:])
    write_section(args.out, "snapshots", _section(results, cmd.strip()), preamble=PREAMBLE)
    return 0 if all(r["returncode"] == 0 and all(x["refused"] for x in r["rows"]) for r in cases.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["dynamic_ram_probe", "BUDGET_MIB", "BUDGET_SECONDS", "main", "run_child", "seal_payload", "textworld_cases"]
