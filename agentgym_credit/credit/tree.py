"""Rollout trees for the estimators: branch rows, and Tree-GRPO's tree advantage.

What lives here:

- :class:`TreeSteps`: :class:`~agentgym_credit.credit.steps.StepArrays` plus, per row, the tree its
  trajectory belongs to (what ``RolloutBatch.to_steps`` gives for a batch collected with branches);
- :func:`tree_roots`: the root trajectory of every trajectory, from the parent column;
- :func:`tree`: Tree-GRPO's advantage (arXiv 2509.21240), registered as ``"tree"``.

**A tree in the step arrays.** A branch is a trajectory of its own in its group. It started from the
state in which row ``branch_t`` of its ``parent`` trajectory acted, and its rows are what it did from
there (its ``t`` counts from 0 at the branch point), so every env step is one row. Row ``t`` of
trajectory ``j`` lies on the root-to-leaf path of ``j`` itself and of every branch (and the branches
of those) that left ``j`` after it, i.e. with ``branch_t > t``.

**How the other estimators read a tree.** Branch rows are ordinary rows of their group: GiGPO's
anchor groups (``state_key``/``obs_key``) and HGPO's history-context groups include them (a branch's
``history_keys`` are the true ones: the history window travels with the snapshot). A step-level
return R_t sums a trajectory's own rewards from t on, which for a branch row is the branch's suffix.
The **episode-level term uses whole root-to-leaf returns**: every trajectory (a root or a branch) is
one leaf, with R(leaf) = ``prefix_return`` (the rewards of its shared prefix, root to branch point)
+ the sum of its own rewards (:func:`~agentgym_credit.credit.returns.trajectory_returns` adds the
prefix); with ``episode_baseline="trajectory"`` the group's mean/std are taken over its leaves, and
every row of a trajectory gets its leaf's A^E (a shared prefix row is counted once, on the
trajectory that recorded it). With ``episode_baseline="step"`` every recorded row enters once.

**Tree-GRPO** (:func:`tree`; our reading of the paper's intra-/inter-tree advantages). For each leaf
L with return R(L), A(L) = (R(L) - mean over the leaves of its tree) / F_norm (intra-tree) +
(R(L) - mean over all leaves of its group) / F_norm (inter-tree), each 0 for equal returns and, by
default, for a single leaf (``intra``/``inter`` switch either off). A row gets the mean of A(L) over
the leaves whose path passes through it, so a prefix shared by a winning and a losing branch gets
their average and the rows after a branch point are told apart by their own leaves. On a batch without branches each
tree is one leaf, the intra term is 0 (by default), and ``tree`` is GRPO.

**Conventions** (options; the defaults are this project's reading above). Tree-GRPO's own code,
AMAP-ML/Tree-GRPO@90b170995d996d772d68117e0c7bd0b8fe00d393, is ``norm="mean_std"``,
``std="sample"``, ``eps=1e-6``, ``intra=inter=True``, ``single_leaf="unit"``, ``prefix="sum"``
(checked against a plain transcription of it, tests/reference_tree_grpo.py). There
(``verl/trainer/ppo/ray_trainer_ts.py`` ``compute_advantage``, ``adv_estimator == 'tree'``, lines
168-189, the estimator its ``train_*_tree_search.sh`` scripts select) A(L) is the sum of two calls
of ``compute_grpo_outcome_advantage`` (``verl/trainer/ppo/core_algos.py`` lines 111-155), one
grouped by prompt (``uid``: all leaves of the group), one by ``tree_uid``: (R - mean) / (sample
std + 1e-6), where a group of ONE sample gets mean 0 and std 1 (lines 143-145). Each leaf is one
training sample holding its whole root-to-leaf response (``search_r1/llm_agent/generation_ts.py``
lines 627-641; ``reward_mode=base``: the leaf's outcome score on its last token,
``search_r1/llm_agent/tree_node.py`` lines 254-257), and every token of it gets A(L); with verl's
``token-mean`` loss a shared prefix token is trained once per leaf below it, i.e. with the sum of
their A(L) (up to the batch's token count, a constant per batch).

- ``single_leaf="zero"`` (default): a tree with one leaf has intra-tree advantage 0 (no baseline to
  compare with), and so does a group with one leaf in its inter-tree term;
- ``"unit"`` (Tree-GRPO's code): a group of one leaf is scored against mean 0 and std 1, in both
  terms: a one-leaf tree's A_intra(L) = R(L) / (1 + eps) (R(L) with ``norm="mean"``), and when that
  leaf is also alone in its group, its A_inter(L) is the same again;
- ``"return"``: a one-leaf tree's A_intra(L) = R(L) exactly (a baseline of 0, no normalization); the
  inter term of a one-leaf group stays 0. An earlier outside reading of the paper, not the code:
  it differs from ``"unit"`` by R(L) eps / (1 + eps) on one-leaf trees and by the inter term on
  one-leaf groups;
- ``prefix="mean"`` (default): a row carries the mean of A(L) over the leaves through it (its scale
  does not grow with the number of leaves below); ``"sum"`` (Tree-GRPO's code): the sum over those
  leaves, so a shared prefix weighs as much as all its leaves together (a row with one leaf gets the
  same either way).

Where our defaults differ from Tree-GRPO's: a row shared by n leaves gets 1/n of their sum, and a
one-leaf tree (e.g. every trajectory of a batch without branches, where the default is GRPO) gets no
intra-tree term. Tree-GRPO's variants ``tree_2norm``, ``tree_inner`` and ``tree_per_token`` (same
file) are not offered.
"""

from __future__ import annotations

import numpy as np

from agentgym_credit.credit import checks
from agentgym_credit.credit.grouping import NORMS, STDS, normalized_deviation, pair_groups
from agentgym_credit.credit.returns import trajectory_returns
from agentgym_credit.credit.steps import StepArrays
from agentgym_credit.errors import StepArraysError

TREE_FIELDS = ("parent", "branch_t", "root", "prefix_return")
SINGLE_LEAF = ("zero", "unit", "return")
PREFIX = ("mean", "sum")


class TreeSteps(StepArrays):
    """:class:`StepArrays` with the rollout tree, one value per row (constant within a trajectory):
    ``parent`` (int64, trajectory id of the trajectory this one branched from, -1 for a root),
    ``branch_t`` (int64, the parent's row t whose state it started from; 0 for a root), ``root``
    (int64, trajectory id of the tree's root) and ``prefix_return`` (float64, the rewards of the
    root-to-branch-point prefix; 0 for a root). ``select`` returns plain :class:`StepArrays`.
    """

    def __init__(self, *, parent, branch_t, root, prefix_return, **columns):
        super().__init__(**columns)
        n = self.n
        vals = {"parent": np.asarray(parent), "branch_t": np.asarray(branch_t), "root": np.asarray(root),
                "prefix_return": np.asarray(prefix_return, dtype=np.float64)}
        for name, a in vals.items():
            if a.shape != (n,):
                raise StepArraysError(f"{name} must have one value per row ({n}), got shape {a.shape}")
            if name != "prefix_return":
                if a.dtype.kind not in "iu":
                    raise StepArraysError(f"{name} must hold integers, got dtype {a.dtype}")
                vals[name] = a.astype(np.int64)
        if not np.all(np.isfinite(vals["prefix_return"])):
            raise StepArraysError("prefix_return must be finite")
        if n and np.any(vals["branch_t"] < 0):
            raise StepArraysError("branch_t must be >= 0")
        lay = self.layout
        for name, a in vals.items():
            srt = a[lay.order]
            if n and np.any(srt != srt[lay.first][lay.seg]):
                raise StepArraysError(f"{name} must be the same on every row of a trajectory")
            object.__setattr__(self, name, a)


def tree_roots(parent: np.ndarray) -> np.ndarray:
    """Root trajectory of each trajectory (``parent[j] < j`` for a branch, -1 for a root)."""
    parent = np.asarray(parent, dtype=np.int64)
    root = np.arange(len(parent), dtype=np.int64)
    for j in np.flatnonzero(parent >= 0):
        p = int(parent[j])
        if not 0 <= p < j:
            raise ValueError(f"trajectory {j} names parent {p}; a branch's parent must be an earlier trajectory")
        root[j] = root[p]
    return root


def _per_traj(steps: StepArrays, name: str, default: np.ndarray) -> np.ndarray:
    a = getattr(steps, name, None)
    lay = steps.layout
    return default if a is None else a[lay.order][lay.first]


def tree(steps: StepArrays, *, norm: str = "mean_std", std: str = "sample", eps: float = 1e-6,
         intra: bool = True, inter: bool = True, single_leaf: str = "zero", prefix: str = "mean") -> np.ndarray:
    """Tree-GRPO advantage per row (float64, input order; see the module docstring)."""
    checks.as_steps(steps)
    checks.choice("single_leaf", single_leaf, SINGLE_LEAF)
    checks.choice("prefix", prefix, PREFIX)
    checks.choice("norm", norm, NORMS)
    checks.choice("std", std, STDS)
    eps = checks.positive("eps", eps, allow_zero=True)
    if steps.n == 0:
        return np.zeros(0)
    lay = steps.layout
    ntraj = lay.num_traj
    tid = steps.traj_id[lay.order][lay.first]  # trajectory id of each layout trajectory (ascending)
    leaf_ret = trajectory_returns(steps)  # root-to-leaf: prefix_return included
    grp = lay.group_of_traj
    a_leaf = np.zeros(ntraj)
    unit = 1.0 + eps if norm == "mean_std" else 1.0  # "unit": a group of one leaf has mean 0, std 1
    if inter:
        groups = pair_groups(grp, np.zeros(ntraj, np.uint64))
        a_leaf += normalized_deviation(leaf_ret, groups, norm, std, eps)
        if single_leaf == "unit":
            alone = groups.code < 0  # the only leaf of its group
            a_leaf[alone] += leaf_ret[alone] / unit
    root = _per_traj(steps, "root", tid)
    if intra:
        trees = pair_groups(grp, root.astype(np.uint64))
        a_leaf += normalized_deviation(leaf_ret, trees, norm, std, eps)
        alone = trees.code < 0  # a tree of one leaf
        if single_leaf == "return":
            a_leaf[alone] += leaf_ret[alone]
        elif single_leaf == "unit":
            a_leaf[alone] += leaf_ret[alone] / unit
    # a row of trajectory j is on the paths of j and of every subtree branching from j after it
    parent = _per_traj(steps, "parent", np.full(ntraj, -1))
    bt = _per_traj(steps, "branch_t", np.zeros(ntraj, np.int64))
    pidx = np.searchsorted(tid, parent)
    has_parent = (parent >= 0) & (pidx < ntraj)
    has_parent[has_parent] = tid[pidx[has_parent]] == parent[has_parent]  # a dropped parent: a tree of its own
    sub_sum, sub_cnt = a_leaf.copy(), np.ones(ntraj)
    children: dict[int, list[int]] = {}
    for j in np.flatnonzero(has_parent)[::-1]:  # children after parents: accumulate subtrees bottom-up
        p = int(pidx[j])
        sub_sum[p] += sub_sum[j]
        sub_cnt[p] += sub_cnt[j]
        children.setdefault(p, []).append(int(j))
    row_sum, row_cnt = a_leaf[lay.seg].copy(), np.ones(steps.n)
    t_sorted = steps.t[lay.order]
    for p, kids in children.items():
        kids = np.array(sorted(kids, key=lambda c: bt[c]))
        b = bt[kids]
        tail_sum = np.cumsum(sub_sum[kids][::-1])[::-1]  # over the children branching at index >= k
        tail_cnt = np.cumsum(sub_cnt[kids][::-1])[::-1]
        rows = np.arange(lay.first[p], lay.first[p] + lay.lengths[p])
        k = np.searchsorted(b, t_sorted[rows], side="right")  # first child with branch_t > t
        inside = k < len(kids)
        row_sum[rows[inside]] += tail_sum[k[inside]]
        row_cnt[rows[inside]] += tail_cnt[k[inside]]
    out = np.empty(steps.n)
    out[lay.order] = row_sum if prefix == "sum" else row_sum / row_cnt
    return out


__all__ = ["TreeSteps", "TREE_FIELDS", "SINGLE_LEAF", "PREFIX", "tree", "tree_roots"]
