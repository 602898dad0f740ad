"""WebShop snapshot cost against a step; writes ``benchmarks/speed/webshop_snapshot.md``.

What lives here: :func:`main` (``python -m agentgym_credit.bench.speed.webshop_snapshot [--sizes 1000 10000]
[--episodes 100] [--policies eps-expert random]``). For each catalog size and step mix it runs
:func:`~agentgym_credit.bench.speed.webshop_speed._snapshot_cost` (the same measurement as the snapshot section of
``webshop_speed``, without the search and catalog benchmarks around it): medians of CPU time over every state
of the episodes of one step, of ``get_state()`` then ``set_state()`` of that snapshot as one interval (the
goal: <= 10% of a median step), of each alone, of a cold ``set_state()`` (a snapshot from another process:
tag checked, fields parsed and checked, search run again, page rendered; into a second env, so that the
measured one plays on undisturbed) and of an empty interval (the timer's own cost).

The step mixes (:data:`~agentgym_credit.bench.speed.webshop_speed.SNAPSHOT_POLICIES`): ``eps-expert`` — what an agent
plays (the expert's action with probability 0.7: search the instruction, open the product, choose its
options, buy; else a random admissible action), the goal's measure; ``random`` — random browsing to the step
limit (more cheap clicks: next/previous page, description tabs), the measure of the earlier reports.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path

import numpy as np

from agentgym_credit.bench.speed.webshop_speed import SNAPSHOT_POLICIES, _snapshot_cost, snapshot_lines
from agentgym_credit.bench.stats.report import write_atomic
from agentgym_credit.envs.webshop.env import WebShopEnv, shared_catalog


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--episodes", type=int, default=100)
    ap.add_argument("--policies", nargs="+", choices=SNAPSHOT_POLICIES, default=["eps-expert", "random"])
    ap.add_argument("--note", default="", help="text written under the command (the prediction made before the run)")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/speed/webshop_snapshot.md"))
    args = ap.parse_args(argv)
    load0 = os.getloadavg()[0]
    rows = []
    for n in args.sizes:
        env = WebShopEnv(catalog=shared_catalog(n), split="test", cache_dir=False)
        for policy in args.policies:
            rows.append((n, policy, _snapshot_cost(env, args.episodes, np.random.default_rng(1), policy)))
            print(n, policy, rows[-1][2], file=sys.stderr)
    load1 = os.getloadavg()[0]
    given = list(argv if argv is not None else sys.argv[1:])
    if "--note" in given:
        i = given.index("--note")
        given[i + 1: i + 2] = ["'...'"]
    lines = [
        "# WebShop snapshot cost",
        "",
        f"Machine: `{platform.platform()}`, Python {platform.python_version()}, {os.cpu_count()} CPUs, shared "
        f"with other jobs while measured (load average before / after: {load0:.1f} / {load1:.1f}).",
        "",
        f"Command: `python -m agentgym_credit.bench.speed.webshop_snapshot {' '.join(given)}`".rstrip(),
        "",
    ]
    if args.note:
        lines += [args.note, ""]
    lines += snapshot_lines(rows, args.episodes)
    write_atomic(args.out, "\n".join(lines) + "\n")
    print(args.out.read_text())


if __name__ == "__main__":
    main()
