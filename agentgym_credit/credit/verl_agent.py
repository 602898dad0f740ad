"""The ``verl-agent`` preset: GiGPO exactly as verl-agent computes it (``gigpo/core_gigpo.py`` and its trainer).

What lives here:

- :func:`verl_agent_gigpo`: the advantage per row, registered as ``"verl-agent"`` in
  :data:`~agentgym_credit.credit.registry.ESTIMATORS`;
- :data:`MODES`: verl-agent's two normalization modes, ``"mean_std_norm"`` (its ALFWorld recipe,
  ``examples/gigpo_trainer/run_alfworld.sh``; this preset's default) and ``"mean_norm"`` (the default argument of
  its ``compute_gigpo_outcome_advantage``).

What verl-agent does, and so what this preset does (checked against a plain-Python transcription of its
logic on random batches in ``tests/test_verl_agent_preset.py``, max difference <= 1e-6):

- **Rewards.** Its ALFWorld and WebShop envs pay ``10`` for a win, ours ``1``: ``reward_scale=10`` (default)
  multiplies every env reward before anything else. The invalid-action penalty (``use_invalid_action_penalty``,
  ``invalid_action_penalty_coef=0.1`` in its ALFWorld recipe) is subtracted from the row's own episode score
  and from the row's own discounted step return, and from nothing else: ``invalid_penalty=-0.1`` here, added
  on rows with ``valid=False`` (:mod:`agentgym_credit.credit.returns`, ``propagate_penalty=False``).
- **Episode term.** Every *step row* has the score R(tau) + p_t (verl-agent writes the episode return on each
  step row's last response token and sums it back); the group's (``group_id``, verl's ``uid``) mean and
  sample std are taken over all its rows (``compute_mean_std_cross_all_data=True``), so longer trajectories
  weigh more. ``mean_norm``: score - mean; ``mean_std_norm``: (score - mean) / (std + eps). A group with a
  single row keeps its raw score (verl-agent's mean 0, std 1 for a lone member), not 0.
- **Step term.** R_t = sum_k gamma^k r_{t+k} (gamma = 0.95, its ``algorithm.gamma``) + p_t; anchor groups are
  rows of one ``group_id`` with the same observation (``obs_key``: verl-agent groups identical
  ``anchor_obs`` texts); same normalization mode; a lone member gets 0.
- A = episode term + ``omega`` * step term (``algorithm.gigpo.step_advantage_w``, 1.0).

Differences with our plain ``gigpo`` under its defaults: trajectory-level episode baseline, true-state
anchors, mean_std normalization, no penalty, unscaled rewards. ``gigpo(..., anchor="obs_key",
episode_baseline="step", invalid_penalty=-0.1)`` with the matching ``*_norm`` agrees with this preset except
on lone-row groups and for the reward scale.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from agentgym_credit.credit import checks
from agentgym_credit.credit.anchor_groups import gigpo_step
from agentgym_credit.credit.grouping import normalized_deviation, pair_groups
from agentgym_credit.credit.returns import episode_returns, penalty
from agentgym_credit.credit.steps import StepArrays

MODES = ("mean_norm", "mean_std_norm")
_STEP_NORM = {"mean_norm": "mean", "mean_std_norm": "mean_std"}


def _episode_term(steps: StepArrays, mode: str, invalid_penalty: float, eps: float) -> np.ndarray:
    """verl-agent's ``episode_norm_reward`` on step rows (module docstring)."""
    v = episode_returns(steps) + penalty(steps, invalid_penalty)
    g = pair_groups(steps.group_id, np.zeros(steps.n, dtype=np.uint64))
    out = v / (1.0 + eps) if mode == "mean_std_norm" else np.array(v, dtype=np.float64, copy=True)  # lone rows
    out[g.members] = normalized_deviation(v, g, _STEP_NORM[mode], "sample", eps)[g.members]
    return out


def verl_agent_gigpo(steps: StepArrays, *, mode: str = "mean_std_norm", gamma: float = 0.95, omega: float = 1.0,
                     invalid_penalty: float = -0.1, reward_scale: float = 10.0, eps: float = 1e-6) -> np.ndarray:
    """verl-agent's GiGPO advantage per row (float64, input order); see the module docstring."""
    checks.as_steps(steps)
    checks.choice("mode", mode, MODES)
    gamma = checks.unit_interval("gamma", gamma)
    omega = checks.finite("omega", omega)
    invalid_penalty = checks.finite("invalid_penalty", invalid_penalty)
    reward_scale = checks.finite("reward_scale", reward_scale)
    eps = checks.positive("eps", eps, allow_zero=True)
    if steps.n == 0:
        return np.zeros(0)
    if reward_scale != 1.0:
        steps = dataclasses.replace(steps, reward=np.asarray(steps.reward, dtype=np.float64) * reward_scale)
    a_e = _episode_term(steps, mode, invalid_penalty, eps)
    if omega == 0.0:
        return a_e
    a_s = gigpo_step(steps, gamma=gamma, anchor="obs_key", step_norm=_STEP_NORM[mode], std="sample", eps=eps,
                     invalid_penalty=invalid_penalty, propagate_penalty=False)
    return a_e + omega * a_s


__all__ = ["MODES", "verl_agent_gigpo"]
