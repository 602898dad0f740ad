"""WebShop speed benchmark: catalog, index build/load, search latency, env episodes; writes
``benchmarks/speed/webshop_speed.md``.

What lives here: :func:`run` (all measurements for a list of catalog sizes) and :func:`main` (the
command line: ``python -m agentgym_credit.bench.speed.webshop_speed [--sizes 1000 10000 100000]``).

Measured per catalog size (up to the original's full 1,181,436 products): generation time, peak
resident memory (after generating, after indexing, at the end), fingerprint and chunked BM25 index
build (cold, in memory, the index the env then uses) and load (from the disk cache), search latency p50/p99 over the goals' instruction texts (the expert's query)
and over short product-type queries, the share of goals whose product is in the top 50 for its
instruction text; side by side, the same corpus and analyzer indexed and scored with ``bm25s``
(Lucene method, same k1/b) as a ratio, when ``bm25s`` is installed (up to :data:`BM25S_MAX` products). Env: steps/s, step time p50/p99 and time of a full
15-step episode (random admissible actions; truncated at 15) and of expert episodes; snapshot cost
(``get_state`` + ``set_state`` vs a step).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_credit.bench.stats.report import write_atomic
from agentgym_credit.envs.webshop import search as S
from agentgym_credit.envs.webshop.catalog import PRODUCT_TYPES, generate_catalog
from agentgym_credit.envs.webshop.env import WebShopEnv
from agentgym_credit.envs.webshop.expert import ExpertPolicy, run_expert_episode

BM25S_MAX = 200_000
"""Largest catalog also indexed with ``bm25s`` for the side-by-side (it holds every token list in memory)."""


def _pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs) * 1e3, q))


def _bm25s_side_by_side(docs: list[str], queries: list[str], k1: float, b: float) -> dict[str, float] | None:
    try:
        import bm25s
    except ImportError:
        return None
    t0 = time.perf_counter()
    toks = [S.analyze(d) for d in docs]
    vocab: dict[str, int] = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in tk] for tk in toks]
    r = bm25s.BM25(k1=k1, b=b, method="lucene")
    r.index(bm25s.tokenization.Tokenized(ids=ids, vocab=vocab), show_progress=False)
    build = time.perf_counter() - t0
    lat = []
    for q in queries:
        t = time.perf_counter()
        s = r.get_scores([w for w in S.analyze(q) if w in vocab])
        top = np.argpartition(-s, 49)[:50]
        top[np.argsort(-s[top], kind="stable")]
        lat.append(time.perf_counter() - t)
    return {"build_s": build, "p50_ms": _pct(lat, 50), "p99_ms": _pct(lat, 99)}


def random_browse_action(env: WebShopEnv, info: dict[str, Any], rng: np.random.Generator,
                         avoid_buy: float = 0.9, instead: str = "click[< prev]") -> str:
    """A random admissible action that keeps browsing: a search uses 2-7 words of the instruction, and
    Buy Now is replaced by ``instead`` with probability ``avoid_buy`` (so most episodes run to the step
    limit and time many pages)."""
    adm = info["admissible_actions"]
    a = adm[int(rng.integers(len(adm)))]
    if a.startswith("search["):
        words = env.goal["instruction_text"].split()
        a = f"search[{' '.join(words[: int(rng.integers(2, 8))])}]"
    if a == "click[buy now]" and rng.random() < avoid_buy:
        a = instead
    return a


def _episodes(env: WebShopEnv, n: int, policy: str, rng: np.random.Generator) -> dict[str, float]:
    steps, t0 = 0, time.perf_counter()
    per_episode, per_step = [], []
    for k in range(n):
        te = time.perf_counter()
        if policy == "expert":
            steps += run_expert_episode(env, k % env.num_tasks)[2]
        else:
            obs, info = env.reset(seed=k, options={"task": k % env.num_tasks})
            while True:
                a = random_browse_action(env, info, rng)
                ts = time.perf_counter()
                obs, _, term, trunc, info = env.step(a)
                per_step.append(time.perf_counter() - ts)
                steps += 1
                if term or trunc:
                    break
        per_episode.append(time.perf_counter() - te)
    total = time.perf_counter() - t0
    out = {"steps_per_s": steps / total, "episode_ms_p50": _pct(per_episode, 50), "steps": steps / n}
    if per_step:
        out.update(step_ms_p50=_pct(per_step, 50), step_ms_p99=_pct(per_step, 99))
    return out


def _peak_gb() -> float:
    """Peak resident memory of this process so far, GB (``ru_maxrss`` is KiB on Linux)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9


SNAPSHOT_POLICIES = ("random", "eps-expert")
"""Step mixes of the snapshot measurement: ``random`` — :func:`random_browse_action` (Buy Now mostly declined,
so episodes browse to the step limit); ``eps-expert`` — the agent stand-in of ``bench credit_real``: the
expert's action with probability 0.7 (it searches the whole instruction, opens the product, picks the goal's
options and buys), else a uniformly random admissible one (:data:`EPS_EXPERT`)."""
EPS_EXPERT = 0.3


def snapshot_policy(name: str, rng: np.random.Generator):
    """``act(env, info) -> action`` for one of :data:`SNAPSHOT_POLICIES` (a fresh one per episode)."""
    if name == "random":
        return lambda env, info: random_browse_action(env, info, rng)
    if name != "eps-expert":
        raise ValueError(f"policy must be one of {SNAPSHOT_POLICIES}, got {name!r}")
    expert = ExpertPolicy()
    return lambda env, info: (random_browse_action(env, info, rng, avoid_buy=0.0) if rng.random() < EPS_EXPERT
                              else expert.act(env))


def _snapshot_cost(env: WebShopEnv, n: int, rng: np.random.Generator, policy: str = "random") -> dict[str, float]:
    """Median CPU time, over the states of ``n`` episodes of ``policy`` (:data:`SNAPSHOT_POLICIES`), of a step; of ``get_state`` then
    ``set_state`` of that snapshot timed as one interval (the first snapshot of each new state: the goal's
    measure); of each alone; of a cold ``set_state`` (this process's snapshot memo and a second env's
    renderings and searches forgotten: the restore of a snapshot from another process, tag checked,
    fields parsed and checked, page rendered; into that second env of the same configuration, so that the
    measured env plays on undisturbed); and of an empty interval (the timer's own cost, in every figure).
    Also the mean of the pair (``pair_mean_us``): the cyclic garbage collector, run by allocations, lands in
    some intervals only."""
    from agentgym_credit.envs import snapshot as _snap

    t_step, t_pair, t_get, t_set, t_cold, t_none = [], [], [], [], [], []
    clock = time.process_time
    env.reset(seed=0)
    env.get_state()  # builds the env's asin -> index table once, outside the timing
    cold = type(env)(catalog=env.catalog, split=env.split, observation_mode=env.observation_mode,
                     max_steps=env.max_steps, show_attrs=env.show_attrs, cache_dir=False,
                     reward_rules=env.reward_rules)  # restores as another process would; env plays on undisturbed
    for k in range(n):
        obs, info = env.reset(seed=k, options={"task": k % env.num_tasks})
        act = snapshot_policy(policy, rng)
        while True:
            t0 = clock()
            env.set_state(env.get_state())
            t1 = clock()
            snap = env.get_state()
            t2 = clock()
            env.set_state(snap)
            t3 = clock()
            _snap.clear_memo()
            cold._render_cache.clear()
            cold._restored_results.clear()
            t4 = clock()
            cold.set_state(snap)
            t5 = clock()
            t6 = clock()
            t_pair.append(t1 - t0)
            t_get.append(t2 - t1)
            t_set.append(t3 - t2)
            t_cold.append(t5 - t4)
            t_none.append(t6 - t5)
            a = act(env, info)
            t0 = clock()
            obs, _, term, trunc, info = env.step(a)
            t_step.append(clock() - t0)
            if term or trunc:
                break
    us = 1e6  # CPU time of this process, medians: wall time of ~5 µs calls on a loaded machine is noise
    return {
        "step_us": us * float(np.median(t_step)),
        "step_mean_us": us * float(np.mean(t_step)),
        "pair_us": us * float(np.median(t_pair)),
        "pair_mean_us": us * float(np.mean(t_pair)),
        "get_us": us * float(np.median(t_get)),
        "set_us": us * float(np.median(t_set)),
        "cold_us": us * float(np.median(t_cold)),
        "timer_us": us * float(np.median(t_none)),
        "bytes": float(len(snap)),
        "steps": float(len(t_step)),
    }


def run(
    sizes: list[int], n_queries: int = 500, n_episodes: int = 200, bm25s_compare: bool = True
) -> list[dict[str, Any]]:
    """All measurements for each catalog size (see module docstring)."""
    rows = []
    for n in sizes:
        row: dict[str, Any] = {"n": n}
        S.clear_shared()
        t0 = time.perf_counter()
        cat = generate_catalog(n)
        row["gen_s"] = time.perf_counter() - t0
        row["gen_peak_gb"] = _peak_gb()
        t0 = time.perf_counter()
        cat.fingerprint()
        row["fingerprint_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        idx = S.shared_index(cat, cache=False)  # the env below reuses this index
        row["build_s"] = time.perf_counter() - t0
        row["peak_gb"] = _peak_gb()
        row["postings"], row["terms"] = int(idx.postings_doc.shape[0]), len(idx.vocab)
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "i.npz"
            idx.save(path)
            t0 = time.perf_counter()
            S.BM25Index.load(path)
            row["load_s"] = time.perf_counter() - t0
        goals = cat.goals[:n_queries]
        lat, cpu, hit = [], [], 0
        for g in goals:
            t, c = time.perf_counter(), time.process_time()
            res = idx.search(g["instruction_text"], 50)
            cpu.append(time.process_time() - c)
            lat.append(time.perf_counter() - t)
            hit += any(cat.products[i]["asin"] == g["asin"] for i in res)
        row["p50_ms"], row["p99_ms"] = _pct(lat, 50), _pct(lat, 99)
        row["cpu_p50_ms"], row["cpu_p99_ms"] = _pct(cpu, 50), _pct(cpu, 99)
        unpruned = []  # the same searches scoring every document (the search before issue 25.5's pruning)
        for g in goals:
            c = time.process_time()
            idx.search(g["instruction_text"], 50, prune=False)
            unpruned.append(time.process_time() - c)
        row["cpu_full_p50_ms"], row["cpu_full_p99_ms"] = _pct(unpruned, 50), _pct(unpruned, 99)
        row["recall50"] = hit / len(goals)
        short = [pt.noun for pt in PRODUCT_TYPES]
        lat_s = []
        for _ in range(5):
            for q in short:
                t = time.perf_counter()
                idx.search(q, 50)
                lat_s.append(time.perf_counter() - t)
        row["short_p50_ms"], row["short_p99_ms"] = _pct(lat_s, 50), _pct(lat_s, 99)
        row["bm25s"] = (
            _bm25s_side_by_side(
                [S.product_document(p) for p in cat.products], [g["instruction_text"] for g in goals], idx.k1, idx.b
            )
            if bm25s_compare and n <= BM25S_MAX
            else None
        )
        env = WebShopEnv(catalog=cat, split="test", cache_dir=False)
        rng = np.random.default_rng(0)
        row["random"] = _episodes(env, n_episodes, "random", rng)
        row["expert"] = _episodes(env, min(n_episodes, env.num_tasks), "expert", rng)
        won = [run_expert_episode(env, k)[1]["won"] for k in range(min(n_episodes, env.num_tasks))]
        row["expert_won"] = float(np.mean(won))
        row["snapshot_episodes"] = min(n_episodes, 100)
        row["snapshot"] = {policy: _snapshot_cost(env, row["snapshot_episodes"], np.random.default_rng(1), policy)
                           for policy in SNAPSHOT_POLICIES}
        row["end_peak_gb"] = _peak_gb()
        del env, cat, idx
        S.clear_shared()
        rows.append(row)
        print(f"n={n}: {row}", file=sys.stderr)
    return rows


def _mem_total_gb() -> str:
    try:
        return f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 1e9:.0f}"
    except (ValueError, OSError, AttributeError):
        return "?"


def write_markdown(
    rows: list[dict[str, Any]],
    path: Path,
    command: str,
    load: str = "n/a",
    note: str = "",
    loads: list[dict[str, Any]] | None = None,
) -> None:
    """Write the results tables with the machine, the exact command and ``note`` (e.g. a prediction
    written before the run); ``loads``: :func:`loader_cost` rows."""
    if not rows:
        return _write_loads(loads or [], path, command, load, note)
    lines = [
        "# WebShop speed",
        "",
        f"Machine: `{platform.platform()}`, Python {platform.python_version()}, {os.cpu_count()} CPUs "
        f"(`{platform.processor() or platform.machine()}`), shared with other jobs while measured "
        f"(load average before / after: {load}); {_mem_total_gb()} GB memory.",
        "",
        f"Command: `{command}`",
        "",
        *([note, ""] if note else []),
        "Search = this package's numpy BM25 (Lucene formula, k1=0.9, b=0.4). Queries: the goals' "
        "instruction texts (what the expert types; ~20 terms) and the short product-type names. "
        "`recall@50` = share of goals whose product is in the 50 results of its instruction text.",
        "",
        "| products | generate (s) | index build (s) | index load (s) | search p50 (ms) | search p99 (ms) "
        "| short query p50 / p99 (ms) | recall@50 |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['n']:,} | {r['gen_s']:.2f} | {r['build_s']:.2f} | {r['load_s']:.3f} | {r['p50_ms']:.3f} | "
            f"{r['p99_ms']:.3f} | {r['short_p50_ms']:.3f} / {r['short_p99_ms']:.3f} | {r['recall50']:.3f} |"
        )
    lines += [
        "",
        "Memory and build (peak resident memory of the process, `ru_maxrss`, so far at each point: a row "
        "after a larger one shows that one's peak; run one size per process for its own peak). *Build* = "
        "fingerprint + chunked index build (`shared_index(cache=False)`, the index the env then uses).",
        "",
        "| products | peak after generating (GB) | peak after index (GB) | peak at the end (GB) | fingerprint (s) "
        "| index build (s) | generate + fingerprint + build (min) | terms | postings | search CPU p50 / p99 (ms) "
        "| every document scored: CPU p50 / p99 (ms) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        total = (r["gen_s"] + r["fingerprint_s"] + r["build_s"]) / 60
        lines.append(
            f"| {r['n']:,} | {r['gen_peak_gb']:.2f} | {r['peak_gb']:.2f} | {r['end_peak_gb']:.2f} | "
            f"{r['fingerprint_s']:.1f} | {r['build_s']:.1f} | {total:.1f} | {r['terms']:,} | {r['postings']:,} | "
            f"{r['cpu_p50_ms']:.3f} / {r['cpu_p99_ms']:.2f} | "
            f"{r.get('cpu_full_p50_ms', float('nan')):.3f} / {r.get('cpu_full_p99_ms', float('nan')):.2f} |"
        )
    lines += [
        "",
        "*Search CPU*: the same instruction-text searches timed in this process's CPU time "
        "(`time.process_time`): on a shared 2-core machine under `nice`, wall time also counts the time "
        "the process waits for a core. *Every document scored*: the same searches again with "
        "`search(..., prune=False)`, every term added to every document's score (the search before the "
        "dense-term pruning; the same ranking), right after, in the same process.",
    ]
    if any(r.get("bm25s") for r in rows):
        lines += [
            "",
            "Side by side with `bm25s` (same analyzer and tokens, `method='lucene'`, same k1/b; its `get_scores` "
            "plus the same top-50 selection), ratio = bm25s / ours (above 1: ours is faster):",
            "",
            "| products | bm25s build (s) | build ratio | bm25s p50 (ms) | p50 ratio | bm25s p99 (ms) | p99 ratio |",
            "|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in rows:
            s = r.get("bm25s")
            if s:
                lines.append(
                    f"| {r['n']:,} | {s['build_s']:.2f} | {s['build_s'] / r['build_s']:.2f} | {s['p50_ms']:.3f} | "
                    f"{s['p50_ms'] / r['p50_ms']:.2f} | {s['p99_ms']:.3f} | {s['p99_ms'] / r['p99_ms']:.2f} |"
                )
    lines += [
        "",
        "Env (`split='test'`, observation `text`, no disk cache). *Random*: uniformly random admissible "
        "actions (searches use 2-7 words of the instruction; Buy Now mostly declined) until the 15-step "
        "limit or a purchase. *Expert*: `ExpertPolicy` episodes.",
        "",
        "| products | random: steps/s | random: step p50 / p99 (ms) | random: episode p50 (ms) "
        "| random: steps/episode | expert: steps/s | expert: episode p50 (ms) | expert reward 1.0 |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        a, e = r["random"], r["expert"]
        lines.append(
            f"| {r['n']:,} | {a['steps_per_s']:,.0f} | {a['step_ms_p50']:.3f} / {a['step_ms_p99']:.2f} | "
            f"{a['episode_ms_p50']:.2f} | {a['steps']:.1f} | "
            f"{e['steps_per_s']:,.0f} | {e['episode_ms_p50']:.2f} | {r['expert_won']:.3f} |"
        )
    lines += [
        "",
        *snapshot_lines([(r["n"], policy, sn) for r in rows for policy, sn in r["snapshot"].items()],
                        rows[0].get("snapshot_episodes", 100)),
    ]
    lines += [
        "",
        "Goals: search p50 <= 5 ms at 100k products and at the full 1,181,436; a full 15-step episode <= 50 ms "
        "at 10k; the full size built in under 30 minutes and 12 GB peak.",
        "",
    ]
    lines += _load_lines(loads or [])
    write_atomic(path, "\n".join(lines))


def snapshot_lines(rows: list[tuple[int, str, dict[str, float]]], episodes: int) -> list[str]:
    """The snapshot table of both reports (this one and ``webshop_snapshot``): one row per catalog size and
    step mix (:data:`SNAPSHOT_POLICIES`) of :func:`_snapshot_cost` figures."""
    lines = [
        f"Snapshots: medians of CPU time (`time.process_time`, robust to the machine's load) over every state of "
        f"{episodes} episodes of each step mix (`split='test'`, observation `text`): one step; `get_state()` then "
        "`set_state()` of that snapshot as one interval (the goal: <= 10% of a median step; its mean too: the "
        "cyclic garbage collector lands in some intervals only); each alone; a cold `set_state()` (this "
        "process's snapshot memo and the renderings and searches of a second env forgotten: a snapshot from "
        "another process, its tag checked, its fields parsed and checked, its query searched again and its page "
        "rendered); an empty interval (the timer's own cost, inside every figure: *less timer* takes it out of "
        "both the pair and the step).",
        "",
        "Step mixes: *eps-expert* — what an agent plays, the goal's measure (the expert's action with "
        "probability 0.7: search the instruction, open the product, choose its options, buy; else a random "
        "admissible action); *random* — random browsing to the 15-step limit (Buy Now mostly declined: more "
        "cheap clicks on next/previous page and description tabs), the measure of the earlier reports.",
        "",
        "| products | steps | step median / mean (µs) | get + set median / mean (µs) | (get + set) / step median "
        "| the same, less timer | get_state (µs) | set_state (µs) | cold set_state (µs) | timer (µs) "
        "| snapshot bytes |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n, policy, sn in rows:
        net = (sn["pair_us"] - sn["timer_us"]) / (sn["step_us"] - sn["timer_us"])
        lines.append(
            f"| {n:,} | {policy} ({sn['steps']:.0f}) | {sn['step_us']:.1f} / {sn['step_mean_us']:.1f} "
            f"| {sn['pair_us']:.1f} / {sn['pair_mean_us']:.1f} | {sn['pair_us'] / sn['step_us']:.1%} | {net:.1%} "
            f"| {sn['get_us']:.1f} | {sn['set_us']:.1f} | {sn['cold_us']:.1f} | {sn['timer_us']:.1f} "
            f"| {sn['bytes']:.0f} |"
        )
    return lines


def _load_lines(loads: list[dict[str, Any]]) -> list[str]:
    if not loads:
        return []
    lines = [
        "",
        "`load_original` (streamed files, at most 10 synthetic goals a product, kept as columns) on generated "
        "products written as the original's three files (streamed, one product at a time), in a fresh process "
        "(peak = that process's own high-water mark, `VmHWM`: its `ru_maxrss` would start from the benchmark "
        "process's size at the fork; the writer's peak = the benchmark process's `ru_maxrss`, so far):",
        "",
        "| products | files (MB) | writing them (s) | load (s) | goals | peak (GB) | the writer's peak (GB) |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in loads:
        lines.append(
            f"| {r['n']:,} | {r['files_mb']:.0f} | {r.get('write_s', float('nan')):.1f} | {r['load_s']:.1f} "
            f"| {r['goals']:,} | {r['peak_gb']:.2f} | {r.get('parent_peak_gb', float('nan')):.2f} |"
        )
    return lines + [""]


def _write_loads(loads: list[dict[str, Any]], path: Path, command: str, load: str, note: str) -> None:
    lines = [
        "# WebShop loader",
        "",
        f"Machine: `{platform.platform()}`, Python {platform.python_version()}, {os.cpu_count()} CPUs, shared "
        f"with other jobs (load average before / after: {load}).",
        "",
        f"Command: `{command}`",
        "",
        *([note, ""] if note else []),
        *_load_lines(loads),
    ]
    write_atomic(path, "\n".join(lines))


_LOAD_CHILD = """
import json, re, resource, sys, time
from agentgym_credit.envs.webshop.data import load_original
t = time.perf_counter()
cat = load_original(sys.argv[1], sys.argv[2], sys.argv[3])
try:  # this process's own high-water mark (ru_maxrss starts from the parent's resident size at the fork)
    peak = int(re.search(r"VmHWM:\\s*(\\d+)", open("/proc/self/status").read()).group(1)) * 1024 / 1e9
except (OSError, AttributeError):
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9
print(json.dumps({"load_s": time.perf_counter() - t, "products": len(cat.products), "goals": len(cat.goals),
                  "peak_gb": peak}))
"""


def write_raw_files(n: int, folder: Path) -> list[Path]:
    """``n`` generated products written as the original's three files (items array, attributes object,
    reviews array), streamed from :func:`~agentgym_credit.envs.webshop.catalog.iter_raw` one product at a time
    (memory holds one product, whatever ``n``), without the generator's ``instruction_options`` (so goals
    come from option combinations, as on real files)."""
    import json

    from agentgym_credit.envs.webshop.catalog import iter_raw

    paths = [folder / f for f in ("items_shuffle.json", "items_ins_v2.json", "reviews.json")]
    with open(paths[0], "w", encoding="utf-8") as fi, open(paths[1], "w", encoding="utf-8") as fa, \
            open(paths[2], "w", encoding="utf-8") as fr:
        sep = ["[", "{", "["]
        for item, att, review in iter_raw(n):
            att = {k: v for k, v in att.items() if k != "instruction_options"}
            fi.write(sep[0] + json.dumps(item))
            fa.write(sep[1] + json.dumps(item["asin"]) + ": " + json.dumps(att))
            sep[0] = sep[1] = ", "
            if review is not None:
                fr.write(sep[2] + json.dumps(review))
                sep[2] = ", "
        fi.write("]" if sep[0] == ", " else "[]")
        fa.write("}" if sep[1] == ", " else "{}")
        fr.write("]" if sep[2] == ", " else "[]")
    return paths


def loader_cost(n: int) -> dict[str, Any]:
    """``load_original`` on ``n`` generated products written as the original's three files
    (:func:`write_raw_files`: goals from option combinations as on real files, at most 10 a product), in a
    fresh process: its time, goals and peak memory (the file sizes and the writing time too)."""
    import json
    import subprocess

    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        paths = write_raw_files(n, Path(d))
        write_s = time.perf_counter() - t0
        size_mb = sum(p.stat().st_size for p in paths) / 1e6
        out = subprocess.run(
            [sys.executable, "-c", _LOAD_CHILD, *map(str, paths)], capture_output=True, text=True, check=True
        )
    return {"n": n, "files_mb": size_mb, "write_s": write_s, "parent_peak_gb": _peak_gb(),
            **json.loads(out.stdout.strip().splitlines()[-1])}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[1000, 10000, 100000])
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--episodes", type=int, default=200)
    ap.add_argument("--no-bm25s", action="store_true", help="skip the side-by-side bm25s measurement")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/speed/webshop_speed.md"))
    ap.add_argument("--note", default="", help="text written under the command (e.g. the prediction made before the run)")
    ap.add_argument("--loader", type=int, nargs="*", default=[], help="also time load_original on this many products")
    args = ap.parse_args(argv)
    load0 = os.getloadavg()[0]
    rows = run(args.sizes, args.queries, args.episodes, not args.no_bm25s) if args.sizes else []
    loads = [loader_cost(n) for n in args.loader]
    load = f"{load0:.1f} / {os.getloadavg()[0]:.1f}"
    given = list(argv if argv is not None else sys.argv[1:])
    if "--note" in given:  # the note is printed under the command, not inside it
        i = given.index("--note")
        given[i + 1 : i + 2] = ["'...'"]
    cmd = "python -m agentgym_credit.bench.speed.webshop_speed " + " ".join(given)
    write_markdown(rows, args.out, cmd.strip(), load, args.note, loads)
    print(args.out.read_text())


if __name__ == "__main__":
    main()


__all__ = ["EPS_EXPERT", "SNAPSHOT_POLICIES", "main", "random_browse_action", "run", "snapshot_lines",
           "snapshot_policy", "write_markdown", "write_raw_files"]
