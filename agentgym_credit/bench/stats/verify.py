"""Does a committed report still come out of its command on the current code? (``agentgym-credit bench verify``)

:data:`REPORTS` lists the committed reports whose numbers are deterministic (exact truth, fixed seeds): each with
the command that writes it and the CSV of its per-run rows. ``bench verify [REPORT ...]`` reruns each report's
command into a temporary folder and compares the fresh rows with the committed ones, cell by cell:

- rows are matched on the report's key columns; every committed row the rerun writes must come back;
- numbers agree when ``|fresh - committed| <= atol + rtol * |committed|`` (``--atol``/``--rtol``, default
  1e-9 / 1e-9: the same code and seeds reproduce to float round-off; timing columns are skipped);
- ``--fast`` reruns only a subset of cells (:attr:`Report.fast`, seconds to a minute): the cells are seeded by
  their own identity, so a subset reproduces the committed rows of those cells.

A report that no longer reproduces is marked stale (:attr:`Report.stale`: the commit it was made on) in the
report's header and in docs/benchmarks.md, until its command is rerun (``bench verify --command REPORT`` prints it).
Exit status: 0 when every report checked reproduces, or is marked stale and still differs; 1 otherwise (a
stale mark on a report that reproduces again fails too, so the mark goes when the report is rewritten).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import importlib
import io
import math
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ATOL = 1e-9
RTOL = 1e-9
TIMING_COLUMNS = ("seconds",)


@dataclass(frozen=True)
class Report:
    """A committed report and how to write it again."""

    path: str  # under benchmarks/
    bench: str  # the ``agentgym-credit bench`` NAME
    args: tuple[str, ...]  # its arguments, as in the report's header (``--out`` is the verifier's)
    rows: str  # the CSV of per-run rows beside the report
    keys: tuple[str, ...]  # the columns that name a row
    fast: tuple[str, ...]  # arguments that restrict the rerun to a few cells (appended to ``args``)
    stale: str | None = None  # the commit the report was made on, when it is known not to reproduce

    def module(self) -> str:
        return f"agentgym_credit.bench.{Path(self.path).parent.as_posix()}.{self.bench}"

    def command(self) -> str:
        return " ".join(["agentgym-credit bench", self.bench, *self.args])


REPORTS: dict[str, Report] = {r.path: r for r in (
    Report("exact/credit_accuracy.md", "credit", ("--no-progress",), "credit_accuracy_runs.csv",
           ("task", "policy", "N", "seed", "signal"),
           ("--tasks", "cue", "--policies", "uniform", "--group-sizes", "4", "--seeds", "1")),
    Report("exact/grouping.md", "grouping", ("--no-progress",), "grouping_runs.csv",
           ("task", "perturb", "N", "seed", "anchor"),
           ("--tasks", "aliased", "--group-sizes", "4", "--seeds", "1")),
    Report("exact/branching.md", "branching", ("--groups", "12", "--seeds", "6", "--no-progress"),
           "branching_runs.csv", ("task", "policy", "seed", "arm", "signal"),
           ("--tasks", "grid", "--policies", "uniform", "--seeds", "1")),
)}
"""Committed reports with deterministic numbers, by their path under ``benchmarks/``."""


def _rows(path: Path, keys: Sequence[str]) -> dict[tuple[str, ...], dict[str, str]]:
    with open(path, newline="") as f:
        return {tuple(row[k] for k in keys): row for row in csv.DictReader(f)}


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def compare_rows(fresh: Path, committed: Path, keys: Sequence[str], atol: float = ATOL,
                 rtol: float = RTOL) -> list[str]:
    """The differences between the fresh rows and the committed ones (empty: they agree), one line each."""
    new, old = _rows(fresh, keys), _rows(committed, keys)
    problems = [f"row {k} is not in the committed {committed.name}" for k in new if k not in old]
    for key in (k for k in new if k in old):
        for col, value in new[key].items():
            if col in keys or col in TIMING_COLUMNS or col not in old[key]:
                continue
            a, b = _number(value), _number(old[key][col])
            if a is None or b is None:
                if value != old[key][col]:
                    problems.append(f"{key} {col}: {value!r} vs committed {old[key][col]!r}")
            elif not (math.isnan(a) and math.isnan(b)) and not abs(a - b) <= atol + rtol * abs(b):
                problems.append(f"{key} {col}: {a:.6g} vs committed {b:.6g} (diff {abs(a - b):.3g})")
    if not new:
        problems.append(f"the rerun wrote no rows to {fresh.name}")
    return problems


def verify(report: Report, bench_dir: Path, fast: bool = False, atol: float = ATOL, rtol: float = RTOL) -> list[str]:
    """Rerun ``report``'s command into a temporary folder; the differences from the committed rows."""
    main = importlib.import_module(report.module()).main
    with tempfile.TemporaryDirectory(prefix="agc-verify-") as tmp:
        argv = [*report.args, *(report.fast if fast else ()), "--out", tmp]
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):  # the report's own summary: shown only when the rerun fails
            status = main(argv)
        if status not in (0, None):
            return [f"`{report.command()}` exited {status}: {printed.getvalue()[-2000:]}"]
        return compare_rows(Path(tmp) / report.rows, bench_dir / Path(report.path).parent / report.rows,
                            report.keys, atol, rtol)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="agentgym-credit bench verify",
                                description="Rerun committed reports into a temporary folder and diff their numbers.")
    p.add_argument("reports", nargs="*", help=f"reports under benchmarks/ (default all: {', '.join(REPORTS)})")
    p.add_argument("--fast", action="store_true", help="rerun a few cells of each report (seconds to a minute)")
    p.add_argument("--atol", type=float, default=ATOL, help="absolute tolerance (default %(default)g)")
    p.add_argument("--rtol", type=float, default=RTOL, help="relative tolerance (default %(default)g)")
    p.add_argument("--bench-dir", type=Path, default=Path("benchmarks"), help="the committed reports")
    p.add_argument("--command", action="store_true", help="only print the command that writes each report")
    p.add_argument("--list", action="store_true", help="list the reports, with any stale mark, and exit")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    names = [n.removeprefix("benchmarks/") for n in args.reports] or list(REPORTS)
    unknown = [n for n in names if n not in REPORTS]
    if unknown:
        print(f"error: no verifiable report {unknown}; choose from {', '.join(REPORTS)}", file=sys.stderr)
        return 2
    if args.list or args.command:
        for n in names:
            r = REPORTS[n]
            mark = f"  [stale: made on {r.stale}]" if r.stale and args.list else ""
            print(f"benchmarks/{n}: {r.command()}{mark}" if args.list else r.command())
        return 0
    failed = 0
    for n in names:
        r = REPORTS[n]
        print(f"verify benchmarks/{n}{' (--fast cells)' if args.fast else ''}: {r.command()} ...", flush=True)
        problems = verify(r, args.bench_dir, args.fast, args.atol, args.rtol)
        if not problems:
            print(f"  reproduces (|diff| <= {args.atol:g} + {args.rtol:g} x |committed|)")
            if r.stale:
                print(f"  but it is marked stale (made on {r.stale}): remove the mark (Report.stale, the report's "
                      "header line, docs/benchmarks.md)")
                failed += 1
            continue
        print(f"  differs in {len(problems)} number(s); the first: " + "; ".join(problems[:3]))
        if r.stale:
            print(f"  known stale (made on {r.stale}): rerun `{r.command()}` from the repository root")
        else:
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
