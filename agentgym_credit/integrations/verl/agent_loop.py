"""A verl agent loop that plays any ``credit/*`` env turn by turn, and the dataset rows that drive it.

What lives here:

- :data:`AGENT_NAME` (``"agc_credit_env"``): the name it is registered under with verl's
  ``experimental.agent_loop.register`` (select it per dataset row with ``agent_name``);
- :class:`CreditEnvAgentLoop`: the loop. One ``run`` = one trajectory: reset the env with the row's
  seed and task, then per turn build the prompt with our trainer's own code
  (:class:`~agentgym_credit.trainer.policy.LLMPolicy`'s ``prompt_ids``: the env family's template, the
  tokenizer's chat template when it has one, the last ``history_len`` (observation, action) pairs, oldest
  turns dropped to fit ``rollout.prompt_length``), call ``server_manager.generate(request_id=...,
  prompt_ids=..., sampling_params=...)`` (verl's server-manager interface; vLLM/SGLang behind it),
  decode the response as the action and step the env. It returns **one** ``AgentLoopOutput`` **per
  step** (verl-agent's layout, and verl 0.9.1's multi-output agent loops, ``trainer.use_v1=True``): the
  step's prompt, its response and log-probs, and in ``extra_fields`` the step columns our estimators
  read (``traj_uid``, ``agc_step``, ``agc_reward``, ``agc_done``, ``agc_valid``, ``agc_state_key``,
  ``agc_obs_key``, ``agc_history_keys``, ``agc_failed``, ``agc_task_id``, ``agc_state_index``);
- :func:`group_dataset`: dataset rows (write them to Parquet for verl's ``RLHFDataset``), one per group;
  verl repeats each row ``rollout.n`` times, so the N rollouts of a group share seed and task, hence
  one initial state;
- :func:`outputs_to_dataproto`: the outputs of finished runs as one step-row ``DataProto`` (for a
  driver that calls the loop itself; verl's v1 trainer does this on its own).

Env calls run off verl's event loop in a pool of env processes (or threads) sized by the row settings
``env_pool`` / ``env_workers`` (:mod:`~agentgym_credit.integrations.verl.env_pool`). The prompt is our
trainer's (``prompting="plain"``) or verl-agent's reason-then-act format with its step-count header and invalid
format projection (``prompting="verl-agent"``, :mod:`~agentgym_credit.integrations.verl.prompting`), or a template
loaded from a verl-agent checkout or a user file (``prompt_template``). ``rules="verl-agent"`` is verl-agent's mode:
its projection (first ``<action>`` block, lower-cased; the reply's tail without tags), its format-only validity (an
inadmissible but well-formed action is valid), and its reward, ``won`` per step (x10 by the ``verl-agent`` preset and
scores: ALFWorld 10 x won, WebShop 10 for a score of exactly 1.0; the env's -0.1 for an inadmissible command and
WebShop's partial scores are not read); ``tests/test_verl_agent_rules.py`` holds every row's advantage to a
transcription of verl-agent's rules on ALFWorld and WebShop (<= 1e-5). Each
output's ``extra_fields["reward_extra_info"]`` holds ``acc`` (the episode was won) and ``acc/<category>``
(ALFWorld task type, WebShop product category), which verl's validation averages per data source. Keys are
computed by the collector's own env worker (:class:`~agentgym_credit.wrappers.workers.EnvWorker`
with :class:`~agentgym_credit.wrappers.history.HistoryFingerprint`), so they equal those of a
:class:`~agentgym_credit.wrappers.GroupedRolloutCollector` batch. An env that raises ends the
trajectory: its steps so far are returned with ``agc_failed=True`` (the estimators give them advantage 0).
``reward_score`` of every output (and ``extra_fields["agc_score"]``) is that row's score: the trajectory's return,
or with ``token_rewards="verl-agent"`` verl-agent's ``10 * return``, less 0.1 on a row whose action was invalid or
malformed. verl's v1 worker copies the last output's ``reward_score`` onto the others
(``agent_loop_tq.py`` lines 172-174), so our trainer writes each row's ``agc_score`` back into ``rm_scores``
(:mod:`~agentgym_credit.integrations.verl.trainer`). The estimators read each step's own env reward from
``agc_reward``.
"""

from __future__ import annotations

import json
from typing import Any
from uuid import uuid4

import numpy as np
from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopMetrics, AgentLoopOutput, register

from agentgym_credit.errors import NotACreditEnv
from agentgym_credit.integrations.verl.columns import (
    TOKEN_REWARDS,
    check_credit_env_id,
    columns_from_extra_fields,
    credit_env_ids,
    row_scores,
)
from agentgym_credit.integrations.verl.dataproto import step_tensors
from agentgym_credit.integrations.verl.env_pool import env_handle
from agentgym_credit.integrations.verl.prompting import (
    PROMPTINGS,
    RULES,
    Prompter,
    load_prompt_template,
    project_response,
    verl_agent_projection,
    verl_agent_reward,
)
from agentgym_credit.trainer.policy import task_text
from agentgym_credit.wrappers.workers import EnvFailure

AGENT_NAME = "agc_credit_env"
DEFAULTS: dict[str, Any] = {"seed": 0, "task": None, "env_kwargs": {}, "max_steps": 30, "history_len": 4,
                            "history_depth": 4, "prompting": "plain", "env_pool": "process", "env_workers": 4,
                            "token_rewards": "", "rules": "ours", "prompt_template": ""}
"""Per-row settings (``extra_info["agc"]``) and their defaults; ``env_id`` is required. ``prompting``: ``"plain"``
or ``"verl-agent"`` (:mod:`~agentgym_credit.integrations.verl.prompting`); ``env_pool``/``env_workers``: where
env calls run (module docstring); ``token_rewards``: each output's score, ``"episode"`` or ``"verl-agent"``
(:data:`~agentgym_credit.integrations.verl.columns.TOKEN_REWARDS`; empty: ``"verl-agent"`` under verl-agent's
rules, else ``"episode"``); ``rules``: ``"ours"`` or ``"verl-agent"`` (:data:`~.prompting.RULES`: how a reply
becomes the action, its validity and the step reward); ``prompt_template``: a path (a verl-agent checkout or a
template file, :func:`~.prompting.load_prompt_template`), empty for the built-in prompt."""


DATASET_ENV_KWARGS = frozenset({
    "challenge", "coin_reward", "cue_prob", "end_on_dead_end", "expert", "fast", "goal_reward", "include_unsolvable",
    "invalid_action_reward", "is_slippery", "jump_risk", "length", "max_states", "max_steps", "mechanism", "n_objects",
    "n_receptacles", "n_tasks", "n_traps", "num_games", "num_products", "observation_mode", "open_games",
    "reward_invalid", "reward_rules", "reward_success", "score_scale", "settings", "show_attrs", "show_carrying",
    "show_passenger", "show_status", "side_reward", "size", "slip", "source", "split", "step_cost", "task_seed",
    "task_types", "trap_reward", "wall_density", "catalog_seed"})
"""The ``env_kwargs`` a dataset row may set (issue 43 D7): task, reward and episode settings of the ``credit/*``
envs. Nothing that chooses files — ``data_dir``, ``cache_dir``, ``catalog`` — nor an unknown key: a dataset row is
data from wherever the dataset came from, and it used to choose which files ``gym.make`` loads. Those are set where
the trainer runs (the envs' environment variables, e.g. ``$ALFWORLD_DATA``, or their defaults)."""


def check_env_kwargs(env_kwargs: Any) -> dict[str, Any]:
    """``env_kwargs`` (a dict, or its JSON text as a dataset row holds it) if every key is in
    :data:`DATASET_ENV_KWARGS` and every value plain JSON data; else ``ValueError`` naming the keys refused."""
    if isinstance(env_kwargs, str):
        try:
            env_kwargs = json.loads(env_kwargs or "{}")
        except ValueError as exc:
            raise ValueError(f"env_kwargs of a dataset row is not JSON: {exc}") from None
    if not isinstance(env_kwargs, dict):
        raise ValueError(f"env_kwargs must be a dict, got {type(env_kwargs).__name__}")
    bad = sorted(str(k)[:40] for k in env_kwargs if k not in DATASET_ENV_KWARGS)
    if bad:
        raise ValueError(f"env_kwargs keys {bad} may not come from a dataset row (they choose files or are unknown); "
                         f"allowed: {', '.join(sorted(DATASET_ENV_KWARGS))}. Set file locations where the trainer runs "
                         "(e.g. $ALFWORLD_DATA, $AGENTGYM_CREDIT_TEXTWORLD_CACHE)")
    return env_kwargs


def group_dataset(env_id: str, seeds: list[int], *, tasks: list[Any] | None = None,
                  env_kwargs: dict[str, Any] | None = None, max_steps: int = 30, history_len: int = 4,
                  history_depth: int = 4, prompting: str = "plain", env_pool: str = "process", env_workers: int = 4,
                  data_source: str | None = None, token_rewards: str | None = None, rules: str = "ours",
                  prompt_template: str = "") -> list[dict[str, Any]]:
    """One verl dataset row per group (``seeds[i]``, ``tasks[i]``); ``prompt`` is a placeholder that
    verl's dataset needs (the loop builds every prompt itself). ``data_source`` (default ``env_id``) is what
    verl's validation metrics are grouped by (e.g. ``"alfworld/dev"`` vs ``"alfworld/generated"``).
    ``rules="verl-agent"`` is verl-agent's mode (:mod:`~agentgym_credit.integrations.verl.prompting`: its
    projection, format-only validity, 10 x won); ``token_rewards`` then defaults to ``"verl-agent"``."""
    if tasks is not None and len(tasks) != len(seeds):
        raise ValueError(f"got {len(tasks)} tasks for {len(seeds)} seeds")
    check_env_id(env_id)
    check_env_kwargs(env_kwargs or {})
    token_rewards = _resolve(token_rewards, rules)
    _check_rules(rules, prompting, prompt_template)
    if prompt_template:
        load_prompt_template(prompt_template, env_id)  # refused here, before any rollout
    rows = []
    for i, seed in enumerate(seeds):
        agc = {"env_id": env_id, "seed": int(seed), "task": None if tasks is None else tasks[i],
               "env_kwargs": json.dumps(env_kwargs or {}), "max_steps": int(max_steps),
               "history_len": int(history_len), "history_depth": int(history_depth), "prompting": str(prompting),
               "env_pool": str(env_pool), "env_workers": int(env_workers), "token_rewards": str(token_rewards),
               "rules": str(rules), "prompt_template": str(prompt_template or "")}
        rows.append({"data_source": data_source or env_id, "agent_name": AGENT_NAME,
                     "prompt": [{"role": "user", "content": f"{env_id} seed {int(seed)}"}],
                     "extra_info": {"index": i, "agc": agc}})
    return rows


def check_env_id(env_id: Any) -> str:
    """``env_id`` if it is a registered ``credit/*`` env, else :class:`~agentgym_credit.errors.NotACreditEnv` (a
    ValueError) naming the ones there are."""
    if not isinstance(env_id, str) or ":" in env_id:  # the loop makes the env by id: no "module:" form here
        raise NotACreditEnv(f"agent loop {AGENT_NAME!r} plays credit/* envs by id; got env_id {env_id!r}. "
                            f"Registered: {', '.join(credit_env_ids())}")
    return check_credit_env_id(env_id, f"agent loop {AGENT_NAME!r} plays credit/* envs")


def _resolve(token_rewards: Any, rules: Any) -> str:
    """``token_rewards`` checked, its default (empty/None) filled from ``rules``."""
    if not isinstance(rules, str) or rules not in RULES:
        raise ValueError(f"rules must be one of {', '.join(map(repr, RULES))}, got {rules!r}")
    if not token_rewards:
        return "verl-agent" if rules == "verl-agent" else "episode"
    return _token_rewards(token_rewards)


def _check_rules(rules: str, prompting: str, prompt_template: str) -> None:
    """verl-agent's rules read ``<think>``/``<action>`` tags: a prompt must ask for them."""
    if rules == "verl-agent" and prompting == "plain" and not prompt_template:
        raise ValueError("rules='verl-agent' reads the reply's <think>...</think><action>...</action> tags, which the "
                         "plain prompt does not ask for (every step would be invalid): use prompting='verl-agent' or "
                         "a prompt_template that asks for them")


def _token_rewards(name: Any) -> str:
    if not isinstance(name, str) or name not in TOKEN_REWARDS:  # a dataset row holds a name, not numbers
        raise ValueError(f"token_rewards must be one of {', '.join(map(repr, TOKEN_REWARDS))}, got {name!r}")
    return name


def _settings(kwargs: dict[str, Any]) -> dict[str, Any]:
    agc = dict((kwargs.get("extra_info") or {}).get("agc") or {})
    for k in ("env_id", *DEFAULTS):
        if k in kwargs and k not in agc:
            agc[k] = kwargs[k]
    if not agc.get("env_id"):
        raise ValueError(f"agent loop {AGENT_NAME!r}: the dataset row names no env (extra_info['agc']['env_id']); "
                         "build rows with agentgym_credit.integrations.verl.group_dataset")
    check_env_id(agc["env_id"])
    out = {**DEFAULTS, **agc}
    out["env_kwargs"] = check_env_kwargs(out["env_kwargs"])
    if out["prompting"] not in PROMPTINGS:
        raise ValueError(f"prompting must be one of {', '.join(PROMPTINGS)}, got {out['prompting']!r}")
    if out["env_pool"] not in ("process", "thread") or int(out["env_workers"]) < 1:
        raise ValueError(f"env_pool must be 'process' or 'thread' and env_workers >= 1, got {out['env_pool']!r}, "
                         f"{out['env_workers']!r}")
    out["token_rewards"] = _resolve(out["token_rewards"], out["rules"])
    _check_rules(out["rules"], out["prompting"], out["prompt_template"])
    return out


@register(AGENT_NAME)
class CreditEnvAgentLoop(AgentLoopBase):
    """Plays one trajectory of a ``credit/*`` env through verl's server manager (module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.prompt_length = int(self.rollout_config.prompt_length)
        self.response_length = int(self.rollout_config.response_length)

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> list[AgentLoopOutput]:
        cfg = _settings(kwargs)
        env_id = str(cfg["env_id"])
        copy = int(kwargs.get("session_id", uuid4().int % (1 << 30)))
        env = env_handle(cfg)
        options = {} if cfg["task"] is None else {"task": cfg["task"]}
        traj_uid = uuid4().hex
        steps: list[dict[str, Any]] = []
        category, last_info = "", {}
        try:
            obs, _, _, _, info, hs, ho = await env.call("reset_slot", int(cfg["seed"]), options, copy)
            category = await env.category(env_id, info)
            template = load_prompt_template(cfg["prompt_template"], env_id) if cfg["prompt_template"] else None
            prompter = Prompter(self.tokenizer, env_id, int(cfg["history_len"]), self.prompt_length, task_text(info),
                                cfg["prompting"], template, cfg["rules"])
            verl_agent = cfg["rules"] == "verl-agent"
            for t in range(int(cfg["max_steps"])):
                prompt_ids = prompter.prompt_ids(obs, info, 0)
                out = await self.server_manager.generate(request_id=uuid4().hex, prompt_ids=prompt_ids,
                                                         sampling_params=sampling_params)
                response = list(out.token_ids)[: self.response_length]
                logprobs = list(out.log_probs)[: self.response_length] if out.log_probs else None
                text = self.tokenizer.decode(response, skip_special_tokens=True)
                text = text if verl_agent else text.strip()  # verl-agent projects the reply unstripped
                action, well_formed = (verl_agent_projection(text, env_id) if verl_agent else
                                       project_response(text, cfg["prompting"]))
                prompter.add(obs, action)
                res = await env.call("step_slot", action)
                row = {"prompt_ids": prompt_ids, "response_ids": response, "logprobs": logprobs, "t": t,
                       "state_key": hs, "obs_key": ho, "history_keys": [int(x) for x in info["history_keys"]],
                       "state_index": int(info.get("state_index", -1)), "reward": 0.0, "done": False,
                       "valid": True, "failed": isinstance(res, EnvFailure)}
                steps.append(row)
                if row["failed"]:
                    break
                obs, reward, term, trunc, info, hs, ho = res
                last_info = info
                done = bool(term or trunc or t == int(cfg["max_steps"]) - 1)
                if verl_agent:  # verl-agent's rules: reward = won (x10 by the preset), valid = format alone
                    row.update(reward=verl_agent_reward(env_id, reward, bool(term or trunc), info), valid=well_formed,
                               done=done)
                else:
                    row.update(reward=float(reward), valid=bool(info.get("action_valid", True)) and well_formed,
                               done=done)
                if row["done"]:
                    break
        finally:
            await env.close()
        failed = any(s["failed"] for s in steps)
        ret = float(sum(s["reward"] for s in steps))
        scores = row_scores([ret] * len(steps), [s["valid"] for s in steps], cfg["token_rewards"]).tolist()
        task_id = str(cfg["task"]) if cfg["task"] is not None else ""
        won = float(bool(last_info.get("won", ret > 0))) if not failed else 0.0
        # verl's validation reads reward_extra_info per data source: "acc" (success), and success per task
        # category (ALFWorld task type, WebShop product category); its v1 worker copies the last output's
        # reward_extra_info onto the others and needs the key on it
        extra_info = {"acc": won, **({f"acc/{category}": won} if category else {})}
        return [AgentLoopOutput(
            prompt_ids=s["prompt_ids"], response_ids=s["response_ids"], response_mask=[1] * len(s["response_ids"]),
            response_logprobs=s["logprobs"], reward_score=score, num_turns=2, metrics=AgentLoopMetrics(),
            extra_fields={"reward_extra_info": dict(extra_info), "traj_uid": traj_uid, "agc_step": s["t"],
                          "agc_reward": s["reward"],
                          "agc_done": s["done"], "agc_valid": s["valid"], "agc_state_key": s["state_key"],
                          "agc_obs_key": s["obs_key"], "agc_history_keys": s["history_keys"],
                          "agc_failed": failed, "agc_task_id": task_id, "agc_state_index": s["state_index"],
                          "agc_env_id": env_id, "agc_seed": int(cfg["seed"]), "agc_score": score},
        ) for s, score in zip(steps, scores)]


def outputs_to_dataproto(runs: list[list[AgentLoopOutput]], uids: list[str], *, pad_token_id: int = 0) -> Any:
    """Step rows of finished runs (``runs[i]`` = one ``run``'s outputs, ``uids[i]`` = its group) as a
    ``DataProto`` with the tensors of :func:`~agentgym_credit.integrations.verl.dataproto.step_tensors`
    and every ``extra_fields`` entry as a column."""
    from verl.protocol import DataProto

    if len(runs) != len(uids):
        raise ValueError(f"got {len(uids)} uids for {len(runs)} runs")
    rows = [(uid, o) for run, uid in zip(runs, uids) for o in run]
    if not rows:
        raise ValueError("outputs_to_dataproto: no steps in these runs")
    outs = [o for _, o in rows]
    has_lp = all(o.response_logprobs is not None for o in outs)
    returns: dict[tuple[str, Any], float] = {}
    for uid, o in rows:  # the episode return of each trajectory, on each of its rows
        key = (uid, o.extra_fields["traj_uid"])
        returns[key] = returns.get(key, 0.0) + float(o.extra_fields["agc_reward"])
    if all(o.extra_fields.get("agc_score") is not None for o in outs):  # the loop's row scores (token_rewards)
        scores = [float(o.extra_fields["agc_score"]) for o in outs]
    else:
        scores = [returns[(uid, o.extra_fields["traj_uid"])] for uid, o in rows]
    tensors = step_tensors([o.prompt_ids for o in outs], [o.response_ids for o in outs], scores,
                           [o.response_logprobs for o in outs] if has_lp else None, int(pad_token_id))
    if has_lp:
        tensors["rollout_log_probs"] = tensors.pop("old_log_probs")
    non_tensors = {"uid": np.array([u for u, _ in rows], dtype=object),
                   **columns_from_extra_fields([o.extra_fields for o in outs])}
    return DataProto.from_dict(tensors=tensors, non_tensors=non_tensors)


__all__ = ["AGENT_NAME", "DATASET_ENV_KWARGS", "DEFAULTS", "CreditEnvAgentLoop", "check_env_id", "check_env_kwargs", "group_dataset", "outputs_to_dataproto"]
