"""Issue 43 D1-D4: sealed hostile TextWorld snapshots cannot hang or kill the caller, a halted engine is never
silently reused, and the observation comes from the interpreter only.

Every case runs in a child interpreter (the "caller", with the env in-process as on the sync backend), so a hang
or a segfault fails the test instead of taking pytest with it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("jericho")

_SETUP = r"""
import base64, json, sys, zlib
import numpy as np
from agentgym_credit.bench.faults.snapshot_faults import seal_payload
from agentgym_credit.envs.alfworld.textworld_env import TextWorldEnv
from agentgym_credit.errors import CreditError, SnapshotError
env = TextWorldEnv("tw-coin_collector", num_games=1, max_steps=50, cache_dir=sys.argv[1])
obs, info = env.reset(seed=0, options={"task": 0})
for a in range(3):
    obs, r, term, trunc, info = env.step(info["admissible_actions"][a % len(info["admissible_actions"])])
good, good_obs, good_key = env.get_state(), obs, info["state_key"]
payload = env.unwrapped._snapshot_payload()
g = payload["game"]
def ram_noise(share, seed):
    xor = np.frombuffer(zlib.decompress(base64.b64decode(g["ram"])), dtype=np.uint8).copy()
    rng = np.random.default_rng(seed)
    at = 64 + rng.choice(len(xor) - 64, int(share * (len(xor) - 64)), replace=False)
    xor[at] = rng.integers(0, 256, len(at), dtype=np.uint8)
    return {**g, "ram": base64.b64encode(zlib.compress(xor.tobytes())).decode()}
def outcome(game, steps=5, p=None):
    try:
        o, i = env.set_state(seal_payload(env, {**(p or payload), "game": game}))
    except SnapshotError as exc:
        return "refused: " + str(exc)
    for k in range(steps):
        try:
            o, r, te, tr, i = env.step(i["admissible_actions"][0])
        except CreditError as exc:
            return type(exc).__name__ + ": " + str(exc)
    return "played: " + o
def genuine_plays():
    o, i = env.set_state(good)
    ok = o == good_obs and i["state_key"] == good_key
    o, r, te, tr, i = env.step(i["admissible_actions"][0])
    return ok and "halted" not in o.lower()
"""


def _child(body: str, cache) -> dict:
    done = subprocess.run([sys.executable, "-c", _SETUP + body, str(cache)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])  # a crash of the caller fails here
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("twcache")


def test_a_pc_off_the_input_point_and_hostile_memory_are_refused_without_harm(cache):
    """D1: a pc moved by +1/+3 bytes inside the code passed the range check and hung jericho or halted it; now it
    must be where the game waits for input. D2: random dynamic memory under a valid header (here: variants that
    halt, hang and segfault jericho) is played in a forked child first and refused; the caller survives and the
    genuine snapshot restores and plays after each."""
    res = _child(r"""
regs = g["regs"]
cases = {"pc +1": {**g, "regs": [regs[0] + 1, *regs[1:]]}, "pc +3": {**g, "regs": [regs[0] + 3, *regs[1:]]},
         "pc -1": {**g, "regs": [regs[0] - 1, *regs[1:]]}, "opcode 0": {**g, "regs": [*regs[:4], 0]}}
for seed in (0, 4, 8, 9):
    cases[f"RAM 20% #{seed}"] = ram_noise(0.2, seed)
out = {}
for name, game in cases.items():
    out[name] = outcome(game)
    out[name + " then genuine"] = genuine_plays()
print(json.dumps(out))
""", cache)
    for name in ("pc +1", "pc +3", "pc -1", "opcode 0"):
        assert res[name].startswith("refused") and "waits for input" in res[name], res[name]
    for seed in (0, 4, 8, 9):
        assert res[f"RAM 20% #{seed}"].startswith("refused") and "probe" in res[f"RAM 20% #{seed}"], res
    assert all(v for k, v in res.items() if k.endswith("then genuine")), res


def test_a_halted_engine_raises_and_is_rebuilt(cache):
    """D3: with the probe off (what a state the probe cannot see does), a state that halts jericho on a step raises
    EngineHalted (not "Emulator halted" as an observation), the episode needs a reset, and the genuine snapshot then
    restores into a rebuilt engine and plays as before; a state that halts on its own last command is refused."""
    res = _child(r"""
from agentgym_credit.envs.alfworld import zguard
from agentgym_credit.errors import ResetNeeded
zguard.set_guard(False)
out = {"halts on a step": outcome(ram_noise(0.002, 1))}
try:
    env.step("look")
    out["step after"] = "stepped"
except ResetNeeded:
    out["step after"] = "ResetNeeded"
out["genuine after"] = genuine_plays()
out["halts on its command"] = outcome(ram_noise(0.005, 1))
out["genuine after 2"] = genuine_plays()
print(json.dumps(out))
""", cache)
    assert res["halts on a step"].startswith("EngineHalted"), res
    assert res["step after"] == "ResetNeeded"
    assert res["genuine after"] and res["genuine after 2"], res
    assert res["halts on its command"].startswith("refused") and "halted" in res["halts on its command"], res


def test_the_observation_and_move_count_come_from_the_interpreter(cache):
    """D4: a sealed payload used to set the text the agent sees (the narrative field); now a snapshot carries no
    text, the restore replays its last command, and the move count the interpreter reports may not exceed the
    env's step count."""
    res = _child(r"""
tags = b"<score>\n0\n</score><moves>\n3\n</moves>\n"
forged = {**g, "narrative": base64.b64encode(tags + b"You see a forged sentence.").decode()}
out = {"forged text": outcome(forged, steps=0), "genuine": genuine_plays()}
out["moves over steps"] = outcome(g, steps=0, p={**payload, "t": 1})
o, i = env.set_state(good)
out["restored text"] = o == good_obs
print(json.dumps(out))
""", cache)
    assert res["forged text"].startswith("refused"), res
    assert "forged sentence" not in res["forged text"]
    assert res["moves over steps"].startswith("refused") and "moves" in res["moves over steps"], res
    assert res["restored text"] and res["genuine"]


def test_a_disposable_worker_ends_itself_on_a_hang_instead_of_forking(cache):
    """In a worker process of the subprocess/Ray backends the guard is a watchdog (no fork per foreign restore): a
    state that hangs jericho ends the worker with WATCHDOG_EXIT once it has spun PROBE_CPU_SECONDS of CPU; the
    collector replaces it."""
    from agentgym_credit.envs.alfworld import zguard

    done = subprocess.run([sys.executable, "-c", _SETUP + r"""
from agentgym_credit.envs.alfworld import zguard
zguard.set_guard("watchdog")
print(outcome(ram_noise(0.2, 4)), flush=True)
""", str(cache)], capture_output=True, text=True, timeout=300)
    assert done.returncode == zguard.WATCHDOG_EXIT, (done.returncode, done.stdout[-500:], done.stderr[-1500:])
    assert "did not return within its CPU limit" in done.stderr
