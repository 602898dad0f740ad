"""CPU cost of one ``bench train_real`` run on the real ALFWorld dev games, the engine's exact memos off (old) and
on (new), side by side in one process; writes ``benchmarks/speed/train_real_speed.md``.

What lives here: :func:`main` (``python -m agentgym_credit.bench.speed.train_real_speed [--seed 5] [--arm grpo]
[--budget-steps 6000] [--min-updates 4] [--checkpoints 1] [--repeats 1]``). The workload is the pre-registered
ALFWorld confirmation's design (benchmarks/learning/matched_kl_confirm.predictions.md: text policy, KL step 0.03,
8 groups x 4, 12 training games, expert bonus 0.75, the same evaluation episodes) on a tuning seed and the
exploration phase, shortened to ``--budget-steps`` env steps. Runs alternate old, new, old, new ... (``--repeats``
pairs): old is the engine with :data:`agentgym_credit.envs.alfworld.queries.ENABLED` off (textworld answers every
grammar query, a reset reads its initial facts from the task and the library, as before issue 41's change), new
with it on; the per-state command memo that both had is emptied before each run, and an env is made and reset
once before the first (untimed), so that neither pays the process's imports. Measured: CPU seconds of the
process (``time.process_time``) per run, and whether each run's rows (every number but the times) equal the first
old run's. The projection for the study's remaining runs divides the committed confirmation runs' own CPU seconds
by the measured ratio. :data:`PREDICTIONS` was written and committed before the first run.

Where a run's time went before the change (issue 41; cProfile of seed 5, grpo, exploration, 5000 steps, 4 updates,
2 checkpoints, on the old engine; cProfile inflates small Python calls, so shares are rough): collecting 99%;
inside it the engine's steps 84% — admissible-command derivation 57% (textworld's query search 49%, of which
sorting facts with ``Proposition.__lt__`` 35%; most other searches one static ``receptacleatlocation`` query per
``go to`` command), the expert oracle 8%, state keys 6% — and resets 11% (rebuilding the initial facts 8%) plus
game loads 5%; evaluation episodes 25% of the whole (already inside collecting); the text policy's acting 4%
(feature hashing 2.6%, already memoized per (observation, goal, action)); the update with its KL line search 1%;
the credit estimator and process start well under 1%. py-spy on the new engine: the rest is mostly the
state-dependent queries (the "you see ..." listings), textworld building each step's applicable actions, and
the expert oracle.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

PREDICTIONS = (
    "(issue 41, branch i41s, written and committed before this run) Profile of one run of the design (cProfile and "
    "py-spy, seed 5, grpo, exploration, shortened): ~95% of the CPU is the ALFWorld engine, ~5% the policy and the "
    "update. Inside the engine: admissible-command derivation ~35-55% (textworld's query search, a third of it "
    "sorting facts with a Python comparison, most of the rest one static query per 'go to' command), resets and "
    "loads ~20% (reading the initial facts from the task and the library), the expert oracle ~10%, state keys ~6%. "
    "The change memoizes the queries per frozen state and per task (static ones) and reuses a problem's initial "
    "facts. Quick A/B checks at load ~5 gave 1.1-1.4x. Expected: new/old CPU ratio 1.3-1.7x, rows identical in "
    "every run; the 94 remaining confirmation runs from ~17 core-hours to ~10-13."
)
"""What the run is expected to show (written before it ran)."""

DESIGN = ("--envs alfworld-dev --arms grpo --policy text --step kl --lrs 0.03 --sweep-seeds 0 --seeds 1 "
          "--expert-bonus 0.75 --groups 8 --group-size 4 --train-tasks 12 --eval-rollouts 2 --train-eval-rollouts 1 "
          "--no-save --no-progress")
"""The confirmation command's settings that decide one run (its budget, seeds and phase are set below)."""

RUNS = Path("benchmarks/learning/matched_kl_alfworld_dev_confirm_runs")
"""The confirmation's committed run files (their last row holds each run's CPU seconds)."""


def _one(cfg, arm: str, seed: int, memos: bool) -> tuple[float, list[str]]:
    from agentgym_credit.bench.learning.train_real import train_one_real
    from agentgym_credit.envs.alfworld import fast, queries

    queries.ENABLED = memos
    fast._derived.clear()  # both start from an empty per-state command memo
    try:
        t0 = time.process_time()
        rows = train_one_real("alfworld-dev", arm, seed, 0.03, cfg, save=False)
        cpu = time.process_time() - t0
    finally:
        queries.ENABLED = True
    return cpu, [repr({k: v for k, v in r.items() if "seconds" not in k}) for r in rows]


def committed_cpu(runs: Path = RUNS) -> list[float]:
    """CPU seconds of each committed confirmation run (the last row of its run file)."""
    return [float(json.loads(p.read_text())[-1]["cpu_seconds"]) for p in sorted(runs.glob("*/*/*.json"))]


def main(argv: list[str] | None = None) -> None:
    from agentgym_credit.bench.learning.train_real import config_from_args
    from agentgym_credit.bench.stats.report import machine_lines, markdown_table
    from agentgym_credit.trainer.checkpoint import atomic_write_text

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=5, help="a tuning seed (never the confirmation's 700-719)")
    ap.add_argument("--arm", default="grpo")
    ap.add_argument("--budget-steps", type=int, default=6000)
    ap.add_argument("--min-updates", type=int, default=4)
    ap.add_argument("--checkpoints", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=1, help="old/new pairs")
    ap.add_argument("--remaining", type=int, default=94, help="confirmation runs still to run")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/speed/train_real_speed.md"))
    args = ap.parse_args(argv)
    if 700 <= args.seed < 720:
        raise SystemExit("error: seeds 700-719 are the confirmation's; profile on a tuning seed")
    cfg, _ = config_from_args(DESIGN.split() + ["--phase", "exploration", "--seed-base", str(args.seed),
                                                "--budget-steps", str(args.budget_steps), "--min-updates",
                                                str(args.min_updates), "--checkpoints", str(args.checkpoints)])
    cfg = replace(cfg, arms=(args.arm,))
    from agentgym_credit.bench.learning.real_config import REAL_ENVS

    env = REAL_ENVS["alfworld-dev"].factory()  # warm-up, not timed: the first run must not pay the imports
    env.reset(seed=0, options={"task": 0})
    env.close()
    load0 = os.getloadavg()[0]
    runs, ref = [], None
    for k in range(args.repeats):
        for memos in (False, True):
            cpu, rows = _one(cfg, args.arm, args.seed, memos)
            ref = rows if ref is None else ref
            runs.append({"pair": k, "memos": memos, "cpu": cpu, "same": rows == ref, "rows": len(rows)})
            print(runs[-1], file=sys.stderr, flush=True)
    load1 = os.getloadavg()[0]
    old = np.array([r["cpu"] for r in runs if not r["memos"]])
    new = np.array([r["cpu"] for r in runs if r["memos"]])
    ratios = old / new
    ratio = float(np.median(ratios))
    done = committed_cpu()
    per_run = float(np.mean(done)) if done else float("nan")
    given = " ".join(argv if argv is not None else sys.argv[1:])
    table = [[r["pair"], "new (memos on)" if r["memos"] else "old (memos off)", f"{r['cpu']:.1f}", r["rows"],
              "yes" if r["same"] else "**NO**"] for r in runs]
    lines = [
        "# One ALFWorld dev-games training run: CPU before and after the engine's exact memos (issue 41)", "",
        machine_lines(f"python -m agentgym_credit.bench.speed.train_real_speed {given}".rstrip()), "",
        f"Load average before / after: {load0:.1f} / {load1:.1f} (2 shared CPUs; CPU seconds, not wall time, are "
        "compared, but a loaded machine still slows both a little).", "",
        f"Prediction (written and committed before the run): {PREDICTIONS}", "",
        f"Workload: `bench train_real {DESIGN} --phase exploration --seed-base {args.seed} --budget-steps "
        f"{args.budget_steps} --min-updates {args.min_updates} --checkpoints {args.checkpoints}`, arm "
        f"`{args.arm}`: the confirmation's design, shortened (a full run is 30000 steps, 30+ updates, 5 "
        "checkpoints; this one spends a larger share on evaluation episodes). Old and new alternate in one process.",
        "",
        markdown_table(["pair", "engine", "CPU s", "rows", "rows equal the first old run's"], table), "",
        f"**Old / new CPU: {ratio:.2f}x** (median over {len(ratios)} pair(s): "
        f"{', '.join(f'{x:.2f}' for x in ratios)}). Every run's rows "
        f"{'are identical' if all(r['same'] for r in runs) else 'are NOT all identical'}.", "",
        f"**Projection.** The {len(done)} committed confirmation runs took {per_run:.0f} CPU s each on average "
        f"(old engine, their own load): {args.remaining} remaining runs ≈ "
        f"{args.remaining * per_run / 3600:.1f} core-hours before, ≈ {args.remaining * per_run / ratio / 3600:.1f} "
        "after at this ratio (the workload's mix is not a full run's: see above).", "",
    ]
    atomic_write_text(args.out, "\n".join(lines))
    print(args.out.read_text())


if __name__ == "__main__":
    main()


__all__ = ["PREDICTIONS", "DESIGN", "RUNS", "committed_cpu", "main"]
