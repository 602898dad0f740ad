"""``bench verify``: committed reports rerun into a temporary folder and compared number by number (issue 42)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentgym_credit.bench.stats import verify as V
from agentgym_credit.cli import BENCH_NAMES, bench_module

ROOT = Path(__file__).resolve().parents[1]


def _csv(path: Path, rows: list[str]) -> Path:
    path.write_text("task,seed,pearson,seconds\n" + "\n".join(rows) + "\n")
    return path


def test_rows_agree_within_the_tolerance_and_every_difference_is_named(tmp_path):
    old = _csv(tmp_path / "old.csv", ["cue,0,0.5,1.0", "cue,1,nan,2.0", "grid,0,0.25,3.0"])
    same = _csv(tmp_path / "same.csv", ["cue,0,0.5000000000001,9.0", "cue,1,nan,9.0"])  # timing skipped
    assert V.compare_rows(same, old, ("task", "seed")) == []
    off = _csv(tmp_path / "off.csv", ["cue,0,0.51,1.0", "cue,2,0.5,1.0"])
    problems = V.compare_rows(off, old, ("task", "seed"))
    assert len(problems) == 2 and any("pearson: 0.51 vs committed 0.5" in p for p in problems)
    assert any("('cue', '2') is not in the committed" in p for p in problems)
    assert V.compare_rows(off, old, ("task", "seed"), atol=0.02) == [problems[0]]  # the new row still counts
    assert V.compare_rows(_csv(tmp_path / "empty.csv", []), old, ("task", "seed"))


def test_every_registered_report_exists_names_its_command_and_stale_ones_say_so():
    guide = (ROOT / "docs" / "benchmarks.md").read_text()
    for path, r in V.REPORTS.items():
        report = ROOT / "benchmarks" / path
        assert report.is_file() and (report.parent / r.rows).is_file(), path
        assert bench_module(r.bench) == r.module() and r.bench in BENCH_NAMES
        assert f"bench {r.bench}" in report.read_text().split("\n## ", 1)[0], path  # its command in the header
        if r.stale:
            assert f"Stale: made on commit {r.stale}" in report.read_text(), path
            assert f"`benchmarks/{path}` (made on {r.stale})" in guide, path


def test_unknown_report_is_a_clear_error(capsys):
    assert V.main(["exact/nope.md"]) == 2 and "no verifiable report" in capsys.readouterr().err
    assert V.main(["--command", "benchmarks/exact/grouping.md"]) == 0
    assert capsys.readouterr().out.strip() == "agentgym-credit bench grouping --no-progress"


@pytest.mark.slow
def test_the_fast_cells_of_every_registered_report_reproduce_or_are_marked_stale(capsys, monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")  # ~1 min on 2 loaded cores
    status = V.main(["--fast", "--bench-dir", str(ROOT / "benchmarks")])
    out = capsys.readouterr().out
    assert status == 0, out
    blocks = {b.split(" ", 1)[0].split(":", 1)[0]: b for b in out.split("verify benchmarks/")[1:]}
    for path, r in V.REPORTS.items():
        assert (f"known stale (made on {r.stale})" if r.stale else "  reproduces") in blocks[path], out


def _stale_listed(guide: str) -> dict[str, str]:
    """The reports docs/benchmarks.md lists as made before the current code: ``{path under benchmarks/: commit}``."""
    import re

    block = guide.split("\nStale reports", 1)[1].split("\n## ", 1)[0]
    listed: dict[str, str] = {}
    for line in block.splitlines():
        if line.startswith("  - `benchmarks/"):
            commit = re.search(r"made on ([0-9a-f]{7,40})", line)
            for path in re.findall(r"`benchmarks/([^`]+\.md)`", line.split(" (made on")[0]):
                listed[path] = commit.group(1) if commit else ""
    return listed


def test_every_report_listed_stale_exists_and_no_registered_report_is_listed_as_reproducing():
    """The guide's stale list names real files with the commit they were made on; a report the verify registry
    checks for equality is listed stale only when the registry marks it stale on the same commit (else the guide
    would call stale a report the tests hold to reproduce, or the other way round)."""
    guide = (ROOT / "docs" / "benchmarks.md").read_text()
    listed = _stale_listed(guide)
    assert len(listed) > 10  # the list was parsed (it names ~40 reports)
    for path, commit in listed.items():
        assert (ROOT / "benchmarks" / path).is_file(), path
        assert commit, f"{path}: the stale list names no commit"
        r = V.REPORTS.get(path)
        assert r is None or r.stale == commit, f"{path} is listed stale but registered as reproducing"
