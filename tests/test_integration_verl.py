"""The verl bridge against the real verl 0.9.1 on CPU: estimators in verl's registry, DataProto round trip.

- (a) advantages computed by verl's own ``compute_advantage`` (``verl.trainer.ppo.ray_trainer``) with
  our registered ``agc_*`` estimators equal ``credit.advantages`` tiled over the response tokens, on a
  DataProto converted from a real ``RolloutBatch`` (``GroupedRolloutCollector`` on credit/GridWorld-v0);
- (b) ``RolloutBatch -> DataProto -> RolloutBatch`` is lossless, and the tensors have verl's layout;
- (d) a batch without our step columns is refused with an error that names them (no GRPO fallback);
  importing the bridge without verl raises ``DependencyNotInstalled`` with the install command.

- (e) guards: verl's trainer-mode checks all see ``"sync"`` after ``trainer.install``; truncated
  trajectories, mixed groups and a non-credit env id are clear errors; padding-like rows get 0; and
  ``token_level_rewards`` holds the episode return, so verl's built-in ``grpo`` is a fair baseline.

The agent loop (c) is tested in ``tests/test_integration_verl_agent_loop.py``; verl's v1 advantage step
against a real TransferQueue in ``tests/test_integration_verl_v1.py``.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import re
import subprocess
import sys
from dataclasses import fields

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
torch = pytest.importorskip("torch")
pytest.importorskip("verl")
pytest.importorskip("transformers")

from omegaconf import OmegaConf  # noqa: E402
from verl.trainer.config import AlgoConfig  # noqa: E402
from verl.trainer.ppo import core_algos  # noqa: E402
from verl.trainer.ppo.ray_trainer import compute_advantage  # noqa: E402
from verl.utils.model import compute_position_id_with_mask  # noqa: E402

from agentgym_credit import credit  # noqa: E402
from agentgym_credit.errors import CreditError, GroupMismatchError, NotACreditEnv, StepArraysError  # noqa: E402
from agentgym_credit.integrations import verl as agc_verl  # noqa: E402
from agentgym_credit.trainer.policy import LLMPolicy, template_for  # noqa: E402
from agentgym_credit.trainer.sampling import BatchedSampler  # noqa: E402
from agentgym_credit.trainer.tiny import build_tiny_model, build_tokenizer, env_corpus  # noqa: E402
from agentgym_credit.wrappers import GroupedRolloutCollector  # noqa: E402

ENV = "credit/GridWorld-v0"
ENV_KW = {"size": 3, "n_tasks": 4}


@pytest.fixture(scope="module")
def tok():
    return build_tokenizer(env_corpus(ENV, episodes=10, max_steps=6, env_kwargs=ENV_KW), vocab_size=300)


@pytest.fixture(scope="module")
def random_batch():
    """Uniform admissible actions: varied returns, revisited states (nontrivial anchor groups)."""
    rng = np.random.default_rng(0)

    def policy(obs, infos):
        return [str(rng.choice(i["admissible_actions"])) for i in infos]

    col = GroupedRolloutCollector(ENV, group_size=4, max_steps=6, progress=False, seed=1, env_kwargs=ENV_KW,
                                  history_depth=2)
    b = col.collect(policy, 4)
    col.close()
    assert len(np.unique(b.traj.ret)) > 1, "the test needs groups with different returns"
    return b


@pytest.fixture(scope="module")
def llm_batch(tok):
    """A tiny random-weight causal LM behind our LLMPolicy: extras carry prompt/response ids and log-probs."""
    torch.manual_seed(0)
    model = build_tiny_model(tok, arch="qwen2", hidden_size=32, seed=0)
    pol = LLMPolicy(BatchedSampler(model, tok, max_new_tokens=4, temperature=1.0), template_for(ENV), history_len=1)
    col = GroupedRolloutCollector(ENV, group_size=3, max_steps=3, progress=False, seed=2, env_kwargs=ENV_KW)
    b = col.collect(pol, 2)
    col.close()
    return b


def _expected(name: str, steps: credit.StepArrays, mask: torch.Tensor, **opts) -> torch.Tensor:
    ours, fixed = agc_verl.VERL_ESTIMATORS[name]
    adv = credit.advantages(ours, steps, **{**opts, **fixed})
    return torch.from_numpy(credit.broadcast_to_tokens(adv, mask.numpy()))


# -- (a) verl's compute_advantage with our registered estimators ------------------------------------
def test_register_is_idempotent_and_names_are_in_verls_registry():
    names = agc_verl.register()
    assert names == ["agc_gigpo", "agc_gigpo_obs", "agc_verl_agent", "agc_hgpo", "agc_grpo", "agc_rloo",
                     "agc_graph", "agc_graph_obs", "agc_graphgpo", "agc_gagpo"]
    assert agc_verl.register() == names  # a second call changes nothing
    for n in names:
        assert core_algos.get_adv_estimator_fn(n) is agc_verl.estimator_fn(n)


@pytest.mark.parametrize("name", list(agc_verl.VERL_ESTIMATORS))
def test_compute_advantage_equals_credit_advantages(random_batch, tok, name):
    data = agc_verl.to_dataproto(random_batch, tok)
    out = compute_advantage(data, adv_estimator=name, config=AlgoConfig(adv_estimator=name))
    want = _expected(name, random_batch.steps, data.batch["response_mask"])
    assert out.batch["advantages"].shape == data.batch["responses"].shape
    torch.testing.assert_close(out.batch["advantages"], want, rtol=0, atol=0)
    torch.testing.assert_close(out.batch["returns"], want, rtol=0, atol=0)
    assert (out.batch["advantages"][data.batch["response_mask"] == 0] == 0).all()
    if name.startswith("agc_gigpo"):  # the step term matters on this batch: not GRPO in disguise
        grpo = _expected("agc_grpo", random_batch.steps, data.batch["response_mask"])
        assert not torch.equal(want, grpo)


def test_options_come_from_algorithm_agc_options_and_are_checked(random_batch, tok):
    data = agc_verl.to_dataproto(random_batch, tok)
    cfg = OmegaConf.create({"adv_estimator": "agc_gigpo", "gamma": 1.0,
                            "agc_options": {"gamma": 0.8, "omega": 0.5, "step_norm": "mean"}})
    out = compute_advantage(data, adv_estimator="agc_gigpo", config=cfg)
    want = _expected("agc_gigpo", random_batch.steps, data.batch["response_mask"], gamma=0.8, omega=0.5,
                     step_norm="mean")
    torch.testing.assert_close(out.batch["advantages"], want, rtol=0, atol=0)
    bad = OmegaConf.create({"agc_options": {"omgea": 1.0}})
    with pytest.raises(TypeError, match="omgea"):
        compute_advantage(agc_verl.to_dataproto(random_batch, tok), adv_estimator="agc_gigpo", config=bad)
    clash = OmegaConf.create({"agc_options": {"anchor": "obs_key"}})
    with pytest.raises(ValueError, match="agc_gigpo fixes anchor='state_key'"):
        compute_advantage(agc_verl.to_dataproto(random_batch, tok), adv_estimator="agc_gigpo", config=clash)


def test_rows_in_any_order_and_failed_trajectories_get_zero(random_batch, tok):
    data = agc_verl.to_dataproto(random_batch, tok)
    perm = np.random.default_rng(3).permutation(len(data))
    shuffled = data.select_idxs(perm)  # verl reorders rows (balance_batch); the estimator must not care
    out = compute_advantage(shuffled, adv_estimator="agc_hgpo", config=AlgoConfig())
    want = _expected("agc_hgpo", random_batch.steps, data.batch["response_mask"])[perm]
    torch.testing.assert_close(out.batch["advantages"], want, rtol=0, atol=0)
    # a failed trajectory: its rows get 0, the rest is computed without it (RolloutBatch.steps drops it)
    failed_rows = random_batch.traj_id == 0
    data.non_tensor_batch["agc_failed"] = failed_rows.copy()
    random_batch.traj.failed[0] = True
    try:
        out = compute_advantage(data, adv_estimator="agc_gigpo", config=AlgoConfig())
        want = _expected("agc_gigpo", random_batch.steps, data.batch["response_mask"][~torch.from_numpy(failed_rows)])
    finally:
        random_batch.traj.failed[0] = False
    assert (out.batch["advantages"][torch.from_numpy(failed_rows)] == 0).all()
    torch.testing.assert_close(out.batch["advantages"][torch.from_numpy(~failed_rows)], want, rtol=0, atol=0)


# -- (b) DataProto round trip -----------------------------------------------------------------------
def _assert_same_batch(a, b) -> None:
    for f in fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if f.name == "traj":
            for g in fields(x):
                xv, yv = getattr(x, g.name), getattr(y, g.name)
                assert (list(xv) == list(yv)) if isinstance(xv, list) else np.array_equal(xv, yv), g.name
                assert not isinstance(xv, np.ndarray) or xv.dtype == yv.dtype, g.name
        elif isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y), f.name
        else:
            assert x == y, f.name


def test_round_trip_is_lossless_with_policy_ids_and_logprobs(llm_batch):
    assert all("logprobs" in e and "prompt_ids" in e for e in llm_batch.extras)
    data = agc_verl.to_dataproto(llm_batch, pad_token_id=0)
    assert "old_log_probs" in data.batch.keys()
    back = agc_verl.from_dataproto(data)
    _assert_same_batch(llm_batch, back)
    # verl's own operations keep it: split into chunks and concatenated again
    again = agc_verl.from_dataproto(type(data).concat(data.chunk(2)) if len(data) % 2 == 0 else data)
    _assert_same_batch(llm_batch, again)


def test_round_trip_is_lossless_with_tokenizer_ids(random_batch, tok):
    back = agc_verl.from_dataproto(agc_verl.to_dataproto(random_batch, tok))
    _assert_same_batch(random_batch, back)


def test_tensor_layout_is_verls(llm_batch):
    data = agc_verl.to_dataproto(llm_batch, pad_token_id=0)
    b = data.batch
    n, P = b["prompts"].shape
    R = b["responses"].shape[1]
    assert b["input_ids"].shape == b["attention_mask"].shape == b["position_ids"].shape == (n, P + R)
    torch.testing.assert_close(b["position_ids"], compute_position_id_with_mask(b["attention_mask"]))
    for i, e in enumerate(llm_batch.extras):
        p, r = e["prompt_ids"], e["response_ids"]
        assert b["prompts"][i, P - len(p):].tolist() == p and (b["attention_mask"][i, :P - len(p)] == 0).all()
        assert b["responses"][i, :len(r)].tolist() == r and b["response_mask"][i].sum() == len(r)
        assert b["old_log_probs"][i, :len(r)].tolist() == pytest.approx(e["logprobs"], abs=0)
        assert b["token_level_rewards"][i].sum().item() == pytest.approx(llm_batch.reward[i])
    nt = data.non_tensor_batch
    assert nt["uid"].tolist() == [str(g) for g in llm_batch.group_id]
    assert nt["agc_state_key"].dtype == np.uint64 and nt["agc_history_keys"].shape == llm_batch.history_keys.shape


def test_to_dataproto_without_ids_or_tokenizer_says_what_to_do(random_batch):
    with pytest.raises(ValueError, match="no tokenizer was given"):
        agc_verl.to_dataproto(random_batch)
    with pytest.raises(TypeError, match="RolloutBatch"):
        agc_verl.to_dataproto({"not": "a batch"})


# -- (d) bad input ----------------------------------------------------------------------------------
@pytest.mark.parametrize("drop", [["agc_state_key"], ["traj_uid", "agc_history_keys"]])
def test_missing_step_columns_is_a_clear_error(random_batch, tok, drop):
    data = agc_verl.to_dataproto(random_batch, tok)
    for c in drop:
        data.non_tensor_batch.pop(c)
    with pytest.raises(agc_verl.MissingStepColumns) as e:
        compute_advantage(data, adv_estimator="agc_gigpo", config=AlgoConfig())
    msg = str(e.value)
    for c in drop:
        assert c in msg
    assert "to_dataproto" in msg and "agc_credit_env" in msg


def test_plain_verl_batch_is_refused_not_grpo(random_batch, tok):
    """A batch as verl's single-turn rollout makes it (uid only): refused, never scored as GRPO."""
    data = agc_verl.to_dataproto(random_batch, tok)
    keep = {"uid": data.non_tensor_batch["uid"]}
    data.non_tensor_batch.clear()
    data.non_tensor_batch.update(keep)
    with pytest.raises(agc_verl.MissingStepColumns, match="agc_state_key"):
        compute_advantage(data, adv_estimator="agc_gigpo", config=AlgoConfig())


def test_called_outside_compute_advantage_without_columns_is_a_clear_error():
    fn = agc_verl.estimator_fn("agc_gigpo")
    with pytest.raises(agc_verl.MissingStepColumns, match="traj_uid"):
        fn(token_level_rewards=torch.zeros(2, 3), response_mask=torch.ones(2, 3), index=np.array(["a", "a"]))


def test_import_without_verl_names_the_install_command():
    code = ("import sys; sys.modules['verl'] = None\n"
            "try:\n    import agentgym_credit.integrations.verl\n"
            "except Exception as e:\n    print(type(e).__name__, e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout
    assert out.startswith("DependencyNotInstalled") and "pip install" in out
    assert "agentgym-credit[verl]" in out or "'verl<0.10,>=0.9.1'" in out  # the extra, or its exact pins


def test_duplicated_rows_are_refused_not_scored(random_batch, tok):
    """verl pads a batch to a divisor by repeating rows; a repeated step is an error, not a second sample."""
    data = agc_verl.to_dataproto(random_batch, tok)
    padded = type(data).concat([data, data.select_idxs(np.arange(2))])
    with pytest.raises(StepArraysError, match="repeated step"):
        compute_advantage(padded, adv_estimator="agc_gigpo", config=AlgoConfig())


def test_verls_policy_loss_consumes_the_converted_batch(llm_batch):
    """verl's own PPO policy loss reads our old_log_probs, response_mask and advantages as they are: at
    ratio 1 its token-mean loss is -mean(advantage) over response tokens, and each response token's
    gradient is that token's step advantage."""
    from verl.workers.config import ActorConfig

    data = agc_verl.to_dataproto(llm_batch, pad_token_id=0)
    data = compute_advantage(data, adv_estimator="agc_gigpo", config=AlgoConfig())
    b = data.batch
    log_prob = b["old_log_probs"].clone().requires_grad_(True)
    loss_fn = core_algos.get_policy_loss_fn("vanilla")
    out = loss_fn(old_log_prob=b["old_log_probs"], log_prob=log_prob, advantages=b["advantages"],
                  response_mask=b["response_mask"], loss_agg_mode="token-mean",
                  config=ActorConfig(strategy="fsdp", rollout_n=1, ppo_micro_batch_size_per_gpu=1))
    loss = out[0] if isinstance(out, tuple) else out
    mask = b["response_mask"].float()
    torch.testing.assert_close(loss, -(b["advantages"] * mask).sum() / mask.sum())
    loss.backward()
    want_grad = -b["advantages"] * mask / mask.sum()
    torch.testing.assert_close(log_prob.grad, want_grad)
    adv = credit.advantages("gigpo", llm_batch.steps)
    rows = torch.from_numpy(adv)[:, None].expand_as(mask)
    torch.testing.assert_close(log_prob.grad[mask.bool()], (-rows * mask / mask.sum())[mask.bool()])


def test_trajectory_ids_need_only_be_unique_within_a_group(random_batch, tok):
    """traj_uid "0".."N-1" repeated in every group (a per-group counter) still gives the same advantages."""
    data = agc_verl.to_dataproto(random_batch, tok)
    data.non_tensor_batch["traj_uid"] = np.array([str(c) for c in random_batch.traj.copy[random_batch.traj_id]],
                                                 dtype=object)
    out = compute_advantage(data, adv_estimator="agc_gigpo", config=AlgoConfig())
    torch.testing.assert_close(out.batch["advantages"],
                               _expected("agc_gigpo", random_batch.steps, data.batch["response_mask"]), rtol=0, atol=0)


def test_a_row_with_none_in_a_step_column_is_refused(random_batch, tok):
    """A step column holding None (an output of another agent loop mixed in) is not read as False/0."""
    data = agc_verl.to_dataproto(random_batch, tok)
    done = data.non_tensor_batch["agc_done"].astype(object)
    done[3] = None
    data.non_tensor_batch["agc_done"] = done
    with pytest.raises(agc_verl.MissingStepColumns, match="row 3 of agc_done is None"):
        compute_advantage(data, adv_estimator="agc_gigpo", config=AlgoConfig())


# -- (e) guards and conventions ----------------------------------------------------------------------
def test_verls_trainer_mode_checks_all_see_sync_after_install():
    pytest.importorskip("transfer_queue")
    from verl.trainer.ppo.v1 import PPOTrainerSync, get_trainer_cls, trainer_base

    from agentgym_credit.integrations.verl import trainer

    src = inspect.getsource(trainer_base)
    literals = set(re.findall(r"self\.trainer_mode\s*[!=]=\s*\"(\w+)\"", src))
    assert literals == {"sync"}, f"verl compares trainer_mode with {literals}: re-check install()"
    assert re.search(r"trainer\.v1\.get\(self\.trainer_mode", src), "verl reads trainer.v1.<mode>"
    cls = trainer.install()
    assert trainer.TRAINER_MODE == "sync" and get_trainer_cls("sync") is cls and issubclass(cls, PPOTrainerSync)
    assert trainer.install() is cls  # idempotent
    import verl
    import yaml

    cfg = yaml.safe_load(open(os.path.join(os.path.dirname(verl.__file__), "trainer", "config", "ppo_trainer.yaml")))
    assert cfg["trainer"]["v1"]["trainer_mode"] == "sync"  # verl's default: our example keeps it


def test_install_refuses_to_replace_a_foreign_sync_trainer(monkeypatch):
    pytest.importorskip("transfer_queue")
    from verl.trainer.ppo.v1 import PPOTrainerSync
    from verl.trainer.ppo.v1.trainer_base import TRAINER_REGISTRY

    from agentgym_credit.integrations.verl import trainer

    monkeypatch.setitem(TRAINER_REGISTRY, "sync", type("Foreign", (PPOTrainerSync,), {}))
    with pytest.raises(RuntimeError, match="refusing to replace"):
        trainer.install()


def _cut_last_row(data, traj: str):
    rows = np.flatnonzero(data.non_tensor_batch["traj_uid"] == traj)
    last = rows[np.argmax(data.non_tensor_batch["agc_step"][rows])]
    return data.select_idxs(np.array([i for i in range(len(data)) if i != last]))


def test_a_trajectory_missing_its_final_rows_is_a_clear_error(random_batch, tok):
    data = agc_verl.to_dataproto(random_batch, tok)
    long = str(int(np.flatnonzero(random_batch.traj.length > 1)[0]))
    cut = _cut_last_row(data, long)
    with pytest.raises(agc_verl.TruncatedTrajectory, match=f"'{long}'.*dropped from their end"):
        compute_advantage(cut, adv_estimator="agc_gigpo", config=AlgoConfig())
    # the same trajectory marked failed is left out instead (advantage 0, no error)
    cut.non_tensor_batch["agc_failed"] = cut.non_tensor_batch["traj_uid"] == long
    out = compute_advantage(cut, adv_estimator="agc_gigpo", config=AlgoConfig())
    assert (out.batch["advantages"][torch.from_numpy(cut.non_tensor_batch["agc_failed"])] == 0).all()


def test_mixed_groups_are_a_clear_error(random_batch, tok):
    data = agc_verl.to_dataproto(random_batch, tok)
    uid = data.non_tensor_batch["uid"].copy()
    g0, g1 = np.unique(uid)[:2]
    t1 = data.non_tensor_batch["traj_uid"][uid == g1][0]
    uid[(uid == g1) & (data.non_tensor_batch["traj_uid"] == t1)] = g0  # a rollout of another start in group g0
    data.non_tensor_batch["uid"] = uid
    with pytest.raises(GroupMismatchError, match="mixes agc_task_id"):
        compute_advantage(data, adv_estimator="agc_grpo", config=AlgoConfig())
    del data.non_tensor_batch["agc_task_id"]  # without the task column: the initial states differ
    with pytest.raises(GroupMismatchError, match="different initial states"):
        compute_advantage(data, adv_estimator="agc_grpo", config=AlgoConfig())
    data = agc_verl.to_dataproto(random_batch, tok)
    env = np.array(["credit/GridWorld-v0"] * len(data), dtype=object)
    env[0] = "credit/Household-v0"
    data.non_tensor_batch["agc_env_id"] = env
    with pytest.raises(GroupMismatchError, match="mixes agc_env_id"):
        compute_advantage(data, adv_estimator="agc_gigpo", config=AlgoConfig())


def test_a_non_credit_env_id_is_a_clear_error():
    with pytest.raises(ValueError, match="plays credit/\\* envs.*CartPole-v1.*Registered: credit/"):
        agc_verl.group_dataset("CartPole-v1", [0])
    from agentgym_credit.integrations.verl.agent_loop import _settings

    with pytest.raises(ValueError, match="got env_id 'credit/Nope-v0'"):
        _settings({"extra_info": {"agc": {"env_id": "credit/Nope-v0"}}})


def test_to_dataproto_writes_the_env_id_the_batch_knows(random_batch, tok):
    data = agc_verl.to_dataproto(random_batch, tok)
    assert data.non_tensor_batch["agc_env_id"].tolist() == [ENV] * len(data)
    # a batch that does not know its env (a factory's batch, or meta lost): no column, and no check
    anon = dataclasses.replace(random_batch, meta={})
    assert "agc_env_id" not in agc_verl.to_dataproto(anon, tok).non_tensor_batch
    factory = dataclasses.replace(random_batch, meta={**random_batch.meta, "env": "make_env"})
    assert "agc_env_id" not in agc_verl.to_dataproto(factory, tok).non_tensor_batch
    # a "module:id" env name is written as the id
    prefixed = dataclasses.replace(random_batch, meta={**random_batch.meta, "env": f"agentgym_credit.envs:{ENV}"})
    assert agc_verl.to_dataproto(prefixed, tok).non_tensor_batch["agc_env_id"][0] == ENV


@pytest.mark.parametrize("bad", ["CartPole-v1", "credit/Nope-v0", None])
def test_a_non_credit_env_id_in_a_dataproto_is_refused(random_batch, tok, bad):
    """The estimators need the credit env contract's keys: a batch of another env is refused, whole or in part."""
    data = agc_verl.to_dataproto(random_batch, tok)
    data.non_tensor_batch["agc_env_id"] = np.array([bad] * len(data), dtype=object)
    for name in ("agc_gigpo", "agc_grpo", "agc_verl_agent"):
        with pytest.raises(NotACreditEnv, match=f"agc_env_id.*{re.escape(repr(bad))}.*Registered: credit/"):
            compute_advantage(data, adv_estimator=name, config=AlgoConfig())
    # the same through verl's padding (copies of row 0 with an empty response mask)
    n = len(data)
    padded = data.select_idxs(np.r_[np.arange(n), np.zeros(3, dtype=int)])
    padded.batch["response_mask"][n:] = 0
    with pytest.raises(NotACreditEnv):
        compute_advantage(padded, adv_estimator="agc_gigpo", config=AlgoConfig())
    # NotACreditEnv is a named CreditError and a ValueError
    assert issubclass(NotACreditEnv, CreditError) and issubclass(NotACreditEnv, ValueError)
    # a "module:" prefix before a credit id is accepted (gymnasium's import-then-make form)
    data.non_tensor_batch["agc_env_id"] = np.array([f"agentgym_credit.envs:{ENV}"] * n, dtype=object)
    compute_advantage(data, adv_estimator="agc_gigpo", config=AlgoConfig())


def test_without_an_env_id_column_the_env_is_not_checked(random_batch, tok):
    """The column is optional (OPTIONAL_COLUMNS): a batch without it is computed as before."""
    data = agc_verl.to_dataproto(random_batch, tok)
    data.non_tensor_batch.pop("agc_env_id")
    assert "agc_env_id" in agc_verl.columns.OPTIONAL_COLUMNS
    out = compute_advantage(data, adv_estimator="agc_gigpo", config=AlgoConfig())
    torch.testing.assert_close(out.batch["advantages"],
                               _expected("agc_gigpo", random_batch.steps, data.batch["response_mask"]), rtol=0, atol=0)


def test_empty_response_rows_that_copy_a_step_get_zero_and_leave_real_rows_alone(random_batch, tok):
    """verl's padding shape, built by hand: copies of row 0 with an empty mask and a fresh pad uid."""
    data = agc_verl.to_dataproto(random_batch, tok)
    n = len(data)
    padded = data.select_idxs(np.r_[np.arange(n), np.zeros(5, dtype=int)])
    padded.batch["response_mask"][n:] = 0
    uid = padded.non_tensor_batch["uid"].copy()
    uid[n:] = "pad0123"
    padded.non_tensor_batch["uid"] = uid
    for name in agc_verl.VERL_ESTIMATORS:
        want = compute_advantage(agc_verl.to_dataproto(random_batch, tok), adv_estimator=name, config=AlgoConfig())
        got = compute_advantage(padded, adv_estimator=name, config=AlgoConfig())
        torch.testing.assert_close(got.batch["advantages"][:n], want.batch["advantages"], rtol=0, atol=0)
        assert (got.batch["advantages"][n:] == 0).all()
    # a real step whose response happens to be empty is kept (its trajectory stays whole)
    lone = data.select_idxs(np.arange(n))
    lone.batch["response_mask"][0] = 0
    compute_advantage(lone, adv_estimator="agc_gigpo", config=AlgoConfig())


def test_token_level_rewards_hold_the_episode_return_so_verls_grpo_is_a_fair_baseline(random_batch, tok):
    data = agc_verl.to_dataproto(random_batch, tok)
    scores = data.batch["token_level_rewards"].sum(-1).double().numpy()
    ret = random_batch.traj.ret[random_batch.traj_id]
    assert np.array_equal(scores, ret.astype(np.float32).astype(np.float64))
    theirs = compute_advantage(data, adv_estimator="grpo", config=AlgoConfig(), norm_adv_by_std_in_grpo=True)
    first = data.batch["response_mask"].argmax(-1)
    theirs = theirs.batch["advantages"][torch.arange(len(data)), first].double().numpy()
    ours = credit.advantages("grpo", random_batch.steps, episode_baseline="step")
    assert np.max(np.abs(theirs - ours)) <= 1e-6
    preset = compute_advantage(data, adv_estimator="agc_verl_agent", config=AlgoConfig())
    want = credit.broadcast_to_tokens(credit.advantages("verl-agent", random_batch.steps), data.batch["response_mask"].numpy())
    torch.testing.assert_close(preset.batch["advantages"], torch.from_numpy(want), rtol=0, atol=0)


def _rows(batch) -> list[dict]:
    return [{"group": g, "traj": tr, "reward": r, "valid": v} for g, tr, r, v in
            zip(batch.group_id.tolist(), batch.traj_id.tolist(), batch.reward.tolist(), batch.action_valid.tolist())]


@pytest.fixture(scope="module")
def penalized_batch(random_batch):
    """random_batch with some actions marked invalid (a third of the rows, every group), so the penalty shows."""
    valid = random_batch.action_valid.copy()
    valid[::3] = False
    return dataclasses.replace(random_batch, action_valid=valid)


def test_token_level_rewards_follow_verl_agent_with_the_verl_agent_option(penalized_batch, tok):
    """token_rewards="verl-agent": each row's score is 10 x the episode return, less 0.1 on an invalid row, on its
    last response token (verl-agent's episode reward manager, then its apply_invalid_action_penalty), so verl's
    built-in grpo on these rows is verl-agent's own GRPO (transcribed from its code in reference_verl_agent)."""
    from reference_verl_agent import reference_grpo, reference_scores

    rows = _rows(penalized_batch)
    assert any(not r["valid"] for r in rows) and len({r["reward"] for r in rows}) > 1
    data = agc_verl.to_dataproto(penalized_batch, tok, token_rewards="verl-agent")
    tlr = data.batch["token_level_rewards"]
    last = data.batch["response_mask"].sum(-1) - 1
    assert (tlr.sum(-1) == tlr[torch.arange(len(data)), last]).all()  # the score sits on the last token alone
    np.testing.assert_allclose(tlr.sum(-1).double().numpy(), reference_scores(rows), rtol=0, atol=1e-5)
    first = data.batch["response_mask"].argmax(-1)
    for norm in (True, False):
        theirs = compute_advantage(data, adv_estimator="grpo", config=AlgoConfig(), norm_adv_by_std_in_grpo=norm)
        theirs = theirs.batch["advantages"][torch.arange(len(data)), first].double().numpy()
        want = np.array(reference_grpo(rows, norm_by_std=norm))
        assert np.max(np.abs(theirs - want)) <= 1e-5, (norm, np.max(np.abs(theirs - want)))
    # verl-agent's GRPO is the preset's episode term (omega=0): both modes
    for mode, norm in (("mean_std_norm", True), ("mean_norm", False)):
        steps = penalized_batch.steps
        preset = credit.advantages("verl-agent", steps, omega=0.0, mode=mode)
        assert np.max(np.abs(preset - np.array(reference_grpo(rows, norm_by_std=norm)))) <= 1e-5
    # the default stays the raw episode return (no scale, no penalty) and the option is checked
    plain = agc_verl.to_dataproto(penalized_batch, tok).batch["token_level_rewards"].sum(-1).double().numpy()
    np.testing.assert_allclose(plain, penalized_batch.traj.ret[penalized_batch.traj_id], rtol=0, atol=1e-6)
    explicit = agc_verl.to_dataproto(penalized_batch, tok, token_rewards={"reward_scale": 2.0, "invalid_penalty": -1.0})
    np.testing.assert_allclose(explicit.batch["token_level_rewards"].sum(-1).double().numpy(),
                               reference_scores(rows, coef=1.0, scale=2.0), rtol=0, atol=1e-5)
    with pytest.raises(ValueError, match="token_rewards must be"):
        agc_verl.to_dataproto(penalized_batch, tok, token_rewards="verl_agent")
    with pytest.raises(ValueError, match="token_rewards.*rewad_scale"):
        agc_verl.to_dataproto(penalized_batch, tok, token_rewards={"rewad_scale": 10.0})
    # the rows the estimators read keep the env's own rewards (the preset scales them itself)
    assert np.array_equal(data.non_tensor_batch["agc_reward"], penalized_batch.reward)
