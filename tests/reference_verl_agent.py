"""verl-agent's GiGPO as a plain-Python transcription, shared by ``test_verl_agent_preset.py`` and the
registry-wide property test (``reference_estimators.REFERENCES["verl-agent"]``).

:func:`reference` is this project's transcription of the logic of verl-agent's ``gigpo/core_gigpo.py``
(``compute_step_discounted_returns``, ``episode_norm_reward``, ``build_step_group``, ``step_norm_reward``,
``compute_gigpo_outcome_advantage``) and of its trainer's ``apply_invalid_action_penalty`` and ALFWorld reward
(10 for a win), written from reading that code: dictionaries of lists, one loop per stage, float64, no numpy
grouping, nothing shared with the implementation under test.
"""

from __future__ import annotations

import math


def reference(rows: list[dict], *, mode: str, gamma: float = 0.95, w: float = 1.0, coef: float = 0.1,
              scale: float = 10.0, eps: float = 1e-6, copies: list[int] | None = None) -> list[float]:
    """verl-agent's GiGPO advantage of each row (rows: group, traj, t, reward, valid, obs). ``copies``: the rows its
    ``adjust_batch(mode="copy")`` appended after the step returns were computed (their advantages are left out)."""
    remove_std = {"mean_norm": True, "mean_std_norm": False}[mode]
    invalid = [0.0 if r["valid"] else 1.0 for r in rows]
    # env rewards (ALFWorld win = 10 in verl-agent) and the episode reward of each trajectory
    reward = [scale * r["reward"] for r in rows]
    by_traj: dict = {}
    for i, r in enumerate(rows):
        by_traj.setdefault((r["group"], r["traj"]), []).append(i)
    episode_reward = {k: sum(reward[i] for i in idx) for k, idx in by_traj.items()}
    # compute_step_discounted_returns: reverse running return within each trajectory (rows in step order)
    step_return = [0.0] * len(rows)
    for idx in by_traj.values():
        running = 0.0
        for i in sorted(idx, key=lambda j: rows[j]["t"], reverse=True):
            running = reward[i] + gamma * running
            step_return[i] = running
    # the reward manager puts the episode reward on each row's last token; the penalty comes off that token
    # and off the row's step return
    score = [episode_reward[(r["group"], r["traj"])] - coef * invalid[i] for i, r in enumerate(rows)]
    step_return = [step_return[i] - coef * invalid[i] for i in range(len(rows))]
    # adjust_batch(mode="copy"): the copied rows join the batch with their uid, anchor, score and step return
    n = len(rows)
    for c in copies or []:
        rows = rows + [rows[c]]
        score.append(score[c])
        step_return.append(step_return[c])

    def stdev(xs: list[float]) -> float:  # torch.std: unbiased
        m = sum(xs) / len(xs)
        return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))

    # episode_norm_reward, compute_mean_std_cross_all_data=True: every row of the group enters
    by_group: dict = {}
    for i, r in enumerate(rows):
        by_group.setdefault(r["group"], []).append(score[i])
    stats = {g: ((0.0, 1.0) if len(xs) == 1 else (sum(xs) / len(xs), stdev(xs))) for g, xs in by_group.items()}
    episode_adv = []
    for i, r in enumerate(rows):
        mean, std = stats[r["group"]]
        episode_adv.append(score[i] - mean if remove_std else (score[i] - mean) / (std + eps))
    # build_step_group: identical observations within one group; step_norm_reward
    clusters: dict = {}
    for i, r in enumerate(rows):
        clusters.setdefault((r["group"], r["obs"]), []).append(step_return[i])
    sstats = {k: ((xs[0], 1.0) if len(xs) == 1 else (sum(xs) / len(xs), stdev(xs))) for k, xs in clusters.items()}
    step_adv = []
    for i, r in enumerate(rows):
        mean, std = sstats[(r["group"], r["obs"])]
        step_adv.append(step_return[i] - mean if remove_std else (step_return[i] - mean) / (std + eps))
    return [e + w * s for e, s in zip(episode_adv, step_adv)][:n]



def ref_verl_agent(steps, *, mode: str = "mean_std_norm", gamma: float = 0.95, omega: float = 1.0,
                   invalid_penalty: float = -0.1, reward_scale: float = 10.0, eps: float = 1e-6) -> list[float]:
    """:func:`reference` on a StepArrays (rows: group_id, traj_id, t, reward, valid, obs_key)."""
    rows = [{"group": g, "traj": tr, "t": t, "reward": r, "valid": v, "obs": o}
            for g, tr, t, r, v, o in zip(steps.group_id.tolist(), steps.traj_id.tolist(), steps.t.tolist(),
                                         steps.reward.tolist(), steps.valid.tolist(), steps.obs_key.tolist())]
    return reference(rows, mode=mode, gamma=gamma, w=omega, coef=-invalid_penalty, scale=reward_scale, eps=eps)


def reference_scores(rows: list[dict], *, coef: float = 0.1, scale: float = 10.0) -> list[float]:
    """What verl-agent's trainer leaves in ``token_level_rewards`` for each step row, summed over the row's
    tokens: its episode reward manager writes the trajectory's ``episode_rewards`` (the sum of its env rewards,
    ALFWorld's win = 10) on the row's last response token, then ``apply_invalid_action_penalty`` subtracts
    ``coef`` from that token on a row whose action was invalid; without a KL reward, ``token_level_rewards`` is
    ``token_level_scores``. Rows: group, traj, reward, valid."""
    episode: dict = {}
    for r in rows:
        episode[(r["group"], r["traj"])] = episode.get((r["group"], r["traj"]), 0.0) + scale * r["reward"]
    return [episode[(r["group"], r["traj"])] - (0.0 if r["valid"] else coef) for r in rows]


def reference_grpo(rows: list[dict], *, coef: float = 0.1, scale: float = 10.0, eps: float = 1e-6,
                   norm_by_std: bool = True) -> list[float]:
    """verl-agent's GRPO advantage of each step row (its ``compute_grpo_outcome_advantage`` with its default
    ``compute_mean_std_cross_steps=True``: every step row of a ``uid`` enters the mean and the unbiased std; a
    lone row gets mean 0 and std 1) on :func:`reference_scores`."""
    score = reference_scores(rows, coef=coef, scale=scale)
    by_group: dict = {}
    for i, r in enumerate(rows):
        by_group.setdefault(r["group"], []).append(score[i])
    out = []
    for i, r in enumerate(rows):
        xs = by_group[r["group"]]
        if len(xs) == 1:
            mean, std = 0.0, 1.0
        else:
            mean = sum(xs) / len(xs)
            std = math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1))
        out.append((score[i] - mean) / (std + eps) if norm_by_std else score[i] - mean)
    return out


# ---- verl-agent's env side: how a reply becomes an action, its validity flag and the step reward ----------------
# Restated from reading verl-agent's agent_system/environments/env_package/{alfworld,webshop}/projection.py and
# envs.py (the ALFWorld and WebShop workers), one statement per rule, nothing shared with the package.

def verl_agent_projection(reply: str, family: str) -> tuple[str, int]:
    """(action sent to the env, valid 0/1) of one model reply, as verl-agent's ``{alfworld,webshop}_projection``."""
    original = reply
    text = reply.lower()
    start = text.find("<action>")
    end = text.find("</action>")
    if start == -1 or end == -1:
        keep = 20 if family == "webshop" else 30
        return text[-keep:], 0  # no action block: the tail of the reply, invalid
    action = text[start + len("<action>"):end].strip().lower()
    valid = 1
    if original.find("<think>") == -1 or original.find("</think>") == -1:
        valid = 0
    for ch in original:
        if "\u4e00" <= ch <= "\u9fff":
            valid = 0
    return action, valid


def verl_agent_env_reward(family: str, reward: float, done: bool, info: dict) -> float:
    """The reward verl-agent's env worker hands on: ALFWorld ``10 * won``; WebShop 10 if done and the page's score
    is exactly 1.0, else 0."""
    if family == "webshop":
        return 10.0 if (done and reward == 1.0) else 0.0
    return 10.0 * float(info["won"])


def play_like_verl_agent(make_env, seed: int, replies: list[list[str]], family: str, max_steps: int,
                         group: int = 0) -> list[dict]:
    """Each reply list played from ``reset(seed=seed)`` of a fresh env: one row per step (group, traj, t, reward in
    verl-agent's units, valid, the observation text the action was taken at), up to ``max_steps`` or the end."""
    rows = []
    for traj, script in enumerate(replies):
        env = make_env()
        obs, info_before = env.reset(seed=seed)
        for t in range(max_steps):
            action, valid = verl_agent_projection(script[t % len(script)], family)
            nxt, reward, terminated, truncated, info = env.step(action)
            done = bool(terminated or truncated)
            rows.append({"group": group, "traj": traj, "t": t, "valid": bool(valid), "obs": obs,
                         "reward": verl_agent_env_reward(family, reward, done, info), "action": action,
                         "admissible": list(info_before.get("admissible_actions") or [])})
            info_before = info
            obs = nxt
            if done:
                break
        env.close()
    return rows


# ---- verl-agent's prompts: its env managers' build_text_obs, SimpleMemory.fetch, format_obs, format_avail_actions --
# Restated from reading agent_system/environments/env_manager.py and agent_system/memory/memory.py (commit 796ed31).

def verl_agent_prompts(rows: list[dict], family: str, templates: dict[str, str], history_length: int = 2) -> list[str]:
    """The prompt verl-agent builds before each step of one trajectory's rows (obs, action, admissible), in order.
    ``templates``: its ``<FAMILY>_TEMPLATE_NO_HIS`` / ``<FAMILY>_TEMPLATE`` strings."""
    prefix = family.upper()
    no_his, with_his = templates[f"{prefix}_TEMPLATE_NO_HIS"], templates[f"{prefix}_TEMPLATE"]
    first = rows[0]["obs"]
    if family == "webshop":
        parts = first.split(" [SEP] ")
        assert parts[1] == "Instruction:"
        task = parts[2]
    else:
        start = first.find("Your task is to: ")
        task = first[start + len("Your task is to: "):].strip()

    def shown_obs(text):
        if family != "webshop":
            return text
        parts = text.split(" [SEP] ")
        try:
            index = parts.index(task)
            return " [SEP] ".join("'" + p + "'" for p in parts[index + 1:])
        except ValueError:
            return text

    def actions_text(admissible):
        if family != "webshop":
            return "\n ".join("'" + s + "'" for s in admissible if s != "help")
        avail = []
        if any(a.startswith("search[") for a in admissible):  # WebShop's has_search_bar
            avail.append("search[<your query>]")
        for a in admissible:
            if a.startswith("click["):
                avail.append(a)
        return "\n".join("'" + s + "'," for s in avail)

    memory, prompts = [], []
    for k, row in enumerate(rows):
        obs, adm = shown_obs(row["obs"]), actions_text(row["admissible"])
        if k == 0 or history_length <= 0:
            text = no_his.format(task_description=task, current_observation=obs, admissible_actions=adm,
                                 available_actions=adm)
        else:
            recent = memory[-history_length:]
            start_idx = len(memory) - len(recent)
            lines = []
            for j, (o, a) in enumerate(recent):
                n = start_idx + j + 1
                lines.append(f"[Observation {n}: '{o}', Action {n}: '{a}']")
            fields = dict(task_description=task, step_count=len(memory), history_length=len(recent),
                          action_history="\n".join(lines), current_step=len(memory) + 1, current_observation=obs,
                          admissible_actions=adm, available_actions=adm)
            text = with_his.format(**fields)
            if family == "webshop" and len(text) > 13000:
                text = no_his.format(**fields)
        prompts.append(text)
        memory.append((obs, row["action"]))
    return prompts
