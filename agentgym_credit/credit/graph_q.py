"""``graph_q``: graph lam-returns compared at the same node (a GiGPO-like step term on the rollout graph).

:func:`~agentgym_credit.credit.graph.graph` credits a row by TD on the empirical graph,
r + gamma V-hat(s') - V-hat(s). On agent-visible keys under aliasing an ``obs_key`` node merges true
states whose values differ, so V-hat(s') is the *visit mixture* of the next node, not the value of
the state this trajectory is in (with ``graph``'s earlier obs_key default, a loop counter, training on
AliasedGrid collapsed: ``benchmarks/learning/training.md``).

``graph_q`` keeps the graph only for the return target and takes the baseline from the rows that
share the node, as GiGPO does:

    G_t = lam-return with graph bootstrap   (A^graph_lam(t) + V-hat(s_t); lam=1: the Monte-Carlo return)
    A_t = G_t - b(u_t),   b(u) = (sum_{rows p at u} G_p + prior * V-hat(u)) / (n_u + prior)

with ``u`` the row's node on ``key`` (``center_key``, default the same key, un-split, per scope).
A constant offset of V-hat at a node cancels (only differences between the rows at u remain), and
with ``lam`` near 1 the target follows the trajectory's own (hidden) state instead of the aliased
mixture; with ``lam`` near 0 it is the certainty-equivalence Q-hat(s, a) = r + gamma V-hat(s') of
the sampled action, compared with the other actions sampled at the same node.

``lam="auto"`` (default): 0.5 on ``key="state_key"`` (a true state is Markov: bootstrapping on
V-hat is sound and cuts variance) and 1.0 on every other key (an observation, or a history whose
source this function cannot know, may alias: bootstrapping through it carries the mixture into the
target; ``benchmarks/learning/training_graph_obs.md`` compares lam 1 with lam 0.5 on obs_key in training).
``prior`` (default 1)
pulls a node met once toward the graph value (A = (G - V-hat) / 2 with prior 1) instead of 0.
``episode=w`` adds w times GRPO's episode advantage.

Every other option is :func:`~agentgym_credit.credit.graph.graph`'s (``key``, ``level``, ``scope``,
``time_aware``, ``truncation``, ``loops``, ``backoff``, ``shrink``, penalties), with the same defaults.
Cost: one :func:`graph` value solve plus a node coding and a few bincounts.
"""

from __future__ import annotations

import numpy as np

from agentgym_credit.credit import checks
from agentgym_credit.credit.graph import _scope_ids, auto_loops, checked_options, finish, graph_values
from agentgym_credit.credit.graph_model import base_keys, code_nodes, scan
from agentgym_credit.credit.returns import penalty
from agentgym_credit.credit.steps import StepArrays

LAM_AUTO = {"state_key": 0.5}
"""``lam="auto"`` by key; any key not listed gets 1.0 (no bootstrap)."""


def graph_q(steps: StepArrays, *, gamma: float = 0.95, lam: float | str = "auto", key: str = "state_key", level: int = 0,
            center_key: str | None = None, center_level: int | None = None, prior: float = 1.0,
            scope: str = "group", time_aware: bool = False, truncation: str = "zero", loops: str = "auto",
            backoff: float | None = None, shrink: float = 1.0, episode: float = 0.0, invalid_penalty: float = 0.0,
            propagate_penalty: bool = False) -> np.ndarray:
    """Node-centred graph lam-return advantage (float64, input order); see the module docstring."""
    checks.as_steps(steps)
    if isinstance(lam, str):
        checks.choice("lam", lam, ("auto",))
        lam = LAM_AUTO.get(key, 1.0)
    gamma, lam, shrink, backoff, episode, invalid_penalty = checked_options(
        gamma=gamma, lam=lam, key=key, scope=scope, truncation=truncation, loops=loops, shrink=shrink,
        backoff=backoff, episode=episode, invalid_penalty=invalid_penalty, time_aware=time_aware)
    ckey = key if center_key is None else center_key
    checks.choice("center_key", ckey, ("state_key", "obs_key", "history"))
    clevel = (level if ckey == key else 0) if center_level is None else center_level
    prior = checks.positive("prior", prior, allow_zero=True)
    if loops == "auto" and key == "history":  # a history key already carries the action: its self-loops are real no-ops
        loops = "none"
    loops = auto_loops(loops, key)
    ck = base_keys(steps, ckey, clevel)
    if steps.n == 0:
        base_keys(steps, key, level)
        return np.zeros(0)
    p = penalty(steps, invalid_penalty)
    r_in = steps.reward + p if propagate_penalty else steps.reward
    w, node, nxt, v, _ = graph_values(steps, r_in, gamma=gamma, key=key, level=level, scope=scope,
                                      time_aware=time_aware, truncation=truncation, loops=loops,
                                      backoff=backoff, shrink=shrink)
    r = r_in[w.order]
    v_here = v[node]
    v_next = np.where(nxt >= 0, v[np.maximum(nxt, 0)], 0.0)
    g = scan(r + gamma * v_next - v_here, w.last, gamma * lam, w.max_length) + v_here
    cnode, _ = code_nodes(_scope_ids(steps, scope)[w.order], ck[w.order])
    m = int(cnode.max()) + 1
    cnt = np.bincount(cnode, minlength=m).astype(np.float64)
    base = (np.bincount(cnode, weights=g, minlength=m) + prior * np.bincount(cnode, weights=v_here, minlength=m)
            / cnt) / (cnt + prior)
    return finish(steps, w.order, g - base[cnode], p, episode, invalid_penalty, propagate_penalty)


__all__ = ["graph_q", "LAM_AUTO"]
