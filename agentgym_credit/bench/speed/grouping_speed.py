"""``agentgym-credit bench grouping_speed``: how long building similarity/embedding anchors takes, up to 100k steps.

The corpus is real collector output: household rollouts (uniform policy, groups of N = 8) with the
observation text perturbed on every step (:class:`~agentgym_credit.wrappers.perturbation.TextPerturbation`,
so exact texts rarely repeat) or plain. The collected groups are tiled with fresh group ids up to
the largest size (groups keep their real size and texts; only their number grows). Each timing is
the best of ``--repeats`` runs of :func:`~agentgym_credit.credit.anchor_groups.anchor_keys` on the
``StepArrays`` (the whole call: text normalization, candidate pairs, exact comparison, linkage).

Compared: the exact key (``obs_key``), ``similarity`` (indel ≥ 0.95, components), the verl-agent
setting (difflib ≥ 0.95, leader), ``embedding`` (bag of words given, cosine ≥ 0.9), and a plain
Python loop of the verl-agent rule (each text against every cluster leader of its group with
``difflib``, as ``build_step_group`` does) and the vectorized setting on the same ``--plain-rows``
rows, as a ratio in one run.

Output (``--out``, default ``benchmarks/speed/`` from the repository root, else ``./agc-bench/``):
``grouping_speed.md`` with the machine, the command and its load average before and after.
What lives here: :func:`corpus`, :func:`plain_leader_difflib`, :func:`main`.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

import agentgym_credit  # noqa: F401  (registers the envs)
from agentgym_credit.bench.exact.credit import default_out
from agentgym_credit.bench.stats import report as R
from agentgym_credit.credit.anchor_groups import anchor_keys
from agentgym_credit.credit.embedding_anchors import bag_of_words_embedding
from agentgym_credit.credit.steps import StepArrays
from agentgym_credit.wrappers.collector import GroupedRolloutCollector
from agentgym_credit.wrappers.perturbation import PerturbedEnvFactory

ENV_ID = "credit/Household-v0"


def corpus(rows: int, perturb: bool, seed: int = 0, group_size: int = 8, collect_rows: int = 20_000) -> StepArrays:
    """``rows`` steps with ``obs_text`` and ``embedding`` (bag of words, k = 1): collected, then tiled."""
    rng = np.random.default_rng(seed)
    env = PerturbedEnvFactory(ENV_ID, seed=seed) if perturb else ENV_ID
    col = GroupedRolloutCollector(env, group_size=group_size, max_steps=30, progress=False, history_depth=0, seed=seed)
    try:
        batch = col.collect(lambda o, infos: [i["admissible_actions"][rng.integers(len(i["admissible_actions"]))]
                                              for i in infos], tasks=max(1, min(collect_rows, rows) // (group_size * 25)))
    finally:
        col.close()
    steps = replace(batch.steps, obs_text=batch.observation,
                    embedding=bag_of_words_embedding(batch.observation, batch.traj_id, batch.t, k=1, dim=128))
    reps = -(-rows // steps.n)
    span_g, span_t = int(steps.group_id.max()) + 1, int(steps.traj_id.max()) + 1
    cols = {f: getattr(steps, f) for f in ("group_id", "traj_id", "t", "reward", "done", "state_key", "obs_key",
                                           "obs_text", "embedding")}
    tiled = {f: np.concatenate([v + k * (span_g if f == "group_id" else span_t) if f in ("group_id", "traj_id") else v
                                for k in range(reps)]) for f, v in cols.items()}
    whole = StepArrays(**tiled)
    keep = np.cumsum(np.r_[0, whole.layout.lengths])  # cut at a trajectory boundary near ``rows``
    cut = int(keep[np.searchsorted(keep, rows)]) if rows < whole.n else whole.n
    return whole.select(np.arange(whole.n) < cut)


def plain_leader_difflib(group_id: np.ndarray, texts: Sequence[str], threshold: float = 0.95) -> list[int]:
    """The verl-agent rule as a plain loop: each text joins the first cluster whose leader it matches."""
    label, leaders, nxt = [], {}, 0
    for g, s in zip(group_id.tolist(), texts):
        for lead_text, lab in leaders.setdefault(g, []):
            if difflib.SequenceMatcher(None, s, lead_text).ratio() >= threshold:
                label.append(lab)
                break
        else:
            leaders[g].append((s, nxt))
            label.append(nxt)
            nxt += 1
    return label


METHODS = (
    ("obs_key (exact)", dict(anchor="obs_key")),
    ("similarity indel ≥ 0.95", dict(anchor="similarity", threshold=0.95)),
    ("similarity indel ≥ 0.8", dict(anchor="similarity", threshold=0.8)),
    ("verl-agent (difflib ≥ 0.95, leader)", dict(anchor="similarity", threshold=0.95, sim_metric="difflib",
                                                 linkage="leader")),
    ("embedding bow cos ≥ 0.9", dict(anchor="embedding", threshold=0.9)),
)


def _best(fn, repeats: int) -> tuple[float, float]:
    """(wall, CPU) seconds, each the best of ``repeats`` calls; CPU counts every thread of this process,
    so it reads the work done, less disturbed than wall time by other processes on a shared machine."""
    wall = cpu = float("inf")
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall, cpu = min(wall, time.perf_counter() - t0), min(cpu, time.process_time() - c0)
    return wall, cpu


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``agentgym-credit bench grouping_speed``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(prog="agentgym-credit bench grouping_speed", description=__doc__.split("\n")[0])
    p.add_argument("--sizes", nargs="+", type=int, default=[10_000, 30_000, 100_000])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--plain-rows", type=int, default=2_000, help="rows for the plain-Python verl-agent loop")
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    if min(args.sizes) < 1 or args.repeats < 1:
        print("error: sizes and repeats must be >= 1", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out is not None else default_out(False, room="speed")
    load0 = os.getloadavg()[0]
    rows, t_start = [], time.perf_counter()
    sizes = sorted(args.sizes)
    for perturb in (True, False):
        full = corpus(max(sizes), perturb)
        for n in sizes:
            st = full.select(np.arange(full.n) < n) if n < full.n else full
            uniq = len({(g, s) for g, s in zip(st.group_id.tolist(), st.obs_text)})
            for name, opts in METHODS:
                slow = opts.get("sim_metric") == "difflib" and n > sizes[0]
                if slow:
                    rows.append([("perturbed" if perturb else "plain"), f"{st.n:,}", f"{uniq:,}", name,
                                 "not run (slow; smallest size only)", ""])
                    continue
                wall, cpu = _best(lambda st=st, opts=opts: anchor_keys(st, **opts), args.repeats)
                rows.append([("perturbed" if perturb else "plain"), f"{st.n:,}", f"{uniq:,}", name,
                             f"{wall * 1e3:.0f}", f"{cpu * 1e3:.0f}"])
        small = full.select(np.arange(full.n) < args.plain_rows)
        plain = _best(lambda small=small: plain_leader_difflib(small.group_id, small.obs_text), 1)
        vec = _best(lambda small=small: anchor_keys(small, **dict(METHODS[3][1])), args.repeats)
        uniq = len({(g, s) for g, s in zip(small.group_id.tolist(), small.obs_text)})
        for name, (wall, cpu), note in (("plain-Python verl-agent loop", plain, ""),
                                        (METHODS[3][0], vec, f" ({plain[0] / vec[0]:.0f}x faster than the loop)")):
            rows.append([("perturbed" if perturb else "plain"), f"{small.n:,}", f"{uniq:,}", name,
                         f"{wall * 1e3:.0f}{note}", f"{cpu * 1e3:.0f}"])
    load1 = os.getloadavg()[0]
    hundred = [r for r in rows if r[0] == "perturbed" and r[3] == "similarity indel ≥ 0.95"]
    md = ["# Grouping speed: similarity and embedding anchors", "",
          R.machine_lines("agentgym-credit bench grouping_speed " + " ".join(argv)), "",
          f"Machine load (1-minute load average): {load0:.1f} before, {load1:.1f} after, {os.cpu_count()} CPUs. "
          f"Wall time {time.perf_counter() - t_start:.0f} s. Times: best of {args.repeats} runs of `anchor_keys` "
          "(milliseconds): wall clock, and CPU time of this process (all its threads; what the work costs, "
          "less disturbed by the other processes of a shared machine).", "",
          "Corpus: household rollouts (uniform policy, N = 8, up to 30 steps) collected once per text setting "
          "and tiled with fresh group ids up to the largest size; `distinct texts` counts distinct (group, text) "
          "pairs. Perturbed: `TextPerturbation` (paraphrase 0.7, reorder 0.5 per step).", "",
          R.markdown_table(["text", "rows", "distinct texts", "anchor", "wall ms", "CPU ms"], rows,
                           align="lrrlrr"), "",
          f"Similarity grouping (indel ≥ 0.95) at the largest size, perturbed text: {hundred[-1][4]} ms wall, "
          f"{hundred[-1][5]} ms CPU ({hundred[-1][1]} rows). Target: under 1 s at 100k steps; read it with the load above "
          "(the machine is shared).", ""]
    out.mkdir(parents=True, exist_ok=True)
    path = out / "grouping_speed.md"
    R.write_atomic(path, "\n".join(md))
    print("\n".join(md[6:8]))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())


__all__ = ["corpus", "plain_leader_difflib", "METHODS", "main"]
