"""verl 0.9.1's v1 advantage path end to end on CPU, against a real TransferQueue (local Ray).

What runs is verl's own code wherever it can run without a GPU:

1. our agent loop ``agc_credit_env`` plays groups of credit/GridWorld-v0 (a scripted stand-in for verl's
   server manager chooses the actions: vLLM needs CUDA);
2. verl's ``AgentLoopWorkerTQ._agent_loop_postprocess`` puts every output into TransferQueue under verl's key
   layout ``{uid}_{session}_{index}`` (the worker's reward / teacher services are off, as when the reward is
   computed in the loop);
3. the trainer verl builds for ``trainer.v1.trainer_mode=sync`` after our :func:`install` (its
   ``_balance_batch`` pads the batch with ``padding_utils.upsample_batch_to_divisible_size`` to a multiple of
   lcm(dp, ppo_mini_batch_size x n) = 128, then its ``_compute_advantage`` with our hook) computes the
   advantages and writes them back to TransferQueue;
4. the advantages read back equal ``credit.advantages`` on the real rows, and the padding rows get 0.
"""

from __future__ import annotations

import asyncio
import os
from types import SimpleNamespace

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAY_DEDUP_LOGS", "0")
torch = pytest.importorskip("torch")
pytest.importorskip("verl")
tq = pytest.importorskip("transfer_queue", reason="TransferQueue is part of the verl extra")
ray = pytest.importorskip("ray")

from omegaconf import OmegaConf  # noqa: E402
from verl.experimental.agent_loop.agent_loop import DictConfigWrap  # noqa: E402
from verl.trainer.ppo.v1 import get_trainer_cls  # noqa: E402
from verl.trainer.ppo.v1.agent_loop_tq import AgentLoopWorkerTQ  # noqa: E402
from verl.workers.rollout.replica import TokenOutput  # noqa: E402

from agentgym_credit import credit  # noqa: E402
from agentgym_credit.integrations import verl as agc_verl  # noqa: E402
from agentgym_credit.integrations.verl import trainer as agc_trainer  # noqa: E402
from agentgym_credit.trainer.tiny import build_tokenizer, env_corpus  # noqa: E402

pytestmark = pytest.mark.slow
ENV = "credit/GridWorld-v0"
ENV_KW = {"size": 3, "n_tasks": 4}
N = 4
ACTIONS = ["move north", "move south", "move east", "move west", "jump"]


class ScriptedServer:
    """Stand-in for verl's server manager (vLLM needs CUDA): answers each request with a random action's ids."""

    def __init__(self, tok, seed: int, actions: list[str] = ACTIONS):
        self.tok, self.rng, self.actions = tok, np.random.default_rng(seed), actions

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs) -> TokenOutput:
        ids = list(self.tok(str(self.rng.choice(self.actions)), add_special_tokens=False)["input_ids"])
        return TokenOutput(token_ids=ids, log_probs=[-1.0] * len(ids))


@pytest.fixture(scope="module")
def tok():
    return build_tokenizer(env_corpus(ENV, episodes=10, max_steps=6, env_kwargs=ENV_KW), vocab_size=300)


@pytest.fixture(scope="module")
def transfer_queue():
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    tq.init(OmegaConf.create({"backend": {"SimpleStorage": {"num_data_storage_units": 1}}}))
    yield tq
    tq.close()
    if started:
        ray.shutdown()


def _config(mini_batch: int = 32, dp: int = 2):
    return OmegaConf.create({
        "algorithm": {"adv_estimator": "agc_gigpo", "use_kl_in_reward": False, "gamma": 1.0, "lam": 1.0,
                      "norm_adv_by_std_in_grpo": True},
        "actor_rollout_ref": {"rollout": {"n": N, "prompt_length": 4096, "response_length": 8},
                              "actor": {"ppo_mini_batch_size": mini_batch}},
        "trainer": {"critic_warmup": 0, "v1": {"trainer_mode": "sync"}},
        "data": {},
    })


def _play(tok, groups: int, max_steps: int = 6, actions: list[str] = ACTIONS, **row) -> list[tuple[str, list]]:
    """(uid, runs) per group: our agent loop through the scripted server."""
    cfg = _config()
    rows = agc_verl.group_dataset(ENV, list(range(groups)), env_kwargs=ENV_KW, max_steps=max_steps, env_pool="thread",
                                  **row)
    out = []
    for g, row in enumerate(rows):
        loop = agc_verl.CreditEnvAgentLoop(trainer_config=DictConfigWrap(cfg), server_manager=ScriptedServer(tok, g, actions),
                                           tokenizer=tok, processor=None, dataset_cls=None,
                                           data_config=DictConfigWrap(cfg.data))
        kw = {k: v for k, v in row.items() if k != "prompt"}

        async def group(loop=loop, kw=kw):
            return await asyncio.gather(*[loop.run({"temperature": 1.0}, session_id=i, **kw) for i in range(N)])

        out.append((f"group{g}", list(asyncio.run(group()))))
    return out


def _put(played: list[tuple[str, list]]) -> list[str]:
    """verl's AgentLoopWorkerTQ._agent_loop_postprocess puts every output (reward/teacher services off)."""
    worker = object.__new__(getattr(AgentLoopWorkerTQ, "__ray_actor_class__", AgentLoopWorkerTQ))
    worker.reward_loop_worker_handles, worker.distillation_enabled, worker.processor = None, False, None

    async def put_all():
        for uid, runs in played:
            for session, run in enumerate(runs):
                await worker._agent_loop_postprocess(run, False, uid=uid, session_id=session, global_steps=1)

    asyncio.run(put_all())
    return [f"{uid}_{s}_{i}" for uid, runs in played for s, run in enumerate(runs) for i in range(len(run))]


def _trainer(tok, dp: int = 2):
    cls = get_trainer_cls(_config().trainer.v1.trainer_mode)
    t = object.__new__(cls)  # verl's __init__ starts Ray worker groups on GPUs; the two steps need only these
    t.config, t.tokenizer, t.use_critic, t.global_steps = _config(dp=dp), tok, False, 1
    t.actor_rollout_wg = SimpleNamespace(_dispatch_info={"actor": list(range(dp))})
    return t


def _expected(played, name="gigpo", **opts) -> tuple[dict[str, float], credit.StepArrays]:
    extra = [o.extra_fields for _, runs in played for run in runs for o in run]
    uids = [uid for uid, runs in played for run in runs for _ in run]
    nt = {"uid": np.array(uids, dtype=object), **agc_verl.columns.columns_from_extra_fields(extra)}
    steps, _ = agc_verl.steps_from_columns(nt)
    return credit.advantages(name, steps, **opts), steps


def test_v1_advantage_step_with_padding_equals_credit_advantages(tok, transfer_queue):
    agc_trainer.install()
    assert get_trainer_cls("sync") is agc_trainer.trainer_class()
    played = _play(tok, groups=5)
    keys = _put(played)
    n_real = len(keys)
    assert n_real % 128 != 0, "the test needs a batch that verl pads"
    from transfer_queue import KVBatchMeta

    tags = [{"status": "success", "seq_len": 10, "prompt_len": 5, "response_len": 5} for _ in keys]
    kv = KVBatchMeta(keys=list(keys), tags=tags, partition_id="train")
    t = _trainer(tok)
    metrics: dict = {}
    kv = t._balance_batch(kv, metrics)
    assert len(kv) == 128 and sum(k.startswith("pad") for k in kv.keys) == 128 - n_real
    kv = t._compute_advantage(kv, metrics)
    got = tq.kv_batch_get(keys=kv.keys, partition_id="train", select_fields=["advantages", "response_mask"])
    want, _ = _expected(played)
    want_by_key = dict(zip(keys, want.tolist()))
    for key, adv, mask in zip(kv.keys, got["advantages"].unbind(), got["response_mask"].unbind()):
        adv, mask = adv.float(), mask.float()
        if key.startswith("pad"):
            assert float(adv.abs().max()) == 0.0, key
        else:
            assert mask.sum() > 0
            expect = torch.full_like(adv, want_by_key[key]) * mask
            torch.testing.assert_close(adv, expect, rtol=0, atol=1e-6)
    tq.kv_clear(keys=kv.keys, partition_id="train")


@pytest.fixture(scope="module")
def played(tok):
    return _play(tok, groups=3)


@pytest.mark.parametrize("name", list(agc_verl.VERL_ESTIMATORS))
def test_verls_padding_rows_get_zero_and_leave_real_rows_alone(tok, transfer_queue, played, name):
    """verl's own upsample_batch_to_divisible_size, then verl's compute_advantage with each of our estimators:
    real rows equal the unpadded batch's advantages, padding rows get 0."""
    from transfer_queue import KVBatchMeta
    from verl.protocol import DataProto
    from verl.trainer.config import AlgoConfig
    from verl.trainer.ppo.padding_utils import upsample_batch_to_divisible_size
    from verl.trainer.ppo.ray_trainer import compute_advantage

    keys = _put(played)
    part = "train"  # where verl's worker puts training outputs
    kv = KVBatchMeta(keys=list(keys), tags=[{"status": "success", "seq_len": 4} for _ in keys], partition_id=part)
    kv = upsample_batch_to_divisible_size(kv, 128, tok.eos_token_id)
    assert len(kv) == 128 and sum(k.startswith("pad") for k in kv.keys) == 128 - len(keys) > 0
    got = tq.kv_batch_get(keys=kv.keys, partition_id=part, select_fields=["uid", "response_mask", "rm_scores",
                                                                           "extra_fields"])
    cols = agc_verl.columns.columns_from_extra_fields(list(got.pop("extra_fields").tolist()))
    uid = np.array(got.pop("uid").tolist(), dtype=object)
    td = got.to_padded_tensor() if hasattr(got, "to_padded_tensor") else got
    mask, rewards = td["response_mask"], td["rm_scores"].float()
    data = DataProto.from_dict(tensors={"response_mask": mask, "token_level_rewards": rewards},
                               non_tensors={"uid": uid, **cols})
    out = compute_advantage(data, adv_estimator=name, config=AlgoConfig())
    ours, fixed = agc_verl.VERL_ESTIMATORS[name]
    want, _ = _expected(played, ours, **fixed)
    by_key = dict(zip(keys, want.tolist()))
    for i, key in enumerate(kv.keys):
        row = out.batch["advantages"][i]
        if key in by_key:
            torch.testing.assert_close(row, torch.full_like(row, by_key[key]) * mask[i].float(), rtol=0, atol=1e-6)
        else:
            assert key.startswith("pad") and float(row.abs().max()) == 0.0
    tq.kv_clear(keys=kv.keys, partition_id=part)


def test_v1_rm_scores_hold_each_rows_verl_agent_score(tok, transfer_queue):
    """token_rewards="verl-agent": verl's v1 worker copies the last output's reward_score onto every output of a
    trajectory; our trainer's advantage step writes each row's own score (10 x return, less 0.1 on an invalid row)
    back into rm_scores before verl reads them as token_level_rewards."""
    from reference_verl_agent import reference_scores
    from transfer_queue import KVBatchMeta

    agc_trainer.install()
    moves = ["go north", "go south", "go east", "go west", "jump"]  # GridWorld's verbs, and an invalid one
    played = _play(tok, groups=3, max_steps=6, actions=moves, token_rewards="verl-agent")
    rows = [{"group": uid, "traj": s, "reward": o.extra_fields["agc_reward"], "valid": o.extra_fields["agc_valid"]}
            for uid, runs in played for s, run in enumerate(runs) for o in run]
    want = reference_scores(rows)
    finals = {(r["group"], r["traj"]): w for r, w in zip(rows, want)}  # the last row of each trajectory wins
    assert any(w != finals[(r["group"], r["traj"])] for r, w in zip(rows, want)), "needs invalid non-final rows"
    # the agent loop's outputs and outputs_to_dataproto carry the same scores
    data = agc_verl.outputs_to_dataproto([run for _, runs in played for run in runs],
                                         [uid for uid, runs in played for _ in runs], pad_token_id=tok.pad_token_id)
    np.testing.assert_allclose(data.batch["token_level_rewards"].sum(-1).double().numpy(), want, atol=1e-5)
    keys = _put(played)
    kv = KVBatchMeta(keys=list(keys), tags=[{"status": "success"} for _ in keys], partition_id="train")
    before = tq.kv_batch_get(keys=kv.keys, partition_id="train", select_fields=["rm_scores"])["rm_scores"]
    assert [float(x.sum()) for x in before.unbind()] == pytest.approx([finals[(r["group"], r["traj"])] for r in rows])
    t = _trainer(tok)
    t.config.algorithm.adv_estimator = "agc_verl_agent"
    kv = t._compute_advantage(kv, {})
    got = tq.kv_batch_get(keys=kv.keys, partition_id="train", select_fields=["rm_scores", "response_mask"])
    for score, mask, w in zip(got["rm_scores"].unbind(), got["response_mask"].unbind(), want):
        assert float(score.sum()) == pytest.approx(w, abs=1e-5) and float(score[-1]) == pytest.approx(w, abs=1e-5)
        assert len(score) == int(mask.sum())
    tq.kv_clear(keys=kv.keys, partition_id="train")
