"""``tree`` with Tree-GRPO's conventions equals a plain transcription of Tree-GRPO's code.

Source: AMAP-ML/Tree-GRPO@90b170995d996d772d68117e0c7bd0b8fe00d393 (``ray_trainer_ts.py``
``compute_advantage`` 'tree', ``core_algos.py`` ``compute_grpo_outcome_advantage``; see
tests/reference_tree_grpo.py). Their conventions are ``single_leaf="unit", prefix="sum"`` with our
default ``norm="mean_std", std="sample", eps=1e-6``. Our defaults differ in two documented ways:

- ``prefix="mean"``: a row on the paths of n leaves gets 1/n of what Tree-GRPO trains it with;
- ``single_leaf="zero"``: a one-leaf tree gets no intra-tree term (theirs: R / (1 + eps)), and a
  one-leaf group no inter-tree term (theirs: R / (1 + eps) again).
"""

from __future__ import annotations

import numpy as np
import pytest
from reference_estimators import random_batch
from reference_tree_grpo import random_tree_steps, tree_grpo_advantages
from test_collector_envs import hash_policy

from agentgym_credit.credit.tree import TreeSteps, tree

THEIRS = {"single_leaf": "unit", "prefix": "sum"}
SEEDS = range(12)


def _theirs(steps, eps=1e-6):
    got, samples = tree_grpo_advantages(steps, eps, samples=True)
    return np.asarray(got), samples


def _per_row(steps, samples, value):
    """Sum over the samples holding each row of value(sample), and how many samples hold it."""
    total, count = np.zeros(steps.n), np.zeros(steps.n)
    for s in samples:
        total[s["rows"]] += value(s)
        count[s["rows"]] += 1
    return total, count


def _alone(samples, key):
    """Samples that are the only one of their ``key`` (their ``tree`` or their ``group``)."""
    n: dict = {}
    for s in samples:
        n[s[key]] = n.get(s[key], 0) + 1
    return {id(s) for s in samples if n[s[key]] == 1}


def test_transcription_by_hand():
    """Root 0 (return 1), root 1 (return 1, alone in its tree), branch 2 from row 1 of root 0 (return 0)."""
    steps = TreeSteps(group_id=[0] * 7, traj_id=[0, 0, 0, 1, 1, 2, 2], t=[0, 1, 2, 0, 1, 0, 1],
                      reward=[0, 0, 1, 0, 1, 0, 0], done=[False, False, True, False, True, False, True],
                      state_key=[1, 2, 3, 1, 4, 2, 5], obs_key=[1, 2, 3, 1, 4, 2, 5], parent=[-1] * 5 + [0, 0],
                      branch_t=[0] * 5 + [1, 1], root=[0, 0, 0, 1, 1, 0, 0], prefix_return=[0.0] * 7)
    eps = 1e-6
    sd_group, sd_tree = np.std([1, 1, 0], ddof=1), np.std([1, 0], ddof=1)
    inter = (np.array([1.0, 1.0, 0.0]) - 2 / 3) / (sd_group + eps)
    intra = np.array([0.5 / (sd_tree + eps), 1 / (1 + eps), -0.5 / (sd_tree + eps)])  # leaf 1: mean 0, std 1
    a = inter + intra
    want = [a[0] + a[2], a[0], a[0], a[1], a[1], a[2], a[2]]  # row 0 of root 0 is on leaves 0 and 2
    got, samples = _theirs(steps)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert [s["rows"] for s in samples] == [[0, 1, 2], [3, 4], [0, 5, 6]]
    np.testing.assert_allclose(tree(steps, **THEIRS), want, rtol=0, atol=1e-12)
    # our defaults: row 0 gets the mean of its two leaves, and leaf 1 no intra-tree term
    d = inter + intra * np.array([1, 0, 1])
    np.testing.assert_allclose(tree(steps), [(d[0] + d[2]) / 2, d[0], d[0], d[1], d[1], d[2], d[2]], atol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_tree_grpo_options_equal_the_transcription_on_random_trees(seed):
    steps = random_tree_steps(seed)
    want, samples = _theirs(steps)
    assert np.max(np.abs(tree(steps, **THEIRS) - want)) <= 1e-6
    for eps in (0.1, 1.0):  # our eps is their epsilon (std + eps; a lone leaf: R / (1 + eps))
        assert np.max(np.abs(tree(steps, **THEIRS, eps=eps) - _theirs(steps, eps)[0])) <= 1e-6


def test_the_random_trees_hold_what_the_conventions_are_about():
    shared = lone_tree = lone_group = branched_twice = 0
    for seed in SEEDS:
        steps = random_tree_steps(seed)
        _, samples = _theirs(steps)
        _, count = _per_row(steps, samples, lambda s: 0.0)
        shared += int(np.sum(count >= 2))
        lone_tree += len(_alone(samples, "tree"))
        lone_group += len(_alone(samples, "group"))
        branched_twice += int(np.any(np.isin(steps.parent, steps.traj_id[steps.parent >= 0])))
    assert shared and lone_tree and lone_group and branched_twice


def test_flat_batches_are_one_leaf_trees():
    """Without tree columns every trajectory is its own tree: theirs adds R / (1 + eps) to GRPO."""
    for seed in range(4):
        steps = random_batch(seed, n_groups=3, max_traj=6, max_len=8, p_invalid=0.0)
        want, _ = _theirs(steps)
        assert np.max(np.abs(tree(steps, **THEIRS) - want)) <= 1e-6


def test_collected_trees_equal_the_transcription():
    """A tree grown by branching collection (branches of branches, rewards on the shared prefix)."""
    import agentgym_credit  # noqa: F401  (registers the envs)
    from agentgym_credit.wrappers import GroupedRolloutCollector
    from agentgym_credit.wrappers.branching import BranchConfig

    cfg = BranchConfig(budget_trajectories=4.0, max_depth=3, factor=2, width=3, rule="uncertainty", seed=0)
    col = GroupedRolloutCollector("credit/GridWorld-v0", group_size=2, progress=False, max_steps=20, seed=0,
                                  env_kwargs={"size": 5, "n_tasks": 4, "max_steps": 30, "step_cost": 0.05,
                                              "slip": 0.2})
    steps = col.collect(hash_policy, tasks=[0, 1, 2], branch=cfg).steps
    assert isinstance(steps, TreeSteps) and np.any(steps.prefix_return != 0)
    want, _ = _theirs(steps)
    assert np.max(np.abs(tree(steps, **THEIRS) - want)) <= 1e-6


@pytest.mark.parametrize("seed", SEEDS)
def test_our_defaults_differ_where_documented(seed):
    steps = random_tree_steps(seed)
    want, samples = _theirs(steps)
    lone_tree, lone_group = _alone(samples, "tree"), _alone(samples, "group")
    _, count = _per_row(steps, samples, lambda s: 0.0)
    # prefix="mean": 1/n of Tree-GRPO's value on a row of n leaves, the same on a row of one leaf
    assert np.max(np.abs(tree(steps) - want)) > 1e-3
    mean_rows = tree(steps, single_leaf="unit", prefix="mean")
    assert np.max(np.abs(mean_rows * count - want)) <= 1e-6
    # single_leaf="zero": without the lone leaf's terms (mean 0, std 1 in their helper)
    lone = _per_row(steps, samples, lambda s: (s["intra"] if id(s) in lone_tree else 0.0)
                    + (s["inter"] if id(s) in lone_group else 0.0))[0]
    assert np.max(np.abs(tree(steps, prefix="sum") - (want - lone))) <= 1e-6
    assert np.max(np.abs(tree(steps) - (want - lone) / count)) <= 1e-6  # both defaults
    # single_leaf="return" (an earlier reading): R exactly for a lone tree, nothing for a lone group
    eps = 1e-6
    ret = _per_row(steps, samples, lambda s: (s["score"] * eps / (1 + eps) if id(s) in lone_tree else 0.0)
                   - (s["inter"] if id(s) in lone_group else 0.0))[0]
    assert np.max(np.abs(tree(steps, single_leaf="return", prefix="sum") - (want + ret))) <= 1e-6
