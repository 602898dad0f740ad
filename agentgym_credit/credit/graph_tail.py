"""Two row-level reshapings of ``graph``'s credit for learning (issue 41): noisy terminal rows and heavy tails.

:func:`~agentgym_credit.credit.graph.graph` calls both; they are pure functions of arrays.

- **Terminal rows** (``terminal=k`` in [0, 1], :func:`terminal_rewards`). A row whose episode terminated
  has TD error r - V-hat(u). When the final reward is noisy (a Bernoulli payout), r - V-hat(u) is mostly
  that noise: +0.3 / -0.7 for a chest that pays with probability 0.7, where A^pi is 0 (issue 41: 94% of
  the squared advantage on such rows). With m_u the mean reward of the scope's terminated rows at node u,
  the row's reward in its TD error becomes m_u + k (r - m_u): ``k=1`` is plain TD (the reward as drawn),
  ``k=0`` credits the node's mean outcome (A = m_u - V-hat(u), which is 0 where every row at u ends the
  same way). Only the advantage changes, never the values. The price: where two actions at one node both
  end the episode with different rewards (a pit and the goal next to each other), ``k < 1`` blurs them.
- **Heavy tails** (``tail``, :func:`shape_tail`), per scope, on the final advantage:
  ``"none"``; ``"clip"``: each row clipped to +-``tail_k`` times the root mean square of its scope's
  advantages (a few rows can no longer carry the update); ``"rank"``: a row's magnitude replaced by the
  rank of |A| among its scope's non-zero rows, sign kept, rescaled so the scope's root mean square is
  unchanged (zero rows stay zero). Sorted neighbours within :data:`TIE_TOL` (1e-6) of the scope's RMS tie
  and share their mean rank, and |A| below that counts as zero, so the solver's rounding never orders rows.

>>> import numpy as np
>>> shape_tail(np.array([0.0, 1.0, -1.0, 10.0]), np.zeros(4, np.int64), "clip", 1.0).round(3).tolist()
[0.0, 1.0, -1.0, 5.05]
"""

from __future__ import annotations

import numpy as np

from agentgym_credit.credit import checks

TAILS = ("none", "clip", "rank")
TIE_TOL = 1e-6
"""``tail="rank"``: sorted neighbours whose |A| differ by at most this times the scope's RMS share a rank."""


def tail_option(tail: str, tail_k: float) -> tuple[str, float]:
    """``(tail, tail_k)`` checked: a named ``ValueError``/``TypeError`` for a bad one (``tail_k`` > 0)."""
    checks.choice("tail", tail, TAILS)
    tail_k = checks.positive("tail_k", tail_k)
    return tail, tail_k


def terminal_rewards(r: np.ndarray, node: np.ndarray, term: np.ndarray, keep: float) -> np.ndarray:
    """The rewards a TD error uses: on ``term`` rows m_u + keep (r - m_u), m_u the mean of r over the
    ``term`` rows at the same node (module docstring); other rows unchanged. ``node`` codes are per scope."""
    if keep == 1.0 or not np.any(term):
        return r
    out = np.array(r, dtype=np.float64, copy=True)
    ti = np.flatnonzero(term)
    codes, inv = np.unique(node[ti], return_inverse=True)
    mean = np.bincount(inv, weights=r[ti], minlength=len(codes)) / np.bincount(inv, minlength=len(codes))
    out[ti] = mean[inv] + keep * (r[ti] - mean[inv])
    return out


def shape_tail(adv: np.ndarray, scope: np.ndarray, tail: str, tail_k: float = 3.0) -> np.ndarray:
    """``adv`` reshaped per ``scope`` id (module docstring); ``tail="none"`` returns it unchanged."""
    if tail == "none" or len(adv) == 0:
        return adv
    _, sc = np.unique(scope, return_inverse=True)
    sc = sc.reshape(-1)
    cnt = np.bincount(sc)
    rms = np.sqrt(np.bincount(sc, weights=adv * adv) / cnt)
    if tail == "clip":
        lim = tail_k * rms[sc]
        return np.clip(adv, -lim, lim)
    mag = np.abs(adv)
    nz = mag > TIE_TOL * rms[sc]  # zero up to the solve's precision stays zero
    rank = np.zeros(len(adv))
    idx = np.flatnonzero(nz)
    if len(idx):
        # mean rank of |A| within its scope: sort by (scope, |A|); neighbours within TIE_TOL of the scope's RMS
        # tie (rows equal up to the solve's precision, 1e-7, must not be ordered by its rounding)
        o = idx[np.lexsort((mag[idx], sc[idx]))]
        pos = np.arange(len(o), dtype=np.float64)
        start = np.r_[0, np.flatnonzero(np.diff(sc[o]) != 0) + 1]
        pos -= np.repeat(start, np.diff(np.r_[start, len(o)]))
        same = np.r_[False, (sc[o][1:] == sc[o][:-1]) & (np.diff(mag[o]) <= TIE_TOL * rms[sc[o][1:]])]
        run = np.cumsum(~same) - 1
        mean_pos = np.bincount(run, weights=pos) / np.bincount(run)
        rank[o] = mean_pos[run] + 1.0
    out = np.sign(adv) * rank
    new = np.sqrt(np.bincount(sc, weights=out * out) / cnt)
    scale = np.divide(rms, new, out=np.zeros_like(rms), where=new > 0)
    return out * scale[sc]


__all__ = ["TAILS", "TIE_TOL", "tail_option", "terminal_rewards", "shape_tail"]
