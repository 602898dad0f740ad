"""Updates of ``bench train_real`` compared at **matched policy change**: a KL target per update, and the
reference arms that check the learning metric.

An arm's advantages fix the *direction* of a REINFORCE update ``θ' = θ + α · Σ_i Â_i ∇ log π(a_i|s_i) / #traj``;
how far it moves the policy depends on the advantages' shape as much as on their RMS (a heavy-tailed arm
changes the policy several times more than another at equal RMS and rate). With ``step="kl"`` the step size
``α`` of every update is chosen by line search so that the mean over the batch's rows of
``KL(π_old(·|s_i) ‖ π_new(·|s_i))`` hits ``kl_target``: every arm buys the same policy change per update and
is judged by where it spends it. The achieved KL and ``α`` are recorded per update.

What lives here:

- :func:`mean_kl` / :func:`line_search`: the KL of a logit change and the bisection (in log α) on it; the
  KL along a ray from ``α = 0`` grows monotonically, so bisection converges to the target or reports the
  largest change reachable (a batch whose update is zero gets ``α = 0``, KL 0);
- :func:`text_step`: the matched step for :class:`~agentgym_credit.truth.text_policy.TextPolicy` (its update is
  linear in the rate, so the logit change per row is computed once from a unit step);
- :data:`REFERENCES`, :func:`reference_advantages`, :class:`ExpertMarking`: the null arm (random-sign
  advantages: an update of the same size with no information, which must tie) and the known-effect arm
  (``imitate``: +1 where the env expert's command was taken, centred, which must win; ``imitate-path``: the
  same on the rows of a trajectory that has followed the expert so far, since on WebShop the expert's commands
  after a wrong click are recoveries that a text-only policy cannot tell from forward moves and ``imitate``
  loses to GRPO there: benchmarks/learning/matched_kl_known_effect.md);
- :func:`dilute_share`, :func:`is_reference`, :func:`dilute`: the calibrated known effect ``grpo-dilute[q]``:
  GRPO's advantages with a share ``q`` of each update's groups stripped of information (the trajectories'
  advantages permuted within the group), so every policy can represent it and, at matched KL, it spends a
  share of each update on noise: it must lose to GRPO by an amount set by ``q``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from agentgym_credit.truth.policies import _expert, candidate_actions
from agentgym_credit.truth.text_policy import TextPolicy

REFERENCES = ("null", "imitate", "imitate-path")
"""Reference arms: random-sign advantages (no information) and expert imitation (the known effect): on every
row (``imitate``), or only on the rows whose trajectory has followed the expert so far (``imitate-path``)."""

DILUTE = "grpo-dilute"
"""Prefix of the diluted-GRPO reference arm ``grpo-dilute[q]`` (``q`` in [0, 1]: the share of groups per update
whose advantages carry no information)."""

STEPS = ("rms", "kl")
"""How the step of one update is sized: the configured rate on RMS-scaled advantages, or a KL target."""


def mean_kl(probs: Sequence[np.ndarray], dlogits: Sequence[np.ndarray], alpha: float) -> float:
    """Mean over rows of ``KL(p ‖ softmax(log p + α·Δ))``."""
    if not probs:
        return 0.0
    tot = 0.0
    for p, d in zip(probs, dlogits):
        z = alpha * d
        z = z - z.max()
        logq = z - np.log(np.sum(p * np.exp(z)))  # log q_a − log p_a
        tot += float(-np.sum(p * logq))
    return tot / len(probs)


def line_search(kl_of: Callable[[float], float], target: float, alpha0: float = 1.0, max_alpha: float = 1e6,
                iters: int = 40, rtol: float = 0.02) -> tuple[float, float]:
    """``(α, KL(α))`` with ``KL(α)`` within ``rtol`` of ``target`` (bisection in log α after bracketing by
    doubling from ``alpha0``); ``(max_alpha, KL)`` when even that step stays below the target, ``(0, 0)``
    when the step changes nothing."""
    if not np.isfinite(target) or target <= 0:
        raise ValueError(f"kl_target must be a positive number, got {target}")
    lo, hi = 0.0, float(alpha0)
    k_hi = kl_of(hi)
    if k_hi <= 1e-15:
        return 0.0, 0.0
    while k_hi < target:
        lo, hi = hi, hi * 4.0
        if hi > max_alpha:
            return max_alpha, kl_of(max_alpha)
        k_hi = kl_of(hi)
    best = (hi, k_hi)
    for _ in range(iters):
        if abs(best[1] - target) <= rtol * target:
            break
        mid = np.sqrt(lo * hi) if lo > 0 else hi / 4.0
        k = kl_of(mid)
        best = (mid, k) if abs(k - target) < abs(best[1] - target) else best
        lo, hi = (mid, hi) if k < target else (lo, mid)
    return best


def text_step(pol: TextPolicy, decisions: Sequence[Any], weights: np.ndarray, kl_target: float | None = None,
              lr: float | None = None) -> tuple[float, float]:
    """Apply the REINFORCE update of :meth:`TextPolicy.update` to ``pol`` with rate ``lr`` or the rate that makes
    the mean KL over ``decisions`` hit ``kl_target``; returns ``(rate, achieved KL)``."""
    if (kl_target is None) == (lr is None):
        raise ValueError("give exactly one of kl_target and lr")
    w0, r0 = pol.w.copy(), dict(pol.residual)
    pol.update(decisions, weights, 1.0)
    dw = pol.w - w0
    dres = {k: v - r0.get(k, 0.0) for k, v in pol.residual.items()}
    probs, dl = [], []
    for d in decisions:
        if d.idx < 0:
            continue
        ends = np.cumsum(d.counts)
        starts = ends - d.counts
        delta = np.array([dw[d.feats[s:e]].sum() for s, e in zip(starts, ends)])
        delta += np.array([dres.get(k, 0.0) for k in d.rkeys])
        probs.append(np.asarray(d.probs, dtype=np.float64))
        dl.append(delta)
    alpha, kl = (line_search(lambda a: mean_kl(probs, dl, a), kl_target) if kl_target is not None
                 else (float(lr), mean_kl(probs, dl, float(lr))))
    pol.w = w0 + alpha * dw
    pol.residual = {**r0, **{k: r0.get(k, 0.0) + alpha * v for k, v in dres.items()}}
    return alpha, kl


class ExpertMarking:
    """Wraps a collector actor so each step's extras also hold ``expert_idx``: the index of the env expert's
    command among the candidates (-1 when there is none). Only the ``imitate`` reference reads it."""

    def __init__(self, actor: Callable[..., list[dict[str, Any]]]):
        self.actor = actor

    def __call__(self, observations: Sequence[str], infos: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        out = self.actor(observations, infos)
        for o, info in zip(out, infos):
            acts = candidate_actions(info)
            e = _expert(info, acts)
            o["expert_idx"] = acts.index(e) if e is not None and e in acts else -1
        return out


def expert_path(took: np.ndarray, traj_id: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Per row: has its trajectory taken the expert's command at every earlier step (the row itself is on the
    path even when it leaves it)?"""
    on = np.zeros(len(took), dtype=bool)
    for tid in np.unique(traj_id):
        idx = np.flatnonzero(traj_id == tid)
        idx = idx[np.argsort(t[idx], kind="stable")]
        before = np.concatenate([[True], np.cumprod(took[idx][:-1].astype(bool)).astype(bool)])
        on[idx] = before
    return on


def reference_advantages(arm: str, rows: Sequence[Mapping[str, Any]], rng: np.random.Generator,
                         steps: Any = None) -> np.ndarray:
    """``null``: i.i.d. random signs; ``imitate``: 1 where the row's action was the expert's, centred;
    ``imitate-path``: the same on the rows of :func:`expert_path` only (centred over them), 0 on the rows
    after a trajectory left the expert's path, where the expert's next command is a recovery (``< prev``)
    that a policy reading only text cannot tell from a forward move (benchmarks/learning/
    matched_kl_known_effect.md). ``steps`` (the rows' ``traj_id`` and ``t``) is needed by ``imitate-path``."""
    if arm == "null":
        return rng.choice(np.array([-1.0, 1.0]), size=len(rows))
    took = np.array([float(r["decision"].idx == r["expert_idx"]) for r in rows])
    if arm == "imitate":
        return took - took.mean() if len(took) else took
    if arm == "imitate-path":
        if steps is None:
            raise ValueError("imitate-path needs the rows' steps (traj_id, t)")
        tid, t = np.asarray(steps.traj_id), np.asarray(steps.t)
        if len(tid) != len(took) or len(t) != len(took):
            raise ValueError(f"{len(took)} rows but steps of {len(tid)} rows")
        on = expert_path(took, tid, t)
        out = np.zeros(len(took))
        if on.any():
            out[on] = took[on] - took[on].mean()
        return out
    raise ValueError(f"unknown reference arm {arm!r}; choose from {REFERENCES}")


def dilute_share(label: str) -> float | None:
    """``q`` of an arm label ``grpo-dilute[q]``; ``None`` for any other label; ``ValueError`` for a malformed
    one (no bracket, not a number, outside [0, 1])."""
    if not label.startswith(DILUTE):
        return None
    rest = label[len(DILUTE):]
    if not (rest.startswith("[") and rest.endswith("]")):
        raise ValueError(f"arm {label!r}: write the diluted GRPO arm as {DILUTE}[q], q in [0, 1] (e.g. {DILUTE}[0.5])")
    try:
        q = float(rest[1:-1])
    except ValueError:
        raise ValueError(f"arm {label!r}: q must be a number in [0, 1]") from None
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"arm {label!r}: q must be in [0, 1], got {q}")
    return q


def is_reference(label: str) -> bool:
    """Is ``label`` a reference arm (:data:`REFERENCES` or ``grpo-dilute[q]``; a malformed one raises)?"""
    return label in REFERENCES or dilute_share(label) is not None


def dilute_groups(n_groups: int, q: float, rng: np.random.Generator) -> np.ndarray:
    """Which of ``n_groups`` groups lose their information: ``floor(q·n)`` of them, one more with probability
    ``q·n − floor(q·n)`` (so the share is ``q`` on average and exact where ``q·n`` is whole), chosen uniformly.
    Drawn from ``rng`` alone and a fixed number of draws per call: independent of the data."""
    k = int(np.floor(q * n_groups + 1e-12))
    k += int(rng.random() < q * n_groups - k)
    out = np.zeros(n_groups, dtype=bool)
    out[rng.permutation(n_groups)[:k]] = True
    return out


def dilute(adv: np.ndarray, steps: Any, q: float, rng: np.random.Generator) -> np.ndarray:
    """GRPO's per-row advantages ``adv`` with a share ``q`` of the groups (:func:`dilute_groups`, in sorted
    ``group_id`` order) given no information: within each chosen group the trajectories' advantages are permuted
    (a uniform random permutation, each trajectory keeping one value on all its rows). The group keeps GRPO's
    exact values (centred, same spread, an all-fail group stays 0), so the update's size and shape are GRPO's,
    but which trajectory gets which value is independent of what happened: its expected direction is 0.
    ``adv`` must be constant within each trajectory (an episode-level advantage), else ``ValueError``."""
    adv = np.asarray(adv, dtype=np.float64)
    gid, tid = np.asarray(steps.group_id), np.asarray(steps.traj_id)
    if len(gid) != len(adv) or len(tid) != len(adv):
        raise ValueError(f"{len(adv)} advantages but steps of {len(gid)} rows")
    groups = np.unique(gid)
    chosen = dilute_groups(len(groups), q, rng)
    out = adv.copy()
    for g in groups[chosen]:
        rows = np.flatnonzero(gid == g)
        trajs = np.unique(tid[rows])
        vals = np.empty(len(trajs))
        for i, tr in enumerate(trajs):
            v = adv[rows[tid[rows] == tr]]
            if np.ptp(v) > 1e-9 * max(1.0, float(np.abs(v).max())):
                raise ValueError(f"{DILUTE}: advantages must be constant within a trajectory (trajectory {tr})")
            vals[i] = v[0]
        perm = vals[rng.permutation(len(trajs))]
        for i, tr in enumerate(trajs):
            out[rows[tid[rows] == tr]] = perm[i]
    return out


__all__ = ["REFERENCES", "DILUTE", "dilute_share", "is_reference", "dilute_groups", "dilute", "STEPS", "mean_kl", "line_search", "text_step", "ExpertMarking", "expert_path", "reference_advantages"]
