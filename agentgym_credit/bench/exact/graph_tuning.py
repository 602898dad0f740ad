"""The candidate grid of ``graph``'s defaults on tuning cells and the rule that picks one (issues 29 and 41).

:mod:`.heldout` scores :data:`CANDIDATES` on the tuning families and renders :func:`choose_defaults`' pick; the
rule is written in ``benchmarks/exact/credit_heldout.split.md`` (third and fourth addenda). What lives here:

- the grid: :data:`SHRINKS` x :data:`TERMINALS` x :data:`TAILS` (shared by both keys) x :data:`OBS_OPTIONS`
  (``obs_key`` only), :data:`SETTINGS`, :data:`CANDIDATES` (``graph`` per setting, the tail variants reshaping
  one untailed solve per batch);
- :data:`LEARNING_GUARD`: the levels that keep ``graph[obs]`` learning on the training benchmark's tuning
  families (``bench/learning/graph_guard.py``, ``benchmarks/learning/graph_guard.md``);
- :func:`kurtosis`, :func:`cell_means`, :func:`choose_defaults`;
- :func:`obs_guard`: the guard of the obs-key options rerun on the current code (``heldout --split tuning --guard``),
  each (loops, alias) changed alone from the issue-29 defaults (the registered guard) and from today's defaults.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import product

import numpy as np

from agentgym_credit.credit import advantages
from agentgym_credit.credit.graph_tail import shape_tail

Signal = Callable[..., np.ndarray]

SHRINKS: tuple[float | str, ...] = (0.0, 0.25, 0.5, 1.0, "auto")
"""Issue 41's grid (``benchmarks/exact/credit_heldout.split.md``, third addendum): ``shrink`` 2 and ``lam`` 0.5 left out
(every setting with either lost to its lam-0 / shrink <= 1 neighbour in the issue-29 tuning runs)."""
TERMINALS = (1.0, 0.5, 0.0)
TAILS: dict[str, tuple[str, float]] = {"none": ("none", 3.0), "clip3": ("clip", 3.0), "clip2": ("clip", 2.0),
                                       "rank": ("rank", 3.0)}
OBS_OPTIONS = (("events", "fallback"), ("none", "fallback"), ("split", "fallback"), ("events", "none"),
               ("none", "none"))
"""``(loops, alias)`` candidates for ``obs_key`` (the issue-29 default first)."""
KURTOSIS_FACTOR = 2.0
"""The third addendum's learning criterion (a setting's median kurtosis over the tuning cells at most this times
GiGPO's on the same key): withdrawn by the fourth addendum (it selected against learning), still reported."""
LEARNING_GUARD: dict[str, tuple] = {"shrink": (0.25, 0.5), "terminal": (1.0, 0.5, 0.0), "tail": ("none", "clip3"),
                                    "obs": (("events", "fallback"), ("split", "fallback"))}
"""The levels the fourth addendum admits: each, changed alone from the issue-29 defaults, keeps ``graph[obs]``'s
final success on AliasedGrid and household-small within 0.05 of the defaults' (3 seeds, ``benchmarks/learning/
graph_guard.md``)."""


GUARD_TASKS = ("aliased", "household-small")
"""The training benchmark's tuning families the guard trains on (``bench/learning/graph_guard.py``)."""


def current_obs_defaults() -> dict:
    """``graph[obs]``'s options at today's defaults, named in full (read from ``graph``'s signature)."""
    import inspect

    from agentgym_credit.credit.graph import OBS_LOOPS, auto_alias, graph

    p = {k: v.default for k, v in inspect.signature(graph).parameters.items()}
    return {"key": "obs_key", "loops": OBS_LOOPS, "alias": auto_alias("auto", "obs_key"), "shrink": p["shrink"],
            "terminal": p["terminal"], "tail": p["tail"], "tail_k": p["tail_k"]}


def obs_guard(seeds: int = 3, margin: float = 0.05, train: Callable[[str, dict, int], list[float]] | None = None,
              issue29: dict | None = None) -> list[dict]:
    """The fourth addendum's learning guard for the :data:`OBS_OPTIONS`, run on the current code: each (loops,
    alias) changed alone from a base, ``graph[obs]`` trained by ``bench train``'s tabular policy on
    :data:`GUARD_TASKS` (``train(task, options, seeds)`` -> final success per seed; default
    ``bench/learning/graph_guard.final_success``). Two bases: ``issue29`` (default ``graph_guard.ISSUE29``: the
    registered guard, which admits levels) and today's defaults (:func:`current_obs_defaults`: a sensitivity
    check of the same levels on top of the current defaults). A level passes when its mean final success is within
    ``margin`` of its base's on every task.

    Returns one row per (base, obs option): ``{"base", "obs", "success": {task: [per seed]}, "mean": {task: m},
    "pass"}``, each base's own option first (passing by definition)."""
    if train is None or issue29 is None:
        from agentgym_credit.bench.learning import graph_guard

        train, issue29 = train or graph_guard.final_success, issue29 or graph_guard.ISSUE29
    rows, ref29 = [], None
    for base, opts in (("issue-29 defaults", dict(issue29)), ("today's defaults", current_obs_defaults())):
        own = (opts["loops"], opts["alias"])
        ref = None
        for ob in (own, *(o for o in OBS_OPTIONS if o != own)):
            per = {t: [float(x) for x in train(t, opts | {"loops": ob[0], "alias": ob[1]}, seeds)] for t in GUARD_TASKS}
            rows.append({"base": base, "obs": ob, "success": per, "mean": {t: float(np.mean(v)) for t, v in per.items()}})
            ref = ref or rows[-1]["mean"]
            ref29 = ref29 or ref
            # a base's own row is judged against the issue-29 reference (the rule's "pick trained whole" check)
            against = ref29 if ob == own else ref
            rows[-1]["pass"] = all(rows[-1]["mean"][t] >= against[t] - margin for t in GUARD_TASKS)
    return rows


def admitted_obs(rows: list[dict]) -> tuple[tuple[str, str], ...]:
    """The obs levels the registered guard (base ``"issue-29 defaults"``) admits, from :func:`obs_guard`'s rows."""
    return tuple(r["obs"] for r in rows if r["base"] == "issue-29 defaults" and r["pass"])


def _fmt(x: float | str) -> str:
    return x if isinstance(x, str) else f"{x:g}"


_BASE: dict = {"steps": None, "adv": {}}


def _base(steps, gamma: float, kw: dict) -> np.ndarray:
    """``graph`` at ``kw`` with ``tail="none"``, once per batch (the tail variants reshape it with
    :func:`~agentgym_credit.credit.graph_tail.shape_tail`, exactly what ``graph(tail=...)`` does; a test holds it)."""
    if _BASE["steps"] is not steps:
        _BASE["steps"], _BASE["adv"] = steps, {}
    k = (gamma, tuple(sorted(kw.items())))
    if k not in _BASE["adv"]:
        _BASE["adv"][k] = advantages("graph", steps, gamma=gamma, **kw)
    return _BASE["adv"][k]


def _candidate(shrink: float | str, terminal: float, tail: str, obs: tuple[str, str] | None) -> Signal:
    kw = {"shrink": shrink, "lam": 0.0, "terminal": terminal, "tail": "none"} | (
        {"key": "obs_key", "loops": obs[0], "alias": obs[1]} if obs else {})
    how, k = TAILS[tail]
    return lambda s, o, g: shape_tail(_base(s, g, kw), s.group_id, how, k)


def candidate_name(shrink: float | str, terminal: float, tail: str, obs: tuple[str, str] | None = None) -> str:
    """``graph s0.5 t1 none`` (state_key) or ``graph[obs] events/fallback s0.5 t1 none``."""
    head = f"graph[obs] {obs[0]}/{obs[1]}" if obs else "graph"
    return f"{head} s{_fmt(shrink)} t{terminal:g} {tail}"


SETTINGS = list(product(SHRINKS, TERMINALS, TAILS, OBS_OPTIONS))
"""Every (shrink, terminal, tail, (loops, alias)) setting the rule scores."""
CANDIDATES: dict[str, Signal] = {
    **{candidate_name(s, t, tl): _candidate(s, t, tl, None) for s, t, tl in product(SHRINKS, TERMINALS, TAILS)},
    **{candidate_name(s, t, tl, ob): _candidate(s, t, tl, ob) for s, t, tl, ob in SETTINGS},
}
"""The default candidates scored on tuning cells (see :func:`choose_defaults`)."""

def kurtosis(a: np.ndarray) -> float:
    """Pearson's kurtosis m4 / m2^2 of one run's advantages (3 for a normal; NaN when all rows are equal): how
    much of the update a few rows carry (issue 41: 16-94 for graph, 4-7 for GiGPO)."""
    d = np.asarray(a, dtype=np.float64) - np.mean(a) if len(a) else np.zeros(0)
    m2 = float(np.mean(d * d)) if len(d) else 0.0
    return float(np.mean(d ** 4) / m2 ** 2) if m2 > 1e-24 else float("nan")


def cell_means(res: dict, cells: Iterable[tuple], name: str, metric: str = "pearson") -> np.ndarray:
    """Mean over seeds of ``name``'s metric in each cell (NaN where no seed is finite)."""
    vals = []
    for c in cells:
        v = np.asarray(res[(*c, name)][metric], dtype=np.float64)
        v = v[np.isfinite(v)]
        vals.append(v.mean() if len(v) else np.nan)
    return np.asarray(vals)


def choose_defaults(res: dict, cells: Sequence[tuple], guard: dict | None = LEARNING_GUARD,
                    kurtosis_factor: float | None = None) -> tuple[dict, list[tuple]]:
    """The split file's rule on tuning ``cells``: per cell, regret = best candidate's mean Pearson − the
    candidate's (state_key candidates among themselves, obs_key ones among themselves; the best over the whole
    grid); a setting (shrink, terminal, tail, (loops, alias)) scores the worst regret over its state_key and
    obs_key cells. A setting is *admissible* when every level is in ``guard`` (``{"shrink": ..., "terminal": ...,
    "tail": ..., "obs": ...}``; None: every level; fourth addendum) and, with ``kurtosis_factor``, when the median
    over cells of its mean kurtosis is at most that times GiGPO's on each key (third addendum's criterion, off by
    default since the fourth). The admissible setting with the smallest worst regret wins (every setting when none
    is admissible), ties within 0.01 to the higher mean Pearson.

    Returns ``(choice, table)``: ``choice = {"shrink", "terminal", "tail", "obs", "worst_regret", "mean",
    "admissible", "kurt", "limits"}``; ``table`` = every setting's ``(shrink, terminal, tail, obs, worst regret,
    worst cell, mean Pearson, median kurtosis (state, obs), admissible)``, admissible first, then best first."""
    med = lambda name: float(np.nanmedian(cell_means(res, cells, name, "kurt")))  # noqa: E731
    f = kurtosis_factor if kurtosis_factor is not None else np.inf
    lim_s, lim_o = f * med("gigpo[state]"), f * med("gigpo[obs]")
    keys = list(product(SHRINKS, TERMINALS, TAILS))
    state = {k: cell_means(res, cells, candidate_name(*k)) for k in keys}
    obs = {st: cell_means(res, cells, candidate_name(*st)) for st in SETTINGS}
    best_state = np.nanmax(np.vstack(list(state.values())), axis=0)
    best_obs = np.nanmax(np.vstack(list(obs.values())), axis=0)
    rows = []
    for st in SETTINGS:
        reg = np.concatenate([best_state - state[st[:3]], best_obs - obs[st]])
        where = int(np.nanargmax(reg))
        cell = cells[where % len(cells)]
        label = ("state" if where < len(cells) else "obs") + " " + "/".join(map(str, cell))
        mean = float(np.nanmean(np.concatenate([state[st[:3]], obs[st]])))
        ks, ko = med(candidate_name(*st[:3])), med(candidate_name(*st))
        ok = guard is None or all(v in guard[k] for k, v in zip(("shrink", "terminal", "tail", "obs"), st))
        ok = ok and not (ks > lim_s or ko > lim_o)
        rows.append((*st, float(np.nanmax(reg)), label, mean, (ks, ko), bool(ok)))
    pool = [r for r in rows if r[8]] or rows
    best = min(r[4] for r in pool)
    pick = max((r for r in pool if r[4] <= best + 0.01), key=lambda r: r[6])
    rows.sort(key=lambda r: (not r[8], r[4], -r[6]))
    return {"shrink": pick[0], "terminal": pick[1], "tail": pick[2], "obs": pick[3], "worst_regret": pick[4],
            "mean": pick[6], "admissible": pick[8], "kurt": pick[7], "limits": (lim_s, lim_o)}, rows


__all__ = ["SHRINKS", "TERMINALS", "TAILS", "OBS_OPTIONS", "SETTINGS", "CANDIDATES", "KURTOSIS_FACTOR",
           "LEARNING_GUARD", "GUARD_TASKS", "candidate_name", "kurtosis", "cell_means", "choose_defaults",
           "current_obs_defaults", "obs_guard", "admitted_obs"]
