"""The policy and update of ``bench train``: a bag-of-words softmax over admissible actions, PPO-clip.

What lives here (used by :mod:`agentgym_credit.bench.learning.train`):

- :class:`HashedBow`: hashed bag-of-words features of the observation and candidate actions;
- :class:`BowPolicy`: the scorer (a small torch module) over those features;
- :class:`ActingPolicy`: the collector's batched policy that samples from a :class:`BowPolicy`;
- :func:`ppo_update`: PPO-clip epochs over a batch's steps, the same for every estimator;
- :func:`need_torch`: the clear error when the ``trainer`` extra is missing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from agentgym_credit.errors import DependencyNotInstalled
from agentgym_credit.keys import stable_hash
from agentgym_credit.wrappers.rollout_batch import RolloutBatch

if TYPE_CHECKING:
    from agentgym_credit.bench.learning.config import TrainBenchConfig

try:
    import torch
    from torch import nn
except ImportError:  # pragma: no cover - exercised only without the extra
    torch = None
    nn = None

_TOKEN = re.compile(r"[a-z]+|\d+")


def need_torch() -> None:
    if torch is None:
        raise DependencyNotInstalled("torch", "trainer")


class HashedBow:
    """Text -> sorted unique feature buckets (unigrams and bigrams, namespaced, stable hash)."""

    def __init__(self, buckets: int = 1 << 14):
        if buckets < 2:
            raise ValueError("buckets must be >= 2")
        self.buckets = int(buckets)
        self._cache: dict[tuple[str, str], tuple[int, ...]] = {}

    def __call__(self, text: str, ns: str) -> tuple[int, ...]:
        """Buckets of ``text`` in namespace ``ns`` (cached: observations repeat a lot)."""
        key = (ns, text)
        out = self._cache.get(key)
        if out is None:
            toks = _TOKEN.findall(text.lower())
            feats = [f"{ns}:{t}" for t in toks] + [f"{ns}:{a}_{b}" for a, b in zip(toks, toks[1:])]
            out = tuple(sorted({stable_hash(f) % self.buckets for f in feats})) or (0,)
            if len(self._cache) > 200_000:
                self._cache.clear()
            self._cache[key] = out
        return out

    def context(self, obs: str, goal: str, prev_action: str) -> tuple[int, ...]:
        """Features of what the policy sees: observation, goal and previous action."""
        return self(obs, "o") + self(goal, "g") + self(prev_action, "p")


def _bag(lists: Sequence[Sequence[int]]) -> tuple[Any, Any]:
    flat = torch.tensor([i for lst in lists for i in lst], dtype=torch.long)
    lengths = [len(lst) for lst in lists]
    offsets = torch.tensor(np.r_[0, np.cumsum(lengths)[:-1]], dtype=torch.long)
    return flat, offsets


if torch is not None:

    class BowPolicy(nn.Module):
        """Bilinear scorer: logit(a | ctx) = <tanh(E_c ctx) W, E_a a> + b·E_a a (mean-pooled bags)."""

        def __init__(self, buckets: int = 1 << 14, dim: int = 32):
            super().__init__()
            self.ctx = nn.EmbeddingBag(buckets, dim, mode="mean")
            self.act = nn.EmbeddingBag(buckets, dim, mode="mean")
            self.proj = nn.Linear(dim, dim)
            self.bias = nn.Linear(dim, 1)
            for emb in (self.ctx, self.act):
                nn.init.normal_(emb.weight, std=0.5)

        def log_probs(self, ctx: Sequence[Sequence[int]], cands: Sequence[Sequence[Sequence[int]]],
                      offset: Any = None) -> tuple[Any, Any]:
            """Log-probabilities of every candidate (flat, decision by decision) and the owner index;
            ``offset`` (flat, like the candidates) is a fixed logit added before the softmax (a stated prior)."""
            c = self.proj(torch.tanh(self.ctx(*_bag(ctx))))
            counts = [len(x) for x in cands]
            owner = torch.repeat_interleave(torch.arange(len(cands)), torch.tensor(counts))
            a = self.act(*_bag([f for x in cands for f in x]))
            score = (c[owner] * a).sum(-1) + self.bias(a).squeeze(-1)
            if offset is not None:
                score = score + offset
            mx = torch.full((len(cands),), -1e30).scatter_reduce(0, owner, score.detach(), "amax")
            z = torch.zeros(len(cands)).index_add(0, owner, torch.exp(score - mx[owner]))
            return score - mx[owner] - torch.log(z)[owner], owner

else:  # pragma: no cover
    BowPolicy = None  # type: ignore[assignment,misc]


class ActingPolicy:
    """The collector's batched policy: samples (or takes the argmax) from a :class:`BowPolicy`.

    Each step's extras hold what the PPO update needs: context and candidate features, the chosen
    index and its log-probability under the acting parameters.
    """

    def __init__(self, model: Any, feats: HashedBow, generator: Any, greedy: bool = False):
        self.model, self.feats, self.gen, self.greedy = model, feats, generator, greedy
        self._acts: dict[int, list[str]] = {}  # trajectory -> its actions by env step (a branch: its parent's first)

    def _previous(self, roll: dict[str, Any]) -> str:
        tid, t = int(roll["traj_id"]), int(roll["t"])
        acts = self._acts.get(tid)
        if acts is None or t == 0:
            parent = roll.get("parent")
            acts = self._acts[tid] = ([] if parent is None or t == 0
                                      else list(self._acts.get(int(parent), [])[:int(roll["start_t"])]))
        return acts[t - 1] if 0 < t <= len(acts) else ""

    def __call__(self, observations: Sequence[str], infos: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        ctx, cands, texts = [], [], []
        for obs, info in zip(observations, infos):
            prev = self._previous(info["rollout"])
            acts = list(info["admissible_actions"])
            ctx.append(self.feats.context(obs, str(info.get("goal", "")), prev))
            cands.append([self.feats(a, "a") for a in acts])
            texts.append(acts)
        with torch.no_grad():
            lp, owner = self.model.log_probs(ctx, cands)
        out = []
        start = 0
        for i, (info, acts) in enumerate(zip(infos, texts)):
            seg = lp[start:start + len(acts)]
            start += len(acts)
            k = int(torch.argmax(seg)) if self.greedy else int(torch.multinomial(seg.exp(), 1, generator=self.gen))
            self._acts[int(info["rollout"]["traj_id"])].append(acts[k])
            out.append({"action": acts[k], "logp": float(seg[k]), "idx": k, "ctx": ctx[i], "cands": cands[i]})
        return out


def ppo_update(model: Any, opt: Any, batch: RolloutBatch, adv: np.ndarray, cfg: TrainBenchConfig,
               gen: Any) -> dict[str, float]:
    """PPO-clip epochs over the batch's steps (same for every estimator); returns loss statistics.

    ``adv`` has one value per row of ``batch.steps``, which leaves out failed trajectories, so the
    extras are taken under the same ``batch.row_mask()`` to keep rows and advantages aligned.
    """
    ex = [e for e, keep in zip(batch.extras, batch.row_mask()) if keep]
    n = len(ex)
    if len(adv) != n:
        raise ValueError(f"{len(adv)} advantages for {n} kept step rows: compute them on batch.steps")
    old = torch.tensor([e["logp"] for e in ex], dtype=torch.float32)
    idx = torch.tensor([e["idx"] for e in ex], dtype=torch.long)
    A = torch.as_tensor(np.asarray(adv, dtype=np.float32))
    stats = {"loss": 0.0, "clipfrac": 0.0, "entropy": 0.0}
    updates = 0
    for _ in range(cfg.epochs):
        perm = torch.randperm(n, generator=gen)
        for s in range(0, n, cfg.minibatch):
            mb = perm[s:s + cfg.minibatch].tolist()
            lp, owner = model.log_probs([ex[i]["ctx"] for i in mb], [ex[i]["cands"] for i in mb])
            counts = torch.bincount(owner, minlength=len(mb))
            first = torch.cumsum(counts, 0) - counts
            new = lp[first + idx[mb]]
            ratio = torch.exp(new - old[mb])
            a = A[mb]
            loss_pg = -torch.min(ratio * a, torch.clamp(ratio, 1 - cfg.clip, 1 + cfg.clip) * a).mean()
            ent = -torch.zeros(len(mb)).index_add(0, owner, lp.exp() * lp).mean()
            loss = loss_pg - cfg.entropy_coef * ent
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            stats["loss"] += float(loss_pg.detach())
            stats["clipfrac"] += float(((ratio - 1).abs() > cfg.clip).float().mean())
            stats["entropy"] += float(ent.detach())
            updates += 1
    return {k: v / max(updates, 1) for k, v in stats.items()}


__all__ = ["HashedBow", "BowPolicy", "ActingPolicy", "ppo_update", "need_torch"]
