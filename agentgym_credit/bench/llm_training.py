"""A learning run on CPU: a tiny LM trained from scratch with GRPO and GiGPO, side by side.

What lives here:

- :data:`BASE`: the run's settings (a small ``credit/GridWorld-v0`` instance, a 2-layer Qwen2-shaped
  model with a tokenizer trained on the env's own text — nothing downloaded);
- :func:`run_pair`: for one seed, one format warm-up shared by every estimator (the same starting
  weights), then RL iterations per estimator, with the success rate measured on the same fixed
  evaluation groups before and after;
- :func:`main`: runs the seeds, writes ``benchmarks/llm_training.md`` (machine, exact command,
  budget, table of before/after success), ``benchmarks/llm_training.csv`` (per-iteration log) and
  ``benchmarks/llm_training.png`` (curves).

Run: ``python -m agentgym_credit.bench.llm_training`` (about 10 minutes on 2 busy cores).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_credit.bench.report import (
    fmt_num,
    machine_lines,
    markdown_table,
    plot_panels,
    progress,
    write_csv,
)

BASE: dict[str, Any] = {
    "env_id": "credit/GridWorld-v0",
    "env_kwargs": {"size": 4, "n_tasks": 20, "wall_density": 0.0, "n_traps": 0},
    "group_size": 8,
    "groups_per_iter": 4,
    "max_steps": 8,
    "max_new_tokens": 4,
    "history_len": 0,
    "history_depth": 1,
    "lr": 1e-3,
    "ppo_epochs": 3,
    "minibatches": 2,
    "format_warmup_steps": 150,
    "torch_threads": 1,
    "tiny_hidden": 64,
    "tiny_layers": 2,
}
"""Settings shared by every run of the benchmark (see the written markdown for the full config)."""


def run_pair(seed: int, estimators: list[str], iterations: int, eval_groups: int, show: bool) -> list[dict]:
    """One seed: a shared warm-up, then ``iterations`` of RL per estimator from the same weights."""
    import torch

    from agentgym_credit.trainer.config import TrainerConfig
    from agentgym_credit.trainer.loop import Trainer

    snapshot: dict[str, Any] | None = None
    warm_s = 0.0
    results = []
    for est in estimators:
        with tempfile.TemporaryDirectory() as tmp:
            cfg = TrainerConfig(**BASE, estimator=est, seed=seed, iterations=iterations, out_dir=tmp, save_every=0,
                                progress=False, plot=False)
            tr = Trainer(cfg)
            if snapshot is None:
                t0 = time.perf_counter()
                tr.format_warmup()
                warm_s = time.perf_counter() - t0
                snapshot = {n: p.detach().clone() for n, p in tr.model.named_parameters()}
            else:
                with torch.no_grad():
                    for n, p in tr.model.named_parameters():
                        p.copy_(snapshot[n])
            before = tr.evaluate(eval_groups)
            t0 = time.perf_counter()
            for _ in progress(range(iterations), total=iterations, desc=f"{est} seed {seed}", enable=show):
                tr.step()
            train_s = time.perf_counter() - t0
            after = tr.evaluate(eval_groups)
            tr.close()
            results.append({"estimator": est, "seed": seed, "before": before, "after": after, "log": tr.log,
                            "train_s": train_s, "warmup_s": warm_s})
    return results


def write_report(results: list[dict], args: argparse.Namespace, out: Path, command: list[str],
                 total_s: float, cpu_s: float) -> None:
    ests = list(dict.fromkeys(r["estimator"] for r in results))
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    rows = []
    for r in results:
        b, a = r["before"], r["after"]
        rows.append([r["estimator"], r["seed"], fmt_num(b["success_rate"]), fmt_num(a["success_rate"]),
                     fmt_num(a["success_rate"] - b["success_rate"]), fmt_num(b["invalid_rate"]),
                     fmt_num(a["invalid_rate"]), fmt_num(a["mean_length"], 2), f"{r['train_s']:.0f}"])
    mean_rows = []
    for e in ests:
        rs = [r for r in results if r["estimator"] == e]
        b = np.mean([r["before"]["success_rate"] for r in rs])
        a = np.mean([r["after"]["success_rate"] for r in rs])
        mean_rows.append([e, len(rs), fmt_num(b), fmt_num(a), fmt_num(a - b)])
    curve_rows = [{"estimator": r["estimator"], "seed": r["seed"], **rec} for r in results for rec in r["log"]]
    write_csv(out.with_suffix(".csv"), curve_rows)
    panels: dict[str, dict[str, Any]] = {}
    for key, title in (("success_rate", "training success rate"), ("mean_return", "training return"),
                       ("invalid_rate", "invalid-action rate"), ("loss", "PPO loss")):
        panels[title] = {}
        for e in ests:
            logs = [r["log"] for r in results if r["estimator"] == e]
            y = np.mean([[rec[key] for rec in lg] for lg in logs], axis=0)
            x = [rec["iteration"] for rec in logs[0]]
            panels[title][e] = (x, y.tolist(), None)
    png = plot_panels(out.with_suffix(".png"), panels, xlabel="iteration", ylabel="", ncols=4,
                      suptitle="tiny Qwen2 from scratch on credit/GridWorld-v0 (mean over seeds)")
    n_eval = args.eval_groups * BASE["group_size"]
    cfg_lines = ", ".join(f"`{k}={v}`" for k, v in BASE.items())
    text = f"""# LLM training on CPU: GRPO vs GiGPO, tiny model from scratch

{machine_lines(command)}

Total wall time: {total_s:.0f} s, CPU time of the process {cpu_s:.0f} s (budget: 15 min on this machine); load
average at the end {load} on {os.cpu_count()} cores (the machine was shared with other jobs).

**Setup.** `credit/GridWorld-v0` with open 4x4 layouts (no walls, no pits; 20 tasks = start/goal
pairs), at most {BASE["max_steps"]} steps, reward 1 on reaching the goal. The observation names the
goal's direction, so "move toward the goal" is optimal — but the model has to learn to read it. The policy is a 2-layer Qwen2-shaped model (hidden {BASE["tiny_hidden"]}, random init) with a
byte-level BPE tokenizer trained on the env's own text; it writes its action as free text
(ActionProjection maps it to an admissible action; anything else is an invalid no-op, penalized
0.1 in the return). Before RL, a **format warm-up** ({BASE["format_warmup_steps"]} supervised steps on *uniformly random* admissible
actions) teaches the action syntax and nothing about the task, so RL starts from a random-walk policy.
The warm-up is run once per seed and **both estimators start from the same weights** and see the
same task seeds. Each iteration: {BASE["groups_per_iter"]} groups x {BASE["group_size"]} rollouts, PPO-clip
({BASE["ppo_epochs"]} epochs x {BASE["minibatches"]} mini-batches, lr {BASE["lr"]}), temperature 1.
Budget: **{args.iterations} iterations per estimator and seed** ({args.iterations * BASE["groups_per_iter"] * BASE["group_size"]} episodes).
Success is measured before and after RL on the same {args.eval_groups} fixed evaluation groups
({n_eval} episodes, sampling at temperature 1).

Settings: {cfg_lines}.

## Success rate before and after RL

| estimator | seeds | success before | success after | gain |
|---|---|---|---|---|
""" + "\n".join("| " + " | ".join(str(c) for c in r) + " |" for r in mean_rows) + f"""

Per seed:

{markdown_table(["estimator", "seed", "success before", "success after", "gain", "invalid before", "invalid after", "episode length after", "train s"], rows)}

Curves (training batches, mean over seeds): `{png.name}`; per-iteration log: `{out.with_suffix(".csv").name}`.

![curves]({png.name})

Reading: the gain is the success on the evaluation groups after RL minus before it, from the same
starting weights. With {len(results) // max(len(ests), 1)} seed(s) and {n_eval} evaluation episodes the
difference *between* the estimators is within noise unless it is large; the point of this run is
that the loop learns on CPU from scratch within the stated budget.
"""
    out.write_text(text)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--estimators", default="grpo,gigpo")
    p.add_argument("--seeds", default="0,1")
    p.add_argument("--iterations", type=int, default=60)
    p.add_argument("--eval-groups", type=int, default=32)
    p.add_argument("--out", default="benchmarks/llm_training.md")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    ests = [e.strip() for e in args.estimators.split(",") if e.strip()]
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    t0, c0 = time.perf_counter(), time.process_time()
    results = []
    for seed in seeds:
        results += run_pair(seed, ests, args.iterations, args.eval_groups, not args.no_progress)
    command = ["python", "-m", "agentgym_credit.bench.llm_training"] + (sys.argv[1:] if argv is None else list(argv))
    write_report(results, args, out, command, time.perf_counter() - t0, time.process_time() - c0)
    for r in results:
        print(f"{r['estimator']:>6} seed {r['seed']}: success {r['before']['success_rate']:.3f} -> "
              f"{r['after']['success_rate']:.3f}")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["BASE", "run_pair", "write_report", "main"]
