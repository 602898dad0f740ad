"""How much structure step-level credit has to work with: :func:`group_stats`.

- :class:`LevelStats`: one grouping level (anchor on ``state_key``, on ``obs_key``, or history
  level k): the fraction of steps in non-singleton groups and the mean group size;
- :class:`GroupStats`: batch counts, the aliasing rate and the per-level stats;
- :func:`group_stats`: computes them (vectorized, same grouping as the estimators).

If almost every step sits in a singleton group, GiGPO's step term and HGPO's levels are 0 almost
everywhere and the estimator falls back to its episode term. The aliasing rate is the fraction of
steps whose (group, ``obs_key``) group mixes different ``state_key`` values: there, grouping on
observations compares steps taken in different true states.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from agentgym_credit.credit import checks
from agentgym_credit.credit.grouping import PairGroups, pair_groups
from agentgym_credit.credit.steps import StepArrays
from agentgym_credit.keys import MISSING


@dataclass(frozen=True)
class LevelStats:
    """``frac_non_singleton``: steps in groups of size >= 2 over all steps (a step with no key at this
    level counts as not grouped); ``mean_group_size``: steps with a key over distinct groups;
    ``n_groups``: distinct groups (singletons included); ``n_with_key``: steps that have this level."""

    frac_non_singleton: float
    mean_group_size: float
    n_groups: int
    n_with_key: int


@dataclass(frozen=True)
class GroupStats:
    """Batch structure; ``levels`` maps "state_key", "obs_key", "history_0".."history_K" to stats."""

    n_steps: int
    n_trajectories: int
    n_groups: int
    mean_trajectories_per_group: float
    aliasing_rate: float
    levels: dict[str, LevelStats] = field(default_factory=dict)

    def as_dict(self) -> dict:
        """Plain nested dict (for JSON logs)."""
        return asdict(self)

    def table(self) -> str:
        """Markdown table of the per-level stats."""
        lines = [f"steps {self.n_steps}, trajectories {self.n_trajectories}, groups {self.n_groups}, "
                 f"aliasing rate {self.aliasing_rate:.3f}", "",
                 "| level | steps in non-singleton groups | mean group size | groups |", "|---|---|---|---|"]
        lines += [f"| {k} | {v.frac_non_singleton:.3f} | {v.mean_group_size:.2f} | {v.n_groups} |"
                  for k, v in self.levels.items()]
        return "\n".join(lines)


def _level(g: PairGroups, n: int) -> LevelStats:
    grouped = int(g.size.sum())
    n_groups = g.num_groups + (g.n_included - grouped)
    return LevelStats(frac_non_singleton=grouped / n if n else 0.0,
                      mean_group_size=g.n_included / n_groups if n_groups else 0.0,
                      n_groups=int(n_groups), n_with_key=g.n_included)


def group_stats(steps: StepArrays) -> GroupStats:
    """Per-level grouping statistics and the aliasing rate of a batch (see the module docstring)."""
    checks.as_steps(steps)
    n = steps.n
    levels: dict[str, LevelStats] = {}
    by_state = pair_groups(steps.group_id, steps.state_key)
    by_obs = pair_groups(steps.group_id, steps.obs_key)
    levels["state_key"] = _level(by_state, n)
    levels["obs_key"] = _level(by_obs, n)
    for k in range(steps.num_levels):
        key = steps.history_keys[:, k]
        levels[f"history_{k}"] = _level(pair_groups(steps.group_id, key, mask=key != np.uint64(MISSING)), n)
    aliased = 0
    if by_obs.num_groups:
        c = by_obs.member_code
        differ = steps.state_key[by_obs.members] != steps.state_key[by_obs.head][c]
        mixes = np.bincount(c, weights=differ, minlength=by_obs.num_groups) > 0
        aliased = int(by_obs.size[mixes].sum())
    lay = steps.layout
    n_groups = int(len(np.unique(lay.group_of_traj)))
    return GroupStats(n_steps=n, n_trajectories=lay.num_traj, n_groups=n_groups,
                      mean_trajectories_per_group=lay.num_traj / n_groups if n_groups else 0.0,
                      aliasing_rate=aliased / n if n else 0.0, levels=levels)


__all__ = ["LevelStats", "GroupStats", "group_stats"]
