"""``RolloutBatch`` <-> verl ``DataProto``, one row per env step.

What lives here:

- :func:`to_dataproto`: a :class:`~agentgym_credit.wrappers.rollout_batch.RolloutBatch` as a
  ``DataProto`` that verl's actor update and our registered estimators read;
- :func:`from_dataproto`: back, without loss (every column, the trajectory table, ``meta``, extras);
- :func:`step_tensors`: the padded tensors of step rows (shared with the agent loop's output).

Tensors (``batch``), for ``n`` steps, ``P`` = longest prompt, ``R`` = longest response:
``prompts`` [n, P] left-padded, ``responses`` [n, R] right-padded, ``input_ids`` = both,
``attention_mask`` (1 on real tokens), ``position_ids`` (count of real tokens before, from 0, as
verl computes them), ``response_mask`` [n, R] (1 on response tokens), ``token_level_rewards``
[n, R] (the trajectory's episode return R(tau) on each step row's last response token, so verl's built-in
estimators see each step row with its episode's score; with ``token_rewards="verl-agent"``, exactly what
verl-agent's trainer leaves there: ``10 * R(tau)``, less 0.1 on a row whose action was invalid, see
:data:`~agentgym_credit.integrations.verl.columns.TOKEN_REWARDS`) and
``old_log_probs`` [n, R] when every step has the sampler's ``logprobs``.

Token ids come from each step's extras (``prompt_ids``, ``response_ids``: what
:class:`~agentgym_credit.trainer.policy.LLMPolicy` records) or, when absent, from ``tokenizer``
applied to the observation (prompt) and the action (response).

Non-tensor columns: ``uid`` (group, ``str``), ``traj_uid`` (trajectory, ``str``), ``agc_env_id`` (when the
batch knows its env: ``batch.meta["env"]``, the collector's env id, without a ``module:`` prefix, names an env in
gymnasium's registry; a factory's batch has none, and the estimators then do not check it), ``agc_failed``,
``agc_extras`` (the rest of each step's extras) and every step column of the ``RolloutBatch`` as
:func:`column_of` names it (``agc_step``, ``agc_valid``, ``agc_<field>`` for the others: the step columns of
:mod:`~agentgym_credit.integrations.verl.columns` among them). ``meta_info`` holds the trajectory table
and the batch ``meta``.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import numpy as np

from agentgym_credit.integrations.verl.columns import (
    STEP_COLUMNS,
    MissingStepColumns,
    row_scores,
    token_reward_options,
)
from agentgym_credit.wrappers.rollout_batch import RolloutBatch, TrajectoryTable

FORMAT = "agentgym_credit.verl_dataproto/1"
_OWN = ("agc_failed", "agc_group_id", "agc_traj_id", "agc_extras")
_RENAMED = {"t": "agc_step", "action_valid": "agc_valid"}


def column_of(name: str) -> str:
    """The ``non_tensor_batch`` column of RolloutBatch field ``name`` (``t`` -> ``agc_step``, ``x`` -> ``agc_x``)."""
    return _RENAMED.get(name, f"agc_{name}")


def _obj(values: list[Any]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def step_tensors(prompts: list[list[int]], responses: list[list[int]], rewards: list[float],
                 logprobs: list[list[float]] | None, pad: int) -> dict[str, Any]:
    """verl's step-row tensors (module docstring) from per-row token ids, scores (on each row's last response
    token: the episode return) and log-probs."""
    import torch

    n = len(prompts)
    P = max(1, max(len(p) for p in prompts))
    R = max(1, max(len(r) for r in responses))
    prompt_t = torch.full((n, P), pad, dtype=torch.int64)
    resp_t = torch.full((n, R), pad, dtype=torch.int64)
    pmask = torch.zeros((n, P), dtype=torch.int64)
    rmask = torch.zeros((n, R), dtype=torch.int64)
    reward_t = torch.zeros((n, R), dtype=torch.float32)
    old_lp = torch.zeros((n, R), dtype=torch.float32) if logprobs is not None else None
    for i, (p, r) in enumerate(zip(prompts, responses)):
        if p:
            prompt_t[i, P - len(p):] = torch.tensor(p, dtype=torch.int64)
            pmask[i, P - len(p):] = 1
        if r:
            resp_t[i, :len(r)] = torch.tensor(r, dtype=torch.int64)
            rmask[i, :len(r)] = 1
            if old_lp is not None:
                old_lp[i, :len(r)] = torch.tensor(logprobs[i], dtype=torch.float32)
        reward_t[i, max(len(r), 1) - 1] = float(rewards[i])
    attn = torch.cat([pmask, rmask], dim=1)
    tensors = {
        "prompts": prompt_t, "responses": resp_t, "input_ids": torch.cat([prompt_t, resp_t], dim=1),
        "attention_mask": attn, "position_ids": torch.clip(torch.cumsum(attn, dim=-1) - 1, min=0),
        "response_mask": rmask, "token_level_rewards": reward_t,
    }
    if old_lp is not None:
        tensors["old_log_probs"] = old_lp
    return tensors


def _known_env_id(batch: RolloutBatch) -> str | None:
    """The gymnasium id of the env the batch was collected on, when ``batch.meta`` names one."""
    import gymnasium as gym

    import agentgym_credit.envs  # noqa: F401  (registers the credit/* ids)

    env = batch.meta.get("env")
    name = env.split(":", 1)[-1] if isinstance(env, str) else None
    return name if name is not None and name in gym.registry else None


def _token_ids(batch: RolloutBatch, tokenizer: Any) -> tuple[list[list[int]], list[list[int]], str]:
    have = [("prompt_ids" in e and "response_ids" in e) for e in batch.extras]
    if len(batch) and all(have):
        return ([list(map(int, e["prompt_ids"])) for e in batch.extras],
                [list(map(int, e["response_ids"])) for e in batch.extras], "extras")
    if tokenizer is None:
        raise ValueError("to_dataproto needs token ids: the steps' extras lack 'prompt_ids'/'response_ids' "
                         f"({have.count(False)} of {len(batch)} rows; collect with LLMPolicy to record them) "
                         "and no tokenizer was given to tokenize the observations and actions")
    prompts = [list(tokenizer(o)["input_ids"]) for o in batch.observation]
    responses = [list(tokenizer(a, add_special_tokens=False)["input_ids"]) for a in batch.action]
    return prompts, responses, "tokenizer"


def to_dataproto(batch: RolloutBatch, tokenizer: Any = None, *, pad_token_id: int | None = None,
                 token_rewards: Any = "episode") -> Any:
    """``batch`` as a verl ``DataProto``, one row per step (see the module docstring).

    ``token_rewards``: what each row's ``token_level_rewards`` hold, ``"episode"`` (R(tau)), ``"verl-agent"``
    (verl-agent's scaled and penalized score, for runs of the ``agc_verl_agent`` estimator and verl's built-in
    ones beside it) or a mapping with ``reward_scale`` / ``invalid_penalty``
    (:func:`~agentgym_credit.integrations.verl.columns.token_reward_options`)."""
    from verl.protocol import DataProto

    if not isinstance(batch, RolloutBatch):
        raise TypeError(f"to_dataproto takes a RolloutBatch, got {type(batch).__name__}")
    if len(batch) == 0:
        raise ValueError("to_dataproto: the RolloutBatch has no steps")
    score_opts = token_reward_options(token_rewards)
    prompts, responses, source = _token_ids(batch, tokenizer)
    if pad_token_id is None:
        pad_token_id = getattr(tokenizer, "pad_token_id", None)
    pad = int(pad_token_id) if pad_token_id is not None else 0
    n = len(batch)
    logprobs = [e.get("logprobs") for e in batch.extras]
    has_lp = all(lp is not None and len(lp) == len(r) for lp, r in zip(logprobs, responses))
    episode_return = (batch.traj.ret + batch.traj.prefix_return)[batch.traj_id] if len(batch.traj) else np.zeros(n)
    scores = row_scores(episode_return, batch.action_valid, score_opts)
    tensors = step_tensors(prompts, responses, scores.tolist(), logprobs if has_lp else None, pad)
    # what the tensors carry exactly is left out of agc_extras, and read back from the tensors
    moved = (("prompt_ids", "response_ids") if source == "extras" else ()) + (("logprobs",) if has_lp else ())
    failed = batch.traj.failed[batch.traj_id] if len(batch.traj) else np.zeros(n, dtype=bool)
    non_tensors: dict[str, np.ndarray] = {
        "uid": _obj([str(g) for g in batch.group_id.tolist()]),
        "traj_uid": _obj([str(t) for t in batch.traj_id.tolist()]),
        "agc_failed": np.asarray(failed, dtype=bool),
        # the state each trajectory's last step reached (graph estimators bootstrap from it), per row
        "agc_final_state_key": batch.traj.final_state_key[batch.traj_id],
        "agc_final_obs_key": batch.traj.final_obs_key[batch.traj_id],
        "agc_extras": _obj([{k: v for k, v in e.items() if k not in moved} for e in batch.extras]),
    }
    env_id = _known_env_id(batch)
    if env_id is not None:  # the estimators refuse a batch of an env that is not a credit/* one
        non_tensors["agc_env_id"] = _obj([env_id] * n)
    list_fields = []
    for f in fields(batch):  # every step column, whatever RolloutBatch holds
        if f.name in ("traj", "meta", "extras"):
            continue
        v = getattr(batch, f.name)
        if isinstance(v, list):
            list_fields.append(f.name)
        non_tensors[column_of(f.name)] = _obj(list(v)) if isinstance(v, list) else np.array(v, copy=True)
    meta = {"agc_format": FORMAT, "agc_token_rewards": score_opts, "agc_ids_source": source, "agc_logprobs_moved": has_lp, "agc_pad_token_id": pad,
            "agc_list_fields": list_fields, "agc_trajectories": batch.traj.to_dict(), "agc_meta": dict(batch.meta)}
    return DataProto.from_dict(tensors=tensors, non_tensors=non_tensors, meta_info=meta)


def from_dataproto(data: Any) -> RolloutBatch:
    """The :class:`RolloutBatch` that :func:`to_dataproto` converted (ids and log-probs read back from
    the tensors when they came from the steps' extras)."""
    meta = data.meta_info or {}
    if meta.get("agc_format") != FORMAT:
        raise ValueError(f"from_dataproto reads DataProtos written by to_dataproto (meta_info['agc_format'] == "
                         f"{FORMAT!r}); this one has {meta.get('agc_format')!r}")
    nt = data.non_tensor_batch
    missing = [c for c in ["uid", *STEP_COLUMNS, *_OWN] if c not in nt]
    if missing:
        raise MissingStepColumns(missing, "from_dataproto")
    extras = [dict(e) for e in nt["agc_extras"].tolist()]
    if meta.get("agc_ids_source") == "extras":
        b = data.batch
        P = b["prompts"].shape[1]
        attn = b["attention_mask"].bool()
        for i, e in enumerate(extras):
            e["prompt_ids"] = b["prompts"][i][attn[i, :P]].tolist()
            rm = attn[i, P:]
            e["response_ids"] = b["responses"][i][rm].tolist()
    if meta.get("agc_logprobs_moved"):
        b = data.batch
        P = b["prompts"].shape[1]
        attn = b["attention_mask"].bool()
        for i, e in enumerate(extras):
            e["logprobs"] = b["old_log_probs"][i][attn[i, P:]].tolist()
    cols = {}
    for f in fields(RolloutBatch):
        if f.name in ("traj", "meta", "extras") or column_of(f.name) not in nt:
            continue  # a column this RolloutBatch version has and the DataProto's writer had not: its default
        v = nt[column_of(f.name)]
        cols[f.name] = v.tolist() if f.name in meta.get("agc_list_fields", ()) else v
    return RolloutBatch(**cols, extras=extras, traj=TrajectoryTable(**meta["agc_trajectories"]),
                        meta=dict(meta.get("agc_meta", {})))


__all__ = ["FORMAT", "column_of", "step_tensors", "to_dataproto", "from_dataproto"]
