"""Copy the generated benchmark findings into the benchmarks guide, so no guide holds hand-typed numbers.

``docs/benchmarks.md`` (or any markdown file given with ``--readme``) marks each generated block with ``<!-- generated:NAME -->`` ... ``<!-- /generated:NAME -->``;
:data:`BLOCKS` says which report in ``benchmarks/`` fills it. The guide keeps a *summary* only — the report's
``## Summary`` section when it has one, else the lead sentence of each top-level finding (at most
:data:`MAX_POINTS`) — and links the report, where the findings, tables and plots live in full. Image links
are rewritten to point into ``benchmarks/``. ``--check`` exits 1 when the guide is out of date (the test suite
runs it), so a rerun benchmark and its summary cannot drift apart.

    python -m agentgym_credit.bench.stats.readme           # rewrite the blocks
    python -m agentgym_credit.bench.stats.readme --check   # exit 1 if the guide is stale
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from agentgym_credit.bench.stats.report import write_atomic

BLOCKS: dict[str, tuple[str, tuple[str, ...]]] = {
    "credit_accuracy": ("exact/credit_accuracy.md", ("Findings",)),
    "training": ("learning/training.md", ("Findings",)),
    "training_graph_obs": ("learning/training_graph_obs.md", ("Findings",)),
}
"""block name -> (report file in benchmarks/ (its room folder included), the ``##`` sections summarized, in order, when the report has
no ``## Summary`` section)."""

MAX_POINTS = 6
"""Most findings a summary shows per report."""

_IMAGE = re.compile(r"!\[([^\]]*)\]\((?!https?://|/|\.\./|benchmarks/)([^)]+)\)")


def extract_sections(markdown: str, titles: Sequence[str]) -> str:
    """The named ``## `` sections of a report (heading included), in the order given."""
    parts: dict[str, str] = {}
    for chunk in re.split(r"(?m)^(?=## )", markdown):
        if chunk.startswith("## "):
            parts[chunk[3:].splitlines()[0].strip()] = chunk.rstrip() + "\n"
    missing = [t for t in titles if t not in parts]
    if missing:
        raise KeyError(f"report has no section(s) {missing}; it has {sorted(parts)}")
    return "\n".join(parts[t] for t in titles)


def lead_points(section: str, limit: int = MAX_POINTS) -> list[str]:
    """The lead sentence of each top-level bullet of a findings section (sub-bullets and the rest of each
    point stay in the report), at most ``limit`` of them; bold-led points first."""
    points = re.findall(r"(?m)^- (.+)$", section)
    points.sort(key=lambda p: not p.startswith("**"))  # stable: the report's order within each kind
    return [f"- {_first_sentence(p)}" for p in points[:limit]]


def _first_sentence(text: str) -> str:
    """``text`` up to its first ". " outside parentheses (`` …`` marks a cut)."""
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch in "([") - (ch in ")]")
        if ch == "." and depth == 0 and text[i + 1:i + 2] == " " and not text[max(0, i - 2):i].endswith("e.g"):
            return text[:i + 1] + " …"
    return text


def render_block(bench_dir: Path, name: str, prefix: str = "benchmarks/") -> str:
    """The text of one generated block: a summary of its report, and a link to it (``prefix``: the path from the
    file that holds the block to ``benchmarks/``)."""
    file, titles = BLOCKS[name]
    report = (bench_dir / file).read_text(encoding="utf-8")
    try:
        body = extract_sections(report, ("Summary",)).split("\n", 1)[1].strip() + "\n"
    except KeyError:
        body = "\n".join(lead_points(extract_sections(report, titles))) + "\n"
    room = Path(file).parent.as_posix()
    room = "" if room == "." else room + "/"
    body = _IMAGE.sub(lambda m: f"![{m.group(1)}]({prefix}{room}{m.group(2)})", body)
    return (f"_Summary generated from [`benchmarks/{file}`]({prefix}{file}) by "
            f"`python -m agentgym_credit.bench.stats.readme`; the findings in full, with their tables, intervals and "
            f"plots, are in the report._\n\n{body}")


def update(readme: str, bench_dir: Path, prefix: str = "benchmarks/") -> str:
    """The text with every generated block refreshed (``prefix`` as in :func:`render_block`)."""
    for name in BLOCKS:
        start, end = f"<!-- generated:{name} -->", f"<!-- /generated:{name} -->"
        pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
        if not pattern.search(readme):
            raise KeyError(f"the guide has no {start} ... {end} block")
        block = f"{start}\n{render_block(bench_dir, name, prefix)}{end}"
        readme = pattern.sub(lambda _m, b=block: b, readme)
    return readme


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m agentgym_credit.bench.stats.readme", description=__doc__.split("\n")[0])
    p.add_argument("--readme", type=Path, default=Path("docs/benchmarks.md"))
    p.add_argument("--bench-dir", type=Path, default=Path("benchmarks"))
    p.add_argument("--check", action="store_true", help="exit 1 if the file is out of date; change nothing")
    args = p.parse_args(argv)
    old = args.readme.read_text(encoding="utf-8")
    prefix = os.path.relpath(args.bench_dir.resolve(), args.readme.resolve().parent).replace(os.sep, "/") + "/"
    new = update(old, args.bench_dir, prefix)
    if args.check:
        if new != old:
            print(f"{args.readme} is out of date with {args.bench_dir}/: run python -m agentgym_credit.bench.stats.readme",
                  file=sys.stderr)
            return 1
        return 0
    if new != old:
        write_atomic(args.readme, new)
        print(f"updated {args.readme}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["BLOCKS", "MAX_POINTS", "extract_sections", "lead_points", "render_block", "update", "main"]
