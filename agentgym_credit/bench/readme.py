"""Copy the generated benchmark findings into README.md, so README never holds hand-typed numbers.

README.md marks each generated block with ``<!-- generated:NAME -->`` ... ``<!-- /generated:NAME -->``;
:data:`BLOCKS` says which ``## sections`` of which ``benchmarks/*.md`` report fill it. Image links are
rewritten to point into ``benchmarks/``. ``--check`` exits 1 when README is out of date (the test
suite runs it), so a rerun benchmark and its README summary cannot drift apart.

    python -m agentgym_credit.bench.readme           # rewrite the blocks
    python -m agentgym_credit.bench.readme --check   # exit 1 if README is stale
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

BLOCKS: dict[str, tuple[str, tuple[str, ...]]] = {
    "credit_accuracy": ("credit_accuracy.md", ("Findings",)),
    "training": ("training.md", ("Findings", "Steps to target and final success")),
}
"""block name -> (report file in benchmarks/, the ``##`` sections copied from it, in order)."""

_IMAGE = re.compile(r"!\[([^\]]*)\]\((?!https?://|/|benchmarks/)([^)]+)\)")


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


def render_block(bench_dir: Path, name: str) -> str:
    """The text of one generated block, from its report."""
    file, titles = BLOCKS[name]
    body = extract_sections((bench_dir / file).read_text(encoding="utf-8"), titles)
    body = _IMAGE.sub(lambda m: f"![{m.group(1)}](benchmarks/{m.group(2)})", body)
    body = re.sub(r"(?m)^## ", "#### ", body)  # nest under README's own headings
    return f"_Generated from `benchmarks/{file}` by `python -m agentgym_credit.bench.readme`._\n\n{body}"


def update(readme: str, bench_dir: Path) -> str:
    """README text with every generated block refreshed."""
    for name in BLOCKS:
        start, end = f"<!-- generated:{name} -->", f"<!-- /generated:{name} -->"
        pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
        if not pattern.search(readme):
            raise KeyError(f"README has no {start} ... {end} block")
        block = f"{start}\n{render_block(bench_dir, name)}{end}"
        readme = pattern.sub(lambda _m, b=block: b, readme)
    return readme


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m agentgym_credit.bench.readme", description=__doc__.split("\n")[0])
    p.add_argument("--readme", type=Path, default=Path("README.md"))
    p.add_argument("--bench-dir", type=Path, default=Path("benchmarks"))
    p.add_argument("--check", action="store_true", help="exit 1 if README is out of date; change nothing")
    args = p.parse_args(argv)
    old = args.readme.read_text(encoding="utf-8")
    new = update(old, args.bench_dir)
    if args.check:
        if new != old:
            print(f"{args.readme} is out of date with {args.bench_dir}/: run python -m agentgym_credit.bench.readme",
                  file=sys.stderr)
            return 1
        return 0
    if new != old:
        args.readme.write_text(new, encoding="utf-8")
        print(f"updated {args.readme}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["BLOCKS", "extract_sections", "render_block", "update", "main"]
