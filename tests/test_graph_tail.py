"""Issue 41's options of ``graph``: noisy terminal rows (``terminal``) and heavy tails (``tail``), checked by hand
on tiny batches, plus the task they were built for (``credit/LateCoin-v0``: a Bernoulli reward paid 16 steps after
the decisive choice)."""

from __future__ import annotations

import numpy as np
import pytest

from agentgym_credit.credit import advantages
from agentgym_credit.credit.graph import graph
from agentgym_credit.credit.graph_tail import shape_tail, terminal_rewards
from agentgym_credit.credit.oracle import evaluate_policy
from agentgym_credit.credit.policies import UniformPolicy
from agentgym_credit.credit.steps import StepArrays
from agentgym_credit.envs.gridworld.late import LateCoinEnv

A, B, C = 11, 12, 13


def _steps(trajs, group=None):
    """trajs: list of [(key, reward), ...]; every trajectory ends terminated."""
    cols = {k: [] for k in ("group_id", "traj_id", "t", "reward", "done", "state_key", "obs_key")}
    for j, tr in enumerate(trajs):
        for t, (k, r) in enumerate(tr):
            cols["group_id"].append(0 if group is None else group[j])
            cols["traj_id"].append(j)
            cols["t"].append(t)
            cols["reward"].append(r)
            cols["done"].append(t == len(tr) - 1)
            cols["state_key"].append(k)
            cols["obs_key"].append(k)
    return StepArrays.from_lists(**cols)


def test_terminal_rewards_by_hand():
    r = np.array([1.0, 0.0, 5.0, 1.0, 0.0])
    node = np.array([3, 3, 4, 3, 7])
    term = np.array([True, True, False, True, True])
    # node 3's terminal mean is 2/3; node 7 has one terminal row (kept as is); row 2 is not terminal
    np.testing.assert_allclose(terminal_rewards(r, node, term, 0.0), [2 / 3, 2 / 3, 5.0, 2 / 3, 0.0])
    np.testing.assert_allclose(terminal_rewards(r, node, term, 0.5), [2 / 3 + 1 / 6, 2 / 3 - 1 / 3, 5.0,
                                                                       2 / 3 + 1 / 6, 0.0])
    assert terminal_rewards(r, node, term, 1.0) is r


def test_noisy_chest_terminal_rows_by_hand():
    # A -> B, then B pays 1 (gold) or 0 (empty): one action at B, so A^pi is 0 on every row. gamma 0.5, shrink 0.
    s = _steps([[(A, 0.0), (B, 1.0)], [(A, 0.0), (B, 0.0)], [(A, 0.0), (B, 1.0)], [(A, 0.0), (B, 1.0)]])
    # V(B) = 3/4, V(A) = 3/8: plain TD credits each chest row with its own coin, r - 3/4
    plain = graph(s, gamma=0.5, shrink=0.0, terminal=1.0, tail="none")
    np.testing.assert_allclose(plain, [0, 0.25, 0, -0.75, 0, 0.25, 0, 0.25], atol=1e-12)
    # terminal=0: the chest rows get the node's mean outcome, m_B - V(B) = 0: the truth, exactly
    np.testing.assert_allclose(graph(s, gamma=0.5, shrink=0.0, terminal=0.0), np.zeros(8), atol=1e-12)
    np.testing.assert_allclose(graph(s, gamma=0.5, shrink=0.0, terminal=0.5, tail="none"), plain / 2, atol=1e-12)
    # values are untouched: the choice rows (A -> B) keep their TD error 0.5 * 3/4 - 3/8 = 0 either way
    # and lam = 1 (Monte-Carlo through the rows) carries the shrunk chest error back
    np.testing.assert_allclose(graph(s, gamma=0.5, lam=1.0, shrink=0.0, terminal=0.0), np.zeros(8), atol=1e-12)
    # rank (shrink 0, terminal 0.5): chest rows +-(rank of |r - 3/4| / 2), rescaled to the RMS
    rms = np.sqrt(np.mean((plain / 2) ** 2))
    raw = np.array([0, 2, 0, -4, 0, 2, 0, 2.0])  # three ties at 0.125 (ranks 1-3 share 2), one at 0.375 (rank 4)
    np.testing.assert_allclose(graph(s, gamma=0.5, shrink=0.0, tail="rank"), raw * rms / np.sqrt(np.mean(raw ** 2)),
                               atol=1e-12)
    # clip at 3 x RMS (the default tail) cannot bind on 8 rows: |A| / RMS is at most sqrt(8) < 3
    np.testing.assert_allclose(graph(s, gamma=0.5, shrink=0.0), plain / 2, atol=1e-12)


def test_terminal_zero_keeps_a_real_terminal_choice_between_nodes():
    # at A: stop with 1 (node A's terminal rows all pay 1); at C: stop with 0. The difference is between nodes,
    # so terminal=0 keeps it (it only pools rows that end at the same node)
    s = _steps([[(A, 1.0)], [(C, 0.0)], [(A, 1.0)], [(C, 0.0)]])
    np.testing.assert_allclose(graph(s, gamma=0.5, shrink=0.0, terminal=0.0),
                               graph(s, gamma=0.5, shrink=0.0, terminal=1.0), atol=1e-12)


def test_shape_tail_clip_and_rank_by_hand():
    a = np.array([0.0, 1.0, -1.0, 10.0, 3.0, 5.0])
    sc = np.array([0, 0, 0, 0, 1, 1])
    rms0, rms1 = np.sqrt(102 / 4), np.sqrt(34 / 2)
    np.testing.assert_allclose(shape_tail(a, sc, "clip", 1.0), [0, 1, -1, rms0, 3, rms1], atol=1e-12)
    # rank: |A| ranks among non-zero rows of the scope (ties share 1.5), sign kept, rescaled to the scope's RMS
    raw0 = np.array([0, 1.5, -1.5, 3.0])
    raw1 = np.array([1.0, 2.0])
    want = np.r_[raw0 * rms0 / np.sqrt(np.mean(raw0 ** 2)), raw1 * rms1 / np.sqrt(np.mean(raw1 ** 2))]
    np.testing.assert_allclose(shape_tail(a, sc, "rank"), want, atol=1e-12)
    assert shape_tail(a, sc, "none") is a
    z = np.zeros(3)
    np.testing.assert_array_equal(shape_tail(z, np.zeros(3, np.int64), "rank"), z)  # an all-zero scope stays zero


def test_graph_tail_is_shape_tail_of_the_untailed_graph_per_group():
    rng = np.random.default_rng(4)
    trajs = [[(int(rng.integers(20, 24)), float(rng.normal())) for _ in range(int(rng.integers(2, 6)))]
             for _ in range(12)]
    s = _steps(trajs, group=[j // 4 for j in range(12)])
    base = graph(s, tail="none")
    for tail, k in (("clip", 2.0), ("clip", 3.0), ("rank", 3.0)):
        np.testing.assert_allclose(graph(s, tail=tail, tail_k=k), shape_tail(base, s.group_id, tail, k), atol=1e-12)
    clipped = graph(s, tail="clip", tail_k=1.0)
    for g in range(3):  # every row within 1 x its group's RMS
        m = s.group_id == g
        assert np.all(np.abs(clipped[m]) <= np.sqrt(np.mean(base[m] ** 2)) + 1e-12)


def test_options_checked_with_named_errors():
    s = _steps([[(A, 0.0), (B, 1.0)]])
    with pytest.raises(ValueError, match="terminal"):
        graph(s, terminal=1.5)
    with pytest.raises(ValueError, match="tail"):
        graph(s, tail="winsor")
    with pytest.raises(ValueError, match="tail_k"):
        graph(s, tail="clip", tail_k=0.0)
    np.testing.assert_allclose(advantages("graph", s, terminal=0.0, tail="rank"), graph(s, terminal=0.0, tail="rank"))


def test_latecoin_model_pays_the_door_probability_16_steps_later():
    env = LateCoinEnv(n_tasks=3)
    for task in range(3):
        model, probs = env.model_for(task), env.door_probs(task)
        assert max(probs) == pytest.approx(0.7) and min(probs) < 0.7
        s0 = int(np.argmax(model.initial))
        assert model.actions[s0] == ["take door 1", "take door 2"]
        # the chest of each door pays gold with that door's probability, 16 cells behind it
        for d, p in enumerate(probs):
            chest = model.index(f"hall;{d};16")
            outs = model.P[chest][model.action_index(chest, "open chest")]
            assert sorted((round(q, 9), r) for q, _, r, _ in outs) == sorted([(round(p, 9), 1.0), (round(1 - p, 9), 0.0)])
        # shown: each door's hall has its own text; hidden: the halls of every door read the same
    hidden = LateCoinEnv(n_doors=3, pre=3, show_choice=False, n_tasks=1).model_for(0)
    texts = {hidden.observations[hidden.index(f"hall;{d};5")] for d in range(3)}
    assert len(texts) == 1
    shown = env.model_for(0)
    assert len({shown.observations[shown.index(f"hall;{d};5")] for d in range(2)}) == 2


def test_latecoin_exact_advantage_of_the_choice_is_its_discounted_payout_gap():
    # deterministic walk with only "walk" taken would take 16 steps; under the uniform policy the exact
    # A^pi(door d) = Q(d) - V is proportional to p_d - mean p (same hall dynamics behind every door)
    env = LateCoinEnv(n_tasks=1, max_steps=200)
    model, probs = env.model_for(0), env.door_probs(0)
    pv = evaluate_policy(model, UniformPolicy(), gamma=0.95)
    s0 = int(np.argmax(model.initial))
    adv = [pv.advantage(s0, i) for i in range(2)]
    assert adv[0] == pytest.approx(-adv[1])
    assert np.sign(adv[0]) == np.sign(probs[0] - probs[1])
    assert 0 < abs(adv[0]) < 0.5 * abs(probs[0] - probs[1])  # discounted over >= 17 steps
