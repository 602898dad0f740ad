"""Synthetic text tasks with an exact model (``env.unwrapped.model``, a :class:`TabularModel`).

- :class:`GridWorldEnv` (``credit/GridWorld-v0``): fully observed navigation with walls, loops,
  traps and slip;
- :class:`AliasedGridEnv` (``credit/AliasedGrid-v0``): fetch a key that the text never shows
  (same observation, different true states);
- :class:`CueCorridorEnv` (``credit/CueCorridor-v0``): a light seen once decides the right door at
  a junction that looks the same for both lights (history-dependent);
- :class:`GradedGridEnv` (``credit/GradedGrid-v0``): slippery moves, graded outcomes and a one-time
  intermediate reward (where distance-to-goal and value-based graph credit differ);
- :class:`HouseholdEnv` (``credit/Household-v0``): small ALFWorld-like household, whole state space
  enumerated;
- :class:`TrapChainEnv`, :class:`LongCorridorEnv`, :class:`HiddenCorridorEnv` (``credit/TrapChain-v0``,
  ``credit/LongCorridor-v0``, ``credit/KeyCorridor-v0``, ``credit/LeverRoom-v0``): traps and a one-way
  bridge, a long horizon, hidden state that is not a self-loop (held-out families of the credit benchmark);
- :class:`LateCoinEnv` (``credit/LateCoin-v0``): a door choice whose Bernoulli reward is paid ``delay`` (16)
  steps later (noisy final reward; issue 41);
- :class:`TabularTextEnv` and :func:`build_model`: the shared engine (``step`` is a table lookup in
  the model, so the env and its model cannot disagree); :func:`shortest_plan`: an expert.
"""

from agentgym_credit.envs.gridworld.aliased import AliasedGridEnv
from agentgym_credit.envs.gridworld.chains import HiddenCorridorEnv, LongCorridorEnv, TrapChainEnv
from agentgym_credit.envs.gridworld.cue import CueCorridorEnv
from agentgym_credit.envs.gridworld.graded import GradedGridEnv
from agentgym_credit.envs.gridworld.grid import GridWorldEnv
from agentgym_credit.envs.gridworld.household import HouseholdEnv
from agentgym_credit.envs.gridworld.late import LateCoinEnv
from agentgym_credit.envs.gridworld.model import Outcome, TabularModel
from agentgym_credit.envs.gridworld.tabular import TabularTextEnv, build_model, shortest_plan

__all__ = [
    "GridWorldEnv",
    "AliasedGridEnv",
    "GradedGridEnv",
    "CueCorridorEnv",
    "HouseholdEnv",
    "TrapChainEnv",
    "LongCorridorEnv",
    "HiddenCorridorEnv",
    "LateCoinEnv",
    "TabularTextEnv",
    "TabularModel",
    "Outcome",
    "build_model",
    "shortest_plan",
]
