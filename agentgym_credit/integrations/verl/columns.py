"""The step columns our estimators read from a verl batch, and ``StepArrays`` built from them.

What lives here (pure numpy; no verl import):

- :data:`GROUP`, :data:`TRAJ`, :data:`STEP_COLUMNS`: the ``non_tensor_batch`` column names. ``uid``
  (the rollout group, verl's own column) and ``traj_uid`` (the trajectory, verl-agent's name) are the
  ids; the ``agc_*`` columns hold one step's env data each;
- :data:`OPTIONAL_COLUMNS`: columns read when present (``agc_failed``; ``agc_terminated`` and
  ``agc_final_state_key`` / ``agc_final_obs_key``, what the graph estimators bootstrap from; ``agc_env_id``,
  checked to name a registered ``credit/*`` env on every row, :class:`~agentgym_credit.errors.NotACreditEnv`
  otherwise: a batch without the column is not checked, as before the column existed);
- :func:`credit_env_ids`, :func:`check_credit_env_id`: the registered ``credit/*`` ids, and the check;
- :data:`TOKEN_REWARDS`, :func:`token_reward_options`, :func:`row_scores`: what a step row's
  ``token_level_rewards`` hold (below);
- :class:`MissingStepColumns`: the error for a batch that lacks some of them;
- :func:`missing_columns`, :func:`steps_from_columns`: check the columns, build
  :class:`~agentgym_credit.credit.steps.StepArrays` (rows of failed trajectories and padding rows left out);
- :func:`padding_rows`: the rows that are not env steps: verl's padding copies
  (``padding_utils.upsample_batch_to_divisible_size`` appends copies of row 0 with an empty response mask
  and a fresh ``pad...`` uid) and other empty-response rows whose step another row already holds;
- :class:`TruncatedTrajectory`, :class:`~agentgym_credit.errors.GroupMismatchError`: a trajectory that lost
  rows from its end (DAPO / overlong filtering), a group whose rollouts did not start alike;
- :func:`columns_from_extra_fields`: the columns from the agent loop outputs' ``extra_fields`` dicts;
- :func:`pending_step_columns`: a context in which the estimators read step columns that the
  trainer fetched apart (verl's v1 trainer hands ``compute_advantage`` a DataProto with ``uid`` only).

One row = one env step (the verl-agent layout): the step's prompt, the response that was the action,
and these columns. ``agc_reward`` is the env's reward of that step, which our estimators read. verl's
``token_level_rewards`` holds, as verl-agent writes it, the trajectory's **episode return** on each step row's
last response token (verl's multi-output agent loop, ``trainer.use_v1``, copies the last output's score onto
every output of a trajectory the same way), so verl's built-in ``grpo`` on the same rows is the fair episode
baseline: it equals our ``grpo`` with ``episode_baseline="step"`` (``tests/test_integration_verl.py``).

**verl-agent's scores** (``token_rewards="verl-agent"``, :data:`TOKEN_REWARDS`): verl-agent's reward manager
writes the episode return of its envs, whose ALFWorld/WebShop win pays 10, and its trainer then subtracts the
invalid-action penalty (0.1) from that token on a row whose action was invalid. With that option a row holds
``reward_scale * R(tau) + invalid_penalty * (not valid)`` (the ``verl-agent`` preset's own defaults, 10 and
-0.1), so verl's built-in ``grpo`` on the rows computes verl-agent's GRPO (its step-row mean and std,
``compute_mean_std_cross_steps=True``), which is the preset's episode term. The ``agc_reward`` column keeps the
env's own reward either way: our estimators (the preset included) scale and penalize themselves.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

from agentgym_credit.credit.steps import StepArrays
from agentgym_credit.errors import CreditError, GroupMismatchError, NotACreditEnv, StepArraysError

GROUP = "uid"
TRAJ = "traj_uid"
STEP_COLUMNS: dict[str, str] = {
    TRAJ: "trajectory id (any hashable; one per rollout)",
    "agc_step": "step index t within the trajectory (0, 1, 2, ...)",
    "agc_reward": "env reward of the step (float)",
    "agc_done": "True on the last step of a trajectory that ended",
    "agc_valid": "the env accepted the action (info['action_valid'])",
    "agc_state_key": "uint64 stable_hash of info['state_key']",
    "agc_obs_key": "uint64 stable_hash of info['obs_key']",
    "agc_history_keys": "uint64 history fingerprints, K+1 per row (HistoryFingerprint)",
}
"""Columns every registered ``agc_*`` estimator needs, besides verl's ``uid``."""

OPTIONAL_COLUMNS = ("agc_failed", "agc_terminated", "agc_final_state_key", "agc_final_obs_key", "agc_env_id")

HOW_TO = ("convert a RolloutBatch with agentgym_credit.integrations.verl.to_dataproto(batch, tokenizer), "
          "or roll out with the verl agent loop registered as 'agc_credit_env' "
          "(agentgym_credit.integrations.verl.CreditEnvAgentLoop), which records them")


class MissingStepColumns(CreditError, KeyError):
    """A verl batch handed to an ``agc_*`` estimator lacks step columns (no silent GRPO fallback)."""

    def __init__(self, missing: list[str], estimator: str, detail: str = ""):
        self.missing = list(missing)
        lines = "\n".join(f"  - {c}: {STEP_COLUMNS.get(c, 'the rollout group id (verl sets it)')}"
                          for c in self.missing)
        super().__init__(
            f"verl batch given to estimator {estimator!r} lacks the step column(s) "
            f"{', '.join(self.missing)} in non_tensor_batch{f' ({detail})' if detail else ''}:\n{lines}\n"
            f"To produce them, {HOW_TO}.")

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class TruncatedTrajectory(StepArraysError):
    """Rows missing from the end of a trajectory: its last row present is not ``agc_done``.

    Every trajectory the agent loop (or :func:`~agentgym_credit.integrations.verl.to_dataproto`) writes ends
    on a ``agc_done`` row (terminated, truncated, or cut at ``max_steps``), so a trajectory without one lost
    its final rows on the way, e.g. to verl's DAPO group filter or to overlong-response filtering. Its returns
    would be wrong silently; filter whole trajectories (or whole groups), or mark them ``agc_failed``."""


def credit_env_ids() -> list[str]:
    """The registered ``credit/*`` env ids (sorted)."""
    import gymnasium as gym

    import agentgym_credit.envs  # noqa: F401  (registers the credit/* ids)

    return sorted(k for k in gym.registry if k.startswith("credit/"))


def check_credit_env_id(env_id: Any, where: str) -> str:
    """``env_id`` without a ``module:`` prefix when it names a registered ``credit/*`` env, else
    :class:`~agentgym_credit.errors.NotACreditEnv` (``where`` says who needs it)."""
    ours = credit_env_ids()
    name = env_id.split(":", 1)[-1] if isinstance(env_id, str) else env_id
    if not isinstance(name, str) or name not in ours:
        raise NotACreditEnv(f"{where} (they record the state keys the estimators need); got env_id {env_id!r}. "
                            f"Registered: {', '.join(ours)}")
    return name


def _check_env_ids(nt: Mapping[str, Any]) -> None:
    if "agc_env_id" not in nt:  # optional column: not checked when absent
        return
    seen = {(x if isinstance(x, str) else repr(x)): x for x in list(nt["agc_env_id"])}
    for x in seen.values():
        check_credit_env_id(x, "the agc_* estimators take batches of credit/* envs only: a row's agc_env_id is "
                               "not one")


def _preset_token_rewards() -> dict[str, float]:
    from agentgym_credit.credit import estimator_options

    opts = estimator_options("verl-agent")
    return {"reward_scale": float(opts["reward_scale"]), "invalid_penalty": float(opts["invalid_penalty"])}


TOKEN_REWARDS: dict[str, dict[str, float]] = {
    "episode": {"reward_scale": 1.0, "invalid_penalty": 0.0},
    "verl-agent": _preset_token_rewards(),
}
"""Named conventions of a step row's ``token_level_rewards`` (module docstring): ``"episode"`` (the raw
episode return R(tau); the default) and ``"verl-agent"`` (the ``verl-agent`` preset's reward scale and
invalid-action penalty: ``10 * R(tau) - 0.1`` on an invalid row, ``10 * R(tau)`` otherwise)."""


def token_reward_options(spec: Any) -> dict[str, float]:
    """``{"reward_scale", "invalid_penalty"}`` of ``spec``: a name in :data:`TOKEN_REWARDS`, or a mapping with
    either key (the other from ``"episode"``)."""
    if isinstance(spec, str):
        if spec not in TOKEN_REWARDS:
            raise ValueError(f"token_rewards must be one of {', '.join(map(repr, TOKEN_REWARDS))} or a mapping "
                             f"with reward_scale / invalid_penalty; got {spec!r}")
        return dict(TOKEN_REWARDS[spec])
    if not isinstance(spec, Mapping):
        raise ValueError(f"token_rewards must be one of {', '.join(map(repr, TOKEN_REWARDS))} or a mapping, got "
                         f"{type(spec).__name__}")
    unknown = sorted(set(spec) - set(TOKEN_REWARDS["episode"]))
    if unknown:
        raise ValueError(f"token_rewards has {', '.join(unknown)}; it takes reward_scale and invalid_penalty")
    out = {**TOKEN_REWARDS["episode"], **{k: float(v) for k, v in spec.items()}}
    if not all(np.isfinite(v) for v in out.values()):
        raise ValueError(f"token_rewards values must be finite, got {out}")
    return out


def row_scores(episode_return: Any, valid: Any, spec: Any = "episode") -> np.ndarray:
    """The score each step row carries on its last response token: ``reward_scale * episode_return``, plus
    ``invalid_penalty`` on rows with ``valid`` False (:func:`token_reward_options` of ``spec``)."""
    opts = token_reward_options(spec)
    ret = np.asarray(episode_return, dtype=np.float64).reshape(-1)
    ok = np.asarray(valid, dtype=bool).reshape(-1)
    return opts["reward_scale"] * ret + np.where(ok, 0.0, opts["invalid_penalty"])


def missing_columns(non_tensor_batch: Mapping[str, Any], has_index: bool) -> list[str]:
    """Names of the required columns absent from ``non_tensor_batch`` (``uid`` too unless passed apart)."""
    need = ([] if has_index else [GROUP]) + list(STEP_COLUMNS)
    return [c for c in need if c not in non_tensor_batch]


def _ids(col: Any) -> np.ndarray:
    """Dense int64 ids (0..G-1) of any hashable labels, in first-seen order of their sorted values."""
    arr = np.asarray(col)
    if arr.dtype == object:
        arr = np.array([str(x) if not isinstance(x, (int, np.integer)) else f"#{int(x)}" for x in arr.tolist()])
    _, inv = np.unique(arr, return_inverse=True)
    return inv.reshape(-1).astype(np.int64)


def _within_group(group: np.ndarray, traj: np.ndarray) -> np.ndarray:
    """Dense ids of the (group, trajectory) pairs: trajectory ids need only be unique within a group."""
    return _ids(group * (int(traj.max(initial=0)) + 1) + traj)


def _history(col: Any, n: int) -> np.ndarray:
    arr = np.asarray(col)
    if arr.dtype != object and arr.ndim == 2:
        return arr
    rows = [np.asarray(r, dtype=np.uint64).reshape(-1) if not isinstance(r, (list, tuple)) else
            np.array([int(x) for x in r], dtype=np.uint64) for r in list(col)]
    if not rows:
        return np.zeros((0, 1), dtype=np.uint64)
    widths = {len(r) for r in rows}
    if len(widths) != 1:
        raise ValueError(f"agc_history_keys rows have different lengths {sorted(widths)}; every step of a "
                         "batch must come from envs with the same history depth")
    return np.stack(rows).reshape(n, -1)


def _u64(col: Any) -> Any:
    arr = np.asarray(col)
    return arr.tolist() if arr.dtype == object else arr


def padding_rows(non_tensor_batch: Mapping[str, Any], nonempty: np.ndarray) -> np.ndarray:
    """Rows (bool mask) that are not env steps, given ``nonempty`` (the rows with response tokens).

    An empty-response row is padding when another row holds its step (same ``traj_uid`` and ``agc_step``:
    verl's padding copies of row 0), when its step columns are ``None``, or when its ``uid`` is verl's
    padding uid (``pad...``) and a row of another uid holds the same step; of several empty-response rows
    holding a step no other row holds, one is kept (a real step whose response was empty)."""
    nonempty = np.asarray(nonempty, dtype=bool).reshape(-1)
    n = len(nonempty)
    pad = np.zeros(n, dtype=bool)
    if nonempty.all():
        return pad
    nt = non_tensor_batch
    if any(c not in nt for c in (TRAJ, "agc_step")):
        return ~nonempty
    traj, step = list(nt[TRAJ]), list(nt["agc_step"])
    uid = [str(u) for u in nt[GROUP]] if GROUP in nt else [""] * n
    holders: dict[tuple[str, str], list[int]] = {}
    for i in range(n):
        if traj[i] is None or step[i] is None:
            pad[i] = not nonempty[i]
            continue
        holders.setdefault((str(traj[i]), str(int(step[i]))), []).append(i)
    for rows in holders.values():
        empty = [i for i in rows if not nonempty[i]]
        if not empty:
            continue
        if len(empty) < len(rows):  # a row with a response holds this step
            pad[empty] = True
            continue
        keep = next((i for i in empty if not uid[i].startswith("pad")), empty[0])
        pad[[i for i in empty if i != keep]] = True
    return pad


def _check_groups(nt: Mapping[str, Any], group: np.ndarray, t: np.ndarray, state_key: Any) -> None:
    """Rollouts of one group must share env, seed, task and initial state (GroupMismatchError)."""
    for c in ("agc_env_id", "agc_seed", "agc_task_id"):
        if c not in nt:
            continue
        vals = np.array([str(x) for x in list(nt[c])])
        for g in np.unique(group):
            seen = np.unique(vals[group == g])
            if len(seen) > 1:
                raise GroupMismatchError(f"rollout group {g} mixes {c} values {', '.join(seen[:4])}: the rows "
                                         "of one uid must be rollouts of one env, seed and task")
    first = np.flatnonzero(t == 0)
    keys = np.asarray(state_key, dtype=object)[first].astype(str) if len(first) else np.zeros(0, dtype=str)
    for g in np.unique(group[first]):
        seen = np.unique(keys[group[first] == g])
        if len(seen) > 1:
            raise GroupMismatchError(f"rollout group {g} has {len(seen)} different initial states (agc_state_key "
                                     "at agc_step 0): GiGPO/GRPO compare rollouts from ONE initial state; give "
                                     "each initial state its own uid")


def _check_ends(traj: np.ndarray, t: np.ndarray, done: np.ndarray, kept: np.ndarray, labels: list[Any]) -> None:
    rows = np.flatnonzero(kept)
    if not len(rows):
        return
    order = rows[np.lexsort((t[rows], traj[rows]))]
    last = order[np.r_[traj[order][1:] != traj[order][:-1], True]]
    cut = last[~done[last]]
    if len(cut):
        names = ", ".join(f"{labels[i]!r} (ends at agc_step {int(t[i])})" for i in cut[:5])
        raise TruncatedTrajectory(f"{len(cut)} trajectorie(s) lack their final rows: {names}"
                                  f"{' ...' if len(cut) > 5 else ''}. Their last row is not agc_done, so rows "
                                  "were dropped from their end (DAPO / overlong filtering?); drop whole "
                                  "trajectories or groups instead, or mark them agc_failed")


def steps_from_columns(non_tensor_batch: Mapping[str, Any], index: Any = None, *,
                       estimator: str = "agc", nonempty: np.ndarray | None = None) -> tuple[StepArrays, np.ndarray]:
    """``(StepArrays, kept)``: the steps of the batch rows whose trajectory did not fail, and the row mask.

    ``index`` is verl's group column (``uid``); when ``None`` it is read from ``non_tensor_batch``.
    ``nonempty`` (the rows with response tokens), when given, lets :func:`padding_rows` leave padding out.
    Raises :class:`MissingStepColumns` when a required column is absent, :class:`TruncatedTrajectory` when a
    trajectory lost its final rows, :class:`~agentgym_credit.errors.GroupMismatchError` for mixed groups,
    :class:`~agentgym_credit.errors.NotACreditEnv` when ``agc_env_id`` (if present) names another env.
    """
    missing = missing_columns(non_tensor_batch, index is not None)
    if missing:
        raise MissingStepColumns(missing, estimator)
    nt = dict(non_tensor_batch)
    if index is not None:
        nt[GROUP] = index
    n = len(np.asarray(nt[GROUP]).reshape(-1))
    pad = np.zeros(n, dtype=bool) if nonempty is None else padding_rows(nt, nonempty)
    if pad.any():
        real = ~pad
        sub = {k: (np.asarray(v, dtype=object)[real] if not isinstance(v, np.ndarray) else v[real])
               for k, v in nt.items() if k in (GROUP, *STEP_COLUMNS, *OPTIONAL_COLUMNS) or k.startswith("agc_")}
        steps, kept_real = steps_from_columns(sub, None, estimator=estimator)
        kept = np.zeros(n, dtype=bool)
        kept[np.flatnonzero(real)[kept_real]] = True
        return steps, kept
    for c in STEP_COLUMNS:
        col = np.asarray(nt[c]) if not isinstance(nt[c], np.ndarray) else nt[c]
        if col.dtype == object and any(x is None for x in col.tolist()):
            row = next(i for i, x in enumerate(col.tolist()) if x is None)
            raise MissingStepColumns([c], estimator, detail=f"row {row} of {c} is None (a row without the step "
                                                             "data, e.g. an output of another agent loop)")
    _check_env_ids(nt)
    group = _ids(nt[GROUP])
    kept = np.ones(n, dtype=bool)
    if "agc_failed" in nt:
        kept = ~np.asarray(nt["agc_failed"], dtype=bool).reshape(-1)
    traj = _within_group(group, _ids(nt[TRAJ]))
    t = np.asarray(nt["agc_step"]).astype(np.int64)
    done = np.asarray(nt["agc_done"]).astype(bool)
    _check_groups(nt, group, t, _u64(nt["agc_state_key"]))
    _check_ends(traj, t, done, kept, list(nt[TRAJ]))
    cols = dict(
        group_id=group, traj_id=traj, t=t,
        reward=np.asarray(nt["agc_reward"]).astype(np.float64), done=done,
        state_key=_u64(nt["agc_state_key"]), obs_key=_u64(nt["agc_obs_key"]),
        history_keys=_history(nt["agc_history_keys"], n), valid=np.asarray(nt["agc_valid"]).astype(bool),
    )
    if "agc_terminated" in nt:  # optional: an episode that ended vs one cut off (the graph estimators read it)
        cols["terminated"] = np.asarray(nt["agc_terminated"]).astype(bool) & done
    for c in ("final_state_key", "final_obs_key"):
        if f"agc_{c}" in nt:
            cols[c] = _u64(nt[f"agc_{c}"])
    steps = StepArrays(**cols)
    return (steps if kept.all() else steps.select(kept)), kept


_PENDING: ContextVar[Mapping[str, Any] | None] = ContextVar("agc_pending_step_columns", default=None)


def columns_from_extra_fields(extra_fields: list[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    """One object column per key of the rows' ``extra_fields`` dicts (``None`` where a row lacks it)."""
    keys = sorted({k for e in extra_fields for k in (e or {})})
    out: dict[str, np.ndarray] = {}
    for k in keys:
        col = np.empty(len(extra_fields), dtype=object)
        col[:] = [(e or {}).get(k) for e in extra_fields]
        out[k] = col
    return out


@contextmanager
def pending_step_columns(columns: Mapping[str, Any]) -> Iterator[None]:
    """Within the block, an estimator whose batch lacks the step columns reads them from ``columns``
    (same rows, same order; checked by length)."""
    token = _PENDING.set(columns)
    try:
        yield
    finally:
        _PENDING.reset(token)


def with_pending(non_tensor_batch: Mapping[str, Any], n_rows: int) -> Mapping[str, Any]:
    """``non_tensor_batch`` completed with the pending columns of :func:`pending_step_columns`, if any."""
    pending = _PENDING.get()
    if pending is None or not missing_columns(non_tensor_batch, has_index=True) == list(STEP_COLUMNS):
        return non_tensor_batch
    lengths = {len(v) for v in pending.values()}
    if lengths and lengths != {n_rows}:
        raise ValueError(f"pending step columns have {sorted(lengths)} rows, the batch {n_rows}")
    return {**pending, **non_tensor_batch}


__all__ = ["GROUP", "TRAJ", "STEP_COLUMNS", "OPTIONAL_COLUMNS", "HOW_TO", "MissingStepColumns", "credit_env_ids",
           "check_credit_env_id", "TOKEN_REWARDS", "token_reward_options", "row_scores",
           "TruncatedTrajectory", "missing_columns", "padding_rows", "steps_from_columns", "columns_from_extra_fields", "pending_step_columns",
           "with_pending"]
