"""Tuning and held-out task families of ``bench graph_credit``, the defaults chosen on tuning cells only,
and the held-out judgement (issue 29).

The split is written in ``benchmarks/exact/credit_heldout.split.md`` (committed before any run); the constants
here are that file's lists. What lives here:

- :data:`TUNING`, :data:`HELD_OUT` (name -> :class:`~agentgym_credit.bench.exact.credit_run.TaskSpec`),
  :data:`FAMILIES` (both);
- :data:`JUDGED`: the estimators every held-out run scores (at their defaults, plus named variants);
  :data:`CANDIDATES`: the default candidates scored on tuning cells (``graph`` on ``state_key`` over
  ``shrink`` x ``lam``, on ``obs_key`` over ``loops`` x ``shrink`` x ``lam``);
- :data:`REFERENCE`: the statistics' own checks, from the exact A^π of the rows: ``truth+noise`` and
  ``truth+noise'`` (two independent draws of A^π plus Gaussian noise of A^π's own sd: unbiased and equally
  noisy, so their comparison must come out a tie: the null case) and ``truth+2noise`` (twice the noise sd:
  expected Pearson 1/sqrt(2) = 0.71 vs 1/sqrt(5) = 0.45, a known effect the comparison must find);
- :func:`run_cells`: per (family, policy, N, signal) the Pearson r and sign accuracy of every seed;
- :func:`choose_defaults`: the split file's rule (the smallest worst regret over tuning cells);
- :func:`compare`: paired comparisons per cell over seeds, Holm over the cells of a comparison.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from itertools import product
from pathlib import Path

import numpy as np

from agentgym_credit.bench.exact.credit_run import (
    POLICIES,
    TASKS,
    GroundTruth,
    TaskSpec,
    collect_run,
    true_advantages,
)
from agentgym_credit.bench.exact.credit_signals import obs_keyed
from agentgym_credit.bench.exact.graph_tuning import (
    CANDIDATES,
    GUARD_TASKS,
    KURTOSIS_FACTOR,
    LEARNING_GUARD,
    TAILS,
    _fmt,
    admitted_obs,
    candidate_name,
    cell_means,
    choose_defaults,
    kurtosis,
    obs_guard,
)
from agentgym_credit.bench.stats import metrics as M
from agentgym_credit.bench.stats.report import (
    machine_lines,
    markdown_table,
    progress,
    write_atomic,
    write_csv,
)
from agentgym_credit.credit import advantages

GRADED = TaskSpec("graded", "credit/GradedGrid-v0", "slip 0.2, goal 1.0 / side exit 0.4 / coin 0.3, step cost",
                  fully_observed=True)

TUNING: dict[str, TaskSpec] = {
    **TASKS,
    "graded": GRADED,
    "costgrid": TaskSpec("costgrid", "credit/GridWorld-v0", "step cost 0.05, slip 0.2, two pits at -1",
                         (("step_cost", 0.05), ("slip", 0.2), ("n_traps", 2), ("trap_reward", -1.0)),
                         fully_observed=True),
    "costaliased": TaskSpec("costaliased", "credit/AliasedGrid-v0", "hidden key, step cost 0.03, slip 0.1, pit -0.5",
                            (("step_cost", 0.03), ("slip", 0.1), ("n_traps", 1), ("trap_reward", -0.5))),
    "latecoin": TaskSpec("latecoin", "credit/LateCoin-v0", "door choice shown; Bernoulli chest 16 steps later",
                         fully_observed=True),
}
"""Families where defaults are chosen (the five old ones and two new ones with step costs)."""

HELD_OUT: dict[str, TaskSpec] = {
    t.name: t
    for t in (
        TaskSpec("frozenlake4", "credit/FrozenLake4x4-v0", "Gymnasium FrozenLake 4x4, slippery", fully_observed=True),
        TaskSpec("frozenlake8", "credit/FrozenLake8x8-v0", "Gymnasium FrozenLake 8x8, slippery", fully_observed=True),
        TaskSpec("cliff", "credit/CliffWalking-v0", "Gymnasium CliffWalking: -1 a step, -100 cliff",
                 fully_observed=True),
        TaskSpec("taxi", "credit/Taxi-v0", "Gymnasium Taxi; passenger aboard hidden from obs_key"),
        TaskSpec("trapchain", "credit/TrapChain-v0", "slip, risky jump into water, one-way bridge, step cost",
                 fully_observed=True),
        TaskSpec("corridor", "credit/LongCorridor-v0", "long horizon (>= 43 expected steps), gamble chutes",
                 fully_observed=True),
        TaskSpec("keycorridor", "credit/KeyCorridor-v0", "key picked up on arrival, never shown"),
        TaskSpec("lever", "credit/LeverRoom-v0", "lever pulled elsewhere, a trapdoor moves you, never shown"),
        TaskSpec("latehidden", "credit/LateCoin-v0", "3 doors after 3 cells, door never shown, step cost; "
                 "Bernoulli chest 16 steps later", (("n_doors", 3), ("pre", 3), ("show_choice", False),
                                                    ("best", 0.6), ("gap", 0.3), ("step_cost", 0.01),
                                                    ("max_steps", 56))),
    )
}
"""Families where defaults are judged, never chosen (``benchmarks/exact/credit_heldout.split.md``)."""

FAMILIES: dict[str, TaskSpec] = {**TUNING, **HELD_OUT}

TUNING_POLICIES = ("uniform", "softQ*(T=0.3)", "softQ*(T=0.03)")
"""Behaviour policies of tuning cells: the near-optimal one was added after the first tuning run and before
any held-out run (``benchmarks/exact/credit_heldout.split.md``, addendum)."""
HELD_OUT_POLICIES = ("uniform", "softQ*(T=0.3)")

Signal = Callable[..., np.ndarray]
JUDGED: dict[str, Signal] = {
    "grpo": lambda s, o, g: advantages("grpo", s),
    "gigpo[state]": lambda s, o, g: advantages("gigpo", s, gamma=g),
    "gigpo[obs]": lambda s, o, g: advantages("gigpo", s, gamma=g, anchor="obs_key"),
    "graphgpo": lambda s, o, g: advantages("graphgpo", s),
    "graphgpo[state]": lambda s, o, g: advantages("graphgpo", s, key="state_key"),
    "gagpo": lambda s, o, g: advantages("gagpo", s, gamma=g),
    "gagpo[obs]": lambda s, o, g: advantages("gagpo", s, gamma=g, key="obs_key"),
    "graph": lambda s, o, g: advantages("graph", s, gamma=g),
    "graph[obs]": lambda s, o, g: advantages("graph", s, gamma=g, key="obs_key"),
    "graph shrink1": lambda s, o, g: advantages("graph", s, gamma=g, shrink=1.0),
    "graph shrink0": lambda s, o, g: advantages("graph", s, gamma=g, shrink=0.0),
    "graph shrinkauto": lambda s, o, g: advantages("graph", s, gamma=g, shrink="auto"),
    "graph[obs] events shrink1": lambda s, o, g: advantages("graph", s, gamma=g, key="obs_key", loops="events",
                                                            shrink=1.0),
    "graph[obs] none": lambda s, o, g: advantages("graph", s, gamma=g, key="obs_key", loops="none"),
    "graph issue29": lambda s, o, g: advantages("graph", s, gamma=g, shrink=0.5, terminal=1.0, tail="none"),
    "graph terminal0": lambda s, o, g: advantages("graph", s, gamma=g, terminal=0.0),
    "graph[obs] issue29": lambda s, o, g: advantages("graph", s, gamma=g, key="obs_key", loops="events",
                                                     alias="fallback", shrink=0.5, terminal=1.0, tail="none"),
}
"""Estimators a held-out run scores: defaults (no option named) and the pre-issue-29 defaults (shrink 1,
events on obs_key) for reference, and ``shrink="auto"`` (a candidate the tuning rule did not pick: reported,
never chosen here)."""

REFERENCE = ("truth+noise", "truth+noise'", "truth+2noise")
"""Signals made from the exact A^π (module docstring): the null case and the known-effect case."""


def _reference(truth: np.ndarray, rng: np.random.Generator) -> dict[str, np.ndarray]:
    sd = float(np.std(truth)) or 1.0
    return {"truth+noise": truth + rng.normal(0.0, sd, truth.shape),
            "truth+noise'": truth + rng.normal(0.0, sd, truth.shape),
            "truth+2noise": truth + rng.normal(0.0, 2.0 * sd, truth.shape)}


def run_cells(families: Sequence[str], signals: dict[str, Signal], policies: Sequence[str],
              group_sizes: Sequence[int], seeds: int, trajectories: int, instances: int, gamma: float = 0.95,
              depth: int = 3, show_progress: bool = True) -> dict:
    """``{(family, policy, N, signal): {"pearson": [per seed], "sign_acc": [...]}}``, the
    :data:`REFERENCE` signals included; ``extra`` key ``(family, policy, N, "rows")`` holds the rows per seed."""
    out: dict = defaultdict(lambda: defaultdict(list))
    jobs = list(product(families, policies, group_sizes, range(seeds)))
    truths: dict[str, GroundTruth] = {}
    for fam, pol, n, seed in progress(jobs, total=len(jobs), desc="graph_credit cells", enable=show_progress):
        gt = truths.get(fam)
        if gt is None:
            gt = truths[fam] = GroundTruth(FAMILIES[fam], gamma)
        spec = POLICIES[pol]
        batch = collect_run(gt, spec, n, trajectories // n, seed, depth, instances)
        steps = batch.steps
        obs = obs_keyed(steps)
        truth = true_advantages(batch, gt, spec).adv
        rng = np.random.default_rng([seed, n, sum(map(ord, fam + pol))])
        scored = {name: np.asarray(fn(steps, obs, gamma), dtype=np.float64) for name, fn in signals.items()}
        scored |= _reference(truth, rng)
        for name, est in scored.items():
            m = M.accuracy_metrics(est, truth) | {"kurt": kurtosis(est)}
            for k in ("pearson", "sign_acc", "kurt"):
                out[fam, pol, n, name][k].append(m[k])
        out[fam, pol, n, "rows"]["n"].append(len(truth))
    return out


def compare(res: dict, cells: Sequence[tuple], a: str, b: str, metric: str = "pearson") -> dict:
    """``a`` vs ``b`` per cell over seeds (paired t), Holm over the cells: mean margin, verdicts, worst cell."""
    diffs, ps = [], []
    for c in cells:
        d, h, k = M.paired_diff_ci(np.asarray(res[(*c, a)][metric]), np.asarray(res[(*c, b)][metric]))
        diffs.append(d)
        ps.append(M.p_from_interval(d, h, k - 1) if k > 1 and np.isfinite(h) else float("nan"))
    v = M.holm_verdicts(diffs, ps)
    d = np.asarray(diffs, dtype=np.float64)
    worst = int(np.nanargmin(d)) if np.isfinite(d).any() else 0
    return {"mean": float(np.nanmean(d)) if np.isfinite(d).any() else float("nan"), "diffs": d, "verdicts": v,
            "wins": v.count("win"), "losses": v.count("loss"), "ties": v.count("tie"),
            "worst": (d[worst], cells[worst]) if len(d) else (float("nan"), None),
            "loss_cells": [c for c, x in zip(cells, v) if x == "loss"]}


# -- reports ------------------------------------------------------------------------------------------------

GOAL_COMPARISONS = (("graph", "gigpo[state]"), ("graph", "graphgpo"), ("graph", "graphgpo[state]"), ("graph", "gagpo"))
"""The issue's goal: ``graph`` (defaults) against GiGPO, GraphGPO, GAGPO on held-out cells."""
OTHER_COMPARISONS = (("graph", "graph shrink1"), ("graph", "graph shrink0"), ("graph", "graph shrinkauto"),
                     ("graph shrinkauto", "gigpo[state]"), ("graph[obs]", "graph[obs] events shrink1"),
                     ("graph[obs]", "graph[obs] none"), ("gigpo[state]", "grpo"), ("graph", "graph issue29"),
                     ("graph[obs]", "graph[obs] issue29"), ("graph", "graph terminal0"))
CHECKS = (("truth+noise", "truth+noise'"), ("truth+noise", "truth+2noise"))
"""The null case (two equally noisy unbiased copies of A^π: every cell a tie) and the known effect (half
the noise sd: every cell a win, +0.26 expected)."""


def cells_of(families: Sequence[str], policies: Sequence[str], group_sizes: Sequence[int]) -> list[tuple]:
    return list(product(families, policies, group_sizes))


def _fmt_cell(c: tuple | None) -> str:
    return "-" if c is None else f"{c[0]} / {c[1]} / N={c[2]}"


def comparison_table(res: dict, cells: Sequence[tuple], pairs: Sequence[tuple[str, str]]) -> str:
    rows = []
    for a, b in pairs:
        if not all(res[(*cells[0], x)]["pearson"] for x in (a, b)):
            continue  # a signal this run did not score (re-rendered from an earlier run's rows)
        c = compare(res, cells, a, b)
        w, where = c["worst"]
        losses = "; ".join(_fmt_cell(x) for x in c["loss_cells"]) or "none"
        rows.append([f"{a} − {b}", f"{c['mean']:+.3f}", c["wins"], c["losses"], c["ties"], f"{w:+.2f} ({_fmt_cell(where)})",
                     losses])
    return markdown_table(["a − b", "mean Pearson margin", "Holm wins", "Holm losses", "ties", "worst cell",
                           "cells with a Holm loss"], rows)


def family_tables(res: dict, families: Sequence[str], policies: Sequence[str], group_sizes: Sequence[int],
                  names: Sequence[str], metric: str = "pearson") -> list[str]:
    lines = []
    for fam in families:
        rows = []
        for pol, n in product(policies, group_sizes):
            rows.append([pol, n, int(np.mean(res[fam, pol, n, "rows"]["n"]))] +
                        [_ci(res[fam, pol, n, k][metric]) for k in names])
        lines += [f"### {fam}: {FAMILIES[fam].kind}", "", markdown_table(["policy", "N", "rows"] + list(names), rows), ""]
    return lines


def _ci(values) -> str:
    m, h, _ = M.mean_ci(np.asarray(values, dtype=np.float64))
    return "nan" if not np.isfinite(m) else (f"{m:.2f} ± {h:.2f}" if np.isfinite(h) else f"{m:.2f}")


def code_state() -> str:
    """The estimator files' content hashes (which code a run measured, committed or not)."""
    root = Path(__file__).resolve().parents[2] / "credit"
    parts = []
    for name in ("graph.py", "graph_model.py", "graph_q.py", "graphgpo.py", "gagpo.py", "anchor_groups.py"):
        f = root / name
        if f.exists():
            parts.append(f"{name} {hashlib.sha1(f.read_bytes()).hexdigest()[:10]}")
    return "; ".join(parts)


def save_rows(res: dict, path: Path) -> None:
    """Every (family, policy, N, signal, seed) score as CSV, written atomically."""
    rows = []
    for (fam, pol, n, name), d in res.items():
        if name == "rows":
            continue
        counts = res[fam, pol, n, "rows"]["n"]
        kurt = d.get("kurt") or [float("nan")] * len(d["pearson"])
        for seed, (p, sa, ku) in enumerate(zip(d["pearson"], d["sign_acc"], kurt)):
            rows.append({"family": fam, "policy": pol, "N": n, "signal": name, "seed": seed, "pearson": round(p, 6),
                         "sign_acc": round(sa, 6), "kurt": round(ku, 4), "rows": counts[seed]})
    if path.suffix != ".gz":
        write_csv(path, rows)  # atomic
        return
    import csv  # the tuning grid's rows (hundreds of candidates): gzipped, through a temporary file
    import gzip

    tmp = path.with_name(path.name + ".tmp")
    with gzip.open(tmp, "wt", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["family"])
        wr.writeheader()
        wr.writerows(rows)
    os.replace(tmp, path)


def load_rows(path: Path) -> dict:
    """The inverse of :func:`save_rows`."""
    from agentgym_credit.bench.stats.report import read_csv

    res: dict = defaultdict(lambda: defaultdict(list))
    counts: dict = {}
    if Path(path).suffix == ".gz":
        import csv
        import gzip

        with gzip.open(path, "rt", newline="") as f:
            table = [dict(r) | {"seed": int(r["seed"])} for r in csv.DictReader(f)]
    else:
        table = read_csv(path)
    for r in sorted(table, key=lambda r: int(r["seed"])):
        key = (r["family"], r["policy"], int(r["N"]), r["signal"])
        res[key]["pearson"].append(float(r["pearson"]))
        res[key]["sign_acc"].append(float(r["sign_acc"]))
        res[key]["kurt"].append(float(r.get("kurt", "nan") or "nan"))
        counts.setdefault(key[:3], {})[int(r["seed"])] = int(r["rows"])
    for cell, by_seed in counts.items():
        res[(*cell, "rows")]["n"] = [by_seed[k] for k in sorted(by_seed)]
    return res


def _setting(shrink, terminal, tail, obs) -> str:
    return f"shrink={_fmt(shrink)}, terminal={terminal:g}, tail={tail}; obs_key loops={obs[0]}, alias={obs[1]}"


def _canon(opts: dict) -> str:
    return json.dumps(opts, sort_keys=True)


def guard_rows(a, csv_path: Path) -> list[dict] | None:
    """:func:`~agentgym_credit.bench.exact.graph_tuning.obs_guard`'s rows: replayed from ``<report>_guard.csv``
    beside ``--from-csv`` when it is there and ``--guard`` is not given; run (and saved there, atomically) with
    ``--guard``; else None."""
    saved = Path(str(a.from_csv or csv_path).removesuffix(".gz").removesuffix(".csv") + "_guard.csv")
    if a.from_csv and saved.exists() and not a.guard:
        from agentgym_credit.bench.stats.report import read_csv

        got: dict = defaultdict(list)
        for r in sorted(read_csv(saved), key=lambda r: r["seed"]):
            got[r["task"], r["options"]].append(float(r["success"]))

        def replay(task: str, opts: dict, seeds: int) -> list[float]:
            if len(got.get((task, _canon(opts)), ())) < seeds:
                raise SystemExit(f"{saved} has no {seeds}-seed run of {task} at {_canon(opts)} (the defaults or "
                                 "--guard-seeds changed since it was written: rerun with --guard)")
            return got[task, _canon(opts)][:seeds]

        return obs_guard(a.guard_seeds, train=replay)
    if not a.guard:
        return None
    flat = []

    def train(task: str, opts: dict, seeds: int) -> list[float]:
        from agentgym_credit.bench.learning.graph_guard import final_success

        out = final_success(task, opts, seeds)
        flat.extend({"task": task, "options": _canon(opts), "seed": i, "success": x} for i, x in enumerate(out))
        return out

    rows = obs_guard(a.guard_seeds, train=train)
    tmp = saved.with_name(saved.name + ".tmp")
    write_csv(tmp, flat)
    os.replace(tmp, saved)
    return rows


def guard_section(rows: list[dict]) -> list[str]:
    """The obs-key options' learning guard rerun on the code that rendered the report."""
    body = [[r["base"], "/".join(r["obs"])] + [" ".join(f"{x:.2f}" for x in r["success"][t]) + f" (mean {r['mean'][t]:.3f})"
                                             for t in GUARD_TASKS] + ["yes" if r["pass"] else "no"] for r in rows]
    return ["## The learning guard of the obs-key options, rerun (`--guard`)", "",
            "Each (loops, alias) option changed alone from a base, `graph[obs]` trained by `bench train`'s tabular "
            "policy (lr 16, exact final success; `bench/learning/graph_guard.py`'s `final_success`). Base `issue-29 "
            "defaults` is the registered guard (fourth addendum): its passing levels are the obs levels admitted in "
            "the choice above. Base `today's defaults` (the code's defaults) is a sensitivity check: an option passes "
            "within 0.05 of today's defaults on both tasks; today's defaults' own row is the pick trained whole, "
            "judged against the issue-29 defaults.", "",
            markdown_table(["base", "loops/alias", *(f"{t} final success per seed" for t in GUARD_TASKS), "passes"],
                           body), "",
            "Admitted obs levels (registered guard): " + ", ".join("/".join(o) for o in admitted_obs(rows)) + ".", ""]


def tuning_report(res: dict, a, header: list[str], guard: list[dict] | None = None) -> str:
    cells = cells_of(a.families, a.policies, a.group_sizes)
    admit = LEARNING_GUARD if guard is None else LEARNING_GUARD | {"obs": admitted_obs(guard)}
    choice, table = choose_defaults(res, cells, guard=admit)
    bare, _ = choose_defaults(res, cells, guard=None, kurtosis_factor=KURTOSIS_FACTOR)
    old = next(r for r in table if r[:4] == (0.5, 1.0, "none", ("events", "fallback")))
    ch = (choice["shrink"], choice["terminal"], choice["tail"], choice["obs"])
    lines = list(header) + [
        "## The choice (tuning cells only; rule in `benchmarks/exact/credit_heldout.split.md`, third and fourth addenda)", "",
        f"Chosen: `{_setting(*ch)}`: worst regret {choice['worst_regret']:.3f} over {2 * len(cells)} (key, cell) pairs, "
        f"mean Pearson {choice['mean']:.3f}, median kurtosis {choice['kurt'][0]:.1f} (state) / {choice['kurt'][1]:.1f} "
        f"(obs), among the settings whose levels all pass the learning guard ({admit}; "
        + ("obs levels from this report's guard rerun below" if guard else "`benchmarks/learning/graph_guard.md`")
        + ").", "",
        f"The rule as first registered (kurtosis at most {KURTOSIS_FACTOR:g} x GiGPO's, limits "
        f"{bare['limits'][0]:.1f} / {bare['limits'][1]:.1f}; withdrawn, fourth addendum) picked "
        f"`{_setting(bare['shrink'], bare['terminal'], bare['tail'], bare['obs'])}`: worst regret "
        f"{bare['worst_regret']:.3f}, mean {bare['mean']:.3f}. The issue-29 defaults ({_setting(*old[:4])}): worst "
        f"regret {old[4]:.3f} ({old[5]}), mean {old[6]:.3f}, kurtosis {old[7][0]:.1f} / {old[7][1]:.1f}.", "",
        "### The 40 best settings (guard-admissible first; worst regret over state_key and obs_key tuning cells)", "",
        markdown_table(["shrink", "terminal", "tail", "loops/alias (obs)", "worst regret", "worst cell", "mean Pearson",
                        "median kurtosis state / obs", "admissible"],
                       [[_fmt(r[0]), f"{r[1]:g}", r[2], "/".join(r[3]), f"{r[4]:.3f}", r[5], f"{r[6]:.3f}",
                         f"{r[7][0]:.1f} / {r[7][1]:.1f}", "yes" if r[8] else "no"] for r in table[:40]]),
        "", "### Estimators at their defaults on tuning cells (paired, Holm over the cells of each row)", "",
        "`graph` / `graph[obs]` are the defaults of the code that ran (the estimator code hashes above; the first "
        "tuning run, before issue 41 changed them, ran at the issue-29 defaults).", "",
        comparison_table(res, cells, GOAL_COMPARISONS + OBS_GOAL + OTHER_COMPARISONS + CHECKS), "",
        "## Pearson r vs A^π per tuning family (mean ± 95% t-interval over seeds)", ""]
    names = ["grpo", "gigpo[state]", "gigpo[obs]", "graphgpo", "gagpo", candidate_name(*old[:3]), candidate_name(*ch[:3]),
             candidate_name(*old[:4]), candidate_name(*ch), "truth+noise"]
    names = list(dict.fromkeys(names))
    lines += family_tables(res, a.families, a.policies, a.group_sizes, names)
    lines += ["## Kurtosis of the advantages per tuning family (mean over seeds)", ""]
    lines += family_tables(res, a.families, a.policies, a.group_sizes, names[:-1], metric="kurt")
    if guard:
        lines += guard_section(guard)
    return "\n".join(lines) + "\n"


TUNING_REPORT = "benchmarks/exact/graph_credit_tuning.md"
"""Where the tuning run writes (issue 41; the issue-29 runs are ``benchmarks/exact/credit_tuning.md``)."""
HELD_OUT_REPORT = "benchmarks/exact/graph_credit_heldout.md"
"""Where the held-out run writes (issue 41; the issue-29 runs are ``benchmarks/exact/graph_credit.md``)."""

PLOTTED = ("graph", "graph[obs]", "gigpo[state]", "gigpo[obs]", "graphgpo", "gagpo", "grpo")


def plot_cells(res: dict, a, path: Path) -> Path | None:
    """Mean Pearson (± 95% t-interval over seeds) against N, a panel per (family, policy)."""
    from agentgym_credit.plotting import try_plot_panels

    panels = {}
    for fam, pol in product(a.families, a.policies):
        lines = {}
        for name in PLOTTED:
            stats = [M.mean_ci(np.asarray(res[fam, pol, n, name]["pearson"], dtype=np.float64))
                     for n in a.group_sizes]
            lines[name] = (list(a.group_sizes), [m for m, _, _ in stats],
                           [h if np.isfinite(h) else 0.0 for _, h, _ in stats])
        panels[f"{fam} / {pol}"] = lines
    return try_plot_panels(path, panels, xlabel="N (rollouts per group)", ylabel="Pearson r vs exact A^π",
                           ncols=4, logx=True)


PUBLISHED = ("gigpo[state]", "graphgpo", "graphgpo[state]", "gagpo")
"""The published estimators of issue 41's per-cell goal (``graph`` within 0.05 of the best of them in every cell)."""
OBS_GOAL = (("graph[obs]", "gigpo[obs]"), ("graph[obs]", "graphgpo"), ("graph[obs]", "gagpo[obs]"))


def shortfalls(res: dict, cells: Sequence[tuple], name: str = "graph", others: Sequence[str] = PUBLISHED) -> np.ndarray:
    """Per cell: the best of ``others``' mean Pearson minus ``name``'s (positive: ``name`` is below the best)."""
    best = np.nanmax(np.vstack([cell_means(res, cells, o) for o in others]), axis=0)
    return best - cell_means(res, cells, name)


def heldout_report(res: dict, a, header: list[str]) -> str:
    cells = cells_of(a.families, a.policies, a.group_sizes)
    goal = compare(res, cells, "graph", "gigpo[state]")
    short = shortfalls(res, cells)
    far = [(c, x) for c, x in zip(cells, short) if x > 0.05]
    obs_losses = {b: compare(res, cells, x, b)["losses"] for x, b in OBS_GOAL}
    met = goal["mean"] >= 0.30 and not far
    lines = list(header) + [
        "## Headline: held-out cells (never used to choose anything)", "",
        f"Goals (issue 41): `graph` (defaults) − GiGPO[state] ≥ +0.30 mean Pearson over the {len(cells)} held-out cells, "
        f"and no held-out cell more than 0.05 below the best of {', '.join(PUBLISHED)} (mean Pearson over seeds). "
        f"Measured: {goal['mean']:+.3f}; cells more than 0.05 below the best: {len(far)} of {len(cells)}"
        + (" (" + "; ".join(f"{_fmt_cell(c)} {x:+.2f}" for c, x in far) + ")" if far else "")
        + f"; largest shortfall {np.nanmax(short):+.2f}. **{'Met' if met else 'Not met'}.** "
        f"`graph[obs]` Holm losses: " + ", ".join(f"to {b} {k}" for b, k in obs_losses.items())
        + f" (goal: none): **{'met' if not any(obs_losses.values()) else 'not met'}**.", "",
        comparison_table(res, cells, GOAL_COMPARISONS + OBS_GOAL), ""]
    png = plot_cells(res, a, Path(a.out).with_suffix(".png"))
    if png is not None:
        lines += [f"![Pearson r vs N per held-out family and policy]({png.name})", ""]
    lines += ["### Other comparisons on held-out cells", "",
        comparison_table(res, cells, OTHER_COMPARISONS), "",
        "### The statistics' checks (null case and known effect, from the exact A^π)", "",
        comparison_table(res, cells, CHECKS), "",
        "## Pearson r vs A^π per held-out family (mean ± 95% t-interval over seeds)", ""]
    names = ["grpo", "gigpo[state]", "gigpo[obs]", "graphgpo", "graphgpo[state]", "gagpo", "gagpo[obs]", "graph",
             "graph shrink1", "graph shrink0", "graph shrinkauto", "graph[obs]", "graph[obs] events shrink1", "graph[obs] none", "truth+noise"]
    lines += family_tables(res, a.families, a.policies, a.group_sizes, names)
    lines += ["## Sign accuracy on decisive steps per held-out family", ""]
    lines += family_tables(res, a.families, a.policies, a.group_sizes, names[:-1], metric="sign_acc")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m agentgym_credit.bench.exact.heldout",
                                description="Choose graph defaults on tuning families or judge them on held-out ones.")
    p.add_argument("--split", choices=("tuning", "heldout"), default="heldout")
    p.add_argument("--families", nargs="+", default=None, help="default: every family of the split")
    p.add_argument("--policies", nargs="+", default=None, choices=list(POLICIES),
                   help=f"default: {list(TUNING_POLICIES)} (tuning), {list(HELD_OUT_POLICIES)} (held-out)")
    p.add_argument("--group-sizes", type=int, nargs="+", default=[2, 4, 8])
    p.add_argument("--seeds", type=int, default=6)
    p.add_argument("--trajectories", type=int, default=64)
    p.add_argument("--instances", type=int, default=3)
    p.add_argument("--predictions", default=None, help="a markdown file written before the run (put in the report)")
    p.add_argument("--findings", default=None, help="a markdown file written after the run (appended)")
    p.add_argument("--from-csv", default=None, help="re-render from an earlier run's saved rows (no rerun)")
    p.add_argument("--from-md", default=None, help="an earlier report of this benchmark: keep its text, replace "
                                                    "its findings with --findings (no rerun)")
    p.add_argument("--out", default=None, help=f"default: {HELD_OUT_REPORT} (held-out) or {TUNING_REPORT} (tuning)")
    p.add_argument("--guard", action="store_true", help="tuning: rerun the learning guard of the obs-key options "
                   "(graph_tuning.obs_guard; minutes) and choose with its admitted levels; saved beside the CSV")
    p.add_argument("--guard-seeds", type=int, default=3)
    a = p.parse_args(argv)
    if a.from_md:
        old = Path(a.from_md).read_text().split("\n## Findings")[0].rstrip()
        found = Path(a.findings).read_text().rstrip() + "\n" if a.findings else ""
        write_atomic(a.out or a.from_md, old + "\n\n" + found)
        return 0
    split = HELD_OUT if a.split == "heldout" else TUNING
    a.families = a.families or list(split)
    a.policies = a.policies or list(HELD_OUT_POLICIES if a.split == "heldout" else TUNING_POLICIES)
    bad = [f for f in a.families if f not in split]
    if bad:
        p.error(f"not {a.split} families: {bad}; choose from {list(split)}")
    out = Path(a.out or (HELD_OUT_REPORT if a.split == "heldout" else TUNING_REPORT))
    a.out = str(out)
    csv_path = out.with_suffix(".csv" if a.split == "heldout" else ".csv.gz")
    cmd = "python -m agentgym_credit.bench.exact.heldout " + " ".join(shlex.quote(x) for x in (argv or sys.argv[1:]))
    signals = JUDGED | (CANDIDATES if a.split == "tuning" else {})
    code, load0, t0 = code_state(), os.getloadavg()[0], time.perf_counter()
    if a.from_csv:
        res = load_rows(Path(a.from_csv))
    else:
        res = run_cells(a.families, signals, a.policies, a.group_sizes, a.seeds, a.trajectories, a.instances)
    wall, load1 = time.perf_counter() - t0, os.getloadavg()[0]
    title = "Graph credit against the exact A^π: held-out families" if a.split == "heldout" else \
        "Choosing graph's defaults on the tuning families"
    header = [f"# {title}", ""]
    if a.predictions:
        header += [Path(a.predictions).read_text().rstrip(), ""]
    header += [machine_lines(cmd), "",
               (f"Re-rendered from `{a.from_csv}` (no rerun)." if a.from_csv else
                f"Wall time {wall:.0f} s; 1-minute load average {load0:.1f} at the start, {load1:.1f} at the end."),
               f"Estimator code (content hashes at the start): {code}.", "",
               f"Families ({a.split}): " + ", ".join(f"`{f}` ({FAMILIES[f].env_id})" for f in a.families) +
               f". Policies {a.policies}; N = {a.group_sizes}; {a.trajectories} rollouts per run (= {a.trajectories}/N "
               f"groups), task instances cycling over the first {a.instances}; {a.seeds} seeds; γ = 0.95. Every "
               f"seed's score is in `{csv_path}`. Signals without options are at their defaults; `graph shrink1` and "
               "`graph[obs] events shrink1` are the defaults before issue 29; `truth+noise`, `truth+noise'`, "
               "`truth+2noise` are the exact A^π plus Gaussian noise of 1, 1 and 2 times its sd (the null case and "
               "the known effect)."]
    if a.split == "heldout":
        text = heldout_report(res, a, header)
    else:
        text = tuning_report(res, a, header, guard_rows(a, csv_path))
    if a.findings:
        text = text.rstrip() + "\n\n" + Path(a.findings).read_text().rstrip() + "\n"
    out.parent.mkdir(parents=True, exist_ok=True)
    if not a.from_csv:
        save_rows(res, csv_path)
    write_atomic(out, text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["TUNING", "HELD_OUT", "FAMILIES", "TUNING_POLICIES", "HELD_OUT_POLICIES", "GRADED", "JUDGED", "CANDIDATES",
           "REFERENCE", "LEARNING_GUARD", "TAILS", "KURTOSIS_FACTOR", "kurtosis", "candidate_name", "run_cells",
           "cell_means", "choose_defaults", "compare", "GOAL_COMPARISONS", "OBS_GOAL", "CHECKS", "tuning_report",
           "heldout_report", "shortfalls", "PUBLISHED", "TUNING_REPORT", "HELD_OUT_REPORT", "save_rows", "load_rows",
           "main"]
