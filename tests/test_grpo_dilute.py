"""``grpo-dilute[q]``: the calibrated known effect of ``bench train_real`` (GRPO with a share ``q`` of each
update's groups given no information)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from agentgym_credit.bench.learning import train_real as T
from agentgym_credit.bench.learning.matched_step import dilute, dilute_groups, dilute_share, is_reference
from agentgym_credit.bench.learning.real_config import check_names
from agentgym_credit.credit.steps import StepArrays
from agentgym_credit.truth.text_policy import TextPolicy
from agentgym_credit.wrappers.collector import GroupedRolloutCollector


def _steps(n_groups=40, n=4, seed=0):
    """Groups of ``n`` trajectories of 1-3 steps, a Bernoulli(0.3) reward at the end."""
    rng = np.random.default_rng(seed)
    cols = {k: [] for k in ("group_id", "traj_id", "t", "reward", "done")}
    tid = 0
    for g in range(n_groups):
        for _ in range(n):
            length, win = int(rng.integers(1, 4)), float(rng.random() < 0.3)
            for t in range(length):
                last = t == length - 1
                for k, v in (("group_id", g), ("traj_id", tid), ("t", t), ("reward", win if last else 0.0),
                             ("done", last)):
                    cols[k].append(v)
            tid += 1
    keys = list(range(1, len(cols["t"]) + 1))
    return StepArrays.from_lists(**cols, state_key=keys, obs_key=keys)


def _traj_values(adv, steps):
    tid = np.asarray(steps.traj_id)
    return {int(t): adv[tid == t] for t in np.unique(tid)}


def test_arm_labels_parse_and_bad_ones_are_named():
    assert dilute_share("grpo-dilute[0.25]") == 0.25 and dilute_share("grpo") is None
    assert is_reference("grpo-dilute[1]") and is_reference("null") and not is_reference("graph[state]")
    for bad in ("grpo-dilute", "grpo-dilute[x]", "grpo-dilute[1.5]", "grpo-dilute[-0.1]", "grpo-dilute(0.5)"):
        with pytest.raises(ValueError, match="grpo-dilute"):
            dilute_share(bad)
        with pytest.raises(SystemExit):
            T.config_from_args(["--arms", "grpo", bad])
    cfg, _ = T.config_from_args(["--envs", "webshop", "--arms", "grpo", "grpo-dilute[0.3]", "--primary",
                                 "grpo:grpo-dilute[0.3]"])
    cfg.validate()
    assert cfg.arms == ("grpo", "grpo-dilute[0.3]")
    assert "[" not in T.run_file(cfg, "webshop", "grpo-dilute[0.3]", 0, 0.03).name
    check_names(("webshop",), ("grpo-dilute[0.3]",))
    with pytest.raises(ValueError, match="unknown arm"):  # the direction probe has no diluted arm
        check_names(("webshop",), ("grpo-dilute[0.3]",), dilute=False)


def test_the_diluted_groups_are_a_share_q_drawn_independently_of_the_data():
    assert dilute_groups(8, 0.0, np.random.default_rng(0)).sum() == 0
    assert dilute_groups(8, 1.0, np.random.default_rng(0)).all()
    assert all(dilute_groups(8, 0.5, np.random.default_rng(s)).sum() == 4 for s in range(20))
    shares = [dilute_groups(8, 0.3, np.random.default_rng(s)).mean() for s in range(2000)]
    assert set(np.round(np.array(shares) * 8)) == {2, 3} and abs(np.mean(shares) - 0.3) < 0.01
    # the same RNG state dilutes the same groups whatever the rewards were
    a, b = _steps(8, seed=1), _steps(8, seed=2)
    grpo_a, grpo_b = (T.arm_advantages("grpo", s, [], 0.95, np.random.default_rng(0)) for s in (a, b))
    ch_a = dilute(grpo_a, a, 0.5, np.random.default_rng(7)) != grpo_a
    ch_b = dilute(grpo_b, b, 0.5, np.random.default_rng(7)) != grpo_b
    moved_a = {int(g) for g in np.unique(np.asarray(a.group_id)[ch_a])}
    moved_b = {int(g) for g in np.unique(np.asarray(b.group_id)[ch_b])}
    chosen = set(np.flatnonzero(dilute_groups(8, 0.5, np.random.default_rng(7))).tolist())
    assert moved_a <= chosen and moved_b <= chosen and moved_a | moved_b


def test_q0_is_grpo_and_q1_keeps_grpos_values_but_carries_no_information():
    steps = _steps(12)
    grpo = T.arm_advantages("grpo", steps, [], 0.95, np.random.default_rng(0))
    assert np.array_equal(T.arm_advantages("grpo-dilute[0]", steps, [], 0.95, np.random.default_rng(3)), grpo)
    gid, tid = np.asarray(steps.group_id), np.asarray(steps.traj_id)
    won = np.array([steps.reward[tid == t].sum() > 0 for t in np.unique(tid)])
    draws = []
    for s in range(400):
        d = dilute(grpo, steps, 1.0, np.random.default_rng(s))
        per = _traj_values(d, steps)
        if s >= 5:
            draws.append([v[0] for v in per.values()])
            continue
        assert all(np.ptp(v) == 0 for v in per.values())  # one value per trajectory
        for g in np.unique(gid):  # each group keeps GRPO's values, only reassigned among its trajectories
            trajs = np.unique(tid[gid == g])
            assert np.allclose(sorted(grpo[tid == t][0] for t in trajs), sorted(d[tid == t][0] for t in trajs))
        draws.append([v[0] for v in per.values()])
    draws = np.array(draws)
    grpo_t = np.array([v[0] for v in _traj_values(grpo, steps).values()])
    assert grpo_t[won].mean() > 0.5 and grpo_t[~won].mean() < -0.1  # GRPO tells winners from losers
    assert abs(draws[:, won].mean()) < 0.05 and abs(draws[:, ~won].mean()) < 0.05  # q = 1 does not
    # q = 0.5 sits in between: about half the information
    half = np.mean([[v[0] for v in _traj_values(dilute(grpo, steps, 0.5, np.random.default_rng(s)), steps).values()]
                    for s in range(400)], axis=0)
    assert 0.3 < half[won].mean() / grpo_t[won].mean() < 0.7


def test_dilution_needs_episode_level_advantages_of_the_steps_rows():
    steps = _steps(4)
    bad = np.arange(len(steps.t), dtype=np.float64)
    with pytest.raises(ValueError, match="constant within a trajectory"):
        dilute(bad, steps, 1.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="advantages but steps"):
        dilute(bad[:-1], steps, 0.5, np.random.default_rng(0))


def test_on_a_real_webshop_batch_q0_is_grpo_and_the_checks_expect_grpo_to_win():
    from agentgym_credit.bench.learning import train_real_checks as C
    from agentgym_credit.bench.learning.matched_step import ExpertMarking
    from agentgym_credit.bench.learning.neural_policy import actor_for

    env = T.REAL_ENVS["webshop"]
    col = GroupedRolloutCollector(env.factory, group_size=3, history_depth=3, seed=0, max_steps=env.max_steps,
                                  progress=False)
    try:
        batch = col.collect(ExpertMarking(actor_for(TextPolicy(3.0), np.random.default_rng(0))), tasks=[0, 1, 2])
    finally:
        col.close()
    steps = replace(batch.steps, reward=T.training_reward(batch, "verl-agent"))
    grpo = T.arm_advantages("grpo", steps, [], 0.95, np.random.default_rng(0))
    assert np.array_equal(T.arm_advantages("grpo-dilute[0]", steps, [], 0.95, np.random.default_rng(1)), grpo)
    d1 = T.arm_advantages("grpo-dilute[1]", steps, [], 0.95, np.random.default_rng(1))
    assert np.allclose(np.unique(d1), np.unique(grpo)) and not np.array_equal(d1, grpo)
    rng = np.random.default_rng(1)
    summary = [{"env": "w", "arm": a, "seed": s, "auc_trained": base + 0.01 * rng.standard_normal()}
               for s in range(8) for a, base in (("grpo", 0.3), ("grpo-dilute[0.5]", 0.25), ("null", 0.2))]
    ref = {r[0]: (r[4], r[5]) for r in C.reference_rows(summary, "w", ["grpo", "grpo-dilute[0.5]", "null"],
                                                       "auc_trained")}
    assert ref["grpo − grpo-dilute[0.5]"] == ("win", "win") and ref["null − grpo"] == ("loss", "not a win")
    assert "null − grpo-dilute[0.5]" not in ref
