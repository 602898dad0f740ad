# ruff: noqa: F811
"""The companion trainer at the settings a GPU user picks (issue 12), checked on CPU with tiny models
built from configs (bf16 runs on CPU in torch 2.13). One test per measured defect; each failed on the
code before the fix:

1. bf16 full fine-tuning keeps fp32 master weights: after 3 steps at lr 1e-6 the share of weights that
   moved equals fp32's (it was 2%);
2. a prompt over ``max_prompt_tokens`` drops its oldest history turns, never the system text, task or
   current observation; counted; too long without history is a clear error;
3. the compiled decode step compiles once per (batch, prompt-length) bucket, not once per call;
4. top-k then top-p keep exactly the tokens Hugging Face's warpers keep;
5. the KL reference is the model RL starts from (after the format warm-up), also after a resume;
6. every EOS id of the generation config stops a response; a chat template without a system role
   gets the system text in the first user turn;
7. old log-probs recomputed with the update's forward under bf16 (PPO ratio exactly 1 before the
   first step) and the sampler/update gap logged;
8. logs (entropy, clip fraction, KL, grad norm, lr, tokens/s per phase), LR warm-up and schedule, a
   NaN loss skips the step with a warning, no repeated iterations in log.jsonl after a resume,
   export to a folder ``AutoModelForCausalLM.from_pretrained`` loads, checkpoints read with
   ``weights_only=True``.
"""

from __future__ import annotations

import copy
import json
import os
import random

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

# fixtures shared with the other trainer tests (pytest finds them by name; ruff sees redefinitions)
from trainer_fixtures import _one_thread, model, small_config, tok  # noqa: E402,F401

from agentgym_credit.trainer.loop import Trainer  # noqa: E402
from agentgym_credit.trainer.policy import TEMPLATES, LLMPolicy, PromptTooLong  # noqa: E402
from agentgym_credit.trainer.sampling import BatchedSampler, filter_logits  # noqa: E402
from agentgym_credit.trainer.update import UpdateBatch, lr_at, ppo_update, recompute_logprobs  # noqa: E402


def random_update_batch(tok, n=6, seed=0) -> UpdateBatch:
    rng = np.random.default_rng(seed)
    v = len(tok)
    prompts = [rng.integers(3, v, size=int(rng.integers(4, 9))).tolist() for _ in range(n)]
    resps = [rng.integers(3, v, size=int(rng.integers(1, 4))).tolist() for _ in range(n)]
    return UpdateBatch(prompts, resps, [np.zeros(len(r)) for r in resps],
                       [np.full(len(r), float(rng.choice([-1.0, 1.0]))) for r in resps])


# 1 ------------------------------------------------------------------------------------------------
def test_bf16_model_trains_with_fp32_master_weights_like_fp32(tmp_path, tok, model):
    shares = {}
    for name, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        m = copy.deepcopy(model).to(dtype)
        tr = Trainer(small_config(tmp_path / name, lr=1e-6, recompute_old_logprobs="no"), model=m, tokenizer=tok)
        if name == "bf16":
            assert tr.autocast_dtype == torch.bfloat16  # compute in bf16 ...
            assert all(p.dtype == torch.float32 for p in tr.model.parameters())  # ... master weights in fp32
        before = [p.detach().float().clone() for p in tr.model.parameters()]
        ub = random_update_batch(tok)
        ub.old_logprobs = recompute_logprobs(tr.model, ub, tr.sampler.pad_id, autocast_dtype=tr.autocast_dtype)
        for _ in range(3):
            tr.update(copy.deepcopy(ub))
        moved = sum(int((p.detach().float() != b).sum()) for p, b in zip(tr.model.parameters(), before))
        shares[name] = moved / sum(b.numel() for b in before)
        tr.close()
    assert shares["fp32"] > 0.5
    assert shares["bf16"] == pytest.approx(shares["fp32"], abs=0.05)  # was 0.02 vs 1.0 with bf16 weights


# 2 ------------------------------------------------------------------------------------------------
def test_long_prompt_drops_oldest_history_never_system_task_or_observation(tok, model):
    infos = [{"goal": "Reach the goal.", "admissible_actions": ["go east", "go west"],
              "rollout": {"traj_id": 0, "t": t}} for t in range(5)]

    def policy(max_tokens):
        return LLMPolicy(BatchedSampler(model, tok, max_new_tokens=2), TEMPLATES["grid"], history_len=4,
                         max_prompt_tokens=max_tokens)

    full = policy(10_000)
    for t in range(4):
        full([f"You are at row {t}, column {t}. A long description of the room number {t}."], [infos[t]])
    two_turns = len(full.encode(full.prompt_text("now here", infos[4], 0, full.window(0)[2:])))
    pol = policy(two_turns)
    pol._history, pol._task = copy.deepcopy(full._history), copy.deepcopy(full._task)
    text = tok.decode(pol.prompt_ids("now here", infos[4], 0))
    assert text.startswith(TEMPLATES["grid"].system_text())  # the left cut removed this
    assert "Task: Reach the goal." in text and "Observation: now here" in text
    assert "room number 3" in text and "room number 2" in text
    assert "room number 1" not in text and "room number 0" not in text
    assert pol.stats["truncated_prompts"] == 1 and pol.stats["dropped_turns"] == 2
    long_obs = "You see " + ", ".join(f"a drawer {i}" for i in range(40)) + ". The end."
    minimal = len(full.encode(full.prompt_text(long_obs, infos[4], 0, [])))
    short = policy(minimal - 8)  # no history left to drop: the observation itself is shortened
    text = tok.decode(short.prompt_ids(long_obs, infos[4], 0))
    assert len(short.prompt_ids(long_obs, infos[4], 0)) <= minimal - 8
    assert "Observation: You see a drawer 0" in text and "[...]" in text and "The end." in text
    assert "Task: Reach the goal." in text and short.stats["truncated_observations"] == 2
    bare = len(full.encode(full.prompt_text("[...]", infos[4], 0, [])))
    with pytest.raises(PromptTooLong, match="without any history"):
        policy(bare - 1).prompt_ids(long_obs, infos[4], 0)


def test_a_prompt_that_cannot_fit_fails_only_its_trajectory(tok, model):
    """One over-long observation used to end a whole training run with ValueError."""
    pol = LLMPolicy(BatchedSampler(model, tok, max_new_tokens=2), TEMPLATES["grid"], history_len=0,
                    max_prompt_tokens=10_000)
    goal = {"goal": "Reach the goal.", "admissible_actions": ["go east", "go west"]}
    huge = {**goal, "goal": "Reach the goal. " * 100}  # the task text is never cut
    pol._task[1] = huge["goal"]
    bare = len(pol.encode(pol.prompt_text("[...]", huge, 1, [])))
    pol.max_prompt_tokens = bare - 1
    infos = [{**goal, "rollout": {"traj_id": 0, "t": 0}},
             {**huge, "rollout": {"traj_id": 1, "t": 0}},
             {**goal, "rollout": {"traj_id": 2, "t": 0}}]
    out = pol(["here", "a long room with many things in it " * 5, "there"], infos)
    assert "action" in out[0] and "action" in out[2] and set(out[1]) == {"error"}
    assert "max_prompt_tokens" in out[1]["error"] and pol.stats["failed_prompts"] == 1
    assert pol.stats["rows"] == 2


# 3 ------------------------------------------------------------------------------------------------
def test_compiled_decode_compiles_once_per_shape_bucket(tok, model):
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    kw = dict(max_new_tokens=3, temperature=1.0, cache="static", stop_token_ids=[])
    compiled = BatchedSampler(model, tok, compile_decode=True, compile_backend="eager", compile_mode=None, **kw)
    plain = BatchedSampler(model, tok, **kw)
    rng = random.Random(0)
    calls = 14
    for call in range(calls):  # batch sizes and prompt lengths change on every call, as in training
        b, length = rng.randint(1, 12), rng.randint(3, 90)
        prompts = [[rng.randint(3, len(tok) - 1) for _ in range(length - rng.randint(0, 2))] for _ in range(b)]
        a = compiled.sample(prompts, generator=torch.Generator().manual_seed(call))
        ref = plain.sample(prompts, generator=torch.Generator().manual_seed(call))
        assert a.response_ids == ref.response_ids
    graphs = counters["stats"]["unique_graphs"]
    buckets = compiled.counters["buckets"]
    assert buckets <= 4 * 2  # batch buckets {1, 2, 4, 8, 16} x length buckets {64, 128}, seen ones only
    assert graphs == buckets < calls  # one compile per bucket, none per call and no fallback to eager
    assert compiled.counters["static_allocations"] == buckets  # a bucket's cache is reused


# 4 ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("temperature,top_k,top_p", [(1.0, 20, 0.5), (0.7, 0, 0.9), (1.3, 5, 0.3), (1.0, 50, 0.95),
                                                     (0.5, 3, 1.0), (1.0, 0, 1.0)])
def test_top_k_top_p_match_huggingface_warpers(temperature, top_k, top_p):
    from transformers import LogitsProcessorList, TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

    g = torch.Generator().manual_seed(0)
    logits = torch.randn(16, 300, generator=g) * 3
    chain = LogitsProcessorList()  # generate's order and on/off rules
    if temperature != 1.0:
        chain.append(TemperatureLogitsWarper(temperature))
    if top_k:
        chain.append(TopKLogitsWarper(top_k))
    if top_p < 1.0:
        chain.append(TopPLogitsWarper(top_p))
    ref = chain(torch.zeros(16, 1, dtype=torch.long), logits.clone())
    ours = filter_logits(logits, temperature, top_k, top_p)
    assert torch.equal(torch.isfinite(ours), torch.isfinite(ref))
    assert torch.allclose(ours[torch.isfinite(ours)], ref[torch.isfinite(ref)])


def test_sampler_draws_only_from_the_hf_kept_set(tok, model):
    # top_k=20, top_p=0.5: HF keeps the few tokens holding half of the top-20 mass, the old sampler 20
    s = BatchedSampler(model, tok, max_new_tokens=1, temperature=1.0, top_k=20, top_p=0.5)
    logits = torch.randn(1, len(tok), generator=torch.Generator().manual_seed(1)) * 2
    kept = set(torch.isfinite(filter_logits(logits, 1.0, 20, 0.5))[0].nonzero()[:, 0].tolist())
    g = torch.Generator().manual_seed(0)
    drawn = {int(s._pick(logits, g)[0]) for _ in range(400)}
    assert 1 < len(kept) < 20 and drawn == kept


# 5 ------------------------------------------------------------------------------------------------
def test_kl_reference_is_the_model_after_the_warmup(tmp_path, tok, model):
    cfg = small_config(tmp_path, kl_coef=0.1, format_warmup_steps=3, ppo_epochs=1, minibatches=1, iterations=1)
    tr = Trainer(cfg, model=copy.deepcopy(model), tokenizer=tok)
    rec = tr.train()[0]
    assert tr.warmup_losses  # the warm-up moved the model ...
    assert rec["kl_ref"] == pytest.approx(0.0, abs=1e-7)  # ... and KL is measured from where RL started
    path = tr.checkpoint_dir()
    assert (path / "reference.pt").exists()
    b = Trainer(small_config(tmp_path, kl_coef=0.1, resume=True), model=copy.deepcopy(model), tokenizer=tok)
    for p, q in zip(b.reference().parameters(), tr.ref_model.parameters()):
        assert torch.equal(p, q)
    tr.close()
    b.close()


# 6 ------------------------------------------------------------------------------------------------
def test_every_generation_config_eos_id_stops(tmp_path, tok, model):
    prompt = [tok("go north")["input_ids"]]
    m = copy.deepcopy(model)
    first = BatchedSampler(m, tok, max_new_tokens=4, temperature=0.0, stop_token_ids=[]).sample(prompt)
    other = first.response_ids[0][0]
    assert other != tok.eos_token_id
    m.generation_config.eos_token_id = [tok.eos_token_id, other]  # two EOS ids, as Qwen2.5-Instruct
    tr = Trainer(small_config(tmp_path, temperature=0.0), model=m, tokenizer=tok)
    assert set(tr.sampler.stop_token_ids) == {tok.eos_token_id, other}
    out = tr.sampler.sample(prompt)
    assert out.response_ids[0] == [other] and out.finished[0]
    tr.close()


@pytest.mark.parametrize("system_handling", ["raises", "drops"])
def test_chat_template_without_system_role_folds_it_into_the_user_turn(tok, model, system_handling):
    chat_tok = copy.deepcopy(tok)
    on_system = ("{{ raise_exception('System role not supported') }}" if system_handling == "raises" else "")
    chat_tok.chat_template = (
        "{% for m in messages %}{% if m['role'] == 'system' %}" + on_system + "{% else %}"
        "<{{ m['role'] }}>{{ m['content'] }}\n{% endif %}{% endfor %}"
        "{% if add_generation_prompt %}<assistant>{% endif %}")
    pol = LLMPolicy(BatchedSampler(model, chat_tok, max_new_tokens=2), TEMPLATES["grid"])
    assert pol.use_chat and pol.fold_system
    text = pol.prompt_text("obs", {"goal": "Reach it.", "rollout": {"traj_id": 0, "t": 0}}, 0)
    assert text.startswith("<user>" + TEMPLATES["grid"].system_text()) and "Task: Reach it." in text


# 7 ------------------------------------------------------------------------------------------------
def test_bf16_recomputes_old_logprobs_and_logs_the_gap(tmp_path, tok, model):
    cfg = small_config(tmp_path, ppo_epochs=1, minibatches=1, temperature=0.9)
    tr = Trainer(cfg, model=copy.deepcopy(model).to(torch.bfloat16), tokenizer=tok)
    assert tr.recompute_old  # default on under bf16
    batch = tr.collect()
    ub = tr.update_batch(batch, *tr.advantages(batch))
    sampled = [x.copy() for x in ub.old_logprobs]
    stats = tr.update(ub)
    assert stats["ratio"] == pytest.approx(1.0, abs=1e-6)  # same forward: PPO starts exactly on-policy
    assert stats["logprob_gap"] > 0  # the bf16 sampler's log-probs differ from the update's ...
    assert stats["logprob_gap"] == pytest.approx(
        float(np.mean(np.abs(np.concatenate(sampled) - np.concatenate(ub.old_logprobs)))))  # ... by this much
    rec = tr.step()
    assert np.isfinite(rec["logprob_gap"])
    tr.close()


# 8 ------------------------------------------------------------------------------------------------
def test_lr_warmup_and_schedule_reach_the_optimizer(tmp_path, tok, model):
    assert [lr_at(i, 1.0, warmup=2, total=5, schedule="cosine") for i in (0, 1, 4)] == [0.5, 1.0, pytest.approx(0.0)]
    tr = Trainer(small_config(tmp_path, iterations=4, lr=1e-3, lr_warmup_iters=2, lr_schedule="linear",
                              min_lr_ratio=0.1, group_size=2), model=copy.deepcopy(model), tokenizer=tok)
    log = tr.train()
    assert [r["lr"] for r in log] == pytest.approx([5e-4, 1e-3, 1e-3, 1e-4])
    assert tr.optimizer.param_groups[0]["lr"] == pytest.approx(1e-4)
    for key in ("entropy", "clip_frac", "approx_kl", "grad_norm", "logprob_gap", "tokens_per_s",
                "update_tokens_per_s", "truncated_prompts", "skipped_steps"):
        assert key in log[-1] and np.isfinite(log[-1][key]), key
    assert log[-1]["entropy"] > 0 and log[-1]["update_tokens_per_s"] > 0
    tr.close()


def test_non_finite_loss_skips_the_step_with_a_warning(tok, model):
    m = copy.deepcopy(model)
    ub = random_update_batch(tok, n=4)
    ub.old_logprobs = recompute_logprobs(m, ub, pad_id=0)
    ub.old_logprobs[0][:] = -np.inf  # ratio inf: an inf loss for a negative advantage, NaN gradients
    ub.advantages[0][:] = -1.0
    before = [p.detach().clone() for p in m.parameters()]
    with pytest.warns(RuntimeWarning, match="optimizer step is skipped"):
        stats = ppo_update(m, torch.optim.AdamW(m.parameters(), lr=1e-2), ub, pad_id=0)
    assert stats["skipped_steps"] == 1 and stats["steps"] == 0
    assert all(torch.equal(p, b) for p, b in zip(m.parameters(), before))  # no NaN written into the weights


def test_resume_does_not_repeat_iterations_in_the_log(tmp_path, tok, model):
    import shutil

    a = Trainer(small_config(tmp_path, iterations=3, save_every=2), model=copy.deepcopy(model), tokenizer=tok)
    a.train()
    a.close()
    shutil.rmtree(a.checkpoint_dir(3))  # the run died after iteration 3, before its checkpoint
    b = Trainer(small_config(tmp_path, iterations=4, save_every=2, resume=True), model=copy.deepcopy(model),
                tokenizer=tok)
    assert b.iteration == 2
    b.train()
    b.close()
    its = [json.loads(line)["iteration"] for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert its == [1, 2, 3, 4]  # was [1, 2, 3, 3, 4]
    assert len((tmp_path / "log.csv").read_text().splitlines()) == 5


def test_export_loads_with_from_pretrained_and_checkpoints_load_as_data(tmp_path, tok, model):
    import pickle

    from transformers import AutoModelForCausalLM

    tr = Trainer(small_config(tmp_path, iterations=1), model=copy.deepcopy(model), tokenizer=tok)
    tr.train()
    out = tr.export(tmp_path / "hf")
    loaded = AutoModelForCausalLM.from_pretrained(str(out)).eval()
    ids = torch.tensor([tok("go north")["input_ids"]])
    with torch.no_grad():
        assert torch.allclose(loaded(input_ids=ids).logits, tr.model(input_ids=ids).logits, atol=1e-5)
    # checkpoints are read with weights_only=True: a planted pickle that would run code is refused
    ck = tr.checkpoint_dir()

    class Planted:
        def __reduce__(self):
            return (os.system, ("touch " + str(tmp_path / "pwned"),))

    with open(ck / "trainable.pt", "wb") as f:
        pickle.dump(Planted(), f)
    with pytest.raises(pickle.UnpicklingError):
        tr.load_checkpoint(ck)
    assert not (tmp_path / "pwned").exists()
    tr.close()


def test_lora_export_merges_adapters(tmp_path, tok, model):
    pytest.importorskip("peft")
    from transformers import AutoModelForCausalLM

    tr = Trainer(small_config(tmp_path, lora=True, lora_r=4, lr=1e-2, iterations=1), model=copy.deepcopy(model),
                 tokenizer=tok)
    tr.train()
    loaded = AutoModelForCausalLM.from_pretrained(str(tr.export(tmp_path / "merged"))).eval()
    ids = torch.tensor([tok("go north")["input_ids"]])
    with torch.no_grad():
        assert torch.allclose(loaded(input_ids=ids).logits, tr.model(input_ids=ids).logits, atol=1e-4)
    tr.export(tmp_path / "adapter", merge=False)
    assert (tmp_path / "adapter" / "adapter_config.json").exists()
    # the base was built from a config (no path): it used to be recorded as null and could not be loaded
    adapter = AutoModelForCausalLM.from_pretrained(str(tmp_path / "adapter")).eval()
    with torch.no_grad():
        assert torch.allclose(adapter(input_ids=ids).logits, tr.model(input_ids=ids).logits, atol=1e-4)
    tr.close()


def test_export_keeps_the_dtype_the_model_came_in(tmp_path, tok, model):
    """A bf16 model trained with fp32 master weights was exported in fp32."""
    tr = Trainer(small_config(tmp_path, iterations=1, master_weights="fp32", mixed_precision="bf16"),
                 model=copy.deepcopy(model).to(torch.bfloat16), tokenizer=tok)
    assert all(p.dtype == torch.float32 for p in tr.model.parameters())  # trained in fp32
    def saved_dtype(folder):
        cfg = json.loads((folder / "config.json").read_text())
        return cfg.get("torch_dtype") or cfg.get("dtype")

    assert saved_dtype(tr.export(tmp_path / "auto")) == "bfloat16"
    assert saved_dtype(tr.export(tmp_path / "fp32", dtype="float32")) == "float32"
    with pytest.raises(ValueError, match="export dtype"):
        tr.export(tmp_path / "bad", dtype="fp8")
    tr.close()


def test_static_cache_under_bf16_autocast_with_fp32_weights_matches_dynamic(tok, model):
    # fp32 master weights + bf16 autocast: prefill and decode hand the cache different dtypes
    prompts = [tok("go north")["input_ids"], tok("Exits: east.")["input_ids"]] * 2
    outs = []
    for cache in ("dynamic", "static"):
        s = BatchedSampler(model, tok, max_new_tokens=4, temperature=1.0, cache=cache, stop_token_ids=[])
        with torch.autocast("cpu", dtype=torch.bfloat16):
            outs.append(s.sample(prompts, generator=torch.Generator().manual_seed(5)))
    assert outs[0].response_ids == outs[1].response_ids


def test_missing_matplotlib_skips_the_plot_and_keeps_every_other_output(tmp_path, tok, model, monkeypatch, capsys):
    import sys

    from agentgym_credit.plotting import try_plot_panels

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    tr = Trainer(small_config(tmp_path, iterations=1, plot=True), model=copy.deepcopy(model), tokenizer=tok)
    tr.train()
    tr.close()
    assert "plot skipped (curves.png)" in capsys.readouterr().err
    assert not (tmp_path / "curves.png").exists()
    assert (tmp_path / "log.jsonl").exists() and (tmp_path / "log.csv").exists()
    assert (tr.checkpoint_dir() / "state.json").exists()
    assert try_plot_panels(tmp_path / "x.png", {"a": {"b": ([0], [1], None)}}, xlabel="x", ylabel="y") is None
