"""The neural arm of ``bench train_real`` (``--policy neural``): a small torch scorer; its learned part reads text.

:class:`NeuralTextPolicy` scores each admissible action of a step as

    ``logit(a) = prior(a) + BowPolicy(hashed n-grams of observation + goal, hashed n-grams of a)``

where ``prior`` is the **same stated prior** as the text policy's
(:class:`~agentgym_credit.truth.text_policy.TextPolicy` with no learned part: the stand-in for what a pretrained
agent knows, so both policies start from the same place) and the learned scorer is the learning harness's
:class:`~agentgym_credit.bench.learning.train_policy.BowPolicy` over
:class:`~agentgym_credit.bench.learning.train_policy.HashedBow` features (unigrams and bigrams of the text; no
state key, no game id). The prior reads the step's text too, plus, when ``expert_bonus > 0``, the expert's
command from ``info`` (the stand-in for what a pretrained agent knows, as for the text policy); at
``--expert-bonus 0`` the whole policy reads only text. Its output layers start at zero, so the start policy *is*
the prior. One update is the
REINFORCE step of the text policy, ``θ += α · Σ_i c_i ∇_θ log π(a_i|s_i)`` (one backward pass), with ``α`` the
configured rate or, for a KL target, the line search of :mod:`.matched_step` (a forward pass per trial step).

What lives here: :class:`NeuralDecision`, :class:`NeuralTextPolicy`, :class:`NeuralActor`, :func:`actor_for`.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_credit.bench.learning.matched_step import line_search
from agentgym_credit.bench.learning.train_policy import BowPolicy, HashedBow, need_torch, torch
from agentgym_credit.truth.text_policy import TextActor, TextPolicy


@dataclass
class NeuralDecision:
    """One step's choice and what the update needs (a step extra, key ``"decision"``)."""

    action: str
    idx: int
    probs: np.ndarray                 # π(·|s) over the candidates under the acting parameters
    ctx: tuple[int, ...]              # hashed features of observation + goal
    cands: list[tuple[int, ...]]      # hashed features of each candidate action
    prior: np.ndarray                 # the fixed prior's log-probabilities of the candidates


class NeuralTextPolicy:
    """Stated prior + a learned :class:`BowPolicy` over hashed text (module docstring)."""

    def __init__(self, expert_bonus: float = 1.5, overlap_weight: float = 2.0, buckets: int = 1 << 14,
                 dim: int = 32, seed: int = 0, name: str = "neural-text-policy"):
        need_torch()
        self.prior = TextPolicy(expert_bonus, overlap_weight, buckets=2, parts=("linear",), name=name)
        self.feats = HashedBow(buckets)
        self.name = name
        with torch.random.fork_rng():
            torch.manual_seed(int(seed))
            self.model = BowPolicy(buckets, dim)
        with torch.no_grad():
            for p in (self.model.proj.weight, self.model.proj.bias, self.model.bias.weight, self.model.bias.bias):
                p.zero_()  # the start policy is the prior; gradients still reach every parameter

    def _log_probs(self, decisions: Sequence[NeuralDecision]) -> Any:
        off = torch.as_tensor(np.concatenate([d.prior for d in decisions]), dtype=torch.float32)
        lp, _ = self.model.log_probs([d.ctx for d in decisions], [d.cands for d in decisions], offset=off)
        return lp

    def act_batch(self, observations: Sequence[str], infos: Sequence[Mapping[str, Any]]
                  ) -> list[tuple[list[str], NeuralDecision]]:
        """The candidates and the distribution over them for each step (``idx`` unset: -1)."""
        out = []
        for obs, info in zip(observations, infos):
            acts, d = self.prior.act(obs, info)
            ctx = self.feats(obs, "o") + self.feats(str(info.get("goal", "")), "g")
            out.append((acts, NeuralDecision("", -1, d.probs, ctx, [self.feats(a, "a") for a in acts],
                                             np.log(np.maximum(d.probs, 1e-30)))))
        if out:
            with torch.no_grad():
                lp = self._log_probs([d for _, d in out]).numpy().astype(np.float64)
            at = 0
            for acts, d in out:
                p = np.exp(lp[at:at + len(acts)])
                d.probs = p / p.sum()
                at += len(acts)
        return out

    def distribution(self, obs: str, info: Mapping[str, Any]) -> tuple[list[str], np.ndarray]:
        acts, d = self.act_batch([obs], [info])[0]
        return acts, d.probs

    def step(self, decisions: Sequence[NeuralDecision], weights: np.ndarray, kl_target: float | None = None,
             lr: float | None = None) -> tuple[float, float]:
        """One REINFORCE step with rate ``lr`` or the rate whose mean KL(π_old‖π_new) over ``decisions`` is
        ``kl_target``; returns ``(rate, achieved KL)``."""
        w = np.asarray(weights, dtype=np.float64)
        if len(w) != len(decisions):
            raise ValueError(f"{len(w)} weights for {len(decisions)} decisions")
        if not np.all(np.isfinite(w)):
            raise ValueError("weights must be finite")
        if (kl_target is None) == (lr is None):
            raise ValueError("give exactly one of kl_target and lr")
        live = [i for i, d in enumerate(decisions) if d.idx >= 0 and w[i] != 0.0]
        if not live:
            return 0.0, 0.0
        ds = [decisions[i] for i in live]
        counts = torch.tensor([len(d.cands) for d in ds])
        first = torch.cumsum(counts, 0) - counts
        chosen = first + torch.tensor([d.idx for d in ds])
        params = list(self.model.parameters())
        self.model.zero_grad()
        lp = self._log_probs(ds)
        (-(torch.as_tensor(w[live], dtype=torch.float32) * lp[chosen]).sum()).backward()
        theta0 = [p.detach().clone() for p in params]
        grads = [(-p.grad).detach().clone() if p.grad is not None else torch.zeros_like(p) for p in params]
        p_old = torch.as_tensor(np.concatenate([d.probs for d in ds]), dtype=torch.float32)
        logp_old = torch.log(p_old.clamp_min(1e-30))
        owner = torch.repeat_interleave(torch.arange(len(ds)), counts)

        def set_alpha(a: float) -> None:
            with torch.no_grad():
                for p, t, g in zip(params, theta0, grads):
                    p.copy_(t + a * g)

        def kl_of(a: float) -> float:
            set_alpha(a)
            with torch.no_grad():
                new = self._log_probs(ds)
            per = torch.zeros(len(ds)).index_add(0, owner, p_old * (logp_old - new))
            return float(per.mean())

        alpha, kl = (line_search(kl_of, kl_target) if kl_target is not None else (float(lr), kl_of(float(lr))))
        set_alpha(alpha)
        self.model.zero_grad()
        return alpha, kl

    def save(self, path: str | os.PathLike, meta: Mapping[str, Any] | None = None) -> Path:
        """The model's weights and ``meta`` (``torch.save``, written to a temporary file then replaced)."""
        path = Path(path).with_suffix(".pt")
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                torch.save({"state_dict": self.model.state_dict(), "meta": dict(meta or {})}, fh)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path


class NeuralActor:
    """The collector's batched policy for a :class:`NeuralTextPolicy` (samples, or greedy)."""

    def __init__(self, policy: NeuralTextPolicy, rng: np.random.Generator, greedy: bool = False):
        self.policy, self.rng, self.greedy = policy, rng, bool(greedy)

    def __call__(self, observations: Sequence[str], infos: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for acts, d in self.policy.act_batch(observations, infos):
            k = int(np.argmax(d.probs)) if self.greedy else int(self.rng.choice(len(acts), p=d.probs))
            d.idx, d.action = k, acts[k]
            out.append({"action": acts[k], "decision": d})
        return out


def actor_for(policy: Any, rng: np.random.Generator, greedy: bool = False) -> Any:
    """The collector actor of either policy of ``bench train_real``."""
    return (NeuralActor if isinstance(policy, NeuralTextPolicy) else TextActor)(policy, rng, greedy=greedy)


__all__ = ["NeuralDecision", "NeuralTextPolicy", "NeuralActor", "actor_for"]
