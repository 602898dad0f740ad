"""A learning run on CPU: a tiny LM trained from scratch with GRPO, GiGPO and HGPO, side by side.

What lives here:

- :data:`BASE`: the run's settings (a small ``credit/GridWorld-v0`` instance, a 2-layer Qwen2-shaped
  model with a tokenizer trained on the env's own text — nothing downloaded);
- :func:`run_pair`: for one seed, one format warm-up shared by every estimator (the same starting
  weights), then RL iterations per estimator, with the success rate measured on the same fixed
  evaluation groups before and after;
- :func:`main`: runs the seeds, writes ``benchmarks/learning/llm_training.md`` (machine, exact command,
  budget, table of before/after success), ``benchmarks/learning/llm_training.csv`` (per-iteration log) and
  ``benchmarks/learning/llm_training.png`` (curves);
- :func:`gpu_training`: the GPU check (``--gpu``): 20 iterations of bf16 training (fp32
  master weights, bf16 autocast, static bucketed cache; ``--compile`` adds the compiled decode step) of a
  0.5B-sized model
  (hidden 896, 24 layers, random init, tokenizer trained on the env's text) on ``credit/GridWorld-v0``,
  writing ``benchmarks/learning/gpu_training.md``: per-iteration success, log-prob gap, entropy, phase times and
  tokens/s, peak GPU memory and the number of shape buckets compiled. ``--gpu --device cpu --tiny`` is
  the smoke path the tests run.

Run: ``python -m agentgym_credit.bench.learning.llm_training`` (about 15 minutes on 2 busy cores);
``python -m agentgym_credit.bench.learning.llm_training --gpu`` on a CUDA machine.
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

from agentgym_credit.bench.stats.report import (
    fmt_num,
    machine_lines,
    markdown_table,
    progress,
    write_atomic,
    write_csv,
)
from agentgym_credit.plotting import try_plot_panels

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


def _load() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"


def write_report(results: list[dict], args: argparse.Namespace, out: Path, command: list[str],
                 total_s: float, cpu_s: float, load_start: str = "n/a") -> None:
    ests = list(dict.fromkeys(r["estimator"] for r in results))
    load = _load()
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
    gained = ", ".join(f"{e} {sum(r['after']['success_rate'] > r['before']['success_rate'] for r in results if r['estimator'] == e)}"
                       f" of {sum(r['estimator'] == e for r in results)}" for e in ests)
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
    png = try_plot_panels(out.with_suffix(".png"), panels, xlabel="iteration", ylabel="", ncols=4,
                          suptitle="tiny Qwen2 from scratch on credit/GridWorld-v0 (mean over seeds)")
    png_line = (f"Curves (training batches, mean over seeds): `{png.name}`; per-iteration log: "
                f"`{out.with_suffix('.csv').name}`.\n\n![curves]({png.name})" if png is not None else
                f"Per-iteration log: `{out.with_suffix('.csv').name}` (no plot: matplotlib is not installed).")
    n_eval = args.eval_groups * BASE["group_size"]
    cfg_lines = ", ".join(f"`{k}={v}`" for k, v in BASE.items())
    title = " vs ".join(e.upper().replace("GIGPO", "GiGPO") for e in ests)
    text = f"""# LLM training on CPU: {title}, tiny model from scratch

{machine_lines(command)}

Total wall time: {total_s:.0f} s, CPU time of the process {cpu_s:.0f} s (budget: 15 min on this machine); load
average (1/5/15 min) at the start {load_start}, at the end {load}, on {os.cpu_count()} cores (the machine was
shared with other jobs).

**Setup.** `credit/GridWorld-v0` with open 4x4 layouts (no walls, no pits; 20 tasks = start/goal
pairs), at most {BASE["max_steps"]} steps, reward 1 on reaching the goal. The observation names the
goal's direction, so "move toward the goal" is optimal — but the model has to learn to read it. The policy is a 2-layer Qwen2-shaped model (hidden {BASE["tiny_hidden"]}, random init) with a
byte-level BPE tokenizer trained on the env's own text; it writes its action as free text
(ActionProjection maps it to an admissible action; anything else is an invalid no-op, penalized
0.1 in the return). Before RL, a **format warm-up** ({BASE["format_warmup_steps"]} supervised steps on *uniformly random* admissible
actions) teaches the action syntax and nothing about the task, so RL starts from a random-walk policy.
The warm-up is run once per seed and **every estimator starts from the same weights** and sees the
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

{png_line}

Reading: the gain is the success on the evaluation groups after RL minus before it, from the same
starting weights. Seeds with a positive gain: {gained}.

{comparison_text(results)}
"""
    write_atomic(out, text)


MIN_SEEDS_FOR_CONCLUSIONS = 5
"""Below this many seeds the report draws no conclusion about which estimator learns better."""


def comparison_text(results: list[dict]) -> str:
    """Each estimator's gain against the first one's (paired by seed: same starting weights and tasks), with
    95% t-intervals and Holm's correction over the comparisons, and what may be concluded from them."""
    from agentgym_credit.bench.stats.metrics import holm_verdicts, p_from_interval, paired_diff_ci

    ests = list(dict.fromkeys(r["estimator"] for r in results))
    gain = {(r["estimator"], r["seed"]): r["after"]["success_rate"] - r["before"]["success_rate"] for r in results}
    seeds = sorted({r["seed"] for r in results})
    base, rows, diffs, ps = ests[0], [], [], []
    for e in ests[1:]:
        both = [s for s in seeds if (e, s) in gain and (base, s) in gain]
        mean, hw, n = paired_diff_ci(np.array([gain[e, s] for s in both]), np.array([gain[base, s] for s in both]))
        diffs.append(mean)
        ps.append(p_from_interval(mean, hw, n - 1))
        rows.append((e, n, mean, hw))
    verdicts = holm_verdicts(diffs, ps)
    lines = [f"**Between estimators** (gain minus {base}'s gain, paired by seed; 95% t-interval; a difference "
             f"counts only if it survives Holm's correction over the {len(rows)} comparisons):", ""]
    for (e, n, mean, hw), v in zip(rows, verdicts):
        interval = f"± {hw:.3f}" if np.isfinite(hw) else "(no interval)"
        lines.append(f"- {e}: {mean:+.3f} {interval} over {n} seeds — {v}")
    n_seeds = len(seeds)
    if n_seeds < MIN_SEEDS_FOR_CONCLUSIONS:
        lines += ["", f"With {n_seeds} seed(s) no conclusion about which estimator learns better is drawn from this "
                      f"run (at least {MIN_SEEDS_FOR_CONCLUSIONS} are needed). What it shows is that the loop learns on CPU from scratch "
                      "within the stated budget. The estimator comparison with power is `bench train` "
                      "(`benchmarks/learning/training.md`)."]
    return "\n".join(lines)


def gpu_training(args: argparse.Namespace, command: list[str]) -> int:
    """The 20-iteration bf16 GPU training check (see module docstring); returns the exit status."""
    import tempfile

    import torch

    from agentgym_credit.trainer.config import TrainerConfig
    from agentgym_credit.trainer.loop import Trainer

    on_cpu = args.device == "cpu"
    if on_cpu and not args.tiny:
        print("llm_training --gpu: --device cpu is only a smoke path (add --tiny). Nothing was written.",
              file=sys.stderr)
        return 2
    if not on_cpu and not torch.cuda.is_available():
        print("llm_training --gpu: no CUDA device found; this check measures bf16 training on a GPU. Nothing was "
              "written.", file=sys.stderr)
        return 2
    iters = 1 if args.tiny else args.iterations
    size = dict(tiny_hidden=64, tiny_layers=2) if args.tiny else dict(tiny_hidden=896, tiny_layers=24)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        cfg = TrainerConfig(
            env_id="credit/GridWorld-v0", env_kwargs=dict(BASE["env_kwargs"]), group_size=8,
            groups_per_iter=2 if args.tiny else 16, max_steps=8, max_new_tokens=8, history_len=2, history_depth=1,
            estimator="gigpo", dtype="bfloat16", device=args.device, sampler_cache="static",
            compile_decode=args.compile and not on_cpu, format_warmup_steps=2 if args.tiny else 100, lr=1e-5, ppo_epochs=1,
            minibatches=2, iterations=iters, out_dir=tmp, save_every=0, progress=not args.no_progress, plot=False,
            **size)
        tr = Trainer(cfg)
        if not on_cpu:
            torch.cuda.reset_peak_memory_stats()
        log = tr.train()
        n_params = sum(p.numel() for p in tr.model.parameters())
        master = sorted({str(p.dtype).split(".")[-1] for p in tr.model.parameters()})
        buckets, allocs = tr.sampler.counters["buckets"], tr.sampler.counters["static_allocations"]
        tr.close()
    total = time.perf_counter() - t0
    peak = torch.cuda.max_memory_allocated() / 2**30 if not on_cpu else float("nan")
    cols = ["iteration", "success_rate", "invalid_rate", "loss", "entropy", "logprob_gap", "grad_norm", "collect_s",
            "update_s", "tokens_per_s", "update_tokens_per_s"]
    table = markdown_table(cols, [[fmt_num(r.get(c, float("nan")), 0 if c == "iteration" else 3) for c in cols]
                                  for r in log])
    where = (f"GPU `{torch.cuda.get_device_name(0)}`" if not on_cpu else
             "**CPU smoke run at toy size (--tiny): not a GPU measurement, judges no goal.**")
    text = f"""# bf16 training on a GPU: 0.5B-sized model on credit/GridWorld-v0

{machine_lines(command)}

{where}. Total {total:.0f} s (incl. tokenizer, warm-up, compilation).

Model: Qwen2-shaped, hidden {size["tiny_hidden"]}, {size["tiny_layers"]} layers, {n_params / 1e6:.1f} M parameters,
random init, tokenizer trained on the env's own text (nothing downloaded); loaded as bf16, trained with
fp32 master weights (parameter dtypes now: {", ".join(master)}) under bf16 autocast; old log-probs
recomputed with the update's forward (default under bf16); static bucketed cache, compiled decode
{"on" if cfg.compile_decode else "off"}: {buckets} shape buckets used, {allocs} static caches allocated.
GiGPO, {cfg.groups_per_iter} groups x {cfg.group_size} rollouts per iteration, {cfg.format_warmup_steps} format
warm-up steps first. Peak GPU memory {fmt_num(peak, 2)} GiB.

{table}
"""
    out = write_atomic(args.out, text)
    print(table)
    print(f"wrote {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--estimators", default="grpo,gigpo,hgpo")
    p.add_argument("--seeds", default="0,1")
    p.add_argument("--iterations", type=int, default=60)
    p.add_argument("--eval-groups", type=int, default=32)
    p.add_argument("--out", default="benchmarks/learning/llm_training.md")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--gpu", action="store_true", help="the bf16 GPU training check (writes --out, e.g. "
                   "benchmarks/learning/gpu_training.md) instead of the CPU comparison")
    p.add_argument("--device", default="cuda", help="with --gpu: cuda (default) or cpu with --tiny")
    p.add_argument("--tiny", action="store_true", help="with --gpu: toy sizes, a smoke run")
    p.add_argument("--compile", action="store_true", help="with --gpu: compiled decode step (one inductor compile "
                   "per shape bucket: minutes for a 0.5B model, beyond the 10-minute check)")
    args = p.parse_args(argv)
    if args.gpu:
        if args.out == "benchmarks/learning/llm_training.md":
            args.out = "benchmarks/learning/gpu_training.md"
        if args.iterations == 60:
            args.iterations = 20
        command = ["python", "-m", "agentgym_credit.bench.learning.llm_training"] + (sys.argv[1:] if argv is None
                                                                             else list(argv))
        return gpu_training(args, command)
    ests = [e.strip() for e in args.estimators.split(",") if e.strip()]
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    t0, c0, load_start = time.perf_counter(), time.process_time(), _load()
    results = []
    for seed in seeds:
        results += run_pair(seed, ests, args.iterations, args.eval_groups, not args.no_progress)
    command = ["python", "-m", "agentgym_credit.bench.learning.llm_training"] + (sys.argv[1:] if argv is None else list(argv))
    write_report(results, args, out, command, time.perf_counter() - t0, time.process_time() - c0, load_start)
    for r in results:
        print(f"{r['estimator']:>6} seed {r['seed']}: success {r['before']['success_rate']:.3f} -> "
              f"{r['after']['success_rate']:.3f}")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["BASE", "run_pair", "write_report", "gpu_training", "main"]
