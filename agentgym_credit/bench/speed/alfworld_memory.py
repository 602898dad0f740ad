"""ALFWorld native memory over many new games: the ALFWorld section of ``benchmarks/faults/reliability.md``.

What lives here: :func:`main` (``python -m agentgym_credit.bench.speed.alfworld_memory``), which runs, each in a
fresh interpreter and in the same run,

- ``now``: ``generate_game`` for ``--games`` new games (each solvability-checked on the engine, as the env
  does before use) after ``--warmup`` games, recording the process RSS;
- ``old engine behaviour``: the same on fewer games with the two leaks put back (a fresh
  ``fast_downward.load_lib()`` per engine, as textworld's ``PddlEnv`` does, and textworld's memo never
  pruned), for the side-by-side ratio;

and writes a table (RSS after warm-up, at the end, growth, MiB per game) and a PNG of RSS vs games into
the ALFWorld section of ``benchmarks/faults/reliability.md`` (other sections of that file are left as they are;
written atomically) and ``benchmarks/speed/alfworld_memory.png``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

from agentgym_credit.bench.stats.report import write_section

PREAMBLE = "# Reliability\n\nOne section per area; each is written by its own benchmark.\n"

_CHILD = r"""
import json, os, sys, time
os.environ["AGENTGYM_CREDIT_SAS_CACHE"] = "0"
from agentgym_credit.envs.alfworld import fast
from agentgym_credit.envs.alfworld.generator import TASK_TYPES, generate_game
if sys.argv[3] == "old":
    import fast_downward
    fast.acquire_lib = lambda owner: fast_downward.load_lib()
    fast.MEMENTO_CACHE_LIMIT = 10**12
try:
    from tqdm import tqdm
except ImportError:
    tqdm = lambda x, **_: x
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
warm, n = int(sys.argv[1]), int(sys.argv[2])
for i in range(warm):
    generate_game(TASK_TYPES[i % 6], 900_000 + i)
curve = [(0, rss())]
t = time.perf_counter()
for i in tqdm(range(n), desc=sys.argv[3], file=sys.stderr, mininterval=5):
    generate_game(TASK_TYPES[i % 6], 1_000_000 + i)
    if (i + 1) % max(1, n // 20) == 0:
        curve.append((i + 1, rss()))
print(json.dumps({"curve": curve, "seconds": time.perf_counter() - t}))
"""


def _arm(name: str, warmup: int, games: int) -> dict:
    out = subprocess.run([sys.executable, "-c", _CHILD, str(warmup), str(games), name],
                         stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _plot(arms: dict[str, dict], path: Path) -> str:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "(matplotlib not installed: no plot)"
    from agentgym_credit.plotting import series_styles

    fig, ax = plt.subplots(figsize=(6, 3.5))
    for (name, res), style in zip(arms.items(), series_styles(len(arms))):
        xs, ys = zip(*res["curve"])
        ax.plot(xs, ys, ms=4, label=name, **style)
    ax.set_xlabel("new games after warm-up")
    ax.set_ylabel("RSS (MiB)")
    ax.set_title("ALFWorld: process RSS over new games")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return f"![RSS over new games]({path.name})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m agentgym_credit.bench.speed.alfworld_memory",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=1000, help="new games measured with the current engine")
    ap.add_argument("--old-games", type=int, default=150, help="new games with the old engine behaviour")
    ap.add_argument("--warmup", type=int, default=30, help="games before the first RSS reading")
    ap.add_argument("--out", default="benchmarks/faults/reliability.md")
    argv = sys.argv[1:] if argv is None else list(argv)  # recorded in the report as run
    args = ap.parse_args(argv)

    load = os.getloadavg()[0]
    arms = {"now": _arm("now", args.warmup, args.games), "old engine behaviour": _arm("old", args.warmup, args.old_games)}
    rows = []
    per_game = {}
    for name, res in arms.items():
        (_, r0), (n, r1) = res["curve"][0], res["curve"][-1]
        per_game[name] = (r1 - r0) / n
        rows.append(f"| {name} | {n} | {r0:.0f} | {r1:.0f} | {r1 - r0:+.1f} | {1024 * per_game[name]:.0f} "
                    f"| {1000 * res['seconds'] / n:.0f} |")
    ratio = per_game["old engine behaviour"] / max(per_game["now"], 1e-9)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    plot = _plot(arms, out.parent / "alfworld_memory.png")
    cmd = "python -m agentgym_credit.bench.speed.alfworld_memory" + ("" if not argv else " " + " ".join(argv))
    body = "\n".join([
        "## ALFWorld: memory over many new games",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: `{platform.platform()}`, Python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"load average {load:.1f} at the start (shared with other jobs).",
        "",
        "Each arm is a fresh interpreter that builds new generated games (`generate_game`: problem, engine",
        "load and the expert's solvability check on the engine, as the env does before first use), all six",
        f"task types in turn, after {args.warmup} warm-up games; RSS is read from `/proc/self/statm`.",
        "`old engine behaviour` puts back the two leaks this fix removed: a fresh `fast_downward.load_lib()`",
        "per engine (a new mapped copy of `libdownward.so`) and textworld's proposition memo never pruned.",
        "",
        "| arm | new games | RSS after warm-up (MiB) | RSS at end (MiB) | growth (MiB) | KiB per game | ms per game |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"Growth per game, old / now: {ratio:.1f}x. Target: growth under 20 MiB over 1,000 new games.",
        "",
        plot,
        "",
    ])
    write_section(out, "alfworld", body, preamble=PREAMBLE)
    print(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["main"]
