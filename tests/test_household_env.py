"""HouseholdEnv: ALFWorld's commands and words, goals that can be reached, a small exact state space."""

from __future__ import annotations

import numpy as np
import pytest

from agentgym_credit.envs.gridworld import HouseholdEnv, shortest_plan
from agentgym_credit.envs.gridworld.household import TASK_TYPES


@pytest.fixture(scope="module")
def env():
    return HouseholdEnv(n_tasks=12, max_steps=40)


def test_every_task_is_solvable_and_small(env):
    kinds = set()
    for task in range(env.n_tasks):
        tk = env.task(task)
        kinds.add(tk.kind)
        m = env.model_for(task)
        assert 100 <= m.n_states <= 3000
        wins = env.won_states(task)
        path = shortest_plan(m, int(np.argmax(m.initial)), wins)
        obs, info = env.reset(seed=1, options={"task": task})
        assert obs.startswith("-= Welcome to TextWorld, ALFRED! =-") and f"Your task is to: {tk.goal}" in obs
        total = 0.0
        for a in path:
            obs, r, term, trunc, info = env.step(a)
            total += r
        assert term and info["won"] and total == 1.0
        target = tk.objects[tk.target_object]
        assert path[-1] == f"put {target} in/on {tk.receptacles[tk.target_receptacle]}"
        if tk.flag == "clean":
            assert any(a.startswith(f"clean {target} with sinkbasin") for a in path)
        if tk.flag == "cool":
            assert any(a.startswith(f"cool {target} with fridge") for a in path)
    assert kinds == set(TASK_TYPES)


def test_alfworld_commands_and_observations():
    env = HouseholdEnv(n_tasks=50)
    task = next(i for i in range(50) if any(env.task(i).openable))
    tk = env.task(task)
    box = tk.receptacles[tk.openable.index(True)]
    _, info = env.reset(seed=0, options={"task": task})
    assert f"go to {box}" in info["admissible_actions"] and info["admissible_actions"][-2:] == ["inventory", "look"]
    obs, *_, info = env.step(f"go to {box}")
    assert obs == f"You arrive at {box}. The {box} is closed."
    assert f"open {box}" in info["admissible_actions"] and not any(a.startswith("take") for a in info["admissible_actions"])
    obs, *_, info = env.step(f"open {box}")
    assert obs.startswith(f"You arrive at {box}. The {box} is open. In it, you see ")
    inside = [o for o, w in zip(tk.objects, tk.start) if w == tk.receptacles.index(box)]
    assert obs.endswith(("nothing.", f"a {inside[-1]}." if inside else "nothing."))
    assert [a for a in info["admissible_actions"] if a.startswith("take")] == [f"take {o} from {box}" for o in inside]
    assert f"close {box}" in info["admissible_actions"]
    same, *_, info2 = env.step("look")
    assert same == obs and info2["state_key"] == info["state_key"]
    obs, *_, info = env.step(f"close {box}")
    assert obs == f"You arrive at {box}. The {box} is closed."


def test_put_accepts_in_or_on_and_take_shows_what_is_carried():
    env = HouseholdEnv(n_tasks=20)
    for task in range(20):
        tk = env.task(task)
        j = tk.start[1] if len(tk.start) > 1 else tk.start[0]
        k = 1 if len(tk.start) > 1 else 0
        if tk.openable[j]:
            continue
        rec, obj = tk.receptacles[j], tk.objects[k]
        env.reset(seed=0, options={"task": task})
        env.step(f"go to {rec}")
        obs, *_, info = env.step(f"take {obj} from {rec}")
        assert info["action_valid"] and obs.endswith(f"You are carrying: a {obj}.")
        assert f"holding {obj}" in info["state_key"].split("; ")
        obs, *_, info = env.step(f"Put {obj} on {rec}")
        assert info["action_valid"] and f"in {obj} {rec}" in info["state_key"].split("; ")
        env.step(f"take {obj} from {rec}")
        *_, info = env.step(f"put {obj} in {rec}")
        assert info["action_valid"]
        *_, info = env.step(f"put {obj} into the {rec}")
        assert not info["action_valid"]
        return
    pytest.fail("no task with a distractor on an open surface")


def test_state_key_is_a_sorted_fact_set_and_cleanliness_is_hidden():
    env = HouseholdEnv(n_tasks=30, task_types=("pick_clean_then_place",))
    m = env.model_for(0)
    for key in m.state_keys:
        facts = key.split("; ")
        assert facts == sorted(facts) and sum(f.startswith("at ") for f in facts) == 1
    tk = env.task(0)
    target = tk.objects[tk.target_object]
    clean = [i for i, k in enumerate(m.state_keys) if f"clean {target}" in k.split("; ")]
    assert clean
    aliased = 0
    for i in clean:
        dirty_key = "; ".join(f for f in m.state_keys[i].split("; ") if f != f"clean {target}")
        j = m.index(dirty_key)
        assert m.observations[i].replace(" You have completed the task. You won!", "") == m.observations[j]
        aliased += 1
    assert aliased == len(clean)


def test_bad_parameters():
    with pytest.raises(ValueError, match="n_receptacles"):
        HouseholdEnv(n_receptacles=2)
    with pytest.raises(ValueError, match="n_objects"):
        HouseholdEnv(n_objects=0)


def test_show_status_names_the_treated_object_and_partial_observability_remains():
    hidden = HouseholdEnv(n_tasks=3, task_types=("pick_clean_then_place",))
    shown = HouseholdEnv(n_tasks=3, task_types=("pick_clean_then_place",), show_status=True)
    a, b = hidden.model_for(0), shown.model_for(0)
    assert a.state_keys == b.state_keys
    clean = [i for i, k in enumerate(a.state_keys) if "clean " in k]
    assert all("(clean)" not in a.observations[i] for i in clean)
    visible = [i for i in clean if "(clean)" in b.observations[i]]
    assert visible and len(set(b.observations)) > len(set(a.observations))
    assert len(set(b.observations)) < b.n_states  # other receptacles are still out of sight
