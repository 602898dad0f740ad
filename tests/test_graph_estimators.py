"""The graph estimators (``graph``, ``graphgpo``, ``gagpo``): hand-worked examples, the plain-Python
references, bad input, the aliasing case on agent-visible keys, and consistency on a stochastic task."""

from __future__ import annotations

import dataclasses
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from agentgym_credit.credit import ESTIMATORS, StepArrays, advantages
from agentgym_credit.credit.gagpo import gagpo
from agentgym_credit.credit.graph import graph as _graph
from agentgym_credit.credit.graph_model import GraphSolveError, solve_values, walk
from agentgym_credit.credit.graphgpo import goal_distances, graphgpo
from agentgym_credit.errors import StepArraysError

sys.path.insert(0, str(Path(__file__).parent))
from reference_estimators import random_batch  # noqa: E402
from reference_graph_estimators import GRAPH_REFERENCES  # noqa: E402

A, B, C = 11, 12, 13


def graph(steps, **kw):
    """``graph`` at the issue-29 TD defaults (shrink 0.5, plain terminal rows, no tail reshaping, events on obs_key)
    unless a test names an option: these tests check the TD machinery; issue 41's defaults are checked in
    tests/test_graph_tail.py and tests/test_heldout_bench.py."""
    base = {"shrink": 0.5, "terminal": 1.0, "tail": "none"} | ({"loops": "events"} if kw.get("key") == "obs_key" else {})
    return _graph(steps, **(base | kw))


def _steps(trajs, group=None, **extra):
    """trajs: list of [(key, reward), ...]; every trajectory ends done (terminated)."""
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
    return StepArrays.from_lists(**cols, **extra)


# -- hand-worked examples ----------------------------------------------------------------------------
def test_graph_hand_example_branch():
    # A -> B (r=1, end) and A -> C (r=0, end), gamma = .5: V(B)=1, V(C)=0, V(A)=.25
    s = _steps([[(A, 0.0), (B, 1.0)], [(A, 0.0), (C, 0.0)]])
    np.testing.assert_allclose(graph(s, gamma=0.5, shrink=0), [0.25, 0.0, -0.25, 0.0], atol=1e-12)
    # lam = 1: Monte-Carlo return minus V-hat: the same here (the model is exact on this data)
    np.testing.assert_allclose(graph(s, gamma=0.5, lam=1.0, shrink=0), [0.25, 0.0, -0.25, 0.0], atol=1e-12)
    # shrink = k: V(u) -> (n_u V(u) + k b) / (n_u + k), b = mean discounted return of the rows
    b = (0.5 + 1.0 + 0.0 + 0.0) / 4
    for k, kw in ((1.0, {"shrink": 1.0}), (0.5, {})):  # 0.5 is the default
        v = {A: (2 * 0.25 + k * b) / (2 + k), B: (1 + k * b) / (1 + k), C: (0 + k * b) / (1 + k)}
        want = [0.5 * v[B] - v[A], 1 - v[B], 0.5 * v[C] - v[A], 0 - v[C]]
        np.testing.assert_allclose(graph(s, gamma=0.5, **kw), want, atol=1e-12)


def test_graph_hand_example_cycle():
    # A B A B(r=1, end): V(A) = g V(B), V(B) = (g V(A) + 1) / 2 -> V(B) = 1 / (2 - g^2)
    g = 0.5
    s = _steps([[(A, 0.0), (B, 0.0), (A, 0.0), (B, 1.0)]])
    vb = 1 / (2 - g * g)
    va = g * vb
    want = [0.0, g * va - vb, 0.0, 1.0 - vb]
    np.testing.assert_allclose(graph(s, gamma=g, shrink=0), want, atol=1e-12)


def test_graphgpo_hand_example():
    # traj 0: A -> B -> goal (R=1); traj 1: A -> C -> C -> dead end (R=0). d(B)=1, d(A)=2, C and the dead
    # end cannot reach the goal: far + 1 = 3. g = 10 * .1^d(next): [1, 10 | .01, .01, .01]
    s = _steps([[(A, 0.0), (B, 1.0)], [(A, 0.0), (C, 0.0), (C, 0.0)]])
    d_cur, d_next = goal_distances(s)
    np.testing.assert_array_equal(d_cur, [2, 1, 2, 3, 3])
    np.testing.assert_array_equal(d_next, [1, 0, 3, 3, 3])
    a = graphgpo(s, episode_weight=0.0)
    sd = np.std([1.0, 0.01], ddof=1)
    np.testing.assert_allclose(a, [(1 - 0.505) / (sd + 1e-6), 0, (0.01 - 0.505) / (sd + 1e-6), 0, 0], atol=1e-9)
    # with the episode term (GiGPO's, step baseline: every row enters the mean/std)
    ret = np.array([1, 1, 0, 0, 0.0])
    ep = (ret - ret.mean()) / (ret.std(ddof=1) + 1e-6)
    np.testing.assert_allclose(graphgpo(s), a + ep, atol=1e-9)


def test_graded_outcomes_graphgpo_cannot_tell_apart_graph_can():
    # A -> B ends with the goal (1.0), A -> C with a side exit (0.4): GraphGPO's goal node is "any return > 0",
    # so both steps reach it at distance 0 and its step term is 0; graph credits the better exit
    s = _steps([[(A, 0.0), (B, 1.0)], [(A, 0.0), (C, 0.4)]])
    np.testing.assert_array_equal(graphgpo(s, episode_weight=0.0), 0.0)
    a = graph(s, gamma=0.5, shrink=0)
    np.testing.assert_allclose(a, [0.5 * 1.0 - 0.35, 0.0, 0.5 * 0.4 - 0.35, 0.0], atol=1e-12)


def test_gagpo_hand_example():
    s = _steps([[(A, 0.0), (B, 1.0)], [(A, 0.0), (C, 0.0)]])
    raw = gagpo(s, gamma=0.5, lam=0.5, norm="none")
    np.testing.assert_allclose(raw, [0.25, 0.0, -0.25, 0.0], atol=1e-12)
    sd = np.std(raw, ddof=1)
    np.testing.assert_allclose(gagpo(s, gamma=0.5, lam=0.5), raw / (sd + 1e-6), atol=1e-12)


# -- references --------------------------------------------------------------------------------------
OPTIONS = {
    "graph": [{}, {"key": "obs_key"}, {"lam": 0.7, "time_aware": True}, {"loops": "split", "key": "obs_key"},
              {"shrink": 2.0, "episode": 0.5}, {"key": "history", "level": 2, "invalid_penalty": -0.1},
              {"truncation": "bootstrap", "scope": "batch", "propagate_penalty": True, "invalid_penalty": -0.2},
              {"truncation": "bootstrap", "key": "obs_key", "loops": "mc", "gamma": 0.99},
              {"key": "obs_key", "gamma": 1.0, "lam": 0.5}, {"key": "obs_key", "backoff": 0.0, "shrink": 0.0},
              {"key": "obs_key", "loops": "split", "backoff": 1.5, "time_aware": True},
              {"key": "obs_key", "loops": "events", "backoff": 2.0}, {"key": "obs_key", "loops": "events", "lam": 0.5},
              {"key": "history", "level": 1, "loops": "events", "truncation": "bootstrap"},
              {"terminal": 0.0, "tail": "clip", "tail_k": 1.5}, {"terminal": 1.0, "tail": "none", "shrink": 0.5},
              {"key": "obs_key", "terminal": 0.25, "tail": "rank", "lam": 0.5, "shrink": "auto"}],
    "graphgpo": [{}, {"normalize_distance": True, "key": "state_key"}, {"norm": "mean", "omega": 0.5},
                 {"key": "history", "level": 1, "episode_baseline": "trajectory"},
                 {"invalid_penalty": 0.0, "lone": "zero"}, {"invalid_penalty": -0.3, "norm": "mean"},
                 {"episode_baseline": "trajectory", "lone": "zero", "invalid_penalty": -0.2}],
    "gagpo": [{}, {"key": "obs_key", "lam": 0.5}, {"norm": "mean", "invalid_penalty": -0.1},
              {"norm": "none", "propagate_penalty": True, "invalid_penalty": -0.1}],
}


def _with_ends(s, seed):
    rng = np.random.default_rng(seed)
    fs = (rng.integers(0, 6, s.n) + 1).astype(np.uint64)
    return dataclasses.replace(s, terminated=s.done & (rng.random(s.n) < 0.6), final_state_key=fs,
                               final_obs_key=fs // np.uint64(2) + np.uint64(1))


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_equal_to_reference(name):
    for seed in range(6):
        s = _with_ends(random_batch(seed), seed)
        for opts in OPTIONS[name]:
            got = ESTIMATORS[name](s, **opts)
            want = GRAPH_REFERENCES[name](s, **opts)
            # scopes above DENSE_MAX hubs are solved iteratively to SOLVE_TOL (1e-7): within 1e-6 of the dense solve
            np.testing.assert_allclose(got, want, atol=1e-6, err_msg=f"{name} {opts} seed {seed}")


def test_rows_in_any_order():
    s = _with_ends(random_batch(3), 3)
    perm = np.random.default_rng(0).permutation(s.n)
    sp = StepArrays(**{f.name: (None if getattr(s, f.name) is None else getattr(s, f.name)[perm])
                       for f in dataclasses.fields(s)})
    for name in OPTIONS:
        np.testing.assert_allclose(ESTIMATORS[name](sp), ESTIMATORS[name](s)[perm], atol=1e-10)


def test_large_scope_iterative_solve_matches_dense(monkeypatch):
    import agentgym_credit.credit.graph_model as gm

    s = random_batch(5, n_states=40, max_traj=30)
    dense = graph(s, scope="batch")
    monkeypatch.setattr(gm, "DENSE_MAX", 2)
    np.testing.assert_allclose(graph(s, scope="batch"), dense, atol=1e-9)


# -- registry and options ----------------------------------------------------------------------------
def test_registered_and_options_checked():
    s = random_batch(1)
    for name in ("graph", "graphgpo", "gagpo"):
        out = advantages(name, s)
        assert out.dtype == np.float32 and out.shape == (s.n,)
        with pytest.raises(TypeError, match="has no option"):
            advantages(name, s, bogus=1)
    for bad in ({"key": "text"}, {"scope": "task"}, {"truncation": "drop"}, {"loops": "yes"}, {"gamma": 1.5},
                {"lam": -0.1}, {"shrink": -1.0}, {"backoff": -1.0}, {"episode": float("nan")}, {"level": 1}):
        with pytest.raises(ValueError):
            graph(s, **bad)
    with pytest.raises(TypeError):
        graph(s, time_aware="yes")
    for bad in ({"omega": 2.0}, {"norm": "std"}, {"key": "x"}, {"scale": float("inf")}):
        with pytest.raises(ValueError):
            graphgpo(s, **bad)
    for bad in ({"lam": 2.0}, {"norm": "z"}):
        with pytest.raises(ValueError):
            gagpo(s, **bad)


# -- bad input ---------------------------------------------------------------------------------------
def test_batch_without_the_chosen_key():
    s = random_batch(2, depth=1)  # history levels 0..1 only
    for fn in (graph, graphgpo, gagpo):
        with pytest.raises(StepArraysError, match="history_depth >= 3"):
            fn(s, key="history", level=3)
    # bootstrap without recorded final keys: documented fallback, value 0 after the cut (= truncation='zero')
    plain = random_batch(2)
    np.testing.assert_allclose(graph(plain, truncation="bootstrap"), graph(plain, truncation="zero"))


def test_nan_rewards_refused():
    with pytest.raises(StepArraysError, match="reward must be finite"):
        _steps([[(A, float("nan")), (B, 1.0)]])


def test_group_with_one_trajectory():
    s = _steps([[(A, 0.0), (B, 0.0), (C, 1.0)]])
    # its graph is its own path: the model reproduces the return exactly, TD credit 0 everywhere
    # (without shrinkage; with it, values lean toward the trajectory's mean return: finite, documented)
    np.testing.assert_allclose(graph(s, shrink=0), 0.0, atol=1e-12)
    assert np.all(np.isfinite(graph(s)))
    np.testing.assert_allclose(graphgpo(s), 0.0, atol=1e-12)  # one anchor each, one trajectory
    assert np.all(np.isfinite(gagpo(s)))
    one = _steps([[(A, 1.0)]])
    for fn in (graph, graphgpo, gagpo):
        assert np.all(np.isfinite(fn(one)))


def test_goalless_group_graphgpo_gives_zero_step_term():
    s = _steps([[(A, 0.0), (B, 0.0)], [(A, 0.0), (C, 0.0)], [(A, 0.0), (A, 0.0)]])
    d_cur, d_next = goal_distances(s)
    assert np.all(d_cur == 1) and np.all(d_next == 1)  # no goal: every node at distance 1
    np.testing.assert_array_equal(graphgpo(s), 0.0)
    # a goal-less group next to a successful one keeps its zeros
    s2 = _steps([[(A, 0.0), (B, 1.0)], [(A, 0.0), (C, 0.0)], [(A, 0.0), (B, 0.0)], [(A, 0.0), (C, 0.0)]],
                group=[0, 0, 1, 1])
    np.testing.assert_array_equal(graphgpo(s2)[4:], 0.0)


def test_gamma_one_closed_loop_is_a_named_error():
    # one trajectory A -> A ... truncated, bootstrapping to A: V(A) = V(A) has no unique solution
    s = StepArrays.from_lists(group_id=[0, 0], traj_id=[0, 0], t=[0, 1], reward=[0.0, 0.0], done=[False, True],
                              state_key=[A, A], obs_key=[A, A], terminated=[False, False],
                              final_state_key=[0, A])
    with pytest.raises(GraphSolveError, match="singular"):
        graph(s, gamma=1.0, truncation="bootstrap")
    assert np.all(graph(s, gamma=1.0, shrink=0) == 0.0)  # truncation='zero' always has an exit


def test_terminated_must_be_done():
    with pytest.raises(StepArraysError, match="terminated=True but done=False"):
        StepArrays.from_lists(group_id=[0, 0], traj_id=[0, 0], t=[0, 1], reward=[0.0, 0.0], done=[False, True],
                              state_key=[1, 2], obs_key=[1, 2], terminated=[True, True])


# -- truncation --------------------------------------------------------------------------------------
def test_truncated_row_bootstraps_to_the_recorded_state():
    # traj 0 reaches B and ends with r=1; traj 1 is cut off after A with B as the state reached
    s = StepArrays.from_lists(group_id=[0, 0, 0], traj_id=[0, 0, 1], t=[0, 1, 0], reward=[0.0, 1.0, 0.0],
                              done=[False, True, True], state_key=[A, B, A], obs_key=[A, B, A],
                              terminated=[False, True, False], final_state_key=[0, 0, B])
    g = 0.5
    zero = graph(s, gamma=g, shrink=0)  # V(A) = mean(.5 * 1, 0) = .25
    np.testing.assert_allclose(zero, [0.25, 0.0, -0.25])
    boot = graph(s, gamma=g, truncation="bootstrap", shrink=0)  # both A rows now lead to B: V(A) = .5
    np.testing.assert_allclose(boot, [0.0, 0.0, 0.0], atol=1e-12)


def test_solve_values_matches_dense_linear_solve():
    s = random_batch(7)
    from agentgym_credit.credit.graph import graph_nodes

    w, node, nxt, node_scope, _ = graph_nodes(s)
    r = s.reward[w.order]
    v = solve_values(node, nxt, r, w, node_scope, 0.9)
    m = len(node_scope)
    cnt = np.bincount(node, minlength=m)
    a = np.eye(m)
    b = np.bincount(node, weights=r, minlength=m) / np.maximum(cnt, 1)
    ok = nxt >= 0
    np.add.at(a, (node[ok], nxt[ok]), -0.9 / cnt[node[ok]])
    np.testing.assert_allclose(v, np.linalg.solve(a, b), atol=1e-10)
    assert walk(s).max_length == s.layout.max_length


# -- aliasing and consistency on synthetic tasks (exact models) ---------------------------------------
def simulate(model, n_traj, seed, horizon, group=0, traj0=0, policy=None):
    """Rollouts sampled from a TabularModel (uniform policy, or ``policy``'s state-based table): StepArrays plus
    per-row (state, action) indices."""
    rng = np.random.default_rng(seed)
    probs = None if policy is None else policy.probs_table(model, None)
    off = np.r_[0, np.cumsum([len(a) for a in model.actions])]
    obs_ids = {o: i + 1 for i, o in enumerate(dict.fromkeys(model.observations))}
    rows = {k: [] for k in ("group_id", "traj_id", "t", "reward", "done", "state_key", "obs_key", "terminated")}
    si, ai = [], []
    start = int(np.flatnonzero(model.initial)[0])
    for j in range(n_traj):
        s = start
        for t in range(horizon):
            acts = model.actions[s]
            if probs is None:
                a = int(rng.integers(len(acts)))
            else:
                p = probs[off[s]:off[s + 1]]
                a = int(rng.choice(len(p), p=p / p.sum()))
            outs = model.P[s][a]
            k = rng.choice(len(outs), p=[o[0] for o in outs]) if len(outs) > 1 else 0
            _, ns, r, term = outs[k]
            end = term or model.is_terminal(ns) or t + 1 == horizon
            for key, val in (("group_id", group), ("traj_id", traj0 + j), ("t", t), ("reward", r), ("done", end),
                             ("state_key", s + 1), ("obs_key", obs_ids[model.observations[s]]),
                             ("terminated", bool(term or model.is_terminal(ns)))):
                rows[key].append(val)
            si.append(s)
            ai.append(a)
            s = ns
            if end:
                break
    return StepArrays.from_lists(**rows), np.array(si), np.array(ai)


def test_aliasing_take_key_not_punished_on_obs_key():
    """AliasedGrid: "take key" is a self-loop of the observation graph. Plain TD(0) on obs_key gives it
    -(1 - gamma) V-hat (never > 0); loops='events' (the default on obs_key: the node remembers which
    observations the trajectory has looped at) and 'split' give it mostly the sign of the true A^pi,
    loops='mc' a positive mean."""
    from agentgym_credit.credit.oracle import evaluate_policy
    from agentgym_credit.credit.policies import UniformPolicy
    from agentgym_credit.envs.gridworld.aliased import AliasedGridEnv

    model = AliasedGridEnv(size=3, n_tasks=1, max_steps=30).model_for(0)
    gamma = 0.95
    truth = evaluate_policy(model, UniformPolicy(), gamma)
    parts = [simulate(model, 8, seed, 30, group=seed, traj0=8 * seed) for seed in range(100)]
    s = StepArrays.from_lists(**{k: np.concatenate([getattr(p[0], k) for p in parts])
                                 for k in ("group_id", "traj_id", "t", "reward", "done", "state_key", "obs_key",
                                           "terminated")})
    si = np.concatenate([p[1] for p in parts])
    ai = np.concatenate([p[2] for p in parts])
    true_a = truth.advantages_for_steps(si, ai, s.t)
    take = np.array([model.actions[x][y] == "take key" and model.state_keys[x].endswith("key=0")
                     for x, y in zip(si, ai)])
    assert take.sum() >= 100 and true_a[take].mean() > 0

    def sign_ok(a):
        return np.mean(np.sign(a[take]) == np.sign(true_a[take]))

    plain = graph(s, gamma=gamma, key="obs_key", loops="none", shrink=0, alias="none")
    assert np.all(plain[take] <= 1e-12) and sign_ok(plain) < 0.05  # the failure mode the option exists for
    split = graph(s, gamma=gamma, key="obs_key", loops="split", shrink=0, alias="none")
    assert split[take].mean() > 0 and sign_ok(split) > 0.55
    events = graph(s, gamma=gamma, key="obs_key", shrink=0, alias="none")
    np.testing.assert_array_equal(events, graph(s, gamma=gamma, key="obs_key", loops="events", backoff=0.0, shrink=0,
                                                  alias="none"))
    # the events node is (position, whether the trajectory has looped at the rack / at the door): the key
    # is known, so it is nearly as accurate as the true state (measured: "take key" sign 0.76 vs 0.85 on
    # state_key, 0.59 split; all-row Pearson 0.72 vs 0.74, 0.66 split)
    assert events[take].mean() > 0 and sign_ok(events) > 0.7 and sign_ok(events) > sign_ok(split) + 0.1
    r = {name: np.corrcoef(a, true_a)[0, 1] for name, a in (("events", events), ("split", split),
                                                         ("state", graph(s, gamma=gamma, shrink=0)))}
    assert r["events"] > r["split"] + 0.03 and r["events"] > r["state"] - 0.05
    assert sign_ok(graph(s, gamma=gamma, key="obs_key")) > 0.55  # every default
    assert graph(s, gamma=gamma, key="obs_key", loops="mc", shrink=0, alias="none")[take].mean() > 0
    # state keys see the change: no option needed there
    assert graph(s, gamma=gamma)[take].mean() > 0 and sign_ok(graph(s, gamma=gamma)) > 0.8


def test_graph_converges_to_td_with_true_values_on_a_stochastic_task():
    """GridWorld with slip 0.3 (stochastic transitions): graph(time_aware, TD(0)) -> r + g V(s') - V(s)
    with the exact finite-horizon V^pi as the number of rollouts in the group grows."""
    from agentgym_credit.credit.oracle import evaluate_policy
    from agentgym_credit.credit.policies import UniformPolicy
    from agentgym_credit.envs.gridworld.grid import GridWorldEnv

    H, gamma = 6, 0.9
    model = GridWorldEnv(size=3, wall_density=0.0, n_traps=1, slip=0.3, max_steps=H, n_tasks=1).model_for(0)
    truth = evaluate_policy(model, UniformPolicy(), gamma)
    errs = []
    for n in (16, 256, 4096):
        s, si, ai = simulate(model, n, 0, H)
        v = truth.V  # [H, states]
        t = s.t
        lay = s.layout
        nxt_s = np.full(s.n, -1)
        o = lay.order
        nxt_s[o[:-1]] = si[o[1:]]
        last = np.zeros(s.n, bool)
        last[o[lay.first + lay.lengths - 1]] = True
        v_next = np.where(last | (t + 1 >= H), 0.0, v[np.minimum(t + 1, H - 1), np.maximum(nxt_s, 0)])
        td_true = s.reward + gamma * v_next - v[t, si]
        est = graph(s, gamma=gamma, time_aware=True, shrink=0)
        errs.append(math.sqrt(np.mean((est - td_true) ** 2)))
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] < 0.25 * errs[0] and errs[2] < 0.03


# -- the state reached after a trajectory's last step (collector, RolloutBatch, StepArrays) ------------
def _grid_batch(max_steps):
    import random

    from agentgym_credit.wrappers import GroupedRolloutCollector

    rng = random.Random(0)
    c = GroupedRolloutCollector("credit/GridWorld-v0", group_size=6, max_steps=max_steps, progress=False,
                                env_kwargs={"size": 4, "n_tasks": 1})

    def policy(observations, infos):
        return [rng.choice(i["admissible_actions"]) for i in infos]

    return c.collect(policy, 3)


def test_collector_records_the_key_of_the_state_reached_after_the_last_step(tmp_path):
    from agentgym_credit.envs.gridworld.grid import GridWorldEnv
    from agentgym_credit.keys import stable_hash
    from agentgym_credit.wrappers.rollout_batch import RolloutBatch

    b = _grid_batch(4)
    assert b.traj.truncated.any()  # the step limit cut some trajectories off
    model = GridWorldEnv(size=4, n_tasks=1).model_for(0)
    last = np.r_[b.traj_id[1:] != b.traj_id[:-1], True]
    for i in np.flatnonzero(last):
        s = int(b.state_index[i])
        (_, ns, _, _), = model.P[s][model.action_index(s, b.action[i])]  # slip 0: one outcome
        j = b.traj_id[i]
        assert b.traj.final_state_key[j] == np.uint64(stable_hash(model.state_keys[ns]))
        assert b.traj.final_obs_key[j] != 0
    steps = b.steps
    np.testing.assert_array_equal(steps.terminated, b.terminated)
    np.testing.assert_array_equal(steps.final_state_key, b.traj.final_state_key[b.traj_id])
    # Parquet and concat keep the columns; an old file without them reads as 0 (unknown)
    b.save(tmp_path / "b.parquet")
    back = RolloutBatch.load(tmp_path / "b.parquet")
    assert back == b and back.traj.final_state_key.dtype == np.uint64
    both = RolloutBatch.concat([b, b])
    np.testing.assert_array_equal(both.traj.final_obs_key, np.r_[b.traj.final_obs_key, b.traj.final_obs_key])
    d = b.traj.to_dict()
    del d["final_state_key"], d["final_obs_key"]
    from agentgym_credit.wrappers.rollout_batch import TrajectoryTable

    assert np.all(TrajectoryTable(**d).final_state_key == 0)
    # graph on a truncated batch: bootstrapping reads the recorded states
    a_zero, a_boot = graph(steps), graph(steps, truncation="bootstrap")
    trunc_last = last & b.truncated
    assert np.all(np.isfinite(a_boot)) and not np.allclose(a_zero[trunc_last], a_boot[trunc_last])


def test_graphgpo_is_the_recipe_on_invalid_rows_and_lone_groups():
    """Issue 29: the recipe subtracts 0.1 from an invalid row's own step return and episode score, and a
    group with one member gets its own score / (1 + eps) as episode term; both defaults, held to the
    plain transcription on batches that have lone rows, lone trajectories and 20% invalid rows."""
    seen = {"row": 0, "traj": 0}
    for seed in range(40):
        s = random_batch(seed, n_groups=5, max_traj=3, max_len=3)
        gid, size = np.unique(s.group_id, return_counts=True)
        lone = np.isin(s.group_id, gid[size == 1])
        trajs = {g: len(set(s.traj_id[s.group_id == g].tolist())) for g in gid.tolist()}
        one_traj = np.array([trajs[g] == 1 for g in s.group_id.tolist()]) & ~lone
        for baseline in ("step", "trajectory"):
            got = graphgpo(s, episode_baseline=baseline)
            np.testing.assert_allclose(got, GRAPH_REFERENCES["graphgpo"](s, episode_baseline=baseline), atol=1e-8)
        if lone.any():
            seen["row"] += 1
            ret = np.array([s.reward[s.traj_id == j].sum() for j in s.traj_id])
            score = ret + np.where(s.valid, 0.0, -0.1)
            np.testing.assert_allclose(graphgpo(s)[lone], score[lone] / (1 + 1e-6), atol=1e-12)
            assert np.all(graphgpo(s, lone="zero")[lone] == 0.0)
        seen["traj"] += int(one_traj.any())
        old = graphgpo(s, invalid_penalty=0.0, lone="zero")
        if not s.valid.all():
            assert not np.allclose(graphgpo(s, lone="zero"), old)
    assert seen["row"] >= 3 and seen["traj"] >= 3


def test_fallback_credits_taking_what_later_nodes_cannot_show():
    """Issue 29: on a household whose text never says what is carried, every node after ``take <goal>``
    merges holding it with not holding it; with plain TD on obs_key the take gets about the credit of a
    random step (sign agreement with the true A^pi 0.40 here). alias='fallback' (the obs_key default)
    runs such rows' targets along their own trajectory where an edge continues unlike its node's other
    arrivals: the take's credit moves toward the truth on every task."""
    from agentgym_credit.credit.oracle import evaluate_policy
    from agentgym_credit.credit.policies import NoisyOptimalPolicy
    from agentgym_credit.envs.gridworld import HouseholdEnv

    env = HouseholdEnv(n_receptacles=4, n_tasks=4)
    gamma = 0.95
    signs = []
    for task in range(4):
        model = env.model_for(task)
        policy = NoisyOptimalPolicy(0.1, gamma)
        parts = [simulate(model, 8, 60 * task + g, 30, group=g, traj0=8 * g, policy=policy) for g in range(60)]
        s = StepArrays.from_lists(**{k: np.concatenate([getattr(p[0], k) for p in parts])
                                     for k in ("group_id", "traj_id", "t", "reward", "done", "state_key", "obs_key",
                                               "terminated")})
        si = np.concatenate([p[1] for p in parts])
        ai = np.concatenate([p[2] for p in parts])
        true_a = evaluate_policy(model, policy, gamma).advantages_for_steps(si, ai, s.t)
        tk = env.task(task)
        take = np.array([model.actions[x][y] == f"take {tk.objects[tk.target_object]} from {tk.receptacles[tk.start[0]]}"
                         for x, y in zip(si, ai)])
        assert take.sum() >= 100 and true_a[take].mean() > 0

        def sign_ok(a, take=take, true_a=true_a):
            return np.mean(np.sign(a[take]) == np.sign(true_a[take]))

        plain = graph(s, gamma=gamma, key="obs_key", alias="none")
        fb = graph(s, gamma=gamma, key="obs_key")
        np.testing.assert_array_equal(fb, graph(s, gamma=gamma, key="obs_key", alias="fallback", alias_z=0.5))
        assert fb[take].mean() > plain[take].mean() + 0.01 and sign_ok(fb) >= sign_ok(plain)
        signs.append((sign_ok(plain), sign_ok(fb), take.sum()))
        # a large threshold cuts nothing: plain TD again
        np.testing.assert_allclose(graph(s, gamma=gamma, key="obs_key", alias_z=1e9), plain, atol=1e-12)
    n = sum(k for *_, k in signs)
    pooled = [sum(x[j] * x[2] for x in signs) / n for j in (0, 1)]
    assert pooled[1] > pooled[0] + 0.06  # measured: 0.40 -> 0.53 (per task 0.38/0.32/0.44/0.43 -> 0.63/0.51/0.52/0.46)


def test_fallback_values_equal_the_exact_solve_with_cut_edges():
    """The cut edges' re-solve (chain folding, per-row landing) equals the plain transcription's dense solve
    over every node, on random batches with every key and scope."""
    for seed in range(4):
        s = _with_ends(random_batch(seed), seed)
        for opts in ({"alias": "fallback", "alias_z": 0.0}, {"alias": "fallback", "alias_z": 0.3, "scope": "batch"},
                     {"alias": "fallback", "key": "history", "level": 1, "lam": 0.5},
                     {"alias": "fallback", "alias_z": 0.0, "truncation": "bootstrap", "key": "obs_key", "loops": "mc"}):
            np.testing.assert_allclose(_graph(s, **opts), GRAPH_REFERENCES["graph"](s, **opts), atol=1e-6,
                                       err_msg=f"{opts} seed {seed}")


def test_large_scopes_are_solved_iteratively_to_the_exact_values(monkeypatch):
    """Issue 29: the dense solve costs (hubs per scope)^3; above DENSE_MAX hubs the values come from restarted
    GMRES on sparse products, stopped only when the residual bounds the error. Forcing every scope through
    it gives the dense (exact) values within 1e-6 on random batches, every key and option."""
    import agentgym_credit.credit.graph_model as gm

    cases = [(_with_ends(random_batch(seed, n_groups=2, max_traj=16, max_len=60), seed), opts)
             for seed in range(3) for opts in ({}, {"key": "obs_key"}, {"lam": 0.5, "scope": "batch", "shrink": 0.0},
                                               {"truncation": "bootstrap", "gamma": 0.99, "key": "obs_key"})]
    exact = [graph(s, **o) for s, o in cases]
    monkeypatch.setattr(gm, "DENSE_MAX", 0)
    for (s, o), want in zip(cases, exact):
        np.testing.assert_allclose(graph(s, **o), want, atol=1e-6, err_msg=str(o))


def test_solve_work_is_bounded_whatever_the_batch(monkeypatch):
    """Structural, not timed: on a Taxi-like batch (groups of 8 trajectories of ~200 steps over 500 states,
    hundreds of repeated nodes per group) no dense system is larger than DENSE_MAX, and the iterative part
    makes at most KRYLOV_DIM * MAX_CYCLES sparse products (each linear in the hub edges)."""
    import agentgym_credit.credit.graph_model as gm
    from agentgym_credit.bench.speed.credit_speed import synthetic_steps

    s = synthetic_steps(20_000, pool=500, revisit=1.0, mean_length=200)
    sizes, products = [], []
    real_solve, real_product = np.linalg.solve, gm._product

    def solve(a, b):
        sizes.append(a.shape[-1])
        return real_solve(a, b)

    def product(*args):
        products.append(1)
        return real_product(*args)

    monkeypatch.setattr(gm.np.linalg, "solve", solve)
    monkeypatch.setattr(gm, "_product", product)
    for opts in ({}, {"key": "obs_key"}):
        products.clear()
        assert np.all(np.isfinite(graph(s, **opts)))
        solves = 2 if opts else 1  # obs_key: the fallback's second solve
        assert 1 <= len(products) <= solves * (gm.KRYLOV_DIM + 1) * gm.MAX_CYCLES
    graph(synthetic_steps(5_000), key="obs_key")  # the benchmark's usual batch: small scopes, solved densely
    assert sizes and max(sizes) <= gm.DENSE_MAX
