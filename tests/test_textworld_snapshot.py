"""TextWorld snapshots (issue 25 item 3): Jericho's own save/restore plus textworld's fact tracker rebuilt;
restore then the same actions replay the original run exactly, in the same env, in a second env made with
the same arguments, without the in-process memo, and in another process; the open-games cache size."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("textworld")
pytest.importorskip("jericho")

from agentgym_credit.envs.alfworld import textworld_snapshots  # noqa: E402
from agentgym_credit.envs.alfworld.textworld_env import TextWorldEnv  # noqa: E402
from agentgym_credit.envs.snapshot import KEY_ENV  # noqa: E402
from agentgym_credit.errors import SnapshotError  # noqa: E402
from agentgym_credit.testing import check_credit_env  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CHALLENGES = ["tw-simple", "tw-cooking", "tw-coin_collector"]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("twcache")


def _kw(challenge, cache, **over):
    return {"challenge": challenge, "num_games": 2, "cache_dir": str(cache), "expert": True, "max_steps": 80, **over}


def _view(step) -> tuple:
    obs, r, term, trunc, info = step
    return obs, r, term, trunc, {k: info[k] for k in sorted(info)}


def _picks(n: int, seed: int) -> list[int]:
    return [int(x) for x in np.random.default_rng(seed).integers(1 << 30, size=n)]


def _play(env, picks: list[int]) -> list[tuple]:
    out = []
    info = env.unwrapped._last_info
    for k, p in enumerate(picks):
        acts = info["admissible_actions"]
        step = env.step("jump around" if k % 7 == 3 else acts[p % len(acts)])  # some invalid no-ops too
        out.append(_view(step))
        info = step[4]
        if step[2] or step[3]:
            break
    return out


@pytest.mark.parametrize("challenge", CHALLENGES)
def test_restore_then_replay_is_the_original_run(challenge, cache):
    env = TextWorldEnv(**_kw(challenge, cache))
    env.reset(seed=0, options={"task": 0})
    _play(env, _picks(6, 1))
    snap = env.get_state()
    tail = _picks(20, 2)
    original = _play(env, tail)
    assert len(original) >= 5
    for _ in range(2):  # twice from one snapshot, after the original run went on
        env.set_state(snap)
        assert _play(env, tail) == original
    env.reset(seed=0, options={"task": 1})  # another game in between
    env.step(env.unwrapped._last_info["admissible_actions"][0])
    env.set_state(snap)
    assert _play(env, tail) == original


def test_restore_into_a_second_env_and_without_the_memo(cache, monkeypatch):
    a = TextWorldEnv(**_kw("tw-simple", cache))
    a.reset(seed=3, options={"task": 1})
    _play(a, _picks(5, 3))
    snap = a.get_state()
    before = a.unwrapped._last_obs, a.unwrapped._last_info
    tail = _picks(20, 4)
    original = _play(a, tail)
    b = TextWorldEnv(**_kw("tw-simple", cache))  # never played this game: started and reset by the restore
    obs_b, info_b = b.set_state(snap)
    assert (obs_b, info_b["state_key"], info_b["admissible_actions"], info_b["expert_action"]) == (
        before[0], before[1]["state_key"], before[1]["admissible_actions"], before[1]["expert_action"])
    assert _play(b, tail) == original
    monkeypatch.setattr(textworld_snapshots, "_MEMO", type(textworld_snapshots._MEMO)())
    a.set_state(snap)  # what another process does: the logic actions re-applied on a fresh progression
    assert _play(a, tail) == original


_CHILD = """
import base64, json, sys
import numpy as np
from agentgym_credit.envs.alfworld.textworld_env import TextWorldEnv
mode, kw, tail = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
env = TextWorldEnv(**kw)
if mode == "make":
    obs, info = env.reset(seed=2, options={"task": 0})
    for p in np.random.default_rng(3).integers(1 << 30, size=5):
        obs, r, term, trunc, info = env.step(info["admissible_actions"][int(p) % len(info["admissible_actions"])])
    snap = base64.b64encode(env.get_state()).decode()
else:
    obs, info = env.set_state(base64.b64decode(sys.stdin.read()))
    snap = None
out = []
for p in tail:
    acts = info["admissible_actions"]
    obs, r, term, trunc, info = env.step(acts[p % len(acts)])
    out.append([obs, r, term, info["state_key"], info["obs_key"], info["expert_action"], info["score"]])
    if term or trunc:
        break
print(json.dumps([snap, out]))
"""


@pytest.mark.slow
def test_restore_in_another_process(cache):
    """Two interpreters with the same arguments and snapshot key, and different string hash seeds."""
    kw, tail = json.dumps(_kw("tw-cooking", cache)), json.dumps(_picks(15, 5))
    runs = []
    for mode, seed, stdin in (("make", "1", None), ("restore", "2", "")):
        if mode == "restore":
            stdin = runs[0][0]
        done = subprocess.run([sys.executable, "-c", _CHILD, mode, kw, tail], input=stdin, capture_output=True,
                              text=True, cwd=REPO, timeout=600,
                              env={**os.environ, "PYTHONHASHSEED": seed, KEY_ENV: "test_textworld_snapshot"})
        assert done.returncode == 0, done.stderr[-2000:]
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert runs[1][1] == runs[0][1] and len(runs[0][1]) > 3


def test_contract_check_covers_snapshots(cache):
    report = check_credit_env(TextWorldEnv("tw-coin_collector", num_games=1, cache_dir=cache, max_steps=20),
                              seed=1, n_steps=60)
    assert any("snapshots restore the run" in line for line in report.checked)
    assert any("bad snapshots are SnapshotError" in line for line in report.checked)


def test_foreign_and_tampered_snapshots_are_refused(cache):
    env = TextWorldEnv(**_kw("tw-coin_collector", cache))
    env.reset(seed=0, options={"task": 0})
    snap = env.get_state()
    with pytest.raises(SnapshotError, match="another configuration"):
        TextWorldEnv(**_kw("tw-coin_collector", cache, max_steps=79)).set_state(snap)
    with pytest.raises(SnapshotError, match="another configuration"):
        TextWorldEnv(**_kw("tw-simple", cache)).set_state(snap)
    payload = env.unwrapped._snapshot_payload()
    game = payload["game"]
    bad_games = [  # every field is checked before anything reaches the Z-machine
        ({**game, "ram": "not base64!"}, "RAM is not base64"),
        ({**game, "ram_size": game["ram_size"] + 1}, "another story file"),
        ({**game, "regs": [10**9, *game["regs"][1:]]}, "pc 1000000000 is outside"),
        ({**game, "regs": [0, *game["regs"][1:]]}, "pc 0 is outside the story's code"),
        ({**game, "regs": game["regs"][:4]}, "regs must list 5"),
        ({**game, "rng": [1.5, 0, 0]}, "rng must list 3 ints"),
        ({**game, "actions": '[{"name": "x"}]'}, "an action does not parse"),
        ({**game, "actions": [{"name": "x"}]}, "actions must be text"),
        ({**game, "actions": "[1, "}, "actions is not valid JSON"),
        ({k: v for k, v in game.items() if k != "command"}, "exactly the fields"),
        ({**game, "narrative": "QQ=="}, "exactly the fields"),  # the old format's text field: gone (issue 43 D4)
        ({**game, "state": {}}, "exactly the fields"),
    ]
    for bad, message in bad_games:
        with pytest.raises(SnapshotError, match=message):
            textworld_snapshots.restore(env.unwrapped._env, bad, reset_state=lambda: env.unwrapped._opening_of()[1])
    for bad, message in [({**payload, "index": 1}, "not game 1"), ({**payload, "t": 80}, "step must be an int"),
                         ({**payload, "valid": 1}, "valid must be true or false"),
                         ({**payload, "state_key": "textworld:0"}, "another state than the one saved")]:
        with pytest.raises(SnapshotError, match=message):
            env.unwrapped._restore_snapshot(bad)


def test_snapshot_is_small_and_ascii(cache):
    env = TextWorldEnv(**_kw("tw-simple", cache))
    env.reset(seed=0, options={"task": 0})
    _play(env, _picks(8, 6))
    snap = env.get_state()
    assert len(snap) < 40_000  # the Z-machine RAM alone is ~40 kB; stored as a compressed XOR with the story file
    base64.b64encode(snap)  # plain bytes


@pytest.mark.parametrize("open_games, restarts", [(4, 6), (6, 0)])
def test_open_games_cache_size(cache, monkeypatch, open_games, restarts):
    """Cycling through 6 games with the default 4 open restarts the engine on every reset; with 6, never."""
    import textworld

    env = TextWorldEnv("tw-coin_collector", num_games=6, cache_dir=cache, open_games=open_games)
    for task in range(6):
        env.reset(options={"task": task})
    starts = []
    real_start = textworld.start
    monkeypatch.setattr(textworld, "start", lambda *a, **k: starts.append(a) or real_start(*a, **k))
    for task in range(6):
        env.reset(options={"task": task})
    assert len(starts) == restarts and len(env._open) == open_games


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "4"])
def test_open_games_must_be_a_positive_int(bad):
    with pytest.raises(ValueError, match="open_games"):
        TextWorldEnv("tw-coin_collector", open_games=bad)
