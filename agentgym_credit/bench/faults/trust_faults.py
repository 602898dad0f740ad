"""Fault figures: forged ALFWorld commands, bad snapshot and cache keys, a cached game rewritten under its old mtime.

Each check runs in a fresh interpreter (a hang or an exit is counted, not fatal) and reports what happened
and how long it took; :func:`main` (``python -m agentgym_credit.bench.faults.trust_faults``) writes the
``trust`` section of ``benchmarks/faults/reliability.md``. What lives here: :data:`CHECKS` (name -> child script,
each printing one ``RESULT <json>`` line), :func:`run_check`, :func:`main`.

- ``alfworld-forged-commands``: an ALFWorld snapshot whose commands were replaced (sealed with the key, its
  engine token live in the process) — must be refused (issue 34 item 3);
- ``weak-env-key-*``: ``$AGENTGYM_CREDIT_SNAPSHOT_KEY`` short, one repeated character, two alternating —
  ``import agentgym_credit`` must succeed and the first snapshot raise ``SnapshotKeyError`` (item 4);
- ``cache-key-file-*``: a FIFO, a world-writable file and junk at the cache key path — must neither block
  nor be used silently (a ``CacheKeyWarning``) (item 4);
- ``game-memo-mtime``: a verified cached game overwritten in place with the same size and its old mtime put
  back — must be checked again (item 5);
- issue 43: ``weak-env-key-abcd`` (``abcdabcdabcdabcd``: 4 distinct characters, one block repeated), cache key
  files group-writable / a symlink / a dangling symlink (warned), ``webshop-snapshot-query-15MB`` (a sealed
  WebShop snapshot whose normalized query is 15 MB: refused before any search, within 1 s and 64 MiB), and
  ``history-header-5000-digits`` (a HistoryFingerprint header length Python's ``int`` refuses: ``SnapshotError``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

_ALFWORLD = r"""
import json, time
from agentgym_credit.envs import snapshot as S
from agentgym_credit.envs.alfworld.env import ALFWorldEnv
from agentgym_credit.errors import SnapshotError
env = ALFWorldEnv(task_types=["pick_clean_then_place_in_recep"], expert=True, max_steps=40)
obs, info = env.reset(seed=0, options={"task": 0})
for k in range(4):
    obs, r, term, trunc, info = env.step(info["admissible_actions"][k % len(info["admissible_actions"])])
snap = env.get_state()
doc = S.inspect_snapshot(snap)
p = doc["payload"]
other = [c for c in info["admissible_actions"] if c not in p["commands"]][:1]
forged = S.pack(doc["env"], doc["config"], doc["rng"], {**p, "commands": p["commands"][:-1] + other})
t0 = time.perf_counter()
try:
    env.set_state(forged)
    out = {"outcome": "accepted"}
except SnapshotError as exc:
    out = {"outcome": "refused", "error": str(exc)[:100]}
out["ms"] = 1000 * (time.perf_counter() - t0)
env.set_state(snap)
print("RESULT " + json.dumps(out))
"""

_WEAK_KEY = r"""
import json, time
t0 = time.perf_counter()
import agentgym_credit
import gymnasium as gym
from agentgym_credit.errors import SnapshotKeyError
env = gym.make("credit/GridWorld-v0")
env.reset(seed=0)
try:
    env.unwrapped.get_state()
    out = {"outcome": "accepted"}
except SnapshotKeyError as exc:
    out = {"outcome": "refused at first snapshot (import fine)", "error": str(exc)[:100]}
out["ms"] = 1000 * (time.perf_counter() - t0)
print("RESULT " + json.dumps(out))
"""

_CACHE_KEY = r"""
import json, time, warnings
from agentgym_credit.envs import cachekey
t0 = time.perf_counter()
with warnings.catch_warnings(record=True) as got:
    warnings.simplefilter("always")
    key = cachekey.cache_key()
named = [str(w.message)[:100] for w in got if issubclass(w.category, cachekey.CacheKeyWarning)]
own = "own key" if key == cachekey._PROCESS_KEY else "the file's key"
out = {"outcome": f"warned, {own}" if named else "used silently", "error": named[0] if named else ""}
out["ms"] = 1000 * (time.perf_counter() - t0)
print("RESULT " + json.dumps(out))
"""

_GAME_MEMO = r"""
import json, os, sys, time, tempfile
from pathlib import Path
from agentgym_credit.envs.alfworld import gamecache
d = Path(tempfile.mkdtemp())
z8 = d / "game_1.z8"
z8.write_bytes(b"\x08" + bytes(4000))
z8.with_suffix(".json").write_text("{}")
gamecache.write_tag(z8, b"ident")
assert gamecache.game_problem(z8, b"ident") is None
st = os.stat(z8)
with open(z8, "r+b") as f:
    f.write(b"\x00")
os.utime(z8, ns=(st.st_atime_ns, st.st_mtime_ns))
t0 = time.perf_counter()
why = gamecache.game_problem(z8, b"ident")
out = {"outcome": "checked again" if why else "memo hit (bad file passed)", "error": why or "",
       "ms": 1000 * (time.perf_counter() - t0)}
print("RESULT " + json.dumps(out))
"""

_WEBSHOP_QUERY = r"""
import json, time
from agentgym_credit.envs import snapshot as S
from agentgym_credit.envs.webshop.env import WebShopEnv, shared_catalog
from agentgym_credit.envs.webshop.snapshots import _HEAD
from agentgym_credit.errors import SnapshotError
env = WebShopEnv(catalog=shared_catalog(100), split="test", cache_dir=False)
env.reset(seed=0, options={"task": 0})
env.step("search[red shirt]")
doc = S.inspect_snapshot(env.get_state())
raw = doc["payload"]
rest = raw[_HEAD.size:].decode().split("\x1f")
rest[2] = env.normalize_query("shirt " * 2_500_000)  # 15 MB: normalized, so only a cap stops the search
forged = S.pack("WebShopEnv", doc["config"], doc["rng"], raw[:_HEAD.size] + "\x1f".join(rest).encode())
def mib(field):
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith(field)) / 1024
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
before, t0 = mib("VmRSS:"), time.perf_counter()
try:
    env.set_state(forged)
    out = {"outcome": "accepted"}
except SnapshotError as exc:
    out = {"outcome": "refused", "error": f"+{mib('VmHWM:') - before:.1f} MiB peak; " + str(exc)[:80]}
out["ms"] = 1000 * (time.perf_counter() - t0)
print("RESULT " + json.dumps(out))
"""

_HISTORY_HEADER = r"""
import json, time
import gymnasium as gym
import agentgym_credit
from agentgym_credit.errors import SnapshotError
from agentgym_credit.wrappers.history import HistoryFingerprint
env = HistoryFingerprint(gym.make("credit/GridWorld-v0"), depth=2)
env.reset(seed=0)
rest = env.get_state().partition(b"\n")[2]
t0 = time.perf_counter()
try:
    env.set_state(b"agc-history/1 " + b"9" * 5000 + b"\n" + rest)
    out = {"outcome": "accepted"}
except SnapshotError as exc:
    out = {"outcome": "refused", "error": str(exc)[:100]}
except Exception as exc:
    out = {"outcome": f"crashed with {type(exc).__name__}", "error": str(exc)[:100]}
out["ms"] = 1000 * (time.perf_counter() - t0)
print("RESULT " + json.dumps(out))
"""

CHECKS: dict[str, tuple[str, dict[str, str]]] = {
    "alfworld-forged-commands": (_ALFWORLD, {}),
    "weak-env-key-short": (_WEAK_KEY, {"AGENTGYM_CREDIT_SNAPSHOT_KEY": "short"}),
    "weak-env-key-repeated": (_WEAK_KEY, {"AGENTGYM_CREDIT_SNAPSHOT_KEY": "a" * 16}),
    "weak-env-key-alternating": (_WEAK_KEY, {"AGENTGYM_CREDIT_SNAPSHOT_KEY": "ab" * 10}),
    "weak-env-key-abcd": (_WEAK_KEY, {"AGENTGYM_CREDIT_SNAPSHOT_KEY": "abcdabcdabcdabcd"}),
    "cache-key-file-fifo": (_CACHE_KEY, {"kind": "fifo"}),
    "cache-key-file-world-writable": (_CACHE_KEY, {"kind": "world"}),
    "cache-key-file-junk": (_CACHE_KEY, {"kind": "junk"}),
    "cache-key-file-group-writable": (_CACHE_KEY, {"kind": "group"}),
    "cache-key-file-symlink": (_CACHE_KEY, {"kind": "symlink"}),
    "cache-key-file-dangling-symlink": (_CACHE_KEY, {"kind": "dangling"}),
    "webshop-snapshot-query-15MB": (_WEBSHOP_QUERY, {}),
    "history-header-5000-digits": (_HISTORY_HEADER, {}),
    "game-memo-mtime": (_GAME_MEMO, {}),
}
"""Name -> (child script, environment changes; ``kind`` makes a cache key file of that kind)."""

GOOD = {"alfworld-forged-commands": "refused", "game-memo-mtime": "checked again", "webshop-snapshot-query-15MB": "refused",
        "history-header-5000-digits": "refused"}


def run_check(name: str, timeout: float = 120.0) -> dict[str, Any]:
    """Run check ``name`` in a child; ``{"name", "outcome", "error", "ms", "returncode"}``."""
    script, extra = CHECKS[name]
    env = {k: v for k, v in os.environ.items() if k not in ("AGENTGYM_CREDIT_SNAPSHOT_KEY", "AGENTGYM_CREDIT_CACHE_KEY")}
    extra = dict(extra)
    with tempfile.TemporaryDirectory() as tmp:
        kind = extra.pop("kind", None)
        if kind is not None:
            path = os.path.join(tmp, "cache.key")
            if kind == "fifo":
                os.mkfifo(path)
            elif kind in ("symlink", "dangling"):
                real = os.path.join(tmp, "real.key")
                if kind == "symlink":
                    with open(real, "w") as f:
                        f.write(os.urandom(32).hex() + "\n")
                    os.chmod(real, 0o600)
                os.symlink(real, path)
            else:
                with open(path, "w") as f:
                    f.write("not a key\n" if kind == "junk" else os.urandom(32).hex() + "\n")
                os.chmod(path, {"world": 0o666, "group": 0o620}.get(kind, 0o600))
            extra["AGENTGYM_CREDIT_CACHE_KEY_FILE"] = path
        t0 = time.perf_counter()
        try:
            done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout,
                                  env={**env, **extra})
        except subprocess.TimeoutExpired:
            return {"name": name, "outcome": f"hung (> {timeout:g} s)", "error": "", "ms": 1000 * timeout,
                    "returncode": None}
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")]
    row = json.loads(lines[-1][7:]) if lines else {"outcome": "no result", "error": done.stderr[-100:],
                                                   "ms": 1000 * (time.perf_counter() - t0)}
    return {"name": name, **row, "returncode": done.returncode}


def good(row: dict[str, Any]) -> bool:
    """Whether a check came out as issue 34 asks."""
    want = GOOD.get(row["name"])
    if want is not None:
        return row["outcome"] == want
    if row["name"].startswith("weak-env-key"):
        return row["outcome"].startswith("refused")
    return row["outcome"].startswith("warned")  # cache key files: a CacheKeyWarning (a symlink: used, warned)


def main(argv: Sequence[str] | None = None) -> int:
    from agentgym_credit.bench.faults.reliability import PREAMBLE
    from agentgym_credit.bench.stats.report import machine_lines, markdown_table, write_section

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="benchmarks/faults/reliability.md")
    args = ap.parse_args(argv)
    rows = [run_check(name) for name in CHECKS]
    cmd = "python -m agentgym_credit.bench.faults.trust_faults " + " ".join(argv if argv is not None else sys.argv[1:])
    body = "\n".join([
        "## Forged commands, weak keys, bad key files, a rewritten cached game", "",
        "Each check in a fresh interpreter; ms is the check's time inside the child (the refusal, the key read, "
        "the cache check; for the weak keys from before `import agentgym_credit` to the refused first snapshot), "
        "the interpreter's start not counted. Before this round (issue 34): forged ALFWorld commands "
        "with a live token were accepted; a short key made `import agentgym_credit` fail and `aaaaaaaaaaaaaaaa` was "
        "accepted; a FIFO key file blocked, junk and world-writable ones were used silently; the rewritten game "
        "passed the memo and jericho exited the process. Before issue 43: `abcdabcdabcdabcd` was accepted; group-writable, "
        "symlinked and dangling key files were used (or replaced) silently; the 15 MB WebShop query was searched "
        "before it was refused (21.4 s, +89.5 MiB); the 5000-digit header raised ValueError.", "",
        machine_lines(cmd.strip()), "",
        f"Result: {sum(map(good, rows))} of {len(rows)} checks as asked.", "",
        markdown_table(["check", "outcome", "as asked", "ms", "message"],
                       [[r["name"], r["outcome"], good(r), f"{r['ms']:.1f}", str(r.get("error", ""))[:90]]
                        for r in rows]), ""])
    write_section(args.out, "trust", body, preamble=PREAMBLE)
    print(body)
    return 0 if all(map(good, rows)) else 1


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["CHECKS", "good", "main", "run_check"]
