"""Ground-truth oracle: exact Q^π / V^π / A^π and Q* checked by hand, by Monte Carlo and by a reference loop."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from agentgym_credit.credit.oracle import (
    episode_windows,
    evaluate_policy,
    optimal_values,
    push_window,
)
from agentgym_credit.credit.policies import (
    EpsilonMixture,
    NoisyOptimalPolicy,
    PolicyBase,
    RevisitAvoidingPolicy,
    UniformPolicy,
)
from agentgym_credit.envs.gridworld.model import TabularModel


def chain(horizon: int | None = None) -> TabularModel:
    """s0 --right--> s1 --right--> s2 (reward 1, terminal); s0 may 'stay', s1 may go 'left'."""
    return TabularModel(
        ["s0", "s1", "s2"],
        [["stay", "right"], ["left", "right"], []],
        [
            [[(1.0, 0, 0.0, False)], [(1.0, 1, 0.0, False)]],
            [[(1.0, 0, 0.0, False)], [(1.0, 2, 1.0, True)]],
            [],
        ],
        np.array([1.0, 0.0, 0.0]),
        horizon=horizon,
    )


def random_world(seed: int, n: int = 5, horizon: int | None = None, p_end: float = 0.25) -> TabularModel:
    """Small stochastic MDP with 1-3 actions per state and random rewards; ends with prob ~p_end per step."""
    rng = np.random.default_rng(seed)
    actions, table = [], []
    for s in range(n):
        k = int(rng.integers(1, 4))
        actions.append([f"a{s}_{i}" for i in range(k)])
        outs_s = []
        for _ in range(k):
            nexts = rng.choice(n, size=2, replace=False)
            p = rng.dirichlet([1.0, 1.0]) * (1 - p_end)
            outs = [(float(p[j]), int(nexts[j]), float(rng.normal()), False) for j in range(2)]
            outs.append((p_end, int(rng.integers(n)), float(rng.normal() + 1), True))
            outs_s.append(outs)
        table.append(outs_s)
    init = np.zeros(n)
    init[0] = 1.0
    return TabularModel([f"s{i}" for i in range(n)], actions, table, init, horizon=horizon)


def mc_returns(model, policy, gamma, s, a, window, t, n, seed):
    """Discounted returns of n rollouts that take action a in (s, window) at time t, then follow policy."""
    rng = np.random.default_rng(seed)
    H = model.horizon
    out = np.empty(n)
    for i in range(n):
        ss, w, tt, act, g, disc = s, tuple(window), t, a, 0.0, 1.0
        while True:
            if H is not None and tt >= H or model.is_terminal(ss):
                break
            if act is None:
                act = policy.sample(model, ss, w, None if H is None else tt, rng)
            outs = model.P[ss][act]
            p, ns, r, term = outs[rng.choice(len(outs), p=[o[0] for o in outs])]
            g += disc * r
            disc *= gamma
            if term:
                break
            w = push_window(w, ss, act, getattr(policy, "window", 0))
            ss, tt, act = ns, tt + 1, None
        out[i] = g
    return out


def assert_within_ci(samples: np.ndarray, exact: float, z: float = 4.5) -> None:
    se = samples.std(ddof=1) / np.sqrt(len(samples))
    assert abs(samples.mean() - exact) <= z * se + 1e-9, (samples.mean(), exact, se)


# -- hand-derived values ------------------------------------------------------------------------

def test_chain_uniform_matches_hand_derived_values():
    g = 0.9
    vals = evaluate_policy(chain(), UniformPolicy(), g)
    # V1 = .5*1 + .5*g*V0, V0 = .5*g*V0 + .5*g*V1
    v1 = 0.5 * (4 - 2 * g) / (4 - 2 * g - g * g)
    v0 = g * v1 / (2 - g)
    assert vals.value(0) == pytest.approx(v0, abs=1e-12)
    assert vals.value(1) == pytest.approx(v1, abs=1e-12)
    assert vals.value(2) == 0.0
    assert vals.q_values(0) == pytest.approx([g * v0, g * v1], abs=1e-12)
    assert vals.advantage(0, 1) == pytest.approx(g * v1 - v0, abs=1e-12)
    assert vals.advantage(1, 1) == pytest.approx(1 - v1, abs=1e-12)
    assert vals.advantage(1, 0) == pytest.approx(g * v0 - v1, abs=1e-12)


def test_chain_optimal_values():
    g = 0.9
    opt = optimal_values(chain(), g)
    assert opt.kind == "optimal"
    assert opt.value(0) == pytest.approx(g)
    assert opt.value(1) == pytest.approx(1.0)
    assert opt.advantage(0, 0) == pytest.approx(g * g - g)
    assert opt.advantage(0, 1) == pytest.approx(0.0)
    assert opt.probs(0).tolist() == [0.0, 1.0]


def test_finite_horizon_chain_by_hand():
    g = 0.9
    vals = evaluate_policy(chain(horizon=2), UniformPolicy(), g)
    # last step (t=1): only s1 --right--> pays; nothing is earned after truncation
    assert vals.value(1, t=1) == pytest.approx(0.5)
    assert vals.value(0, t=1) == 0.0
    assert vals.value(1, t=0) == pytest.approx(0.5)  # .5*1 + .5*g*V_1(s0) = .5
    assert vals.value(0, t=0) == pytest.approx(0.25 * g)
    assert vals.advantage(0, 1, t=0) == pytest.approx(0.5 * g - 0.25 * g)
    with pytest.raises(ValueError, match="t must be in 0..1"):
        vals.value(0, t=2)
    opt = optimal_values(chain(horizon=1), g)
    assert opt.q_values(0, t=0).tolist() == [0.0, 0.0]  # one step cannot reach the goal from s0
    assert opt.value(1, t=0) == 1.0


def test_horizon_values_converge_to_infinite_horizon():
    m_inf, m_long = random_world(3), random_world(3, horizon=200)
    pol = UniformPolicy()
    v_inf = evaluate_policy(m_inf, pol, 0.9).V[0]
    v_long = evaluate_policy(m_long, pol, 0.9).V[0]
    np.testing.assert_allclose(v_long, v_inf, atol=1e-8)
    np.testing.assert_allclose(optimal_values(m_long, 0.9).V[0], optimal_values(m_inf, 0.9).V[0], atol=1e-8)


# -- Monte Carlo --------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1])
def test_state_policy_q_matches_monte_carlo(seed):
    model, g = random_world(seed), 0.9
    pol = EpsilonMixture(NoisyOptimalPolicy(temperature=0.5, gamma=g), 0.2)
    vals = evaluate_policy(model, pol, g)
    for a in range(len(model.actions[0])):
        assert_within_ci(mc_returns(model, pol, g, 0, a, (), 0, 1500, seed + 10 * a), vals.q(0, a))


def test_finite_horizon_q_matches_monte_carlo():
    model, g = random_world(4, horizon=3, p_end=0.05), 0.95
    pol = NoisyOptimalPolicy(temperature=1.0, gamma=g)  # depends on t through Q*_t
    vals = evaluate_policy(model, pol, g)
    for t in (0, 2):
        for a in range(len(model.actions[0])):
            assert_within_ci(mc_returns(model, pol, g, 0, a, (), t, 1500, 7 + a + t), vals.q(0, a, t=t))


def corridor() -> TabularModel:
    """0 <-> 1 <-> 2, and 2 --win--> end (reward 1). Where an agent came from decides where it goes next."""
    return TabularModel(
        ["0", "1", "2", "end"],
        [["wait", "fwd"], ["left", "right"], ["back", "win"], []],
        [
            [[(1.0, 0, 0.0, False)], [(1.0, 1, 0.0, False)]],
            [[(1.0, 0, 0.0, False)], [(1.0, 2, 0.0, False)]],
            [[(0.9, 1, 0.0, False), (0.1, 2, 0.0, False)], [(0.5, 3, 1.0, True), (0.5, 2, 0.0, False)]],
            [],
        ],
        np.array([1.0, 0.0, 0.0, 0.0]),
    )


def test_window_policy_history_changes_the_answer_and_matches_monte_carlo():
    model, g = corridor(), 0.9
    pol = RevisitAvoidingPolicy(window=1, factor=0.1)
    vals = evaluate_policy(model, pol, g)
    from_left, from_right = ((0, 1),), ((2, 0),)
    v_left, v_right = vals.value(1, window=from_left), vals.value(1, window=from_right)
    assert v_left > v_right + 0.05  # coming from 0 it heads for 2; coming back from 2 it heads for 0
    assert vals.probs(1, window=from_left)[1] > 0.8 > vals.probs(1, window=from_right)[1]
    for w in (from_left, from_right):
        for a in (0, 1):
            assert_within_ci(mc_returns(model, pol, g, 1, a, w, 0, 1500, 3 + a), vals.q(1, a, window=w))
    assert_within_ci(mc_returns(model, pol, g, 0, None, (), 0, 1500, 5), vals.value(0))
    # a longer window than the policy's is cut to its last pair
    assert vals.value(1, window=((1, 0), (0, 1))) == v_left
    with pytest.raises(KeyError, match="not reachable"):
        vals.value(1, window=((3, 0),))


def test_window_policy_finite_horizon_matches_monte_carlo():
    model, g = random_world(5, horizon=4, p_end=0.1), 0.9
    pol = RevisitAvoidingPolicy(window=2, factor=0.2)
    vals = evaluate_policy(model, pol, g)
    assert vals.n_augmented_states > model.n_states
    for a in range(len(model.actions[0])):
        assert_within_ci(mc_returns(model, pol, g, 0, a, (), 0, 1500, 11 + a), vals.q(0, a, t=0))


# -- identities, vectorized lookup, errors ------------------------------------------------------

def test_policy_weighted_advantage_is_zero_and_optimal_dominates():
    model, g = random_world(2), 0.9
    pol = RevisitAvoidingPolicy(window=2, factor=0.3)
    vals = evaluate_policy(model, pol, g)
    sp = vals._space
    weighted = np.bincount(sp.row_x, weights=vals.pi[0] * (vals.Q[0] - vals.V[0][sp.row_x]), minlength=sp.n)
    np.testing.assert_allclose(weighted, 0.0, atol=1e-12)
    opt = optimal_values(model, g)
    states = np.array([s for s, _ in vals.augmented_states])
    assert np.all(opt.V[0][states] >= vals.V[0] - 1e-12)
    assert np.all(opt.Q[0] <= opt.V[0][opt._space.row_x] + 1e-12)


def test_advantages_for_steps_matches_scalar_lookups():
    model, g = random_world(6, horizon=5, p_end=0.1), 0.9
    pol = RevisitAvoidingPolicy(window=2)
    vals = evaluate_policy(model, pol, g)
    rng = np.random.default_rng(0)
    S, A, T, Wd = [], [], [], []
    for _ in range(20):
        states, acts, s = [], [], 0
        for _t in range(model.horizon):
            if model.is_terminal(s):
                break
            w = episode_windows(states + [s], acts + [0], 2)[-1]
            a = pol.sample(model, s, w, _t, rng)
            states.append(s)
            acts.append(a)
            outs = model.P[s][a]
            _, ns, _, term = outs[rng.choice(len(outs), p=[o[0] for o in outs])]
            if term:
                break
            s = ns
        S += states
        A += acts
        T += list(range(len(states)))
        Wd += episode_windows(states, acts, 2)
    adv, q, v = vals.advantages_for_steps(S, A, T, Wd, return_values=True)
    expect = [vals.advantage(s, a, t=t, window=w) for s, a, t, w in zip(S, A, T, Wd)]
    np.testing.assert_allclose(adv, expect, atol=1e-12)
    np.testing.assert_allclose(adv, q - v)
    bad = vals.advantages_for_steps([S[0], S[1]], [-1, A[1]], [T[0], T[1]], [Wd[0], ((0, 0),) * 2], missing="nan")
    assert np.isnan(bad[0])  # inadmissible (no-op) step
    with pytest.raises(ValueError, match="windows"):
        vals.advantages_for_steps(S, A, T)
    with pytest.raises(ValueError, match="t is needed"):
        vals.advantages_for_steps(S, A, None, Wd)
    with pytest.raises(IndexError, match="out of range"):
        vals.advantages_for_steps([0], [99], [0], [()])


def test_state_based_vectorized_lookup_and_nan_for_invalid():
    vals = evaluate_policy(chain(), UniformPolicy(), 0.9)
    adv = vals.advantages_for_steps([0, 1, 1, 0], [1, 1, 0, -1])
    np.testing.assert_allclose(adv[:3], [vals.advantage(0, 1), vals.advantage(1, 1), vals.advantage(1, 0)])
    assert np.isnan(adv[3])


def test_bad_inputs_give_clear_errors():
    m = chain()

    class Broken(PolicyBase):
        def probs(self, model, s, window, t):
            return np.array([0.7, 0.7])

    class BrokenTable(UniformPolicy):
        def probs_table(self, model, t):
            return np.full(4, 0.7)

    with pytest.raises(ValueError, match="distribution over its 2 admissible actions"):
        evaluate_policy(m, Broken(), 0.9)
    with pytest.raises(ValueError, match="probs_table"):
        evaluate_policy(m, BrokenTable(), 0.9)
    with pytest.raises(ValueError, match="gamma"):
        evaluate_policy(m, UniformPolicy(), 1.5)
    loop = TabularModel(["a"], [["stay"]], [[[(1.0, 0, 1.0, False)]]], [1.0])
    with pytest.raises(ValueError, match="never terminates"):
        evaluate_policy(loop, UniformPolicy(), 1.0)
    assert evaluate_policy(TabularModel(["a"], [["stay"]], [[[(1.0, 0, 1.0, False)]]], [1.0], horizon=3),
                           UniformPolicy(), 1.0).value(0, t=0) == 3.0
    with pytest.raises(ValueError, match="augmented states"):
        evaluate_policy(random_world(1, n=6), RevisitAvoidingPolicy(window=6), 0.9, max_states=50)


# -- FrozenLake via from_gym_P ------------------------------------------------------------------

def _reference_values(P, n, nA, gamma, pi=None, iters=3000):
    """Plain-Python value iteration / policy evaluation on gymnasium's P (cross-check)."""
    V = [0.0] * n
    for _ in range(iters):
        newV = []
        for s in range(n):
            qs = [sum(p * (r + (0.0 if d else gamma * V[ns])) for p, ns, r, d in P[s][a]) for a in range(nA)]
            newV.append(max(qs) if pi is None else sum(pi[a] * q for a, q in enumerate(qs)))
        V = newV
    return np.array(V)


def test_frozenlake_via_from_gym_P():
    env = gym.make("FrozenLake-v1", is_slippery=True)
    P = env.unwrapped.P
    model = TabularModel.from_gym_P(P, env.unwrapped.initial_state_distrib, ["left", "down", "right", "up"])
    env.close()
    g = 0.95
    opt = optimal_values(model, g)
    np.testing.assert_allclose(opt.V[0], _reference_values(P, 16, 4, g), atol=1e-9)
    uni = evaluate_policy(model, UniformPolicy(), g)
    np.testing.assert_allclose(uni.V[0], _reference_values(P, 16, 4, g, pi=[0.25] * 4), atol=1e-9)
    assert opt.value(0) > uni.value(0) > 0
    assert opt.advantage(0, int(np.argmax(opt.q_values(0)))) == pytest.approx(0.0)


def _reference_q(model, policy, gamma, s, w, t, a, memo):
    """Plain recursive Q on (state, window, t) for a finite horizon (the specification, no arrays)."""
    total = 0.0
    for p, ns, r, term in model.P[s][a]:
        total += p * r
        if not term and t + 1 < model.horizon:
            total += p * gamma * _reference_v(model, policy, gamma, ns, push_window(w, s, a, policy.window), t + 1, memo)
    return total


def _reference_v(model, policy, gamma, s, w, t, memo):
    key = (s, w, t)
    if key not in memo:
        pi = policy.probs(model, s, w, t)
        memo[key] = sum(pi[a] * _reference_q(model, policy, gamma, s, w, t, a, memo) for a in range(len(pi)))
    return memo[key]


@pytest.mark.parametrize("seed", [0, 7])
def test_vectorized_values_equal_a_plain_recursive_reference(seed):
    model, g = random_world(seed, n=4, horizon=4, p_end=0.2), 0.8
    pol = EpsilonMixture(RevisitAvoidingPolicy(window=2, factor=0.05), 0.1)
    vals = evaluate_policy(model, pol, g)
    memo: dict = {}
    checked = 0
    for s, w in vals.augmented_states:
        for t in range(len(w), model.horizon):  # a window of length k exists from t = k on
            for a in range(len(model.actions[s])):
                ref = _reference_q(model, pol, g, s, w, t, a, memo)
                assert vals.q(s, a, t=t, window=w) == pytest.approx(ref, abs=1e-12)
                checked += 1
    assert checked > 50
