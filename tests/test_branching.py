"""Branching collection (``collect(..., branch=BranchConfig(...))``), tree columns of RolloutBatch,
and the estimators on rollout trees (root-to-leaf episode term, the ``tree`` estimator)."""

from __future__ import annotations

import numpy as np
import pytest
from test_collector import assert_same_batch
from test_collector_envs import ChainEnv, chain_policy, hash_policy

import agentgym_credit  # noqa: F401
from agentgym_credit.credit import advantages
from agentgym_credit.credit.returns import trajectory_returns
from agentgym_credit.credit.tree import TreeSteps, tree, tree_roots
from agentgym_credit.envs.gridworld.grid import GridWorldEnv
from agentgym_credit.keys import stable_hash
from agentgym_credit.wrappers import GroupedRolloutCollector, RolloutBatch
from agentgym_credit.wrappers.branching import BranchConfig, select_nodes

GRID = {"size": 5, "n_tasks": 4, "max_steps": 30}


def state_policy(obs, infos):
    """Deterministic in (observation, env step): a branch that restores a state repeats its parent."""
    return [i["admissible_actions"][stable_hash(f"{o}|{i['rollout']['t']}") % len(i["admissible_actions"])]
            for o, i in zip(obs, infos)]


def _branched(env="credit/Household-v0", n=2, tasks=(0, 1), backend="sync", cfg=None, policy=hash_policy, **kw):
    col = GroupedRolloutCollector(env, group_size=n, backend=backend, progress=False, max_steps=kw.pop("max_steps", 25),
                                  seed=3, **kw)
    try:
        return col.collect(policy, tasks=list(tasks), branch=cfg or BranchConfig(budget_trajectories=2.0))
    finally:
        col.close()


def _rows(batch: RolloutBatch, j: int) -> np.ndarray:
    return np.flatnonzero(batch.traj_id == j)


def test_branches_start_from_the_parents_true_state_and_history():
    b = _branched(history_depth=3)
    tt = b.traj
    assert b.consistency_problem() is None
    branches = np.flatnonzero(tt.parent >= 0)
    assert len(branches) >= 2 and np.all(tt.parent[branches] < branches)
    for j in branches:
        p, bt = int(tt.parent[j]), int(tt.branch_t[j])
        first, at = _rows(b, j)[0], _rows(b, p)[bt]
        assert b.group_id[first] == b.group_id[at]
        assert b.state_key[first] == b.state_key[at] and b.observation[first] == b.observation[at]
        # the history window travelled with the snapshot: the same contexts at every level
        assert np.array_equal(b.history_keys[first], b.history_keys[at])
        assert tt.copy[j] >= 2  # copies 0..N-1 are the roots
    m = b.meta["branch"]
    assert m["branches"] == len(branches) and m["branch_steps"] == int(tt.length[branches].sum())
    assert m["branch_steps"] >= m["budget_steps"] > 0


def test_a_branch_with_the_same_actions_repeats_its_parent():
    """Deterministic env and policy: a branch restored at row t reproduces the parent's rows t, t+1, ..."""
    b = _branched("credit/GridWorld-v0", n=2, tasks=(0, 1, 2), policy=state_policy, env_kwargs=GRID)
    tt = b.traj
    for j in np.flatnonzero(tt.parent >= 0):
        mine, theirs = _rows(b, j), _rows(b, int(tt.parent[j]))[int(tt.branch_t[j]):]
        assert len(mine) == len(theirs)
        for name in ("state_key", "reward", "done", "history_keys"):
            assert np.array_equal(getattr(b, name)[mine], getattr(b, name)[theirs]), name
        assert [b.action[i] for i in mine] == [b.action[i] for i in theirs]


def test_step_limit_counts_the_prefix():
    b = _branched("credit/GridWorld-v0", tasks=(0, 1), env_kwargs={**GRID, "max_steps": 200}, max_steps=12,
                  policy=hash_policy)
    start = np.zeros(b.num_trajectories, dtype=np.int64)
    for j in range(b.num_trajectories):
        if b.traj.parent[j] >= 0:
            start[j] = start[b.traj.parent[j]] + b.traj.branch_t[j]
    assert np.all(start + b.traj.length <= 12)
    assert np.any(b.traj.parent >= 0)


def test_subprocess_backend_restores_snapshots_across_processes():
    """Snapshots travel as bytes: a branch restored on another worker process gives the same batch as sync."""
    cfg = BranchConfig(budget_trajectories=1.5, rule="singleton", width=3)
    a = _branched(cfg=cfg, history_depth=2)
    b = _branched(cfg=cfg, history_depth=2, backend="subprocess", num_workers=2)
    assert np.any(b.traj.parent >= 0)
    assert_same_batch(a, b)  # slot s lives on worker s % 2: branches restore snapshots taken by the other one


def test_ray_backend_branches_like_sync(ray_cluster):
    cfg = BranchConfig(budget_trajectories=1.0, rule="uncertainty")
    a = _branched(cfg=cfg, tasks=(0,))
    b = _branched(cfg=cfg, tasks=(0,), backend="ray", num_workers=2, ray_options={"num_cpus": 0.5})
    assert_same_batch(a, b)


def test_env_without_snapshots_is_a_clear_error():
    col = GroupedRolloutCollector(ChainEnv, group_size=2, max_steps=4, progress=False)
    with pytest.raises(RuntimeError, match="needs env snapshots.*does not support get_state"):
        col.collect(chain_policy, tasks=1, branch=BranchConfig(budget_steps=4))


@pytest.mark.parametrize("kw,err", [({"rule": "best"}, ValueError), ({"factor": 0}, ValueError),
                                    ({"budget_steps": -1}, ValueError), ({"width": 1.5}, TypeError),
                                    ({"budget_trajectories": float("nan")}, ValueError),
                                    ({"anchor": "history"}, ValueError)])
def test_branch_config_is_checked(kw, err):
    with pytest.raises(err):
        BranchConfig(**kw)
    with pytest.raises(TypeError, match="BranchConfig"):
        GroupedRolloutCollector("credit/GridWorld-v0", progress=False).collect(hash_policy, branch={"rule": "uniform"})


def test_factor_and_depth_limits():
    cfg = BranchConfig(budget_trajectories=6.0, factor=1, max_depth=2, width=8, rule="uniform")
    b = _branched("credit/GridWorld-v0", tasks=(0,), cfg=cfg, env_kwargs=GRID, policy=hash_policy)
    tt = b.traj
    nodes = list(zip(tt.parent[tt.parent >= 0].tolist(), tt.branch_t[tt.parent >= 0].tolist()))
    assert len(nodes) == len(set(nodes))  # factor=1: one branch per node
    depth = np.zeros(len(tt), dtype=int)
    for j in np.flatnonzero(tt.parent >= 0):
        depth[j] = depth[tt.parent[j]] + 1
    assert depth.max() <= 2
    one = _branched("credit/GridWorld-v0", tasks=(0,), env_kwargs=GRID, policy=hash_policy,
                    cfg=BranchConfig(budget_trajectories=6.0, max_depth=1, width=8))
    assert np.all(one.traj.parent[one.traj.parent >= 0] < 2)  # branches only from the two roots


def test_selection_rules():
    rng = np.random.default_rng(0)
    anchor = np.array([1, 1, 2, 3, 3, 3, 4], dtype=np.uint64)
    ret = np.array([0.0, 1.0, 0.5, 0.2, 0.2, 0.2, 0.9])
    cand = np.arange(7)
    assert set(select_nodes("singleton", rng, 2, cand, anchor, ret).tolist()) == {2, 6}
    got = select_nodes("singleton", rng, 4, cand, anchor, ret).tolist()
    assert set(got[:2]) == {2, 6} and len(set(got)) == 4  # then any other candidates
    # uncertainty of the anchor group's mean: the pair whose returns disagree (0 vs 1) first, then the
    # singletons (only the pooled variance), the triple whose returns agree last
    order = select_nodes("uncertainty", rng, 7, cand, anchor, ret).tolist()
    assert set(order[:2]) == {0, 1} and set(order[2:4]) == {2, 6} and set(order[4:]) == {3, 4, 5}
    assert sorted(select_nodes("uniform", rng, 7, cand, anchor, ret).tolist()) == list(range(7))
    assert len(select_nodes("uniform", rng, 3, np.array([4]), anchor, ret)) == 1


def test_episode_term_uses_root_to_leaf_returns():
    """With a step cost the prefix has rewards; a branch's R(tau) includes them (prefix + own)."""
    b = _branched("credit/GridWorld-v0", tasks=(0, 1), env_kwargs={**GRID, "step_cost": 0.1}, policy=hash_policy)
    tt = b.traj
    j = int(np.flatnonzero(tt.parent >= 0)[0])
    p, bt = int(tt.parent[j]), int(tt.branch_t[j])
    assert tt.prefix_return[j] == pytest.approx(b.reward[_rows(b, p)[:bt]].sum()) and tt.prefix_return[j] < 0
    steps = b.steps
    assert isinstance(steps, TreeSteps)
    leaf = trajectory_returns(steps)
    assert np.allclose(leaf, tt.prefix_return + tt.ret)
    grpo = advantages("grpo", steps)
    g = tt.group_id[j]
    vals = leaf[tt.group_id == g]
    expected = (leaf[j] - vals.mean()) / (vals.std(ddof=1) + 1e-6)
    assert grpo[_rows(b, j)[0]] == pytest.approx(expected, rel=1e-5)
    # anchor groups include branch rows: the branch's first row shares its parent's state
    a_s = advantages("gigpo", steps, omega=1.0) - grpo
    assert np.isfinite(a_s).all()


def test_tree_columns_survive_save_load_and_concat(tmp_path):
    pytest.importorskip("pyarrow")
    b = _branched("credit/GridWorld-v0", tasks=(0,), env_kwargs=GRID)
    path = tmp_path / "tree.parquet"
    b.save(path)
    c = RolloutBatch.load(path)
    assert np.array_equal(c.traj.parent, b.traj.parent) and np.array_equal(c.traj.branch_t, b.traj.branch_t)
    both = RolloutBatch.concat([b, c])
    k = b.num_trajectories
    assert np.array_equal(both.traj.parent[k:], np.where(b.traj.parent >= 0, b.traj.parent + k, -1))
    assert isinstance(both.steps, TreeSteps)


def test_tree_estimator_by_hand():
    """One group: root 0 (return 1), root 1 (return 0), branch 2 from row 1 of root 0 (return 0)."""
    steps = TreeSteps(group_id=[0] * 7, traj_id=[0, 0, 0, 1, 1, 2, 2], t=[0, 1, 2, 0, 1, 0, 1],
                      reward=[0, 0, 1, 0, 0, 0, 0], done=[False, False, True, False, True, False, True], state_key=[1, 2, 3, 1, 4, 2, 5],
                      obs_key=[1, 2, 3, 1, 4, 2, 5], parent=[-1] * 5 + [0, 0], branch_t=[0] * 5 + [1, 1],
                      root=[0, 0, 0, 1, 1, 0, 0], prefix_return=[0.0] * 7)
    got = tree(steps, norm="mean")
    inter = np.array([1, 0, 0]) - 1 / 3  # leaves 0, 1, 2 against the group
    intra = np.array([0.5, 0.0, -0.5])  # leaves 0 and 2 share tree 0; leaf 1 is alone in its tree
    a = inter + intra
    row0 = (a[0] + a[2]) / 2  # row 0 of root 0 lies on the paths of leaves 0 and 2 (branch at t=1)
    assert np.allclose(got, [row0, a[0], a[0], a[1], a[1], a[2], a[2]])


def test_tree_is_grpo_without_branches():
    b = GroupedRolloutCollector("credit/GridWorld-v0", group_size=4, progress=False, env_kwargs=GRID,
                                max_steps=20).collect(hash_policy, tasks=[0, 1, 2])
    assert not isinstance(b.steps, TreeSteps)
    assert np.allclose(advantages("tree", b.steps), advantages("grpo", b.steps))


def test_tree_steps_refuse_bad_columns():
    base = dict(group_id=[0, 0], traj_id=[0, 0], t=[0, 1], reward=[0.0, 1.0], done=[False, True],
                state_key=[1, 2], obs_key=[1, 2])
    with pytest.raises(ValueError, match="same on every row"):
        TreeSteps(**base, parent=[-1, 0], branch_t=[0, 0], root=[0, 0], prefix_return=[0.0, 0.0])
    with pytest.raises(ValueError, match="one value per row"):
        TreeSteps(**base, parent=[-1], branch_t=[0, 0], root=[0, 0], prefix_return=[0.0, 0.0])
    with pytest.raises(ValueError, match="finite"):
        TreeSteps(**base, parent=[-1, -1], branch_t=[0, 0], root=[0, 0], prefix_return=[np.nan, np.nan])
    with pytest.raises(ValueError, match="earlier trajectory"):
        tree_roots(np.array([-1, 2, -1]))


@pytest.mark.parametrize("seed", [0, 1])
def test_tree_matches_the_plain_python_reference_on_collected_trees(seed):
    from reference_estimators import ref_tree

    cfg = BranchConfig(budget_trajectories=4.0, max_depth=3, factor=2, width=3, rule="uncertainty", seed=seed)
    col = GroupedRolloutCollector("credit/GridWorld-v0", group_size=2, progress=False, max_steps=20, seed=seed,
                                  env_kwargs={**GRID, "step_cost": 0.05, "slip": 0.2})
    b = col.collect(hash_policy, tasks=[0, 1, 2], branch=cfg)
    assert b.traj.parent.max() >= 2  # branches of branches
    steps = b.steps
    for opts in ({}, {"norm": "mean", "intra": False}, {"inter": False, "std": "population"},
                 {"single_leaf": "return", "prefix": "sum"}, {"prefix": "sum", "norm": "mean"}):
        np.testing.assert_allclose(tree(steps, **opts), ref_tree(steps, **opts), rtol=1e-7, atol=1e-7)


class BrokenRestoreGrid(GridWorldEnv):
    """GridWorld whose restore raises for snapshots taken after step 3 (an engine that cannot restore some states)."""

    def _restore_snapshot(self, payload):
        if payload["t"] > 3:
            raise RuntimeError("engine cannot restore this state")
        return super()._restore_snapshot(payload)


def _broken_factory():
    return BrokenRestoreGrid(**GRID)


class NeverRestoreGrid(GridWorldEnv):
    def _restore_snapshot(self, payload):
        raise RuntimeError("engine cannot restore")


def _never_factory():
    return NeverRestoreGrid(**GRID)


def test_a_failed_restore_fails_only_its_branch():
    col = GroupedRolloutCollector(_broken_factory, group_size=2, progress=False, max_steps=20, seed=1)
    with pytest.warns(UserWarning, match="trajectories failed"):
        b = col.collect(hash_policy, tasks=[0, 1, 2], branch=BranchConfig(budget_trajectories=4.0, width=4))
    tt = b.traj
    bad = tt.failed & (tt.parent >= 0)
    assert bad.any() and not tt.failed[tt.parent < 0].any()
    assert all("restore failed" in e and "cannot restore" in e for e in np.array(tt.error)[bad])
    ok = (tt.parent >= 0) & ~tt.failed
    assert ok.any() and np.all(tt.branch_t[ok] <= 3)
    assert b.consistency_problem() is None and np.isfinite(advantages("gigpo", b.steps)).all()


def test_an_env_that_never_restores_does_not_loop():
    """Every restore fails: each failed branch costs a step of the budget, so the collect ends."""
    col = GroupedRolloutCollector(_never_factory, group_size=2, progress=False, max_steps=20, seed=1)
    with pytest.warns(UserWarning, match="trajectories failed"):
        b = col.collect(hash_policy, tasks=[0], branch=BranchConfig(budget_steps=30, width=4))
    branches = b.traj.parent >= 0
    assert branches.any() and b.traj.failed[branches].all() and branches.sum() <= 30 + 4


def test_pooled_budget_goes_where_returns_disagree():
    """pool=True: the summed budget is spent on the best nodes of any group; under "uncertainty" a group
    whose returns all agree gets nothing while another has disagreement to resolve."""
    cfg = BranchConfig(budget_trajectories=2.0, rule="uncertainty", pool=True, width=2)
    col = GroupedRolloutCollector("credit/GridWorld-v0", group_size=2, progress=False, max_steps=20, seed=0,
                                  env_kwargs={**GRID, "slip": 0.2})
    b = col.collect(hash_policy, tasks=[0, 1, 2, 3, 0, 1], branch=cfg)
    m = b.meta["branch"]
    assert 0.8 * m["budget_steps"] <= m["branch_steps"] <= 1.5 * m["budget_steps"]
    tt = b.traj
    per_group = np.bincount(tt.group_id[tt.parent >= 0], minlength=6)
    roots = tt.parent < 0
    agree = [g for g in range(6) if np.ptp(tt.ret[roots & (tt.group_id == g)]) == 0
             and np.ptp(b.reward[b.group_id == g]) == 0]
    if agree and len(agree) < 6:
        assert per_group[agree].sum() <= per_group.sum() / 2
    with pytest.raises(TypeError, match="pool"):
        BranchConfig(pool=1)


@pytest.mark.parametrize("env_id", ["credit/ALFWorld-v0", "credit/WebShop-v0"])
def test_branching_on_the_real_engines(env_id):
    """ALFWorld (fast engine) and WebShop snapshot too: a branch starts in its parent's state and history."""
    import gymnasium as gym

    try:
        gym.make(env_id).close()
    except ImportError as e:  # DependencyNotInstalled is an ImportError
        pytest.skip(f"{env_id} needs its extra: {e}")
    col = GroupedRolloutCollector(env_id, group_size=2, progress=False, max_steps=8, seed=0, history_depth=2)
    try:
        b = col.collect(hash_policy, tasks=[0], branch=BranchConfig(budget_trajectories=1.0, width=2))
    finally:
        col.close()
    tt = b.traj
    assert (tt.parent >= 0).any() and not tt.failed.any()
    for j in np.flatnonzero(tt.parent >= 0):
        first, at = _rows(b, j)[0], _rows(b, int(tt.parent[j]))[int(tt.branch_t[j])]
        assert b.state_key[first] == b.state_key[at] and b.observation[first] == b.observation[at]
        assert np.array_equal(b.history_keys[first], b.history_keys[at])
