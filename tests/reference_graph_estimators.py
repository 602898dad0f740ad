"""Plain-Python references of the graph estimators (``graph``, ``graph_q``, ``graphgpo``, ``gagpo``).

Dicts and loops over rows, no numpy, no chain folding: the value equations of ``graph`` are solved
over EVERY node by Gauss-Jordan elimination, GraphGPO's distances by a breadth-first search per
group. Same option names and defaults as :mod:`agentgym_credit.credit.graph`, :mod:`~agentgym_credit.credit.graph_q`,
:mod:`~agentgym_credit.credit.graphgpo` and :mod:`~agentgym_credit.credit.gagpo`; results are lists
of floats in input-row order.
"""

from __future__ import annotations

import math
from collections import deque

MISSING = 0


def _default_episode(steps, norm, std, eps, episode_baseline, invalid_penalty, propagate_penalty):
    from reference_estimators import _episode, _Rows

    return _episode(_Rows(steps), norm, std, eps, episode_baseline, invalid_penalty, propagate_penalty)


EPISODE = _default_episode
"""GiGPO's episode term (reference_estimators' ``_episode``); replaced when that module loads this one."""


def _trajs(steps):
    """{traj: [rows in t order]} and the plain columns."""
    tr = {}
    for i, j in enumerate(steps.traj_id.tolist()):
        tr.setdefault(j, []).append(i)
    t = steps.t.tolist()
    for j in tr:
        tr[j].sort(key=lambda i: t[i])
    return tr


def _key(steps, key, level, i):
    if key == "history":
        return int(steps.history_keys[i, min(level, int(steps.t[i]))])
    return int(getattr(steps, key)[i])


def _disc_returns(steps, tr, gamma, rew):
    ret = [0.0] * steps.n
    for rows in tr.values():
        acc = 0.0
        for i in reversed(rows):
            acc = rew[i] + gamma * acc
            ret[i] = acc
    return ret


def _solve(a, b):
    """Gauss-Jordan with partial pivoting on lists (a: n x n)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        piv = max(range(c, n), key=lambda r: abs(m[r][c]))
        if abs(m[piv][c]) < 1e-300:
            raise ValueError("singular")
        m[c], m[piv] = m[piv], m[c]
        for r in range(n):
            if r != c and m[r][c] != 0.0:
                f = m[r][c] / m[c][c]
                for k in range(c, n + 1):
                    m[r][k] -= f * m[c][k]
    return [m[i][n] / m[i][i] for i in range(n)]


def _dense_values(at, lands):
    """V(u) = mean over the rows i at u of (x_i + d_i V(target_i)), ``lands[i] = (x_i, d_i, target_i or None)``;
    one dense system per scope (nodes never link across scopes)."""
    v = {}
    for sc in sorted({u[0] for u in at}):
        nodes = sorted(u for u in at if u[0] == sc)
        idx = {u: j for j, u in enumerate(nodes)}
        a = [[0.0] * len(nodes) for _ in nodes]
        b = [0.0] * len(nodes)
        for u in nodes:
            ju = idx[u]
            a[ju][ju] += 1.0
            for i in at[u]:
                x, d, tgt = lands[i]
                b[ju] += x / len(at[u])
                if tgt is not None:
                    a[ju][idx[tgt]] -= d / len(at[u])
        v.update(zip(nodes, _solve(a, b)))
    return v


def _auto(loops, key, backoff, obs="events"):
    if loops == "auto":
        loops = {"state_key": "none", "obs_key": obs}.get(key, "split")
    if backoff is None:
        backoff = 4.0 if loops == "split" else 0.0
    return loops, backoff


def ref_graph(steps, *, gamma=0.95, lam=0.0, key="state_key", level=0, scope="group", time_aware=False,
              truncation="zero", loops="auto", backoff=None, shrink=0.25, episode=0.0, invalid_penalty=0.0,
              propagate_penalty=False, alias="auto", alias_z=0.5, terminal=0.5, tail="clip", tail_k=3.0):
    if alias == "auto":
        alias = "fallback" if key == "obs_key" else "none"
    loops, backoff = _auto(loops, key, backoff)
    if loops in ("split", "events") and backoff > 0:
        opts = dict(gamma=gamma, key=key, level=level, scope=scope, time_aware=time_aware, truncation=truncation)
        v_split, node_s, _ = _values(steps, loops=loops, invalid_penalty=invalid_penalty,
                                     propagate_penalty=propagate_penalty, **opts)
        v_base, node_b, _ = _values(steps, loops="none", invalid_penalty=invalid_penalty,
                                    propagate_penalty=propagate_penalty, **opts)
        count = {}
        for i in range(steps.n):
            count[node_s[i]] = count.get(node_s[i], 0) + 1
        blend = {node_s[i]: (count[node_s[i]] * v_split[node_s[i]] + backoff * v_base[node_b[i]])
                 / (count[node_s[i]] + backoff) for i in range(steps.n)}
    else:
        blend = None
    out = _graph_adv(steps, gamma, lam, key, level, scope, time_aware, truncation, loops, shrink, episode,
                     invalid_penalty, propagate_penalty, blend, alias, alias_z, terminal)
    return _tail(out, [_scope_of(steps, scope, i) for i in range(steps.n)], tail, tail_k)


def _scope_of(steps, scope, i):
    if scope == "group":
        return int(steps.group_id[i])
    return int(steps.task_key[i]) if scope == "task" else 0


def _tail(adv, scope, tail, k):
    """graph_tail.shape_tail with loops: clip at k x the scope's RMS, or signed mean ranks of |A| rescaled."""
    if tail == "none":
        return adv
    members = {}
    for i, sc in enumerate(scope):
        members.setdefault(sc, []).append(i)
    out = list(adv)
    for rows in members.values():
        rms = math.sqrt(sum(adv[i] ** 2 for i in rows) / len(rows))
        if tail == "clip":
            for i in rows:
                out[i] = min(k * rms, max(-k * rms, adv[i]))
            continue
        nz = sorted((abs(adv[i]), i) for i in rows if abs(adv[i]) > 1e-6 * rms)
        rank, q = {}, 0
        while q < len(nz):  # a run of sorted neighbours within 1e-6 x RMS of each other ties
            e = q
            while e + 1 < len(nz) and nz[e + 1][0] - nz[e][0] <= 1e-6 * rms:
                e += 1
            for j in range(q, e + 1):
                rank[nz[j][1]] = (q + e) / 2 + 1
            q = e + 1
        raw = {i: math.copysign(rank[i], adv[i]) if i in rank else 0.0 for i in rows}
        new = math.sqrt(sum(x * x for x in raw.values()) / len(rows))
        for i in rows:
            out[i] = raw[i] * rms / new if new > 0 else 0.0
    return out


def _values(steps, *, gamma, key, level, scope, time_aware, truncation, loops, invalid_penalty, propagate_penalty):
    """(V per node, node per row, next node per row) of the empirical graph."""
    g = _Graph(steps, gamma, key, level, scope, time_aware, truncation, loops, invalid_penalty, propagate_penalty)
    return g.v, g.node, g.nxt


def _graph_adv(steps, gamma, lam, key, level, scope, time_aware, truncation, loops, shrink, episode,
               invalid_penalty, propagate_penalty, blend, alias="none", alias_z=0.5, terminal=1.0):
    g = _Graph(steps, gamma, key, level, scope, time_aware, truncation, loops, invalid_penalty, propagate_penalty)
    if blend is not None:
        g.v = {u: blend.get(u, val) for u, val in g.v.items()}
    return g.advantages(lam, shrink, episode, alias, alias_z, terminal)


class _Graph:
    def __init__(self, steps, gamma, key, level, scope, time_aware, truncation, loops, invalid_penalty,
                 propagate_penalty):
        self.steps, self.gamma, self.loops = steps, gamma, loops
        self.invalid_penalty, self.propagate_penalty = invalid_penalty, propagate_penalty
        self._build(key, level, scope, time_aware, truncation)

    def _build(self, key, level, scope, time_aware, truncation):
        steps, gamma, loops = self.steps, self.gamma, self.loops
        n = steps.n
        tr = _trajs(steps)
        valid = steps.valid.tolist()
        pen = [0.0 if valid[i] else self.invalid_penalty for i in range(n)]
        rew = [float(steps.reward[i]) + (pen[i] if self.propagate_penalty else 0.0) for i in range(n)]
        term = (steps.done if steps.terminated is None else steps.terminated).tolist()
        final_col = None
        if truncation == "bootstrap" and key != "history":
            c = steps.final_state_key if key == "state_key" else steps.final_obs_key
            final_col = None if c is None else c.tolist()
        node, nxt, loop = {}, {}, {}
        obs = steps.obs_key.tolist()
        for rows in tr.values():
            count = 0
            events = frozenset()  # loops="events": the observations this trajectory has looped at so far
            for pos, i in enumerate(rows):
                sc = int(steps.group_id[i]) if scope == "group" else 0
                k = _key(steps, key, level, i)
                if pos + 1 < len(rows):
                    kn = _key(steps, key, level, rows[pos + 1])
                else:
                    kn = final_col[i] if final_col is not None else MISSING
                loop[i] = valid[i] and kn != MISSING and kn == k
                if loops == "events" and key == "history":  # events are self-loops of the observation
                    loop[i] = valid[i] and pos + 1 < len(rows) and obs[rows[pos + 1]] == obs[i]
                c_here, e_here = count, events
                if loops == "split" and loop[i]:
                    count += 1
                if loops == "events" and loop[i]:
                    events = events | {obs[i] if key == "history" else k}
                t = int(steps.t[i])
                tag = c_here if loops == "split" else (e_here if loops == "events" else 0)
                tag_next = count if loops == "split" else (events if loops == "events" else 0)
                node[i] = (sc, k, tag, t if time_aware else 0)
                nxt_t = (sc, kn, tag_next, t + 1 if time_aware else 0)
                if pos + 1 < len(rows):
                    nxt[i] = nxt_t
                elif term[i] or truncation == "zero" or kn == MISSING:
                    nxt[i] = None
                else:
                    nxt[i] = nxt_t
        at = {}
        for i in range(n):
            at.setdefault(node[i], []).append(i)
        for i in range(n):
            if nxt[i] is not None and nxt[i] not in at:
                nxt[i] = None  # bootstrap only to nodes acted in
        v = _dense_values(at, {i: (rew[i], gamma, nxt[i]) for i in range(n)})
        self.tr, self.pen, self.rew, self.node, self.nxt, self.loop, self.at, self.v = tr, pen, rew, node, nxt, loop, at, v
        self.ended = {rows[-1] for rows in tr.values() if term[rows[-1]]}

    def _shrunk(self, v, shrink):
        steps, at, node = self.steps, self.at, self.node
        if shrink == "auto":
            return self._shrunk_auto(v)
        if shrink <= 0:
            return v
        ret = _disc_returns(steps, self.tr, self.gamma, self.rew)
        base = {}
        for i in range(steps.n):
            base.setdefault(node[i][0], []).append(ret[i])
        return {u: (len(at[u]) * v[u] + shrink * sum(base[u[0]]) / len(base[u[0]])) / (len(at[u]) + shrink)
                for u in at}

    def _shrunk_auto(self, v):
        """shrink='auto' (graph_shrink's docstring), one scope at a time with plain loops."""
        steps, at, nxt, gamma = self.steps, self.at, self.nxt, self.gamma
        ret = _disc_returns(steps, self.tr, gamma, self.rew)
        y = {i: self.rew[i] + (gamma * v[nxt[i]] if nxt[i] is not None else 0.0) for i in range(steps.n)}
        scopes = {}
        for u in at:
            scopes.setdefault(u[0], []).append(u)
        out = dict(v)
        for units in scopes.values():
            rows = [i for u in units for i in at[u]]
            b = sum(ret[i] for i in rows) / len(rows)
            ss_w, df_w = 0.0, 0
            for u in units:
                ybar = sum(y[i] for i in at[u]) / len(at[u])
                ss_w += sum((y[i] - ybar) ** 2 for i in at[u])
                df_w += len(at[u]) - 1
            if df_w > 0:
                s2 = ss_w / df_w
            else:
                ym = sum(y[i] for i in rows) / len(rows)
                s2 = sum((y[i] - ym) ** 2 for i in rows) / len(rows)
            dev2 = sum((v[u] - b) ** 2 for u in units) / len(units)
            noise = sum(s2 / len(at[u]) for u in units) / len(units)
            tau2 = max(0.0, dev2 - noise)
            for u in units:
                n_u = len(at[u])
                wgt = s2 / (s2 + n_u * tau2) if s2 + n_u * tau2 > 0 else 0.0
                c = math.sqrt(s2 / n_u)
                out[u] = v[u] + min(c, max(-c, wgt * (b - v[u])))
        return out

    def _cut_edges(self, v, z):
        """alias='fallback': rows whose edge (u, u') continues unlike u''s other arrivals (see graph.mixed_edges)."""
        steps, gamma, node, nxt = self.steps, self.gamma, self.node, self.nxt
        ret = _disc_returns(steps, self.tr, gamma, self.rew)
        by_scope = {}
        for i in range(steps.n):
            by_scope.setdefault(node[i][0], []).append(ret[i])
        sd = {}
        for sc, xs in by_scope.items():
            mu = sum(xs) / len(xs)
            sd[sc] = math.sqrt(sum((x - mu) ** 2 for x in xs) / len(xs))
        edges = {}
        for rows in self.tr.values():
            for pos, i in enumerate(rows[:-1]):
                edges.setdefault((node[i], nxt[i]), []).append((i, ret[rows[pos + 1]] - v[nxt[i]]))
        cut = set()
        for (u, _), members in edges.items():
            gap = sum(d for _, d in members) / len(members)
            if abs(gap) > z * sd[u[0]] / math.sqrt(len(members)) + 1e-9:
                cut.update(i for i, _ in members)
        return cut

    def _resolve(self, cut):
        """V over every node when cut rows run on along their trajectory (no bootstrap on the node after)."""
        gamma, nxt, rew, at = self.gamma, self.nxt, self.rew, self.at
        lands = {}  # row -> (discounted rewards until it bootstraps, discount, node it bootstraps on or None)
        for rows in self.tr.values():
            for pos, i in enumerate(rows):
                x, d, q = 0.0, 1.0, pos
                while True:
                    j = rows[q]
                    x += d * rew[j]
                    d *= gamma
                    if j in cut:
                        q += 1
                        continue
                    lands[i] = (x, d, nxt[j])
                    break
        return _dense_values(at, lands)

    def advantages(self, lam, shrink, episode, alias="none", alias_z=0.5, terminal=1.0):
        steps, gamma, n = self.steps, self.gamma, self.steps.n
        tr, pen, rew, node, nxt, loop, v = self.tr, self.pen, self.rew, self.node, self.nxt, self.loop, self.v
        ends = {}  # terminal=k: a terminated row's TD reward is m_u + k (r - m_u), m_u its node's mean final reward
        for i in self.ended:
            ends.setdefault(node[i], []).append(rew[i])
        r_td = {i: (sum(ends[node[i]]) / len(ends[node[i]]) * (1 - terminal) + terminal * rew[i]
                    if i in self.ended else rew[i]) for i in range(n)}
        v = self._shrunk(v, shrink)
        cut = set()
        if alias == "fallback":
            cut = self._cut_edges(v, alias_z)
            if cut:
                v = self._shrunk(self._resolve(cut), shrink)
        out = [0.0] * n
        mc_ret = _disc_returns(steps, tr, gamma, rew)
        for rows in tr.values():
            acc = 0.0
            for pos in range(len(rows) - 1, -1, -1):
                i = rows[pos]
                vn = v[nxt[i]] if nxt[i] is not None else 0.0
                delta = r_td[i] + gamma * vn - v[node[i]]
                c = gamma if i in cut else gamma * lam
                acc = delta + (c * acc if pos + 1 < len(rows) else 0.0)
                out[i] = mc_ret[i] - v[node[i]] if (self.loops == "mc" and loop[i]) else acc
        out = [out[i] + (0.0 if self.propagate_penalty else pen[i]) for i in range(n)]
        if episode:
            ep = EPISODE(steps, "mean_std", "sample", 1e-6, "trajectory", self.invalid_penalty, self.propagate_penalty)
            out = [out[i] + episode * ep[i] for i in range(n)]
        return out


def _norm_groups(vals, groups, norm, std, eps):
    out = [0.0] * len(vals)
    for members in groups.values():
        if len(members) < 2:
            continue
        xs = [vals[i] for i in members]
        if all(x == xs[0] for x in xs):
            continue
        mu = sum(xs) / len(xs)
        ddof = 1 if std == "sample" else 0
        sd = math.sqrt(sum((x - mu) ** 2 for x in xs) / (len(xs) - ddof))
        for i in members:
            out[i] = (vals[i] - mu) / (sd + eps) if norm == "mean_std" else vals[i] - mu
    return out


def ref_graphgpo(steps, *, omega=0.1, key="obs_key", level=0, normalize_distance=False, scale=10.0,
                 step_weight=1.0, episode_weight=1.0, norm="mean_std", std="sample", eps=1e-6,
                 episode_baseline="step", invalid_penalty=-0.1, lone="recipe"):
    """The recipe, step by step: distances, g_t = scale * omega^d (+ the row's own penalty when its action
    was invalid), anchor-normalized; episode scores R + the row's own penalty, normalized over the group's
    rows (a lone member: its score over mean 0, std 1 with lone='recipe')."""
    n = steps.n
    valid = steps.valid.tolist()
    pen = [0.0 if valid[i] else invalid_penalty for i in range(n)]
    tr = _trajs(steps)
    rew = steps.reward.tolist()
    final_col = None
    if key != "history":
        c = steps.final_state_key if key == "state_key" else steps.final_obs_key
        final_col = None if c is None else c.tolist()
    cur, nxt = {}, {}
    edges = {}
    dead = 0
    for rows in tr.values():
        g = int(steps.group_id[rows[0]])
        won = sum(rew[i] for i in rows) > 0
        for pos, i in enumerate(rows):
            cur[i] = (g, "k", _key(steps, key, level, i))
            if pos + 1 < len(rows):
                nxt[i] = (g, "k", _key(steps, key, level, rows[pos + 1]))
            elif won:
                nxt[i] = (g, "goal")
            elif final_col is not None and final_col[i] != MISSING:
                nxt[i] = (g, "k", final_col[i])
            else:
                dead += 1
                nxt[i] = (g, "dead", dead)
            edges.setdefault(g, []).append((cur[i], nxt[i]))
    dist = {}
    for g, es in edges.items():
        nodes = {u for e in es for u in e} | {(g, "goal")}
        rev = {}
        for u, v in es:
            rev.setdefault(v, []).append(u)
        d = {(g, "goal"): 0}
        q = deque([(g, "goal")])
        while q:
            v = q.popleft()
            for u in rev.get(v, []):
                if u not in d:
                    d[u] = d[v] + 1
                    q.append(u)
        far = max(d.values())
        for u in nodes:
            dist[u] = d.get(u, far + 1)
    gret = []
    for i in range(n):
        e = dist[nxt[i]] - dist[cur[i]] + 1 if normalize_distance else dist[nxt[i]]
        gret.append(scale * omega ** e + pen[i])
    anchors = {}
    for i in range(n):
        anchors.setdefault(cur[i], []).append(i)
    a_s = _norm_groups(gret, anchors, norm, std, eps)
    a_e = EPISODE(steps, norm, std, eps, episode_baseline, invalid_penalty, False)
    if lone == "recipe":
        ret = {}
        for rows in tr.values():
            ret[rows[0]] = sum(rew[i] for i in rows)
        traj_ret = {i: ret[rows[0]] for rows in tr.values() for i in rows}
        members = {}
        for rows in tr.values():
            g = int(steps.group_id[rows[0]])
            members.setdefault(g, []).append(rows)
        for trajs in members.values():
            if episode_baseline == "step" and sum(len(r) for r in trajs) == 1:
                i = trajs[0][0]
                score = traj_ret[i] + pen[i]
            elif episode_baseline == "trajectory" and len(trajs) == 1:
                score = traj_ret[trajs[0][0]]
            else:
                continue
            for i in (j for r in trajs for j in r):
                a_e[i] = score / (1.0 + eps) if norm == "mean_std" else score
    return [step_weight * a_s[i] + episode_weight * a_e[i] for i in range(n)]


def ref_gagpo(steps, *, gamma=0.95, lam=0.95, key="state_key", level=0, norm="mean_std", std="sample", eps=1e-6,
              invalid_penalty=0.0, propagate_penalty=False):
    n = steps.n
    tr = _trajs(steps)
    valid = steps.valid.tolist()
    pen = [0.0 if valid[i] else invalid_penalty for i in range(n)]
    rew = [float(steps.reward[i]) + (pen[i] if propagate_penalty else 0.0) for i in range(n)]
    ret = _disc_returns(steps, tr, gamma, rew)
    groups = {}
    for i in range(n):
        groups.setdefault((int(steps.group_id[i]), _key(steps, key, level, i)), []).append(i)
    v = [0.0] * n
    for members in groups.values():
        mu = sum(ret[i] for i in members) / len(members)
        for i in members:
            v[i] = mu
    adv = [0.0] * n
    for rows in tr.values():
        acc = 0.0
        for pos in range(len(rows) - 1, -1, -1):
            i = rows[pos]
            vn = v[rows[pos + 1]] if pos + 1 < len(rows) else 0.0
            delta = rew[i] + gamma * vn - v[i]
            acc = delta + (gamma * lam * acc if pos + 1 < len(rows) else 0.0)
            adv[i] = acc + (0.0 if propagate_penalty else pen[i])
    if norm == "none":
        return adv
    by_group = {}
    for i in range(n):
        by_group.setdefault(int(steps.group_id[i]), []).append(i)
    out = [0.0] * n
    for members in by_group.values():
        xs = [adv[i] for i in members]
        mu = sum(xs) / len(xs)
        if norm == "mean":
            for i in members:
                out[i] = adv[i] - mu
            continue
        ddof = 1 if std == "sample" else 0
        if len(xs) - ddof <= 0:
            continue
        sd = math.sqrt(sum((x - mu) ** 2 for x in xs) / (len(xs) - ddof))
        for i in members:
            out[i] = (adv[i] - mu) / (sd + eps)
    return out


def ref_graph_q(steps, *, gamma=0.95, lam="auto", key="state_key", level=0, center_key=None, center_level=None,
                prior=1.0, scope="group", time_aware=False, truncation="zero", loops="auto", backoff=None,
                shrink=1.0, episode=0.0, invalid_penalty=0.0, propagate_penalty=False):
    """Loops over rows: graph values (split/events back-off, shrinkage), lam-returns, node-centred baseline."""
    if lam == "auto":  # bootstrap on true states only
        lam = 0.5 if key == "state_key" else 1.0
    if loops == "auto" and key == "history":
        loops = "none"
    loops, backoff = _auto(loops, key, backoff)
    args = (steps, gamma, key, level, scope, time_aware, truncation)
    g = _Graph(*args, loops, invalid_penalty, propagate_penalty)
    n = steps.n
    v = dict(g.v)
    if loops in ("split", "events") and backoff > 0:
        g0 = _Graph(*args, "none", invalid_penalty, propagate_penalty)
        v = {u: (len(g.at[u]) * g.v[u] + backoff * g0.v[g0.node[g.at[u][0]]]) / (len(g.at[u]) + backoff)
             for u in g.at}
    if shrink == "auto":
        v = g._shrunk_auto(v)
    elif shrink > 0:
        ret = _disc_returns(steps, g.tr, gamma, g.rew)
        base = {}
        for i in range(n):
            base.setdefault(g.node[i][0], []).append(ret[i])
        v = {u: (len(g.at[u]) * v[u] + shrink * sum(base[u[0]]) / len(base[u[0]])) / (len(g.at[u]) + shrink)
             for u in g.at}
    target = [0.0] * n
    for rows in g.tr.values():
        nxt_g = None
        for pos in range(len(rows) - 1, -1, -1):
            i = rows[pos]
            vn = v[g.nxt[i]] if g.nxt[i] is not None else 0.0
            if nxt_g is None:
                target[i] = g.rew[i] + gamma * vn
            else:  # G_t = r + gamma ((1 - lam) V(s') + lam G_{t+1})
                target[i] = g.rew[i] + gamma * ((1 - lam) * vn + lam * nxt_g)
            nxt_g = target[i]
    ck = key if center_key is None else center_key
    cl = (level if ck == key else 0) if center_level is None else center_level
    groups = {}
    for i in range(n):
        sc = int(steps.group_id[i]) if scope == "group" else 0
        groups.setdefault((sc, _key(steps, ck, cl, i)), []).append(i)
    out = [0.0] * n
    for rows in groups.values():
        mean_v = sum(v[g.node[i]] for i in rows) / len(rows)
        b = (sum(target[i] for i in rows) + prior * mean_v) / (len(rows) + prior)
        for i in rows:
            out[i] = target[i] - b + (0.0 if propagate_penalty else g.pen[i])
    if episode:
        ep = EPISODE(steps, "mean_std", "sample", 1e-6, "trajectory", invalid_penalty, propagate_penalty)
        out = [out[i] + episode * ep[i] for i in range(n)]
    return out


GRAPH_REFERENCES = {"graph": ref_graph, "graph_q": ref_graph_q, "graphgpo": ref_graphgpo, "gagpo": ref_gagpo}
