"""Fault figures: killed overwrites, killed workers, damaged or planted cache files.

What lives here: :func:`main` (``agentgym-credit bench reliability`` or
``python -m agentgym_credit.bench.faults.reliability``), which measures, in one run, and writes each part as its
own section of ``benchmarks/faults/reliability.md`` (:func:`~agentgym_credit.bench.stats.report.write_section`; other
sections, such as the ALFWorld memory one, are kept):

- :func:`killed_overwrites` — a process loops ``RolloutBatch.save`` over a good file and is SIGKILLed at
  a random moment, again and again; after each kill the file must load as the old or the new batch.
  Side by side: the same loop writing in place (``pq.write_table`` on the path, what ``save`` did before).
- :func:`worker_kills` — collects of ``credit/GridWorld-v0`` (slip 0.3, a deterministic hash policy) on
  the subprocess or Ray backend while a thread SIGKILLs worker processes at random moments; every batch
  is compared with the batch collected without kills from the same seeds on the sync backend.
- :func:`~agentgym_credit.bench.faults.reliability_caches.cache_faults` — damaged or planted entries of the
  ALFWorld translation cache and of the WebShop index cache, each in a fresh interpreter that builds,
  resets and plays the env (see :mod:`agentgym_credit.bench.faults.reliability_caches`).

Predictions are stated in :data:`PREDICTIONS` (written before the first full run) and printed with the
results, so the run judges them.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_credit.bench.stats.report import machine_lines, markdown_table, progress, write_section
from agentgym_credit.keys import stable_hash

PREAMBLE = "# Reliability\n\nOne section per area; each is written by its own benchmark.\n"
"""Head of a new ``benchmarks/faults/reliability.md`` (the same text as the ALFWorld memory benchmark's)."""

PREDICTIONS = {
    "overwrites": "now: 0 destroyed of 20 killed overwrites, a leftover temporary file for most kills "
                  "(a killed writer cannot remove its own); in-place write: most kills destroy the file "
                  "(the issue saw 8 of 8).",
    "workers": "0 lost and 0 failed trajectories on both backends; about 1 retry per trajectory that was on "
               "a killed worker (a few of them 2, when the replacement is killed too); every batch under "
               "kills identical to the batch without kills, and the clean batches identical across "
               "sync, subprocess and Ray.",
    "caches": "0 code executed, 0 crashes and the same transcript as the clean run for every kind on both "
              "caches; a warning and a rebuilt good entry for each damaged file, except: a directory in place "
              "of the file is never rebuilt (ALFWorld warns each time, WebShop silently rebuilds in memory), and "
              "WebShop replaces a FIFO or a link to /dev/zero without a warning (it only reads regular files); "
              "no kind raises peak RSS by more than 50 MiB over the clean run (the bombs are not inflated).",
}
"""What the full run is expected to show (written before it ran)."""

GRID = {"size": 5, "slip": 0.3, "n_tasks": 4, "max_steps": 30}
"""``credit/GridWorld-v0`` settings of the worker-kill part: slip makes copies differ (copy RNG matters)."""


def hash_policy(observations: list[str], infos: list[dict[str, Any]]) -> list[str]:
    """A deterministic pseudo-random admissible action per observation (a function of the observation,
    the trajectory and the step only, so a re-run trajectory makes the same choices)."""
    out = []
    for o, i in zip(observations, infos):
        acts = i["admissible_actions"]
        r = i["rollout"]
        out.append(acts[stable_hash(f"{o}|{r['group_id']}|{r['copy']}|{r['t']}") % len(acts)])
    return out


# -- part 1: killed overwrites ----------------------------------------------------------------------
_WRITER = r"""
import sys
import pyarrow.parquet as pq
from agentgym_credit.wrappers import RolloutBatch
src, dst, mode = sys.argv[1:4]
batch = RolloutBatch.load(src)
print("ready", flush=True)
while True:
    if mode == "now":
        batch.save(dst)
    else:  # what save did before: write the file in place
        pq.write_table(batch.to_arrow(), dst)
"""


def _padded_batch(seed: int, groups: int, pad: int):
    """A GridWorld batch whose rows carry ``pad`` hex characters of extras (a file of a few MB)."""
    from agentgym_credit.wrappers import GroupedRolloutCollector

    rng = np.random.default_rng(seed)

    def policy(obs, infos):
        return [{"action": a, "pad": rng.bytes(pad // 2).hex()} for a in hash_policy(obs, infos)]

    col = GroupedRolloutCollector("credit/GridWorld-v0", env_kwargs=GRID, group_size=4, max_steps=30,
                                  progress=False, seed=seed)
    return col.collect(policy, tasks=groups)


def killed_overwrites(kills: int, folder: str | os.PathLike, *, mode: str = "now", groups: int = 16,
                      pad: int = 4000, max_delay: float = 1.5, seed: int = 0, show: bool = True) -> dict[str, Any]:
    """SIGKILL a process that loops over overwriting a good batch file, ``kills`` times.

    ``mode="now"`` loops ``RolloutBatch.save``; ``"in place"`` writes the file in place (the old
    ``save``). After each kill the file is loaded: the old batch (kept), the new batch (complete) or
    anything else (destroyed: the error is recorded); then the old batch is saved back. Returns the
    counts, the temporary files left in the folder and the seconds spent."""
    from agentgym_credit.wrappers import RolloutBatch

    if mode not in ("now", "in place"):
        raise ValueError(f"mode must be 'now' or 'in place', got {mode!r}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    old, new = _padded_batch(seed, groups, pad), _padded_batch(seed + 1, groups, pad)
    src, path = folder / "new-source.parquet", folder / "batch.parquet"
    new.save(src)
    rng = np.random.default_rng(seed)
    counts = {"kept": 0, "new": 0, "destroyed": 0}
    errors: list[str] = []
    t0 = time.perf_counter()
    for _ in progress(range(kills), total=kills, desc=f"overwrites ({mode})", enable=show):
        old.save(path)
        proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(src), str(path), mode.split()[0]],
                                stdout=subprocess.PIPE, text=True)
        try:
            if proc.stdout.readline().strip() != "ready":
                raise RuntimeError(f"the writer process did not start (exit code {proc.wait()})")
            time.sleep(float(rng.uniform(0.05, max_delay)))
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            proc.stdout.close()
        try:
            back = RolloutBatch.load(path)
        except Exception as exc:  # noqa: BLE001 — what a user would see
            counts["destroyed"] += 1
            errors.append(f"{type(exc).__name__}: {str(exc).replace(str(folder), '<tmp>')[:120]}")
            continue
        kind = "kept" if back == old else "new" if back == new else "destroyed"
        counts[kind] += 1
        if kind == "destroyed":
            errors.append("loads, but is neither the old nor the new batch")
    leftovers = sorted(p.name for p in folder.iterdir() if p not in (src, path))
    return {"mode": mode, "kills": kills, **counts, "leftover_tmp": len(leftovers), "errors": errors,
            "file_mb": path.stat().st_size / 2**20 if path.exists() else 0.0,
            "seconds": time.perf_counter() - t0}


# -- part 2: killed workers -------------------------------------------------------------------------
def same_rollouts(a: Any, b: Any) -> bool:
    """Whether two batches hold the same rollouts: every step column and every trajectory column but
    ``retries`` (and ``error``) equal; ``meta`` may differ only in the backend's name."""
    for f in fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if f.name == "meta":
            if {**x, "backend": ""} != {**y, "backend": ""}:
                return False
        elif f.name == "traj":
            for g in fields(x):
                if g.name in ("retries", "error"):
                    continue
                u, v = getattr(x, g.name), getattr(y, g.name)
                if isinstance(u, np.ndarray) and not np.array_equal(u, v, equal_nan=u.dtype.kind == "f"):
                    return False
                if not isinstance(u, np.ndarray) and u != v:
                    return False
        elif isinstance(x, np.ndarray):
            if x.shape != y.shape or not np.array_equal(x, y, equal_nan=x.dtype.kind == "f"):
                return False
        elif x != y:
            return False
    return True


class _Killer(threading.Thread):
    """SIGKILLs the given pids at the given delays after :meth:`arm`; records which kills landed while
    a collect was running."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.plan: list[tuple[float, int]] = []
        self.running = False
        self.landed = 0
        self.missed = 0
        self._go = threading.Event()
        self._done = threading.Event()
        self._stop = False

    def arm(self, plan: list[tuple[float, int]]) -> None:
        self.plan, self.running = sorted(plan), True
        self._done.clear()
        self._go.set()

    def disarm(self) -> None:
        self.running = False
        self._done.wait()

    def stop(self) -> None:
        self._stop = True
        self._go.set()

    def run(self) -> None:
        while True:
            self._go.wait()
            self._go.clear()
            if self._stop:
                return
            t0 = time.monotonic()
            for delay, pid in self.plan:
                time.sleep(max(0.0, t0 + delay - time.monotonic()))
                if not self.running:
                    self.missed += 1
                    continue
                try:
                    os.kill(pid, signal.SIGKILL)
                    self.landed += 1
                except ProcessLookupError:
                    self.missed += 1
            self._done.set()


def _collector(backend: str, seed: int, workers: int, max_retries: int):
    from agentgym_credit.wrappers import GroupedRolloutCollector

    opts = {"ray_options": {"num_cpus": 0.25}} if backend == "ray" else {}
    return GroupedRolloutCollector("credit/GridWorld-v0", env_kwargs=GRID, group_size=4, max_steps=30,
                                   backend=backend, num_workers=workers, progress=False, seed=seed,
                                   timeout=120, max_retries=max_retries, **opts)


def worker_kills(backend: str, kills: int, *, workers: int = 4, tasks: int = 8, kills_per_collect: int = 2,
                 max_retries: int = 3, seed: int = 0, show: bool = True) -> dict[str, Any]:
    """Collect ``tasks`` groups at a time on ``backend`` while a thread SIGKILLs ``kills_per_collect``
    random worker processes at random moments of each collect, until ``kills`` kills landed during
    collects. Each batch is compared (:func:`same_rollouts`) with the sync backend's batch from the same
    seeds. Returns kills (landed / missed: the collect had ended or the worker was gone), trajectories,
    failed ones, trajectories and groups incomplete, retries, identical batches and the seconds spent."""
    import warnings

    killer = _Killer()
    killer.start()
    col = _collector(backend, seed, workers, max_retries)
    ref = _collector("sync", seed, 1, max_retries)
    rng = np.random.default_rng(seed)
    task_list = [g % GRID["n_tasks"] for g in range(tasks)]
    out = {"backend": backend, "collects": 0, "trajectories": 0, "failed": 0, "incomplete_groups": 0,
           "retried_trajectories": 0, "retries": 0, "max_retries_one": 0, "identical": 0, "clean_identical": 0}
    t0 = time.perf_counter()
    bar = progress(iter(int, 1), desc=f"worker kills ({backend})", enable=show)
    try:
        seeds = [seed * 1000 + g for g in range(tasks)]
        clean = col.collect(hash_policy, tasks=task_list, seeds=seeds)  # also warms the workers up
        expected = ref.collect(hash_policy, tasks=task_list, seeds=seeds)
        out["clean_identical"] = int(same_rollouts(clean, expected))
        t0c = time.perf_counter()
        col.collect(hash_policy, tasks=task_list, seeds=seeds)
        span = max(time.perf_counter() - t0c, 0.05)  # a collect without kills: kills fall in this window
        while killer.landed < kills:
            next(bar)
            c = out["collects"] = out["collects"] + 1
            seeds = [seed * 1000 + c * tasks + g for g in range(tasks)]
            pids = col.worker_pids()
            victims = rng.choice(len(pids), size=min(kills_per_collect, len(pids), kills - killer.landed),
                                 replace=False)
            killer.arm([(float(rng.uniform(0, span)), pids[v]) for v in victims])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # failures are counted below
                try:
                    batch = col.collect(hash_policy, tasks=task_list, seeds=seeds)
                finally:
                    killer.disarm()
            expected = ref.collect(hash_policy, tasks=task_list, seeds=seeds)
            tt = batch.traj
            out["trajectories"] += len(tt)
            out["failed"] += int(tt.failed.sum())
            out["incomplete_groups"] += int(len(batch.failed_groups))
            out["retried_trajectories"] += int((tt.retries > 0).sum())
            out["retries"] += int(tt.retries.sum())
            out["max_retries_one"] = max(out["max_retries_one"], int(tt.retries.max(initial=0)))
            out["identical"] += int(same_rollouts(batch, expected))
    finally:
        killer.stop()
        col.close()
        ref.close()
    out.update(kills=killer.landed, missed=killer.missed, seconds=time.perf_counter() - t0,
               lost=out["collects"] * tasks * 4 - out["trajectories"] + out["failed"], tasks=tasks)
    return out


def _start_ray(workers: int) -> Any:
    import ray

    if not ray.is_initialized():
        ray.init(num_cpus=max(2, workers), include_dashboard=False, log_to_driver=False,
                 configure_logging=False)
    return ray


# -- report -----------------------------------------------------------------------------------------
def _overwrite_section(arms: list[dict[str, Any]], cmd: str, load: tuple[float, float]) -> str:
    rows = [[a["mode"], a["kills"], a["kept"], a["new"], a["destroyed"], a["leftover_tmp"],
             f"{a['file_mb']:.1f}", f"{a['seconds']:.0f}"] for a in arms]
    errs = sorted({e for a in arms for e in a["errors"]})
    return "\n".join([
        "## Killed overwrites of a `RolloutBatch` file",
        "", machine_lines(cmd), "", _load_line(load), "",
        "A process loads a batch and overwrites a file holding another (good) batch in a loop; it is "
        "SIGKILLed at a random moment (0.05-1.5 s after it is ready), then the file is loaded. `kept`: the "
        "old batch, `new`: the complete new one, `destroyed`: anything else. `in place` is the write the "
        "old `save` did (`pq.write_table` on the path), side by side in the same run.",
        "", f"Prediction (before the run): {PREDICTIONS['overwrites']}", "",
        markdown_table(["save", "kills", "kept", "new", "destroyed", "temp files left", "file MB at the end", "s"], rows),
        "", "Goal: 0 destroyed files in 20 killed overwrites: "
        + ("**met**." if arms[0]["destroyed"] == 0 and arms[0]["kills"] >= 20 else
           f"**not met** ({arms[0]['destroyed']} destroyed of {arms[0]['kills']})."),
        *([""] + ["Errors seen: " + "; ".join(f"`{e}`" for e in errs[:4])] if errs else []),
        "", f"`temp files left`: kills that landed inside a write ({arms[0]['leftover_tmp']} of "
        f"{arms[0]['kills']} with the current save, each leaving the writer's `.batch.parquet.*.tmp`; the file "
        "itself was intact every time). Such a temporary file is never read, and nothing removes it.",
    ])


def _worker_section(runs: list[dict[str, Any]], cmd: str, load: tuple[float, float], cross: bool | None) -> str:
    rows = [[r["backend"], r["kills"], r["missed"], r["collects"], r["trajectories"], r["lost"], r["failed"],
             r["incomplete_groups"], r["retried_trajectories"], r["retries"], r["max_retries_one"],
             f"{r['identical']} of {r['collects']}", f"{r['seconds']:.0f}"] for r in runs]
    met = all(r["lost"] == 0 and r["failed"] == 0 and r["identical"] == r["collects"] and r["kills"] >= 60
              for r in runs) and bool(cross)
    return "\n".join([
        "## Random worker kills during collects",
        "", machine_lines(cmd), "", _load_line(load), "",
        f"Collects of {runs[0]['tasks']} groups x 4 copies of `credit/GridWorld-v0` ({GRID}) with a "
        "deterministic hash policy, 4 workers; during each collect a thread SIGKILLs 2 random worker "
        "processes at random moments within the span of a collect without kills. `missed`: kills that found "
        "the collect over or the worker already gone (not counted as kills). `lost`: trajectories missing or "
        "failed. Every batch is compared with the batch collected from the same seeds on the sync backend "
        "without kills (all step columns and the trajectory table but `retries`).",
        "", f"Prediction (before the run): {PREDICTIONS['workers']}", "",
        markdown_table(["backend", "kills", "missed", "collects", "trajectories", "lost", "failed",
                        "incomplete groups", "trajectories re-run", "retries", "most retries of one",
                        "identical to no-kill batch", "s"], rows),
        "", f"Clean batches identical across sync, subprocess and Ray: {'yes' if cross else 'no'}.",
        "", "Goal: 0 lost trajectories after 60 random worker kills on subprocess and Ray, identical batches: "
        + ("**met**." if met else "**not met** (see the table)."),
    ])


def _load_line(load: tuple[float, float]) -> str:
    return (f"Load average {load[0]:.1f} at the start, {load[1]:.1f} at the end, on {os.cpu_count()} CPUs "
            "(shared with other jobs).")


def main(argv: Sequence[str] | None = None) -> int:
    from agentgym_credit.bench.faults.reliability_caches import cache_faults, cache_section

    ap = argparse.ArgumentParser(prog="agentgym-credit bench reliability", description=__doc__.split("\n")[0])
    ap.add_argument("--overwrite-kills", type=int, default=20, help="killed overwrites with the current save")
    ap.add_argument("--old-overwrite-kills", type=int, default=8, help="killed overwrites writing in place")
    ap.add_argument("--worker-kills", type=int, default=60, help="worker kills per backend")
    ap.add_argument("--backends", default="subprocess,ray", help="comma-separated backends for worker kills")
    ap.add_argument("--kinds", default="all", help="comma-separated cache fault kinds (default: all)")
    ap.add_argument("--caches", default="alfworld,webshop", help="comma-separated caches to damage")
    ap.add_argument("--parts", default="overwrites,workers,caches", help="comma-separated parts to run")
    ap.add_argument("--out", default="benchmarks/faults/reliability.md", help="report file (sections replaced)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bars")
    argv = list(argv) if argv is not None else sys.argv[1:]
    args = ap.parse_args(argv)
    parts = set(args.parts.split(","))
    show = not args.no_progress
    cmd = "agentgym-credit bench reliability" + ("" if not argv else " " + " ".join(argv))
    out = Path(args.out)
    for name, text in PREDICTIONS.items():
        if name in parts:
            print(f"prediction ({name}): {text}", flush=True)

    if "overwrites" in parts:
        load0 = os.getloadavg()[0]
        with tempfile.TemporaryDirectory(prefix="agc-overwrites-") as tmp:
            arms = [killed_overwrites(args.overwrite_kills, Path(tmp) / "now", mode="now", show=show)]
            if args.old_overwrite_kills:
                arms.append(killed_overwrites(args.old_overwrite_kills, Path(tmp) / "old", mode="in place",
                                              show=show))
        body = _overwrite_section(arms, cmd, (load0, os.getloadavg()[0]))
        write_section(out, "reliability-overwrites", body, preamble=PREAMBLE)
        print(body, flush=True)

    if "workers" in parts:
        load0 = os.getloadavg()[0]
        backends = [b for b in args.backends.split(",") if b]
        if "ray" in backends:
            _start_ray(4)
        runs = [worker_kills(b, args.worker_kills, show=show) for b in backends]
        cross = all(r["clean_identical"] for r in runs)
        body = _worker_section(runs, cmd, (load0, os.getloadavg()[0]), cross)
        write_section(out, "reliability-workers", body, preamble=PREAMBLE)
        print(body, flush=True)

    if "caches" in parts:
        load0 = os.getloadavg()[0]
        kinds = None if args.kinds == "all" else args.kinds.split(",")
        results = cache_faults(kinds, [c for c in args.caches.split(",") if c], show=show)
        body = cache_section(results, cmd, _load_line((load0, os.getloadavg()[0])), PREDICTIONS["caches"])
        write_section(out, "reliability-caches", body, preamble=PREAMBLE)
        print(body, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = [
    "GRID",
    "PREDICTIONS",
    "hash_policy",
    "killed_overwrites",
    "main",
    "same_rollouts",
    "worker_kills",
]
