"""Tree-GRPO's advantage as its public code computes it, transcribed in plain Python onto our inputs.

Source read: AMAP-ML/Tree-GRPO@90b170995d996d772d68117e0c7bd0b8fe00d393 (arXiv 2509.21240). This is
our own code for their formulas, not a copy of theirs. What that commit does, for the estimator its
``train_*_tree_search.sh`` scripts select (``algorithm.adv_estimator=tree``, line 45, with
``rollout.reward_mode=base``, line 66):

1. **Samples** (``search_r1/llm_agent/generation_ts.py`` ``run_llm_loop_tree_search``, lines 627-641):
   every sampled leaf of a tree is one training sample, and its ``responses`` are the whole
   root-to-leaf response (a node copies its parent's responses and appends its own turn). Its score
   (``tree_node.py`` ``get_token_level_score_from_leaf``, lines 254-257, base mode) is the leaf's
   outcome score on its last token; ``core_algos.py`` reads a sample's score as the sum of its
   token-level rewards (line 132). On our rows a leaf's score is therefore the sum of the rewards on
   its root-to-leaf path.
2. **Advantage** (``verl/trainer/ppo/ray_trainer_ts.py`` ``compute_advantage``, lines 168-189): the sum
   of two calls of ``compute_grpo_outcome_advantage`` (``verl/trainer/ppo/core_algos.py`` lines
   111-155), one with ``index=uid`` (the prompt: all leaves of all its trees, our group), one with
   ``index=tree_uid`` (the tree). In each call a sample gets (score - mean) / (std + epsilon) over
   its index group, epsilon = 1e-6 (the default; the caller passes none), std = ``torch.std`` (the
   sample std, n - 1), and a group with ONE sample gets mean 0 and std 1 (lines 143-145).
3. **Tokens** (line 153): every response token of the sample carries its advantage. The policy loss
   (``actor.policy_loss=grpo`` -> ``compute_policy_loss_dual_clip``, ``loss_agg_mode`` token-mean,
   ``verl/trainer/config/ppo_trainer.yaml`` line 41) averages over all tokens of the batch, so a token
   of a shared prefix, present in every sample whose path passes through it, is trained with the SUM
   of those samples' advantages (divided by the batch's token count, a constant of the batch).

:func:`tree_grpo_advantages` returns, per row of our step arrays, that sum. It builds the samples
from the tree columns by walking up the parents (an ancestor's rows before the branch point), not
from ``prefix_return``; the tree of a leaf is its topmost ancestor present. Not transcribed: their
float32 arithmetic (here float64), and the other estimators of that file (``tree_2norm``,
``tree_inner``, ``tree_per_token``).

:func:`random_tree_steps` draws random rollout trees (a :class:`TreeSteps`) for the tests.
"""

from __future__ import annotations

import math

EPSILON = 1e-6  # compute_grpo_outcome_advantage's default


def grpo_outcome(scores, index, epsilon=EPSILON):
    """Their GRPO helper on one score per sample: (score - mean) / (std + epsilon) within each index
    value, with mean 0 and std 1 for an index value held by one sample only."""
    members: dict = {}
    for s, k in zip(scores, index):
        members.setdefault(k, []).append(s)
    stats = {}
    for k, xs in members.items():
        if len(xs) == 1:
            stats[k] = (0.0, 1.0)
        else:
            m = sum(xs) / len(xs)
            stats[k] = (m, math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)))
    return [(s - stats[k][0]) / (stats[k][1] + epsilon) for s, k in zip(scores, index)]


def leaf_samples(steps):
    """Their batch on our rows: one sample per trajectory (every trajectory ends in a leaf), as a dict
    with ``rows`` (the row indices of its root-to-leaf path), ``group`` (their ``uid``) and ``tree``
    (their ``tree_uid``: the trajectory id of the topmost ancestor present)."""
    own: dict[int, list[int]] = {}
    for i in range(steps.n):
        own.setdefault(int(steps.traj_id[i]), []).append(i)
    for rows in own.values():
        rows.sort(key=lambda i: int(steps.t[i]))

    def col(name, tr, default):
        a = getattr(steps, name, None)
        return default if a is None else a[own[tr][0]].item()

    samples = []
    for tr in sorted(own):
        path = list(own[tr])
        node = tr
        while col("parent", node, -1) in own:
            cut = col("branch_t", node, 0)
            node = col("parent", node, -1)
            path = [i for i in own[node] if int(steps.t[i]) < cut] + path
        samples.append({"rows": path, "group": int(steps.group_id[own[tr][0]]), "tree": node, "traj": tr})
    return samples


def tree_grpo_advantages(steps, epsilon=EPSILON, *, samples=False):
    """Per row (input order): the sum, over the samples whose path holds the row, of the sample's
    intra-tree + inter-tree advantage (see the module docstring). ``samples=True`` also returns the
    samples of :func:`leaf_samples`, each with its ``score``, ``inter``, ``intra`` and ``adv``."""
    batch = leaf_samples(steps)
    scores = [sum(float(steps.reward[i]) for i in s["rows"]) for s in batch]
    inter = grpo_outcome(scores, [s["group"] for s in batch], epsilon)
    intra = grpo_outcome(scores, [s["tree"] for s in batch], epsilon)
    out = [0.0] * steps.n
    for s, r, a, b in zip(batch, scores, inter, intra):
        s.update(score=r, inter=a, intra=b, adv=a + b)
        for i in s["rows"]:
            out[i] += a + b
    return (out, batch) if samples else out


def random_tree_steps(seed, *, n_groups=3, max_roots=3, max_branches=5, max_len=6,
                      rewards=(0.0, 0.5, 1.0, -1.0, 0.25), shuffle=True):
    """Random rollout trees: per group 1..``max_roots`` roots, each with no branch (30%) or
    1..``max_branches`` branches from a random row of a random trajectory of its tree (branches of branches), lengths
    1..``max_len``, rewards from a small dyadic set (ties, exact sums), consistent ``prefix_return``
    and ``root``; trajectory ids increase with gaps (a branch's id is above its parent's); rows
    shuffled. One-leaf trees and one-leaf groups occur."""
    import numpy as np

    from agentgym_credit.credit.tree import TreeSteps

    rng = np.random.default_rng(seed)
    trajs = []  # creation order; parents before children
    for g in range(n_groups):
        gid = int(rng.integers(-50, 50)) * n_groups + g
        for _ in range(int(rng.integers(1, max_roots + 1))):
            members = [len(trajs)]
            trajs.append({"group": gid, "parent": -1, "branch_t": 0, "root": len(trajs), "prefix": 0.0,
                          "r": rng.choice(rewards, size=int(rng.integers(1, max_len + 1))).tolist()})
            for _ in range(0 if rng.random() < 0.3 else int(rng.integers(1, max_branches + 1))):
                p = members[int(rng.integers(len(members)))]
                bt = int(rng.integers(len(trajs[p]["r"])))
                members.append(len(trajs))
                trajs.append({"group": gid, "parent": p, "branch_t": bt, "root": trajs[p]["root"],
                              "prefix": trajs[p]["prefix"] + sum(trajs[p]["r"][:bt]),
                              "r": rng.choice(rewards, size=int(rng.integers(1, max_len + 1))).tolist()})
    ids = np.cumsum(rng.integers(1, 4, size=len(trajs))) + 10
    cols = {k: [] for k in ("group_id", "traj_id", "t", "reward", "done", "state_key", "obs_key", "parent",
                            "branch_t", "root", "prefix_return")}
    for k, tr in enumerate(trajs):
        for t, r in enumerate(tr["r"]):
            cols["group_id"].append(tr["group"])
            cols["traj_id"].append(int(ids[k]))
            cols["t"].append(t)
            cols["reward"].append(float(r))
            cols["done"].append(t == len(tr["r"]) - 1)
            cols["state_key"].append(int(rng.integers(1, 9)))
            cols["obs_key"].append(int(rng.integers(1, 5)))
            cols["parent"].append(int(ids[tr["parent"]]) if tr["parent"] >= 0 else -1)
            cols["branch_t"].append(tr["branch_t"])
            cols["root"].append(int(ids[tr["root"]]))
            cols["prefix_return"].append(tr["prefix"])
    perm = rng.permutation(len(cols["t"])) if shuffle else np.arange(len(cols["t"]))
    return TreeSteps(**{k: np.asarray(v)[perm] for k, v in cols.items()})


__all__ = ["EPSILON", "grpo_outcome", "leaf_samples", "tree_grpo_advantages", "random_tree_steps"]
