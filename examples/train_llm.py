"""Train a causal LM with GiGPO on a credit/* env — one file, top to bottom, no Trainer class.

The same loop :class:`agentgym_credit.trainer.Trainer` runs, spelled out so that each piece can be
swapped for your own (another sampler, TRL's or verl's update, another estimator):

    rollouts (GroupedRolloutCollector + LLMPolicy)  ->  advantages (agentgym_credit.credit)
    ->  per-token advantages (broadcast_to_tokens)  ->  PPO-clip update (ppo_update)

Offline by default: a 2-layer Qwen2-shaped model and a tokenizer trained on the env's own text.
Such a model starts out writing noise, so every action is invalid and every advantage 0: give it
the format warm-up first (``Trainer.format_warmup``, see ``benchmarks/llm_training.md``) or start
from an instruct model, which already writes admissible actions.
With a real model:  python examples/train_llm.py --model ~/models/Qwen2.5-0.5B-Instruct --device cuda
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
from dataclasses import dataclass

import numpy as np
import torch

import agentgym_credit  # noqa: F401  (registers credit/)
from agentgym_credit.credit import advantages, broadcast_to_tokens
from agentgym_credit.trainer import TrainerConfig, make_env
from agentgym_credit.trainer.loop import load_model_and_tokenizer
from agentgym_credit.trainer.policy import LLMPolicy, template_for
from agentgym_credit.trainer.sampling import BatchedSampler
from agentgym_credit.trainer.update import UpdateBatch, ppo_update
from agentgym_credit.wrappers import GroupedRolloutCollector


@dataclass
class Args:
    env: str = "credit/GridWorld-v0"
    model: str = "tiny"
    device: str = "cpu"
    estimator: str = "gigpo"
    iterations: int = 5
    group_size: int = 8
    groups: int = 4
    max_steps: int = 8
    max_new_tokens: int = 8
    lr: float = 1e-3
    invalid_penalty: float = -0.1
    seed: int = 0


def parse() -> Args:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name, default in vars(Args()).items():
        p.add_argument(f"--{name.replace('_', '-')}", type=type(default), default=default)
    return Args(**vars(p.parse_args()))


def main() -> None:
    args = parse()
    torch.manual_seed(args.seed)
    # 1. model, tokenizer, sampler and the batched policy
    cfg = TrainerConfig(env_id=args.env, model=args.model, device=args.device, max_steps=args.max_steps,
                        env_kwargs={"size": 4} if "GridWorld" in args.env else {})
    model, tok = load_model_and_tokenizer(cfg)
    model.to(args.device).eval()
    sampler = BatchedSampler(model, tok, max_new_tokens=args.max_new_tokens, temperature=1.0)
    policy = LLMPolicy(sampler, template_for(args.env), history_len=2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    # 2. the collector: group_size rollouts per task from one initial state, free text -> admissible action
    collector = GroupedRolloutCollector(functools.partial(make_env, args.env, cfg.env_kwargs), args.group_size,
                                       max_steps=args.max_steps, progress=False, seed=args.seed)
    for it in range(args.iterations):
        policy.reset()
        policy.generator = torch.Generator(device=args.device).manual_seed(args.seed * 1000 + it)
        batch = collector.collect(policy, tasks=args.groups)
        # 3. advantages per step; the env's rejections (action_valid=False) get the invalid-action penalty
        rows = np.flatnonzero(batch.row_mask("drop"))
        steps = batch.to_steps("drop")
        steps = dataclasses.replace(steps, valid=batch.action_valid[rows])
        adv = advantages(args.estimator, steps, invalid_penalty=args.invalid_penalty)
        # 4. per-token advantages over each step's response tokens
        extras = [batch.extras[i] for i in rows]
        lens = np.array([len(e["response_ids"]) for e in extras])
        tok_adv = broadcast_to_tokens(adv, np.arange(lens.max())[None, :] < lens[:, None])
        update = UpdateBatch(prompt_ids=[e["prompt_ids"] for e in extras],
                             response_ids=[e["response_ids"] for e in extras],
                             old_logprobs=[e["logprobs"] for e in extras],
                             advantages=[tok_adv[i, :n] for i, n in enumerate(lens)])
        # 5. PPO-clip, token-mean, gradient accumulation by token budget
        stats = ppo_update(model, optimizer, update, pad_id=sampler.pad_id, epochs=2, minibatches=2)
        print(f"iter {it + 1}: success {batch.success_rate:.3f}  return {batch.mean_return:.3f}  "
              f"invalid {1 - batch.action_valid.mean():.2f}  loss {stats['loss']:+.4f}  kl {stats['approx_kl']:.4f}")
    collector.close()


if __name__ == "__main__":
    main()
