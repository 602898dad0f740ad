"""The TRL bridge against the real trl (1.16) on CPU, offline.

The policy (``integrations/trl/tiny.py``) is a real 2-layer Qwen2 model built from a config (random
weights) with a byte-level BPE tokenizer trained on the env's text and TRL's own Qwen2.5 chat template
(so TRL's tool-call parser and prefix-preserving checks apply unchanged). A random model never writes
a well-formed tool call, so its sampling is constrained to a grammar (a ``LogitsProcessor`` passed to
``generate``, as constrained-decoding libraries do): one ``act`` call with one of the four moves, or a
short stop message. Which branch is taken is still sampled from the model's own logits; nothing of
TRL is replaced. What is shown:

- (d) two ``StepCreditGRPOTrainer`` steps on ``credit/GridWorld-v0`` (GiGPO, and HGPO); the ``(B, T)`` advantages that
  TRL's ``_compute_loss`` receives equal, token by token and for every turn, ``credit.advantages``
  computed here independently from the steps the envs recorded; tool-output tokens are masked;
- a policy that never calls the tool: each rollout is one closing invalid no-op at its initial state,
  a warning is logged, and no GRPO advantage leaks in;
- any credit/* env: a group of two rollouts of a real ALFWorld dev game records the engine's keys;
- no turn is sampled after an episode ended (TRL's tool loop would generate one after every end);
- two processes (``accelerate launch --multi_gpu --num_processes 2``, CPU, gloo, no accelerate config file; slow):
  a group split over the processes gets the advantages of the whole group;
- bad input: a non-credit env id, a row without a reset seed, a group whose rollouts start apart,
  a typo'd estimator option.
"""

from __future__ import annotations

import copy
import logging
import os
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("trl")

from trl import GRPOConfig  # noqa: E402

from agentgym_credit.credit import StepArrays, advantages  # noqa: E402
from agentgym_credit.errors import GroupMismatchError  # noqa: E402
from agentgym_credit.integrations.trl import (  # noqa: E402
    CreditEnvFactory,
    StepCreditGRPOTrainer,
    task_dataset,
    turn_spans,
)
from agentgym_credit.integrations.trl.tiny import tiny_tool_policy  # noqa: E402
from agentgym_credit.integrations.trl.trainer import _step_arrays  # noqa: E402

ENV_ID = "credit/GridWorld-v0"
ENV_KW = {"size": 4, "n_tasks": 4, "max_steps": 4}
MOVES = ("go north", "go south", "go east", "go west")


@pytest.fixture(scope="module", autouse=True)
def _single_torch_thread():  # the CI machine has 2 cores, shared with other test processes
    n, _ = torch.get_num_threads(), torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def policy(stop_bias: float, actions=MOVES):
    return tiny_tool_policy(ENV_ID, list(actions), env_kwargs=ENV_KW, stop_bias=stop_bias, seed=0)


def config(tmp_path, **kw) -> GRPOConfig:
    base = dict(output_dir=str(tmp_path), use_cpu=True, report_to="none", save_strategy="no", logging_steps=1,
                per_device_train_batch_size=8, num_generations=4, max_steps=2, max_completion_length=320,
                max_tool_calling_iterations=5, learning_rate=1e-3, beta=0.0, temperature=1.0, seed=0,
                shuffle_dataset=False, disable_tqdm=True, bf16=False)
    base.update(kw)
    return GRPOConfig(**base)


class Recording(StepCreditGRPOTrainer):
    """Records each generation batch (with deep copies of the envs' steps) and every loss input."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.batches, self.loss_inputs = [], []

    def _generate_and_score_completions(self, inputs):
        out = super()._generate_and_score_completions(inputs)
        self.batches.append({
            "completion_ids": out["completion_ids"].clone(), "mask": out["completion_mask"] * out["tool_mask"],
            "records": [copy.deepcopy(e.records) for e in self.environments],
            "calls": [list(e.calls) for e in self.environments],
        })
        return out

    def _compute_loss(self, model, inputs):
        self.loss_inputs.append({k: inputs[k].detach().clone() for k in
                                 ("completion_ids", "completion_mask", "tool_mask", "advantages")})
        return super()._compute_loss(model, inputs)


def expected_token_advantages(batch, group_size: int, estimator: str, **opts) -> np.ndarray:
    """Independent of the bridge: StepArrays from the recorded steps, then turn k of rollout i gets the
    advantage of the step its k-th call played (0 for a call after the episode ended or never run), and
    a final turn without a call gets the closing step's advantage."""
    rows, cols = [], {k: [] for k in ("group_id", "traj_id", "t", "reward", "done", "state_key", "obs_key",
                                      "history_keys", "valid")}
    for i, recs in enumerate(batch["records"]):
        rows.append([])
        for r in recs:
            rows[-1].append(len(cols["t"]))
            for k, v in (("group_id", i // group_size), ("traj_id", i), ("t", r.t), ("reward", r.reward),
                         ("done", r.done and r.t == len(recs) - 1), ("state_key", r.state_key),
                         ("obs_key", r.obs_key), ("history_keys", list(r.history_keys)),
                         ("valid", r.action_valid)):
                cols[k].append(v)
    adv = advantages(estimator, StepArrays.from_lists(**cols), **opts)
    mask = batch["mask"].numpy()
    expected = np.zeros(mask.shape, dtype=np.float32)
    for i, (recs, calls) in enumerate(zip(batch["records"], batch["calls"], strict=True)):
        runs, start = [], None
        for j, m in enumerate(list(mask[i]) + [0]):
            if m and start is None:
                start = j
            if not m and start is not None:
                runs.append((start, j))
                start = None
        for k, (s, e) in enumerate(runs):
            if k < len(calls):
                value = 0.0 if calls[k] is None else adv[rows[i][calls[k]]]
            elif recs and recs[-1].closing and k == len(runs) - 1:
                value = adv[rows[i][-1]]
            else:
                value = 0.0
            expected[i, s:e] = value
    return expected


def match_loss_rows(batch, loss) -> list[int]:
    """Generation-batch row of each loss row (TRL shuffles rows before the loss)."""
    gen = [bytes(r.numpy().astype(np.int64)) for r in batch["completion_ids"]]
    width = batch["completion_ids"].shape[1]
    out = []
    for r in loss["completion_ids"]:
        key = bytes(r[:width].numpy().astype(np.int64))
        out.append(gen.index(key))
    return out


# two real GRPO steps take ~35 s at load 10 on 2 cores: gigpo in the fast suite, hgpo with the slow tests
@pytest.mark.parametrize("estimator", ["gigpo", pytest.param("hgpo", marks=pytest.mark.slow)])
def test_two_grpo_steps_use_per_turn_advantages(tmp_path, estimator):
    model, tok = policy(stop_bias=-3.0)
    before = [p.detach().clone() for p in model.parameters()]
    trainer = Recording(model, args=config(tmp_path), train_dataset=task_dataset(ENV_ID, 4),
                        processing_class=tok, environment_factory=CreditEnvFactory(ENV_ID, env_kwargs=ENV_KW),
                        estimator=estimator, estimator_options={"gamma": 0.9})
    trainer.train()
    assert trainer.state.global_step == 2 and len(trainer.batches) == 2 and len(trainer.loss_inputs) == 2
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
    assert any(row.get("grad_norm", 0) > 0 for row in trainer.state.log_history)  # a nonzero policy gradient

    multi_turn_distinct = 0
    for batch, loss in zip(trainer.batches, trainer.loss_inputs, strict=True):
        expected = expected_token_advantages(batch, 4, estimator, gamma=0.9)
        rows = match_loss_rows(batch, loss)
        width = expected.shape[1]
        used = loss["advantages"].numpy()
        assert used.shape == loss["completion_ids"].shape  # (B, T): one advantage per token
        np.testing.assert_allclose(used[:, :width], expected[rows], rtol=0, atol=1e-6)
        # per turn, not per completion: some completion has turns with different advantages
        for i in range(len(rows)):
            vals = {round(float(used[i, s]), 6) for s, _ in turn_spans(loss["completion_mask"][i] *
                                                                          loss["tool_mask"][i])}
            multi_turn_distinct += len(vals) > 1
        # tool output is masked: every <tool_response> token is outside the loss mask
        mask = (loss["completion_mask"] * loss["tool_mask"]).numpy()
        for ids, m in zip(loss["completion_ids"].numpy(), mask, strict=True):
            assert "<tool_response>" not in tok.decode(ids[m.astype(bool)])
            n_resp = tok.decode(ids).count("<tool_response>")
            assert tok.decode(ids[~m.astype(bool)]).count("<tool_response>") == n_resp
    assert multi_turn_distinct > 0
    # TRL's completions log shows our advantages (mean over model tokens), not its per-completion GRPO ones
    last, m = trainer.last_credit.token_advantages.numpy(), trainer.batches[-1]["mask"].numpy()
    np.testing.assert_allclose(list(trainer._logs["advantages"])[-len(m):], (last * m).sum(1) / m.sum(1), atol=1e-6)
    # every rollout played at least one step or closed; the steps carry the env's state keys
    steps = trainer.last_credit.steps
    assert steps.n >= 8 and len(np.unique(steps.state_key)) > 1


def test_policy_without_tool_calls_is_one_closing_step(tmp_path, caplog):
    model, tok = policy(stop_bias=0.0, actions=())
    trainer = StepCreditGRPOTrainer(model, args=config(tmp_path, max_steps=1, max_completion_length=16),
                                    train_dataset=task_dataset(ENV_ID, 2), processing_class=tok,
                                    environment_factory=CreditEnvFactory(ENV_ID, env_kwargs=ENV_KW))
    with caplog.at_level(logging.WARNING, logger="agentgym_credit.integrations.trl.trainer"):
        trainer.train()
    assert "8 of 8 rollouts made no `act` tool call" in caplog.text
    credit = trainer.last_credit
    assert credit.steps.n == 8 and np.all(credit.steps.t == 0) and np.all(credit.steps.done)
    assert not credit.steps.valid.any()  # the env's invalid no-op
    assert all(rows == [[i]] for i, rows in enumerate(credit.turn_rows))
    # one group shares one initial state and one (invalid) reward: every advantage is 0, no GRPO leak
    assert np.all(credit.advantages == 0) and not credit.token_advantages.any()
    assert trainer.state.log_history[0]["credit/no_tool_call_frac"] == 1.0


def test_non_credit_env_id_is_refused():
    for bad in ("CartPole-v1", "credit/NoSuch-v0"):
        with pytest.raises(ValueError, match="is not a credit/\\* env"):
            CreditEnvFactory(bad)
    with pytest.raises(ValueError, match="is not a credit/\\* env"):
        task_dataset("FrozenLake-v1", 2)
    with pytest.raises(TypeError, match="CreditEnvFactory"):
        StepCreditGRPOTrainer("unused", environment_factory=lambda: None)


def test_trainer_refuses_bad_estimator_options():
    factory = CreditEnvFactory(ENV_ID)
    with pytest.raises(TypeError, match="has no option gama"):
        StepCreditGRPOTrainer("unused", environment_factory=factory, estimator_options={"gama": 0.9})
    with pytest.raises(KeyError, match="unknown estimator"):
        StepCreditGRPOTrainer("unused", environment_factory=factory, estimator="gigp")
    with pytest.raises(ValueError, match="needs a value estimate"):
        StepCreditGRPOTrainer("unused", environment_factory=factory, estimator="gae")


def test_env_reset_needs_seed_and_groups_must_share_initial_state():
    factory = CreditEnvFactory(ENV_ID, env_kwargs=ENV_KW)
    env = factory()
    with pytest.raises(ValueError, match="reset 'seed'"):
        env.reset(task=0, prompt=[])
    envs = [factory() for _ in range(4)]
    for e, task in zip(envs, (0, 0, 0, 1), strict=True):
        e.reset(seed=0, task=task, prompt=[])
        e.act("go north")
    assert envs[0].initial_state_key == envs[1].initial_state_key
    with pytest.raises(GroupMismatchError, match="rollouts 0..3"):
        _step_arrays(envs, 4)
    steps, offsets = _step_arrays(envs[:2], 2)
    assert steps.n == 2 and offsets.tolist() == [0, 1, 2]
    # another reset seed of the same task starts at the same position (same key) but is another group
    envs[3].reset(seed=1, task=0, prompt=[])
    assert envs[3].initial_state_key == envs[0].initial_state_key
    with pytest.raises(GroupMismatchError, match="task, seed, initial state_key"):
        _step_arrays(envs, 4)


def test_no_turn_is_generated_after_the_episode_ended(tmp_path):
    """Episodes truncated after 2 steps with up to 5 tool iterations: TRL's loop would sample a turn after each
    end (a call that plays nothing, trained with advantage 0); the trainer skips those generations."""
    model, tok = policy(stop_bias=-3.0)
    kw = {**ENV_KW, "max_steps": 2}
    trainer = Recording(model, args=config(tmp_path, max_steps=1), train_dataset=task_dataset(ENV_ID, 2),
                        processing_class=tok, environment_factory=CreditEnvFactory(ENV_ID, env_kwargs=kw))
    trainer.train()
    assert_nothing_after_the_end(trainer, exact=True)


def assert_nothing_after_the_end(trainer, exact: bool) -> None:
    """In the first batch: no act call and no model turn after an episode's end (``exact``: the ended rollout's
    turns are exactly its steps; else at most: a rollout TRL dropped as over-long has fewer); the metrics agree."""
    batch = trainer.batches[0]
    ended = 0
    for recs, calls, mask in zip(batch["records"], batch["calls"], batch["mask"].numpy(), strict=True):
        end = next((k for k, r in enumerate(recs) if (r.terminated or r.truncated) and not r.closing), None)
        if end is None:
            continue
        ended += 1
        assert None not in calls, calls  # nothing was played after the end...
        turns = len(turn_spans(mask))  # ...and no model turn was sampled after it
        assert turns == end + 1 if exact else turns <= end + 1
    assert ended >= 4
    log = trainer.state.log_history[0]
    assert log["credit/turns_after_end"] == 0.0 and log["credit/generations_skipped_after_end"] > 0


class DropsFirstRolloutEachToolStep(Recording):
    """Forces TRL's over-long drop: the first tool result of every tool iteration is padded past
    ``max_completion_length``, so TRL rolls it back and generates for one rollout fewer than it noted results."""

    dropped = 0

    def _get_tool_suffix_ids(self, tool_messages):
        first = not self._ended_pending
        ids = super()._get_tool_suffix_ids(tool_messages)
        if first:
            self.dropped += 1
            return list(ids) + [self.processing_class.pad_token_id] * (self.max_completion_length + 1)
        return ids


def test_no_turn_after_the_end_when_trl_drops_an_overlong_rollout(tmp_path):
    """TRL's tool loop drops a rollout whose tool result would overflow the completion budget; the other rollouts'
    episodes that ended at that step must still get no further turn, and the metric counts what was generated."""
    model, tok = policy(stop_bias=-3.0)
    kw = {**ENV_KW, "max_steps": 2}
    trainer = DropsFirstRolloutEachToolStep(model, args=config(tmp_path, max_steps=1),
                                            train_dataset=task_dataset(ENV_ID, 2), processing_class=tok,
                                            environment_factory=CreditEnvFactory(ENV_ID, env_kwargs=kw))
    trainer.train()
    assert trainer.dropped >= 2  # the drop happened at each tool iteration
    assert_nothing_after_the_end(trainer, exact=False)


def test_turns_after_end_counts_generated_turns():
    from agentgym_credit.integrations.trl.env import EPISODE_OVER
    from agentgym_credit.integrations.trl.trainer import turns_after_end

    over = {"role": "tool", "content": f"You win. {EPISODE_OVER}"}
    assert turns_after_end([{"role": "assistant"}, {"role": "tool", "content": "ok"}, {"role": "assistant"}]) == 0
    assert turns_after_end([{"role": "assistant"}, over]) == 0
    assert turns_after_end([{"role": "assistant"}, over, {"role": "assistant"}, {"role": "tool", "content": "x"},
                            {"role": "assistant"}]) == 2


def test_act_after_the_episode_ended_plays_nothing():
    env = CreditEnvFactory(ENV_ID, env_kwargs={**ENV_KW, "max_steps": 1})()
    env.reset(seed=1, task=0)
    assert "episode is over" in env.act("go north")
    assert env.act("go south") == "This action was not played. The episode is over."
    assert env.calls == [0, None] and len(env.records) == 1 and env.records[0].done
    env._close()  # no-op once finished
    assert len(env.records) == 1


@pytest.mark.slow
def test_alfworld_group_records_the_engines_state_keys(tmp_path, monkeypatch):
    """Any credit/* env: two rollouts of one ALFWorld dev game (same task and seed) through the tool; the
    recorded keys are the engine's own (replayed on a plain gym env), and the group's credit computes."""
    import gymnasium as gym

    from agentgym_credit.keys import stable_hash

    pytest.importorskip("textworld")
    pytest.importorskip("fast_downward")
    dev = Path(__file__).resolve().parents[2] / "shared" / "data" / "alfworld" / "dev"
    if not dev.is_dir():
        pytest.skip(f"real ALFWorld dev games not found at {dev}")
    monkeypatch.setenv("AGENTGYM_CREDIT_SAS_CACHE", str(tmp_path / "sas"))
    factory = CreditEnvFactory("credit/ALFWorld-v0", env_kwargs={"source": "dev"})
    envs = [factory(), factory()]
    for k, env in enumerate(envs):
        first = env.reset(seed=0, task=0, prompt=[])
        assert "Admissible actions:" in first
        for j in range(3):
            acts = first.rsplit("Admissible actions: ", 1)[-1].split("; ")
            first = env.act(acts[(j + k) % len(acts)])
        env._close()
    assert envs[0].initial_state_key == envs[1].initial_state_key
    plain = gym.make("credit/ALFWorld-v0", source="dev")
    _, info = plain.reset(seed=0, options={"task": 0})
    for r in envs[1].records[:-1]:
        assert r.state_key == stable_hash(info["state_key"]) and r.obs_key == stable_hash(info["obs_key"])
        _, _, _, _, info = plain.step(r.action)
    assert envs[1].records[-1].closing and not envs[1].records[-1].action_valid
    steps, _ = _step_arrays(envs, 2)
    assert steps.n == 8 and np.isfinite(advantages("gigpo", steps)).all()


@pytest.mark.slow
def test_two_processes_compute_credit_on_the_whole_group(tmp_path):
    """``accelerate launch`` with 2 CPU processes and no config file (``HF_HOME`` is an empty folder): one
    prompt's 8 generations are split 4 + 4 over the processes; each process's (B, T) advantages equal those
    computed from BOTH processes' step records as one group (not from its own 4 rollouts alone).

    ``--multi_gpu``, not ``--cpu``: accelerate's ``--cpu`` launcher starts one process without MPI
    (``trl_two_process_run.py`` says why); each process runs on the CPU with gloo (checked below)."""
    import socket
    import subprocess
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    script = Path(__file__).with_name("trl_two_process_run.py")
    (tmp_path / "hf_home").mkdir()
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HOME": str(tmp_path / "hf_home")}  # no accelerate config
    out = tmp_path / "out"
    out.mkdir()
    run = subprocess.run([sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
                          "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
                          "--main_process_port", str(port), str(script), str(out)],
                         capture_output=True, text=True, timeout=600, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    ranks = [torch.load(out / f"rank{r}.pt", weights_only=False) for r in (0, 1)]
    assert all(d["num_processes"] == 2 and len(d["records"]) == 4 for d in ranks)
    # each rank destroys its process group before exiting (gloo can abort at interpreter exit otherwise)
    assert [d.get("process_group_alive_at_exit") for d in ranks] == [False, False]
    assert all(d["backend"] == "gloo" and d["device"].startswith("cpu") and d["distributed_type"] == "DistributedType.MULTI_CPU"
               for d in ranks), [(d["backend"], d["device"], d["distributed_type"]) for d in ranks]
    width = max(d["mask"].shape[1] for d in ranks)
    pad = [torch.nn.functional.pad(d["mask"], (0, width - d["mask"].shape[1])) for d in ranks]
    both = {"records": ranks[0]["records"] + ranks[1]["records"], "calls": ranks[0]["calls"] + ranks[1]["calls"],
            "mask": torch.cat(pad)}
    expected = expected_token_advantages(both, 8, "gigpo")
    assert np.abs(expected).sum() > 0, "the test needs returns that differ within the group"
    for r, d in enumerate(ranks):
        w = d["mask"].shape[1]
        np.testing.assert_allclose(d["advantages"].numpy(), expected[4 * r:4 * r + 4, :w], rtol=0, atol=1e-6)
    alone = expected_token_advantages({k: v[:4] for k, v in both.items()}, 4, "gigpo")
    assert not np.allclose(alone[:, :ranks[0]["mask"].shape[1]], ranks[0]["advantages"].numpy(), atol=1e-6)


# -- bounded tool results, and the sampled context is the trained context ---------------------------------
def test_compact_observations_carry_only_what_is_new():
    from agentgym_credit.integrations.trl import EPISODE_OVER
    from agentgym_credit.integrations.trl.env import CreditToolEnv

    kw = {"size": 4, "n_tasks": 4, "max_steps": 6}
    full, compact = CreditToolEnv(ENV_ID, kw), CreditToolEnv(ENV_ID, kw, observation="compact")
    assert full.reset(seed=3, task=1) == compact.reset(seed=3, task=1)  # the first observation is whole
    seen_same = seen_diff = 0
    for a in ["jump", "go north", "go east", "go south", "jump", "go west"]:
        f, c = full.act(a), compact.act(a)
        if f.endswith(EPISODE_OVER):
            assert c == f
            break
        obs, listed = f.split("\nAdmissible actions: ")
        assert c.startswith(obs + "\nAdmissible actions: ") and len(c) <= len(f) + len(" as before, .")
        acts = listed.split("; ")
        if c.endswith("as before."):
            seen_same += 1
        elif "now also" in c or "no longer" in c:
            seen_diff += 1
            for part in c.split("as before, ", 1)[1].rstrip(".").split(", no longer "):
                names = part.removeprefix("now also ").split("; ")
                assert all((n in acts) == part.startswith("now also") for n in names), (c, acts)
        else:
            assert c == f
    assert seen_same > 0, "the invalid 'jump' leaves the actions as they were"
    # a cap: every result fits, the cut is marked, an episode's end line is kept whole
    capped = CreditToolEnv(ENV_ID, kw, max_result_chars=24)
    capped.reset(seed=3, task=1)
    outs = []
    for a in ["go north", "go east", "go south", "go west"] * 3:
        outs.append(capped.act(a))
        if outs[-1].endswith(EPISODE_OVER):
            break
    assert any(o.endswith(" [...]") for o in outs)
    for o in outs:
        body = o.split("\nResult: ")[0]
        assert len(body) <= 24 and (body.endswith(" [...]") or len(body) < 24)
    assert outs[-1].endswith(EPISODE_OVER)
    with pytest.raises(ValueError, match="observation must be"):
        CreditEnvFactory(ENV_ID, observation="short")
    with pytest.raises(ValueError, match="max_result_chars"):
        CreditEnvFactory(ENV_ID, max_result_chars=3)
    env = CreditEnvFactory(ENV_ID, env_kwargs=kw, observation="compact", max_result_chars=50)()
    assert (env.observation, env.max_result_chars) == ("compact", 50)


class ContextRecording(StepCreditGRPOTrainer):
    """Records the token ids every generation call sampled from (and what it sampled), and the ids every
    log-prob forward ran on, with the loss mask of its completion part."""

    window: int | None = None  # the negative control: keep only the last `window` tokens when sampling

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.generated, self.scored, self._loss_inputs = [], [], None

    def _generate_single_turn(self, prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False):
        if self.window is not None:  # a history window at sampling time (what TRL would not train on)
            prompt_ids = [ids if len(ids) <= 2 * self.window else ids[:self.window] + ids[-self.window:]
                          for ids in prompt_ids]
        ids, lps = super()._generate_single_turn(prompt_ids, images, multimodal_fields, num_generations,
                                                 has_tool_images)
        reps = num_generations if len(ids) != len(prompt_ids) else 1
        self.generated += [(list(prompt_ids[i // reps]), list(g)) for i, g in enumerate(ids)]
        return ids, lps

    def _compute_loss(self, model, inputs):
        self._loss_inputs = inputs
        try:
            return super()._compute_loss(model, inputs)
        finally:
            self._loss_inputs = None

    def _get_per_token_logps_and_entropies(self, model, input_ids, attention_mask, logits_to_keep, *a, **kw):
        if self._loss_inputs is not None:
            mask = self._loss_inputs["completion_mask"] * self._loss_inputs["tool_mask"]
            self.scored.append((input_ids.detach().clone(), attention_mask.detach().clone(), int(logits_to_keep),
                                mask.detach().clone()))
        return super()._get_per_token_logps_and_entropies(model, input_ids, attention_mask, logits_to_keep, *a, **kw)


def context_mismatches(trainer) -> tuple[int, int]:
    """(turns checked, turns whose trained context is not a context the turn was sampled from)."""
    sampled = {}
    for ctx, gen in trainer.generated:
        sampled.setdefault(tuple(ctx), []).append(gen)
    checked = bad = 0
    for input_ids, attn, keep, mask in trainer.scored:
        width = input_ids.shape[1]
        for row, a, m in zip(input_ids.tolist(), attn.tolist(), mask.tolist(), strict=True):
            first = width - keep
            for s, e in turn_spans(np.array(m)):
                # the real tokens before this turn (left padding of the prompt dropped by the attention mask)
                ctx = tuple(t for t, on in zip(row[:first + s], a[:first + s], strict=True) if on)
                tokens = row[first + s:first + e]
                checked += 1
                bad += not any(g[:len(tokens)] == tokens for g in sampled.get(ctx, []))
    return checked, bad


def test_tokens_trained_on_are_the_tokens_sampled_from_with_compact_capped_results(tmp_path):
    """Instrumented: every model turn TRL computes log-probs for (loss mask on) was generated from exactly the
    tokens before it in the trained sequence, with compact, capped tool results. The same check catches a
    window applied at sampling time (the negative control), which is why no last-H window is offered."""
    factory = CreditEnvFactory(ENV_ID, env_kwargs=ENV_KW, observation="compact", max_result_chars=110)
    model, tok = policy(stop_bias=-3.0)
    trainer = ContextRecording(model, args=config(tmp_path, max_steps=1), train_dataset=task_dataset(ENV_ID, 2),
                               processing_class=tok, environment_factory=factory)
    trainer.train()
    checked, bad = context_mismatches(trainer)
    assert checked >= 16 and bad == 0, (checked, bad)  # several turns per rollout, all sampled as trained
    multi = sum(len(turn_spans(np.array(m))) > 1 for *_, mask in trainer.scored for m in mask.tolist())
    assert multi > 0, "the check needs rollouts with several turns"
    text = " ".join(tok.decode(ids[a.bool()]) for ids, a, *_ in trainer.scored for ids, a in zip(ids, a))
    assert "Admissible actions: as before" in text and " [...]" in text  # compact and capped results were trained
    # negative control: a window at sampling time makes the trained contexts differ from the sampled ones
    model, tok = policy(stop_bias=-3.0)
    windowed = type("Windowed", (ContextRecording,), {"window": 24})(
        model, args=config(tmp_path / "w", max_steps=1), train_dataset=task_dataset(ENV_ID, 2),
        processing_class=tok, environment_factory=factory)
    windowed.train()
    checked, bad = context_mismatches(windowed)
    assert bad > 0, (checked, bad)
