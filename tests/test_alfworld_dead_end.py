"""ALFWorld dead ends (issue 25 item 2): a real dev game lets the agent pick up an object no receptacle of the
game can hold (a teddy bear on the bed); from then on no plan reaches the goal. ``info["dead_end"]`` says
so (with or without the expert), the engine's own planner agrees, and ``end_on_dead_end=True`` ends the
episode there as a loss (terminated, not won, no success reward)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("textworld")
pytest.importorskip("fast_downward")

from alfworld_fixtures import private_sas_cache  # noqa: E402,F401  (autouse)

from agentgym_credit.envs.alfworld.engine import expert_plan  # noqa: E402
from agentgym_credit.envs.alfworld.env import ALFWorldEnv  # noqa: E402

DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "alfworld" / "dev"
GAME = "look_at_obj_in_light-CD-None-DeskLamp-320"  # a bedroom whose bed holds a teddy bear
pytestmark = pytest.mark.skipif(not (DEV / GAME).is_dir(), reason="needs the dev games in ../shared/data/alfworld/dev")


def _start(**kw):
    env = ALFWorldEnv(source="dev", max_steps=30, **kw)
    task = next(i for i, g in enumerate(env.games) if g.game_id.startswith(GAME))
    obs, info = env.reset(seed=0, options={"task": task})
    return env, info


def _take_teddy_bear(env, info):
    steps = []
    for _ in range(2):
        cmd = "go to bed 1" if not steps else next(a for a in info["admissible_actions"] if a.startswith("take teddybear"))
        step = env.step(cmd)
        steps.append(step)
        info = step[4]
    return steps


@pytest.mark.parametrize("expert", [True, False])
def test_holding_what_nothing_can_hold_is_a_dead_end(expert):
    env, info = _start(expert=expert)
    assert info["dead_end"] is False
    (_, _, _, _, at_bed), (obs, r, term, trunc, info) = _take_teddy_bear(env, info)
    assert at_bed["dead_end"] is False and "You pick up the teddybear 1" in obs
    assert info["dead_end"] is True and not term and not trunc and r == 0.0  # default: the episode runs on
    if expert:
        assert info["expert_action"] is None
    assert expert_plan(env.unwrapped._engine) == []  # the engine's planner finds no plan either
    for a in ("look", "go to desk 1", "inventory"):  # it stays a dead end
        *_, info = env.step(a)
        assert info["dead_end"] is True


def test_end_on_dead_end_ends_the_episode_as_a_loss():
    env, info = _start(expert=True, end_on_dead_end=True)
    _, (obs, r, term, trunc, info) = _take_teddy_bear(env, info)
    assert (term, trunc, r, info["won"], info["dead_end"]) == (True, False, 0.0, False, True)
    with pytest.raises(Exception, match="reset"):
        env.step("look")


def _take(env):
    take = next(a for a in env.unwrapped._last_info["admissible_actions"] if a.startswith("take teddybear"))
    return env.step(take)[4]


def test_expert_runs_never_see_a_dead_end_and_snapshots_keep_the_flag():
    env, info = _start(expert=True, end_on_dead_end=True)
    while not info["won"]:
        assert info["dead_end"] is False
        info = env.step(info["expert_action"])[4]
    env, _ = _start(expert=False)
    env.step("go to bed 1")
    before = env.get_state()
    assert _take(env)["dead_end"] is True
    env.set_state(before)  # back before the fatal take
    assert env.step("look")[4]["dead_end"] is False
    assert _take(env)["dead_end"] is True
    after = env.get_state()
    env.step("look")
    assert env.set_state(after)[1]["dead_end"] is True and env.step("look")[4]["dead_end"] is True


def test_collector_marks_dead_end_trajectories_apart_from_other_losses(tmp_path):
    """A batch tells a trajectory that ended in a dead end (``traj.dead_end``) from one that was cut off or
    won; Parquet save/load keeps the column."""
    pytest.importorskip("pyarrow")
    from agentgym_credit.wrappers import GroupedRolloutCollector
    from agentgym_credit.wrappers.rollout_batch import RolloutBatch

    env, _ = _start()
    task = next(i for i, g in enumerate(env.games) if g.game_id.startswith(GAME))

    def policy(observations, infos):  # copy 0 takes the teddy bear, copy 1 wanders
        out = []
        for info in infos:
            acts, copy = info["admissible_actions"], info["rollout"]["copy"]
            take = [a for a in acts if a.startswith("take teddybear")]
            out.append(take[0] if copy == 0 and take else ("go to bed 1" if copy == 0 else "look"))
        return out

    col = GroupedRolloutCollector("credit/ALFWorld-v0", group_size=2, max_steps=6, progress=False,
                                  env_kwargs={"source": "dev", "end_on_dead_end": True})
    try:
        batch = col.collect(policy, tasks=[task])
    finally:
        col.close()
    assert batch.traj.dead_end.tolist() == [True, False]
    assert batch.traj.terminated.tolist() == [True, False] and not batch.traj.won.any()
    path = tmp_path / "b.parquet"
    batch.save(path)
    assert RolloutBatch.load(path).traj.dead_end.tolist() == [True, False]
