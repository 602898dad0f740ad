"""Our estimators in verl's advantage-estimator registry.

What lives here:

- :data:`VERL_ESTIMATORS`: verl name -> (our estimator name, fixed options): ``agc_gigpo`` (GiGPO,
  true-state anchors), ``agc_gigpo_obs`` (our GiGPO with observation anchors: NOT verl-agent's numbers, whose
  episode baseline runs over step rows and which penalizes invalid actions), ``agc_verl_agent`` (GiGPO exactly
  as verl-agent computes it: the ``verl-agent`` preset, :mod:`agentgym_credit.credit.verl_agent`),
  ``agc_hgpo``, ``agc_grpo``, ``agc_rloo``, and the graph estimators ``agc_graph`` (state keys),
  ``agc_graph_obs`` (observation keys), ``agc_graphgpo``, ``agc_gagpo`` (:mod:`agentgym_credit.credit.graph`);
- :func:`register`: adds them with ``verl.trainer.ppo.core_algos.register_adv_est`` (idempotent), so a
  verl config selects one with ``algorithm.adv_estimator=agc_gigpo``;
- :func:`estimator_fn`: the registered function of one name.

A registered function has verl's signature ``f(token_level_rewards, response_mask, index=None,
config=None, non_tensor_batch=None, **kwargs) -> (advantages, returns)``: it builds
:class:`~agentgym_credit.credit.steps.StepArrays` from the step columns
(:mod:`~agentgym_credit.integrations.verl.columns`), calls :func:`agentgym_credit.credit.advantages`
and tiles each step's advantage over its response tokens (``response_mask``); ``returns`` equals
``advantages``, as for verl's own outcome estimators. Rows of failed trajectories get 0, and so do
padding rows: verl's v1 trainer pads every batch to a multiple of lcm(dp, ppo_mini_batch_size x n) with
copies of row 0 whose response mask is empty (``padding_utils.upsample_batch_to_divisible_size``); those rows
are left out of the estimator's input (:func:`~agentgym_credit.integrations.verl.columns.padding_rows`), so
the real rows' advantages are those of the batch without them. A trajectory whose final rows are missing
(DAPO / overlong filtering) raises ``TruncatedTrajectory``; a group whose rows mix envs, seeds, tasks or
initial states raises ``GroupMismatchError``.

**Where the step columns come from.** verl 0.9.1's ``compute_advantage``
(``verl.trainer.ppo.ray_trainer``, also called by the v1 trainer) passes a registered estimator only
``token_level_rewards``, ``response_mask``, ``index`` (= ``uid``) and ``config``; ``non_tensor_batch``
goes to its ``gdpo`` estimator alone. So when ``non_tensor_batch`` is not passed, the function takes
it from the ``DataProto`` that the calling ``compute_advantage`` holds, and only from one whose
``batch["response_mask"]`` *is* the tensor it received (an identity check, never a guess). Pass
``non_tensor_batch=`` explicitly from your own trainer (verl-agent style) to skip that lookup. verl's v1
trainer builds that DataProto with ``uid`` alone; our trainer (:mod:`~agentgym_credit.integrations.verl.trainer`,
installed under verl's own mode ``"sync"``) fetches the step columns apart and hands them over with
:func:`~agentgym_credit.integrations.verl.columns.pending_step_columns`.

**Options.** Our defaults (e.g. GiGPO gamma = 0.95, omega = 1); override them per run with
``+algorithm.agc_options.<option>=value`` (read from ``config.agc_options`` when the config carries
it). ``algorithm.gamma`` is verl's GAE discount and is not read.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from agentgym_credit import credit
from agentgym_credit.integrations.verl.columns import steps_from_columns, with_pending

VERL_ESTIMATORS: dict[str, tuple[str, dict[str, Any]]] = {
    "agc_gigpo": ("gigpo", {"anchor": "state_key"}),
    "agc_gigpo_obs": ("gigpo", {"anchor": "obs_key"}),
    "agc_verl_agent": ("verl-agent", {}),
    "agc_hgpo": ("hgpo", {}),
    "agc_grpo": ("grpo", {}),
    "agc_rloo": ("rloo", {}),
    "agc_graph": ("graph", {}),
    "agc_graph_obs": ("graph", {"key": "obs_key"}),
    "agc_graphgpo": ("graphgpo", {}),
    "agc_gagpo": ("gagpo", {}),
}
"""verl registry name -> (name in :data:`agentgym_credit.credit.ESTIMATORS`, options it fixes)."""

_FNS: dict[str, Callable[..., tuple[Any, Any]]] = {}


def _config_options(config: Any) -> dict[str, Any]:
    if config is None:
        return {}
    opts = config.get("agc_options", None) if hasattr(config, "get") else getattr(config, "agc_options", None)
    if opts is None:
        return {}
    if not isinstance(opts, Mapping):
        try:  # an omegaconf DictConfig
            from omegaconf import OmegaConf

            opts = OmegaConf.to_container(opts, resolve=True)
        except Exception:
            raise TypeError(f"algorithm.agc_options must be a mapping of estimator options, got {opts!r}") from None
    return dict(opts)


def _batch_columns(response_mask: Any) -> Mapping[str, Any] | None:
    """``non_tensor_batch`` of the DataProto whose ``batch['response_mask']`` is ``response_mask``."""
    from verl.protocol import DataProto

    frame = sys._getframe(2)
    depth = 0
    while frame is not None and depth < 8:
        for value in frame.f_locals.values():
            if not isinstance(value, DataProto) or value.batch is None:
                continue
            if value.batch.get("response_mask", None) is response_mask:
                return value.non_tensor_batch
        frame = frame.f_back
        depth += 1
    return None


def estimator_fn(name: str) -> Callable[..., tuple[Any, Any]]:
    """The verl-signature function registered as ``name`` (one of :data:`VERL_ESTIMATORS`)."""
    if name in _FNS:
        return _FNS[name]
    if name not in VERL_ESTIMATORS:
        raise KeyError(f"unknown verl estimator {name!r}; ours: {', '.join(VERL_ESTIMATORS)}")
    ours, fixed = VERL_ESTIMATORS[name]
    allowed = set(credit.estimator_options(ours))

    def fn(token_level_rewards: Any, response_mask: Any, index: Any = None, config: Any = None,
           non_tensor_batch: Mapping[str, Any] | None = None, **kwargs: Any) -> tuple[Any, Any]:
        import torch

        nt = non_tensor_batch if non_tensor_batch is not None else _batch_columns(response_mask)
        if nt is None:
            nt = {} if index is None else {"uid": index}
        nt = with_pending(nt, int(response_mask.shape[0]))
        nonempty = (response_mask.reshape(response_mask.shape[0], -1) != 0).any(dim=-1).cpu().numpy()
        steps, kept = steps_from_columns(nt, index, estimator=name, nonempty=nonempty)
        if len(kept) != response_mask.shape[0]:
            raise ValueError(f"{name}: response_mask has {response_mask.shape[0]} rows, the step columns {len(kept)}")
        opts = _config_options(config)
        unknown = sorted(set(opts) - allowed)
        if unknown:
            raise TypeError(f"{name}: algorithm.agc_options has {', '.join(unknown)}, which {ours!r} does not "
                            f"take; its options: {', '.join(sorted(allowed))}")
        clash = sorted(k for k in opts if k in fixed and opts[k] != fixed[k])
        if clash:
            raise ValueError(f"{name} fixes {', '.join(f'{k}={fixed[k]!r}' for k in clash)}; "
                             "pick the estimator name that has the option you want")
        adv_rows = np.zeros(len(kept), dtype=np.float32)
        adv_rows[kept] = credit.advantages(ours, steps, **{**opts, **fixed})
        adv = credit.broadcast_to_tokens_torch(torch.from_numpy(adv_rows).to(response_mask.device), response_mask)
        adv = adv.to(token_level_rewards.dtype if torch.is_floating_point(token_level_rewards) else torch.float32)
        return adv, adv.clone()

    fn.__name__ = fn.__qualname__ = f"compute_{name}_advantage"
    fn.__doc__ = (f"verl advantage estimator {name!r}: agentgym_credit.credit.advantages({ours!r}, ..., "
                  f"{', '.join(f'{k}={v!r}' for k, v in fixed.items()) or 'default options'}) per step, "
                  "tiled over the response tokens.")
    _FNS[name] = fn
    return fn


def register(names: list[str] | None = None) -> list[str]:
    """Add our estimators to ``verl.trainer.ppo.core_algos.ADV_ESTIMATOR_REGISTRY`` (idempotent).

    Returns the registered names. Call it in the driver and in every Ray worker that computes
    advantages (importing :mod:`agentgym_credit.integrations.verl` does it).
    """
    from verl.trainer.ppo import core_algos

    chosen = list(VERL_ESTIMATORS) if names is None else list(names)
    for name in chosen:
        fn = estimator_fn(name)
        if core_algos.ADV_ESTIMATOR_REGISTRY.get(name) is fn:
            continue
        if name in core_algos.ADV_ESTIMATOR_REGISTRY:
            raise ValueError(f"verl already has an advantage estimator {name!r} that is not ours: "
                             f"{core_algos.ADV_ESTIMATOR_REGISTRY[name]}")
        core_algos.register_adv_est(name)(fn)
    return chosen


__all__ = ["VERL_ESTIMATORS", "estimator_fn", "register"]
