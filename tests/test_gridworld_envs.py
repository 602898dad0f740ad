"""GridWorld, AliasedGrid and CueCorridor: what each family promises beyond the shared model contract."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pytest

from agentgym_credit.envs.gridworld import AliasedGridEnv, CueCorridorEnv, GridWorldEnv, shortest_plan
from agentgym_credit.envs.gridworld.layout import DIRECTIONS, direction_word, generate_layout


def play(env, actions, task):
    obs, info = env.reset(seed=0, options={"task": task})
    total = 0.0
    for a in actions:
        obs, r, term, trunc, info = env.step(a)
        total += r
    return obs, total, term, info


# -- GridWorld -------------------------------------------------------------------------------------
def test_every_layout_is_solvable_and_the_planned_path_wins():
    env = GridWorldEnv(size=6, wall_density=0.3, n_traps=2, n_tasks=20, max_steps=100)
    for task in range(env.n_tasks):
        m = env.model_for(task)
        wins = env.won_states(task)
        path = shortest_plan(m, int(np.argmax(m.initial)), wins)
        obs, total, term, info = play(env, path, task)
        assert term and info["won"] and total == 1.0 and "You win" in obs
        lay = env.layout(task)
        assert lay.goal not in lay.traps and lay.start not in lay.walls | lay.traps


def test_layouts_differ_by_task_and_task_seed():
    a = GridWorldEnv(n_tasks=3)
    b = GridWorldEnv(n_tasks=3, task_seed=1)
    assert len({a.layout(i) for i in range(3)}) == 3
    assert a.layout(0) != b.layout(0)
    assert GridWorldEnv(n_tasks=3).layout(2) == a.layout(2)


def test_observation_words_match_the_layout():
    env = GridWorldEnv(size=5, n_traps=2, n_tasks=5)
    for task in range(5):
        lay = env.layout(task)
        m = env.model_for(task)
        for key, obs, acts in zip(m.state_keys, m.observations, m.actions):
            r, c = map(int, key[4:].split(","))
            assert obs.startswith(f"You are at row {r + 1}, column {c + 1}.") or not acts
            if acts:
                assert f"Exits: {', '.join(a[3:] for a in acts)}." in obs
                assert f"The goal is to the {direction_word((r, c), lay.goal)}." in obs
                for d, (dr, dc) in DIRECTIONS.items():
                    assert ((r + dr, c + dc) in lay.traps) == (d in obs.split("pit to the ")[-1].split(".")[0]
                                                                if "pit to the" in obs else False)


def test_slip_frequencies_match_the_model():
    env = GridWorldEnv(size=5, wall_density=0.0, n_traps=0, slip=0.4, n_tasks=1, max_steps=10_000)
    _, info = env.reset(seed=3, options={"task": 0})
    m = env.model
    counts: dict[tuple[int, str], Counter] = defaultdict(Counter)
    for _ in range(6000):
        s, a = info["state_index"], info["admissible_actions"][0]
        _, _, term, trunc, info = env.step(a)
        counts[(s, a)][info["state_index"]] += 1
        if term or trunc:
            _, info = env.reset(options={"task": 0})
    checked = 0
    for (s, a), cnt in counts.items():
        n = sum(cnt.values())
        if n < 300:
            continue
        for p, ns, _, _ in m.P[s][m.action_index(s, a)]:
            assert abs(cnt[ns] / n - p) < 5 * np.sqrt(p * (1 - p) / n) + 1e-9, (s, a, dict(cnt))
        checked += 1
    assert checked >= 1


def test_traps_end_the_episode_with_trap_reward_and_step_cost_applies():
    env = GridWorldEnv(size=6, n_traps=3, n_tasks=10, trap_reward=-1.0, step_cost=0.05)
    for task in range(10):
        m = env.model_for(task)
        keys = set(m.state_keys)  # a pit may be walled off
        traps = {m.index(f"pos={r},{c}") for r, c in env.layout(task).traps if f"pos={r},{c}" in keys}
        assert traps, "no reachable pit in this layout"
        path = shortest_plan(m, int(np.argmax(m.initial)), traps)
        obs, total, term, info = play(env, path, task)
        assert term and not info["won"] and "pit" in obs
        assert total == pytest.approx(-1.0 - 0.05 * (len(path) - 1))


def test_walls_leave_loops_so_states_repeat():
    env = GridWorldEnv(n_tasks=10)
    rng = np.random.default_rng(0)
    repeats = 0
    for ep in range(10):
        _, info = env.reset(seed=ep)
        seen = Counter([info["state_key"]])
        done = False
        while not done:
            acts = info["admissible_actions"]
            _, _, term, trunc, info = env.step(acts[int(rng.integers(len(acts)))])
            seen[info["state_key"]] += 1
            done = term or trunc
        repeats += sum(c > 1 for c in seen.values())
    assert repeats > 10


def test_generate_layout_rejects_impossible_requests():
    with pytest.raises(ValueError, match="wall_density"):
        generate_layout(np.random.default_rng(0), 5, 1.0)
    with pytest.raises(ValueError, match="no solvable layout"):
        generate_layout(np.random.default_rng(0), 5, 0.88, max_tries=5)


# -- AliasedGrid -----------------------------------------------------------------------------------
def test_aliasing_occurs_on_random_rollouts():
    env = AliasedGridEnv(n_tasks=5)
    rng = np.random.default_rng(1)
    aliased_steps = 0
    for ep in range(20):
        _, info = env.reset(seed=ep)
        by_obs: dict[str, set[str]] = defaultdict(set)
        done = False
        while not done:
            by_obs[info["obs_key"]].add(info["state_key"])
            acts = info["admissible_actions"]
            _, _, term, trunc, info = env.step(acts[int(rng.integers(len(acts)))])
            done = term or trunc
        aliased_steps += sum(len(v) > 1 for v in by_obs.values())
    assert aliased_steps >= 10


def test_carrying_the_key_is_hidden_but_decides_the_door():
    env = AliasedGridEnv(n_tasks=3)
    for task in range(3):
        m = env.model_for(task)
        obs_of = dict(zip(m.state_keys, m.observations))
        acts_of = dict(zip(m.state_keys, m.actions))
        for k in m.state_keys:
            if k.endswith("key=0") and k[:-1] + "1" in obs_of:
                assert obs_of[k] == obs_of[k[:-1] + "1"]
                assert acts_of[k] == acts_of[k[:-1] + "1"]
        door = env.layout(task).goal
        without = m.index(f"pos={door[0]},{door[1]};key=0")
        out = m.P[without][m.action_index(without, "open door")]
        assert out == [(1.0, without, 0.0, False)]
        with_key = m.index(f"pos={door[0]},{door[1]};key=1")
        (p, ns, r, term), = m.P[with_key][m.action_index(with_key, "open door")]
        assert term and r == 1.0 and m.state_keys[ns] == "escaped"
        wins = {m.index("escaped")}
        path = shortest_plan(m, int(np.argmax(m.initial)), wins)
        assert "take key" in path and path[-1] == "open door"
        obs, total, term, info = play(env, path, task)
        assert info["won"] and total == 1.0


# -- CueCorridor -----------------------------------------------------------------------------------
def test_junction_text_is_the_same_for_both_cues_and_the_door_depends_on_the_cue():
    env = CueCorridorEnv(length=4, n_tasks=6)
    for task in range(6):
        first, second, door_first = env.cues(task)
        m = env.model_for(task)
        for pos in range(1, 5):
            a, b = m.index(f"pos={pos};cue={first}"), m.index(f"pos={pos};cue={second}")
            assert m.observations[a] == m.observations[b]
            assert m.actions[a] == m.actions[b]
            assert first not in m.observations[a] and second not in m.observations[a]
        door_second = "south" if door_first == "north" else "north"
        for cue, door in ((first, door_first), (second, door_second)):
            j = m.index(f"pos=4;cue={cue}")
            assert m.P[j][m.action_index(j, f"go {door}")][0][2:] == (1.0, True)
            wrong = "south" if door == "north" else "north"
            assert m.P[j][m.action_index(j, f"go {wrong}")][0][2:] == (0.0, True)
        cue_state = m.index(f"light;cue={first}")
        assert first in m.observations[cue_state]
        assert f"A {first} light means the {door_first} door" in m.observations[int(np.argmax(m.initial))]


def test_both_cues_occur_for_one_task_across_seeds_and_states_repeat():
    env = CueCorridorEnv(length=3, n_tasks=1)
    seen = set()
    revisits = 0
    for seed in range(20):
        _, info = env.reset(seed=seed, options={"task": 0})
        _, _, _, _, info = env.step("go east")
        seen.add(info["state_key"])
        visits = Counter()
        for a in ("go east", "go east", "go west", "go east", "go east"):
            _, _, _, _, info = env.step(a)
            visits[info["state_key"]] += 1
        revisits += max(visits.values()) > 1
    assert len(seen) == 2 and revisits == 20


def test_cue_prob_is_the_light_distribution():
    env = CueCorridorEnv(cue_prob=0.8, n_tasks=1)
    m = env.model_for(0)
    first, second, _ = env.cues(0)
    start = int(np.argmax(m.initial))
    probs = {m.state_keys[ns]: p for p, ns, _, _ in m.P[start][0]}
    assert probs == {f"light;cue={first}": 0.8, f"light;cue={second}": pytest.approx(0.2)}
    with pytest.raises(ValueError, match="cue_prob"):
        CueCorridorEnv(cue_prob=1.0)
    with pytest.raises(ValueError, match="length"):
        CueCorridorEnv(length=0)


def test_shortest_plan_follows_only_certain_outcomes():
    env = CueCorridorEnv(length=2, n_tasks=1)
    m = env.model_for(0)
    start = int(np.argmax(m.initial))
    with pytest.raises(ValueError, match="no certain path"):
        shortest_plan(m, start, env.won_states(0))  # the light is a coin flip
    first, _, door = env.cues(0)
    after_light = m.index(f"light;cue={first}")
    assert shortest_plan(m, after_light, env.won_states(0)) == ["go east", "go east", f"go {door}"]
    assert shortest_plan(m, start, {start}) == []
