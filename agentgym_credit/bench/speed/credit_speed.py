"""Speed of the credit estimators: vectorized numpy vs the plain-Python reference, in one run.

Run ``python -m agentgym_credit.bench.speed.credit_speed`` (from the repository root, so that the
reference implementation ``tests/reference_estimators.py`` can be loaded); it writes
``benchmarks/speed/credit_speed.md`` with the machine, the exact command, and per estimator and batch size
the best-of-``--repeat`` vectorized time, the reference time (one run) and their ratio.

What lives here:

- :func:`synthetic_steps`: a batch shaped like agent RL data (groups of 8 trajectories of ~30 steps,
  ~40% of steps in a state already visited in their group, history levels 0..K);
- :func:`time_call`: best-of-n wall time and process CPU time of one call;
- :func:`main`: the benchmark (``main(argv=None)``).

Everything runs in one single-threaded process (these numpy operations use no threads); ``--pin``
also pins it to one CPU. The load average before and after the run is written down: on a shared
machine, other processes slow every wall-clock number, so the process CPU time
(``time.process_time``, what this process itself spent) is reported next to it. All vectorized timings run before any reference run, so
the references' Python-object churn does not disturb them. Times exclude
building the :class:`StepArrays` (validation + trajectory layout, done once per batch and shared by
all estimators); that cost is reported in its own table, for rows in trajectory order and shuffled.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from agentgym_credit.bench.stats.report import progress, write_atomic
from agentgym_credit.credit import ESTIMATORS, StepArrays, group_stats
from agentgym_credit.credit.grouping import mix64
from agentgym_credit.keys import MISSING

DEFAULT_SIZES = (10_000, 100_000, 1_000_000)
OPTIONS: dict[str, dict] = {"hgpo": {"depth": 4}, "hgpo_precision": {"depth": 4}}
VARIANTS: dict[str, tuple[str, dict]] = {"graph[obs]": ("graph", {"key": "obs_key"}),
                                         "graph_q[obs]": ("graph_q", {"key": "obs_key"})}
"""Rows beyond each registered estimator's defaults: label -> (estimator, options); on ``obs_key`` the graph
estimators run their aliasing defaults (``loops="events"``; ``graph`` also ``alias="fallback"``)."""


def _call(name: str) -> tuple[str, dict]:
    """(registered estimator, options) of a row label."""
    return VARIANTS.get(name, (name, OPTIONS.get(name, {})))
SHAPES: dict[str, dict] = {
    "default": {},
    "pool 12": {"pool": 12, "revisit": 0.9},
    "taxi-like": {"pool": 500, "revisit": 1.0, "mean_length": 200},
    "long, pool 200": {"pool": 200, "revisit": 0.8, "mean_length": 100},
    "groups of 16": {"group_size": 16, "pool": 48, "revisit": 0.6},
    "short, no revisits": {"mean_length": 8, "revisit": 0.0},
}
"""``--shapes``: batch shapes (``synthetic_steps`` options) on which ``graph`` and ``graph[obs]`` are timed
against GiGPO per row: Taxi-like batches have hundreds of repeated nodes per group (issue 29: the dense solve
cost 51x / 228x GiGPO there), a pool of 12 states makes every node a hub."""
SHAPE_ESTIMATORS = ("gigpo", "graph", "graph[obs]")
REF_MAX: dict[str, int] = {"graph": 100_000, "graph_q": 100_000}
"""Per-estimator cap on the plain-Python reference (``graph``'s solves every group's value equations by
Gauss-Jordan elimination, O(nodes^3) Python operations per group)."""


def synthetic_steps(n: int, *, group_size: int = 8, mean_length: int = 30, revisit: float = 0.4,
                    pool: int = 24, depth: int = 4, seed: int = 0, shuffle: bool = False) -> StepArrays:
    """About ``n`` steps: trajectories of 15..45 steps (mean ~30) in groups of ``group_size``.

    Each step is, with probability ``revisit``, one of ``pool`` recurring states of its group (so it
    is usually shared with other steps), else a fresh state; observations alias 4 pairs of recurring
    states. History keys chain the state keys of the last k+1 steps (MISSING where t < k).
    """
    rng = np.random.default_rng(seed)
    lengths = []
    total = 0
    while total < n:
        ln = int(rng.integers(mean_length // 2, mean_length * 3 // 2 + 1))
        ln = min(ln, n - total)
        lengths.append(ln)
        total += ln
    lengths = np.asarray(lengths)
    n_traj = len(lengths)
    traj = np.repeat(np.arange(n_traj), lengths)
    first = np.r_[0, np.cumsum(lengths)[:-1]]
    t = np.arange(n) - np.repeat(first, lengths)
    group = traj // group_size
    shared = rng.random(n) < revisit
    common = rng.integers(0, pool, n)
    state = np.where(shared, group * pool + common + 1, (1 << 40) + np.arange(n)).astype(np.uint64)
    seen = np.where(common < 8, common // 2, common)  # the first 8 recurring states look alike in pairs
    obs = np.where(shared, group * pool + seen + 1, (1 << 40) + np.arange(n)).astype(np.uint64)
    hist = np.full((n, depth + 1), MISSING, dtype=np.uint64)
    hist[:, 0] = state
    h = state.copy()
    for k in range(1, depth + 1):
        prev = np.zeros(n, dtype=np.uint64)
        prev[k:] = state[:-k]
        h = mix64(h.view(np.int64), prev) | np.uint64(1)
        hist[:, k] = np.where(t >= k, h, np.uint64(MISSING))
    last = np.r_[first[1:] - 1, n - 1]
    reward = np.zeros(n)
    reward[last] = (rng.random(n_traj) < 0.5).astype(float)
    reward[rng.random(n) < 0.05] -= 0.1
    done = np.zeros(n, dtype=bool)
    done[last] = rng.random(n_traj) < 0.9
    cols = dict(group_id=group, traj_id=traj, t=t, reward=reward, done=done, state_key=state, obs_key=obs,
                history_keys=hist, valid=rng.random(n) > 0.1, value=rng.normal(size=n))
    if shuffle:
        perm = rng.permutation(n)
        cols = {k: v[perm] for k, v in cols.items()}
    return StepArrays(**cols)


def time_call(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Best wall time and best process CPU time of ``repeat`` calls, seconds."""
    wall = cpu = float("inf")
    for _ in range(max(1, repeat)):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall = min(wall, time.perf_counter() - w0)
        cpu = min(cpu, time.process_time() - c0)
    return wall, cpu


def _load_references(root: Path):
    path = root / "tests" / "reference_estimators.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location("reference_estimators", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.REFERENCES


def _pin_one_core() -> str:
    if hasattr(os, "sched_setaffinity"):
        try:
            cpu = min(os.sched_getaffinity(0))
            os.sched_setaffinity(0, {cpu})
            return f"pinned to CPU {cpu} (os.sched_setaffinity)"
        except OSError as e:
            return f"not pinned ({e})"
    return "not pinned (no sched_setaffinity on this OS)"


def _fmt(sec: float | None) -> str:
    if sec is None:
        return "—"
    return f"{sec * 1e3:.1f} ms" if sec < 1 else f"{sec:.2f} s"


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and write the markdown report; returns 0."""
    p = argparse.ArgumentParser(prog="python -m agentgym_credit.bench.speed.credit_speed", description=__doc__.split("\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES))
    p.add_argument("--ref-max", type=int, default=1_000_000,
                   help="run the plain-Python reference only up to this many steps")
    p.add_argument("--estimators", nargs="+", default=[*ESTIMATORS, *VARIANTS], choices=[*ESTIMATORS, *VARIANTS])
    p.add_argument("--repeat", type=int, default=3, help="vectorized timing: best of this many calls")
    p.add_argument("--pin", action="store_true", help="pin the process to one CPU (os.sched_setaffinity)")
    p.add_argument("--out", default="benchmarks/speed/credit_speed.md")
    p.add_argument("--note", default=None, help="a line for the report: e.g. the prediction written before the run")
    p.add_argument("--shapes", type=int, default=0, metavar="N",
                   help="also time gigpo, graph and graph[obs] on every batch shape of SHAPES at N steps (0: skip)")
    p.add_argument("--root", default=str(Path(__file__).resolve().parents[3]),
                   help="repository root holding tests/reference_estimators.py")
    args = p.parse_args(argv)
    command = "python -m agentgym_credit.bench.speed.credit_speed " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    pinned = _pin_one_core() if args.pin else "not pinned (single-threaded)"
    load_before = os.getloadavg() if hasattr(os, "getloadavg") else None
    refs = _load_references(Path(args.root))
    build, structure = [], []
    vec_times: dict[tuple[str, int], tuple[float, float]] = {}
    ref_times: dict[tuple[str, int], tuple[float, float]] = {}
    jobs = [(n, name) for n in args.sizes for name in args.estimators]
    batches: dict[int, StepArrays] = {}

    def batch(n: int) -> StepArrays:
        if n not in batches:
            batches.clear()
            batches[n] = synthetic_steps(n)
        return batches[n]

    for n, name in progress(jobs, desc="credit_speed (vectorized)"):
        steps = batch(n)
        if not any(b[0] == n for b in build):
            cols = {k: getattr(steps, k) for k in ("group_id", "traj_id", "t", "reward", "done", "state_key",
                                                    "obs_key", "history_keys", "valid", "value")}
            perm = np.random.default_rng(1).permutation(n)
            shuffled = {k: v[perm] for k, v in cols.items()}
            build.append((n, time_call(lambda c=cols: StepArrays(**c), args.repeat)[0],
                          time_call(lambda c=shuffled: StepArrays(**c), args.repeat)[0]))
            gs = group_stats(steps)
            structure.append((n, gs.n_trajectories, gs.n_groups, gs.levels["state_key"].frac_non_singleton,
                              gs.levels["history_4"].frac_non_singleton, gs.aliasing_rate))
        base, opts = _call(name)
        vec_times[name, n] = time_call(lambda f=ESTIMATORS[base], o=opts, s=steps: f(s, **o), args.repeat)
    ref_jobs = [(n, name) for n, name in jobs if refs is not None and _call(name)[0] in refs
                and n <= min(args.ref_max, REF_MAX.get(_call(name)[0], args.ref_max))]
    for n, name in progress(ref_jobs, desc="credit_speed (reference)"):
        steps = batch(n)
        base, opts = _call(name)
        ref_times[name, n] = time_call(lambda f=refs[base], s=steps, o=opts: f(s, **o), 1)
    shape_rows = _time_shapes(args.shapes, args.repeat) if args.shapes else []
    load_after = os.getloadavg() if hasattr(os, "getloadavg") else None
    rows = [(name, n, vec_times[name, n], ref_times.get((name, n))) for n, name in jobs]
    load = ("unknown" if load_before is None else
            f"{load_before[0]:.1f} before, {load_after[0]:.1f} after (1-minute load average, {os.cpu_count()} CPUs)")

    lines = [
        "# Credit estimators: speed, vectorized numpy vs plain-Python reference",
        "",
        f"Command: `{command}`",
        "",
        f"Machine: {platform.platform()}, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs visible, {pinned}; Python {platform.python_version()}, numpy {np.__version__}. "
        f"Machine load during the run: {load}.",
        "",
        *([f"Note: {args.note}", ""] if args.note else []),
        "Batches from `synthetic_steps(n)`: groups of 8 trajectories, 15..45 steps each (mean ~30), each step "
        "with probability 0.4 one of 24 recurring states of its group (8 of them aliased in pairs by `obs_key`), history levels 0..4 (K=4). "
        "`hgpo` and `hgpo_precision` use all 5 levels (`depth=4`); every estimator runs with its defaults otherwise. "
        f"Vectorized: best of {args.repeat} calls. Reference: `tests/reference_estimators.py`, one call"
        + ("" if refs is not None else " — NOT RUN (tests/reference_estimators.py not found)")
        + (f", only up to {args.ref_max:,} steps" + "".join(f" ({k}: up to {v:,})" for k, v in REF_MAX.items())
           + " (— = not run; nothing is extrapolated)" if refs is not None else "")
        + ". Times exclude building the `StepArrays` (table below).",
        "",
        "| estimator | steps | vectorized wall | vectorized CPU | reference wall | reference CPU | "
        "reference / vectorized (CPU) | (wall) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, n, vec, ref in rows:
        r_cpu = f"{ref[1] / vec[1]:.0f}×" if ref is not None and vec[1] > 0 else "—"
        r_wall = f"{ref[0] / vec[0]:.0f}×" if ref is not None else "—"
        lines.append(f"| {name} | {n:,} | {_fmt(vec[0])} | {_fmt(vec[1])} | {_fmt(ref and ref[0])} | "
                     f"{_fmt(ref and ref[1])} | {r_cpu} | {r_wall} |")
    lines += ["", "Batch structure (from `group_stats`):", "",
              "| steps | trajectories | groups | steps in non-singleton state groups | "
              "same at history level 4 | aliasing rate (obs_key) |", "|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {n:,} | {tr:,} | {g:,} | {a:.3f} | {b:.3f} | {c:.3f} |" for n, tr, g, a, b, c in structure]
    lines += ["", "`StepArrays` construction (validation + trajectory layout, shared by all estimators):", "",
              "| steps | rows in trajectory order | rows shuffled |", "|---:|---:|---:|"]
    lines += [f"| {n:,} | {_fmt(a)} | {_fmt(b)} |" for n, a, b in build]
    lines += _shape_table(shape_rows, args.shapes, args.repeat)
    write_atomic(args.out, "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


def _time_shapes(n: int, repeat: int) -> list[tuple[str, dict[str, float], float]]:
    """(shape, CPU seconds per estimator, hubs per group) for every shape of :data:`SHAPES` at ``n`` steps."""
    out = []
    for shape, kw in progress(list(SHAPES.items()), desc="credit_speed (shapes)"):
        steps = synthetic_steps(n, **kw)
        times = {}
        for name in SHAPE_ESTIMATORS:
            base, opts = _call(name)
            times[name] = time_call(lambda f=ESTIMATORS[base], o=opts, s=steps: f(s, **o), repeat)[1]
        _, per_node = np.unique(np.c_[steps.group_id, steps.state_key.view(np.int64)], axis=0, return_counts=True)
        groups = len(np.unique(steps.group_id))
        out.append((shape, times, float(np.sum(per_node >= 2)) / groups))
    return out


def _shape_table(rows: list[tuple[str, dict[str, float], float]], n: int, repeat: int) -> list[str]:
    """The markdown section of ``--shapes``: per-row CPU time and the ratio to GiGPO."""
    if not rows:
        return []
    lines = ["", f"## Batch shapes: cost per row relative to GiGPO ({n:,} steps each, best of {repeat}, CPU time)", "",
             "Goal (issue 29): `graph` and `graph[obs]` (obs_key with its defaults: events nodes and the "
             "alias fallback, a second solve where it cuts an edge) at most 10x GiGPO's time per row on every shape.", "",
             "| shape (`synthetic_steps` options) | state nodes met twice, per group | gigpo µs/row | "
             "graph µs/row | graph / gigpo | graph[obs] µs/row | graph[obs] / gigpo |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for shape, t, hubs in rows:
        g = t["gigpo"]
        lines.append(f"| {shape} `{SHAPES[shape] or 'defaults'}` | {hubs:.0f} | {g / n * 1e6:.3f} | "
                     f"{t['graph'] / n * 1e6:.3f} | {t['graph'] / g:.1f}x | {t['graph[obs]'] / n * 1e6:.3f} | "
                     f"{t['graph[obs]'] / g:.1f}x |")
    return lines


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["synthetic_steps", "time_call", "main", "SHAPES"]
