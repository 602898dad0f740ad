"""credit/ALFWorld-v0: contract, expert wins (dev and generated games), determinism, no-op commands, splits."""

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

from agentgym_credit.envs.alfworld.engine import upgrade_game  # noqa: E402
from agentgym_credit.envs.alfworld.env import ALFWorldEnv  # noqa: E402
from agentgym_credit.envs.alfworld.games import GeneratedGames  # noqa: E402
from agentgym_credit.envs.alfworld.generator import TASK_TYPES, combo_is_held_out  # noqa: E402
from agentgym_credit.testing import check_credit_env  # noqa: E402

DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "alfworld" / "dev"


@pytest.fixture(autouse=True, scope="module")
def _private_sas_cache(tmp_path_factory):
    """An on-disk translation cache private to this module (nothing is written to ~/.cache)."""
    path = str(tmp_path_factory.mktemp("sas"))
    old = os.environ.get("AGENTGYM_CREDIT_SAS_CACHE")
    os.environ["AGENTGYM_CREDIT_SAS_CACHE"] = path
    yield path
    if old is None:
        os.environ.pop("AGENTGYM_CREDIT_SAS_CACHE", None)
    else:
        os.environ["AGENTGYM_CREDIT_SAS_CACHE"] = old


def _need_dev() -> None:
    if not DEV.is_dir():
        pytest.skip(f"real ALFWorld dev games not found at {DEV}")


def _play_expert(env: ALFWorldEnv, task) -> tuple[float, dict]:
    obs, info = env.reset(seed=0, options={"task": task})
    total = 0.0
    for _ in range(40):
        assert info["expert_action"] in info["admissible_actions"]
        obs, r, term, trunc, info = env.step(info["expert_action"])
        total += r
        if term:
            break
    return total, info


@pytest.mark.slow  # every dev game to the end (~1 min at load 10 on 2 cores)
def test_expert_wins_every_dev_game():
    _need_dev()
    env = ALFWorldEnv(source="dev", expert=True)
    solvable = [g for g in DEV.glob("*/*/game.tw-pddl") if json.loads(g.read_text())["solvable"]]
    assert len(env.games) == len(solvable) > 0  # ALFWorld's own filter: solvable games only
    for i, game in enumerate(env.games):
        total, info = _play_expert(env, i)
        assert info["won"] and total == 10.0, game.game_id
        assert info["expert_action"] is None


def test_expert_wins_generated_games_of_all_six_types():
    env = ALFWorldEnv(expert=True, reward_success=1.0, step_cost=0.01)
    seen = set()
    for i in range(6):  # game i of a split has task type TASK_TYPES[i % 6]
        total, info = _play_expert(env, i)
        assert info["won"], info["task_id"]
        assert info["task_type"] == TASK_TYPES[i]
        assert total == pytest.approx(1.0 - 0.01 * info["step"])
        seen.add(info["task_type"])
    assert seen == set(TASK_TYPES)


def test_contract_check_passes():
    env = ALFWorldEnv(task_types=["pick_and_place_simple", "look_at_obj_in_light"], max_steps=15)
    report = check_credit_env(env, seed=3, n_steps=40)
    assert report.steps > 0


def test_bad_commands_are_noops_with_penalty():
    env = ALFWorldEnv(task_types=["pick_heat_then_place_in_recep"])
    obs, info = env.reset(seed=1)
    for bad in ["jump over the fridge", "take apple 99 from nowhere", "", "go to", "\x00look"]:
        obs2, r, term, trunc, info2 = env.step(bad)
        assert info2["action_valid"] is False
        assert info2["state_key"] == info["state_key"]
        assert info2["admissible_actions"] == info["admissible_actions"]
        assert not term
        assert r == pytest.approx(-0.1) or bad == "\x00look"  # control characters: the base no-op
    # commands are matched case- and space-insensitively
    cmd = info["admissible_actions"][0]
    _, _, _, _, info3 = env.step("  " + cmd.upper() + " ")
    assert info3["action_valid"] is True


def test_state_key_ignores_fact_order_and_looking():
    env = ALFWorldEnv(task_types=["pick_and_place_simple"])
    _, info = env.reset(seed=2)
    import numpy as np

    assert set(env.equivalent_state_keys(np.random.default_rng(0), 4)) == {info["state_key"]}
    _, _, _, _, info2 = env.step("look")
    assert info2["state_key"] == info["state_key"]  # 'checked' bookkeeping is not state
    _, _, _, _, info3 = env.step("inventory")
    assert info3["state_key"] == info["state_key"]
    go = next(a for a in info3["admissible_actions"] if a.startswith("go to "))
    _, _, _, _, info4 = env.step(go)
    assert info4["state_key"] != info["state_key"]



def test_state_key_does_not_depend_on_the_path_to_a_state():
    # the engine keeps "not_" facts (not_atlocation(agent1, loc 16)) for places the agent has left: they
    # record the path, not the state, so "at toilet 1" reached by two routes must be one key
    env = ALFWorldEnv(task_types=["pick_and_place_simple"])
    _, info = env.reset(seed=0)
    gos = [a for a in info["admissible_actions"] if a.startswith("go to ")][:3]
    keys = []
    for via in gos[1:]:
        env.step(gos[0])
        keys.append(env.step(via)[4]["state_key"])
        keys.append(env.step(gos[0])[4]["state_key"])
    assert keys[1] == keys[3] and keys[0] != keys[1]
    assert not any(f.startswith("not_") for f in env.state_facts())


_SCRIPT = """
import json, sys
import numpy as np
from agentgym_credit.envs.alfworld.env import ALFWorldEnv
out = {}
for source in sys.argv[1:]:
    env = ALFWorldEnv(source=source, task_types=["pick_two_obj_and_place"])
    obs, info = env.reset(seed=7)
    rng = np.random.default_rng(0)
    keys = [info["state_key"]]
    for _ in range(8):
        a = info["admissible_actions"][int(rng.integers(len(info["admissible_actions"])))]
        obs, r, term, trunc, info = env.step(a)
        keys.append(info["state_key"])
    out[source] = [info["task_id"], keys]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def two_processes():
    """Both sources played in each of two interpreters with different string hash seeds (one interpreter per
    seed, not per source and seed: each start imports the engines)."""
    sources = ["generated", *(["dev"] if DEV.is_dir() else [])]
    return [
        json.loads(subprocess.run([sys.executable, "-c", _SCRIPT, *sources], capture_output=True, text=True,
                                  check=True, env={"PYTHONHASHSEED": str(s), "PATH": "/usr/bin:/bin",
                                                   "AGENTGYM_CREDIT_SAS_CACHE": os.environ["AGENTGYM_CREDIT_SAS_CACHE"]}
                                  ).stdout.strip().splitlines()[-1])
        for s in (1, 2)
    ]


@pytest.mark.parametrize("source", ["generated", "dev"])
def test_same_seed_same_state_keys_across_processes(source, two_processes):
    if source == "dev":
        _need_dev()
    a, b = (run[source] for run in two_processes)
    assert a == b
    assert len(set(a[1])) > 1


def test_generated_splits_and_held_out_combos():
    train, ein, eout = (GeneratedGames(s) for s in ("train", "eval_in", "eval_out"))
    assert len(ein) == 140 and len(eout) == 134
    ids = {train[i].game_id for i in range(12)} | {ein[i].game_id for i in range(12)}
    assert len(ids) == 24  # different rooms in train and eval_in
    for games, held in ((train, False), (eout, True)):
        for i in (0, 2, 5):
            game = games[i].load()
            p = game["pddl_params"]
            target = p["parent_target"] or p["toggle_target"]
            assert combo_is_held_out(game["task_type"], p["object_target"], target) is held


def test_old_game_files_are_upgraded_to_the_installed_command_set():
    _need_dev()
    path = sorted(DEV.glob("pick_and_place_simple-*/*/game.tw-pddl"))[0]
    raw = json.loads(path.read_text())
    old_put = "You put the {o.name} in/on the {r.name}."
    assert old_put in raw["grammar"]  # the json_2.1.1 grammar: "put X in/on Y"
    up = upgrade_game(raw)
    assert old_put not in up["grammar"] and "You move the {o.name} to the {r.name}." in up["grammar"]
    assert up["pddl_problem"] == raw["pddl_problem"]
    sentence = next(line for line in raw["grammar"].splitlines() if "Your task is to:" in line)
    assert sentence.strip() in up["grammar"]


def test_bad_arguments_raise_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="task_types"):
        ALFWorldEnv(task_types=["make_coffee"])
    with pytest.raises(ValueError, match="split"):
        ALFWorldEnv(split="test")
    with pytest.raises(FileNotFoundError, match="no playable"):
        ALFWorldEnv(data_dir=tmp_path, split=None)
    with pytest.raises(FileNotFoundError, match="split=None"):
        ALFWorldEnv(data_dir=tmp_path)  # a flat folder is not a train split


def test_real_data_folder_layout_and_splits(tmp_path, monkeypatch):
    """An ALFWorld data root with train/valid_seen/valid_unseen: split -> folder; ALFWORLD_DATA works."""
    _need_dev()
    from agentgym_credit.envs.alfworld.games import find_real_games, real_split_dir

    tasks = sorted(p for p in DEV.iterdir() if p.is_dir() and p.name.startswith("pick_and_place_simple"))
    for sub, task in zip(("train", "valid_seen", "valid_unseen"), tasks):
        (tmp_path / "json_2.1.1" / sub).mkdir(parents=True)
        (tmp_path / "json_2.1.1" / sub / task.name).symlink_to(task)
    for split, sub, task in zip(("train", "eval_in", "eval_out"), ("train", "valid_seen", "valid_unseen"), tasks):
        folder = real_split_dir(tmp_path, split)
        assert folder == tmp_path / "json_2.1.1" / sub
        refs = find_real_games(folder)
        assert [r.game_id.split("/")[0] for r in refs] == [task.name]
    monkeypatch.setenv("ALFWORLD_DATA", str(tmp_path))
    env = ALFWorldEnv(split="eval_out")
    assert env.source == "data" and [g.game_id.split("/")[0] for g in env.games] == [tasks[2].name]
    with pytest.raises(ValueError, match="unknown task"):
        env.reset(options={"task": "no/such/game"})


def test_unsolvable_flagged_games_are_skipped_or_fail_clearly():
    _need_dev()
    env = ALFWorldEnv(source="dev", include_unsolvable=True, task_types=["look_at_obj_in_light"])
    floor = [i for i, g in enumerate(env.games) if "FloorLamp" in g.game_id]
    assert floor  # present only with include_unsolvable=True
    with pytest.raises(RuntimeError, match="cannot load game"):
        env.reset(options={"task": floor[0]})
    assert not any("FloorLamp" in g.game_id for g in ALFWorldEnv(source="dev", task_types=["look_at_obj_in_light"]).games)


def test_task_option_accepts_numpy_integers_and_rejects_others_clearly():
    env = ALFWorldEnv(task_types=["pick_and_place_simple"], num_games=3)
    _, info = env.reset(seed=0, options={"task": np.int64(1)})
    assert info["task_id"] == env.reset(seed=0, options={"task": 1})[1]["task_id"]
    with pytest.raises(ValueError, match="out of range"):
        env.reset(options={"task": 3})
    with pytest.raises(TypeError, match="options\\['task'\\]"):
        env.reset(options={"task": 1.0})
    with pytest.raises(ValueError, match="unknown reset options \\['tsk'\\]"):
        env.reset(options={"tsk": 1})  # a typo must not silently draw a random game
