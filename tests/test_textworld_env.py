"""credit/TextWorld-v0: TextWorld's own challenges compiled offline, the env contract, expert wins."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("textworld")
pytest.importorskip("jericho")

from agentgym_credit.envs.alfworld.textworld_env import TextWorldEnv, ensure_game  # noqa: E402
from agentgym_credit.testing import check_credit_env  # noqa: E402


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("twcache")


@pytest.mark.parametrize("challenge", ["tw-simple", "tw-cooking", "tw-coin_collector"])
def test_expert_wins_each_challenge(challenge, cache):
    env = TextWorldEnv(challenge, num_games=1, expert=True, cache_dir=cache, reward_success=5.0)
    obs, info = env.reset(seed=0)
    assert info["goal"] and info["admissible_actions"]
    total = 0.0
    for _ in range(60):
        obs, r, term, trunc, info = env.step(info["expert_action"])
        total += r
        if term:
            break
    assert info["won"] and term
    assert total == pytest.approx(info["max_score"] + 5.0)  # score deltas sum to the max score, + bonus


def test_contract_and_noops(cache):
    env = TextWorldEnv("tw-coin_collector", num_games=1, cache_dir=cache, max_steps=20)
    check_credit_env(env, seed=1, n_steps=60)
    obs, info = env.reset(seed=0)
    obs2, r, term, trunc, info2 = env.step("fly to the moon")
    assert (obs2, info2["state_key"], info2["action_valid"], r) == (obs, info["state_key"], False, -0.1)


def test_games_are_cached_and_reproducible(cache):
    a = ensure_game("tw-coin_collector", {"level": 5}, 123, cache)
    mtime = a.stat().st_mtime
    assert ensure_game("tw-coin_collector", {"level": 5}, 123, cache) == a and a.stat().st_mtime == mtime
    script = (
        "import json, sys; from agentgym_credit.envs.alfworld.textworld_env import TextWorldEnv\n"
        "env = TextWorldEnv('tw-coin_collector', num_games=1, cache_dir=sys.argv[1], expert=True)\n"
        "o, i = env.reset(seed=0); keys = [i['state_key']]\n"
        "while not i['won']:\n"
        "    o, r, t, tr, i = env.step(i['expert_action']); keys.append(i['state_key'])\n"
        "print(json.dumps(keys))\n"
    )
    runs = [subprocess.run([sys.executable, "-c", script, str(cache)], capture_output=True, text=True, check=True)
            for _ in range(2)]
    k1, k2 = (json.loads(r.stdout.strip().splitlines()[-1]) for r in runs)
    assert k1 == k2 and len(set(k1)) == len(k1)


def test_cooking_eval_out_uses_the_challenge_test_split():
    assert TextWorldEnv("tw-cooking", split="eval_out").settings["split"] == "test"
    assert TextWorldEnv("tw-cooking", split="eval_in").settings["split"] == "train"
    assert TextWorldEnv("tw-cooking", split="eval_out", settings={"split": "valid"}).settings["split"] == "valid"
    seeds = {s: {TextWorldEnv("tw-simple", split=s).game_seed(i) for i in range(20)} for s in ("train", "eval_in")}
    assert seeds["train"].isdisjoint(seeds["eval_in"]) and len(seeds["train"]) == 20


def test_bad_arguments():
    with pytest.raises(ValueError, match="challenge"):
        TextWorldEnv("tw-zork")
    with pytest.raises(ValueError, match="settings"):
        TextWorldEnv("tw-simple", settings={"levels": 3})


def test_task_option_accepts_numpy_integers(cache):
    import numpy as np

    env = TextWorldEnv("tw-coin_collector", num_games=1, cache_dir=cache)
    assert env.reset(seed=0, options={"task": np.int64(0)})[1]["task_id"] == env.reset(seed=0)[1]["task_id"]
    with pytest.raises(ValueError, match="task 1 out of range"):
        env.reset(options={"task": 1})
    with pytest.raises(ValueError, match="unknown reset options \\['tsk'\\]"):
        env.reset(options={"tsk": 0})


def test_state_key_tells_apart_a_paid_and_an_unpaid_subgoal(cache):
    # tw-simple pays each subgoal once: after "open trunk" (+1) and "close trunk" the facts are the initial
    # ones, but opening the trunk again pays nothing, so that state is not the initial state
    env = TextWorldEnv("tw-simple", cache_dir=cache)
    _, info = env.reset(seed=0)
    start = info["state_key"]
    opener = next(a for a in info["admissible_actions"] if a.startswith("open "))
    _, r, _, _, info = env.step(opener)
    assert r == 1.0
    _, _, _, _, info = env.step("close " + opener.removeprefix("open "))
    assert info["state_key"] != start
    _, r, _, _, _ = env.step(opener)
    assert r == 0.0


@pytest.mark.parametrize("challenge", ["tw-simple", "tw-coin_collector"])
def test_observations_are_clean_and_raw_text_is_kept(challenge, cache):
    """The status line (``-= Bedroom =-0/2``: room, score, moves) made every observation unique, so
    ``inventory`` twice gave two obs_keys; banner and padded prompt were prompt noise."""
    env = TextWorldEnv(challenge, num_games=1, cache_dir=cache)
    obs, info = env.reset(seed=0)
    assert "$$" not in obs and not obs.startswith("\n") and obs == obs.strip()
    assert "$$" in info["raw_obs"] or info["raw_obs"] != obs  # the game's own text is kept
    _, _, _, _, a = env.step("inventory")
    obs_b, _, _, _, b = env.step("inventory")
    assert a["obs_key"] == b["obs_key"] and a["raw_obs"] != b["raw_obs"]  # raw differs by the move counter
    assert not obs_b.rstrip().endswith(">") and "=-" not in obs_b.splitlines()[-1]


def test_clean_observation_strips_prompt_and_status():
    from agentgym_credit.envs.alfworld.textworld_env import clean_observation

    raw = "\n  ___  \n |   \\$$ \n\nWelcome!\n\n-= Kitchen =-\nA room.\n\n\n\n>" + " " * 120 + "-= Kitchen =-3/17"
    assert clean_observation(raw) == "Welcome!\n\n-= Kitchen =-\nA room."
    assert clean_observation("\nYou are carrying nothing.\n\n\n\n>   ") == "You are carrying nothing."


def test_switching_between_compiled_games_restarts_nothing(cache, monkeypatch):
    import textworld

    env = TextWorldEnv("tw-coin_collector", num_games=2, cache_dir=cache)
    env.reset(options={"task": 0})
    env.reset(options={"task": 1})
    starts = []
    real_start = textworld.start
    monkeypatch.setattr(textworld, "start", lambda *a, **k: starts.append(a) or real_start(*a, **k))
    for task in (0, 1, 0, 1):
        env.reset(options={"task": task})
    assert starts == []
