"""The learning guard of ``graph``'s tuning rule (issue 41, fourth addendum of ``benchmarks/exact/credit_heldout.split.md``).

Each level of the tuning grid (:mod:`agentgym_credit.bench.exact.graph_tuning`), changed alone from the issue-29
defaults of ``graph[obs]`` (shrink 0.5, terminal 1, no tail reshaping, loops events, alias fallback), trains the
tabular policy of ``bench train`` (:func:`~agentgym_credit.bench.learning.train.train_one_tabular`, lr 16, exact
success) on the training benchmark's tuning families AliasedGrid and household-small; a level is admitted when its
mean final success over the seeds is within ``--margin`` (0.05) of the defaults' on both. The same run checks a
the combinations in :data:`CHECKS`. Writes ``benchmarks/learning/graph_guard.md``.

    python -m agentgym_credit.bench.learning.graph_guard
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time

import numpy as np

from agentgym_credit.bench.learning import config as C
from agentgym_credit.bench.learning import train as T
from agentgym_credit.bench.stats.report import machine_lines, markdown_table, write_atomic

ISSUE29 = {"key": "obs_key", "loops": "events", "alias": "fallback", "shrink": 0.5, "terminal": 1.0, "tail": "none",
           "tail_k": 3.0}
"""``graph[obs]`` at the issue-29 defaults, named in full (the guard's reference)."""
LEVELS: dict[str, tuple[str, dict]] = {
    "issue-29 defaults": ("-", {}),
    "shrink 0": ("shrink", {"shrink": 0.0}), "shrink 0.25": ("shrink", {"shrink": 0.25}),
    "shrink 1": ("shrink", {"shrink": 1.0}), "shrink auto": ("shrink", {"shrink": "auto"}),
    "terminal 0.5": ("terminal", {"terminal": 0.5}), "terminal 0": ("terminal", {"terminal": 0.0}),
    "tail clip3": ("tail", {"tail": "clip", "tail_k": 3.0}), "tail clip2": ("tail", {"tail": "clip", "tail_k": 2.0}),
    "tail rank": ("tail", {"tail": "rank"}),
    "obs none/fallback": ("obs", {"loops": "none"}), "obs split/fallback": ("obs", {"loops": "split"}),
    "obs events/none": ("obs", {"alias": "none"}), "obs none/none": ("obs", {"loops": "none", "alias": "none"}),
}
CHECKS: dict[str, dict] = {
    "rule without guard (shrink 0, terminal 0.5, rank, none/fallback)": {"shrink": 0.0, "terminal": 0.5, "tail": "rank",
                                                                         "loops": "none"},
    "rule with guard (shrink 0.25, terminal 0.5, clip3, events/fallback)": {"shrink": 0.25, "terminal": 0.5,
                                                                            "tail": "clip", "tail_k": 3.0},
}
"""Combinations checked whole: the tuning rule's pick without and with the guard."""
TASKS = ("aliased", "household-small")


def final_success(task: str, opts: dict, seeds: int, lr: float = 16.0) -> list[float]:
    """Final exact success of the tabular policy trained by ``graph`` at ``ISSUE29 | opts``, one per seed."""
    label = "graph guard probe"
    C.ESTIMATORS[label] = ("graph", ISSUE29 | opts)
    try:
        cfg = T.TrainBenchConfig(tasks=(task,), estimators=(label,), seeds=seeds)
        return [T.train_one_tabular(task, label, s, lr, cfg, credit=False)[-1]["success"] for s in range(seeds)]
    finally:
        del C.ESTIMATORS[label]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m agentgym_credit.bench.learning.graph_guard", description=__doc__)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--margin", type=float, default=0.05)
    p.add_argument("--out", default="benchmarks/learning/graph_guard.md")
    a = p.parse_args(argv)
    cmd = "python -m agentgym_credit.bench.learning.graph_guard " + " ".join(shlex.quote(x) for x in (argv or sys.argv[1:]))
    t0, load0 = time.perf_counter(), os.getloadavg()[0]
    runs = {name: {task: final_success(task, opts, a.seeds) for task in TASKS}
            for name, opts in [(k, v[1]) for k, v in LEVELS.items()] + list(CHECKS.items())}
    ref = {task: float(np.mean(runs["issue-29 defaults"][task])) for task in TASKS}
    rows, admitted = [], {}
    for name, per in runs.items():
        means = {task: float(np.mean(per[task])) for task in TASKS}
        ok = all(means[t] >= ref[t] - a.margin for t in TASKS)
        if name in LEVELS and name != "issue-29 defaults":
            admitted.setdefault(LEVELS[name][0], []).append((name, ok))
        rows.append([name] + [" ".join(f"{x:.2f}" for x in per[t]) + f" (mean {means[t]:.3f})" for t in TASKS]
                    + ["yes" if ok else "no"])
    lines = ["# Learning guard of graph's tuning rule (issue 41)", "", __doc__.split("\n\n")[1].strip(), "",
             machine_lines(cmd), "",
             f"Wall time {time.perf_counter() - t0:.0f} s; 1-minute load average {load0:.1f} at the start.", "",
             markdown_table(["graph[obs] setting", "AliasedGrid final success per seed", "household-small",
                             f"within {a.margin} of the defaults on both"], rows), "",
             "Admitted levels (the issue-29 level of each option is admitted by definition): " + "; ".join(
                 f"{opt}: " + ", ".join(n for n, ok in items if ok) for opt, items in admitted.items()) + "."]
    write_atomic(a.out, "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["ISSUE29", "LEVELS", "CHECKS", "TASKS", "final_success", "main"]
