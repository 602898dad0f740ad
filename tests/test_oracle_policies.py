"""Reference behaviour policies and the batched collector adapter."""

from __future__ import annotations

import numpy as np
import pytest
from test_oracle import chain, corridor, random_world

from agentgym_credit.credit.oracle import evaluate_policy, optimal_values
from agentgym_credit.credit.policies import (
    BehaviourPolicy,
    EpsilonMixture,
    NoisyOptimalPolicy,
    RevisitAvoidingPolicy,
    UniformPolicy,
    as_collector_policy,
)
from agentgym_credit.envs.gridworld.model import TabularModel


def test_policies_are_distributions_and_follow_the_protocol():
    model = random_world(0)
    pols = [UniformPolicy(), NoisyOptimalPolicy(0.3), RevisitAvoidingPolicy(2, 0.0),
            EpsilonMixture(RevisitAvoidingPolicy(1), 0.5)]
    for pol in pols:
        assert isinstance(pol, BehaviourPolicy)
        for s in range(model.n_states):
            p = pol.probs(model, s, ((0, 0), (1, 0))[-pol.window:] if pol.window else (), None)
            assert p.shape == (len(model.actions[s]),) and np.all(p >= 0) and p.sum() == pytest.approx(1)


def test_vectorized_probs_table_matches_per_state_probs():
    for model in (random_world(2), random_world(3, horizon=4), chain()):
        for pol in (UniformPolicy(), NoisyOptimalPolicy(0.4), NoisyOptimalPolicy(0.0),
                    EpsilonMixture(NoisyOptimalPolicy(0.2), 0.3)):
            for t in ([None] if model.horizon is None else [0, 3]):
                per_state = [pol.probs(model, s, (), t) for s in range(model.n_states)]
                np.testing.assert_allclose(pol.probs_table(model, t), np.concatenate(per_state), atol=1e-12)

    class Slow(NoisyOptimalPolicy):  # the same policy without the fast path
        probs_table = None

    model = random_world(4, horizon=6)
    fast = evaluate_policy(model, NoisyOptimalPolicy(0.3), 0.9)
    slow = evaluate_policy(model, Slow(0.3), 0.9)
    np.testing.assert_allclose(fast.Q, slow.Q, atol=1e-12)
    np.testing.assert_allclose(fast.V, slow.V, atol=1e-12)


def test_noisy_optimal_spans_random_to_optimal():
    model, g = random_world(1), 0.9
    opt, uni = optimal_values(model, g).value(0), evaluate_policy(model, UniformPolicy(), g).value(0)
    assert evaluate_policy(model, NoisyOptimalPolicy(0.0, g), g).value(0) == pytest.approx(opt, abs=1e-10)
    assert evaluate_policy(model, NoisyOptimalPolicy(1e4, g), g).value(0) == pytest.approx(uni, abs=1e-3)
    mid = evaluate_policy(model, NoisyOptimalPolicy(0.5, g), g).value(0)
    assert uni - 1e-9 <= mid <= opt + 1e-9
    assert NoisyOptimalPolicy(0.0, 0.9).probs(chain(), 0, (), None).tolist() == [0.0, 1.0]
    with pytest.raises(ValueError, match="temperature"):
        NoisyOptimalPolicy(-1.0)


def test_revisit_avoiding_uses_the_window():
    m, pol = corridor(), RevisitAvoidingPolicy(window=1, factor=0.0)
    assert pol.probs(m, 1, ((0, 1),), None).tolist() == [0.0, 1.0]  # came from 0: do not go back
    assert pol.probs(m, 1, ((2, 0),), None).tolist() == [1.0, 0.0]
    assert pol.probs(m, 0, (), None).tolist() == [0.0, 1.0]  # 'wait' leads back to the current state
    assert RevisitAvoidingPolicy(1, 1.0).probs(m, 1, ((0, 1),), None).tolist() == [0.5, 0.5]
    with pytest.raises(ValueError):
        RevisitAvoidingPolicy(window=0)


def test_epsilon_mixture():
    m = chain()
    p = EpsilonMixture(NoisyOptimalPolicy(0.0), 0.2).probs(m, 0, (), None)
    np.testing.assert_allclose(p, [0.1, 0.9])


def _infos(states, history_t=None):
    return [{"state_index": s, **({} if history_t is None else {"history_t": history_t[i]})}
            for i, s in enumerate(states)]


def test_collector_adapter_tracks_windows_and_new_episodes():
    m = corridor()
    pol = as_collector_policy(RevisitAvoidingPolicy(window=2, factor=0.0), m, seed=0)
    acts = pol(["o", "o"], _infos([0, 1], [0, 0]))
    assert acts[0] == "fwd"  # 'wait' revisits state 0
    assert acts[1] in m.actions[1]
    s1, a1, t1, w1 = pol.last_steps[1]
    assert (s1, t1, w1) == (1, 0, ())
    pol(["o", "o"], _infos([1, 2], [1, 1]))
    assert pol.last_steps[0][2:] == (1, ((0, 1),))
    assert pol.last_steps[1][3] == ((1, a1),)
    pol(["o", "o"], _infos([0, 1], [0, 2]))  # slot 0 starts a new episode (history_t == 0)
    assert pol.last_steps[0][2:] == (0, ())
    assert len(pol.last_steps[1][3]) == 2
    # no history_t: the adapter counts steps itself; reset() starts a slot over
    pol2 = as_collector_policy(UniformPolicy(), m, seed=0)
    pol2(["o"], _infos([0]))
    pol2(["o"], [{"state_key": "1"}])  # state from state_key when state_index is absent
    assert pol2.last_steps[0][:1] == (1,) and pol2.last_steps[0][2] == 1
    pol2.reset(0)
    pol2(["o"], _infos([0]))
    assert pol2.last_steps[0][2] == 0
    with pytest.raises(ValueError, match="observations"):
        pol2(["o"], [])


def test_collector_adapter_is_seeded():
    m = random_world(3)
    runs = []
    for _ in range(2):
        pol = as_collector_policy(UniformPolicy(), m, seed=42)
        runs.append([pol(["x"] * 3, _infos([0, 1, 2], [0, 0, 0])) for _ in range(5)])
    assert runs[0] == runs[1]
    assert runs[0] != [as_collector_policy(UniformPolicy(), m, seed=1)(["x"] * 3, _infos([0, 1, 2], [0, 0, 0]))
                       for _ in range(5)]


def test_sample_on_terminal_state_is_an_error():
    m = TabularModel(["a", "b"], [["go"], []], [[[(1.0, 1, 0.0, False)]], []], [1.0, 0.0])
    with pytest.raises(ValueError, match="no admissible action"):
        UniformPolicy().sample(m, 1, (), None, np.random.default_rng(0))
