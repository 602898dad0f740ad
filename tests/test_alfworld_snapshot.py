"""ALFWorld snapshots (issue 14 item 1): restore then the same actions replay the original run exactly, in
the same env, in a second env made with the same arguments, and in another process; foreign, corrupted
and stock-engine snapshots are clear errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("textworld")
pytest.importorskip("fast_downward")

from agentgym_credit.envs.alfworld import snapshots  # noqa: E402
from agentgym_credit.envs.alfworld.env import ALFWorldEnv  # noqa: E402
from agentgym_credit.errors import SnapshotError, SnapshotUnsupported  # noqa: E402
from agentgym_credit.testing import check_credit_env  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DEV = REPO.parent / "shared" / "data" / "alfworld" / "dev"
KW = {"task_types": ["pick_clean_then_place_in_recep", "pick_two_obj_and_place"], "expert": True, "max_steps": 80}


from alfworld_fixtures import private_sas_cache  # noqa: E402,F401  (autouse)


def _view(step) -> tuple:
    obs, r, term, trunc, info = step
    return obs, r, term, trunc, {k: info[k] for k in sorted(info)}


def _actions(n: int, seed: int) -> list[int]:
    return [int(x) for x in np.random.default_rng(seed).integers(1 << 30, size=n)]


def _play(env, picks: list[int]) -> list[tuple]:
    out = []
    info = env.unwrapped._last_info
    for k, p in enumerate(picks):
        acts = info["admissible_actions"]
        action = "jump around" if k % 7 == 3 else acts[p % len(acts)]  # some invalid no-ops too
        step = env.step(action)
        out.append(_view(step))
        info = step[4]
        if step[2] or step[3]:
            break
    return out


@pytest.mark.parametrize("task", [0, 1])
def test_restore_then_replay_is_the_original_run(task):
    env = ALFWorldEnv(**KW)
    env.reset(seed=3, options={"task": task})
    _play(env, _actions(6, task))
    snap = env.get_state()
    tail = _actions(25, 100 + task)
    original = _play(env, tail)
    for _ in range(2):  # twice from one snapshot, after the original run went on
        obs, info = env.set_state(snap)
        assert _play(env, tail) == original
    # a later episode of another game, then back: the engine reloaded another task in between
    env.reset(seed=0, options={"task": 1 - task})
    env.step(env.unwrapped._last_info["admissible_actions"][0])
    env.set_state(snap)
    assert _play(env, tail) == original


def test_restore_into_a_second_env_with_the_same_arguments():
    a, b = ALFWorldEnv(**KW), ALFWorldEnv(**KW)
    a.reset(seed=5, options={"task": 1})
    _play(a, _actions(5, 1))
    snap = a.get_state()
    obs_a, info_a = a.unwrapped._last_obs, a.unwrapped._last_info
    tail = _actions(20, 2)
    original = _play(a, tail)
    obs_b, info_b = b.set_state(snap)  # b never played this game
    assert (obs_b, info_b["state_key"], info_b["admissible_actions"]) == (obs_a, info_a["state_key"], info_a["admissible_actions"])
    assert _play(b, tail) == original


def test_restore_without_the_memo_replays_the_commands(monkeypatch):
    """What another process does (its memo does not hold the token): replay from reset, copying the fact
    sets where the original run saved."""
    env = ALFWorldEnv(**KW)
    env.reset(seed=1, options={"task": 0})
    _play(env, _actions(4, 7))
    env.get_state()  # an earlier snapshot in the same lineage: its copy point must be replayed too
    _play(env, _actions(3, 8))
    snap = env.get_state()
    tail = _actions(20, 9)
    original = _play(env, tail)
    monkeypatch.setattr(snapshots, "_MEMO", type(snapshots._MEMO)())
    env.set_state(snap)
    assert _play(env, tail) == original


_CHILD = """
import base64, json, sys
import numpy as np
from agentgym_credit.envs.alfworld.env import ALFWorldEnv
mode, kw, tail = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
env = ALFWorldEnv(**kw)
if mode == "make":
    obs, info = env.reset(seed=2, options={"task": 0})
    for p in np.random.default_rng(3).integers(1 << 30, size=6):
        obs, r, term, trunc, info = env.step(info["admissible_actions"][int(p) % len(info["admissible_actions"])])
    snap = base64.b64encode(env.get_state()).decode()
else:
    obs, info = env.set_state(base64.b64decode(sys.stdin.read()))
    snap = None
out = []
for p in tail:
    acts = info["admissible_actions"]
    obs, r, term, trunc, info = env.step(acts[p % len(acts)])
    out.append([obs, r, term, info["state_key"], info["obs_key"], info["expert_action"]])
    if term or trunc:
        break
print(json.dumps([snap, out]))
"""


@pytest.mark.slow
def test_restore_in_another_process():
    """Two interpreters with the same arguments (and string hash seed, which orders the engine's words)."""
    tail = json.dumps(_actions(15, 4))
    env = {**os.environ, "PYTHONHASHSEED": "0", "AGENTGYM_CREDIT_SNAPSHOT_KEY": "a-key-both-interpreters-share"}
    made = subprocess.run([sys.executable, "-c", _CHILD, "make", json.dumps(KW), tail], capture_output=True,
                          text=True, cwd=REPO, env=env, timeout=600)
    assert made.returncode == 0, made.stderr[-2000:]
    snap, original = json.loads(made.stdout.strip().splitlines()[-1])
    restored = subprocess.run([sys.executable, "-c", _CHILD, "restore", json.dumps(KW), tail], input=snap,
                              capture_output=True, text=True, cwd=REPO, env=env, timeout=600)
    assert restored.returncode == 0, restored.stderr[-2000:]
    assert json.loads(restored.stdout.strip().splitlines()[-1])[1] == original
    assert len(original) > 3


def test_foreign_corrupted_and_stock_snapshots_are_refused():
    env = ALFWorldEnv(**KW)
    env.reset(seed=0, options={"task": 0})
    snap = env.get_state()
    other = ALFWorldEnv(**{**KW, "max_steps": 79})  # another configuration
    with pytest.raises(SnapshotError, match="another configuration"):
        other.set_state(snap)
    with pytest.raises(SnapshotError):
        env.set_state(snap[:-3] + b"}}}")
    stock = ALFWorldEnv(**{**KW, "fast": False})
    stock.reset(seed=0, options={"task": 0})
    with pytest.raises(SnapshotUnsupported, match="fast=True"):
        stock.get_state()


@pytest.mark.slow  # ~50 s at load 10; the fast suite runs the same check (snapshots included) on ALFWorld in
# test_alfworld_env.py::test_contract_check_passes and test_contract.py
def test_contract_check_covers_snapshots():
    report = check_credit_env(ALFWorldEnv(**{**KW, "max_steps": 15}), seed=4, n_steps=40)
    assert any("snapshots restore the run" in line for line in report.checked)


def test_snapshot_cost_is_small_next_to_a_step(monkeypatch):
    """get_state + set_state under 10 % of a step that derives its state (the benchmark measures it on more
    games). The per-game state memos are off here: a step they answer costs ~1 ms, and next to that step a
    snapshot is ~20 % (issue 41)."""
    import time

    from agentgym_credit.envs.alfworld import queries

    monkeypatch.setattr(queries, "STATE_MEMOS", False)
    env = ALFWorldEnv(**KW)
    env.reset(seed=0, options={"task": 0})
    step_t, snap_t = [], []
    rng = np.random.default_rng(0)
    for _ in range(40):
        acts = env.unwrapped._last_info["admissible_actions"]
        t = time.process_time()  # CPU time: a busy machine stalls the wall clock, not this
        env.step(acts[int(rng.integers(len(acts)))])
        step_t.append(time.process_time() - t)
        t = time.process_time()
        env.set_state(env.get_state())
        snap_t.append(time.process_time() - t)
    assert np.median(snap_t) < 0.10 * np.median(step_t), (np.median(snap_t), np.median(step_t))


# -- forged payloads (issue 24): sealed with this process's key, so only the field checks stand in the way
def _forge(snap: bytes, **change) -> bytes:
    from agentgym_credit.envs import snapshot as S

    doc = S.inspect_snapshot(snap)
    return S.pack(doc["env"], doc["config"], doc["rng"], {**doc["payload"], **change})


@pytest.fixture(scope="module")
def running():
    env = ALFWorldEnv(**KW)
    env.reset(seed=0, options={"task": 0})
    _play(env, _actions(5, 9))
    return env, env.get_state()


@pytest.mark.parametrize("change", [
    {"info": {"state_key": "alfworld:forged", "won": True}},  # derived values are not fields any more
    {"t": -1}, {"t": KW["max_steps"]}, {"t": 2.0}, {"valid": "false"}, {"valid": 1}, {"index": True},
    {"game": "another game"}, {"commands": ["look", "jump around"]}, {"commands": "look"},
    {"copy_steps": [0] * 70_000},  # 140 kB of copy points: replaying them took over 30 s
    {"copy_steps": [3, 1]}, {"token": 5}, {"reason": "x" * 10_000},
])
def test_forged_alfworld_payload_is_refused(running, change):
    import time

    env, snap = running
    t0 = time.process_time()
    with pytest.raises(SnapshotError):
        env.set_state(_forge(snap, **change))
    assert time.process_time() - t0 < 5.0
    env.set_state(snap)


def test_token_of_another_game_is_refused(running):
    env, snap = running
    other = ALFWorldEnv(**KW)
    other.reset(seed=0, options={"task": 1})
    token = _payload_of(other.get_state())["token"]
    with pytest.raises(SnapshotError, match="belongs to game"):
        env.set_state(_forge(snap, token=token))


def test_commands_that_disagree_with_the_token_are_refused(running):
    """Issue 34 item 3: the payload's commands are the source of truth. Forged commands with a token known
    here were accepted before (the memo's state won, and the next snapshot restored elsewhere to another
    state); now they are refused, and without the token they are replayed."""
    env, snap = running
    payload = _payload_of(snap)
    first = env.set_state(snap)[1]["admissible_actions"]
    other = [c for c in first if c not in payload["commands"]][:1]
    forged = {"commands": payload["commands"][:-1] + other, "t": payload["t"]}
    with pytest.raises(SnapshotError, match="disagree with the engine state its token names"):
        env.set_state(_forge(snap, **forged))
    with pytest.raises(SnapshotError, match="disagree"):
        env.set_state(_forge(snap, valid=not payload["valid"], reason=None))
    env.set_state(snap)


def _payload_of(snap: bytes) -> dict:
    from agentgym_credit.envs import snapshot as S

    return S.inspect_snapshot(snap)["payload"]


def test_cold_restore_recomputes_what_the_payload_no_longer_holds(running):
    """Memo forgotten (as in another process): obs, state key, won, admissible actions and the expert's
    action come from a replay through the env's own step, equal to the original."""
    from agentgym_credit.envs import snapshot as S

    env, snap = running
    obs, info = env.set_state(snap)
    ref = _play(env, _actions(8, 2))
    snapshots._MEMO.clear()
    S.clear_memo()
    fresh = ALFWorldEnv(**KW)
    obs2, info2 = fresh.set_state(snap)
    assert (obs2, {k: info2[k] for k in sorted(info2)}) == (obs, {k: info[k] for k in sorted(info)})
    assert _play(fresh, _actions(8, 2)) == ref
