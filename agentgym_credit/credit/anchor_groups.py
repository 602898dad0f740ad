"""GiGPO (arXiv 2505.10978): episode advantage plus anchor-state step advantage.

What lives here:

- :func:`anchor_keys`: the anchor key of each row under a named anchor;
- :func:`gigpo_step`: the step term A^S alone;
- :func:`gigpo`: A = A^E + omega * A^S.

Anchor-state groups G^S(s) hold every row of one group (``group_id``) whose anchor key equals s,
across its trajectories and across time steps: a state revisited inside one trajectory enters twice.
The anchor (:data:`ANCHORS`) is chosen by name:

- ``"state_key"`` (this project's default: the true environment state), ``"obs_key"`` (the reference
  implementation's behaviour: exact observation text), ``"anchor_key"`` (``steps.anchor_key``, a key
  of the user's, e.g. :func:`~agentgym_credit.credit.equivalence.policy_equivalence_keys`, the
  oracle's bound);
- ``"similarity"``: near-duplicate observation texts (``steps.obs_text``), similarity >=
  ``threshold`` under ``sim_metric`` ("indel" or verl-agent's "difflib"), joined by ``linkage``
  ("components" or verl-agent's "leader"); see :mod:`agentgym_credit.credit.similarity`;
- ``"embedding"``: one vector per step (``steps.embedding``), cosine similarity >= ``threshold``,
  joined by ``linkage``; see :mod:`agentgym_credit.credit.embedding_anchors`.

``threshold``, ``sim_metric`` and ``linkage`` are checked whatever the anchor and used only by the
last two. Grouping is by the pair (group_id, key) without a Python loop (see
:mod:`agentgym_credit.credit.grouping`); the similarity and embedding labels never join two groups.

A^S = (R_t - mean_{G^S} R) / F_norm with R_t = sum_{k>=t} gamma^(k-t) r_k the discounted step
return (gamma = 0.95 as in the paper's runs), ``step_norm`` "mean_std" (F_norm = std + eps) or
"mean" (F_norm = 1). Singleton groups and all-equal groups give 0. The episode term A^E is
:func:`agentgym_credit.credit.episode.episode_advantage` (undiscounted R(tau), ``episode_norm``,
``episode_baseline`` "trajectory" = paper, default; "step" = the reference implementation's
default, where every step row enters the episode mean/std). ``std`` (sample or population) and
``eps`` apply to both levels. ``loo=True`` (off by default, as in the paper and the reference code)
takes each row's own return out of its baselines, at both levels: A^S = (R_t − mean of the OTHER
members of G^S) / F_norm = m/(m−1) · (R_t − mean_{G^S} R) / F_norm, and the episode term likewise
(see :mod:`~agentgym_credit.credit.episode`); with the own return in, the expected step term is
shrunk by (m−1)/m (a −A/m error). With ``omega=0`` GiGPO is GRPO. The invalid-action penalty follows
:mod:`agentgym_credit.credit.returns`.
"""

from __future__ import annotations

import numpy as np

from agentgym_credit.credit import checks
from agentgym_credit.credit.embedding_anchors import embedding_labels
from agentgym_credit.credit.episode import episode_advantage, loo_scale
from agentgym_credit.credit.grouping import NORMS, STDS, normalized_deviation, pair_groups
from agentgym_credit.credit.linkage import LINKAGES
from agentgym_credit.credit.returns import step_returns
from agentgym_credit.credit.similarity import SIM_METRICS, similarity_labels
from agentgym_credit.credit.steps import StepArrays
from agentgym_credit.errors import StepArraysError

ANCHORS = ("state_key", "obs_key", "anchor_key", "similarity", "embedding")
_NEEDS = {"anchor_key": "anchor_key", "similarity": "obs_text", "embedding": "embedding"}


def _check_anchor(anchor: str, threshold: float, sim_metric: str, linkage: str) -> float:
    checks.choice("anchor", anchor, ANCHORS)
    checks.choice("sim_metric", sim_metric, SIM_METRICS)
    checks.choice("linkage", linkage, LINKAGES)
    threshold = checks.finite("threshold", threshold)
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    return threshold


def anchor_keys(steps: StepArrays, anchor: str = "state_key", *, threshold: float = 0.95,
                sim_metric: str = "indel", linkage: str = "components") -> np.ndarray:
    """The anchor key of each row (uint64, input order): a column, or labels of near-duplicate groups."""
    threshold = _check_anchor(anchor, threshold, sim_metric, linkage)
    need = _NEEDS.get(anchor)
    if need is not None and getattr(steps, need) is None:
        raise StepArraysError(f"anchor={anchor!r} needs steps.{need}; build the StepArrays with {need}=... "
                              "(e.g. dataclasses.replace(batch.steps, ...))")
    if anchor == "similarity":
        return similarity_labels(steps.group_id, steps.obs_text, threshold, sim_metric, linkage).astype(np.uint64)
    if anchor == "embedding":
        return embedding_labels(steps.group_id, steps.embedding, threshold, linkage).astype(np.uint64)
    return getattr(steps, anchor)


def gigpo_step(steps: StepArrays, *, gamma: float = 0.95, anchor: str = "state_key", step_norm: str = "mean_std",
               std: str = "sample", eps: float = 1e-6, invalid_penalty: float = 0.0,
               propagate_penalty: bool = False, threshold: float = 0.95, sim_metric: str = "indel",
               linkage: str = "components", loo: bool = False) -> np.ndarray:
    """A^S per row (float64, input order): normalized step return inside anchor-state groups."""
    checks.as_steps(steps)
    gamma = checks.unit_interval("gamma", gamma)
    _check_anchor(anchor, threshold, sim_metric, linkage)
    checks.choice("step_norm", step_norm, NORMS)
    checks.choice("std", std, STDS)
    eps = checks.positive("eps", eps, allow_zero=True)
    invalid_penalty = checks.finite("invalid_penalty", invalid_penalty)
    if steps.n == 0:
        return np.zeros(0)
    ret = step_returns(steps, gamma, invalid_penalty, propagate_penalty)
    keys = anchor_keys(steps, anchor, threshold=threshold, sim_metric=sim_metric, linkage=linkage)
    groups = pair_groups(steps.group_id, keys)
    a_s = normalized_deviation(ret, groups, step_norm, std, eps)
    return loo_scale(a_s, groups) if loo else a_s


def gigpo(steps: StepArrays, *, gamma: float = 0.95, omega: float = 1.0, anchor: str = "state_key",
          episode_norm: str = "mean_std", step_norm: str = "mean_std", std: str = "sample", eps: float = 1e-6,
          episode_baseline: str = "trajectory", invalid_penalty: float = 0.0,
          propagate_penalty: bool = False, threshold: float = 0.95, sim_metric: str = "indel",
          linkage: str = "components", loo: bool = False) -> np.ndarray:
    """GiGPO advantage A^E + omega * A^S per row (float64, input order)."""
    omega = checks.finite("omega", omega)
    # checked here too, so that omega = 0 (the step term is skipped) still rejects a bad option
    checks.unit_interval("gamma", gamma)
    _check_anchor(anchor, threshold, sim_metric, linkage)
    checks.choice("step_norm", step_norm, NORMS)
    checks.choice("episode_norm", episode_norm, NORMS)
    a_e = episode_advantage(steps, norm=episode_norm, std=std, eps=eps, episode_baseline=episode_baseline,
                            invalid_penalty=invalid_penalty, propagate_penalty=propagate_penalty, loo=loo)
    if omega == 0.0:
        return a_e
    a_s = gigpo_step(steps, gamma=gamma, anchor=anchor, step_norm=step_norm, std=std, eps=eps,
                     invalid_penalty=invalid_penalty, propagate_penalty=propagate_penalty,
                     threshold=threshold, sim_metric=sim_metric, linkage=linkage, loo=loo)
    return a_e + omega * a_s


__all__ = ["ANCHORS", "anchor_keys", "gigpo_step", "gigpo"]
