"""Plain-Python reference implementations of every credit estimator, straight from DESIGN.md.

Loops and dicts over rows, no numpy tricks: these are the specification the vectorized estimators
in :mod:`agentgym_credit.credit` are checked against (tests) and timed against (the speed
benchmark). Same option names and defaults as the vectorized functions; results are lists of
floats in input-row order.

- ``ref_grpo`` / ``ref_drgrpo`` / ``ref_rloo``: episode level;
- ``ref_gigpo``: A^E + omega * A^S over anchor-state groups;
- ``ref_hgpo`` / ``ref_hgpo_precision``: hierarchy of history contexts;
- ``ref_gae`` / ``ref_mc``: value-based and Monte-Carlo references;
- ``ref_tree``: Tree-GRPO's intra-/inter-tree advantage on rollout trees;
- ``ref_group_stats``: the diagnostics;
- ``REFERENCES``: name -> function, like ``ESTIMATORS``.
"""

from __future__ import annotations

import math

MISSING = 0


class _Rows:
    """The columns of a StepArrays as Python lists, plus trajectories in time order."""

    def __init__(self, steps):
        self.n = steps.n
        self.group = steps.group_id.tolist()
        self.traj = steps.traj_id.tolist()
        self.t = steps.t.tolist()
        self.reward = steps.reward.tolist()
        self.valid = steps.valid.tolist()
        self.state = steps.state_key.tolist()
        self.obs = steps.obs_key.tolist()
        self.hist = steps.history_keys.tolist()
        self.value = None if steps.value is None else steps.value.tolist()
        trajs: dict[int, list[int]] = {}
        for i in range(self.n):
            trajs.setdefault(self.traj[i], []).append(i)
        for rows in trajs.values():
            rows.sort(key=lambda i: self.t[i])
        self.trajs = trajs


def _mean(xs):
    return sum(xs) / len(xs)


def _std(xs, ddof):
    m = _mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - ddof))


def _normalize(xs, norm, std, eps, loo=False):
    """[(x - mean(xs)) / F_norm for x in xs]; zeros for singletons and all-equal groups. ``loo``: the
    mean of the OTHER values instead of mean(xs) (same F_norm)."""
    if len(xs) < 2 or min(xs) == max(xs):
        return [0.0] * len(xs)
    f = _std(xs, 1 if std == "sample" else 0) + eps if norm == "mean_std" else 1.0
    if loo:
        total = sum(xs)
        return [(x - (total - x) / (len(xs) - 1)) / f for x in xs]
    m = _mean(xs)
    return [(x - m) / f for x in xs]


def _penalty(rows, i, invalid_penalty):
    return 0.0 if rows.valid[i] else invalid_penalty


def _rewards(rows, invalid_penalty, propagate):
    return [rows.reward[i] + (_penalty(rows, i, invalid_penalty) if propagate else 0.0) for i in range(rows.n)]


def _step_returns(rows, gamma, invalid_penalty, propagate):
    r = _rewards(rows, invalid_penalty, propagate)
    out = [0.0] * rows.n
    for idx in rows.trajs.values():
        acc = 0.0
        for i in reversed(idx):
            acc = r[i] + gamma * acc
            out[i] = acc
    if not propagate:
        out = [out[i] + _penalty(rows, i, invalid_penalty) for i in range(rows.n)]
    return out


def _episode(rows, norm, std, eps, episode_baseline, invalid_penalty, propagate_penalty, loo=False):
    r = _rewards(rows, invalid_penalty, propagate_penalty)
    ret = {tr: sum(r[i] for i in idx) for tr, idx in rows.trajs.items()}
    out = [0.0] * rows.n
    if episode_baseline == "trajectory":
        members: dict[int, list[int]] = {}
        for tr, idx in rows.trajs.items():
            members.setdefault(rows.group[idx[0]], []).append(tr)
        for trs in members.values():
            for tr, a in zip(trs, _normalize([ret[tr] for tr in trs], norm, std, eps, loo)):
                for i in rows.trajs[tr]:
                    out[i] = a
        return out
    val = [ret[rows.traj[i]] + (0.0 if propagate_penalty else _penalty(rows, i, invalid_penalty))
           for i in range(rows.n)]
    by_group: dict[int, list[int]] = {}
    for i in range(rows.n):
        by_group.setdefault(rows.group[i], []).append(i)
    for idx in by_group.values():
        for i, a in zip(idx, _normalize([val[i] for i in idx], norm, std, eps, loo)):
            out[i] = a
    return out


def ref_grpo(steps, *, norm="mean_std", std="sample", eps=1e-6, episode_baseline="trajectory",
             invalid_penalty=0.0, propagate_penalty=False, loo=False):
    return _episode(_Rows(steps), norm, std, eps, episode_baseline, invalid_penalty, propagate_penalty, loo)


def ref_drgrpo(steps, *, episode_baseline="trajectory", invalid_penalty=0.0, propagate_penalty=False):
    return _episode(_Rows(steps), "mean", "sample", 0.0, episode_baseline, invalid_penalty, propagate_penalty)


def ref_rloo(steps, *, invalid_penalty=0.0, propagate_penalty=False):
    rows = _Rows(steps)
    r = _rewards(rows, invalid_penalty, propagate_penalty)
    ret = {tr: sum(r[i] for i in idx) for tr, idx in rows.trajs.items()}
    members: dict[int, list[int]] = {}
    for tr, idx in rows.trajs.items():
        members.setdefault(rows.group[idx[0]], []).append(tr)
    out = [0.0] * rows.n
    for tr, idx in rows.trajs.items():
        mates = members[rows.group[idx[0]]]
        vals = [ret[m] for m in mates]
        if len(mates) < 2 or min(vals) == max(vals):
            continue
        others = [ret[m] for m in mates if m != tr]
        a = ret[tr] - sum(others) / len(others)
        for i in idx:
            out[i] = a
    return out


def _groups(rows, keyfn):
    """(group_id, key) -> member rows; rows whose key is None are left out."""
    g: dict[tuple, list[int]] = {}
    for i in range(rows.n):
        k = keyfn(i)
        if k is not None:
            g.setdefault((rows.group[i], k), []).append(i)
    return g


def ref_gigpo(steps, *, gamma=0.95, omega=1.0, anchor="state_key", episode_norm="mean_std",
              step_norm="mean_std", std="sample", eps=1e-6, episode_baseline="trajectory",
              invalid_penalty=0.0, propagate_penalty=False, loo=False):
    rows = _Rows(steps)
    a_e = _episode(rows, episode_norm, std, eps, episode_baseline, invalid_penalty, propagate_penalty, loo)
    ret = _step_returns(rows, gamma, invalid_penalty, propagate_penalty)
    keys = rows.state if anchor == "state_key" else rows.obs
    out = list(a_e)
    for members in _groups(rows, lambda i: keys[i]).values():
        for i, a in zip(members, _normalize([ret[i] for i in members], step_norm, std, eps, loo)):
            out[i] = a_e[i] + omega * a
    return out


def _levels(rows, ret, levels, norm, std, eps, loo=False):
    """Per row, per level: (size, mean, sample variance, deviation, A_k) of its level-k group, or None."""
    table = [[None] * levels for _ in range(rows.n)]
    for k in range(levels):
        groups = _groups(rows, lambda i, k=k: rows.hist[i][k] if rows.hist[i][k] != MISSING else None)
        for members in groups.values():
            if len(members) < 2:
                continue
            vals = [ret[i] for i in members]
            mu = _mean(vals)
            var = sum((v - mu) ** 2 for v in vals) / (len(vals) - 1)
            const = min(vals) == max(vals)
            for i, a in zip(members, _normalize(vals, norm, std, eps, loo)):
                table[i][k] = (len(vals), mu, var, 0.0 if const else ret[i] - mu, a)
    return table


def _add_episode(rows, a_h, episode, omega, episode_norm, episode_baseline, std, eps, invalid_penalty,
                 propagate_penalty, loo=False):
    if not episode:
        return a_h
    a_e = _episode(rows, episode_norm, std, eps, episode_baseline, invalid_penalty, propagate_penalty, loo)
    return [a_e[i] + omega * a_h[i] for i in range(rows.n)]


def ref_hgpo(steps, *, gamma=0.95, alpha=1.0, weights="paper", norm="mean_std", std="sample", eps=1e-6,
             zero_tol=1e-9, depth=None, episode=False, omega=1.0, episode_norm="mean_std",
             episode_baseline="trajectory", invalid_penalty=0.0, propagate_penalty=False, loo=False):
    rows = _Rows(steps)
    levels = steps.num_levels if depth is None else depth + 1
    ret = _step_returns(rows, gamma, invalid_penalty, propagate_penalty)
    table = _levels(rows, ret, levels, norm, std, eps, loo)
    out = []
    for i in range(rows.n):
        num = den = 0.0
        for k in range(levels):
            e = table[i][k]
            if e is None or abs(e[3]) <= zero_tol:
                continue
            w = (k + 1 if weights == "paper" else k + 2) ** alpha
            num += w * e[4]
            den += w
        out.append(num / den if den > 0 else 0.0)
    return _add_episode(rows, out, episode, omega, episode_norm, episode_baseline, std, eps, invalid_penalty,
                        propagate_penalty, loo)


def ref_hgpo_official(steps, *, gamma=0.95, std="population", eps=1e-6, alpha=1.0, depth=None):
    """HGPO with its authors' recipe: population std, (k+1)^alpha weights, no episode term."""
    return ref_hgpo(steps, gamma=gamma, alpha=alpha, weights="paper", norm="mean_std", std=std, eps=eps, depth=depth)


def ref_hgpo_precision(steps, *, gamma=0.95, prior_strength=2.0, norm="mean_std", std="sample", eps=1e-6,
                       depth=None, episode=False, omega=1.0, episode_norm="mean_std",
                       episode_baseline="trajectory", invalid_penalty=0.0, propagate_penalty=False):
    rows = _Rows(steps)
    levels = steps.num_levels if depth is None else depth + 1
    ret = _step_returns(rows, gamma, invalid_penalty, propagate_penalty)
    table = _levels(rows, ret, levels, norm, std, eps)
    nu = prior_strength
    out = []
    for i in range(rows.n):
        present = [k for k in range(levels) if table[i][k] is not None]
        if not present:
            out.append(0.0)
            continue
        c, f = present[0], present[-1]
        s2c = table[i][c][2]
        shrunk = {k: ((table[i][k][0] - 1) * table[i][k][2] + nu * s2c) / (table[i][k][0] - 1 + nu)
                  for k in present}
        n_f, mu_f, v_f = table[i][f][0], table[i][f][1], shrunk[f]
        num = den = 0.0
        for k in present:
            n_k, mu_k = table[i][k][0], table[i][k][1]
            b2 = 0.0 if k == f else max(0.0, (mu_k - mu_f) ** 2 - v_f * abs(1 / n_f - 1 / n_k))
            w = 1.0 / (shrunk[k] / n_k + b2 + eps * eps + 1e-300)
            num += w * table[i][k][4]
            den += w
        out.append(num / den)
    return _add_episode(rows, out, episode, omega, episode_norm, episode_baseline, std, eps, invalid_penalty,
                        propagate_penalty)


def ref_mc(steps, *, gamma=0.95, invalid_penalty=0.0, propagate_penalty=False):
    return _step_returns(_Rows(steps), gamma, invalid_penalty, propagate_penalty)


def ref_gae(steps, *, gamma=0.95, lam=0.95, invalid_penalty=0.0, propagate_penalty=False):
    rows = _Rows(steps)
    r = _rewards(rows, invalid_penalty, propagate_penalty)
    out = [0.0] * rows.n
    for idx in rows.trajs.values():
        acc = 0.0
        for j in reversed(range(len(idx))):
            i = idx[j]
            v_next = rows.value[idx[j + 1]] if j + 1 < len(idx) else 0.0
            delta = r[i] + gamma * v_next - rows.value[i]
            acc = delta + gamma * lam * acc
            out[i] = acc
    if not propagate_penalty:
        out = [out[i] + _penalty(rows, i, invalid_penalty) for i in range(rows.n)]
    return out


def ref_group_stats(steps):
    """Plain dict version of ``group_stats``: per level (frac_non_singleton, mean_group_size), aliasing."""
    rows = _Rows(steps)
    n = rows.n
    specs = {"state_key": lambda i: rows.state[i], "obs_key": lambda i: rows.obs[i]}
    for k in range(steps.num_levels):
        specs[f"history_{k}"] = lambda i, k=k: rows.hist[i][k] if rows.hist[i][k] != MISSING else None
    levels = {}
    for name, fn in specs.items():
        g = _groups(rows, fn)
        grouped = sum(len(m) for m in g.values() if len(m) >= 2)
        with_key = sum(len(m) for m in g.values())
        levels[name] = (grouped / n if n else 0.0, with_key / len(g) if g else 0.0)
    aliased = sum(len(m) for m in _groups(rows, lambda i: rows.obs[i]).values()
                  if len({rows.state[i] for i in m}) > 1)
    return levels, (aliased / n if n else 0.0)


def ref_tree(steps, *, norm="mean_std", std="sample", eps=1e-6, intra=True, inter=True, single_leaf="zero",
             prefix="mean"):
    """Tree-GRPO: per leaf (trajectory) A = intra-tree + inter-tree normalized root-to-leaf return; a row
    gets the mean A over the leaves whose path passes through it (its trajectory, and every branch,
    recursively, that left its trajectory after it). Flat StepArrays: every trajectory is its own tree.
    ``single_leaf``: a tree of one leaf adds 0 ("zero") or R ("return") to the intra term; "unit": any
    group of one leaf (a tree, or a whole group in the inter term) has mean 0 and std 1 (Tree-GRPO's code)."""
    rows = _Rows(steps)
    first = {tr: idx[0] for tr, idx in rows.trajs.items()}

    def col(name, default):
        a = getattr(steps, name, None)
        return {tr: (a[i].item() if a is not None else default(tr)) for tr, i in first.items()}

    parent = col("parent", lambda tr: -1)
    bt = col("branch_t", lambda tr: 0)
    root = col("root", lambda tr: tr)
    prefix_ret = col("prefix_return", lambda tr: 0.0)
    ret = {tr: prefix_ret[tr] + sum(rows.reward[i] for i in idx) for tr, idx in rows.trajs.items()}
    adv = dict.fromkeys(ret, 0.0)
    for by in ([("g",)] if inter else []) + ([("t",)] if intra else []):
        groups: dict[tuple, list[int]] = {}
        for tr in ret:
            key = (rows.group[first[tr]],) + ((root[tr],) if by == ("t",) else ())
            groups.setdefault(key, []).append(tr)
        for trs in groups.values():
            for tr, a in zip(trs, _normalize([ret[tr] for tr in trs], norm, std, eps)):
                adv[tr] += a
            if len(trs) == 1 and single_leaf == "unit":
                adv[trs[0]] += ret[trs[0]] / (1.0 + eps if norm == "mean_std" else 1.0)
            if by == ("t",) and len(trs) == 1 and single_leaf == "return":
                adv[trs[0]] += ret[trs[0]]
    kids: dict[int, list[int]] = {}
    for tr in ret:
        if parent[tr] in ret:
            kids.setdefault(parent[tr], []).append(tr)

    def leaves(tr):
        out = [tr]
        for c in kids.get(tr, []):
            out += leaves(c)
        return out

    out = [0.0] * rows.n
    for tr, idx in rows.trajs.items():
        for i in idx:
            through = [tr] + [x for c in kids.get(tr, []) if bt[c] > rows.t[i] for x in leaves(c)]
            vals = [adv[x] for x in through]
            out[i] = sum(vals) if prefix == "sum" else _mean(vals)
    return out


REFERENCES = {
    "grpo": ref_grpo,
    "drgrpo": ref_drgrpo,
    "rloo": ref_rloo,
    "gigpo": ref_gigpo,
    "hgpo": ref_hgpo,
    "hgpo_precision": ref_hgpo_precision,
    "hgpo-official": ref_hgpo_official,
    "gae": ref_gae,
    "mc": ref_mc,
    "tree": ref_tree,
}


def _graph_references():
    """``graph`` / ``graphgpo`` / ``gagpo`` from ``reference_graph_estimators.py`` (next to this file), with
    this module's episode term."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("_reference_graph_estimators",
                                                  Path(__file__).with_name("reference_graph_estimators.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.EPISODE = lambda steps, *args: _episode(_Rows(steps), *args)
    return mod.GRAPH_REFERENCES


REFERENCES.update(_graph_references())


def _verl_agent_reference():
    """``verl-agent`` from ``reference_verl_agent.py`` (next to this file)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("_reference_verl_agent",
                                                  Path(__file__).with_name("reference_verl_agent.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.ref_verl_agent


REFERENCES["verl-agent"] = _verl_agent_reference()


def random_batch(seed, *, n_groups=3, max_traj=16, max_len=50, n_states=6, depth=3, rewards=(0.0, 0.5, 1.0, -1.0),
                 p_invalid=0.2, with_value=True, shuffle=True, min_traj=1):
    """A random StepArrays for property tests: revisited states (``n_states`` small), ties (rewards
    from a small set), aliasing (``obs_key`` = state // 2), single-trajectory groups, history levels
    0..``depth`` (level 0 = ``state_key``), keys shared across groups, rows shuffled."""
    import numpy as np

    from agentgym_credit.credit import StepArrays

    rng = np.random.default_rng(seed)
    ctx_ids: dict[tuple, int] = {}
    cols = {k: [] for k in ("group_id", "traj_id", "t", "reward", "done", "state_key", "obs_key",
                            "history_keys", "valid", "value")}
    traj_ids = rng.permutation(10 * n_groups * max_traj + 10)
    tr = 0
    for g in range(n_groups):
        gid = int(rng.integers(-1000, 1000)) * n_groups + g  # distinct, arbitrary, possibly negative
        for _ in range(int(rng.integers(min_traj, max_traj + 1))):
            length = int(rng.integers(1, max_len + 1))
            states = rng.integers(0, n_states, size=length).tolist()
            done_end = bool(rng.random() < 0.7)
            for t in range(length):
                hk = []
                for k in range(depth + 1):
                    if t < k:
                        hk.append(MISSING)
                    elif k == 0:
                        hk.append(states[t] + 1)
                    else:
                        hk.append(ctx_ids.setdefault(tuple(states[t - k:t + 1]), 1000 + len(ctx_ids)))
                cols["group_id"].append(gid)
                cols["traj_id"].append(int(traj_ids[tr]))
                cols["t"].append(t)
                cols["reward"].append(float(rng.choice(rewards)))
                cols["done"].append(done_end and t == length - 1)
                cols["state_key"].append(states[t] + 1)
                cols["obs_key"].append(states[t] // 2 + 1)
                cols["history_keys"].append(hk)
                cols["valid"].append(bool(rng.random() >= p_invalid))
                cols["value"].append(float(rng.normal()))
            tr += 1
    perm = rng.permutation(len(cols["t"])) if shuffle else np.arange(len(cols["t"]))
    arrays = {k: np.asarray(v)[perm] for k, v in cols.items()}
    arrays["history_keys"] = np.asarray(cols["history_keys"], dtype=np.uint64).reshape(-1, depth + 1)[perm]
    if not with_value:
        arrays["value"] = None
    return StepArrays(**arrays)
