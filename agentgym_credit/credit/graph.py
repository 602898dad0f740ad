"""``graph``: certainty-equivalence credit on the graph the rollouts form (this project's estimator).

Per scope (``scope="group"``: one rollout group, default; ``"task"``: every group of one task, by
``steps.task_key``, which :meth:`RolloutBatch.to_steps` fills from ``task_id``; ``"batch"``: every row
of the batch), the rows are merged into an empirical Markov chain over
nodes (a node = a key, :func:`~agentgym_credit.credit.graph_model.base_keys`: ``state_key``,
``obs_key`` or a ``history`` level). Its values come from one exact solve
(:func:`~agentgym_credit.credit.graph_model.solve_values`):
V-hat(u) = mean over the rows at u of (r + gamma V-hat(next)), i.e. V^pi of the behaviour policy
on the model the rollouts estimate. Each row gets

    delta_t = r_t + gamma V-hat(s_{t+1}) - V-hat(s_t),    A_t = delta_t + gamma lam A_{t+1}

(``lam=0``: TD(0) on the model, the default; ``lam=1``: the Monte-Carlo return minus V-hat(s_t)).
Choices, all options:

- **Termination vs truncation.** A row whose episode terminated (``steps.terminated``, or ``done``
  when that column is absent) has V(next) = 0. A trajectory cut off (truncated, or failed and
  kept) has ``truncation="zero"`` (default): nothing is earned after the cut, which is exactly the
  finite-horizon A^pi of an env whose step limit ends the episode; ``"bootstrap"``: V(next) =
  V-hat of the node of the state reached (``steps.final_state_key`` / ``final_obs_key``, recorded
  by the collector) when that node was acted in within the scope, else 0 (also 0 for ``history``
  keys, whose final context is not recorded).
- **Time.** A^pi of a task with a step limit depends on t; ``time_aware=True`` makes the node
  (key, t), so values are per step index (a DAG: exact, but thinner).
- **Invalid actions** are no-ops that keep the state: their rows are ordinary self-loops of the
  behaviour policy. ``invalid_penalty`` follows :mod:`~agentgym_credit.credit.returns` (added to
  the row's own advantage, or to its reward everywhere with ``propagate_penalty=True``).
- **Rewards** may be any real numbers (graded, intermediate, step costs): nothing assumes 0/1.
- **Aliasing (agent-visible keys).** On ``obs_key`` an action that changes only hidden state
  ("take key", "cool mug") reads as a self-loop u -> u, and TD(0) gives it -(1 - gamma) V-hat(u)
  whatever it did. ``loops`` decides: ``"none"`` (plain TD), ``"mc"`` (a VALID row whose next key
  equals its own does not bootstrap on the aliased graph at all: its credit is its own discounted
  Monte-Carlo return minus V-hat(u), since every later node may alias the hidden change too;
  invalid rows are true no-ops and keep TD), ``"split"`` (the node is (key, number of valid
  self-loops so far in the trajectory): a hidden-progress counter), ``"events"`` (the node is (key,
  the SET of observations at which the trajectory has made a valid self-loop so far): it remembers
  WHERE the hidden change may have happened, so looping at the key rack and looping at the locked
  door are different histories, and looping twice at one place is a real no-op; for ``key="history"``
  the loops are those of ``obs_key``), ``"auto"`` (default: ``"events"`` on ``obs_key``
  (:data:`OBS_LOOPS`), ``"none"`` on ``state_key``, whose self-loops are real, ``"split"`` on ``history``). With ``backoff=k > 0`` a
  split or events node's V-hat is (n V-hat_split + k V-hat_unsplit) / (n + k), so thin nodes lean on
  the unsplit graph; ``backoff=None`` (default) is 4 for ``"split"`` and 0 for ``"events"`` (leaning
  on the unsplit graph brings back the aliasing the events removed). Measured on AliasedGrid (3x3,
  uniform policy, 100 groups of 8, gamma .95, shrink 0; ``tests/test_graph_estimators.py``), "take
  key" without the key: sign agreement with the true A^pi 0.01 (none) / 0.34 (mc) / 0.59 (split)
  / 0.76 (events), all-row Pearson 0.65 / 0.51 / 0.66 / 0.72 (state_key: 0.85, 0.74). In training
  (``benchmarks/training_graph_obs.md``) the counter collapses on AliasedGrid (it merges "took the
  key" with "tried the locked door") and the events do not. The price: where self-loops are real
  no-ops (slips into walls, a repeated ``look``), events split nodes for nothing and thin the graph
  (``benchmarks/graph_credit.md``: -0.05 to -0.15 Pearson vs ``"none"`` on GradedGrid and Household
  at fixed policies).
- **Hidden state that is not a self-loop** (``alias``). On an agent-visible key a change the text does
  not show ("take mug" at one receptacle, then every other receptacle looks the same with or without
  it) is invisible at every later node, so V-hat there is the visit mixture and the action that made
  the difference is credited by that mixture (issue 29: on a household whose text does not say what is
  carried, ``graph[obs]`` with plain TD learned in 0 of 6 seeds). ``alias="fallback"`` (the default on
  ``obs_key``; ``"none"`` elsewhere, ``"auto"`` picks) tests every edge (u, u') of the graph: if what its
  rows went on to earn after u' differs from V-hat(u') by more than ``alias_z`` (default 0.5) standard
  deviations of the scope's returns over sqrt(rows on the edge) (:func:`mixed_edges`), those rows do not
  bootstrap on u': their target runs on along their own trajectory (lam = 1 through the edge) to the next
  row that does, in the values (one more solve, no back-off) and in the advantage. Where no edge is cut
  it is plain TD; ``alias_z=0`` cuts every edge whose mean differs at all (close to GiGPO's step term on
  the graph's targets). Chosen on the tuning families of ``bench train`` (AliasedGrid, household-small
  without the carried line; ``benchmarks/training_graph_obs.md``).
- **Thin graphs.** ``shrink=k > 0`` (default 0.25 since issue 41; 0 = the plain certainty-equivalence values)
  replaces V-hat(u) by (n_u V-hat(u) + k b) / (n_u + k), n_u the rows at u, b the scope's mean
  discounted step return: nodes seen once pull toward the group baseline instead of giving TD 0
  (issue 29 chose 0.5 on ``benchmarks/credit_tuning.md``; issue 41's guarded rule chose 0.25 on
  ``benchmarks/exact/graph_credit_tuning.md``).
  ``shrink="auto"``: an empirical-Bayes weight per node from the scope's own rows, s^2 / (s^2 + n_u tau^2)
  (s^2 the pooled within-node variance of the one-step targets, tau^2 the between-node spread of V-hat
  about b), its pull clipped to the node's standard error s / sqrt(n_u), so it vanishes on well-visited
  nodes and cannot swamp a small A^pi (:mod:`~agentgym_credit.credit.graph_shrink`). ``episode=w``
  adds w times GRPO's episode advantage (:func:`~agentgym_credit.credit.episode.episode_advantage`,
  mean/std over the group).
- **Noisy final rewards** (``terminal``, issue 41). A terminated row's TD error r - V-hat(u) carries the
  final reward's own noise (a Bernoulli payout 16 steps after the choice that decided it: +0.3 / -0.7 where
  A^pi is about 0). ``terminal=k`` in [0, 1] uses m_u + k (r - m_u) for r in that error, m_u the mean reward
  of the scope's terminated rows at u (``k=1``: plain TD; ``k=0``: the node's mean outcome); values are
  unchanged (:func:`~agentgym_credit.credit.graph_tail.terminal_rewards`). Default 0.5.
- **Heavy tails** (``tail``, issue 41): ``"none"``, ``"clip"`` (each row clipped to +-``tail_k`` times
  its scope's root mean square advantage) or ``"rank"`` (signed ranks of |A| per scope, rescaled to the
  scope's RMS), applied last (:func:`~agentgym_credit.credit.graph_tail.shape_tail`). Default ``"clip"`` at 3.

  **Defaults** (issue 41, ``benchmarks/exact/graph_credit_tuning.md``): ``shrink=0.25``, ``terminal=0.5``,
  ``tail="clip"`` at 3, and on ``obs_key`` ``loops="events"`` with ``alias="fallback"``: the smallest worst
  regret (mean Pearson with the exact A^pi) over the 72 tuning cells among settings whose every level passes a
  learning guard (each level alone keeps ``graph[obs]``'s tabular training on AliasedGrid and household-small
  within 0.05 final success of the issue-29 defaults: ``benchmarks/learning/graph_guard.md``). The rule as first
  registered (a kurtosis criterion instead of the guard) picked ``shrink=0``, ``tail="rank"``, ``loops="none"``:
  it learned household-small to 0.59-0.63 and AliasedGrid to 0.30 final success where the defaults reach 0.99
  and 1.0, so the criterion was withdrawn (``benchmarks/credit_heldout.split.md``, fourth addendum). Judged on
  held-out families in ``benchmarks/exact/graph_credit_heldout.md``. ``graph(..., shrink=0.5, terminal=1,
  tail="none")`` is the issue-29 default.

A group with one trajectory is valid (its graph is its own path: with ``shrink=0`` TD credit is 0
except where it revisits nodes; with shrinkage its values lean toward its own mean return). NaN
rewards are refused by :class:`StepArrays`. Cost: node coding in an open hash table (linear), a
handful of segmented scans, and one dense solve per scope of size = nodes met at least twice
(batched); a back-off solves two graphs, ``alias="fallback"`` one more where it cuts an edge
(``benchmarks/credit_speed.md``).
"""

from __future__ import annotations

import numpy as np

from agentgym_credit.credit import checks
from agentgym_credit.credit.episode import episode_advantage
from agentgym_credit.credit.graph_model import base_keys, code_nodes, scan, scan_coef, solve_values, walk
from agentgym_credit.credit.graph_shrink import shrink_option, shrink_values
from agentgym_credit.credit.graph_tail import shape_tail, tail_option, terminal_rewards
from agentgym_credit.credit.grouping import mix64
from agentgym_credit.credit.returns import penalty
from agentgym_credit.credit.steps import StepArrays
from agentgym_credit.errors import StepArraysError
from agentgym_credit.keys import MISSING

SCOPES = ("group", "task", "batch")
TRUNCATIONS = ("zero", "bootstrap")
LOOPS = ("auto", "none", "mc", "split", "events")
ALIAS = ("auto", "none", "fallback")
_GAP_TOL = 1e-9
_T_SALT = np.uint64(0xD6E8FEB86659FD93)
_E_SALT = np.uint64(0x9E6C63D0676A9A99)


def graph_nodes(steps: StepArrays, *, key: str = "state_key", level: int = 0, scope: str = "group",
                time_aware: bool = False, loops: str = "none", truncation: str = "zero"):
    """Sorted walk, node of each sorted row, next node (-1: value 0), node scopes, self-loop flags.

    Returns ``(w, node, nxt, node_scope, loop)`` with everything in (trajectory, t) order."""
    w = walk(steps)
    n = steps.n
    k = base_keys(steps, key, level)[w.order]
    sc = _scope_ids(steps, scope)[w.order]
    final = None
    if truncation == "bootstrap" and key != "history":
        col = steps.final_state_key if key == "state_key" else steps.final_obs_key
        if col is not None:
            final = col[w.order]
    # the key after each row (sorted): the next row's, or the recorded final key on last rows
    k_next = np.empty(n, np.uint64)
    k_next[:-1] = k[1:]
    if n:
        k_next[w.last] = np.uint64(MISSING) if final is None else final[w.last]
    has_next = ~w.last | (k_next != np.uint64(MISSING))
    valid = steps.valid[w.order]
    loop = valid & has_next & (k_next == k)
    kk, kn = k, k_next
    if loops == "split":
        c = _count_before(loop, w)
        kk = mix64(c, k)
        kn = mix64(c + loop, k_next)
    elif loops == "events":
        ko = k  # events are self-loops of what the agent sees: the observation (obs_key) for history keys too
        if key == "history":
            ko = steps.obs_key[w.order]
            ko_next = np.empty(n, np.uint64)
            ko_next[:-1] = ko[1:]
            if n:
                ko_next[w.last] = np.uint64(MISSING)
            loop = valid & ~w.last & (ko_next == ko)
        first = _first_loops(loop, ko, w)
        e = _events_before(first, w)
        kk = mix64(e, k)
        kn = mix64(e ^ first, k_next)
    if time_aware:
        t = steps.t[w.order]
        kk = mix64(t, kk ^ _T_SALT)
        kn = mix64(t + 1, kn ^ _T_SALT)
    boot = w.last & ~w.ended & has_next & (truncation == "bootstrap")
    bi = np.flatnonzero(boot)
    code, node_scope = code_nodes(np.r_[sc, sc[bi]], np.r_[kk, kn[bi]])
    node = code[:n]
    count = np.bincount(node, minlength=len(node_scope))
    nxt = np.full(n, -1, np.int64)
    nxt[:-1] = node[1:]
    nxt[w.last] = -1
    fb = code[n:]
    acted = count[fb] > 0  # bootstrap only to nodes the scope acted in (others have no value estimate)
    nxt[bi[acted]] = fb[acted]
    return w, node, nxt, node_scope, loop


def _count_before(flag: np.ndarray, w) -> np.ndarray:
    """Per sorted row: how many rows before it in its trajectory have ``flag``."""
    c = np.cumsum(flag) - flag
    first = np.r_[True, w.last[:-1]]
    return c - np.maximum.accumulate(np.where(first, c, 0))


def _first_loops(loop: np.ndarray, k: np.ndarray, w) -> np.ndarray:
    """Per sorted row: a hash of its key if it is its trajectory's FIRST self-loop at that key, else 0."""
    n = len(k)
    seg = np.cumsum(np.r_[True, w.last[:-1]]) - 1 if n else np.zeros(0, np.int64)
    x = np.zeros(n, np.uint64)
    li = np.flatnonzero(loop)
    if len(li):
        pair = mix64(seg[li], k[li] ^ _E_SALT)
        _, first = np.unique(pair, return_index=True)
        fi = li[first]
        x[fi] = mix64(np.zeros(len(fi), np.int64), k[fi] ^ _E_SALT) | np.uint64(1)
    return x


def _events_before(x: np.ndarray, w) -> np.ndarray:
    """Per sorted row: the XOR of ``x`` (:func:`_first_loops`) over the rows before it in its trajectory (a
    set hash of the distinct keys at which the trajectory has looped so far)."""
    if not len(x):
        return x
    acc = np.bitwise_xor.accumulate(x) ^ x  # exclusive prefix XOR over all rows
    first = np.r_[True, w.last[:-1]]
    start = np.flatnonzero(first)
    seg = np.cumsum(first) - 1
    return acc ^ acc[start][seg]


def _scope_ids(steps: StepArrays, scope: str) -> np.ndarray:
    """int64 scope of each row: its group, its task (``task_key`` coded densely) or 0 for the whole batch."""
    if scope == "group":
        return steps.group_id
    if scope == "task":
        if steps.task_key is None:
            raise StepArraysError("scope='task' needs steps.task_key (one key per task; RolloutBatch.to_steps "
                                  "fills it from task_id): give it, or use scope='group' / 'batch'")
        return np.unique(steps.task_key, return_inverse=True)[1].astype(np.int64).reshape(-1)
    return np.zeros(steps.n, np.int64)


OBS_LOOPS = "events"
"""What ``graph``'s ``loops="auto"`` means on ``obs_key`` (issue 41's guarded tuning rule kept it)."""


def auto_loops(loops: str, key: str, obs: str = "events") -> str:
    """``loops="auto"`` resolved: ``obs`` on ``obs_key`` (what the agent sees: ``graph`` passes
    :data:`OBS_LOOPS`, ``graph_q`` the default ``"events"``), ``"none"`` on a true ``state_key`` (its
    self-loops are real no-ops) and ``"split"`` on a ``history`` key."""
    if loops != "auto":
        return loops
    return {"state_key": "none", "obs_key": obs}.get(key, "split")


def default_backoff(backoff: float | None, loops: str) -> float:
    """``backoff=None`` resolved: 4 for ``loops="split"``, 0 otherwise (an ``events`` node is a finer, less
    aliased node than its unsplit one: leaning on the unsplit graph would bring the aliasing back)."""
    return (4.0 if loops == "split" else 0.0) if backoff is None else backoff


def checked_options(*, gamma: float, lam: float, key: str, scope: str, truncation: str, loops: str, shrink: float,
                    backoff: float | None, episode: float, invalid_penalty: float,
                    time_aware: bool) -> tuple[float, float, float, float, float, float]:
    """The options :func:`graph` (and ``graph_q``) share, checked: ``(gamma, lam, shrink, backoff, episode,
    invalid_penalty)`` as floats (``backoff=None``: :func:`default_backoff` of ``loops`` after
    :func:`auto_loops`); a named ``ValueError``/``TypeError`` for a bad one."""
    gamma = checks.unit_interval("gamma", gamma)
    lam = checks.unit_interval("lam", lam)
    checks.choice("key", key, ("state_key", "obs_key", "history"))
    checks.choice("scope", scope, SCOPES)
    checks.choice("truncation", truncation, TRUNCATIONS)
    checks.choice("loops", loops, LOOPS)
    shrink = shrink_option(shrink)
    if backoff is not None:
        backoff = checks.positive("backoff", backoff, allow_zero=True)
    backoff = default_backoff(backoff, auto_loops(loops, key))
    episode = checks.finite("episode", episode)
    invalid_penalty = checks.finite("invalid_penalty", invalid_penalty)
    if not isinstance(time_aware, (bool, np.bool_)):
        raise TypeError(f"time_aware must be a bool; got {time_aware!r}")
    return gamma, lam, shrink, backoff, episode, invalid_penalty


def graph(steps: StepArrays, *, gamma: float = 0.95, lam: float = 0.0, key: str = "state_key", level: int = 0,
          scope: str = "group", time_aware: bool = False, truncation: str = "zero", loops: str = "auto",
          backoff: float | None = None, shrink: float | str = 0.25, episode: float = 0.0, invalid_penalty: float = 0.0,
          propagate_penalty: bool = False, alias: str = "auto", alias_z: float = 0.5, terminal: float = 0.5,
          tail: str = "clip", tail_k: float = 3.0) -> np.ndarray:
    """Certainty-equivalence TD(lam) advantage on the empirical graph (float64, input order)."""
    checks.as_steps(steps)
    gamma, lam, shrink, backoff, episode, invalid_penalty = checked_options(
        gamma=gamma, lam=lam, key=key, scope=scope, truncation=truncation, loops=loops, shrink=shrink,
        backoff=backoff, episode=episode, invalid_penalty=invalid_penalty, time_aware=time_aware)
    checks.choice("alias", alias, ALIAS)
    alias_z = checks.positive("alias_z", alias_z, allow_zero=True)
    alias = auto_alias(alias, key)
    loops = auto_loops(loops, key, obs=OBS_LOOPS)
    terminal = checks.unit_interval("terminal", terminal)
    tail, tail_k = tail_option(tail, tail_k)
    if steps.n == 0:
        base_keys(steps, key, level)
        return np.zeros(0)
    p = penalty(steps, invalid_penalty)
    r = (steps.reward + p if propagate_penalty else steps.reward)
    w, node, nxt, v, loop = graph_values(steps, r, gamma=gamma, key=key, level=level, scope=scope,
                                         time_aware=time_aware, truncation=truncation, loops=loops,
                                         backoff=backoff, shrink=shrink)
    r = r[w.order]
    r_td = terminal_rewards(r, node, w.ended, terminal)  # noisy terminal rows (graph_tail): the TD errors only
    if alias == "fallback":
        adv_sorted, v = _fallback(steps, r, w, node, nxt, v, gamma=gamma, lam=lam, scope=scope, shrink=shrink,
                                  z=alias_z, r_td=r_td)
    else:
        v_next = np.where(nxt >= 0, v[np.maximum(nxt, 0)], 0.0)
        adv_sorted = scan(r_td + gamma * v_next - v[node], w.last, gamma * lam, w.max_length)
    if loops == "mc" and np.any(loop):  # a self-loop's credit: its own Monte-Carlo return minus V-hat(u)
        ret = scan(r, w.last, gamma, w.max_length)
        adv_sorted[loop] = ret[loop] - v[node[loop]]
    out = finish(steps, w.order, adv_sorted, p, episode, invalid_penalty, propagate_penalty)
    return shape_tail(out, _scope_ids(steps, scope), tail, tail_k)


def auto_alias(alias: str, key: str) -> str:
    """``alias="auto"`` resolved: ``"fallback"`` on ``obs_key`` (what the agent sees may hide state),
    ``"none"`` on every other key."""
    if alias != "auto":
        return alias
    return "fallback" if key == "obs_key" else "none"


def mixed_edges(node: np.ndarray, nxt: np.ndarray, v: np.ndarray, ret: np.ndarray, w, node_scope: np.ndarray,
                z: float) -> np.ndarray:
    """Sorted rows whose bootstrap on the next node would mix hidden states (bool per sorted row).

    An edge e = (u, u') of the graph is the set of rows at u whose trajectory goes on to u'. If u' were a
    Markov node, what those rows went on to earn after u' (their discounted Monte-Carlo returns from u',
    G') would average V(u') whatever edge brought them there; the certainty-equivalence V-hat(u') pools
    every arrival. An edge is *mixed* when |mean_e G' - V-hat(u')| > z * s / sqrt(n_e), n_e its rows and
    s the standard deviation of the returns over the scope: the trajectories that come in this way
    continue differently from the node's other visitors, so u' merges states this edge can tell apart
    (in a deterministic task a hidden state: what is carried, a switch pressed elsewhere)."""
    n = len(node)
    inner = ~w.last & (nxt >= 0)
    out = np.zeros(n, bool)
    if not np.any(inner):
        return out
    idx = np.flatnonzero(inner)
    cont = ret[idx + 1]
    e, _ = code_nodes(node[idx], nxt[idx].astype(np.uint64))
    ne = np.bincount(e)
    gap = np.bincount(e, weights=cont - v[nxt[idx]]) / ne
    _, sc = np.unique(node_scope[node], return_inverse=True)
    ns = np.bincount(sc)
    ms = np.bincount(sc, weights=ret) / ns
    sd = np.sqrt(np.bincount(sc, weights=(ret - ms[sc]) ** 2) / ns)[sc]
    out[idx] = np.abs(gap[e]) > z * sd[idx] / np.sqrt(ne[e]) + _GAP_TOL  # rounding never cuts an edge
    return out


def _fallback(steps: StepArrays, r: np.ndarray, w, node: np.ndarray, nxt: np.ndarray, v: np.ndarray, *, gamma: float,
              lam: float, scope: str, shrink: float, z: float, r_td: np.ndarray | None = None) -> np.ndarray:
    """``alias="fallback"``: TD(lam) on the graph, except that a row on a mixed edge (:func:`mixed_edges`) does
    not bootstrap on the node it reaches: its target runs on along its own trajectory (lam = 1) to the next
    row that does bootstrap, in the values (one more solve with those edges cut, no back-off) and in its
    advantage. Returns the sorted advantages and the values used. ``r_td``: the rewards of the TD errors
    (:func:`~agentgym_credit.credit.graph_tail.terminal_rewards`; default ``r``), the values always use ``r``."""
    ret = scan(r, w.last, gamma, w.max_length)
    node_scope = _node_scope_of(steps, w, node, scope, len(v))
    cut = mixed_edges(node, nxt, v, ret, w, node_scope, z)
    v2 = v
    if np.any(cut):
        force = np.unique(nxt[w.last & (nxt >= 0)])
        v2 = solve_values(node, nxt, r, w, node_scope, gamma, force_hub=force, through=cut, guess=v)
        v2 = shrink_values(v2, node, nxt, node_scope, r, w, gamma, shrink)
    v_next = np.where(nxt >= 0, v2[np.maximum(nxt, 0)], 0.0)
    coef = np.where(cut, gamma, gamma * lam)
    # A_p = delta_p + coef_p A_{p+1}: on a cut edge V2 of the next node cancels (coef gamma), so A_p is the
    # return along the row's own trajectory up to the next bootstrap, minus V2(u_p)
    r_td = r if r_td is None else r_td
    return scan_coef(r_td + gamma * v_next - v2[node], coef, w.last, w.max_length), v2


def _node_scope_of(steps: StepArrays, w, node: np.ndarray, scope: str, m: int) -> np.ndarray:
    """Scope id of every node (from its rows)."""
    out = np.zeros(m, np.int64)
    out[node] = _scope_ids(steps, scope)[w.order]
    return out


def finish(steps: StepArrays, order: np.ndarray, adv_sorted: np.ndarray, p: np.ndarray, episode: float,
           invalid_penalty: float, propagate_penalty: bool) -> np.ndarray:
    """Advantages of sorted rows back in input order, plus the row's own penalty (when it does not
    propagate) and ``episode`` times GRPO's episode advantage."""
    out = np.empty(steps.n)
    out[order] = adv_sorted
    if not propagate_penalty:
        out += p
    if episode != 0.0:
        out += episode * episode_advantage(steps, invalid_penalty=invalid_penalty,
                                           propagate_penalty=propagate_penalty)
    return out


def graph_values(steps: StepArrays, reward: np.ndarray, *, gamma: float, key: str, level: int, scope: str,
                 time_aware: bool, truncation: str, loops: str, backoff: float, shrink: float):
    """The node values :func:`graph` bootstraps on (options already checked; ``loops`` not ``"auto"``).

    ``reward`` is per input row. Returns ``(w, node, nxt, v, loop)``: the sorted walk, the node of each
    sorted row, its next node (-1: value 0), V-hat of every node (after back-off and shrinkage) and the
    self-loop flags."""
    w, node, nxt, node_scope, loop = graph_nodes(steps, key=key, level=level, scope=scope, time_aware=time_aware,
                                                 loops=loops, truncation=truncation)
    r = reward[w.order]
    force = np.unique(nxt[w.last & (nxt >= 0)])
    v = solve_values(node, nxt, r, w, node_scope, gamma, force_hub=force)
    if loops in ("split", "events") and backoff > 0.0:  # split nodes lean on their unsplit node where they are thin
        _, node0, nxt0, scope0, _ = graph_nodes(steps, key=key, level=level, scope=scope, time_aware=time_aware,
                                                loops="none", truncation=truncation)
        v0 = solve_values(node0, nxt0, r, w, scope0, gamma, force_hub=np.unique(nxt0[w.last & (nxt0 >= 0)]))
        base = np.zeros(len(v), np.int64)
        base[node] = node0
        cnt = np.bincount(node, minlength=len(v))
        v = np.where(cnt > 0, (cnt * v + backoff * v0[base]) / (cnt + backoff), v)
    v = shrink_values(v, node, nxt, node_scope, r, w, gamma, shrink)
    return w, node, nxt, v, loop


__all__ = ["graph", "graph_nodes", "graph_values", "checked_options", "auto_loops", "auto_alias", "default_backoff",
           "finish", "mixed_edges", "OBS_LOOPS", "SCOPES", "TRUNCATIONS", "LOOPS", "ALIAS"]
