"""Graph credit against the exact A^π: ``graph`` (and its options) vs GraphGPO, GAGPO, GiGPO, HGPO, GRPO.

Three modes (``--split``): ``heldout`` (the default) runs :mod:`.heldout` on the held-out families and
writes ``benchmarks/exact/graph_credit_heldout.md`` (the headline numbers: families defaults were never chosen on);
``tuning`` runs the default candidates on the tuning families (``benchmarks/exact/graph_credit_tuning.md``); both
are split as ``benchmarks/exact/credit_heldout.split.md`` says (``graph_credit.md`` and ``credit_tuning.md`` are
issue 29's records of the same two runs). ``signals`` is the per-signal table below on any
families (``--tasks``, default the five old tuning families; ``benchmarks/exact/graph_credit_signals.md``).

Run ``python -m agentgym_credit.bench.exact.graph_credit`` (from the repository root). The runs reuse ``bench credit``'s machinery
(:mod:`.credit_run`: the real collector under a known behaviour policy, the oracle's exact A^π of
every recorded row) on its task families plus ``graded`` (``credit/GradedGrid-v0``: slippery moves,
graded outcomes, an intermediate reward). Per (task, policy, N) cell and seed: Pearson r and sign
accuracy on decisive steps (:func:`~agentgym_credit.bench.stats.metrics.accuracy_metrics`); paired
comparisons are per cell over seeds (95% t-interval of the per-seed difference), wins and losses
Holm-corrected over the cells of each comparison.

What lives here: :data:`SIGNALS` (name -> function of (steps, obs_steps, gamma)), :func:`run`,
:func:`report`, :func:`main`.
"""

from __future__ import annotations

import argparse
import inspect
import os
import platform
import shlex
import sys
import time
from collections.abc import Callable
from itertools import product
from pathlib import Path

import numpy as np

from agentgym_credit.bench.exact import heldout
from agentgym_credit.bench.exact.credit_run import POLICIES
from agentgym_credit.bench.exact.heldout import FAMILIES, GRADED
from agentgym_credit.bench.stats import metrics as M
from agentgym_credit.bench.stats.report import write_atomic
from agentgym_credit.credit import advantages
from agentgym_credit.credit.graph import graph as graph_estimator

ALL_TASKS = FAMILIES

Signal = Callable[..., np.ndarray]
SIGNALS: dict[str, Signal] = {
    "grpo": lambda s, o, g: advantages("grpo", s),
    "gigpo[state]": lambda s, o, g: advantages("gigpo", s, gamma=g),
    "gigpo[obs]": lambda s, o, g: advantages("gigpo", s, gamma=g, anchor="obs_key"),
    "hgpo": lambda s, o, g: advantages("hgpo", s, gamma=g, episode=True),
    "graphgpo": lambda s, o, g: advantages("graphgpo", s),
    "graphgpo[state]": lambda s, o, g: advantages("graphgpo", s, key="state_key"),
    "gagpo": lambda s, o, g: advantages("gagpo", s, gamma=g),
    "gagpo[obs]": lambda s, o, g: advantages("gagpo", s, gamma=g, key="obs_key"),
    "graph": lambda s, o, g: advantages("graph", s, gamma=g),
    "graph shrink0": lambda s, o, g: advantages("graph", s, gamma=g, shrink=0.0),
    "graph shrink2": lambda s, o, g: advantages("graph", s, gamma=g, shrink=2.0),
    "graph lam.5": lambda s, o, g: advantages("graph", s, gamma=g, lam=0.5),
    "graph time": lambda s, o, g: advantages("graph", s, gamma=g, time_aware=True),
    "graph[obs]": lambda s, o, g: advantages("graph", s, gamma=g, key="obs_key"),
    "graph[obs] split": lambda s, o, g: advantages("graph", s, gamma=g, key="obs_key", loops="split"),
    "graph[obs] backoff4": lambda s, o, g: advantages("graph", s, gamma=g, key="obs_key", backoff=4.0),
    "graph[obs] none": lambda s, o, g: advantages("graph", s, gamma=g, key="obs_key", loops="none"),
    "graph[obs] mc": lambda s, o, g: advantages("graph", s, gamma=g, key="obs_key", loops="mc"),
    "graph[obs-hist2]": lambda s, o, g: advantages("graph", o, gamma=g, key="history", level=2),
    "graph[oh1]": lambda s, o, g: advantages("graph", o, gamma=g, key="history", level=1, lam=0.5, loops="none"),
    "graph_q": lambda s, o, g: advantages("graph_q", s, gamma=g),
    "graph_q[obs]": lambda s, o, g: advantages("graph_q", s, gamma=g, key="obs_key"),
    "graph_q[oh1]": lambda s, o, g: advantages("graph_q", o, gamma=g, key="history", level=1),
}
"""Every signal scored (full advantages, what a trainer would use)."""
COMPARISONS = (("graph", "gigpo[state]"), ("graph", "graphgpo"), ("graph", "gagpo"), ("graph", "hgpo"),
               ("graph", "graph shrink0"), ("graph shrink2", "graph"), ("graph time", "graph"),
               ("graph[obs]", "gigpo[obs]"), ("graph[obs]", "graphgpo"), ("graph[obs]", "gagpo[obs]"),
               ("graph[obs]", "graph[obs] none"), ("graph[obs]", "graph[obs] split"),
               ("graph[obs]", "graph[obs] backoff4"),
               ("graph_q", "graph"), ("graph_q[obs]", "graph[obs]"), ("graph_q[oh1]", "gigpo[obs]"),
               ("graph_q[oh1]", "graph[obs]"), ("graph_q[oh1]", "graph[oh1]"))


def run(tasks, policies, group_sizes, seeds, trajectories, instances, gamma=0.95, depth=3):
    """Per-run metrics: ``{(task, policy, N, signal): {"pearson": [...], "sign_acc": [...]}}`` over seeds, every
    signal of :data:`SIGNALS` scored on the held-out benchmark's runs (:func:`.heldout.run_cells`: the same
    batches, seed by seed; its reference signals and extra keys are not reported here)."""
    return heldout.run_cells(tasks, SIGNALS, policies, group_sizes, seeds, trajectories, instances, gamma, depth)


def _cell(values) -> str:
    m, h, _ = M.mean_ci(np.asarray(values))
    return f"{m:.2f} ± {h:.2f}" if np.isfinite(h) else f"{m:.2f}"


def report(res, tasks, policies, group_sizes, header: list[str]) -> str:
    """The markdown report: per-task Pearson tables, sign accuracy, paired comparisons."""
    lines = list(header)
    for metric, title in (("pearson", "Pearson r vs A^π"), ("sign_acc", "sign accuracy on decisive steps")):
        lines += ["", f"## {title} (mean ± 95% t-interval over seeds)", ""]
        for task in tasks:
            lines += [f"### {task}", "", "| policy | N | " + " | ".join(SIGNALS) + " |",
                      "| --- | --- | " + " | ".join("---:" for _ in SIGNALS) + " |"]
            for pol in policies:
                for n in group_sizes:
                    cells = [_cell(res[task, pol, n, s][metric]) for s in SIGNALS]
                    lines.append(f"| {pol} | {n} | " + " | ".join(cells) + " |")
            lines.append("")
    lines += ["## Paired comparisons (Pearson r; per cell over seeds; Holm over the cells of each row)", "",
              "| a vs b | mean margin | wins | losses | ties | cells at N=4 with margin ≥ 0.2 and a win |",
              "| --- | ---: | ---: | ---: | ---: | ---: |"]
    cells = list(product(tasks, policies, group_sizes))
    for a, b in COMPARISONS:  # per cell over seeds, Holm over the cells (the held-out benchmark's comparison)
        c = heldout.compare(res, cells, a, b)
        big = sum(1 for (*_, n), d, x in zip(cells, c["diffs"], c["verdicts"]) if n == 4 and x == "win" and d >= 0.2)
        lines.append(f"| {a} vs {b} | {c['mean']:+.3f} | {c['wins']} | {c['losses']} | {c['ties']} | {big} of "
                     f"{sum(n == 4 for *_, n in cells)} |")
    return "\n".join(lines) + "\n"


def _graph_defaults() -> str:
    """``graph``'s current defaults of the options this table varies, read from its signature (never stale)."""
    params = inspect.signature(graph_estimator).parameters
    return ", ".join(f"{k} {params[k].default!r}" for k in ("shrink", "terminal", "tail", "lam"))


def main(argv: list[str] | None = None) -> int:
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--split", choices=("heldout", "tuning", "signals"), default="heldout")
    known, rest = pre.parse_known_args(sys.argv[1:] if argv is None else argv)
    if known.split != "signals":
        return heldout.main(["--split", known.split, *rest])
    argv = rest
    p = argparse.ArgumentParser(prog="python -m agentgym_credit.bench.exact.graph_credit --split signals",
                                description=__doc__.split("\n")[0])
    p.add_argument("--tasks", nargs="+", default=["grid", "aliased", "cue", "household", "graded"],
                   choices=list(ALL_TASKS))
    p.add_argument("--policies", nargs="+", default=["uniform", "softQ*(T=0.3)"], choices=list(POLICIES))
    p.add_argument("--group-sizes", type=int, nargs="+", default=[2, 4, 8])
    p.add_argument("--seeds", type=int, default=6)
    p.add_argument("--trajectories", type=int, default=64)
    p.add_argument("--instances", type=int, default=3)
    p.add_argument("--predictions", default=None, help="a markdown file with the predictions written before the run")
    p.add_argument("--findings", default=None,
                   help="a markdown file with the findings written from this run's tables (appended; with "
                        "--from-md, the report is re-rendered from an earlier run's markdown instead of rerun)")
    p.add_argument("--from-md", default=None, help="an earlier report of this benchmark: keep its tables, "
                                                    "replace its findings (no rerun)")
    p.add_argument("--out", default="benchmarks/exact/graph_credit_signals.md")
    a = p.parse_args(argv)
    if a.from_md:
        old = Path(a.from_md).read_text().split("\n## Findings")[0].rstrip()
        text = old + "\n\n" + (Path(a.findings).read_text().rstrip() + "\n" if a.findings else "")
        write_atomic(a.out, text)
        return 0
    cmd = "python -m agentgym_credit.bench.exact.graph_credit --split signals " + " ".join(shlex.quote(x) for x in argv)
    load0 = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    t0 = time.perf_counter()
    res = run(a.tasks, a.policies, a.group_sizes, a.seeds, a.trajectories, a.instances)
    wall = time.perf_counter() - t0
    load1 = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    header = ["# Graph credit against the exact A^π (every signal)", ""]
    if a.predictions:
        header += [Path(a.predictions).read_text().rstrip(), ""]
    header += [f"Command: `{cmd}`", "",
               f"Machine: {platform.platform()}, {os.cpu_count()} CPUs; Python {platform.python_version()}, numpy "
               f"{np.__version__}. Wall time {wall:.0f} s; 1-minute load average {load0:.1f} at the start, "
               f"{load1:.1f} at the end.", "",
               f"Sizes: {a.trajectories} rollouts per run (= {a.trajectories}/N groups of N, task instances "
               f"cycling over the first {a.instances}), {a.seeds} seeds, γ = 0.95, estimators at their defaults "
               "unless the signal name says otherwise. Signals: " + "; ".join(f"`{k}`" for k in SIGNALS) + ".",
               f"`graph` runs at its defaults ({_graph_defaults()}); `shrink0` is the plain certainty-equivalence "
               "estimator (the other defaults kept). "
               "`[obs]` keys the graph on `obs_key` (what an agent sees; by default there loops='events': a node is "
               "(observation, the set of observations the trajectory has looped at so far), no back-off; "
               "`split` is the earlier default, a loop counter with back-off 4 to the unsplit graph), "
               "`[obs-hist2]` on the fingerprint of the last 3 observations, `[oh1]` on the last 2 (o_{t-1}, o_t), "
               "`time` on (state, t). `graph_q` takes the graph's λ-return as the target (λ 'auto': 0.5 on "
               "state_key, 1 on agent-visible keys) and the mean target of the rows at the same node as the "
               "baseline (not V-hat of the node)."]
    text = report(res, a.tasks, a.policies, a.group_sizes, header)
    if a.findings:
        text = text.rstrip() + "\n\n" + Path(a.findings).read_text().rstrip() + "\n"
    write_atomic(a.out, text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["SIGNALS", "COMPARISONS", "GRADED", "run", "report", "main"]
