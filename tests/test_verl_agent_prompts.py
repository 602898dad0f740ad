"""``rules="verl-agent"`` renders verl-agent's prompts byte for byte from its templates, and parses replies as it does.

``TEMPLATES`` is a transcript of verl-agent's ``agent_system/environments/prompts/{alfworld,webshop}.py`` (commit
796ed31), written into a folder laid out like its checkout; ``reference_verl_agent.verl_agent_prompts`` restates how
its env managers fill them (``build_text_obs``, ``SimpleMemory.fetch``, ``format_obs``, ``format_avail_actions``).
Before, a template loaded from a checkout got the package's history format (``[Step i] Observation: ...``), one
comma-separated line of admissible actions with ``help`` and capped at 50 (WebShop 30), the task without its final
period, and replies were stripped before their last 30/20 characters were taken.
"""

from __future__ import annotations

import random

import gymnasium as gym
import numpy as np
import pytest
from test_verl_agent_rules import _compare, _forms, _tok, alfworld_plan, webshop_plan

from agentgym_credit.integrations.verl.prompting import (
    Prompter,
    verl_agent_actions,
    verl_agent_projection,
    verl_agent_task,
)

TEMPLATES = {
    'ALFWORLD_TEMPLATE_NO_HIS': (
        '\n'
        'You are an expert agent operating in the ALFRED Embodied Environment.\n'
        'Your current observation is: {current_observation}\n'
        'Your admissible actions of the current situation are: [{admissible_actions}].\n'
        '\n'
        "Now it's your turn to take an action.\n"
        'You should first reason step-by-step about the current situation. This reasoning process MUST be enclosed within <think> </think> tags. \n'
        "Once you've finished your reasoning, you should choose an admissible action for current step and present it within <action> </action> tags.\n"),
    'ALFWORLD_TEMPLATE': (
        '\n'
        'You are an expert agent operating in the ALFRED Embodied Environment. Your task is to: {task_description}\n'
        'Prior to this step, you have already taken {step_count} step(s). Below are the most recent {history_length} observations and the corresponding actions you took: {action_history}\n'
        'You are now at step {current_step} and your current observation is: {current_observation}\n'
        'Your admissible actions of the current situation are: [{admissible_actions}].\n'
        '\n'
        "Now it's your turn to take an action.\n"
        'You should first reason step-by-step about the current situation. This reasoning process MUST be enclosed within <think> </think> tags. \n'
        "Once you've finished your reasoning, you should choose an admissible action for current step and present it within <action> </action> tags.\n"),
    'WEBSHOP_TEMPLATE_NO_HIS': (
        '\n'
        'You are an expert autonomous agent operating in the WebShop e‑commerce environment. \n'
        'Your task is to: {task_description}.\n'
        'Your current observation is: {current_observation}.\n'
        'Your admissible actions of the current situation are: \n'
        '[\n'
        '{available_actions}\n'
        '].\n'
        '\n'
        "Now it's your turn to take one action for the current step.\n"
        'You should first reason step-by-step about the current situation, then think carefully which admissible action best advances the shopping goal. This reasoning process MUST be enclosed within <think> </think> tags. \n'
        "Once you've finished your reasoning, you should choose an admissible action for current step and present it within <action> </action> tags.\n"),
    'WEBSHOP_TEMPLATE': (
        '\n'
        'You are an expert autonomous agent operating in the WebShop e‑commerce environment.\n'
        'Your task is to: {task_description}.\n'
        'Prior to this step, you have already taken {step_count} step(s). Below are the most recent {history_length} observations and the corresponding actions you took: {action_history}\n'
        'You are now at step {current_step} and your current observation is: {current_observation}.\n'
        'Your admissible actions of the current situation are: \n'
        '[\n'
        '{available_actions}\n'
        '].\n'
        '\n'
        "Now it's your turn to take one action for the current step.\n"
        'You should first reason step-by-step about the current situation, then think carefully which admissible action best advances the shopping goal. This reasoning process MUST be enclosed within <think> </think> tags. \n'
        "Once you've finished your reasoning, you should choose an admissible action for current step and present it within <action> </action> tags.\n"),
}


def _checkout(tmp_path):
    """A folder laid out like a verl-agent checkout holding the transcript of its two prompt files."""
    d = tmp_path / "verl-agent" / "agent_system" / "environments" / "prompts"
    d.mkdir(parents=True)
    for family in ("alfworld", "webshop"):
        names = [k for k in TEMPLATES if k.startswith(family.upper())]
        (d / f"{family}.py").write_text("".join(f"{k} = {TEMPLATES[k]!r}\n" for k in names))
    return tmp_path / "verl-agent"


def _mixed_scripts(plan, bad, nxt, n, seed):
    """``n`` trajectories of replies: mostly the plan's next action well formed, mixed with every malformed form
    and with trailing blank lines (kept by verl-agent: a tagless reply's tail then ends in them)."""
    rng = random.Random(seed)
    scripts = []
    for _ in range(n):
        script = []
        for k in range(8):
            good = plan[min(k, len(plan) - 1)]
            forms = {**_forms(good, bad, nxt), "trailing_blank": f"{good}\n\n",
                     "tagged_blank": f"<think>ok</think><action>{good}</action>\n\n"}
            name = "ok" if rng.random() < 0.55 else rng.choice(sorted(forms))
            script.append(forms[name])
        scripts.append(script)
    return scripts


def test_alfworld_prompts_equal_verl_agents_byte_for_byte(tmp_path):
    pytest.importorskip("textworld")
    plan = alfworld_plan()
    f = [_forms(a, "fly to the moon", "look") for a in plan]
    scripts = [[x["ok"] for x in f], [f[0]["no_tags"], f[0]["inadmissible"], f[1]["cjk"], f[1]["ok"], f[2]["upper"]],
               [f"{plan[0]}\n\n", f[0]["two_blocks"], f[1]["long_no_tags"]]]
    words = [w for a in plan for w in a.split()]
    _compare("credit/ALFWorld-v0", "alfworld", {"max_steps": 50}, 3, scripts, words, "mean_std_norm",
             TEMPLATES, _checkout(tmp_path))


def test_webshop_prompts_equal_verl_agents_byte_for_byte(tmp_path):
    plan = webshop_plan()
    f = [_forms(a, "click[nowhere]", "click[back to search]") for a in plan]
    scripts = [[x["ok"] for x in f], [f[0]["no_think"], "search[ceramic pot]\n\n", f[0]["ok"], f[1]["upper"]],
               [f[0]["two_blocks"], f[0]["long_no_tags"], f[0]["cjk"]]]
    words = [w for a in plan for w in a.replace("[", " ").replace("]", " ").split()]
    _compare("credit/WebShop-v0", "webshop", {}, 0, scripts, words, "mean_norm", TEMPLATES, _checkout(tmp_path))


def test_a_tagless_reply_is_not_stripped_before_its_tail_is_taken():
    action, valid = verl_agent_projection("search[ceramic pot]\n\n", "credit/WebShop-v0")
    assert (action, valid) == ("earch[ceramic pot]\n\n", False)  # verl-agent's last 20 characters: not a search
    env = gym.make("credit/WebShop-v0")
    env.reset(seed=0)
    _, _, _, _, info = env.step(action)
    assert info["page"] == "search" and not info["action_valid"]  # a no-op, as in verl-agent
    assert verl_agent_projection("go to shelf 1\n", "credit/ALFWorld-v0")[0] == "go to shelf 1\n"


def test_action_list_is_verl_agents_layout_uncapped_without_help():
    adm = [f"go to shelf {i}" for i in range(1, 61)] + ["help", "look"]
    text = verl_agent_actions(adm, "credit/ALFWorld-v0")
    assert text.count("\n ") == 60 and "'help'" not in text and text.startswith("'go to shelf 1'\n 'go to shelf 2'")
    web = verl_agent_actions(["search[<query>]", "click[back to search]", "click[b0x]"], "credit/WebShop-v0")
    assert web == "'search[<your query>]',\n'click[back to search]',\n'click[b0x]',"
    tok = _tok(["go to shelf", "look"])
    obs, info = "You see shelves.\n\nYour task is to: put a book on shelf 1.", {"admissible_actions": adm}
    for rules, shown in (("verl-agent", 62), ("ours", 50)):  # the built-in wording: the package's rules keep the cap
        p = Prompter(tok, "credit/ALFWorld-v0", 2, 100000, "put a book on shelf 1", "verl-agent", rules=rules)
        assert sum(f"'{a}'" in p.prompt_text(obs, info, 0) for a in adm) == shown
    assert verl_agent_task(obs, "credit/ALFWorld-v0") == "put a book on shelf 1."  # the final period kept


@pytest.mark.slow
@pytest.mark.parametrize("family", ["alfworld", "webshop"])
def test_thousand_mixed_rows_equal_verl_agents(tmp_path, family):
    """At least 1,000 step rows a family (one group of many trajectories, replies drawn from every form): 0
    differences in prompts, actions, validity, rewards, row scores, rows per trajectory and advantages."""
    if family == "alfworld":
        pytest.importorskip("textworld")
        plan = alfworld_plan()
        scripts = _mixed_scripts(plan, "fly to the moon", "look", 170, seed=1)
        env_id, env_kw, seed, mode, words = "credit/ALFWorld-v0", {"max_steps": 50}, 3, "mean_std_norm", plan
    else:
        plan = webshop_plan()
        scripts = _mixed_scripts(plan, "click[nowhere]", "click[back to search]", 160, seed=2)
        env_id, env_kw, seed, mode, words = "credit/WebShop-v0", {}, 0, "mean_norm", plan
    words = [w for a in words for w in a.replace("[", " ").replace("]", " ").split()]
    rows, adv = _compare(env_id, family, env_kw, seed, scripts, words, mode, TEMPLATES, _checkout(tmp_path),
                         control=False)  # the small tests above run the negative control
    assert len(rows) >= 1000 and np.isfinite(adv).all()
    assert sum(not r["valid"] for r in rows) >= 100 and sum(r["reward"] > 0 for r in rows) >= 5
