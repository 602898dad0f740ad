"""The recipe under verl-agent's rules (``rules="verl-agent"``) hands verl-agent's estimator inputs to the estimator.

The same scripted replies (well formed, inadmissible, without ``<think>``, two ``<action>`` blocks, no tags,
CJK characters, upper-case tags; a win, a wrong WebShop purchase with a partial score) are played twice:

- through the recipe: verl's ``AgentLoopBase`` subclass ``agc_credit_env`` (a scripted STAND-IN for verl's server
  manager, which fronts vLLM/SGLang and needs CUDA), its outputs as verl's ``DataProto``, verl's
  ``compute_advantage`` with ``agc_verl_agent``;
- through ``reference_verl_agent.py``: a plain transcription of verl-agent's projection, env rewards, reward
  manager, invalid-action penalty and GiGPO, on the raw env.

Every row's advantage must agree within 1e-5 on ALFWorld and WebShop. The project's own rules (``rules="ours"``)
are the negative control: they give other numbers on the same replies.
"""

from __future__ import annotations

import asyncio
import os

import gymnasium as gym
import numpy as np
import pytest
from reference_verl_agent import (
    play_like_verl_agent,
    reference,
    reference_scores,
    verl_agent_projection,
    verl_agent_prompts,
)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
torch = pytest.importorskip("torch")
pytest.importorskip("verl")
pytest.importorskip("transformers")

from omegaconf import OmegaConf  # noqa: E402
from verl.experimental.agent_loop.agent_loop import DictConfigWrap  # noqa: E402
from verl.trainer.ppo.ray_trainer import compute_advantage  # noqa: E402
from verl.workers.rollout.replica import TokenOutput  # noqa: E402

import agentgym_credit  # noqa: E402,F401
from agentgym_credit.integrations import verl as agc_verl  # noqa: E402
from agentgym_credit.integrations.verl.prompting import verl_agent_projection as ours_projection  # noqa: E402
from agentgym_credit.trainer.tiny import build_tokenizer  # noqa: E402

MAX_STEPS = 8


class ScriptServer:
    """STAND-IN for verl's server manager (``async generate(request_id, *, prompt_ids, sampling_params)``): answers
    the k-th request with ``script[k % len(script)]`` of the current trajectory's script."""

    def __init__(self, tok):
        self.tok, self.script, self.k = tok, [""], 0

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs) -> TokenOutput:
        text = self.script[self.k % len(self.script)]
        self.k += 1
        ids = list(self.tok(text, add_special_tokens=False)["input_ids"])
        return TokenOutput(token_ids=ids, log_probs=[-1.0] * len(ids))


def _tok(words):
    return build_tokenizer([*words, "<think>", "</think>", "<action>", "</action>", "想一想"] * 3, vocab_size=400)


def _recipe(env_id, env_kw, seed, scripts, tok, rules, mode, prompt_template=""):
    """The scripted replies through the recipe: its outputs, advantages, row scores and every prompt it rendered."""
    from agentgym_credit.integrations.verl.prompting import Prompter

    prompts, render = [], Prompter.prompt_text

    def spy(self, *a, **kw):
        prompts.append(render(self, *a, **kw))
        return prompts[-1]

    Prompter.prompt_text = spy
    try:
        return (*_recipe_run(env_id, env_kw, seed, scripts, tok, rules, mode, prompt_template), prompts)
    finally:
        Prompter.prompt_text = render


def _recipe_run(env_id, env_kw, seed, scripts, tok, rules, mode, prompt_template):
    cfg = OmegaConf.create({"actor_rollout_ref": {"rollout": {"prompt_length": 8192, "response_length": 256}},
                            "data": {}})
    server = ScriptServer(tok)
    loop = agc_verl.CreditEnvAgentLoop(trainer_config=DictConfigWrap(cfg), server_manager=server, tokenizer=tok,
                                       processor=None, dataset_cls=None, data_config=DictConfigWrap(cfg.data))
    row = agc_verl.group_dataset(env_id, [seed], env_kwargs=env_kw, max_steps=MAX_STEPS, prompting="verl-agent",
                                 history_len=2, env_pool="thread", env_workers=1, rules=rules,
                                 prompt_template=prompt_template)[0]
    kw = {k: v for k, v in row.items() if k != "prompt"}
    runs = []
    for i, script in enumerate(scripts):
        server.script, server.k = script, 0
        runs.append(asyncio.run(loop.run({"temperature": 1.0}, session_id=i, **kw)))
    data = agc_verl.outputs_to_dataproto(runs, ["g0"] * len(runs), pad_token_id=tok.pad_token_id)
    algo = OmegaConf.create({"agc_options": {"mode": mode}})
    out = compute_advantage(data, adv_estimator="agc_verl_agent", config=algo)
    mask = out.batch["response_mask"].bool()
    adv = np.array([float(a[m][0]) for a, m in zip(out.batch["advantages"], mask)])
    scores = out.batch["token_level_rewards"].sum(-1).numpy()
    return runs, adv, scores


def _compare(env_id, family, env_kw, seed, scripts, words, mode, templates=None, checkout="", control=True):
    """Recipe against transcription on the same replies; with ``templates`` (verl-agent's prompt strings) and the
    ``checkout`` holding them, every rendered prompt too, byte for byte."""
    tok = _tok(words)
    # what the model "said" is what the loop decodes from the tokens: the transcription reads the same text
    said = [[tok.decode(tok(r, add_special_tokens=False)["input_ids"], skip_special_tokens=True) for r in s]
            for s in scripts]
    rows = play_like_verl_agent(lambda: gym.make(env_id, **env_kw), seed, said, family, MAX_STEPS)
    want = np.array(reference(rows, mode=mode, scale=1.0))  # rows carry verl-agent's rewards already (10 x won)
    runs, got, scores, prompts = _recipe(env_id, env_kw, seed, scripts, tok, "verl-agent", mode, str(checkout))
    if templates is not None:
        expect = [p for i in range(len(scripts))
                  for p in verl_agent_prompts([x for x in rows if x["traj"] == i], family, templates)]
        assert len(prompts) == len(expect)
        diff = [(k, a, b) for k, (a, b) in enumerate(zip(prompts, expect)) if a != b]
        assert diff == [], diff[:1]
    assert [len(r) for r in runs] == [sum(1 for x in rows if x["traj"] == i) for i in range(len(scripts))]
    assert [o.extra_fields["agc_valid"] for r in runs for o in r] == [x["valid"] for x in rows]
    assert np.max(np.abs(got - want)) <= 1e-5, np.c_[got, want]
    assert np.allclose(scores, reference_scores(rows, scale=1.0), atol=1e-5)
    # the project's own rules on the same replies: other numbers (the negative control)
    if not control:
        return rows, got
    _, ours, _, _ = _recipe(env_id, env_kw, seed, scripts, tok, "ours", mode)
    assert ours.shape != want.shape or np.max(np.abs(ours - want)) > 0.1
    return rows, got


def _forms(good: str, bad: str, nxt: str) -> dict[str, str]:
    return {"ok": f"<think>this is the plan</think><action>{good}</action>",
            "inadmissible": f"<think>try it</think><action>{bad}</action>",
            "no_think": f"<action>{good}</action>",
            "two_blocks": f"<think>two</think><action>{good}</action><action>{nxt}</action>",
            "no_tags": good,
            "long_no_tags": f"I have thought about it for a long while and I choose: {bad}",
            "cjk": f"<think>想一想</think><action>{good}</action>",
            "upper": f"<THINK>caps</THINK><ACTION>{good}</ACTION>"}


def alfworld_plan(seed: int = 3) -> list[str]:
    """The expert's winning actions on ALFWorld game ``seed``."""
    env = gym.make("credit/ALFWorld-v0", expert=True, max_steps=50)
    _, info = env.reset(seed=seed)
    plan = []
    while not info["won"]:
        plan.append(info["expert_action"])
        info = env.step(plan[-1])[4]
    env.close()
    return plan


def webshop_plan(seed: int = 0) -> list[str]:
    """The expert's actions on WebShop task ``seed`` (a purchase scoring 1.0)."""
    from agentgym_credit.envs.webshop.expert import ExpertPolicy

    env, expert = gym.make("credit/WebShop-v0"), ExpertPolicy()
    _, info = env.reset(seed=seed)
    plan, done, reward = [], False, 0.0
    while not done and len(plan) < 12:
        plan.append(expert.act(env))
        _, reward, term, trunc, info = env.step(plan[-1])
        done = term or trunc
    env.close()
    assert info["won"] and reward == 1.0, (plan, reward)
    return plan


def test_alfworld_rows_equal_verl_agents_rules():
    pytest.importorskip("textworld")
    env_kw = {"max_steps": 50}
    seed = 3
    plan = alfworld_plan(seed)
    assert len(plan) >= 4
    bad = "fly to the moon"
    f = [_forms(a, bad, "look") for a in plan]
    scripts = [
        [f[k]["ok"] for k in range(len(plan))],                                        # wins
        [f[0]["inadmissible"], f[0]["no_think"], f[1]["two_blocks"], f[2]["cjk"], f[3]["upper"]]
        + [f[k]["ok"] for k in range(4, len(plan))],                                  # wins, invalid rows on the way
        [f[0]["no_tags"], f[1]["long_no_tags"], f[1]["inadmissible"], f[1]["ok"], f[2]["ok"]] * 2,  # cut at 8 steps
        [f[0]["ok"], f[1]["ok"], f[0]["inadmissible"], f[0]["upper"]],                 # cut at 8 steps
    ]
    words = [w for a in plan for w in a.split()] + bad.split()
    rows, adv = _compare("credit/ALFWorld-v0", "alfworld", env_kw, seed, scripts, words, "mean_std_norm")
    assert sum(not r["valid"] for r in rows) >= 6 and any(r["reward"] > 0 for r in rows)
    assert any(r["action"] == bad and r["valid"] for r in rows)  # well formed, inadmissible: valid, no penalty


def test_webshop_rows_equal_verl_agents_rules():
    env_kw = {}
    seed = 0
    plan = webshop_plan(seed)
    f = [_forms(a, "click[nowhere]", "click[back to search]") for a in plan]
    scripts = [
        [x["ok"] for x in f],                                                            # buys the goal: 10
        [f[0]["no_think"], f[0]["inadmissible"], f[0]["cjk"]] + [x["ok"] for x in f[1:]],  # buys it, invalid rows
        [f[0]["two_blocks"], f[0]["upper"], f[0]["no_tags"], f[0]["long_no_tags"]],      # never buys: 0
        [x["ok"] for x in f[:2]] + ["<think>any</think><action>click[buy now]</action>"],  # opens an item, buys
    ]
    words = [w for a in plan for w in a.replace("[", " ").replace("]", " ").split()]
    rows, _ = _compare("credit/WebShop-v0", "webshop", env_kw, seed, scripts, words, "mean_norm")
    assert sum(not r["valid"] for r in rows) >= 5 and any(r["reward"] > 0 for r in rows)


@pytest.mark.parametrize("reply, want", [
    ("<think>a</think><action>Go To Shelf 1</action>", ("go to shelf 1", True)),
    ("<think>a</think><action>x</action><action>y</action>", ("x", True)),         # the first block
    ("<action>x</action>", ("x", False)),                                          # no think
    ("<think>想</think><action>x</action>", ("x", False)),                          # CJK
    ("<THINK>a</THINK><ACTION>x</ACTION>", ("x", False)),                          # tags found lower-cased, think not
    ("No tags at all here, a long reply to the environment", ("here, a long reply to the environment"[-30:], False)),
    ("<think>a</think><action>x", ("<think>a</think><action>x", False)),
])
def test_projection_follows_verl_agents_rule(reply, want):
    action, valid = verl_agent_projection(reply, "alfworld")
    assert (action, bool(valid)) == want
    assert ours_projection(reply, "credit/ALFWorld-v0") == want
    web_action, web_valid = verl_agent_projection(reply, "webshop")  # a tagless reply: its last 20 characters
    assert ours_projection(reply, "credit/WebShop-v0") == (web_action, bool(web_valid))


# -- prompt templates: a verl-agent checkout, a user's .py or text file; refused fields -------------------------
def _checkout(tmp_path):
    """A folder laid out like a verl-agent checkout, holding a template of our own wording (not verl-agent's)."""
    d = tmp_path / "verl-agent" / "agent_system" / "environments" / "prompts"
    d.mkdir(parents=True)
    (d / "alfworld.py").write_text(
        'ALFWORLD_TEMPLATE_NO_HIS = """FIRST {current_observation} | {admissible_actions}"""\n'
        'ALFWORLD_TEMPLATE = """TASK {task_description} after {step_count} steps, last {history_length}:\n'
        '{action_history}\nNOW step {current_step}: {current_observation} | {admissible_actions}"""\n'
        'import os  # never run: the file is read as text\nos.system("false")\n')
    return tmp_path / "verl-agent"


def test_prompt_template_from_a_checkout_is_used_by_the_loop(tmp_path):
    from agentgym_credit.integrations.verl.prompting import load_prompt_template

    root = _checkout(tmp_path)
    t = load_prompt_template(root, "credit/ALFWorld-v0")
    assert t.first.startswith("FIRST") and t.rest.startswith("TASK")
    env_kw = {"size": 3, "n_tasks": 4}
    tok = _tok(["FIRST", "TASK", "NOW", "go north", "go east"])
    with pytest.raises(Exception, match="no such file"):  # a GridWorld template is not in the checkout
        agc_verl.group_dataset("credit/GridWorld-v0", [0], env_kwargs=env_kw, prompt_template=str(root))
    own = tmp_path / "grid.txt"
    own.write_text("Step {current_step} of a grid walk. {action_history}\nYou see: {current_observation}")
    cfg = OmegaConf.create({"actor_rollout_ref": {"rollout": {"prompt_length": 4096, "response_length": 32}},
                            "data": {}})

    class Server(ScriptServer):
        prompts: list = []

        async def generate(self, request_id, *, prompt_ids, **kw):
            self.prompts.append(tok.decode(prompt_ids))
            return await super().generate(request_id, prompt_ids=prompt_ids, **kw)

    server = Server(tok)
    server.script = ["<think>t</think><action>go north</action>"]
    loop = agc_verl.CreditEnvAgentLoop(trainer_config=DictConfigWrap(cfg), server_manager=server, tokenizer=tok,
                                       processor=None, dataset_cls=None, data_config=DictConfigWrap(cfg.data))
    row = agc_verl.group_dataset("credit/GridWorld-v0", [0], env_kwargs=env_kw, max_steps=2, prompting="verl-agent",
                                 env_pool="thread", prompt_template=str(own))[0]
    asyncio.run(loop.run({"temperature": 1.0}, session_id=0, **{k: v for k, v in row.items() if k != "prompt"}))
    assert server.prompts[0].startswith("Step 1 of a grid walk. \nYou see:")
    assert server.prompts[1].startswith("Step 2 of a grid walk. [Step 1] Observation:")
    assert "[Step 1] Action: go north" in server.prompts[1]


def test_bad_prompt_templates_are_refused_when_loaded(tmp_path):
    from agentgym_credit.errors import CreditError
    from agentgym_credit.integrations.verl.prompting import PromptTemplateError, load_prompt_template

    bad = tmp_path / "bad.txt"
    bad.write_text("Hello {user_name}, see {current_observation}")
    with pytest.raises(PromptTemplateError, match=r"\{user_name\}.*fields filled are"):
        load_prompt_template(bad, "credit/ALFWorld-v0")
    unbalanced = tmp_path / "unbalanced.txt"
    unbalanced.write_text("see {current_observation")
    with pytest.raises(PromptTemplateError):
        load_prompt_template(unbalanced, "credit/ALFWorld-v0")
    nothing = tmp_path / "none.py"
    nothing.write_text("X = 1\n")
    with pytest.raises(PromptTemplateError, match="no ALFWORLD_TEMPLATE"):
        load_prompt_template(nothing, "credit/ALFWorld-v0")
    broken = tmp_path / "broken.py"
    broken.write_text("ALFWORLD_TEMPLATE = '''\n")
    with pytest.raises(PromptTemplateError, match="cannot read"):
        load_prompt_template(broken, "credit/ALFWorld-v0")
    with pytest.raises(PromptTemplateError, match="no such file"):
        load_prompt_template(tmp_path / "missing", "credit/WebShop-v0")
    assert issubclass(PromptTemplateError, CreditError) and issubclass(PromptTemplateError, ValueError)
    with pytest.raises(ValueError, match="rules must be one of"):
        agc_verl.group_dataset("credit/GridWorld-v0", [0], rules="verl_agent")
    with pytest.raises(ValueError, match="plain prompt does not ask for"):
        agc_verl.group_dataset("credit/GridWorld-v0", [0], rules="verl-agent")  # prompting="plain", no template
