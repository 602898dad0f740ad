"""Policy gradient with GiGPO advantages on GridWorld, in one file (CleanRL style).

    python examples/pg_gigpo.py                 # ~35 s of CPU time; success ~0.3 -> ~0.8
    python examples/pg_gigpo.py --iterations 2 --groups 2 --group-size 4   # smoke run

The loop, top to bottom:
1. ``GroupedRolloutCollector`` rolls out ``group_size`` copies of each sampled task from one initial
   state; the policy is called once per step for the whole batch and returns ``PolicyOutput``s
   that record the log-probability and the candidate actions of every step.
2. ``credit.advantages("gigpo", batch.steps)``: episode-level GRPO term + anchor-state step term.
3. A PPO-clip update (a few epochs over the batch) of a small torch policy: hashed bag-of-words
   features of (observation, candidate action) -> score; softmax over the admissible actions.
"""

from __future__ import annotations

import argparse
import re
import time
import zlib
from dataclasses import dataclass, fields

import numpy as np
import torch
import torch.nn as nn

import agentgym_credit  # noqa: F401  (registers the credit/ envs)
from agentgym_credit import credit
from agentgym_credit.wrappers import GroupedRolloutCollector, PolicyOutput


@dataclass
class Args:
    env_id: str = "credit/GridWorld-v0"
    size: int = 5  # GridWorld side
    slip: float = 0.1  # chance that a move goes sideways
    n_tasks: int = 16  # layouts to train on
    iterations: int = 25
    groups: int = 16  # tasks (groups) per iteration
    group_size: int = 8  # rollouts per task: the group of GRPO/GiGPO
    max_steps: int = 30
    gamma: float = 0.95  # discount of the step-level returns
    omega: float = 1.0  # weight of GiGPO's anchor-state term
    lr: float = 0.05
    update_epochs: int = 4
    clip: float = 0.2  # PPO ratio clip
    n_features: int = 1 << 14  # hashed feature space
    backend: str = "sync"  # or "subprocess" / "ray"
    seed: int = 0


_WORD = re.compile(r"[a-z]+|\d+")


def obs_tokens(text: str) -> list[str]:
    """Unigrams and bigrams of an observation (``row 2``, ``to the`` ...)."""
    words = _WORD.findall(text.lower())
    return words + [f"{a}_{b}" for a, b in zip(words, words[1:])] + ["<bias>"]


class BagOfWordsPolicy(nn.Module):
    """score(obs, action) = sum of the weights of the hashed (obs token x action) features."""

    def __init__(self, n_features: int):
        super().__init__()
        self.n_features = n_features
        self.weights = nn.EmbeddingBag(n_features, 1, mode="sum")
        nn.init.zeros_(self.weights.weight)
        self._cache: dict[str, list[str]] = {}

    def features(self, obs: str, action: str) -> list[int]:
        toks = self._cache.get(obs)
        if toks is None:
            toks = self._cache[obs] = obs_tokens(obs)
        return [zlib.crc32(f"{t}|{action}".encode()) % self.n_features for t in toks]

    def log_probs(self, obs: list[str], candidates: list[list[str]]) -> torch.Tensor:
        """[n, max candidates] log-probabilities (-inf where a row has fewer candidates)."""
        flat, offsets, where = [], [], []
        width = max(len(c) for c in candidates)
        for i, (o, cands) in enumerate(zip(obs, candidates)):
            for j, a in enumerate(cands):
                offsets.append(len(flat))
                flat.extend(self.features(o, a))
                where.append(i * width + j)
        scores = self.weights(torch.tensor(flat), torch.tensor(offsets)).squeeze(-1)
        logits = torch.full((len(obs) * width,), float("-inf")).index_put((torch.tensor(where),), scores)
        return torch.log_softmax(logits.view(len(obs), width), dim=-1)


def main(args: Args | None = None) -> list[float]:
    args = args or Args()
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    policy = BagOfWordsPolicy(args.n_features)
    opt = torch.optim.Adam(policy.parameters(), lr=args.lr)
    collector = GroupedRolloutCollector(
        args.env_id, group_size=args.group_size, backend=args.backend, max_steps=args.max_steps,
        env_kwargs={"size": args.size, "slip": args.slip, "n_tasks": args.n_tasks}, seed=args.seed, progress=False,
    )

    def act(observations: list[str], infos: list[dict]) -> list[PolicyOutput]:
        """One batched decision for every active env: sample from the softmax over admissible actions."""
        cands = [list(i["admissible_actions"]) for i in infos]
        with torch.no_grad():
            logp = policy.log_probs(observations, cands)
        choice = torch.distributions.Categorical(logits=logp).sample().tolist()
        return [PolicyOutput(c[k], {"logprob": float(logp[i, k]), "candidates": c})
                for i, (c, k) in enumerate(zip(cands, choice))]

    success = []
    for it in range(args.iterations):
        t0 = time.perf_counter()
        tasks = rng.integers(args.n_tasks, size=args.groups).tolist()
        batch = collector.collect(act, tasks=tasks)
        steps = batch.steps
        adv = torch.as_tensor(credit.advantages("gigpo", steps, gamma=args.gamma, omega=args.omega),
                              dtype=torch.float32)
        rows = np.flatnonzero(batch.row_mask())  # the batch rows behind `steps`, in order
        obs = [batch.observation[r] for r in rows]
        cands = [batch.extras[r]["candidates"] for r in rows]
        chosen = torch.tensor([cands[k].index(batch.action[r]) for k, r in enumerate(rows)])
        old_logp = torch.tensor([batch.extras[r]["logprob"] for r in rows])
        for _ in range(args.update_epochs):
            new_logp = policy.log_probs(obs, cands).gather(1, chosen[:, None]).squeeze(1)
            ratio = torch.exp(new_logp - old_logp)
            loss = -torch.min(ratio * adv, ratio.clamp(1 - args.clip, 1 + args.clip) * adv).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        success.append(batch.success_rate)
        print(f"iter {it:3d}  success {batch.success_rate:.3f}  return {batch.mean_return:.3f}  "
              f"mean length {batch.traj.length.mean():5.1f}  steps {len(batch):5d}  "
              f"loss {loss.item():+.4f}  {time.perf_counter() - t0:.1f}s")
    collector.close()
    k = max(1, min(3, len(success) // 2))
    print(f"success rate: first {k} iterations {np.mean(success[:k]):.3f} -> last {k} {np.mean(success[-k:]):.3f}")
    return success


def parse_args(argv: list[str] | None = None) -> Args:
    """``--field value`` for every field of :class:`Args` (dashes or underscores)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for f in fields(Args):
        default = getattr(Args, f.name)
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=type(default), default=default)
    return Args(**vars(parser.parse_args(argv)))


if __name__ == "__main__":
    main(parse_args())
