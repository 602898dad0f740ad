"""``agentgym-credit bench text_imitation``: build the text-only ALFWorld behaviour policy of issue 41.4 by
imitating the expert, and measure its win rate per game.

The Monte-Carlo truth of ``bench credit_confirm --stage textonly`` needs a behaviour policy that sees text only
(:mod:`agentgym_credit.truth.text_only`) and still wins ALFWorld games sometimes, so that groups have reward
variance. The hand-set ``text-scorer-alfworld`` almost never wins. What lives here:

- :func:`imitate` — DAgger (Ross et al., 2011) with the package's own update: episodes on the *training* games
  (the dev games 0-11 of ``bench train_real``) act with the expert's command with probability β (1, then
  halved each round) and otherwise sample the policy; every visited step is labelled with the expert's command
  (``info["expert_action"]``, read by the *teacher* only) and kept; after each round, ``epochs`` steps of
  :meth:`~agentgym_credit.truth.text_policy.TextPolicy.update` with weight ``1/n`` on every kept step (the
  gradient of the mean log-likelihood of the expert's commands, at the current policy). The learner itself
  is called with :func:`~agentgym_credit.truth.text_only.visible_info` only (observation, task text,
  admissible commands, step count), exactly as the truth calls it.
- :func:`win_rates` — per game, the share of ``rollouts`` sampled episodes the policy wins, acting as the truth
  acts (:class:`~agentgym_credit.truth.text_only.ObservationOnly`).
- :func:`main` — ``--out`` writes the checkpoint that :data:`~agentgym_credit.truth.text_only.TEXT_ONLY` loads
  by name (``text-imitation-alfworld``); the run is deterministic in ``--seed``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_credit.truth.experts import ALFWorldExpertFactory
from agentgym_credit.truth.text_only import IMITATION_FILE, ObservationOnly, imitation_policy, visible_info
from agentgym_credit.truth.text_policy import TextPolicy

TRAIN_GAMES = tuple(range(12))
"""The dev games the policy imitates on: ``bench train_real``'s training games of ``alfworld-dev`` (0-11)."""


@dataclass
class ImitationConfig:
    """What :func:`imitate` runs (defaults: the committed checkpoint's)."""

    games: tuple[int, ...] = TRAIN_GAMES
    source: str = "dev"        # "dev": the real dev games; "gen": ALFWorld generated games
    rounds: int = 6
    episodes: int = 2          # per game and round
    epochs: int = 300
    lr: float = 2.0
    max_steps: int = 50
    seed: int = 0
    overlap_weight: float = 2.0
    buckets: int = 1 << 16


SOURCES = ("dev", "gen")


def _env(source: str = "dev") -> Any:
    if source not in SOURCES:
        raise ValueError(f"source must be one of {SOURCES}, got {source!r}")
    return ALFWorldExpertFactory((("source", "dev"),) if source == "dev" else ())()


def _episode(env: Any, game: int, seed: int, rng: np.random.Generator, policy: Any, beta: float, max_steps: int,
             keep: list[tuple[str, dict[str, Any], str]] | None = None) -> bool:
    """One episode on dev game ``game``: the expert's command with probability ``beta``, else a sample of
    ``policy`` (called with the visible part of ``info`` only); every step with an expert command is appended
    to ``keep`` as ``(obs, visible info, expert command)``. Whether it won."""
    obs, info = env.reset(seed=int(seed), options={"task": int(game)})
    for t in range(max_steps):
        vis = visible_info({**info, "history_t": t})
        acts, p = policy.distribution(obs, vis)
        teacher = info.get("expert_action")
        if keep is not None and teacher in acts:
            keep.append((obs, vis, str(teacher)))
        a = teacher if (teacher in acts and rng.random() < beta) else acts[int(rng.choice(len(acts), p=p))]
        obs, _, term, trunc, info = env.step(a)
        if term or trunc:
            return bool(info.get("won"))
    return False


def fit(policy: TextPolicy, data: Sequence[tuple[str, dict[str, Any], str]], epochs: int, lr: float) -> float:
    """``epochs`` full-batch steps of :meth:`TextPolicy.update` toward the expert's commands (weight ``1/n``
    each; each step's π recomputed at the current weights, so it is the gradient of the mean log-likelihood);
    the mean log-likelihood of ``data`` after the last."""
    if not data:
        return 0.0
    if "residual" in policy.parts:
        raise ValueError("fit() learns the linear parts only; make the policy without 'residual'")
    ds = []
    for obs, vis, teacher in data:
        acts, d = policy.act(obs, vis)
        d.idx, d.action = acts.index(teacher), teacher
        ds.append(d)
    # π at the current weights without re-reading the text: logit = log π(at the start) − w₀·φ + w·φ
    counts = np.concatenate([d.counts for d in ds])
    flat = np.concatenate([d.feats for d in ds])
    owner = np.repeat(np.arange(len(counts)), counts)
    sizes = np.array([len(d.probs) for d in ds])
    start = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    learned = lambda: np.bincount(owner, weights=policy.w[flat], minlength=len(counts))  # noqa: E731
    base = np.log(np.maximum(np.concatenate([d.probs for d in ds]), 1e-300)) - learned()
    chosen = start + np.array([d.idx for d in ds])
    w = np.full(len(ds), 1.0 / len(ds))
    for e in range(epochs + 1):
        logit = base + learned()
        top = np.maximum.reduceat(logit, start)
        z = np.exp(logit - np.repeat(top, sizes))
        norm = np.add.reduceat(z, start)
        if e == epochs:
            return float(np.mean(logit[chosen] - top - np.log(norm)))
        p = z / np.repeat(norm, sizes)
        for d, s0, n in zip(ds, start, sizes):
            d.probs = p[s0:s0 + n]
        policy.update(ds, w, lr)
    return 0.0


def imitate(cfg: ImitationConfig, log: Any = None) -> tuple[TextPolicy, list[dict[str, Any]]]:
    """DAgger on ``cfg.games`` (module docstring): the policy and one record per round."""
    policy = TextPolicy(expert_bonus=0.0, overlap_weight=cfg.overlap_weight, buckets=cfg.buckets,
                        parts=("linear", "scene"), name="text-imitation-alfworld")
    rng = np.random.default_rng([cfg.seed, 41])
    env = _env(cfg.source)
    data: list[tuple[str, dict[str, Any], str]] = []
    history = []
    try:
        for r in range(cfg.rounds):
            beta = 0.5 ** r
            wins = 0
            for g in cfg.games:
                for e in range(cfg.episodes):
                    wins += _episode(env, g, 1000 * r + e, rng, ObservationOnly(policy), beta, cfg.max_steps, data)
            ll = fit(policy, data, cfg.epochs, cfg.lr)
            rec = {"round": r, "beta": beta, "steps": len(data), "won": wins / (len(cfg.games) * cfg.episodes),
                   "loglik": ll}
            history.append(rec)
            if log:
                log(rec)
    finally:
        env.close()
    return policy, history


def win_rates(policy: Any, games: Sequence[int], rollouts: int, seed: int = 7, max_steps: int = 50
              ) -> dict[int, float]:
    """Per game, the share of ``rollouts`` episodes ``policy`` wins, called as the truth calls it."""
    pol = policy if isinstance(policy, ObservationOnly) else ObservationOnly(policy)
    rng = np.random.default_rng([seed, 42])
    env = _env()
    try:
        return {int(g): float(np.mean([_episode(env, g, seed * 1000 + k, rng, pol, 0.0, max_steps)
                                       for k in range(rollouts)])) for g in games}
    finally:
        env.close()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="agentgym-credit bench text_imitation", description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=None, help=f"write the checkpoint here (the named one: {IMITATION_FILE})")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--source", choices=SOURCES, default="dev", help="imitate on the dev games or generated games")
    p.add_argument("--games", nargs=2, type=int, default=None, metavar=("LO", "HI"),
                   help="imitate on games LO..HI-1 (default: dev games 0-11)")
    p.add_argument("--rounds", type=int, default=None)
    p.add_argument("--epochs", type=int, default=None)
    p.add_argument("--lr", type=float, default=None)
    p.add_argument("--overlap-weight", type=float, default=None)
    p.add_argument("--episodes", type=int, default=None)
    p.add_argument("--measure", nargs="*", type=int, default=None, metavar="GAME",
                   help="measure the win rate per dev game (no games: all 19) of the checkpoint (--out or the named one)")
    p.add_argument("--rollouts", type=int, default=4)
    p.add_argument("--measure-only", action="store_true", help="load, do not train")
    p.add_argument("--temperature", type=float, default=1.0, help="measure the policy at this temperature")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    path = args.out or IMITATION_FILE
    if args.measure_only:
        policy = imitation_policy(path, args.temperature)
    else:
        cfg = ImitationConfig(seed=args.seed, source=args.source)
        if args.games:
            cfg.games = tuple(range(*args.games))
        for k in ("rounds", "epochs", "lr", "overlap_weight", "episodes"):
            if getattr(args, k) is not None:
                setattr(cfg, k, getattr(args, k))
        t0 = time.time()
        pol, hist = imitate(cfg, log=lambda r: print(f"[text_imitation] {r}", flush=True))
        meta = {"source": cfg.source, "games": list(cfg.games), "rounds": cfg.rounds, "episodes": cfg.episodes, "epochs": cfg.epochs,
                "lr": cfg.lr, "seed": cfg.seed, "overlap_weight": cfg.overlap_weight, "history": hist}
        pol.save(path, meta)
        print(f"wrote {path} in {time.time() - t0:.0f} s", flush=True)
        policy = imitation_policy(path, args.temperature)
    if args.measure is not None:
        from agentgym_credit.bench.montecarlo.config import DEV_GAMES

        games = args.measure or list(range(DEV_GAMES))
        t0 = time.time()
        rates = win_rates(policy, games, args.rollouts)
        for g, w in rates.items():
            print(f"game {g:2d}: won {w:.2f}")
        r = np.array(list(rates.values()))
        print(f"mean {r.mean():.3f} over {len(games)} games x {args.rollouts} rollouts ({time.time() - t0:.0f} s); "
              f"groups of 8 with mixed outcomes if these rates were exact: {np.mean(1 - r**8 - (1 - r)**8):.2f}")
    return 0


__all__ = ["TRAIN_GAMES", "ImitationConfig", "fit", "imitate", "win_rates", "main"]

if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
