"""Advantage estimators over flat step arrays (numpy only) and the ground-truth oracle.

Modules:

- :mod:`~agentgym_credit.credit.steps`: :class:`StepArrays`, the input (one row per step);
- :mod:`~agentgym_credit.credit.registry`: :data:`ESTIMATORS` and :func:`advantages` (by name);
- :mod:`~agentgym_credit.credit.episode`: ``grpo``, ``drgrpo``, ``rloo``;
- :mod:`~agentgym_credit.credit.anchor_groups`: ``gigpo`` (episode + anchor-state step term), anchors by name;
- :mod:`~agentgym_credit.credit.similarity`, :mod:`~agentgym_credit.credit.embedding_anchors`,
  :mod:`~agentgym_credit.credit.linkage`: anchors when exact keys don't repeat (near-duplicate texts,
  one vector per step; how a non-transitive relation becomes groups);
- :mod:`~agentgym_credit.credit.equivalence`: the oracle's policy-equivalence anchor (an upper bound);
- :mod:`~agentgym_credit.credit.hierarchy`: ``hgpo``, ``hgpo_precision`` (hierarchy of history contexts);
- :mod:`~agentgym_credit.credit.baselines`: ``gae``, ``mc``;
- :mod:`~agentgym_credit.credit.graph` (``graph``), :mod:`~agentgym_credit.credit.graphgpo` (``graphgpo``),
  :mod:`~agentgym_credit.credit.gagpo` (``gagpo``): credit on the graph the rollouts form
  (machinery in :mod:`~agentgym_credit.credit.graph_model`);
- :mod:`~agentgym_credit.credit.returns`: discounted / episode returns, the invalid-action penalty;
- :mod:`~agentgym_credit.credit.grouping`: vectorized grouping by (group_id, key);
- :mod:`~agentgym_credit.credit.diagnostics`: :func:`group_stats`;
- :mod:`~agentgym_credit.credit.tokens`: :func:`broadcast_to_tokens` (numpy, torch);
- ``oracle`` and ``policies`` (ground truth on synthetic tasks) load on first access; ``windows`` holds
  what both share (history windows, the :class:`BehaviourPolicy` protocol), so neither imports the other back.

>>> import numpy as np
>>> s = StepArrays.from_lists(group_id=[0, 0], traj_id=[0, 1], t=[0, 0], reward=[1.0, 0.0],
...                           done=[True, True], state_key=[7, 7], obs_key=[7, 7])
>>> advantages("grpo", s, norm="mean").tolist()
[0.5, -0.5]
"""

from __future__ import annotations

import importlib
from types import ModuleType

from agentgym_credit.credit.anchor_groups import gigpo, gigpo_step
from agentgym_credit.credit.baselines import gae, mc
from agentgym_credit.credit.diagnostics import GroupStats, LevelStats, group_stats
from agentgym_credit.credit.episode import drgrpo, episode_advantage, grpo, rloo
from agentgym_credit.credit.gagpo import gagpo
from agentgym_credit.credit.graph import graph
from agentgym_credit.credit.graphgpo import graphgpo
from agentgym_credit.credit.hierarchy import hgpo, hgpo_precision
from agentgym_credit.credit.presets import PRESETS, hgpo_official, preset_options
from agentgym_credit.credit.registry import ESTIMATORS, advantages, estimator_options, register
from agentgym_credit.credit.returns import episode_returns, step_returns
from agentgym_credit.credit.steps import MISSING, StepArrays, TrajLayout
from agentgym_credit.credit.tokens import broadcast_to_tokens, broadcast_to_tokens_torch

_LAZY = ("oracle", "policies")


def __getattr__(name: str) -> ModuleType:
    """Load ``oracle`` / ``policies`` on first access (they are optional to this package's import)."""
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "StepArrays",
    "TrajLayout",
    "MISSING",
    "ESTIMATORS",
    "advantages",
    "estimator_options",
    "register",
    "grpo",
    "drgrpo",
    "rloo",
    "episode_advantage",
    "gigpo",
    "gigpo_step",
    "hgpo",
    "hgpo_precision",
    "hgpo_official",
    "PRESETS",
    "preset_options",
    "gae",
    "mc",
    "graph",
    "graphgpo",
    "gagpo",
    "step_returns",
    "episode_returns",
    "group_stats",
    "GroupStats",
    "LevelStats",
    "broadcast_to_tokens",
    "broadcast_to_tokens_torch",
]
