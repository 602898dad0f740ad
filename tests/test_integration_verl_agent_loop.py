"""(c) The verl agent loop ``agc_credit_env`` plays a group on credit/GridWorld-v0, credit/ALFWorld-v0 (dev and
generated games) and credit/WebShop-v0.

verl's real ``AgentLoopBase`` subclass (registered in verl's agent-loop registry) runs with a tiny CPU
``transformers`` model behind ``StandInServerManager``: a STAND-IN for verl's server manager
(``verl.workers.rollout.llm_server.LLMServerClient``), because the real one fronts vLLM/SGLang servers,
which need CUDA. It implements the documented interface the loop uses,
``async generate(request_id, *, prompt_ids, sampling_params, **kw) -> TokenOutput`` (verl's own
``TokenOutput``: ``token_ids`` and ``log_probs``), and nothing else.

What is checked: the N rollouts of a group share one initial state; every step's prompt is our
trainer's prompt; the keys recorded in the outputs equal those of a ``GroupedRolloutCollector`` replaying
the same actions; and verl's ``compute_advantage`` with ``agc_gigpo`` on the loop's outputs equals
``credit.advantages`` on that collector batch, also when the step columns arrive apart, as verl's v1
trainer (ours, installed under verl's ``sync`` mode) hands them over. Validation: every output of a WebShop
group and of a generated ALFWorld group carries ``acc`` and ``acc/<product category or task type>``, and verl's
``process_validation_metrics`` turns the sessions' final outputs into success per category per data source.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
torch = pytest.importorskip("torch")
pytest.importorskip("verl")
pytest.importorskip("transformers")

from omegaconf import OmegaConf  # noqa: E402
from verl.experimental.agent_loop.agent_loop import DictConfigWrap, _agent_loop_registry  # noqa: E402
from verl.protocol import DataProto  # noqa: E402
from verl.trainer.config import AlgoConfig  # noqa: E402
from verl.trainer.ppo.ray_trainer import compute_advantage  # noqa: E402
from verl.workers.rollout.replica import TokenOutput  # noqa: E402

from agentgym_credit import credit  # noqa: E402
from agentgym_credit.integrations import verl as agc_verl  # noqa: E402
from agentgym_credit.integrations.verl.columns import columns_from_extra_fields, pending_step_columns  # noqa: E402
from agentgym_credit.trainer.policy import LLMPolicy, task_text, template_for  # noqa: E402
from agentgym_credit.trainer.sampling import BatchedSampler  # noqa: E402
from agentgym_credit.trainer.tiny import build_tiny_model, build_tokenizer, env_corpus  # noqa: E402
from agentgym_credit.wrappers import GroupedRolloutCollector  # noqa: E402
from agentgym_credit.wrappers.action_projection import extract_action  # noqa: E402

DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "alfworld" / "dev"
N = 3


class StandInServerManager:
    """Stand-in for verl's LLMServerClient (vLLM/SGLang need CUDA): its ``generate`` interface, served by a
    tiny CPU model through our sampler. Records every call."""

    def __init__(self, model, tokenizer, max_new_tokens: int):
        self.sampler = BatchedSampler(model, tokenizer, max_new_tokens=max_new_tokens)
        self.generator = torch.Generator().manual_seed(0)
        self.calls: list[dict] = []

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs) -> TokenOutput:
        self.sampler.temperature = float(sampling_params.get("temperature", 1.0))
        out = self.sampler.sample([list(prompt_ids)], generator=self.generator)
        self.calls.append({"request_id": request_id, "prompt_ids": list(prompt_ids),
                           "sampling_params": dict(sampling_params)})
        return TokenOutput(token_ids=out.response_ids[0], log_probs=out.logprobs[0])


def _loop(tok, server, response_length: int = 8):
    cfg = OmegaConf.create({"actor_rollout_ref": {"rollout": {"prompt_length": 4096,
                                                              "response_length": response_length}},
                            "data": {}})
    cls = _agent_loop_registry[agc_verl.AGENT_NAME]["_target_"]
    assert cls.endswith("CreditEnvAgentLoop")
    return agc_verl.CreditEnvAgentLoop(trainer_config=DictConfigWrap(cfg), server_manager=server, tokenizer=tok,
                                       processor=None, dataset_cls=None, data_config=DictConfigWrap(cfg.data))


async def _play_group(loop, row: dict) -> list[list]:
    kw = {k: v for k, v in row.items() if k != "prompt"}
    return list(await asyncio.gather(*[loop.run({"temperature": 1.0, "top_p": 1.0}, session_id=i, **kw)
                                       for i in range(N)]))


def _replay(env_id: str, env_kw: dict, seed: int, runs: list[list], tok, history_depth: int):
    """The collector playing the recorded actions (copy i of the group = session i)."""
    actions = {i: [tok.decode(o.response_ids, skip_special_tokens=True).strip() for o in run]
               for i, run in enumerate(runs)}

    def policy(obs, infos):
        return [actions[int(i["rollout"]["traj_id"])][int(i["rollout"]["t"])] for i in infos]

    col = GroupedRolloutCollector(env_id, group_size=N, max_steps=max(len(r) for r in runs), progress=False,
                                  env_kwargs=env_kw, history_depth=history_depth)
    b = col.collect(policy, 1, seeds=[seed])
    col.close()
    return b


def _check_group(env_id, env_kw, tok, model, seed, max_steps, history_depth=2):
    server = StandInServerManager(model, tok, max_new_tokens=6)
    loop = _loop(tok, server)
    row = agc_verl.group_dataset(env_id, [seed], env_kwargs=env_kw, max_steps=max_steps, history_len=2,
                                 history_depth=history_depth)[0]
    assert row["agent_name"] == agc_verl.AGENT_NAME
    runs = asyncio.run(_play_group(loop, row))
    assert len(runs) == N and all(len(r) >= 1 for r in runs)
    assert sum(len(r) for r in runs) == len(server.calls)  # one generate call per step, through the manager

    # one initial state for the group, and the same first prompt
    firsts = [r[0] for r in runs]
    assert len({o.extra_fields["agc_state_key"] for o in firsts}) == 1
    assert len({tuple(o.prompt_ids) for o in firsts}) == 1
    # the first prompt, in plain-text form, is our template's rendering
    import gymnasium as gym

    env = gym.make(env_id, **env_kw)
    obs, info = env.reset(seed=seed)
    env.close()
    task = task_text(info)
    if getattr(tok, "chat_template", None) is None:
        want = template_for(env_id).render(task, [], obs, info.get("admissible_actions"))
        assert firsts[0].prompt_ids == list(tok(want)["input_ids"])
    for run in runs:
        ef = [o.extra_fields for o in run]
        assert [e["agc_step"] for e in ef] == list(range(len(run)))
        assert len({e["traj_uid"] for e in ef}) == 1
        assert all(len(e["agc_history_keys"]) == history_depth + 1 for e in ef)
        assert not any(e["agc_failed"] for e in ef)
        assert ef[-1]["agc_done"] and not any(e["agc_done"] for e in ef[:-1])
        assert all(o.response_mask == [1] * len(o.response_ids) for o in run)
        assert all(len(o.response_logprobs) == len(o.response_ids) for o in run)

    # the keys equal those the collector records for the same actions
    ref = _replay(env_id, env_kw, seed, runs, tok, history_depth)
    got = [o.extra_fields for run in runs for o in run]
    assert len(got) == len(ref)
    assert [e["agc_state_key"] for e in got] == ref.state_key.tolist()
    assert [e["agc_obs_key"] for e in got] == ref.obs_key.tolist()
    assert np.array_equal(np.array([e["agc_history_keys"] for e in got], dtype=np.uint64), ref.history_keys)
    assert [e["agc_reward"] for e in got] == ref.reward.tolist()
    assert [e["agc_valid"] for e in got] == ref.action_valid.tolist()
    assert [e["agc_done"] for e in got] == ref.done.tolist()

    # every step's prompt is the one our trainer's LLMPolicy builds from the same trajectory so far
    pol = LLMPolicy(BatchedSampler(model, tok), template_for(env_id), history_len=2, max_prompt_tokens=4096)
    prompts = [o.prompt_ids for run in runs for o in run]
    for row in range(len(ref)):
        k, t = int(ref.traj_id[row]), int(ref.t[row])
        pol._task[k] = task
        pol._history[k] = [(ref.observation[r], extract_action(ref.action[r])) for r in range(row - t, row)]
        info_t = {"admissible_actions": ref.admissible_actions[row]}
        assert prompts[row] == pol.prompt_ids(ref.observation[row], info_t, k), f"prompt of row {row}"

    # verl's compute_advantage on the loop's outputs = credit.advantages on the collector's batch
    data = agc_verl.outputs_to_dataproto(runs, ["group-0"] * N, pad_token_id=tok.pad_token_id)
    out = compute_advantage(data, adv_estimator="agc_gigpo", config=AlgoConfig())
    want_adv = credit.broadcast_to_tokens(credit.advantages("gigpo", ref.steps), data.batch["response_mask"].numpy())
    torch.testing.assert_close(out.batch["advantages"], torch.from_numpy(want_adv), rtol=0, atol=0)

    # verl's v1 trainer builds the advantage DataProto with uid alone and the extra_fields apart: our
    # trainer hands them over with pending_step_columns (here without TransferQueue; with it: test_integration_verl_v1)
    v1 = DataProto.from_dict(tensors={"response_mask": data.batch["response_mask"],
                                      "token_level_rewards": data.batch["token_level_rewards"]},
                             non_tensors={"uid": data.non_tensor_batch["uid"]})
    with pytest.raises(agc_verl.MissingStepColumns):
        compute_advantage(v1, adv_estimator="agc_gigpo", config=AlgoConfig())
    with pending_step_columns(columns_from_extra_fields([o.extra_fields for run in runs for o in run])):
        out = compute_advantage(v1, adv_estimator="agc_gigpo", config=AlgoConfig())
    torch.testing.assert_close(out.batch["advantages"], torch.from_numpy(want_adv), rtol=0, atol=0)
    return runs


def test_agent_loop_plays_a_gridworld_group():
    env_kw = {"size": 3, "n_tasks": 4}
    tok = build_tokenizer(env_corpus("credit/GridWorld-v0", episodes=10, max_steps=6, env_kwargs=env_kw),
                          vocab_size=300)
    tok.chat_template = ("{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}\n{% endfor %}"
                         "{% if add_generation_prompt %}<assistant>{% endif %}")  # as an instruct model has
    model = build_tiny_model(tok, arch="qwen2", hidden_size=32, seed=0)
    runs = _check_group("credit/GridWorld-v0", env_kw, tok, model, seed=5, max_steps=5)
    assert tok.decode(runs[0][0].prompt_ids).startswith("<system>")


@pytest.mark.slow
def test_agent_loop_plays_an_alfworld_group(tmp_path, monkeypatch):
    pytest.importorskip("textworld")
    pytest.importorskip("fast_downward")
    if not DEV.is_dir():
        pytest.skip(f"real ALFWorld dev games not found at {DEV}")
    monkeypatch.setenv("AGENTGYM_CREDIT_SAS_CACHE", str(tmp_path / "sas"))
    env_kw = {"source": "dev"}
    tok = build_tokenizer(env_corpus("credit/ALFWorld-v0", episodes=2, max_steps=3, env_kwargs=env_kw),
                          vocab_size=400)
    model = build_tiny_model(tok, arch="qwen2", hidden_size=32, seed=0)
    runs = _check_group("credit/ALFWorld-v0", env_kw, tok, model, seed=0, max_steps=3)
    assert all(o.extra_fields["agc_task_id"] == "" for r in runs for o in r)


def test_a_row_without_env_is_a_clear_error():
    tok = build_tokenizer(["go north", "go south"] * 20, vocab_size=270)
    loop = _loop(tok, server=None)
    with pytest.raises(ValueError, match="names no env"):
        asyncio.run(loop.run({"temperature": 1.0}, extra_info={"index": 0}))


def test_an_env_that_raises_marks_the_trajectory_failed(monkeypatch):
    from agentgym_credit.integrations.verl import env_pool
    from agentgym_credit.wrappers.workers import EnvFailure, EnvWorker

    class FailsOnSecondStep(EnvWorker):
        steps = 0

        def step_slot(self, slot, action):
            self.steps += 1
            return EnvFailure("RuntimeError: engine died") if self.steps == 2 else super().step_slot(slot, action)

    monkeypatch.setattr(env_pool, "EnvWorker", FailsOnSecondStep)  # in-process envs (env_pool="thread")
    env_kw = {"size": 3, "n_tasks": 4}
    tok = build_tokenizer(env_corpus("credit/GridWorld-v0", episodes=5, max_steps=4, env_kwargs=env_kw),
                          vocab_size=300)
    model = build_tiny_model(tok, arch="qwen2", hidden_size=32, seed=0)
    loop = _loop(tok, StandInServerManager(model, tok, max_new_tokens=3))
    row = agc_verl.group_dataset("credit/GridWorld-v0", [1], env_kwargs=env_kw, max_steps=4, env_pool="thread")[0]
    run = asyncio.run(loop.run({"temperature": 1.0}, session_id=0, **{k: v for k, v in row.items() if k != "prompt"}))
    assert [o.extra_fields["agc_step"] for o in run] == [0, 1]  # the failing step is kept, then it stops
    assert all(o.extra_fields["agc_failed"] for o in run)
    data = agc_verl.outputs_to_dataproto([run], ["g"], pad_token_id=tok.pad_token_id)
    out = compute_advantage(data, adv_estimator="agc_gigpo", config=AlgoConfig())
    assert (out.batch["advantages"] == 0).all()  # failed trajectories get advantage 0


def test_env_steps_do_not_block_verls_event_loop(monkeypatch):
    """verl runs every agent loop of a worker on one asyncio loop: a slow env step must not stall the others."""
    import threading
    import time

    from agentgym_credit.integrations.verl import env_pool
    from agentgym_credit.wrappers.workers import EnvWorker

    stepping = threading.Event()

    class SlowWorker(EnvWorker):
        def step_slot(self, slot, action):
            stepping.set()
            try:
                time.sleep(0.25)
            finally:
                stepping.clear()
            return super().step_slot(slot, action)

    monkeypatch.setattr(env_pool, "EnvWorker", SlowWorker)
    env_kw = {"size": 3, "n_tasks": 4}
    tok = build_tokenizer(env_corpus("credit/GridWorld-v0", episodes=5, max_steps=4, env_kwargs=env_kw),
                          vocab_size=300)
    loop = _loop(tok, StandInServerManager(build_tiny_model(tok, arch="qwen2", hidden_size=32, seed=0), tok, 2))
    row = agc_verl.group_dataset("credit/GridWorld-v0", [1], env_kwargs=env_kw, max_steps=2, env_pool="thread")[0]

    async def both():
        ticks = 0  # loop turns taken while an env step was sleeping: 0 if the step ran on the loop's thread
        task = asyncio.ensure_future(loop.run({"temperature": 1.0}, session_id=0,
                                              **{k: v for k, v in row.items() if k != "prompt"}))
        while not task.done():
            await asyncio.sleep(0.01)
            ticks += stepping.is_set()
        return await task, ticks

    run, ticks = asyncio.run(both())
    # not a rate: a busy machine may delay each tick, but a loop blocked by the step cannot tick during it at all
    assert len(run) >= 1 and ticks >= 1, f"the event loop ticked {ticks} times during {len(run)} env steps of 0.25 s"


# -- verl-agent prompting, validation categories, the env pool --------------------------------------
class ScriptedServer:
    """Answers every request with the next reply of a list (cycled); records the prompts."""

    def __init__(self, tok, replies):
        self.tok, self.replies, self.prompts = tok, list(replies), []

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs) -> TokenOutput:
        self.prompts.append(list(prompt_ids))
        text = self.replies[(len(self.prompts) - 1) % len(self.replies)]
        ids = list(self.tok(text, add_special_tokens=False)["input_ids"])
        return TokenOutput(token_ids=ids, log_probs=[-1.0] * len(ids))


def test_project_response_reads_think_then_action():
    from agentgym_credit.integrations.verl.prompting import project_response

    assert project_response("<think>the key is east</think><action>go east</action>", "verl-agent") == ("go east", True)
    assert project_response("go east", "verl-agent") == ("go east", False)  # no tags: malformed
    assert project_response("<action>go east</action>", "verl-agent") == ("go east", False)  # no reasoning
    assert project_response("<action>go east</action><think>why</think>", "verl-agent")[1] is False
    assert project_response("<think>a</think><action>x</action><action>y</action>", "verl-agent") == ("y", False)
    assert project_response("<think>a</think><action> </action>", "verl-agent")[1] is False
    assert project_response("go east", "plain") == ("go east", True)


def test_verl_agent_prompting_window_header_and_invalid_format():
    env_kw = {"size": 3, "n_tasks": 4}
    words = ["<think>", "</think>", "<action>", "</action>", "reason", "go north", "go east", "So far",
             "step", "Step", "Observation", "Action", "This is", "Your task", "Admissible actions"]
    tok = build_tokenizer(env_corpus("credit/GridWorld-v0", episodes=5, max_steps=4, env_kwargs=env_kw) + words * 5,
                          vocab_size=400)
    # seed 0: go south (valid), a malformed reply, go north (valid), go north (a wall): no step ends the episode
    replies = ["<think>reason</think><action>go south</action>", "go nowhere",
               "<think>reason</think><action>go north</action>", "<think>reason</think><action>go north</action>"]
    server = ScriptedServer(tok, replies)
    loop = _loop(tok, server, response_length=32)
    row = agc_verl.group_dataset("credit/GridWorld-v0", [0], env_kwargs=env_kw, max_steps=4, history_len=2,
                                 prompting="verl-agent", env_pool="thread")[0]
    run = asyncio.run(loop.run({"temperature": 1.0}, session_id=0, **{k: v for k, v in row.items() if k != "prompt"}))
    texts = [tok.decode(p) for p in server.prompts]
    assert "So far you have taken 0 step(s)." in texts[0] and "This is step 1." in texts[0]
    assert len(run) == 4 and len(texts) == 4
    # a window of the last 2 steps: step 1 has left the prompt of step 4
    assert "So far you have taken 3 step(s)." in texts[3] and "Your last 2 step(s)" in texts[3]
    assert "[Step 1]" not in texts[3] and "[Step 2]" in texts[3] and "[Step 3]" in texts[3]
    assert "<think>" in texts[0] and "<action>" in texts[0]
    # well formed and admissible: valid; the malformed reply still steps the env and is recorded invalid
    assert [o.extra_fields["agc_valid"] for o in run] == [True, False, True, False]


def test_reward_extra_info_reports_success_per_category():
    from agentgym_credit.integrations.verl import env_pool

    cfg = {"env_id": "credit/WebShop-v0", "env_kwargs": {}, "history_depth": 1, "env_pool": "thread",
           "env_workers": 1}
    h = env_pool.env_handle(cfg)

    async def go():
        obs, *_rest = await h.call("reset_slot", 0, {}, 0)
        info = _rest[3]
        cat = await h.category("credit/WebShop-v0", info)
        await h.close()
        return cat

    assert asyncio.run(go()) == "beauty"  # the seed-0 goal of WebShop generator v9 (issue 45; v7/v8: fashion)
    tok = build_tokenizer(["go north", "go east"] * 20, vocab_size=270)
    loop = _loop(tok, ScriptedServer(tok, ["go north"]))
    row = agc_verl.group_dataset("credit/GridWorld-v0", [1], env_kwargs={"size": 3, "n_tasks": 4}, max_steps=2,
                                 env_pool="thread", data_source="grid/dev")[0]
    assert row["data_source"] == "grid/dev"
    run = asyncio.run(loop.run({"temperature": 1.0}, session_id=0, **{k: v for k, v in row.items() if k != "prompt"}))
    info = run[-1].extra_fields["reward_extra_info"]
    assert info == {"acc": float(sum(o.extra_fields["agc_reward"] for o in run) > 0)}  # GridWorld: no category


def test_alfworld_outputs_carry_the_task_type(tmp_path, monkeypatch):
    pytest.importorskip("textworld")
    if not DEV.is_dir():
        pytest.skip(f"real ALFWorld dev games not found at {DEV}")
    monkeypatch.setenv("AGENTGYM_CREDIT_SAS_CACHE", str(tmp_path / "sas"))
    tok = build_tokenizer(["look", "inventory"] * 20, vocab_size=270)
    loop = _loop(tok, ScriptedServer(tok, ["look"]))
    row = agc_verl.group_dataset("credit/ALFWorld-v0", [0], env_kwargs={"source": "dev"}, max_steps=2,
                                 env_pool="process", env_workers=1, data_source="alfworld/dev")[0]
    run = asyncio.run(loop.run({"temperature": 1.0}, session_id=0, **{k: v for k, v in row.items() if k != "prompt"}))
    import gymnasium as gym

    env = gym.make("credit/ALFWorld-v0", source="dev")
    _, info = env.reset(seed=0)
    env.close()
    assert run[-1].extra_fields["reward_extra_info"] == {"acc": 0.0, f"acc/{info['task_type']}": 0.0}


def test_process_pool_records_the_same_keys_as_in_process_envs():
    env_kw = {"size": 3, "n_tasks": 4}
    tok = build_tokenizer(env_corpus("credit/GridWorld-v0", episodes=5, max_steps=4, env_kwargs=env_kw),
                          vocab_size=300)
    got = {}
    for pool in ("thread", "process"):
        loop = _loop(tok, ScriptedServer(tok, ["go north", "go east", "go south"]))
        row = agc_verl.group_dataset("credit/GridWorld-v0", [3], env_kwargs=env_kw, max_steps=4, env_pool=pool,
                                     env_workers=2)[0]
        run = asyncio.run(loop.run({"temperature": 1.0}, session_id=0,
                                   **{k: v for k, v in row.items() if k != "prompt"}))
        got[pool] = [{k: v for k, v in o.extra_fields.items() if k != "traj_uid"} for o in run]
    assert got["thread"] == got["process"] and len(got["thread"]) >= 2


def test_bad_row_settings_are_clear_errors():
    from agentgym_credit.integrations.verl.agent_loop import _settings

    base = {"env_id": "credit/GridWorld-v0"}
    with pytest.raises(ValueError, match="prompting must be one of plain, verl-agent"):
        _settings({"extra_info": {"agc": {**base, "prompting": "react"}}})
    with pytest.raises(ValueError, match="env_pool must be"):
        _settings({"extra_info": {"agc": {**base, "env_pool": "fork"}}})


def test_process_pool_sends_a_group_to_one_process_and_groups_in_turn():
    from agentgym_credit.integrations.verl import env_pool

    cfg = {"env_id": "credit/GridWorld-v0", "env_kwargs": {"size": 3}, "history_depth": 1, "env_pool": "process",
           "env_workers": 2, "task": None}
    a, b, c = (env_pool.ProcessEnv({**cfg, "seed": s}) for s in (101, 101, 102))
    assert a.ex is b.ex and a.ex is not c.ex and a.slot != b.slot
    env_pool.shutdown()


def test_the_pool_processes_run_envs_without_importing_verl():
    """A spawned env process imports the module of the function it runs, and that module's package: the process
    side lived in ``integrations.verl``, so every env process imported verl and ``core_algos`` (31 s of wall time
    per process at load 10 on 2 cores) to step an env."""
    from agentgym_credit.integrations.verl import env_pool

    cfg = {"env_id": "credit/GridWorld-v0", "env_kwargs": {"size": 3}, "history_depth": 1, "env_pool": "process",
           "env_workers": 3, "task": None, "seed": 7}
    env = env_pool.ProcessEnv(cfg)
    try:
        result = asyncio.run(env.call("reset_slot", 7, {}, 0))
        assert result[4]["state_key"]  # an env really ran in the pool process
        loaded = env.ex.submit(eval, "sorted(m for m in __import__('sys').modules if m.split('.')[0] == 'verl')")
        assert loaded.result(timeout=600) == []
    finally:
        env_pool.shutdown()


def _verl_validation(samples: list[tuple[str, str, dict]], n: int | None = None) -> dict:
    """``(data_source, uid, reward_extra_info of a session's final output)`` per session, collected the way verl's
    v1 ``_validate`` collects them (None where a sample lacks a key), through verl's own
    ``process_validation_metrics`` (with ``expected_acc_counts`` of ``n`` sessions per uid when given)."""
    from verl.trainer.ppo.metric_utils import process_validation_metrics

    infos: dict[str, list] = {"reward": []}
    for k, (_, _, info) in enumerate(samples):
        infos["reward"].append(info["acc"])
        for key in infos:
            if key != "reward" and key not in info:
                infos[key].append(None)
        for key, value in info.items():
            infos.setdefault(key, [None] * k).append(value)
    expected = None if n is None else {(s, u): n for s, u, _ in samples}
    return process_validation_metrics([s for s, _, _ in samples], [u for _, u, _ in samples], infos,
                                      expected_acc_counts=expected)


def test_verls_validation_metrics_report_success_per_task_type_and_data_source():
    """The reward_extra_info of our outputs, collected the way verl's v1 ``_validate`` collects it (None where a
    sample lacks a key), through verl's own ``process_validation_metrics``: success per task type per data source."""
    samples = [("alfworld/dev", "u1", {"acc": 1.0, "acc/pick_and_place_simple": 1.0}),
               ("alfworld/dev", "u1", {"acc": 0.0, "acc/pick_and_place_simple": 0.0}),
               ("alfworld/dev", "u2", {"acc": 0.0, "acc/look_at_obj_in_light": 0.0}),
               ("alfworld/generated", "u3", {"acc": 1.0, "acc/pick_and_place_simple": 1.0})]
    out = _verl_validation(samples)
    dev = out["alfworld/dev"]
    assert dev["acc/pick_and_place_simple"]["mean@2"] == 0.5
    assert dev["acc/look_at_obj_in_light"]["mean@1"] == 0.0
    assert out["alfworld/generated"]["acc/pick_and_place_simple"]["mean@1"] == 1.0
    assert "acc/look_at_obj_in_light" not in out["alfworld/generated"]


# -- end to end: a group played through the agent loop, its success per category through verl's validation ------
def _play_copies(servers: list, row: dict, tok, response_length: int) -> list[list]:
    """Copy i of the group (session i) played by its own loop and stand-in server ``servers[i]``, concurrently
    on one event loop as verl's agent-loop worker runs them (verl builds one agent loop per sample)."""
    kw = {k: v for k, v in row.items() if k != "prompt"}
    loops = [_loop(tok, s, response_length) for s in servers]

    async def go():
        return list(await asyncio.gather(*[lp.run({"temperature": 1.0, "top_p": 1.0}, session_id=i, **kw)
                                           for i, lp in enumerate(loops)]))

    return asyncio.run(go())


def _check_success_per_category(runs, row, tok, category: str, want_acc: list[float], actions: dict[int, list[str]]):
    """The outputs of a group: one initial state, the scripted copies played their actions, every output carries
    ``acc`` and ``acc/<category>`` (verl's v1 worker reads the last one), the keys equal the collector's for the
    same actions; then verl's validation on the sessions' final outputs: success per category of the data source."""
    assert len({r[0].extra_fields["agc_state_key"] for r in runs}) == 1
    for i, acts in actions.items():
        assert [tok.decode(o.response_ids, skip_special_tokens=True).strip() for o in runs[i]] == acts
    for run, acc in zip(runs, want_acc):
        assert all(o.extra_fields["reward_extra_info"] == {"acc": acc, f"acc/{category}": acc} for o in run)
        assert run[-1].extra_fields["agc_done"] and not any(o.extra_fields["agc_failed"] for o in run)
    agc = row["extra_info"]["agc"]
    ref = _replay(agc["env_id"], json.loads(agc["env_kwargs"]), agc["seed"], runs, tok, agc["history_depth"])
    got = [o.extra_fields for run in runs for o in run]
    assert [e["agc_state_key"] for e in got] == ref.state_key.tolist()
    assert [e["agc_reward"] for e in got] == ref.reward.tolist()
    assert [e["agc_done"] for e in got] == ref.done.tolist()

    out = _verl_validation([(row["data_source"], "group-0", r[-1].extra_fields["reward_extra_info"]) for r in runs],
                           n=len(runs))
    assert set(out) == {row["data_source"]}
    metrics = out[row["data_source"]]
    assert metrics[f"acc/{category}"][f"mean@{len(runs)}"] == pytest.approx(np.mean(want_acc))
    assert metrics["acc"][f"mean@{len(runs)}"] == pytest.approx(np.mean(want_acc))
    return metrics


def test_a_webshop_group_reports_success_per_product_category_through_verls_validation():
    """credit/WebShop-v0 (the default generated catalogue) through the agent loop, each copy behind a STAND-IN for
    verl's GPU server manager: copy 0 answers with WebShop's ExpertPolicy's actions (a win, score 1), copy 1 buys
    another product of the results (a partial score, not a win: ``acc`` is success, not a positive return),
    copy 2 is the tiny CPU model. ``acc/<goal category>`` reaches verl's validation as success per category."""
    import gymnasium as gym

    from agentgym_credit.envs.webshop.expert import ExpertPolicy

    seed, env_id = 0, "credit/WebShop-v0"
    env = gym.make(env_id)
    env.reset(seed=seed)
    goal = env.unwrapped.goal
    category = str(goal["category"])
    expert, pol = [], ExpertPolicy()
    while True:
        expert.append(pol.act(env))
        _, reward, term, trunc, info = env.step(expert[-1])
        if term or trunc:
            break
    assert info["won"] and reward == 1.0
    env.reset(seed=seed)
    _, _, _, _, info = env.step(expert[0])  # the expert's search, then another product than the goal's
    other = next(a for a in info["admissible_actions"]
                 if a.startswith("click[b0") and a != f"click[{goal['asin'].lower()}]")
    wrong = [expert[0], other, "click[buy now]"]
    env.close()

    tok = build_tokenizer(env_corpus(env_id, episodes=2, max_steps=4) + expert + wrong, vocab_size=400)
    model = build_tiny_model(tok, arch="qwen2", hidden_size=32, seed=0)
    row = agc_verl.group_dataset(env_id, [seed], max_steps=len(expert) + 2, history_len=2, env_pool="process",
                                 env_workers=1, data_source="webshop")[0]
    servers = [ScriptedServer(tok, expert), ScriptedServer(tok, wrong), StandInServerManager(model, tok, 6)]
    runs = _play_copies(servers, row, tok, response_length=64)
    assert 0 < sum(o.extra_fields["agc_reward"] for o in runs[1]) < 1  # bought, partly matching: no success
    assert len(runs[2]) == len(expert) + 2  # the tiny model never buys: the episode runs to max_steps
    metrics = _check_success_per_category(runs, row, tok, category, [1.0, 0.0, 0.0], {0: expert, 1: wrong})
    assert category == "beauty" and "acc/fashion" not in metrics  # goal 0 of WebShop generator v9 (v7/v8: fashion)


def test_a_generated_alfworld_group_reports_success_per_task_type_through_verls_validation(tmp_path, monkeypatch):
    """credit/ALFWorld-v0 with source="generated" through the agent loop, each copy behind a STAND-IN for verl's
    GPU server manager: copy 0 answers with the env's expert commands (a win), copy 1 always looks, copy 2 is the
    tiny CPU model. ``acc/<task type>`` reaches verl's validation under the ``alfworld/generated`` data source."""
    pytest.importorskip("textworld")
    import gymnasium as gym

    monkeypatch.setenv("AGENTGYM_CREDIT_SAS_CACHE", str(tmp_path / "sas"))
    seed, env_id, env_kw = 1, "credit/ALFWorld-v0", {"source": "generated"}
    env = gym.make(env_id, expert=True, **env_kw)
    _, info = env.reset(seed=seed)
    task_type, expert = info["task_type"], []
    while not info["won"]:
        expert.append(info["expert_action"])
        *_, info = env.step(expert[-1])
    env.close()
    assert info["task_id"].startswith("gen/") and len(expert) <= 10

    tok = build_tokenizer(["look", "inventory"] * 20 + expert * 5, vocab_size=300)
    model = build_tiny_model(tok, arch="qwen2", hidden_size=32, seed=0)
    max_steps = len(expert) + 1
    row = agc_verl.group_dataset(env_id, [seed], env_kwargs=env_kw, max_steps=max_steps, history_len=2,
                                 env_pool="process", env_workers=1, data_source="alfworld/generated")[0]
    assert row["data_source"] == "alfworld/generated"
    servers = [ScriptedServer(tok, expert), ScriptedServer(tok, ["look"]), StandInServerManager(model, tok, 6)]
    runs = _play_copies(servers, row, tok, response_length=32)
    assert len(runs[0]) == len(expert) and len(runs[1]) == len(runs[2]) == max_steps
    metrics = _check_success_per_category(runs, row, tok, task_type, [1.0, 0.0, 0.0],
                                          {0: expert, 1: ["look"] * max_steps})
    assert task_type == "pick_clean_then_place_in_recep" and "acc/pick_and_place_simple" not in metrics
