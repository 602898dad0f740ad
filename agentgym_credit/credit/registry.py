"""Estimators by name: the :data:`ESTIMATORS` registry and :func:`advantages`.

A training loop picks its estimator from a config string::

    adv = advantages("gigpo", steps, gamma=0.95, omega=1.0)   # float32, one value per row

Registered names: ``grpo``, ``drgrpo`` (GRPO, mean only), ``rloo``, ``gigpo``, ``hgpo``,
``hgpo_precision``, ``hgpo-official`` (HGPO with its authors' recipe, :mod:`~agentgym_credit.credit.presets`),
``gae`` (needs ``steps.value``), ``mc`` (discounted return, no baseline),
``tree`` (Tree-GRPO's intra-/inter-tree advantage on rollout trees, :mod:`~agentgym_credit.credit.tree`),
``verl-agent`` (GiGPO with verl-agent's settings, :mod:`~agentgym_credit.credit.verl_agent`),
``graph`` / ``graph_q`` / ``graphgpo`` / ``gagpo`` (credit on the graph the rollouts form: :mod:`~agentgym_credit.credit.graph`,
:mod:`~agentgym_credit.credit.graph_q`,
:mod:`~agentgym_credit.credit.graphgpo`, :mod:`~agentgym_credit.credit.gagpo`). Each
entry is a function ``f(steps, **options) -> np.ndarray`` (float64, input order); :func:`advantages`
checks the option names, calls it and returns float32. :func:`register` adds a user's own.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable

import numpy as np

from agentgym_credit.credit import checks
from agentgym_credit.credit.anchor_groups import gigpo
from agentgym_credit.credit.baselines import gae, mc
from agentgym_credit.credit.episode import drgrpo, grpo, rloo
from agentgym_credit.credit.gagpo import gagpo
from agentgym_credit.credit.graph import graph
from agentgym_credit.credit.graph_q import graph_q
from agentgym_credit.credit.graphgpo import graphgpo
from agentgym_credit.credit.hierarchy import hgpo, hgpo_precision
from agentgym_credit.credit.presets import hgpo_official
from agentgym_credit.credit.steps import StepArrays
from agentgym_credit.credit.tree import tree
from agentgym_credit.credit.verl_agent import verl_agent_gigpo
from agentgym_credit.errors import NoRewardVarianceWarning

Estimator = Callable[..., np.ndarray]

ESTIMATORS: dict[str, Estimator] = {
    "grpo": grpo,
    "drgrpo": drgrpo,
    "rloo": rloo,
    "gigpo": gigpo,
    "hgpo": hgpo,
    "hgpo_precision": hgpo_precision,
    "hgpo-official": hgpo_official,  # HGPO with its authors' recipe (credit/presets.py)
    "gae": gae,
    "mc": mc,
    "tree": tree,  # Tree-GRPO (credit/tree.py)
    "graph": graph,  # certainty-equivalence TD on the rollout graph (credit/graph.py)
    "graph_q": graph_q,  # graph lam-returns centred on the rows of the same node (credit/graph_q.py)
    "graphgpo": graphgpo,  # GraphGPO's distance-to-goal credit (credit/graphgpo.py)
    "gagpo": gagpo,  # GAGPO's GAE on a grouped value proxy (credit/gagpo.py)
    "verl-agent": verl_agent_gigpo,  # GiGPO exactly as verl-agent computes it (credit/verl_agent.py)
}


def estimator_options(name: str) -> dict[str, object]:
    """The options of estimator ``name`` with their defaults."""
    fn = _lookup(name)
    return {p.name: p.default for p in list(inspect.signature(fn).parameters.values())[1:]
            if p.kind is inspect.Parameter.KEYWORD_ONLY}


class UnknownEstimatorError(KeyError, ValueError):
    """An estimator name that is not registered (a ``KeyError`` and a ``ValueError``); says what was meant."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0]) if self.args else ""


def _lookup(name: str) -> Estimator:
    try:
        return ESTIMATORS[name]
    except (KeyError, TypeError):
        raise UnknownEstimatorError(unknown_estimator_message(name)) from None


def unknown_estimator_message(name: object) -> str:
    """``unknown estimator 'gipgo' (did you mean 'gigpo'?); registered: ...`` (the close match when one exists)."""
    import difflib

    close = difflib.get_close_matches(str(name), list(ESTIMATORS), n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown estimator {name!r}{hint}; registered: {', '.join(sorted(ESTIMATORS))}"


def advantages(name: str, steps: StepArrays, **options) -> np.ndarray:
    """Per-row advantages (float32, input order) of the estimator registered as ``name``."""
    fn = _lookup(name)
    checks.as_steps(steps)
    params = inspect.signature(fn).parameters
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        unknown = sorted(set(options) - set(params))
        if unknown:
            known = ", ".join(estimator_options(name))
            raise TypeError(f"estimator {name!r} has no option {', '.join(unknown)}; its options: {known}")
    warn_if_no_reward_signal(steps)
    return np.asarray(fn(steps, **options), dtype=np.float32)


def no_reward_signal(steps: StepArrays) -> bool:
    """True when no group has any reward signal: in every group all rewards are equal and all rollouts have the
    same return (e.g. a random policy that never wins), so every estimator's advantages are exact zeros."""
    if np.asarray(steps.group_id).size == 0:
        return False
    r = np.asarray(steps.reward, dtype=np.float64)
    _, gi = np.unique(np.asarray(steps.group_id), return_inverse=True)
    if np.any(_spread(gi, r) > 0):
        return False
    _, ti = np.unique(np.stack([np.asarray(steps.group_id), np.asarray(steps.traj_id)]), axis=1,
                      return_inverse=True)
    ti = ti.ravel()
    returns = np.bincount(ti, weights=r)
    group_of = np.zeros(returns.size, dtype=np.int64)
    group_of[ti] = gi
    return not np.any(_spread(group_of, returns) > 0)


def _spread(index: np.ndarray, values: np.ndarray) -> np.ndarray:
    """max - min of ``values`` per ``index``."""
    lo = np.full(index.max() + 1, np.inf)
    hi = np.full(index.max() + 1, -np.inf)
    np.minimum.at(lo, index, values)
    np.maximum.at(hi, index, values)
    return hi - lo


def warn_if_no_reward_signal(steps: StepArrays) -> None:
    """Warn (:class:`~agentgym_credit.errors.NoRewardVarianceWarning`) when :func:`no_reward_signal`."""
    if no_reward_signal(steps):
        warnings.warn(NoRewardVarianceWarning(
            f"no reward signal in any of the batch's {len(np.unique(steps.group_id))} groups (every rollout of a "
            "group has the same rewards and return, e.g. a policy that never wins): every advantage is exactly 0 "
            "and the update does nothing; use a policy or task where some rollouts succeed"), stacklevel=3)


def register(name: str, fn: Estimator, *, overwrite: bool = False) -> None:
    """Add ``fn(steps, **options) -> array`` under ``name`` (refuses to replace one unless asked)."""
    if not callable(fn):
        raise TypeError(f"estimator {name!r} must be callable")
    if name in ESTIMATORS and not overwrite:
        raise ValueError(f"estimator {name!r} is already registered; pass overwrite=True to replace it")
    ESTIMATORS[name] = fn


__all__ = ["ESTIMATORS", "Estimator", "UnknownEstimatorError", "advantages", "estimator_options", "register"]
